# Fragmentation inside an annotated sub-allocator (tests/progs/pools_frag.c): the pool OOM, the
# driver-level failure judged with the pool's evidence, the pool's figures and address map, all
# from the scenario's construction: a 32 MiB arena of eight 4 MiB blocks with blocks 1, 3, 5
# free, an 8 MiB request, a 36 MiB card.
. "$SRC/tests/lib.sh"
MiB=1048576
nm -D --defined-only "$GT_LIB" | grep -q " T gputrace_annotate_block_fail\$" ||
    skip "the shim does not export the annotation API"
GTSIM_MEM_BYTES=36m traced a.trace "$PROGS/pools_frag" > out.txt 2> err.txt ||
    fail "traced run failed: $(cat out.txt err.txt)"
grep -qx 'driver_alloc=2' out.txt || fail "the 8 MiB driver allocation did not fail with OOM: $(cat out.txt)"
grep -qx ok out.txt || fail "program did not finish"
seg=$(sed -n 's/^seg=//p' out.txt)
"$GT_REPORT" --json a.trace > r.json || fail "report --json failed"
"$GT_REPORT" a.trace > r.txt || fail "report failed"
F="d['memory']['fragmentation']"
expect_eq "pools" "$(jget r.json "len($F['pools'])")" 1
expect_eq "pool name" "$(jget r.json "$F['pools'][0]['name']")" arena
expect_eq "pool kind" "$(jget r.json "$F['pools'][0]['kind']")" annotated
expect_eq "pool device" "$(jget r.json "$F['pools'][0]['device']")" 0
expect_eq "peak reserved" "$(jget r.json "$F['pools'][0]['peak_reserved_bytes']")" $((32 * MiB))
expect_eq "peak used (all 8 blocks)" "$(jget r.json "$F['pools'][0]['peak_used_bytes']")" $((32 * MiB))
expect_eq "blocks" "$(jget r.json "[$F['pools'][0]['blocks'][k] for k in ('allocs','frees','fails','live_at_end')]")" "[8, 8, 1, 0]"
expect_eq "annotation errors" "$(jget r.json "sum($F['annotation_errors'].values())")" 0
expect_eq "destroyed" "$(jget r.json "$F['pools'][0]['destroyed_ns'] is not None")" True
# worst moment: 12 MiB free in 3 extents of 4 MiB (8 MiB outside the largest)
W="$F['pools'][0]['worst']"
expect_eq "worst free" "$(jget r.json "$W['free_bytes']")" $((12 * MiB))
expect_eq "worst extents" "$(jget r.json "$W['free_extents']")" 3
expect_eq "worst largest" "$(jget r.json "$W['largest_free_bytes']")" $((4 * MiB))
expect_eq "worst fragmentation" "$(jget r.json "round($W['fragmentation'], 6)")" 0.666667
# the pool OOM
O="$F['pool_ooms'][0]"
expect_eq "pool ooms" "$(jget r.json "len($F['pool_ooms'])")" 1
expect_eq "pool oom request" "$(jget r.json "$O['requested_bytes']")" $((8 * MiB))
expect_eq "pool oom free" "$(jget r.json "$O['free_bytes']")" $((12 * MiB))
expect_eq "pool oom largest" "$(jget r.json "$O['largest_free_bytes']")" $((4 * MiB))
expect_eq "pool oom verdict" "$(jget r.json "$O['verdict']")" fragmentation
# its address map: used 4, free 4, used 4, free 4, used 4, free 4, used 8 (blocks 6 and 7 merge)
expect_eq "map" "$(jget r.json "[(e['addr'] - $seg, e['size'] // $MiB, e['state']) for e in $O['map']['extents']]")" \
    "[(0, 4, 'used'), ($((4 * MiB)), 4, 'free'), ($((8 * MiB)), 4, 'used'), ($((12 * MiB)), 4, 'free'), ($((16 * MiB)), 4, 'used'), ($((20 * MiB)), 4, 'free'), ($((24 * MiB)), 8, 'used')]"
# the driver-level failure: the pool held U = 12 MiB unused, F = 4 MiB: fragmentation
X="$F['failures'][0]"
expect_eq "failures" "$(jget r.json "len($F['failures'])")" 1
expect_eq "failure request" "$(jget r.json "$X['requested_bytes']")" $((8 * MiB))
expect_eq "failure U" "$(jget r.json "$X['reserved_unused_bytes']")" $((12 * MiB))
expect_eq "failure F" "$(jget r.json "$X['largest_free_bytes']")" $((4 * MiB))
expect_eq "oom verdict" "$(jget r.json "d['memory']['ooms'][0]['verdict']")" fragmentation
expect_eq "oom U" "$(jget r.json "d['memory']['ooms'][0]['pools']['reserved_unused_bytes']")" $((12 * MiB))
expect_eq "oom F" "$(jget r.json "d['memory']['ooms'][0]['pools']['largest_free_bytes']")" $((4 * MiB))
grep -q 'pool OOM .* arena: request 8.00 MiB, free 12.0 MiB in 3 extents, largest 4.00 MiB -> fragmentation' r.txt ||
    fail "text report lacks the pool OOM line: $(grep -A12 '  pools' r.txt)"
# the arena did not live at the process peak (the segment's allocation): its row is its worst
grep -Eq '^    arena +annotated +0 +32.0 MiB +20.0 MiB +12.0 MiB +3 +4.00 MiB +67%  worst, at ' r.txt ||
    fail "text report lacks the arena's row: $(grep -A12 '  pools' r.txt)"
