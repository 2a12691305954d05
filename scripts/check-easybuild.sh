#!/usr/bin/env bash
# `make check-easybuild` (part of make check-packaging): EasyBuild builds libpmi-rs from
# the release tarball with packaging/easybuild's easyconfig, offline, into a scratch
# prefix; its module file is read, then loaded with Lmod, and a -lpmi (and a -lpmi2)
# program built through pkg-config runs under Hydra; every file is checked in its place.
#
#   scripts/check-easybuild.sh TARBALL WORKDIR
#
# EasyBuild comes from PyPI into a venv ($LIBPMI_CACHE/easybuild/venv, made here, pinned
# to EB_VERSION); the module tool is Debian's Lmod (`make check-easybuild` installs it),
# EasyBuild's default, writing Lua modules. Its configuration is all in WORKDIR (no
# user or system configuration files). The build dependency Rust is filtered out
# (--filter-deps=Rust): cargo and rustc come from PATH (rustup's in ~/.cargo/bin).
set -euo pipefail
tree=$(cd "$(dirname "$0")/.." && pwd)
say() { echo "check-easybuild: $*"; }
die() { say "$*"; exit 1; }
[ -f "$1" ] || die "no tarball $1 (make dist writes it)"
tarball=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
mkdir -p "$2"
work=$(cd "$2" && pwd)
cache=${LIBPMI_CACHE:-$HOME/.cache/libpmi}
EB_VERSION=${EB_VERSION:-5.4.1}
version=$(sed -n 's/^version = "\(.*\)"/\1/p' "$tree/Cargo.toml" | head -n 1)
ec=$tree/packaging/easybuild/libpmi-rs-$version.eb
[ -f "$ec" ] || die "no easyconfig $ec for version $version"
[ "$(basename "$tarball")" = "libpmi-rs-$version.tar.gz" ] || die "$tarball is not libpmi-rs-$version.tar.gz"
lmod_init=/usr/share/lmod/lmod/init/bash
[ -f "$lmod_init" ] || die "no Lmod ($lmod_init): apt-get install lmod"
export PATH=$HOME/.cargo/bin:$PATH

venv=$cache/easybuild/venv
if [ "$("$venv/bin/python" -c 'import easybuild.tools.version as v; print(v.VERSION)' 2>/dev/null)" != "$EB_VERSION" ]; then
    say "making $venv (easybuild $EB_VERSION from PyPI)"
    rm -rf "$venv"
    /usr/bin/python3 -m venv "$venv" && "$venv/bin/pip" install -q "easybuild==$EB_VERSION" ||
        die "cannot make $venv with easybuild $EB_VERSION"
fi
export EB_PYTHON=$venv/bin/python
eb() { "$venv/bin/eb" "$@"; }

rm -rf "$work" && mkdir -p "$work/ec" "$work/sources/l/libpmi-rs" "$work/xdg"
cp "$tarball" "$work/sources/l/libpmi-rs/"
cp "$ec" "$work/ec/"
# EasyBuild's configuration: WORKDIR only.
export XDG_CONFIG_HOME=$work/xdg XDG_CONFIG_DIRS=$work/xdg
export EASYBUILD_PREFIX=$work EASYBUILD_SOURCEPATH=$work/sources EASYBUILD_INSTALLPATH=$work/install \
    EASYBUILD_BUILDPATH=$work/build EASYBUILD_TMPDIR=$work/tmp EASYBUILD_REPOSITORYPATH=$work/ebfiles \
    EASYBUILD_MODULES_TOOL=Lmod EASYBUILD_MODULE_SYNTAX=Lua EASYBUILD_FILTER_DEPS=Rust \
    EASYBUILD_PARALLEL=2
# (EasyBuild refuses root unless told; CI and this check run as root, in WORKDIR only.)
[ "$(id -u)" != 0 ] || export EASYBUILD_ALLOW_USE_AS_ROOT_AND_ACCEPT_CONSEQUENCES=1
set +u
# shellcheck source=/dev/null
source "$lmod_init"
set -u
log=$work/eb.log
# The tested tarball's checksum, added by EasyBuild itself; then the build, which
# refuses a source whose checksum differs.
eb --inject-checksums=sha256 "$work/ec/libpmi-rs-$version.eb" >>"$log" 2>&1 ||
    { tail -n 30 "$log"; die "eb --inject-checksums failed (log: $log)"; }
grep -q "^checksums = \['$(sha256sum "$tarball" | cut -d' ' -f1)'\]" "$work/ec/libpmi-rs-$version.eb" ||
    die "the easyconfig's copy holds no checksum of $tarball"
start=$SECONDS
eb --enforce-checksums "$work/ec/libpmi-rs-$version.eb" >>"$log" 2>&1 ||
    { tail -n 40 "$log"; die "eb libpmi-rs-$version.eb failed (log: $log)"; }
say "eb libpmi-rs-$version.eb: $((SECONDS - start)) s"
prefix=$work/install/software/libpmi-rs/$version
module=$work/install/modules/all/libpmi-rs/$version.lua
[ -f "$module" ] || die "no module file $module"

# The module file: the prefix's lib/pkgconfig on PKG_CONFIG_PATH, lib on LD_LIBRARY_PATH
# (and LIBRARY_PATH), bin on PATH, the manual pages on MANPATH, include on CPATH.
for v in "PKG_CONFIG_PATH lib pkgconfig" "LD_LIBRARY_PATH lib" "LIBRARY_PATH lib" "PATH bin" \
    "MANPATH share man" "CPATH include"; do
    set -- $v
    line="prepend_path(\"$1\", pathJoin(root, \"$2\"${3:+, \"$3\"}))"
    grep -qxF "$line" "$module" || { cat "$module"; die "$module: no line $line"; }
done
grep -qF "local root = \"$prefix\"" "$module" || die "$module: root is not $prefix"
say "module file $module: PKG_CONFIG_PATH lib/pkgconfig, LD_LIBRARY_PATH and LIBRARY_PATH lib, PATH bin, MANPATH share/man, CPATH include"

(
    unset PKG_CONFIG_PATH LD_LIBRARY_PATH LIBRARY_PATH CPATH
    module use "$work/install/modules/all"
    module load "libpmi-rs/$version"
    # (EasyBuild adds lib64, a link to lib.)
    "$tree/scripts/check-prefix.sh" "$prefix" "$work/check" --link lib64=lib --run
) || die "eb libpmi-rs-$version.eb: not as expected (above)"
say "all passed"
