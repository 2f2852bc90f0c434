#!/bin/sh
# gputrace-report -o never destroys data: an output that is one of the traces is refused (same
# file, through standard input, a link or a directory), a trace that cannot be read leaves an
# existing output as it was, the report replaces the output only once complete (no temporary
# file left, mode kept, a link's target replaced); the same trace given twice is reported once.
. "$SRC/tests/lib.sh"
traced t.trace "$PROGS/mem_scenarios" peak >out.txt 2>&1 || fail "program failed: $(cat out.txt)"
cp t.trace keep.trace
"$GT_REPORT" t.trace >want.txt 2>/dev/null || fail "report failed"

# refused: exit 1, one line naming both, the trace intact
refused() { # what, then the arguments
    what=$1; shift
    rc=0
    "$GT_REPORT" "$@" >o.txt 2>e.txt </dev/null || rc=$?
    expect_eq "$what: exit status" "$rc" 1
    expect_eq "$what: stderr lines" "$(wc -l <e.txt | tr -d ' ')" 1
    grep -q "refusing to overwrite it" e.txt || fail "$what: $(cat e.txt)"
    cmp -s t.trace keep.trace || fail "$what: the trace was changed"
}
refused "-o t.trace t.trace" -o t.trace t.trace
refused "--json --output=t.trace" --json --output=t.trace t.trace
refused "--dump -o ./t.trace" --dump -o ./t.trace t.trace
ln -s t.trace link.trace
refused "-o link.trace t.trace" -o link.trace t.trace
mkdir ranks && cp t.trace ranks/a.trace && cp ranks/a.trace ranks.keep
refused "-o ranks/a.trace ranks" -o ranks/a.trace ranks
cmp -s ranks/a.trace ranks.keep || fail "the trace in the directory was changed"
rc=0
"$GT_REPORT" -o t.trace - <t.trace >/dev/null 2>e.txt || rc=$?
expect_eq "-o t.trace - <t.trace: exit status" "$rc" 1
cmp -s t.trace keep.trace || fail "standard input: the trace was changed"

# a trace that cannot be read leaves the output as it was
echo "an earlier report" >existing.txt
chmod 640 existing.txt
for args in "missing.trace" "--json missing.trace" "--dump missing.trace" "t.trace missing.trace"; do
    rc=0
    "$GT_REPORT" -o existing.txt $args >/dev/null 2>e.txt || rc=$?
    expect_eq "$args: exit status" "$rc" 2
    expect_eq "$args: existing output kept" "$(cat existing.txt)" "an earlier report"
done

# a good report replaces it whole, keeps its mode, leaves no temporary file
"$GT_REPORT" -o existing.txt t.trace 2>e.txt || fail "report to existing.txt failed: $(cat e.txt)"
cmp -s existing.txt want.txt || fail "the output differs from the report on standard output"
expect_eq "mode kept" "$(stat -c %a existing.txt)" 640
expect_eq "files left in the folder" "$(ls -A | grep -c '^\.')" 0
# through a link: the link stays, its target gets the report
echo old >target.txt
ln -s target.txt out-link.txt
"$GT_REPORT" -o out-link.txt t.trace 2>e.txt || fail "report through a link failed: $(cat e.txt)"
[ -L out-link.txt ] || fail "the link was replaced by a file"
cmp -s target.txt want.txt || fail "the link's target did not get the report"
# a device is written in place, not replaced
"$GT_REPORT" -o /dev/null t.trace || fail "-o /dev/null failed"
[ -c /dev/null ] || fail "/dev/null is no longer a device"
# a write error is an error, and the earlier output stays
if [ -w /dev/full ]; then
    rc=0
    "$GT_REPORT" -o /dev/full t.trace 2>e.txt || rc=$?
    expect_eq "-o /dev/full: exit status" "$rc" 1
fi
# stopped while it works (the trace comes slowly through a pipe): OUT as it was, no temporary
# file left
"$PYTHON" - "$GT_REPORT" <<'PY' || fail "stopping the report: see above"
import os, signal, subprocess, sys, time
p = subprocess.Popen([sys.argv[1], "-o", "existing.txt", "-"], stdin=subprocess.PIPE,
                     stderr=subprocess.DEVNULL)
data = open("t.trace", "rb").read()
p.stdin.write(data[:len(data) // 2]); p.stdin.flush()
time.sleep(0.3)
p.send_signal(signal.SIGTERM)
rc = p.wait()
assert rc == -signal.SIGTERM, "exit status %d, not killed by SIGTERM" % rc
PY
cmp -s existing.txt want.txt || fail "stopped: existing.txt changed"
expect_eq "stopped: files left in the folder" "$(ls -A | grep -c '^\.')" 0
# a missing folder: one line, exit 1
rc=0
"$GT_REPORT" -o nodir/out.txt t.trace 2>e.txt || rc=$?
expect_eq "-o nodir/out.txt: exit status" "$rc" 1
grep -q "nodir/out.txt: No such file or directory" e.txt || fail "missing folder: $(cat e.txt)"

# the same trace twice (by name, by a link): reported once, as if given once, said on stderr
"$GT_REPORT" t.trace t.trace >twice.txt 2>e.txt || fail "t.trace t.trace failed: $(cat e.txt)"
cmp -s twice.txt want.txt || fail "t.trace given twice: not the single report"
grep -q "t.trace: the same trace as t.trace; reported once" e.txt || fail "not said: $(cat e.txt)"
cp t.trace u.trace
"$GT_REPORT" --json t.trace link.trace u.trace >m.json 2>e.txt || fail "three names failed"
expect_eq "t, its link and a copy: processes" "$(jget m.json "len(d['processes'])")" 2
grep -q "link.trace: the same trace as t.trace; reported once" e.txt || fail "link not said: $(cat e.txt)"
echo "no output destroyed; repeats reported once"
