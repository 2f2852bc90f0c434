"""Drives the simulated runtime (tests/simrt) directly through ctypes, the way nvcc-generated code
and libraries call it, and checks the GPU work the simulated driver logged (GTSIM_LOG `work`
lines: its ground truth). Usage: simrt_check.py LIBCUDART SIM_LOG"""
import ctypes
import sys
import threading

rt = ctypes.CDLL(sys.argv[1])
log_path = sys.argv[2]


class dim3(ctypes.Structure):
    _fields_ = [('x', ctypes.c_uint), ('y', ctypes.c_uint), ('z', ctypes.c_uint)]


def check(cond, what):
    if not cond:
        sys.exit('simrt_check: FAIL: ' + what)


def ok(rc, what):
    check(rc == 0, '%s returned %d' % (what, rc))


def work():
    return [dict(f.split('=', 1) for f in l.split()[1:] if '=' in f)
            for l in open(log_path) if l.startswith('work ')]


n = ctypes.c_int()
ok(rt.cudaGetDeviceCount(ctypes.byref(n)), 'cudaGetDeviceCount')
check(n.value == 1, 'devices %d' % n.value)

# Registration as nvcc's module constructor does it; the "host stub" is any address.
stub = ctypes.create_string_buffer(8)
stub2 = ctypes.create_string_buffer(8)
rt.__cudaRegisterFatBinary.restype = ctypes.c_void_p
h = ctypes.c_void_p(rt.__cudaRegisterFatBinary(ctypes.c_void_p(0x1234)))
rt.__cudaRegisterFunction(h, stub, b'_Z6squarePfi', b'_Z6squarePfi', -1, None, None, None, None, None)
rt.__cudaRegisterFunction(h, stub2, b'_Z4axpyfPfS_', b'_Z4axpyfPfS_', -1, None, None, None, None, None)
rt.__cudaRegisterFatBinaryEnd(h)

ptr = ctypes.c_void_p()
ok(rt.cudaMalloc(ctypes.byref(ptr), ctypes.c_size_t(1 << 20)), 'cudaMalloc')
arg = ctypes.c_void_p(ptr.value)
args = (ctypes.c_void_p * 1)(ctypes.cast(ctypes.byref(arg), ctypes.c_void_p))
# 1. cudaLaunchKernel on the legacy stream: 4096 blocks x 256 threads -> 2 us + 4096 ns
ok(rt.cudaLaunchKernel(stub, dim3(4096, 1, 1), dim3(256, 1, 1), args, ctypes.c_size_t(0), None), 'cudaLaunchKernel')
# 2. CUDA 13 stubs: __cudaGetKernel once, then __cudaLaunchKernel_ptsz on the per-thread stream
k = ctypes.c_void_p()
ok(rt.__cudaGetKernel(ctypes.byref(k), stub2), '__cudaGetKernel')
ok(rt.__cudaLaunchKernel_ptsz(k, dim3(1, 1, 1), dim3(32, 1, 1), args, ctypes.c_size_t(0), None),
   '__cudaLaunchKernel_ptsz')
# 3. <<<>>> of older compilers: push the configuration, the stub pops it and launches
ok(rt.__cudaPushCallConfiguration(dim3(2, 1, 1), dim3(64, 1, 1), ctypes.c_size_t(0), None), 'push')
g, b, sm, st = dim3(), dim3(), ctypes.c_size_t(), ctypes.c_void_p()
ok(rt.__cudaPopCallConfiguration(ctypes.byref(g), ctypes.byref(b), ctypes.byref(sm), ctypes.byref(st)), 'pop')
check((g.x, b.x) == (2, 64), 'popped configuration %d %d' % (g.x, b.x))
check(rt.__cudaPopCallConfiguration(ctypes.byref(g), ctypes.byref(b), ctypes.byref(sm), ctypes.byref(st)) == 52,
      'pop of an empty stack is not cudaErrorMissingConfiguration')
# 4. copies and memsets, legacy and per-thread
host = ctypes.create_string_buffer(1 << 20)
ok(rt.cudaMemcpyAsync_ptsz(ptr, host, ctypes.c_size_t(4096), 1, None), 'cudaMemcpyAsync_ptsz H2D')
ok(rt.cudaMemcpy(host, ptr, ctypes.c_size_t(8192), 4), 'cudaMemcpy default (D2H)')
ok(rt.cudaMemset(ptr, 0, ctypes.c_size_t(1 << 20)), 'cudaMemset')
# 5. a thread that never called cudaSetDevice launches on its per-thread stream and synchronizes
res = []
t = threading.Thread(target=lambda: res.append(
    (rt.cudaLaunchKernel_ptsz(stub, dim3(1, 1, 1), dim3(1, 1, 1), args, ctypes.c_size_t(0), None),
     rt.cudaStreamSynchronize(ctypes.c_void_p(2)))))  # cudaStreamPerThread
t.start()
t.join()
check(res == [(0, 0)], 'launch from a new thread: %r' % res)
ok(rt.cudaDeviceSynchronize(), 'cudaDeviceSynchronize')
# 6. errors: an unknown host stub; the sticky last error; an unimplemented call
check(rt.cudaLaunchKernel(host, dim3(1, 1, 1), dim3(1, 1, 1), args, ctypes.c_size_t(0), None) == 98,
      'unknown function is not cudaErrorInvalidDeviceFunction')
check(rt.cudaPeekAtLastError() == 98 and rt.cudaGetLastError() == 98 and rt.cudaGetLastError() == 0,
      'last error not kept then cleared')
big = ctypes.c_void_p()
check(rt.cudaMalloc(ctypes.byref(big), ctypes.c_size_t(1 << 40)) == 2 and big.value is None, 'OOM not cudaErrorMemoryAllocation')
check(rt.cudaGetLastError() == 2, 'OOM not the last error')
rt.cudaGetErrorString.restype = ctypes.c_char_p
check(rt.cudaGetErrorString(2) == b'out of memory', 'error string')
free, total = ctypes.c_size_t(), ctypes.c_size_t()
ok(rt.cudaMemGetInfo(ctypes.byref(free), ctypes.byref(total)), 'cudaMemGetInfo')
check(total.value - free.value == 1 << 20, 'used %d' % (total.value - free.value))
# 7. pointer attributes (device, pinned host, pageable host), occupancy, function attributes
class PtrAttr(ctypes.Structure):
    _fields_ = [('type', ctypes.c_int), ('device', ctypes.c_int), ('dev', ctypes.c_void_p),
                ('host', ctypes.c_void_p), ('pad', ctypes.c_char * 64)]


def attrs(p):
    a = PtrAttr()
    ok(rt.cudaPointerGetAttributes(ctypes.byref(a), p), 'cudaPointerGetAttributes')
    return a.type, a.device, a.dev, a.host


pinned = ctypes.c_void_p()
ok(rt.cudaMallocHost(ctypes.byref(pinned), ctypes.c_size_t(4096)), 'cudaMallocHost')
check(attrs(ptr) == (2, 0, ptr.value, None), 'device pointer attributes %r' % (attrs(ptr),))
check(attrs(pinned)[:2] == (1, 0) and attrs(pinned)[3] == pinned.value, 'pinned attributes %r' % (attrs(pinned),))
check(attrs(host)[0] == 0, 'pageable memory is not cudaMemoryTypeUnregistered: %r' % (attrs(host),))
ok(rt.cudaFreeHost(pinned), 'cudaFreeHost')
blocks = ctypes.c_int()
ok(rt.cudaOccupancyMaxActiveBlocksPerMultiprocessor(ctypes.byref(blocks), stub, 256, ctypes.c_size_t(0)), 'occupancy')
check(blocks.value == 8, 'occupancy at 256 threads %d (2048 threads per SM)' % blocks.value)
check(rt.cudaOccupancyMaxActiveBlocksPerMultiprocessor(ctypes.byref(blocks), host, 256, ctypes.c_size_t(0)) == 98,
      'occupancy of an unknown function')
rt.cudaGetLastError()
ok(rt.cudaFree(ptr), 'cudaFree')

w = work()
kern = [x for x in w if x['kind'] == '1']
check([(x['name'], x['api']) for x in kern] ==
      [('_Z6squarePfi', 'cuLaunchKernel'), ('_Z4axpyfPfS_', 'cuLaunchKernel_ptsz'), ('_Z6squarePfi', 'cuLaunchKernel_ptsz')],
      'kernels %r' % [(x['name'], x['api']) for x in kern])
d = [int(x['end']) - int(x['start']) for x in kern]
check(d == [2000 + 4096 * 256 // 256, 2000, 2000], 'durations %r' % d)
check(kern[1]['stream'] != kern[0]['stream'], 'the per-thread launch ran on the legacy stream')
check(len({kern[0]['stream'], kern[1]['stream'], kern[2]['stream']}) == 3,
      "the new thread's launch is not on its own per-thread stream")
copies = [(x['kind'], x['api']) for x in w if x['kind'] != '1']
check(copies == [('2', 'cuMemcpyHtoDAsync_v2_ptsz'), ('2', 'cuMemcpyDtoH_v2'), ('3', 'cuMemsetD8_v2')],
      'copies %r' % copies)
print('simrt: ok, %d kernels, %d copies/memsets, durations %r' % (len(kern), len(copies), d))
