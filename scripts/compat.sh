#!/usr/bin/env bash
# `make compat`: run the portable suites under every launcher this machine can have, and
# write the compatibility matrix (server x launch mode x test) from what the runs printed.
#
#   scripts/compat.sh OUTDIR [DOC]
#   scripts/compat.sh --replace DOC MARK TABLE
#
# OUTDIR gets results.tsv (one line per verdict, from scripts/harness.sh), the
# conformance reports, and matrix.md; with DOC (make compat passes docs/COMPAT.md), the
# table between its "<!-- compat:begin -->" and "<!-- compat:end -->" lines is replaced
# by matrix.md (and with COMPAT_THREE_HOSTS=1 the one between the compat3 markers by
# matrix-3hosts.md). --replace does that one step alone: the lines between DOC's
# "<!-- MARK:begin -->" and "<!-- MARK:end -->" become the file TABLE.
# With COMPAT_HOSTFAIL=1 (make compat) each KIND-vc also runs scripts/hostfail.sh, whose
# table replaces the one between the compat-hostfail markers.
# Flux is run only where FLUX_PREFIX names an installed flux-core (CI has none): its
# kinds, and the peers (c-tests/run-peers.sh) under COMPAT_PEER_LAUNCHERS, make
# matrix-flux.md, which replaces the compat-flux markers' table only when COMPAT_FLUX_DOC=1
# (make compat); a table is rewritten only when this run measured its rows. Likewise
# MPICH 5's own client (MPICH5_PMI_PREFIX: its src/pmi installed by hand) runs beside this
# library under this run's PMI_FD launchers (c-tests/run-peers.sh, PEER=mpich5), in a
# table of its own (matrix-mpich5.md; the compat-mpich5 markers' with COMPAT_MPICH5_DOC=1).
# Exit status 1 when a case FAILed (the matrix is written all the same), 2 when DOC does
# not hold each marker exactly once.
# Needs the test programs built (make compat does that) and root for the private Slurm.
set -u

# replace DOC MARK TABLE: DOC's lines between <!-- MARK:begin --> and <!-- MARK:end -->
# become TABLE's. A DOC without each marker once is left as it is, and the status is 2:
# otherwise a lost marker would leave the old table in place, and check-compat pass.
replace() {
    local b="<!-- $2:begin -->" e="<!-- $2:end -->"
    [ -r "$3" ] || { echo "compat: no table $3" >&2; return 2; }
    if [ "$(grep -cxF "$b" "$1")" != 1 ] || [ "$(grep -cxF "$e" "$1")" != 1 ] ||
        [ "$(grep -nxF "$b" "$1" | cut -d: -f1)" -gt "$(grep -nxF "$e" "$1" | cut -d: -f1)" ]; then
        echo "compat: $1 does not hold '$b' and then '$e', once each" >&2
        return 2
    fi
    awk -v m="$3" -v b="$b" -v e="$e" '
        $0 == e { while ((getline l < m) > 0) print l; skip = 0 }
        !skip { print }
        $0 == b { skip = 1 }' "$1" >"$1.new" && mv "$1.new" "$1"
}
if [ "${1:-}" = --replace ]; then
    [ $# = 4 ] || { echo "usage: scripts/compat.sh --replace DOC MARK TABLE" >&2; exit 2; }
    replace "$2" "$3" "$4"
    exit
fi

root=$(cd "$(dirname "$0")/.." && pwd)
out=$(mkdir -p "$1" && cd "$1" && pwd)
doc=${2:-}
[ -z "$doc" ] || doc=$(cd "$(dirname "$doc")" && pwd)/$(basename "$doc")
cd "$root"
B=$root/build
export HARNESS_RESULTS=$out/results.tsv
# Only a known flake of a launcher is run again (FLAKES, scripts/launchers.sh), once;
# every retry is printed here with its cause and counted in the last line.
rm -f "$HARNESS_RESULTS"
status=0
total_passed=0 total_failed=0 total_retried=0
# show FILE: a runner's retries and its closing line "LABEL: N passed, N failed[, N retried]",
# added to the totals.
outputs=()
show() {
    outputs+=("$1")
    grep -a '^RETRY ' "$1"
    local last counts
    last=$(tail -n 1 "$1")
    echo "$last"
    counts=$(echo "$last" | sed -n 's/.*: \([0-9]*\) passed, \([0-9]*\) failed\(, \([0-9]*\) retried\)\{0,1\}.*/\1 \2 \4/p')
    [ -n "$counts" ] || { total_failed=$((total_failed + 1)); return; }
    set -- $counts
    total_passed=$((total_passed + $1)) total_failed=$((total_failed + $2))
    total_retried=$((total_retried + ${3:-0}))
}

# Each launcher on this host, then across the virtual cluster's hosts (KIND-vc: two hosts
# by blocks and cyclic; with COMPAT_THREE_HOSTS=1, three hosts 3+2+1 too, in a table of
# their own that check-compat does not compare).
one_host="hydra4 hydra4-port hydra5 impi srun srun-pmix prterun"
fluxes=
if [ -n "${FLUX_PREFIX:-}" ]; then
    fluxes="flux flux-vc"
else
    echo "compat: Flux not run: FLUX_PREFIX is not set (the prefix of a flux-core the site installed: docs/FLUX.md)"
fi
kinds=(${COMPAT_LAUNCHERS:-$one_host $(printf '%s-vc ' $one_host) $fluxes})
# Which tables this run measures: the main ones (any kind but Flux's), Flux's.
main_ran= flux_ran= hostfail_ran=
for K in "${kinds[@]}"; do
    case $K in flux | flux-vc) flux_ran=1 ;; *) main_ran=1 ;; esac
done
peer_kinds=()
[ -z "$flux_ran" ] || read -r -a peer_kinds <<<"${COMPAT_PEER_LAUNCHERS:-flux flux-vc hydra4 hydra5 srun}"
# MPICH 5's client (its src/pmi built alone and installed by hand: MPICH5_PMI_PREFIX)
# beside this library, under the PMI_FD launchers of this run; its own table, which
# replaces the compat-mpich5 markers' only with COMPAT_MPICH5_DOC=1.
# MPICH 5's libmpi built on this library (MPICH5_PREFIX, its programs built by make
# compat) runs classic and sessions programs under Hydra 5 and the PMIx launchers, in the
# same table.
mpich5_kinds=() mpich5_mpi_kinds=()
for K in "${kinds[@]}"; do
    case ${K%-vc} in hydra4 | hydra5 | impi | srun) [ -z "${MPICH5_PMI_PREFIX:-}" ] || mpich5_kinds+=("$K") ;; esac
    case ${K%-vc} in hydra5 | prterun | srun-pmix)
        [ -z "${MPICH5_PREFIX:-}" ] || [ ! -x "$B/mpich5-tests/sessions" ] || mpich5_mpi_kinds+=("$K") ;;
    esac
done
export COMPAT_THREE_HOSTS=${COMPAT_THREE_HOSTS:-0}
# Afterwards, stop what this run started: the Slurm and the Flux across the cluster
# always, the cluster's hosts and the private Slurm of this host only if they were not
# up already.
keep=
[ -n "$(scripts/slurm.sh env "${LIBPMI_SLURM_DIR:-/tmp/libpmi-slurm}" 2>/dev/null)" ] &&
    SLURM_CONF=${LIBPMI_SLURM_DIR:-/tmp/libpmi-slurm}/slurm.conf sinfo >/dev/null 2>&1 && keep=--keep-local
# (A cluster that was up stays up.)
[ "$(scripts/cluster.sh status 2>/dev/null)" = "cluster: down" ] || keep+=" --keep-cluster"
trap 'scripts/launchers.sh stop $keep >/dev/null 2>&1 || echo "compat: not everything stopped: scripts/launchers.sh stop" >&2' EXIT
setup=$(scripts/launchers.sh setup "${kinds[@]}" "${peer_kinds[@]}" openmpi impi) ||
    { echo "compat: set-up failed" >&2; exit 1; }
eval "$setup"
MPICH_PREFIX=${MPICH_PREFIX:-$(cat "$B/mpich-prefix" 2>/dev/null)}
source scripts/harness.sh "$out/logs"

# The conformance kit of API $1 under launcher $K (L, CONFORMANCE_ENV, SPAWN_ENV set),
# its verdicts into the results as suite $2. As for every case here, a second run when
# the first failed or was incomplete.
run_kit() {
    local api=$1 suite=$2 try conf flake ids="$out/ids-$2-$K.txt" report="$out/$2-$K.txt"
    for try in 1 2; do
        rm -f "$ids"
        conformance/run.sh --api "$api" --launcher "${CONFORMANCE_ENV[*]} ${SPAWN_ENV[*]} ${L[*]}" \
            --bin "$B/conformance" --lib "$B/lib" --logs "$out/$suite-$K" \
            --ids "$ids" >"$report" 2>&1
        conf=$?
        [ "$conf" != 0 ] || ! grep -q '^DEV probe-incomplete' "$ids" || conf=1
        [ "$conf" != 0 ] && [ "$try" = 1 ] || break
        # Run again only for a known flake of the launcher, shown in the jobs' output.
        flake=$(cat "$out/$suite-$K"/*.out "$out/$suite-$K"/*.err >"$out/$suite-$K.all" 2>/dev/null
                flake_in "$out/$suite-$K.all") || break
        echo "RETRY $suite ($K): server flake $flake"
        total_retried=$((total_retried + 1))
    done
    if [ "$conf" = 0 ]; then
        total_passed=$((total_passed + 1))
    else
        status=1 total_failed=$((total_failed + 1))
    fi
    outputs+=("$report")
    tail -n 1 "$report"
    awk -v K="$K" -v S="$suite" '{ printf "%s\t%s\t%s\t%s\t\n", S, K, $2, $1 }' "$ids" >>"$HARNESS_RESULTS"
}

for K in "${kinds[@]}"; do
    echo "== $K"
    export LAUNCHER=$K
    c-tests/run-tests.sh "$B/c-tests" "$B/lib" >"$out/c-tests-$K.txt" 2>&1 || status=1
    show "$out/c-tests-$K.txt"
    dropin-tests/run.sh "$B/dropin" "$B/lib" "$B/prefix-dropin" >"$out/dropin-$K.txt" 2>&1 || status=1
    show "$out/dropin-$K.txt"
    # Programs linked with the static archives (no libpmi.so at run time), where codes
    # that link statically meet them: Hydra 4.0.2 and Slurm, both of its plugins.
    case $K in hydra4 | srun | srun-pmix)
        dropin-tests/static.sh "$B/c-tests-static" "$B/prefix-static" >"$out/static-$K.txt" 2>&1 ||
            status=1
        show "$out/static-$K.txt"
        HARNESS_STATIC=1 c-tests/run-tests.sh "$B/c-tests-static" "" >"$out/c-tests-static-$K.txt" 2>&1 ||
            status=1
        show "$out/c-tests-static-$K.txt"
        ;;
    esac
    nodes=1
    launcher_has_two_nodes "$K" && nodes=2
    source scripts/launchers.sh expect "$K"
    launcher "$K" 4 "$nodes"
    run_kit 1 conformance
    # Intel's Hydra has no PMI-2 (its proxy exits at the first line): not run there.
    case " $UNSUPPORTED " in *" pmi2-validation "*) ;; *) run_kit 2 conformance2 ;; esac
    # MPICH's ch3 (built by make mpi-check) where users run it with an external libpmi:
    # Hydra 4.0.2, Slurm (both plugins), PMIx's prterun and Flux.
    case ${K%-vc} in hydra4 | srun | srun-pmix | prterun | flux) mpi=yes ;; *) mpi=no ;; esac
    if [ -n "$MPICH_PREFIX" ] && [ -x "$B/mpi-tests/allreduce" ] && [ "$mpi" = yes ]; then
        mpi-tests/run-mpi-tests.sh "$B/mpi-tests" "$B/lib" >"$out/mpi-$K.txt" 2>&1 || status=1
        show "$out/mpi-$K.txt"
    fi
    # Intel MPI's libmpi ignores I_MPI_PMI_LIBRARY under its own Hydra (and is not run
    # under Flux).
    if [ "$mpi" = yes ] && [ "${K%-vc}" != flux ]; then
        MPI_FLAVOUR=impi mpi-tests/run-mpi-tests.sh "$B/impi-tests" "$B/lib" >"$out/impi-$K.txt" 2>&1 ||
            status=1
        show "$out/impi-$K.txt"
    fi
    # Hosts that fail mid-job (scripts/hostfail.sh), across two hosts and under the Hydras
    # on two simulated nodes, with COMPAT_HOSTFAIL=1 (make compat; never check-compat, for
    # CI's time): a failing case is a finding about the launcher, in its own table, and
    # does not change this run's status.
    case $K in hydra4 | hydra4-port | hydra5 | impi | *-vc) hostfail=${COMPAT_HOSTFAIL:-0} ;; *) hostfail=0 ;; esac
    if [ "$hostfail" = 1 ] && [ "$K" != flux-vc ]; then
        HOSTFAIL_LOGS=$out/hostfail-logs-$K scripts/hostfail.sh "$B/c-tests" "$B/lib" >"$out/hostfail-$K.txt" 2>&1
        tail -n 1 "$out/hostfail-$K.txt"
        hostfail_ran=1
    fi
done
# Flux's own clients beside this library, and flux pmi driving it, under each launcher.
for K in "${peer_kinds[@]}"; do
    echo "== peers $K"
    LAUNCHER=$K c-tests/run-peers.sh "$B/c-tests" "$B/lib" >"$out/peers-$K.txt" 2>&1 || status=1
    show "$out/peers-$K.txt"
done
# MPICH 5's own client beside this library, under the wire launchers of this run.
for K in "${mpich5_kinds[@]}"; do
    echo "== peers-mpich5 $K"
    PEER=mpich5 LAUNCHER=$K c-tests/run-peers.sh "$B/c-tests" "$B/lib" >"$out/peers-mpich5-$K.txt" 2>&1 ||
        status=1
    show "$out/peers-mpich5-$K.txt"
done
for K in "${mpich5_mpi_kinds[@]}"; do
    echo "== mpich5-mpi $K"
    LAUNCHER=$K MPI_FLAVOUR=mpich5 mpi-tests/run-mpi-tests.sh "$B/mpich5-tests" "$B/lib" >"$out/mpich5-mpi-$K.txt" 2>&1 ||
        status=1
    show "$out/mpich5-mpi-$K.txt"
done
unset LAUNCHER

# Launchers that start several processes without a PMI server the library can use: a
# clear refusal.
echo "== refusals"
refusals="${main_ran:+srun prterun}${flux_ran:+ flux}"
HARNESS_SUITE=refusal REFUSALS=$refusals scripts/refusals.sh "$B/c-tests" "$B/lib" >"$out/refusals.txt" 2>&1 ||
    status=1
show "$out/refusals.txt"

scripts/matrix.awk "$HARNESS_RESULTS" >"$out/matrix.md"
scripts/matrix.awk -v hosts3=1 "$HARNESS_RESULTS" >"$out/matrix-3hosts.md"
if [ -n "$main_ran" ] && [ -n "$doc" ]; then
    replace "$doc" compat "$out/matrix.md" || status=2
    [ "$COMPAT_THREE_HOSTS" != 1 ] || replace "$doc" compat3 "$out/matrix-3hosts.md" || status=2
fi
# The hosts that failed, with PMI_TIMEOUT as the runs had it.
if [ -n "$hostfail_ran" ]; then
    scripts/hostfail.awk -v timeout="${HOSTFAIL_PMI_TIMEOUT-5}" "$HARNESS_RESULTS" >"$out/matrix-hostfail.md"
    [ -z "$doc" ] || replace "$doc" compat-hostfail "$out/matrix-hostfail.md" || status=2
fi
# Flux's table, with what was measured and how (CI never re-runs it).
if [ -n "$flux_ran" ]; then
    version=$("$FLUX_PREFIX/bin/flux" version | awk '$1 == "commands:" { print $2 }')
    {
        command="COMPAT_LAUNCHERS=\"${kinds[*]}\" COMPAT_THREE_HOSTS=$COMPAT_THREE_HOSTS"
        command+=" COMPAT_FLUX_DOC=1 FLUX_PREFIX=<prefix> scripts/compat.sh OUT${doc:+ docs/COMPAT.md}"
        printf 'Measured %s with flux-core %s: `%s`.\n\n' "$(date -u '+%Y-%m-%d')" "$version" \
            "${COMPAT_FLUX_COMMAND:-$command}"
        scripts/matrix.awk -v flux=1 -v fluxver="$version" "$HARNESS_RESULTS"
    } >"$out/matrix-flux.md"
    if [ "${COMPAT_FLUX_DOC:-0}" = 1 ] && [ -n "$doc" ]; then
        replace "$doc" compat-flux "$out/matrix-flux.md" || status=2
    fi
fi
if [ "${#mpich5_kinds[@]}" != 0 ] || [ "${#mpich5_mpi_kinds[@]}" != 0 ]; then
    {
        printf 'Measured %s with MPICH %s (its client built alone from src/pmi; its libmpi built on this library): `%s`.\n' \
            "$(date -u '+%Y-%m-%d')" "${MPICH5_VERSION:-5}" \
            "COMPAT_LAUNCHERS=\"${kinds[*]}\" COMPAT_MPICH5_DOC=1 MPICH5_PMI_PREFIX=<prefix> MPICH5_PREFIX=<prefix> scripts/compat.sh OUT${doc:+ docs/COMPAT.md}"
        scripts/matrix.awk -v peers=mpich5 "$HARNESS_RESULTS"
    } >"$out/matrix-mpich5.md"
    if [ "${COMPAT_MPICH5_DOC:-0}" = 1 ] && [ -n "$doc" ]; then
        replace "$doc" compat-mpich5 "$out/matrix-mpich5.md" || status=2
    fi
fi
# What failed, again at the end (CI shows the tail of the output): each FAIL line with the
# last lines of its case's output, and each runner that printed no closing line (every
# runner's output this run wrote is in outputs).
if [ "$status" != 0 ] || [ "$total_failed" != 0 ]; then
    echo "== what failed"
    for f in "${outputs[@]}"; do
        grep -aq '^FAIL\|^  *FAIL' "$f" || tail -n 1 "$f" | grep -aq ' passed, ' ||
            { echo "${f##*/}: no closing line; its end:"; tail -n 8 "$f" | sed 's/^/    | /'; continue; }
        awk '/^ *FAIL/ { n = 0; print FILENAME ": " $0; show = 1; next }
             show && /^    \| / { if (++n > 12) next; print; next }
             { show = 0 }' "$f" | sed "s|^$out/||"
    done
fi
echo "compat: $total_passed passed, $total_failed failed, $total_retried retried"
exit $status
