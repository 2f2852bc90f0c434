# Python ctypes reaches the driver through dlsym on libcuda's handle (issue 2).
. "$SRC/tests/lib.sh"
command -v "$PYTHON" >/dev/null || skip "no $PYTHON"
MiB=1048576
out=$(traced py.trace "$PYTHON" "$SRC/tests/progs/ctypes_alloc.py") || fail "script failed: $out"
expect_eq output "$out" ok
"$GT_REPORT" --json py.trace > py.json || fail "report failed"
j() { jget py.json "$1"; }
expect_eq alloc_count "$(j "d['memory']['alloc_count']")" 4
expect_eq free_count "$(j "d['memory']['free_count']")" 1
expect_eq peak "$(j "d['memory']['peak_bytes']")" $((10 * MiB))
expect_eq leaked "$(j "d['memory']['leaked_bytes']")" $((8 * MiB))
expect_eq launches "$(j "d['timeline']['launch_count']")" 5
expect_eq kernels "$(j "[(k['name'], k['count']) for k in d['timeline']['top_kernels']]")" "[('py_kernel', 5)]"
echo "$(j "d['process']['cmdline']")" | grep -q ctypes_alloc.py || fail "command line not recorded"
