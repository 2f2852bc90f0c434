# GPU idle gaps ended by an async copy or memset (issue 20): each step is cuMemcpyHtoDAsync (or
# cuMemsetD8Async), a kernel, cuStreamSynchronize and 30 ms in load_batch. The copy (memset) is
# linked to its call through our correlation id like a launch: each gap is host busy for the 30
# ms, at the copy's call site (copy_then_load), not unknown. Gaps exact against the simulated
# GPU's ground truth (tests/progs/idle_check.py).
# test: alone (gaps of given lengths: cases beside it would stretch them)
. "$SRC/tests/lib.sh"
[ -f "$SIMCUPTI_DIR/libcupti.so.13" ] || skip "simulated CUPTI not built"
for mode in copyload setload; do
    got=$(env GTSIM_LOG="$PWD/$mode.log" sh -c '. "$SRC/tests/lib.sh"; traced '$mode'.trace "$PROGS/idle" '$mode) ||
        fail "$mode: traced run failed: $got"
    expect_eq "$mode: output" "$got" "idle $mode ok"
    "$GT_REPORT" --json --all-gaps $mode.trace > $mode.json || fail "$mode: report failed"
    "$GT_REPORT" --dump $mode.trace > $mode.dump || fail "$mode: dump failed"
    "$PYTHON" "$SRC/tests/progs/idle_check.py" $mode $mode.log $mode.json $mode.dump ||
        fail "$mode: idle gaps differ"
    # not counted as launches: the calls table has them, the launches the 4 kernels only
    "$GT_REPORT" $mode.trace > $mode.txt || fail "$mode: text report failed"
done
# never counted as launches: 4 launches (the kernels), the copies (memsets) among the calls by API
# with their bytes, no launch site at copy_then_load
for mode in copyload setload; do
    api=cuMemcpyHtoDAsync_v2
    [ $mode = setload ] && api=cuMemsetD8Async
    got=$(jget $mode.json "(d['timeline']['launch_count'], sorted(x['api'] for x in d['timeline']['launches_by_api']), [(s['api'], s['family'], s['count'], s['bytes']) for s in d['timeline']['spans'] if s['api'] == '$api'], [s['site'] for s in d['timeline']['launch_sites'] if 'copy_then_load' in (s['site'] or '')])")
    expect_eq "$mode: launches, calls" "$got" "(4, ['cuLaunchKernel'], [('$api', 'async', 4, 262144)], [])"
done
