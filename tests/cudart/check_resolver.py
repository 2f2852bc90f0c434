"""Check that every driver entry point libcudart resolved went through the shim, and that each
traced family was answered with the wrapper of exactly the variant the driver handed out.

usage: check_resolver.py SIM_LOG DUMP
  SIM_LOG  the simulated driver's GTSIM_LOG (one 'getproc' line per resolver call, with caller)
  DUMP     gputrace-report --dump of the trace of the same run
"""
import os
import re
import shlex
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
api_h = open(os.path.join(ROOT, "include/gputrace/trace_api.h")).read()
TRACED = set(re.findall(r'X\(\d+, \w+, "(\w+)"', api_h))

sim_log, dump = sys.argv[1], sys.argv[2]
driver = []  # (symbol, version, flags, export) as the driver answered, in call order
for line in open(sim_log):
    if not line.startswith("getproc"):
        continue
    f = shlex.split(line)
    sym = f[1]
    export = f[5]
    caller = f[-1].split("=", 1)[1]
    if not caller.endswith("libgputrace.so"):
        sys.exit(f"lookup of {sym}@{f[2]} reached the driver from {caller}, bypassing the shim")
    driver.append((sym, int(f[2]), int(f[3], 0), export))

shim = []  # (symbol, version, flags, api) as the shim recorded, in time order
dlsym_wrapped = []
for line in open(dump):
    m = re.search(r" RESOLVE (\S+) name=(\"(?:[^\"\\]|\\.)*\") version=(-?\d+) flags=(\S+) api=(\S+)", line)
    if not m:
        continue
    how, name, ver, flags, api = m.groups()
    name = shlex.split(name)[0] if name != '""' else ""
    if how == "dlsym":
        if api != "0":
            dlsym_wrapped.append(name)
        continue
    shim.append((name, int(ver), int(flags, 0), api))

if dlsym_wrapped != ["cuGetProcAddress_v2"]:
    sys.exit(f"expected exactly one dlsym, of cuGetProcAddress_v2, answered by the shim; got {dlsym_wrapped}")
if len(driver) != len(shim):
    sys.exit(f"driver saw {len(driver)} resolver calls, the trace records {len(shim)}")
wrapped = {}
for (sym, ver, flags, export), (s2, v2, f2, api) in zip(driver, shim):
    if (sym, ver, flags) != (s2, v2, f2):
        sys.exit(f"order mismatch: driver {sym}@{ver}/{flags} vs trace {s2}@{v2}/{f2}")
    want = export if export in TRACED else "0"
    if api != want:
        sys.exit(f"{sym}@{ver} flags={flags}: driver returned {export}, shim handed out {api}, want {want}")
    if api != "0":
        wrapped[api] = wrapped.get(api, 0) + 1
must = ["cuInit", "cuGetProcAddress_v2", "cuMemAlloc_v2", "cuMemFree_v2", "cuLaunchKernel",
        "cuLaunchKernel_ptsz", "cuLaunchKernelEx", "cuLaunchKernelEx_ptsz", "cuMemAllocAsync",
        "cuMemAllocAsync_ptsz", "cuMemFreeAsync", "cuGraphLaunch", "cuGraphLaunch_ptsz",
        "cuStreamSynchronize", "cuStreamSynchronize_ptsz", "cuCtxSynchronize",
        "cuMemcpyHtoD_v2", "cuMemcpyHtoD_v2_ptds", "cuMemHostAlloc",
        "cuMemcpyAsync", "cuMemcpyAsync_ptsz", "cuMemcpyHtoDAsync_v2", "cuMemcpyHtoDAsync_v2_ptsz",
        "cuMemcpy3DAsync_v2", "cuMemcpyPeerAsync_ptsz", "cuMemsetD8Async", "cuMemsetD2D8Async_ptsz"]
missing = [m for m in must if m not in wrapped]
if missing:
    sys.exit(f"cudart resolved these families but never got our wrapper: {missing}")
print(f"{len(driver)} lookups, all through the shim; {sum(wrapped.values())} answered with "
      f"{len(wrapped)} distinct wrappers of the exact variant; the rest passed through")
