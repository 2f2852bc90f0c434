# Python frames in host samples (issue 20): the real PyTorch on the simulated stack, a training
# loop whose GPU idles while the main thread is in load_batch (tests/torch/loader.py), sleeping
# (off CPU: walked by the sampler thread, no signal) or in a pure-Python loop (on CPU: the
# signal's handler reads the Python frames by offsets), or in a torch.utils.data.DataLoader whose
# dataset sleeps in __getitem__ (data loading: frames in torch/utils/data). The report's idle time
# by host site names the Python line (in load_batch, or Items.__getitem__), with its class, for
# most of the idle time; the gaps' causes are host busy for >= 90% of the idle time (sleep, spin).
# test: alone (gaps of given lengths: cases beside it would stretch them)
. "$SRC/tests/lib.sh"
. "$SRC/tests/torch/env.sh"
[ -r /proc/self/task/$$/syscall ] || skip "no /proc/PID/task/TID/syscall on this kernel"
src="$SRC/tests/torch/loader.py"
for m in "sleep io_wait load_batch" "spin cpu load_batch" "dataloader data_loading Items.__getitem__"; do
    set -- $m
    fn=$3
    line=$(grep -n "LOAD:$1\$" "$src" | cut -d: -f1)
    GPUTRACE_SAMPLE_HZ=${GPUTRACE_SAMPLE_HZ:-200} torch_run -t "$PWD/$1.trace" "$TORCH_PY" "$src" $1 12 > $1.out 2>&1 ||
        { cat $1.out; fail "$1: loader.py failed"; }
    grep -q "loader ok $1 12" $1.out || fail "$1: $(cat $1.out)"
    "$GT_REPORT" --json $1.trace > $1.json || fail "$1: report failed"
    got=$("$PYTHON" - $1.json "$line" $2 "$fn" <<'PY'
import json, sys
dev = json.load(open(sys.argv[1]))["timeline"]["devices"][0]
rows = dev["idle_by_host_site"] or []
idle = sum(e["idle_ns"] for e in rows)
mine = sum(e["idle_ns"] for e in rows if (e["site"] or "").startswith(sys.argv[4] + " (")
           and (e["site"] or "").endswith("loader.py:%s)" % sys.argv[2]) and e["class"] == sys.argv[3])
print("%.2f %.1f %.1f" % (mine / idle if idle else 0, mine / 1e6, idle / 1e6))
PY
)
    set -- $1 $2 $got
    echo "$1: $fn (loader.py:$line) as $2 holds $4 ms of $5 ms idle ($3)"
    "$PYTHON" -c "import sys; sys.exit(not $3 >= 0.6)" ||
        fail "$1: $fn (loader.py:$line)/$2 holds $4 of $5 ms idle; sites: $(jget $1.json "[(e['site'], e['class'], round(e['idle_ns']/1e6, 1)) for e in d['timeline']['devices'][0]['idle_by_host_site']][:6]")"
    # The gaps' causes: each step starts with x.cuda(), an async copy that ends the gap; linked
    # to its call, the gap is the host's (host busy) for ~all of its idle time, not unknown.
    [ "$1" = dataloader ] && continue
    busy=$(jget $1.json "round(d['timeline']['devices'][0]['idle_by_cause']['host_busy']['idle_ns'] / max(d['timeline']['devices'][0]['idle_ns'], 1), 3)")
    echo "$1: host busy holds $busy of the idle time"
    "$PYTHON" -c "import sys; sys.exit(not $busy >= 0.9)" ||
        fail "$1: host busy holds $busy of the idle time; causes: $(jget $1.json "d['timeline']['devices'][0]['idle_by_cause']")"
done
