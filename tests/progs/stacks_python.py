"""Device memory and launches from known Python functions at known lines (each marked SITE:name)
through ctypes, for tests/cases/stacks_python.sh. Argument 1: "pydll" (ctypes.PyDLL: the GIL is
held during the call, as in a C extension), "cdll" (ctypes.CDLL: released), "threads" (PyDLL from
4 threads), "exit" (calls while the interpreter shuts down, see exiting()) or "exit_cdll" (the
same through CDLL: the daemon thread's calls go on while the interpreter finalizes; both CDLL
modes first synchronize once, see setup()). The package `torch` on PYTHONPATH is the test's stand-in for a framework: its
empty(nbytes) allocates through the same library handle.
pydll/cdll: alloc_buffer allocates 1 MiB 3 times (frees one), alloc_weights 4 MiB twice through
torch.empty, launch_kernels launches 'py_kernel' 5 times, train_step synchronizes once.
threads: each of 4 threads allocates 2 MiB 3 times in thread_alloc and frees them."""
import ctypes
import sys
import threading

import torch

mode = sys.argv[1] if len(sys.argv) > 1 else "pydll"
cu = (ctypes.CDLL if mode in ("cdll", "exit_cdll") else ctypes.PyDLL)("libcuda.so.1")
torch.cu = cu
MiB = 1 << 20


def check(r, what):
    if r != 0:
        raise SystemExit(f"{what} returned {r}")


ctx = ctypes.c_void_p()


def setup():
    check(cu.cuInit(0), "cuInit")
    dev = ctypes.c_int()
    check(cu.cuDeviceGet(ctypes.byref(dev), 0), "cuDeviceGet")
    check(cu.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev), "cuDevicePrimaryCtxRetain")
    check(cu.cuCtxSetCurrent(ctx), "cuCtxSetCurrent")
    if mode in ("cdll", "exit_cdll"):
        # The first call that takes a stack without the GIL has its Python frames: cuInit asked
        # the tracer's atexit guard, which the main thread registered at its next bytecode.
        check(cu.cuCtxSynchronize(), "cuCtxSynchronize")  # SITE:first_sync


def alloc_buffer(nbytes):
    p = ctypes.c_uint64()
    r = cu.cuMemAlloc_v2(ctypes.byref(p), ctypes.c_size_t(nbytes))  # SITE:alloc_buffer
    check(r, "cuMemAlloc_v2")
    return p


def alloc_weights(nbytes):
    return torch.empty(nbytes)  # SITE:alloc_weights


def launch_kernels(fn, count):
    one = ctypes.c_uint(1)
    for _ in range(count):
        r = cu.cuLaunchKernel(fn, one, one, one, one, one, one, 0, None, None, None)  # SITE:launch_kernels
        check(r, "cuLaunchKernel")


def train_step():
    bufs = []
    for _ in range(3):
        bufs.append(alloc_buffer(MiB))  # SITE:train_step_buffer
    weights = []
    for _ in range(2):
        weights.append(alloc_weights(4 * MiB))  # SITE:train_step_weights
    check(cu.cuMemFree_v2(bufs[1]), "cuMemFree_v2")
    mod = ctypes.c_void_p()
    check(cu.cuModuleLoadData(ctypes.byref(mod), b"kernel py_kernel 1000\n"), "cuModuleLoadData")
    fn = ctypes.c_void_p()
    check(cu.cuModuleGetFunction(ctypes.byref(fn), mod, b"py_kernel"), "cuModuleGetFunction")
    launch_kernels(fn, 5)  # SITE:train_step_launch
    check(cu.cuCtxSynchronize(), "cuCtxSynchronize")  # SITE:train_step_sync


def thread_alloc(results, i):
    check(cu.cuCtxSetCurrent(ctx), "cuCtxSetCurrent")
    ptrs = []
    for _ in range(3):
        ptrs.append(alloc_buffer(2 * MiB))  # SITE:thread_alloc
    for p in ptrs:
        check(cu.cuMemFree_v2(p), "cuMemFree_v2")
    results[i] = len(ptrs)


def run_threads():
    results = [0] * 4
    ts = [threading.Thread(target=thread_alloc, args=(results, i)) for i in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    return sum(results)


def at_exit():
    alloc_buffer(MiB)  # SITE:at_exit


def spin():
    check(cu.cuCtxSetCurrent(ctx), "cuCtxSetCurrent")
    while True:
        check(cu.cuMemFree_v2(alloc_buffer(4096)), "cuMemFree_v2")


def exiting():
    """Exits while a daemon thread allocates and with an atexit handler that allocates: calls
    while the interpreter shuts down must neither crash nor hang."""
    import atexit
    atexit.register(at_exit)
    threading.Thread(target=spin, daemon=True).start()
    alloc_buffer(MiB)  # SITE:exiting


def main():
    setup()
    if mode in ("exit", "exit_cdll"):
        exiting()
        print("exit ok")
    elif mode == "threads":
        print("threads", run_threads())  # SITE:main_threads
    else:
        train_step()  # SITE:main_train
        print("ok", mode)


main()  # SITE:module
