#!/usr/bin/env bash
# No fake singleton, under the real launchers: where a launcher starts processes without
# a PMI server the library can use (no PMI-1 server, or a PMIx server but no PMIx client
# library), every process refuses PMI_Init with one line naming the cause and the fix; a
# process started by hand inside an allocation, or alone, stays a singleton.
# Usage: scripts/refusals.sh BINDIR LIBDIR
#   (SLURM_CONF and OPENMPI_ROOT from `scripts/launchers.sh setup srun openmpi`, and
#   FLUX_TEST_URI from `setup flux`; REFUSALS names the launchers to refuse under,
#   default "srun prterun": each one named must be set up)
b=$(cd "$1" && pwd)
source "$(dirname "$0")/harness.sh" "$b/logs-refusals" "$2"
HARNESS_SUITE=refusal
LAUNCHER=none
refused="refusing to run as rank 0 of 1"
# exchange prints "rank R of N: read ... business cards" when it gets through.
ran="business cards"
nolib="no PMIx client library could be loaded"

# Every launcher named is required: a refusal that is not run would vanish from the table.
REFUSALS=" ${REFUSALS:-srun prterun} "
[[ $REFUSALS != *" srun "* ]] || [ -n "${SLURM_CONF:-}" ] ||
    fail srun-set-up "SLURM_CONF is not set (scripts/launchers.sh setup srun)"
[[ $REFUSALS != *" prterun "* ]] || [ -n "${OPENMPI_ROOT:-}" ] ||
    fail prterun-set-up "OPENMPI_ROOT is not set (scripts/launchers.sh setup openmpi)"
[[ $REFUSALS != *" flux "* ]] || [ -n "${FLUX_TEST_URI:-}" ] ||
    fail flux-set-up "FLUX_TEST_URI is not set (FLUX_PREFIX=... scripts/launchers.sh setup flux)"
if [[ $REFUSALS == *" srun "* ]] && [ -n "${SLURM_CONF:-}" ]; then
    run "srun --mpi=none -n 2" nonzero --count 2 "$refused" --absent log "$ran" \
        --show log 'SLURM_STEP_NUM_TASKS="2"' -- srun --mpi=none -n 2 "$b/exchange"
    run "srun --mpi=pmix -n 2, no PMIx client library" nonzero --count 2 "$nolib" \
        --absent log "$ran" --show log "$nolib" -- \
        env PMI_PMIX_LIBRARY=/nonexistent/libpmix.so.2 srun --mpi=pmix -n 2 "$b/exchange"
    run "srun --mpi=pmix -n 1, no PMIx client library (one task)" 0 --show log "rank 0 of 1" -- \
        env PMI_PMIX_LIBRARY=/nonexistent/libpmix.so.2 srun --mpi=pmix -n 1 "$b/exchange"
    run "srun --mpi=none -n 1 (one task)" 0 --show log "rank 0 of 1" -- \
        srun --mpi=none -n 1 "$b/exchange"
    run "salloc -n 2, the program run by hand" 0 --show log "rank 0 of 1" -- \
        salloc -n 2 "$b/exchange"
    run "sbatch -n 2, the program run by the script" 0 --show "$logdir/sbatch.out" "rank 0 of 1" -- \
        sbatch --wait --quiet -n 2 -o "$logdir/sbatch.out" --wrap "$b/exchange"
    run "srun --mpi=none -n 2 with PMI_SINGLETON=1 (on purpose)" 0 --count 2 "rank 0 of 1" \
        --show log "rank 0 of 1" -- env PMI_SINGLETON=1 srun --mpi=none -n 2 "$b/exchange"
    # pmi-probe says what to try next.
    run "srun --mpi=none -n 2, pmi-probe" nonzero --count 2 "next: under Slurm, give the job a PMI server" \
        --count 2 "$refused" --show log "next: " -- srun --mpi=none -n 2 "$b/pmi-probe"
fi
if [[ $REFUSALS == *" prterun "* ]] && [ -n "${OPENMPI_ROOT:-}" ]; then
    # prterun ends the job at the first process that fails: one line may be all there is.
    launcher prterun 2
    run "prterun -n 2 (Open MPI 5.0.11), no PMIx client library" nonzero --absent log "$ran" \
        --show log "$nolib" -- env PMI_PMIX_LIBRARY=/nonexistent/libpmix.so.2 "${L[@]}" "$b/exchange"
fi
if [[ $REFUSALS == *" flux "* ]] && [ -n "${FLUX_TEST_URI:-}" ]; then
    # Flux with its PMI-1 server off (nor does its job shell then put its own libpmi first).
    launcher flux 2 2
    flux_opts -o pmi=off
    run "flux run -o pmi=off -N 2 -n 2" nonzero --count 2 "$refused" --absent log "$ran" \
        --show log 'FLUX_JOB_SIZE="2"' -- "${L[@]}" "$b/exchange"
    run "flux run -o pmi=off -N 2 -n 2, pmi-probe" nonzero --count 2 "$refused" \
        --show log "next: " -- "${L[@]}" "$b/pmi-probe"
fi
summary refusals
