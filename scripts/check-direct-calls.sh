#!/usr/bin/env bash
# check-direct-calls.sh LIB: the library calls its own functions directly, not through
# the GOT. Its .got may hold the addresses it imports and a few of its own (the unwinder
# and std's objects outside LTO: 14 here); when the fronts were also built as rlibs, LTO
# left every core function global and the .got held 422 of its own, read on every call.
set -euo pipefail
lib=$1
most=32
read -r start size < <(readelf -SW "$lib" | sed 's/^ *\[ *[0-9]*\] *//' |
    awk '$1 == ".got" { print $3, $5 }') || true
if [ -z "${start:-}" ]; then
    echo "$lib: no .got section" >&2
    exit 1
fi
# readelf prints both ends as 16 hex digits: compared as strings, they sort as numbers.
first=$(printf '%016x' $((16#$start)))
end=$(printf '%016x' $((16#$start + 16#$size)))
own=$(readelf -rW "$lib" |
    awk -v a="$first" -v b="$end" '$3 == "R_X86_64_RELATIVE" && $1 >= a && $1 < b' | wc -l)
if [ "$own" -gt "$most" ]; then
    echo "$lib: $own of its own addresses in the .got (at most $most): calls inside the library go through the GOT" >&2
    exit 1
fi
echo "$lib: $own of its own addresses in the .got (at most $most): its calls are direct"
