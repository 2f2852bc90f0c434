# bench/gen_trace (the analyzer benchmarks' trace writer) writes files the report reads, packed
# and compressed too: a header changed after gt_header_init (min_version for the codecs) must be
# sealed again, or every compressed trace of `make bench` is refused (checksum mismatch).
. "$SRC/tests/lib.sh"
G="$(dirname "$GT_REPORT")/bench/gen_trace"
[ -x "$G" ] || skip "$G not built (make bench-progs)"
for opts in "" "--compress 1" "--compress 1 --pack"; do
    name=t$(echo "$opts" | tr -d ' -')
    "$G" $opts 20000 "$name.trace" > gen.txt || fail "gen_trace $opts failed"
    want=$(sed -n 's/^records=\([0-9]*\) .*/\1/p' gen.txt)
    "$GT_REPORT" --json "$name.trace" > "$name.json" 2> err.txt || fail "gen_trace $opts: the report refused it: $(cat err.txt)"
    expect_eq "gen_trace $opts: records" "$(jget "$name.json" "d['trace']['records']")" "$want"
done
