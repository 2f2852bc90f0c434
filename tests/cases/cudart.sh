# The real NVIDIA libcudart (shared and nvcc's default static) as a client: every driver entry
# point it resolves at start-up must pass through the shim's resolver, and each traced family
# must be answered with the wrapper of exactly the ABI variant it asked for (issue 2).
. "$SRC/tests/lib.sh"
NVCC=${NVCC:-$CUDA_HOME/bin/nvcc}
[ -x "$NVCC" ] || skip "nvcc not found at $NVCC: cannot build the cudart client"
for mode in shared static; do
  "$NVCC" -cudart "$mode" -o "probe-$mode" "$SRC/tests/cudart/probe.cu" 2> "nvcc-$mode.log" ||
    { cat "nvcc-$mode.log"; fail "nvcc -cudart $mode failed"; }
  rm -f "sim-$mode.log"
  out=$(GTSIM_LOG="$PWD/sim-$mode.log" traced "$mode.trace" "./probe-$mode") || fail "$mode: probe crashed: $out"
  echo "$mode: $out"
  "$GT_REPORT" --dump "$mode.trace" > "$mode.dump" || fail "$mode: dump failed"
  "$PYTHON" "$SRC/tests/cudart/check_resolver.py" "sim-$mode.log" "$mode.dump" || fail "$mode: resolver check failed"
done
