# Python frames of a sleeping thread other than the main one (issue 20): a loader thread waits in
# wait_for_batch (time.sleep) between its CUDA calls (tests/progs/sample_thread_py.py). The
# sampler thread walks it while it sleeps and reads its Python frames only where its thread state
# is found alive with the id the thread published (it may have ended or left Python since). Most
# of the loader's off-CPU samples must carry wait_for_batch at the sleep's line; before, only the
# main thread's Python frames were read while it slept (0 of them).
. "$SRC/tests/lib.sh"
[ -r /proc/self/task/$$/syscall ] || skip "no /proc/PID/task/TID/syscall on this kernel"
rc=0
out=$(GPUTRACE_SAMPLE_HZ=200 traced run.trace "$PYTHON" "$SRC/tests/progs/sample_thread_py.py" 30 2>&1) || rc=$?
[ $rc -eq 0 ] || fail "traced run exited with $rc: $out"
set -- $(echo "$out" | sed -n 's/^loader \([0-9]*\) line \([0-9]*\)$/\1 \2/p')
[ $# -eq 2 ] || fail "no loader line: $out"
tid=$1 line=$2
"$GT_REPORT" --dump run.trace > run.dump || fail "dump failed"
"$PYTHON" - run.dump "$tid" "$line" <<'PY' || fail "the loader's samples"
import re, sys
dump, tid, line = sys.argv[1], sys.argv[2], int(sys.argv[3])
parent, ip, codes, off = {}, {}, {}, []
for l in open(dump):
    m = re.search(r" STACK - first=(\d+) parent=(\d+) count=\d+ ips=(\S+)", l)
    if m:
        node, par = int(m.group(1)), int(m.group(2))
        for a in m.group(3).split(","):
            parent[node], ip[node] = par, int(a, 16)
            par, node = node, node + 1
        continue
    m = re.search(r' PYCODE - id=(\d+) first_line=\d+ file="([^"]*)" name="([^"]*)"', l)
    if m:
        codes[int(m.group(1))] = (m.group(2), m.group(3))
        continue
    m = re.search(r" HOST_SAMPLE - tid=(\d+) .* stack=(\d+) flags=(\S+)", l)
    if m and m.group(1) == tid and "on_cpu" not in m.group(3).lower():
        off.append(int(m.group(2)))
def inner(node):
    while node:
        if ip[node] >> 56 == 0x80:
            return codes.get((ip[node] >> 24) & 0xffffffff, ("?", "?")), ip[node] & 0xffffff
        node = parent[node]
    return None, 0
got = [inner(s) for s in off]
mine = sum(1 for c, l in got if c and c[1] == "wait_for_batch" and c[0].endswith("sample_thread_py.py") and l == line)
other = [(c, l) for c, l in got if c and not (c[1] == "wait_for_batch" and l == line)]
print("loader off CPU: %d samples, %d in wait_for_batch at line %d, other Python frames: %s"
      % (len(off), mine, line, other[:4] or "none"))
sys.exit(0 if len(off) >= 20 and mine >= 0.6 * len(off) else 1)
PY
