#!/usr/bin/env bash
# The drop-in tests: a program built against Slurm's libpmi.so.0 picks this library up
# through LD_LIBRARY_PATH (and fails without it), dlopen("libpmi.so.0") finds it and
# every function in it, a C++ program built through pkg-config runs, and the man page
# is installed and lints clean. One PASS/FAIL line per case.
# Usage: dropin-tests/run.sh BINDIR LIBDIR PREFIX      (MPIEXEC from the environment)
set -u
b=$(cd "$1" && pwd)
lib=$(cd "$2" && pwd)
prefix=$(cd "$3" && pwd)
here=$(cd "$(dirname "$0")/.." && pwd)
logs=$b/logs
mkdir -p "$logs"
unset PMI_FD PMI_PORT PMI_ID PMI_RANK PMI_SIZE PMI_SPAWNED PMI_DEBUG LD_LIBRARY_PATH
H=("${MPIEXEC:-mpiexec.hydra}" -launcher fork)
passed=0 failed=0

pass() { passed=$((passed + 1)); echo "PASS $1"; }
fail() {
    failed=$((failed + 1)); echo "FAIL $1 ($2)"
    [ -f "$logs/$1.log" ] && sed 's/^/    | /' "$logs/$1.log" | tail -n 20
}

# run NAME WANT_STATUS [--expect TEXT]... [--count N TEXT] -- COMMAND...
run() {
    local name=$1 want=$2 log=$logs/$1.log
    shift 2
    local checks=()
    while [ "$1" != -- ]; do
        if [ "$1" = --count ]; then checks+=("$1" "$2" "$3"); shift 3
        else checks+=("$1" "" "$2"); shift 2; fi
    done
    shift
    timeout 120 "$@" >"$log" 2>&1
    local got=$? why=""
    [ "$got" = "$want" ] || why="exit $got, expected $want"
    local i
    for ((i = 0; i < ${#checks[@]}; i += 3)); do
        local kind=${checks[i]} n=${checks[i + 1]} text=${checks[i + 2]}
        if [ "$kind" = --expect ] && ! grep -qaF -- "$text" "$log"; then
            why="$why; no \"$text\""
        elif [ "$kind" = --count ] && [ "$(grep -caF -- "$text" "$log")" != "$n" ]; then
            why="$why; \"$text\" not $n times"
        fi
    done
    if [ -z "$why" ]; then pass "$name"; else fail "$name" "${why#; }"; fi
}

ours=$lib/libpmi.so.0
# --- 1. The LD_LIBRARY_PATH swap --------------------------------------------------------
# Built the legacy way: Slurm's header, Slurm's library, no rpath.
slurm=$(ldd "$b/swap" | awk '$1 == "libpmi.so.0" {print $3}')
if readelf -d "$b/swap" | grep -q 'NEEDED.*\[libpmi.so.0\]' &&
   ! readelf -d "$b/swap" | grep -qE 'RPATH|RUNPATH' &&
   [ -n "$slurm" ] && [ "$(readlink -f "$slurm")" != "$(readlink -f "$ours")" ]; then
    pass "swap-built-against-slurm (NEEDED libpmi.so.0, no rpath, ldd: $slurm)"
else
    fail swap-built-against-slurm "ldd without LD_LIBRARY_PATH gives '$slurm'"
fi
swapped=$(LD_LIBRARY_PATH=$lib ldd "$b/swap" | awk '$1 == "libpmi.so.0" {print $3}')
if [ "$swapped" = "$ours" ]; then
    pass "swap-ldd-shows-ours ($swapped)"
else
    fail swap-ldd-shows-ours "LD_LIBRARY_PATH=$lib ldd gives '$swapped'"
fi
run swap-n4 0 --count 4 "8/8 business cards, libpmi.so.0 from $ours" -- \
    env LD_LIBRARY_PATH="$lib" "${H[@]}" -n 4 "$b/swap" "$ours"
run swap-a2b2-n4 0 --count 4 "8/8 business cards, libpmi.so.0 from $ours" -- \
    env LD_LIBRARY_PATH="$lib" "${H[@]}" -hosts a:2,b:2 -n 4 "$b/swap" "$ours"
run swap-pmi-port-a2b2-n4 0 --count 4 "8/8 business cards, libpmi.so.0 from $ours" -- \
    env LD_LIBRARY_PATH="$lib" "${H[@]}" -pmi-port -hosts a:2,b:2 -n 4 "$b/swap" "$ours"
# Without the swap the same binary runs Slurm's library, which cannot work under Hydra:
# the test above measures the swap, not something else.
run no-swap-fails-with-slurm-lib 1 --expect "libpmi.so.0 from $(readlink -f "$slurm")" -- \
    "${H[@]}" -n 4 "$b/swap"

# --- 2. dlopen("libpmi.so.0") -------------------------------------------------------------
run dlopen-finds-ours-and-33-symbols 0 --expect "loaded $ours; dlsym found 33/33 functions" -- \
    env LD_LIBRARY_PATH="$lib" "$b/dlopen" "$here/symbols.txt" "$ours"
run dlopen-init-under-hydra 0 --count 2 "PMI_Init, PMI_Barrier and PMI_Finalize through dlsym" -- \
    env LD_LIBRARY_PATH="$lib" "${H[@]}" -hosts a:1,b:1 -n 2 "$b/dlopen" "$here/symbols.txt" "$ours" --init
run dlopen-without-swap-is-not-ours 1 --expect "loaded $(readlink -f "$slurm"), not $ours" -- \
    "$b/dlopen" "$here/symbols.txt" "$ours"

# --- 3. C++ through pkg-config, against the installed library -------------------------
if readelf -d "$b/app-cxx" | grep -q 'NEEDED.*\[libpmi.so.0\]'; then
    pass "cxx-needed-libpmi.so.0"
else
    fail cxx-needed-libpmi.so.0 "readelf -d $b/app-cxx has no NEEDED libpmi.so.0"
fi
run cxx-n2 0 --count 2 "cards" --expect "rank 1 of 2: 2/2 cards" -- \
    env LD_LIBRARY_PATH="$prefix/lib" "${H[@]}" -n 2 "$b/app-cxx"

# --- 4. The man page ----------------------------------------------------------------------
if cmp -s "$here/docs/pmi.3" "$prefix/share/man/man3/pmi.3"; then
    pass "man-installed ($prefix/share/man/man3/pmi.3)"
else
    fail man-installed "no $prefix/share/man/man3/pmi.3 identical to docs/pmi.3"
fi
out=$(groff -t -man -ww -z "$here/docs/pmi.3" 2>&1)
if [ -z "$out" ]; then pass "man-groff-ww-clean"; else fail man-groff-ww-clean "$out"; fi
if command -v mandoc >/dev/null; then
    out=$(mandoc -T lint -W warning "$here/docs/pmi.3" 2>&1)
    if [ -z "$out" ]; then pass "man-mandoc-lint-clean"; else fail man-mandoc-lint-clean "$out"; fi
fi
out=$(MANWIDTH=80 man --warnings -l "$prefix/share/man/man3/pmi.3" 2>&1 >"$logs/man.txt")
if [ -z "$out" ] && grep -q 'PMI_KVS_Put' "$logs/man.txt" &&
   [ "$(grep -c 'PMI_[A-Za-z_]*(' "$logs/man.txt")" -ge 33 ]; then
    pass "man-renders (man -l, no warnings)"
else
    fail man-renders "${out:-rendering lacks the 33 functions}"
fi

echo "dropin-tests: $passed passed, $failed failed"
[ "$failed" = 0 ]
