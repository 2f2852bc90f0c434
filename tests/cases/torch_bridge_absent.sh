# The bridge leaves alone a Python process without torch, and one that imported torch without
# initializing its CUDA: same output (atexit callbacks, threads, modules) as with
# GPUTRACE_TORCH=off, and no bridge record or note in the trace.
. "$SRC/tests/lib.sh"
command -v "$PYTHON" >/dev/null || skip "no $PYTHON"
check() { # what run-command...
    what=$1; shift
    "$@" "$PWD/$what-on.trace" "$SRC/tests/torch/absent.py" "$what" > on.txt 2>&1 || { cat on.txt; fail "$what: run"; }
    GPUTRACE_TORCH=off "$@" "$PWD/$what-off.trace" "$SRC/tests/torch/absent.py" "$what" > off.txt 2>&1 ||
        { cat off.txt; fail "$what: run with GPUTRACE_TORCH=off"; }
    cat on.txt
    expect_eq "$what: what the program sees" "$(cat on.txt)" "$(cat off.txt)"
    "$GT_REPORT" --dump "$what-on.trace" > dump.txt || fail "$what: dump"
    grep -q " ALLOC " dump.txt || fail "$what: no allocations traced"
    ! grep -E "TORCH_|PyTorch bridge" dump.txt || fail "$what: bridge records in a process it must leave alone"
}
plain() { traced "$1" "$PYTHON" "$2" "$3"; }
check plain plain
. "$SRC/tests/torch/env.sh" # skips here without the torch virtualenv
with_torch() { torch_run -t "$1" "$TORCH_PY" "$2" "$3"; }
check torch with_torch
