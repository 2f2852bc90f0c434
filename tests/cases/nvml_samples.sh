# Device state from NVML (issue 20 part 4): the shim dlopens libnvidia-ml.so.1 (here the simulated
# one, tests/simnvml), maps each CUDA device to its NVML device by UUID and samples every
# GPUTRACE_NVML_MS on the flusher thread; the samples follow the simulated NVML's schedule.
# Without the library the trace says NVML is absent; GPUTRACE_NVML_MS=0 writes no NVML record.
# test: alone (samples at a given period: cases beside it would change what they catch)
. "$SRC/tests/lib.sh"
[ -z "$tsan_rt" ] || skip "under ThreadSanitizer the flusher thread that samples NVML runs late (8 ms apart where the schedule allows less); it runs in the plain and ASan builds"
[ -f "$O/simnvml/libnvidia-ml.so.1" ] || skip "no simulated NVML: nvml.h missing at build time (make torch-env, then make VENV=... fixtures)"
[ -f "$SIMCUPTI_DIR/libcupti.so.13" ] || skip "simulated CUPTI not built"
got=$(LD_LIBRARY_PATH="$O/simnvml" GTSIM_DEVICES=2 GTSIM_NVML_SCHEDULE="$SRC/tests/simnvml/three_states.sched" GPUTRACE_NVML_MS=10 \
    sh -c '. "$SRC/tests/lib.sh"; traced run.trace "$PROGS/idle" syncload') || fail "traced run failed: $got"
expect_eq "output" "$got" "idle syncload ok"
"$GT_REPORT" --dump run.trace > run.dump || fail "dump failed"
"$PYTHON" - run.dump <<'P' || fail "NVML records differ from the schedule"
import re, sys
mapped, samples = {}, {0: [], 1: []}
for line in open(sys.argv[1]):
    f = line.split()
    kv = dict(x.split("=", 1) for x in f if "=" in x)
    if f[2] == "NVML":
        assert f[3] == "device", line
        mapped[int(kv["device"])] = (kv["text"].strip('"'), int(kv["max_sm_mhz"]),
                                     int(kv["max_mem_mhz"]), int(kv["nvml_index"]))
    elif f[2] == "NVML_SAMPLE":
        samples[int(kv["device"])].append((int(f[0]), int(kv["valid"], 16), int(kv["sm_mhz"]),
                                           int(kv["temp_c"]), int(kv["power_mw"]), int(kv["reasons"], 16)))
assert sorted(mapped) == [0, 1], f"mapped {mapped}"
# the simulated driver's UUID is "GTSIM-GPU-UUID-" and the ordinal (tests/sim); NVML's indices are
# the driver's ordinals
for d, (u, msm, mmem, idx) in mapped.items():
    want = "GPU-47545349-4d2d-4750-552d-555549442d%02x" % d
    assert u == want and idx == d, f"device {d}: {u} (NVML {idx}), want {want}"
    assert (msm, mmem) == (1980, 2619), f"max clocks {msm} {mmem}"
# the schedule's three states, in order, each as scripted (every field answered)
states = {(1980, 35, 300000, 0): 0, (1200, 92, 300000, 0x60): 1, (1500, 70, 700000, 0x4): 2}
for d, ss in samples.items():
    assert len(ss) >= 6, f"device {d}: {len(ss)} samples"
    assert all(s[1] == 0xff for s in ss), f"device {d}: not every field answered"
    # the shim reads a sample's fields one call after another (SM clock, temperature, power, then
    # reasons): a sample whose reads straddle a change of state (a preempted flusher, ASan) has its
    # first fields from one state and the rest from the next, as a real NVML's would; counted
    # between the two
    order = sorted(states, key=states.get)
    def state_of(s):
        f = s[2:]
        if f in states:
            return states[f]
        for k, (a, b) in enumerate(zip(order, order[1:])):
            for cut in range(1, len(f)):
                if f == a[:cut] + b[cut:]:
                    return k + 0.5
        return None
    seq = [state_of(s) for s in ss]
    assert None not in seq, f"device {d}: a sample not in the schedule: {ss}"
    assert sum(x % 1 != 0 for x in seq) <= 2, f"device {d}: states {seq}"
    assert seq == sorted(seq) and seq[0] == 0 and seq[-1] == 2, f"device {d}: states {seq}"
    # a tick starts GPUTRACE_NVML_MS after the previous one started; a sample is stamped when it
    # is read, after the devices sampled before it in its tick: one read that ran long (ASan, a
    # loaded machine) shortens the next gap by as much, never the span of several
    gaps = [b[0] - a[0] for a, b in zip(ss, ss[1:])]
    assert min(gaps) >= 5_000_000, f"device {d}: samples {min(gaps)} ns apart"
    span = ss[-1][0] - ss[0][0]
    assert span >= 10_000_000 * (len(ss) - 1) - 5_000_000, \
        f"device {d}: {len(ss)} samples in {span} ns"
print("nvml:", {d: len(s) for d, s in samples.items()}, "samples, as scheduled")
P
# the report: intervals between samples, slow when the SM clock is below its maximum, busy time
# (kernels of device 0) laid over them, by reason; the series of samples (time, SM clock,
# reasons, memory used); exact against the dump
"$GT_REPORT" --json run.trace > run.json || fail "report failed"
"$PYTHON" - run.dump run.json <<'P' || fail "device state differs from the samples"
import json, sys
samples, kernels = {0: [], 1: []}, []
for line in open(sys.argv[1]):
    f = line.split()
    kv = dict(x.split("=", 1) for x in f if "=" in x)
    if f[2] == "NVML_SAMPLE":
        samples[int(kv["device"])].append((int(f[0]), int(kv["sm_mhz"]), int(kv["reasons"], 16)))
    elif f[2] == "GPU_KERNEL" and kv["device"] == "0":
        kernels.append((int(f[0]), int(f[0]) + int(kv["dur_ns"])))
st = json.load(open(sys.argv[2]))["device_state"]
assert st["nvml"] == "available" and st["reason"] is None, st
names = ["gpu_idle", "applications_clocks_setting", "sw_power_cap", "hw_slowdown", "sync_boost",
         "sw_thermal_slowdown", "hw_thermal_slowdown", "hw_power_brake_slowdown",
         "display_clock_setting"]
for d in st["devices"]:
    ss, busy = samples[d["device"]], (kernels if d["device"] == 0 else [])
    want = {"covered_ns": 0, "slow_ns": 0, "busy_ns": 0, "slow_busy_ns": 0}
    reasons = {}
    for (t0, sm, rs), (t1, _, _) in zip(ss, ss[1:]):
        b = sum(max(0, min(e, t1) - max(s, t0)) for s, e in busy)
        want["covered_ns"] += t1 - t0
        want["busy_ns"] += b
        if sm < 1980:
            want["slow_ns"] += t1 - t0
            want["slow_busy_ns"] += b
            for k in range(9):
                if rs >> k & 1:
                    r = reasons.setdefault(names[k], [0, 0])
                    r[0] += t1 - t0
                    r[1] += b
    got = {k: d[k] for k in want}
    assert got == want, f"device {d['device']}: {got} != {want}"
    got_r = {r["reason"]: [r["slow_ns"], r["slow_busy_ns"]] for r in d["reasons"]}
    assert got_r == reasons, f"device {d['device']}: reasons {got_r} != {reasons}"
    assert (d["min_sm_mhz"], d["max_temp_c"], d["max_power_mw"], d["power_limit_mw"]) == \
        (1200, 92, 700000, 700000), d
    assert d["device"] == 1 or d["slow_busy_ns"] > 0, d  # the third kernel starts >= 60 ms in
# the series: one point per sample (well under GA_NVML_POINTS_MAX), as the dump has them
for d in st["devices"]:
    ss = samples[d["device"]]
    se = d["series"]
    assert se["samples_per_point"] == 1, se["samples_per_point"]
    got = [(p["time_ns"], p["sm_mhz"], p["reasons"], p["mem_used_bytes"] is not None) for p in se["points"]]
    want = [(t, sm, [names[k] for k in range(9) if rs >> k & 1], True) for t, sm, rs in ss]
    assert got == want, f"device {d['device']}: series {got[:4]} != {want[:4]}"
# kernels slower below the maximum clock: the simulated GPU stretches k_work while the clock is
# down; whether it is listed depends on which runs start after the first sample and in which state
# (the timing of the run): listed only as slower, and with no more runs per state than the dump
# has by the rule (the sample in effect at the start; all of idle's kernels are k_work). tests/cases/nvml_slow_kernel.sh has a kernel that always is.
for d in st["devices"]:
    ss = samples[d["device"]]
    slow, full = [], []
    for k in (kernels if d["device"] == 0 else []):
        prev = [sm for t, sm, _ in ss if t <= k[0]]
        if prev:
            (slow if prev[-1] < 1980 else full).append(k[1] - k[0])
    got = [(k["name"], k["slow_count"], k["full_count"], k["slow_mean_ns"] > k["full_mean_ns"])
           for k in d["slow_kernels"]]
    # (the report may leave out a run it reads before the sample in effect at its start: the
    # runs it counts in a state are at most the dump's)
    assert got == [] or (len(got) == 1 and got[0][0] == "k_work" and got[0][3] and
                         got[0][1] <= len(slow) and got[0][2] <= len(full)), (got, slow, full)
    assert d["kernel_names_dropped"] == 0, d
assert st["kernels_unsampled"] == 0, st["kernels_unsampled"]  # every kernel's device was sampled
assert st["busy_known"] is True, st  # CUPTI on: busy time measured
assert all(d["busy_unsampled_ns"] == 0 for d in st["devices"]), st["devices"]  # none past the wait
print("device state: exact against the samples and kernels of the dump; series of", {d["device"]: len(d["series"]["points"]) for d in st["devices"]}, "points")
P
"$GT_REPORT" run.trace > run.txt || fail "text report failed"
grep -q "^  device 0   NVML 0, [0-9]* samples over .*; SM clock below its maximum (1980 MHz) for" run.txt ||
    fail "text report: no device state line"
grep -q "reported by NVML: .*sw_thermal_slowdown .*hw_thermal_slowdown" run.txt || fail "text report: no reasons"
# no library: one record says so; GPUTRACE_NVML_MS=0: none
got=$(sh -c '. "$SRC/tests/lib.sh"; traced absent.trace "$PROGS/idle" host') || fail "traced run failed: $got"
"$GT_REPORT" --dump absent.trace > absent.dump || fail "dump failed"
[ "$(grep -c ' NVML' absent.dump)" = 1 ] && grep -q ' NVML absent device=-1 .*libnvidia-ml.so.1' absent.dump ||
    fail "absent NVML: $(grep NVML absent.dump)"
"$GT_REPORT" absent.trace | grep -q "^gpu state  NVML absent: libnvidia-ml.so.1" || fail "text report: NVML not said absent"
got=$(LD_LIBRARY_PATH="$O/simnvml" GPUTRACE_NVML_MS=0 sh -c '. "$SRC/tests/lib.sh"; traced off.trace "$PROGS/idle" host') ||
    fail "traced run failed: $got"
"$GT_REPORT" --dump off.trace > off.dump || fail "dump failed"
! grep -q ' NVML' off.dump || fail "GPUTRACE_NVML_MS=0 wrote NVML records"
# without NVML samples no kernel is said unsampled (null), though the run's kernels had no sample
for t in absent off; do
    "$GT_REPORT" --json $t.trace > $t.json || fail "$t: report failed"
    "$PYTHON" -c 'import json, sys; d = json.load(open(sys.argv[1])); k = [l for l in open(sys.argv[2]) if " GPU_KERNEL " in l]
assert d["device_state"]["kernels_unsampled"] is None and k, (d["device_state"], len(k))' $t.json $t.dump ||
        fail "$t: kernels_unsampled not null, or no kernel in the run"
done
