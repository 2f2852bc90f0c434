# Text and JSON show a failed allocation the same way because both read the report model's view
# of it (analyzer/model/views.h): the holders grouped by call site, largest first, five of them,
# and a failure that repeats the one before (its retry failed, same request) explained once.
# tests/progs/mem_scenarios.c "holders": site_a holds 550 MiB through two stacks (300 + 250 MiB),
# so it leads by site though site_b's single stack (500 MiB) is larger than either of its own.
. "$SRC/tests/lib.sh"
MiB=1048576 GiB=1073741824
LD_LIBRARY_PATH="$SIMCUPTI_DIR:$SIM_DIR" GPUTRACE_OUTPUT=h.trace LD_PRELOAD="$GT_PRELOAD" \
    GTSIM_MEM_BYTES=$((16 * GiB)) "$PROGS/mem_scenarios" holders > h.out 2>&1 || fail "program: $(cat h.out)"
"$GT_REPORT" --json h.trace > h.json || fail "json report"
"$GT_REPORT" h.trace > h.txt || fail "text report"
expect_eq "json: holders by site" \
    "$(jget h.json "[(h['function'], h['bytes'], h['count']) for h in d['memory']['ooms'][0]['top_holders']]")" \
    "[('site_a', $((550 * MiB)), 2), ('site_b', $((500 * MiB)), 1), ('site_c', $((400 * MiB)), 1), ('site_d', $((350 * MiB)), 1), ('site_e', $((200 * MiB)), 1)]"
# The text's "held by:" block: the same sites in the same order.
got=$(awk '/held by:/ {on = 1} on && /advice:/ {exit} on {print}' h.txt |
    sed -n 's/.* \(site_[a-f]\) (mem_scenarios.c:[0-9]*)$/\1/p' | tr '\n' ' ')
expect_eq "text: holders by site" "$got" "site_a site_b site_c site_d site_e "
grep -q "held by: 550 MiB site_a" h.txt || fail "text: first holder line: $(cat h.txt)"
# The second failure repeats the first (retry failed, same 16 GiB): listed in JSON with
# repeat_of, explained once in text.
expect_eq "json: failures and repeats" "$(jget h.json "[(o['requested_bytes'], o['retry']['outcome'], o['repeat_of']) for o in d['memory']['ooms']]")" \
    "[($((16 * GiB)), 'failed', None), ($((16 * GiB)), 'none', 0)]"
expect_eq "text: failures explained" "$(grep -c 'of 16.0 GiB on dev 0 -> exhausted' h.txt)" 1
echo "holders: $got; the repeated failure explained once"
