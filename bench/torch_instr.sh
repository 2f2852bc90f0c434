#!/bin/sh
# Overhead on the real PyTorch (issue 23) counted in instructions, not time: this VM's CPU time for
# the same run spreads up to 2x between runs, which hides the differences the targets are about.
# Each variant of bench/torch_overhead.py's workloads runs once under callgrind (all threads),
# which dumps its counts before every cudaDeviceSynchronize: torch_overhead.py's timed loop is
# the part between the synchronize after its warm-up and the one that closes it, so import,
# warm-up, start-up and whatever a tracer does after the loop (torch.profiler's trace collection
# at its stop) are left out. Runs two at a time (the counts do not depend on the machine's load).
#
# Variants: none; gputrace with its defaults except what runs by the clock (host samples off:
# GPUTRACE_SAMPLE_HZ=0; the bridge's memory samples off: GPUTRACE_SAMPLE_MS=1000000): under
# callgrind a program runs ~70x slower, so a periodic cost would count ~70x in a step (their
# cost at normal speed: bench/README.md); gputrace without stacks (the same, GPUTRACE_STACKS=none;
# the PyTorch bridge still on); gputrace without the bridge (the same, GPUTRACE_TORCH=off);
# gputrace with native stacks only (the same, GPUTRACE_PYTHON=0: no Python frames, the bridge on);
# torch.profiler with CPU + CUDA activities.
# Usage: O=build GT_VENV=/path/to/venv sh bench/torch_instr.sh [SCALE]
#   SCALE multiplies the loop lengths (launch 1,000 ops, alloc 1,000 pairs, step 50 steps).
# Writes a Markdown section to $TORCH_BENCH_OUT (default bench/torch_instr.md; the earlier runs are
# kept by hand in bench/torch_instr_notes.md: bench/report.py copies both) and prints every
# command it runs.
set -eu
NAME=torch_instr
. "$(dirname "$0")/torch_env.sh"
SCALE=${1:-1}
OUT=${TORCH_BENCH_OUT:-$ROOT/bench/torch_instr.md}
SCRIPT="$ROOT/bench/torch_overhead.py"
command -v valgrind > /dev/null || { echo "torch_instr.sh: valgrind not found" >&2; exit 2; }
variants=${TORCH_BENCH_VARIANTS:-none gputrace gputrace-nostacks gputrace-notorch gputrace-nopython profiler}
workloads=${TORCH_BENCH_WORKLOADS:-launch alloc step}
CG="valgrind --tool=callgrind --dump-before=cudaDeviceSynchronize"
QUIET="GPUTRACE_SAMPLE_HZ=0 GPUTRACE_SAMPLE_MS=1000000"
# every variant sleeps 0.5 s after its warm-up: the bridge's first memory sample (its first
# flusher round, 100 ms after it starts) then falls before the loop, not inside it (it took
# 686 K instructions, +343 per allocation over 2,000, when it did)
export TORCH_BENCH_SETTLE_S=${TORCH_BENCH_SETTLE_S:-0.5}
n_of() {
    case $1 in launch) echo $((1000 * SCALE)) ;; alloc) echo $((1000 * SCALE)) ;; step) echo $((50 * SCALE)) ;; esac
}
cmd_of() { # variant workload -> command line (callgrind's files under $W/<variant>-<workload>/)
    n=$(n_of "$2") d="$W/$1-$2"
    case $1 in
    none) echo "$RUN $CG --callgrind-out-file=$d/cg.out $PY $SCRIPT $2 $n" ;;
    profiler) echo "$RUN $CG --callgrind-out-file=$d/cg.out $PY $SCRIPT $2 $n profiler" ;;
    gputrace) echo "env $QUIET $RUN -t $d/t.trace $CG --callgrind-out-file=$d/cg.out $PY $SCRIPT $2 $n" ;;
    gputrace-nostacks) echo "env $QUIET GPUTRACE_STACKS=none $RUN -t $d/t.trace $CG --callgrind-out-file=$d/cg.out $PY $SCRIPT $2 $n" ;;
    gputrace-notorch) echo "env $QUIET GPUTRACE_TORCH=off $RUN -t $d/t.trace $CG --callgrind-out-file=$d/cg.out $PY $SCRIPT $2 $n" ;;
    gputrace-nopython) echo "env $QUIET GPUTRACE_PYTHON=0 $RUN -t $d/t.trace $CG --callgrind-out-file=$d/cg.out $PY $SCRIPT $2 $n" ;;
    *) echo "torch_instr.sh: unknown variant $1" >&2; exit 2 ;;
    esac
}
one() { # variant workload: runs it, prints "variant workload n instructions"
    d="$W/$1-$2"
    mkdir -p "$d"
    eval "$(cmd_of "$1" "$2")" > "$d/log" 2>&1 || { echo "torch_instr.sh: $1 $2 failed:" >&2; tail -20 "$d/log" >&2; return 1; }
    # the parts in order: 1 start to the warm-up's synchronize, 2 the timed loop, 3 the rest
    f="$d/cg.out.2"
    [ -f "$f" ] && grep -q '^desc: Trigger: --dump-before=cudaDeviceSynchronize' "$f" ||
        { echo "torch_instr.sh: $1 $2: no dump at the loop's end ($f)" >&2; return 1; }
    echo "$1 $2 $(n_of "$2") $(sed -n 's/^summary: //p' "$f")"
}
export TORCH_BENCH_START="$(date -u '+%Y-%m-%d %H:%M UTC')"
: > "$W/jobs"
for wl in $workloads; do
    for v in $variants; do
        cmd_of "$v" "$wl"
        echo "$v $wl" >> "$W/jobs"
    done
done
pids=
while read -r v wl; do
    one "$v" "$wl" >> "$W/raw.txt" &
    pids="$pids $!"
    set -- $pids
    if [ $# -ge 2 ]; then wait "$1" || exit 1; shift; pids="$*"; fi
done < "$W/jobs"
for p in $pids; do wait "$p" || exit 1; done
cat "$W/raw.txt"
"$PY" - "$W/raw.txt" "$OUT" "$SCALE" "$variants" "$workloads" <<'PY'
import os, sys
raw, out, scale, variants, workloads = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4].split(), sys.argv[5].split()
got = {}
for line in open(raw):
    v, w, n, ins = line.split()
    got[(v, w)] = (int(n), int(ins))
names = {"none": "no tracer",
         "gputrace": "gputrace, defaults (native + Python stacks, CUPTI, the bridge), clock-driven samples off",
         "gputrace-nostacks": "gputrace, `GPUTRACE_STACKS=none` (the bridge on), clock-driven samples off",
         "gputrace-notorch": "gputrace, `GPUTRACE_TORCH=off` (stacks on, no bridge), clock-driven samples off",
         "gputrace-nopython": "gputrace, `GPUTRACE_PYTHON=0` (native stacks only, the bridge on), clock-driven samples off",
         "profiler": "torch.profiler, CPU + CUDA activities"}
units = {"launch": "per op (`x.add(1)`)", "alloc": "per allocation (`torch.empty(4096)` + `del`)",
         "step": "per step (3 elementwise layers, MSE loss, autograd + AdamW)"}
cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
md = [f"{os.environ.get('TORCH_BENCH_START', '')}, vm, `nproc` {os.cpu_count()}, {cpu}; "
      f"instructions counted by callgrind (all threads) inside torch_overhead.py's timed loop, one run per "
      f"variant (counts do not depend on the machine's load); scale {scale}.", ""]
for w in workloads:
    base = got.get(("none", w))
    if not base:
        continue
    n = base[0]
    md += [f"#### {units[w]}, {n} per run", "",
           "| variant | instructions per unit | added | × none | added / torch.profiler's added |",
           "|---|---:|---:|---:|---:|"]
    prof = got.get(("profiler", w))
    prof_added = (prof[1] - base[1]) / n if prof else None
    for v in variants:
        if (v, w) not in got:
            continue
        per = got[(v, w)][1] / n
        added = per - base[1] / n
        ratio = f"{added / prof_added:.2f}×" if prof_added and v not in ("none", "profiler") else "-"
        md.append(f"| {names.get(v, v)} | {per:,.0f} | {'-' if v == 'none' else f'{added:+,.0f}'} | "
                  f"{per / (base[1] / n):.3f} | {ratio} |")
    md.append("")
open(out, "w").write("\n".join(md) + "\n")
print("\n".join(md))
print("torch_instr.sh: wrote", out)
PY
