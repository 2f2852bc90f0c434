"""torch.profiler with CUDA activities on the simulated stack: a few elementwise ops inside the
profiled window, exported as Chrome trace JSON.

Usage: python profiler_gpu.py EXPORT.json N
Prints one line per kernel event of the export, "corr demangled-name", sorted by correlation id,
then "profiler_gpu: ok kernels=K driver=D linked=L ordered=O" where D counts the export's
cuda_driver launch events, L the kernels whose correlation id has such a launch event and whose
External id is one of an aten op's, O the kernels that start after their launch event. tests/cases/torch_profiler_gpu.sh checks them against the simulated driver's
work log."""
import json
import sys

import torch
from torch.profiler import ProfilerActivity, profile

out, n = sys.argv[1], int(sys.argv[2])
x = torch.ones(1024, device="cuda")
torch.cuda.synchronize()
print("window-start", flush=True)
with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
    for _ in range(n):
        y = x * 2 + 1
    torch.cuda.synchronize()
prof.export_chrome_trace(out)
ev = json.load(open(out))["traceEvents"]
kernels = [e for e in ev if e.get("cat") == "kernel"]
driver = {e["args"]["correlation"]: e for e in ev
          if e.get("cat") == "cuda_driver" and e["name"].startswith("cuLaunchKernel")}
ops = {e["args"]["External id"] for e in ev
       if e.get("cat") == "cpu_op" and e["name"].startswith("aten::") and "External id" in e.get("args", {})}
linked = sum(1 for k in kernels
             if k["args"]["correlation"] in driver and k["args"].get("External id") in ops)
# on one clock: a kernel starts after its launch began (Kineto's TSC clock and CUPTI's GPU times)
ordered = sum(1 for k in kernels
              if k["args"]["correlation"] in driver and k["ts"] >= driver[k["args"]["correlation"]]["ts"])
for k in sorted(kernels, key=lambda k: k["args"]["correlation"]):
    print(k["args"]["correlation"], k["name"])
print(f"profiler_gpu: ok kernels={len(kernels)} driver={len(driver)} linked={linked} ordered={ordered}")
