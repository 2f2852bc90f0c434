# VMM like PyTorch expandable segments (tests/progs/pools_vmm.c), figures in units of the
# granularity G the program prints: a 32 G reservation, handles of G mapped at 0, G, 2 G, the
# middle one unmapped and released, a 2 G handle created (the process peak) then mapped at 3 G.
. "$SRC/tests/lib.sh"
traced a.trace "$PROGS/pools_vmm" > out.txt 2> err.txt || fail "traced run failed: $(cat out.txt err.txt)"
grep -qx ok out.txt || fail "program did not finish: $(cat out.txt)"
G=$(sed -n 's/^gran=//p' out.txt)
"$GT_REPORT" --json a.trace > r.json || fail "report --json failed"
"$GT_REPORT" a.trace > r.txt || fail "report failed"
F="d['memory']['fragmentation']"
P="[p for p in $F['pools'] if p['kind'] == 'vmm']"
expect_eq "one VMM range" "$(jget r.json "len($P)")" 1
P="$P[0]"
expect_eq "reserved" "$(jget r.json "$P['peak_reserved_bytes']")" $((32 * G))
expect_eq "most mapped: 4 G (after the last map)" "$(jget r.json "$P['peak_used_bytes']")" $((4 * G))
expect_eq "process peak: 4 G physical" "$(jget r.json "d['memory']['peak_bytes']")" $((4 * G))
A="$P['at_peak']"
expect_eq "at peak: mapped 2 G" "$(jget r.json "$A['used_bytes']")" $((2 * G))
expect_eq "at peak: unmapped 30 G" "$(jget r.json "$A['free_bytes']")" $((30 * G))
expect_eq "at peak: 2 holes" "$(jget r.json "$A['free_extents']")" 2
expect_eq "at peak: largest hole 29 G" "$(jget r.json "$A['largest_free_bytes']")" $((29 * G))
expect_eq "at peak: map" "$(jget r.json "[(e['size'] // $G, e['state']) for e in $A['map']['extents']]")" \
    "[(1, 'used'), (1, 'free'), (1, 'used'), (29, 'free')]"
D="[x for x in $F['devices'] if x['device'] == 0][0]"
expect_eq "at peak: 2 G of handles not mapped" "$(jget r.json "$D['at_peak']['vmm_unmapped_physical_bytes']")" $((2 * G))
expect_eq "at end: no physical memory" "$(jget r.json "$D['vmm_physical_bytes']")" 0
expect_eq "range freed" "$(jget r.json "$P['destroyed_ns'] is not None")" True
# worst (most unmapped outside the largest hole): in the teardown, after unmapping [0, G) and
# [2G, 3G) while [3G, 5G) is still mapped: holes of 3 G and 27 G
expect_eq "worst: holes of 3 G and 27 G" "$(jget r.json "($P['worst']['free_bytes'] // $G, $P['worst']['largest_free_bytes'] // $G, $P['worst']['free_extents'])")" "(30, 27, 2)"
expect_eq "nothing unmatched" "$(jget r.json "$F['vmm_unmatched']")" 0
grep -Eq '^    VA 0x[0-9a-f]+ +vmm ' r.txt || fail "text report lacks the VA range: $(grep -A8 '  pools' r.txt)"
