# A peak in the last step, then os._exit(3) (GPUTRACE_TORCH=history): the process skips atexit, so
# the bridge's exit snapshot, with the block events of the last batch, comes from the shim's
# _exit wrapper (preload/exit.c, torch.c's gt_torch_exit: the caller is the interpreter, its
# thread holds the GIL). tests/torch/tiers_blocks.py last_exit (real PyTorch on the simulated
# stack): the exit status stays 3, the report replays the last batch to PyTorch's
# max_memory_allocated() (printed by the script before _exit) and the trace has no end record
# (the tracer's exit path did not run: clean_end false). Without the wrapper the last batch has
# no closing snapshot and the breakdown stops at the last peak snapshot, below the peak.
. "$SRC/tests/lib.sh"
. "$SRC/tests/torch/env.sh"
rc=0
GPUTRACE_TORCH=history tiers_run "$PWD/t.trace" out.txt "$TORCH_PY" "$SRC/tests/torch/tiers_blocks.py" last_exit pt.json || rc=$?
cat out.txt
expect_eq "the exit status of os._exit(3)" "$rc" 3
grep -q '^tiers_blocks: ok last_exit' out.txt || fail "the script did not reach its end"
"$GT_REPORT" --json t.trace > r.json || fail "report"
"$PYTHON" - r.json pt.json <<'PY' || fail "the last step's peak is not in the trace after os._exit"
import json, sys
rep, pt = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
p = pt["devices"]["0"]
a = rep["memory"]["allocators"][0]
pb = a["peak_breakdown"]
cats = {c["category"]: c["bytes"] for c in pb["by_category"]}
snaps = a["category_snapshots"]
bad = []
def eq(what, got, want):
    print(f"{what}: {got} (want {want})")
    if got != want: bad.append(what)
eq("the tracer's exit path did not run", rep["trace"]["clean_end"], False)
eq("the last snapshot is the exit one", snaps[-1]["why"], "exit")
eq("the fullest snapshot is below the peak", pb["snapshot_allocated_bytes"] < p["max_memory_allocated"], True)
eq("categories from the replay", pb["categories_source"], "replay")
eq("every batch ends in its snapshot's state", pb["replay"]["inconsistent"], 0)
eq("allocated at the breakdown = max_memory_allocated()", pb["categories_allocated_bytes"], p["max_memory_allocated"])
eq("weights = the parameters' blocks", cats["weights"], p["weight_blocks"])
eq("optimizer state = AdamW's state blocks", cats["optimizer_state"], p["state_blocks"])
sys.exit(1 if bad else 0)
PY
