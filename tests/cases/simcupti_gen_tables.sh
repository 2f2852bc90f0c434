# tests/simcupti/gen_tables.c and gen_stubs.c are what gen_tables.py makes from the CUPTI headers.
. "$SRC/tests/lib.sh"
home=${CUDA_HOME:-/usr/local/cuda}
for h in cupti_driver_cbid.h cupti_runtime_cbid.h cupti_result.h cupti_activity.h; do
    [ -f "$home/include/$h" ] || skip "CUPTI headers absent ($home/include/$h)"
done
command -v "$PYTHON" >/dev/null 2>&1 || skip "no $PYTHON to run the generator"
"$PYTHON" "$SRC/tests/simcupti/gen_tables.py" --cuda-home "$home" --src-dir "$SRC/tests/simcupti" \
    --out-dir gen || fail "gen_tables.py failed"
for f in gen_tables.c gen_stubs.c; do
    diff -u "$SRC/tests/simcupti/$f" "gen/$f" >"$f.diff" ||
        { head -n 40 "$f.diff"; fail "tests/simcupti/$f is stale: run $PYTHON tests/simcupti/gen_tables.py"; }
done
echo "generated tables match the headers in $home/include"
