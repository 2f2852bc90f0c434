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
expect_eq "summary" "$(tail -1 out.txt)" "profiler_gpu: ok kernels=$((2 * N)) driver=$((2 * N)) linked=$((2 * N))"
