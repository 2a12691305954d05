#!/usr/bin/env bash
# The static archives as installed (make check-static): only the API's names are
# global; pkg-config --static names what a static link needs; a program linked fully
# static through it runs under the launcher (and refuses the PMIx backend it cannot
# load); both archives and another Rust static library share one program. The C tests
# linked with the archives are c-tests/run-tests.sh with HARNESS_STATIC=1.
# Usage: dropin-tests/static.sh BINDIR PREFIX      (LAUNCHER: see scripts/harness.sh)
b=$(cd "$1" && pwd)
prefix=$(cd "$2" && pwd)
unset LD_LIBRARY_PATH # nothing of the shared libraries may be needed
source "$(dirname "$0")/../scripts/harness.sh" "$b/logs-static-${LAUNCHER:-hydra4}"
HARNESS_SUITE=static
K=$LAUNCHER
source "$harness_root/scripts/launchers.sh" expect "$K"
two=1
launcher_has_two_nodes "$K" && two=2
pc() { PKG_CONFIG_PATH=$prefix/lib/pkgconfig pkg-config "$@"; }

# --- 1. The archives (once, in the default pass) -------------------------------------------
if [ "$K" = hydra4 ]; then
    for lib in pmi pmi2; do
        list=$harness_root/symbols.txt
        [ "$lib" = pmi2 ] && list=$harness_root/symbols2.txt
        a=$prefix/lib/lib$lib.a
        # (Weak references to the other API's query, sibling.c, are not definitions.)
        if nm -g --defined-only "$a" | awk 'NF == 3 { print $3 }' | sort | diff -u "$list" - \
            >"$logdir/globals-$lib.diff"; then
            pass "archive-$lib-globals-are-the-api" "$(wc -l <"$list") names, as ${list##*/}"
        else
            fail "archive-$lib-globals-are-the-api" "other globals in $a" "$logdir/globals-$lib.diff"
        fi
        # A COMDAT group of a common name would be merged with another object's.
        groups=$(readelf -g "$a" | sed -n "s/^COMDAT group section .*\[\(.*\)\] contains.*/\1/p" |
                 grep -v "^lib$lib\\." || true)
        if [ -z "$groups" ]; then
            pass "archive-$lib-groups-its-own"
        else
            fail "archive-$lib-groups-its-own" "groups named as another object's may be: $groups"
        fi
        want="-L$prefix/lib -l$lib $("$harness_root/scripts/static-archive.sh" --private-libs)"
        got=$(pc --static --libs "$lib" | sed "s/ *$//")
        if [ "$got" = "$want" ]; then
            pass "pkg-config-static-$lib" "$got"
        else
            fail "pkg-config-static-$lib" "pkg-config --static --libs $lib gives '$got', not '$want'"
        fi
    done
    # Linked with -static and exactly pkg-config --static's line (make): no dynamic section.
    if readelf -d "$b/exchange-full-static" 2>&1 | grep -q 'no dynamic section'; then
        pass full-static-linked "$(file -b "$b/exchange-full-static" | cut -d, -f1-4)"
    else
        fail full-static-linked "$b/exchange-full-static has a dynamic section"
    fi
    # A statically linked program cannot load a PMIx client library: it says so.
    run full-static-refuses-pmix 2 --expect log "is statically linked (no dynamic loader)" -- \
        env PMIX_NAMESPACE=prterun-x@1 PMIX_RANK=1 "$b/exchange-full-static" -q
    run full-static-singleton 0 --expect log "rank 0 of 1" -- "$b/exchange-full-static"
fi

# --- 2. Under the launcher -------------------------------------------------------------------
if check_backend_is pmix; then
    launcher "$K" 2
    run full-static-refused-under-pmix nonzero --expect log "is statically linked (no dynamic loader)" \
        -- "${L[@]}" "$b/exchange-full-static" -q
else
    launcher "$K" 4 "$two"
    run "full-static-exchange-n4" 0 -- "${L[@]}" "$b/exchange-full-static" -q
    # Both archives in one -static program: the second library to initialize is refused.
    launcher "$K" 2
    for first in 1 2; do
        run "full-static-two-libs-$first" 0 --expect log "is initialized in this process and owns its connection" \
            -- "${L[@]}" "$b/two_libs-full-static" $first
    done
fi
launcher "$K" 4 "$two"
run "neighbour-n4" 0 --count 4 "the neighbour's answers right" -- "${L[@]}" "$b/neighbour"
summary "static${K:+ ($K)}"
