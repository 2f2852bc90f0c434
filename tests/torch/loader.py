"""A training loop whose GPU idles while the main thread loads the next batch in Python
(tests/cases/torch_idle_loader.sh, and the GPU kit's idle section through tests/gpu/workloads.py):
load_batch sleeps 30 ms (waiting on I/O, off CPU) or computes 30 ms in a pure-Python loop (on
CPU); or a torch.utils.data.DataLoader (num_workers=0: the main thread runs the dataset) whose
items each take 5 ms to read (sleeping), 6 to a batch. Then the step launches and synchronizes.
Usage: loader.py sleep|spin|dataloader STEPS"""
import sys
import time

import torch


def load_batch(mode, n):
    if mode == "sleep":
        time.sleep(0.03)  # LOAD:sleep
    else:
        end = time.perf_counter() + 0.03
        x = 0
        while time.perf_counter() < end:  # LOAD:spin
            x += 1
    return torch.full((n, 256), 1.0)


class Items(torch.utils.data.Dataset):
    """Items read from a slow store: 5 ms each."""

    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        time.sleep(0.005)  # LOAD:dataloader
        return torch.full((256,), 1.0)


def batches(mode, steps, n):
    if mode == "dataloader":
        return iter(torch.utils.data.DataLoader(Items(steps * 6), batch_size=6, num_workers=0))
    return (load_batch(mode, n) for _ in range(steps))


def main():
    mode, steps = sys.argv[1], int(sys.argv[2])
    w = torch.full((64 if mode != "dataloader" else 6, 256), 0.5, device="cuda")
    for x in batches(mode, steps, 64):
        x = x.cuda()
        y = (x * w + 1.0).relu().sum()  # elementwise kernels (the simulated stack has no cuBLAS)
        y.item()  # waits for the GPU
    print("loader ok", mode, steps)


main()
