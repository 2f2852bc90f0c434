# Sourced by tests/cases/torch_*.sh after tests/lib.sh: finds the virtualenv with the real PyTorch
# (GT_VENV, else .venv of the source tree: `make torch-env`) and the simulated stack, or skips.
TORCH_PY="${GT_VENV:-$SRC/.venv}/bin/python"
[ -x "$TORCH_PY" ] || skip "no torch virtualenv at ${GT_VENV:-$SRC/.venv}: run 'make torch-env' (VENV=...)"
"$TORCH_PY" -c 'import torch' 2>/dev/null || skip "$TORCH_PY cannot import torch: run 'make torch-env'"
[ -f "$O/simrt/libcudart.so.13" ] || fail "$O/simrt/libcudart.so.13 missing: make fixtures"
# PyTorch needs NVML (expandable segments, OOM messages); it is built where nvml.h was found
[ -f "$O/simnvml/libnvidia-ml.so.1" ] ||
    skip "no simulated NVML in $O: nvml.h was not found at build time (make torch-env installs nvidia-nvml-dev; then make VENV=... fixtures)"
# ASan builds run too (run-torch preloads the sanitizer's runtime first).
[ -z "$tsan_rt" ] || skip "ThreadSanitizer build: PyTorch's own uninstrumented threads make TSan report races inside libtorch (operator delete); the torch cases run in the plain and ASan builds"
TORCH_MEM=1073741824 # 1 GiB: the figures of pytorch_allocator.md
# torch_run [-t TRACE] script args...: the script under the real PyTorch on the simulated stack
torch_run() { GTSIM_MEM_BYTES=${GTSIM_MEM_BYTES:-$TORCH_MEM} "$SRC/tests/simrt/run-torch" -b "$O" "$@"; }
