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
# The renderers moved onto the report model so far (issue 18: domain by domain, until every
# render/*.c is here and model/report.h includes no analysis header): neither their includes, to
# the last header (the compiler's dependency file), nor their symbols reach analyses/ or input/.
MODEL_ONLY="text_multi json_multi json_str text_pools json_pools text_nvml json_nvml"
MODEL_ONLY="$MODEL_ONLY text_run json_run folded dump torch_dump chrome_trace"
MODEL_ONLY="$MODEL_ONLY text_sites json_sites"
MODEL_ONLY="$MODEL_ONLY text_mem json_mem json_peak torch_render html"
MODEL_ONLY="$MODEL_ONLY text_gpu json_gpu"
below_model() { # a dependency file: the analysis and input headers it lists
    tr ' \\' '\n\n' < "$1" | grep -E '(^|/)analyzer/(analyses|input)/[^/]*\.h$' | sort -u
}
planted=$(mktemp)
printf 'x.o: x.c analyzer/model/multi.h \\\n analyzer/analyses/gaps.h\n' > "$planted"
[ -n "$(below_model "$planted")" ] || fail "the include check missed a planted analysis header"
rm -f "$planted"
objs=""
for f in $MODEL_ONLY; do
    d="$O/obj/analyzer/render/$f.c.d"
    [ -f "$d" ] || fail "no $d (run make first)"
    bad=$(below_model "$d")
    [ -z "$bad" ] || fail "render/$f.c reads the model only, but includes: $(echo $bad)"
    objs="$objs analyzer/render/$f.c.o"
done
"$PYTHON" "$SRC/tests/layers.py" --model-only "$O/obj" $objs || fail "a renderer that reads only the model uses an analysis"
