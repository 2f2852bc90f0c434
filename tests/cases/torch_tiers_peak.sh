# Device memory at the process peak by category on the real PyTorch (tests/torch/tiers.py adamw):
# PyTorch's segments are all the device memory, split by the allocator's snapshot nearest the peak
# that reserved exactly those bytes; the lines add up to PyTorch's max_memory_reserved(), and the
# weights and optimizer state equal the storages of PyTorch's own parameters and AdamW's state.
. "$SRC/tests/lib.sh"
. "$SRC/tests/torch/env.sh"
tiers_run "$PWD/a.trace" a.out "$TORCH_PY" "$SRC/tests/torch/tiers.py" adamw a.pt.json ||
    { cat a.out; fail "tiers.py adamw"; }
"$GT_REPORT" --json a.trace >a.json || fail "report"
pt() { jget a.pt.json "$1"; }
pb="d['memory']['peak_breakdown']"
reserved=$(pt "d['max_memory_reserved']")
expect_eq "peak = max_memory_reserved" "$(jget a.json "$pb['peak_bytes']")" "$reserved"
expect_eq "lines add up" "$(jget a.json "sum(c['bytes'] for c in $pb['by_category'])")" "$reserved"
expect_eq "all from the snapshot" "$(jget a.json "sorted(set(c['source'] for c in $pb['by_category']))")" "['snapshot']"
expect_eq "snapshot used" "$(jget a.json "($pb['by_category_snapshot']['reserved_bytes'], $pb['by_category_snapshot']['pytorch_reserved_at_peak'])")" "($reserved, $reserved)"
cat_bytes() { jget a.json "sum(c['bytes'] for c in $pb['by_category'] if c['category'] == '$1')"; }
expect_eq "weights" "$(cat_bytes weights)" "$(pt "d['points'][-1]['after_step']['weights']")"
expect_eq "optimizer state" "$(cat_bytes optimizer_state)" "$(pt "d['points'][-1]['after_step']['optimizer_state']")"
[ "$(cat_bytes activations)" -gt 0 ] || fail "no activations at the peak"
"$GT_REPORT" a.trace >a.txt || fail "text report"
grep -q "^            \* PyTorch's segments as its snapshot at .* held them$" a.txt || fail "text: $(grep -A1 'by what' a.txt)"
grep -q "^  by what   .*weights\* " a.txt || fail "text: $(grep 'by what' a.txt)"
echo "process peak by category: $(jget a.json "[(c['category'], c['bytes']) for c in $pb['by_category']]")"
