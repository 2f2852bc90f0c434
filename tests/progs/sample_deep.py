"""Host samples of a Python thread deep in code it has not sampled before (tests/cases/
hostsample_deep.sh, bench/RESULTS.md):
each round makes a fresh chain of DEPTH functions of LINES lines each (new code objects, so every
sample copies their line tables and names: the thread's table learns them only at its next CUDA
call), spins 50 ms at the bottom in pure Python, then synchronizes (the samples are written).
Arguments: rounds (20), depth (40), lines (3000)."""
import sys
import time

from simcuda import check, driver

ROUNDS, DEPTH, LINES = (int(a) for a in (sys.argv[1:] + ["20", "40", "3000"][len(sys.argv) - 1:])[:3])


def spin():
    end = time.monotonic() + 0.05
    k = 0
    while time.monotonic() < end:
        k += 1
    return k


def chain(r):
    src = []
    for d in range(DEPTH):
        src.append(f"def f{d}():")
        src += [f"    x{i} = {i}" for i in range(LINES)]
        src.append(f"    return f{d + 1}()" if d + 1 < DEPTH else "    return spin()")
    ns = {"spin": spin}
    exec(compile("\n".join(src), f"<round {r}>", "exec"), ns)
    return ns["f0"]


fns = [chain(r) for r in range(ROUNDS)]
cu, ctx = driver()  # (sampled from its first CUDA call on: after the compiling)
for f in fns:
    f()
    check(cu.cuCtxSynchronize(), "cuCtxSynchronize")
print("deep ok")
