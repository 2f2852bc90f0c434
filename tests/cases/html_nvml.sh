# --html, the device state from NVML: per sampled device the SM clock over time, the intervals
# below its maximum shaded (hover: NVML's reasons), and a table with the time below the maximum.
# The simulated NVML scripts three states on two devices (full clock, thermal slowdown, power cap);
# headless Chromium draws the page and what it drew is read back: the clock's path, mapped from
# pixels to time and MHz, equals the report's device_state series at every sample; one shaded
# interval per sample below the maximum with the next sample's time as its end; the table's share
# of time below the maximum is the report's slow_ns / covered_ns. A trace without NVML draws no
# such card; one whose NVML was absent says so. --chrome-trace has the samples as counters. With
# CUPTI off busy time is unknown, and JSON, text and page say so rather than "no GPU work".
. "$SRC/tests/lib.sh"
[ -f "$O/simnvml/libnvidia-ml.so.1" ] || skip "no simulated NVML: nvml.h missing at build time (make torch-env, then make VENV=... fixtures)"
[ -f "$SIMCUPTI_DIR/libcupti.so.13" ] || skip "simulated CUPTI not built"
CHROMIUM=$(command -v chromium || command -v chromium-browser) || skip "chromium not installed (make deps)"
got=$(LD_LIBRARY_PATH="$O/simnvml" GTSIM_DEVICES=2 GTSIM_NVML_SCHEDULE="$SRC/tests/simnvml/three_states.sched" GPUTRACE_NVML_MS=10 \
    sh -c '. "$SRC/tests/lib.sh"; traced run.trace "$PROGS/idle" syncload') || fail "traced run failed: $got"
"$GT_REPORT" --json run.trace > run.json || fail "--json failed"
"$GT_REPORT" --html run.html run.trace || fail "--html failed"
html_dom run.html
"$PYTHON" - run.dom run.json <<'PY' || fail "the drawn clock differs from the report"
import json, re, sys
from html.parser import HTMLParser
dom, rep = open(sys.argv[1]).read(), json.load(open(sys.argv[2]))
st = rep["device_state"]
assert st["nvml"] == "available", st["nvml"]
class P(HTMLParser):
    def __init__(self):
        super().__init__()
        self.charts, self.cur, self.cells, self.in_table, self.td = {}, None, [], False, None
    def handle_starttag(self, tag, a):
        a = dict(a)
        if tag == "svg" and a.get("class") == "clockchart":
            self.cur = self.charts[int(a["data-device"])] = {"svg": a, "path": None, "slow": []}
        elif tag == "path" and a.get("class") == "sm-clock":
            self.cur["path"] = a
        elif tag == "rect" and a.get("class") == "slow":
            self.cur["slow"].append(a)
        elif tag == "table" and "devstate-table" in a.get("class", ""):
            self.in_table = True
        elif tag == "tr" and self.in_table:
            self.cells.append([])
        elif tag == "td" and self.in_table:
            self.td = ""
    def handle_data(self, d):
        if self.td is not None:
            self.td += d
    def handle_endtag(self, tag):
        if tag == "td" and self.td is not None:
            self.cells[-1].append(self.td)
            self.td = None
        elif tag == "table":
            self.in_table = False
p = P()
p.feed(dom)
devs = [d for d in st["devices"] if d["matched"] and d["samples"]]
assert len(devs) == 2, [(d["device"], d["samples"]) for d in st["devices"]]
assert sorted(p.charts) == sorted(d["device"] for d in devs), (sorted(p.charts), devs)
slow_seen = 0
for d in devs:
    c = p.charts[d["device"]]
    s = c["svg"]
    x0, x1, span, y0, ymax, ypx = (float(s[k]) for k in ("data-x0", "data-x1", "data-span", "data-y0", "data-ymax", "data-ymax-px"))
    t_of = lambda px: (px - x0) / (x1 - x0) * span
    mhz_of = lambda py: (y0 - py) / (y0 - ypx) * ymax
    pts = [q for q in d["series"]["points"] if q["sm_mhz"] is not None]
    assert len(pts) >= 3, pts
    assert c["path"] is not None and int(c["path"]["data-points"]) == len(pts), c["path"]
    nums = [float(v) for v in re.findall(r"-?[0-9.]+(?:e-?[0-9]+)?", c["path"]["d"])]
    xy = list(zip(nums[0::2], nums[1::2]))
    assert len(xy) == 2 * len(pts) - 1, (len(xy), len(pts))
    # M (t0, sm0), then per sample i: L (ti, sm(i-1)) L (ti, smi)
    want = [(pts[0]["time_ns"], pts[0]["sm_mhz"])]
    for a, b in zip(pts, pts[1:]):
        want += [(b["time_ns"], a["sm_mhz"]), (b["time_ns"], b["sm_mhz"])]
    for (px, py), (t, m) in zip(xy, want):
        assert abs(t_of(px) - t) <= span * 1e-9 + 1 and abs(mhz_of(py) - m) < 1e-6, \
            f"device {d['device']}: drawn ({t_of(px):.0f} ns, {mhz_of(py):.3f} MHz), report ({t}, {m})"
    # one shaded interval per sample below the maximum that has a next sample
    below = [(a["time_ns"], b["time_ns"], a["sm_mhz"]) for a, b in zip(pts, pts[1:]) if a["sm_mhz"] < d["max_sm_mhz"]]
    got = [(int(r["data-time"]), int(r["data-end"]), int(r["data-mhz"])) for r in c["slow"]]
    assert got == below and below, f"device {d['device']}: shaded {got}, report {below}"
    slow_seen += len(below)
    # the shaded time adds up to the report's slow time (one point per sample here)
    assert d["series"]["samples_per_point"] == 1 and sum(e - s for s, e, _ in below) == d["slow_ns"], \
        (sum(e - s for s, e, _ in below), d["slow_ns"])
# the table: a row per device, its share of time below the maximum as the report's
rows = {int(r[0]): r for r in p.cells if r}
for d in devs:
    cell = rows[d["device"]][4]
    share = float(cell.rstrip(" %"))
    assert abs(share - 100 * d["slow_ns"] / d["covered_ns"]) <= 0.05 + 1e-9, (cell, d["slow_ns"], d["covered_ns"])
    busy = rows[d["device"]][5]
    assert (busy == "no GPU work") == (d["busy_ns"] == 0), (busy, d["busy_ns"])
print(f"device state drawn: {len(devs)} devices, {slow_seen} intervals below the maximum clock, as the report")
PY
# --chrome-trace: each sample's SM clock, temperature, power and memory used as counters on the
# device's pid, at the sample's time, exactly as the dump has them
"$GT_REPORT" --dump run.trace > run.dump || fail "--dump failed"
"$GT_REPORT" --chrome-trace run.chrome.json run.trace || fail "--chrome-trace failed"
"$PYTHON" - run.dump run.chrome.json <<'PY' || fail "the export's NVML counters differ from the samples"
import json, sys
want = []
for line in open(sys.argv[1]):
    f = line.split()
    if f[2] != "NVML_SAMPLE":
        continue
    kv = dict(x.split("=", 1) for x in f if "=" in x)
    for name, arg, key in (("SM clock (NVML)", "MHz", "sm_mhz"), ("temperature (NVML)", "C", "temp_c"),
                           ("power (NVML)", "mW", "power_mw"),
                           ("memory used, all processes (NVML)", "bytes", "mem_used")):
        want.append((name, int(kv["device"]), int(f[0]), arg, int(kv[key])))
ev = json.load(open(sys.argv[2]))["traceEvents"]
got = [(e["name"], e["pid"], int(f"{e['ts']:.3f}".replace(".", "")), *next(iter(e["args"].items())))
       for e in ev if e.get("ph") == "C" and e["name"].endswith("(NVML)")]
assert len(want) >= 8 and sorted(got) == sorted(want), (len(got), len(want), sorted(set(got) ^ set(want))[:4])
print(f"chrome trace: {len(got)} NVML counter events, as the dump's samples")
PY
# CUPTI off: busy time is not known; the report says so (not "no GPU work")
got=$(LD_LIBRARY_PATH="$O/simnvml" GPUTRACE_CUPTI=off GPUTRACE_NVML_MS=5 sh -c '. "$SRC/tests/lib.sh"; traced nocupti.trace "$PROGS/idle" syncload') ||
    fail "traced run failed: $got"
"$GT_REPORT" --json nocupti.trace > nocupti.json || fail "--json failed (CUPTI off)"
[ "$(jget nocupti.json 'd["device_state"]["busy_known"]')" = False ] || fail "CUPTI off: busy_known not false"
"$GT_REPORT" nocupti.trace | grep -q "of the time (busy time unknown: no GPU timeline)" ||
    fail "CUPTI off: the text report does not say busy time is unknown"
"$GT_REPORT" --html nocupti.html nocupti.trace || fail "--html failed (CUPTI off)"
html_dom nocupti.html
grep -q "busy time below it: unknown (no GPU timeline)" nocupti.dom && ! grep -q ">no GPU work<" nocupti.dom ||
    fail "CUPTI off: the page does not say busy time is unknown"
# the export names each device's process though no GPU activity came to name it
"$GT_REPORT" --chrome-trace nocupti.chrome.json nocupti.trace || fail "--chrome-trace failed (CUPTI off)"
"$PYTHON" -c 'import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
pids = {e["pid"] for e in ev if e.get("ph") == "C" and e["name"].endswith("(NVML)")}
named = {e["pid"]: e["args"]["name"] for e in ev if e.get("ph") == "M" and e["name"] == "process_name"}
assert pids and all(named.get(p) == f"GPU {p}" for p in pids), (pids, named)' nocupti.chrome.json ||
    fail "CUPTI off: the NVML counters sit on an unnamed process"
echo "CUPTI off: busy time said unknown (JSON, text, HTML); the counters' processes named"
# NVML absent: the card says so; GPUTRACE_NVML_MS=0: no card
got=$(sh -c '. "$SRC/tests/lib.sh"; traced absent.trace "$PROGS/idle" host') || fail "traced run failed: $got"
"$GT_REPORT" --html absent.html absent.trace || fail "--html failed (NVML absent)"
html_dom absent.html
grep -q 'class="card devstate"' absent.dom && grep -q 'NVML absent: libnvidia-ml.so.1' absent.dom ||
    fail "NVML absent: the page does not say so"
! grep -q 'class="clockchart"' absent.dom || fail "NVML absent: a clock chart drawn"
got=$(LD_LIBRARY_PATH="$O/simnvml" GPUTRACE_NVML_MS=0 sh -c '. "$SRC/tests/lib.sh"; traced off.trace "$PROGS/idle" host') ||
    fail "traced run failed: $got"
"$GT_REPORT" --html off.html off.trace || fail "--html failed (NVML off)"
html_dom off.html
! grep -q 'class="card devstate"' off.dom || fail "GPUTRACE_NVML_MS=0: a device state card drawn"
echo "NVML absent: said; NVML off: no card"
