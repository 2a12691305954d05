#!/usr/bin/env bash
# The Debian packages installed (scripts/check-deb.sh runs this between installing and
# removing them): the system's libpmi.so.0 and libpmi2.so.0 are this library's, with no
# LD_LIBRARY_PATH; a binary built earlier against Slurm's libpmi.so.0 now runs on ours
# under Hydra (Slurm's cannot: dropin-tests/run.sh's control); dlopen finds ours; the
# system's pkg-config, headers and archives build programs that run; pmi-probe and the
# manual pages are where a user looks. The C tests built against the installed files are
# c-tests/run-tests.sh with HARNESS_LOADED_FROM.
# Usage: dropin-tests/installed.sh BINDIR DROPINDIR   (BINDIR: make installed-progs;
#        DROPINDIR: the drop-in programs built against Slurm's library, make test-dropin)
b=$(cd "$1" && pwd)
d=$(cd "$2" && pwd)
unset LD_LIBRARY_PATH PKG_CONFIG_PATH
source "$(dirname "$0")/../scripts/harness.sh" "$b/logs-installed"
HARNESS_SUITE=installed
K=hydra4
source "$harness_root/scripts/launchers.sh" expect "$K"
sys=/usr/lib/$(dpkg-architecture -qDEB_HOST_MULTIARCH)
export HARNESS_LOADED_FROM=$sys/libpmi.so.0
version=$(sed -n 's/^version = "\(.*\)"/\1/p' "$harness_root/Cargo.toml" | head -n 1)

# Each file is the package's.
for pair in "$sys/libpmi.so.0 libpmi0-rs" "$sys/libpmi2.so.0 libpmi2-0-rs" \
    "$sys/libpmi.a libpmi-rs-dev" "/usr/include/pmi.h libpmi-rs-dev" \
    "/usr/include/slurm/pmi2.h libpmi-rs-dev" "/usr/bin/pmi-probe pmi-probe"; do
    set -- $pair
    owner=$(dpkg -S "$1" 2>/dev/null | cut -d: -f1)
    if [ "$owner" = "$2" ]; then pass "owned-${1##*/}" "$1: $owner"; else fail "owned-${1##*/}" "$1 belongs to '$owner'"; fi
done

launcher hydra4 4 2
# Built against Slurm's library before the packages were installed: now ours, unasked.
run legacy-binary-runs-on-ours 0 --count 4 "8/8 business cards, libpmi.so.0 from $(readlink -f "$sys/libpmi.so.0")" \
    --expect log "libpmi[0] " -- env PMI_DEBUG=1 "${L[@]}" "$d/swap" "$sys/libpmi.so.0"
run dlopen-finds-the-package 0 --expect log "dlsym found 34/34 functions" -- \
    "$d/dlopen" "$harness_root/symbols.txt" "$sys/libpmi.so.0"

# The system's pkg-config knows both modules, and the programs it built run.
for m in pmi pmi2; do
    got=$(pkg-config --modversion "$m" 2>&1)
    if [ "$got" = "$version" ]; then pass "pkg-config-$m" "$m $got"; else fail "pkg-config-$m" "'$got', not $version"; fi
done
check_loaded "$b/exchange"
run exchange-built-with-the-package-n4 0 -- "${L[@]}" "$b/exchange" -q
run pmi2-exchange-built-with-the-package-n4 0 -- "${L[@]}" "$b/pmi2_exchange" -1
run full-static-with-the-package-archive-n4 0 -- "${L[@]}" "$b/exchange-full-static" -q
run pmi-probe-installed-n4 0 --count 4 '"verdict":"ok"' -- "${L[@]}" /usr/bin/pmi-probe --json
run pmi-probe-installed-pmi2-n4 0 --count 4 '"verdict":"ok"' -- "${L[@]}" /usr/bin/pmi-probe --pmi2 --json

# The manual pages.
for page in "3 pmi" "3 pmi2" "1 pmi-probe"; do
    set -- $page
    where=$(man -w "$1" "$2" 2>&1)
    case $where in
        /usr/share/man/man$1/$2.$1.gz) pass "man-$2" "$where" ;;
        *) fail "man-$2" "man -w $1 $2: $where" ;;
    esac
done
# A function's name leads to its library's page (the package links the name to it).
for page in "PMI_Get_rank pmi" "PMI2_KVS_Fence pmi2"; do
    set -- $page
    where=$(man -w 3 "$1" 2>&1)
    case $where in
        /usr/share/man/man3/$2.3.gz) pass "man-$1" "$where" ;;
        *) fail "man-$1" "man -w 3 $1: $where" ;;
    esac
done
# The -dbgsym packages: each stripped file's build id leads to its debug file, which
# holds the symbols (what gdb and a core dump's reader look for).
for pair in "$sys/libpmi.so.0 PMI_Init" "$sys/libpmi2.so.0 PMI2_Init" "/usr/bin/pmi-probe main"; do
    set -- $pair
    id=$(readelf -n "$1" 2>/dev/null | sed -n 's/^ *Build ID: *//p')
    debug=/usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug
    if [ -z "$id" ]; then
        fail "debug-symbols-${1##*/}" "$1 has no build id"
    elif readelf -SW "$1" | grep -q ' \.symtab '; then
        fail "debug-symbols-${1##*/}" "$1 is not stripped"
    elif ! readelf -sW "$debug" 2>/dev/null | grep -qw "$2"; then
        fail "debug-symbols-${1##*/}" "no $2 in $debug"
    else
        pass "debug-symbols-${1##*/}" "$debug ($(dpkg -S "$debug" | cut -d: -f1)) names $2"
    fi
done
summary installed
