# torch.profiler (Kineto) with CUDA activities on the real PyTorch over the simulated stack records
# the GPU kernels: every kernel launched inside the profiled window, with the driver's correlation
# id and its (demangled) name, equal to the simulated driver's work log, each linked to its
# cuLaunchKernel event and its aten op. Kineto flushes at stop only if CUPTI has asked it for a
# buffer, which CUPTI does at the first record after a kind is enabled (tests/simcupti/README.md).
. "$SRC/tests/lib.sh"
. "$SRC/tests/torch/env.sh"
command -v c++filt > /dev/null || skip "no c++filt (binutils) to demangle the driver log's kernel names"
N=5
GTSIM_LOG="$PWD/sim.log" torch_run "$TORCH_PY" "$SRC/tests/torch/profiler_gpu.py" prof.json $N > out.txt 2> err.txt ||
    { cat out.txt err.txt; fail "profiler_gpu.py"; }
tail -1 out.txt
# the window's launches: every kernel after the one torch.ones made before the profiler started
grep '^work kind=1 ' sim.log | sed 1d |
    sed 's/.* corr=\([0-9]*\) .* name=\([^ ]*\) api=.*/\1 \2/' | c++filt > want.txt
expect_eq "kernels launched in the window" "$(wc -l < want.txt)" $((2 * N))
grep -v '^window-start$' out.txt | sed '$d' > got.txt
diff want.txt got.txt > diff.txt || { cat diff.txt; fail "the profiler's kernels differ from the driver's launches"; }
expect_eq "summary" "$(tail -1 out.txt)" "profiler_gpu: ok kernels=$((2 * N)) driver=$((2 * N)) linked=$((2 * N)) ordered=$((2 * N))"

# Traced by gputrace as well. CUPTI keeps one pair of buffer callbacks per process; gputrace
# registered its own at cuInit, so when Kineto registers at the profiler's start, gputrace hands
# CUPTI over (its own records flushed first) and says where its GPU timeline ends: the profiler
# gets every kernel of its window as above, gputrace keeps the one launched before (torch.ones),
# and the program runs as untraced (same output, no "unknown buffer" from Kineto).
rm -f sim.log
GTSIM_LOG="$PWD/sim.log" torch_run -t "$PWD/t.trace" "$TORCH_PY" "$SRC/tests/torch/profiler_gpu.py" prof.json $N > out2.txt 2> err2.txt ||
    { cat out2.txt err2.txt; fail "profiler_gpu.py traced"; }
! grep -i 'unknown buffer' err2.txt || fail "Kineto was handed a buffer it did not give"
grep '^work kind=1 ' sim.log | sed 1d |
    sed 's/.* corr=\([0-9]*\) .* name=\([^ ]*\) api=.*/\1 \2/' | c++filt > want2.txt
grep -v '^window-start$' out2.txt | sed '$d' > got2.txt
diff want2.txt got2.txt > diff2.txt || { cat diff2.txt; fail "traced: the profiler's kernels differ from the driver's launches"; }
expect_eq "traced: summary" "$(tail -1 out2.txt)" "profiler_gpu: ok kernels=$((2 * N)) driver=$((2 * N)) linked=$((2 * N)) ordered=$((2 * N))"
"$GT_REPORT" --json t.trace > r.json || fail "report"
expect_eq "gputrace's CUPTI status" "$(jget r.json 'd["trace"]["cupti"]["status"]')" taken
# gputrace's kernels: the fill before the window, with the driver's correlation id
fill_corr=$(grep '^work kind=1 ' sim.log | sed -n 1p | sed 's/.* corr=\([0-9]*\) .*/\1/')
"$GT_REPORT" --dump t.trace | grep ' GPU_KERNEL ' | sed 's/.* corr=\([0-9]*\) .*/\1/' > kern.txt
expect_eq "gputrace's kernels (corr)" "$(cat kern.txt)" "$fill_corr"
"$GT_REPORT" t.trace | grep -q '^gpu timeline  partial: GPU records end where another CUPTI client' ||
    fail "the text report does not say the GPU timeline is partial"
