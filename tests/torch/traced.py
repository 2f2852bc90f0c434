"""Run under gputrace (tests/cases/torch_traced.sh): a small training loop plus cache churn, then
PyTorch's own segment accounting written to argv[1] as JSON, for the test to compare with what
gputrace saw at the driver."""
import json
import sys

import torch

MiB = 1 << 20
torch.manual_seed(0)
params = [torch.randn(512, 512, device='cuda', requires_grad=True) for _ in range(3)]
opt = torch.optim.AdamW(params, lr=1e-3)
for step in range(4):
    opt.zero_grad(set_to_none=True)
    loss = sum((q.sigmoid() * q).sum() for q in params)
    loss.backward()
    opt.step()
# Segments made and given back: large blocks, freed, the cache emptied, made again.
big = [torch.empty(30 * MiB, dtype=torch.uint8, device='cuda') for _ in range(4)]
del big
torch.cuda.empty_cache()
keep = torch.empty(50 * MiB, dtype=torch.uint8, device='cuda')
torch.cuda.synchronize()
s = torch.cuda.memory_stats()
out = {k: s[k] for k in ('reserved_bytes.all.current', 'reserved_bytes.all.peak', 'segment.all.allocated',
                         'segment.all.freed', 'segment.all.current', 'num_ooms')}
out['max_memory_reserved'] = torch.cuda.max_memory_reserved()
json.dump(out, open(sys.argv[1], 'w'))
print(out)
