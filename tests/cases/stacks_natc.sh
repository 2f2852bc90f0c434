# The cache of native captures (preload/stacks.c): three allocating functions called in turn from
# one call site through a function pointer (tests/progs/stacks_natc.c), so that no walk repeats
# either of the two before it; most captures are answered by the cache of native captures
# (GPUTRACE_DEBUG's count), and the report still has three sites with 300 allocations each, as
# with GPUTRACE_UNWIND=libunwind (every capture made in full).
. "$SRC/tests/lib.sh"
prog=tests/progs/stacks_natc.c
line() { grep -n "SITE:$1 " "$SRC/$prog" | cut -d: -f1; }
for mode in fast libunwind; do
    GPUTRACE_DEBUG=1 GPUTRACE_UNWIND=$mode traced $mode.trace "$PROGS/stacks_natc" 300 > $mode.out 2> $mode.err ||
        fail "program failed ($mode): $(cat $mode.out $mode.err | tail -5)"
    "$GT_REPORT" --json $mode.trace > $mode.json || fail "report failed ($mode)"
    got=$(jget $mode.json "sorted((s['function'], s['line'], s['count']) for s in d['memory']['by_site'])")
    expect_eq "sites ($mode)" "$got" "[('site_a', $(line site_a), 300), ('site_b', $(line site_b), 300), ('site_c', $(line site_c), 300)]"
done
nat=$(sed -n 's/^gputrace: thread [0-9]*: \([0-9]*\) native stacks found in the cache of captures$/\1/p' fast.err)
[ -n "$nat" ] && [ "$nat" -ge 800 ] || { grep gputrace: fast.err | head; fail "captures from the cache of native captures: '$nat' (want >= 800 of 900)"; }
! grep -q 'found in the cache of captures' libunwind.err || fail "GPUTRACE_UNWIND=libunwind used the cache of captures"
echo "three sites of 300 allocations, $nat of the 900 captures from the cache of native captures"
