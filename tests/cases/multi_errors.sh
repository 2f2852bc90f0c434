# Several traces, bad input (issue 6, several processes). A trace that cannot be read stops the
# run before anything is written: one line naming it, exit 2 (a cross-process view that silently
# lacks a rank would blame the wrong one). A trace cut short is reported up to its last whole
# chunk with a warning, as a single trace is. Also: --dump of several traces, standard input,
# and a single trace keeps its own report (no banner, no cross-process part).
. "$SRC/tests/lib.sh"
[ -f "$SIMCUPTI_DIR/libcupti.so.13" ] || skip "simulated CUPTI not built"
traced a.trace "$PROGS/multi_rank" gpu 0 2 1 1 . > a.out || fail "rank a failed"
traced b.trace "$PROGS/multi_rank" gpu 1 2 1 1 . > b.out || fail "rank b failed"

# header_size (bytes 16..19) of 3: the file starts like a trace but its header is unusable
cp b.trace bad.trace
printf '\003\000\000\000' | dd of=bad.trace bs=1 seek=16 conv=notrunc 2>/dev/null
echo "not a trace" > notes.txt
for case in bad.trace notes.txt missing.trace; do
    rc=0; "$GT_REPORT" --json -o out.json a.trace "$case" > out.txt 2> err.txt || rc=$?
    expect_eq "$case exit" $rc 2
    cat err.txt
    expect_eq "$case lines" "$(wc -l < err.txt)" 1
    grep -q "^gputrace-report: $case: " err.txt || fail "$case: the error does not name it"
    [ -e out.json ] && fail "$case: output written"
    [ -s out.txt ] && fail "$case: something on standard output"
done
grep -qx "gputrace-report: missing.trace: No such file or directory" err.txt || fail "missing file message"
"$GT_REPORT" a.trace bad.trace 2>&1 | grep -qx "gputrace-report: bad.trace: corrupt file header (header size)" ||
    fail "bad header message"
# in a directory too: a file that starts like a trace is one, and it is unreadable
mkdir d; cp a.trace bad.trace d/
rc=0; "$GT_REPORT" d > /dev/null 2> err.txt || rc=$?
expect_eq "directory with a bad trace exit" $rc 2
grep -qx "gputrace-report: d/bad.trace: corrupt file header (header size)" err.txt || fail "directory: bad trace not named"

# Cut short: reported with a warning, exit 0.
size=$(wc -c < b.trace)
head -c $((size - 100)) b.trace > cut.trace
"$GT_REPORT" --json a.trace cut.trace > cut.json 2> cut.err || fail "report with a cut trace failed"
grep -q "^gputrace-report: cut.trace: truncated at byte" cut.err || fail "no warning for the cut trace"
expect_eq "cut flagged" "$(jget cut.json "d['cross']['ranks'][1]['truncated'], d['processes'][1]['trace']['truncated']")" "True True"
expect_eq "whole flagged" "$(jget cut.json "d['cross']['ranks'][0]['truncated']")" False

# Standard input is one trace only.
rc=0; "$GT_REPORT" a.trace - < b.trace > /dev/null 2> err.txt || rc=$?
expect_eq "stdin among several exit" $rc 1
grep -q "standard input can only be read as the one trace" err.txt || fail "stdin message"
"$GT_REPORT" --json - < a.trace > stdin.json || fail "stdin alone failed"

# --dump: each trace after a banner, its lines as its own dump gives them.
"$GT_REPORT" --dump a.trace b.trace > dump.txt || fail "dump of two failed"
"$GT_REPORT" --dump a.trace > da.txt
"$GT_REPORT" --dump b.trace > db.txt
{ echo "==== process 1 of 2: a.trace ===="; cat da.txt; echo; echo "==== process 2 of 2: b.trace ===="; cat db.txt; } > want.txt
cmp dump.txt want.txt || fail "dump of two traces"

# One trace: its own report, unchanged in shape.
"$GT_REPORT" --json a.trace > one.json || fail "single report failed"
expect_eq "single top level" "$(jget one.json "'trace' in d, 'process' in d, 'processes' in d, 'cross' in d")" "True True False False"
"$GT_REPORT" a.trace > one.txt
grep -q "^====" one.txt && fail "single text report has a banner or cross-process part"
"$GT_REPORT" --help | grep -q "Several processes (ranks)" || fail "--help does not tell about several traces"
exit 0
