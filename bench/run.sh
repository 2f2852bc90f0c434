#!/bin/sh
# gputrace benchmarks: launch overhead against a no-op preload and LTTng-UST, thread scaling,
# trace size against Kineto's Chrome-trace JSON, analyzer throughput and memory.
# Run through `make bench` (or `O=build sh bench/run.sh` after `make all fixtures bench-progs`).
# BENCH_QUICK=1: small sizes, under a minute. Writes bench/RESULTS.md (BENCH_RESULTS=path to
# write elsewhere); scratch files go to $O/bench/work (BENCH_WORK=dir), removed at the end.
# BENCH_BASE=REV: also run the memory and timeline analyses with gputrace-report as of commit REV
# (built by bench/build_rev.sh), interleaved with the current one: before/after in one run.
# BENCH_SECTIONS="6 7": run only those sections; their figures replace the same sections of the
# last full run (kept in bench/raw/) in RESULTS.md.
# BENCH_BASE_LIB=path/libgputrace.so: sections 1 and 2 also run that shim (variant "base", set
# up as "off": no stacks, no CUPTI), interleaved with the current one: before/after in one run.
# Every command is printed before it runs and listed in RESULTS.md. See bench/README.md.
set -eu

O=${O:-build}
ROOT=$(pwd)
case $O in /*) OB=$O ;; *) OB=$ROOT/$O ;; esac
B=$OB/bench
LIB=$OB/libgputrace.so
REPORT=$OB/gputrace-report
W=${BENCH_WORK:-$B/work}
RESULTS=${BENCH_RESULTS:-$ROOT/bench/RESULTS.md}
PYTHON=${PYTHON:-python3}
QUICK=${BENCH_QUICK:-0}
[ "$QUICK" = 0 ] || QUICK=1
KINETO_DIR=${KINETO_DIR:-/work/shared/data/kineto}
BASE_LIB=${BENCH_BASE_LIB:-}

if [ "$QUICK" = 1 ]; then
    N=200000 WARM=50000 REPS=3
    TN=200000 TREPS=2 TVARS_SIM="none off"
    KN=20000
    AN_HOST="1000000" AN_GPU="1000000" AN_PACKED="1000000" AREPS=2
    KINETO_FILES="benchmark_result_2869224_1695835535_trace.json.gz sampled_rank-0.json.gz"
    HT_N=100000 HT_WARM=10000 HT_REPS=2
    MEM_SIZES="500000" MEM_REPS=1 MEM_LIVE_CHECK=0
    TL_SIZES="100000" TL_REPS=1
else
    N=3000000 WARM=100000 REPS=11
    TN=1000000 TREPS=5 TVARS_SIM="none off"
    KN=100000
    AN_HOST="1000000 10000000 100000000" AN_GPU="1000000 10000000 100000000" AREPS=3
    AN_PACKED="1000000 10000000"
    KINETO_FILES="*.json.gz"
    HT_N=1000000 HT_WARM=50000 HT_REPS=5
    MEM_SIZES="1000000 2000000 5000000 10000000" MEM_REPS=3 MEM_LIVE_CHECK=1
    TL_SIZES="1000000 10000000" TL_REPS=3
fi
HT_DEPTH=32
PY_DEPTH=20
if [ "$QUICK" = 1 ]; then PY_N=20000 PY_WARM=2000; else PY_N=200000 PY_WARM=20000; fi

for f in "$B/bench_launch" "$B/gen_trace" "$B/bench_decode" "$B/bench_parts" "$B/bench_stack" "$B/rusage" \
    "$B/nulldrv/libcuda.so.1" "$LIB" "$REPORT" "$OB/sim/libcuda.so.1" "$OB/simcupti/libcupti.so.13"; do
    [ -e "$f" ] || { echo "bench: $f missing; run make bench" >&2; exit 1; }
done

rm -rf "$W"
mkdir -p "$W/t"
RAW=$W/raw.txt
CMDS=$W/commands.txt
: >"$RAW"
: >"$CMDS"
T0=$(date +%s)

# The simulated GPU for every launch/alloc variant: 20 ns kernels started at once, so the stream
# never backs up and the loop measures host cost; a bounded activity ring (65,536 records; without
# a CUPTI client it fills during warm-up and stays full); CUPTI and gputrace flush every 10 ms so
# the ring is drained before it overflows when CUPTI is on (checked: cupti_dropped below).
SIM="LD_LIBRARY_PATH=$OB/simcupti:$OB/sim GTSIM_KERNEL_NS=20 GTSIM_LAUNCH_LATENCY_NS=0 GTSIM_ACTIVITY_CAPACITY=65536 GTSIM_CUPTI_PERIOD_MS=10 GPUTRACE_FLUSH_MS=10"
NULLDRV="LD_LIBRARY_PATH=$B/nulldrv GPUTRACE_FLUSH_MS=10"

# cmd: print, remember, run. Output goes to stdout of the caller.
cmd() {
    echo "+ $*" >&2
    grep -qxF -- "$*" "$CMDS" || echo "$*" >>"$CMDS"
    eval "$*"
}

# record TAGS CMD...: runs a command that prints one key=value line and stores it with TAGS.
record() {
    tags=$1
    shift
    line=$(cmd "$@")
    echo "$tags $line" >>"$RAW"
    echo "  $line" >&2
}

now_ns() { date +%s%N; }

# Rotates the words of a list by $1 places, so no variant always runs first or last.
rotate() {
    k=$1
    shift
    i=0
    while [ "$i" -lt "$k" ] && [ $# -gt 1 ]; do
        x=$1
        shift
        set -- "$@" "$x"
        i=$((i + 1))
    done
    echo "$@"
}

count_words() { echo $#; }

# want N: section N is to run (BENCH_SECTIONS="5 6 7" runs only those; default all).
want() { case " ${BENCH_SECTIONS:-1 2 3 4 5 6 7} " in *" $1 "*) return 0 ;; esac; return 1; }

echo "== machine" >&2
{
    echo "sec=env key=date val=$(date -u '+%Y-%m-%d %H:%M UTC' | tr ' ' '_')"
    echo "sec=env key=nproc val=$(nproc)"
    echo "sec=env key=cpu val=$(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //' | tr ' ' '_')"
    echo "sec=env key=kernel val=$(uname -r)"
    echo "sec=env key=compiler val=$(${CC:-cc} --version | head -1 | tr ' ' '_')"
    echo "sec=env key=load_start val=$(cut -d' ' -f1-3 /proc/loadavg | tr ' ' '/')"
    echo "sec=env key=quick val=$QUICK"
    echo "sec=env key=sections val=$(echo "${BENCH_SECTIONS:-all}" | tr ' ' ',')"
    echo "sec=env key=lttng val=$(lttng --version 2>/dev/null | head -1 | tr ' ' '_' || echo none)"
    [ -z "$BASE_LIB" ] || echo "sec=env key=base_lib val=$(echo "$BASE_LIB" | tr ' ' '_')"
} >>"$RAW"
! want 1 || record "sec=parts" "$B/bench_parts"

# ---- 1. launch and allocation overhead ---------------------------------------------------------
LTTNG_OK=0
SESSIOND_PID=
if want 1 && [ -x "$B/bench_launch_lttng" ] && command -v lttng >/dev/null 2>&1; then
    if ! lttng list >/dev/null 2>&1; then
        cmd "lttng-sessiond --daemonize --no-kernel" >/dev/null 2>&1 || true
        sleep 1
        for p in /var/run/lttng/lttng-sessiond.pid "$HOME/.lttng/lttng-sessiond.pid"; do
            [ -r "$p" ] && SESSIOND_PID=$(cat "$p") && break
        done
    fi
    if lttng list >/dev/null 2>&1; then LTTNG_OK=1; else LTTNG_OK=nosessiond; fi
fi
echo "sec=env key=lttng_status val=$LTTNG_OK" >>"$RAW"
cleanup() {
    lttng destroy gtbench >/dev/null 2>&1 || true
    [ -z "$SESSIOND_PID" ] || kill "$SESSIOND_PID" 2>/dev/null || true
}
trap cleanup EXIT

# run_variant SECTION MODE VARIANT REP
run_variant() {
    sec=$1 mode=$2 v=$3 rep=$4
    tags="sec=$sec var=$v rep=$rep"
    out=$W/t/$sec-$v.trace
    rm -f "$out"
    case $v in
    none) record "$tags" "env $SIM $B/bench_launch $mode $N 1 $WARM" ;;
    disable) record "$tags" "env $SIM GPUTRACE_DISABLE=1 LD_PRELOAD=$LIB $B/bench_launch $mode $N 1 $WARM" ;;
    off) record "$tags" "env $SIM GPUTRACE_CUPTI=off GPUTRACE_STACKS=none GPUTRACE_OUTPUT=$out LD_PRELOAD=$LIB $B/bench_launch $mode $N 1 $WARM" ;;
    stacks) record "$tags" "env $SIM GPUTRACE_CUPTI=off GPUTRACE_OUTPUT=$out LD_PRELOAD=$LIB $B/bench_launch $mode $N 1 $WARM" ;;
    on) record "$tags" "env $SIM GPUTRACE_STACKS=none GPUTRACE_OUTPUT=$out LD_PRELOAD=$LIB $B/bench_launch $mode $N 1 $WARM" ;;
    base) record "$tags" "env $SIM GPUTRACE_CUPTI=off GPUTRACE_STACKS=none GPUTRACE_OUTPUT=$out LD_PRELOAD=$BASE_LIB $B/bench_launch $mode $N 1 $WARM" ;;
    lttng) run_lttng "$rep" ;;
    esac
}

# The LTTng-UST peer: the tracepoint compiled in with no session (its disabled cost), then in a
# session recording to a local directory.
run_lttng() {
    rep=$1
    [ -x "$B/bench_launch_lttng" ] || return 0
    record "sec=launch var=lttng_off rep=$rep" "env $SIM $B/bench_launch_lttng launch $N 1 $WARM"
    record "sec=tp var=lttng_off rep=$rep" "env $SIM $B/bench_launch_lttng tp $N 1 $WARM"
    [ "$LTTNG_OK" = 1 ] || return 0 # no session daemon: only the disabled cost
    d=$W/t/lttng
    rm -rf "$d"
    cmd "lttng create gtbench --output=$d" >/dev/null
    cmd "lttng enable-channel -u --subbuf-size=4M --num-subbuf=8 gtb" >/dev/null
    cmd "lttng enable-event -u -c gtb 'gtbench:*'" >/dev/null
    cmd "lttng start" >/dev/null
    record "sec=launch var=lttng_on rep=$rep" "env $SIM $B/bench_launch_lttng launch $N 1 $WARM"
    record "sec=tp var=lttng_on rep=$rep" "env $SIM $B/bench_launch_lttng tp $N 1 $WARM"
    stop=$(cmd "lttng stop" 2>&1 || true)
    cmd "lttng destroy gtbench" >/dev/null
    disc=$(echo "$stop" | sed -n 's/.*[^0-9]\([0-9][0-9]*\) events\{0,1\} \(were\|was\) discarded.*/\1/p' | head -1)
    bytes=$(du -sb "$d" | cut -f1)
    echo "sec=lttng_session rep=$rep events=$((2 * (N + WARM))) bytes=$bytes discarded=${disc:-0}" >>"$RAW"
    rm -rf "$d"
}

if want 1; then
echo "== 1. launch overhead ($REPS rounds, variants interleaved)" >&2
VARS="none disable off stacks on lttng${BASE_LIB:+ base}"
r=1
while [ "$r" -le "$REPS" ]; do
    for v in $(rotate $((r % $(count_words $VARS))) $VARS); do run_variant launch launch "$v" "$r"; done
    r=$((r + 1))
done
echo "== 1b. cuMemAlloc+cuMemFree pairs" >&2
VARS="none disable off stacks on${BASE_LIB:+ base}"
r=1
while [ "$r" -le "$REPS" ]; do
    for v in $(rotate $((r % $(count_words $VARS))) $VARS); do run_variant alloc alloc "$v" "$r"; done
    r=$((r + 1))
done
fi

# trace_counts NAME TRACE: what a trace holds, as one raw line (sec=size kind=NAME ...).
trace_counts() {
    cmd "$REPORT --json $2 -o $W/t/$1.json"
    "$PYTHON" - "$2" "$W/t/$1.json" "$1" >>"$RAW" <<'EOF'
import json, os, sys
t, j, name = sys.argv[1:]
d = json.load(open(j))
tr, tl, mem = d['trace'], d['timeline'], d['memory']
print('sec=size kind=%s bytes=%d records=%d gpu_records=%d launches=%d kernels=%d allocs=%d '
      'frees=%d cupti_dropped=%d lost=%d' % (name, os.path.getsize(t), tr['records'],
      tr['gpu_records'], tl['launch_count'], tl.get('kernel_count', 0), mem['alloc_count'],
      mem['free_count'], tr.get('cupti_dropped', 0), tr['lost_records']))
EOF
}
if want 1; then
# What the traces of the last round hold.
for f in launch-off launch-stacks launch-on alloc-off alloc-stacks alloc-on launch-base alloc-base; do
    [ ! -e "$W/t/$f.trace" ] || trace_counts "$f" "$W/t/$f.trace"
done
fi

# ---- 2. threads ----------------------------------------------------------------------------------
if want 2; then
echo "== 2. threads ($TREPS rounds)" >&2
r=1
while [ "$r" -le "$TREPS" ]; do
    for th in 1 2 4 8 16; do
        for v in $TVARS_SIM${BASE_LIB:+ base}; do
            tags="sec=threads drv=sim var=$v threads=$th rep=$r"
            out=$W/t/threads.trace
            rm -f "$out"
            case $v in
            none) record "$tags" "env $SIM $B/bench_launch launch $TN $th $WARM" ;;
            off) record "$tags" "env $SIM GPUTRACE_CUPTI=off GPUTRACE_STACKS=none GPUTRACE_OUTPUT=$out LD_PRELOAD=$LIB $B/bench_launch launch $TN $th $WARM" ;;
            base) record "$tags" "env $SIM GPUTRACE_CUPTI=off GPUTRACE_STACKS=none GPUTRACE_OUTPUT=$out LD_PRELOAD=$BASE_LIB $B/bench_launch launch $TN $th $WARM" ;;
            esac
        done
        rm -f "$W/t/threads.trace"
        for v in $(rotate $((r % 3)) none off stacks${BASE_LIB:+ base}); do
            tags="sec=threads drv=null var=$v threads=$th rep=$r"
            out=$W/t/threads.trace
            rm -f "$out"
            case $v in
            none) record "$tags" "env $NULLDRV $B/bench_launch launch $((TN * 4)) $th $WARM" ;;
            off) record "$tags" "env $NULLDRV GPUTRACE_CUPTI=off GPUTRACE_STACKS=none GPUTRACE_OUTPUT=$out LD_PRELOAD=$LIB $B/bench_launch launch $((TN * 4)) $th $WARM" ;;
            base) record "$tags" "env $NULLDRV GPUTRACE_CUPTI=off GPUTRACE_STACKS=none GPUTRACE_OUTPUT=$out LD_PRELOAD=$BASE_LIB $B/bench_launch launch $((TN * 4)) $th $WARM" ;;
            stacks) record "$tags" "env $NULLDRV GPUTRACE_CUPTI=off GPUTRACE_OUTPUT=$out LD_PRELOAD=$LIB $B/bench_launch launch $((TN * 4)) $th $WARM" ;;
            esac
        done
        rm -f "$W/t/threads.trace"
    done
    r=$((r + 1))
done
fi

# ---- 3. trace size against Kineto JSON -------------------------------------------------------------
if want 3; then
echo "== 3. trace size" >&2
files=
for f in $KINETO_FILES; do
    for g in "$KINETO_DIR"/$f; do [ -e "$g" ] && files="$files $g"; done
done
if [ -n "$files" ]; then
    cmd "$PYTHON $ROOT/bench/kineto_size.py measure $W/kineto.json$files" >&2
else
    echo "sec=env key=kineto val=missing" >>"$RAW"
fi
# A traced run with CUPTI (and the default stacks) whose activity ring holds every launch, so no
# kernel record can be dropped however loaded the machine is: bytes per launch+kernel pair. Then
# the same events written the Kineto way: dumped and converted.
# A run that comes back with fewer kernels than launches (GPU records missing without being
# counted as dropped or lost: seen about once in 30 runs) is recorded and run again, up to 5 times.
k=$W/t/kineto-run.trace
try=1
while :; do
    rm -f "$k"
    cmd "env $SIM GTSIM_ACTIVITY_CAPACITY=$((KN + 1000)) GPUTRACE_OUTPUT=$k LD_PRELOAD=$LIB $B/bench_launch launch $KN 1 0" >/dev/null
    trace_counts pair-on "$k"
    kernels=$(tail -1 "$RAW" | sed 's/.* kernels=\([0-9]*\).*/\1/')
    [ "$kernels" != "$KN" ] || break
    sed -i '$ s/^sec=size kind=pair-on/sec=size kind=pair-incomplete/' "$RAW"
    [ "$try" -lt 5 ] || break
    try=$((try + 1))
done
cmd "$REPORT --dump $k > $W/t/kineto-run.dump"
conv=$(cmd "$PYTHON $ROOT/bench/kineto_size.py convert $W/t/kineto-run.dump $W/t/kineto-run.json")
echo "sec=kineto_conv $conv trace_bytes=$(stat -c %s "$k")" >>"$RAW"
cmd "gzip -6 -c $k | wc -c" | sed 's/^/sec=gzip kind=trace bytes=/' >>"$RAW"
cmd "gzip -6 -c $W/t/kineto-run.json | wc -c" | sed 's/^/sec=gzip kind=json bytes=/' >>"$RAW"
rm -f "$k" "$W/t/kineto-run.dump" "$W/t/kineto-run.json"
fi

# ---- 4. analyzer -----------------------------------------------------------------------------------
echo "== 4. analyzer" >&2
# time_rss TAGS CMD: wall time, CPU time and peak RSS of one command (bench/rusage: the figures of
# GNU time -v, with CPU times to the microsecond instead of the hundredth of a second).
time_rss() {
    tags=$1
    shift
    a=$(now_ns)
    cmd "$B/rusage $W/time.txt $*"
    b=$(now_ns)
    rss=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$W/time.txt")
    # CPU time (user + system, all the command's processes): what the run would take on an idle
    # core; the wall time also holds the waits for a core when the shared machine is loaded.
    cpu=$(awk -F': ' '/User time|System time/ {s += $2} END {printf "%.0f", s * 1e9}' "$W/time.txt")
    echo "$tags ns=$((b - a)) cpu_ns=$cpu rss_kb=$rss" >>"$RAW"
    echo "  $((b - a)) ns, $cpu ns CPU, $rss KB" >&2
}

analyze() {
    kind=$1 n=$2
    f=$W/t/$kind-$n.trace
    flag=
    [ "$kind" = gpu ] && flag=--gpu
    # packed: the host mix as the shim writes it by default (GPUTRACE_COMPRESS=1: threads' chunks
    # GT_CODEC_PACK_DELTA, the rest zstd level 1), so the decode pass also unpacks every chunk.
    [ "$kind" = packed ] && flag="--compress 1 --pack"
    # Disk for the file; memory for the file in the page cache plus the report's RSS (bounded for
    # the host mix, ~50 B per event with GPU records) and a 1 GiB margin.
    need=$((n * 70))
    rss=$((64 << 20))
    [ "$kind" = gpu ] && rss=$((n * 50))
    avail=$(($(df -Pk "$W" | awk 'NR==2 {print $4}') * 1024))
    mem=$(($(awk '/MemAvailable/ {print $2}' /proc/meminfo) * 1024))
    if [ "$avail" -lt $((need + (1 << 30))) ] || [ "$mem" -lt $((need + rss + (1 << 30))) ]; then
        echo "sec=an kind=$kind n=$n skipped=space" >>"$RAW"
        echo "  skipped $kind $n: not enough disk or memory" >&2
        return 0
    fi
    gen=$(cmd "$B/gen_trace $flag $n $f")
    echo "sec=an_gen kind=$kind n=$n $gen" >>"$RAW"
    cmd "sync $f"
    cmd "cat $f > /dev/null" # into the page cache
    # AREPS runs at 100 M events too (the headline figure; one run on this machine can be 7% off),
    # three times as many up to 1 M events and twice up to 10 M: a run there is short enough for
    # the machine's hiccups (two of three 1 M runs 50% slow on 2026-12-04) to decide a median.
    reps=$AREPS
    [ "$n" -le 10000000 ] && reps=$((AREPS * 2))
    [ "$n" -le 1000000 ] && reps=$((AREPS * 3))
    r=1
    while [ "$r" -le "$reps" ]; do
        time_rss "sec=an kind=$kind n=$n rep=$r what=cat" "cat $f > /dev/null"
        record "sec=an kind=$kind n=$n rep=$r what=decode" "$B/bench_decode $f"
        time_rss "sec=an kind=$kind n=$n rep=$r what=report" "$REPORT --json $f -o $W/t/report.json"
        r=$((r + 1))
    done
    rm -f "$f"
}
if want 4; then
for n in $AN_HOST; do analyze host "$n"; done
for n in $AN_GPU; do analyze gpu "$n"; done
for n in $AN_PACKED; do analyze packed "$n"; done
fi

# ---- 5. allocation with a 32-frame stack: gputrace against heaptrack -------------------------------
# bench_stack: EVENTS allocation+free pairs, each from the bottom of the same 32-function call chain.
# gputrace: cuMemAlloc+cuMemFree on the stub driver (no driver cost, no lock), the shim with its
# default stacks (the allocation's stack, 64 frames at most: the whole chain) and, for reference,
# without stacks. heaptrack: malloc+free of the same size from the same chain. Each against its own
# untraced baseline of the same round. The in-process figures come from the program (timed loop
# only); /usr/bin/time adds the whole run (start-up, exit, and heaptrack's interpreter process,
# which runs alongside on the other core).
if want 5; then
echo "== 5. allocation with a ${HT_DEPTH}-frame stack: gputrace vs heaptrack ($HT_REPS rounds)" >&2
HT_OK=0
command -v heaptrack >/dev/null 2>&1 && command -v heaptrack_print >/dev/null 2>&1 && HT_OK=1
echo "sec=env key=heaptrack val=$(heaptrack --version 2>/dev/null | head -1 | tr ' ' '_' || echo none)" >>"$RAW"
# ht_run TAGS CMD: the program's key=value line plus the whole run's wall/CPU/RSS.
ht_run() {
    tags=$1
    shift
    line=$(cmd "/usr/bin/time -f 'run_s=%e user_s=%U sys_s=%S run_rss_kb=%M' -o $W/time.txt $*" | grep '^mode=')
    echo "$tags $line $(cat "$W/time.txt")" >>"$RAW"
    echo "  $line $(cat "$W/time.txt")" >&2
}
STK="$B/bench_stack"
# *_alt: ALT=1, consecutive events alternate between two copies of the chain, so no event repeats
# the previous one's stack (gputrace's unwinder reuses its previous walk where the stack has not
# changed: the plain variants measure that best case, the _alt ones a stack walked anew each time).
HVARS="cuda_none cuda_nostk cuda_stk malloc_none cuda_none_alt cuda_stk_alt malloc_none_alt"
[ "$HT_OK" = 1 ] && HVARS="$HVARS malloc_ht malloc_ht_alt"
r=1
while [ "$r" -le "$HT_REPS" ]; do
    for v in $(rotate $((r % $(count_words $HVARS))) $HVARS); do
        tags="sec=stk var=$v rep=$r"
        if [ "${v%_alt}" = malloc_ht ]; then rm -f "$W/t/ht${v#malloc_ht}.zst"; else rm -f "$W/t/stk-$v.trace"; fi
        alt=0
        case $v in *_alt) alt=1 ;; esac
        case ${v%_alt} in
        cuda_none) ht_run "$tags" "env $NULLDRV $STK cuda $HT_N $HT_DEPTH $HT_WARM $alt" ;;
        cuda_nostk) ht_run "$tags" "env $NULLDRV GPUTRACE_CUPTI=off GPUTRACE_STACKS=none GPUTRACE_OUTPUT=$W/t/stk-$v.trace LD_PRELOAD=$LIB $STK cuda $HT_N $HT_DEPTH $HT_WARM $alt" ;;
        cuda_stk) ht_run "$tags" "env $NULLDRV GPUTRACE_CUPTI=off GPUTRACE_OUTPUT=$W/t/stk-$v.trace LD_PRELOAD=$LIB $STK cuda $HT_N $HT_DEPTH $HT_WARM $alt" ;;
        malloc_none) ht_run "$tags" "env $NULLDRV $STK malloc $HT_N $HT_DEPTH $HT_WARM $alt" ;;
        malloc_ht) ht_run "$tags" "env $NULLDRV heaptrack -o $W/t/ht${v#malloc_ht} $STK malloc $HT_N $HT_DEPTH $HT_WARM $alt" ;;
        esac
    done
    r=$((r + 1))
done
# Python frames: bench/py_stack.py makes PY_N allocations (stub driver) from one line PY_DEPTH
# Python frames deep, through ctypes.PyDLL (the GIL held: frames by the C API) or ctypes.CDLL (the
# GIL released: frames read by struct offsets), the shim with its default stacks, with and without
# GPUTRACE_PYTHON=0; the thread CPU time per allocation of the timed loop.
PY=$(command -v python3 || true)
if [ -n "$PY" ]; then
    echo "sec=env key=python val=$("$PY" -c 'import platform; print(platform.python_version())')" >>"$RAW"
    r=1
    while [ "$r" -le "$HT_REPS" ]; do
        for v in $(rotate $((r % 4)) pydll_off pydll_on cdll_off cdll_on); do
            pyenv=
            [ "${v#*_}" = off ] && pyenv=GPUTRACE_PYTHON=0
            rm -f "$W/t/py.trace"
            line=$(cmd "env $NULLDRV GPUTRACE_CUPTI=off $pyenv GPUTRACE_OUTPUT=$W/t/py.trace LD_PRELOAD=$LIB $PY $ROOT/bench/py_stack.py ${v%_*} $PY_N $PY_DEPTH $PY_WARM" | grep '^mode=')
            echo "sec=pystk var=$v rep=$r $line" >>"$RAW"
            echo "  $v: $line" >&2
        done
        r=$((r + 1))
    done
    rm -f "$W/t/py.trace"
fi
# Sizes and analysis time of the last round's files (the same number of allocations in each).
ev=$((HT_N + HT_WARM))
f=$W/t/stk-cuda_stk.trace
if [ -e "$f" ]; then
    z=$(cmd "zstd -q -3 -c $f | wc -c")
    echo "sec=stk_size kind=gputrace events=$ev bytes=$(stat -c %s "$f") zst_bytes=$z" >>"$RAW"
fi
if [ -e "$W/t/ht.zst" ]; then
    raw=$(cmd "zstd -q -dc $W/t/ht.zst | wc -c")
    echo "sec=stk_size kind=heaptrack events=$ev bytes=$raw zst_bytes=$(stat -c %s "$W/t/ht.zst")" >>"$RAW"
fi
r=1
while [ "$r" -le "$AREPS" ]; do
    [ ! -e "$f" ] || time_rss "sec=stk_an kind=gputrace rep=$r" "$REPORT $f -o $W/t/stk.txt"
    [ ! -e "$W/t/ht.zst" ] || time_rss "sec=stk_an kind=heaptrack rep=$r" "heaptrack_print $W/t/ht.zst > $W/t/ht.txt"
    r=$((r + 1))
done
rm -f "$W/t/stk-"*.trace "$W/t/ht.zst" "$W/t/ht_alt.zst" "$W/t/stk.txt" "$W/t/ht.txt"
fi

# ---- 6, 7. memory and timeline analyses: scaling (issues 5 and 6) ---------------------------------
# The same gputrace-report on gen_trace --mem (allocations and frees only, bounded live set) and
# gen_trace --timeline (GPU kernels with their launches), text and --json, 1 M to 10 M events.
# With BENCH_BASE=REV the report as of REV runs on the same files, interleaved round by round.
REPORTS="cur"
if [ -n "${BENCH_BASE:-}" ]; then
    BASE_REPORT=$(cmd "sh $ROOT/bench/build_rev.sh $BENCH_BASE $B/base")
    echo "sec=env key=base val=$(git rev-parse --short "$BENCH_BASE")" >>"$RAW"
    echo "sec=env key=base_subject val=$(git log -1 --format=%s "$BENCH_BASE" | cut -c1-80 | tr ' ' '_')" >>"$RAW"
    REPORTS="cur base"
fi
echo "sec=env key=head val=$(git rev-parse --short HEAD)$(git diff --quiet HEAD -- analyzer common include 2>/dev/null || echo +uncommitted)" >>"$RAW"
report_bin() { if [ "$1" = base ]; then echo "$BASE_REPORT"; else echo "$REPORT"; fi; }

# scale SEC N REPS FORMATS GEN_ARGS...: one trace, then each report x format per round.
scale() {
    sec=$1 n=$2 reps=$3 formats=$4
    shift 4
    f=$W/t/$sec-$n.trace
    need=$((n * 170))
    avail=$(($(df -Pk "$W" | awk 'NR==2 {print $4}') * 1024))
    if [ "$avail" -lt $((need + (1 << 30))) ]; then
        echo "sec=$sec n=$n skipped=space" >>"$RAW"
        return 0
    fi
    gen=$(cmd "$B/gen_trace $* $n $f")
    echo "sec=${sec}_gen n=$n $gen" >>"$RAW"
    cmd "cat $f > /dev/null" # into the page cache
    r=1
    while [ "$r" -le "$reps" ]; do
        for rb in $(rotate $((r % $(count_words $REPORTS))) $REPORTS); do
            for fm in $formats; do
                flag=
                [ "$fm" = json ] && flag=--json
                time_rss "sec=$sec n=$n rep=$r bin=$rb fmt=$fm" "$(report_bin "$rb") $flag $f -o $W/t/out.$fm"
            done
        done
        r=$((r + 1))
    done
    rm -f "$f" "$W/t/out.text" "$W/t/out.json"
}
if want 6; then
echo "== 6. memory analysis scaling" >&2
for n in $MEM_SIZES; do
    reps=$MEM_REPS
    [ "$n" -ge 5000000 ] && [ "$reps" -gt 2 ] && reps=2
    scale mem "$n" "$reps" "text json" --mem --pool 25
done
# Live state, not trace size: the same 1 M events with 16x the live allocations.
[ "$MEM_LIVE_CHECK" = 0 ] || scale memlive 1000000 "$MEM_REPS" "text json" --mem --pool 25 --live 16384
fi
if want 7; then
echo "== 7. timeline analysis scaling" >&2
for n in $TL_SIZES; do
    reps=$TL_REPS
    [ "$n" -ge 10000000 ] && reps=1
    scale tl "$n" "$reps" "json" --timeline
done
fi

echo "sec=env key=load_end val=$(cut -d' ' -f1-3 /proc/loadavg | tr ' ' '/')" >>"$RAW"
echo "sec=env key=elapsed_s val=$(($(date +%s) - T0))" >>"$RAW"
# The raw lines behind bench/RESULTS.md are kept in bench/raw/, so a partial re-run
# (BENCH_SECTIONS) replaces its sections there and RESULTS.md is made from the merged set.
RAWKEEP=$ROOT/bench/raw
PREV=
[ -z "${BENCH_SECTIONS:-}" ] || [ ! -e "$RAWKEEP/raw.txt" ] || PREV=$RAWKEEP
cmd "$PYTHON $ROOT/bench/report.py --save $W/merged $PREV $W > $RESULTS.tmp" && mv "$RESULTS.tmp" "$RESULTS"
if [ "$RESULTS" = "$ROOT/bench/RESULTS.md" ]; then
    rm -rf "$RAWKEEP"
    cp -r "$W/merged" "$RAWKEEP"
fi
echo "bench: wrote $RESULTS ($(($(date +%s) - T0)) s)" >&2
[ -n "${BENCH_KEEP:-}" ] || rm -rf "$W"
