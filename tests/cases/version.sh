#!/bin/sh
# One version for the project (common/version.h): gputrace --version, gputrace-report --version
# and the JSON reports' "generator" (one trace and several) all name it.
. "$SRC/tests/lib.sh"
v=$(sed -n 's/^#define GT_VERSION "\(.*\)"$/\1/p' "$SRC/common/version.h")
[ -n "$v" ] || fail "no GT_VERSION in common/version.h"
expect_eq "gputrace --version" "$("$GT_LAUNCHER" --version)" "gputrace $v"
expect_eq "gputrace-report --version" "$("$GT_REPORT" --version)" \
    "gputrace-report $v (reads trace format up to 5)"
traced t.trace "$PROGS/mem_scenarios" peak >out.txt 2>&1 || fail "program failed: $(cat out.txt)"
"$GT_REPORT" --json t.trace >t.json || fail "report failed"
expect_eq "generator" "$(jget t.json "d['generator']")" "gputrace-report $v"
cp t.trace u.trace
"$GT_REPORT" --json t.trace u.trace >m.json || fail "report of two traces failed"
expect_eq "generator (several traces)" "$(jget m.json "d['generator']")" "gputrace-report $v"
echo "version $v everywhere"
