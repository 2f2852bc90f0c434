"""Drives the driver from Python through ctypes, as CuPy's softlink and many scripts do:
ctypes.CDLL('libcuda.so.1').cuMemAlloc_v2 is a dlsym on libcuda's handle.
4 allocations of 1, 2, 3, 4 MiB; frees the 2 MiB one; 5 launches of kernel 'py_kernel'."""
import ctypes
import sys

cu = ctypes.CDLL("libcuda.so.1")


def check(r, what):
    if r != 0:
        sys.exit(f"{what} returned {r}")


check(cu.cuInit(0), "cuInit")
dev = ctypes.c_int()
check(cu.cuDeviceGet(ctypes.byref(dev), 0), "cuDeviceGet")
ctx = ctypes.c_void_p()
check(cu.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev), "cuDevicePrimaryCtxRetain")
check(cu.cuCtxSetCurrent(ctx), "cuCtxSetCurrent")
ptrs = []
for i in range(4):
    p = ctypes.c_uint64()
    check(cu.cuMemAlloc_v2(ctypes.byref(p), ctypes.c_size_t((i + 1) << 20)), "cuMemAlloc_v2")
    ptrs.append(p)
check(cu.cuMemFree_v2(ptrs[1]), "cuMemFree_v2")
mod = ctypes.c_void_p()
check(cu.cuModuleLoadData(ctypes.byref(mod), b"kernel py_kernel 1000\n"), "cuModuleLoadData")
fn = ctypes.c_void_p()
check(cu.cuModuleGetFunction(ctypes.byref(fn), mod, b"py_kernel"), "cuModuleGetFunction")
one = ctypes.c_uint(1)
for _ in range(5):
    check(cu.cuLaunchKernel(fn, one, one, one, one, one, one, ctypes.c_uint(0), None, None, None),
          "cuLaunchKernel")
check(cu.cuCtxSynchronize(), "cuCtxSynchronize")
print("ok")
