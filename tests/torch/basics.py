"""The real PyTorch on the simulated stack: device, streams, events, elementwise ops, reductions,
autograd and AdamW, under whatever PYTORCH_CUDA_ALLOC_CONF selects. Kernels compute nothing, so
only memory behaviour and the calls are checked, against PyTorch's own accounting."""
import os
import sys
import threading

import torch

MiB = 1 << 20


def check(cond, what):
    if not cond:
        sys.exit('basics.py: FAIL: ' + what)


check(torch.cuda.is_available(), 'torch.cuda.is_available() is False')
check(torch.cuda.device_count() == 1, 'device_count %d' % torch.cuda.device_count())
p = torch.cuda.get_device_properties(0)
check(p.name == 'gputrace simulated GPU' and (p.major, p.minor) == (9, 0), 'properties %r' % (p,))
check(p.total_memory == int(os.environ['GTSIM_MEM_BYTES']), 'total_memory %d' % p.total_memory)
check(p.multi_processor_count == 132, 'SMs %d' % p.multi_processor_count)
free, total = torch.cuda.mem_get_info()
check(total == p.total_memory and free <= total, 'mem_get_info %d %d' % (free, total))

# Streams with priorities, events, the per-thread default stream.
lo, hi = torch.cuda.Stream(priority=0), torch.cuda.Stream(priority=-1)
check(hi.priority < lo.priority, 'priorities %d %d' % (hi.priority, lo.priority))
x = torch.ones(1 << 20, device='cuda')
start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
with torch.cuda.stream(hi):
    start.record()
    y = x * 3 + 1
    end.record()
lo.wait_event(end)
with torch.cuda.stream(lo):
    z = y.sum()
torch.cuda.synchronize()
check(end.query() and start.elapsed_time(end) >= 0, 'events')
check(torch.cuda.default_stream().query(), 'default stream query')

# Work from a thread that never called cudaSetDevice (the runtime binds the context lazily).
out = []
t = threading.Thread(target=lambda: out.append((torch.ones(1000, device='cuda') + 1).sum()))
t.start()
t.join()
check(len(out) == 1, 'launch from a new thread')

# Autograd (the engine runs backward on its own thread) and AdamW for a few steps.
torch.manual_seed(0)
params = [torch.randn(256, 256, device='cuda', requires_grad=True) for _ in range(4)]
opt = torch.optim.AdamW(params, lr=1e-3)
for step in range(5):
    opt.zero_grad(set_to_none=True)
    loss = sum(((q * 2).tanh() * q).mean() for q in params)
    loss.backward()
    opt.step()
torch.cuda.synchronize()
check(all(q.grad is not None and q.grad.shape == q.shape for q in params), 'gradients')
st = opt.state[params[0]]
check(st['exp_avg'].is_cuda and st['exp_avg_sq'].shape == params[0].shape, 'AdamW state')

# Memory: PyTorch's own figures, after a known allocation and free.
before = torch.cuda.memory_allocated()
a = torch.empty(3 * MiB, dtype=torch.uint8, device='cuda')
check(torch.cuda.memory_allocated() - before == 3 * MiB, 'allocated delta')
del a
check(torch.cuda.memory_allocated() == before, 'allocated after free')
s = torch.cuda.memory_stats()
check(s['num_ooms'] == 0, 'ooms %d' % s['num_ooms'])
print('basics: ok backend=%s allocated=%d reserved=%d peak=%d' % (
    torch.cuda.get_allocator_backend(), torch.cuda.memory_allocated(), torch.cuda.memory_reserved(),
    torch.cuda.max_memory_allocated()))
