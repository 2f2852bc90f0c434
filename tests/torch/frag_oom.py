"""A fragmentation OOM raised by PyTorch's own caching allocator (native backend) on a 1 GiB
simulated device: 153 tensors of 6 MiB (51 segments of 20 MiB), two of every three freed, then
64 MiB asked. Checks PyTorch's message and memory_stats() against the arithmetic of its rules and
prints the figures (key=value) for the calling test."""
import re
import sys

import torch

MiB = 1 << 20


def check(cond, what):
    if not cond:
        sys.exit('frag_oom.py: FAIL: ' + what)


check(torch.cuda.get_device_properties(0).total_memory == 1 << 30, 'run with GTSIM_MEM_BYTES=1g')
ts = [torch.empty(6 * MiB, dtype=torch.uint8, device='cuda') for _ in range(153)]
s = torch.cuda.memory_stats()
check(s['segment.large_pool.current'] == 51, 'segments %d' % s['segment.large_pool.current'])
check(s['reserved_bytes.all.current'] == 51 * 20 * MiB, 'reserved %d' % s['reserved_bytes.all.current'])
for i in range(153):
    if i % 3:
        ts[i] = None
msg = None
try:
    torch.empty(64 * MiB, dtype=torch.uint8, device='cuda')
except torch.OutOfMemoryError as e:
    msg = str(e)
check(msg is not None, 'no OOM')
s = torch.cuda.memory_stats()
alloc, reserved = s['allocated_bytes.all.current'], s['reserved_bytes.all.current']
check(s['num_ooms'] == 1 and s['num_alloc_retries'] == 1,
      'ooms %d retries %d' % (s['num_ooms'], s['num_alloc_retries']))
check(alloc == 51 * 6 * MiB and reserved == 51 * 20 * MiB, 'allocated %d reserved %d' % (alloc, reserved))
m = re.search(r'Tried to allocate ([0-9.]+) MiB.*?([0-9.]+) MiB is allocated by PyTorch, and ([0-9.]+) MiB is '
              r'reserved by PyTorch but unallocated', msg, re.S)
check(m is not None, 'message: ' + msg)
check(float(m.group(2)) * MiB == alloc and float(m.group(3)) * MiB == reserved - alloc,
      'message figures %s/%s against memory_stats %d/%d' % (m.group(2), m.group(3), alloc, reserved))
check('expandable_segments:True' in msg, 'no expandable_segments advice')
snap = torch.cuda.memory._snapshot()
largest = max(b['size'] for seg in snap['segments'] for b in seg['blocks'] if b['state'] == 'inactive')
print('requested=%d allocated=%d reserved=%d unallocated=%d largest_free=%d segments=%d' % (
    64 * MiB, alloc, reserved, reserved - alloc, largest, s['segment.large_pool.current']))
print('message=' + ' '.join(msg.split())[:400])
