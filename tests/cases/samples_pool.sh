# gt_rec_pool_usage: a stream-ordered pool's reserved/used bytes as the (simulated) driver
# reports them, at exactly the events the shim samples. Expected figures come from the simulated
# driver's pool rules (tests/sim/mem.c): an allocation is charged its size rounded up to
# GTSIM_ALLOC_GRANULARITY (2 MiB here) and grows the pool's reservation only by what it lacks; a
# free lowers `used` only; cuMemPoolTrimTo(P, 0) releases down to `used`. Scenario: tests/progs/samples.c.
# test: alone (samples at a given period: cases beside it would change what they catch)
. "$SRC/tests/lib.sh"
MiB=1048576
run() { # trace sample_ms
    GTSIM_ALLOC_GRANULARITY=$((2 * MiB)) GTSIM_MEM_BYTES=$((64 * MiB)) GPUTRACE_SAMPLE_MS=$2 \
        traced "$1" "$PROGS/samples" pool > "$1.out" || fail "program failed: $(cat "$1.out")"
    "$GT_REPORT" --dump "$1" > "$1.txt" || fail "dump failed"
    grep ' POOL_USAGE ' "$1.txt" | sed 's/^[0-9]* tid=[0-9]* POOL_USAGE - //' > "$1.got"
}
row() { # pool reserved reserved_high used used_high (MiB)
    echo "pool=$1 device=0 reserved=$(($2 * MiB)) reserved_high=$(($3 * MiB)) used=$(($4 * MiB)) used_high=$(($5 * MiB))"
}
handles() { # the handles the driver gave this run (they differ from run to run)
    P=$(sed -n 's/^pool=\(0x[0-9a-f]*\) .*/\1/p' "$1.out")
    D=$(sed -n 's/.* current=\(0x[0-9a-f]*\)$/\1/p' "$1.out")
    [ -n "$P" ] && [ -n "$D" ] || fail "no pool handles printed"
}
run every.trace 0
handles every.trace
{
    row $P 0 0 0 0 # cuMemPoolCreate
    row $P 4 4 4 4 # a: 3 MiB -> 4 MiB charged, reserved
    row $P 6 6 6 6 # b: 1 MiB -> 2 MiB
    row $P 6 6 2 6 # free a
    row $P 6 6 4 6 # c: 2 MiB from the 4 MiB free inside P
    row $P 4 6 4 6 # trim to 0: down to used
    row $P 4 6 4 6 # failed 100 MiB request
    row $D 2 2 2 2 # cuMemAllocAsync from the device's current pool
    row $D 2 2 0 2 # free d
    row $P 4 6 2 6 # free b
    row $P 4 6 0 6 # free c
} > every.want
diff every.want every.trace.got || fail "GPUTRACE_SAMPLE_MS=0: samples differ"
# Rate-limited to one per pool per 100 s: creation, trim and failure always; D's first sample.
run slow.trace 100000
handles slow.trace
{
    row $P 0 0 0 0
    row $P 4 6 4 6
    row $P 4 6 4 6
    row $D 2 2 2 2
} > slow.want
diff slow.want slow.trace.got || fail "GPUTRACE_SAMPLE_MS=100000: samples differ"
# The application sees no difference.
GTSIM_ALLOC_GRANULARITY=$((2 * MiB)) GTSIM_MEM_BYTES=$((64 * MiB)) untraced "$PROGS/samples" pool > plain.out ||
    fail "untraced run failed"
expect_eq "output" "$(sed 1d plain.out)" "$(sed 1d every.trace.out)"
