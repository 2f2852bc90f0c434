"""Host samples against code objects freed at a high rate, for tests/cases/hostsample_codefree.sh.
Each round compiles a new function, runs it on CPU for about a millisecond (the sample signal
lands in it: its frame names the new code object), drops it (the function and its code object are
freed at once: nothing else holds them) and then makes a CUDA call through ctypes, at which the
thread writes its samples out. A write-out that read the sampled code objects would read freed
memory (AddressSanitizer: heap-use-after-free; with PYTHONMALLOC=malloc every code object is a
malloc chunk it watches). Argument 1: seconds to run. Prints the rounds and the line of the
function's loop (the line the samples must carry)."""
import sys
import time

from simcuda import check, driver

cu, ctx = driver()

# the loop is on line 3 of each function; its file name is made per round too (a str freed with
# the code object)
SRC = "def fresh_{i}(until):\n    x = 0\n    while time.monotonic() < until: x += 1\n    return x\n"

end = time.monotonic() + float(sys.argv[1])
rounds = 0
while time.monotonic() < end:
    name = f"fresh_{rounds}"
    ns = {"time": time}
    exec(compile(SRC.format(i=rounds), f"<codefree {rounds}>", "exec"), ns)
    fn = ns.pop(name)
    fn(time.monotonic() + 0.001)
    del fn  # the function, its code object and its file name are freed here
    check(cu.cuCtxSynchronize(), "cuCtxSynchronize")  # the samples are written here
    rounds += 1
print("rounds", rounds, "line 3")
