# The first call made without the GIL has its Python frames (issue 22): tests/progs/
# py_first_nogil.py allocates 128 MiB through ctypes.CDLL from python_big_alloc before anything
# else captures a stack, then four small blocks. The tracer asks for the atexit guard the walk by
# struct offsets waits for at cuInit, so the peak's top site is python_big_alloc, not libffi.
# On every installed CPython 3.9-3.13 release build.
. "$SRC/tests/lib.sh"
command -v "$PYTHON" >/dev/null || skip "no $PYTHON"
prog="$SRC/tests/progs/py_first_nogil.py"
line() { grep -n "SITE:$1\$" "$prog" | cut -d: -f1; }
pys="" seen=""
for p in "$PYTHON" "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.*/bin/python3 /usr/bin/python3.[0-9]*; do
    [ -x "$p" ] || continue
    id=$("$p" -c "import os, sys; print(os.path.realpath(sys.executable) if (3, 9) <= sys.version_info < (3, 14) and not hasattr(sys, 'gettotalrefcount') and getattr(sys, '_is_gil_enabled', lambda: True)() else '')" 2>/dev/null) || continue
    [ -n "$id" ] || continue
    case " $seen " in *" $id "*) continue ;; esac
    seen="$seen $id" pys="$pys $p"
done
[ -n "$pys" ] || skip "no CPython 3.9-3.13 release build installed"
n=0
for py in $pys; do
    n=$((n + 1))
    v=$("$py" -c 'import sys; print("python3.%d" % sys.version_info[1])')
    got=$(GPUTRACE_DEBUG=1 traced f$n.trace "$py" "$prog" 2> f$n.err) || fail "$v: run failed: $(cat f$n.err)"
    expect_eq "$v output" "$got" ok
    grep -q "atexit guard registered" f$n.err || fail "$v: no atexit guard: $(cat f$n.err)"
    "$GT_REPORT" --json f$n.trace > f$n.json || fail "$v: report failed"
    expect_eq "$v: the peak's sites" "$(jget f$n.json "[(s['function'], s['line']) for s in d['memory']['peak_breakdown']['by_site']]")" \
        "[('python_big_alloc', $(line big)), ('small', $(line small))]"
    echo "$v: $(jget f$n.json "d['memory']['peak_breakdown']['by_site'][0]['site']")"
done
exit 0
