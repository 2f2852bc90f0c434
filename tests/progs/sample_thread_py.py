"""Python frames of a sleeping thread other than the main one, for
tests/cases/hostsample_thread_py.sh: a loader thread makes CUDA calls (so it is sampled) and
between them waits in wait_for_batch, a Python function, blocked in time.sleep (off CPU: walked by
the tracer's sampler thread, no signal); the main thread synchronizes meanwhile. Prints the loader
thread's native id and the line of its sleep. Argument 1: batches."""
import threading
import time
import sys

from simcuda import check, driver

cu, ctx = driver()


def wait_for_batch():
    time.sleep(0.03)  # SLEEP


def loader(n, out):
    check(cu.cuCtxSetCurrent(ctx), "cuCtxSetCurrent")
    out.append(threading.get_native_id())
    for _ in range(n):
        wait_for_batch()
        check(cu.cuCtxSynchronize(), "cuCtxSynchronize")  # its samples are written here


check(cu.cuCtxSetCurrent(ctx), "cuCtxSetCurrent")
tid = []
t = threading.Thread(target=loader, args=(int(sys.argv[1]), tid), name="loader")
t.start()
while t.is_alive():
    check(cu.cuCtxSynchronize(), "cuCtxSynchronize")
    time.sleep(0.002)
t.join()
line = next(i for i, s in enumerate(open(__file__), 1) if s.rstrip().endswith("# SLEEP"))
print("loader", tid[0], "line", line)
