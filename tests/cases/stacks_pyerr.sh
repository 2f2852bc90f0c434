# An exception in flight while the tracer reads Python frames through the API: a C function
# called through ctypes.PyDLL (tests/libs/pythread.c: pythread_alloc_raising, the GIL held) sets
# KeyError("gputrace-pyerr") and then allocates, as a deallocator freeing device memory during an
# exception's unwinding does. The tracer's frame walk calls the API with that exception set aside
# and must put it back unchanged: ctypes raises it on return, the same as untraced. The
# allocation is in the trace with its Python frames (the caller's function and line). Runs on
# every CPython 3.9-3.13 release build found ($PYTHON, pyenv's): the exception is kept by
# PyErr_GetRaisedException from 3.12 and by PyErr_Fetch before.
. "$SRC/tests/lib.sh"
command -v "$PYTHON" >/dev/null || skip "no $PYTHON"
cat > pyerr.py <<'PY'
import ctypes, sys
cu = ctypes.CDLL("libcuda.so.1")
dev, ctx = ctypes.c_int(), ctypes.c_void_p()
assert cu.cuInit(0) == 0 and cu.cuDeviceGet(ctypes.byref(dev), 0) == 0
assert cu.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev) == 0 and cu.cuCtxSetCurrent(ctx) == 0
lib = ctypes.PyDLL(sys.argv[1])
def raising():
    try:
        lib.pythread_alloc_raising(ctypes.c_size_t(3 << 20))  # SITE:raising
    except KeyError as e:
        return "KeyError %s" % e.args
    return "no exception"
print(raising(), raising())
PY
line=$(grep -n "SITE:raising" pyerr.py | cut -d: -f1)
pys="" minors=""
for p in "$PYTHON" "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.*/bin/python3; do
    m=$("$p" -c "import sys; print(sys.version_info[1] if (3, 9) <= sys.version_info < (3, 14) and not hasattr(sys, 'gettotalrefcount') else '')" 2>/dev/null) || continue
    case " $minors " in *" $m "*) continue ;; esac
    [ -n "$m" ] && pys="$pys $p" minors="$minors $m"
done
[ -n "$pys" ] || skip "no CPython 3.9-3.13 release build"
echo "interpreters: 3.$(echo $minors | sed 's/ /, 3./g')"
for py in $pys; do
    m=$("$py" -c 'import sys; print(sys.version_info[1])')
    v="python3.$m"
    want="KeyError gputrace-pyerr KeyError gputrace-pyerr"
    if [ -z "$tsan_rt" ]; then # (a TSan runtime cannot be loaded into an uninstrumented Python)
        got=$(LD_PRELOAD="$asan_rt" untraced "$py" pyerr.py "$PROGS/libpythread.so") || fail "$v: untraced run failed: $got"
        expect_eq "$v untraced" "$got" "$want"
    fi
    got=$(traced e$m.trace "$py" pyerr.py "$PROGS/libpythread.so") || fail "$v: traced run failed: $got"
    expect_eq "$v traced: the exception kept" "$got" "$want"
    "$GT_REPORT" --json e$m.trace > e$m.json || fail "$v: report failed"
    expect_eq "$v: the allocations, at the Python caller" \
        "$(jget e$m.json "[(s['function'], s['line'], s['count'], s['bytes'], [f['function'] for f in s['stack'] if f['symbolized_by'] == 'python'][:2]) for s in d['memory']['by_site']]")" \
        "[('raising', $line, 2, $((6 << 20)), ['raising', '<module>'])]"
done
