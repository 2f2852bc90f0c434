# Every kernel reaches the trace when the program exits while CUPTI's delivery thread is busy:
# a fast launch loop (tests/progs/launch_loop: 100,000 launches of 20 ns kernels, CUPTI delivering every 10 ms) ends with
# buffers in flight; the shim's forced flush at exit must get them all, or count what it lost.
# A timing race (the flush returning while another thread still held buffers) lost a quarter
# of the runs' kernels silently once: several runs, each exact. CUPTI's buffers given back are
# handed out again (GPUTRACE_DEBUG counts them): none of their old records may reappear; they are
# handed zeroed (CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER set), and none had a byte set past
# the valid size CUPTI gave back (the shim zeroes only the valid bytes).
. "$SRC/tests/lib.sh"
export GTSIM_KERNEL_NS=20 GTSIM_LAUNCH_LATENCY_NS=0 GTSIM_ACTIVITY_CAPACITY=250000 \
    GTSIM_CUPTI_PERIOD_MS=10 GPUTRACE_FLUSH_MS=10 GPUTRACE_STACKS=none
for run in 1 2 3 4 5 6; do
    rm -f "t$run.trace"
    GPUTRACE_DEBUG=1 traced "t$run.trace" "$PROGS/launch_loop" 100000 >out.txt 2>&1 || fail "run $run: program failed: $(cat out.txt)"
    reused=$(sed -n 's/^gputrace: cupti: [0-9]* buffers handed out, \([0-9]*\) of them reused; handed zeroed: yes, 0 with a byte set past their valid size$/\1/p' out.txt)
    [ -n "$reused" ] && [ "$reused" -ge 1 ] || fail "run $run: no CUPTI buffer reused, or not handed zeroed, or one with bytes set past its valid size: $(grep cupti out.txt)"
    "$GT_REPORT" --json "t$run.trace" >t.json || fail "run $run: report failed"
    expect_eq "run $run: launches, kernels, dropped, lost" \
        "$(jget t.json "(d['timeline']['launch_count'], d['timeline']['kernel_count'], d['trace']['cupti_dropped'], d['trace']['lost_records'])")" \
        "(100000, 100000, 0, 0)"
done
echo "6 runs: 100000 kernels each"
