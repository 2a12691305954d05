#!/usr/bin/env bash
# An installation prefix as `make install PREFIX=...` lays it out, checked the way the
# Spack and EasyBuild checks need it (scripts/check-spack.sh, scripts/check-easybuild.sh):
#
#   scripts/check-prefix.sh PREFIX WORKDIR [--without-pmi2] [--without-static]
#                           [--link NAME=TARGET]... [--run]
#
# Every file and link below PREFIX (but the package manager's own .spack/ or
# easybuild/ directory, and the links it adds, named by --link) is the one expected,
# nothing missing, misplaced or extra; the
# pkg-config files name PREFIX. With --run, in an environment where the package manager
# has loaded the prefix (spack load, module load): a -lpmi and a -lpmi2 program build
# through pkg-config alone, load the prefix's libraries, and run under Hydra (n = 2), and
# pmi-probe on PATH is the prefix's and says ok in both processes.
set -euo pipefail
tree=$(cd "$(dirname "$0")/.." && pwd)
[ -d "$1" ] || { echo "check-prefix: no directory $1"; exit 1; }
prefix=$(cd "$1" && pwd) work=$2
shift 2
pmi2=1 static=1 run=0 links=()
while [ $# -gt 0 ]; do
    a=$1
    shift
    case $a in
        --link) links+=("l ${1%%=*} -> ${1#*=}"); shift ;;
        --without-pmi2) pmi2=0 ;;
        --without-static) static=0 ;;
        --run) run=1 ;;
        *) echo "check-prefix: unknown option $a" >&2; exit 2 ;;
    esac
done
say() { echo "check-prefix: $*"; }
die() { say "$*"; exit 1; }
mkdir -p "$work"

expected() {
    local h
    for h in pmi $([ "$pmi2" = 1 ] && echo pmi2); do
        echo "f lib/lib$h.so.0.0.0"
        echo "l lib/lib$h.so.0 -> lib$h.so.0.0.0"
        echo "l lib/lib$h.so -> lib$h.so.0"
        [ "$static" = 0 ] || echo "f lib/lib$h.a"
        echo "f lib/pkgconfig/$h.pc"
        echo "f include/$h.h"
        echo "f share/man/man3/$h.3"
        sed 's|.*|f share/man/man3/&.3|' "$tree/symbols${h#pmi}.txt"
    done
    echo "f bin/pmi-probe"
    echo "f share/man/man1/pmi-probe.1"
    [ ${#links[@]} = 0 ] || printf '%s\n' "${links[@]}"
}
expected | LC_ALL=C sort >"$work/expected"
(cd "$prefix" && find . ! -type d ! -path './.spack/*' ! -path './easybuild/*' -printf '%y %P -> %l\n') |
    sed 's/ -> $//' | LC_ALL=C sort >"$work/found"
diff -u "$work/expected" "$work/found" >"$work/layout.diff" ||
    { sed -n '3,$p' "$work/layout.diff" | grep '^[-+]'; die "$prefix: the files are not as expected (- expected, + found)"; }
for h in pmi $([ "$pmi2" = 1 ] && echo pmi2); do
    got=$(PKG_CONFIG_LIBDIR=$prefix/lib/pkgconfig pkg-config --variable=libdir "$h")
    [ "$got" = "$prefix/lib" ] || die "$prefix/lib/pkgconfig/$h.pc: libdir is '$got'"
    readelf -d "$prefix/lib/lib$h.so.0.0.0" | grep -q "SONAME.*\[lib$h.so.0\]" ||
        die "$prefix/lib/lib$h.so.0.0.0: SONAME is not lib$h.so.0"
done
say "$prefix: $(wc -l <"$work/expected") files and links as expected (pmi2 $pmi2, static $static)"
[ "$run" = 1 ] || exit 0

# As a user of the loaded environment: pkg-config and the compiler, then the launcher.
hydra=("$tree/scripts/no-sigpipe" "${MPIEXEC:-mpiexec.hydra}" -launcher fork -n 2)
flags=(-std=c99 -Wall -Wextra -Werror -pedantic -O1)
progs=(exchange:pmi)
[ "$pmi2" = 0 ] || progs+=(pmi2_exchange:pmi2)
for p in "${progs[@]}"; do
    prog=${p%%:*} h=${p#*:}
    # (pkg-config's own word is kept first: a failing pkg-config must fail here.)
    pc=$(pkg-config --cflags --libs "$h") || die "pkg-config does not know $h in this environment"
    ${CC:-cc} "${flags[@]}" -o "$work/$prog" "$tree/c-tests/$prog.c" $pc || die "$prog does not build with: $pc"
    loaded=$(ldd "$work/$prog" | awk -v l="lib$h.so.0" '$1 == l {print $3}')
    [ "$loaded" = "$prefix/lib/lib$h.so.0" ] || die "$prog loads '$loaded', not $prefix/lib/lib$h.so.0"
done
"${hydra[@]}" "$work/exchange" -q </dev/null || die "exchange (pkg-config pmi) failed under Hydra"
[ "$pmi2" = 0 ] || "${hydra[@]}" "$work/pmi2_exchange" -1 </dev/null >/dev/null ||
    die "pmi2_exchange (pkg-config pmi2) failed under Hydra"
[ "$(command -v pmi-probe)" = "$prefix/bin/pmi-probe" ] || die "pmi-probe on PATH is '$(command -v pmi-probe)'"
n=$("${hydra[@]}" pmi-probe --json </dev/null | grep -c '"verdict":"ok"') || true
[ "$n" = 2 ] || die "pmi-probe under Hydra: $n of 2 processes said ok"
say "$(echo "${progs[@]%%:*}" | sed 's/ / and /') built through pkg-config ($(echo "${progs[@]#*:}")) on $prefix/lib and ran under Hydra, n = 2; pmi-probe ok"
