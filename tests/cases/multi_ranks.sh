# Two ranks, one slow by construction (issue 6, several processes): rank 1's host works 40 ms
# before each of 5 steps; both run a 2 ms kernel, then meet at a barrier that runs as a host
# function on the stream, so rank 0 sits in cuStreamSynchronize with its GPU idle until rank 1
# arrives. The cross-process view must name rank 1 the straggler, give each rank's GPU span,
# busy and idle share exactly as the simulated GPU logged them, each rank's exact memory peak,
# aligned start times; and each process's part must be that trace's own report, unchanged.
. "$SRC/tests/lib.sh"
[ -f "$SIMCUPTI_DIR/libcupti.so.13" ] || skip "simulated CUPTI not built"
MiB=1048576 STEPS=5
mkdir bar
GTSIM_LOG="$PWD/r0.log" traced r0.trace "$PROGS/multi_rank" host 0 2 1 $STEPS bar > r0.out &
pid0=$!
GTSIM_LOG="$PWD/r1.log" traced r1.trace "$PROGS/multi_rank" host 1 2 1 $STEPS bar > r1.out ||
    fail "rank 1 failed"
wait $pid0 || fail "rank 0 failed"
grep -q "rank 0 ok" r0.out && grep -q "rank 1 ok" r1.out || fail "a rank did not finish"

"$GT_REPORT" --json r0.trace r1.trace > all.json || fail "report failed"
"$PYTHON" "$SRC/tests/progs/multi_check.py" all.json \
    "r0.trace,r0.log,r0.out,$((1 * MiB + 2 * MiB))" \
    "r1.trace,r1.log,r1.out,$((2 * MiB + 2 * MiB + 4096))" || fail "cross view differs from ground truth"
# construction: busy = 5 kernels of 2 ms on each rank
for r in 0 1; do
    expect_eq "rank $r busy" "$(jget all.json "d['cross']['ranks'][$r]['gpu']['busy_ns']")" $((STEPS * 2000000))
    expect_eq "rank $r basis" "$(jget all.json "d['cross']['ranks'][$r]['wait_basis']")" gpu_timeline
    expect_eq "rank $r syncs" "$(jget all.json "d['cross']['ranks'][$r]['sync_calls']")" $STEPS
done
waits=$(jget all.json "[(k['rank'], k['wait_ns']) for k in d['cross']['ranks']]" 2>&1)
expect_eq "straggler (waits $waits)" "$(jget all.json "(d['cross']['straggler'] or {}).get('rank')")" 1
expect_eq "straggler path" "$(jget all.json "d['cross']['straggler']['path']")" r1.trace
# Rank 0 cannot pass barrier s before rank 1 has worked 40 ms since barrier s-1; a quarter of
# that per step is a bound no scheduling delay on rank 0's side can undercut in practice.
w0=$(jget all.json "d['cross']['ranks'][0]['wait_ns']")
[ "$w0" -ge $((STEPS * 40000000 / 4)) ] || fail "rank 0 waited only $w0 ns"
echo "rank 0 waited $w0 ns, rank 1 $(jget all.json "d['cross']['ranks'][1]['wait_ns']") ns"

# Rank 0's GPU idles while its host sits in that cuStreamSynchronize: its top idle cause.
line=$(grep -n "CHECK(cuStreamSynchronize(s));" "$SRC/tests/progs/multi_rank.c" | cut -d: -f1)
expect_eq "rank 0 idle cause" "$(jget all.json "d['cross']['ranks'][0]['top_idle_cause']['cause']")" synchronize
expect_eq "rank 0 idle site" "$(jget all.json "d['cross']['ranks'][0]['top_idle_cause']['site']")" "main (multi_rank.c:$line)"

# Each process object is exactly that trace's single report; single-trace output is unchanged.
for r in 0 1; do
    "$GT_REPORT" --json "r$r.trace" > "one$r.json" || fail "single report $r failed"
    "$PYTHON" -c "
import json, sys
one = json.load(open('one$r.json')); many = json.load(open('all.json'))
assert one == many['processes'][$r], 'process $r differs from its own report'
assert 'trace' in one and 'process' in one and 'processes' not in one and 'cross' not in one
" || fail "process $r object"
done

# Text: the same reports under banners, then the cross-process screen.
"$GT_REPORT" r0.trace r1.trace > all.txt || fail "text report failed"
"$GT_REPORT" r0.trace > one0.txt
"$GT_REPORT" r1.trace > one1.txt
grep -q "==== across" one0.txt && fail "single-trace text report has a cross-process section"
grep -q "^==== process" one0.txt && fail "single-trace text report has a banner"
sed -n '/^==== process 1 of 2: r0.trace ====$/,/^==== process 2 of 2/p' all.txt | sed '1d;$d' | sed '$d' > got0.txt
cmp got0.txt one0.txt || fail "process 1's text differs from its own report"
sed -n '/^==== process 2 of 2: r1.trace ====$/,/^==== across 2 processes ====$/p' all.txt | sed '1d;$d' | sed '$d' > got1.txt
cmp got1.txt one1.txt || fail "process 2's text differs from its own report"
grep -q "^  straggler rank 1 (r1.trace): the others wait for it" all.txt || fail "text names no straggler"
grep -q "all on host" all.txt || fail "text does not say the clocks were on one host"

# -o writes the combined report.
"$GT_REPORT" --json -o out.json r0.trace r1.trace || fail "-o failed"
cmp out.json all.json || fail "-o output differs"
