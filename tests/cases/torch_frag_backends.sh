# The fragmentation pattern under expandable_segments:True (VMM: reserve, create, map) and under
# backend:cudaMallocAsync (stream-ordered pool), traced by gputrace: the allocation succeeds, and
# both what gputrace saw at the driver and what the allocator bridge saw from inside equal
# PyTorch's own figures. The bridge under cudaMallocAsync keeps stats only (no snapshots or
# observers there), and the physical memory mapped into the expandable segment at exit is
# PyTorch's cache, not a leak.
. "$SRC/tests/lib.sh"
. "$SRC/tests/torch/env.sh"
for conf in expandable_segments:True backend:cudaMallocAsync; do
    rm -f t.trace
    PYTORCH_CUDA_ALLOC_CONF=$conf torch_run -t "$PWD/t.trace" "$TORCH_PY" "$SRC/tests/torch/frag_backends.py" stats.json \
        > out.txt 2>&1 || { cat out.txt; fail "$conf: frag_backends.py"; }
    "$GT_REPORT" --json t.trace > r.json || fail "$conf: report"
    echo "== $conf"
    "$PYTHON" - r.json stats.json "$conf" <<'PY' || fail "$conf: figures differ"
import json, sys
m = json.load(open(sys.argv[1]))['memory']
s = json.load(open(sys.argv[2]))
expandable = sys.argv[3].startswith('expandable')
api = {a['api']: a for a in m['by_api']}
MiB = 1 << 20
# the driver's view
if s['backend'] == 'native':  # expandable segments: physical memory = reserved
    create = api['cuMemCreate']
    pairs = [('cuMemCreate live bytes = reserved', create['live_bytes_at_exit'], s['reserved']),
             ('peak = max_memory_reserved', m['peak_bytes'], s['max_reserved']),
             ('reserved = 920 + 60 MiB (2 MiB pages)', s['reserved'], 980 * MiB),
             ('maps = creates', m['vmm']['maps'], create['count'])]
else:  # cudaMallocAsync: each tensor is one pool allocation of its requested size
    pool = api['cuMemAllocAsync']
    pairs = [('peak = max_memory_allocated', m['peak_bytes'], s['max_allocated']),
             ('pool allocations = 154 tensors', pool['count'], 154)]
# the bridge's view
(a,) = m['allocators']
pairs += [('peak allocated = max_memory_allocated', a['peak_allocated_bytes'], s['max_allocated']),
          ('peak reserved = max_memory_reserved', a['peak_reserved_bytes'], s['max_reserved']),
          ('cached at exit = reserved', a['cached_at_exit_bytes'], s['reserved']),
          ('allocated at exit = allocated', a['allocated_at_exit_bytes'], s['allocated']),
          ('expandable segments seen', a['expandable_segments'], expandable),
          ('allocator OOMs', len(m['ooms']), 0)]
if expandable:  # its mapped physical handles are PyTorch's cache
    pairs += [('cached at exit (cuMemCreate handles mapped in the segment) = reserved',
               m['allocator_cached_bytes'], s['reserved']),
              ('leaked', m['leaked_bytes'], 0)]
bad = 0
for what, got, want in pairs:
    print('%-40s gputrace %12r  pytorch %12r' % (what, got, want))
    bad += got != want
sys.exit(1 if bad else 0)
PY
done
