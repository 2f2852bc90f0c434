# Sourced by tests/cases/torch_*.sh after tests/lib.sh: finds the virtualenv with the real PyTorch
# (GT_VENV, else .venv of the source tree: `make torch-env`) and the simulated stack, or skips.
TORCH_PY="${GT_VENV:-$SRC/.venv}/bin/python"
[ -x "$TORCH_PY" ] || skip "no torch virtualenv at ${GT_VENV:-$SRC/.venv}: run 'make torch-env' (VENV=...)"
"$TORCH_PY" -c 'import torch' 2>/dev/null || skip "$TORCH_PY cannot import torch: run 'make torch-env'"
[ -f "$O/simrt/libcudart.so.13" ] || fail "$O/simrt/libcudart.so.13 missing: make fixtures"
# Sanitizer builds: an instrumented runtime in python needs the sanitizer's runtime preloaded first,
# and a whole PyTorch under ASan/TSan interception takes minutes per case on this suite's budget.
[ -z "$asan_rt$tsan_rt" ] || skip "sanitizer build: the torch cases run in the plain build only"
TORCH_MEM=1073741824 # 1 GiB: the figures of pytorch_allocator.md
# torch_run [-t TRACE] script args...: the script under the real PyTorch on the simulated stack
torch_run() { GTSIM_MEM_BYTES=${GTSIM_MEM_BYTES:-$TORCH_MEM} "$SRC/tests/simrt/run-torch" -b "$O" "$@"; }
