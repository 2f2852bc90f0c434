# Host samples must never read a Python code object after the sample (issue 20): a sample taken
# in a function that is freed before the thread's next hooked call (tests/progs/sample_codefree.py:
# a new function per round, run about 1 ms, dropped, then a CUDA call) keeps its frame, named from
# what was copied at the sample. Under AddressSanitizer (PYTHONMALLOC=malloc: code objects are
# malloc chunks) a write-out that read the freed code object reports a heap-use-after-free: 3 runs
# of 3 did before code facts were copied at sample time.
# test: alone (host samples at a given period: cases beside it would change what they catch)
. "$SRC/tests/lib.sh"
[ -r /proc/self/task/$$/syscall ] || skip "no /proc/PID/task/TID/syscall on this kernel"
[ -z "$tsan_rt" ] || skip "under ThreadSanitizer the sample signal's handler reads no Python frames (python.c is instrumented, and the handler may interrupt ThreadSanitizer's runtime)"
rc=0
out=$(PYTHONMALLOC=malloc GPUTRACE_SAMPLE_HZ=1000 traced run.trace "$PYTHON" \
    "$SRC/tests/progs/sample_codefree.py" 3 2>&1) || rc=$?
[ $rc -eq 0 ] || fail "traced run exited with $rc: $(echo "$out" | grep -m3 'ERROR\|SUMMARY\|rounds' || echo "$out" | tail -n 5)"
rounds=$(echo "$out" | sed -n 's/^rounds \([0-9]*\) .*/\1/p')
[ -n "$rounds" ] || fail "no rounds line: $out"
"$GT_REPORT" --dump run.trace > run.dump || fail "dump failed"
"$PYTHON" "$SRC/tests/progs/codefree_check.py" run.dump "$rounds" > check.out || fail "samples' Python frames: $(cat check.out)"
echo "$rounds rounds"; cat check.out
