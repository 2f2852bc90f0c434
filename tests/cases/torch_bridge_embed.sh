# An application that embeds Python by dlopen'ing libpython itself (tests/progs/embed_py.c: after
# start-up, RTLD_GLOBAL, then Py_BytesMain) gets the PyTorch bridge whatever the stack settings:
# with GPUTRACE_STACKS=none no module scan runs, so before the cuInit hook looked for a libpython
# loaded since start-up the bridge never installed there (0 TORCH_STEP records). On the real
# PyTorch (bench/torch_overhead.py step: 20 warm-up steps and 5 timed ones): one TORCH_STEP record
# per step, the optimizer's set, and with the default stacks the script's Python frames.
. "$SRC/tests/lib.sh"
. "$SRC/tests/torch/env.sh"
lib=$("$TORCH_PY" -c 'import os, sysconfig as s
if s.get_config_var("Py_ENABLE_SHARED"): print(os.path.join(s.get_config_var("LIBDIR"), s.get_config_var("INSTSONAME")))')
[ -n "$lib" ] && [ -f "$lib" ] || skip "$TORCH_PY is linked statically: no libpython to dlopen"
for v in GPUTRACE_STACKS=none GPUTRACE_STACKS=default; do
    (export "$v"; torch_run -t "$PWD/$v.trace" "$O/tests/embed_py" "$lib" "$TORCH_PY" \
        "$SRC/bench/torch_overhead.py" step 5 > "$v.out" 2>&1) || { cat "$v.out"; fail "$v: embed_py"; }
    grep -q '^ns_per_unit=' "$v.out" || { cat "$v.out"; fail "$v: the script did not finish"; }
    "$GT_REPORT" --dump "$v.trace" > "$v.dump" || fail "$v: dump failed"
    "$GT_REPORT" "$v.trace" > "$v.txt" || fail "$v: report failed"
    steps=$(grep -c ' TORCH_STEP ' "$v.dump")
    [ "$steps" -eq 25 ] || fail "$v: $steps TORCH_STEP records, want 25 (20 warm-up steps and 5)"
    grep -q ' TORCH_ROLES ' "$v.dump" || fail "$v: no TORCH_ROLES record"
    grep -q 'optimizer state' "$v.txt" || { cat "$v.txt"; fail "$v: the report has no optimizer state"; }
done
grep -q 'torch_overhead\.py:' GPUTRACE_STACKS=default.txt ||
    { cat GPUTRACE_STACKS=default.txt; fail "default stacks: no Python frame of the script"; }
