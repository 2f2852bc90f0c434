# Environment values that do not parse (issue 22): each gets one warning line on stderr, naming
# the variable and the value, and the default applies (never a half-parsed number: atoi("1e3")
# was a 1 ms flush period, GPUTRACE_STACKS=ALL turned stacks off, GPUTRACE_DISABLE=false
# disabled tracing). GPUTRACE_DISABLE disables only for 1/true/yes. One line per variable
# however many threads the program runs.
. "$SRC/tests/lib.sh"
# 4 threads x 100 allocations; the flush period seen through the watermarks of a 400 ms run.
run() { # NAME, then VAR=VALUE... ; runs threads 4 100 then exits after a 400 ms pause
    name=$1; shift
    env "$@" GPUTRACE_OUTPUT="$name.trace" LD_PRELOAD="$GT_PRELOAD" \
        LD_LIBRARY_PATH="$SIMCUPTI_DIR:$SIM_DIR" "$PROGS/exits" return > /dev/null 2> "$name.err" ||
        [ $? = 3 ] || fail "$name: the program failed: $(cat "$name.err")"
}
warned() { grep -c "^gputrace: $1" "$2.err" || true; }
# Each value alone: one warning naming it, nothing else on stderr.
for kv in GPUTRACE_STACK_DEPTH=abc GPUTRACE_STACK_DEPTH=-3 GPUTRACE_STACK_DEPTH=1000 \
    GPUTRACE_COMPRESS=-1 GPUTRACE_COMPRESS=20 GPUTRACE_FLUSH_MS=1e3 GPUTRACE_FLUSH_MS=0 \
    GPUTRACE_CLOCK=bogus GPUTRACE_STACKS=ALL GPUTRACE_STACKS=alloc,bogus GPUTRACE_SAMPLE_MS=x \
    GPUTRACE_DISABLE=maybe GPUTRACE_DEBUG=verbose GPUTRACE_PYTHON=no GPUTRACE_UNWIND=slow \
    GPUTRACE_INFLIGHT_FENCE=on; do
    var=${kv%%=*} val=${kv#*=} n=$((${n:-0} + 1))
    run "w$n" "$kv"
    expect_eq "$kv: warning lines" "$(wc -l < "w$n.err")" 1
    expect_eq "$kv: the warning names variable and value" "$(warned "$var=$val" "w$n")" 1
    head -n 1 "w$n.err"
done
# The defaults applied: stacks on (alloc, launch, sync) at depth 64, compressed chunks, a 100 ms
# flush period (a few watermarks in the 400 ms pause, not hundreds), tracing on.
all="GPUTRACE_STACK_DEPTH=abc GPUTRACE_COMPRESS=-1 GPUTRACE_FLUSH_MS=1e3 GPUTRACE_CLOCK=bogus GPUTRACE_STACKS=ALL GPUTRACE_DISABLE=false"
run bad $all
run good
expect_eq "all bad: one warning each" "$(wc -l < bad.err)" 5
"$GT_REPORT" --json bad.trace > bad.json || fail "report of bad.trace failed"
"$GT_REPORT" --json good.trace > good.json || fail "report of good.trace failed"
for f in "d['stacks']['allocs_without_stack']" "d['memory']['alloc_count']" \
    "[s['function'] for s in d['memory']['by_site']]" "d['trace']['lost_records']"; do
    expect_eq "defaults: $f" "$(jget bad.json "$f")" "$(jget good.json "$f")"
done
wm() { "$GT_REPORT" --dump "$1" | grep -c -i watermark; }
n_wm=$(wm bad.trace)
[ "$n_wm" -ge 3 ] && [ "$n_wm" -le 12 ] || fail "GPUTRACE_FLUSH_MS=1e3: $n_wm watermarks in a 400 ms run, not a 100 ms period"
echo "watermarks: $(wm bad.trace) with GPUTRACE_FLUSH_MS=1e3, $(wm good.trace) by default"
# The file header's min_version (bytes 14-15) says which codecs the chunks may use: packed at the
# default level 1, as without the variable.
minv() { "$PYTHON" -c 'import struct, sys; print(struct.unpack_from("<H", open(sys.argv[1], "rb").read(16), 14)[0])' "$1"; }
expect_eq "defaults: the default codec" "$(minv bad.trace)" "$(minv good.trace)"
# GPUTRACE_DISABLE: only 1/true/yes disable.
for v in 1 true yes YES; do
    run "off_$v" GPUTRACE_DISABLE=$v
    [ ! -e "off_$v.trace" ] || fail "GPUTRACE_DISABLE=$v wrote a trace"
    expect_eq "GPUTRACE_DISABLE=$v: silent" "$(wc -c < "off_$v.err")" 0
done
for v in 0 false no; do
    run "on_$v" GPUTRACE_DISABLE=$v
    [ -s "on_$v.trace" ] || fail "GPUTRACE_DISABLE=$v wrote no trace"
done
exit 0
