#!/usr/bin/env bash
# Flux's own PMI clients as peers of this library, under one launcher (LAUNCHER: see
# scripts/harness.sh): the portable C programs run with this library and, in its place,
# with Flux's libpmi.so.0 and libpmi2.so.0 (FLUX_PREFIX/lib/flux: an installed
# flux-core); and Flux's own client tool, flux pmi, drives this library through
# --method=libpmi:PATH and libpmi2:PATH (and Flux's, for reference).
# Usage: c-tests/run-peers.sh BINDIR LIBDIR
# Suite "peers", cases CLIENT:PROGRAM (clients: ours, flux, ours2, flux2, and
# fluxpmi-ours, fluxpmi-ours2, fluxpmi-flux). This library's cases are verdicts; Flux's
# clients' are findings (scripts/harness.sh's observe: PASS, or DIFF with the first check
# they failed), which do not count in the closing line.
b=$(cd "$1" && pwd)
lib=$(cd "$2" && pwd)
unset LD_LIBRARY_PATH # each case names the client's folder
source "$(dirname "$0")/../scripts/harness.sh" "$b/logs-peers-${LAUNCHER:-hydra4}"
HARNESS_SUITE=peers
K=$LAUNCHER
source "$harness_root/scripts/launchers.sh" expect "$K"
fluxlib=${FLUX_PREFIX:?FLUX_PREFIX: an installed flux-core}/lib/flux
flux=$FLUX_PREFIX/bin/flux
two=1
launcher_has_two_nodes "$K" && two=2
launcher "$K" 4 "$two"

# case_of CLIENT NAME FAMILY [CHECK...] -- COMMAND...: the program's case, this library's
# a verdict (as the launcher is expected to do it: its server's deviations allowed),
# another client's a finding (told the same deviations).
case_of() {
    local c=$1 name=$2 family=$3 checks=()
    shift 3
    while [ "$1" != -- ]; do checks+=("$1"); shift; done
    shift
    if [ "${c#ours}" != "$c" ] || [ "${c#fluxpmi-ours}" != "$c" ]; then
        run_expected "$c:$name" "$family" 0 "${checks[@]}" -- "$@"
    else
        observe "$c:$name" 0 "${checks[@]}" -- env CHECK_DEVIATIONS="${DEVIATES[$family]:-}" "$@"
    fi
}

# client CLIENT DIR API: runs the programs of API (1 or 2) with DIR first on
# LD_LIBRARY_PATH, after checking that the dynamic linker picks the library from DIR.
client() {
    local c=$1 dir=$2 api=$3 so=libpmi.so.0 prog=exchange
    [ "$api" = 1 ] || so=libpmi2.so.0 prog=pmi2_exchange
    local got
    got=$(LD_LIBRARY_PATH=$dir resolved_libpmi "$b/$prog" "$so")
    if [ "$(readlink -f "$got")" = "$(readlink -f "$dir/$so")" ]; then
        pass "$c:loads" "$got"
    else
        fail "$c:loads" "$so resolves to '$got', not $dir/$so"
        return
    fi
    local run=(env LD_LIBRARY_PATH="$dir" "${L[@]}")
    if [ "$api" = 1 ]; then
        case_of "$c" info info -- "${run[@]}" "$b/info" 4 "$EXPECT_APPNUM" "$(expect_universe 4)" $EXPECT_MAXES
        case_of "$c" exchange exchange -- "${run[@]}" "$b/exchange" -q
        case_of "$c" barrier barrier -- "${run[@]}" "$b/barrier" 100
        case_of "$c" clique clique -- "${run[@]}" "$b/clique"
    else
        case_of "$c" pmi2-exchange pmi2-exchange -- "${run[@]}" "$b/pmi2_exchange" "$(expect_universe 4)"
    fi
}
# Flux serves no PMI-2 wire: this library's PMI-2 side cannot run there (the C tests show
# it once); Flux's libpmi2.so speaks the PMI-2 API over the PMI-1 wire.
client ours "$lib" 1
client flux "$fluxlib" 1
[ "${K%-vc}" = flux ] || client ours2 "$lib" 2
client flux2 "$fluxlib" 2

# flux pmi, Flux's client tool, with each library; --libpmi-noflux refuses Flux's own.
for m in "fluxpmi-ours libpmi:$lib/libpmi.so.0 --libpmi-noflux" \
    "fluxpmi-ours2 libpmi2:$lib/libpmi2.so.0" "fluxpmi-flux libpmi:$fluxlib/libpmi.so.0"; do
    read -r c method noflux <<<"$m"
    [ "$c" != fluxpmi-ours2 ] || [ "${K%-vc}" != flux ] || continue
    for sub in exchange barrier; do
        case_of "$c" "$sub" "$sub" --expect log "completed pmi $sub on 4 tasks" -- \
            "${L[@]}" "$flux" pmi $noflux --method="$method" "$sub"
    done
done
summary "peers ($K)"
