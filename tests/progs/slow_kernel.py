"""One kernel, launched and waited for again and again for argument-1 seconds, for
tests/cases/nvml_slow_kernel.sh: on the simulated stack its duration follows the simulated NVML's
SM clock (tests/simnvml's schedule, told to the simulated driver), so the runs made while the
clock is held down take longer. Prints the launches made."""
import ctypes
import sys
import time

from simcuda import check, driver

cu, ctx = driver(gil=False)
mod, fn = ctypes.c_void_p(), ctypes.c_void_p()
check(cu.cuModuleLoadData(ctypes.byref(mod), b"kernel gemm_tile\n"), "cuModuleLoadData")
check(cu.cuModuleGetFunction(ctypes.byref(fn), mod, b"gemm_tile"), "cuModuleGetFunction")
one = ctypes.c_uint(1)
end = time.monotonic() + float(sys.argv[1])
n = 0
while time.monotonic() < end:
    check(cu.cuLaunchKernel(fn, 1, 1, 1, 1, 1, 1, 0, None, None, None), "cuLaunchKernel")
    check(cu.cuCtxSynchronize(), "cuCtxSynchronize")
    n += 1
print("launches", n)
