"""Checks the host samples of tests/progs/sample_codefree.py (tests/cases/hostsample_codefree.sh)
from `gputrace-report --dump`: samples whose innermost Python frame is one of the functions made
and freed per round must name it with its own file, first line 1 and the loop's line 3 (copied
when the sample was taken: the code object is gone by the write-out). Usage: codefree_check.py
DUMP ROUNDS. Prints what it counted; exits 1 when a frame is wrong or too few carry the functions."""
import re
import sys

dump, rounds = sys.argv[1], int(sys.argv[2])
parent, ip, codes, samples = {}, {}, {}, []
for line in open(dump):
    m = re.search(r" STACK - first=(\d+) parent=(\d+) count=\d+ ips=(\S+)", line)
    if m:
        node, par = int(m.group(1)), int(m.group(2))
        for a in m.group(3).split(","):
            parent[node], ip[node] = par, int(a, 16)
            par, node = node, node + 1
        continue
    m = re.search(r' PYCODE - id=(\d+) first_line=(\d+) file="([^"]*)" name="([^"]*)"', line)
    if m:
        codes[int(m.group(1))] = (int(m.group(2)), m.group(3), m.group(4))
        continue
    m = re.search(r" HOST_SAMPLE - .* stack=(\d+) flags=(\S+)", line)
    if m:
        samples.append(int(m.group(1)))


def innermost_python(node):
    while node:
        a = ip[node]
        if a >> 56 == 0x80:
            return codes.get((a >> 24) & 0xffffffff), a & 0xffffff
        node = parent[node]
    return None, 0


fresh, bad, named = 0, [], set()
for st in samples:
    code, line = innermost_python(st)
    if not code or not code[2].startswith("fresh_"):
        continue
    fresh += 1
    first, file, name = code
    named.add(name)
    if file != "<codefree %s>" % name[6:] or first != 1 or line not in (2, 3, 4):
        bad.append((name, file, first, line))
print("%d samples, %d in the freed functions (%d functions named); wrong: %s"
      % (len(samples), fresh, len(named), bad[:5] or "none"))
# about 1 ms in each function at 1000 Hz: at least a tenth of the rounds must be named
sys.exit(1 if bad or len(named) < rounds / 10 else 0)
