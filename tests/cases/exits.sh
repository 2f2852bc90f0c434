# However the program ends, its exit status and output are unchanged and the trace reads up to
# the last flush; the report says whether the end was clean (issue 8, exit paths and fork).
# _exit_now ends right after its calls, before any periodic flush: its records are there because
# the shim's _exit wrapper writes them (preload/exit.c), with no end record (clean_end false).
. "$SRC/tests/lib.sh"
MiB=1048576
for mode in return exit _exit _exit_now abort segv kill exec fork; do
    want=$(set +e; untraced "$PROGS/exits" $mode 2>/dev/null; echo "rc=$?")
    got=$(set +e; traced "$mode.trace" "$PROGS/exits" $mode 2>/dev/null; echo "rc=$?")
    expect_eq "$mode: output and exit status" "$got" "$want"
    "$GT_REPORT" --json "$mode.trace" > "$mode.json" 2> "$mode.err" || fail "$mode: report failed: $(cat "$mode.err")"
    j() { jget "$mode.json" "$1"; }
    # Everything before the pause was flushed, whatever came after (_exit_now: before _exit).
    expect_eq "$mode allocs" "$(j "d['memory']['alloc_count'] >= 100")" True
    expect_eq "$mode launches" "$(j "d['timeline']['launch_count']")" 10
    expect_eq "$mode lost" "$(j "d['trace']['lost_records']")" 0
    case $mode in
        return|exit|fork) expect_eq "$mode clean" "$(j "d['trace']['clean_end']")" True ;;
        *) expect_eq "$mode clean" "$(j "d['trace']['clean_end']")" False ;;
    esac
    echo "$mode: $got, clean_end=$(j "d['trace']['clean_end']"), allocs=$(j "d['memory']['alloc_count']")"
done
# fork: children write no trace of their own and never touch the parent's.
ls fork.trace.* 2>/dev/null && fail "a forked child wrote a trace"
expect_eq "fork: child allocations are not in the parent's trace" \
    "$(jget fork.json "d['memory']['peak_bytes'] < 110 * $MiB")" True
exit 0
