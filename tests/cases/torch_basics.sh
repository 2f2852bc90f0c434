# The real PyTorch on the simulated runtime (native allocator): is_available, properties, streams
# with priorities, events, a thread that never set the device, elementwise ops, reductions,
# autograd and AdamW; every figure checked inside basics.py against PyTorch's own accounting.
. "$SRC/tests/lib.sh"
. "$SRC/tests/torch/env.sh"
GTSIM_LOG="$PWD/sim.log" torch_run "$TORCH_PY" "$SRC/tests/torch/basics.py" > out.txt 2>&1 || { cat out.txt; fail "basics.py"; }
cat out.txt
grep -q '^basics: ok backend=native ' out.txt || fail "no success line"
# every driver call came through the resolver, from the simulated runtime or torch (its driver API)
grep -q '^getproc2 cuMemAlloc 13000 0 -> cuMemAlloc_v2 status=0 rc=0 caller=.*simrt/libcudart.so.13' sim.log ||
    fail "the runtime did not resolve cuMemAlloc through cuGetProcAddress_v2"
grep -q '^getproc2 cuLaunchKernel 13000 2 -> cuLaunchKernel_ptsz' sim.log || fail "no per-thread launch entry point"
! grep '^rtstub ' sim.log | grep . || fail "the workload reached unimplemented runtime calls"
