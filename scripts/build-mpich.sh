#!/usr/bin/env bash
# Build MPICH from Debian's source package so that its libmpi.so loads an EXTERNAL
# libpmi.so.0 (the ch3:nemesis device, no process manager, the "slurm" PMI, which is
# just "link -lpmi and include <pmi.h>"). No Fortran, no C++, no ROMIO.
#
# The installed build is cached outside the repository, in
#   ${MPICH_CACHE:-$HOME/.cache/libpmi-mpich}/<Debian source version>
# and a second run only checks it and prints its prefix (the last line of stdout).
#
# Needs root for what it installs (deb-src entries, libpmi0-dev, the compilers, dpkg-dev);
# without root it says exactly what is missing.
# Usage: scripts/build-mpich.sh        -> prints the install prefix on its last line
#        scripts/build-mpich.sh --builtin-pmi
#            the same MPICH with its own built-in PMI client instead (the baseline to
#            compare with: is a failure ours or MPICH's?), cached in <version>-builtin-pmi
#        scripts/build-mpich.sh --simple-pmi
#            only MPICH's simple PMI clients (src/pmi/simple/*.c and
#            src/pmi/pmi2/simple/*.c, with the parts of its mpl they call), as standalone
#            lib/libpmi.so.0 and lib/libpmi2.so.0: the references `make bench` measures
#            this library against; cached in <version>-simple-pmi
set -euo pipefail

BUILTIN=0 SIMPLE=0
case ${1:-} in
    "") ;;
    --builtin-pmi) BUILTIN=1 ;;
    --simple-pmi) SIMPLE=1 ;;
    *) echo "usage: $0 [--builtin-pmi | --simple-pmi]" >&2; exit 2 ;;
esac
SUFFIX=; [ $BUILTIN = 0 ] || SUFFIX=-builtin-pmi
[ $SIMPLE = 0 ] || SUFFIX=-simple-pmi
CACHE_ROOT=${MPICH_CACHE:-$HOME/.cache/libpmi-mpich}
JOBS=${MPICH_JOBS:-2}
SLURM_INC=/usr/include/slurm
SLURM_LIB=/usr/lib/x86_64-linux-gnu
log() { echo "build-mpich: $*" >&2; }
is_root() { [ "$(id -u)" = 0 ]; }

# A prefix is good when it was completed and libmpi needs an external libpmi.so.0
# (or, for --builtin-pmi, does not).
needs_libpmi() { readelf -d "$1/lib/libmpi.so.12" | grep -q 'NEEDED.*\[libpmi\.so\.0\]'; }
good_prefix() {
    local p=$1
    if [ $SIMPLE = 1 ]; then
        [ -f "$p/.complete" ] && [ -f "$p/lib/libpmi.so.0" ] && [ -f "$p/lib/libpmi2.so.0" ]; return
    fi
    [ -f "$p/.complete" ] && [ -x "$p/bin/mpicc" ] && [ -f "$p/lib/libmpi.so.12" ] || return 1
    if [ $BUILTIN = 0 ]; then needs_libpmi "$p"; else ! needs_libpmi "$p"; fi
}

# Fast path: any cached version that is complete (the newest one), without touching apt.
if [ -z "${MPICH_VERSION:-}" ] && [ -d "$CACHE_ROOT" ]; then
    while IFS= read -r p; do
        p=${p%/}
        [ -n "$SUFFIX" ] || case $p in *-builtin-pmi | *-simple-pmi) continue ;; esac
        if good_prefix "$p"; then log "cached: $p"; echo "$p"; exit 0; fi
    done < <(ls -1d "$CACHE_ROOT"/*"$SUFFIX"/ 2>/dev/null | sort -rV)
fi

# ---- deb-src entries, idempotently -------------------------------------------------
has_deb_src() {
    grep -Eqs '^[[:space:]]*deb-src[[:space:]]' /etc/apt/sources.list /etc/apt/sources.list.d/*.list ||
        grep -Eqs '^Types:.*\bdeb-src\b' /etc/apt/sources.list.d/*.sources
}
add_deb_src() {
    local changed=0 f
    # deb822 (Debian 12 default): add deb-src to every "Types: deb" stanza.
    for f in /etc/apt/sources.list.d/*.sources; do
        [ -f "$f" ] || continue
        grep -q 'debian' "$f" || continue
        if grep -Eq '^Types:[[:space:]]*deb[[:space:]]*$' "$f"; then
            cp -n "$f" "$f.bak"   # apt ignores *.bak silently
            sed -i -E 's/^Types:[[:space:]]*deb[[:space:]]*$/Types: deb deb-src/' "$f"
            log "added deb-src to $f"; changed=1
        fi
    done
    # Classic one-line format: a deb-src twin for every Debian "deb" line.
    f=/etc/apt/sources.list
    if [ -f "$f" ] && grep -Eq '^[[:space:]]*deb[[:space:]].*debian' "$f"; then
        local lines
        lines=$(grep -E '^[[:space:]]*deb[[:space:]].*debian' "$f" | sed -E 's/^[[:space:]]*deb[[:space:]]/deb-src /')
        while IFS= read -r l; do
            grep -qxF "$l" "$f" || { echo "$l" >> "$f"; changed=1; log "added '$l' to $f"; }
        done <<< "$lines"
    fi
    [ $changed = 1 ] || has_deb_src
}

# ---- build dependencies: the minimal set for this configuration ----------------------
# gcc/make (build-essential), dpkg-dev (dpkg-source unpacks the package), libpmi0-dev
# (pmi.h and the libpmi.so link MPICH is linked against), libhwloc-dev (MPICH 4 needs
# hwloc; Debian's source strips the embedded copy), pkg-config for finding it.
NEED=(build-essential dpkg-dev libpmi0-dev libhwloc-dev pkgconf)
missing=()
for p in "${NEED[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
need_src=0; has_deb_src || need_src=1
if [ ${#missing[@]} -gt 0 ] || [ $need_src = 1 ]; then
    if ! is_root; then
        [ $need_src = 1 ] && log "no deb-src entries: add deb-src to Types: in /etc/apt/sources.list.d/debian.sources"
        [ ${#missing[@]} -gt 0 ] && log "run as root: apt-get install ${missing[*]}"
        exit 1
    fi
    [ $need_src = 1 ] && { add_deb_src || { log "could not add deb-src entries"; exit 1; }; }
    log "apt-get update"
    apt-get update -qq -o Acquire::Retries=3
    if [ ${#missing[@]} -gt 0 ]; then
        log "installing ${missing[*]}"
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq -o Acquire::Retries=3 --no-install-recommends "${missing[@]}" >/dev/null
    fi
fi

VERSION=${MPICH_VERSION:-$(apt-cache showsrc mpich 2>/dev/null | sed -n 's/^Version: //p' | sort -rV | head -n 1)}
if [ -z "$VERSION" ]; then
    if is_root; then apt-get update -qq -o Acquire::Retries=3; VERSION=$(apt-cache showsrc mpich | sed -n 's/^Version: //p' | sort -rV | head -n 1); fi
    [ -n "$VERSION" ] || { log "apt-cache showsrc mpich: no source package (deb-src missing?)"; exit 1; }
fi
PREFIX=$CACHE_ROOT/$VERSION$SUFFIX
if good_prefix "$PREFIX"; then log "cached: $PREFIX"; echo "$PREFIX"; exit 0; fi

# ---- fetch, configure, build, install ------------------------------------------------
WORK=$CACHE_ROOT/.build-$VERSION$SUFFIX
rm -rf "$WORK" "$PREFIX"
mkdir -p "$WORK"
start=$(date +%s)
log "apt-get source mpich=$VERSION into $WORK"
# As root, _apt cannot write into $WORK: download as root rather than warn about it.
(cd "$WORK" && apt-get source -qq -o Acquire::Retries=3 -o APT::Sandbox::User=root "mpich=$VERSION" >/dev/null)
SRC=$(ls -1d "$WORK"/mpich-*/ | head -n 1)
cd "$SRC"
if [ $SIMPLE = 1 ]; then
    # mpl's own configure gives mplconfig.h; three one-line headers stand in for what
    # MPICH's configure would give the client (it reads no other result).
    log "configure src/mpl"
    (cd src/mpl && ./configure --disable-versioning --enable-embedded) > "$WORK/configure.log" 2>&1 ||
        { tail -n 40 "$WORK/configure.log" >&2; log "mpl configure failed"; exit 1; }
    mkdir -p "$WORK/shim" "$PREFIX/lib"
    printf '#define HAVE_%s 1\n' STDLIB_H STRING_H STRINGS_H UNISTD_H SYS_TYPES_H SYS_SOCKET_H \
        > "$WORK/shim/mpichconf.h"
    echo '#define USE_PMI_PORT 1' >> "$WORK/shim/mpichconf.h"
    echo '#define MPI_MAX_PORT_NAME 256' > "$WORK/shim/mpi.h"
    echo '#include "mpl.h"' > "$WORK/shim/mpir_mem.h"
    ${CC:-cc} -O2 -fPIC -shared -Wl,-soname,libpmi.so.0 -I"$WORK/shim" -Isrc/pmi/include \
        -Isrc/mpl/include -Isrc/pmi/simple -o "$PREFIX/lib/libpmi.so.0" \
        src/pmi/simple/simple_pmi.c src/pmi/simple/simple_pmiutil.c src/mpl/src/str/mpl_str.c \
        src/mpl/src/msg/mpl_msg.c src/mpl/src/sock/mpl_sockaddr.c 2> "$WORK/make.log" ||
        { cat "$WORK/make.log" >&2; log "compiling the simple PMI client failed"; exit 1; }
    # The PMI-2 client as a single-threaded MPICH process runs it: MPICH_IS_THREADED
    # compiles its locks in, MPIR_THREAD_CHECK skips them as MPICH does when the process
    # is not threaded; error checking on, as MPICH builds by default.
    mkdir -p "$WORK/shim2"
    { cat "$WORK/shim/mpichconf.h"; printf '#define %s 1\n' USE_PMI2_API MPICH_IS_THREADED HAVE_ERROR_CHECKING; } \
        > "$WORK/shim2/mpichconf.h"
    cat > "$WORK/shim2/mpiimpl.h" <<'SHIM'
#include "mpl.h"
#include <assert.h>
#include <string.h>
#define TRUE 1
#define FALSE 0
#define MPIR_Assert assert
#define MPIR_Memcpy memcpy
#define MPIR_THREAD_CHECK_BEGIN if (0) {
#define MPIR_THREAD_CHECK_END }
typedef struct MPIR_Info { char *key; char *value; } MPIR_Info;
SHIM
    ${CC:-cc} -O2 -fPIC -shared -Wl,-soname,libpmi2.so.0 -I"$WORK/shim2" -Isrc/pmi/pmi2/include \
        -Isrc/mpl/include -Isrc/pmi/pmi2/simple -o "$PREFIX/lib/libpmi2.so.0" \
        src/pmi/pmi2/simple/simple2pmi.c src/pmi/pmi2/simple/simple_pmiutil.c \
        src/mpl/src/str/mpl_str.c src/mpl/src/msg/mpl_msg.c src/mpl/src/sock/mpl_sockaddr.c \
        2> "$WORK/make2.log" ||
        { cat "$WORK/make2.log" >&2; log "compiling the simple PMI-2 client failed"; exit 1; }
    nm -D --defined-only "$PREFIX/lib/libpmi.so.0" | grep -q ' T PMI_KVS_Get$' ||
        { log "$PREFIX/lib/libpmi.so.0 lacks PMI_KVS_Get"; exit 1; }
    nm -D --defined-only "$PREFIX/lib/libpmi2.so.0" | grep -q ' T PMI2_KVS_Get$' ||
        { log "$PREFIX/lib/libpmi2.so.0 lacks PMI2_KVS_Get"; exit 1; }
    touch "$PREFIX/.complete"
    cd /; rm -rf "$WORK"
    log "built MPICH $VERSION's simple PMI clients in $(( $(date +%s) - start )) s: $PREFIX"
    echo "$PREFIX"
    exit 0
fi
if [ $BUILTIN = 0 ]; then
    PMI_OPTS=(--with-pmi=slurm --with-slurm-include="$SLURM_INC" --with-slurm-lib="$SLURM_LIB")
else
    PMI_OPTS=(--with-pmi=simple)
fi
log "configure ${PMI_OPTS[*]} (prefix $PREFIX)"
./configure --prefix="$PREFIX" \
    --with-device=ch3:nemesis --with-pm=none "${PMI_OPTS[@]}" \
    --disable-fortran --disable-cxx --disable-romio \
    --disable-doc --disable-static --enable-shared \
    > "$WORK/configure.log" 2>&1 || { tail -n 40 "$WORK/configure.log" >&2; log "configure failed: $WORK/configure.log"; exit 1; }
log "make -j$JOBS"
make -j"$JOBS" > "$WORK/make.log" 2>&1 || { tail -n 40 "$WORK/make.log" >&2; log "make failed: $WORK/make.log"; exit 1; }
make install > "$WORK/install.log" 2>&1 || { tail -n 40 "$WORK/install.log" >&2; log "make install failed"; exit 1; }

if [ $BUILTIN = 0 ]; then
    readelf -d "$PREFIX/lib/libmpi.so.12" | grep 'NEEDED.*\[libpmi\.so\.0\]' >&2 ||
        { log "$PREFIX/lib/libmpi.so.12 does not need libpmi.so.0"; exit 1; }
elif needs_libpmi "$PREFIX"; then
    log "$PREFIX/lib/libmpi.so.12 needs libpmi.so.0 although built with its own PMI"; exit 1
fi
touch "$PREFIX/.complete"
cd /; rm -rf "$WORK"
log "built MPICH $VERSION in $(( $(date +%s) - start )) s: $PREFIX"
echo "$PREFIX"
