"""Another CUPTI Activity API client in the traced process, as torch.profiler's Kineto is one: it
finds cuptiActivityRegisterCallbacks through the dynamic linker (RTLD_DEFAULT, as a library linked
against libcupti does), registers its buffer callbacks, enables CONCURRENT_KERNEL and counts the
kernel records it receives after a forced flush.
Usage: cupti_client.py early|late
  early: the client starts before the program's first cuInit; 5 launches; prints "kernels=N"
  late:  2 launches first (the traced process's CUPTI set-up at cuInit sees them), then the client
         starts; 5 launches; prints "kernels=N" (the client's) """
import ctypes
import sys

mode = sys.argv[1]
cupti = ctypes.CDLL("libcupti.so.13", mode=ctypes.RTLD_GLOBAL)
default = ctypes.CDLL(None)  # dlsym(RTLD_DEFAULT, ...): what a linked library binds to
cu = ctypes.CDLL("libcuda.so.1")

REQ = ctypes.CFUNCTYPE(None, ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(ctypes.c_size_t),
                       ctypes.POINTER(ctypes.c_size_t))
DONE = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_uint32, ctypes.c_void_p, ctypes.c_size_t,
                        ctypes.c_size_t)
KIND_CONCURRENT_KERNEL = 10
buffers = {}
kernels = 0


def check(r, what):
    if r != 0:
        sys.exit(f"{what} returned {r}")


@REQ
def requested(buf, size, maxrec):
    # not zeroed: CUPTI zeroes a client's buffers by default (CUPTI_ACTIVITY_ATTR_ZEROED_OUT_
    # ACTIVITY_BUFFER 0), so gputrace, which sets it for its own, must set it back when this
    # client takes over (the simulated CUPTI aborts on a dirty buffer handed as zeroed)
    b = ctypes.create_string_buffer(b"\xa5" * (1 << 16), 1 << 16)
    addr = ctypes.addressof(b)
    buffers[addr] = b
    buf[0], size[0], maxrec[0] = addr, len(b), 0


@DONE
def completed(ctx, stream, buf, size, valid):
    global kernels
    if buf not in buffers:
        sys.exit("completion of a buffer this client never gave")
    rec = ctypes.c_void_p()
    while cupti.cuptiActivityGetNextRecord(ctypes.c_void_p(buf), ctypes.c_size_t(valid),
                                           ctypes.byref(rec)) == 0:
        if ctypes.c_uint32.from_address(rec.value).value == KIND_CONCURRENT_KERNEL:
            kernels += 1
    del buffers[buf]


def start_client():
    check(default.cuptiActivityRegisterCallbacks(requested, completed), "cuptiActivityRegisterCallbacks")
    check(cupti.cuptiActivityEnable(KIND_CONCURRENT_KERNEL), "cuptiActivityEnable")


def launches(fn, n):
    one = ctypes.c_uint(1)
    for _ in range(n):
        check(cu.cuLaunchKernel(fn, one, one, one, one, one, one, ctypes.c_uint(0), None, None, None),
              "cuLaunchKernel")
    check(cu.cuCtxSynchronize(), "cuCtxSynchronize")


if mode == "early":
    start_client()
check(cu.cuInit(0), "cuInit")
dev = ctypes.c_int()
check(cu.cuDeviceGet(ctypes.byref(dev), 0), "cuDeviceGet")
ctx = ctypes.c_void_p()
check(cu.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev), "cuDevicePrimaryCtxRetain")
check(cu.cuCtxSetCurrent(ctx), "cuCtxSetCurrent")
mod = ctypes.c_void_p()
check(cu.cuModuleLoadData(ctypes.byref(mod), b"kernel client_kernel 1000\n"), "cuModuleLoadData")
fn = ctypes.c_void_p()
check(cu.cuModuleGetFunction(ctypes.byref(fn), mod, b"client_kernel"), "cuModuleGetFunction")
if mode == "late":
    launches(fn, 2)
    start_client()
launches(fn, 5)
check(cupti.cuptiActivityFlushAll(1), "cuptiActivityFlushAll")
print(f"kernels={kernels}")
