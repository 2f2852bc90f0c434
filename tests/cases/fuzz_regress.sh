#!/bin/sh
# The fuzz corpus (tests/fuzz/corpus: seeds plus every input that once crashed, hung, leaked or
# blew up the analyzer) through the fuzz target's entry point, without libFuzzer, under
# AddressSanitizer and UndefinedBehaviorSanitizer: each input must end in a report or a clean
# refusal. Builds the driver with `make fuzz-regress` (clang; skipped without clang's libFuzzer).
# Its make builds only under $O/fuzz, which no other case reads: it runs beside the others (the
# cases that run make on the whole build directory, install and make_noop, run alone, after it).
. "$SRC/tests/lib.sh"
# The driver is a clang ASan+UBSan build whatever the suite's build: under make check-san it would
# be the plain suite's driver again, built and run once more.
[ -z "$asan_rt$tsan_rt" ] || skip "the regression driver is built with ASan+UBSan in every suite: it runs in the plain suite (make test)"
FUZZ_CC=${FUZZ_CC:-clang}
command -v "$FUZZ_CC" >/dev/null 2>&1 || skip "no $FUZZ_CC: the fuzz targets are built with clang"
printf 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { return 0; }\n' >probe.c
"$FUZZ_CC" -fsanitize=fuzzer,address,undefined -o probe probe.c >probe.log 2>&1 ||
    skip "clang's libFuzzer runtime is missing ($FUZZ_CC -fsanitize=fuzzer fails: $(head -n 1 probe.log))"
# A sub-make of our own: the outer make's flags and jobserver do not apply here.
MAKEFLAGS= MFLAGS= MAKELEVEL= make -s -C "$SRC" O="$O" FUZZ_CC="$FUZZ_CC" fuzz-regress >out.txt 2>&1 ||
    { cat out.txt; fail "make fuzz-regress failed"; }
cat out.txt
grep -q "inputs, all handled" out.txt || fail "the regression driver did not finish"
n=$(ls "$SRC/tests/fuzz/corpus" | wc -l | tr -d ' ')
expect_eq "inputs run" "$(sed -n 's/^\([0-9]*\) inputs, all handled$/\1/p' out.txt)" "$n"
