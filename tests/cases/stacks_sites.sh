# Host call stacks: every call site (function and file:line) and library exact, including a
# library dlopen'ed after tracing started; --stacks and --ignore-frames.
. "$SRC/tests/lib.sh"
prog=tests/progs/stacks_sites.c
line() { grep -n "SITE:$1 " "$SRC/$2" | cut -d: -f1; }
# Without host samples: a sample's stack starts at whatever instruction the signal interrupted, and
# its names would join the names at exit checked below (under ThreadSanitizer a sample landed in
# __tsan_read8, an exported function of the TSan runtime, and the set had one name more).
GPUTRACE_SAMPLE_HZ=0 traced t.trace "$PROGS/stacks_sites" 10 "$PROGS/libstkalloc.so" >out.txt ||
    fail "program failed: $(cat out.txt)"
"$GT_REPORT" --json t.trace > t.json || fail "report failed"
j() { jget t.json "$1"; }
# (function, file basename, line, count, bytes, failed, leaked, library basename) per site
site() { j "[(s['function'], s['file'].rsplit('/',1)[-1], s['line'], s['count'], s['bytes'], s['failed'], s['leaked_bytes'], s['library'].rsplit('/',1)[-1], s['symbolized_by']) for s in d['memory']['by_site'] if s['function'] == '$1']"; }
MiB=1048576
expect_eq alloc_weights "$(site alloc_weights)" "[('alloc_weights', 'stacks_sites.c', $(line alloc_weights $prog), 4, $((4 * MiB)), 0, $((4 * MiB)), 'stacks_sites', 'dwarf')]"
expect_eq alloc_buffers "$(site alloc_buffers)" "[('alloc_buffers', 'stacks_sites.c', $(line alloc_buffers $prog), 3, $((6 * MiB)), 0, 0, 'stacks_sites', 'dwarf')]"
expect_eq try_huge "$(site try_huge)" "[('try_huge', 'stacks_sites.c', $(line try_huge $prog), 0, 0, 1, 0, 'stacks_sites', 'dwarf')]"
expect_eq churn "$(site churn)" "[('churn', 'stacks_sites.c', $(line churn $prog), 10, 40960, 0, 0, 'stacks_sites', 'dwarf')]"
expect_eq "dlopen'ed library" "$(site stk_lib_alloc)" "[('stk_lib_alloc', 'stkalloc.c', $(line stk_lib_alloc tests/libs/stkalloc.c), 3, $((3 * MiB)), 0, $((3 * MiB)), 'libstkalloc.so', 'dwarf')]"
expect_eq "sites" "$(j "len(d['memory']['by_site'])")" 5
expect_eq "by library" "$(j "[(l['name'], l['count'], l['bytes'], l['failed'], l['leaked_bytes']) for l in d['memory']['by_library']]")" \
  "[('stacks_sites', 17, $((10 * MiB + 40960)), 1, $((4 * MiB))), ('libstkalloc.so', 3, $((3 * MiB)), 0, $((3 * MiB)))]"
expect_eq "launch sites" "$(j "[(s['function'], s['line'], s['count'], s['failed']) for s in d['timeline']['launch_sites']]")" \
  "[('run_kernels', $(line run_kernels $prog), 5, 0)]"
expect_eq "sync sites" "$(j "[(s['function'], s['line'], s['calls']) for s in d['timeline']['sync_sites']]")" \
  "[('wait_all', $(line wait_all $prog), 1)]"
# Frees carry no stack by default; the full stack reaches main.
expect_eq "free stacks off by default" "$(j "d['memory']['free_count']")" 13
expect_eq "stack of alloc_weights" "$(j "[f['function'] for f in d['memory']['by_site'][1]['stack']][:2]")" "['alloc_weights', 'main']"
expect_eq "library stack" "$(j "[f['function'] for s in d['memory']['by_site'] if s['function'] == 'stk_lib_alloc' for f in s['stack']][:3]")" \
  "['stk_lib_alloc', 'from_library', 'main']"
expect_eq "no unknown ips" "$(j "d['stacks']['ips_symbolized_by']['unknown']")" 0
# The names written at exit (dladdr's, for a trace read where the objects are not): the exported
# functions on the stacks, the dlopen'ed library's among them, each with its symbol's size.
size_of() { # OBJECT SYMBOL: its size in the dynamic symbol table, in decimal
    echo $((0x$(nm -D --defined-only -S "$1" | awk -v s="$2" '$4 == s || index($4, s "@") == 1 {print $2; exit}')))
}
libc=$(ldd "$PROGS/stacks_sites" | awk '/libc.so/ {print $3}')
"$GT_REPORT" --dump t.trace > dump.txt || fail "dump failed"
command -v nm > /dev/null 2>&1 && expect_eq "names at exit" "$(sed -n 's/.* SYMBOL - addr=0x[0-9a-f]* size=\([0-9]*\) name="\(.*\)"$/\2 \1/p' dump.txt | sort | tr '\n' ' ')" \
    "__libc_start_main $(size_of "$libc" __libc_start_main) stk_lib_alloc $(size_of "$PROGS/libstkalloc.so" stk_lib_alloc) "
# Text report: the sites, and their stacks with --stacks.
"$GT_REPORT" --stacks t.trace > t.txt || fail "text report failed"
grep -q "alloc_weights (stacks_sites.c:$(line alloc_weights $prog))  \[stacks_sites\]" t.txt || fail "text: alloc_weights site: $(cat t.txt)"
grep -q "stk_lib_alloc (stkalloc.c:$(line stk_lib_alloc tests/libs/stkalloc.c))  \[libstkalloc.so\]" t.txt || fail "text: library site"
grep -q "#1  main (.*stacks_sites.c:[0-9]*) \[stacks_sites\]" t.txt || fail "text: --stacks shows no main frame: $(cat t.txt)"
# --ignore-frames: with alloc_weights counted as allocator internals, its caller is the site.
"$GT_REPORT" --json --ignore-frames '^alloc_weights$' t.trace > i.json || fail "report --ignore-frames failed"
expect_eq "ignored frame" "$(jget i.json "[(s['function'], s['count']) for s in d['memory']['by_site'] if s['count'] == 4]")" "[('main', 4)]"
"$GT_REPORT" --ignore-frames '(' t.trace >/dev/null 2>err.txt && fail "a bad regex was accepted"
grep -q -- "--ignore-frames" err.txt || fail "bad regex message: $(cat err.txt)"
# GPUTRACE_STACKS=free: frees get stacks, allocations none.
GPUTRACE_STACKS=free traced f.trace "$PROGS/stacks_sites" 10 >/dev/null || fail "program failed (free)"
"$GT_REPORT" --dump f.trace > f.txt || fail "dump failed"
expect_eq "free stacks" "$(grep -c ' FREE .* stack=' f.txt)" 13
expect_eq "no alloc stacks" "$(grep -c ' ALLOC .* stack=' f.txt)" 0
echo "call sites, libraries, launches and syncs exact"
