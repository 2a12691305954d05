#!/usr/bin/env bash
# The C tests under valgrind memcheck, inside real Hydra jobs: zero errors and zero
# definite or indirect leaks, or the case fails (--error-exitcode).
# Usage: c-tests/run-memcheck.sh BINDIR LIBDIR
b=$(cd "$1" && pwd)
source "$(dirname "$0")/../scripts/harness.sh" "$b/logs-memcheck" "$2"
HARNESS_SUITE=memcheck
H=("${HYDRA[@]}" -launcher fork)
P=("${H[@]}" -pmi-port)

V=(valgrind -q --error-exitcode=9 --leak-check=full --show-leak-kinds=definite,indirect
   --errors-for-leak-kinds=definite,indirect --track-origins=yes)
check_loaded "$b/exchange"
run memcheck-exchange-a2b2 0 -- "${H[@]}" -hosts a:2,b:2 -n 4 "${V[@]}" "$b/exchange" -q
run memcheck-validation 0 -- "${H[@]}" -n 2 "${V[@]}" "$b/validation"
run memcheck-clique 0 -- "${H[@]}" -hosts a:3,b:1 -n 6 "${V[@]}" "$b/clique"
run memcheck-names 0 -- "${H[@]}" -n 2 "${V[@]}" "$b/names"
run memcheck-info 0 -- "${H[@]}" -n 2 "${V[@]}" "$b/info" 2 0 -1
run memcheck-barrier 0 -- "${H[@]}" -n 2 "${V[@]}" "$b/barrier" 20
run memcheck-threads 0 -- "${H[@]}" -n 2 "${V[@]}" "$b/threads" 1000
run memcheck-port-exchange 0 -- "${P[@]}" -n 2 "${V[@]}" "$b/exchange" -q
run memcheck-singleton 0 -- "${V[@]}" "$b/singleton"
run memcheck-options 0 -- "${V[@]}" "$b/options"

summary memcheck
