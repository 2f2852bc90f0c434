# Host samples and the program's signals: the program's handler for the sampler's real-time
# signal (SIGRTMAX, free at start) is kept aside and runs for the program's own signals; its
# sleep while sampled is not interrupted (tests/progs/sigchain.c). Samples were taken meanwhile.
# test: alone (host samples at a given period: cases beside it would change what they catch)
. "$SRC/tests/lib.sh"
[ -r /proc/self/task/$$/syscall ] || skip "no /proc/PID/task/TID/syscall on this kernel"
got=$(GPUTRACE_SAMPLE_HZ=1000 traced run.trace "$PROGS/sigchain") || fail "traced run failed: $got"
expect_eq "output" "$got" "sigchain ok 3"
"$GT_REPORT" --dump run.trace > run.dump || fail "dump failed"
grep -q " HOST_SAMPLE .*flags=on_cpu" run.dump || fail "no sample of the running thread taken"
