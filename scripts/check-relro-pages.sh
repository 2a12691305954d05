#!/usr/bin/env bash
# check-relro-pages.sh LIB: the data the dynamic loader relocates (GNU_RELRO) starts a
# page, so that it fills as few pages as its size needs. Each of those pages is written
# at load by every process and kept as its own (front-build.rs links with
# -z separate-loadable-segments: lld otherwise starts the segment mid-page, and the 11 KiB
# of relocated data took 4 pages instead of 3).
set -euo pipefail
lib=$1
read -r vaddr filesz < <(readelf -lW "$lib" | awk '$1 == "GNU_RELRO" { print $3, $5 }') || true
if [ -z "${vaddr:-}" ]; then
    echo "$lib: no GNU_RELRO segment" >&2
    exit 1
fi
vaddr=$((vaddr)) filesz=$((filesz))
pages=$(((vaddr % 4096 + filesz + 4095) / 4096))
least=$(((filesz + 4095) / 4096))
if [ "$pages" -gt "$least" ]; then
    echo "$lib: its relocated data spans $pages pages, $least would do (GNU_RELRO starts mid-page)" >&2
    exit 1
fi
echo "$lib: its relocated data fills $pages pages, as few as its $filesz bytes need"
