"""Checks the host samples of tests/progs/sample_codefree.py (tests/cases/hostsample_codefree.sh)
from `gputrace-report --dump`: samples whose innermost Python frame is one of the functions made
and freed per round must name it with its own file, first line 1 and the loop's line 3 (copied
when the sample was taken: the code object is gone by the write-out). Usage: codefree_check.py
DUMP ROUNDS. Prints what it counted; exits 1 when a frame is wrong or too few carry the functions."""
import sys

from sampledump import Dump

dump, rounds = sys.argv[1], int(sys.argv[2])
d = Dump(dump)
samples = [s.stack for s in d.samples]
innermost_python = d.innermost_python

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
