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
. "$SRC/tests/lib.sh"
[ -r /proc/self/task/$$/syscall ] || skip "no /proc/PID/task/TID/syscall on this kernel"
got=$(GPUTRACE_SAMPLE_HZ=10000 timeout 120 sh -c '. "$SRC/tests/lib.sh"; traced tight.trace "$PROGS/loaderlock" "$PROGS/libspincb.so" 50 tight' 2>&1; echo "rc=$?")
expect_eq "tight: output and exit status (124: it hung)" "$got" "loaderlock ok
rc=0"
got=$(GPUTRACE_SAMPLE_HZ=10000 timeout 120 sh -c '. "$SRC/tests/lib.sh"; traced run.trace "$PROGS/loaderlock" "$PROGS/libspincb.so" 20' 2>&1; echo "rc=$?")
expect_eq "spin: output and exit status (124: it hung)" "$got" "loaderlock ok
rc=0"
"$GT_REPORT" --dump run.trace > run.dump || fail "dump failed"
"$PYTHON" - run.dump <<'PY' || fail "samples differ"
import re, sys
parent, ip, syms, samples = {}, {}, [], []
for line in open(sys.argv[1]):
    m = re.search(r" STACK - first=(\d+) parent=(\d+) count=\d+ ips=(\S+)", line)
    if m:
        node, par = int(m.group(1)), int(m.group(2))
        for a in m.group(3).split(","):
            parent[node], ip[node] = par, int(a, 16)
            par, node = node, node + 1
        continue
    m = re.search(r" SYMBOL - addr=0x([0-9a-f]+) size=(\d+) name=\"([^\"]*)\"", line)
    if m:
        syms.append((int(m.group(1), 16), int(m.group(2)), m.group(3)))
        continue
    m = re.search(r" HOST_SAMPLE - .* stack=(\d+) flags=(\S+)", line)
    if m and "on_cpu" in m.group(2):
        samples.append(int(m.group(1)))
def names(node):
    out = []
    while node:
        out += [n for lo, sz, n in syms if lo <= ip[node] < lo + sz]
        node = parent[node]
    return out
# (the library is closed by the time the trace is written and main is not exported: no names)
walked = [s for s in samples if {"dl_iterate_phdr", "__libc_start_main"} <= set(names(s))]
print("%d samples on CPU, %d walked through dl_iterate_phdr to __libc_start_main" % (len(samples), len(walked)))
# 20 rounds of 20 ms at 10 kHz: 4000 samples if none is missed; a loaded machine misses many,
# and the first sample in each round is partial (its rule is learnt after it)
sys.exit(0 if len(walked) >= 20 else 1)
PY
