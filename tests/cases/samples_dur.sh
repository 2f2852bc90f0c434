# dur_ns of allocation, failed allocation and free records: the time inside the real call. With
# GTSIM_ALLOC_LATENCY_NS the simulated driver sleeps that long inside every device allocation
# (failed ones included, once the arguments are valid), so those records must say at least that.
# test: alone (samples at a given period: cases beside it would change what they catch)
. "$SRC/tests/lib.sh"
lat=3000000
GTSIM_MEM_BYTES=67108864 GTSIM_ALLOC_LATENCY_NS=$lat traced a.trace "$PROGS/errors" > a.out ||
    fail "program failed"
GTSIM_MEM_BYTES=67108864 traced b.trace "$PROGS/errors" > b.out || fail "program failed"
"$GT_REPORT" --dump a.trace > a.txt && "$GT_REPORT" --dump b.trace > b.txt || fail "dump failed"
durs() { grep -E " $1 " "$2" | sed -n 's/.* dur_ns=\([0-9]*\).*/\1/p'; }
# errors.c: cuMemAlloc 40 MiB succeeds twice (a, then b after freeing a); one 40 MiB fails OOM.
expect_eq "allocs" "$(durs 'ALLOC cuMemAlloc_v2' a.txt | wc -l)" 2
expect_eq "OOM failures" "$(grep -c ' ALLOC_FAIL cuMemAlloc_v2 .*result=2 ' a.txt)" 1
expect_eq "frees" "$(durs 'FREE' a.txt | wc -l)" "$(grep -c ' FREE ' a.txt)"
for d in $(durs 'ALLOC cuMemAlloc_v2' a.txt) \
         $(grep ' ALLOC_FAIL cuMemAlloc_v2 .*result=2 ' a.txt | sed 's/.* dur_ns=\([0-9]*\).*/\1/'); do
    [ "$d" -ge $lat ] || fail "dur_ns $d < simulated latency $lat"
    [ "$d" -lt 4294967295 ] || fail "dur_ns $d saturated"
done
for d in $(durs 'ALLOC' b.txt) $(durs 'ALLOC_FAIL' b.txt) $(durs 'FREE' a.txt) $(durs 'FREE' b.txt); do
    [ "$d" -gt 0 ] || fail "a dur_ns of 0 (unknown) was written"
done
# Every allocation record is written whole (72 bytes), stack or not: dur_ns is always there.
GTSIM_MEM_BYTES=67108864 GPUTRACE_STACK_DEPTH=0 traced c.trace "$PROGS/errors" > c.out || fail "program failed"
"$GT_REPORT" --dump c.trace > c.txt || fail "dump failed"
expect_eq "no stacks" "$(grep -c 'stack=' c.txt)" 0
for d in $(durs 'ALLOC' c.txt) $(durs 'ALLOC_FAIL' c.txt); do
    [ "$d" -gt 0 ] || fail "dur_ns missing without stacks"
done
