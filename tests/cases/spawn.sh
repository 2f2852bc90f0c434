# posix_spawn and vfork+exec children of a traced program (issue 8), started while 4 parent
# threads are inside the shim. Policy (README, "Reliability and security"): an exec'd child
# traces only if LD_PRELOAD still names the shim; it then writes its own trace, never the
# parent's: it inherits no descriptor of ours (O_CLOEXEC), and the output pattern either has %p
# (its own pid) or names the parent's existing file, in which case O_EXCL makes the child write
# PATTERN.<its pid> beside it. Checked: output and exit status as without the shim, no deadlock
# (a 60 s timeout), the parent's trace exact and clean, each child's trace exact and its own.
. "$SRC/tests/lib.sh"
MiB=1048576
want_out() { # MODE
    for c in 0 1 2; do
        echo "child: inherited trace descriptors 0"
        echo "parent: child $c exited with 7"
    done
    echo "parent: $1 done"
}
# One line per trace: pid ppid allocs frees leaked_bytes launches lost clean_end.
summary() {
    "$GT_REPORT" --json "$1" 2> "$1.err" | "$PYTHON" -c '
import json, sys
d = json.load(sys.stdin); m = d["memory"]; t = d["trace"]
print(t["pid"], d["process"]["ppid"], m["alloc_count"], m["free_count"], m["leaked_bytes"],
      d["timeline"]["launch_count"], t["lost_records"], t["clean_end"])' || fail "report of $1: $(cat "$1.err")"
}
check_parent() { # TRACE MODE
    s=$(summary "$1")
    expect_eq "$2: parent (pid ppid allocs frees leaked launches lost clean)" "${s#* * }" \
        "80010 80000 $((10 * MiB)) 0 0 True"
    expect_eq "$2: parent pid" "${s%% *}" "$parent_pid"
}
check_child() { # TRACE MODE PID
    expect_eq "$2: child (pid ppid allocs frees leaked launches lost clean)" "$(summary "$1")" \
        "$3 $parent_pid 3 1 $((4 * MiB)) 2 0 True"
}
run() { # MODE OUTPUT-PATTERN -> sets got, children, parent_pid
    got=$(set +e; traced "$2" timeout 60 "$PROGS/spawn" "$1" 2> "$1.err"
        echo "rc=$?")
    children=$(sed -n 's/^child_pid=//p' "$1.err")
    expect_eq "$1: children started" "$(echo "$children" | wc -l)" 3
}
for mode in spawn vfork spawn-noenv; do
    want="$(want_out $mode)
rc=0"
    expect_eq "$mode: untraced" "$(set +e; untraced "$PROGS/spawn" $mode 2>/dev/null; echo "rc=$?")" "$want"

    # A fixed output name: the children find the parent's file there and write beside it.
    run $mode "$PWD/$mode.trace"
    expect_eq "$mode: output and exit status" "$got" "$want"
    parent_pid=$(summary "$mode.trace"); parent_pid=${parent_pid%% *}
    check_parent "$mode.trace" $mode
    for pid in $children; do
        if [ $mode = spawn-noenv ]; then
            [ -e "$mode.trace.$pid" ] && fail "$mode: child $pid traced without LD_PRELOAD"
        else
            [ -f "$mode.trace.$pid" ] || fail "$mode: no trace of child $pid: $(ls)"
            check_child "$mode.trace.$pid" $mode "$pid"
        fi
    done
    expect_eq "$mode: trace files" "$(ls | grep -c "^$mode\.trace\(\.[0-9]*\)\{0,1\}\$")" \
        "$([ $mode = spawn-noenv ] && echo 1 || echo 4)"

    # %p in the pattern: every process names its own file.
    mkdir "$mode.p"
    run $mode "$PWD/$mode.p/t.%p.trace"
    expect_eq "$mode %p: output and exit status" "$got" "$want"
    parent_pid=$(ls "$mode.p" | sed -n 's/^t\.\([0-9]*\)\.trace$/\1/p' | while read -r p; do
        echo "$children" | grep -qx "$p" || echo "$p"; done)
    [ -n "$parent_pid" ] || fail "$mode %p: no parent trace: $(ls "$mode.p")"
    check_parent "$mode.p/t.$parent_pid.trace" "$mode %p"
    for pid in $children; do
        if [ $mode = spawn-noenv ]; then
            [ -e "$mode.p/t.$pid.trace" ] && fail "$mode %p: child $pid traced without LD_PRELOAD"
        else
            check_child "$mode.p/t.$pid.trace" "$mode %p" "$pid"
        fi
    done
    echo "$mode: parent $parent_pid and children $(echo $children) as expected"
done
