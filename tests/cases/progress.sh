#!/bin/sh
# Progress on stderr: on a terminal one line updated in place (bytes read, records/s, time
# left), erased before the report; nothing in a pipe; nothing with --quiet; with --progress in a
# pipe, plain lines and a summary. The terminal is a pseudo-terminal, and the trace is fed
# through a pipe in slices 50 ms apart, so that reading lasts longer than the 100 ms between
# redraws on any machine.
# test: alone (progress lines per interval)
. "$SRC/tests/lib.sh"
traced t.trace "$PROGS/mem_scenarios" peak >out.txt 2>&1 || fail "program failed: $(cat out.txt)"
size=$(wc -c <t.trace | tr -d ' ')
# a pipe: nothing on stderr
"$GT_REPORT" t.trace >r.txt 2>e.txt || fail "report failed"
expect_eq "pipe: stderr" "$(cat e.txt)" ""
# --progress in a pipe: a summary line, no terminal controls
"$GT_REPORT" --progress t.trace >r2.txt 2>e.txt || fail "report --progress failed"
cmp -s r.txt r2.txt || fail "--progress changed the report"
grep -q "^gputrace-report: t.trace: .* of .* (100%), [0-9.]* M records/s, done$" e.txt ||
    fail "--progress summary: $(cat e.txt)"
grep -q "$(printf '\033')" e.txt && fail "--progress in a pipe wrote terminal controls"
"$PYTHON" - "$GT_REPORT" <<'PY' || fail "terminal check failed"
import os, pty, subprocess, sys, threading, time
data = open("t.trace", "rb").read()
def run(args):
    m, s = pty.openpty()
    p = subprocess.Popen([sys.argv[1]] + args + ["-"], stdin=subprocess.PIPE,
                         stdout=open("tty.out", "wb"), stderr=s)
    os.close(s)
    def feed():
        step = max(1, len(data) // 8)
        for i in range(0, len(data), step):
            p.stdin.write(data[i:i + step]); p.stdin.flush(); time.sleep(0.05)
        p.stdin.close()
    threading.Thread(target=feed).start()
    err = b""
    while True:
        try:
            d = os.read(m, 4096)
        except OSError:
            break
        if not d:
            break
        err += d
    assert p.wait() == 0, "report failed"
    return err.decode()
err = run([])
assert "\r\x1b[Kgputrace-report: -: " in err and "records/s" in err, repr(err)
assert err.endswith("\r\x1b[K"), "the line is not erased at the end: %r" % err[-80:]
assert "\n" not in err, "a terminal gets one line updated in place: %r" % err
print(err.count("\r\x1b[K") - 1, "updates on the terminal")
err = run(["--quiet"])
assert err == "", "--quiet on a terminal: %r" % err
PY
"$GT_REPORT" - <t.trace >stdin.txt 2>/dev/null || fail "report of standard input failed"
cmp -s tty.out stdin.txt || fail "the report with progress on a terminal differs"
echo "progress: terminal in place, none in a pipe or with --quiet, a summary with --progress"
