#!/usr/bin/env bash
# The tree the benches measure, for their reports: "commit ABC1234", and " with local
# changes" when the library's or the benches' files differ from it.
cd "$(dirname "$0")/.." || exit 1
printf 'commit %s' "$(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
git diff --quiet HEAD -- core libpmi libpmi2 probe bench Cargo.toml Cargo.lock front-build.rs \
    hot-text.ld 2>/dev/null || printf ' with local changes'
echo
