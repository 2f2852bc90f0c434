"""One timed PyTorch workload on the current CUDA device, for bench/torch_overhead.sh (issue 23).
Usage: torch_overhead.py WORKLOAD N [TRACER]
  WORKLOAD  launch: N launch-bound elementwise ops (y = x + 1 on 1,024 floats), ns per op
            alloc:  N torch.empty(4096 bytes) + del pairs (the caching allocator's fast path),
                    ns per allocation
            step:   N steps of a small 3-layer elementwise model (scale + shift + ReLU, 256 wide, batch
                    32, MSE loss) with autograd and AdamW, ns per step
  TRACER    none (default); profiler: torch.profiler with CPU + CUDA activities around the timed
            loop; profiler-stack: the same with with_stack=True; history: PyTorch's
            torch.cuda.memory._record_memory_history(max_entries=100000) alone (its documented call)
A warm-up runs before the timed loop (and inside the profiler, so its start-up is not timed);
torch.cuda.synchronize() closes the timed interval. Prints "ns_per_unit=X" (wall time),
"cpu_ns_per_unit=X" (the CPU time of all the process's threads over the same interval: a tracer's
own threads count, the machine's other load does not) and "units=N". TORCH_BENCH_SETTLE_S=S: sleep
S seconds between the warm-up and the timed loop, then launch one kernel."""
import os
import sys
import time

import torch

workload, n = sys.argv[1], int(sys.argv[2])
tracer = sys.argv[3] if len(sys.argv) > 3 else "none"
dev = "cuda"


def make_launch():
    x = torch.ones(1024, device=dev)

    def body(k):
        for _ in range(k):
            x.add(1)  # one elementwise kernel launch, result dropped (a cached block)

    return body


def make_alloc():
    def body(k):
        for _ in range(k):
            t = torch.empty(4096, dtype=torch.uint8, device=dev)
            del t

    return body


def make_step():
    # elementwise layers only: the simulated runtime has no cuBLAS (cublasCreate fails), and a
    # launch-bound step is what the issue is about
    torch.manual_seed(0)
    params = [torch.nn.Parameter(torch.randn(256, device=dev)) for _ in range(6)]
    opt = torch.optim.AdamW(params, lr=1e-3)
    inp = torch.randn(32, 256, device=dev)
    target = torch.randn(32, 256, device=dev)

    def body(k):
        for _ in range(k):
            opt.zero_grad(set_to_none=True)
            h = inp
            for i in range(0, len(params), 2):
                h = torch.relu(h * params[i] + params[i + 1])
            loss = (h - target).pow(2).mean()
            loss.backward()
            opt.step()

    return body


body = {"launch": make_launch, "alloc": make_alloc, "step": make_step}[workload]()
warm = max(n // 10, 20)


settle = float(os.environ.get("TORCH_BENCH_SETTLE_S", "0"))


def timed():
    body(warm)
    if settle:
        # (bench/torch_instr.sh) let what a tracer does once after its start, such as gputrace's
        # first periodic sample of the bridge, happen before the loop: under callgrind the
        # warm-up is over before a tracer thread's first 100 ms round. The sample is asked for in
        # the next launch or allocation (a kernel's launch here) and runs at the next bytecode
        time.sleep(settle)
        torch.empty(8, device="cuda").add_(1)
    torch.cuda.synchronize()
    c0, t0 = time.process_time_ns(), time.perf_counter_ns()
    body(n)
    torch.cuda.synchronize()
    t1, c1 = time.perf_counter_ns(), time.process_time_ns()
    return t1 - t0, c1 - c0


if tracer == "history":
    torch.cuda.memory._record_memory_history(max_entries=100000)
if tracer in ("profiler", "profiler-stack"):
    from torch.profiler import ProfilerActivity, profile
    acts = [ProfilerActivity.CPU, ProfilerActivity.CUDA]
    with profile(activities=acts, with_stack=(tracer == "profiler-stack")) as prof:
        ns, cpu = timed()
    # what the user gets: the GPU side must be there, else the figure is not torch.profiler's
    gpu = sum(1 for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA)
    print("gpu_events=%d" % gpu)
elif tracer in ("none", "history"):
    ns, cpu = timed()
else:
    sys.exit("torch_overhead.py: unknown tracer %r" % tracer)
print("ns_per_unit=%.1f" % (ns / n))
print("cpu_ns_per_unit=%.1f" % (cpu / n))
print("units=%d" % n)
