# The optimizer step hook follows each optimizer's set exactly, whichever way its fingerprint is
# taken (issue 23: map() over Tensor.data_ptr, else one call per tensor where a gradient is None),
# and an optimizer holding nothing on a CUDA device neither writes a step nor ends the bridge.
# On the real PyTorch (tests/torch/step_hook.py: a tensor put into and taken out of a state, a
# parameter whose gradient is None at two steps of three, an optimizer whose gradients stop, an
# OOM snapshot between two steps, an SGD over a CPU parameter): every step of the three CUDA
# optimizers is written once, in order, with PyTorch's own bytes of weights, gradients and
# optimizer state at that step, and the set written last (TORCH_ROLES) is the step's own, address
# by address (a snapshot between steps writes the set without gradients; the step after it
# once kept that one when its fingerprint matched the step before); the CPU one writes no
# step; periodic memory_stats samples go on after the last step (an empty record from the hook
# once told the shim that the bridge had closed).
. "$SRC/tests/lib.sh"
. "$SRC/tests/torch/env.sh"
GPUTRACE_SAMPLE_MS=20 torch_run -t "$PWD/run.trace" "$TORCH_PY" "$SRC/tests/torch/step_hook.py" \
    pt.json > run.out 2>&1 || { cat run.out; fail "step_hook.py"; }
grep -q "^step_hook: ok" run.out || { cat run.out; fail "step_hook.py did not finish"; }
"$GT_REPORT" --dump run.trace > run.dump || fail "dump failed"
"$PYTHON" - run.dump pt.json <<'P' || fail "the step records differ from PyTorch's figures"
import json, sys
steps, last_step, periodic = {}, 0, []
sets, held = {}, {}  # optimizer -> its set as the trace has it: {role: [address, ...]}
for line in open(sys.argv[1]):
    f = line.split()
    if len(f) < 4:
        continue
    kv = dict(x.split("=", 1) for x in f if "=" in x)
    if f[2] == "TORCH_ROLES":
        o = int(kv["optimizer"])
        if f[3] == "first":
            sets[o] = {}
        for x in f:
            if "@" in x and ":0x" in x:
                role, rest = x.split("@", 1)
                sets[o].setdefault(role, []).append(int(rest.split(":")[1].split("+")[0], 16))
    elif f[2] == "TORCH_STEP":
        o = int(kv["optimizer"])
        fig = [int(kv[k].split("/")[0]) for k in ("weights", "gradients", "optimizer_state")]
        now = {r: sorted(a) for r, a in sets.get(o, {}).items()}
        steps.setdefault(kv["name"], []).append((o, int(kv["step"]), fig, now))
        last_step = int(f[0])
    elif f[2] == "TORCH_STATS" and f[3] == "periodic":
        periodic.append(int(f[0]))
pt = json.load(open(sys.argv[2]))
assert set(steps) == {'"AdamW"'}, f"optimizers with steps: {sorted(steps)} (the SGD over a CPU tensor holds nothing on CUDA)"
by_opt = {}
for o, n, fig, now in steps['"AdamW"']:
    by_opt.setdefault(o, []).append((n, fig, now))
names = ("sparse", "dense", "oom")
assert len(by_opt) == len(names), f"{len(by_opt)} AdamW optimizers with steps"
for (o, recs), name in zip(sorted(by_opt.items()), names):
    want = pt[name]
    assert [n for n, _, _ in recs] == list(range(1, len(want) + 1)), \
        f"{name}: steps {[n for n, _, _ in recs][:8]}... ({len(recs)}), want 1..{len(want)}"
    for n, fig, now in recs:
        assert fig == want[n - 1][:3], f"{name} step {n}: weights, gradients, state {fig}, PyTorch's {want[n - 1][:3]}"
        w = {r: a for r, a in want[n - 1][3].items() if a}
        assert now == w, f"{name} step {n}: the set written last {now}, PyTorch's {w}"
after = [t for t in periodic if t > last_step]
assert len(after) >= 3, f"{len(after)} periodic samples after the last step (1 s; samples asked every 20 ms, marked due by the flusher, every GPUTRACE_FLUSH_MS = 100 ms): the bridge stopped"
print(f"steps: {', '.join(f'{n} {len(by_opt[o])}' for o, n in zip(sorted(by_opt), names))}, each "
      f"PyTorch's figures and its set as written last; {len(after)} periodic samples after the last")
P
