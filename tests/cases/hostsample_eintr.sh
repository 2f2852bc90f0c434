# Host samples and EINTR (issue 20): a thread the sampler sees running gets a signal, and may have
# entered a system call by the time it lands; one that SA_RESTART never restarts (nanosleep, poll,
# epoll_wait, select, ...) then returns EINTR. GPUTRACE_SAMPLE_SIGNAL=0 sends no signal at all:
# running threads get samples without a stack, sleeping ones are walked by the sampler thread as
# always, and no sleep of 3000 (300 us periods, sampled at 5 kHz) is cut short. With signals (the
# default) the count is printed: the window this mode closes.
. "$SRC/tests/lib.sh"
[ -r /proc/self/task/$$/syscall ] || skip "no /proc/PID/task/TID/syscall on this kernel"
got=$(GPUTRACE_SAMPLE_SIGNAL=0 GPUTRACE_SAMPLE_HZ=5000 traced quiet.trace "$PROGS/eintr" 3000) || fail "run failed: $got"
expect_eq "sleeps cut short without signals" "$got" "eintr 0"
"$GT_REPORT" --dump quiet.trace > quiet.dump || fail "dump failed"
on=$(grep -c " HOST_SAMPLE .*stack=0 flags=on_cpu" quiet.dump)
off=$(grep " HOST_SAMPLE .*flags=off_cpu" quiet.dump | grep -vc " stack=0 ")
[ "$on" -ge 100 ] || fail "$on stackless samples on CPU, want >= 100"
[ "$off" -ge 10 ] || fail "$off samples of the sleeping thread with a stack, want >= 10"
grep " HOST_SAMPLE .*flags=on_cpu" quiet.dump | grep -v " stack=0 " && fail "a sample on CPU has a stack: a signal was sent"
loud=$(GPUTRACE_SAMPLE_HZ=5000 traced loud.trace "$PROGS/eintr" 3000) || fail "run failed: $loud"
echo "without signals: $on samples on CPU, $off asleep, eintr 0; with signals: $loud"
