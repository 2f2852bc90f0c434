# A launch whose native frames and Python frames are those of the previous launch on the thread
# reuses its stack id (issue 23); one whose Python frames differ in anything does not: the same
# code object at another line (line_a / line_b), the same innermost frame under another caller
# line (line_x / line_y) or caller (caller_z), a generator's frame at the same instruction resumed
# from another caller (gen_p / gen_q: the frame and its instruction repeat, its caller does not).
# Per-site launch counts stay exact (the caller is made the site with --ignore-frames '^site$',
# '^gsite$'), the repeated launches are counted by GPUTRACE_DEBUG's "reused" figure (and, among
# them, those whose walk checked the native frames only up to the interpreter), and the reports
# equal those of GPUTRACE_UNWIND=libunwind, which never reuses. With the GIL held (ctypes.PyDLL) and released (ctypes.CDLL: frames read by
# offsets, as in PyTorch's calls). Runs with $PYTHON and every pyenv CPython from 3.9 on.
. "$SRC/tests/lib.sh"
# It compares the stacks of two runs (ips_symbolized_by counts every stack's ips): host samples,
# on by default, add stacks that differ from run to run, so they are off here.
export GPUTRACE_SAMPLE_HZ=0
command -v "$PYTHON" >/dev/null || skip "no $PYTHON"
prog="$SRC/tests/progs/stacks_reuse.py"
line() { grep -n "SITE:$1\$" "$prog" | cut -d: -f1; }
N=50
pys="$PYTHON"
for p in "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.*/bin/python3; do
    [ -x "$p" ] && "$p" -c "import sys; sys.exit(sys.version_info < (3, 9))" 2>/dev/null && pys="$pys $p"
done
sites() { jget "$1" "sorted((s['function'], s['line'], s['count'], s['symbolized_by']) for s in d['timeline']['launch_sites'])"; }
n=0
for py in $pys; do for mode in pydll cdll; do
    n=$((n + 1))
    v="python3.$("$py" -c "import sys; print(sys.version_info[1])") $mode"
    got=$(GPUTRACE_DEBUG=1 traced r$n.trace "$py" "$prog" $N $mode 2> r$n.err) || fail "$v: run failed: $(cat r$n.err)"
    expect_eq "$v output" "$got" "ok $N $mode"
    "$GT_REPORT" --json r$n.trace > r$n.json || fail "$v: report failed"
    expect_eq "$v launch sites" "$(sites r$n.json)" \
        "[('gsite', $(line gsite), $((2 * N)), 'python'), ('repeat', $(line line_r), $N, 'python'), ('site', $(line site), $((3 * N)), 'python'), ('two_lines', $(line line_a), $N, 'python'), ('two_lines', $(line line_b), $N, 'python')]"
    "$GT_REPORT" --json --ignore-frames '^site$' r$n.trace > i$n.json || fail "$v: --ignore-frames report failed"
    expect_eq "$v callers" "$(jget i$n.json "sorted((s['function'], s['line'], s['count']) for s in d['timeline']['launch_sites'] if s['function'] in ('caller_z', 'via'))")" \
        "[('caller_z', $(line caller_z), $N), ('via', $(line line_x), $N), ('via', $(line line_y), $N)]"
    "$GT_REPORT" --json --ignore-frames '^gsite$' r$n.trace > g$n.json || fail "$v: --ignore-frames report failed"
    expect_eq "$v generator's callers" "$(jget g$n.json "sorted((s['function'], s['line'], s['count']) for s in d['timeline']['launch_sites'] if s['function'].startswith('gen_'))")" \
        "[('gen_p', $(line gen_p), $N), ('gen_q', $(line gen_q), $N)]"
    # The repeated launches (line_r) reused their stack: all but the first few of the N.
    reused=$(sed -n 's/^gputrace: thread [0-9]*: .*; \([0-9]*\) reused with their Python frames, [0-9]* of those .*/\1/p' r$n.err | head -1)
    [ -n "$reused" ] && [ "$reused" -ge $((N - 5)) ] || fail "$v: reused '$reused' (want >= $((N - 5))): $(cat r$n.err)"
    # ... their walks checked the native frames only up to the interpreter (the rest is replaced
    # by the Python frames)
    prefixed=$(sed -n 's/^gputrace: thread [0-9]*: .* reused with their Python frames, \([0-9]*\) of those with native frames checked only up to the interpreter$/\1/p' r$n.err | head -1)
    [ -n "$prefixed" ] && [ "$prefixed" -ge $((N - 5)) ] || fail "$v: checked up to the interpreter '$prefixed' (want >= $((N - 5))): $(cat r$n.err)"
    # The same reports from full captures only (the libunwind walker never says 'same').
    GPUTRACE_UNWIND=libunwind traced u$n.trace "$py" "$prog" $N $mode > /dev/null 2> u$n.err || fail "$v: libunwind run failed: $(cat u$n.err)"
    "$GT_REPORT" --json u$n.trace > u$n.json || fail "$v: libunwind report failed"
    "$GT_REPORT" --json --ignore-frames '^site$' u$n.trace > j$n.json || fail "$v: libunwind report failed"
    "$GT_REPORT" --json --ignore-frames '^gsite$' u$n.trace > h$n.json || fail "$v: libunwind report failed"
    expect_eq "$v sites, libunwind" "$(sites u$n.json)" "$(sites r$n.json)"
    expect_eq "$v callers, libunwind" "$(sites j$n.json)" "$(sites i$n.json)"
    expect_eq "$v generator's callers, libunwind" "$(sites h$n.json)" "$(sites g$n.json)"
    expect_eq "$v stacks, libunwind" "$(jget u$n.json "d['stacks']['ips_symbolized_by']")" "$(jget r$n.json "d['stacks']['ips_symbolized_by']")"
    echo "$v: $reused of the $N repeated launches reused their stack"
done; done
# Python frames not read (GPUTRACE_PYTHON=gil, launches made without the GIL): a walk that ended at
# the interpreter's first frame, for Python frames to replace the rest, is made again to the end:
# the native stacks are libunwind's, down to the process's entry.
stk() { jget "$1" "sorted((s['count'], [str(f['function']) for f in s['stack']]) for s in d['timeline']['launch_sites'])"; }
GPUTRACE_PYTHON=gil traced ng.trace "$PYTHON" "$prog" $N cdll > /dev/null 2> ng.err || fail "gil-only run failed: $(cat ng.err)"
GPUTRACE_PYTHON=gil GPUTRACE_UNWIND=libunwind traced nu.trace "$PYTHON" "$prog" $N cdll > /dev/null 2> nu.err || fail "gil-only libunwind run failed: $(cat nu.err)"
"$GT_REPORT" --json ng.trace > ng.json && "$GT_REPORT" --json nu.trace > nu.json || fail "gil-only report failed"
expect_eq "gil only: native stacks, libunwind" "$(stk ng.json)" "$(stk nu.json)"
expect_eq "gil only: no Python frame, every stack beyond the interpreter" \
    "$(jget ng.json "[(any(f['symbolized_by'] == 'python' for f in s['stack']), any(str(f['function']).startswith('Py_') for f in s['stack'])) for s in d['timeline']['launch_sites']]")" \
    "$(jget ng.json "[(False, True)] * len(d['timeline']['launch_sites'])")"
