"""Compares the report's memory by category (memory.allocators[0]: peak_breakdown.by_category,
optimizers, category_series) with PyTorch's own figures written by tests/torch/tiers.py.
Usage: tiers_check.py [--history] CASE REPORT.json PYTORCH.json [BASELINE_PYTORCH.json BASELINE_REPORT.json]
(checkpoint: the baseline is the same model without checkpointing). Prints the figures; exit 1
with the first difference."""
import json
import sys

history = sys.argv[1] == "--history"  # GPUTRACE_TORCH=history: blocks carry Python frames
if history:
    del sys.argv[1]
case, rep_path, pt_path = sys.argv[1:4]
layer_line = [i + 1 for i, l in enumerate(open(__file__.replace("_check", "")))
              if "return torch.sin(x * w)" in l][0]
rep = json.load(open(rep_path))
pt = json.load(open(pt_path))
fails = []


def check(what, got, want):
    ok = got == want
    print("%-44s report %-12s pytorch %-12s %s" % (what, got, want, "ok" if ok else "DIFFERS"))
    if not ok:
        fails.append(what)


def cats_of(r):
    a = r["memory"]["allocators"][0]
    return a, {c["category"]: c for c in a["peak_breakdown"]["by_category"]}


alloc, cats = cats_of(rep)
pb = alloc["peak_breakdown"]
# with history the breakdown is the replay's, at PyTorch's peak (torch_tiers_backward checks it);
# the fullest snapshot's figures are then its category_snapshots point
replayed = pb.get("categories_source") == "replay"
snaps = alloc["category_snapshots"]
fullest = max(snaps, key=lambda q: q["allocated"]) if snaps else {}
if replayed:
    check("the replay's peak is PyTorch's", pb["categories_allocated_bytes"],
          pt["max_memory_allocated"])
    check("the replay's categories sum to its reserved", sum(c["bytes"] for c in cats.values()),
          pb["categories_reserved_bytes"])


def snap_bytes(c):
    """A category's bytes in the fullest snapshot."""
    return fullest.get(c) if replayed else cats[c]["bytes"]


def snap_storage(c):
    """Its storage bytes (block bytes where the breakdown is the replay's: 1 MiB storages)."""
    return fullest.get(c) if replayed else cats[c]["requested_bytes"]
# the fullest snapshot is one of the moments the program measured (after the loss, each step)
snap = pb["snapshot_allocated_bytes"]
match = [p for p in pt["points"] if p["allocated"] == snap]
check("fullest snapshot is a measured moment", bool(match), True)
p = match[-1] if match else pt["points"][-1]
check("weights (storage bytes)", snap_storage("weights"), p["weights"])
check("gradients (storage bytes)", snap_storage("gradients"), p["gradients"])
check("optimizer_state (storage bytes)", snap_storage("optimizer_state"), p["optimizer_state"])
if history:  # frames: the forward's blocks are activations, the rest (input, loss) other
    check("activations (frames: the forward's blocks)", snap_bytes("activations"),
          p["forward_bytes"])
    check("other (the input, the loss)", snap_bytes("other"),
          p["rest_bytes"] - p["forward_bytes"])
    check("activations' top site", [t["site"] for t in cats["activations"]["top_sites"]],
          ["tiers.py:%d (layer)" % layer_line])
else:
    check("activations (remainder, block bytes)", snap_bytes("activations"), p["rest_bytes"])
check("activations > 0", cats["activations"]["bytes"] > 0, True)
check("bases", [cats[c]["basis"] for c in ("weights", "optimizer_state", "activations", "cache")],
      ["exact", "exact", "frames" if history else "remainder", "exact"])
check("categories sum to the snapshot's reserved", sum(snap_bytes(c) for c in cats),
      alloc["fragmentation"]["at_peak"]["reserved_bytes"])
check("roles not found among the blocks", pb["roles_unmatched_bytes"], 0)
# each optimizer step, exact
o = alloc["optimizers"][0]
last = pt["points"][-1]["after_step"]
check("optimizer class", o["class"], pt["optimizer"])
check("optimizer steps", o["steps"], len(pt["points"]))
check("weights after the last step", o["weights_bytes"], last["weights"])
check("gradients after the last step", o["gradients_bytes"], last["gradients"])
check("optimizer_state after the last step", o["optimizer_state_bytes"], last["optimizer_state"])
check("gradients <= weights", o["gradients_bytes"] <= o["weights_bytes"], True)
ratio = {"AdamW": 2.0, "SGD": 1.0}[pt["optimizer"]]
check("optimizer_state / weights", o["state_to_weights"], ratio)
check("state tensors", o["state_tensors"], last["state_tensors"])
# one point per step whose hook read memory_stats(): the first always, the others once the time
# since the last read is 1,000x that read's own (which steps depends on the machine's speed)
series = alloc["category_series"]
steps = [s["step"] for s in series]
check("series points: step 1 first, then read steps in order, none past the last",
      bool(steps) and steps[0] == 1 and steps == sorted(set(steps)) and steps[-1] <= len(pt["points"]), True)
for s in series:
    a = pt["points"][s["step"] - 1]["after_step"] if 1 <= s["step"] <= len(pt["points"]) else {}
    check("series step %d weights/gradients/state" % s["step"],
          [s["weights"], s["gradients"], s["optimizer_state"]],
          [a.get("weights"), a.get("gradients"), a.get("optimizer_state")])
# every whole snapshot by category: each sums to its reserved bytes, the fullest is the breakdown,
# and at exit (after the last zero_grad) the roles are what the program's objects held then
names = [c for c in cats]
check("snapshot points sum to their reserved",
      all(sum(q[c] for c in names) == q["reserved"] for q in snaps), True)
check("... and without cache and temporary to their allocated",
      all(sum(q[c] for c in names if c not in ("cache", "temporary")) == q["allocated"]
          for q in snaps), True)
if not replayed:
    check("the fullest point is the breakdown", {c: fullest.get(c) for c in names},
          {c: cats[c]["bytes"] for c in names})
ex = [q for q in snaps if q["why"] == "exit"]
check("an exit snapshot point", len(ex), 1)
check("roles known from the first snapshot after step 1 on",
      [q["roles_known"] for q in snaps] == sorted(q["roles_known"] for q in snaps), True)
if ex:
    kept = last["weights"] if case == "keepgrad" else 0
    check("at exit: weights, gradients, optimizer_state",
          [ex[0]["weights"], ex[0]["gradients"], ex[0]["optimizer_state"]],
          [last["weights"], kept, last["optimizer_state"]])  # 1 MiB storages: blocks of the same size
if case == "keepgrad":  # zero_grad(set_to_none=False): the gradients stay, zeroed
    check("gradients held at the peak (set_to_none=False)", snap_storage("gradients"),
          p["weights"])
elif pt["optimizer"] in ("AdamW", "SGD"):  # set_to_none=True: freed before the next forward
    check("no gradients at the fullest snapshot (set_to_none=True)", snap_bytes("gradients"), 0)
if case == "checkpoint":
    base_pt = json.load(open(sys.argv[4]))
    base_cats = cats_of(json.load(open(sys.argv[5])))[1]
    check("activations shrink under checkpointing",
          cats["activations"]["bytes"] < base_cats["activations"]["bytes"], True)
    check("baseline activations = its PyTorch figure", base_cats["activations"]["bytes"],
          base_pt["points"][-1]["rest_bytes"])
    print("activations: %d with checkpointing, %d without" %
          (cats["activations"]["bytes"], base_cats["activations"]["bytes"]))
if fails:  # the context: the snapshots are taken by time (one peak snapshot per second at most)
    t0 = pt["points"][0].get("t_loss", 0)
    print("steps (s after the first loss): loss, end:",
          ["%.3f %.3f" % (q.get("t_loss", 0) - t0, q.get("t_end", 0) - t0) for q in pt["points"]])
    print("snapshots (s, why, allocated):",
          ["%.3f %s %d" % (q["time_ns"] / 1e9, q["why"], q["allocated"]) for q in snaps])
    # the batches of block events between snapshots: how many were replayed, and how many did
    # not end in the state of their snapshot (a batch not trusted: its peak is not looked at)
    print("replay (batches, replayed, inconsistent):", pb.get("replay"))
    print("DIFFERS:", "; ".join(fails))
sys.exit(1 if fails else 0)
