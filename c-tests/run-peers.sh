#!/usr/bin/env bash
# Other PMI clients as peers of this library, under one launcher (LAUNCHER: see
# scripts/harness.sh): the portable C programs run with this library and, in its place,
# with the peer's clients. PEER names the peer, each an installed client given by hand
# (nothing in this tree fetches or builds one):
#   flux    Flux's libpmi.so.0 and libpmi2.so.0 (FLUX_PREFIX/lib/flux: an installed
#           flux-core), and Flux's own client tool, flux pmi, driving this library through
#           --method=libpmi:PATH and libpmi2:PATH (and Flux's, for reference); suite
#           "peers", clients ours, flux, ours2, flux2, fluxpmi-ours, fluxpmi-ours2,
#           fluxpmi-flux.
#   mpich5  MPICH 5's own client, built alone from its src/pmi (MPICH5_PMI_PREFIX: the
#           prefix it was installed into; one libpmi.so with both APIs, given to PMI-2
#           programs as libpmi2.so.0); suite "peers-mpich5", clients ours, mpich5, ours2,
#           mpich52.
# Usage: c-tests/run-peers.sh BINDIR LIBDIR
# Cases are CLIENT:PROGRAM. This library's cases are verdicts; the peer's are findings
# (scripts/harness.sh's observe: PASS, or DIFF with the first check they failed), which
# do not count in the closing line.
b=$(cd "$1" && pwd)
lib=$(cd "$2" && pwd)
unset LD_LIBRARY_PATH # each case names the client's folder
peer=${PEER:-flux}
source "$(dirname "$0")/../scripts/harness.sh" "$b/logs-peers-$peer-${LAUNCHER:-hydra4}"
HARNESS_SUITE=peers
K=$LAUNCHER
source "$harness_root/scripts/launchers.sh" expect "$K"
case $peer in
    flux)
        fluxlib=${FLUX_PREFIX:?FLUX_PREFIX: an installed flux-core}/lib/flux
        flux=$FLUX_PREFIX/bin/flux
        peer1=$fluxlib peer2=$fluxlib
        ;;
    mpich5)
        HARNESS_SUITE=peers-mpich5
        peer1=${MPICH5_PMI_PREFIX:?MPICH5_PMI_PREFIX: the prefix of MPICH 5 src/pmi as installed}/lib
        # Its one library serves PMI-2 programs too, under the name they load.
        peer2=$b/mpich5-pmi2
        mkdir -p "$peer2" && ln -sf "$peer1/libpmi.so.0" "$peer2/libpmi2.so.0"
        ;;
    *)
        echo "run-peers: PEER=$peer: not a peer (flux, mpich5)" >&2
        exit 2
        ;;
esac
two=1
launcher_has_two_nodes "$K" && two=2
launcher "$K" 4 "$two"

# case_of CLIENT NAME FAMILY [CHECK...] -- COMMAND...: the program's case, this library's
# a verdict (as the launcher is expected to do it: its server's deviations allowed),
# another client's a finding (told the same deviations).
case_of() {
    local c=$1 name=$2 family=$3 checks=() arg missing
    shift 3
    while [ "$1" != -- ]; do checks+=("$1"); shift; done
    shift
    if [ "${c#ours}" != "$c" ] || [ "${c#fluxpmi-ours}" != "$c" ]; then
        run_expected "$c:$name" "$family" 0 "${checks[@]}" -- "$@"
        return
    fi
    # A client that lacks a function the program calls cannot run it (the dynamic
    # linker stops the program; some launchers then wait for ever): said, not run. (A
    # weak reference is the program's to do without.)
    for arg in "$@"; do
        [ "${arg#"$b"/}" != "$arg" ] && [ -f "$arg" ] && [ -x "$arg" ] && [ -n "${peer_so:-}" ] || continue
        missing=$(comm -23 <(nm -D --undefined-only "$arg" | awk '$1 == "U" && $2 ~ /^PMI/ { print $2 }' | sort) \
            <(nm -D --defined-only "$peer_so" | awk '{ print $3 }' | sort) | tr '\n' ' ')
        if [ -n "$missing" ]; then
            echo "DIFF $c:$name (the client lacks ${missing% })"
            record DIFF "$c:$name" "the client lacks ${missing% }"
            return
        fi
    done
    observe "$c:$name" 0 "${checks[@]}" -- env CHECK_DEVIATIONS="${DEVIATES[$family]:-}" \
        CHECK_CLIQUE_OPTIONAL=1 "$@"
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
    local run=(env LD_LIBRARY_PATH="$dir" "${L[@]}") peer_so=$dir/$so
    if [ "$api" = 1 ]; then
        case_of "$c" info info -- "${run[@]}" "$b/info" 4 "$EXPECT_APPNUM" "$(expect_universe 4)" $EXPECT_MAXES
        case_of "$c" exchange exchange -- "${run[@]}" "$b/exchange" -q
        case_of "$c" barrier barrier -- "${run[@]}" "$b/barrier" 100
        case_of "$c" clique clique -- "${run[@]}" "$b/clique"
        # MPICH 5's client is PMI 1.2's own: group barriers as the launcher's server has
        # them, and one truth per key.
        if [ "$peer" = mpich5 ]; then
            case_of "$c" "groups-$EXPECT_GROUPS" groups -- env CHECK_GROUPS="$EXPECT_GROUPS" \
                "${run[@]}" "$b/groups"
            case_of "$c" values values -- "${run[@]}" "$b/values"
        fi
    else
        case_of "$c" pmi2-exchange pmi2-exchange -- "${run[@]}" "$b/pmi2_exchange" "$(expect_universe 4)"
        [ "$peer" != mpich5 ] || case_of "$c" pmi2-values pmi2-values -- "${run[@]}" "$b/pmi2_values"
    fi
}
if [ "$peer" = mpich5 ]; then
    client ours "$lib" 1
    client mpich5 "$peer1" 1
    client ours2 "$lib" 2
    client mpich52 "$peer2" 2
    summary "peers-mpich5 ($K)"
    exit
fi
# Flux serves no PMI-2 wire: this library's PMI-2 side cannot run there (the C tests show
# it once); Flux's libpmi2.so speaks the PMI-2 API over the PMI-1 wire.
client ours "$lib" 1
client flux "$peer1" 1
[ "${K%-vc}" = flux ] || client ours2 "$lib" 2
client flux2 "$peer2" 2

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
