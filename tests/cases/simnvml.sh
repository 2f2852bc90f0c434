# The simulated NVML over the simulated driver: devices, UUIDs and PCI ids as the driver gives
# them, memory and processes as it accounts them, the fabric answer PyTorch needs, and a schedule
# file (GTSIM_NVML_SCHEDULE) that changes clocks, temperature and clock-event reasons over time.
. "$SRC/tests/lib.sh"
[ -f "$O/simnvml/libnvidia-ml.so.1" ] || skip "no simulated NVML: nvml.h missing at build time (make torch-env, then make VENV=... fixtures)"
cat > sched.txt <<'S'
# ms  values
0     sm_clock=1755 temp=61 power_mw=350000
300   sm_clock=1200 temp=92 clock_events=0x60   # HW + SW thermal slowdown
S
san_pre=""; [ -z "$asan_rt$tsan_rt" ] || san_pre=$(echo $asan_rt $tsan_rt "$O/simnvml/libnvidia-ml.so.1")
LD_PRELOAD="$san_pre" LD_LIBRARY_PATH="$O/simnvml:$SIM_DIR" GTSIM_DEVICES=2 GTSIM_MEM_BYTES=1073741824 GTSIM_OTHER_BYTES=104857600 \
    GTSIM_NVML_SCHEDULE="$PWD/sched.txt" "$PYTHON" "$SRC/tests/progs/simnvml_check.py" > out.txt 2>&1 ||
    { cat out.txt; fail "simnvml_check.py"; }
cat out.txt
tail -n 1 out.txt | grep -q '^simnvml: ok$' || fail "no success line"
