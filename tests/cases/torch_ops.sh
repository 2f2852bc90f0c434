# A spread of PyTorch ops beyond elementwise and reductions (cub sorts and selections, random
# numbers, indexing, normalization, losses, pinned/pageable copies) runs on the simulated runtime
# without reaching an unimplemented runtime call.
. "$SRC/tests/lib.sh"
. "$SRC/tests/torch/env.sh"
GTSIM_LOG="$PWD/sim.log" torch_run "$TORCH_PY" "$SRC/tests/torch/ops.py" > out.txt 2>&1 || { cat out.txt; fail "ops.py"; }
cat out.txt
! grep '^rtstub ' sim.log | grep . || fail "unimplemented runtime calls reached"
