#!/usr/bin/env bash
# The tree the benches measure, for their reports: "commit ABC1234", and " with local
# changes" when the library's or the benches' files (the workload in c-tests/check.h,
# the headers, the build's flags) differ from it or are new.
cd "$(dirname "$0")/.." || exit 1
printf 'commit %s' "$(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
paths=(core libpmi libpmi2 probe bench c-tests/check.h include Makefile mk Cargo.toml Cargo.lock
    front-build.rs hot-text.ld)
{ git diff --quiet HEAD -- "${paths[@]}" &&
    [ -z "$(git status --porcelain --untracked-files=normal -- "${paths[@]}")" ]; } 2>/dev/null ||
    printf ' with local changes'
echo
