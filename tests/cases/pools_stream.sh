# A CUDA stream-ordered pool (tests/progs/pools_stream.c): exact reserved/used bytes from the
# construction (MiB): 12 reserved and used at the peak (E), then 12 reserved and none used; the
# cuMemAlloc that fails while the pool caches 12 MiB is judged `cached` with U = F = 12 MiB.
. "$SRC/tests/lib.sh"
MiB=1048576
GPUTRACE_SAMPLE_MS=0 GTSIM_MEM_BYTES=16m traced a.trace "$PROGS/pools_stream" > out.txt 2> err.txt ||
    fail "traced run failed: $(cat out.txt err.txt)"
grep -qx ok out.txt || fail "program did not finish: $(cat out.txt)"
grep -qx first=2 out.txt || fail "the first 8 MiB cuMemAlloc did not fail with OOM: $(cat out.txt)"
pool=$(sed -n 's/^pool=//p' out.txt)
"$GT_REPORT" --dump a.trace > dump.txt || fail "dump failed"
grep -q ' POOL_USAGE ' dump.txt || skip "the shim writes no pool usage samples (GT_REC_POOL_USAGE) yet"
"$GT_REPORT" --json a.trace > r.json || fail "report --json failed"
"$GT_REPORT" a.trace > r.txt || fail "report failed"
F="d['memory']['fragmentation']"
P="[p for p in $F['pools'] if p['kind'] == 'stream_ordered']"
expect_eq "two stream-ordered pools (ours, the device's default)" "$(jget r.json "len($P)")" 2
# cuMemAllocAsync names no pool: the shim's sample of the current pool names it
C="[p for p in $P if hex(p['id']) != '$pool'][0]"
expect_eq "current pool named after its handle" "$(jget r.json "$C['name'].startswith('mempool 0x') and $C['id'] != 0")" True
expect_eq "current pool: peak used 3 MiB" "$(jget r.json "$C['peak_used_bytes']")" $((3 * MiB))
P="[p for p in $P if hex(p['id']) == '$pool'][0]"
expect_eq "device" "$(jget r.json "$P['device']")" 0
expect_eq "peak reserved 12 MiB" "$(jget r.json "$P['peak_reserved_bytes']")" $((12 * MiB))
expect_eq "peak used 12 MiB" "$(jget r.json "$P['peak_used_bytes']")" $((12 * MiB))
expect_eq "at the process peak (E): reserved, used" "$(jget r.json "($P['at_peak']['reserved_bytes'] // $MiB, $P['at_peak']['used_bytes'] // $MiB)")" "(12, 12)"
expect_eq "layout unknown" "$(jget r.json "($P['at_peak']['free_extents'], $P['at_peak']['fragmentation'])")" "(None, None)"
expect_eq "worst: 12 MiB reserved, none used" "$(jget r.json "($P['worst']['reserved_bytes'] // $MiB, $P['worst']['free_bytes'] // $MiB)")" "(12, 12)"
expect_eq "driver high-water marks" "$(jget r.json "($P['stream']['reserved_high_bytes'] // $MiB, $P['stream']['used_high_bytes'] // $MiB)")" "(12, 12)"
expect_eq "destroyed" "$(jget r.json "$P['destroyed_ns'] is not None")" True
# the series: the reserved maximum over the run, and the trim to 6 MiB before E
I="$P['index']"
S="[x for x in $F['series']['series'] if x['pool'] == $I][0]"
expect_eq "series max reserved" "$(jget r.json "max($S['reserved_max']) // $MiB")" 12
# the failure: U = F = 12 MiB cached in the pool (layout unknown: one extent), verdict cached
X="$F['failures'][0]"
expect_eq "failure U" "$(jget r.json "$X['reserved_unused_bytes']")" $((12 * MiB))
expect_eq "failure F" "$(jget r.json "$X['largest_free_bytes']")" $((12 * MiB))
expect_eq "failure layout unknown" "$(jget r.json "$X['unused_layout_unknown_bytes']")" $((12 * MiB))
expect_eq "oom verdict" "$(jget r.json "d['memory']['ooms'][0]['verdict']")" cached
grep -Eq '^    mempool '"$pool"' +stream +0 +12.0 MiB +12.0 MiB +0 B +- +- +-  at peak' r.txt ||
    fail "text report lacks the pool row: $(grep -A8 '  pools' r.txt)"
