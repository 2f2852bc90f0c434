# The GPU kit (tests/gpu/run.sh, issue 22). On a machine without a GPU it says so and exits 77.
# Its checks can fail: the overhead verdict (FAIL above GPUKIT_OVERHEAD_MAX, 1 % of a PyTorch
# step) and the library comparisons are checked here on given figures; then the whole kit runs on
# the simulated stack behind a stand-in nvidia-smi: a failed build is FAIL (not PASS), a library
# that is not installed is SKIP (not PASS), a failed gputrace-report fails its check, the results
# land in $OUT only and the checkout is left as it was. Then its PyTorch sections of issues 17,
# 21 and 20 (frag, tiers, idle) run with the real PyTorch on a 1 GiB simulated GPU and must pass,
# and their checks must fail on figures one block off (idle: without host or NVML samples).
. "$SRC/tests/lib.sh"
kit="$SRC/tests/gpu/run.sh"
command -v bash >/dev/null || skip "no bash"
# ---- the verdicts, on given figures ----
v=$(GPUKIT_LIB_ONLY=1 bash -c '. "$1"
judge_overhead 10 10.05; judge_overhead 10 10.2; judge_overhead "" 10; judge_overhead 10 x
GPUKIT_OVERHEAD_MAX=1.5; OVERHEAD_MAX=1.5; judge_overhead 10 14
judge_atleast 5 5; judge_atleast 6 5; judge_atleast 4 5; judge_atleast "" 3; judge_atleast 0 0' _ "$kit" | tr '\n' ' ')
expect_eq "verdicts" "$v" "PASS FAIL FAIL FAIL PASS PASS PASS FAIL FAIL FAIL "
# ---- the real thing, if there is a GPU ----
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L 2>/dev/null | grep -q "GPU "; then
    before=$(cd "$SRC" && git status --porcelain 2>/dev/null)
    out=$(set +e; OUT="$PWD/out" timeout 900 bash "$kit" 2>&1; echo "rc=$?")
    echo "$out" | tail -5
    expect_eq "the checkout after the kit" "$(cd "$SRC" && git status --porcelain 2>/dev/null)" "$before"
    case "$out" in *"rc=0") echo "GPU kit passed on this machine" ;; *) fail "GPU kit failed" ;; esac
    exit 0
fi
out=$(set +e; OUT="$PWD/out0" timeout 900 bash "$kit" 2>&1; echo "rc=$?")
case "$out" in
    *"rc=77") echo "$out" | grep -q "no NVIDIA GPU\|no usable GPU" || fail "exit 77 without saying why" ;;
    *) fail "without a GPU the kit did not skip: $out" ;;
esac
# ---- the kit on the simulated stack: a stand-in nvidia-smi, the simulated driver and CUPTI ----
if [ -n "$tsan_rt" ]; then # its runtime, first in LD_PRELOAD, crashes the kit's uninstrumented sh
    echo "verdicts checked; the kit on the simulated stack is left out under ThreadSanitizer"
    exit 0
fi
mkdir fakebin
cat > fakebin/nvidia-smi <<'SH'
#!/bin/sh
case "$*" in
    -L) echo "GPU 0: gputrace simulated GPU (UUID: GPU-00000000-0000-0000-0000-000000000000)" ;;
    *) echo "gputrace simulated GPU, 8192 MiB, simulated" ;;
esac
SH
chmod +x fakebin/nvidia-smi
# A build command that fails, the binaries of this test run, a Python without torch, CuPy, JAX.
nolibs=$(for p in python3 /usr/bin/python3 "$PYTHON"; do
    "$p" -c 'import importlib.util as u, sys; sys.exit(any(u.find_spec(m) for m in ("torch", "cupy", "jax")))' 2>/dev/null && { command -v "$p"; break; }
done)
[ -n "$nolibs" ] || skip "every Python here has torch, CuPy or JAX: cannot check their SKIP rows"
before=$(cd "$SRC" && git status --porcelain 2>/dev/null; md5sum "$SRC/tests/gpu/RESULTS.md")
# (A sanitizer build of the library needs its runtime first in LD_PRELOAD: the launcher appends.)
sim() { env PATH="$PWD/fakebin:$PATH" LD_LIBRARY_PATH="$SIMCUPTI_DIR:$SIM_DIR" PYTHON="$nolibs" \
    ${asan_rt:+LD_PRELOAD="$asan_rt"} \
    GPUKIT_MAKE=false GPUKIT_BIN="$O" GPUKIT_STEPS=5 GPUKIT_MODULE="kernel gt_empty_kernel 1000" "$@"; }
out=$(set +e; sim OUT="$PWD/out1" timeout 900 bash "$kit" 2>&1; echo "rc=$?")
echo "$out" | grep "^\[gpu-kit\] \(PASS\|FAIL\|SKIP\)"
r() { echo "$out" | grep "^\[gpu-kit\] [A-Z]*  $1:" | head -n 1 | awk '{print $2}'; }
expect_eq "a failed build" "$(r build)" FAIL
expect_eq "the driver-API program" "$(r "driver-API program")" PASS
expect_eq "CUPTI's buffers handed zeroed, none written past its valid size" "$(r "CUPTI buffers handed zeroed")" PASS
expect_eq "no torch" "$(r PyTorch)" SKIP
expect_eq "no CuPy" "$(r cupy)" SKIP
expect_eq "no JAX" "$(r jax)" SKIP
expect_eq "the kit's status" "$(echo "$out" | tail -n 1)" "rc=1"
[ -s out1/RESULTS.md ] && [ -s out1/reports.tar.gz ] || fail "no results under \$OUT"
grep -q "^| FAIL | build |" out1/RESULTS.md || fail "RESULTS.md does not show the failed build"
expect_eq "the checkout after the kit" "$(cd "$SRC" && git status --porcelain 2>/dev/null; md5sum "$SRC/tests/gpu/RESULTS.md")" "$before"
# A gputrace-report that fails: the check that used it fails.
mkdir badbin
ln -s "$O/gputrace" "$O/libgputrace.so" badbin/
printf '#!/bin/sh\necho "gputrace-report: broken on purpose" >&2\nexit 3\n' > badbin/gputrace-report
chmod +x badbin/gputrace-report
out=$(set +e; sim OUT="$PWD/out2" GPUKIT_BIN="$PWD/badbin" NVCC=false timeout 900 bash "$kit" 2>&1; echo "rc=$?")
expect_eq "a failing gputrace-report" "$(r "driver-API program")" FAIL
echo "$out" | grep -q "gputrace-report failed: exit 3" || fail "the failure does not say the report failed: $out"
# ---- the PyTorch sections of issues 17 and 21 on the simulated stack, with the real PyTorch ----
# frag (a fragmentation OOM PyTorch raises, the report's allocator figures against PyTorch's own)
# and tiers (memory by category, fp32 and bf16 autocast; elementwise layers here: no matmul), on
# a 1 GiB simulated GPU. The kit's gputrace is a stand-in that runs the program through
# tests/simrt/run-torch, which preloads the shim first and then the simulated runtime, NVML and
# CUPTI (the launcher would append the shim after them).
TORCH_PY="${GT_VENV:-$SRC/.venv}/bin/python"
if [ -n "$asan_rt" ]; then # (the kit under ASan costs minutes; the torch_tiers* cases run tiers.py there: tests/torch/env.sh tiers_run)
    echo "the kit's PyTorch sections left out under AddressSanitizer (minutes under ASan; the torch_tiers* cases run the same tiers.py code there)"
    exit 0
fi
if ! "$TORCH_PY" -c 'import torch' 2>/dev/null || [ ! -f "$O/simnvml/libnvidia-ml.so.1" ] ||
    [ ! -f "$O/simrt/libcudart.so.13" ]; then
    echo "the kit's PyTorch sections left out: no torch at $TORCH_PY (GT_VENV) or no simulated runtime/NVML in $O"
    exit 0
fi
mkdir simbin
ln -s "$O/gputrace-report" "$O/libgputrace.so" simbin/
cat > simbin/py <<SH
#!/bin/sh
exec "$SRC/tests/simrt/run-torch" -b "$O" "$TORCH_PY" "\$@"
SH
cat > simbin/gputrace <<SH
#!/bin/sh
[ "\$1" = -o ] && [ "\$3" = -- ] || { echo "simbin/gputrace: want -o TRACE -- command" >&2; exit 2; }
t=\$2; shift 3
[ "\$1" = "$PWD/simbin/py" ] && { shift; set -- "$TORCH_PY" "\$@"; }
exec "$SRC/tests/simrt/run-torch" -b "$O" -t "\$t" "\$@"
SH
chmod +x simbin/py simbin/gputrace
out=$(set +e; env PATH="$PWD/fakebin:$PATH" LD_LIBRARY_PATH="$SIMCUPTI_DIR:$SIM_DIR" \
    PYTHON="$PWD/simbin/py" GPUKIT_MAKE=true GPUKIT_BIN="$PWD/simbin" GPUKIT_ONLY="frag tiers idle" \
    GTSIM_MEM_BYTES=1073741824 OUT="$PWD/out3" timeout 900 bash "$kit" 2>&1; echo "rc=$?")
echo "$out" | grep "^\[gpu-kit\] \(PASS\|FAIL\|SKIP\)"
expect_eq "PyTorch's OOM figures" "$(r "PyTorch OOM: allocator figures = PyTorch's")" PASS
expect_eq "memory by category, fp32" "$(r "memory by category (adamw, elementwise (simulated GPU: no matmul))")" PASS
expect_eq "memory by category, autocast" "$(r "memory by category (autocast, elementwise (simulated GPU: no matmul))")" PASS
expect_eq "idle time: data loading" "$(r "idle time: data loading")" PASS
expect_eq "device state (NVML)" "$(r "device state (NVML)")" PASS
expect_eq "rows (build, frag, 2 tiers, 2 idle)" "$(echo "$out" | grep -c "^\[gpu-kit\] \(PASS\|FAIL\|SKIP\) ")" 6
expect_eq "the kit's status" "$(echo "$out" | tail -n 1)" "rc=0"
# the idle rows fail without host samples (no idle time is data loading) and without NVML samples
out=$(set +e; env PATH="$PWD/fakebin:$PATH" LD_LIBRARY_PATH="$SIMCUPTI_DIR:$SIM_DIR" \
    PYTHON="$PWD/simbin/py" GPUKIT_MAKE=true GPUKIT_BIN="$PWD/simbin" GPUKIT_ONLY="idle" \
    GPUKIT_SAMPLE_HZ=0 GPUTRACE_NVML_MS=0 OUT="$PWD/out4" timeout 900 bash "$kit" 2>&1; echo "rc=$?")
echo "$out" | grep "^\[gpu-kit\] \(PASS\|FAIL\|SKIP\)"
expect_eq "idle time without host samples" "$(r "idle time: data loading")" FAIL
expect_eq "device state without NVML samples" "$(r "device state (NVML)")" FAIL
# the rows compare exact figures: one byte off in PyTorch's figures and the same checks fail
mkdir rep && tar -xzf out3/reports.tar.gz -C rep || fail "no reports"
"$PYTHON" - rep/reports <<'PY' || fail "could not alter PyTorch's figures"
import json, sys
d = sys.argv[1]
f = json.load(open(d + "/frag.pt.json"))
f["observer_calls"][0]["allocated"] += 512
json.dump(f, open(d + "/frag.off.json", "w"))
t = json.load(open(d + "/tiers-adamw.pt.json"))
t["points"][-1]["after_step"]["optimizer_state"] += 512
json.dump(t, open(d + "/tiers.off.json", "w"))
PY
"$PYTHON" "$SRC/tests/torch/bridge_check.py" gpu_frag rep/reports/frag.json rep/reports/frag.off.json > frag.off 2>&1 &&
    fail "bridge_check.py passed with PyTorch's allocated bytes 512 off"
grep -q "^FAIL oom 0 allocated" frag.off || { cat frag.off; fail "the allocated bytes were not the difference"; }
"$PYTHON" "$SRC/tests/torch/tiers_check.py" adamw rep/reports/tiers-adamw.json rep/reports/tiers.off.json > tiers.off 2>&1 &&
    fail "tiers_check.py passed with AdamW's state 512 bytes off"
grep -q "optimizer_state after the last step .*DIFFERS" tiers.off || { cat tiers.off; fail "the state was not the difference"; }
exit 0
