# Bad calls return the driver's codes unchanged and errno is untouched; an OOM is reported with
# the simulated free/total and what the process held (issue 2).
. "$SRC/tests/lib.sh"
MiB=1048576
export GTSIM_MEM_BYTES=$((64 * MiB))
want=$(untraced "$PROGS/errors") || fail "untraced run failed"
got=$(traced e.trace "$PROGS/errors") || fail "traced run failed"
expect_eq "return codes and errno" "$got" "$want"
echo "$want"
echo "$want" | grep -q "cuMemAlloc(&b, 40u << 20) *-> 2 " || fail "the second 40 MiB allocation should fail with CUDA_ERROR_OUT_OF_MEMORY"
"$GT_REPORT" --json e.trace > e.json || fail "report failed"
j() { jget e.json "$1"; }
# Four failed allocation calls: before cuInit, NULL pointer, size 0, and the real OOM.
expect_eq failed "$(j "d['memory']['failed_count']")" 4
expect_eq "failure codes" "$(j "[o['result'] for o in d['memory']['ooms']]")" "[3, 1, 1, 2]"
o="d['memory']['ooms'][3]"
expect_eq "oom request" "$(j "$o['requested_bytes']")" $((40 * MiB))
expect_eq "oom free" "$(j "$o['free_bytes']")" $((24 * MiB))
expect_eq "oom total" "$(j "$o['total_bytes']")" $((64 * MiB))
expect_eq "oom held" "$(j "$o['held_bytes']")" $((40 * MiB))
# The program then frees its own 40 MiB and asks again from another line, which succeeds: not
# the caching-allocator retry (that comes from the failed call's site, docs/ANALYSES.md), so
# the verdict is exhausted, with what it freed before asking again.
expect_eq "oom verdict" "$(j "$o['verdict']")" exhausted
expect_eq "oom retry" "$(j "($o['retry']['outcome'], $o['retry']['freed_bytes'], $o['retry']['freed_count'])")" "('none', $((40 * MiB)), 1)"
expect_eq "peak" "$(j "d['memory']['peak_bytes']")" $((40 * MiB))
expect_eq "leaked" "$(j "d['memory']['leaked_bytes']")" 0
"$GT_REPORT" e.trace > e.txt || fail "text report failed"
grep -q "exhausted" e.txt || fail "text report does not show the OOM verdict"
