# Memory by category on two devices (GPUTRACE_TORCH=history; the simulated driver with
# GTSIM_DEVICES=2). tests/torch/tiers_blocks.py devices (real PyTorch): one AdamW over parameters
# on cuda:0 and, twice as large, on cuda:1. Each device is sampled (the bridge samples every
# device PyTorch reserved memory on, not only the current one) and replayed from its own events
# (a device that held nothing when the bridge began recording starts from zero,
# GT_TRACE_FROM_EMPTY; one that held memory from the bridge's start sample): per device, the
# breakdown at the peak is max_memory_allocated(device) to the byte, weights and AdamW's state
# equal that device's blocks in PyTorch's snapshot. At the process peak, PyTorch's segments on
# both devices are split too, each device by its own replay
# (memory.peak_breakdown.by_category_devices): each category line is the sum of the devices'
# replayed categories, the lines add up to the peak, and the chart's point at the peak is them
# (tests/torch/tiers_devices_check.py). torch_tiers_devices_late.sh: the same when cuda:1 holds
# memory before the bridge installs.
. "$SRC/tests/lib.sh"
. "$SRC/tests/torch/env.sh"
case=${TIERS_DEVICES_CASE:-devices}
GTSIM_DEVICES=2 GPUTRACE_TORCH=history tiers_run "$PWD/t.trace" out.txt "$TORCH_PY" "$SRC/tests/torch/tiers_blocks.py" "$case" pt.json ||
    { cat out.txt; fail "tiers_blocks.py $case"; }
"$GT_REPORT" --json t.trace > r.json || fail "report"
"$PYTHON" "$SRC/tests/torch/tiers_devices_check.py" r.json pt.json ||
    fail "the categories per device differ from PyTorch's figures"
