"""Launches whose stacks differ from the previous launch's only in their Python frames, for
tests/cases/stacks_reuse.sh. Arguments: N, then "pydll" (ctypes.PyDLL: the GIL is held during the
call) or "cdll" (ctypes.CDLL: released, the frames are read by offsets, as PyTorch's calls release
it). Each round of N: two_lines launches at line_a then line_b (same code object, other
instruction offset), then via() calls site() from line_x then line_y (same innermost frame, other
caller line), then from caller_z (another caller function), then the generator gsite, resumed from
gen_p then gen_q (the same generator frame at the same instruction, its callers another code
object each); then N launches in a row from line_r (the same stack again)."""
import ctypes
import sys

mode = sys.argv[2] if len(sys.argv) > 2 else "pydll"
cu = (ctypes.CDLL if mode == "cdll" else ctypes.PyDLL)("libcuda.so.1")
one = ctypes.c_uint(1)


def check(r, what):
    if r != 0:
        raise SystemExit(f"{what} returned {r}")


def two_lines(fn):
    check(cu.cuLaunchKernel(fn, one, one, one, one, one, one, 0, None, None, None), "a")  # SITE:line_a
    check(cu.cuLaunchKernel(fn, one, one, one, one, one, one, 0, None, None, None), "b")  # SITE:line_b


def site(fn):
    check(cu.cuLaunchKernel(fn, one, one, one, one, one, one, 0, None, None, None), "s")  # SITE:site


def via(fn):
    site(fn)  # SITE:line_x
    site(fn)  # SITE:line_y


def caller_z(fn):
    site(fn)  # SITE:caller_z


def gsite(fn):
    while True:
        check(cu.cuLaunchKernel(fn, one, one, one, one, one, one, 0, None, None, None), "g")  # SITE:gsite
        yield


def gen_p(g):
    next(g)  # SITE:gen_p


def gen_q(g):
    next(g)  # SITE:gen_q


def repeat(fn, n):
    for _ in range(n):
        check(cu.cuLaunchKernel(fn, one, one, one, one, one, one, 0, None, None, None), "r")  # SITE:line_r


def main(n):
    check(cu.cuInit(0), "cuInit")
    dev, ctx = ctypes.c_int(), ctypes.c_void_p()
    check(cu.cuDeviceGet(ctypes.byref(dev), 0), "cuDeviceGet")
    check(cu.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev), "cuDevicePrimaryCtxRetain")
    check(cu.cuCtxSetCurrent(ctx), "cuCtxSetCurrent")
    mod, fn = ctypes.c_void_p(), ctypes.c_void_p()
    check(cu.cuModuleLoadData(ctypes.byref(mod), b"kernel reuse_kernel 1000\n"), "cuModuleLoadData")
    check(cu.cuModuleGetFunction(ctypes.byref(fn), mod, b"reuse_kernel"), "cuModuleGetFunction")
    g = gsite(fn)
    for _ in range(n):
        two_lines(fn)
        via(fn)
        caller_z(fn)
        gen_p(g)
        gen_q(g)
    repeat(fn, n)
    check(cu.cuCtxSynchronize(), "cuCtxSynchronize")
    print("ok", n, mode)


main(int(sys.argv[1]))
