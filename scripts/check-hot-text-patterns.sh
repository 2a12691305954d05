#!/usr/bin/env bash
# check-hot-text-patterns.sh LDSCRIPT MAP...: every input-section pattern that LDSCRIPT
# (hot-text.ld) names matches at least one input section of the links the MAPs record
# (the linker maps of both shared libraries, front-build.rs). Rust's mangled names carry
# module paths: a module moved or renamed, or a function the compiler now inlines
# everywhere, leaves a pattern that matches nothing, and the linker says nothing.
# Patterns qualified by a file (`*libc_nonshared.a:*`) are not Rust's and are left out.
set -euo pipefail
script=$1
shift
[ $# -gt 0 ] || { echo "usage: $0 LDSCRIPT MAP..." >&2; exit 2; }
sections=$(mktemp)
trap 'rm -f "$sections"' EXIT
for map in "$@"; do
    [ -s "$map" ] || { echo "$0: no linker map $map" >&2; exit 1; }
    grep -oE '\(\.text\.[^)]+\)' "$map" | tr -d '()'
done | sort -u >"$sections"
[ -s "$sections" ] || { echo "$0: no .text.* sections in $*" >&2; exit 1; }
# The patterns: the words inside `*( ... )` of lines not qualified by a file.
awk '
    /^[[:space:]]*\*\(/ && !/:\*\(/ {
        line = $0
        sub(/^[^(]*\(/, "", line)
        sub(/\).*$/, "", line)
        n = split(line, words, /[[:space:]]+/)
        for (i = 1; i <= n; i++) if (words[i] ~ /^\.text\./) print words[i]
    }' "$script" >"$sections.patterns"
trap 'rm -f "$sections" "$sections.patterns"' EXIT
total=$(wc -l <"$sections.patterns")
[ "$total" -gt 0 ] || { echo "$0: no patterns in $script" >&2; exit 1; }
# A glob (`*`, `?`) as an anchored regular expression, the rest literal.
missing=$(awk '
    NR == FNR { names[++count] = $0; next }
    {
        re = ""
        for (i = 1; i <= length($0); i++) {
            c = substr($0, i, 1)
            if (c == "*") re = re ".*"
            else if (c == "?") re = re "."
            else if (index("\\^$.[]|()+{}", c)) re = re "\\" c
            else re = re c
        }
        re = "^" re "$"
        found = 0
        for (j = 1; j <= count && !found; j++) if (names[j] ~ re) found = 1
        if (!found) print $0
    }' "$sections" "$sections.patterns")
if [ -n "$missing" ]; then
    echo "$script: these patterns match no section of $* (a module moved or renamed, or a function now inlined everywhere):" >&2
    echo "$missing" | sed 's/^/  /' >&2
    exit 1
fi
echo "$script: all $total patterns match sections of $*"
