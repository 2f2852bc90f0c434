# 8 threads x 10,000 allocations: no record lost, counts exact (issue 2).
. "$SRC/tests/lib.sh"
traced t.trace "$PROGS/threads" 8 10000 || fail "program failed"
"$GT_REPORT" --json t.trace > t.json || fail "report failed"
expect_eq alloc_count "$(jget t.json "d['memory']['alloc_count']")" 80000
expect_eq free_count "$(jget t.json "d['memory']['free_count']")" 80000
expect_eq launches "$(jget t.json "d['timeline']['launch_count']")" 8000
expect_eq lost "$(jget t.json "d['trace']['lost_records']")" 0
expect_eq leaked "$(jget t.json "d['memory']['leaked_bytes']")" 0
expect_eq unmatched "$(jget t.json "d['memory']['unmatched_frees']")" 0
# Live bytes never exceed one buffer per thread when the stream is in time order.
peak=$(jget t.json "d['memory']['peak_bytes']")
[ "$peak" -le $((8 * 4096)) ] && [ "$peak" -ge 4096 ] || fail "peak $peak outside [4096, 32768]"
echo "80000 allocations, 80000 frees, 8000 launches, none lost"
