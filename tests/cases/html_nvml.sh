# --html, the device state from NVML: per sampled device the SM clock over time, the intervals
# below its maximum shaded (hover: NVML's reasons), and a table with the time below the maximum.
# The simulated NVML scripts three states on two devices (full clock, thermal slowdown, power cap);
# headless Chromium draws the page and what it drew is read back: the clock's path, mapped from
# pixels to time and MHz, equals the report's device_state series at every sample; one shaded
# interval per sample below the maximum with the next sample's time as its end; the table's share
# of time below the maximum is the report's slow_ns / covered_ns. A trace without NVML draws no
# such card; one whose NVML was absent says so. --chrome-trace has the samples as counters. With
# CUPTI off busy time is unknown, and JSON, text and page say so rather than "no GPU work". A
# second schedule has NVML not answer for the SM clock and the temperature a while: the line
# breaks after a sample without a clock, and the export has no counter for what a sample lacks.
. "$SRC/tests/lib.sh"
[ -f "$O/simnvml/libnvidia-ml.so.1" ] || skip "no simulated NVML: nvml.h missing at build time (make torch-env, then make VENV=... fixtures)"
[ -f "$SIMCUPTI_DIR/libcupti.so.13" ] || skip "simulated CUPTI not built"
CHROMIUM=$(command -v chromium || command -v chromium-browser) || skip "chromium not installed (make deps)"
got=$(LD_LIBRARY_PATH="$O/simnvml" GTSIM_DEVICES=2 GTSIM_NVML_SCHEDULE="$SRC/tests/simnvml/three_states.sched" GPUTRACE_NVML_MS=10 \
    sh -c '. "$SRC/tests/lib.sh"; traced run.trace "$PROGS/idle" syncload') || fail "traced run failed: $got"
cat > gaps.sched <<'EOF'
0     sm_clock=1980
25    sm_clock=1200 clock_events=0x60 fail=16   # temperature not answered
50    fail=1                                     # SM clock not answered: the line breaks
75    sm_clock=1500 clock_events=0x4 fail=0
100   fail=1
EOF
got=$(LD_LIBRARY_PATH="$O/simnvml" GTSIM_DEVICES=2 GTSIM_NVML_SCHEDULE="$PWD/gaps.sched" GPUTRACE_NVML_MS=5 \
    sh -c '. "$SRC/tests/lib.sh"; traced gaps.trace "$PROGS/idle" syncload') || fail "traced run failed: $got"
for t in run gaps; do
    "$GT_REPORT" --json $t.trace > $t.json || fail "--json failed ($t)"
    "$GT_REPORT" --html $t.html $t.trace || fail "--html failed ($t)"
    html_dom $t.html
done
cat > check_clock.py <<'PY'
import json, re, sys
from html.parser import HTMLParser
dom, rep = open(sys.argv[1]).read(), json.load(open(sys.argv[2]))
st = rep["device_state"]
assert st["nvml"] == "available", st["nvml"]
gaps = sys.argv[3] == "gaps"
class P(HTMLParser):
    def __init__(self):
        super().__init__()
        self.charts, self.cur, self.cells, self.in_table, self.td = {}, None, [], False, None
    def handle_starttag(self, tag, a):
        a = dict(a)
        if tag == "svg" and a.get("class") == "clockchart":
            self.cur = self.charts[int(a["data-device"])] = {"svg": a, "path": None, "slow": [], "dots": []}
        elif tag == "path" and a.get("class") == "sm-clock":
            self.cur["path"] = a
        elif tag == "circle" and a.get("class") == "sm-point":
            self.cur["dots"].append(a)
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
    pts_all = d["series"]["points"]
    has = lambda q: q["sm_mhz"] is not None
    pts = [q for q in pts_all if has(q)]
    assert len(pts) >= 3, pts
    assert c["path"] is not None and int(c["path"]["data-points"]) == len(pts), c["path"]
    cmds = re.findall(r"([MLH]) (-?[0-9.]+(?:e-?[0-9]+)?)(?: (-?[0-9.]+(?:e-?[0-9]+)?))?", c["path"]["d"])
    # a sample's clock holds to the next sample: M (t, sm) where the one before has no clock,
    # else L (t, sm before) L (t, sm); H (next t) where the next sample has no clock (the line
    # breaks there: the clock of the interval it begins is unknown); a last sample reached by
    # no line is a dot
    want, dots = [], []
    for i, q in enumerate(pts_all):
        if not has(q):
            continue
        joined = i > 0 and has(pts_all[i - 1])
        nxt = pts_all[i + 1] if i + 1 < len(pts_all) else None
        want += [("L", q["time_ns"], pts_all[i - 1]["sm_mhz"]), ("L", q["time_ns"], q["sm_mhz"])] if joined \
            else [("M", q["time_ns"], q["sm_mhz"])]
        if nxt is not None and not has(nxt):
            want.append(("H", nxt["time_ns"], None))
        elif nxt is None and not joined:
            dots.append((q["time_ns"], q["sm_mhz"]))
    assert [k for k, *_ in cmds] == [k for k, *_ in want], (c["path"]["d"], want)
    for (k, a, b), (_, t, m) in zip(cmds, want):
        assert abs(t_of(float(a)) - t) <= span * 1e-9 + 1 and (m is None or abs(mhz_of(float(b)) - m) < 1e-6), \
            f"device {d['device']}: drawn {k} ({t_of(float(a)):.0f} ns, {b}), report ({t}, {m})"
    got_dots = [(int(a["data-time"]), int(a["data-mhz"])) for a in c["dots"]]
    assert got_dots == dots, (got_dots, dots)
    if gaps:  # NVML did not answer for the SM clock a while: the line has breaks, held to them
        kinds = [k for k, *_ in cmds]
        assert len(pts) < len(pts_all) and kinds.count("M") >= 2 and "H" in kinds, (len(pts), len(pts_all), c["path"]["d"])
    # one shaded interval per sample below the maximum that has a next sample (of any kind)
    below = [(a["time_ns"], b["time_ns"], a["sm_mhz"]) for a, b in zip(pts_all, pts_all[1:]) if has(a) and a["sm_mhz"] < d["max_sm_mhz"] and b["time_ns"] > a["time_ns"]]
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
print(f"device state drawn ({sys.argv[3]}): {len(devs)} devices, {slow_seen} intervals below the maximum clock, as the report")
PY
for t in run gaps; do
    "$PYTHON" check_clock.py $t.dom $t.json $t || fail "the drawn clock differs from the report ($t)"
done
# --chrome-trace: each sample's SM clock, temperature, power and memory used as counters on the
# device's pid, at the sample's time, exactly as the dump has them: only the fields the sample has
for t in run gaps; do
    "$GT_REPORT" --dump $t.trace > $t.dump || fail "--dump failed ($t)"
    "$GT_REPORT" --chrome-trace $t.chrome.json $t.trace || fail "--chrome-trace failed ($t)"
    "$PYTHON" - $t.dump $t.chrome.json $t <<'PY' || fail "the export's NVML counters differ from the samples ($t)"
import json, sys
want, lacking = [], 0
for line in open(sys.argv[1]):
    f = line.split()
    if f[2] != "NVML_SAMPLE":
        continue
    kv = dict(x.split("=", 1) for x in f if "=" in x)
    for name, arg, key, bit in (("SM clock (NVML)", "MHz", "sm_mhz", 0x1), ("temperature (NVML)", "C", "temp_c", 0x4),
                                ("power (NVML)", "mW", "power_mw", 0x8),
                                ("memory used, all processes (NVML)", "bytes", "mem_used", 0x80)):
        if int(kv["valid"], 16) & bit:
            want.append((name, int(kv["device"]), int(f[0]), arg, int(kv[key])))
        else:
            lacking += 1
ev = json.load(open(sys.argv[2]))["traceEvents"]
got = [(e["name"], e["pid"], int(f"{e['ts']:.3f}".replace(".", "")), *next(iter(e["args"].items())))
       for e in ev if e.get("ph") == "C" and e["name"].endswith("(NVML)")]
assert len(want) >= 8 and sorted(got) == sorted(want), (len(got), len(want), sorted(set(got) ^ set(want))[:4])
assert (lacking > 0) == (sys.argv[3] == "gaps"), lacking  # the gaps schedule leaves fields out
print(f"chrome trace ({sys.argv[3]}): {len(got)} NVML counter events, as the dump's samples ({lacking} fields not answered)")
PY
done
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
