# MPICH 5's libmpi built on this library (configured --with-pmi=PREFIX, PREFIX an install
# of this library; built by hand from MPICH 5's source: MPICH5_PREFIX, docs/MPI.md): sourced
# by run-mpi-tests.sh (the harness, BIN, K and L are set). Classic programs and MPI-4
# sessions (mpi://WORLD, mpi://SELF, a communicator of part of the job).

# Under a PMIx launcher MPICH 5 sees PMIX_NAMESPACE and, built for PMI-1 alone, refuses
# to start ("unsupported PMI version PMIx") unless told to use PMI-1: this library then
# speaks PMIx for it.
P=()
! check_backend_is pmix || P=(env MPIR_CVAR_PMI_VERSION=1)

# Proof: libmpi needs libpmi.so.0, the dynamic linker picks this library's, and every
# rank traces through it.
libmpi=$(ldd "$BIN/allreduce" | awk '$1 ~ /^libmpi\.so/ { print $3 }')
if [ "$(resolved_libpmi "$BIN/allreduce")" = "$libdir/libpmi.so.0" ] &&
    readelf -d "$libmpi" | grep -q 'NEEDED.*\[libpmi\.so\.0\]'; then
    pass mpich5-loads-our-libpmi "ldd: libpmi.so.0 => $libdir/libpmi.so.0; $libmpi NEEDED libpmi.so.0"
else
    fail mpich5-loads-our-libpmi "ldd: libpmi.so.0 => $(resolved_libpmi "$BIN/allreduce"), libmpi $libmpi"
fi
launcher "$K" 2
run mpich5-traced-by-our-libpmi 0 --expect log "libpmi[0] " --expect log "libpmi[1] " \
    --expect log "PMI_Init(" -- env PMI_DEBUG=1 "${L[@]}" "${P[@]}" "$BIN/allreduce" 2

launcher "$K" 4
run mpich5-allreduce-1node 0 -- "${L[@]}" "${P[@]}" "$BIN/allreduce" 4 4
run mpich5-allreduce-wrong-size nonzero -- "${L[@]}" "${P[@]}" "$BIN/allreduce" 5 # negative control
run mpich5-sessions-1node 0 --expect log "sessions: mpi://WORLD of 4 ranks" -- \
    "${L[@]}" "${P[@]}" "$BIN/sessions" 4
run mpich5-sessions-wrong-size nonzero -- "${L[@]}" "${P[@]}" "$BIN/sessions" 5 # negative control
if launcher_has_two_nodes "$K"; then
    # MPICH 5's ch3 looks up its own node's name (Hydra's simulated "a" and "b" are not
    # names): its address is given.
    # It also finds its node's ranks by host name (each rank puts hostname[RANK]), not
    # by PMI_process_mapping: on simulated nodes, all four share the one host.
    local2=2
    [ "${#NODES2[@]}" = 0 ] || NODES2+=(-genv MPIR_CVAR_CH3_INTERFACE_HOSTNAME 127.0.0.1) local2=4
    launcher "$K" 4 2
    run mpich5-allreduce-2nodes 0 -- "${L[@]}" "${NODES2[@]}" "${P[@]}" "$BIN/allreduce" 4 "$local2"
    run mpich5-sessions-2nodes 0 --expect log "sessions: mpi://WORLD of 4 ranks" -- \
        "${L[@]}" "${NODES2[@]}" "${P[@]}" "$BIN/sessions" 4
fi
