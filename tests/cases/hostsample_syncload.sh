# Host stack samples (issue 20 part 2): `idle syncload` sleeps 30 ms in load_batch three times;
# the sampler sees the thread blocked there (off CPU, usleep on its stack, no signal sent to the
# sleeping thread: usleep is not cut short by EINTR) and GPUTRACE_SAMPLE_HZ=0 records nothing.
# test: alone (host samples at a given period: cases beside it would change what they catch)
. "$SRC/tests/lib.sh"
[ -f "$SIMCUPTI_DIR/libcupti.so.13" ] || skip "simulated CUPTI not built"
[ -r /proc/self/task/$$/syscall ] || skip "no /proc/PID/task/TID/syscall on this kernel"
got=$(GPUTRACE_SAMPLE_HZ=500 traced run.trace "$PROGS/idle" syncload) || fail "traced run failed: $got"
expect_eq "output" "$got" "idle syncload ok"
"$GT_REPORT" --dump run.trace > run.dump || fail "dump failed"
"$PYTHON" "$SRC/tests/progs/hostsample_check.py" run.dump 500 || fail "samples differ"
got=$(GPUTRACE_SAMPLE_HZ=0 traced off.trace "$PROGS/idle" syncload) || fail "traced run failed: $got"
"$GT_REPORT" --dump off.trace > off.dump || fail "dump failed"
"$PYTHON" "$SRC/tests/progs/hostsample_check.py" off.dump 0 || fail "samples with HZ=0"
