#!/usr/bin/env bash
# The release tarball (issue 45): what `git ls-files` holds, taken from the work tree,
# plus every crate of Cargo.lock vendored under vendor/ and a .cargo/config.toml that
# points cargo at them, so that the RPM, Spack and EasyBuild builds need no network.
#
#   scripts/dist.sh OUTDIR        writes OUTDIR/libpmi-rs-VERSION.tar.gz
#   scripts/dist.sh --check TAR   the tarball holds exactly those files (no build output)
#
# The archive is reproducible for a given tree: names sorted, owner 0, every mtime the
# last commit's, gzip without a name or time stamp.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
say() { echo "dist: $*"; }
version=$(sed -n 's/^version = "\(.*\)"/\1/p' "$root/Cargo.toml" | head -n 1)
[ -n "$version" ] || { say "no version in $root/Cargo.toml"; exit 1; }
name=libpmi-rs-$version
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The names the tarball must hold, sorted, without the top directory.
git -C "$root" ls-files >"$tmp/tracked"
expected() { # VENDOR_LIST: tracked files, the vendored ones and the cargo configuration
    { cat "$tmp/tracked" "$1"; echo .cargo/config.toml; } | LC_ALL=C sort
}

if [ "${1:-}" = --check ]; then
    tar=$2
    [ -f "$tar" ] || { say "no tarball $tar (make dist writes it)"; exit 1; }
    tar -tzf "$tar" | grep -v '/$' >"$tmp/listed"
    grep -v "^$name/" "$tmp/listed" && { say "$tar: names outside $name/ (above)"; exit 1; }
    sed "s|^$name/||" "$tmp/listed" | LC_ALL=C sort >"$tmp/have"
    grep '^vendor/' "$tmp/have" >"$tmp/vendor" || { say "$tar: no vendor/ directory"; exit 1; }
    expected "$tmp/vendor" >"$tmp/want"
    diff -u "$tmp/want" "$tmp/have" >"$tmp/diff" ||
        { sed -n '3,$p' "$tmp/diff" | grep '^[-+]' | head -n 20; say "$tar: not what git ls-files holds plus vendor/ (- missing, + extra)"; exit 1; }
    # Every crate of Cargo.lock from the registry is there, at its version.
    sed -n '/^name = /{s/name = "\(.*\)"/\1/;h};/^source = "registry/{g;p}' "$root/Cargo.lock" >"$tmp/crates"
    while read -r crate; do
        v=$(awk -v c="$crate" '$0 == "name = \"" c "\"" {getline; gsub(/version = |"/, ""); print; exit}' "$root/Cargo.lock")
        grep -q "^vendor/$crate-$v/Cargo.toml$" "$tmp/have" || { say "$tar: vendor/$crate-$v missing"; exit 1; }
    done <"$tmp/crates"
    say "$(basename "$tar"): $(wc -l <"$tmp/tracked") tracked files, $(wc -l <"$tmp/crates") crates ($(wc -l <"$tmp/vendor") files) under vendor/, .cargo/config.toml; nothing else"
    exit 0
fi

out=$(mkdir -p "$1" && cd "$1" && pwd)
missing=$(cd "$root" && while read -r f; do [ -e "$f" ] || [ -L "$f" ] || echo "$f"; done <"$tmp/tracked")
[ -z "$missing" ] || { say "tracked but not in the work tree: $missing"; exit 1; }
mkdir -p "$tmp/$name/.cargo"
(cd "$root" && tar --no-recursion -cf - -T "$tmp/tracked") | tar -C "$tmp/$name" -xf -
[ ! -e "$tmp/$name/vendor" ] || { say "the tree has its own vendor/"; exit 1; }
[ ! -e "$tmp/$name/.cargo/config.toml" ] || { say "the tree has its own .cargo/config.toml"; exit 1; }
# (cargo vendor reads the registry, or cargo's cache of it; --locked: Cargo.lock as committed.)
${CARGO:-cargo} vendor --quiet --locked --versioned-dirs --manifest-path "$tmp/$name/Cargo.toml" \
    "$tmp/$name/vendor" >/dev/null
cat >"$tmp/$name/.cargo/config.toml" <<'EOF'
# Written by `make dist`: the crates come from vendor/, never from the network.
[source.crates-io]
replace-with = "vendored-sources"

[source.vendored-sources]
directory = "vendor"
EOF
epoch=$(git -C "$root" log -1 --format=%ct)
tar --sort=name --mtime="@$epoch" --owner=0 --group=0 --numeric-owner --format=gnu \
    -C "$tmp" -cf - "$name" | gzip -9 -n >"$tmp/$name.tar.gz"
mv "$tmp/$name.tar.gz" "$out/$name.tar.gz"
say "$out/$name.tar.gz ($(du -k "$out/$name.tar.gz" | cut -f1) KiB)"
