# The struct offsets preload/python.c reads Python frames with (its `layouts` table, and the
# offsets it takes as fixed: ob_type, bytes and str fields, frame owner values) against the
# interpreter's own headers: for every installed CPython 3.9-3.13 with its headers (internal ones
# included), a program compiled with Py_BUILD_CORE prints the same row with offsetof.
. "$SRC/tests/lib.sh"
command -v cc >/dev/null || skip "no C compiler"
cat > off.c <<'C'
#define Py_BUILD_CORE 1
#include <Python.h>
#include <stddef.h>
#include <stdio.h>
#if PY_MINOR_VERSION >= 11
#include "internal/pycore_code.h"
#include "internal/pycore_frame.h"
#endif
#include <frameobject.h>
#define O(s, f) ((int)offsetof(s, f))
int main(void)
{
    int fixed = O(PyObject, ob_type) == 8 && O(PyVarObject, ob_size) == 16 &&
                O(PyBytesObject, ob_sval) == 32 && O(PyASCIIObject, length) == 16 &&
                O(PyASCIIObject, state) == 32;
#if PY_MINOR_VERSION >= 11
    fixed = fixed && FRAME_OWNED_BY_GENERATOR == 1 && sizeof(((_PyInterpreterFrame *)0)->owner) == 1;
#endif
#if PY_MINOR_VERSION >= 12
    fixed = fixed && FRAME_OWNED_BY_CSTACK == 3;
#endif
#if PY_MINOR_VERSION <= 10
    printf("{%d, %d, 0, %d, %d, %d, %d, %d, 0, 0, 0, ", O(PyThreadState, interp), O(PyThreadState, frame),
           O(PyFrameObject, f_back), O(PyFrameObject, f_code), O(PyFrameObject, f_lasti),
           O(PyFrameObject, f_trace), O(PyFrameObject, f_lineno));
    printf("%d, %d, %d, %d, 0, 0, ", O(PyCodeObject, co_firstlineno), O(PyCodeObject, co_filename),
           O(PyCodeObject, co_name),
#if PY_MINOR_VERSION == 9
           O(PyCodeObject, co_lnotab));
#else
           O(PyCodeObject, co_linetable));
#endif
#else
#if PY_MINOR_VERSION <= 12
    printf("{%d, %d, %d, ", O(PyThreadState, interp), O(PyThreadState, cframe), O(_PyCFrame, current_frame));
    printf("%d, %d, %d, ", O(_PyInterpreterFrame, previous), O(_PyInterpreterFrame, f_code),
           O(_PyInterpreterFrame, prev_instr));
#else
    printf("{%d, %d, 0, ", O(PyThreadState, interp), O(PyThreadState, current_frame));
    printf("%d, %d, %d, ", O(_PyInterpreterFrame, previous), O(_PyInterpreterFrame, f_executable),
           O(_PyInterpreterFrame, instr_ptr));
#endif
    printf("0, 0, %d, %d, %d, ", O(_PyInterpreterFrame, owner), O(_PyInterpreterFrame, frame_obj),
           O(PyFrameObject, f_lineno));
    printf("%d, %d, %d, %d, %d, %d, ", O(PyCodeObject, co_firstlineno), O(PyCodeObject, co_filename),
           O(PyCodeObject, co_qualname), O(PyCodeObject, co_linetable),
           O(PyCodeObject, _co_firsttraceable), O(PyCodeObject, co_code_adaptive));
#endif
    printf("%d, %d}, fixed=%d\n", (int)sizeof(PyASCIIObject), (int)sizeof(PyCompactUnicodeObject), fixed);
    printf("%d %d\n", O(PyThreadState, id), O(PyThreadState, next));
    return 0;
}
C
cands="$PYTHON"
for p in "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.*/bin/python3 /usr/bin/python3.[0-9]*; do
    case "$p" in *-config) continue ;; esac
    [ -x "$p" ] && cands="$cands $p"
done
n=0 seen=""
for py in $cands; do
    info=$("$py" -c "import os, sys, sysconfig; print(os.path.realpath(sys.executable), sys.version_info[1], sysconfig.get_paths()['include'], sysconfig.get_config_var('CONFINCLUDEPY') or '')" 2>/dev/null) || continue
    set -- $info
    case " $seen " in *" $1 "*) continue ;; esac
    seen="$seen $1"
    minor=$2 inc=$3 confinc=${4:-$3}
    [ "$("$py" -c 'import sys; print(sys.version_info[0])')" = 3 ] && [ "$minor" -ge 9 ] && [ "$minor" -le 13 ] || continue
    [ -f "$inc/Python.h" ] && [ -d "$inc/internal" ] || { echo "3.$minor ($py): no headers, skipped"; continue; }
    cc -w -I"$inc" -I"$inc/internal" -I"$confinc" off.c -o off$n 2> cc$n.err || fail "3.$minor: cannot compile against $inc: $(head -5 cc$n.err)"
    ./off$n > got$n || fail "3.$minor: offsets program failed"
    want=$(grep "^    /\* 3\.$minor \*/" "$SRC/preload/python.c" | sed 's/^ *\/\* 3\.[0-9]* \*\/ //; s/,$//')
    expect_eq "3.$minor ($py) layout" "$(head -n 1 got$n)" "$want, fixed=1"
    # PyThreadState.id (ts_ids, where not 0) and .next (TS_NEXT)
    set -- $(sed -n 2p got$n)
    ids=$(sed -n 's/^static const uint16_t ts_ids\[5\] = {\(.*\)};$/\1/p' "$SRC/preload/python.c" | tr -d ' ')
    id=$(echo "$ids" | cut -d, -f$((minor - 8)))
    [ -n "$id" ] || fail "no ts_ids table in preload/python.c"
    [ "$id" = 0 ] || expect_eq "3.$minor ($py) PyThreadState.id" "$1" "$id"
    expect_eq "3.$minor ($py) PyThreadState.next" "$2" "$(sed -n 's/^#define TS_NEXT \([0-9]*\)$/\1/p' "$SRC/preload/python.c")"
    echo "3.$minor: layout, PyThreadState.id $1 (table: $id), .next $2"
    n=$((n + 1))
done
[ $n -gt 0 ] || skip "no CPython 3.9-3.13 with headers"
echo "$n interpreters: layouts equal to their headers"
