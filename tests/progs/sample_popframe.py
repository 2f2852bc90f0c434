"""Host samples against CPython's frame pops, for tests/cases/hostsample_popframe.sh. A call of a
generator function runs its frame up to RETURN_GENERATOR, which copies the frame into the
generator and pops it; where that frame opened a data-stack chunk, the pop frees the chunk (munmap)
and CPython 3.11 stores the thread's new current frame only after that (ceval.c: PopFrame, then
`frame = cframe.current_frame = prev`). A sample signal queued meanwhile is delivered at munmap's
return, when the current frame points into unmapped memory. `big_gen` has a frame larger than a
chunk (its locals are never assigned: the frame is large, the call quick), so every call of it
maps a chunk and unmaps it there. The thread makes CUDA calls through ctypes (the simulated
driver), so it is sampled and its Python frames are read. Argument 1: seconds to run. Prints the
generators made."""
import sys
import time

from simcuda import check, driver

cu, ctx = driver()

# 4000 locals: a frame of about 32 KiB, over the 16 KiB chunk
dead = "\n".join(f"    v{i} = 0" for i in range(4000))
exec(f"def big_gen():\n    yield 1\n{dead}\n")


def popframes(n):
    for _ in range(n):
        big_gen()
    return n


end = time.monotonic() + float(sys.argv[1])
calls = 0
while time.monotonic() < end:
    calls += popframes(200)
    check(cu.cuCtxSynchronize(), "cuCtxSynchronize")  # the samples are written here
print("generators", calls)
