#!/usr/bin/env bash
# check-versions.sh: every place that names the release's version names Cargo.toml's
# (the workspace version): the Debian changelog's first entry, the RPM spec, the Spack
# package, the EasyBuild easyconfig (its file name and its version), the manual pages.
set -euo pipefail
cd "$(dirname "$0")/.."
v=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -n 1)
[ -n "$v" ] || { echo "check-versions: no version in Cargo.toml" >&2; exit 1; }
bad=0
want() { # FILE TEXT: FILE holds TEXT
    grep -qF -- "$2" "$1" || { echo "check-versions: $1 does not say $2 (Cargo.toml: $v)" >&2; bad=1; }
}
[ "$(head -n 1 debian/changelog | sed -n 's/^libpmi-rs (\([^)]*\)).*/\1/p')" = "$v" ] ||
    { echo "check-versions: debian/changelog's first entry is not $v" >&2; bad=1; }
want packaging/rpm/libpmi-rs.spec "Version:        $v"
want packaging/spack/spack_repo/libpmi_rs/packages/libpmi_rs/package.py "version(\"$v\""
eb=packaging/easybuild/libpmi-rs-$v.eb
if [ -f "$eb" ]; then want "$eb" "version = '$v'"; else echo "check-versions: no $eb" >&2; bad=1; fi
for page in docs/pmi.3 docs/pmi2.3 docs/pmi-probe.1; do want "$page" "\"libpmi $v\""; done
[ "$bad" = 0 ] && echo "check-versions: $v everywhere it is named"
exit "$bad"
