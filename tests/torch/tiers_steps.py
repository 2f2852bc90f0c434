"""The training steps of memory by category, shared by tests/torch/tiers.py (the simulated stack)
and tests/gpu/workloads.py (the GPU kit): PyTorch's own figures read from its own objects at each
step, for tests/torch/tiers_check.py.

steps(model, opt, x, objective, case, n, pause, set_to_none) runs n steps. Each holds its
activations across `pause` seconds at the end of the forward, so that the bridge's peak snapshot
(taken at the next tick, which the loss's launch after the pause queues) sees them, and returns a
point per step: the storages of the parameters, their gradients and the optimizer's state,
memory_allocated(), and what the forward left alive (memory_allocated() after it minus before);
max_memory_allocated() before and after the backward (higher after it: the peak was inside);
t_loss and t_end, time.monotonic() after the loss and at the step's end (a failed check prints
them: the snapshots follow the program's timing).
case "autocast" runs the forward under torch.autocast(bfloat16)."""
import time

import torch


def storages(tensors):
    """{data_ptr: nbytes} of the distinct CUDA storages among tensors."""
    out = {}
    for t in tensors:
        if t is not None and t.is_cuda:
            s = t.untyped_storage()
            out[s.data_ptr()] = s.nbytes()
    return out


def rounded(nbytes):
    """The caching allocator's block size for a request (c10 round_size: multiples of 512)."""
    return max(512, (nbytes + 511) // 512 * 512)


def roles(model, opt):
    """The storages of the parameters, their gradients and the optimizer's state."""
    params = list(model.parameters())
    w = storages(params)
    g = {k: v for k, v in storages(p.grad for p in params).items() if k not in w}
    st = {k: v for k, v in storages(t for s in opt.state.values() for t in s.values()
                                    if isinstance(t, torch.Tensor)).items()
          if k not in w and k not in g}
    return w, g, st


def steps(model, opt, x, objective, case, n, pause, set_to_none=True):
    points = []
    for step in range(n):
        before = torch.cuda.memory_allocated()
        if case == "autocast":
            with torch.autocast("cuda", dtype=torch.bfloat16):
                out = objective(model(x))
        else:
            out = objective(model(x))
        forward_bytes = torch.cuda.memory_allocated() - before  # what the forward left alive
        time.sleep(pause)
        loss = out.sum()  # its launch queues the due tick: the snapshot sees what lives now
        t_loss = time.monotonic()
        allocated = torch.cuda.memory_allocated()
        w, g, st = roles(model, opt)
        held = sum(rounded(v) for d in (w, g, st) for v in d.values())
        points.append({"step": step + 1, "allocated": allocated,
                       "weights": sum(w.values()), "gradients": sum(g.values()),
                       "optimizer_state": sum(st.values()), "rest_bytes": allocated - held,
                       "forward_bytes": forward_bytes, "t_loss": t_loss})
        max_before = torch.cuda.max_memory_allocated()
        loss.backward()
        points[-1]["max_before_backward"] = max_before  # the peak so far, and after backward:
        points[-1]["max_after_backward"] = torch.cuda.max_memory_allocated()  # higher: inside it
        del out, loss
        opt.step()
        after = roles(model, opt)
        points[-1]["after_step"] = {"weights": sum(after[0].values()),
                                    "gradients": sum(after[1].values()),
                                    "optimizer_state": sum(after[2].values()),
                                    "state_tensors": len(after[2]),
                                    "weight_tensors": len(after[0])}
        opt.zero_grad(set_to_none=set_to_none)
        points[-1]["t_end"] = time.monotonic()
    return points
