#!/bin/sh
# make demo: trace a small CUDA-style workload on the simulated GPU and print the report.
set -eu
O=${O:-build}
case "$O" in /*) ;; *) O="$PWD/$O" ;; esac
dir=$(mktemp -d "${TMPDIR:-/tmp}/gputrace-demo.XXXXXX")
echo "== running the demo workload on the simulated GPU, CUPTI and NVML (tests/progs/demo.c, tests/sim, tests/simcupti, tests/simnvml) under gputrace"
echo "   $O/gputrace -o $dir/demo.trace -- $O/tests/demo"
# with the simulated NVML where it was built (nvml.h from make torch-env): a thermal slowdown
nvml=
[ -f "$O/simnvml/libnvidia-ml.so.1" ] && nvml="$O/simnvml:"
LD_LIBRARY_PATH="$nvml$O/simcupti:$O/sim${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" GTSIM_MEM_BYTES=$((2 << 30)) \
    GTSIM_NVML_SCHEDULE="$PWD/tests/simnvml/demo.sched" GPUTRACE_NVML_MS=5 \
    "$O/gputrace" -o "$dir/demo.trace" -- "$O/tests/demo"
echo
echo "== $O/gputrace-report $dir/demo.trace"
"$O/gputrace-report" "$dir/demo.trace"
echo
echo "== $O/gputrace-report --html $O/demo.html $dir/demo.trace"
"$O/gputrace-report" --html "$O/demo.html" "$dir/demo.trace"
echo "demo.html written: $O/demo.html (open it in a browser; it needs no network)"
echo "(trace kept at $dir/demo.trace; try --json, --dump, --chrome-trace demo.json or --folded peak)"

# The real PyTorch (make torch-env) on the simulated runtime: a job that dies of fragmentation.
py="${GT_VENV:-$PWD/.venv}/bin/python"
if [ -x "$py" ] && "$py" -c 'import torch' 2>/dev/null && [ -f "$O/simrt/libcudart.so.13" ] &&
    [ -f "$O/simnvml/libnvidia-ml.so.1" ]; then
    echo
    echo "== the real PyTorch on the simulated runtime (tests/simrt), a 1 GiB GPU, under gputrace:"
    echo "   tests/simrt/run-torch -t $dir/torch.trace $py tests/torch/demo_train.py"
    if GTSIM_MEM_BYTES=$((1 << 30)) tests/simrt/run-torch -b "$O" -t "$dir/torch.trace" \
        "$py" tests/torch/demo_train.py 2>"$dir/torch.err"; then
        echo "demo: the PyTorch job was meant to die of an OOM and did not" >&2
        exit 1
    fi
    echo "   (it died as expected: $(grep -m1 -o 'torch.OutOfMemoryError: CUDA out of memory. Tried to allocate [^.]*\.[0-9]* MiB' "$dir/torch.err"))"
    echo
    echo "== $O/gputrace-report $dir/torch.trace"
    "$O/gputrace-report" "$dir/torch.trace"
    "$O/gputrace-report" --html "$O/demo-torch.html" "$dir/torch.trace"
    echo "demo-torch.html written: $O/demo-torch.html"
else
    echo
    echo "(no PyTorch demo: run 'make torch-env' first for the real PyTorch on the simulated runtime)"
fi
