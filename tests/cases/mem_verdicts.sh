# OOM forensics end to end against the simulated driver: true exhaustion, other processes holding
# most of the card, and a caching allocator (fail, free its cache, retry). Each figure follows
# from the scenario (tests/progs/mem_scenarios.c) and the driver knobs set here; the rules are
# docs/ANALYSES.md "OOM verdicts".
. "$SRC/tests/lib.sh"
MiB=1048576 GiB=1073741824
scenario() { # name env...
    name=$1; shift; rm -f "$name.trace"
    env "$@" sh -c 'LD_LIBRARY_PATH="$SIMCUPTI_DIR:$SIM_DIR" GPUTRACE_OUTPUT="$1.trace" LD_PRELOAD="$GT_PRELOAD" "$PROGS/mem_scenarios" "$1"' _ "$name" \
        >"$name.out" 2>&1 || fail "$name: program failed: $(cat "$name.out")"
    "$GT_REPORT" --json "$name.trace" >"$name.json" || fail "$name: report failed"
    "$GT_REPORT" "$name.trace" >"$name.txt" || fail "$name: text report failed"
}
export GT_PRELOAD
oom() { jget "$1.json" "[(o['$2']) for o in d['memory']['ooms']]"; }
# (1) exhaustion: 16 GiB card, 512 MiB context overhead, 12 GiB held, 4 GiB asked, 3.5 GiB free.
scenario exhausted GTSIM_MEM_BYTES=$((16 * GiB)) GTSIM_CTX_OVERHEAD_BYTES=$((512 * MiB))
expect_eq "exhausted: verdict" "$(oom exhausted verdict)" "['exhausted']"
expect_eq "exhausted: figures" "$(jget exhausted.json "[(o['requested_bytes'], o['free_bytes'], o['total_bytes'], o['held_bytes'], o['unaccounted_bytes'], o['overhead_estimate_bytes'], o['others_bytes']) for o in d['memory']['ooms']]")" \
    "[($((4 * GiB)), $((7 * GiB / 2)), $((16 * GiB)), $((12 * GiB)), $((512 * MiB)), $((512 * MiB)), 0)]"
expect_eq "exhausted: site of the failed call" "$(jget exhausted.json "[o['site']['function'] for o in d['memory']['ooms']]")" "['try_batch']"
expect_eq "exhausted: top holder" "$(jget exhausted.json "[(h['function'], h['bytes'], h['count']) for h in d['memory']['ooms'][0]['top_holders']]")" \
    "[('hold_weights', $((12 * GiB)), 3)]"
# 3 allocations that succeeded and 1 that failed are 4 calls
expect_eq "exhausted: by_api" "$(jget exhausted.json "[(a['api'], a['calls'], a['count'], a['failed']) for a in d['memory']['by_api']]")" \
    "[('cuMemAlloc_v2', 4, 3, 1)]"
grep -Eq "^  cuMemAlloc_v2 +device +4 +12.0 GiB +1 " exhausted.txt || fail "exhausted: text api row: $(grep '^  cuMemAlloc_v2' exhausted.txt)"
expect_eq "exhausted: no retry" "$(jget exhausted.json "d['memory']['ooms'][0]['retry']['outcome']")" none
grep -q "try_batch (mem_scenarios.c:[0-9]*) of 4.00 GiB on dev 0 -> exhausted" exhausted.txt || fail "exhausted: text: $(cat exhausted.txt)"
grep -q "held by: 12.0 GiB hold_weights" exhausted.txt || fail "exhausted: text holders"
grep -q "advice: this process needs more" exhausted.txt || fail "exhausted: text advice"
# (2) other processes: 80 GiB card, 60 GiB held by others, 512 MiB overhead; 12 GiB held, 10 GiB
# asked, 7.5 GiB free. Unaccounted 60.5 GiB; the overhead estimate is capped at 1 GiB.
scenario others GTSIM_MEM_BYTES=$((80 * GiB)) GTSIM_OTHER_BYTES=$((60 * GiB)) GTSIM_CTX_OVERHEAD_BYTES=$((512 * MiB))
expect_eq "others: verdict" "$(oom others verdict)" "['other_processes']"
expect_eq "others: figures" "$(jget others.json "[(o['requested_bytes'], o['free_bytes'], o['held_bytes'], o['unaccounted_bytes'], o['overhead_estimate_bytes'], o['others_bytes']) for o in d['memory']['ooms']]")" \
    "[($((10 * GiB)), $((15 * GiB / 2)), $((12 * GiB)), $((121 * GiB / 2)), $GiB, $((119 * GiB / 2)))]"
grep -q "advice: other processes hold memory" others.txt || fail "others: text advice"
# (4) cached: 4 x 3 GiB segments, 3 of them unused in the allocator's cache; 6 GiB fails with
# 3.5 GiB free; the allocator frees 9 GiB in 3 calls and the retry succeeds.
scenario cached GTSIM_MEM_BYTES=$((16 * GiB)) GTSIM_CTX_OVERHEAD_BYTES=$((512 * MiB))
expect_eq "cached: verdict" "$(oom cached verdict)" "['cached']"
expect_eq "cached: retry" "$(jget cached.json "[(o['retry']['outcome'], o['retry']['freed_bytes'], o['retry']['freed_count'], o['retry']['requested_bytes']) for o in d['memory']['ooms']]")" \
    "[('succeeded', $((9 * GiB)), 3, $((6 * GiB)))]"
expect_eq "cached: holders" "$(jget cached.json "[(h['function'], h['bytes'], h['count']) for h in d['memory']['ooms'][0]['top_holders']]")" \
    "[('cache_segments', $((12 * GiB)), 4)]"
expect_eq "cached: no temporaries (frees are not directly after their allocation)" "$(jget cached.json "d['memory']['temporary_allocations']['count']")" 0
grep -q "then freed 9.00 GiB in 3 calls and retried: succeeded" cached.txt || fail "cached: text retry: $(cat cached.txt)"
# (5) refill: the same card and holders as (1); try_batch 4 GiB fails, 2 of the 3 weights are
# freed, 4 GiB comes from another line, then try_batch asks for 1 GiB (smaller: another request).
# Nothing retried the failed request: exhausted, no retry (it was 'cached', the unrelated 4 GiB
# taken for the retry), the 8 GiB freed while it waited still said.
scenario refill GTSIM_MEM_BYTES=$((16 * GiB)) GTSIM_CTX_OVERHEAD_BYTES=$((512 * MiB))
expect_eq "refill: verdict" "$(oom refill verdict)" "['exhausted']"
expect_eq "refill: retry" "$(jget refill.json "[(o['retry']['outcome'], o['retry']['freed_bytes'], o['retry']['freed_count'], o['retry']['requested_bytes']) for o in d['memory']['ooms']]")" \
    "[('none', $((8 * GiB)), 2, None)]"
grep -q "retried" refill.txt && fail "refill: text says it retried: $(grep retried refill.txt)"
# Stacks off: the verdict needs no stacks; the holders are the no-stack bucket.
scenario exhausted GPUTRACE_STACKS=none GTSIM_MEM_BYTES=$((16 * GiB)) GTSIM_CTX_OVERHEAD_BYTES=$((512 * MiB))
expect_eq "stacks off: verdict" "$(oom exhausted verdict)" "['exhausted']"
expect_eq "stacks off: holders" "$(jget exhausted.json "[(h['site'], h['bytes']) for h in d['memory']['ooms'][0]['top_holders']]")" \
    "[('<no stack recorded>', $((12 * GiB)))]"
