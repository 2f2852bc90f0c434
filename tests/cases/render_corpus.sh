# The renderers of issue 19 on hostile input: every trace of the fuzz corpus (tests/fuzz/corpus:
# truncated, corrupt, crafted) through --chrome-trace, --html and --folded peak: each ends in
# exit 0 or a clean refusal (2, one line on stderr), and what was written is valid JSON (the
# Chrome trace; the page's two data blocks), so a viewer never gets a broken file.
. "$SRC/tests/lib.sh"
corpus="$SRC/tests/fuzz/corpus"
[ -d "$corpus" ] || skip "no fuzz corpus"
i=0
mkdir out
for f in "$corpus"/*; do
    i=$((i + 1))
    rc=0; "$GT_REPORT" --chrome-trace "out/$i.json" "$f" > /dev/null 2> err.txt || rc=$?
    [ $rc -eq 0 ] || [ $rc -eq 2 ] || fail "--chrome-trace $f: exit $rc: $(tail -n 2 err.txt)"
    [ $rc -eq 0 ] || [ ! -e "out/$i.json" ] || fail "--chrome-trace $f: refused (exit 2) but left a file"
    rc=0; "$GT_REPORT" --html "out/$i.html" "$f" > /dev/null 2> err.txt || rc=$?
    [ $rc -eq 0 ] || [ $rc -eq 2 ] || fail "--html $f: exit $rc: $(tail -n 2 err.txt)"
    [ $rc -eq 0 ] || [ ! -e "out/$i.html" ] || fail "--html $f: refused (exit 2) but wrote a page"
    rc=0; "$GT_REPORT" --folded peak "$f" > /dev/null 2> err.txt || rc=$?
    [ $rc -eq 0 ] || [ $rc -eq 2 ] || fail "--folded $f: exit $rc: $(tail -n 2 err.txt)"
done
"$PYTHON" - out <<'PY' || fail "an output is not valid JSON"
import json, os, re, sys
d = sys.argv[1]
n = 0
for name in sorted(os.listdir(d)):
    text = open(os.path.join(d, name), encoding="utf-8").read()
    if name.endswith(".json"):
        json.loads(text)
    else:
        blocks = re.findall(r'<script type="application/json" id="gt-(?:data|events)">(.*?)</script>', text, re.S)
        if len(blocks) != 2:
            sys.exit(f"{name}: {len(blocks)} data blocks")
        for b in blocks:
            json.loads(b)
    n += 1
print(f"{n} outputs valid")
PY
