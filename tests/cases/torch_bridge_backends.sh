# The bridge under expandable_segments:True (VMM segments; the fragmentation pattern then fits)
# and backend:cudaMallocAsync (no snapshots or observers there: stats only): the allocator-level
# figures equal PyTorch's (max_memory_allocated, max_memory_reserved, reserved at exit), and the
# physical memory mapped into the expandable segment at exit is its cache, not a leak.
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
(a,) = m['allocators']
pairs = [('peak allocated = max_memory_allocated', a['peak_allocated_bytes'], s['max_allocated']),
         ('peak reserved = max_memory_reserved', a['peak_reserved_bytes'], s['max_reserved']),
         ('cached at exit = reserved', a['cached_at_exit_bytes'], s['reserved']),
         ('allocated at exit = allocated', a['allocated_at_exit_bytes'], s['allocated']),
         ('expandable segments seen', a['expandable_segments'], sys.argv[3].startswith('expandable')),
         ('allocator OOMs', len(m['ooms']), 0)]
if sys.argv[3].startswith('expandable'):  # its mapped physical handles are PyTorch's cache
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
