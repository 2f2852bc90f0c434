# The sampling signal's handler on a small stack (issue 20): a Python thread with a 32 KiB stack
# (threading.stack_size) spins with only 6,000 bytes of its stack left, sampled at 1 kHz (its
# Python frames read by the handler). The kernel's signal frame takes AT_MINSIGSTKSZ (3,376 here)
# of them; the handler keeps its scratch (the Python reader's copies, 5 KiB) in the thread's
# mmap'd sample state, so the rest is enough: it needed more than 8,000 bytes (8,000 crashed,
# 9,000 passed) when that scratch was on the stack, and between 3,000 and 5,000 since.
# test: alone (host samples at a given period: cases beside it would change what they catch)
. "$SRC/tests/lib.sh"
[ -r /proc/self/task/$$/syscall ] || skip "no /proc/PID/task/TID/syscall on this kernel"
# Under AddressSanitizer every frame of the handler's path (and the spin's) carries redzones: 12,000
# bytes passed there, 8,000 did not; it runs with 16,000 (the path runs, its size is the plain
# build's to check).
margin=6000
[ -z "$asan_rt" ] || margin=16000
export PROGS
rc=0
out=$(cd "$SRC/tests/progs" && GPUTRACE_SAMPLE_HZ=1000 traced "$OLDPWD/run.trace" "$PYTHON" smallstack.py 32768 $margin 10 2>&1) || rc=$?
[ $rc -eq 0 ] || fail "traced run exited with $rc (139: the handler overflowed the stack): $out"
echo "$out"
"$GT_REPORT" --dump run.trace > run.dump || fail "dump failed"
on=$(grep " HOST_SAMPLE .*flags=on_cpu" run.dump | grep -vc " stack=0 ")
[ "$on" -ge 20 ] || fail "$on samples on CPU with a stack, want >= 20 (the handler ran in the deep spins)"
echo "$on samples on CPU with a stack, $margin bytes of stack left"
