# Python frames in host stacks (tests/progs/stacks_python.py): through ctypes.PyDLL (the GIL is
# held, as in a C extension) each call site is the Python function and line that made the call,
# a framework package's frames (a stand-in `torch` package) are skipped for the site, and the
# stack holds the native frames down to the interpreter, then the Python frames in order; through
# ctypes.CDLL (GIL released) the same sites and Python frames (read by struct offsets, without the
# GIL; more in stacks_nogil.sh); 4 Python threads each get their own frames;
# calls during interpreter shutdown (atexit, a daemon thread; with the GIL and without) work;
# output identical traced and untraced. Runs with $PYTHON and, where installed, every pyenv
# CPython from 3.8 on (3.8 has no frame API: native stacks only, nothing else changes).
. "$SRC/tests/lib.sh"
command -v "$PYTHON" >/dev/null || skip "no $PYTHON"
prog="$SRC/tests/progs/stacks_python.py"
MiB=1048576
line() { grep -n "SITE:$1\$" "$prog" | cut -d: -f1; }
# The stand-in framework: its empty() allocates through the program's library handle.
mkdir -p pkgs/torch
cat > pkgs/torch/__init__.py <<'EOF'
import ctypes

cu = None


def empty(nbytes):
    p = ctypes.c_uint64()
    if cu.cuMemAlloc_v2(ctypes.byref(p), ctypes.c_size_t(nbytes)) != 0:  # SITE:empty
        raise MemoryError(nbytes)
    return p
EOF
empty_line=$(grep -n "SITE:empty" pkgs/torch/__init__.py | cut -d: -f1)
# No host samples: the Python frames of a sample add the code objects it happened to interrupt,
# and the code objects counted below are those of the events' stacks.
run_py() { # python mode trace
    PYTHONPATH="$PWD/pkgs" GPUTRACE_SAMPLE_HZ=0 traced "$3" "$1" "$prog" "$2"
}
# Untraced, but a sanitizer build's simulated driver still needs its runtime first.
run_untraced() { PYTHONPATH="$PWD/pkgs" LD_PRELOAD="$asan_rt" untraced "$@"; }
# The "exit" run leaves a daemon thread running on purpose (3.13 makes it joinable: a TSan leak).
[ -z "$tsan_rt" ] || export TSAN_OPTIONS="$TSAN_OPTIONS:report_thread_leaks=0"
pys="$PYTHON"
for p in "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.*/bin/python3; do
    [ -x "$p" ] && "$p" -c "import sys; sys.exit(sys.version_info < (3, 8))" 2>/dev/null && pys="$pys $p"
done
n=0
for py in $pys; do
    n=$((n + 1))
    minor=$("$py" -c "import sys; print(sys.version_info[1])")
    exe=$("$py" -c "import os, sys; print(os.path.realpath(sys.executable))")
    v="python3.$minor"
    # untraced output is the reference (under TSan, whose runtime alone crashes CPython at
    # start-up, the expected text is)
    want="ok pydll"
    if [ -z "$tsan_rt" ]; then
        want=$(run_untraced "$py" "$prog" pydll) || fail "$v: untraced run failed: $want"
        expect_eq "$v untraced output" "$want" "ok pydll"
    fi
    got=$(run_py "$py" pydll p$n.trace) || fail "$v: traced run failed: $got"
    expect_eq "$v traced output" "$got" "$want"
    "$GT_REPORT" --json p$n.trace > p$n.json || fail "$v: report failed"
    j() { jget p$n.json "$1"; }
    if [ "$minor" -lt 9 ]; then # no PyFrame_GetCode/GetBack: native stacks only
        expect_eq "$v no python frames" "$(j "d['stacks']['ips_symbolized_by']['python']")" 0
        expect_eq "$v allocations" "$(j "(d['memory']['alloc_count'], d['stacks']['allocs_without_stack'])")" "(5, 0)"
        echo "$v: no frame API, native stacks only"
        continue
    fi
    site="(s['function'], s['file'].rsplit('/',1)[-1], s['line'], s['count'], s['bytes'], s['failed'], s['leaked_bytes'], s['symbolized_by'])"
    want_sites="[('alloc_buffer', 'stacks_python.py', $(line alloc_buffer), 3, $((3 * MiB)), 0, $((2 * MiB)), 'python'), ('alloc_weights', 'stacks_python.py', $(line alloc_weights), 2, $((8 * MiB)), 0, $((8 * MiB)), 'python')]"
    expect_eq "$v allocation sites" "$(j "sorted($site for s in d['memory']['by_site'])")" "$want_sites"
    expect_eq "$v launch sites" "$(j "[(s['function'], s['line'], s['count'], s['symbolized_by']) for s in d['timeline']['launch_sites']]")" \
        "[('launch_kernels', $(line launch_kernels), 5, 'python')]"
    expect_eq "$v sync sites" "$(j "[(s['function'], s['line'], s['calls']) for s in d['timeline']['sync_sites']]")" \
        "[('train_step', $(line train_step_sync), 1)]"
    # The full stack of the torch.empty allocations: Python frames innermost first, after the
    # native ones; nothing of the interpreter's own object among the native frames.
    stack="[s['stack'] for s in d['memory']['by_site'] if s['function'] == 'alloc_weights'][0]"
    pyframes="[(f['function'], f['file'].rsplit('/', 2)[-2:], f['line']) for f in $stack if f['symbolized_by'] == 'python']"
    want_frames="[('empty', ['torch', '__init__.py'], $empty_line), ('alloc_weights', ['progs', 'stacks_python.py'], $(line alloc_weights)), ('train_step', ['progs', 'stacks_python.py'], $(line train_step_weights)), ('main', ['progs', 'stacks_python.py'], $(line main_train)), ('<module>', ['progs', 'stacks_python.py'], $(line module))]"
    expect_eq "$v python frames" "$(j "$pyframes")" "$want_frames"
    expect_eq "$v native frames then python" "$(j "(lambda k: all(f['symbolized_by'] == 'python' for f in $stack[k:]) and k > 0)([f['symbolized_by'] for f in $stack].index('python'))")" True
    expect_eq "$v no interpreter frames" "$(j "[f['module'] for f in $stack if f['module'] and ('libpython' in f['module'] or f['module'] == '$exe')]")" "[]"
    expect_eq "$v code objects" "$("$GT_REPORT" --dump p$n.trace | grep -c ' PYCODE ')" 7
    # --ignore-frames replaces the built-in list: alloc_buffer's caller becomes the site, and
    # torch's frame is no longer framework internals.
    "$GT_REPORT" --json --ignore-frames '^alloc_buffer$' p$n.trace > i$n.json || fail "$v: --ignore-frames report failed"
    expect_eq "$v ignored frame" "$(jget i$n.json "sorted((s['function'], s['line'], s['count']) for s in d['memory']['by_site'])")" \
        "[('empty', $empty_line, 2), ('train_step', $(line train_step_buffer), 3)]"
    # Text report names the Python site.
    "$GT_REPORT" --stacks p$n.trace > p$n.txt || fail "$v: text report failed"
    grep -q "alloc_weights (stacks_python.py:$(line alloc_weights))" p$n.txt || fail "$v: text site: $(cat p$n.txt)"
    grep -q "#[0-9]* *alloc_weights (.*stacks_python.py:$(line alloc_weights)) \[python\]" p$n.txt || fail "$v: text stack: $(cat p$n.txt)"
    # CDLL releases the GIL: the same sites, launch site and Python frames, same memory.
    got=$(run_py "$py" cdll c$n.trace) || fail "$v: cdll run failed: $got"
    expect_eq "$v cdll output" "$got" "ok cdll"
    "$GT_REPORT" --json c$n.trace > c$n.json || fail "$v: cdll report failed"
    expect_eq "$v cdll sites" "$(jget c$n.json "sorted($site for s in d['memory']['by_site'])")" "$want_sites"
    expect_eq "$v cdll launch sites" "$(jget c$n.json "[(s['function'], s['line'], s['count'], s['symbolized_by']) for s in d['timeline']['launch_sites']]")" \
        "[('launch_kernels', $(line launch_kernels), 5, 'python')]"
    expect_eq "$v cdll python frames" "$(jget c$n.json "$pyframes")" "$want_frames"
    # The first call without the GIL (setup's synchronize) comes after cuInit, which asked for
    # the atexit guard the walk by offsets waits for: its Python frames too (issue 22).
    expect_eq "$v cdll sync sites" "$(jget c$n.json "sorted((s['function'], s['line'], s['calls']) if s['symbolized_by'] == 'python' else ('native', s['calls']) for s in d['timeline']['sync_sites'])")" \
        "[('setup', $(line first_sync), 1), ('train_step', $(line train_step_sync), 1)]"
    expect_eq "$v cdll memory" "$(jget c$n.json "(d['memory']['alloc_count'], d['memory']['alloc_bytes'], d['stacks']['allocs_without_stack'], d['timeline']['launch_count'])")" \
        "(5, $((11 * MiB)), 0, 5)"
    # Threads: each of the 4 threads' allocations carries that thread's own Python frames.
    got=$(run_py "$py" threads t$n.trace) || fail "$v: threads run failed: $got"
    expect_eq "$v threads output" "$got" "threads 12"
    "$GT_REPORT" --json t$n.trace > t$n.json || fail "$v: threads report failed"
    expect_eq "$v thread sites" "$(jget t$n.json "[(s['function'], s['line'], s['count'], s['bytes'], [f['function'] for f in s['stack'] if f['symbolized_by'] == 'python'][1:2], [f['line'] for f in s['stack'] if f['symbolized_by'] == 'python'][1]) for s in d['memory']['by_site']]")" \
        "[('alloc_buffer', $(line alloc_buffer), 12, $((24 * MiB)), ['thread_alloc'], $(line thread_alloc))]"
    # Shutdown: an atexit handler allocates, a daemon thread allocates until the process ends.
    got=$(run_py "$py" exit e$n.trace) || fail "$v: exit run failed: $got"
    expect_eq "$v exit output" "$got" "exit ok"
    "$GT_REPORT" --json --ignore-frames '^alloc_buffer$' e$n.trace > e$n.json || fail "$v: exit report failed"
    expect_eq "$v exit sites" "$(jget e$n.json "(sorted((s['function'], s['line'], s['count']) for s in d['memory']['by_site'] if s['function'] != 'spin'), sum(s['count'] for s in d['memory']['by_site']) == d['memory']['alloc_count'], d['stacks']['allocs_without_stack'])")" \
        "([('at_exit', $(line at_exit), 1), ('exiting', $(line exiting), 1)], True, 0)"
    # The same through CDLL: the daemon thread's calls go on without the GIL while the
    # interpreter finalizes (native frames only from then on); no crash, the same Python sites.
    got=$(run_py "$py" exit_cdll x$n.trace) || fail "$v: exit_cdll run failed: $got"
    expect_eq "$v exit_cdll output" "$got" "exit ok"
    "$GT_REPORT" --json --ignore-frames '^alloc_buffer$' x$n.trace > x$n.json || fail "$v: exit_cdll report failed"
    expect_eq "$v exit_cdll sites" "$(jget x$n.json "(sorted((s['function'], s['line'], s['count']) for s in d['memory']['by_site'] if s['function'] != 'spin' and s['symbolized_by'] == 'python'), sum(s['count'] for s in d['memory']['by_site']) == d['memory']['alloc_count'], d['stacks']['allocs_without_stack'])")" \
        "([('at_exit', $(line at_exit), 1), ('exiting', $(line exiting), 1)], True, 0)"
    echo "$v: python sites, stacks, CDLL, threads and shutdown exact"
done
# GPUTRACE_PYTHON=0: native stacks only.
got=$(GPUTRACE_PYTHON=0 run_py "$PYTHON" pydll off.trace) || fail "GPUTRACE_PYTHON=0 run failed: $got"
"$GT_REPORT" --json off.trace > off.json || fail "GPUTRACE_PYTHON=0 report failed"
expect_eq "GPUTRACE_PYTHON=0" "$(jget off.json "(d['stacks']['ips_symbolized_by']['python'], d['memory']['alloc_count'], d['stacks']['allocs_without_stack'])")" "(0, 5, 0)"
