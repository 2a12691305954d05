#!/usr/bin/env bash
# Run the C test programs under the real mpiexec.hydra with this libpmi.so.0 swapped in.
# Usage: c-tests/run-hydra.sh BINDIR LIBDIR
# Each case is one mpiexec run; its exit status (and, for some, its output) is the verdict.
set -u
bindir=$1
libdir=$(cd "$2" && pwd)
logdir=$bindir/logs
mkdir -p "$logdir"
export LD_LIBRARY_PATH=$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
unset PMI_DEBUG
passed=0
failed=0
MPIEXEC=${MPIEXEC:-mpiexec.hydra}

# run NAME EXPECTED_STATUS [--expect FILE TEXT] -- MPIEXEC-ARGS...
run() {
    local name=$1 want=$2 file="" needle=""
    shift 2
    if [ "$1" = --expect ]; then file=$2; needle=$3; shift 3; fi
    [ "$1" = -- ] && shift
    local log=$logdir/$name.log
    [ -z "$file" ] || rm -f "$file"
    timeout 120 "$MPIEXEC" -launcher fork "$@" >"$log" 2>&1
    local got=$?
    if [ "$got" = "$want" ] && { [ -z "$file" ] || grep -qF -- "$needle" "$file"; }; then
        passed=$((passed + 1))
        echo "PASS $name"
    else
        failed=$((failed + 1))
        echo "FAIL $name (exit $got, expected $want${file:+, and \"$needle\" in $file})"
        sed 's/^/    | /' "$log" | tail -n 30
    fi
}

# The library under test is ours, not Debian's Slurm libpmi.so.0.
loaded=$(ldd "$bindir/exchange" | awk '$1 == "libpmi.so.0" {print $3}')
if [ "$loaded" = "$libdir/libpmi.so.0" ]; then
    passed=$((passed + 1)); echo "PASS ldd-loads-ours ($loaded)"
else
    failed=$((failed + 1)); echo "FAIL ldd-loads-ours: libpmi.so.0 resolves to '$loaded'"
fi

b=$bindir
# Rank, size, appnum, universe size.
run info-n1 0 -- -n 1 "$b/info" 1 0 -1
run info-n4 0 -- -n 4 "$b/info" 4 0 -1
run info-mpmd 0 -- -n 2 "$b/info" 4 0 -1 : -n 2 "$b/info" 4 1 -1
run info-usize 0 -- -usize 8 -n 2 "$b/info" 2 0 8
run info-two-nodes 0 -- -hosts a:2,b:2 -n 4 "$b/info" 4 0 -1
# The business-card exchange, one node and two simulated nodes.
for n in 1 2 4 8; do
    run "exchange-n$n" 0 -- -n "$n" "$b/exchange" -q
done
run exchange-a1b1-n2 0 -- -hosts a:1,b:1 -n 2 "$b/exchange" -q
run exchange-a2b2-n4 0 -- -hosts a:2,b:2 -n 4 "$b/exchange" -q
run exchange-a4b4-n8 0 -- -hosts a:4,b:4 -n 8 "$b/exchange" -q
run exchange-a1b1-n8 0 -- -hosts a:1,b:1 -n 8 "$b/exchange" -q
# 100 barriers in a row, each proven through the KVS.
run barrier-100-n4 0 -- -n 4 "$b/barrier" 100
run barrier-100-a2b2 0 -- -hosts a:2,b:2 -n 4 "$b/barrier" 100
# Every validation rule.
run validation-n2 0 -- -n 2 "$b/validation"
run validation-a1b1 0 -- -hosts a:1,b:1 -n 2 "$b/validation"
# Abort: the job's exit status is the code passed, and the message is on stderr.
msg="abort test: rank is giving up on purpose"
run abort-7 7 --expect "$logdir/abort-7.stderr" "$msg" -- -n 2 "$b/abort" 7 "$logdir/abort-7.stderr"
run abort-3-two-nodes 3 --expect "$logdir/abort-3.stderr" "$msg" -- \
    -hosts a:1,b:1 -n 2 "$b/abort" 3 "$logdir/abort-3.stderr"
run abort-minus-1 255 -- -n 2 "$b/abort" -1
# The clique against MPI_LOCALNRANKS / MPI_LOCALRANKID.
run clique-a2b2-n4 0 -- -hosts a:2,b:2 -n 4 "$b/clique"
run clique-a1b1-n4 0 -- -hosts a:1,b:1 -n 4 "$b/clique"
run clique-a3b1-n6 0 -- -hosts a:3,b:1 -n 6 "$b/clique"
run clique-a2b1c3-n9 0 -- -hosts a:2,b:1,c:3 -n 9 "$b/clique"
run clique-n5 0 -- -n 5 "$b/clique"
# Name publishing.
run names-n2 0 -- -n 2 "$b/names"
run names-a1b1 0 -- -hosts a:1,b:1 -n 2 "$b/names"
# Spawn: awkward arguments, preput, wdir, two commands; children report their verdicts.
run spawn-n2 0 -- -n 2 "$b/spawn"
run spawn-a1b1-n2 0 -- -hosts a:1,b:1 -n 2 "$b/spawn"

echo "hydra: $passed passed, $failed failed"
[ "$failed" = 0 ]
