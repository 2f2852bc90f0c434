#!/bin/sh
# A trace written by the shim of format 3 (before the header checksum of format 4; committed as
# tests/golden/format3_peak.trace, made by tests/progs/mem_scenarios peak at a6263f9) is still
# read: exit 0, nothing on stderr, the same figures as that program's trace in today's format (5).
. "$SRC/tests/lib.sh"
MiB=1048576
g="$SRC/tests/golden/format3_peak.trace"
"$GT_REPORT" --json "$g" >t.json 2>err.txt || fail "report of the format 3 trace failed: $(cat err.txt)"
expect_eq "stderr" "$(cat err.txt)" ""
j() { jget t.json "$1"; }
expect_eq "format version" "$(j "d['trace']['format_version']")" 3
expect_eq "records" "$(j "(d['trace']['records'], d['trace']['chunks'], d['trace']['truncated'])")" "(62, 4, False)"
expect_eq "allocations" "$(j "(d['memory']['alloc_count'], d['memory']['free_count'])")" "(20, 17)"
expect_eq "peak" "$(j "d['memory']['peak_bytes']")" $((340 * MiB))
expect_eq "leaked" "$(j "d['memory']['leaked_bytes']")" $((300 * MiB))
"$GT_REPORT" --dump "$g" >d.txt 2>err.txt || fail "dump of the format 3 trace failed: $(cat err.txt)"
expect_eq "ALLOC lines" "$(grep -c ' ALLOC ' d.txt)" 20
# the program traced now, in format 5: the same figures
traced t4.trace "$PROGS/mem_scenarios" peak >out.txt 2>&1 || fail "program failed: $(cat out.txt)"
"$GT_REPORT" --json t4.trace >t4.json || fail "report failed"
expect_eq "format 5 trace: version" "$(jget t4.json "d['trace']['format_version']")" 5
for f in alloc_count free_count peak_bytes leaked_bytes; do
    expect_eq "format 5 trace: $f" "$(jget t4.json "d['memory']['$f']")" "$(j "d['memory']['$f']")"
done
echo "format 3 trace read: 20 allocations, peak 340 MiB, as the format 5 trace of the same program"
