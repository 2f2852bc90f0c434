# The Python annotation module: traced, its calls become exactly the records of the scenario in
# tests/progs/annotate.py; untraced every call is a no-op and the script prints the same.
. "$SRC/tests/lib.sh"
command -v "$PYTHON" >/dev/null || skip "no $PYTHON"
MiB=1048576
base=$((0x7f0000000000))
h() { printf '0x%x' "$1"; }
traced a.trace "$PYTHON" "$SRC/tests/progs/annotate.py" > traced.out 2> traced.err ||
    fail "traced run failed: $(cat traced.out traced.err)"
untraced "$PYTHON" "$SRC/tests/progs/annotate.py" > untraced.out 2> untraced.err ||
    fail "untraced run failed: $(cat untraced.out untraced.err)"
expect_eq "output" "$(cat traced.out)" ok
expect_eq "untraced output" "$(cat untraced.out)" ok
grep -qx 'active=1' traced.err || fail "not active traced: $(cat traced.err)"
grep -qx 'active=0' untraced.err || fail "active untraced: $(cat untraced.err)"
"$GT_REPORT" --dump a.trace > dump.txt || fail "dump failed"
grep -E ' (POOL|BLOCK) ' dump.txt | sed -e 's/^[0-9]* tid=[0-9]* //' -e 's/ stack=[0-9]*$//' > got.txt
cat > want.txt <<W
POOL create pool=0x5150 addr=0x0 size=0 device=0 name="arena"
POOL add_range pool=0x5150 addr=$(h $base) size=$((64 * MiB)) device=-1
BLOCK alloc pool=0x5150 addr=$(h $base) size=$((3 * MiB))
BLOCK alloc pool=0x5150 addr=$(h $((base + 32 * MiB))) size=$((5 * MiB))
BLOCK free pool=0x5150 addr=$(h $base) size=$((3 * MiB))
BLOCK fail pool=0x5150 addr=0x0 size=$((60 * MiB))
POOL remove_range pool=0x5150 addr=$(h $base) size=$((64 * MiB)) device=-1
POOL destroy pool=0x5150 addr=0x0 size=0 device=-1
POOL create pool=0x6160 addr=0x0 size=0 device=2 name="py pool"
POOL add_range pool=0x6160 addr=$(h $base) size=$MiB device=-1
BLOCK alloc pool=0x6160 addr=$(h $((base + 4096))) size=8192
BLOCK free pool=0x6160 addr=$(h $((base + 4096))) size=0
POOL destroy pool=0x6160 addr=0x0 size=0 device=-1
W
diff want.txt got.txt || fail "pool/block records differ from the scenario"
