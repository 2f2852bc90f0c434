# The simulated runtime called directly (ctypes), as nvcc's generated code and libraries call it:
# fat-binary registration, the three launch paths (cudaLaunchKernel, CUDA 13's __cudaGetKernel +
# __cudaLaunchKernel_ptsz, push/pop configuration), legacy and per-thread streams, a thread that
# never set the device, copies, memsets, the sticky last error, OOM; checked against the GPU work
# the simulated driver logged (names, entry points, streams, durations).
. "$SRC/tests/lib.sh"
rt="$O/simrt/libcudart.so.13"
[ -f "$rt" ] || fail "$rt missing"
# an instrumented build needs its sanitizer runtime first in a python process
san_pre=""; [ -z "$asan_rt$tsan_rt" ] || san_pre=$(echo $asan_rt $tsan_rt "$rt")
LD_PRELOAD="$san_pre" GTSIM_LOG="$PWD/sim.log" GTSIM_MEM_BYTES=1073741824 untraced "$PYTHON" "$SRC/tests/progs/simrt_check.py" "$rt" "$PWD/sim.log" \
    > out.txt 2>&1 || { cat out.txt; fail "simrt_check.py"; }
cat out.txt
tail -n 1 out.txt | grep -q '^simrt: ok' || fail "no success line"
# every driver function the runtime used came from cuGetProcAddress_v2, called from the runtime
grep -q "^getproc2 cuLaunchKernel 13000 2 -> cuLaunchKernel_ptsz status=0 rc=0 caller=$rt" sim.log || fail "per-thread lookup"
! grep '^stub ' sim.log | grep . || fail "the runtime reached driver stubs"
# no device, and a driver older than the runtime: cudaGetDeviceCount says so, count 0
count() { LD_PRELOAD="$san_pre" untraced "$PYTHON" -c "
import ctypes, sys
rt = ctypes.CDLL(sys.argv[1]); n = ctypes.c_int(7)
print(rt.cudaGetDeviceCount(ctypes.byref(n)), n.value, rt.cudaGetLastError())" "$rt"; }
expect_eq "GTSIM_DEVICES=0" "$(GTSIM_DEVICES=0 count)" "100 0 100"
expect_eq "GTSIM_DRIVER_VERSION=12080" "$(GTSIM_DRIVER_VERSION=12080 count)" "35 0 35"
