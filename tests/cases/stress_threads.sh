# 16 threads x 1 M traced events each (issue 8): 400,000 allocations, 400,000 frees and 200,000
# launches per thread, all threads released together. No record may be lost and each thread's
# records must come out of the report in the order the thread made them.
# STRESS_THREADS / STRESS_ITERATIONS scale it (defaults 16 / 400000 = 16 M events; under a
# sanitizer build 16 / 25000 = 1 M events, which already takes ASan/TSan longer than the full run).
# The GPU timeline is off here: this is about the shim's own per-thread buffers and file, and the
# simulated CUPTI's 65,536-record activity ring would drop kernel records at this launch rate.
. "$SRC/tests/lib.sh"
n=${STRESS_THREADS:-16}
iters=${STRESS_ITERATIONS:-400000}
if [ -n "$asan_rt$tsan_rt" ]; then iters=${STRESS_ITERATIONS:-25000}; fi
launches=$((iters / 2))
want=$(i=0; while [ $i -lt "$n" ]; do
    echo "thread $i: $iters allocations, $iters frees, $launches launches"; i=$((i + 1)); done)
got=$(GPUTRACE_CUPTI=off traced s.trace "$PROGS/stress" "$n" "$iters") || fail "program failed"
expect_eq "program output" "$got" "$want"
"$GT_REPORT" --json s.trace > s.json 2> s.err || fail "report failed: $(cat s.err)"
j() { jget s.json "$1"; }
expect_eq alloc_count "$(j "d['memory']['alloc_count']")" $((n * iters))
expect_eq free_count "$(j "d['memory']['free_count']")" $((n * iters))
expect_eq launch_count "$(j "d['timeline']['launch_count']")" $((n * launches))
expect_eq lost_records "$(j "d['trace']['lost_records']")" 0
expect_eq clean_end "$(j "d['trace']['clean_end']")" True
expect_eq unmatched_frees "$(j "d['memory']['unmatched_frees']")" 0
expect_eq leaked_bytes "$(j "d['memory']['leaked_bytes']")" 0
# sum over i < iters of 512 * (1 + i % 1024), per thread
bytes=$("$PYTHON" -c "print($n * sum(512 * (1 + i % 1024) for i in range($iters)))")
expect_eq alloc_bytes "$(j "d['memory']['alloc_bytes']")" "$bytes"

# Per thread, in the dump's order: ALLOC of iteration k (size 512 * (1 + k % 1024)), then for odd
# k a LAUNCH, then the FREE of that same address; k counts up from 0 to iters - 1.
"$GT_REPORT" --dump s.trace | awk -v iters="$iters" -v want_threads="$n" '
function bad(msg) { print "order broken: tid " t ": " msg " at iteration " k[t] ": " $0; err = 1; exit 1 }
$3 == "ALLOC" || $3 == "LAUNCH" || $3 == "FREE" {
    t = substr($2, 5)
    if (!(t in k)) { k[t] = 0; st[t] = 0; nl[t] = 0; threads++ }
    if ($3 == "ALLOC") {
        if (st[t] != 0) bad("allocation out of turn")
        if ($6 != "size=" 512 * (1 + k[t] % 1024)) bad("allocation of the wrong iteration (" $6 ")")
        addr[t] = $5; st[t] = (k[t] % 2) ? 1 : 2
    } else if ($3 == "LAUNCH") {
        if (st[t] != 1) bad("launch out of turn")
        st[t] = 2; nl[t]++
    } else {
        if (st[t] != 2) bad("free out of turn")
        if ($5 != addr[t]) bad("free of " $5 ", allocated " addr[t])
        st[t] = 0; k[t]++
    }
}
END {
    if (err) exit 1
    if (threads != want_threads) { print "threads with records: " threads ", want " want_threads; exit 1 }
    for (t in k) if (k[t] != iters || st[t] != 0 || nl[t] != int(iters / 2)) {
        print "tid " t ": " k[t] " iterations, " nl[t] " launches, want " iters; exit 1 }
    print threads " threads x " iters " iterations in program order"
}' || fail "per-thread order"
echo "$n threads: $((n * iters)) allocations, $((n * iters)) frees, $((n * launches)) launches, 0 lost"
