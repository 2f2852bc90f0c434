# Processes at an OOM from NVML (issue 20 part 4): after a failed allocation the shim lists the
# processes NVML sees on the device (tests/simnvml: this process, and with GTSIM_OTHER_BYTES one
# "gtsim-other" of pid 4194305); the report shows them with the OOM (text and JSON) and marks
# this process; the advice names the other ones. Scenario "others" of tests/cases/mem_verdicts.sh:
# 60 GiB held by another process.
. "$SRC/tests/lib.sh"
[ -f "$O/simnvml/libnvidia-ml.so.1" ] || skip "no simulated NVML: nvml.h missing at build time (make torch-env, then make VENV=... fixtures)"
MiB=1048576 GiB=1073741824
LD_LIBRARY_PATH="$O/simnvml:$SIMCUPTI_DIR:$SIM_DIR" GPUTRACE_OUTPUT=run.trace LD_PRELOAD="$GT_PRELOAD" \
    GTSIM_MEM_BYTES=$((80 * GiB)) GTSIM_OTHER_BYTES=$((60 * GiB)) GTSIM_CTX_OVERHEAD_BYTES=$((512 * MiB)) \
    "$PROGS/mem_scenarios" others > out.txt 2>&1 || fail "program failed: $(cat out.txt)"
"$GT_REPORT" --json run.trace > run.json || fail "report failed"
"$GT_REPORT" run.trace > run.txt || fail "text report failed"
"$PYTHON" - run.json <<'P' || fail "processes at the OOM differ"
import json, sys
d = json.load(open(sys.argv[1]))
pid = d["process"]["pid"]
(o,) = d["memory"]["ooms"]
assert o["verdict"] == "other_processes", o["verdict"]
ps = {p["pid"]: p for p in o["processes"]}
assert set(ps) == {pid, 4194305}, ps
other, me = ps[4194305], ps[pid]
assert (other["name"], other["bytes"], other["this_process"]) == ("gtsim-other", 60 << 30, False), other
# this process: what the driver charged it when NVML was asked (12 GiB held + the context)
assert me["name"] == "mem_scenarios" and me["this_process"] and 0 < me["bytes"] <= (12 << 30) + (512 << 20), me
# the advice names the other process, not this one
assert o["advice"].startswith("other processes hold memory on this device: pid 4194305 gtsim-other (60.0 GiB); "), o["advice"]
assert str(pid) not in o["advice"], o["advice"]
print("processes at the OOM:", sorted((p["pid"], p["name"], p["bytes"]) for p in o["processes"]))
print("advice:", o["advice"])
P
grep -q "processes on the device (NVML):.* pid 4194305 gtsim-other 60.0 GiB" run.txt ||
    fail "text report: $(grep -A3 'other_processes' run.txt)"
grep -q "processes on the device (NVML):.* mem_scenarios .* (this process)" run.txt || fail "text report: this process not marked"
grep -q "advice: other processes hold memory on this device: pid 4194305 gtsim-other (60.0 GiB);" run.txt ||
    fail "text report: advice $(grep advice run.txt)"
