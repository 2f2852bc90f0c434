# Host samples and EINTR (issue 20): the waits signal(7) lists as never restarted after a handler
# (nanosleep, clock_nanosleep, poll, ppoll, select, pselect, epoll_wait, sigtimedwait, ...) must
# neither fail with EINTR nor end early because of our sampling signal. The thread alternates
# 200 us on CPU with one such wait, sampled at 1 kHz with signals (the default): no wait is cut
# short, and the samples show the signal did reach it on CPU (stacks: at least one, so the waits
# were exposed to it; 46 to 199 seen under load, 5 once at a load average of 8 in .ci/run, when
# the sampler thread's late ticks mostly found the thread in a wait) while the sampler thread
# walked it asleep. Without preload/waits.c 92 of
# 1200 waits failed with EINTR here (182 of 3000 in a longer run).
# GPUTRACE_SAMPLE_SIGNAL=0 sends no signal at all (stackless samples on CPU). "sys" makes the
# same kinds of waits (and a futex wait with a time limit, io_getevents, semtimedop) as bare
# system calls through syscall(2), which waits.c wraps too: none cut short either; without that
# wrapper 38 of 1300 failed with EINTR here (ppoll, pselect6, poll, select, io_getevents, ...).
# "sock" waits on sockets with a 1 ms SO_RCVTIMEO/SO_SNDTIMEO (recv, recvfrom, recvmsg, accept,
# send, sendto, and recvfrom through syscall(2)): none cut short with preload/sockets.c; without
# it 163 of 1400 failed with EINTR.
# It runs beside other cases: its counts hold under load (see above), and it spends most of its
# time in waits.
. "$SRC/tests/lib.sh"
[ -r /proc/self/task/$$/syscall ] || skip "no /proc/PID/task/TID/syscall on this kernel"
got=$(GPUTRACE_DEBUG=1 GPUTRACE_SAMPLE_HZ=1000 traced loud.trace "$PROGS/eintr" 1200 2> loud.err) || fail "run failed: $got $(cat loud.err)"
echo "$got"
expect_eq "waits cut short with signals" "$(echo "$got" | tail -1)" "eintr 0 early 0"
"$GT_REPORT" --dump loud.trace > loud.dump || fail "dump failed"
on=$(grep " HOST_SAMPLE .*flags=on_cpu" loud.dump | grep -vc " stack=0 ")
off=$(grep " HOST_SAMPLE .*flags=off_cpu" loud.dump | grep -vc " stack=0 ")
[ "$on" -ge 1 ] || fail "no sample on CPU with a stack: no signal reached the thread, the waits were never exposed"
[ "$off" -ge 50 ] || fail "$off samples of the waiting thread with a stack, want >= 50"
# The sampled thread's state: 492 KiB mapped, of which a thread without Python touches only the
# native part of its ring (the Python parts lie apart): 40-44 KiB resident here, 288 KiB when
# each slot held its Python part.
kib=$(sed -n 's/.*host sample state \([0-9]*\) KiB resident.*/\1/p' loud.err)
[ -n "$kib" ] && [ "$kib" -le 96 ] || fail "host sample state ${kib:-?} KiB resident, want <= 96"
echo "host sample state $kib KiB resident"
got=$(GPUTRACE_SAMPLE_SIGNAL=0 GPUTRACE_SAMPLE_HZ=5000 traced quiet.trace "$PROGS/eintr" 300) || fail "run failed: $got"
expect_eq "waits cut short without signals" "$(echo "$got" | tail -1)" "eintr 0 early 0"
"$GT_REPORT" --dump quiet.trace > quiet.dump || fail "dump failed"
grep " HOST_SAMPLE .*flags=on_cpu" quiet.dump | grep -v " stack=0 " && fail "a sample on CPU has a stack: a signal was sent"
sys=$(GPUTRACE_SAMPLE_HZ=1000 traced sys.trace "$PROGS/eintr" 1300 sys) || fail "run failed: $sys"
echo "$sys"
expect_eq "syscall(2) waits cut short with signals" "$(echo "$sys" | tail -1)" "eintr 0 early 0"
"$GT_REPORT" --dump sys.trace > sys.dump || fail "dump failed"
son=$(grep " HOST_SAMPLE .*flags=on_cpu" sys.dump | grep -vc " stack=0 ")
[ "$son" -ge 1 ] || fail "syscall(2) run: no sample on CPU with a stack, the waits were never exposed"
got=$(GPUTRACE_SAMPLE_HZ=1000 traced sock.trace "$PROGS/eintr" 700 sock) || fail "run failed: $got"
echo "$got"
expect_eq "socket waits cut short with signals" "$(echo "$got" | tail -1)" "eintr 0 early 0"
echo "with signals: $on samples on CPU, $off asleep, no wait cut short; syscall(2) waits: $son samples on CPU, none cut short"
