"""Turns bench/torch_overhead.sh's raw lines into a Markdown section: per workload and variant the
median wall and CPU time per unit over the rounds, the median of the per-round ratios against no tracer (same
round, so the machine's drift between rounds cancels), the median added ns, and the issue 23
targets with their verdicts.
Usage: torch_overhead_report.py RAW OUT ROUNDS SCALE "VARIANTS" """
import os
import platform
import statistics
import subprocess
import sys
import time

raw, out, rounds, scale, variants = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5].split()
rows = [dict(kv.split("=", 1) for kv in line.split()) for line in open(raw) if line.strip()]
WHAT = {
    "none": "no tracer",
    "gputrace": "gputrace, defaults (native + Python stacks, CUPTI)",
    "gputrace-before": "gputrace, defaults, from the build in `TORCH_BENCH_BEFORE` (%s)" % os.environ.get("TORCH_BENCH_BEFORE_WHAT", "before"),
    "gputrace-nostacks": "gputrace, `GPUTRACE_STACKS=none`",
    "gputrace-nocupti": "gputrace, `GPUTRACE_CUPTI=off` (stacks, no GPU timeline)",
    "gputrace-torch-off": "gputrace, `GPUTRACE_TORCH=off`",
    "gputrace-torch-stats": "gputrace, `GPUTRACE_TORCH=stats`",
    "gputrace-torch-snapshots": "gputrace, `GPUTRACE_TORCH=snapshots`",
    "gputrace-torch-history": "gputrace, `GPUTRACE_TORCH=history`",
    "profiler": "torch.profiler, CPU + CUDA activities",
    "profiler-stack": "torch.profiler, CPU + CUDA, `with_stack=True`",
    "history": "`torch.cuda.memory._record_memory_history(max_entries=100000)` alone",
}
UNIT = {"launch": "op (`x.add(1)`)", "alloc": "allocation (`torch.empty(4096)` + `del`)",
        "step": "step (3 elementwise layers, MSE loss, autograd + AdamW)"}
LEN = {"launch": 20000, "alloc": 20000, "step": 300}


def per_round(wl, v, key="ns_per_unit"):
    return {r["round"]: float(r[key]) for r in rows if r["workload"] == wl and r["variant"] == v and key in r}


def stats(wl, v, key="ns_per_unit"):
    base, xs = per_round(wl, "none", key), per_round(wl, v, key)
    common = [k for k in xs if k in base]
    ratio = statistics.median(xs[k] / base[k] for k in common)
    added = statistics.median(xs[k] - base[k] for k in common)
    return statistics.median(xs.values()), ratio, added


def gpu_events(wl, v):
    g = [int(r["gpu_events"]) for r in rows if r["workload"] == wl and r["variant"] == v and "gpu_events" in r]
    return min(g) if g else None


cpu = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name")), "?")
torch_v = subprocess.run([sys.executable, "-c", "import torch; print(torch.__version__)"],
                         capture_output=True, text=True).stdout.strip()
L = ["## PyTorch overhead: gputrace against torch.profiler (issue 23)", "",
     "%s, %s, `nproc` %d, %s, load average %s; torch %s on the simulated stack (tests/simrt, the "
     "simulated driver and CUPTI); %d rounds, variants interleaved in rotating order per workload; "
     "figures are medians over the rounds; \"× none\" is the median of the per-round ratios against "
     "no tracer in the same round, \"added\" the median of the per-round differences." % (
         os.environ.get("TORCH_BENCH_START", "") + time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
         platform.node(), os.cpu_count(), cpu,
         os.environ.get("TORCH_BENCH_START_LOAD", "") + " ".join(open("/proc/loadavg").read().split()[:3]),
         torch_v, rounds), ""]
res = {}
for wl in ("launch", "alloc", "step"):
    if not per_round(wl, "none"):  # an interrupted run: report what is complete
        continue
    whole = bool(per_round(wl, "none", "run_ns"))
    L += ["### per %s, %d per run" % (UNIT[wl], LEN[wl] * scale), "",
          "| variant | wall ns per unit | × none | added ns | CPU ns per unit | × none | added CPU ns |"
          + (" whole run, ms | added per unit, ns |" if whole else ""),
          "|---|---:|---:|---:|---:|---:|---:|" + ("---:|---:|" if whole else "")]
    for v in variants:
        if not per_round(wl, v):
            continue
        med, ratio, added = stats(wl, v)
        cmed, cratio, cadded = stats(wl, v, "cpu_ns_per_unit")
        res[wl, v] = {"wall": (ratio, added), "cpu": (cratio, cadded)}
        g = gpu_events(wl, v)
        note = "" if g is None else " (%d GPU events%s)" % (g, ": GPU trace empty" if g == 0 else "")
        dash = v == "none"
        row = "| %s%s | %.0f | %.3f | %s | %.0f | %.3f | %s |" % (
            WHAT[v], note, med, ratio, "-" if dash else "%+.0f" % added, cmed, cratio,
            "-" if dash else "%+.0f" % cadded)
        if whole and per_round(wl, v, "run_ns"):
            # the process from start to exit; added per unit: the per-round difference against
            # no tracer over the timed loop's units (start-up and warm-up cancel in it)
            rmed, _, radded = stats(wl, v, "run_ns")
            res[wl, v]["run"] = (0, radded / (LEN[wl] * scale))
            row += " %.0f | %s |" % (rmed / 1e6, "-" if dash else "%+.0f" % (radded / (LEN[wl] * scale)))
        L.append(row)
    L.append("")


def verdict(ok):
    return "met" if ok else "**not met**"


L += ["### Targets (issue 23)", "",
      "Judged on the process's CPU time (the machine's other load does not count in it) and, in "
      "brackets, on wall time.", "",
      "| target | measured: CPU (wall) | verdict: CPU (wall) |", "|---|---:|---|"]
for wl, lim in (("launch", 0.03), ("alloc", 0.05)):
    if (wl, "gputrace") not in res:
        continue
    c, w = res[wl, "gputrace"]["cpu"][0] - 1, res[wl, "gputrace"]["wall"][0] - 1
    L.append("| gputrace defaults, added per %s ≤ %d%% | %+.1f%% (%+.1f%%) | %s (%s) |" % (
        wl, lim * 100, c * 100, w * 100, verdict(c <= lim), verdict(w <= lim)))
for wl in ("launch", "alloc", "step"):
    if (wl, "gputrace") not in res or (wl, "profiler") not in res:
        continue
    share = {}
    for k in ("cpu", "wall"):
        g, p = res[wl, "gputrace"][k][1], res[wl, "profiler"][k][1]
        share[k] = (g / p if p > 0 else float("inf"), g, p)
    L.append("| %s: gputrace's added time < 0.25× torch.profiler's | %.2f× (%+.0f vs %+.0f ns) (%.2f×) | %s (%s) |" % (
        wl, share["cpu"][0], share["cpu"][1], share["cpu"][2], share["wall"][0],
        verdict(share["cpu"][0] < 0.25), verdict(share["wall"][0] < 0.25)))
for wl in ("launch", "alloc", "step"):
    g, p = res.get((wl, "gputrace"), {}).get("run"), res.get((wl, "profiler"), {}).get("run")
    if not g or not p:
        continue
    share = g[1] / p[1] if p[1] > 0 else float("inf")
    L.append("| %s, whole run (start to exit, the profiler's stop included): gputrace's added time "
             "< 0.25× torch.profiler's | %.3f× (%+.0f vs %+.0f ns per unit) | %s |" % (
                 wl, share, g[1], p[1], verdict(share < 0.25)))
# the command as run: the variables that chose the variants, workloads and the earlier build
envs = " ".join('%s="%s"' % (k, os.environ[k]) for k in ("TORCH_BENCH_BEFORE", "TORCH_BENCH_VARIANTS",
                "TORCH_BENCH_WORKLOADS") if os.environ.get(k))
try:
    tree = subprocess.run(["git", "-C", os.path.dirname(os.path.abspath(__file__)), "describe", "--always",
                           "--dirty"], capture_output=True, text=True).stdout.strip()
except OSError:
    tree = ""
L += ["", "Commands: `%sO=build GT_VENV=/work/venv sh bench/torch_overhead.sh %d %d` "
      "(it prints every command it runs)%s." % (envs + " " if envs else "", rounds, scale,
                                                 ", tree at " + tree if tree else ""), ""]
open(out, "w").write("\n".join(L))
sys.stdout.write("\n".join(L))
