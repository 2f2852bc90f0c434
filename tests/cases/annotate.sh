# The annotation API (include/gputrace/annotate.h) from C: tests/progs/annotate.c traced writes
# exactly the pool and block records its scenario describes; untraced (weak entry points NULL)
# and with tracing disabled it runs and prints the same.
. "$SRC/tests/lib.sh"
MiB=1048576
for s in pool_create pool_add_range pool_remove_range pool_destroy block_alloc block_free block_fail; do
    nm -D --defined-only "$GT_LIB" | grep -q " T gputrace_annotate_$s\$" ||
        fail "gputrace_annotate_$s is not a strong export of the shim"
done

traced a.trace "$PROGS/annotate" > traced.out 2> traced.err || fail "traced run failed: $(cat traced.out traced.err)"
untraced "$PROGS/annotate" > untraced.out 2> untraced.err || fail "untraced run failed: $(cat untraced.out untraced.err)"
GPUTRACE_DISABLE=1 traced off.trace "$PROGS/annotate" > off.out 2>/dev/null || fail "disabled run failed"
expect_eq "untraced output" "$(cat untraced.out)" "$(cat traced.out)"
expect_eq "disabled output" "$(cat off.out)" "$(cat traced.out)"
grep -qx 'active=1' traced.err || fail "gputrace_active() is not 1 traced"
grep -qx 'active=0' untraced.err || fail "gputrace_active() is not 0 untraced"
grep -qx 'errno=4321' traced.out || fail "annotations changed errno"
grep -qx 'child=0' traced.out || fail "forked child failed"
grep -qx ok traced.out || fail "program did not finish"
[ ! -e off.trace ] || fail "GPUTRACE_DISABLE=1 wrote a trace"

base=$(sed -n 's/^base=//p' traced.out)
[ -n "$base" ] || fail "no base address printed"
h() { printf '0x%x' "$1"; }
"$GT_REPORT" --dump a.trace > dump.txt || fail "dump failed"
# Records without time, thread and stack columns.
grep -E ' (POOL|BLOCK) ' dump.txt | sed -e 's/^[0-9]* tid=[0-9]* //' -e 's/ stack=[0-9]*$//' > got.txt
n254=$(printf 'n%.0s' $(seq 254))
cat > want.txt <<W
POOL create pool=0xa11c addr=0x0 size=0 device=0 name="arena"
POOL add_range pool=0xa11c addr=$(h $base) size=$((16 * MiB)) device=-1
BLOCK alloc pool=0xa11c addr=$(h $base) size=$MiB
BLOCK alloc pool=0xa11c addr=$(h $((base + MiB))) size=$((4 * MiB))
BLOCK alloc pool=0xa11c addr=$(h $((base + 8 * MiB))) size=$((2 * MiB))
BLOCK free pool=0xa11c addr=$(h $((base + MiB))) size=$((4 * MiB))
BLOCK fail pool=0xa11c addr=0x0 size=$((12 * MiB))
BLOCK free pool=0xa11c addr=$(h $base) size=0
POOL remove_range pool=0xa11c addr=$(h $base) size=$((16 * MiB)) device=-1
POOL destroy pool=0xa11c addr=0x0 size=0 device=-1
POOL create pool=0xb0b addr=0x0 size=0 device=-1 name="$n254"
POOL create pool=0xc0c addr=0x0 size=0 device=1 name=""
W
diff want.txt got.txt || fail "pool/block records differ from the scenario"
# Stacks where the API says (default GPUTRACE_STACKS: allocations, not frees).
expect_eq "records with a stack" "$(grep -E ' (POOL create|BLOCK alloc|BLOCK fail) .* stack=[1-9]' dump.txt | wc -l)" 7
expect_eq "free/range records without a stack" "$(grep -E ' (BLOCK free|POOL (add_range|remove_range|destroy)) .*stack=' dump.txt | wc -l)" 0
! grep -q 'pool=0xf04c' dump.txt || fail "the forked child's annotation was recorded"
