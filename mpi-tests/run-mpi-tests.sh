#!/usr/bin/env bash
# Run the MPI programs of `make mpi-check` with OUR libpmi.so.0 under one launcher
# (LAUNCHER, default hydra4: see scripts/harness.sh), on one of two MPIs (MPI_FLAVOUR):
#   mpich  MPICH 4.0.2 ch3 built to load an external libpmi.so.0 (scripts/build-mpich.sh)
#   impi   Intel MPI 2021.19's libmpi.so.12 (PyPI impi-rt), told to load this library by
#          I_MPI_PMI_LIBRARY (IMPI_ROOT, HYDRA5_ROOT for its libfabric: launchers.sh setup impi)
#   mpich5 MPICH 5's libmpi configured --with-pmi= an install of this library, built by
#          hand (mpi-tests/mpich5.sh: classic programs and MPI-4 sessions)
# Usage: mpi-tests/run-mpi-tests.sh BIN_DIR LIB_DIR   (MPI_TIMEOUT from the env)
# Prints PASS/FAIL per run, NOTE lines for facts about the launcher, and finally
#   mpi-check: N passed, N failed
# and exits nonzero on any failure. Each run's output is in BIN_DIR/logs-LAUNCHER/.
BIN=$(cd "$1" && pwd)
[ -z "${MPI_TIMEOUT:-}" ] || HARNESS_TIMEOUT=$MPI_TIMEOUT
source "$(dirname "$0")/../scripts/harness.sh" "$BIN/logs-${LAUNCHER:-hydra4}" "$2"
HARNESS_SUITE=mpi
K=$LAUNCHER
source "$harness_root/scripts/launchers.sh" expect "$K"
if [ "${MPI_FLAVOUR:-mpich}" = impi ]; then
    HARNESS_SUITE=impi-mpi
    source "$harness_root/mpi-tests/impi.sh"
    summary "impi-check ($K)"
    exit
fi

# Two simulated nodes: ch3 must not try to resolve the fake host names. (Real hosts
# resolve each other: scripts/cluster.sh gives each one /etc/hosts naming them all.)
NODES2=()
case $K in *-vc) ;; hydra*) NODES2=(-disable-hostname-propagation) ;; esac
if [ "${MPI_FLAVOUR:-mpich}" = mpich5 ]; then
    HARNESS_SUITE=mpich5-mpi
    source "$harness_root/mpi-tests/mpich5.sh"
    summary "mpich5-check ($K)"
    exit
fi

# Proof that the MPI programs load our library: the dynamic linker's choice, then our
# trace prefix from every rank of a real job.
libmpi=$(resolved_libpmi "$BIN/allreduce" libmpi.so.12)
if [ "$(resolved_libpmi "$BIN/allreduce")" = "$libdir/libpmi.so.0" ] &&
    readelf -d "$libmpi" | grep -q 'NEEDED.*\[libpmi\.so\.0\]'; then
    pass loads-our-libpmi "ldd: libpmi.so.0 => $libdir/libpmi.so.0; libmpi.so.12 NEEDED libpmi.so.0"
else
    fail loads-our-libpmi "ldd: libpmi.so.0 => $(resolved_libpmi "$BIN/allreduce"), libmpi $libmpi"
fi
launcher "$K" 2
run traced-by-our-libpmi 0 --expect log "libpmi[0] " --expect log "libpmi[1] " \
    --expect log "PMI_Init(" -- env PMI_DEBUG=1 "${L[@]}" "$BIN/allreduce" 2

launcher "$K" 4
run allreduce-1node 0 -- "${L[@]}" "$BIN/allreduce" 4 4
run allreduce-wrong-size nonzero -- "${L[@]}" "$BIN/allreduce" 5 # negative control: a check fails
if launcher_has_two_nodes "$K"; then
    launcher "$K" 4 2
    run allreduce-2nodes 0 -- "${L[@]}" "${NODES2[@]}" "$BIN/allreduce" 4 2
fi
if [ "$K" = hydra4 ]; then
    launcher hydra4-port 4
    run allreduce-pmi-port 0 -- "${L[@]}" "$BIN/allreduce" 4 4
    launcher hydra4-port 4 2
    run allreduce-pmi-port-2nodes 0 -- "${L[@]}" "${NODES2[@]}" "$BIN/allreduce" 4 2
fi

if [[ " $UNSUPPORTED " != *" spawn "* ]]; then
    launcher "$K" 2
    run_expected spawn mpi-spawn 0 -- "${SPAWN_ENV[@]}" "${L[@]}" "$BIN/spawn" 2
    launcher "$K" 1
    run_expected spawn-1parent-3children mpi-spawn 0 -- "${SPAWN_ENV[@]}" "${L[@]}" "$BIN/spawn" 3
    # (Not under Flux, which cannot spawn: the control would fail for that alone.)
    [ "${K%-vc}" = flux ] ||
        run spawn-child-fails nonzero -- "${SPAWN_ENV[@]}" "${L[@]}" "$BIN/spawn" 2 0 fail # negative control
    launcher_cleanup "$BIN/spawn"
fi
if [ "$K" = hydra4 ]; then
    launcher hydra4 2 2
    run spawn-2nodes 0 -- "${L[@]}" "${NODES2[@]}" "$BIN/spawn" 2
    launcher hydra4-port 2
    run spawn-pmi-port 0 -- "${L[@]}" "$BIN/spawn" 2
    # Hydra does not pass a spawned child's exit status to mpiexec: children that exit 5
    # after replying correctly leave mpiexec's status at 0 (a fact, not a verdict).
    timeout -k 5 "$HARNESS_TIMEOUT" "${HYDRA[@]}" -launcher fork -n 1 "$BIN/spawn" 2 5 \
        >"$logdir/spawn-child-exit-5.log" 2>&1
    echo "NOTE spawned children exited 5, mpiexec exited $? (Hydra ignores spawned children's status)"
fi

launcher "$K" 2
run_expected pubname mpi-names 0 -- "${L[@]}" "$BIN/pubname"
launcher "$K" 4
run_expected pubname-4ranks mpi-names 0 -- "${L[@]}" "$BIN/pubname"
if launcher_has_two_nodes "$K"; then
    launcher "$K" 2 2
    run_expected pubname-2nodes mpi-names 0 -- "${L[@]}" "${NODES2[@]}" "$BIN/pubname"
fi
if [ "$K" = hydra4 ]; then
    launcher hydra4-port 2
    run pubname-pmi-port 0 -- "${L[@]}" "$BIN/pubname"
fi
# A published name longer than MPI_MAX_PORT_NAME must never overrun MPI_Lookup_name's
# 256-byte buffer (it did, by 345 bytes, before ports were bounded).
launcher "$K" 1
run longport 0 -- "${L[@]}" "$BIN/longport"

summary "mpi-check${K:+ ($K)}"
