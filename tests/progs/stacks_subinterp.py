"""Launches without the GIL (ctypes.CDLL) before, while and after a subinterpreter exists, for
tests/cases/stacks_subinterp.sh. Argument: N launches per phase. Prints "ok N" or, where the
interpreter has no module to create subinterpreters, "no subinterpreters"."""
import ctypes
import sys

from simcuda import check, driver

try:
    import _xxsubinterpreters as interps  # 3.9-3.12
except ImportError:
    try:
        import _interpreters as interps  # 3.13
    except ImportError:
        print("no subinterpreters")
        sys.exit(0)

cu = None  # main: the driver through ctypes.CDLL, which releases the GIL around each call
one = ctypes.c_uint(1)


def before(fn, n):
    for _ in range(n):
        check(cu.cuLaunchKernel(fn, one, one, one, one, one, one, 0, None, None, None), "b")  # SITE:before


def during(fn, n):
    for _ in range(n):
        check(cu.cuLaunchKernel(fn, one, one, one, one, one, one, 0, None, None, None), "d")  # SITE:during


def after(fn, n):
    for _ in range(n):
        check(cu.cuLaunchKernel(fn, one, one, one, one, one, one, 0, None, None, None), "a")  # SITE:after


def main(n):
    global cu
    cu, _ = driver(gil=False)
    mod, fn = ctypes.c_void_p(), ctypes.c_void_p()
    check(cu.cuModuleLoadData(ctypes.byref(mod), b"kernel sub_kernel 1000\n"), "cuModuleLoadData")
    check(cu.cuModuleGetFunction(ctypes.byref(fn), mod, b"sub_kernel"), "cuModuleGetFunction")
    before(fn, n)
    iid = interps.create()
    during(fn, n)
    interps.destroy(iid)
    after(fn, n)
    check(cu.cuCtxSynchronize(), "cuCtxSynchronize")
    print("ok", n)


main(int(sys.argv[1]))
