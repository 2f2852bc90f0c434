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
# Every renderer, and main.c, reads only the report model (model/report.h and the view headers):
# neither its includes, to the last header (the compiler's dependency file), nor its symbols reach
# analyses/ or input/.
MODEL_ONLY=$(cd "$SRC/analyzer/render" && ls -- *.c | sed 's/\.c$//')
below_model() { # a dependency file: the analysis and input headers it lists
    tr ' \\' '\n\n' < "$1" | grep -E '(^|/)analyzer/(analyses|input)/[^/]*\.h$' | sort -u
}
planted=$(mktemp)
printf 'x.o: x.c analyzer/model/multi.h \\\n analyzer/analyses/gaps.h\n' > "$planted"
[ -n "$(below_model "$planted")" ] || fail "the include check missed a planted analysis header"
rm -f "$planted"
# model/report.h, what every renderer may include, reaches no analysis or input header; the same
# check finds them behind model/state.h (the model's own state), so it can fail.
deps_of() { # a header: its dependency list, as the compiler sees it
    printf '#include "%s"\n' "$1" | ${CC:-cc} -MM -MT x.o -I"$SRC/analyzer" -I"$SRC/include" -x c - \
        > "$2" || fail "cannot compile a file that includes $1"
}
deps=$(mktemp)
deps_of model/report.h "$deps"
bad=$(below_model "$deps")
[ -z "$bad" ] || fail "model/report.h reaches analysis or input headers: $(echo $bad)"
deps_of model/state.h "$deps"
[ -n "$(below_model "$deps")" ] || fail "the header check found no analysis header behind model/state.h"
rm -f "$deps"
objs=""
for f in $MODEL_ONLY; do
    d="$O/obj/analyzer/render/$f.c.d"
    [ -f "$d" ] || fail "no $d (run make first)"
    bad=$(below_model "$d")
    [ -z "$bad" ] || fail "render/$f.c reads the model only, but includes: $(echo $bad)"
    objs="$objs analyzer/render/$f.c.o"
done
# main.c too: it holds reports through model/report.h's functions, not the model's state.
d="$O/obj/analyzer/main.c.d"
[ -f "$d" ] || fail "no $d (run make first)"
bad=$(below_model "$d")
[ -z "$bad" ] || fail "main.c reads the model only, but includes: $(echo $bad)"
objs="$objs analyzer/main.c.o"
"$PYTHON" "$SRC/tests/layers.py" --model-only "$O/obj" $objs || fail "a renderer that reads only the model uses an analysis"
