#!/usr/bin/env bash
# Run the C test programs with this libpmi.so.0 swapped in, under one launcher
# (LAUNCHER, default hydra4: see scripts/harness.sh), on one node and, where the
# launcher can simulate it, two. Under hydra4 also the Hydra-only layouts, -pmi-port, the
# singleton mode and the bad environments.
# Usage: c-tests/run-tests.sh BINDIR LIBDIR
# Each case is one command; its exit status, and for some its output, is the verdict.
b=$(cd "$1" && pwd)
source "$(dirname "$0")/../scripts/harness.sh" "$b/logs-${LAUNCHER:-hydra4}" "$2"
HARNESS_SUITE=c-tests
label=c-tests
# (Programs linked with the static archives: a suite of their own.)
[ "${HARNESS_STATIC:-0}" = 1 ] && HARNESS_SUITE=static-c-tests label="c-tests, static archives"
K=$LAUNCHER
# What this launcher answers (scripts/launchers.sh measured them): appnum and universe.
source "$harness_root/scripts/launchers.sh" expect "$K"

check_loaded "$b/exchange"

# --- every launcher -----------------------------------------------------------------------
# The layouts: one node and, where the launcher can simulate it, two; across real hosts
# two hosts (blocks, cyclic) and three (3+2+1). The case names say which.
read -r -a layouts <<<"$(launcher_layouts "$K")"
for nodes in "${layouts[@]}"; do
    s=$(layout_suffix "$K" "$nodes") HARNESS_LAYOUT=$s
    # (Three uneven hosts: six processes fill them; the two-process cases would not
    # leave the first host, and are run in the other layouts.)
    n4=4; [ "$nodes" = uneven ] && n4=6
    launcher "$K" $n4 "$nodes"
    run_expected "info-n$n4$s" info 0 -- "${L[@]}" "$b/info" $n4 "$EXPECT_APPNUM" "$(expect_universe $n4)" $EXPECT_MAXES
    run_expected "exchange-n$n4$s" exchange 0 -- "${L[@]}" "$b/exchange" -q
    run_expected "exchange-without-commit-n$n4$s" exchange 0 -- "${L[@]}" "$b/exchange" -q -no-commit
    run_expected "barrier-100-n$n4$s" barrier 0 -- "${L[@]}" "$b/barrier" 100
    run_expected "clique-n$n4$s" clique 0 -- "${L[@]}" "$b/clique"
    # PMI 1.2's group barriers, as this launcher's server has them (the case's name says
    # how: threaded, serialized, none).
    run_expected "groups-$EXPECT_GROUPS-n$n4$s" groups 0 -- env CHECK_GROUPS="$EXPECT_GROUPS" \
        "${L[@]}" "$b/groups"
    # pmi-probe, PMI-1 then PMI-2: every process reports the job's size, the backend
    # this launcher calls for and the verdict ok. (The probe is the one Rust program:
    # the static and the sanitized builds of the C programs have no copy of it.)
    [ "${HARNESS_STATIC:-0}" = 1 ] || [ -n "${SANITIZED:-}" ] ||
    for api in "" --pmi2; do
        want=wire${api:+2}
        check_backend_is pmix && want=pmix
        run_expected "probe${api:+-pmi2}-n$n4$s" "probe${api:+-pmi2}" 0 --count $n4 '"verdict":"ok"' \
            --count $n4 "\"size\":$n4," --count $n4 "\"backend\":\"$want\"" \
            --count $n4 '"timeout_s":60,"timeout_from":"default"' -- \
            "${L[@]}" "$b/pmi-probe" --json $api
    done
    [ "$nodes" != uneven ] || continue
    launcher "$K" 2 "$nodes"
    run_expected "validation-n2$s" validation 0 -- "${L[@]}" "$b/validation"
    # One truth per key: own and peer's reads of the same values agree; a value this
    # server would alter is refused (or, where not known, a declared deviation).
    run_expected "values-n2$s" values 0 -- "${L[@]}" "$b/values"
    run_expected "pmi2-values-n2$s" pmi2-values 0 -- "${L[@]}" "$b/pmi2_values"
    run_expected "names-n2$s" names 0 -- "${L[@]}" "$b/names"
    run_expected "threads-n2$s" threads 0 -- "${L[@]}" "$b/threads"
    # Abort: the job's exit status is the code passed (where the launcher passes it on),
    # and the message reached the aborting process's stderr (a file: the launcher may
    # tear the job down before forwarding it).
    msg="abort test: rank is giving up on purpose"
    run_expected "abort-7$s" abort 7 --expect "$logdir/abort-7$s.stderr" "$msg" -- \
        "${L[@]}" "$b/abort" 7 "$logdir/abort-7$s.stderr"
    run_expected "abort-while-a-thread-blocks$s" abort 6 -- "${L[@]}" "$b/abort" 6 - threaded
    run_expected "spawn-n2$s" spawn 0 -- "${SPAWN_ENV[@]}" "${L[@]}" "$b/spawn"
    launcher_cleanup "$b/spawn"
done
HARNESS_LAYOUT=
launcher "$K" 8
run_expected exchange-n8 exchange 0 -- "${L[@]}" "$b/exchange" -q
launcher "$K" 1
run_expected exchange-n1 exchange 0 -- "${L[@]}" "$b/exchange" -q
# Tracing: PMI_DEBUG=1 shows every call and every wire line.
# Tracing: PMI_DEBUG=1 shows the backend chosen and why, every call, and every wire line
# or PMIx call.
launcher "$K" 2
if check_backend_is pmix; then
    # (PMIX_RANK labels the lines before PMIx_Init says the rank; in PMI_PORT mode the
    # first lines cannot know it.)
    said=(--absent log "libpmi[?]" --expect log "PMI_Init: backend pmix: no PMI_FD or PMI_PORT, and PMIX_"
          --expect log "PMI_Init: loaded " --expect log "PMIx_Get(rank wildcard, \"pmix.job.size\")"
          --expect log "PMIx_Fence(collect data): SUCCESS" --expect log "PMIx_Fence(before finalize): SUCCESS" --expect log "PMIx_Finalize: SUCCESS")
else
    said=(--expect log "C: cmd=init pmi_version=1 pmi_subversion=1" --expect log "S: cmd=maxes "
          --expect log "C: cmd=finalize")
fi
run trace-on 0 --expect log "libpmi[1] " --expect log "PMI_Get_universe_size(0x" \
    --expect log ") = PMI_SUCCESS" "${said[@]}" -- \
    env PMI_DEBUG=1 "${L[@]}" "$b/info" 2 "$EXPECT_APPNUM" "$(expect_universe 2)" $EXPECT_MAXES

# A PMIx server that stops answering (rank 0 stops it): with PMI_TIMEOUT=2 every rank's
# barrier fails in time (core/src/backends/pmix_watch.rs). Each rank writes its verdict
# to a file; how the launcher ends the job after is its own.
if check_backend_is pmix; then
    d=$logdir/stopped-server
    rm -rf "$d" && mkdir -p "$d"
    run stopped-server-n2 any --expect "$d/rank-0.txt" "ok: rank 0 of 2" \
        --expect "$d/rank-1.txt" "ok: rank 1 of 2" -- \
        env PMI_TIMEOUT=2 "${L[@]}" "$b/stopped_server" "$d"
fi

# --- libpmi2.so.0: the PMI-2 API under the same launcher ------------------------------------
for nodes in "${layouts[@]}"; do
    s=$(layout_suffix "$K" "$nodes") HARNESS_LAYOUT=$s
    n4=4; [ "$nodes" = uneven ] && n4=6
    launcher "$K" $n4 "$nodes"
    run_expected "pmi2-exchange-n$n4$s" pmi2-exchange 0 -- "${L[@]}" "$b/pmi2_exchange" "$(expect_universe $n4)"
    [ "$nodes" != uneven ] || continue
    run_expected "pmi2-validation-n4$s" "pmi2-validation$s" 0 -- "${L[@]}" "$b/pmi2_validation"
    run_expected "pmi2-names-n4$s" pmi2-names 0 -- "${L[@]}" "$b/pmi2_names"
    run_expected "pmi2-ring-n4$s" pmi2-ring 0 -- "${L[@]}" "$b/pmi2_ring"
    run_expected "pmi2-threads-n4$s" pmi2-threads 0 -- "${L[@]}" "$b/pmi2_threads" 2000
    launcher "$K" 2 "$nodes"
    run_expected "pmi2-spawn-n2$s" pmi2-spawn 0 -- "${SPAWN_ENV[@]}" "${L[@]}" "$b/pmi2_spawn"
done
HARNESS_LAYOUT=

# PMI2_Abort: the job ends, with the launcher's status (MPICH 5.0.2's Hydra passes the
# code on, Slurm kills the step), and the message reached the aborting process's stderr;
# also with a ';' in it (the wire text's separator) and with none (MPICH 5.0.2's mpiexec
# cannot parse an empty field). The other processes wait in a fence meanwhile.
launcher "$K" 2
pmi2_msg="pmi2 abort test; giving up"
run_expected pmi2-abort-n2 pmi2-abort nonzero --absent log "survived the abort" \
    --expect "$logdir/pmi2-abort-n2.stderr" "$pmi2_msg" -- \
    "${L[@]}" "$b/pmi2_abort" "$pmi2_msg" "$logdir/pmi2-abort-n2.stderr"
run_expected pmi2-abort-empty-n2 pmi2-abort nonzero --absent log "survived the abort" -- \
    "${L[@]}" "$b/pmi2_abort" - "$logdir/pmi2-abort-empty-n2.stderr"

# An srun step started from a Hydra rank's shell inherits Hydra's MPI_LOCALNRANKS: Slurm's
# server still gets the PMI_JOBID it requires in `fullinit` (it refuses one without).
if [ "$K" = srun ]; then
    launcher "$K" 2
    run_expected pmi2-exchange-inherited-localnranks-n2 pmi2-exchange 0 -- \
        env MPI_LOCALNRANKS=2 "${L[@]}" "$b/pmi2_exchange" "$(expect_universe 2)"
fi

# PMIx backend: preput pairs inherited from some other job's parent are not taken.
if check_backend_is pmix; then
    launcher "$K" 2
    run pmix-inherited-preput-ignored 0 --count 2 "ignoring the preput pairs of parent" -- \
        env PMI_DEBUG=1 PMI_PMIX_PARENT=another-job@1 PMI_PMIX_PREPUT_NUM=1 \
        PMI_PMIX_PREPUT_KEY_0=card-0-0 PMI_PMIX_PREPUT_VAL_0=stale "${L[@]}" "$b/exchange" -q
fi

# The harness's prterun makes its session directory where no other job has (scripts/
# prte-own-tmp). TMPDIR holds what killed jobs leave, a session for each of the next 2000
# pids: a prterun that made its session in TMPDIR would get one of those pids, and PMIx's
# server would not start there ("listener thread failed to start", exit 213).
if [ "$K" = prterun ]; then
    stale=$logdir/stale-tmp
    rm -rf "$stale" && mkdir -p "$stale"
    next=$(($(cat /proc/sys/kernel/ns_last_pid) + 1))
    (cd "$stale" && mkdir $(seq -f "prtrn.%.0f" "$next" $((next + 1999))) &&
        for ((p = next; p < next + 2000; p++)); do : >"prtrn.$p/pmix.${HOSTNAME%%.*}.tool"; done)
    launcher "$K" 2
    run prterun-stale-sessions 0 --absent log "failed to start" -- \
        env TMPDIR="$stale" "${L[@]}" "$b/exchange" -q
    rm -rf "$stale"
    # prterun run by a Hydra rank: its processes inherit the rank's PMI_FD, closed, and
    # Hydra's MPI_LOCALNRANKS beside prterun's own PMIx variables; prterun's is taken.
    run prterun-inside-hydra-rank 0 --count 2 "read 4/4 business cards from 2 ranks" \
        --count 2 "is not open (an outer job's" -- \
        "${HYDRA[@]}" -launcher fork -n 1 "${L[@]}" "$b/exchange"
fi

# Flux: a job whose PMI_process_mapping would pass 1024 bytes (300 tasks dealt cyclically
# to two nodes: Flux leaves the key out, with a warning, and publishes flux.taskmap,
# RFC 34, which the library reads: flux-core#4778), and the options of its PMI-1 server.
if [ "${K%-vc}" = flux ]; then
    launcher "$K" 300 cyclic
    run_expected clique-taskmap-n300-cyclic clique 0 \
        --expect log "PMI_process_mapping overflows PMI max value" -- "${L[@]}" "$b/clique"
    # -o pmi=pmi1 and pmi=pmi2 are other names of pmi=simple (flux-core#5226).
    for opt in pmi=pmi1 pmi=pmi2 pmi-simple.kvs=exchange pmi-simple.exchange.k=1; do
        launcher "$K" 4 2
        flux_opts -o "$opt"
        run_expected "exchange-o-$opt-n4" exchange 0 -- "${L[@]}" "$b/exchange" -q
    done
    # Without the mapping and the task map (pmi-simple.nomap) the clique is each rank alone
    # (each rank's line says who is on its node), on both nodes.
    launcher "$K" 4 2
    flux_opts -o pmi-simple.nomap=1
    run_expected clique-nomap-is-each-rank-n4 clique 0 --count 4 "8/8 business cards" \
        --expect log "on my node: ranks 3" --absent log "on my node: ranks 0," \
        --absent log "on my node: ranks 2," -- "${L[@]}" "$b/exchange"
fi

if [ "$K" != hydra4 ]; then
    summary "$label ($K)"
    exit
fi

# --- Hydra 4.0.2 only: more layouts, MPMD, -usize, -pmi-port -------------------------------
H=("${HYDRA[@]}" -launcher fork)
# mpiexec run inside a Slurm step passes the step's PMI_JOBID on: it is not Hydra's, and
# neither Slurm's ring (Hydra kills the job on it) nor Slurm's 1024-byte lines apply.
run stale-jobid-pmi2-ring 0 --expect log "deviation ring-unsupported" -- \
    env PMI_JOBID=1644.0 CHECK_DEVIATIONS=ring-unsupported "${H[@]}" -n 4 "$b/pmi2_ring"
run stale-jobid-validation 0 -- env PMI_JOBID=1644.0 "${H[@]}" -n 2 "$b/validation"
# An outer job's PMI_FD, closed, beside -pmi-port's PMI_PORT (Hydra leaves PMI_FD as it
# finds it there): the port is taken, with one warning line.
run stale-fd-port-n2 0 --expect log "PMI_FD=97 is not open" -- \
    env PMI_FD=97 "${H[@]}" -pmi-port -n 2 "$b/exchange"
# pmi-probe names the launch PMI_Init took, not the outer job's PMI_FD.
[ "${HARNESS_STATIC:-0}" = 1 ] || [ -n "${SANITIZED:-}" ] ||
    run stale-fd-port-probe-n2 0 --count 2 '"server":"PMI_PORT ' --count 2 '"verdict":"ok"' -- \
        env PMI_FD=97 "${H[@]}" -pmi-port -n 2 "$b/pmi-probe" --json
# pmi-probe's runs that flux pmi offers too: rounds, barriers, chosen peers, a key the
# server set; and its trace switch. (Not in the every-launcher section: the compatibility
# table counts those cases.)
if [ "${HARNESS_STATIC:-0}" != 1 ] && [ -z "${SANITIZED:-}" ]; then
    for api in "" --pmi2; do
        run "rounds-probe${api:+-pmi2}-n4" 0 --count 4 '"verdict":"ok"' \
            --count 4 '"rounds":{"count":3,"got":12,"expected":12,' --count 4 '"barriers":{"count":5,' \
            --count 4 '"keys":{"PMI_process_mapping":"(vector,(0,1,4))","no-such-key":null}' -- \
            "${H[@]}" -n 4 "$b/pmi-probe" --json $api --rounds 3 --barriers 5 --peers all \
            --get PMI_process_mapping --get no-such-key
    done
    run peers-probe-n4 0 --count 4 '"verdict":"ok"' --count 4 '"got":2,"expected":2}' -- \
        "${H[@]}" -n 4 "$b/pmi-probe" --json --peers 0,3
    run peers-outside-probe-n4 0 --count 4 '"verdict":"ok"' --count 4 '"got":4,"expected":4}' \
        --count 1 "pmi-probe: --peers names rank 9, outside this job of 4: left out" -- \
        "${H[@]}" -n 4 "$b/pmi-probe" --json --peers 0-9
    run verbose-probe-n2 0 --count 2 "ok: rank " --expect log "libpmi[1] " \
        --expect log "C: cmd=init pmi_version=1 pmi_subversion=1" -- "${H[@]}" -n 2 "$b/pmi-probe" --verbose
fi
# ...and its number taken since by another file (here the ranks' standard input).
run stale-fd-reused-port-n2 0 --expect log "PMI_FD=0 is not a socket (an outer job's" -- \
    env PMI_FD=0 "${H[@]}" -pmi-port -n 2 "$b/exchange"
# Both libraries in one process: the second to initialize is refused with one line
# naming the first (under -pmi-port both connected with the same PMI_ID before).
for mode in "" -pmi-port; do
    for first in 1 2; do
        run "two-libs-$first${mode:+-port}" 0 --expect log "is initialized in this process and owns its connection" \
            -- "${H[@]}" $mode -n 2 "$b/two_libs" $first
    done
done
P=("${H[@]}" -pmi-port)
run info-n1 0 -- "${H[@]}" -n 1 "$b/info" 1 0 -1
run info-mpmd 0 -- "${H[@]}" -n 2 "$b/info" 4 0 -1 : -n 2 "$b/info" 4 1 -1
run info-usize 0 -- "${H[@]}" -usize 8 -n 2 "$b/info" 2 0 8
for n in 2; do
    run "exchange-n$n" 0 -- "${H[@]}" -n "$n" "$b/exchange" -q
done
run exchange-a1b1-n2 0 -- "${H[@]}" -hosts a:1,b:1 -n 2 "$b/exchange" -q
run exchange-a4b4-n8 0 -- "${H[@]}" -hosts a:4,b:4 -n 8 "$b/exchange" -q
run exchange-a1b1-n8 0 -- "${H[@]}" -hosts a:1,b:1 -n 8 "$b/exchange" -q
run validation-a1b1 0 -- "${H[@]}" -hosts a:1,b:1 -n 2 "$b/validation"
run abort-3-two-nodes 3 --expect "$logdir/abort-3.stderr" "$msg" -- \
    "${H[@]}" -hosts a:1,b:1 -n 2 "$b/abort" 3 "$logdir/abort-3.stderr"
run abort-minus-1 255 -- "${H[@]}" -n 2 "$b/abort" -1
# The clique against MPI_LOCALNRANKS / MPI_LOCALRANKID, in uneven layouts.
run clique-a1b1-n4 0 -- "${H[@]}" -hosts a:1,b:1 -n 4 "$b/clique"
run clique-a3b1-n6 0 -- "${H[@]}" -hosts a:3,b:1 -n 6 "$b/clique"
run clique-a2b1c3-n9 0 -- "${H[@]}" -hosts a:2,b:1,c:3 -n 9 "$b/clique"
run clique-n5 0 -- "${H[@]}" -n 5 "$b/clique"
# Negative control of the check across real hosts (CHECK_REAL_HOSTS): simulated nodes
# share one host name, so the clique of a:2,b:2 is not the ranks on this host.
# (Its failed checks are read from CHECK_REPORT: Hydra may drop the output of a failing job.)
report_to clique-real-hosts-control
run clique-real-hosts-control nonzero --expect "$REPORT" "PMI_Get_clique_ranks on host" -- \
    env CHECK_REAL_HOSTS=1 CHECK_REPORT="$REPORT" "${H[@]}" -hosts a:2,b:2 -n 4 "$b/clique"
run names-a1b1 0 -- "${H[@]}" -hosts a:1,b:1 -n 2 "$b/names"
# PMI_dead_processes changes as ranks die: each poll reaches Hydra (never a kept value).
d=$logdir/dead-processes
rm -rf "$d" && mkdir -p "$d"
run dead-processes-n3 any --expect "$d/rank-0.txt" "ok: rank 0 saw rank 2 dead" \
    --expect "$d/rank-1.txt" "ok: rank 1 saw rank 2 dead" -- \
    "${H[@]}" -disable-auto-cleanup -n 3 "$b/dead_processes" "$d"
run spawn-a1b1-n2 0 -- "${H[@]}" -hosts a:1,b:1 -n 2 "$b/spawn"
# The get cache stays bounded: rank 1 reads 24 000 keys of 800 bytes (18 MiB) from the
# server, each twice in a row (so that each is cached), in two passes.
run get-cache-memory-n2 0 --expect log "memory: rank 1 read 24000 keys of 800 bytes" -- \
    "${H[@]}" -n 2 "$b/memory"

# PMI_PORT mode (mpiexec -pmi-port): the same programs over TCP.
run port-info-n4 0 -- "${P[@]}" -n 4 "$b/info" 4 0 -1
run port-exchange-a2b2-n4 0 -- "${P[@]}" -hosts a:2,b:2 -n 4 "$b/exchange" -q
run port-validation-n2 0 -- "${P[@]}" -n 2 "$b/validation"
run port-clique-a3b1-n6 0 -- "${P[@]}" -hosts a:3,b:1 -n 6 "$b/clique"
run port-spawn-n2 0 -- "${P[@]}" -n 2 "$b/spawn"
run port-abort-5 5 -- "${P[@]}" -n 2 "$b/abort" 5
run port-threads-n2 0 -- "${P[@]}" -n 2 "$b/threads"

run trace-on-errors 0 --expect log "PMI_KVS_Put(\"not-our-kvs\", \"k\", \"v\") = PMI_ERR_INVALID_KVS" \
    --expect log "PMI_KVS_Create: not supported" -- \
    "${H[@]}" -genv PMI_DEBUG 1 -n 1 "$b/validation"
run trace-off 0 --absent log "C: cmd=" --absent log "S: cmd=" --absent log "= PMI_SUCCESS" -- \
    "${H[@]}" -n 2 "$b/validation"

# fork() after PMI_Init (also while a thread holds the lock in a barrier): the child's
# calls fail at once and the parent carries on. A stale PMI_FD in an exec'd helper is
# refused and left as found.
run fork-n2 0 -- "${H[@]}" -n 2 "$b/fork"
run fork-a1b1-n2 0 -- "${H[@]}" -hosts a:1,b:1 -n 2 "$b/fork"
run stalefd-n2 0 --expect log "is a listening socket" --expect log "is not a stream socket" \
    --expect log "is connected to this process itself" --expect log "is close-on-exec" -- \
    "${H[@]}" -n 2 "$b/stalefd"
# mpiexec inside an `srun --mpi=pmix` step: its ranks inherit the step's PMIx variables,
# and a program a rank starts must not take the step's rank 0 for the closed PMI_FD.
run stalefd-outer-pmix-n2 0 --expect log "is not an open file descriptor" \
    --absent log "an outer job's" -- \
    env PMIX_NAMESPACE=slurm.pmix.12.0 PMIX_RANK=0 "${H[@]}" -n 2 "$b/stalefd"

# --- no launcher: singleton mode, refusals, bad environments --------------------------------
run singleton 0 --expect log "libpmi[0]: PMI_Spawn_multiple: no process manager (singleton mode)" \
    --absent log "C: cmd=" -- "$b/singleton"
run singleton-exchange 0 -- "$b/exchange" -q
# The put record of a million keys, and gets of them answered from it.
run singleton-memory 0 --expect log "memory: 1000000 keys of 64 bytes" -- "$b/memory"
run singleton-traced 0 --expect log "singleton mode" --expect log "PMI_Publish_name: no process manager" -- \
    env PMI_DEBUG=1 "$b/singleton"
# A launcher that started several processes without a PMI-1 server: refused, never N
# copies of rank 0 of 1 (the real launchers: scripts/launchers.sh and `make compat`).
run singleton-refused 2 --expect log "refusing to run as rank 0 of 1" -- \
    env PMI_SIZE=4 PMI_RANK=2 "$b/exchange" -q
run singleton-refused-srun-env 2 --expect log "SLURM_STEP_NUM_TASKS=\"2\" says Slurm's srun" \
    --expect log "srun --mpi=pmi2" -- \
    env SLURM_STEP_NUM_TASKS=2 SLURM_PROCID=0 "$b/exchange" -q
# A PMIx server named but not there, or no PMIx client library: PMI_Init fails with one
# line saying what it tried (never rank 0 of 1).
run pmix-env-without-server 2 --expect log "PMIX_RANK=\"1\" names a PMIx server, but PMIx_Init (" \
    --expect log "failed: UNREACHABLE" -- env PMIX_RANK=1 "$b/exchange" -q
run pmix-library-missing-one-task 0 --expect log "a launcher says this job has one process: singleton mode" \
    --expect log "rank 0 of 1" -- env PMIX_NAMESPACE=slurm.pmix.12.0 PMIX_RANK=0 \
    SLURM_STEP_NUM_TASKS=1 PMI_PMIX_LIBRARY=/nonexistent/libpmix.so.2 "$b/exchange"
# pmi-probe says so: singleton, and how to load a PMIx client library.
[ "${HARNESS_STATIC:-0}" = 1 ] || [ -n "${SANITIZED:-}" ] ||
    run pmix-library-missing-one-task-probe 0 --count 1 '"verdict":"singleton"' \
        --count 1 '"next":"a PMIx server is named' -- env PMIX_NAMESPACE=slurm.pmix.12.0 \
        PMIX_RANK=0 SLURM_STEP_NUM_TASKS=1 PMI_PMIX_LIBRARY=/nonexistent/libpmix.so.2 \
        "$b/pmi-probe" --json
# ...but not from an outer step's size: prterun run in an `srun -n 1` shell.
run pmix-library-missing-outer-one-task 2 --expect log "no PMIx client library could be loaded" \
    -- env PMIX_NAMESPACE=prterun-x@1 PMIX_RANK=0 SLURM_STEP_NUM_TASKS=1 \
    PMI_PMIX_LIBRARY=/nonexistent/libpmix.so.2 "$b/exchange" -q
run pmix-library-missing 2 --expect log "no PMIx client library could be loaded: tried /nonexistent/libpmix.so.2 (" \
    -- env PMIX_NAMESPACE=prterun-x@1 PMIX_RANK=1 PMI_PMIX_LIBRARY=/nonexistent/libpmix.so.2 "$b/exchange" -q
run singleton-in-allocation 0 -- env SLURM_JOB_ID=7 SLURM_NTASKS=4 "$b/exchange" -q
# A rank variable other than 0 never ends as a singleton.
run singleton-refused-procid 2 --expect log "SLURM_PROCID=\"2\" says Slurm's srun started this process with that rank" \
    -- env SLURM_JOB_ID=7 SLURM_NTASKS=4 SLURM_PROCID=2 "$b/exchange" -q
run pmix-library-missing-rank-5 2 --expect log "no PMIx client library could be loaded: tried" \
    --absent log "singleton mode" -- env PMIX_RANK=5 SLURM_STEP_NUM_TASKS=1 \
    PMI_PMIX_LIBRARY=/nonexistent/libpmix.so.2 "$b/exchange" -q
# libpmi2.so.0 names its own calls.
run pmix-library-missing-pmi2 2 --expect log "PMI2_Init: PMIX_NAMESPACE=" --absent log "PMI_Init" \
    -- env PMIX_NAMESPACE=prterun-x@1 PMIX_RANK=1 PMI_PMIX_LIBRARY=/nonexistent/libpmix.so.2 \
    "$b/pmi2_exchange"
run singleton-pmi2-spawn 1 --expect log "libpmi[0]: PMI2_Job_Spawn: no process manager (singleton mode)" \
    --absent log "PMI_Spawn_multiple" -- "$b/pmi2_spawn"
# Tracing from signal handlers (no lock, no allocation) and into a dead stderr (no SIGPIPE).
run sigsafe-handler 0 -- env PMI_DEBUG=1 "$b/sigsafe" handler 20000
run sigsafe-abort-in-handler 3 --expect log "terminated by SIGTERM" -- env PMI_DEBUG=1 "$b/sigsafe" abort
run sigsafe-stderr-pipe-closed 0 -- env PMI_DEBUG=1 "$b/sigsafe" pipe
# Bad environments: one line naming the cause, PMI_FAIL.
run env-fd-not-a-number 2 --expect log "PMI_FD=\"x\"" -- env PMI_FD=x PMI_RANK=0 PMI_SIZE=1 "$b/exchange" -q
run env-fd-not-open 2 --expect log "PMI_FD=99 is not an open file descriptor" -- \
    env PMI_FD=99 PMI_RANK=0 PMI_SIZE=1 "$b/exchange" -q
run env-fd-not-a-socket 2 --expect log "PMI_FD=0 is not a socket" -- \
    env PMI_FD=0 PMI_RANK=0 PMI_SIZE=1 "$b/exchange" -q </dev/null
run env-rank-out-of-range 2 --expect log "PMI_RANK=3 is not below PMI_SIZE=2" -- \
    env PMI_FD=0 PMI_RANK=3 PMI_SIZE=2 "$b/exchange" -q
run env-port-refused 2 --expect log "cannot connect to PMI_PORT 127.0.0.1:1" -- \
    env PMI_PORT=127.0.0.1:1 PMI_ID=0 "$b/exchange" -q
# A variable missing beside the one that set the mode is named with it; a port number
# outside TCP's range says so; an IPv6 host is shown in brackets; PMI_TIMEOUT is whole
# seconds.
run env-fd-alone 2 --expect log "PMI_Init: PMI_FD is set but PMI_SIZE is not" -- env PMI_FD=99 "$b/exchange" -q
run env-port-without-id 2 --expect log "PMI_Init: PMI_PORT is set but PMI_ID is not" -- \
    env PMI_PORT=127.0.0.1:1 "$b/exchange" -q
run env-port-out-of-range 2 \
    --expect log 'PMI_PORT="127.0.0.1:99999" names port 99999, outside the TCP ports 1 to 65535' -- \
    env PMI_PORT=127.0.0.1:99999 PMI_ID=0 "$b/exchange" -q
run env-port-ipv6-refused 2 --expect log "cannot connect to PMI_PORT [::1]:1: " -- \
    env PMI_PORT='[::1]:1' PMI_ID=0 "$b/exchange" -q
run env-timeout-fraction 2 \
    --expect log 'PMI_Init: PMI_TIMEOUT="0.5" is not a whole number of seconds (such as 30; 0: no limit)' -- \
    env PMI_TIMEOUT=0.5 "$b/exchange" -q

# pmi-probe where a newcomer met it: each kind of failure has its own advice, and only a
# server that answered, but not as the API expects, is told to try the other API.
# (A real environment each: a closed fd, a refused port, a server that closes, one that
# never answers, one that answers wrong; the kinds' rules are probe/src/advice.rs's.)
if [ "${HARNESS_STATIC:-0}" != 1 ] && [ -z "${SANITIZED:-}" ]; then
    probe=$b/pmi-probe
    # The environment is not one a launcher gives.
    run advice-environment-fd-alone 1 --expect log "error: PMI_Init: PMI_FD is set but PMI_SIZE is not" \
        --expect log "next: the environment is not one a launcher gives" --absent log "--pmi2" -- \
        env PMI_FD=99 "$probe"
    run advice-environment-fd-closed 1 --count 1 '"fault":"environment"' \
        --expect log "PMI_FD=99 is not an open file descriptor" --absent log "--pmi2" -- \
        env PMI_FD=99 PMI_RANK=0 PMI_SIZE=1 "$probe" --json
    run advice-environment-fd-not-a-socket 1 --count 1 '"fault":"environment"' \
        --expect log "PMI_FD=0 is not a socket" --absent log "--pmi2" -- \
        env PMI_FD=0 PMI_RANK=0 PMI_SIZE=1 "$probe" --json </dev/null
    run advice-environment-fd-malformed 1 --count 1 '"fault":"environment"' \
        --expect log 'PMI_FD=\"x\" is not a non-negative integer' --absent log "--pmi2" -- \
        env PMI_FD=x PMI_RANK=0 PMI_SIZE=1 "$probe" --json
    run advice-environment-port-range 1 --count 1 '"fault":"environment"' \
        --expect log "names port 99999, outside the TCP ports 1 to 65535" -- \
        env PMI_PORT=127.0.0.1:99999 PMI_ID=0 "$probe" --json
    run advice-environment-timeout-fraction 1 --count 1 '"fault":"environment"' \
        --count 1 '"timeout_s":null,"timeout_from":"PMI_TIMEOUT"' \
        --expect log 'PMI_TIMEOUT=\"0.5\" is not a whole number of seconds' -- \
        env PMI_TIMEOUT=0.5 "$probe" --json
    # A launcher's variables without a server: its own fix first (scripts/refusals.sh
    # shows the line under a real srun).
    run advice-unserved-srun-env 1 --count 1 '"fault":"unserved"' \
        --count 1 '"next":"under Slurm, give the job a PMI server: srun --mpi=pmi2' -- \
        env SLURM_STEP_ID=0 SLURM_STEP_NUM_TASKS=2 SLURM_PROCID=1 "$probe" --json
    # A key the library refuses (longer than the maximum) says nothing of the server.
    long_key=$(printf 'k%.0s' $(seq 70))
    run getkey-refused-probe 0 --expect log "singleton: rank 0 of 1" \
        --expect log "; get $long_key: refused by the library (InvalidKeyLength)" -- "$probe" --get "$long_key"
    # Nothing answers at PMI_PORT: refused (IPv4, IPv6), a name that does not resolve.
    run advice-no-server-refused 1 --count 1 '"fault":"no-server"' \
        --count 1 '"next":"nothing answers at PMI_PORT 127.0.0.1:1: ' --absent log "--pmi2" -- \
        env PMI_PORT=127.0.0.1:1 PMI_ID=0 "$probe" --json
    run advice-no-server-ipv6 1 --expect log "fail on " --expect log "(PMI_PORT [::1]:1)" \
        --expect log "error: PMI_Init: cannot connect to PMI_PORT [::1]:1: " \
        --expect log "next: nothing answers at PMI_PORT [::1]:1: " -- \
        env PMI_PORT='[::1]:1' PMI_ID=0 "$probe"
    run advice-no-server-unresolvable 1 --count 1 '"fault":"no-server"' \
        --expect log "cannot connect to PMI_PORT no-such-host.invalid:7000: " -- \
        env PMI_PORT=no-such-host.invalid:7000 PMI_ID=0 "$probe" --json
    run advice-pmix-library 1 --count 1 '"fault":"pmix-library"' \
        --count 1 '"next":"a PMIx server is named, but no PMIx client library could be loaded' -- \
        env PMIX_NAMESPACE=prterun-x@1 PMIX_RANK=1 PMI_PMIX_LIBRARY=/nonexistent/libpmix.so.2 "$probe" --json
    # A server that closes the connection, one that answers PMI-1's init to everything
    # (a PMI-1 client meets the wrong handshake, a PMI-2 client a server without PMI-2),
    # one that never answers: the limit ends the wait (each run bounded: a hang fails).
    if fake_server close; then
        run advice-closed 1 --count 1 '"fault":"closed"' \
            --count 1 '"next":"the process manager closed the connection' --absent log "--pmi2" \
            --expect log "the process manager at PMI_PORT 127.0.0.1:$FAKE_PORT closed the connection" -- \
            env PMI_PORT=127.0.0.1:$FAKE_PORT PMI_ID=0 timeout 20 "$probe" --json
        fake_server_stop
    else
        fail advice-closed "no fake server"
    fi
    if fake_server wrong; then
        run advice-protocol 1 --count 1 '"fault":"protocol"' --expect log "in the PMI_PORT handshake" \
            --count 1 '"next":"the process manager answered, but not as the PMI-1 API expects: try pmi-probe --pmi2' -- \
            env PMI_PORT=127.0.0.1:$FAKE_PORT PMI_ID=0 timeout 20 "$probe" --json
        run advice-protocol-pmi2 1 --expect log "error: PMI2_Init: the server does not speak PMI-2" \
            --expect log "next: the process manager answered, but not as the PMI-2 API expects: try pmi-probe without --pmi2" -- \
            env PMI_PORT=127.0.0.1:$FAKE_PORT PMI_ID=0 timeout 20 "$probe" --pmi2
        fake_server_stop
    else
        fail advice-protocol "no fake server"
    fi
    if fake_server silent; then
        run advice-timeout-option 1 --count 1 '"fault":"timeout"' \
            --count 1 '"timeout_s":2,"timeout_from":"--timeout"' \
            --expect log "no reply (cmd=initack) from the process manager at PMI_PORT 127.0.0.1:$FAKE_PORT in 2 s (PMI_TIMEOUT)" \
            --count 1 '"next":"no answer within the limit of 2 s (--timeout): ' -- \
            env PMI_PORT=127.0.0.1:$FAKE_PORT PMI_ID=0 PMI_TIMEOUT=600 timeout 20 "$probe" --json --timeout 2
        run advice-timeout-pmi-timeout 1 --expect log "; limit 1 s (PMI_TIMEOUT)" \
            --expect log "next: no answer within the limit of 1 s (PMI_TIMEOUT): " -- \
            env PMI_PORT=127.0.0.1:$FAKE_PORT PMI_ID=0 PMI_TIMEOUT=1 timeout 20 "$probe" --pmi2
        # Without PMI_TIMEOUT: the probe's own limit (a minute), not a wait for ever.
        run advice-timeout-default 1 --count 1 '"fault":"timeout"' \
            --count 1 '"timeout_s":60,"timeout_from":"default"' \
            --expect log "no reply (cmd=initack) from the process manager at PMI_PORT 127.0.0.1:$FAKE_PORT in 60 s (PMI_TIMEOUT)" -- \
            env PMI_PORT=127.0.0.1:$FAKE_PORT PMI_ID=0 timeout 90 "$probe" --json
        fake_server_stop
    else
        fail advice-timeout "no fake server"
    fi
fi

# The option helpers, local; valgrind shows a parse/free cycle leaks nothing (skipped in
# the sanitizer build, which checks leaks itself).
if command -v valgrind >/dev/null && [ -z "${SANITIZED:-}" ]; then
    run options-valgrind 0 -- valgrind -q --leak-check=full --show-leak-kinds=all \
        --errors-for-leak-kinds=all --error-exitcode=9 "$b/options"
else
    run options 0 -- "$b/options"
fi

summary "$label"
