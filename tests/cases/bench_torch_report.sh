# bench/torch_overhead_report.py (issue 23): per-round ratios and differences against no tracer,
# their medians, the targets' verdicts, and an interrupted run (a workload without its baseline)
# reported without a crash. The figures make the median of the per-round ratios (1.055) differ
# from the ratio of the medians (1010/1000), and the median difference (+60) from the difference
# of the medians (+10).
. "$SRC/tests/lib.sh"
cat > raw.txt <<'RAW'
round=1 workload=launch variant=none ns_per_unit=1000.0 cpu_ns_per_unit=900.0 units=20000
round=1 workload=launch variant=gputrace ns_per_unit=1010.0 cpu_ns_per_unit=918.0 units=20000
round=1 workload=launch variant=profiler gpu_events=0 ns_per_unit=1300.0 cpu_ns_per_unit=1200.0 units=20000
round=2 workload=launch variant=profiler gpu_events=0 ns_per_unit=1500.0 cpu_ns_per_unit=1250.0 units=20000
round=2 workload=launch variant=none ns_per_unit=1100.0 cpu_ns_per_unit=950.0 units=20000
round=2 workload=launch variant=gputrace ns_per_unit=1160.0 cpu_ns_per_unit=969.0 units=20000
round=3 workload=launch variant=gputrace ns_per_unit=990.0 cpu_ns_per_unit=1030.0 units=20000
round=3 workload=launch variant=none ns_per_unit=900.0 cpu_ns_per_unit=1000.0 units=20000
round=3 workload=launch variant=profiler gpu_events=5 ns_per_unit=1000.0 cpu_ns_per_unit=1300.0 units=20000
round=1 workload=alloc variant=gputrace ns_per_unit=900.0 units=20000
RAW
"$PYTHON" "$SRC/bench/torch_overhead_report.py" raw.txt out.md 3 1 "none gputrace profiler" > stdout.txt ||
    fail "report failed"
cmp -s out.md stdout.txt || fail "the file and the printed section differ"
cat out.md
# wall: per-round ratios 1.010, 1.055, 1.100 -> 1.055; differences 10, 60, 90 -> 60;
# CPU: 918/900, 969/950, 1030/1000 -> 1.020; +18, +19, +30 -> +19
grep -qF '| gputrace, defaults (native + Python stacks, CUPTI) | 1010 | 1.055 | +60 | 969 | 1.020 | +19 |' out.md ||
    fail "gputrace row"
# profiler: ratios 1.300, 1.364, 1.111 -> 1.300; +300, +400, +100 -> +300; CPU 1.333, 1.316, 1.300
# -> 1.316, +300; the fewest GPU events
grep -qF '| torch.profiler, CPU + CUDA activities (0 GPU events: GPU trace empty) | 1300 | 1.300 | +300 | 1250 | 1.316 | +300 |' out.md ||
    fail "profiler row"
grep -qF '| gputrace defaults, added per launch ≤ 3% | +2.0% (+5.5%) | met (**not met**) |' out.md || fail "launch target"
grep -qF '| launch: gputrace'"'"'s added time < 0.25× torch.profiler'"'"'s | 0.06× (+19 vs +300 ns) (0.20×) | met (met) |' out.md ||
    fail "profiler target"
# alloc has no baseline (interrupted run): no section, no verdict
! grep -q 'allocation' out.md || fail "a workload without its baseline was reported"
# raw lines without run_ns (older runs): no whole-run columns
! grep -q 'whole run' out.md || fail "whole-run columns without run_ns"
# with run_ns (the process from start to exit): its median, and the median of the per-round
# differences over the loop's units: gputrace +0.06, +0.10, +0.30 s -> +0.10 s / 20000 = +5000 ns
# per unit; profiler +2.0, +1.0, +4.0 s -> +2.0 s = +100000 ns; 5000 / 100000 = 0.050x
sed 's/^\(round=\([0-9]\) workload=launch variant=\([a-z]*\) .*\)$/\1 run_ns=R\2\3/' raw.txt |
    sed 's/R1none/1000000000/; s/R2none/1100000000/; s/R3none/900000000/;
         s/R1gputrace/1060000000/; s/R2gputrace/1200000000/; s/R3gputrace/1200000000/;
         s/R1profiler/3000000000/; s/R2profiler/2100000000/; s/R3profiler/4900000000/' > raw2.txt
grep -c 'run_ns=[0-9]' raw2.txt | grep -qx 9 || fail "the test's raw lines: $(cat raw2.txt)"
"$PYTHON" "$SRC/bench/torch_overhead_report.py" raw2.txt out2.md 3 1 "none gputrace profiler" > /dev/null ||
    fail "report with run_ns failed"
grep -qF '| gputrace, defaults (native + Python stacks, CUPTI) | 1010 | 1.055 | +60 | 969 | 1.020 | +19 | 1200 | +5000 |' out2.md ||
    fail "gputrace row with the whole run: $(grep gputrace out2.md)"
grep -qF '| launch, whole run (start to exit, the profiler'"'"'s stop included): gputrace'"'"'s added time < 0.25× torch.profiler'"'"'s | 0.050× (+5000 vs +100000 ns per unit) | met |' out2.md ||
    fail "whole-run target: $(grep 'whole run' out2.md)"
