# The replay of PyTorch's block events against random allocator churn (GPUTRACE_TORCH=history):
# tests/torch/replay_churn.py runs the real caching allocator through phases of random
# allocations and frees in both pools (splits, merges, blocks bigger than their requests,
# segments of their own, empty_cache), each closed by an out-of-memory error whose snapshot (the
# bridge's OOM observer) ends the phase's batch of events. Each batch, replayed from the
# snapshot before it (tiers_replay.c), must end in that snapshot's state: every batch replayed,
# none inconsistent, for each seed and with the allocator settings the replay models
# (max_split_size, roundup_power2_divisions).
. "$SRC/tests/lib.sh"
. "$SRC/tests/torch/env.sh"
for run in 1:default 2:max_split_size_mb:24 3:roundup_power2_divisions:4; do
    seed=${run%%:*} conf=${run#*:}
    [ "$conf" = default ] && conf=
    PYTORCH_CUDA_ALLOC_CONF=$conf GPUTRACE_TORCH=history torch_run -t "$PWD/c$seed.trace" \
        "$TORCH_PY" "$SRC/tests/torch/replay_churn.py" $seed 12 300 c$seed.json > c$seed.out 2>&1 ||
        { cat c$seed.out; fail "replay_churn.py seed $seed (${conf:-default settings})"; }
    "$GT_REPORT" --json c$seed.trace > c$seed.r.json || fail "report, seed $seed"
    "$PYTHON" - c$seed.r.json c$seed.json "$seed ${conf:-default}" <<'PY' || fail "seed $seed (${conf:-default settings}): a batch did not replay to its snapshot"
import json, sys
rep, pt = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
a = rep["memory"]["allocators"][0]
r = a["peak_breakdown"]["replay"]
print(f"{sys.argv[3]}: {pt['ooms']} OOMs; batches {r['batches']}, replayed {r['replayed']}, "
      f"inconsistent {r['inconsistent']}; peak {a['peak_allocated_bytes']} (PyTorch's "
      f"{pt['max_memory_allocated']})")
ok = (r["inconsistent"] == 0 and r["replayed"] == r["batches"] and r["batches"] >= pt["ooms"] and
      pt["ooms"] >= 12 and a["peak_allocated_bytes"] == pt["max_memory_allocated"])
sys.exit(0 if ok else 1)
PY
done
