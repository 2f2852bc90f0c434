#!/bin/sh
# make install PREFIX=... puts the programs, the library, the headers, the manual pages, the
# Python helpers and the docs under PREFIX, and the installed launcher and report work from
# there; make uninstall removes every file it installed.
# test: alone (runs make in the build directory)
. "$SRC/tests/lib.sh"
p="$PWD/prefix"
# A sub-make of our own: the outer make's flags and jobserver do not apply here.
mk() { MAKEFLAGS= MFLAGS= MAKELEVEL= make -s -C "$SRC" O="$O" PREFIX="$p" "$@"; }
mk install >install.log 2>&1 || { cat install.log; fail "make install failed"; }
for f in bin/gputrace bin/gputrace-report lib/libgputrace.so include/gputrace/annotate.h \
    include/gputrace/trace_format.h share/man/man1/gputrace.1 share/man/man1/gputrace-report.1 \
    share/gputrace/python/gputrace_annotate.py share/doc/gputrace/README.md \
    share/doc/gputrace/TRACE_FORMAT.md share/doc/gputrace/REPORT_JSON.md; do
    [ -f "$p/$f" ] || fail "not installed: $f"
done
# the installed launcher finds the installed library (../lib) and the installed report reads
# what it wrote
# (a sanitizer build's shim needs its runtime loaded first: lib.sh found it)
rt="$asan_rt$tsan_rt"
LD_PRELOAD=$rt LD_LIBRARY_PATH="$SIMCUPTI_DIR:$SIM_DIR" "$p/bin/gputrace" -o t.trace "$PROGS/mem_scenarios" peak \
    >run.log 2>&1 || fail "installed gputrace failed: $(cat run.log)"
"$p/bin/gputrace-report" --json t.trace >t.json || fail "installed gputrace-report failed"
expect_eq "peak through the installed tools" "$(jget t.json "d['memory']['peak_bytes']")" $((340 * 1048576))
PYTHONPATH="$p/share/gputrace/python" "$PYTHON" -c "import gputrace_annotate as g; print(g.gputrace_active())" \
    >py.txt 2>&1 || fail "installed Python helper does not import: $(cat py.txt)"
if command -v man >/dev/null 2>&1; then
    MANPATH="$p/share/man" man -P cat gputrace-report 2>/dev/null | grep -q "gputrace-report" ||
        fail "man gputrace-report does not find the installed page"
fi
mk uninstall >uninstall.log 2>&1 || { cat uninstall.log; fail "make uninstall failed"; }
left=$(find "$p" -type f | sed "s|^$p/||")
expect_eq "files left after make uninstall" "$left" ""
echo "installed under PREFIX, the tools ran from there, make uninstall removed every file"
