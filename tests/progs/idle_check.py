"""Check the report's GPU idle gaps against the simulated driver's ground truth.

usage: idle_check.py SCENARIO SIM_LOG REPORT_JSON DUMP
SIM_LOG: the GTSIM_LOG of the run ('work ...' lines: every piece of GPU work with its exact start
and end, tests/sim/README.md); REPORT_JSON: gputrace-report --json --all-gaps; DUMP:
gputrace-report --dump (for the launch times HTA's categories need).

Exact, to the nanosecond, from the ground truth alone: every gap (start, length, the work before
and after it), the gap count, idle time, the length histogram, the utilization windows and HTA's
per-stream categories. From the scenario's construction (tests/progs/idle.c): how many gaps, their
cause, and bounds on their length where host sleeps make the exact figure fuzzy."""
import collections
import json
import os
import sys

scenario, sim_log, rep_path, dump_path = sys.argv[1:5]
US, MS = 1000, 1000000


def fail(msg):
    sys.exit(f"idle check ({scenario}): {msg}")


work = []
for line in open(sim_log):
    if line.startswith("work "):
        w = dict(kv.split("=", 1) for kv in line.split()[1:])
        for k in ("start", "end", "device", "stream", "corr", "kind"):
            w[k] = int(w[k])
        work.append(w)
rep = json.load(open(rep_path))
tl = rep["timeline"]
devs = {d["device"]: d for d in tl["devices"]}

# launch times (ns from the trace start) by CUPTI correlation id, through the extcorr records
launch_rel, ext_of = {}, {}
for line in open(dump_path):
    f = line.split()
    kv = dict(x.split("=", 1) for x in f if "=" in x)
    if len(f) > 2 and f[2] == "LAUNCH" and kv.get("result") == "0":
        launch_rel[int(kv["corr"], 16)] = int(f[0])
    elif len(f) > 2 and f[2] == "GPU_EXTCORR":
        ext_of[int(kv["corr"])] = int(kv["ext"], 16)

BUCKETS = [(0, "<10us"), (10 * US, "10-100us"), (100 * US, "100us-1ms"), (MS, "1-10ms"),
           (10 * MS, "10-100ms"), (100 * MS, ">=100ms")]


def bucket(d):
    return [name for lo, name in BUCKETS if d >= lo][-1]


def window_width(span):
    p = 1000
    while True:
        for m in (1, 2, 5):
            if -(-span // (p * m)) <= 100:
                return p * m
        p *= 10


def merged(iv):
    out = []
    for s, e in sorted(iv):
        if out and s <= out[-1][1]:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([s, e])
    return out


by_dev = collections.defaultdict(list)
for w in work:
    by_dev[w["device"]].append(w)
gaps_of = {}
for dev, ws in sorted(by_dev.items()):
    d = devs.get(dev) or fail(f"device {dev} missing from the report")
    first = min(w["start"] for w in ws)
    last = max(w["end"] for w in ws)
    t0 = first - d["first_ns"]  # trace start in the sim's clock
    busy = merged([(w["start"], w["end"]) for w in ws])
    gaps = [(busy[i][1], busy[i + 1][0]) for i in range(len(busy) - 1)]
    idle = sum(e - s for s, e in gaps)
    if d["idle_ns"] != idle or d["gap_count"] != len(gaps) or d["gaps_omitted"] != 0:
        fail(f"device {dev}: idle {d['idle_ns']} in {d['gap_count']} gaps "
             f"({d['gaps_omitted']} omitted), ground truth {idle} in {len(gaps)}")
    got = sorted((g["start_ns"] + t0, g["duration_ns"]) for g in d["gaps"])
    if got != [(s, e - s) for s, e in gaps]:
        fail(f"device {dev}: gaps {got} != ground truth {[(s, e - s) for s, e in gaps]}")
    for g in d["gaps"]:
        s, e = g["start_ns"] + t0, g["start_ns"] + t0 + g["duration_ns"]
        if g["before"]["end_ns"] + t0 != s or g["after"]["start_ns"] + t0 != e:
            fail(f"device {dev}: gap at {s}: before/after {g['before']} {g['after']}")
        there = [w for w in ws if w["start"] == e]  # copies and memsets are named "-" there
        if g["after"]["name"] not in {w["name"] for w in there} and \
                (g["after"]["kind"] == "kernel" or all(w["kind"] == 1 for w in there)):
            fail(f"device {dev}: gap at {s}: after {g['after']['name']} started no work there")
    hist = {b["bucket"]: (b["count"], b["idle_ns"]) for b in d["gap_histogram"]}
    for _, name in BUCKETS:
        want = (sum(1 for s, e in gaps if bucket(e - s) == name),
                sum(e - s for s, e in gaps if bucket(e - s) == name))
        if hist.get(name) != want:
            fail(f"device {dev}: histogram {name} {hist.get(name)} != {want}")
    sites = d["idle_by_site"]
    if len(sites) < 20 and (sum(x["idle_ns"] for x in sites) != idle or
                            sum(x["gaps"] for x in sites) != len(gaps)):
        fail(f"device {dev}: idle_by_site {sites} does not add up to {idle} in {len(gaps)}")
    causes = d["idle_by_cause"]
    if sum(c["idle_ns"] for c in causes.values()) != idle or \
            sum(c["gaps"] for c in causes.values()) != len(gaps):
        fail(f"device {dev}: idle_by_cause {causes} does not add up to {idle} in {len(gaps)}")
    # windows: fixed width from the span (1, 2, 5 x 10^k ns, >= 1 us, at most 100 windows)
    win = [x for x in tl["windows"] if x["device"] == dev]
    if len(win) != 1:
        fail(f"device {dev}: {len(win)} window sets")
    width = window_width(last - first)
    if win[0]["window_ns"] != width:
        fail(f"device {dev}: window_ns {win[0]['window_ns']} != {width}")
    want_w = []
    for ws_ in range(first, last, width):
        we = min(ws_ + width, last)
        b = sum(max(0, min(e, we) - max(s, ws_)) for s, e in busy)
        want_w.append((ws_ - t0, we - ws_, b, b * 2 < (we - ws_)))
    got_w = [(x["start_ns"], x["duration_ns"], x["busy_ns"], x["low"]) for x in win[0]["windows"]]
    if got_w != want_w or win[0]["low_count"] != sum(1 for x in want_w if x[3]):
        fail(f"device {dev}: windows differ from the ground truth")
    # HTA: per stream in start order, idle = start - previous end; host wait when the launch came
    # after that end, kernel wait when under 30 ns, else other
    hta = {(h["device"], h["stream"]): h for h in tl["hta"]["streams"]}
    per_stream = collections.defaultdict(list)
    for w in ws:
        per_stream[w["stream"]].append(w)
    for st, sw in per_stream.items():
        sw.sort(key=lambda w: (w["start"], w["end"]))
        want = {"host_wait": 0, "kernel_wait": 0, "other": 0}
        for prev, cur in zip(sw, sw[1:]):
            idle_iv = max(0, cur["start"] - prev["end"])
            lt = launch_rel.get(ext_of.get(cur["corr"])) if cur["kind"] == 1 else None
            if lt is not None and lt + t0 > prev["end"]:
                want["host_wait"] += idle_iv
            elif idle_iv < 30:
                want["kernel_wait"] += idle_iv
            else:
                want["other"] += idle_iv
        h = hta.get((dev, st)) or fail(f"HTA: no entry for device {dev} stream {st}")
        got_h = {k: h[k + "_ns"] for k in want}
        if got_h != want:
            fail(f"HTA device {dev} stream {st}: {got_h} != {want}")
    gaps_of[dev] = d["gaps"]
    print(f"device {dev}: {len(gaps)} gaps, {idle} ns idle, windows of {width} ns, "
          f"HTA on {len(per_stream)} streams: exact")


def expect(cond, msg):
    if not cond:
        fail(msg)


def site_in(g, func):
    """The gap's call site is `func` in idle.c (the JSON names the file as the debug info does)."""
    site = g["site"] or ""
    return site.startswith(func + " (") and "idle.c:" in site


def causes_of(dev):
    return [g["cause"] for g in sorted(gaps_of.get(dev, []), key=lambda g: g["start_ns"])]


g0 = sorted(gaps_of.get(0, []), key=lambda g: g["start_ns"])
if scenario == "host":
    expect(causes_of(0) == ["host_busy"] * 3, f"causes {causes_of(0)}")
    for g in g0:
        expect(g["duration_ns"] >= 3 * MS, f"gap {g['duration_ns']} ns < 3 ms")
        expect(g["launch"]["since_previous_call_ns"] >= 4 * MS, f"launch {g['launch']}")
        expect(g["launch"]["previous_call"] == "cuLaunchKernel", f"launch {g['launch']}")
        expect(not g["launch"]["before_gap"] and g["host_call"] is None, f"gap {g}")
        expect(site_in(g, "launch"), f"site {g['site']}")
elif scenario == "sync":
    expect(causes_of(0) == ["synchronize"] * 3, f"causes {causes_of(0)}")
    for g in g0:
        expect(g["duration_ns"] >= 2 * US, f"gap {g['duration_ns']} ns < 2 us")
        # tests/cases/idle_sync.sh: each synchronize returns 10 ms after its kernel ends
        expect(g["phases"]["synchronize"] >= 10 * MS, f"phases {g['phases']}: synchronize < 10 ms")
        expect(g["host_call"]["api"] == "cuStreamSynchronize", f"host call {g['host_call']}")
        expect(site_in(g, "sync_bubble"), f"site {g['site']}")
elif scenario == "syncload":
    # the synchronize returned soon after each gap began (microseconds; more on a loaded machine);
    # the 30 ms after it were the host's (docs/ANALYSES.md, "Phases of a gap")
    expect(causes_of(0) == ["host_busy"] * 3, f"causes {causes_of(0)}")
    for g in g0:
        ph = g["phases"]
        expect(g["duration_ns"] >= 30 * MS, f"gap {g['duration_ns']} ns < 30 ms")
        expect(sum(ph.values()) == g["duration_ns"], f"phases {ph} do not add up to the gap")
        expect(ph["host_busy"] >= 30 * MS, f"phases {ph}: less than the 30 ms of load_batch")
        expect(ph["synchronize"] > 0 and ph["launch_latency"] > 0,
               f"phases {ph}: no synchronize or launch latency phase")
        expect(ph["host_busy"] + ph["synchronize"] + ph["launch_latency"] == g["duration_ns"],
               f"phases {ph}: a phase the construction has not")
        expect(g["host_call"]["api"] == "cuStreamSynchronize", f"host call {g['host_call']}")
        expect(site_in(g, "launch"), f"site {g['site']}")
    c = devs[0]["idle_by_cause"]
    expect(c["host_busy"]["idle_ns"] == sum(g["phases"]["host_busy"] for g in g0) and
           c["host_busy"]["gaps"] == 3, f"idle by cause {c}")
    expect(c["synchronize"]["gaps"] == 0 and c["synchronize"]["idle_ns"] > 0, f"idle by cause {c}")
elif scenario in ("copyload", "setload"):
    # each step's async copy (memset) ends the gap and is linked to its call: host busy for the 30
    # ms of load_batch, at the copy's call (docs/ANALYSES.md, "Phases of a gap"); short gaps
    # between the copy and the kernel, if any, are launch latency, or host busy where the host is
    # slow between the two calls (a ThreadSanitizer build on a slow machine: over 1 ms), never
    # unknown
    api = "cuMemcpyHtoDAsync_v2" if scenario == "copyload" else "cuMemsetD8Async"
    long_ = [g for g in g0 if g["duration_ns"] >= 20 * MS]
    expect([g["cause"] for g in long_] == ["host_busy"] * 3, f"causes {causes_of(0)}")
    expect(all(g["cause"] in ("host_busy", "launch_latency") for g in g0 if g not in long_),
           f"causes {causes_of(0)}")
    for g in long_:
        ph = g["phases"]
        expect(g["duration_ns"] >= 30 * MS, f"gap {g['duration_ns']} ns < 30 ms")
        expect(ph["host_busy"] >= 30 * MS and ph["unknown"] == 0, f"phases {ph}")
        expect(sum(ph.values()) == g["duration_ns"], f"phases {ph} do not add up to the gap")
        expect(g["launch"] is not None and g["launch"]["api"] == api, f"launch {g['launch']}")
        expect(site_in(g, "copy_then_load"), f"site {g['site']}")
    c = devs[0]["idle_by_cause"]
    expect(c["unknown"]["idle_ns"] == 0, f"idle by cause {c}")
    # the 3 x 30 ms of load_batch (the synchronize's return may take a few ms under load)
    expect(c["host_busy"]["idle_ns"] >= 90 * MS and c["host_busy"]["gaps"] >= 3,
           f"idle by cause {c}")
elif scenario == "alloc":
    expect(causes_of(0) == ["allocation"] * 3, f"causes {causes_of(0)}")
    for g in g0:
        expect(g["duration_ns"] >= 9800 * US, f"gap {g['duration_ns']} ns < 9.8 ms")
        expect(g["host_call"]["api"] == "cuMemAlloc_v2", f"host call {g['host_call']}")
        expect(site_in(g, "alloc_stall"), f"site {g['site']}")
elif scenario == "event":
    expect(causes_of(0) == ["dependency"] and causes_of(1) == [], f"causes {causes_of(0)} {causes_of(1)}")
    expect(g0[0]["launch"]["before_gap"] and g0[0]["after"]["name"] == "k_after", f"gap {g0[0]}")
    expect(g0[0]["before"]["name"] == "k_first", f"gap {g0[0]}")
    expect(g0[0]["duration_ns"] < 20 * MS, f"gap {g0[0]['duration_ns']} ns >= 20 ms")
elif scenario == "tiny":
    # the first gap is the warm-up's synchronize and the first loop launch; then one gap per
    # pair of the 200 kernels whose launches came further apart than 100 ns
    loop = g0[1:]
    short = [g for g in loop if g["duration_ns"] < 10 * US]
    expect(len(loop) <= 199, f"{len(loop)} gaps between 200 kernels")
    expect(all(g["cause"] == "launch_latency" for g in short), "a short gap is not launch latency")
    # A long gap between back-to-back launches: the host launched late (host busy), unless the
    # simulated GPU's thread was held up (a loaded machine): then the launch came in the gap's
    # first half (launch latency) or before the gap (dependency). Its cause follows the launch's
    # time, never unknown.
    def long_cause(g):
        ln = g["launch"]
        if ln is None:
            return "unknown"
        if ln["before_gap"]:
            return "dependency"
        busy, late = ln["time_ns"] - g["start_ns"], g["start_ns"] + g["duration_ns"] - ln["time_ns"]
        return "host_busy" if busy >= late else "launch_latency"
    for g in loop:
        if g["duration_ns"] >= 10 * US:
            expect(long_cause(g) != "unknown" and g["cause"] == long_cause(g),
                   f"a long gap between back-to-back launches is {g['cause']}, its launch says "
                   f"{long_cause(g)}: {g}")
    held = sum(1 for g in loop if g["duration_ns"] >= 10 * US and g["cause"] != "host_busy")
    if held:
        print(f"{held} long gaps with the simulated GPU held up (launch latency or dependency)")
    # How many launches come within 10 us of each other is the host's speed: a sanitizer build
    # (TSan: ~10x slower) may make none; the cause rule above holds either way.
    if not os.environ.get("IDLE_SANITIZED"):
        expect(len(short) >= 160, f"only {len(short)} of {len(loop)} gaps under 10 us")
    print(f"{len(short)} of {len(loop)} gaps between back-to-back launches are launch latency")
else:
    fail("unknown scenario")
print(f"{scenario}: causes {causes_of(0)}: as constructed")
