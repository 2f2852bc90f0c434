# Host samples and the loader's lock (issue 20). dl_iterate_phdr holds the loader's lock (a
# recursive mutex in glibc) while it calls back; a sample handler that meets code with no cached
# unwind rule derives one with dl_iterate_phdr, which recurses where the thread owns that lock and
# waits for itself where it interrupted the thread halfway through taking or releasing it.
#   tight: dl_iterate_phdr back to back, in a library opened anew each round (a dlclose clears the
#          cached rules), sampled at 10 kHz: without the check it hung 3 of 3 runs (the handler's
#          dl_iterate_phdr waiting in __pthread_mutex_unlock_usercnt's window); handlers now derive
#          only with the lock free or owned whole, and otherwise note the miss for the sampler
#          thread.
#   spin:  20 ms in the callback, the lock owned: handlers derive there, and the samples walk
#          through the callback, dl_iterate_phdr and down to __libc_start_main.
# test: alone (host samples at a given period: cases beside it would change what they catch)
. "$SRC/tests/lib.sh"
[ -r /proc/self/task/$$/syscall ] || skip "no /proc/PID/task/TID/syscall on this kernel"
got=$(GPUTRACE_SAMPLE_HZ=10000 timeout 120 sh -c '. "$SRC/tests/lib.sh"; traced tight.trace "$PROGS/loaderlock" "$PROGS/libspincb.so" 50 tight' 2>&1; echo "rc=$?")
expect_eq "tight: output and exit status (124: it hung)" "$got" "loaderlock ok
rc=0"
got=$(GPUTRACE_SAMPLE_HZ=10000 timeout 120 sh -c '. "$SRC/tests/lib.sh"; traced run.trace "$PROGS/loaderlock" "$PROGS/libspincb.so" 20' 2>&1; echo "rc=$?")
expect_eq "spin: output and exit status (124: it hung)" "$got" "loaderlock ok
rc=0"
# Under ThreadSanitizer a handler derives no rule at all (it may interrupt TSan's runtime), and the
# sampler thread cannot take the loader's lock while the callback holds it: no walk gets through.
[ -z "$tsan_rt" ] || { echo "tight: no hang; spin: walks not checked under ThreadSanitizer"; exit 0; }
"$GT_REPORT" --dump run.trace > run.dump || fail "dump failed"
"$PYTHON" - run.dump <<'PY' || fail "samples differ"
import os, sys
sys.path.insert(0, os.path.join(os.environ["SRC"], "tests", "progs"))
from sampledump import Dump
d = Dump(sys.argv[1])
samples = [s.stack for s in d.samples if "on_cpu" in s.flags]
names = d.names
# (the library is closed by the time the trace is written and main is not exported: no names)
walked = [s for s in samples if {"dl_iterate_phdr", "__libc_start_main"} <= set(names(s))]
print("%d samples on CPU, %d walked through dl_iterate_phdr to __libc_start_main" % (len(samples), len(walked)))
# 20 rounds of 20 ms at 10 kHz: 4000 samples if none is missed; a loaded machine misses many,
# and the first sample in each round is partial (its rule is learnt after it)
sys.exit(0 if len(walked) >= 20 else 1)
PY
