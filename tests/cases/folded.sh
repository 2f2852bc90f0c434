# --folded WHAT (issue 19): folded stacks for flame graphs. The weights of peak add up to the
# report's peak exactly; alloc, leak, launch and sync give each call site's figure of the
# report; idle gives each gap's idle time under its cause; Python frames read
# 'file.py:line function'; bad words and several traces are usage errors.
. "$SRC/tests/lib.sh"
traced t.trace "$PROGS/stacks_sites" 10 "$PROGS/libstkalloc.so" > out.txt || fail "program failed"
"$GT_REPORT" --json t.trace > t.json || fail "report failed"
for w in peak alloc leak launch sync; do
    "$GT_REPORT" --folded $w t.trace > $w.folded || fail "--folded $w failed"
    [ -s $w.folded ] || fail "--folded $w is empty"
done
sum() { awk '{ s += $NF } END { print s + 0 }' "$1"; }
expect_eq "peak sum" "$(sum peak.folded)" "$(jget t.json "d['memory']['peak_bytes']")"
expect_eq "leak sum" "$(sum leak.folded)" "$(jget t.json "d['memory']['leaked_bytes']")"
# per site: the leaf frame of each line is the call site (the stacks end at the CUDA call)
"$PYTHON" - t.json alloc.folded leak.folded launch.folded sync.folded <<'PY' || fail "folded weights differ from the report's sites"
import collections, json, sys
d = json.load(open(sys.argv[1]))
def folded(p):
    w = collections.Counter()
    for line in open(p):
        stack, weight = line.rsplit(" ", 1)
        frames = stack.split(";")
        assert frames[0] == "_start" or frames[0] == "[no stack]", line
        w[frames[-1]] += int(weight)
    return dict(w)
m, t = d["memory"], d["timeline"]
want = {
    "alloc": {s["function"]: s["bytes"] for s in m["by_site"] if s["bytes"]},
    "leak": {s["function"]: s["leaked_bytes"] for s in m["by_site"] if s["leaked_bytes"]},
    "launch": {s["function"]: s["count"] for s in t["launch_sites"] if s["count"]},
    "sync": {s["function"]: s["time_ns"] for s in t["sync_sites"] if s["time_ns"]},
}
for (what, w), p in zip(want.items(), sys.argv[2:]):
    got = folded(p)
    if got != w:
        sys.exit(f"--folded {what}: {got}, the report's sites: {w}")
PY
grep -q "main;alloc_buffers 6291456$" peak.folded || fail "peak: no main;alloc_buffers 6 MiB line: $(cat peak.folded)"

# idle: the three synchronize bubbles under their call site, adding up to the idle time
[ -f "$SIMCUPTI_DIR/libcupti.so.13" ] || skip "simulated CUPTI not built"
traced i.trace "$PROGS/idle" sync > /dev/null || fail "idle run failed"
"$GT_REPORT" --json i.trace > i.json && "$GT_REPORT" --folded idle i.trace > idle.folded || fail "idle failed"
expect_eq "idle sum" "$(sum idle.folded)" "$(jget i.json "d['timeline']['devices'][0]['idle_ns']")"
grep -q ";sync_bubble;\[GPU 0 idle: synchronize\] [0-9]*$" idle.folded || fail "idle: $(cat idle.folded)"

# Python frames
if command -v "$PYTHON" > /dev/null; then
    traced py.trace "$PYTHON" "$SRC/tests/progs/ctypes_alloc.py" > /dev/null || fail "python run failed"
    "$GT_REPORT" --folded alloc py.trace > py.folded || fail "python folded failed"
    grep -q "^ctypes_alloc.py:[0-9]* <module>;" py.folded || fail "no Python frame: $(cat py.folded)"
fi

rc=0; "$GT_REPORT" --folded nope t.trace 2> err.txt || rc=$?
expect_eq "bad word" $rc 1
grep -q "takes peak, alloc, leak, launch, sync or idle, not nope" err.txt || fail "$(cat err.txt)"
cp t.trace t2.trace
rc=0; "$GT_REPORT" --folded peak t.trace t2.trace 2> err.txt || rc=$?
expect_eq "several traces" $rc 1
