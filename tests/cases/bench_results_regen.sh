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
# A later run of some sections replaces only what those sections measure: a run of section 1
# alone (its last round's trace sizes) keeps section 3's own CUPTI pair run and its Kineto
# comparison (a run of BENCH_SECTIONS="1 4 5" had dropped them, 2026-12-05).
mkdir -p later
cat > later/raw.txt <<'RAW'
sec=env key=date val=2027-01-01_00:00_UTC
sec=env key=sections val=1
sec=size kind=launch-off bytes=777 records=101 gpu_records=0 launches=100 kernels=0 allocs=0 frees=0 cupti_dropped=0 lost=0
RAW
w=$PWD
(cd / && "$PYTHON" "$SRC/bench/report.py" --save "$w/merged" "$SRC/bench/raw" "$w/later") > merged.md 2> err.txt ||
    { cat err.txt; fail "report.py (merge) failed"; }
grep -q "^sec=size kind=pair-on .* run=0$" merged/raw.txt || fail "the merge dropped section 3's pair run"
grep -q "^sec=kineto_conv " merged/raw.txt || fail "the merge dropped section 3's Kineto comparison"
[ "$(grep -c '^sec=size kind=launch-off ' merged/raw.txt)" = 1 ] &&
    grep -q "^sec=size kind=launch-off bytes=777 " merged/raw.txt || fail "the later run's launch-off size did not replace the earlier one"
grep -q "11 B per launch+kernel pair" merged.md || fail "the merged RESULTS.md lost the bytes per launch+kernel pair"
grep -q "(from the run of 2026-12-04 17:09 UTC)" merged.md || fail "the merged RESULTS.md does not say which run the pair comes from"
echo "merge: a section-1 run keeps section 3's pair run"
