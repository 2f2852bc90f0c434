# The shim's unwinder on stacks it does not own (tests/progs/stacks_switch.c): allocations from a
# makecontext coroutine on a malloc'ed stack (interleaved with the main stack by swapcontext),
# from a coroutine whose stack is an array on the main stack, and from a thread on a user-supplied
# stack, while another thread dlopens and dlcloses a library in a loop. The program must succeed
# traced, with the default walker, with GPUTRACE_UNWIND=libunwind and with RLIMIT_STACK unlimited
# (where glibc's main-thread stack range reaches down to the heap), and each of its four sites
# must carry exactly its N allocations of 4 KiB, the same stacks as libunwind's.
. "$SRC/tests/lib.sh"
N=40
# The churned library's path has a length that is a multiple of 8: ThreadSanitizer then sees its
# name's terminating NUL as racing with the dlopen on the other thread, unless the shim reads module
# names as gt_dl_name_len (preload/unwind.c) does. (CI failed so, under a 48-byte path.)
lib=$PWD/libstkalloc.so
while [ $((${#lib} % 8)) -ne 0 ]; do lib=$PWD/_${lib##*/}; done
cp "$PROGS/libstkalloc.so" "$lib" || fail "cannot copy libstkalloc.so"
sites="sorted((s['function'], s['count'], s['bytes'], [f['function'] for f in s['stack']]) for s in d['memory']['by_site'])"
counts="sorted((s['function'], s['count'], s['bytes']) for s in d['memory']['by_site'])"
want="[('co_alloc', $N, $((N * 4096))), ('local_alloc', $N, $((N * 4096))), ('main_alloc', $N, $((N * 4096))), ('user_alloc', $N, $((N * 4096)))]"
for mode in fast libunwind; do
    GPUTRACE_UNWIND=$mode GPUTRACE_STACKS=all traced "$mode.trace" "$PROGS/stacks_switch" $N "$lib" \
        >/dev/null 2>"$mode.err" || fail "stacks_switch failed traced (GPUTRACE_UNWIND=$mode): $(tail -3 "$mode.err")"
    "$GT_REPORT" --json "$mode.trace" > "$mode.json" || fail "report failed ($mode)"
    expect_eq "$mode: sites" "$(jget "$mode.json" "$counts")" "$want"
done
expect_eq "fast: same stacks as libunwind" "$(jget fast.json "$sites")" "$(jget libunwind.json "$sites")"
if (ulimit -s unlimited) 2>/dev/null; then
    (ulimit -s unlimited; GPUTRACE_STACKS=all traced unl.trace "$PROGS/stacks_switch" $N "$lib" \
        >/dev/null 2>unl.err) || fail "stacks_switch failed traced with RLIMIT_STACK unlimited: $(tail -3 unl.err)"
    "$GT_REPORT" --json unl.trace > unl.json || fail "report failed (unlimited)"
    expect_eq "unlimited: sites" "$(jget unl.json "$counts")" "$want"
else
    echo "(RLIMIT_STACK cannot be raised to unlimited here: that part not run)"
fi
echo "switched and user-supplied stacks: $N allocations at each of the 4 sites, as libunwind"
