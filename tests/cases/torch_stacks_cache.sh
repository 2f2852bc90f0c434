# The unwinder's cache of walks (preload/unwind.c, "the cache") on the real PyTorch: the step
# workload of bench/torch_overhead.py (forward, backward on PyTorch's autograd thread, AdamW: a few
# dozen launches from as many places, repeated every step) traced with the default walker and with
# GPUTRACE_UNWIND=libunwind gives the same launches per full stack (folded stacks: every native
# and Python frame) and the same allocation stacks; with the default walker most walks of each
# thread that launched were finished from the cache (GPUTRACE_DEBUG's count), so the comparison
# covers them; so were most captures by the cache of captures (the main thread's with Python
# frames, the autograd thread's native ones), which GPUTRACE_UNWIND=libunwind does not use either.
. "$SRC/tests/lib.sh"
. "$SRC/tests/torch/env.sh"
B="$SRC/bench/torch_overhead.py"
for mode in fast libunwind; do
    GPUTRACE_DEBUG=1 GPUTRACE_UNWIND=$mode GPUTRACE_SAMPLE_HZ=0 \
        torch_run -t "$PWD/$mode.trace" "$TORCH_PY" "$B" step 60 > $mode.out 2> $mode.err ||
        { cat $mode.out $mode.err; fail "step 60 ($mode)"; }
    for what in launch alloc; do
        "$GT_REPORT" --folded $what "$mode.trace" | sort > $mode.$what.folded ||
            fail "--folded $what ($mode)"
    done
done
for what in launch alloc; do
    cmp -s fast.$what.folded libunwind.$what.folded || {
        diff fast.$what.folded libunwind.$what.folded | cut -c1-400 | head -20
        fail "folded $what stacks differ between the default walker and libunwind"
    }
done
n=$(awk '{s += $NF} END {print s + 0}' fast.launch.folded)
[ "$n" -ge 2400 ] || fail "launches in the folded stacks: $n (want >= 2400: 60 steps of ~40)"
sites=$(wc -l < fast.launch.folded)
[ "$sites" -ge 20 ] || fail "distinct launch stacks: $sites (want >= 20)"
# per thread that walked: "W stacks walked by the cached rules, 0 by libunwind (...), C of them
# finished from the cache"; the threads that launched walked ~20 stacks a step each
walks=$(sed -n 's/^gputrace: thread [0-9]*: \([0-9]*\) stacks walked by the cached rules, [0-9]* by libunwind (.*), \([0-9]*\) of them finished from the cache;.*/\1 \2/p' fast.err)
echo "$walks" | awk '$1 >= 1000 {busy++; if ($2 * 2 < $1) bad++} END {exit !(busy >= 2 && !bad)}' ||
    { echo "$walks"; fail "want two threads with >= 1000 walks, at least half of each from the cache"; }
echo "$walks" | awk '{print "walks " $1 ", from the cache " $2}'
# the cache of captures with Python frames (preload/stacks.c): the main thread's ~20 launches a
# step, each from another place than the one before, found there after the first step (the
# libunwind run makes every capture in full: the comparison above covers the cache's stacks)
pyc=$(sed -n 's/^gputrace: thread [0-9]*: \([0-9]*\) stacks with Python frames found in the cache of captures$/\1/p' fast.err)
[ -n "$pyc" ] && [ "$pyc" -ge 1000 ] || fail "captures found in the cache of captures: '$pyc' (want >= 1000)"
! grep -q 'found in the cache of captures' libunwind.err || fail "GPUTRACE_UNWIND=libunwind used the cache of captures"
# and PyTorch's autograd thread's native stacks (the backward pass's launches), whose walks came
# from the walk cache
nat=$(sed -n 's/^gputrace: thread [0-9]*: \([0-9]*\) native stacks found in the cache of captures$/\1/p' fast.err)
[ -n "$nat" ] && [ "$nat" -ge 1000 ] || fail "native captures found in the cache of captures: '$nat' (want >= 1000)"
echo "cache of captures: $pyc captures with Python frames, $nat native ones"
echo "cache: the same launch and allocation stacks as libunwind over $n launches from $sites stacks"
