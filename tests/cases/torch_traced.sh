# The real PyTorch traced by gputrace on the simulated stack: PyTorch's kernel names on the GPU
# timeline (one kernel per launch), and the driver-level figures equal to PyTorch's own segment
# accounting (segments made/freed, reserved at the end, peak reserved).
. "$SRC/tests/lib.sh"
. "$SRC/tests/torch/env.sh"
torch_run -t "$PWD/t.trace" "$TORCH_PY" "$SRC/tests/torch/traced.py" stats.json > out.txt 2>&1 || { cat out.txt; fail "traced.py"; }
"$GT_REPORT" --json t.trace > r.json || fail "report"
"$PYTHON" - r.json stats.json <<'PY' || fail "figures differ"
import json, sys
r = json.load(open(sys.argv[1]))
s = json.load(open(sys.argv[2]))
m, t = r['memory'], r['timeline']
pairs = [('driver allocations = segments allocated', m['alloc_count'], s['segment.all.allocated']),
         ('driver frees = segments freed', m['free_count'], s['segment.all.freed']),
         ('live at exit = reserved', m['leaked_bytes'], s['reserved_bytes.all.current']),
         ('live allocations at exit = segments', m['leaked_count'], s['segment.all.current']),
         ('peak = max_memory_reserved', m['peak_bytes'], s['max_memory_reserved'])]
bad = 0
for what, got, want in pairs:
    print('%-42s gputrace %12d  pytorch %12d' % (what, got, want))
    bad += got != want
names = {k['demangled'] for k in t['top_kernels']}
for want in ('at::native::vectorized_elementwise_kernel<', 'at::native::reduce_kernel<',
             'at::native::(anonymous namespace)::multi_tensor_apply_kernel<'):
    hit = [n for n in names if n.startswith('void ' + want)]
    print('kernel %-60s %s' % (want, 'found' if hit else 'MISSING'))
    bad += not hit
print('launches %d, kernels on the GPU timeline %d' % (t['launch_count'], t['kernel_count']))
bad += t['launch_count'] == 0 or t['kernel_count'] != t['launch_count']
sys.exit(1 if bad else 0)
PY
