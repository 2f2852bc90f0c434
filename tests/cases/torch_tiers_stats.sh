# Memory by category at GPUTRACE_TORCH=stats (no snapshots): no breakdown of a snapshot
# (by_category null, the text says nothing of categories), but the optimizer's reads are there:
# AdamW's state is 2.0x its weights and every step's figures are PyTorch's (tests/torch/tiers.py).
. "$SRC/tests/lib.sh"
. "$SRC/tests/torch/env.sh"
# Open defect (issue 21): under AddressSanitizer tiers.py aborts now and then at exit, after
# its last line ("terminate called without an active exception"; 2 of 8 cases in one .ci/run,
# 0 of 10 runs outside the runner); until it is understood these cases run in the plain build only.
[ -z "$asan_rt" ] || skip "AddressSanitizer build: tiers.py aborts intermittently at exit under ASan (std::terminate, open defect of issue 21); the plain build runs this case"
GPUTRACE_TORCH=stats torch_run -t "$PWD/t.trace" "$TORCH_PY" "$SRC/tests/torch/tiers.py" adamw pt.json > out.txt 2>&1 ||
    { cat out.txt; fail "tiers.py adamw"; }
"$GT_REPORT" --json t.trace > r.json || fail "report"
"$GT_REPORT" t.trace > r.txt || fail "text report"
! grep -q 'by category' r.txt || fail "a breakdown without snapshots"
"$PYTHON" - r.json pt.json <<'PY' || fail "figures differ"
import json, sys
a = json.load(open(sys.argv[1]))["memory"]["allocators"][0]
pt = json.load(open(sys.argv[2]))
o = a["optimizers"][0]
assert a["peak_breakdown"]["by_category"] is None, a["peak_breakdown"]
assert o["state_to_weights"] == 2.0 and o["steps"] == len(pt["points"]), o
got = [[p["weights"], p["gradients"], p["optimizer_state"]] for p in a["category_series"]]
want = [[q["after_step"][k] for k in ("weights", "gradients", "optimizer_state")] for q in pt["points"]]
assert got == want, (got, want)
print("stats level: series", got)
PY
