# gt_rec_meminfo samples: cuMemGetInfo of the current device at allocations and frees (at most
# once per device per GPUTRACE_SAMPLE_MS) and after every failed allocation. free must equal
# GTSIM_MEM_BYTES - other processes - context overhead (one primary context) - live bytes, with
# live bytes from the scenario in tests/progs/samples.c (meminfo).
# test: alone (samples at a given period: cases beside it would change what they catch)
. "$SRC/tests/lib.sh"
MiB=1048576
T=$((1024 * MiB)) other=$((100 * MiB)) ovh=$((50 * MiB))
run() { # trace sample_ms
    GTSIM_MEM_BYTES=$T GTSIM_OTHER_BYTES=$other GTSIM_CTX_OVERHEAD_BYTES=$ovh GPUTRACE_SAMPLE_MS=$2 \
        traced "$1" "$PROGS/samples" meminfo > "$1.out" || fail "program failed: $(cat "$1.out")"
    "$GT_REPORT" --dump "$1" > "$1.txt" || fail "dump failed"
    grep ' MEMINFO ' "$1.txt" | sed 's/^[0-9]* tid=[0-9]* MEMINFO - //' > "$1.got"
}
row() { echo "device=0 free=$((T - other - ovh - $1 * MiB)) total=$T"; } # live MiB
run every.trace 0
{
    row 10 # alloc a (10 MiB)
    row 30 # alloc b (20 MiB)
    row 20 # free a
    row 20 # failed 2 GiB allocation
    row 0  # free b
} > every.want
diff every.want every.trace.got || fail "GPUTRACE_SAMPLE_MS=0: samples differ"
expect_eq "failure evidence" "$(grep -c " ALLOC_FAIL .* free=$((T - other - ovh - 20 * MiB)) total=$T " every.trace.txt)" 1
run slow.trace 100000
{
    row 10 # the first event of the device
    row 20 # the failure, always
} > slow.want
diff slow.want slow.trace.got || fail "GPUTRACE_SAMPLE_MS=100000: samples differ"
# Default period (100 ms): the first event and the failure at least; never more than one per event.
run default.trace ""
expect_eq "default: first sample" "$(head -n 1 default.trace.got)" "$(row 10)"
grep -qx "$(row 20)" default.trace.got || fail "default: no sample after the failure"
[ "$(wc -l < default.trace.got)" -le 5 ] || fail "default: more samples than events"
