# gputrace-report DIR (issue 6, several processes): every regular file in DIR whose header is a
# gputrace trace, by name; other files are skipped with a note on standard error; the report is
# the one the same traces give when named one by one.
. "$SRC/tests/lib.sh"
[ -f "$SIMCUPTI_DIR/libcupti.so.13" ] || skip "simulated CUPTI not built"
MiB=1048576
mkdir d d/sub one none
# written in the opposite order of their names: the report must sort them
GTSIM_LOG="$PWD/b.log" traced d/b.trace "$PROGS/multi_rank" gpu 1 2 1 1 . > b.out || fail "rank b failed"
GTSIM_LOG="$PWD/a.log" traced d/a.trace "$PROGS/multi_rank" gpu 0 2 1 1 . > a.out || fail "rank a failed"
echo "not a trace" > d/notes.txt
: > d/empty.trace
cp d/a.trace one/only.trace

"$GT_REPORT" --json d > dir.json 2> dir.err || fail "report of a directory failed"
cat dir.err
"$GT_REPORT" --json d/a.trace d/b.trace > list.json || fail "report of the list failed"
cmp dir.json list.json || fail "directory and list reports differ"
"$PYTHON" "$SRC/tests/progs/multi_check.py" dir.json \
    "d/a.trace,a.log,a.out,$((1 * MiB + 2 * MiB))" \
    "d/b.trace,b.log,b.out,$((2 * MiB + 2 * MiB + 4096))" || fail "cross view differs from ground truth"
grep -qx "gputrace-report: d/notes.txt: skipped (not a gputrace trace (bad magic))" dir.err || fail "no note for notes.txt"
grep -qx "gputrace-report: d/empty.trace: skipped (empty file)" dir.err || fail "no note for the empty file"
grep -qx "gputrace-report: d/sub: skipped (not a regular file)" dir.err || fail "no note for the subdirectory"
expect_eq "notes" "$(wc -l < dir.err)" 3
# a trailing slash names the same files
"$GT_REPORT" --json d/ 2>/dev/null | cmp - dir.json || fail "d/ differs from d"

# A directory with one trace still gives the several-process shape (scripts can rely on it).
"$GT_REPORT" --json one > one.json || fail "report of a one-trace directory failed"
expect_eq "one-trace directory" "$(jget one.json "len(d['processes']), d['cross']['straggler']")" "1 None"

# No trace at all: exit 2, one line.
rc=0; "$GT_REPORT" none > none.out 2> none.err || rc=$?
expect_eq "empty directory exit" $rc 2
expect_eq "empty directory message" "$(cat none.err)" "gputrace-report: none: no gputrace traces in this directory"
[ -s none.out ] && fail "output for an empty directory"
exit 0
