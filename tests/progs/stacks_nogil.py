"""Device memory and launches from known Python functions at known lines (each marked SITE:name)
through ctypes.CDLL, which releases the GIL around every foreign call (as PyTorch and CuPy do
around CUDA calls), for tests/cases/stacks_nogil.sh. Argument 1: "cdll" (every call through CDLL)
or "check" (one allocation through ctypes.PyDLL first, the GIL held: the tracer's self-check).
build() allocates: 1 MiB in Model.forward; 2 MiB twice in the generator gen_buffers, consumed by a
list comprehension; 3 MiB twice in comp_alloc, called from a list comprehension; 5 MiB twice in
genexpr_alloc, called from a generator expression; launch() launches 'nogil_kernel' 3 times.
Then 4 threads each allocate 7 MiB 3 times in thread_alloc (called from worker), and a native
thread that never ran Python allocates 13 MiB (tests/libs/pythread.c, argument 2: its path),
and the coroutine coro_alloc, awaited by amain under asyncio.run, 17 MiB.
"check" first allocates 4 KiB in warm() through PyDLL.
"shutdown": warm(), then 4 daemon threads call pythread_spin (tests/libs/pythread.c) through CDLL:
each allocates 1 MiB once, then, once the atexit handler phase_one has set the phase, 3 MiB in a
loop that outlives the interpreter; phase_one itself allocates 5 MiB."""
import asyncio
import atexit
import ctypes
import sys
import threading
import time

mode = sys.argv[1] if len(sys.argv) > 1 else "cdll"
cu = ctypes.CDLL("libcuda.so.1")
MiB = 1 << 20
BASE = atexit._ncallbacks()


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


def warm():
    held = ctypes.PyDLL("libcuda.so.1")
    p = ctypes.c_uint64()
    check(held.cuMemAlloc_v2(ctypes.byref(p), ctypes.c_size_t(4096)), "alloc")  # SITE:warm


class Model:
    def forward(self, n):
        p = ctypes.c_uint64()
        check(cu.cuMemAlloc_v2(ctypes.byref(p), ctypes.c_size_t(n)), "alloc")  # SITE:forward
        return p


def gen_buffers(n, count):
    for _ in range(count):
        p = ctypes.c_uint64()
        check(cu.cuMemAlloc_v2(ctypes.byref(p), ctypes.c_size_t(n)), "alloc")  # SITE:gen_buffers
        yield p


def comp_alloc(n):
    p = ctypes.c_uint64()
    check(cu.cuMemAlloc_v2(ctypes.byref(p), ctypes.c_size_t(n)), "alloc")  # SITE:comp_alloc
    return p


def genexpr_alloc(n):
    p = ctypes.c_uint64()
    check(cu.cuMemAlloc_v2(ctypes.byref(p), ctypes.c_size_t(n)), "alloc")  # SITE:genexpr_alloc
    return p


def launch(count):
    mod = ctypes.c_void_p()
    check(cu.cuModuleLoadData(ctypes.byref(mod), b"kernel nogil_kernel 1000\n"), "cuModuleLoadData")
    fn = ctypes.c_void_p()
    check(cu.cuModuleGetFunction(ctypes.byref(fn), mod, b"nogil_kernel"), "cuModuleGetFunction")
    one = ctypes.c_uint(1)
    for _ in range(count):
        check(cu.cuLaunchKernel(fn, one, one, one, one, one, one, 0, None, None, None), "launch")  # SITE:launch


def build():
    Model().forward(1 * MiB)  # SITE:build_forward
    bufs = [b for b in gen_buffers(2 * MiB, 2)]  # SITE:build_gen
    ws = [comp_alloc(3 * MiB) for _ in range(2)]  # SITE:build_comp
    gs = list(genexpr_alloc(5 * MiB) for _ in range(2))  # SITE:build_genexpr
    launch(3)  # SITE:build_launch
    return len(bufs) + len(ws) + len(gs)


async def coro_alloc(n):
    p = ctypes.c_uint64()
    check(cu.cuMemAlloc_v2(ctypes.byref(p), ctypes.c_size_t(n)), "alloc")  # SITE:coro_alloc
    return p


async def amain():
    return await coro_alloc(17 * MiB)  # SITE:amain


def thread_alloc(n):
    p = ctypes.c_uint64()
    check(cu.cuMemAlloc_v2(ctypes.byref(p), ctypes.c_size_t(n)), "alloc")  # SITE:thread_alloc
    return p


def worker(results, i):
    check(cu.cuCtxSetCurrent(ctx), "cuCtxSetCurrent")
    results[i] = len([thread_alloc(7 * MiB) for _ in range(3)])  # SITE:worker


def phase_one(phase, counts, threads):
    """Registered before the tracer's atexit guard, so it runs after it: the spinning threads'
    calls from here on must get native frames only; this thread's own still get Python frames."""
    phase.value = 1
    while min(counts[2 * i + 1] for i in range(threads)) < 1:
        time.sleep(0.001)
    p = ctypes.c_uint64()
    check(cu.cuMemAlloc_v2(ctypes.byref(p), ctypes.c_size_t(5 * MiB)), "alloc")  # SITE:phase_one


def spinner(native, phase, counts, i):
    r = native.pythread_spin(ctx, ctypes.byref(phase), ctypes.byref(counts, 8 * i), ctypes.c_size_t(MiB), ctypes.c_size_t(3 * MiB))  # SITE:spinner
    raise SystemExit(f"pythread_spin returned {r}")


def shutdown(threads, phase, counts):
    """4 daemon threads spin in native code (the GIL released) while the interpreter finalizes;
    prints how many atexit callbacks the program did not register (the tracer's guard: 1 when
    traced, registered right after cuInit)."""
    native = ctypes.CDLL(sys.argv[2])
    warm()  # SITE:shutdown_warm
    for i in range(threads):
        threading.Thread(target=spinner, args=(native, phase, counts, i), daemon=True).start()
    while min(counts[2 * i] for i in range(threads)) < 1:
        time.sleep(0.001)
    print("ok shutdown", atexit._ncallbacks() - BASE - 1)


def main():
    if mode == "shutdown":
        # Registered before cuInit, where the tracer asks for its guard: phase_one runs after it.
        phase, counts = ctypes.c_int(0), (ctypes.c_int * 8)()
        atexit.register(phase_one, phase, counts, 4)
    setup()
    if mode == "shutdown":
        return shutdown(4, phase, counts)  # SITE:main_shutdown
    if mode == "check":
        warm()  # SITE:main_warm
    n = build()  # SITE:main_build
    results = [0] * 4
    ts = [threading.Thread(target=worker, args=(results, i)) for i in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    asyncio.run(amain())  # SITE:main_async
    native = ctypes.CDLL(sys.argv[2])
    check(native.pythread_alloc(ctx, ctypes.c_size_t(13 * MiB)), "pythread_alloc")  # SITE:main_native
    print("ok", mode, n, sum(results))


main()  # SITE:module
