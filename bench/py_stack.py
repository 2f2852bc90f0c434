"""Cost of Python frames in host stacks: N allocations (cuMemAlloc_v2 of the do-nothing driver,
bench/nulldrv) from one line D Python frames deep, through ctypes.PyDLL (the GIL held: the API
walk) or ctypes.CDLL (the GIL released: the walk by struct offsets). Prints the thread CPU time
per allocation of the timed loop (after W untimed ones). Run it with GPUTRACE_PYTHON=0 and
without, side by side: the difference is what the Python frames cost per captured stack.
Usage: py_stack.py pydll|cdll N D W"""
import ctypes
import sys
import time

kind, n, depth, warm = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
cu = (ctypes.PyDLL if kind == "pydll" else ctypes.CDLL)("libcuda.so.1")
alloc = cu.cuMemAlloc_v2
p = ctypes.c_uint64()
ref = ctypes.byref(p)
size = ctypes.c_size_t(4096)


def loop(count):
    for _ in range(count):
        alloc(ref, size)


def nest(d, count):
    if d > 1:
        return nest(d - 1, count)
    t0 = time.thread_time_ns()
    loop(count)
    return time.thread_time_ns() - t0


cu.cuInit(0)
nest(depth, warm)
ns = nest(depth, n)
print(f"mode=py_stack dll={kind} n={n} depth={depth} ns_per_alloc={ns / n:.1f}")
