# The analyzer's objects depend on each other only downward (analyzer/README.md: base < input <
# analyses < model < render < main.c) and never in a cycle, and the shim's (preload/) never in a
# cycle, read from their symbols (nm: who defines, who uses). The checker first shows that it
# finds cycles and an upward use made on purpose; then it reads the objects of this build.
. "$SRC/tests/lib.sh"
command -v nm > /dev/null 2>&1 || skip "binutils (nm) not installed"
"$PYTHON" "$SRC/tests/layers.py" --self-test || fail "the checker's self-test"
[ -d "$O/obj/analyzer" ] || fail "no analyzer objects under $O/obj (run make first)"
[ -d "$O/obj/preload" ] || fail "no shim objects under $O/obj (run make first)"
"$PYTHON" "$SRC/tests/layers.py" "$O/obj" analyzer || fail "the analyzer's objects have a cycle or an upward use"
"$PYTHON" "$SRC/tests/layers.py" "$O/obj" preload || fail "the shim's objects have a cycle"
# Renderers and main.c include model headers (and base/), never an analysis or input header.
if grep -n '#include "\(analyses\|input\)/' "$SRC"/analyzer/render/*.[ch] "$SRC"/analyzer/main.c; then
    fail "a renderer or main.c includes an analysis or input header (above)"
fi
