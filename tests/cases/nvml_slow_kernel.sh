# Kernels slower below the maximum SM clock, end to end (issue 20 part 4): the simulated NVML's
# schedule holds the SM clock at half its maximum (power cap) from 200 to 400 ms, and the
# simulated driver runs a kernel that starts meanwhile twice as long (gtsim_set_sm_clock). The
# report's slow_kernels must name gemm_tile with its full-clock mean (the 2 ms it is given) and
# about twice that below the maximum, and the text report must name it under the device.
. "$SRC/tests/lib.sh"
[ -z "$tsan_rt" ] || skip "under ThreadSanitizer the flusher thread that samples NVML runs late (as in nvml_samples); it runs in the plain and ASan builds"
[ -f "$O/simnvml/libnvidia-ml.so.1" ] || skip "no simulated NVML: nvml.h missing at build time (make torch-env, then make VENV=... fixtures)"
[ -f "$SIMCUPTI_DIR/libcupti.so.13" ] || skip "simulated CUPTI not built"
cat > sched.txt <<'S'
0     sm_clock=1980
200   sm_clock=990 clock_events=0x4 power_mw=700000   # SW power cap
400   sm_clock=1980 clock_events=0 power_mw=300000
S
got=$(LD_LIBRARY_PATH="$O/simnvml" GTSIM_KERNEL_NS=2000000 GTSIM_NVML_SCHEDULE="$PWD/sched.txt" \
    GPUTRACE_NVML_MS=5 traced run.trace "$PYTHON" "$SRC/tests/progs/slow_kernel.py" 0.6 2>&1) ||
    fail "traced run failed: $got"
case "$got" in "launches "*) ;; *) fail "no launches line: $got" ;; esac
"$GT_REPORT" --json run.trace > run.json || fail "report failed"
"$PYTHON" - run.json <<'P' || fail "slow_kernels"
import json, sys
d = json.load(open(sys.argv[1]))["device_state"]["devices"][0]
sk = [k for k in d["slow_kernels"] if k["name"] == "gemm_tile"]
print("slow_kernels:", d["slow_kernels"])
assert sk, "gemm_tile not among the slow kernels"
k = sk[0]
ratio = k["slow_mean_ns"] / k["full_mean_ns"]
# 2 ms at full clock; twice that at half clock (a kernel that starts at a clock change may be
# counted in the state of the sample before it: NVML is read every 5 ms)
assert 1.9e6 <= k["full_mean_ns"] <= 2.3e6, k
assert 1.6 <= ratio <= 2.2 and k["slow_count"] >= 20 and k["full_count"] >= 20, (ratio, k)
print("gemm_tile: %d runs at full clock, %.2f ms mean; %d below it, %.2f ms mean (x%.2f)"
      % (k["full_count"], k["full_mean_ns"] / 1e6, k["slow_count"], k["slow_mean_ns"] / 1e6, ratio))
P
"$GT_REPORT" run.trace > run.txt || fail "text report failed"
grep -A8 "^  device 0   NVML 0" run.txt | grep -q "gemm_tile" || fail "text report: gemm_tile not named under the device: $(grep -A8 '^  device 0   NVML 0' run.txt)"
