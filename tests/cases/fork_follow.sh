# Forked children with GPUTRACE_FOLLOW_FORK=1 (launcher --follow-fork), issue 22: a child that
# uses CUDA after fork (and fails to, as on a real GPU: CUDA_ERROR_NOT_INITIALIZED, the
# simulated driver does the same) traces into its own file, with its failed calls and their
# error codes and its own call stacks; the parent's trace is exactly what it is without the
# option; a child forked before the parent's cuInit traces its successful work; without %p in
# the name the child writes NAME.<pid> beside the parent's file; forks while other threads are
# inside the tracer neither hang nor touch the parent's file. The default stays: no child trace.
. "$SRC/tests/lib.sh"
[ -z "$tsan_rt" ] || skip "under ThreadSanitizer: it cannot start threads in a child forked from a multi-threaded process (the child's flusher; tests/progs/sim_selftest.c skips its fork check there too)"
MiB=1048576
j() { jget "$1" "$2"; }
report() { "$GT_REPORT" --json "$1" > "$1.json" 2> "$1.err" || fail "report of $1: $(cat "$1.err")"; }
for follow in 0 1; do
    got=$(GPUTRACE_FOLLOW_FORK=$follow traced "use$follow.%p.trace" "$PROGS/forkchild" use) ||
        fail "forkchild use (follow=$follow) failed: $got"
    expect_eq "follow=$follow: output" "$got" "child: cuMemAlloc 3, cuInit 3, cuMemAlloc 3
parent: done"
done
expect_eq "default: no child trace" "$(ls use0.*.trace | wc -l)" 1
expect_eq "follow: parent and child traces" "$(ls use1.*.trace | wc -l)" 2
for f in use0.*.trace use1.*.trace; do report "$f"; done
# Which file is whose: the child's ppid is the parent's pid.
parent0=$(ls use0.*.trace)
pids=$(ls use1.*.trace | cut -d. -f2 | tr '\n' ' ')
for f in use1.*.trace; do
    if [ "$(j "$f.json" "str(d['process']['ppid']) in '$pids'.split()")" = True ]; then child=$f; else parent=$f; fi
done
[ -n "${child:-}" ] && [ -n "${parent:-}" ] || fail "cannot tell parent and child traces apart"
# The parent's trace is what it is without the option.
q="(d['memory']['alloc_count'], d['memory']['failed_count'], d['timeline']['launch_count'], d['trace']['clean_end'], d['trace']['lost_records'], [(s['function'], s['count']) for s in d['memory']['by_site']])"
expect_eq "parent's trace unchanged" "$(j "$parent.json" "$q")" "$(j "$parent0.json" "$q")"
expect_eq "parent's figures" "$(j "$parent.json" "$q")" "(5, 0, 1, True, 0, [('main', 3), ('main', 2)])"
# The child's: its two failed allocations with their code, their sizes and its own stacks.
expect_eq "child's failures" "$(j "$child.json" "[(o['api'], o['result'], o['requested_bytes'], o['site']['function']) for o in d['memory']['ooms']]")" \
    "[('cuMemAlloc_v2', 3, $((2 * MiB)), 'child'), ('cuMemAlloc_v2', 3, $((3 * MiB)), 'child')]"
expect_eq "child's trace" "$(j "$child.json" "(d['memory']['alloc_count'], d['trace']['clean_end'], d['trace']['lost_records'], d['process']['cmdline'][-1])")" "(0, True, 0, 'use')"
echo "parent $parent: $(j "$parent.json" "$q"); child $child: 2 failures, result 3"
# A child forked before cuInit: its own successful work.
GPUTRACE_FOLLOW_FORK=1 traced "early.%p.trace" "$PROGS/forkchild" early > early.out || fail "forkchild early failed"
for f in early.*.trace; do report "$f"; done
expect_eq "early: allocation counts of the two traces" "$(for f in early.*.trace; do j "$f.json" "d['memory']['alloc_count']"; done | sort | tr '\n' ' ')" "1 5 "
# No CUDA call in the child: no trace of its own.
GPUTRACE_FOLLOW_FORK=1 traced "none.%p.trace" "$PROGS/forkchild" none > /dev/null || fail "forkchild none failed"
expect_eq "a child without CUDA calls writes nothing" "$(ls none.*.trace | wc -l)" 1
# No %p: the child writes NAME.<its pid>, never into the parent's file.
GPUTRACE_FOLLOW_FORK=1 traced same.trace "$PROGS/forkchild" use > /dev/null 2> same.err || fail "forkchild (same name) failed"
report same.trace
expect_eq "same name: the parent's file" "$(j same.trace.json "$q")" "(5, 0, 1, True, 0, [('main', 3), ('main', 2)])"
expect_eq "same name: the child's file" "$(ls same.trace.* | grep -v json | grep -v err | wc -l)" 1
# 20 forks while 4 threads allocate inside the tracer (tests/progs/exits.c fork): no hang, the
# parent's trace as without the option, one trace per child.
got=$(set +e; GPUTRACE_FOLLOW_FORK=1 timeout 120 sh -c '. "$SRC/tests/lib.sh"; traced "load.%p.trace" "$PROGS/exits" fork'; echo "rc=$?")
expect_eq "fork under load" "$got" "fork
forked 20 children
rc=3"
expect_eq "fork under load: traces" "$(ls load.*.trace | wc -l)" 21
for f in load.*.trace; do
    "$GT_REPORT" --json "$f" > "$f.json" 2> "$f.err" || fail "report of $f: $(cat "$f.err")"
done
expect_eq "fork under load: the parent's" "$(for f in load.*.trace; do j "$f.json" "d['memory']['alloc_count'] >= 100 and d['trace']['clean_end'] and d['timeline']['launch_count'] == 10"; done | sort | uniq -c | tr -s ' ')" \
    " 20 False
 1 True"
# The launcher's --follow-fork sets it.
LD_PRELOAD="$asan_rt$tsan_rt" LD_LIBRARY_PATH="$SIMCUPTI_DIR:$SIM_DIR" "$GT_LAUNCHER" --follow-fork -o "launched.%p.trace" -- "$PROGS/forkchild" use > /dev/null 2> launched.err ||
    fail "gputrace --follow-fork: $(cat launched.err)"
expect_eq "launcher --follow-fork: traces" "$(ls launched.*.trace | wc -l)" 2
exit 0
