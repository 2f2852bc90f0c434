# Python frames read without the GIL (ctypes.CDLL, as PyTorch's launches) are given up while a
# subinterpreter exists (the offset walk reads the main interpreter's threads only) and come back
# once it is destroyed, although the thread's own state is the same all along: the answer kept
# per thread (issue 23, walker_state in preload/python.c) is checked against the list of
# interpreters at every call. N launches per phase: before (Python frames, site before), during
# (native frames only: no Python site), after (Python frames again). Per-site counts exact. Runs
# with $PYTHON and every pyenv CPython from 3.9 on that can create a subinterpreter.
. "$SRC/tests/lib.sh"
export GPUTRACE_SAMPLE_HZ=0
command -v "$PYTHON" >/dev/null || skip "no $PYTHON"
prog="$SRC/tests/progs/stacks_subinterp.py"
line() { grep -n "SITE:$1\$" "$prog" | cut -d: -f1; }
N=40
pys="$PYTHON"
for p in "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.*/bin/python3; do
    [ -x "$p" ] && "$p" -c "import sys; sys.exit(sys.version_info < (3, 9))" 2>/dev/null && pys="$pys $p"
done
n=0 ran=0
for py in $pys; do
    n=$((n + 1))
    v="python3.$("$py" -c "import sys; print(sys.version_info[1])")"
    got=$(traced s$n.trace "$py" "$prog" $N 2> s$n.err) || fail "$v: run failed: $got $(cat s$n.err)"
    [ "$got" != "no subinterpreters" ] || { echo "$v: no subinterpreters"; continue; }
    expect_eq "$v output" "$got" "ok $N"
    "$GT_REPORT" --json s$n.trace > s$n.json || fail "$v: report failed"
    expect_eq "$v python sites" "$(jget s$n.json "sorted((s['function'], s['line'], s['count']) for s in d['timeline']['launch_sites'] if s['symbolized_by'] == 'python')")" \
        "[('after', $(line after), $N), ('before', $(line before), $N)]"
    # the launches made while the subinterpreter existed: no Python frame in their stacks
    expect_eq "$v native-only launches" "$(jget s$n.json "sum(s['count'] for s in d['timeline']['launch_sites'] if s['symbolized_by'] != 'python' and not any(f['symbolized_by'] == 'python' for f in s['stack']))")" "$N"
    expect_eq "$v launches" "$(jget s$n.json "d['timeline']['launch_count']")" "$((3 * N))"
    ran=$((ran + 1))
done
[ $ran -gt 0 ] || skip "no CPython here can create a subinterpreter"
echo "$ran interpreters: Python frames given up while a subinterpreter exists, back after"
