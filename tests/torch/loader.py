"""A training loop whose GPU idles while the main thread loads the next batch in Python
(tests/cases/torch_idle_loader.sh): load_batch sleeps 30 ms (waiting on I/O, off CPU) or computes
30 ms in a pure-Python loop (on CPU), then the step launches and synchronizes.
Usage: loader.py sleep|spin STEPS"""
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


def main():
    mode, steps = sys.argv[1], int(sys.argv[2])
    w = torch.full((64, 256), 0.5, device="cuda")
    for _ in range(steps):
        x = load_batch(mode, 64).cuda()
        y = (x * w + 1.0).relu().sum()  # elementwise kernels (the simulated stack has no cuBLAS)
        y.item()  # waits for the GPU
    print("loader ok", mode, steps)


main()
