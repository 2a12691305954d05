#!/usr/bin/env bash
# `make compat`: run the portable suites under every launcher this machine can have, and
# write the compatibility matrix (server x launch mode x test) from what the runs printed.
#
#   scripts/compat.sh OUTDIR [README]
#
# OUTDIR gets results.tsv (one line per verdict, from scripts/harness.sh), the
# conformance reports, and matrix.md; with README, the table between its
# "<!-- compat:begin -->" and "<!-- compat:end -->" lines is replaced by matrix.md.
# Exit status 1 when a case FAILed (the matrix is written all the same).
# Needs the test programs built (make compat does that) and root for the private Slurm.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
out=$(mkdir -p "$1" && cd "$1" && pwd)
readme=${2:-}
cd "$root"
B=$root/build
export HARNESS_RESULTS=$out/results.tsv
# A launcher that fails a case once in a while gets up to two more runs; each failure is
# in the output. (Intel's mpiexec with two simulated nodes exits 141, SIGPIPE, after a
# PMI_Abort in about 1 of 20 runs here, and failed twice in a row once under load.)
export HARNESS_RETRIES=${HARNESS_RETRIES:-2}
rm -f "$HARNESS_RESULTS"
status=0

kinds=(${COMPAT_LAUNCHERS:-hydra4 hydra4-port hydra5 impi srun srun-pmix prterun})
# Stop the private Slurm afterwards only if this run started it.
slurm_was_up=no
[ -n "$(scripts/slurm.sh env "${LIBPMI_SLURM_DIR:-/tmp/libpmi-slurm}" 2>/dev/null)" ] &&
    SLURM_CONF=${LIBPMI_SLURM_DIR:-/tmp/libpmi-slurm}/slurm.conf sinfo >/dev/null 2>&1 && slurm_was_up=yes
[ "$slurm_was_up" = yes ] || trap 'scripts/launchers.sh stop >/dev/null 2>&1' EXIT
setup=$(scripts/launchers.sh setup "${kinds[@]}" openmpi impi) || { echo "compat: set-up failed" >&2; exit 1; }
eval "$setup"
MPICH_PREFIX=${MPICH_PREFIX:-$(cat "$B/mpich-prefix" 2>/dev/null)}
source scripts/harness.sh "$out/logs"

# The conformance kit of API $1 under launcher $K (L, CONFORMANCE_ENV, SPAWN_ENV set),
# its verdicts into the results as suite $2. As for every case here, a second run when
# the first failed or was incomplete.
run_kit() {
    local api=$1 suite=$2 try conf ids="$out/ids-$2-$K.txt" report="$out/$2-$K.txt"
    for try in 1 2; do
        rm -f "$ids"
        conformance/run.sh --api "$api" --launcher "${CONFORMANCE_ENV[*]} ${SPAWN_ENV[*]} ${L[*]}" \
            --bin "$B/conformance" --lib "$B/lib" --logs "$out/$suite-$K" \
            --ids "$ids" >"$report" 2>&1
        conf=$?
        [ "$conf" != 0 ] || ! grep -q '^DEV probe-incomplete' "$ids" || conf=1
        [ "$conf" != 0 ] && [ "$try" = 1 ] && { echo "RETRY $suite ($K)"; continue; }
        break
    done
    [ "$conf" = 0 ] || status=1
    tail -n 1 "$report"
    awk -v K="$K" -v S="$suite" '{ printf "%s\t%s\t%s\t%s\t\n", S, K, $2, $1 }' "$ids" >>"$HARNESS_RESULTS"
}

for K in "${kinds[@]}"; do
    echo "== $K"
    export LAUNCHER=$K
    c-tests/run-tests.sh "$B/c-tests" "$B/lib" >"$out/c-tests-$K.txt" 2>&1 || status=1
    tail -n 1 "$out/c-tests-$K.txt"
    dropin-tests/run.sh "$B/dropin" "$B/lib" "$B/prefix-dropin" >"$out/dropin-$K.txt" 2>&1 || status=1
    tail -n 1 "$out/dropin-$K.txt"
    nodes=1
    launcher_has_two_nodes "$K" && nodes=2
    source scripts/launchers.sh expect "$K"
    launcher "$K" 4 "$nodes"
    run_kit 1 conformance
    # Intel's Hydra has no PMI-2 (its proxy exits at the first line): not run there.
    case " $UNSUPPORTED " in *" pmi2-validation "*) ;; *) run_kit 2 conformance2 ;; esac
    # MPICH's ch3 (built by make mpi-check) where users run it with an external libpmi:
    # Hydra 4.0.2, Slurm (both plugins) and PMIx's prterun.
    case $K in hydra4 | srun | srun-pmix | prterun) mpi=yes ;; *) mpi=no ;; esac
    if [ -n "$MPICH_PREFIX" ] && [ -x "$B/mpi-tests/allreduce" ] && [ "$mpi" = yes ]; then
        mpi-tests/run-mpi-tests.sh "$B/mpi-tests" "$B/lib" >"$out/mpi-$K.txt" 2>&1 || status=1
        tail -n 1 "$out/mpi-$K.txt"
    fi
    # Intel MPI's libmpi ignores I_MPI_PMI_LIBRARY under its own Hydra.
    if [ "$mpi" = yes ]; then
        MPI_FLAVOUR=impi mpi-tests/run-mpi-tests.sh "$B/impi-tests" "$B/lib" >"$out/impi-$K.txt" 2>&1 ||
            status=1
        tail -n 1 "$out/impi-$K.txt"
    fi
done
unset LAUNCHER

# Launchers that start several processes without a PMI server the library can use: a
# clear refusal.
echo "== refusals"
HARNESS_SUITE=refusal scripts/refusals.sh "$B/c-tests" "$B/lib" >"$out/refusals.txt" 2>&1 || status=1
tail -n 1 "$out/refusals.txt"

scripts/matrix.awk "$HARNESS_RESULTS" >"$out/matrix.md"
if [ -n "$readme" ]; then
    awk -v m="$out/matrix.md" '
        /^<!-- compat:end -->$/ { while ((getline l < m) > 0) print l; skip = 0 }
        !skip { print }
        /^<!-- compat:begin -->$/ { skip = 1 }' "$readme" >"$out/README.new"
    mv "$out/README.new" "$readme"
fi
exit $status
