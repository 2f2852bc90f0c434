#!/bin/sh
# --dump is in time order with host and GPU records merged (README): GPU records, which CUPTI
# delivers late and the file holds after the host records of their time, are printed at their
# start time. Checked on a real run (launch_loop under the simulated CUPTI) and on the hand-made
# trace of report_gpu_timeline, whose GPU chunks come first and out of order.
. "$SRC/tests/lib.sh"
traced t.trace "$PROGS/launch_loop" 20000 >out.txt 2>&1 || fail "program failed: $(cat out.txt)"
"$GT_REPORT" --dump t.trace >d.txt 2>e.txt || fail "dump failed: $(cat e.txt)"
expect_eq "stderr" "$(cat e.txt)" ""
expect_eq "kernels" "$(grep -c ' GPU_KERNEL ' d.txt)" 20000
expect_eq "launches" "$(grep -c ' LAUNCH ' d.txt)" 20000
# each kernel tied to its launch by an external correlation record; CUPTI's API records, which
# carry those, are not written (issue 23: the launch record has the call; nothing reads them)
expect_eq "external correlations" "$(grep -c ' GPU_EXTCORR ' d.txt)" 20000
expect_eq "API records" "$(grep -c ' GPU_API ' d.txt)" 0
# times never go back (the "-" of timeless records and the final "inf" aside)
awk '$1 != "-" && $1 != "inf" { if ($1 + 0 < last) { print NR ": " $0 " after " last; bad = 1; exit }
    last = $1 + 0 } END { exit bad }' d.txt || fail "not in time order: $(awk '$1 != "-" && $1 != "inf" { if ($1 + 0 < last) { print NR ": " $0; exit } last = $1 + 0 }' d.txt)"
# interleaved, not appended: a kernel line comes before the last launch line
first_kernel=$(grep -n -m1 ' GPU_KERNEL ' d.txt | cut -d: -f1)
last_launch=$(grep -n ' LAUNCH ' d.txt | tail -n 1 | cut -d: -f1)
[ "$first_kernel" -lt "$last_launch" ] || fail "GPU records not merged: first kernel at line $first_kernel, last launch at $last_launch"
# the same records as the file holds, only reordered
"$GT_REPORT" --json t.trace >t.json || fail "report failed"
expect_eq "records" "$(wc -l <d.txt | tr -d ' ')" "$(jget t.json "d['trace']['records']")"
echo "$(wc -l <d.txt | tr -d ' ') lines in time order"
