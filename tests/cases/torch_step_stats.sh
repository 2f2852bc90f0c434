# The optimizer step hook's memory_stats read (issue 23: 8-26 us a call, as much as a launch-bound
# step's whole overhead): read at an optimizer's first step, at a step whose set of storages
# changed, and otherwise once 200x the last read's own time has passed; the other steps' records
# say "unread" (GT_TORCH_STEP_UNREAD). On the real PyTorch with 400 sub-millisecond AdamW steps
# (tests/torch/step_stats.py, a parameter group added at step 250): every step is written with
# its roles; the read ones hold PyTorch's own memory_allocated() and memory_reserved() of that
# step; step 1 and step 250 are read, most others not; the report's per-step series is the read
# steps, exactly.
. "$SRC/tests/lib.sh"
. "$SRC/tests/torch/env.sh"
torch_run -t "$PWD/run.trace" "$TORCH_PY" "$SRC/tests/torch/step_stats.py" pt.json > run.out 2>&1 ||
    { cat run.out; fail "step_stats.py"; }
"$GT_REPORT" --dump run.trace > run.dump || fail "dump failed"
"$GT_REPORT" --json run.trace > run.json || fail "report failed"
"$PYTHON" - run.dump run.json pt.json <<'P' || fail "step records differ from PyTorch's figures"
import json, sys
steps = []
for line in open(sys.argv[1]):
    f = line.split()
    if len(f) > 3 and f[2] == "TORCH_STEP":
        kv = dict(x.split("=", 1) for x in f if "=" in x)
        steps.append((int(kv["step"]), kv["allocated"], kv["reserved"], kv["weights"]))
pt = json.load(open(sys.argv[3]))
points, add_at = pt["points"], pt["add_at"]
assert [s[0] for s in steps] == list(range(1, len(points) + 1)), \
    f"steps written: {[s[0] for s in steps][:10]}... ({len(steps)}), want 1..{len(points)}"
read = [s for s in steps if s[1] != "unread"]
assert all((s[1] == "unread") == (s[2] == "unread") for s in steps), "allocated and reserved read apart"
for s in read:
    got, want = [int(s[1]), int(s[2])], points[s[0] - 1]
    assert got == want, f"step {s[0]}: allocated, reserved {got}, PyTorch's {want}"
nums = [s[0] for s in read]
assert 1 in nums, "the first step was not read"
assert add_at in nums, f"step {add_at} (a new parameter group) was not read: {nums}"
assert steps[add_at - 1][3] != steps[add_at - 2][3], "the new group's weights are not in its step"
assert len(read) <= len(steps) // 2, f"{len(read)} of {len(steps)} steps read: steps this short read at most every few"
assert len(read) >= 3, f"only steps {nums} read"
series = json.load(open(sys.argv[2]))["memory"]["allocators"]
ser = [a for a in series if a.get("category_series")]
assert len(ser) == 1, f"{len(ser)} allocators with a series"
pts = ser[0]["category_series"]
assert [(p["step"], p["allocated"], p["reserved"]) for p in pts] == \
    [(s[0], int(s[1]), int(s[2])) for s in read], \
    f"series {[(p['step'], p['allocated']) for p in pts][:5]} != read steps {read[:5]}"
print(f"steps: {len(steps)} written, {len(read)} read ({nums[:6]}...), each PyTorch's figures; series = the read steps")
P
