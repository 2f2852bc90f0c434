"""A spread of PyTorch's CUDA ops on the simulated runtime (tests/cases/torch_ops.sh): random numbers,
cub-based scans/sorts/selections (nonzero, unique, sort, topk), indexing, normalization, losses,
pinned and pageable copies both ways. Every one must run; matmul and convolution are left out
(cuBLAS/cuDNN carry their own runtime)."""
import sys

import torch
import torch.nn.functional as F

d = 'cuda'
x = torch.randn(1000, 64, device=d)
r = torch.rand(100, device=d)
ops = {
 'nonzero': lambda: (r > 0.5).nonzero(),
 'unique': lambda: torch.unique(torch.randint(0, 10, (100,), device=d)),
 'sort': lambda: torch.sort(r),
 'topk': lambda: torch.topk(r, 5),
 'cumsum': lambda: torch.cumsum(r, 0),
 'index_select': lambda: x.index_select(0, torch.arange(10, device=d)),
 'scatter': lambda: torch.zeros(10, device=d).scatter_add_(0, torch.zeros(5, dtype=torch.long, device=d), torch.ones(5, device=d)),
 'embedding': lambda: F.embedding(torch.arange(5, device=d), x),
 'layer_norm': lambda: F.layer_norm(x, (64,)),
 'softmax': lambda: F.softmax(x, -1),
 'cross_entropy': lambda: F.cross_entropy(x, torch.zeros(1000, dtype=torch.long, device=d)),
 'dropout': lambda: F.dropout(x, 0.5),
 'where_cat': lambda: torch.cat([torch.where(x > 0, x, -x), x]),
 'pinned': lambda: torch.ones(1000).pin_memory().to(d, non_blocking=True),
 'item': lambda: x.sum().item(),
 'cpu': lambda: x.cpu(),
 'max': lambda: x.max(dim=1),
 'argmax': lambda: x.argmax(),
}
failed = []
for k, f in ops.items():
    try:
        f()
        torch.cuda.synchronize()
    except Exception as e:
        failed.append(k)
        print('FAIL', k, type(e).__name__, str(e).split('\n')[0][:150])
print('ops: %d of %d ran' % (len(ops) - len(failed), len(ops)))
sys.exit(1 if failed else 0)
