#!/usr/bin/env bash
# check-hot-text.sh LIB SECTION EXPORT...: LIB has SECTION (.text.hot or .text.warm,
# hot-text.ld), each EXPORT lies in it, and it holds at least as much code again as
# those exports (the core's functions under them; a pattern of hot-text.ld that stopped
# matching, after a change of Rust's symbol mangling, shows here).
set -euo pipefail
lib=$1 sec=$2
shift 2
read -r start size < <(readelf -SW "$lib" | sed 's/^ *\[ *[0-9]*\] *//' |
    awk -v sec="$sec" '$1 == sec { print $3, $5 }') || true
if [ -z "${start:-}" ]; then
    echo "$lib: no $sec section (hot-text.ld not applied)" >&2
    exit 1
fi
start=$((16#$start)) size=$((16#$size))
exports=0
for sym in "$@"; do
    read -r addr len < <(nm -D -S --defined-only "$lib" | awk -v s="$sym" '$4 == s { print $1, $2 }')
    addr=$((16#$addr)) len=$((16#$len))
    if [ "$addr" -lt "$start" ] || [ $((addr + len)) -gt $((start + size)) ]; then
        echo "$lib: $sym is not in $sec" >&2
        exit 1
    fi
    exports=$((exports + len))
done
if [ "$size" -lt $((2 * exports)) ]; then
    echo "$lib: $sec holds $size bytes, the exports alone $exports: the core's are missing" >&2
    exit 1
fi
echo "$lib: $sec, $size bytes, holds $* ($exports bytes)"
