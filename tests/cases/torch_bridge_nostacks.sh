# The PyTorch bridge does not depend on the host stacks: with GPUTRACE_STACKS=none and with
# GPUTRACE_STACK_DEPTH=0 it installs and writes what it writes with them (issue 23's benchmark
# found it silently absent: Python was looked for only by the stacks' module scan, so the
# "no stacks" variant measured neither the stacks nor the bridge). On the real PyTorch
# (bench/torch_overhead.py step: 20 warm-up steps and 5 timed ones, one AdamW): one TORCH_STEP
# record per step, the set the optimizer holds (TORCH_ROLES), snapshots, and the report's
# breakdown by category; and no launch carries a stack. With GPUTRACE_PYTHON=0 (native stacks
# only) the same: the interpreter is still looked for, for the bridge alone, so launches carry
# native stacks and no stack has a Python frame (the same run with the defaults names the
# script's lines: the check can fail).
. "$SRC/tests/lib.sh"
. "$SRC/tests/torch/env.sh"
for v in GPUTRACE_STACKS=none GPUTRACE_STACK_DEPTH=0 GPUTRACE_PYTHON=0 GPUTRACE_PYTHON=1; do
    (export "$v"; torch_run -t "$PWD/$v.trace" "$TORCH_PY" "$SRC/bench/torch_overhead.py" step 5 \
        > "$v.out" 2>&1) || { cat "$v.out"; fail "$v: torch_overhead.py step"; }
    "$GT_REPORT" --dump "$v.trace" > "$v.dump" || fail "$v: dump failed"
    "$GT_REPORT" "$v.trace" > "$v.txt" || fail "$v: report failed"
    steps=$(grep -c ' TORCH_STEP ' "$v.dump")
    [ "$steps" -eq 25 ] || fail "$v: $steps TORCH_STEP records, want 25 (20 warm-up steps and 5)"
    grep -q ' TORCH_ROLES ' "$v.dump" || fail "$v: no TORCH_ROLES record"
    grep -q ' TORCH_SNAP ' "$v.dump" || fail "$v: no allocator snapshot"
    launches=$(grep -c ' LAUNCH ' "$v.dump")
    [ "$launches" -gt 100 ] || fail "$v: only $launches launches"
    case $v in
    GPUTRACE_PYTHON=0)
        ! grep ' LAUNCH ' "$v.dump" | grep -v -q ' stack=' || fail "$v: a launch without a stack"
        ! grep -q 'torch_overhead\.py:' "$v.txt" || fail "$v: a stack with Python frames" ;;
    GPUTRACE_PYTHON=1)
        grep -q 'torch_overhead\.py:' "$v.txt" || { cat "$v.txt"; fail "$v: no Python frame"; } ;;
    *) ! grep ' LAUNCH ' "$v.dump" | grep -q ' stack=' || fail "$v: a launch carries a stack" ;;
    esac
    grep -q 'PyTorch allocator dev 0: peak allocated' "$v.txt" ||
        { cat "$v.txt"; fail "$v: the report has no PyTorch allocator line"; }
    grep -q 'optimizer state' "$v.txt" ||
        { cat "$v.txt"; fail "$v: the report has no optimizer state"; }
done
