"""A Python thread with a small stack (threading.stack_size, argument 1 bytes) sampled on CPU, for
tests/cases/hostsample_smallstack.sh: it makes CUDA calls (so it is sampled, with its Python
frames read by the handler), then, argument 3 times, spins 40 ms in libdeepspin.so with only
argument 2 bytes of its stack left, and comes back for a CUDA call (its samples are written
there). Prints "smallstack ok minsigstksz N"; a handler that needs more stack than the margin
leaves kills the process (SIGSEGV)."""
import ctypes
import os
import sys
import threading

from simcuda import check, driver

cu, ctx = driver()
lib = ctypes.PyDLL(os.path.join(os.environ["PROGS"], "libdeepspin.so"))
lib.deepspin.restype = ctypes.c_ulong
lib.deepspin.argtypes = [ctypes.c_ulong, ctypes.c_double]
size, margin, rounds = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
out = []


def spin_deep():
    return lib.deepspin(margin, 0.04)


def body():
    check(cu.cuCtxSetCurrent(ctx), "cuCtxSetCurrent")
    p = ctypes.c_ulonglong()
    for _ in range(rounds):
        check(cu.cuMemAlloc_v2(ctypes.byref(p), 4096), "cuMemAlloc")
        check(cu.cuMemFree_v2(p), "cuMemFree")
        out.append(spin_deep())


threading.stack_size(size)
t = threading.Thread(target=body)
t.start()
t.join()
if len(out) != rounds or not out[0]:
    raise SystemExit(f"smallstack: {out}")
print("smallstack ok minsigstksz", out[0])
