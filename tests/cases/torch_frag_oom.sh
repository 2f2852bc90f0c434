# A fragmentation OOM raised by the real PyTorch: 153 x 6 MiB on a 1 GiB device (51 segments of
# 20 MiB), two of every three freed, 64 MiB asked. PyTorch's message and memory_stats() agree
# (checked in frag_oom.py) and give the figures of ../shared/reference/pytorch_allocator.md.
. "$SRC/tests/lib.sh"
. "$SRC/tests/torch/env.sh"
torch_run "$TORCH_PY" "$SRC/tests/torch/frag_oom.py" > out.txt 2>&1 || { cat out.txt; fail "frag_oom.py"; }
cat out.txt
expect_eq "figures" "$(head -n 1 out.txt)" \
    "requested=67108864 allocated=320864256 reserved=1069547520 unallocated=748683264 largest_free=14680064 segments=51"
# the device figures come from the driver, the process's own use from the simulated NVML
grep -q 'GPU 0 has a total capacity of 1024.00 MiB of which 4.00 MiB is free. Including non-PyTorch memory, this process has 1020.00 MiB memory in use.' out.txt ||
    fail "PyTorch's device figures differ"
grep -q '306.00 MiB is allocated by PyTorch, and 714.00 MiB is reserved by PyTorch but unallocated' out.txt ||
    fail "PyTorch's message differs"
