"""Drives the simulated NVML next to the simulated driver (tests/cases/simnvml.sh): devices as the
driver describes them, memory as the driver accounts it, processes, the fabric answer PyTorch
needs, and a schedule of clocks/temperature/power/clock-event reasons over time."""
import ctypes
import sys
import time

nvml = ctypes.CDLL('libnvidia-ml.so.1')
cuda = ctypes.CDLL('libcuda.so.1')
MiB = 1 << 20


def check(cond, what):
    if not cond:
        sys.exit('simnvml_check: FAIL: ' + what)


def ok(rc, what):
    check(rc == 0, '%s returned %d' % (what, rc))


dev = ctypes.c_void_p()
check(nvml.nvmlDeviceGetHandleByIndex_v2(0, ctypes.byref(dev)) == 1, 'call before nvmlInit is not UNINITIALIZED')
ok(nvml.nvmlInit_v2(), 'nvmlInit_v2')
n = ctypes.c_uint()
ok(nvml.nvmlDeviceGetCount_v2(ctypes.byref(n)), 'count')
check(n.value == 2, 'device count %d, GTSIM_DEVICES=2' % n.value)
ok(nvml.nvmlDeviceGetHandleByIndex_v2(1, ctypes.byref(dev)), 'handle by index')
name = ctypes.create_string_buffer(96)
ok(nvml.nvmlDeviceGetName(dev, name, 96), 'name')
check(name.value == b'gputrace simulated GPU', 'name %r' % name.value)
# UUID and PCI id: the driver's, by which a device is found again
uuid = ctypes.create_string_buffer(96)
ok(nvml.nvmlDeviceGetUUID(dev, uuid, 96), 'uuid')
raw = (ctypes.c_char * 16)()
ok(cuda.cuInit(0), 'cuInit')
ok(cuda.cuDeviceGetUuid_v2(raw, 1), 'cuDeviceGetUuid_v2')
hexs = bytes(raw).hex()
want = 'GPU-%s-%s-%s-%s-%s' % (hexs[:8], hexs[8:12], hexs[12:16], hexs[16:20], hexs[20:])
check(uuid.value.decode() == want, 'uuid %r, driver says %r' % (uuid.value, want))
pci = ctypes.create_string_buffer(32)
ok(cuda.cuDeviceGetPCIBusId(pci, 32, 1), 'cuDeviceGetPCIBusId')
d2 = ctypes.c_void_p()
ok(nvml.nvmlDeviceGetHandleByPciBusId_v2(pci.value, ctypes.byref(d2)), 'by PCI id ' + pci.value.decode())
check(d2.value == dev.value, 'PCI lookup found another device')
ok(nvml.nvmlDeviceGetHandleByUUID(uuid.value, ctypes.byref(d2)), 'by UUID')
check(d2.value == dev.value, 'UUID lookup found another device')
check(nvml.nvmlDeviceGetHandleByPciBusId_v2(b'0000:77:00.0', ctypes.byref(d2)) == 6, 'unknown PCI id not NOT_FOUND')


class Mem(ctypes.Structure):
    _fields_ = [('total', ctypes.c_ulonglong), ('free', ctypes.c_ulonglong), ('used', ctypes.c_ulonglong)]


class Proc(ctypes.Structure):  # nvmlProcessInfo_t (v2 layout, used by _v3)
    _fields_ = [('pid', ctypes.c_uint), ('used', ctypes.c_ulonglong), ('gi', ctypes.c_uint), ('ci', ctypes.c_uint)]


def meminfo(d):
    m = Mem()
    ok(nvml.nvmlDeviceGetMemoryInfo(d, ctypes.byref(m)), 'memory info')
    return m.total, m.free, m.used


total, free0, used0 = meminfo(dev)
check(total == 1 << 30 and used0 == 100 * MiB and free0 == total - used0,
      'memory before: %d %d %d (1 GiB, 100 MiB held by others)' % (total, free0, used0))
ctx = ctypes.c_void_p()
ok(cuda.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), 1), 'retain')
ok(cuda.cuCtxSetCurrent(ctx), 'set current')
p = ctypes.c_ulonglong()
ok(cuda.cuMemAlloc_v2(ctypes.byref(p), ctypes.c_size_t(30 * MiB)), 'cuMemAlloc')
f, t = ctypes.c_size_t(), ctypes.c_size_t()
ok(cuda.cuMemGetInfo_v2(ctypes.byref(f), ctypes.byref(t)), 'cuMemGetInfo')
total, free1, used1 = meminfo(dev)
check(free1 == f.value and used1 == used0 + 30 * MiB, 'memory after: free %d (driver %d) used %d' % (free1, f.value, used1))
procs = (Proc * 4)()
cnt = ctypes.c_uint(4)
ok(nvml.nvmlDeviceGetComputeRunningProcesses_v3(dev, ctypes.byref(cnt), procs), 'processes')
got = sorted((procs[i].pid, procs[i].used) for i in range(cnt.value))
import os
check(got == sorted([(os.getpid(), 30 * MiB), (4194305, 100 * MiB)]), 'processes %r' % got)
cnt = ctypes.c_uint(0)
check(nvml.nvmlDeviceGetComputeRunningProcesses_v3(dev, ctypes.byref(cnt), None) == 7 and cnt.value == 2,
      'count query not INSUFFICIENT_SIZE with 2')
# Fabric info (v3 struct, version = sizeof | 3 << 24): success, state NOT_SUPPORTED (0)
fab = (ctypes.c_uint * 16)()
fab[0] = 36 | (3 << 24)
ok(nvml.nvmlDeviceGetGpuFabricInfoV(dev, fab), 'fabric info')
check(fab[7] == 0, 'fabric state %d' % fab[7])  # after version, 16-byte uuid, status, cliqueId

# The schedule: 0 ms defaults overridden, at 300 ms a thermal slowdown.
def clocks():
    sm, temp, power, ev = ctypes.c_uint(), ctypes.c_uint(), ctypes.c_uint(), ctypes.c_ulonglong()
    ok(nvml.nvmlDeviceGetClockInfo(dev, 1, ctypes.byref(sm)), 'clock')  # NVML_CLOCK_SM
    ok(nvml.nvmlDeviceGetTemperature(dev, 0, ctypes.byref(temp)), 'temperature')
    ok(nvml.nvmlDeviceGetPowerUsage(dev, ctypes.byref(power)), 'power')
    ok(nvml.nvmlDeviceGetCurrentClocksEventReasons(dev, ctypes.byref(ev)), 'clock events')
    return sm.value, temp.value, power.value, ev.value


a = clocks()
time.sleep(0.4)
b = clocks()
print('before', a, 'after', b)
check(a == (1755, 61, 350000, 0), 'scheduled values at start %r' % (a,))
check(b == (1200, 92, 350000, 0x60), 'scheduled values after 300 ms %r' % (b,))
ok(nvml.nvmlShutdown(), 'shutdown')
check(nvml.nvmlShutdown() == 1, 'second shutdown not UNINITIALIZED')
print('simnvml: ok')
