# The fragmentation pattern under expandable_segments:True (VMM: reserve, create, map) and under
# backend:cudaMallocAsync (stream-ordered pool), traced by gputrace: the allocation succeeds, and
# what gputrace saw at the driver equals PyTorch's own figures.
. "$SRC/tests/lib.sh"
. "$SRC/tests/torch/env.sh"
for conf in expandable_segments:True backend:cudaMallocAsync; do
    rm -f t.trace
    PYTORCH_CUDA_ALLOC_CONF=$conf torch_run -t "$PWD/t.trace" "$TORCH_PY" "$SRC/tests/torch/frag_backends.py" stats.json \
        > out.txt 2>&1 || { cat out.txt; fail "$conf: frag_backends.py"; }
    "$GT_REPORT" --json t.trace > r.json || fail "$conf: report"
    echo "== $conf"
    "$PYTHON" - r.json stats.json <<'PY' || fail "$conf: figures differ"
import json, sys
m = json.load(open(sys.argv[1]))['memory']
s = json.load(open(sys.argv[2]))
api = {a['api']: a for a in m['by_api']}
MiB = 1 << 20
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
bad = 0
for what, got, want in pairs:
    print('%-40s gputrace %12d  pytorch %12d' % (what, got, want))
    bad += got != want
sys.exit(1 if bad else 0)
PY
done
