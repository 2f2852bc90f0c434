#!/bin/sh
# --json --all-gaps lists every GPU idle gap, in time order, streamed: the report's peak memory
# is that of the report without it (it grew by ~6 KB per gap when the list was built in memory:
# 1.03 GB against 175 MB for 139,817 gaps). In text mode --all-gaps says it applies to the JSON.
. "$SRC/tests/lib.sh"
# kernels of 10 ns launched in a loop: nearly every launch ends a gap
GTSIM_KERNEL_NS=10 traced t.trace "$PROGS/launch_loop" 40000 >out.txt 2>&1 || fail "program failed: $(cat out.txt)"
"$PYTHON" - "$GT_REPORT" <<'PY' >rss.txt || fail "report failed: $(cat rss.txt)"
import resource, subprocess, sys
def peak_kb(args, out):
    # each run in its own child python so that RUSAGE_CHILDREN is that run's alone
    code = ("import resource, subprocess, sys; subprocess.run(sys.argv[1:-1], check=True, "
            "stdout=open(sys.argv[-1], 'w')); "
            "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")
    r = subprocess.run([sys.executable, "-c", code] + args + [out], check=True,
                       capture_output=True, text=True)
    return int(r.stdout)
base = peak_kb([sys.argv[1], "--json", "t.trace"], "top.json")
every = peak_kb([sys.argv[1], "--json", "--all-gaps", "t.trace"], "all.json")
print(base, every)
PY
read base every <rss.txt
n=$(jget all.json "d['timeline']['devices'][0]['gap_count']")
[ "$n" -ge 20000 ] || fail "expected >= 20000 gaps, got $n"
expect_eq "listed" "$(jget all.json "len(d['timeline']['devices'][0]['gaps'])")" "$n"
expect_eq "omitted" "$(jget all.json "d['timeline']['devices'][0]['gaps_omitted']")" 0
expect_eq "time order" "$(jget all.json "(lambda g: all(a['start_ns'] + a['duration_ns'] <= b['start_ns'] for a, b in zip(g, g[1:])))(d['timeline']['devices'][0]['gaps'])")" True
expect_eq "idle time adds up" "$(jget all.json "sum(g['duration_ns'] for g in d['timeline']['devices'][0]['gaps']) == d['timeline']['devices'][0]['idle_ns']")" True
# the 20 longest of the default report are the 20 longest of the list, field for field
expect_eq "top 20 among them" "$("$PYTHON" -c "
import json
a = json.load(open('all.json'))['timeline']['devices'][0]['gaps']
t = json.load(open('top.json'))['timeline']['devices'][0]['gaps']
print(sorted(a, key=lambda g: (-g['duration_ns'], g['start_ns']))[:20] == t)")" True
# the rest of the document is the same
expect_eq "rest unchanged" "$("$PYTHON" -c "
import json
a = json.load(open('all.json')); t = json.load(open('top.json'))
for d in (a, t):
    del d['timeline']['devices'][0]['gaps'], d['timeline']['devices'][0]['gaps_omitted']
print(a == t)")" True
# memory: within 16 MiB of the report without the list ($n gaps held in memory took ~6 KB each);
# not under a sanitizer, whose quarantine keeps freed memory (each gap's JSON objects) resident
if ldd "$GT_REPORT" 2>/dev/null | grep -q 'lib[at]san'; then
    echo "sanitizer build: peak RSS not checked ($every KB with --all-gaps, $base KB without)"
else
    [ "$every" -le $((base + 16384)) ] || fail "--all-gaps peak RSS $every KB against $base KB without it"
fi
# several traces: every process's list, streamed too
cp t.trace u.trace
"$GT_REPORT" --json --all-gaps t.trace u.trace >m.json || fail "report of two traces failed"
expect_eq "two traces: both lists" "$(jget m.json "[len(p['timeline']['devices'][0]['gaps']) for p in d['processes']]")" "[$n, $n]"
# text: the same report, and a line saying where the list is
"$GT_REPORT" t.trace >plain.txt 2>/dev/null || fail "text report failed"
"$GT_REPORT" --all-gaps t.trace >text.txt 2>e.txt || fail "text --all-gaps failed"
cmp -s plain.txt text.txt || fail "text --all-gaps changed the text report"
grep -q "all-gaps lists every gap in the JSON report (--json)" e.txt || fail "text --all-gaps says nothing: $(cat e.txt)"
echo "$n gaps listed; peak RSS $every KB with --all-gaps, $base KB without"
