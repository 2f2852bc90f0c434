# --html draws PyTorch's memory by category (tests/torch/tiers.py adamw, real PyTorch on the
# simulated stack): in headless Chromium, the fullest snapshot's bar has one rect per non-empty
# category with the report's bytes (which torch_tiers checks against PyTorch's objects), the
# per-step chart one layer per series key reaching the report's maximum, one column per snapshot
# stacked to its reserved bytes, and the optimizer's line says AdamW's state is 2.0x its weights.
# The main memory chart stacks memory.category_series: one layer per category with bytes, each
# point's layers adding up to its live bytes, the stack's top drawn at the peak's height (the
# path itself, through the chart's scale) and a hover target per point with its figures.
. "$SRC/tests/lib.sh"
. "$SRC/tests/torch/env.sh"
CHROMIUM=$(command -v chromium || command -v chromium-browser) || skip "chromium not installed (make deps)"
tiers_run "$PWD/t.trace" out.txt "$TORCH_PY" "$SRC/tests/torch/tiers.py" adamw pt.json ||
    { cat out.txt; fail "tiers.py adamw"; }
"$GT_REPORT" --json t.trace > r.json || fail "--json"
"$GT_REPORT" --html t.html t.trace || fail "--html"
timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu --user-data-dir="$PWD/chrome" \
    --virtual-time-budget=10000 --dump-dom "file://$PWD/t.html" > t.dom 2> chrome.err ||
    fail "chromium: $(tail -n 3 chrome.err)"
grep -q 'data-drawn="1"' t.dom || fail "page not drawn"
! grep -q 'class="js-error"' t.dom || fail "$(grep -o 'class="js-error">[^<]*' t.dom)"
"$PYTHON" - t.dom r.json <<'PY' || fail "the drawn categories do not match the report"
import json, re, sys
dom, rep = open(sys.argv[1]).read(), json.load(open(sys.argv[2]))
a = rep["memory"]["allocators"][0]
bad = []
def eq(what, got, want):
    print(f"{what}: {got} (want {want})")
    if got != want: bad.append(what)
bars = {c: int(b) for c, b in re.findall(r'class="tier" data-category="(\w+)" data-bytes="(\d+)"', dom)}
eq("bar", bars, {c["category"]: c["bytes"] for c in a["peak_breakdown"]["by_category"] if c["bytes"]})
eq("activations drawn > 0", bars.get("activations", 0) > 0, True)
layers = {c: int(m) for c, m in re.findall(r'class="tier-series" data-category="(\w+)" data-max="(\d+)"', dom)}
keys = ["weights", "gradients", "optimizer_state", "other_allocated", "cache"]
eq("series layers", layers, {k: max(p[k] or 0 for p in a["category_series"]) for k in keys})
cols = re.findall(r'<g class="tiersnap" data-why="(\w+)" data-reserved="(\d+)">(.*?)</g>', dom, re.S)
eq("snapshot columns", [(w, int(rv)) for w, rv, _ in cols],
   [(q["why"], q["reserved"]) for q in a["category_snapshots"]])
eq("each column stacks to its reserved", [sum(int(b) for b in re.findall(r'data-bytes="(\d+)"', g)) for _, _, g in cols],
   [q["reserved"] for q in a["category_snapshots"]])
eq("optimizer line", "AdamW: state 8.00 MiB = 2.0x weights (AdamW keeps 2 fp32 tensors per parameter)" in dom, True)
m = rep["memory"]
ser = m["category_series"] or []
cats = ["weights", "gradients", "optimizer_state", "activations", "temporary", "workspace", "other", "pytorch_reserved", "cache"]
peak = [p for p in ser if p["at"] == "peak"]
eq("one peak point", len(peak), 1)
peak = peak[0] if peak else {c: 0 for c in cats + ["time_ns"]}
eq("each point adds up to its live bytes", [sum(p[c] for c in cats) for p in ser], [p["total_bytes"] for p in ser])
want = {}
for c in m["peak_breakdown"]["by_category"]:
    want[c["category"]] = want.get(c["category"], 0) + c["bytes"]
eq("the peak point is the peak's breakdown", {c: peak[c] for c in cats if peak[c]}, want)
eq("the peak point's total", peak.get("total_bytes"), m["peak_bytes"])
svg = re.search(r'<svg[^>]*class="memchart"[^>]*data-y0="([\d.]+)" data-ymax-px="([\d.]+)" data-ymax="(\d+)"', dom)
layers = re.findall(r'<path d="([^"]*)"[^>]*class="cat-layer" data-category="(\w+)" data-peak="(\d*)" data-peak-top="(\d*)"', dom)
eq("one layer per category with bytes", [c for _, c, _, _ in layers], [c for c in cats if any(p[c] for p in ser)])
eq("layers at the peak", {c: int(v) for _, c, v, _ in layers}, {c: peak[c] for c in cats if any(p[c] for p in ser)})
eq("the stack's top at the peak", int(layers[-1][3]) if layers else None, m["peak_bytes"])
pt = re.search(r'<rect x="([\d.]+)"[^>]*class="cat-point" data-at="peak"[^>]*><title>([^<]*)</title>', dom)
eq("a hover target at the peak", bool(pt), True)
if svg and layers and pt:
    y0, ytop, ymax = float(svg[1]), float(svg[2]), int(svg[3])
    px, py = float(pt[1]) + 3, y0 + (ytop - y0) * m["peak_bytes"] / ymax
    xy = [tuple(map(float, v)) for v in re.findall(r'[ML] ([\d.]+) ([\d.]+)', layers[-1][0])]
    eq("the top layer's edge passes through the peak", any(abs(x - px) < 0.01 and abs(y - py) < 0.01 for x, y in xy), True)
    eq("the peak's figures on hover", [f"{c.replace('_', ' ', 1)}:" in pt[2] for c in cats if peak[c] and c != "pytorch_reserved"], [True] * len([c for c in cats if peak[c] and c != "pytorch_reserved"]))
sys.exit(1 if bad else 0)
PY
