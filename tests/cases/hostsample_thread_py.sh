# Python frames of a sleeping thread other than the main one (issue 20): a loader thread waits in
# wait_for_batch (time.sleep) between its CUDA calls (tests/progs/sample_thread_py.py). The
# sampler thread walks it while it sleeps and reads its Python frames only where its thread state
# is found alive with the id the thread published (it may have ended or left Python since). Most
# of the loader's off-CPU samples must carry wait_for_batch at the sleep's line; before, only the
# main thread's Python frames were read while it slept (0 of them).
# test: alone (host samples at a given period: cases beside it would change what they catch)
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
import os, sys
sys.path.insert(0, os.path.join(os.environ["SRC"], "tests", "progs"))
from sampledump import Dump
dump, tid, line = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
d = Dump(dump)
off = [s.stack for s in d.samples if s.tid == tid and "on_cpu" not in s.flags]
def inner(node):  # ((file, name), line) of the innermost Python frame, (None, 0) without one
    code, l = d.innermost_python(node)
    if code is None and l == 0:
        return None, 0
    return (code[1:] if code else ("?", "?")), l
got = [inner(s) for s in off]
mine = sum(1 for c, l in got if c and c[1] == "wait_for_batch" and c[0].endswith("sample_thread_py.py") and l == line)
other = [(c, l) for c, l in got if c and not (c[1] == "wait_for_batch" and l == line)]
print("loader off CPU: %d samples, %d in wait_for_batch at line %d, other Python frames: %s"
      % (len(off), mine, line, other[:4] or "none"))
sys.exit(0 if len(off) >= 20 and mine >= 0.6 * len(off) else 1)
PY
