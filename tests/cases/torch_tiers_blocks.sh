# Blocks PyTorch does not split, replayed exactly (GPUTRACE_TORCH=history): tests/torch/tiers_blocks.py
# (real PyTorch on the simulated stack) trains on tensors whose blocks are bigger than their
# rounded requests: 11.25 MiB requests that leave 0.75 MiB of a 12 MiB block (the large pool
# splits only when more than 1 MiB remains), and with max_split_size_mb:32 40.5 MiB requests
# that leave 1.5 MiB of a 42 MiB block (no split at or above max_split_size). The replay follows
# these rules (tiers_replay.c; max_split_size from the snapshot record), so every batch ends in
# its snapshot's state and the breakdown at the peak is PyTorch's max_memory_allocated() to the
# byte, with weights and AdamW's state equal to their blocks in PyTorch's own snapshot.
# roundup: with roundup_power2_divisions:4 PyTorch rounds 1,200,000-byte parameters to 1,310,720
# and 2,400,000-byte inputs to 2,621,440 (the next quarter of their power-of-2 interval), and with
# the list form [1:4,2:2,>:8] the inputs (interval 2 MiB: 2 divisions) to 3 MiB: the replay
# rounds as PyTorch did, from the divisions per interval the snapshot record carries (the
# snapshot's allocator_settings), and the same checks hold; rounding to 512 fails them.
. "$SRC/tests/lib.sh"
. "$SRC/tests/torch/env.sh"
for c in unsplit maxsplit roundup roundup_list; do
    conf= script=$c
    case $c in
        maxsplit) conf=max_split_size_mb:32 ;;
        roundup) conf=roundup_power2_divisions:4 ;;
        roundup_list) conf='roundup_power2_divisions:[1:4,2:2,>:8]' script=roundup ;;
    esac
    PYTORCH_CUDA_ALLOC_CONF=$conf GPUTRACE_TORCH=history \
        tiers_run "$PWD/$c.trace" $c.out "$TORCH_PY" "$SRC/tests/torch/tiers_blocks.py" $script $c.json ||
        { cat $c.out; fail "tiers_blocks.py $c"; }
    "$GT_REPORT" --json $c.trace > $c.r.json || fail "report $c"
    "$PYTHON" - $c.r.json $c.json <<'PY' || fail "$c: the replayed peak differs from PyTorch's figures"
import json, sys
rep, pt = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
a, p = rep["memory"]["allocators"][0], pt["devices"]["0"]
pb = a["peak_breakdown"]
cats = {c["category"]: c["bytes"] for c in pb["by_category"]}
bad = []
def eq(what, got, want):
    print(f"{pt['case']}: {what}: {got} (want {want})")
    if got != want: bad.append(what)
eq("blocks bigger than their rounded requests", p["weight_blocks"] > 2 * p["rounded_request"], True)
eq("categories from the replay", pb["categories_source"], "replay")
eq("every batch ends in its snapshot's state", pb["replay"]["inconsistent"], 0)
eq("allocated at the breakdown = max_memory_allocated()", pb["categories_allocated_bytes"], p["max_memory_allocated"])
eq("weights = the parameters' blocks", cats["weights"], p["weight_blocks"])
eq("optimizer state = AdamW's state blocks", cats["optimizer_state"], p["state_blocks"])
eq("the categories add up to reserved then", sum(cats.values()), pb["categories_reserved_bytes"])
sys.exit(1 if bad else 0)
PY
done
