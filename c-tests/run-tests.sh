#!/usr/bin/env bash
# Run the C test programs with this libpmi.so.0 swapped in: under the real mpiexec.hydra
# (PMI_FD and -pmi-port modes, one node and two simulated nodes), and on their own
# (singleton mode, the local option helpers under valgrind).
# Usage: c-tests/run-tests.sh BINDIR LIBDIR
# Each case is one command; its exit status, and for some its output, is the verdict.
source "$(dirname "$0")/lib.sh" "$1" "$2"

check_loaded "$b/exchange"

# Rank, size, appnum, universe size.
run info-n1 0 -- "${H[@]}" -n 1 "$b/info" 1 0 -1
run info-n4 0 -- "${H[@]}" -n 4 "$b/info" 4 0 -1
run info-mpmd 0 -- "${H[@]}" -n 2 "$b/info" 4 0 -1 : -n 2 "$b/info" 4 1 -1
run info-usize 0 -- "${H[@]}" -usize 8 -n 2 "$b/info" 2 0 8
run info-two-nodes 0 -- "${H[@]}" -hosts a:2,b:2 -n 4 "$b/info" 4 0 -1
# The business-card exchange, one node and two simulated nodes.
for n in 1 2 4 8; do
    run "exchange-n$n" 0 -- "${H[@]}" -n "$n" "$b/exchange" -q
done
run exchange-a1b1-n2 0 -- "${H[@]}" -hosts a:1,b:1 -n 2 "$b/exchange" -q
run exchange-a2b2-n4 0 -- "${H[@]}" -hosts a:2,b:2 -n 4 "$b/exchange" -q
run exchange-a4b4-n8 0 -- "${H[@]}" -hosts a:4,b:4 -n 8 "$b/exchange" -q
run exchange-a1b1-n8 0 -- "${H[@]}" -hosts a:1,b:1 -n 8 "$b/exchange" -q
# 100 barriers in a row, each proven through the KVS.
run barrier-100-n4 0 -- "${H[@]}" -n 4 "$b/barrier" 100
run barrier-100-a2b2 0 -- "${H[@]}" -hosts a:2,b:2 -n 4 "$b/barrier" 100
# Every validation rule.
run validation-n2 0 -- "${H[@]}" -n 2 "$b/validation"
run validation-a1b1 0 -- "${H[@]}" -hosts a:1,b:1 -n 2 "$b/validation"
# Abort: the job's exit status is the code passed, and the message reached the
# aborting process's stderr (a file: Hydra may tear down before forwarding it).
msg="abort test: rank is giving up on purpose"
run abort-7 7 --expect "$logdir/abort-7.stderr" "$msg" -- \
    "${H[@]}" -n 2 "$b/abort" 7 "$logdir/abort-7.stderr"
run abort-3-two-nodes 3 --expect "$logdir/abort-3.stderr" "$msg" -- \
    "${H[@]}" -hosts a:1,b:1 -n 2 "$b/abort" 3 "$logdir/abort-3.stderr"
run abort-minus-1 255 -- "${H[@]}" -n 2 "$b/abort" -1
run abort-while-a-thread-blocks 6 -- "${H[@]}" -n 2 "$b/abort" 6 - threaded
# The clique against MPI_LOCALNRANKS / MPI_LOCALRANKID.
run clique-a2b2-n4 0 -- "${H[@]}" -hosts a:2,b:2 -n 4 "$b/clique"
run clique-a1b1-n4 0 -- "${H[@]}" -hosts a:1,b:1 -n 4 "$b/clique"
run clique-a3b1-n6 0 -- "${H[@]}" -hosts a:3,b:1 -n 6 "$b/clique"
run clique-a2b1c3-n9 0 -- "${H[@]}" -hosts a:2,b:1,c:3 -n 9 "$b/clique"
run clique-n5 0 -- "${H[@]}" -n 5 "$b/clique"
# Name publishing.
run names-n2 0 -- "${H[@]}" -n 2 "$b/names"
run names-a1b1 0 -- "${H[@]}" -hosts a:1,b:1 -n 2 "$b/names"
# Spawn: awkward arguments, preput, wdir, two commands; children report their verdicts.
run spawn-n2 0 -- "${H[@]}" -n 2 "$b/spawn"
run spawn-a1b1-n2 0 -- "${H[@]}" -hosts a:1,b:1 -n 2 "$b/spawn"

# PMI_PORT mode (mpiexec -pmi-port): the same programs over TCP.
run port-info-n4 0 -- "${P[@]}" -n 4 "$b/info" 4 0 -1
run port-exchange-a2b2-n4 0 -- "${P[@]}" -hosts a:2,b:2 -n 4 "$b/exchange" -q
run port-validation-n2 0 -- "${P[@]}" -n 2 "$b/validation"
run port-clique-a3b1-n6 0 -- "${P[@]}" -hosts a:3,b:1 -n 6 "$b/clique"
run port-spawn-n2 0 -- "${P[@]}" -n 2 "$b/spawn"
run port-abort-5 5 -- "${P[@]}" -n 2 "$b/abort" 5

# Tracing: PMI_DEBUG=1 shows every call and every wire line; unset, nothing.
run trace-on 0 --expect log "libpmi[1] " --expect log "C: cmd=init pmi_version=1 pmi_subversion=1" \
    --expect log "S: cmd=maxes kvsname_max=256 keylen_max=64 vallen_max=1024" \
    --expect log "PMI_Get_universe_size(0x" --expect log ") = PMI_SUCCESS" \
    --expect log "PMI_KVS_Get_my_name(0x" --expect log "C: cmd=finalize" -- \
    "${H[@]}" -genv PMI_DEBUG 1 -n 2 "$b/info" 2 0 -1
run trace-on-errors 0 --expect log "PMI_KVS_Put(\"not-our-kvs\", \"k\", \"v\") = PMI_ERR_INVALID_KVS" \
    --expect log "PMI_KVS_Create: not supported" -- \
    "${H[@]}" -genv PMI_DEBUG 1 -n 1 "$b/validation"
run trace-off 0 --absent log "C: cmd=" --absent log "S: cmd=" --absent log "= PMI_SUCCESS" -- \
    "${H[@]}" -n 2 "$b/validation"

# Singleton mode: no PMI_FD, no PMI_PORT.
run singleton 0 --expect log "libpmi[0]: PMI_Spawn_multiple: no process manager (singleton mode)" \
    --absent log "C: cmd=" -- "$b/singleton"
run singleton-exchange 0 -- "$b/exchange" -q
run singleton-refused 2 --expect log "refusing to run as rank 0 of 1" -- \
    env PMI_SIZE=4 PMI_RANK=2 "$b/exchange" -q
run singleton-traced 0 --expect log "singleton mode" --expect log "PMI_Publish_name: no process manager" -- \
    env PMI_DEBUG=1 "$b/singleton"
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

# Threads: 8 per rank, 10 000 calls each.
run threads-n2 0 -- "${H[@]}" -n 2 "$b/threads"
run threads-a1b1-n2 0 -- "${H[@]}" -hosts a:1,b:1 -n 2 "$b/threads"
run port-threads-n2 0 -- "${P[@]}" -n 2 "$b/threads"

# The option helpers, local; valgrind shows a parse/free cycle leaks nothing (skipped in
# the sanitizer build, which checks leaks itself).
if command -v valgrind >/dev/null && [ -z "${SANITIZED:-}" ]; then
    run options-valgrind 0 -- valgrind -q --leak-check=full --show-leak-kinds=all \
        --errors-for-leak-kinds=all --error-exitcode=9 "$b/options"
else
    run options 0 -- "$b/options"
fi

echo "c-tests: $passed passed, $failed failed"
[ "$failed" = 0 ]
