# Every way of reaching the driver gives the same exact report (issue 2: lookup paths).
. "$SRC/tests/lib.sh"
MiB=1048576
for path in direct dlsym default next getproc2 getproc2-ptsz getproc1; do
  for distinct in 0 1; do
    t="$path-$distinct.trace"
    want=$(GTSIM_DISTINCT_POINTERS=$distinct untraced "$PROGS/paths" "$path") || fail "$path untraced: $want"
    got=$(GTSIM_DISTINCT_POINTERS=$distinct traced "$t" "$PROGS/paths" "$path") || fail "$path traced: $got"
    expect_eq "$path: program output unchanged by tracing" "$got" "$want"
    "$GT_REPORT" --json "$t" > "$t.json" || fail "$path: report failed"
    j() { jget "$t.json" "$1"; }
    expect_eq "$path alloc_count" "$(j "d['memory']['alloc_count']")" 13
    expect_eq "$path free_count" "$(j "d['memory']['free_count']")" 8
    expect_eq "$path peak" "$(j "d['memory']['peak_bytes']")" $((55 * MiB))
    expect_eq "$path leaked" "$(j "d['memory']['leaked_bytes']")" $((40 * MiB))
    expect_eq "$path failed" "$(j "d['memory']['failed_count']")" 0
    expect_eq "$path launches" "$(j "d['timeline']['launch_count']")" 10
    expect_eq "$path lost" "$(j "d['trace']['lost_records']")" 0
    expect_eq "$path clean end" "$(j "d['trace']['clean_end']")" True
    expect_eq "$path kernels" "$(j "sorted((k['name'], k['count']) for k in d['timeline']['top_kernels'])")" \
      "[('alpha', 7), ('beta', 3)]"
    expect_eq "$path async allocs" \
      "$(j "[a['count'] for a in d['memory']['by_api'] if a['api'].startswith('cuMemAllocAsync')]")" "[3]"
    # the async copy and memset reach their wrappers on every path, never as launches
    pt=""
    [ $path = getproc2-ptsz ] && pt=_ptsz
    expect_eq "$path async copy, memset" \
      "$(j "[(s['api'], s['count'], s['bytes']) for s in d['timeline']['spans'] if s['family'] == 'async']")" \
      "[('cuMemcpyHtoDAsync_v2$pt', 1, 4096), ('cuMemsetD8Async$pt', 1, 4096)]"
    case $path in
      getproc2-ptsz)
        echo "$got" | grep -qx "calls cuLaunchKernel_ptsz=10" || fail "$path: per-thread launches did not reach cuLaunchKernel_ptsz: $got"
        echo "$got" | grep -qx "calls cuStreamSynchronize_ptsz=1" || fail "$path: $got"
        expect_eq "$path launch api" "$(j "[a['api'] for a in d['timeline']['launches_by_api']]")" "['cuLaunchKernel_ptsz']" ;;
      *)
        echo "$got" | grep -qx "calls cuLaunchKernel=10" || fail "$path: launches did not reach cuLaunchKernel: $got"
        expect_eq "$path launch api" "$(j "[a['api'] for a in d['timeline']['launches_by_api']]")" "['cuLaunchKernel']" ;;
    esac
  done
done
echo "all lookup paths exact"
