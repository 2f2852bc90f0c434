# The real PyTorch on the simulated runtime under each allocator backend (native, expandable
# segments, cudaMallocAsync): is_available, properties, streams with priorities, events, a thread
# that never set the device, elementwise ops, reductions, autograd and AdamW; every figure checked
# inside basics.py against PyTorch's own accounting.
. "$SRC/tests/lib.sh"
. "$SRC/tests/torch/env.sh"
for conf in "" expandable_segments:True backend:cudaMallocAsync; do
    rm -f sim.log
    PYTORCH_CUDA_ALLOC_CONF=$conf GTSIM_LOG="$PWD/sim.log" torch_run "$TORCH_PY" "$SRC/tests/torch/basics.py" > out.txt 2>&1 ||
        { cat out.txt; fail "basics.py (PYTORCH_CUDA_ALLOC_CONF=$conf)"; }
    echo "PYTORCH_CUDA_ALLOC_CONF=$conf: $(cat out.txt)"
    case $conf in backend:cudaMallocAsync) want=cudaMallocAsync ;; *) want=native ;; esac
    grep -q "^basics: ok backend=$want " out.txt || fail "$conf: no success line"
    ! grep -v '^basics: ok' out.txt | grep . || fail "$conf: unexpected output (warnings?)"
    # the runtime reached the driver through its resolver
    grep -q '^getproc2 cuMemAlloc 13000 0 -> cuMemAlloc_v2 status=0 rc=0 caller=.*simrt/libcudart.so.13' sim.log ||
        fail "$conf: the runtime did not resolve cuMemAlloc through cuGetProcAddress_v2"
    ! grep '^rtstub ' sim.log | grep . || fail "$conf: the workload reached unimplemented runtime calls"
    if [ "$conf" = expandable_segments:True ]; then # torch's VMM calls, via cudaGetDriverEntryPointByVersion
        grep -q '^getproc2 cuMemAddressReserve .* status=0 rc=0 caller=.*simrt/libcudart.so.13' sim.log ||
            fail "expandable segments: no cuMemAddressReserve lookup"
        grep -q '^getproc2 cuMemMap .* status=0 rc=0 caller=.*simrt/libcudart.so.13' sim.log || fail "expandable segments: no cuMemMap lookup"
    fi
done
# the backends really ran: VMM calls from torch's driver API, pool calls from the runtime
grep -q '^getproc2 cuMemAllocAsync 13000 0 -> cuMemAllocAsync ' sim.log || fail "cudaMallocAsync: no pool allocation entry point"
# no device: torch says so instead of failing
expect_eq "is_available with GTSIM_DEVICES=0" \
    "$(GTSIM_DEVICES=0 torch_run "$TORCH_PY" -c 'import torch; print(torch.cuda.is_available(), torch.cuda.device_count())' 2>&1)" \
    "False 0"
