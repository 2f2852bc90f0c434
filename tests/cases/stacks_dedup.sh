# Stacks are interned: 10 or 2000 events from one call site write the same stack records, so the
# trace grows with unique stacks, not with events.
. "$SRC/tests/lib.sh"
# Uncompressed chunks, so the file size counts records (compression is tests/cases/codec.sh's).
# No host samples: their stacks and records grow with the run's length, not with call sites (they
# are counted by tests/cases/hostsample_*.sh).
export GPUTRACE_COMPRESS=0 GPUTRACE_SAMPLE_HZ=0
traced a.trace "$PROGS/stacks_sites" 10 >/dev/null || fail "program failed (10)"
traced b.trace "$PROGS/stacks_sites" 2000 >/dev/null || fail "program failed (2000)"
"$GT_REPORT" --dump a.trace > a.txt && "$GT_REPORT" --dump b.trace > b.txt || fail "dump failed"
nodes() { awk '$3 == "STACK" { for (i = 4; i <= NF; i++) if ($i ~ /^count=/) n += substr($i, 7) } END { print n + 0 }' "$1"; }
expect_eq "stack records" "$(grep -c ' STACK ' b.txt)" "$(grep -c ' STACK ' a.txt)"
expect_eq "stack nodes" "$(nodes b.txt)" "$(nodes a.txt)"
[ "$(nodes a.txt)" -gt 0 ] || fail "no stack nodes"
expect_eq "churn allocations" "$(grep -c ' ALLOC .*size=4096 .*stack=' b.txt)" 2000
expect_eq "one stack for the churn site" "$(grep ' ALLOC .*size=4096 ' b.txt | sed 's/.*stack=//' | sort -u | wc -l)" 1
# 1990 more alloc (72 bytes) + free (56) records, and nothing per event besides.
sa=$(stat -c %s a.trace) sb=$(stat -c %s b.trace)
grow=$((sb - sa)) want=$((1990 * (72 + 56)))
[ $grow -ge $want ] && [ $grow -le $((want + 4096)) ] || fail "trace grew $grow bytes for 1990 more events, want $want + chunk headers"
"$GT_REPORT" --json b.trace > b.json || fail "report failed"
expect_eq "churn site count" "$(jget b.json "[s['count'] for s in d['memory']['by_site'] if s['function'] == 'churn']")" "[2000]"
echo "$(nodes a.txt) stack nodes for 10 and for 2000 events; $grow bytes for 1990 more events"
