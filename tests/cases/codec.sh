# Compressed chunks (GPUTRACE_COMPRESS, docs/TRACE_FORMAT.md "Chunk codecs"): the same program
# traced with compression off and on gives the exact event counts both ways; a trace re-encoded
# chunk for chunk (unit_codec repack: same records, kind, tid and seq per chunk, compressed or
# decoded) gives a byte-identical report (--json, text, --dump); the header says which readers
# may read the file (min_version 1 without compressed chunks, 3 with the packed host chunks of
# the default level, 2 with zstd alone at the levels above: all with the PyTorch bridge off; where
# the bridge may write records, 5 whatever the codecs).
. "$SRC/tests/lib.sh"
[ -f "$SIMCUPTI_DIR/libcupti.so.13" ] || skip "simulated CUPTI not built"
threads=4 iters=20000
total=$((threads * iters + 1))
want="flood: $total allocations, $total frees, $total launches"
# chunks FILE: "min_version codec:count ... kind:codec:count ..." from the file itself.
chunks() { "$PYTHON" - "$1" <<'PY'
import collections, struct, sys
b = open(sys.argv[1], "rb").read()
minv, hsize = struct.unpack_from("<H", b, 14)[0], struct.unpack_from("<I", b, 16)[0]
pos, n = hsize, collections.Counter()
while pos + 24 <= len(b):
    magic, kind, codec, size = struct.unpack_from("<IHHI", b, pos)
    n["%s:%d" % ({1: "host", 2: "gpu"}.get(kind, kind), codec)] += 1
    pos += 24 + size
print(minv, " ".join("%s=%d" % kv for kv in sorted(n.items())))
PY
}
for mode in 0 default 2; do
    case $mode in
    0) env="GPUTRACE_COMPRESS=0" ;;
    default) env="GPUTRACE_FLUSH_MS=100" ;;
    *) env="GPUTRACE_COMPRESS=$mode GPUTRACE_FLUSH_MS=100" ;;
    esac
    got=$(env $env GPUTRACE_CUPTI=off GPUTRACE_TORCH=off sh -c '. "$SRC/tests/lib.sh"; traced "$0.trace" "$PROGS/flood" '"$threads $iters 2>/dev/null" "c$mode") ||
        fail "$mode: traced run failed"
    expect_eq "$mode: program output" "$got" "$want"
    "$GT_REPORT" --json "c$mode.trace" > "c$mode.json" || fail "$mode: report failed"
    j() { jget "c$mode.json" "$1"; }
    expect_eq "$mode: alloc_count" "$(j "d['memory']['alloc_count']")" $total
    expect_eq "$mode: free_count" "$(j "d['memory']['free_count']")" $total
    expect_eq "$mode: launch_count" "$(j "d['timeline']['launch_count']")" $total
    expect_eq "$mode: lost_records" "$(j "d['trace']['lost_records']")" 0
    expect_eq "$mode: clean_end" "$(j "d['trace']['clean_end']")" True
    expect_eq "$mode: format_version" "$(j "d['trace']['format_version']")" 5
    echo "GPUTRACE_COMPRESS=$mode: $(wc -c < "c$mode.trace") bytes, chunks: $(chunks "c$mode.trace")"
done
set -- $(chunks c0.trace)
expect_eq "off: min_version" "$1" 1
expect_eq "off: every chunk stored as is" "$(chunks c0.trace | tr ' ' '\n' | grep -v '^1$' | grep -vc ':0=')" 0
set -- $(chunks cdefault.trace)
expect_eq "on: min_version (readers of formats 1 and 2 refuse it)" "$1" 3
packed=$(chunks cdefault.trace | tr ' ' '\n' | sed -n 's/^host:3=//p')
[ "${packed:-0}" -ge $threads ] || fail "on: only ${packed:-0} packed host chunks"
set -- $(chunks c2.trace)
expect_eq "level 2: min_version (zstd only: readers of format 2 may read it)" "$1" 2
# the bridge on (its default): readers before format 5 would take its unread steps for bytes
for mode in 0 default; do
    env=GPUTRACE_COMPRESS=$mode; [ $mode = default ] && env=GPUTRACE_FLUSH_MS=100
    env $env GPUTRACE_CUPTI=off sh -c '. "$SRC/tests/lib.sh"; traced "$0.trace" "$PROGS/flood" 1 10 >/dev/null 2>&1' "b$mode" ||
        fail "bridge $mode: traced run failed"
    set -- $(chunks "b$mode.trace")
    expect_eq "GPUTRACE_COMPRESS=$mode, the bridge on: min_version" "$1" 5
done
expect_eq "level 2: no packed chunk" "$(chunks c2.trace | tr ' ' '\n' | grep -c ':3=')" 0
packed=$(chunks c2.trace | tr ' ' '\n' | sed -n 's/^host:2=//p')
[ "${packed:-0}" -ge 1 ] || fail "level 2: no zstd host chunk"
# GPU chunks (CUPTI on): packed at the default level (the flusher's cheap codec, a tenth of zstd's
# instructions per record), zstd at the levels above; every kernel read back either way.
for mode in default 2; do
    env="GPUTRACE_FLUSH_MS=100"
    [ $mode = default ] || env="$env GPUTRACE_COMPRESS=$mode"
    env $env sh -c '. "$SRC/tests/lib.sh"; traced "$0.trace" "$PROGS/flood" 1 3000 >/dev/null 2>&1' "g$mode" ||
        fail "$mode with CUPTI: traced run failed"
    "$GT_REPORT" --json "g$mode.trace" > "g$mode.json" || fail "$mode with CUPTI: report failed"
    expect_eq "$mode with CUPTI: kernels" "$(jget "g$mode.json" "d['timeline']['kernel_count']")" 3001
    echo "GPU chunks, GPUTRACE_COMPRESS=$mode: $(chunks "g$mode.trace")"
done
want_codec=3
for mode in default 2; do
    gpu=$(chunks "g$mode.trace" | tr ' ' '\n' | grep '^gpu:')
    expect_eq "$mode: GPU chunks' codecs" "$(echo "$gpu" | sed 's/=.*//' | sort -u | tr '\n' ' ')" "gpu:$want_codec "
    want_codec=2
done
size0=$(wc -c < c0.trace) size1=$(wc -c < cdefault.trace)
[ "$size1" -lt "$size0" ] || fail "compressed trace $size1 bytes vs $size0 uncompressed"
# The flood outruns one flusher (4 threads on few cores): buffers the flusher could not take in
# time were packed by their owners. Sizes belong in bench/, not here.
echo "bytes per round (alloc + launch + free): $((size0 / total)) -> $((size1 * 100 / total / 100)).$((size1 * 100 / total % 100))"

# The same chunks, re-encoded: byte-identical reports.
same_reports() { # A B what
    for fmt in --json "" --dump; do
        "$GT_REPORT" $fmt "$1" > a.out 2>&1 || fail "$3: report $fmt of $1 failed"
        "$GT_REPORT" $fmt "$2" > b.out 2>&1 || fail "$3: report $fmt of $2 failed"
        sed -i "s|$1|TRACE|g" a.out; sed -i "s|$2|TRACE|g" b.out
        cmp -s a.out b.out || { diff a.out b.out | head -20; fail "$3: reports ${fmt:-text} differ"; }
    done
}
"$PROGS/unit_codec" repack c0.trace c0-packed.trace 1 || fail "repack failed"
set -- $(chunks c0-packed.trace)
expect_eq "repacked: min_version" "$1" 2
same_reports c0.trace c0-packed.trace "compression on vs off (same chunks)"
"$PROGS/unit_codec" repack cdefault.trace cdefault-plain.trace 0 || fail "unpack failed"
expect_eq "decoded: no compressed chunk left" "$(chunks cdefault-plain.trace | tr ' ' '\n' | grep -v '^1$' | grep -vc ':0=')" 0
same_reports cdefault.trace cdefault-plain.trace "the shim's compressed chunks vs decoded"

# GPU chunks (CUPTI) are packed too, and the timeline still matches the simulated GPU.
got=$(GTSIM_LOG="$PWD/sim.log" traced gpu.trace "$PROGS/timeline") || fail "timeline run failed"
"$GT_REPORT" --json gpu.trace > gpu.json || fail "timeline report failed"
"$PYTHON" "$SRC/tests/progs/timeline_check.py" sim.log gpu.json || fail "timeline differs from ground truth"
chunks gpu.trace | grep -q 'gpu:3=' || fail "no packed GPU chunk: $(chunks gpu.trace)"
echo "timeline: $(chunks gpu.trace)"
exit 0
