"""Launch-bound loop through ctypes on the simulated driver (bench/README.md, issue 23): N launches of
one kernel from the same Python line, three Python frames deep; prints the CPU ns per launch of
the timed loop. Arguments: N, then "cdll" (GIL released, as in PyTorch's calls) or "pydll" (held)."""
mode = sys.argv[2]
cu = (ctypes.CDLL if mode == "cdll" else ctypes.PyDLL)("libcuda.so.1")
one = ctypes.c_uint(1)
cu.cuInit(0)
dev, ctx = ctypes.c_int(), ctypes.c_void_p()
cu.cuDeviceGet(ctypes.byref(dev), 0); cu.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev); cu.cuCtxSetCurrent(ctx)
mod, fn = ctypes.c_void_p(), ctypes.c_void_p()
cu.cuModuleLoadData(ctypes.byref(mod), b"kernel k 10\n"); cu.cuModuleGetFunction(ctypes.byref(fn), mod, b"k")
def f(n):
    for _ in range(n):
        cu.cuLaunchKernel(fn, one, one, one, one, one, one, 0, None, None, None)
def g(n): f(n)
def h(n): g(n)
n = int(sys.argv[1]); h(n // 10)
t = time.process_time(); h(n); t = time.process_time() - t
print("cpu_ns_per_launch=%.0f" % (t * 1e9 / n))
