"""A block pending free in PyTorch's caching allocator (tests/cases/torch_pending.sh), run under
gputrace on the simulated stack with slow copies (GTSIM_COPY_BYTES_PER_SEC): x (8 MiB) is
copied on a side stream (the copy lasts about 1.7 s there: time enough for the exit snapshot on
a loaded machine), x.record_stream(side), del x: PyTorch
records an event on the side stream and keeps x's block "active_pending_free" until the event
completes (the simulated driver answers cuEventQuery with CUDA_ERROR_NOT_READY until the copy's
time has passed). Then z (32 MiB), so that the state at exit holds the most allocated bytes: the
bridge's exit snapshot is the fullest, the one the page draws. Writes PyTorch's own snapshot,
taken just before exit, to argv[1]: every block's state, size and address."""
import json
import sys

import torch

MiB = 1 << 20
torch.empty(1, device="cuda")  # the bridge installs at the first segment
side = torch.cuda.Stream()
x = torch.empty(8 * MiB, dtype=torch.uint8, device="cuda")
y = torch.empty(8 * MiB, dtype=torch.uint8, device="cuda")
side.wait_stream(torch.cuda.current_stream())
with torch.cuda.stream(side):
    y.copy_(x)  # on the side stream: 8 MiB at the slow rate
x.record_stream(side)
del x  # pending free: its event on the side stream is not done
z = torch.empty(32 * MiB, dtype=torch.uint8, device="cuda")
blocks = []
for seg in torch.cuda.memory._snapshot()["segments"]:
    for b in seg["blocks"]:
        blocks.append({"state": b["state"], "size": b["size"], "address": b["address"]})
json.dump({"blocks": blocks, "side_done": side.query()}, open(sys.argv[1], "w"))
