"""Compare the report's GPU timeline with the simulated driver's ground truth.

usage: timeline_check.py SIM_LOG REPORT_JSON
SIM_LOG holds one 'work kind=.. start=.. end=.. device=.. stream=.. corr=.. graph=.. name=.. api=..'
line per piece of GPU work (tests/sim/README.md). Every figure must match to the nanosecond."""
import collections
import json
import sys

work = []
for line in open(sys.argv[1]):
    if line.startswith("work "):
        work.append(dict(kv.split("=", 1) for kv in line.split()[1:]))
rep = json.load(open(sys.argv[2]))
tl = rep["timeline"]
start0 = None


def fail(msg):
    sys.exit("timeline mismatch: " + msg)


def union(iv):
    total, cur_s, cur_e = 0, None, None
    for s, e in sorted(iv):
        if cur_e is None or s > cur_e:
            if cur_e is not None:
                total += cur_e - cur_s
            cur_s, cur_e = s, e
        else:
            cur_e = max(cur_e, e)
    return total + (cur_e - cur_s if cur_e is not None else 0)


if rep["trace"]["gpu_timeline"] != "available":
    fail("gpu_timeline is " + rep["trace"]["gpu_timeline"])
kernels = [w for w in work if w["kind"] == "1"]
if tl["kernel_count"] != len(kernels):
    fail(f"kernel_count {tl['kernel_count']} != {len(kernels)}")
by_dev = collections.defaultdict(list)
for w in work:
    by_dev[int(w["device"])].append((int(w["start"]), int(w["end"])))
devs = {d["device"]: d for d in tl["devices"]}
for dev, iv in by_dev.items():
    d = devs.get(dev) or fail(f"device {dev} missing")
    span = max(e for _, e in iv) - min(s for s, _ in iv)
    busy = union(iv)
    for key, want in (("span_ns", span), ("busy_ns", busy), ("idle_ns", span - busy)):
        if d[key] != want:
            fail(f"device {dev} {key}: report {d[key]}, ground truth {want}")
    print(f"device {dev}: span {span} ns, busy {busy} ns, idle {span - busy} ns: exact")
per_name = collections.defaultdict(lambda: [0, 0])
for k in kernels:
    per_name[k["name"]][0] += 1
    per_name[k["name"]][1] += int(k["end"]) - int(k["start"])
got = {k["name"]: (k["count"], k["total_ns"]) for k in tl["top_kernels"]}
for name, (count, total) in per_name.items():
    if got.get(name) != (count, total):
        fail(f"kernel {name}: report {got.get(name)}, ground truth {(count, total)}")
link = tl["linking"]
graph_kernels = sum(1 for k in kernels if k["graph"] != "0")
if link["linked"] != len(kernels) or link["unlinked"] != 0 or link["graph_kernels"] != graph_kernels:
    fail(f"linking {link}, want all {len(kernels)} linked, {graph_kernels} through graphs")
copies = [w for w in work if w["kind"] == "2"]
if sum(c["count"] for c in tl["copies"]) != len(copies):
    fail(f"copies {tl['copies']} vs {len(copies)} in the ground truth")
print(f"{len(kernels)} kernels ({graph_kernels} from graphs) all linked to their launch; "
      f"{len(copies)} copies; per-kernel totals exact")
