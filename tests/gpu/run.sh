#!/bin/bash
# gputrace GPU kit: proves on a real NVIDIA GPU what the simulated driver proves in `make test`.
# One script, under 10 minutes, nothing from the network. Usage (repo root):
#     bash tests/gpu/run.sh            # writes $OUT/RESULTS.md and $OUT/reports.tar.gz
#     GPUKIT_SAVE=1 bash tests/gpu/run.sh   # the same, and copies RESULTS.md into tests/gpu/
# OUT defaults to build/gpu-kit (ignored by git): the checkout is left as it was unless asked.
# GPUKIT_STEPS=N training steps (200); GPUKIT_COMMIT=REV names the tree where .git is absent or stale.
# GPUKIT_OVERHEAD_MAX: the largest traced/untraced ratio of the median PyTorch step that passes
# (1.01: under 1 % of a step). GPUKIT_MAKE: the build command (make -j$(nproc) all);
# GPUKIT_BIN: where gputrace, gputrace-report and libgputrace.so are (build/). GPUKIT_ONLY: the
# sections to run, among driver static train frag tiers idle cupy jax (all when unset).
# PyTorch sections: train (the training loop under three allocator settings, kernels against
# torch.profiler, the overhead), frag (issue 17: a fragmentation OOM raised by PyTorch, the
# report's allocator figures equal to PyTorch's own, tests/torch/bridge_check.py) and tiers
# (issue 21: memory by category of a transformer's training steps, fp32 and bf16 autocast,
# exactly PyTorch's objects, tests/torch/tiers_check.py). frag and tiers also run on the
# simulated stack (tests/cases/gpu_kit.sh), tiers there with elementwise layers (no matmul).
# idle (issue 20): a DataLoader-bound loop (tests/torch/loader.py dataloader) whose idle time must
# be data loading at the dataset's line, and the device's state read from NVML in the same run
# (clocks, temperature, power against its limit, the reasons of slow intervals); also on the
# simulated stack (its NVML). GPUKIT_SAMPLE_HZ: the host sample rate there (200).
# Each check is PASS, FAIL or SKIP (a library that is not installed: never a PASS).
# Exits 77 (and says so) where there is no usable GPU; 1 when a check failed; 0 when none did.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
PY=${PYTHON:-python3}
OVERHEAD_MAX=${GPUKIT_OVERHEAD_MAX:-1.01}
declare -a ROWS
pass=0 fail=0 skipped=0
STEPS=${GPUKIT_STEPS:-200}

say() { echo "[gpu-kit] $*"; }
row() { # status check detail
    ROWS+=("| $1 | $2 | $3 |")
    case $1 in
        PASS) pass=$((pass + 1)) ;;
        SKIP) skipped=$((skipped + 1)) ;;
        *) fail=$((fail + 1)) ;;
    esac
    say "$1  $2: $3"
}
# The overhead verdict: PASS when traced / untraced median step <= OVERHEAD_MAX, else FAIL
# (FAIL too when either time is missing or not a positive number).
judge_overhead() { # untraced_ms traced_ms
    "$PY" -c 'import sys
try:
    b, t, m = float(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3])
except ValueError:
    print("FAIL"); sys.exit()
print("PASS" if b > 0 and t > 0 and t / b <= m else "FAIL")' "${1:-}" "${2:-}" "$OVERHEAD_MAX"
}
# A count or byte figure of a library against gputrace's: PASS when gputrace saw at least what
# the library says it did through the driver (others in the process may add to it).
judge_atleast() { # gputrace library
    case "${1:-x}" in *[!0-9]*) echo FAIL; return ;; esac
    case "${2:-x}" in *[!0-9]*) echo FAIL; return ;; esac
    [ "$1" -ge "$2" ] && [ "$2" -gt 0 ] && echo PASS || echo FAIL
}
# GPUKIT_ONLY="driver static train frag tiers idle cupy jax": the sections to run (all when unset)
section() { [ -z "${GPUKIT_ONLY:-}" ] || case " $GPUKIT_ONLY " in *" $1 "*) ;; *) return 1 ;; esac; }
[ "${GPUKIT_LIB_ONLY:-0}" = 1 ] && return 0 2>/dev/null # sourced by tests/cases/gpu_kit.sh

OUT=${OUT:-$ROOT/build/gpu-kit}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/gputrace-gpukit.XXXXXX")
mkdir -p "$OUT" "$WORK/reports"
RESULTS=$OUT/RESULTS.md
# jq-free JSON: jv FILE EXPR (d = the object)
jv() { "$PY" -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$1" 2>/dev/null; }

# ---- 0. is there a GPU? -------------------------------------------------------------------------
if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L 2>/dev/null | grep -q "GPU "; then
    say "no NVIDIA GPU on this machine (nvidia-smi missing or lists no GPU): nothing to prove here."
    say "run this script on a machine with a GPU; \`make test\` covers the simulated driver."
    exit 77
fi
if ! "$PY" -c "import ctypes,sys; sys.exit(ctypes.CDLL('libcuda.so.1').cuInit(0))" 2>/dev/null; then
    say "libcuda.so.1 did not initialize (cuInit failed): no usable GPU"
    exit 77
fi
GPU=$(nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | head -1)
say "GPU: $GPU"

# ---- 1. build -----------------------------------------------------------------------------------
BIN=${GPUKIT_BIN:-$ROOT/build}
MAKE_CMD=${GPUKIT_MAKE:-make -j$(nproc) all}
if $MAKE_CMD >"$WORK/build.log" 2>&1; then row PASS build "$MAKE_CMD"
elif [ -x "$BIN/gputrace" ] && [ -f "$BIN/libgputrace.so" ]; then
    row FAIL build "$MAKE_CMD failed ($(tail -1 "$WORK/build.log")); the other checks use the build found in $BIN"
else row FAIL build "$(tail -3 "$WORK/build.log" | tr '\n' ' ')"; fi
GT=$BIN/gputrace REPORT=$BIN/gputrace-report
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}

trace_run() { # name cmd... : traces cmd into $WORK/name.trace, report json + text. Returns the
    # program's exit status, else 125 when a gputrace-report run failed (said in name.err).
    local name=$1; shift
    rm -f "$WORK/$name.trace"
    timeout 300 "$GT" -o "$WORK/$name.trace" -- "$@" >"$WORK/$name.out" 2>"$WORK/$name.err"
    local rc=$? r1 r2
    "$REPORT" --json "$WORK/$name.trace" >"$WORK/reports/$name.json" 2>>"$WORK/$name.err"
    r1=$?
    "$REPORT" "$WORK/$name.trace" >"$WORK/reports/$name.txt" 2>>"$WORK/$name.err"
    r2=$?
    [ $r1 = 0 ] && [ $r2 = 0 ] || echo "gputrace-report failed: exit $r1 (--json), $r2 (text)" >>"$WORK/$name.err"
    cp "$WORK/$name.out" "$WORK/$name.err" "$WORK/reports/" 2>/dev/null
    [ $rc = 0 ] || return $rc
    [ $r1 = 0 ] && [ $r2 = 0 ] || return 125
}

# ---- 2. driver-API program and a static-cudart CUDA C++ program ------------------------------------
if section driver; then
    cc -O2 -I/usr/local/cuda/include -o "$WORK/driver_prog" tests/gpu/driver_prog.c -lcuda 2>"$WORK/cc.log" \
        || cc -O2 -I/usr/local/cuda/include -o "$WORK/driver_prog" tests/gpu/driver_prog.c -L/usr/local/cuda/lib64/stubs -lcuda
    if trace_run drv "$WORK/driver_prog"; then
        j=$WORK/reports/drv.json
        got="allocs=$(jv "$j" "d['memory']['alloc_count']") frees=$(jv "$j" "d['memory']['free_count']") launches=$(jv "$j" "d['timeline']['launch_count']") kernels=$(jv "$j" "d['timeline']['kernel_count']") peak=$(jv "$j" "d['memory']['peak_bytes']") leaked=$(jv "$j" "d['memory']['leaked_bytes']")"
        want=$(sed -n 's/^expect //p' "$WORK/drv.out")
        if [ "$got" = "$want" ]; then row PASS "driver-API program" "$got"
        else row FAIL "driver-API program" "report $got, want $want"; fi
        CUPTI=$(jv "$j" "d['trace'].get('gpu_timeline')")
        say "GPU timeline: $CUPTI"
    else row FAIL "driver-API program" "exit $? $(tail -2 "$WORK/drv.err" | tr '\n' ' ')"; fi
    # the shim hands CUPTI zeroed buffers and zeroes only the bytes CUPTI said it wrote: the real
    # CUPTI must write nothing past them (GPUTRACE_DEBUG scans every completed buffer's rest)
    GPUTRACE_DEBUG=1 timeout 120 "$GT" -o "$WORK/drvdbg.trace" -- "$WORK/driver_prog" >/dev/null 2>"$WORK/drvdbg.err"
    z=$(sed -n 's/^gputrace: cupti: \([0-9]*\) buffers handed out, [0-9]* of them reused; handed zeroed: \([a-z]*\), \([0-9]*\) with a byte set past their valid size$/\1 \2 \3/p' "$WORK/drvdbg.err")
    case "$z" in
    "" | "0 "*) row FAIL "CUPTI buffers handed zeroed" "no buffer handed, or no line: $(grep 'cupti' "$WORK/drvdbg.err" | head -2 | tr '\n' ' ')" ;;
    *" yes 0") row PASS "CUPTI buffers handed zeroed" "${z%% *} buffers; none with a byte set past its valid size" ;;
    *) row FAIL "CUPTI buffers handed zeroed" "buffers, zeroed, with bytes past valid: $z" ;;
    esac
fi

if section static; then
    if ! "$NVCC" -o "$WORK/static_prog" tests/gpu/static_prog.cu >"$WORK/nvcc.log" 2>&1; then
        row FAIL "static-cudart program" "nvcc failed: $(tail -2 "$WORK/nvcc.log" | tr '\n' ' ')"
    elif trace_run static "$WORK/static_prog"; then
        j=$WORK/reports/static.json
        k=$(jv "$j" "d['timeline']['kernel_count']"); l=$(jv "$j" "d['timeline']['launch_count']")
        a=$(jv "$j" "d['memory']['alloc_count']"); f=$(jv "$j" "d['memory']['free_count']")
        if [ "$l" -ge 50 ] && [ "$k" = 50 ] && [ "$a" -ge 10 ] && [ "$f" -ge 5 ]; then
            row PASS "static-cudart program" "allocs=$a frees=$f launches=$l kernels=$k (cudart reached the driver through the shim)"
        else row FAIL "static-cudart program" "allocs=$a frees=$f launches=$l kernels=$k; want >=10, >=5, >=50, 50"; fi
    else row FAIL "static-cudart program" "exit $? $(tail -2 "$WORK/static.err" | tr '\n' ' ')"; fi
fi

# ---- 3-4. PyTorch training loop: native allocator, expandable segments, cudaMallocAsync --------------
if "$PY" -c "import torch; assert torch.cuda.is_available()" 2>/dev/null; then
    if section train; then
        for conf in native expandable async; do
            case $conf in
                native) export PYTORCH_CUDA_ALLOC_CONF= ;;
                expandable) export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True ;;
                async) export PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync ;;
            esac
            if trace_run "torch-$conf" "$PY" tests/gpu/workloads.py train "$STEPS"; then
                j=$WORK/reports/torch-$conf.json
                facts=$(tail -1 "$WORK/torch-$conf.out")
                echo "$facts" >"$WORK/reports/torch-$conf.facts.json"
                seg=$(echo "$facts" | "$PY" -c "import json,sys; print(json.load(sys.stdin)['segment_allocs'])")
                by=$(jv "$j" "{a['api']: a['count'] for a in d['memory']['by_api']}")
                case $conf in
                    native) NATIVE_N=$(jv "$j" "sum(a['count'] for a in d['memory']['by_api'] if a['api']=='cuMemAlloc_v2')")
                            NATIVE_SEG=$seg NATIVE_BY=$by ;; # judged below, against the expandable run
                    expandable) n=$(jv "$j" "sum(a['count'] for a in d['memory']['by_api'] if a['api']=='cuMemCreate')")
                            # torch's own segments go through cuMemCreate here: every cuMemAlloc_v2 is
                            # another library's (the CUDA runtime's, cuBLAS's), the same in every run
                            OTHER=$(jv "$j" "sum(a['count'] for a in d['memory']['by_api'] if a['api']=='cuMemAlloc_v2')")
                            r=$(jv "$j" "sum(a['count'] for a in d['memory']['by_api'] if a['api']=='cuMemAddressReserve')")
                            [ "${n:-0}" -gt 0 ] && [ "${r:-0}" -gt 0 ] && row PASS "torch expandable segments" "cuMemAddressReserve $r, cuMemCreate $n; torch segments $seg ($by)" \
                                || row FAIL "torch expandable segments" "no VMM calls seen ($by)" ;;
                    async)  n=$(jv "$j" "sum(a['count'] for a in d['memory']['by_api'] if a['api'].startswith('cuMemAllocAsync') or a['api'].startswith('cuMemAllocFromPool'))")
                            [ "${n:-0}" -gt 0 ] && row PASS "torch cudaMallocAsync" "stream-ordered allocations $n ($by)" \
                                || row FAIL "torch cudaMallocAsync" "no stream-ordered allocations seen ($by)" ;;
                esac
            else row FAIL "torch $conf" "exit $? $(tail -3 "$WORK/torch-$conf.err" | tr '\n' ' ')"; fi
        done
        unset PYTORCH_CUDA_ALLOC_CONF
        # Native allocator: every segment torch made is one cuMemAlloc_v2, beside the other libraries'.
        if [ -n "${NATIVE_N:-}" ] && [ -n "${OTHER:-}" ] && [ "$NATIVE_N" = $((NATIVE_SEG + OTHER)) ]; then
            row PASS "torch native allocator" "cuMemAlloc_v2 $NATIVE_N = torch segment.all.allocated $NATIVE_SEG + $OTHER outside torch's allocator (the expandable run's cuMemAlloc_v2)"
        else row FAIL "torch native allocator" "cuMemAlloc_v2 ${NATIVE_N:-?} vs torch segments ${NATIVE_SEG:-?} + ${OTHER:-?} outside torch (${NATIVE_BY:-})"; fi
        # The peak breakdown names the Python lines that allocated (frames read from the interpreter).
        py=$(jv "$WORK/reports/torch-native.json" "', '.join('%s:%s %d MiB' % (s['file'].rsplit('/', 1)[-1], s['line'], s['bytes'] >> 20) for s in d['memory']['peak_breakdown']['by_site'] if s.get('symbolized_by') == 'python' and (s.get('file') or '').endswith('workloads.py'))")
        if [ -n "$py" ]; then row PASS "Python call sites at the peak" "$py"
        else row FAIL "Python call sites at the peak" "no workloads.py line in the peak breakdown"; fi
        # Kernel counts against torch.profiler (a separate run of the same loop, model built inside).
        prof=$(timeout 300 "$PY" tests/gpu/workloads.py profile "$STEPS" 2>"$WORK/profile.err" | tail -1)
        pk=$(echo "$prof" | "$PY" -c "import json,sys; print(json.load(sys.stdin)['profiler_kernels'])" 2>/dev/null)
        # torch.profiler's CUDA events are kernels, copies and memsets: gputrace's three counts together
        gk=$(jv "$WORK/reports/torch-native.json" "d['timeline']['kernel_count'] + d['timeline']['memsets']['count'] + sum(c['count'] for c in d['timeline']['copies'])")
        gparts=$(jv "$WORK/reports/torch-native.json" "'%d kernels, %d memsets, %d copies' % (d['timeline']['kernel_count'], d['timeline']['memsets']['count'], sum(c['count'] for c in d['timeline']['copies']))")
        if [ -n "$pk" ] && [ -n "$gk" ] && [ "$gk" -ge "$pk" ] && [ $((gk - pk)) -le $((pk / 100 + 10)) ]; then
            row PASS "GPU activities vs torch.profiler" "gputrace $gk ($gparts; whole process), torch.profiler $pk CUDA events (profiled loop)"
        else row FAIL "GPU activities vs torch.profiler" "gputrace $gk ($gparts), torch.profiler $pk CUDA events"; fi
    fi
    # ---- 5. PyTorch's OOM (issue 17): a fragmentation OOM that PyTorch raises, its allocator-level
    # figures (memory.allocators[], the allocator OOM) equal to PyTorch's own, compared by
    # tests/torch/bridge_check.py as in make test: requested, allocated, reserved and the device's
    # free bytes (its OOM observer and memory_stats() there), the OOM message's four sizes, the
    # largest free block (_snapshot()), max_memory_allocated/reserved, the verdict fragmentation
    # with 2 driver failures merged, the segments cached at exit. workloads.py holds all but 1 GiB
    # outside PyTorch first, so the OOM is the same on any card (and on the simulated 1 GiB GPU).
    if section frag; then
        if trace_run frag "$PY" tests/gpu/workloads.py frag "$WORK/reports/frag.pt.json"; then
            fr=$(tail -1 "$WORK/frag.out")
            "$PY" tests/torch/bridge_check.py gpu_frag "$WORK/reports/frag.json" "$WORK/reports/frag.pt.json" \
                >"$WORK/reports/frag.check" 2>&1
            st=$? n=$(grep -c '^ok ' "$WORK/reports/frag.check")
            figs=$(jv "$WORK/reports/frag.pt.json" "'requested %d, allocated %d, reserved %d, device free %d, largest free %d, max allocated %d, max reserved %d' % (d['observer_calls'][0]['requested'], d['observer_calls'][0]['allocated'], d['observer_calls'][0]['reserved'], d['observer_calls'][0]['device_free'], d['ooms'][0]['largest_free'], d['max_memory_allocated'], d['max_memory_reserved'])")
            verdict=$(jv "$WORK/reports/frag.json" "[o['verdict'] for o in d['memory']['ooms'] if o['level'] == 'allocator']")
            if [ $st = 0 ] && echo "$fr" | grep -q '"oom": true' && [ -n "$figs" ]; then
                row PASS "PyTorch OOM: allocator figures = PyTorch's" "$n figures equal (bridge_check.py gpu_frag): $figs; verdict $verdict"
            else
                row FAIL "PyTorch OOM: allocator figures = PyTorch's" "workload $fr; $(grep -v '^ok ' "$WORK/reports/frag.check" | head -3 | tr -s ' ' | tr '\n' ';')"
            fi
        else row FAIL "PyTorch OOM: allocator figures = PyTorch's" "exit $? $(tail -3 "$WORK/frag.err" | tr '\n' ' ')"; fi
    fi
    # ---- 6. memory by category (issue 21): a transformer's training steps (elementwise layers on the
    # simulated GPU, which has no matmul), fp32 and under bf16 autocast, checked by
    # tests/torch/tiers_check.py as in make test: weights = the parameters' storages, gradients and
    # optimizer_state = those of PyTorch's objects at the fullest snapshot and after every step,
    # AdamW's state 2.0x the weights, gradients <= weights, activations > 0, categories summing to
    # reserved.
    if section tiers; then
        for c in adamw autocast; do
            if trace_run "tiers-$c" "$PY" tests/gpu/workloads.py tiers $c "$WORK/reports/tiers-$c.pt.json"; then
                "$PY" tests/torch/tiers_check.py $c "$WORK/reports/tiers-$c.json" "$WORK/reports/tiers-$c.pt.json" \
                    >"$WORK/reports/tiers-$c.check" 2>&1
                st=$? n=$(grep -c ' ok$' "$WORK/reports/tiers-$c.check")
                model=$(jv "$WORK/reports/tiers-$c.pt.json" "d['model']")
                figs=$(jv "$WORK/reports/tiers-$c.json" "(lambda a: (lambda c, o: 'weights %d, gradients %d, optimizer_state %d (%.1fx weights), activations %d at the peak; after the last step gradients %d <= weights %d' % (c['weights']['requested_bytes'], c['gradients']['requested_bytes'], c['optimizer_state']['requested_bytes'], o['state_to_weights'], c['activations']['bytes'], o['gradients_bytes'], o['weights_bytes']))({x['category']: x for x in a['peak_breakdown']['by_category']}, a['optimizers'][0]))(d['memory']['allocators'][0])")
                if [ $st = 0 ] && [ "${n:-0}" -gt 0 ]; then
                    row PASS "memory by category ($c, $model)" "$n figures equal (tiers_check.py): $figs"
                else
                    row FAIL "memory by category ($c, ${model:-?})" "$(grep -v ' ok$' "$WORK/reports/tiers-$c.check" | head -3 | tr -s ' ' | tr '\n' ';')"
                fi
            else row FAIL "memory by category ($c)" "exit $? $(tail -3 "$WORK/tiers-$c.err" | tr '\n' ' ')"; fi
        done
    fi
    # ---- 6b. why the GPU waits (issue 20): a loop bound by a torch.utils.data.DataLoader whose
    # dataset sleeps 5 ms an item (num_workers=0: the main thread reads), host samples at 200 Hz.
    # PASS when data loading holds >= 60% of the idle time by class and the dataset's line
    # (Items.__getitem__) is the first idle host site. The NVML row reads the same run's device
    # state: NVML available and matched by UUID, >= 2 samples, 0 < min SM clock <= max SM clock,
    # temperature 10-110 C, power limit 50-2,000 W, 0 < power <= 2x the limit, and every slow
    # interval with a reason.
    if section idle; then
        if GPUTRACE_SAMPLE_HZ=${GPUKIT_SAMPLE_HZ:-200} trace_run idle "$PY" tests/torch/loader.py dataloader 40; then
            j=$WORK/reports/idle.json
            v=$(jv "$j" "(lambda t: (lambda c, s, site: '%s|%.3f|%s' % ('ok' if sum(c.values()) and c.get('data_loading', 0) >= 0.6 * sum(c.values()) and site.startswith('Items.__getitem__ (') and s[0]['class'] == 'data_loading' else 'no', c.get('data_loading', 0) / max(1, sum(c.values())), '%s, %s' % (site.split(' (')[0] + ' (' + site.split('/')[-1], s[0]['class']) if s else 'none'))(t['idle_by_class'] or {}, t['idle_by_host_site'] or [], ((t['idle_by_host_site'] or [{}])[0].get('site') or '')))(d['timeline']['devices'][0])")
            IFS='|' read -r iok ishare isite <<EOF_IDLE
$v
EOF_IDLE
            if [ "${iok:-}" = ok ]; then row PASS "idle time: data loading" "data_loading $ishare of the idle time by class; first idle host site $isite"
            else row FAIL "idle time: data loading" "data_loading ${ishare:-?} of the idle time; first idle host site ${isite:-?}"; fi
            nv=$(jv "$j" "(lambda ds: (lambda x: '%s %s' % ('ok' if ds['nvml'] == 'available' and x and x['matched'] and x['samples'] >= 2 and 0 < (x['min_sm_mhz'] or 0) <= x['max_sm_mhz'] and 10 <= (x['max_temp_c'] or 0) <= 110 and 50000 <= (x['power_limit_mw'] or 0) <= 2000000 and 0 < (x['max_power_mw'] or 0) <= 2 * x['power_limit_mw'] and (x['slow_ns'] == 0 or x['reasons']) else 'no', ('nvml %s; %s samples, SM %s-%s MHz (max %s), memory max %s MHz, up to %s C, up to %.1f W of %.1f W, slow %.1f%% of %.3f s, reasons %s' % (ds['nvml'], x['samples'], x['min_sm_mhz'], x['max_sm_mhz'], x['max_sm_mhz'], x['max_mem_mhz'], x['max_temp_c'], (x['max_power_mw'] or 0) / 1e3, (x['power_limit_mw'] or 0) / 1e3, 100.0 * x['slow_ns'] / max(1, x['covered_ns']), x['covered_ns'] / 1e9, ','.join(r['reason'] for r in x['reasons']) or 'none')) if x else 'nvml %s (%s): no device' % (ds['nvml'], ds['reason'])))(([e for e in ds['devices'] if e['device'] == 0] or [None])[0]))(d['device_state'])")
            case "$nv" in
                "ok "*) row PASS "device state (NVML)" "${nv#ok }" ;;
                *) row FAIL "device state (NVML)" "${nv#no }" ;;
            esac
        else
            row FAIL "idle time: data loading" "exit $? $(tail -3 "$WORK/idle.err" | tr '\n' ' ')"
            row FAIL "device state (NVML)" "the traced run failed"
        fi
    fi
    if section train; then
        # ---- 7. overhead --------------------------------------------------------------------------
        base=$(timeout 300 "$PY" tests/gpu/workloads.py train "$STEPS" 2>/dev/null | tail -1)
        b=$(echo "$base" | "$PY" -c "import json,sys; print(json.load(sys.stdin)['step_ms_median'])" 2>/dev/null)
        t=$("$PY" -c "import json,sys; print(json.load(open(sys.argv[1]))['step_ms_median'])" "$WORK/reports/torch-native.facts.json" 2>/dev/null)
        p=$(echo "$prof" | "$PY" -c "import json,sys; print(json.load(sys.stdin)['step_ms_median'])" 2>/dev/null)
        # launches per step: the traced run's launches over its steps (set-up launches included: the
        # per-launch figure is a slight underestimate)
        lps=$(jv "$WORK/reports/torch-native.json" "d['timeline']['launch_count'] / $STEPS")
        if [ -n "$b" ] && [ -n "$t" ]; then
            row "$(judge_overhead "$b" "$t")" "overhead (median step, at most ${OVERHEAD_MAX}x)" "$("$PY" -c "b,t,p,l=$b,$t,${p:-0},${lps:-0}; print(f'no shim {b:.3f} ms, gputrace {t:.3f} ms ({t/b:.3f}x), torch.profiler {p:.3f} ms ({p/b:.3f}x); {l:.0f} launches per step: {(t-b)*1e6/l if l else 0:.0f} ns added per launch')")"
        else row FAIL "overhead" "could not time the loop (untraced '$b' ms, traced '$t' ms)"; fi
    fi
elif "$PY" -c "import torch" 2>/dev/null; then
    row FAIL "PyTorch" "torch is installed but says CUDA is not available"
else
    row SKIP "PyTorch" "torch not installed for $PY"
fi

# ---- 6. CuPy and JAX ------------------------------------------------------------------------------
# Each compared with the library's own figures (tests/gpu/workloads.py prints them):
#   CuPy: its memory hook's device allocations (count, bytes) <= gputrace's cuMemAlloc_v2;
#   JAX: XLA's peak bytes in use (carved from driver memory) <= gputrace's peak, and its kernels
#   ran (gputrace saw at least one).
for lib in cupy jax; do
    section $lib || continue
    if ! "$PY" -c "import $lib" 2>/dev/null; then row SKIP "$lib" "$lib not installed for $PY"; continue; fi
    if trace_run "$lib" "$PY" tests/gpu/workloads.py "$lib"; then
        j=$WORK/reports/$lib.json
        own=$(tail -1 "$WORK/$lib.out")
        fig() { echo "$own" | "$PY" -c "import json,sys; print(json.load(sys.stdin)['$1'])" 2>/dev/null; }
        seen=$(jv "$j" "'%d allocs, %d launches, %d kernels' % (d['memory']['alloc_count'], d['timeline']['launch_count'], d['timeline']['kernel_count'])")
        if [ $lib = cupy ]; then
            gn=$(jv "$j" "sum(a['count'] for a in d['memory']['by_api'] if a['api']=='cuMemAlloc_v2')")
            gb=$(jv "$j" "sum(a['bytes'] for a in d['memory']['by_api'] if a['api']=='cuMemAlloc_v2')")
            cn=$(fig device_allocs) cb=$(fig device_alloc_bytes)
            st=$(judge_atleast "$gn" "$cn")
            [ "$st" = PASS ] && st=$(judge_atleast "$gb" "$cb")
            row "$st" "cupy" "gputrace cuMemAlloc_v2 $gn calls, $gb B; CuPy's memory hook: $cn device allocations, $cb B ($seen)"
        else
            gp=$(jv "$j" "d['memory']['peak_bytes']") jp=$(fig peak_bytes_in_use)
            gk=$(jv "$j" "d['timeline']['kernel_count']")
            st=$(judge_atleast "$gp" "$jp")
            [ "$st" = PASS ] && st=$(judge_atleast "$gk" 1)
            row "$st" "jax" "gputrace peak $gp B, $gk kernels; XLA peak_bytes_in_use $jp B ($seen)"
        fi
    else row FAIL "$lib traced" "exit $? $(tail -2 "$WORK/$lib.err" | tr '\n' ' ')"; fi
done

# ---- 8. results -----------------------------------------------------------------------------------
{
    echo "# GPU kit results"
    echo
    echo "- date: $(date -u +%Y-%m-%dT%H:%MZ)"
    echo "- GPU, memory, driver: $GPU"
    echo "- GPU timeline: ${CUPTI:-unknown}"
    echo "- commit: ${GPUKIT_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null)}"
    echo "- command: \`bash tests/gpu/run.sh\` (GPUKIT_STEPS=$STEPS)"
    echo
    echo "| result | check | figures |"
    echo "|---|---|---|"
    printf '%s\n' "${ROWS[@]}"
    echo
    echo "$pass passed, $fail failed, $skipped skipped"
} >"$RESULTS"
tar -czf "$OUT/reports.tar.gz" -C "$WORK" reports
if [ "${GPUKIT_SAVE:-0}" = 1 ]; then
    cp "$RESULTS" "$ROOT/tests/gpu/RESULTS.md"
    say "results in $RESULTS, copied into tests/gpu/RESULTS.md; reports in $OUT/reports.tar.gz"
else
    say "results in $RESULTS (GPUKIT_SAVE=1 copies them into tests/gpu/RESULTS.md); reports in $OUT/reports.tar.gz"
fi
rm -rf "$WORK"
echo "$pass passed, $fail failed, $skipped skipped"
[ "$fail" -eq 0 ]
