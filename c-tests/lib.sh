# Shared by the C test runners: the case runner and the setting it needs.
# Sourced with BINDIR and LIBDIR as $1 and $2.
set -u
bindir=$1
libdir=$(cd "$2" && pwd)
logdir=$bindir/logs
mkdir -p "$logdir"
export LD_LIBRARY_PATH=$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
unset PMI_DEBUG PMI_FD PMI_PORT PMI_ID PMI_RANK PMI_SIZE PMI_SPAWNED
passed=0
failed=0
H=("${MPIEXEC:-mpiexec.hydra}" -launcher fork)
P=("${H[@]}" -pmi-port)
b=$bindir

# run NAME STATUS [--expect FILE TEXT]... [--absent FILE TEXT]... -- COMMAND...
# FILE may be "log": the command's own output.
run() {
    local name=$1 want=$2 log=$logdir/$1.log
    shift 2
    local checks=()
    while [ "$1" != -- ]; do checks+=("$1" "$2" "$3"); shift 3; done
    shift
    timeout 300 "$@" >"$log" 2>&1
    local got=$? why=""
    [ "$got" = "$want" ] || why="exit $got, expected $want"
    local i
    for ((i = 0; i < ${#checks[@]}; i += 3)); do
        local kind=${checks[i]} file=${checks[i + 1]} text=${checks[i + 2]}
        [ "$file" = log ] && file=$log
        if [ "$kind" = --expect ] && ! grep -qaF -- "$text" "$file" 2>/dev/null; then
            why="$why; no \"$text\" in $file"
        elif [ "$kind" = --absent ] && grep -qaF -- "$text" "$file" 2>/dev/null; then
            why="$why; unexpected \"$text\" in $file"
        fi
    done
    if [ -z "$why" ]; then
        passed=$((passed + 1))
        echo "PASS $name"
    else
        failed=$((failed + 1))
        echo "FAIL $name (${why#; })"
        sed 's/^/    | /' "$log" | tail -n 30
    fi
}

# The library under test is ours, not Debian's Slurm libpmi.so.0.
check_loaded() {
    local loaded
    loaded=$(ldd "$1" | awk '$1 == "libpmi.so.0" {print $3}')
    if [ "$loaded" = "$libdir/libpmi.so.0" ]; then
        passed=$((passed + 1)); echo "PASS ldd-loads-ours ($loaded)"
    else
        failed=$((failed + 1)); echo "FAIL ldd-loads-ours: libpmi.so.0 resolves to '$loaded'"
    fi
}
