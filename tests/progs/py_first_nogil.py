"""The issue 22 example (tests/cases/stacks_first_nogil.sh): every CUDA call through ctypes.CDLL,
which releases the GIL around it; the first allocation, 128 MiB from python_big_alloc, is the
program's first call that captures a stack, and four small blocks follow from small()."""
import ctypes

cu = ctypes.CDLL("libcuda.so.1")
MiB = 1 << 20


def check(r):
    if r != 0:
        raise SystemExit(f"CUDA error {r}")


def python_big_alloc():
    p = ctypes.c_uint64()
    check(cu.cuMemAlloc_v2(ctypes.byref(p), ctypes.c_size_t(128 * MiB)))  # SITE:big
    return p


def small(n):
    p = ctypes.c_uint64()
    check(cu.cuMemAlloc_v2(ctypes.byref(p), ctypes.c_size_t(n * MiB)))  # SITE:small
    return p


check(cu.cuInit(0))
dev, ctx = ctypes.c_int(), ctypes.c_void_p()
check(cu.cuDeviceGet(ctypes.byref(dev), 0))
check(cu.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev))
check(cu.cuCtxSetCurrent(ctx))
big = python_big_alloc()
smalls = [small(i + 1) for i in range(4)]
print("ok")
