"""The fragmentation pattern of frag_oom.py (153 x 6 MiB on 1 GiB, two of three freed, 64 MiB asked)
under expandable_segments:True or backend:cudaMallocAsync, where it does not fail: the 64 MiB are
mapped behind the segment's end / taken from the pool. PyTorch's figures go to argv[1] as JSON for
the test to compare with what gputrace saw at the driver."""
import json
import sys

import torch

MiB = 1 << 20


def check(cond, what):
    if not cond:
        sys.exit('frag_backends.py: FAIL: ' + what)


ts = [torch.empty(6 * MiB, dtype=torch.uint8, device='cuda') for _ in range(153)]
for i in range(153):
    if i % 3:
        ts[i] = None
big = torch.empty(64 * MiB, dtype=torch.uint8, device='cuda')
torch.cuda.synchronize()
s = torch.cuda.memory_stats()
check(s['num_ooms'] == 0, 'an OOM')
out = {'backend': torch.cuda.get_allocator_backend(),
       'allocated': s['allocated_bytes.all.current'], 'reserved': s['reserved_bytes.all.current'],
       'max_allocated': torch.cuda.max_memory_allocated(), 'max_reserved': torch.cuda.max_memory_reserved()}
check(out['allocated'] == (51 * 6 + 64) * MiB, 'allocated %d' % out['allocated'])
json.dump(out, open(sys.argv[1], 'w'))
print(out)
