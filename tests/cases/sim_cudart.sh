# The real libcudart starting up against the simulated driver (no shim): its single dlsym'd
# cuGetProcAddress_v2 answers the "" probe, the self-lookups at 11030/12000 and ~440 lookups,
# legacy and per-thread, all through the resolver (GTSIM_LOG), none failing.
. "$SRC/tests/lib.sh"
rt=""
for d in "$CUDA_HOME/lib64" "$CUDA_HOME/lib"; do
    for f in "$d"/libcudart.so.[0-9]*; do [ -f "$f" ] && rt=$f && break 2; done
done
[ -n "$rt" ] || skip "no libcudart.so.N under $CUDA_HOME"
GTSIM_LOG="$PWD/sim.log" untraced "$PROGS/sim_cudart" "$rt" > out.txt 2>&1 || { cat out.txt; fail "sim_cudart crashed"; }
cat out.txt
[ -s sim.log ] || fail "no GTSIM_LOG output: cudart did not resolve through cuGetProcAddress_v2"
head -n 1 sim.log | grep -q '^getproc2 "" 0 0 -> NULL status=1 rc=0 caller=.*libcudart' ||
    fail "first lookup is not cudart's \"\" probe: $(head -n 1 sim.log)"
grep -q '^getproc2 cuGetProcAddress 11030 0 -> cuGetProcAddress status=0 rc=0' sim.log || fail "no 11030 self-lookup"
grep -q '^getproc2 cuGetProcAddress 12000 0 -> cuGetProcAddress_v2 status=0 rc=0' sim.log || fail "no 12000 self-lookup"
grep -q '^getproc2 cuLaunchKernel 7000 2 -> cuLaunchKernel_ptsz status=0' sim.log || fail "no per-thread cuLaunchKernel lookup"
grep -q '^getproc2 cuCtxGetDevice 13000 0 -> cuCtxGetDevice_v2 status=0' sim.log || fail "no cuCtxGetDevice@13000 lookup"
n=$(grep -c '^getproc' sim.log)
[ "$n" -ge 300 ] || fail "only $n lookups"
! grep '^getproc' sim.log | grep -v ' rc=0 ' | head -n 5 | grep . || fail "lookups failed"
! grep '^getproc' sim.log | grep -v 'caller=.*libcudart' | head -n 5 | grep . || fail "lookups from elsewhere"
echo "$n lookups, $(grep -c '^getproc.* 2 -> ' sim.log) per-thread"
