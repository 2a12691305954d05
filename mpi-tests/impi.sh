# Intel MPI 2021.19's libmpi.so.12 on this library: sourced by run-mpi-tests.sh (the
# harness, BIN, K and L are set). Intel's libmpi loads the PMI-1 library named by
# I_MPI_PMI_LIBRARY under any launcher but its own Hydra; with I_MPI_PMI=pmi2, our
# libpmi2.so.0.
export I_MPI_ROOT=$IMPI_ROOT
export I_MPI_PMI_LIBRARY=$libdir/libpmi.so.0
# Its libfabric (for two nodes) comes from the MPICH 5 wheel.
export LD_LIBRARY_PATH=$LD_LIBRARY_PATH:$IMPI_ROOT/lib:$HYDRA5_ROOT/lib/mpich
# Four ranks on two cores: wait in the kernel, not spinning.
export I_MPI_WAIT_MODE=1
# Two nodes talk TCP: over lo when simulated, over the cluster's interface across hosts.
iface=lo
launcher_is_vc "$K" && iface=$CLUSTER_BRIDGE
TWO_NODES=(env I_MPI_FABRICS=shm:ofi FI_PROVIDER=tcp FI_TCP_IFACE=$iface)

# Proof: Intel says where its PMI calls go, and every rank traces through our library.
launcher "$K" 2
run impi-loads-our-libpmi 0 --show log "PMI calls are forwarded to $libdir/libpmi.so.0" \
    --expect log "libpmi[0] " --expect log "libpmi[1] " -- \
    env I_MPI_DEBUG=1000 PMI_DEBUG=1 "${L[@]}" "$BIN/allreduce" 2
# -n 4 on one host without slot counts: Hydra 4.0.2's mapping (vector,(0,1,1)) made Intel
# abort at random (bc--1) until the library answered it written out; 5 runs in a row.
launcher "$K" 4
for i in 1 2 3 4 5; do
    run "impi-allreduce-1node-$i" 0 -- "${L[@]}" "$BIN/allreduce" 4 4
done
run impi-allreduce-wrong-size nonzero -- "${L[@]}" "$BIN/allreduce" 5 # negative control
if launcher_has_two_nodes "$K"; then
    launcher "$K" 4 2
    run impi-allreduce-2nodes 0 -- "${TWO_NODES[@]}" "${L[@]}" "$BIN/allreduce" 4 2
fi
# Intel's own benchmark, short.
IMB=("$IMPI_ROOT/bin/IMB-MPI1" -npmin 4 -iter 200 -msglog 0:4 PingPong Allreduce)
launcher "$K" 4
run impi-imb-mpi1-1node 0 --expect log "# Benchmarking Allreduce" --absent log "time-out" -- \
    "${L[@]}" "${IMB[@]}"
if launcher_has_two_nodes "$K"; then
    launcher "$K" 4 2
    run impi-imb-mpi1-2nodes 0 --expect log "# Benchmarking Allreduce" --absent log "time-out" -- \
        "${TWO_NODES[@]}" "${L[@]}" "${IMB[@]}"
fi

# The same library's PMI-2 side: Intel's libmpi speaks PMI-2 with I_MPI_PMI=pmi2 and loads
# the library named by I_MPI_PMI_LIBRARY, here libpmi2.so.0 (node attributes, job
# attributes, KVS).
PMI2=(env I_MPI_PMI=pmi2 I_MPI_PMI_LIBRARY="$libdir/libpmi2.so.0")
launcher "$K" 2
run impi-pmi2-loads-our-libpmi2 0 --show log "PMI calls are forwarded to $libdir/libpmi2.so.0" \
    --expect log "PMI2_Init(" --expect log "PMI2_KVS_Fence() = PMI2_SUCCESS" -- \
    "${PMI2[@]}" I_MPI_DEBUG=1000 PMI_DEBUG=1 "${L[@]}" "$BIN/allreduce" 2
launcher "$K" 4
for i in 1 2 3; do
    run "impi-pmi2-allreduce-1node-$i" 0 -- "${PMI2[@]}" "${L[@]}" "$BIN/allreduce" 4 4
done
if launcher_has_two_nodes "$K"; then
    launcher "$K" 4 2
    run impi-pmi2-allreduce-2nodes 0 -- "${PMI2[@]}" "${TWO_NODES[@]:1}" "${L[@]}" "$BIN/allreduce" 4 2
fi
