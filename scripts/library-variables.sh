#!/usr/bin/env bash
# library-variables.sh: the environment variables the library reads, one a line: every
# variable a whole string literal names in core/src/launch/ (the launch decision and its
# table of launchers; tests left out), and every other `var_os` of the core. A name
# ending in `_` is a prefix (`PMI_PMIX_PREPUT_KEY_<i>`). `make check-docs` checks that
# the manual pages name each; the test harness clears each (scripts/harness.sh).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
{
    for f in "$root"/core/src/launch/*.rs; do
        [ "$(basename "$f")" = tests.rs ] && continue
        awk '/^#\[cfg\(test\)\]/ { exit } { print }' "$f"
    done
    grep -rh 'var_os("' "$root/core/src" || true
} | grep -o '"[A-Z][A-Z0-9]*_[A-Za-z0-9_]*"' | tr -d '"' | sort -u
