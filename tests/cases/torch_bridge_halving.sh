# A catch-and-continue loop (OOM caught, request halved) gives one OOM per attempt, each with its own figures (tests/torch/bridge.py halving; figures compared by tests/torch/bridge_check.py).
. "$SRC/tests/lib.sh"
. "$SRC/tests/torch/env.sh"
torch_run -t "$PWD/t.trace" "$TORCH_PY" "$SRC/tests/torch/bridge.py" halving pt.json > out.txt 2>&1 ||
    { cat out.txt; fail "bridge.py halving"; }
"$GT_REPORT" --json t.trace > r.json || fail "report"
"$PYTHON" "$SRC/tests/torch/bridge_check.py" halving r.json pt.json "$SRC/tests/torch/bridge.py" || fail "figures differ"
# The exit sample (the bridge's atexit, the program's tensors still alive) holds memory_stats()'s
# figures as the program read them last: every field of the TORCH_STATS record (the bridge reads
# them from memory_stats_as_nested_dict(), not from the flattened memory_stats()).
"$GT_REPORT" --dump t.trace | grep ' TORCH_STATS exit ' > exit.txt || fail "no exit TORCH_STATS record"
"$PYTHON" - exit.txt pt.json <<'PY' || fail "the exit sample differs from memory_stats()"
import json, sys
rec = dict(f.split("=", 1) for f in open(sys.argv[1]).read().split() if "=" in f)
pt = json.load(open(sys.argv[2]))
fields = {"allocated": "allocated_bytes.all.current", "allocated_peak": "allocated_bytes.all.peak",
          "reserved": "reserved_bytes.all.current", "reserved_peak": "reserved_bytes.all.peak",
          "active": "active_bytes.all.current", "inactive_split": "inactive_split_bytes.all.current",
          "requested": "requested_bytes.all.current", "retries": "num_alloc_retries",
          "ooms": "num_ooms", "segments": "segment.all.current"}
bad = [(f, rec.get(f), pt[k]) for f, k in fields.items() if int(rec.get(f, -1)) != pt[k]]
print("exit sample:", rec, "\nmemory_stats():", {k: pt[k] for k in fields.values()})
sys.exit("differ: %s" % bad if bad else 0)
PY
