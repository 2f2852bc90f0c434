# Host samples and exec (issue 20): a thread sampled on CPU at a high rate execs 40 times in a
# row, with its signals unblocked and blocked. A sample signal pending at the exec would outlive
# it and kill the new program (the default action of a real-time signal: status 128+64); the
# exec wrappers pause the thread's sampling and take such a signal back. Each image is traced and
# sampled on CPU (its own trace file says so; at least half of them, whatever the load).
# test: alone (host samples at a given period: cases beside it would change what they catch)
. "$SRC/tests/lib.sh"
[ -r /proc/self/task/$$/syscall ] || skip "no /proc/PID/task/TID/syscall on this kernel"
N=40
for mode in plain masked; do
    arg=; [ $mode = plain ] || arg=$mode
    got=$(set +e; GPUTRACE_SAMPLE_HZ=10000 traced $mode.trace "$PROGS/execloop" $N $arg 2>$mode.err; echo "rc=$?")
    expect_eq "$mode: output and exit status" "$got" "execloop ok
rc=0"
    sampled=0
    for k in $(seq 0 $((N - 1))) ""; do
        t=img$k.trace; [ -n "$k" ] || t=$mode.trace
        "$GT_REPORT" --dump $t > $t.dump || fail "$mode: $t: dump failed"
        ! grep -q " HOST_SAMPLE .*flags=on_cpu" $t.dump || sampled=$((sampled + 1))
    done
    # Most images must have been sampled for the run to mean anything (a sampler thread that
    # never ran would prove nothing); a loaded machine's sampler thread misses an image's 50 ms
    # now and then (35 of 41 at load average 9 with other builds running).
    [ $sampled -ge $((N / 2)) ] || fail "$mode: $sampled of $((N + 1)) images sampled on CPU"
    echo "$mode: $sampled of $((N + 1)) images sampled on CPU"
    rm -f img*.trace
done
# A failed exec returns its error, and the thread is sampled again for the 100 ms after it.
got=$(GPUTRACE_SAMPLE_HZ=1000 traced fail.trace "$PROGS/execloop" 1 fail) || fail "fail: run failed: $got"
expect_eq "fail: output" "$got" "execl: -1 No such file or directory
execloop ok"
"$GT_REPORT" --dump fail.trace > fail.dump || fail "fail: dump failed"
# (records in the order they were written: samples after the 8 KiB allocation were taken after
# the failed exec; 100 ms at 1000 Hz, a loaded machine's sampler missing many rounds)
n=$(awk '/ ALLOC .*size=8192 / { after = 1 } after && / HOST_SAMPLE .*flags=on_cpu/ { n++ } END { print n + 0 }' fail.dump)
[ "$n" -ge 10 ] || fail "fail: $n samples on CPU after the failed exec, want >= 10 (100 ms at 1000 Hz)"
echo "plain and masked: $N execs each, every image ran to its end; $n samples on CPU after a failed exec"
