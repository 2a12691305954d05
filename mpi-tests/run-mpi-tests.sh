#!/usr/bin/env bash
# Run the MPI programs of `make mpi-check` under Hydra with OUR libpmi.so.0.
# Usage: mpi-tests/run-mpi-tests.sh BIN_DIR LIB_DIR   (MPIEXEC, MPI_TIMEOUT from the env)
# Prints PASS/FAIL per run, NOTE lines for facts about Hydra, and finally
#   mpi-check: N passed, N failed
# and exits nonzero on any failure. Each run's output is in BIN_DIR/logs/NAME.log.
set -u
BIN=$(cd "$1" && pwd)
LIBDIR=$(cd "$2" && pwd)
MPIEXEC=${MPIEXEC:-mpiexec.hydra}
T=${MPI_TIMEOUT:-60}
LOGS=$BIN/logs
mkdir -p "$LOGS"
export LD_LIBRARY_PATH=$LIBDIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
unset PMI_DEBUG PMI_FD PMI_PORT PMI_RANK PMI_SIZE PMI_ID PMI_SPAWNED
passed=0 failed=0

result() { # NAME OK DETAIL
    if [ "$2" = 0 ]; then passed=$((passed + 1)); echo "PASS $1${3:+ ($3)}"
    else failed=$((failed + 1)); echo "FAIL $1${3:+ ($3)}"; sed 's/^/    | /' "$LOGS/$1.log" | tail -n 25; fi
}

# run NAME EXPECT -- mpiexec arguments... : EXPECT is 0 (must exit 0) or nonzero (must fail)
run() {
    local name=$1 expect=$2; shift 3
    local start end rc
    start=$(date +%s.%N)
    timeout -k 5 "$T" "$MPIEXEC" -launcher fork "$@" > "$LOGS/$name.log" 2>&1
    rc=$?
    end=$(date +%s.%N)
    local secs; secs=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.2f s", b - a }')
    if [ $rc = 124 ] || [ $rc = 137 ]; then result "$name" 1 "timed out after $T s"; return; fi
    if [ "$expect" = 0 ]; then result "$name" $rc "exit $rc, $secs"
    else result "$name" $([ $rc != 0 ] && echo 0 || echo 1) "exit $rc as it must, $secs"; fi
}

NODES2=(-disable-hostname-propagation)

# Proof that the MPI programs load our library: the dynamic linker's choice, then our
# trace prefix from every rank of a real job.
name=loads-our-libpmi
{ ldd "$BIN/allreduce"; echo; readelf -d "$(ldd "$BIN/allreduce" | awk '/libmpi\.so/ {print $3}')"; } > "$LOGS/$name.log" 2>&1
ldd "$BIN/allreduce" | grep -q "libpmi\.so\.0 => $LIBDIR/libpmi\.so\.0 " &&
    grep -q 'NEEDED.*\[libpmi\.so\.0\]' "$LOGS/$name.log"
result $name $? "ldd: libpmi.so.0 => $LIBDIR/libpmi.so.0; libmpi.so.12 NEEDED libpmi.so.0"

name=traced-by-our-libpmi
PMI_DEBUG=1 timeout -k 5 "$T" "$MPIEXEC" -launcher fork -n 2 "$BIN/allreduce" 2 > "$LOGS/$name.log" 2>&1
rc=$?
ok=1
if [ $rc = 0 ] && grep -q '^libpmi\[0\] .*PMI_Init(.*) = PMI_SUCCESS' "$LOGS/$name.log" &&
    grep -q '^libpmi\[1\] .*PMI_Init(.*) = PMI_SUCCESS' "$LOGS/$name.log"; then ok=0; fi
result $name $ok "PMI_DEBUG=1: $(grep -c '^libpmi\[' "$LOGS/$name.log") trace lines from ranks 0 and 1"

run allreduce-1node       0 -- -n 4 "$BIN/allreduce" 4 4
run allreduce-2nodes      0 -- -hosts a:2,b:2 -n 4 "${NODES2[@]}" "$BIN/allreduce" 4 2
run allreduce-pmi-port    0 -- -pmi-port -n 4 "$BIN/allreduce" 4 4
run allreduce-pmi-port-2nodes 0 -- -pmi-port -hosts a:2,b:2 -n 4 "${NODES2[@]}" "$BIN/allreduce" 4 2
run allreduce-wrong-size  1 -- -n 4 "$BIN/allreduce" 5      # negative control: a check fails

run spawn                 0 -- -n 2 "$BIN/spawn" 2
run spawn-1parent-3children 0 -- -n 1 "$BIN/spawn" 3
run spawn-2nodes          0 -- -hosts a:1,b:1 -n 2 "${NODES2[@]}" "$BIN/spawn" 2
run spawn-pmi-port        0 -- -pmi-port -n 2 "$BIN/spawn" 2
run spawn-child-fails     1 -- -n 1 "$BIN/spawn" 2 0 fail  # negative control: parents see it

# Hydra does not pass a spawned child's exit status to mpiexec: children that exit 5
# after replying correctly leave mpiexec's status at 0 (a fact, not a verdict).
timeout -k 5 "$T" "$MPIEXEC" -launcher fork -n 1 "$BIN/spawn" 2 5 > "$LOGS/spawn-child-exit-5.log" 2>&1
echo "NOTE spawned children exited 5, mpiexec exited $? (Hydra ignores spawned children's status)"

run pubname               0 -- -n 2 "$BIN/pubname"
run pubname-4ranks        0 -- -n 4 "$BIN/pubname"
run pubname-2nodes        0 -- -hosts a:1,b:1 -n 2 "${NODES2[@]}" "$BIN/pubname"
run pubname-pmi-port      0 -- -pmi-port -n 2 "$BIN/pubname"
# A published name longer than MPI_MAX_PORT_NAME must never overrun MPI_Lookup_name's
# 256-byte buffer (it did, by 345 bytes, before ports were bounded).
run longport              0 -- -n 1 "$BIN/longport"

echo "mpi-check: $passed passed, $failed failed"
[ $failed = 0 ]
