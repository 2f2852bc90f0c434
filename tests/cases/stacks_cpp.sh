# Host call stacks from C++: call sites come out demangled, with their lines.
. "$SRC/tests/lib.sh"
line() { grep -n "SITE:$1\$" "$SRC/tests/progs/stacks_cpp.cc" | cut -d: -f1; }
[ -x "$PROGS/stacks_cpp" ] || skip "no C++ compiler: stacks_cpp not built"
traced t.trace "$PROGS/stacks_cpp" >/dev/null || fail "program failed"
"$GT_REPORT" --json t.trace > t.json || fail "report failed"
expect_eq "sites" "$(jget t.json "[(s['function'], s['file'].rsplit('/',1)[-1], s['line'], s['count'], s['bytes']) for s in d['memory']['by_site']]")" \
  "[('gtstk::Pool::grow(unsigned long)', 'stacks_cpp.cc', $(line Pool::grow), 3, 3145728), ('float* gtstk::make_buffer<float>(unsigned long)', 'stacks_cpp.cc', $(line make_buffer), 1, 1048576)]"
"$GT_REPORT" t.trace | grep -q "gtstk::Pool::grow(unsigned long) (stacks_cpp.cc:$(line Pool::grow))" || fail "text report"
echo "C++ call sites demangled"
