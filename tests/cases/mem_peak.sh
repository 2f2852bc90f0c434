# The exact peak and what filled it: by call site, library, api, size class, device; the largest
# allocations live at the peak; leaks and temporary allocations by call site
# (tests/progs/mem_scenarios.c "peak"; definitions in docs/ANALYSES.md).
. "$SRC/tests/lib.sh"
MiB=1048576
traced t.trace "$PROGS/mem_scenarios" peak >out.txt 2>&1 || fail "program failed: $(cat out.txt)"
"$GT_REPORT" --json t.trace >t.json || fail "report failed"
"$GT_REPORT" --dump t.trace >t.dump || fail "dump failed"
j() { jget t.json "$1"; }
pb="d['memory']['peak_breakdown']"
# 3 x 100 MiB weights, 10 x 1 MiB scratch (each freed at once), 5 x 8 MiB activations: the peak
# is reached by the 18th allocation, at its time.
expect_eq "peak bytes" "$(j "$pb['peak_bytes']")" $((340 * MiB))
peak_t=$(awk '$3 == "ALLOC" { n++; if (n == 18) { print $1; exit } }' t.dump)
[ -n "$peak_t" ] || fail "no 18th ALLOC in the dump: $(head t.dump)"
expect_eq "peak time = 18th allocation" "$(j "$pb['peak_time_ns']")" "$peak_t"
expect_eq "by site" "$(j "[(s['function'], s['bytes'], s['count']) for s in $pb['by_site']]")" \
    "[('hold_weights', $((300 * MiB)), 3), ('activations', $((40 * MiB)), 5)]"
expect_eq "by library" "$(j "[(l['name'], l['bytes'], l['count']) for l in $pb['by_library']]")" \
    "[('mem_scenarios', $((340 * MiB)), 8)]"
expect_eq "by api" "$(j "[(a['api'], a['bytes'], a['count']) for a in $pb['by_api']]")" \
    "[('cuMemAlloc_v2', $((340 * MiB)), 8)]"
expect_eq "by size class" "$(j "[(c['class'], c['bytes'], c['count']) for c in $pb['by_size_class']]")" \
    "[('1MiB-16MiB', $((40 * MiB)), 5), ('16MiB-256MiB', $((300 * MiB)), 3)]"
expect_eq "by device" "$(j "[(x['device'], x['bytes'], x['count']) for x in $pb['by_device']]")" "[(0, $((340 * MiB)), 8)]"
expect_eq "no stackless bytes" "$(j "$pb['no_stack']['bytes']")" 0
# Largest live at the peak: the 3 weights (never freed), then the 5 activations (freed later).
expect_eq "largest" "$(j "[(a['bytes'], a['freed_time_ns'] is None, a['site']['function']) for a in $pb['largest_allocations']]")" \
    "[($((100 * MiB)), True, 'hold_weights'), ($((100 * MiB)), True, 'hold_weights'), ($((100 * MiB)), True, 'hold_weights'), ($((8 * MiB)), False, 'activations'), ($((8 * MiB)), False, 'activations'), ($((8 * MiB)), False, 'activations'), ($((8 * MiB)), False, 'activations'), ($((8 * MiB)), False, 'activations')]"
expect_eq "leaks" "$(j "[(s['function'], s['bytes'], s['count']) for s in d['memory']['leaks']]")" "[('hold_weights', $((300 * MiB)), 3)]"
expect_eq "temporaries" "$(j "d['memory']['temporary_allocations']")" "{'count': 10, 'bytes': $((10 * MiB))}"
expect_eq "temporaries by site" "$(j "[(s['function'], s['count'], s['bytes']) for s in d['memory']['temporaries']]")" "[('scratch', 10, $((10 * MiB)))]"
# The breakdown adds up to the peak.
expect_eq "sum of sites" "$(j "sum(s['bytes'] for s in $pb['by_site']) + $pb['no_stack']['bytes']")" $((340 * MiB))
"$GT_REPORT" t.trace >t.txt || fail "text report failed"
grep -q "300 MiB       3  hold_weights (mem_scenarios.c:" t.txt || fail "text: top holder: $(cat t.txt)"
grep -q "temporary 10 allocations (10.0 MiB) freed right after they were made; most from scratch" t.txt || fail "text: temporaries"
# Stacks off: the same totals, all in the no-stack bucket.
GPUTRACE_STACKS=none traced n.trace "$PROGS/mem_scenarios" peak >out.txt 2>&1 || fail "program failed (no stacks)"
"$GT_REPORT" --json n.trace >n.json || fail "report failed (no stacks)"
expect_eq "no stacks: breakdown" "$(jget n.json "(d['memory']['peak_breakdown']['peak_bytes'], d['memory']['peak_breakdown']['no_stack'], d['memory']['peak_breakdown']['by_site'])")" \
    "($((340 * MiB)), {'bytes': $((340 * MiB)), 'count': 8}, [])"
