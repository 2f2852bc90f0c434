#!/bin/sh
# The manual pages man/gputrace.1 and man/gputrace-report.1 document exactly the options that
# --help lists (names and arguments), carry the version --version prints, and format without
# groff warnings.
. "$SRC/tests/lib.sh"
command -v groff >/dev/null 2>&1 || skip "no groff: cannot format the manual pages"
for prog in gputrace gputrace-report; do
    page="$SRC/man/$prog.1"
    [ -f "$page" ] || fail "no manual page $page"
    "$O/$prog" --help >help.txt 2>&1 || fail "$prog --help failed"
    groff -man -Tascii -ww -P-cbou "$page" >page.txt 2>warn.txt || fail "groff failed on $page"
    expect_eq "$prog.1: groff warnings" "$(cat warn.txt)" ""
    "$PYTHON" - help.txt page.txt >opts.txt <<'PY' || fail "$prog: options differ: $(cat opts.txt)"
import re, sys
# An option line: indented, starting with an option; its tag is the options and their argument.
tag = re.compile(r"^ +((?:--?[a-z][a-z-]*(?:, )?)+(?: [A-Z]+(?=$|  ))?)")
def options(lines):
    out = set()
    for line in lines:
        m = tag.match(line)
        if m:
            out.add(m.group(1).strip())
    return out
help_opts = options(open(sys.argv[1]))
text = open(sys.argv[2]).read()
section = text.split("\nOPTIONS\n", 1)[1]
section = re.split(r"\n[A-Z][A-Z ]+\n", section, 1)[0]
page_opts = options(l for l in section.splitlines() if l.startswith("       -"))
print(sorted(help_opts))
if not help_opts or help_opts != page_opts:
    print("only in --help:", sorted(help_opts - page_opts), "only in the page:", sorted(page_opts - help_opts))
    sys.exit(1)
PY
    echo "$prog: $(cat opts.txt)"
    version=$("$O/$prog" --version | sed -n 's/^[a-z-]* \([0-9][0-9.]*\).*/\1/p')
    [ -n "$version" ] || fail "$prog --version prints no version: $("$O/$prog" --version)"
    grep -q "^\.TH .*\"gputrace $version\"" "$page" || fail "$prog.1: .TH does not name gputrace $version"
done
echo "manual pages match --help and --version"
