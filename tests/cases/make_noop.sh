# After the build this suite runs on (make all fixtures, as make test does first), make has
# nothing left to do: no object rebuilt because an earlier make deleted it as intermediate, no
# target that is always out of date. Fails with what make would still run.
# test: alone (runs make in the build directory)
. "$SRC/tests/lib.sh"
command -v make > /dev/null 2>&1 || skip "make not installed"
[ -x "$GT_REPORT" ] || fail "no $GT_REPORT (run make first)"
# O as the build was given it: relative to the tree when inside it (run.sh made it absolute), so
# that the targets match the dependency files the compiler wrote.
o=${O#"$SRC"/}
# A sub-make of our own: the outer make's flags and jobserver do not apply here.
if ! MAKEFLAGS= MFLAGS= MAKELEVEL= make -C "$SRC" -q O="$o" all fixtures > /dev/null 2>&1; then
    MAKEFLAGS= MFLAGS= MAKELEVEL= make -C "$SRC" -n O="$o" all fixtures 2>&1 | head -n 20
    fail "make all fixtures would still do the above after the build"
fi
echo "make all fixtures: nothing to do"
