# bench/RESULTS.md is bench/report.py's output over the last full run's raw figures (bench/raw/)
# and the sections kept beside them (bench/torch_*.md, html_large.md, sample.md): a hand edit made
# only in RESULTS.md would be lost at the next `make bench` (135 lines of the instruction runs'
# history were, before bench/torch_instr_notes.md held them). Regenerated here, it must be the
# committed file, line for line.
. "$SRC/tests/lib.sh"
[ -f "$SRC/bench/raw/raw.txt" ] || skip "no bench/raw/raw.txt in this tree"
(cd / && "$PYTHON" "$SRC/bench/report.py" "$SRC/bench/raw") > regen.md 2> err.txt || { cat err.txt; fail "report.py failed"; }
[ -s regen.md ] || fail "report.py wrote nothing"
diff -u "$SRC/bench/RESULTS.md" regen.md > diff.txt ||
    { head -40 diff.txt; fail "bench/RESULTS.md differs from bench/report.py's output: put the change into the file it is made from (bench/README.md)"; }
