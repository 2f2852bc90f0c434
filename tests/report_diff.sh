#!/bin/sh
# Every report of two builds of gputrace-report on the same traces, compared byte for byte: the
# text report (plain and --stacks), --json, --dump, --html, --chrome-trace and --folded peak of
# each trace, and the text and --json reports of each directory that holds several (the ranks'
# report). For changes that must not change what a report says (issue 18's moves onto the report
# model). Traces: every *.trace under the directories given, e.g. the suite's work directories
# (GT_KEEP_WORK=1 sh tests/run.sh keeps them) and bench/'s generated traces.
# Usage: sh tests/report_diff.sh BASE_REPORT NEW_REPORT DIR...
# Prints each difference, then "N reports compared, N identical, N differ"; exit 1 if any differ.
set -u
[ $# -ge 3 ] || { echo "usage: sh tests/report_diff.sh BASE_REPORT NEW_REPORT DIR..." >&2; exit 2; }
base=$1 new=$2
shift 2
out=$(mktemp -d "${TMPDIR:-/tmp}/report_diff.XXXXXX") || exit 2
trap 'rm -rf "$out"' EXIT INT TERM
n=0 same=0 differ=0
# run WHICH NAME ARGS...: one report (stdout, stderr, exit status) into $out/WHICH.NAME; a file
# argument @FILE is replaced by a path of this run and its content appended.
run() {
    which=$1 name=$2
    bin=$base
    [ "$which" = new ] && bin=$new
    shift 2
    args="" file=""
    for a in "$@"; do
        case $a in
        @*) file="$out/$which.file.${a#@}"; args="$args $file" ;;
        *) args="$args $a" ;;
        esac
    done
    rm -rf "$out/$which.file."*
    # shellcheck disable=SC2086 # args holds paths without blanks (mktemp's and the traces')
    "$bin" $args > "$out/$which.$name" 2>&1
    echo "exit $?" >> "$out/$which.$name"
    if [ -n "$file" ]; then
        if [ -d "$file" ]; then cat "$file"/* >> "$out/$which.$name" 2>/dev/null
        else cat "$file" >> "$out/$which.$name" 2>/dev/null; fi
    fi
    # the base's and the new binary's own paths are the only words allowed to differ
    sed -i "s#$out/$which\\.file#OUT#g" "$out/$which.$name"
}
compare() { # LABEL ARGS...
    label=$1
    shift
    run base r "$@"
    run new r "$@"
    n=$((n + 1))
    if cmp -s "$out/base.r" "$out/new.r"; then
        same=$((same + 1))
    else
        differ=$((differ + 1))
        echo "DIFFERS: $label"
        diff "$out/base.r" "$out/new.r" | head -n 10 | sed 's/^/    /'
    fi
}
list=$(find "$@" -name '*.trace' -type f -size +0 2>/dev/null | sort)
for t in $list; do
    compare "$t (text)" "$t"
    compare "$t (--stacks)" --stacks "$t"
    compare "$t (--json)" --json "$t"
    compare "$t (--dump)" --dump "$t"
    compare "$t (--html)" --html @html "$t"
    compare "$t (--chrome-trace)" --chrome-trace @ct "$t"
    compare "$t (--folded peak)" --folded peak "$t"
done
for d in $(for t in $list; do dirname "$t"; done | sort | uniq -d); do
    compare "$d (several traces, text)" "$d"
    compare "$d (several traces, --json)" --json "$d"
done
echo "$(echo "$list" | grep -c .) traces; $n reports compared, $same identical, $differ differ"
[ "$differ" -eq 0 ]
