# Watermarks while hooks are in flight: 8 threads time-sharing the machine's cores (each is often
# preempted between its clock read and its commit, for far longer than the watermark's 20 us
# margin) and a flush round every millisecond. Every watermark must stay at or below the time of
# every record not yet written (the in-flight mark, published without a fence and settled by the
# flusher's membarrier, or with a seq_cst store under GPUTRACE_INFLIGHT_FENCE=1): the report
# counts records that came after a watermark above their time, and there must be none, nor any
# record lost. Expected counts from the program's construction (tests/progs/stress.c).
. "$SRC/tests/lib.sh"
n=8
iters=40000
if [ -n "$asan_rt$tsan_rt" ]; then iters=5000; fi
launches=$((iters / 2))
# Which way the marks go: unfenced wherever the kernel offers private expedited membarrier
# (asked here directly: MEMBARRIER_CMD_QUERY, syscall 324 on x86-64), which the tracer says.
mb=$("$PYTHON" -c "import ctypes, platform; print(ctypes.CDLL(None, use_errno=True).syscall(324, 0, 0) & 8 != 0 if platform.machine() == 'x86_64' else 'unknown')" 2>/dev/null)
for fence in 0 1; do
    got=$(GPUTRACE_DEBUG=1 GPUTRACE_INFLIGHT_FENCE=$fence GPUTRACE_FLUSH_MS=1 GPUTRACE_CUPTI=off \
        traced w$fence.trace "$PROGS/stress" "$n" "$iters" 2> w$fence.log) || fail "program failed (fence $fence)"
    mode=$(sed -n 's/^gputrace: in-flight marks: \([a-z]*\).*/\1/p' w$fence.log | head -n 1)
    if [ $fence = 1 ] || [ "$mb" = False ]; then want=fenced; elif [ "$mb" = True ]; then want=plain; else want=$mode; fi
    expect_eq "in-flight marks (fence $fence, membarrier $mb)" "$mode" "$want"
    expect_eq "threads done (fence $fence)" "$(echo "$got" | grep -c "^thread ")" "$n"
    "$GT_REPORT" --json w$fence.trace > w$fence.json 2> w$fence.err ||
        fail "report failed: $(cat w$fence.err)"
    j() { jget w$fence.json "$1"; }
    expect_eq "late_records (fence $fence)" "$(j "d['trace']['late_records']")" 0
    expect_eq "lost_records (fence $fence)" "$(j "d['trace']['lost_records']")" 0
    expect_eq "launch_count (fence $fence)" "$(j "d['timeline']['launch_count']")" $((n * launches))
    expect_eq "alloc_count (fence $fence)" "$(j "d['memory']['alloc_count']")" $((n * iters))
done
exit 0
