#!/bin/sh
# The PyTorch bridge's cost per allocation (issue 17): the real PyTorch on the simulated stack
# (tests/simrt/run-torch), bench/torch_alloc.py timing N torch.empty + del pairs, in variants run
# interleaved round by round: plain PyTorch, PyTorch's own _record_memory_history alone (as
# GPUTRACE_TORCH=history asks it, and as PyTorch documents it), and traced by gputrace with each
# GPUTRACE_TORCH level. Prints every command; writes bench/torch_bridge.md (medians), which
# bench/report.py puts into RESULTS.md.
# Usage: O=build GT_VENV=/path/to/venv sh bench/torch_bridge.sh [ROUNDS] [N]
set -eu
NAME=torch_bridge
. "$(dirname "$0")/torch_env.sh"
ROUNDS=${1:-5}
N=${2:-20000}
OUT=${TORCH_BENCH_OUT:-$ROOT/bench/torch_bridge.md}
variants="plain torch-history-python torch-history-default gputrace-off gputrace-stats gputrace-snapshots gputrace-history"
cmd_of() { # variant -> command line
    case $1 in
    plain) echo "$RUN $PY $ROOT/bench/torch_alloc.py $N" ;;
    torch-history-python) echo "$RUN $PY $ROOT/bench/torch_alloc.py $N history-python" ;;
    torch-history-default) echo "$RUN $PY $ROOT/bench/torch_alloc.py $N history-default" ;;
    gputrace-*) echo "env GPUTRACE_TORCH=${1#gputrace-} $RUN -t $W/t.trace $PY $ROOT/bench/torch_alloc.py $N" ;;
    esac
}
for v in $variants; do echo "$(cmd_of $v)"; done
: > "$W/raw.txt"
r=1
while [ $r -le "$ROUNDS" ]; do
    # rotate the order each round
    set -- $variants
    i=1
    while [ $i -lt $r ]; do v=$1; shift; set -- "$@" "$v"; i=$((i + 1)); done
    for v in "$@"; do
        rm -f "$W"/t.trace*
        res=$(eval "$(cmd_of $v)" | grep '=' | tr '\n' ' ')
        echo "round=$r variant=$v $res" | tee -a "$W/raw.txt"
    done
    r=$((r + 1))
done
"$PY" - "$W/raw.txt" "$OUT" "$N" "$ROUNDS" <<'PYEOF'
import platform, os, statistics, subprocess, sys, time
raw, out, n, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
rows = [dict(kv.split("=") for kv in l.split()) for l in open(raw) if l.strip()]
order = ["plain", "torch-history-python", "torch-history-default", "gputrace-off",
         "gputrace-stats", "gputrace-snapshots", "gputrace-history"]
what = {"plain": "plain PyTorch (simulated runtime, no gputrace)",
        "torch-history-python": "PyTorch's `_record_memory_history(enabled='all', context='alloc', stacks='python', max_entries=100000)` alone",
        "torch-history-default": "PyTorch's `_record_memory_history(max_entries=100000)` alone (its documented call)",
        "gputrace-off": "gputrace, `GPUTRACE_TORCH=off`",
        "gputrace-stats": "gputrace, `GPUTRACE_TORCH=stats`",
        "gputrace-snapshots": "gputrace, `GPUTRACE_TORCH=snapshots` (default)",
        "gputrace-history": "gputrace, `GPUTRACE_TORCH=history`"}
med = {}
per_round = {}
for v in order:
    xs = [float(r["ns_per_alloc"]) for r in rows if r["variant"] == v]
    med[v] = statistics.median(xs)
    per_round[v] = {r["round"]: float(r["ns_per_alloc"]) for r in rows if r["variant"] == v}
def added(v):
    d = [per_round[v][k] - per_round["plain"][k] for k in per_round[v] if k in per_round["plain"]]
    return statistics.median(d)
cpu = ""
for l in open("/proc/cpuinfo"):
    if l.startswith("model name"):
        cpu = l.split(":", 1)[1].strip()
        break
load = open("/proc/loadavg").read().split()[:3]
L = ["## PyTorch allocator bridge: cost per allocation", "",
     "%s, %s, `nproc` %d, %s, load average %s; torch %s on the simulated runtime "
     "(tests/simrt); %d rounds of %d `torch.empty(4096)` + `del` pairs per variant, interleaved in "
     "rotating order; medians over the rounds, \"added\" = median of the per-round differences "
     "against plain PyTorch." % (time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                                  platform.node(), os.cpu_count(), cpu, " ".join(load),
                                  subprocess.run([sys.executable, "-c", "import torch; print(torch.__version__)"],
                                                 capture_output=True, text=True).stdout.strip(),
                                  rounds, n), "",
     "| variant | ns per allocation (+ free) | added |", "|---|---:|---:|"]
for v in order:
    L.append("| %s | %.0f | %s |" % (what[v], med[v], "-" if v == "plain" else "%+.0f" % added(v)))
L += ["", "The main thread's cost of what the bridge does periodically, with 1,000 tensors live "
      "(medians over the rounds; PyTorch calls, timed in the program):", "",
      "| variant | `memory_stats()` µs | first `_snapshot()` µs | later `_snapshot()` µs |",
      "|---|---:|---:|---:|"]
for v in ("plain", "torch-history-python", "torch-history-default"):
    f = lambda k: statistics.median(float(r[k]) for r in rows if r["variant"] == v)
    L.append("| %s | %.0f | %.0f | %.0f |" % (what[v], f("us_memory_stats"), f("us_snapshot_first"),
                                            f("us_snapshot")))
L += ["", "Commands: `sh bench/torch_bridge.sh %d %d` (bench/torch_bridge.sh prints each one)." % (rounds, n), ""]
open(out, "w").write("\n".join(L))
print("\n".join(L))
PYEOF
