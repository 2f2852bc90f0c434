"""A Python program the bridge must leave alone (tests/cases/torch_bridge_absent.sh): drives the
driver through ctypes (tests/progs/ctypes_alloc.py), with torch imported but its CUDA never
initialized when argv[1] is "torch". Prints what a program could notice of the bridge."""
import atexit
import os
import runpy
import sys
import threading

if sys.argv[1] == "torch":
    import torch
runpy.run_path(os.path.join(os.path.dirname(__file__), "..", "progs", "ctypes_alloc.py"))
for _ in range(1000):  # bytecodes: any pending call has run
    pass
print("atexit=%d threads=%d modules=%d cuda=%s" % (
    atexit._ncallbacks(), threading.active_count(),
    sum("gputrace" in name for name in sys.modules),
    sys.modules["torch"].cuda.is_initialized() if "torch" in sys.modules else "-"))
