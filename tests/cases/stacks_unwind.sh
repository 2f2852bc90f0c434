# The shim's fast unwinder (preload/unwind.c) gives the stacks libunwind gives: the same programs
# traced with the default walker and with GPUTRACE_UNWIND=libunwind report the same call sites
# with the same full stacks (function, file, line of every frame), C and C++, a dlopen'ed library
# included; the C program's five allocation sites are its five (tests/progs/stacks_sites.c); and
# the default walker took all of its stacks itself (GPUTRACE_DEBUG's count: at least its 17
# allocations, 13 frees, 5 launches and 1 synchronization, none by libunwind), the other none.
. "$SRC/tests/lib.sh"
sites="[(s['function'], s['line'], s['count'], s['bytes'], s['library'].rsplit('/',1)[-1], [(f['function'], f.get('file', '').rsplit('/',1)[-1], f.get('line')) for f in s['stack']]) for s in d['memory']['by_site']]"
launches="[(s['function'], s['line'], s['count']) for s in d['timeline']['launch_sites']]"
syncs="[(s['function'], s['line'], s['calls']) for s in d['timeline']['sync_sites']]"
run_both() { # name, program and arguments
    name=$1; shift
    for mode in fast libunwind; do
        GPUTRACE_DEBUG=1 GPUTRACE_UNWIND=$mode GPUTRACE_STACKS=all traced "$name.$mode.trace" "$@" \
            >/dev/null 2>"$name.$mode.err" || fail "$name: program failed (GPUTRACE_UNWIND=$mode)"
        "$GT_REPORT" --json "$name.$mode.trace" > "$name.$mode.json" || fail "$name: report failed ($mode)"
    done
    for what in "$sites" "$launches" "$syncs"; do
        expect_eq "$name: same as libunwind" "$(jget "$name.fast.json" "$what")" "$(jget "$name.libunwind.json" "$what")"
    done
}
run_both c "$PROGS/stacks_sites" 10 "$PROGS/libstkalloc.so"
expect_eq "c: allocation sites" "$(jget c.fast.json "sorted(s['function'] for s in d['memory']['by_site'])")" \
  "['alloc_buffers', 'alloc_weights', 'churn', 'stk_lib_alloc', 'try_huge']"
walked() { sed -n 's/^gputrace: thread [0-9]*: \([0-9]*\) stacks walked by the cached rules, \([0-9]*\) by libunwind .*/\1 \2/p' "$1"; }
set -- $(walked c.fast.err)
[ $# -eq 2 ] && [ "$1" -ge 36 ] && [ "$2" -eq 0 ] || fail "c: default walker: '$*' (want >= 36 walked by the rules, 0 by libunwind)"
set -- $(walked c.libunwind.err)
[ $# -eq 2 ] && [ "$1" -eq 0 ] && [ "$2" -ge 36 ] || fail "c: GPUTRACE_UNWIND=libunwind: '$*' (want 0 by the rules, >= 36 by libunwind)"
expect_eq "c: full stacks reach main" "$(jget c.fast.json "all('main' in [f['function'] for f in s['stack']] for s in d['memory']['by_site'])")" True
if [ -x "$PROGS/stacks_cpp" ]; then
    run_both cpp "$PROGS/stacks_cpp"
fi
echo "fast unwinder: the same stacks as libunwind"
