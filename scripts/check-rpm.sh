#!/usr/bin/env bash
# `make check-rpm` (CI): the binary RPMs `make rpm` built, unpacked into a scratch root
# (rpm2cpio | cpio; nothing is installed on the machine), checked file by file, then the
# C tests built against that root only and run under Hydra.
#
#   scripts/check-rpm.sh RPMDIR ROOT BINDIR
#
# RPMDIR holds the binary packages (build/rpm/RPMS/ARCH); ROOT is emptied and receives
# them; BINDIR gets the C tests (make rpm-progs RPM_ROOT=ROOT RPM_BIN=BINDIR).
# Checked: every package is there and holds exactly its files, with their modes and link
# targets (the layout below: a file missing, misplaced, moved to another package or
# extra fails); the sonames and exports; the headers; the pkg-config files' paths; the
# debug information is real (the -debuginfo files have DWARF and the binaries' build
# ids, the binaries have none); what rpm says each package provides, requires and
# conflicts with (docs/PACKAGING.md).
set -euo pipefail
tree=$(cd "$(dirname "$0")/.." && pwd)
rpmdir=$(cd "$1" && pwd)
mkdir -p "$2" "$3"
root=$(cd "$2" && pwd) bin=$(cd "$3" && pwd)
say() { echo "check-rpm: $*"; }
die() { say "$*"; exit 1; }
version=$(sed -n 's/^version = "\(.*\)"/\1/p' "$tree/Cargo.toml" | head -n 1)
main=$(ls "$rpmdir"/libpmi-rs-"$version"-*.rpm 2>/dev/null | grep -v -e -devel- -e -debug | head -n 1) || true
[ -n "$main" ] || die "no libpmi-rs-$version package in $rpmdir (make rpm builds it)"
release=$(rpm -qp --qf '%{release}' "$main")
arch=$(rpm -qp --qf '%{arch}' "$main")
vra=$version-$release.$arch
pkgs=(libpmi-rs libpmi-rs-devel pmi-probe libpmi-rs-debuginfo pmi-probe-debuginfo libpmi-rs-debugsource)
files=()
for p in "${pkgs[@]}"; do
    [ -f "$rpmdir/$p-$vra.rpm" ] || die "no package $p-$vra.rpm in $rpmdir"
    files+=("$rpmdir/$p-$vra.rpm")
done
[ "$(ls "$rpmdir"/*.rpm | wc -l)" = ${#pkgs[@]} ] ||
    die "$rpmdir holds other packages than ${pkgs[*]}: $(ls "$rpmdir" | tr '\n' ' ')"

rm -rf "$root" && mkdir -p "$root"
for f in "${files[@]}"; do
    rpm2cpio "$f" | (cd "$root" && cpio -idm --quiet) || die "cannot unpack $f"
done
say "unpacked ${pkgs[*]} ($vra) into $root"

# --- every file in its place ----------------------------------------------------------------
# What each package must hold, files and links (directories aside), as
# "PACKAGE MODE PATH[ -> TARGET]".
lib=/usr/lib64 man3=/usr/share/man/man3
expected() {
    local h
    for h in pmi pmi2; do
        echo "libpmi-rs -rwxr-xr-x $lib/lib$h.so.0.0.0"
        echo "libpmi-rs lrwxrwxrwx $lib/lib$h.so.0 -> lib$h.so.0.0.0"
        echo "libpmi-rs-devel lrwxrwxrwx $lib/lib$h.so -> lib$h.so.0"
        echo "libpmi-rs-devel -rw-r--r-- $lib/lib$h.a"
        echo "libpmi-rs-devel -rw-r--r-- $lib/pkgconfig/$h.pc"
        echo "libpmi-rs-devel -rw-r--r-- /usr/include/$h.h"
        echo "libpmi-rs-devel -rw-r--r-- $man3/$h.3.gz"
    done
    sed "s|.*|libpmi-rs-devel lrwxrwxrwx $man3/&.3.gz -> pmi.3.gz|" "$tree/symbols.txt"
    sed "s|.*|libpmi-rs-devel lrwxrwxrwx $man3/&.3.gz -> pmi2.3.gz|" "$tree/symbols2.txt"
    echo "libpmi-rs -rw-r--r-- /usr/share/licenses/libpmi-rs/LICENSE"
    echo "pmi-probe -rwxr-xr-x /usr/bin/pmi-probe"
    echo "pmi-probe -rw-r--r-- /usr/share/licenses/pmi-probe/LICENSE"
    echo "pmi-probe -rw-r--r-- /usr/share/man/man1/pmi-probe.1.gz"
    # Each binary: its build-id link, its .debug file in the -debuginfo package, and
    # that package's two build-id links (RHEL's "compat" build-id links).
    local b pkg id
    for b in "libpmi-rs $lib/libpmi.so.0.0.0" "libpmi-rs $lib/libpmi2.so.0.0.0" "pmi-probe /usr/bin/pmi-probe"; do
        set -- $b
        pkg=$1 b=$2
        id=$(readelf -n "$root$b" 2>/dev/null | sed -n 's/^ *Build ID: //p') || true
        [ -n "$id" ] || id=NO-BUILD-ID-IN-$b
        echo "$pkg lrwxrwxrwx /usr/lib/.build-id/${id:0:2}/${id:2} -> ../../../..$b"
        echo "$pkg-debuginfo -rw-r--r-- /usr/lib/debug$b-$vra.debug"
        echo "$pkg-debuginfo lrwxrwxrwx /usr/lib/debug/.build-id/${id:0:2}/${id:2} -> ../../../.build-id/${id:0:2}/${id:2}"
        echo "$pkg-debuginfo lrwxrwxrwx /usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug -> ../../../../../usr/lib/debug$b-$vra.debug"
    done
}
listing() {
    local f
    for f in "${files[@]}"; do
        rpm -qp --qf '[%{=NAME} %{FILEMODES:perms} %{FILENAMES} -> %{FILELINKTOS}\n]' "$f"
    done | sed 's/ -> $//' | grep -v '^[^ ]* d'
}
expected | LC_ALL=C sort >"$root.expected"
listing | grep -v '^libpmi-rs-debugsource ' | LC_ALL=C sort >"$root.found"
diff -u "$root.expected" "$root.found" >"$root.diff" ||
    { sed -n '3,$p' "$root.diff" | grep '^[-+]'; die "the packages' files are not as expected (- expected, + found)"; }
# The debug sources: the crates' and the C file's, under the package's own directory.
src=/usr/src/debug/libpmi-rs-$vra
listing | grep '^libpmi-rs-debugsource ' | awk '{print $3}' >"$root.sources"
grep -v "^$src/" "$root.sources" && die "libpmi-rs-debugsource holds files outside $src (above)"
for f in core/src/lib.rs core/src/sibling.c libpmi/src/lib.rs libpmi2/src/lib.rs probe/src/main.rs; do
    grep -qx "$src/$f" "$root.sources" || die "libpmi-rs-debugsource lacks $src/$f"
done
# What was unpacked is what the packages list, nothing more.
listing | awk '{print $3}' | cat - "$root.sources" | LC_ALL=C sort -u >"$root.listed"
(cd "$root" && find . ! -type d | sed 's|^\.||' | LC_ALL=C sort) >"$root.unpacked"
diff -u "$root.listed" "$root.unpacked" >/dev/null || die "the unpacked files differ from the packages' lists"
say "layout: $(wc -l <"$root.expected") files and links in their packages and places, $(wc -l <"$root.sources") debug sources"

# --- the files' contents ---------------------------------------------------------------------
for h in pmi pmi2; do
    so=$root$lib/lib$h.so.0.0.0 syms=$tree/symbols${h#pmi}.txt
    readelf -d "$so" | grep -q "SONAME.*\[lib$h.so.0\]" || die "$lib/lib$h.so.0.0.0: SONAME is not lib$h.so.0"
    nm -D --defined-only "$so" | awk '{print $3}' | sort | diff -u "$syms" - >/dev/null ||
        die "$lib/lib$h.so.0.0.0 does not export exactly ${syms##*/}"
    cmp -s "$tree/include/$h.h" "$root/usr/include/$h.h" || die "/usr/include/$h.h is not include/$h.h"
    for v in "prefix /usr" "libdir $lib" "includedir /usr/include"; do
        set -- $v
        got=$(PKG_CONFIG_LIBDIR=$root$lib/pkgconfig pkg-config --variable="$1" "$h")
        [ "$got" = "$2" ] || die "$lib/pkgconfig/$h.pc: $1 is '$got', not $2"
    done
    [ "$(PKG_CONFIG_LIBDIR=$root$lib/pkgconfig pkg-config --modversion "$h")" = "$version" ] ||
        die "$lib/pkgconfig/$h.pc: version is not $version"
    grep -q '^\.TH' < <(zcat "$root$man3/$h.3.gz") || die "$man3/$h.3.gz is not a manual page"
done
grep -q '^\.TH' < <(zcat "$root/usr/share/man/man1/pmi-probe.1.gz") || die "pmi-probe.1.gz is not a manual page"
# Real debug information: the binaries carry none and name their .debug file; the .debug
# files carry DWARF for the same build.
for b in $lib/libpmi.so.0.0.0 $lib/libpmi2.so.0.0.0 /usr/bin/pmi-probe; do
    readelf -S "$root$b" | grep -q '\.debug_info' && die "$b still has debug information"
    readelf -S "$root$b" | grep -q '\.gnu_debuglink' || die "$b names no .debug file"
    d=$root/usr/lib/debug$b-$vra.debug
    readelf -S "$d" | grep -q '\.debug_info' || die "${d#"$root"} has no DWARF"
    [ "$(readelf -n "$d" | sed -n 's/^ *Build ID: //p')" = "$(readelf -n "$root$b" | sed -n 's/^ *Build ID: //p')" ] ||
        die "${d#"$root"} is not the debug information of $b (build ids differ)"
    # (grep reads from a process substitution: an early exit must not fail the pipeline.)
    [ "$b" = /usr/bin/pmi-probe ] || grep -q 'DW_AT_name.*: PMI' < <(readelf --debug-dump=info "$d" 2>/dev/null) ||
        die "${d#"$root"} describes no PMI function"
done
say "contents: sonames libpmi.so.0 and libpmi2.so.0 with exactly their exports, the headers, pkg-config paths, manual pages, debug information for the three binaries"

# --- what rpm says ---------------------------------------------------------------------------
q() { rpm -qp --qf "[%{$1}\n]" "$rpmdir/$2-$vra.rpm" | LC_ALL=C sort; }
want() { # TAG PACKAGE LINE...: each LINE is among the package's TAG
    local tag=$1 p=$2 l have
    shift 2
    have=$(q "$tag" "$p")
    for l in "$@"; do
        grep -qxF "$l" <<<"$have" || die "$p: $tag lacks '$l' (has: $(echo $have))"
    done
}
for p in libpmi-rs libpmi-rs-devel; do
    [ "$(q CONFLICTNAME $p | tr '\n' ' ')" = "pmix-libpmi slurm-libpmi " ] ||
        die "$p conflicts with '$(q CONFLICTNAME $p | tr '\n' ' ')', not pmix-libpmi and slurm-libpmi"
done
want PROVIDENEVRS libpmi-rs 'libpmi.so.0()(64bit)' 'libpmi2.so.0()(64bit)'
want REQUIRENEVRS libpmi-rs-devel "libpmi-rs(x86-64) = $version-$release"
want PROVIDENEVRS libpmi-rs-devel "pkgconfig(pmi) = $version" "pkgconfig(pmi2) = $version"
q PROVIDENAME libpmi-rs | grep -qx -e slurm-libpmi -e pmix-libpmi && die "libpmi-rs provides another package's name"
q REQUIRENAME pmi-probe | grep -q 'libpmi' && die "pmi-probe requires a libpmi"
[ "$(rpm -qp --qf '%{POSTINPROG} %{POSTUNPROG}' "$rpmdir/libpmi-rs-$vra.rpm")" = "/sbin/ldconfig /sbin/ldconfig" ] ||
    die "libpmi-rs does not run ldconfig after install and removal"
say "metadata: provides libpmi.so.0()(64bit), libpmi2.so.0()(64bit), pkgconfig(pmi), pkgconfig(pmi2); conflicts with slurm-libpmi and pmix-libpmi; ldconfig scriptlets"

# --- the C tests against the unpacked root ---------------------------------------------------
unset LD_LIBRARY_PATH PKG_CONFIG_PATH
rm -rf "$bin"
make -C "$tree" --no-print-directory rpm-progs RPM_ROOT="$root" RPM_BIN="$bin" >"$root.build.log" 2>&1 ||
    { tail -n 30 "$root.build.log"; die "the C tests do not build against $root"; }
ln -sf "$root/usr/bin/pmi-probe" "$bin/pmi-probe"
for t in exchange pmi2_exchange two_libs; do
    readelf -d "$bin/$t" | grep -q 'RUNPATH\|RPATH' && die "$bin/$t carries a run path"
done
# Linked fully static with what the root's pkg-config --static says: no libpmi at run time.
hydra=("$tree/scripts/no-sigpipe" "${MPIEXEC:-mpiexec.hydra}" -launcher fork -n 2)
"${hydra[@]}" "$bin/exchange-full-static" -q </dev/null || die "exchange-full-static failed under Hydra"
say "exchange-full-static (libpmi.a and pkg-config --static from the root) ran under Hydra, n = 2"
MPIEXEC=${MPIEXEC:-mpiexec.hydra} "$tree/c-tests/run-tests.sh" "$bin" "$root$lib"
