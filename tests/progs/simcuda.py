"""The Python test programs' driver: libcuda.so.1 (the simulated one under the tests) through
ctypes, initialized, with device 0's primary context made current on the calling thread."""
import ctypes


def check(r, what):
    if r != 0:
        raise SystemExit(f"{what} returned {r}")


def driver(gil=True):
    """(cu, ctx). gil: PyDLL, whose calls keep the GIL (a sampled thread stays in Python's view);
    else CDLL, which releases it around each call."""
    cu = (ctypes.PyDLL if gil else ctypes.CDLL)("libcuda.so.1")
    check(cu.cuInit(0), "cuInit")
    dev, ctx = ctypes.c_int(), ctypes.c_void_p()
    check(cu.cuDeviceGet(ctypes.byref(dev), 0), "cuDeviceGet")
    check(cu.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev), "cuDevicePrimaryCtxRetain")
    check(cu.cuCtxSetCurrent(ctx), "cuCtxSetCurrent")
    return cu, ctx
