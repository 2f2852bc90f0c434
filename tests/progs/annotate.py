# annotate.py: the Python annotation module (python/gputrace_annotate.py) with and without the
# tracer. No CUDA: the annotations name addresses of a pretend arena. Prints the same lines either
# way; "active=" goes to stderr. Scenario (tests/cases/annotate_py.sh derives the expected records):
# pool 0x5150 (function API) over [0x7f0000000000, +64 MiB): blocks at +0 (3 MiB) and +32 MiB
# (5 MiB), the first freed, a failed 60 MiB request, range removed, destroyed; then a Pool object
# with id 0x6160 ("py pool", device 2, context manager) with one block allocated and freed.
import os
import sys

sys.path.insert(0, os.path.join(os.environ.get("SRC", "."), "python"))
import gputrace_annotate as gta  # noqa: E402

MiB = 1 << 20
BASE = 0x7F0000000000
print("active=%d" % gta.gputrace_active(), file=sys.stderr)
gta.gputrace_pool_create(0x5150, 0, "arena")
gta.gputrace_pool_add_range(0x5150, BASE, 64 * MiB)
gta.gputrace_block_alloc(0x5150, BASE, 3 * MiB)
gta.gputrace_block_alloc(0x5150, BASE + 32 * MiB, 5 * MiB)
gta.gputrace_block_free(0x5150, BASE, 3 * MiB)
gta.gputrace_block_fail(0x5150, 60 * MiB)
gta.gputrace_pool_remove_range(0x5150, BASE, 64 * MiB)
gta.gputrace_pool_destroy(0x5150)
with gta.Pool(device=2, name="py pool", pool_id=0x6160) as p:
    p.add_range(BASE, MiB)
    p.alloc(BASE + 4096, 8192)
    p.free(BASE + 4096)
print("ok")
