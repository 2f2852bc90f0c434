"""make demo's PyTorch job: the real PyTorch on the simulated 1 GiB GPU dies of a fragmentation
OOM raised by its own caching allocator, the way a training job does: many mid-size tensors fill
51 segments, two of every three are dropped, and a 64 MiB request fits in none of the holes
although 714 MiB are reserved but unallocated."""
import torch

MiB = 1 << 20


def load_features(n):
    return [torch.empty(6 * MiB, dtype=torch.uint8, device='cuda') for _ in range(n)]


def keep_every_third(ts):
    return ts[::3]


def build_batch():
    return torch.empty(64 * MiB, dtype=torch.uint8, device='cuda')


features = keep_every_third(load_features(153))
batch = build_batch()  # torch.OutOfMemoryError: the job dies here
