# --chrome-trace (issue 19), what the export holds against the simulated GPU's ground truth and
# the report: every kernel, copy and memset once with its exact start and length (ns, as
# microseconds with three decimals), each linked kernel's correlation on exactly one launch
# event with a flow arrow pair, live device bytes whose maximum is the peak, the pools' reserved
# and used bytes whose maxima are the pool's, one idle-gap event per gap (all of them, not only
# the 20 the report lists: their lengths add up to the idle time), the
# devices' properties and the rank; and refusals: an unreadable trace leaves no file, an output
# naming the trace itself is refused (exit 1) and the trace kept.
. "$SRC/tests/lib.sh"
[ -f "$SIMCUPTI_DIR/libcupti.so.13" ] || skip "simulated CUPTI not built"
GTSIM_LOG="$PWD/sim.log" traced t.trace "$PROGS/timeline" > /dev/null || fail "timeline run failed"
"$GT_REPORT" --json t.trace > t.json || fail "report failed"
"$GT_REPORT" --chrome-trace t.chrome.json t.trace || fail "export failed"
"$PYTHON" - sim.log t.json t.chrome.json <<'PY' || fail "the export differs"
import collections, json, sys
sim, rep, ex = sys.argv[1], json.load(open(sys.argv[2])), json.load(open(sys.argv[3]))
ev = ex["traceEvents"]
def fail(m):
    sys.exit("chrome trace: " + m)
work = [dict(kv.split("=", 1) for kv in l.split()[1:]) for l in open(sim) if l.startswith("work ")]
# ns from the microsecond strings, exactly
def ns(v):
    s = f"{v:.3f}"
    return int(s.replace(".", ""))
kinds = {"1": "kernel", "2": "gpu_memcpy", "3": "gpu_memset"}
for k, cat in kinds.items():
    want = sorted((int(w["start"]), int(w["end"]) - int(w["start"]), int(w["stream"])) for w in work if w["kind"] == k)
    got = sorted((ns(e["ts"]), ns(e["dur"]), e["args"]["stream"]) for e in ev if e.get("cat") == cat)
    if len(got) != len(want):
        fail(f"{cat}: {len(got)} events, the GPU ran {len(want)}")
    if want:
        w0, g0 = want[0][0], got[0][0]
        if [(s - w0, d, st) for s, d, st in want] != [(s - g0, d, st) for s, d, st in got]:
            fail(f"{cat}: times or streams differ from the ground truth")
kern = [e for e in ev if e.get("cat") == "kernel"]
tl = rep["timeline"]
if len(kern) != tl["kernel_count"]:
    fail(f"{len(kern)} kernels, report {tl['kernel_count']}")
linked = [e for e in kern if "correlation" in e["args"]]
if len(linked) != tl["linking"]["linked"]:
    fail(f"{len(linked)} kernels with a correlation, report linked {tl['linking']['linked']}")
launch = collections.Counter(e["args"]["correlation"] for e in ev
                             if e.get("cat") == "cuda_driver" and "correlation" in e.get("args", {}))
for e in linked:
    if launch[e["args"]["correlation"]] != 1:
        fail(f"kernel correlation {e['args']['correlation']} on {launch[e['args']['correlation']]} launches")
flows = collections.Counter(e["ph"] for e in ev if e.get("cat") == "ac2g")
if flows["s"] != len(linked) or flows["f"] != len(linked):
    fail(f"flow events {dict(flows)} for {len(linked)} linked kernels")
if any("stream" in e.get("args", {}) for e in ev if e.get("cat") == "cuda_driver"):
    fail("a host event carries a stream arg (HTA would take it for GPU work)")
live = [e["args"]["live bytes"] for e in ev if e.get("name") == "device memory"]
if max(live) != rep["memory"]["peak_bytes"]:
    fail(f"live bytes counter max {max(live)}, peak {rep['memory']['peak_bytes']}")
gaps = [e for e in ev if e.get("cat") == "gpu_idle"]
want_gaps = sum(d["gap_count"] for d in tl["devices"])
if len(gaps) != want_gaps:
    fail(f"{len(gaps)} idle-gap events, the report counts {want_gaps}")
if [d["name"] for d in ex["deviceProperties"]] != [d["name"] for d in rep["devices"]]:
    fail("deviceProperties")
if ex["distributedInfo"] != {"rank": 0}:
    fail("distributedInfo")
print(f"{len(ev)} events checked")
PY

# every gap, not only the 20 the report lists: 200 gaps between back-to-back tiny kernels; their
# lengths add up to the idle time, they are in time order and the report's longest are among them
GTSIM_LOG="$PWD/tiny.log" traced tiny.trace "$PROGS/idle" tiny > /dev/null || fail "idle tiny run failed"
"$GT_REPORT" --json tiny.trace > tiny.json || fail "report (tiny) failed"
"$GT_REPORT" --chrome-trace tiny.chrome.json tiny.trace || fail "export (tiny) failed"
"$PYTHON" - tiny.json tiny.chrome.json <<'PY' || fail "the export's gaps differ"
import json, sys
rep, ex = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
def ns(v):
    return int(f"{v:.3f}".replace(".", ""))
dev = rep["timeline"]["devices"][0]
gaps = [e for e in ex["traceEvents"] if e.get("cat") == "gpu_idle"]
if dev["gap_count"] <= 20 or len(gaps) != dev["gap_count"]:
    sys.exit(f"{len(gaps)} idle-gap events, the report counts {dev['gap_count']} (want over 20)")
if sum(ns(e["dur"]) for e in gaps) != dev["idle_ns"]:
    sys.exit(f"gap lengths add up to {sum(ns(e['dur']) for e in gaps)} ns, idle {dev['idle_ns']} ns")
ts = [ns(e["ts"]) for e in gaps]
if ts != sorted(ts):
    sys.exit("the gaps are not in time order")
got = sorted(ns(e["dur"]) for e in gaps)[::-1][:len(dev["gaps"])]
if got != [g["duration_ns"] for g in dev["gaps"]]:
    sys.exit(f"the longest exported gaps {got[:5]}... differ from the report's")
if {e["name"] for e in gaps} - {g["cause"] for g in dev["gaps"]} - {"launch_latency"}:
    sys.exit(f"gap names {sorted({e['name'] for e in gaps})}")
print(f"{len(gaps)} gaps exported")
PY

# pools: the counter's maxima are the pool's peaks
if nm -D --defined-only "$GT_LIB" | grep -q " T gputrace_annotate_block_fail\$"; then
    GTSIM_MEM_BYTES=36m traced p.trace "$PROGS/pools_frag" > /dev/null 2>&1 || fail "pools_frag failed"
    "$GT_REPORT" --json p.trace > p.json && "$GT_REPORT" --chrome-trace p.chrome.json p.trace || fail "pools export failed"
    "$PYTHON" - p.json p.chrome.json <<'PY' || fail "pool counter differs"
import json, sys
rep, ex = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
c = [e["args"] for e in ex["traceEvents"] if e.get("name") == "pool memory"]
pool = rep["memory"]["fragmentation"]["pools"][0]
got = (max(a["reserved bytes"] for a in c), max(a["used bytes"] for a in c))
want = (pool["peak_reserved_bytes"], pool["peak_used_bytes"])
sys.exit(0 if got == want else f"pool counter maxima {got}, the pool's peaks {want}")
PY
fi

# an export over its own trace is refused and the trace kept
cp t.trace keep.trace
for opt in --chrome-trace --html; do
    rc=0; "$GT_REPORT" $opt keep.trace keep.trace 2> err.txt || rc=$?
    expect_eq "$opt over its trace: exit" $rc 1
    grep -q "the output is the trace keep.trace; refusing to overwrite it" err.txt || fail "$opt: $(cat err.txt)"
    cmp -s t.trace keep.trace || fail "$opt destroyed its trace"
done

# an unreadable trace: exit 2, one line, no file
printf 'not a trace' > bad.trace
rc=0; "$GT_REPORT" --chrome-trace bad.json bad.trace 2> err.txt || rc=$?
expect_eq "bad trace exit" $rc 2
[ ! -e bad.json ] || fail "a refused export left bad.json"
expect_eq "error lines" "$(wc -l < err.txt)" 1
