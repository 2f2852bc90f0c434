# Host samples must never crash the traced program (issue 20): a sample signal delivered while
# CPython pops a frame whose data-stack chunk it has just unmapped (tests/progs/sample_popframe.py;
# CPython 3.11's RETURN_GENERATOR stores the new current frame after the munmap) found the frame
# chain pointing into unmapped memory, and the handler's read died of SIGSEGV (torch_traced and
# torch_html did so in about 1 run in 40). Without the fix this run dies within a second at
# 1000 Hz on 3.11; other versions pop in the other order and only check that samples still carry
# the Python frames.
# test: alone (host samples at a given period: cases beside it would change what they catch)
. "$SRC/tests/lib.sh"
[ -r /proc/self/task/$$/syscall ] || skip "no /proc/PID/task/TID/syscall on this kernel"
rc=0
out=$(GPUTRACE_SAMPLE_HZ=1000 traced run.trace "$PYTHON" "$SRC/tests/progs/sample_popframe.py" 3 2>&1) || rc=$?
[ $rc -eq 0 ] || fail "traced run exited with $rc (signal $((rc - 128)) if over 128): $out"
case "$out" in *"generators "*) ;; *) fail "no generators line: $out" ;; esac
"$GT_REPORT" --dump run.trace > run.dump || fail "dump failed"
n=$(grep -c ' HOST_SAMPLE ' run.dump)
[ "$n" -ge 100 ] || fail "$n host samples in 3 s at 1000 Hz"
# (under ThreadSanitizer the handler reads no Python frames: no crash and the samples are all it
# can check)
[ -z "$tsan_rt" ] || { echo "$n host samples, $out (ThreadSanitizer: no Python frames)"; exit 0; }
# the samples' Python frames are still read (by copies): the caller's frame always; big_gen's
# only when a sample lands inside its short call while its chunk is mapped (0 of 3,000 samples in
# some runs, so it is counted, not required)
grep -q 'PYCODE .*name="popframes"' run.dump || fail "no sample has popframes' frame"
echo "$n host samples, $out; big_gen's frame in samples: $(grep -c 'PYCODE .*name="big_gen"' run.dump || true)"
