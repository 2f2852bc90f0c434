# The exports of issue 19 on the real PyTorch (tests/torch/traced.py on the simulated stack: a
# training loop and cache churn): Holistic Trace Analysis reads the --chrome-trace export of
# PyTorch's own kernels and its temporal and per-stream idle breakdowns equal the report's
# (tests/progs/hta_check.py); the weights of --folded peak add up to the peak, which is
# PyTorch's own max_memory_reserved; the --html page draws in headless Chromium without errors,
# every kernel of the run on its timeline.
. "$SRC/tests/lib.sh"
. "$SRC/tests/torch/env.sh"
"$TORCH_PY" -c "import hta" 2>/dev/null || skip "holistictraceanalysis not installed in ${GT_VENV:-$SRC/.venv}"
torch_run -t "$PWD/t.trace" "$TORCH_PY" "$SRC/tests/torch/traced.py" stats.json > out.txt 2>&1 ||
    { cat out.txt; fail "traced.py"; }
"$GT_REPORT" --json t.trace > r.json || fail "report"
mkdir hta
"$GT_REPORT" --chrome-trace hta/torch.json t.trace || fail "--chrome-trace"
HTA_DISABLE_NS_ROUNDING=1 "$TORCH_PY" "$SRC/tests/progs/hta_check.py" hta r.json > hta.out 2>&1 ||
    fail "HTA: $(tail -n 3 hta.out)"
grep -q "figures equal (exact)" hta.out || fail "HTA: $(tail -n 1 hta.out)"
kernels=$(jget r.json "d['timeline']['kernel_count']")
[ "$kernels" -gt 10 ] || fail "only $kernels kernels"
"$GT_REPORT" --folded peak t.trace > peak.folded || fail "--folded"
expect_eq "folded peak = PyTorch's max_memory_reserved" \
    "$(awk '{ s += $NF } END { print s + 0 }' peak.folded)" "$(jget stats.json "d['max_memory_reserved']")"
CHROMIUM=$(command -v chromium || command -v chromium-browser) || skip "chromium not installed (make deps)"
"$GT_REPORT" --html t.html t.trace || fail "--html"
html_dom t.html
expect_eq "kernels on the page's timeline" "$(grep -o 'class="kernel"' t.dom | wc -l)" "$kernels"
