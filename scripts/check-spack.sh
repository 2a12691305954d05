#!/usr/bin/env bash
# `make check-spack` (part of make check-packaging): Spack installs libpmi-rs from the
# release tarball with the package in packaging/spack, offline, into a scratch
# directory; `spack load` then builds a -lpmi (and a -lpmi2) program through pkg-config
# that runs under Hydra, and every file is checked in its place.
#
#   scripts/check-spack.sh TARBALL WORKDIR
#
# Spack is not in the tree: SPACK_ROOT (default $LIBPMI_CACHE/spack/spack) is a clone of
# https://github.com/spack/spack, SPACK_PACKAGES (default $LIBPMI_CACHE/spack/spack-packages)
# one of https://github.com/spack/spack-packages (the builtin packages). Spack runs with
# a venv's python ($LIBPMI_CACHE/spack/venv, made here, with clingo CLINGO_VERSION from PyPI), its
# configuration in WORKDIR only (no ~/.spack, no /etc/spack), no bootstrapping, and two
# mirrors: WORKDIR/mirror, which holds the tarball, and SPACK_MIRROR (default
# $LIBPMI_CACHE/spack/mirror), which must hold the one other source Spack builds here,
# its compiler wrapper (package compiler-wrapper, downloaded from GitHub when online):
# nothing is downloaded. The compiler, Rust (cargo and rustc from PATH, rustup's in
# ~/.cargo/bin) and make are externals found by `spack external find`.
set -euo pipefail
tree=$(cd "$(dirname "$0")/.." && pwd)
say() { echo "check-spack: $*"; }
die() { say "$*"; exit 1; }
[ -f "$1" ] || die "no tarball $1 (make dist writes it)"
tarball=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
mkdir -p "$2"
work=$(cd "$2" && pwd)
cache=${LIBPMI_CACHE:-$HOME/.cache/libpmi}
SPACK_ROOT=${SPACK_ROOT:-$cache/spack/spack}
SPACK_PACKAGES=${SPACK_PACKAGES:-$cache/spack/spack-packages}
[ -x "$SPACK_ROOT/bin/spack" ] ||
    die "no Spack at $SPACK_ROOT: git clone https://github.com/spack/spack $SPACK_ROOT (or set SPACK_ROOT)"
builtin=$SPACK_PACKAGES/repos/spack_repo/builtin
[ -f "$builtin/repo.yaml" ] ||
    die "no Spack builtin packages at $SPACK_PACKAGES: git clone https://github.com/spack/spack-packages $SPACK_PACKAGES (or set SPACK_PACKAGES)"
SPACK_MIRROR=${SPACK_MIRROR:-$cache/spack/mirror}
# (Spack looks a source up in a mirror by its checksum: _source-cache/archive/XX/SHA256.EXT.)
archived() { echo "_source-cache/archive/${1:0:2}/$1.tar.gz"; }
cw=$(sed -n 's/^ *version("[^"]*", sha256="\([0-9a-f]*\)").*/\1/p' "$builtin/packages/compiler_wrapper/package.py" | head -n 1)
[ -f "$SPACK_MIRROR/$(archived "$cw")" ] ||
    die "Spack's compiler wrapper (sha256 $cw) is not in the mirror $SPACK_MIRROR: on a machine with network, spack mirror create -d $SPACK_MIRROR compiler-wrapper (docs/PACKAGING.md)"
export PATH=$HOME/.cargo/bin:$PATH
version=$(sed -n 's/^version = "\(.*\)"/\1/p' "$tree/Cargo.toml" | head -n 1)
[ "$(basename "$tarball")" = "libpmi-rs-$version.tar.gz" ] || die "$tarball is not libpmi-rs-$version.tar.gz"
pkg=$tree/packaging/spack/spack_repo/libpmi_rs/packages/libpmi_rs/package.py
grep -q "^    version(\"$version\")$" "$pkg" || die "$pkg does not declare version(\"$version\")"

venv=$cache/spack/venv
CLINGO_VERSION=${CLINGO_VERSION:-5.8.3}
if [ "$("$venv/bin/python" -c 'import clingo; print(clingo.__version__)' 2>/dev/null)" != "$CLINGO_VERSION" ]; then
    say "making $venv (clingo $CLINGO_VERSION from PyPI)"
    rm -rf "$venv"
    /usr/bin/python3 -m venv "$venv" && "$venv/bin/pip" install -q "clingo==$CLINGO_VERSION" ||
        die "cannot make $venv with clingo $CLINGO_VERSION"
fi
export SPACK_PYTHON=$venv/bin/python

# Spack's configuration, stage, caches and install tree: all in WORKDIR.
rm -rf "$work" && mkdir -p "$work/config" "$work/repo/spack_repo"
export SPACK_USER_CONFIG_PATH=$work/config SPACK_USER_CACHE_PATH=$work/user-cache
unset SPACK_DISABLE_LOCAL_CONFIG
[ ! -d /etc/spack ] || die "/etc/spack exists: its configuration would mix in"
# The package as in the tree, plus the tested tarball's checksum.
cp -r "$tree/packaging/spack/spack_repo/libpmi_rs" "$work/repo/spack_repo/"
sum=$(sha256sum "$tarball" | cut -d' ' -f1)
sed -i "s|^    version(\"$version\")$|    version(\"$version\", sha256=\"$sum\")|" \
    "$work/repo/spack_repo/libpmi_rs/packages/libpmi_rs/package.py"
mkdir -p "$(dirname "$work/mirror/$(archived "$sum")")"
cp "$tarball" "$work/mirror/$(archived "$sum")"
cat >"$work/config/config.yaml" <<EOF
config:
  install_tree:
    root: $work/opt
  build_stage: [$work/stage]
  source_cache: $work/source-cache
  misc_cache: $work/misc-cache
  build_jobs: 2
EOF
cat >"$work/config/repos.yaml" <<EOF
repos::
  libpmi_rs: $work/repo/spack_repo/libpmi_rs
  builtin: $builtin
EOF
cat >"$work/config/mirrors.yaml" <<EOF
mirrors::
  local: file://$work/mirror
  cache: file://$SPACK_MIRROR
EOF
cat >"$work/config/bootstrap.yaml" <<EOF
bootstrap:
  enable: false
EOF
spack() { "$SPACK_ROOT/bin/spack" "$@"; }
log=$work/spack.log
spack external find --not-buildable gcc rust gmake >>"$log" 2>&1 || { cat "$log"; die "spack external find failed"; }
for p in gcc rust gmake; do
    grep -q "^  $p:" "$work/config/packages.yaml" || { cat "$log"; die "spack external find did not find $p"; }
done
say "externals: $(sed -n 's/^    - spec: //p' "$work/config/packages.yaml" | tr '\n' ' ')"

# Default variants (+pmi2 +static), then ~pmi2 ~static: each in its place, nothing else.
start=$SECONDS
spack install --fail-fast libpmi-rs >>"$log" 2>&1 || { tail -n 40 "$log"; die "spack install libpmi-rs failed (log: $log)"; }
say "spack install libpmi-rs: $((SECONDS - start)) s"
prefix=$(spack location -i libpmi-rs+pmi2+static)
# What a user does: spack load, then pkg-config, the compiler and the launcher.
(
    unset PKG_CONFIG_PATH LD_LIBRARY_PATH
    eval "$(spack load --sh libpmi-rs+pmi2+static)"
    "$tree/scripts/check-prefix.sh" "$prefix" "$work/check" --run
) || die "spack install libpmi-rs: not as expected (above)"

start=$SECONDS
spack install --fail-fast libpmi-rs~pmi2~static >>"$log" 2>&1 ||
    { tail -n 40 "$log"; die "spack install libpmi-rs~pmi2~static failed (log: $log)"; }
say "spack install libpmi-rs~pmi2~static: $((SECONDS - start)) s"
"$tree/scripts/check-prefix.sh" "$(spack location -i libpmi-rs~pmi2~static)" "$work/check" --without-pmi2 --without-static ||
    die "spack install libpmi-rs~pmi2~static: not as expected (above)"
say "all passed"
