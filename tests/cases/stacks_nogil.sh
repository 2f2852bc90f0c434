# Python frames without the GIL (tests/progs/stacks_nogil.py): every CUDA call goes through
# ctypes.CDLL, which releases the GIL around the call, from known functions at known lines: a
# method, a generator consumed by a list comprehension, a function called from a list
# comprehension and from a generator expression, a launch loop, 4 threads, a coroutine under
# asyncio.run, and a native thread that never ran Python (native frames only). On every installed CPython 3.9-3.13 ($PYTHON,
# pyenv's, /usr/bin's) each call site and the whole Python part of its stack are exact (sites in
# line order): (function, file, line) innermost first, names as the interpreter has them
# (co_qualname from 3.11; list comprehensions have their own frame up to 3.11, are inlined from
# 3.12), threading.py's lines found in that interpreter's own source; and a generated script whose
# line tables need long and negative entries, with names of every str kind, exact too. Then the
# self-check: with a first call made holding the GIL (ctypes.PyDLL) both walks are compared and
# agree (debug log); with GPUTRACE_TEST_PY_MISMATCH=1 (a test-only hook that falsifies the offset
# walk's line during the check) the offset walk is turned off: a warning note, and the calls made
# without the GIL get native frames only, the same memory; GPUTRACE_PYTHON=gil does the same
# without a note.
. "$SRC/tests/lib.sh"
command -v "$PYTHON" >/dev/null || skip "no $PYTHON"
prog="$SRC/tests/progs/stacks_nogil.py"
# The shutdown runs leave daemon threads running on purpose; repeated runs per interpreter
# (fewer under sanitizers, which are slow).
[ -z "$tsan_rt" ] || export TSAN_OPTIONS="$TSAN_OPTIONS:report_thread_leaks=0"
shutdown_runs=${GT_SHUTDOWN_RUNS:-10}
[ -z "$tsan_rt$asan_rt" ] || shutdown_runs=${GT_SHUTDOWN_RUNS:-2}
MiB=1048576
line() { grep -n "SITE:$1\$" "$prog" | cut -d: -f1; }
run_untraced() { LD_PRELOAD="$asan_rt" untraced "$@"; }
cands="$PYTHON"
for p in "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.*/bin/python3 /usr/bin/python3.[0-9]*; do
    case "$p" in *-config) continue ;; esac
    [ -x "$p" ] && cands="$cands $p"
done
pys="" seen="" missing=""
for p in $cands; do
    id=$("$p" -c "import os, sys; print(os.path.realpath(sys.executable) if (3, 9) <= sys.version_info < (3, 14) and not hasattr(sys, 'gettotalrefcount') and not getattr(sys, '_is_gil_enabled', lambda: True)() is False else '')" 2>/dev/null) || continue
    [ -n "$id" ] || continue
    case " $seen " in *" $id "*) continue ;; esac
    seen="$seen $id"
    pys="$pys $p"
done
for m in 9 10 11 12 13; do
    found=0
    for p in $pys; do [ "$("$p" -c 'import sys; print(sys.version_info[1])')" = $m ] && found=1; done
    [ $found = 1 ] || missing="$missing 3.$m"
done
[ -n "$pys" ] || skip "no CPython 3.9-3.13 release build installed"
[ -z "$missing" ] || echo "skipped (not installed):$missing"
# Line tables and names: one function with a long body (instruction offsets past 255 bytes),
# a jump back (a loop), line gaps past 127 and 4096 (multi-byte table entries), and names in
# every str kind: file name with U+03BB (UCS2), functions with U+00E9 (UCS1) and U+20000 (UCS4).
gen() {
    echo 'import ctypes, sys'
    echo 'cu = ctypes.CDLL("libcuda.so.1")'
    echo 'def alloc(n):'
    echo '    p = ctypes.c_uint64()'
    echo '    assert cu.cuMemAlloc_v2(ctypes.byref(p), ctypes.c_size_t(n)) == 0  # SITE:alloc'
    echo 'def donn\u00e9es():'
    echo '    x = 0'
    echo '    for i in range(2):'
    echo '        alloc(1 << 20)  # SITE:loop_top'
    i=0
    while [ $i -lt 150 ]; do echo '        x += i * 3 + 1'; i=$((i + 1)); done
    echo '        alloc(2 << 20)  # SITE:loop_end'
    i=0
    while [ $i -lt 300 ]; do echo '    # gap'; i=$((i + 1)); done
    echo '    alloc(3 << 20)  # SITE:after_gap'
    i=0
    while [ $i -lt 5000 ]; do echo; i=$((i + 1)); done
    echo '    alloc(4 << 20)  # SITE:after_far'
    echo '    return x'
    echo 'def \U00020000_f():'
    echo '    alloc(5 << 20)  # SITE:ucs4'
    echo 'cu.cuInit(0)'
    echo 'dev, ctx = ctypes.c_int(), ctypes.c_void_p()'
    echo 'assert cu.cuDeviceGet(ctypes.byref(dev), 0) == 0'
    echo 'assert cu.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev) == 0'
    echo 'assert cu.cuCtxSetCurrent(ctx) == 0'
    echo 'assert cu.cuCtxSynchronize() == 0  # the first stack without the GIL'
    echo 'donn\u00e9es()  # SITE:call_ucs1'
    echo '\U00020000_f()  # SITE:call_ucs4'
    echo 'print("ok lines")'
}
gen | "$PYTHON" -c "import sys; open('lines_\u03bb.py', 'w', encoding='utf-8').write(sys.stdin.read().encode().decode('unicode_escape'))" ||
    fail "cannot write the lines script"
lprog="$PWD/lines_λ.py"
lline() { grep -n "SITE:$1\$" "$lprog" | cut -d: -f1; }
n=0
for py in $pys; do
    n=$((n + 1))
    minor=$("$py" -c "import sys; print(sys.version_info[1])")
    v="python3.$minor ($py)"
    if [ -z "$tsan_rt" ]; then
        want=$(run_untraced "$py" "$prog" cdll "$PROGS/libpythread.so") || fail "$v: untraced run failed: $want"
        expect_eq "$v untraced output" "$want" "ok cdll 6 12"
    fi
    got=$(GPUTRACE_DEBUG=1 traced n$n.trace "$py" "$prog" check "$PROGS/libpythread.so" 2> n$n.err) || fail "$v: traced run failed: $got $(cat n$n.err)"
    expect_eq "$v traced output" "$got" "ok check 6 12"
    "$GT_REPORT" --json n$n.trace > n$n.json || fail "$v: report failed"
    # Names and lines the interpreter itself gives.
    q() { if [ "$minor" -ge 11 ]; then echo "'$2'"; else echo "'$1'"; fi; }          # co_name / co_qualname
    lc() { [ "$minor" -ge 12 ] || echo "($(q '<listcomp>' "$1.<locals>.<listcomp>"), 'stacks_nogil.py', $2), "; }
    tl=$("$py" -c "
import inspect, threading
def at(fn, text):
    lines, start = inspect.getsourcelines(fn)
    hits = [start + i for i, l in enumerate(lines) if text in l]
    assert len(hits) == 1, (fn, hits)
    return hits[0]
print(at(threading.Thread.run, 'self._target(*self._args, **self._kwargs)'), at(threading.Thread._bootstrap_inner, 'self.run()'), at(threading.Thread._bootstrap, 'self._bootstrap_inner()'))") ||
        fail "$v: threading.py lines not found"
    set -- $tl
    tail="('main', 'stacks_nogil.py', $(line main_build)), ('<module>', 'stacks_nogil.py', $(line module))"
    want="[('warm', $(line warm), 1, 4096, 'python', [('warm', 'stacks_nogil.py', $(line warm)), ('main', 'stacks_nogil.py', $(line main_warm)), ('<module>', 'stacks_nogil.py', $(line module))]), \
($(q forward Model.forward), $(line forward), 1, $MiB, 'python', [($(q forward Model.forward), 'stacks_nogil.py', $(line forward)), ('build', 'stacks_nogil.py', $(line build_forward)), $tail]), \
('gen_buffers', $(line gen_buffers), 2, $((4 * MiB)), 'python', [('gen_buffers', 'stacks_nogil.py', $(line gen_buffers)), $(lc build $(line build_gen))('build', 'stacks_nogil.py', $(line build_gen)), $tail]), \
('comp_alloc', $(line comp_alloc), 2, $((6 * MiB)), 'python', [('comp_alloc', 'stacks_nogil.py', $(line comp_alloc)), $(lc build $(line build_comp))('build', 'stacks_nogil.py', $(line build_comp)), $tail]), \
('genexpr_alloc', $(line genexpr_alloc), 2, $((10 * MiB)), 'python', [('genexpr_alloc', 'stacks_nogil.py', $(line genexpr_alloc)), ($(q '<genexpr>' 'build.<locals>.<genexpr>'), 'stacks_nogil.py', $(line build_genexpr)), ('build', 'stacks_nogil.py', $(line build_genexpr)), $tail]), \
('thread_alloc', $(line thread_alloc), 12, $((84 * MiB)), 'python', [('thread_alloc', 'stacks_nogil.py', $(line thread_alloc)), $(lc worker $(line worker))('worker', 'stacks_nogil.py', $(line worker)), ($(q run Thread.run), 'threading.py', $1), ($(q _bootstrap_inner Thread._bootstrap_inner), 'threading.py', $2), ($(q _bootstrap Thread._bootstrap), 'threading.py', $3)])]"
    site="(s['function'], s['line'], s['count'], s['bytes'], s['symbolized_by'], [(f['function'], f['file'].rsplit('/', 1)[-1], f['line']) for f in s['stack'] if f['symbolized_by'] == 'python'])"
    expect_eq "$v sites and python frames" "$(jget n$n.json "sorted(($site for s in d['memory']['by_site'] if s['file'].endswith('.py') and s['function'] != 'coro_alloc'), key=lambda x: x[1])")" "$want"
    # A coroutine under asyncio.run: its frame, the awaiting one, then the event loop's (their
    # lines are asyncio's own), down to main and the module.
    expect_eq "$v coroutine" "$(jget n$n.json "[(s['count'], s['bytes'], (lambda p: p[:2] + p[-2:])([(f['function'], f['file'].rsplit('/', 1)[-1], f['line']) for f in s['stack'] if f['symbolized_by'] == 'python'])) for s in d['memory']['by_site'] if s['function'] == 'coro_alloc']")" \
        "[(1, $((17 * MiB)), [('coro_alloc', 'stacks_nogil.py', $(line coro_alloc)), ('amain', 'stacks_nogil.py', $(line amain)), ('main', 'stacks_nogil.py', $(line main_async)), ('<module>', 'stacks_nogil.py', $(line module))])]"
    # The native thread: its own native frames only.
    expect_eq "$v native thread" "$(jget n$n.json "[(s['function'], s['file'].rsplit('/', 1)[-1], s['line'], s['count'], s['bytes'], [f['symbolized_by'] for f in s['stack']].count('python')) for s in d['memory']['by_site'] if not s['file'].endswith('.py')]")" \
        "[('body', 'pythread.c', $(grep -n 'SITE:body' "$SRC/tests/libs/pythread.c" | cut -d: -f1), 1, $((13 * MiB)), 0)]"
    expect_eq "$v launch site" "$(jget n$n.json "[(s['function'], s['line'], s['count'], s['symbolized_by']) for s in d['timeline']['launch_sites']]")" \
        "[('launch', $(line launch), 3, 'python')]"
    expect_eq "$v totals" "$(jget n$n.json "(d['memory']['alloc_count'], d['memory']['alloc_bytes'], d['stacks']['allocs_without_stack'], d['timeline']['launch_count'])")" \
        "(22, $((135 * MiB + 4096)), 0, 3)"
    # Python frames follow the native ones (nothing of the interpreter among them).
    expect_eq "$v native then python" "$(jget n$n.json "sorted(set((lambda k: k > 0 and all(f['symbolized_by'] == 'python' for f in s['stack'][k:]))([f['symbolized_by'] for f in s['stack']].index('python')) for s in d['memory']['by_site'] if s['file'].endswith('.py')))")" "[True]"
    got=$(traced l$n.trace "$py" "$lprog") || fail "$v: lines run failed: $got"
    expect_eq "$v lines output" "$got" "ok lines"
    "$GT_REPORT" --json --ignore-frames '^alloc$' l$n.trace > l$n.json || fail "$v: lines report failed"
    expect_eq "$v lines: sites" "$(jget l$n.json "ascii(sorted((s['line'], s['function'], s['file'].rsplit('/', 1)[-1], s['count'], s['bytes']) for s in d['memory']['by_site']))")" \
        "[($(lline loop_top), 'donn\xe9es', 'lines_\u03bb.py', 2, $((2 * MiB))), ($(lline loop_end), 'donn\xe9es', 'lines_\u03bb.py', 2, $((4 * MiB))), ($(lline after_gap), 'donn\xe9es', 'lines_\u03bb.py', 1, $((3 * MiB))), ($(lline after_far), 'donn\xe9es', 'lines_\u03bb.py', 1, $((4 * MiB))), ($(lline ucs4), '\U00020000_f', 'lines_\u03bb.py', 1, $((5 * MiB)))]"
    grep -q "self-check [0-9]* passed" n$n.err || fail "$v: no self-check: $(cat n$n.err)"
    ! grep -q "without the GIL are off" n$n.err || fail "$v: offset walk turned off: $(cat n$n.err)"
    # The self-check turns the offset walk off on a difference.
    got=$(GPUTRACE_TEST_PY_MISMATCH=1 traced m$n.trace "$py" "$prog" check "$PROGS/libpythread.so") || fail "$v: mismatch run failed: $got"
    expect_eq "$v mismatch output" "$got" "ok check 6 12"
    "$GT_REPORT" --json m$n.trace > m$n.json || fail "$v: mismatch report failed"
    native="(sorted((s['function'], s['count']) for s in d['memory']['by_site'] if s['symbolized_by'] == 'python'), sum(s['count'] for s in d['memory']['by_site'] if s['symbolized_by'] == 'python' or not any(f['symbolized_by'] == 'python' for f in s['stack'])), d['memory']['alloc_count'], d['memory']['alloc_bytes'], d['stacks']['allocs_without_stack'])"
    expect_eq "$v mismatch: native frames without the GIL" "$(jget m$n.json "$native")" "([('warm', 1)], 22, 22, $((135 * MiB + 4096)), 0)"
    expect_eq "$v mismatch note" "$(jget m$n.json "[n['level'] for n in d['notes'] if n['text'].startswith('Python frames without the GIL are off: self-check: frame 0 is code')]")" "['warning']"
    # GPUTRACE_PYTHON=gil: frames only while the GIL is held, no note.
    got=$(GPUTRACE_PYTHON=gil traced g$n.trace "$py" "$prog" check "$PROGS/libpythread.so") || fail "$v: gil-only run failed: $got"
    "$GT_REPORT" --json g$n.trace > g$n.json || fail "$v: gil-only report failed"
    expect_eq "$v gil only" "$(jget g$n.json "$native")" "([('warm', 1)], 22, 22, $((135 * MiB + 4096)), 0)"
    expect_eq "$v gil only: no note" "$(jget g$n.json "[n for n in d['notes'] if 'Python' in n['text']]")" "[]"
    # Shutdown: the tracer's atexit guard (one more atexit callback) runs before phase_one,
    # registered at cuInit, after phase_one was; from then on the 4 daemon threads spinning in native code get native
    # frames only (site spin_big: a stack with Python frames would have the Python caller as its
    # site), their first allocations had their Python frames (site spinner, 1 MiB each),
    # and the thread running the atexit handlers keeps its own; the interpreter then finalizes and
    # frees their thread states while they go on allocating: no crash.
    if [ -z "$tsan_rt" ]; then
        got=$(run_untraced "$py" "$prog" shutdown "$PROGS/libpythread.so") || fail "$v: untraced shutdown run failed: $got"
        expect_eq "$v untraced shutdown output" "$got" "ok shutdown 0"
    fi
    got=$(GPUTRACE_DEBUG=1 traced s$n.trace "$py" "$prog" shutdown "$PROGS/libpythread.so" 2> s$n.err) || fail "$v: shutdown run failed: $got $(cat s$n.err)"
    expect_eq "$v shutdown output" "$got" "ok shutdown 1"
    grep -q "atexit guard registered" s$n.err || fail "$v: no atexit guard: $(cat s$n.err)"
    "$GT_REPORT" --json s$n.trace > s$n.json || fail "$v: shutdown report failed"
    pyf="[(f['function'], f['file'].rsplit('/', 1)[-1], f['line']) for f in s['stack'] if f['symbolized_by'] == 'python']"
    pyline() { grep -n "SITE:$1 " "$SRC/tests/libs/pythread.c" | cut -d: -f1; }
    expect_eq "$v shutdown sites" "$(jget s$n.json "sorted((s['function'], s['line'], s['count'] if s['function'] != 'spin_big' else s['count'] >= 4, s['bytes'] // s['count'], s['bytes'] % s['count'], s['stacks'] if s['function'] != 'spin_big' else s['stacks'] >= 1, $pyf) for s in d['memory']['by_site'])")" \
        "[('phase_one', $(line phase_one), 1, $((5 * MiB)), 0, 1, [('phase_one', 'stacks_nogil.py', $(line phase_one))]), \
('spin_big', $(pyline spin_big), True, $((3 * MiB)), 0, True, []), \
('spinner', $(line spinner), 4, $MiB, 0, 1, [('spinner', 'stacks_nogil.py', $(line spinner)), ($(q run Thread.run), 'threading.py', $1), ($(q _bootstrap_inner Thread._bootstrap_inner), 'threading.py', $2), ($(q _bootstrap Thread._bootstrap), 'threading.py', $3)]), \
('warm', $(line warm), 1, 4096, 0, 1, [('warm', 'stacks_nogil.py', $(line warm)), ('shutdown', 'stacks_nogil.py', $(line shutdown_warm)), ('main', 'stacks_nogil.py', $(line main_shutdown)), ('<module>', 'stacks_nogil.py', $(line module))])]"
    expect_eq "$v shutdown totals" "$(jget s$n.json "(sum(s['count'] for s in d['memory']['by_site']) == d['memory']['alloc_count'], d['stacks']['allocs_without_stack'])")" "(True, 0)"
    # GPUTRACE_PYTHON=gil: no offset walk, so no atexit guard either.
    got=$(GPUTRACE_PYTHON=gil traced sg$n.trace "$py" "$prog" shutdown "$PROGS/libpythread.so") || fail "$v: gil-only shutdown run failed: $got"
    expect_eq "$v gil-only shutdown output" "$got" "ok shutdown 0"
    # The same shutdown again and again: no crash, no hang, the guard registered every time.
    i=0
    while [ $i -lt "$shutdown_runs" ]; do
        rm -f sr.trace
        got=$(traced sr.trace "$py" "$prog" shutdown "$PROGS/libpythread.so" 2>&1) || fail "$v: shutdown run $i failed: $got"
        expect_eq "$v shutdown run $i" "$got" "ok shutdown 1"
        i=$((i + 1))
    done
    echo "$v: sites and Python frames without the GIL exact; self-check on and off; shutdown x$((shutdown_runs + 2))"
done
