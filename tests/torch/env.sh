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
# torch_run [-t TRACE] script args...: the script under the real PyTorch on the simulated stack.
# Under AddressSanitizer, PyTorch has now and then aborted at exit after the script's last line
# ("terminate called without an active exception", exit 134: a C++ thread object destroyed while
# joinable). It is not the tracer's: it came in tiers.py's traced runs (2 of 8 tiers cases in one
# .ci/run, 2026-12-05, then 0 of 121 runs) and on 2026-12-07 in torch_basics, which runs
# basics.py without libgputrace.so in the process at all (the simulated runtime, NVML and CUPTI
# only). On that one signature (exit 134, that line last on standard error) the run is said and
# made once more (a trace it wrote removed first); any other failure, or the same twice, stands.
# The command's standard output and error reach the caller apart, after it ends; the first run's
# output and a line saying so go to $GT_CASE_NOTES (tests/run.sh shows it on the PASS line).
torch_run_once() { GTSIM_MEM_BYTES=${GTSIM_MEM_BYTES:-$TORCH_MEM} "$SRC/tests/simrt/run-torch" -b "$O" "$@"; }
torch_run() {
    if [ -z "$asan_rt" ]; then
        torch_run_once "$@"
        return
    fi
    tr_trace=
    [ "$1" = -t ] && tr_trace=$2
    tr_out=$(mktemp) tr_err=$(mktemp)
    for tr_try in 1 2; do
        tr_rc=0
        torch_run_once "$@" > "$tr_out" 2> "$tr_err" || tr_rc=$?
        [ $tr_try = 1 ] && [ $tr_rc -eq 134 ] &&
            [ "$(tail -n 1 "$tr_err")" = "terminate called without an active exception" ] || break
        { # beside the case's output (its PASS line shows it: tests/run.sh), not in it
            echo "torch_run: the known abort at exit under ASan (exit 134, 'terminate called without an active exception'), run once more: $*"
            cat "$tr_out" "$tr_err"
        } >> "${GT_CASE_NOTES:-/dev/stderr}"
        [ -z "$tr_trace" ] || rm -f "$tr_trace"
    done
    cat "$tr_out"
    cat "$tr_err" >&2
    rm -f "$tr_out" "$tr_err"
    return $tr_rc
}
# tiers_run TRACE OUT script [args...]: the script under torch_run -t TRACE, its output in OUT.
tiers_run() {
    tr_t=$1 tr_o=$2
    shift 2
    torch_run -t "$tr_t" "$@" > "$tr_o" 2>&1
}
