#!/usr/bin/env bash
# The drop-in tests: a program built against Slurm's libpmi.so.0 picks this library up
# through LD_LIBRARY_PATH (and fails without it), dlopen("libpmi.so.0") finds it and
# every function in it, a C++ program built through pkg-config runs, and the man page
# is installed and lints clean. One PASS/FAIL line per case.
# Usage: dropin-tests/run.sh BINDIR LIBDIR PREFIX      (LAUNCHER: see scripts/harness.sh)
b=$(cd "$1" && pwd)
lib=$(cd "$2" && pwd)
prefix=$(cd "$3" && pwd)
unset LD_LIBRARY_PATH # the swap is what is measured: nothing on the path by default
source "$(dirname "$0")/../scripts/harness.sh" "$b/logs-${LAUNCHER:-hydra4}"
HARNESS_SUITE=dropin
K=$LAUNCHER
source "$harness_root/scripts/launchers.sh" expect "$K"
here=$harness_root
two=1
launcher_has_two_nodes "$K" && two=2
launcher "$K" 4; L4=("${L[@]}")
launcher "$K" 4 "$two"; L4x=("${L[@]}")
launcher "$K" 2 "$two"; L2x=("${L[@]}")
launcher "$K" 2; L2=("${L[@]}")

ours=$lib/libpmi.so.0
# --- 1. The LD_LIBRARY_PATH swap --------------------------------------------------------
# Built the legacy way: Slurm's header, Slurm's library, no rpath.
slurm=$(resolved_libpmi "$b/swap")
if readelf -d "$b/swap" | grep -q 'NEEDED.*\[libpmi.so.0\]' &&
   ! readelf -d "$b/swap" | grep -qE 'RPATH|RUNPATH' &&
   [ -n "$slurm" ] && [ "$(readlink -f "$slurm")" != "$(readlink -f "$ours")" ]; then
    pass swap-built-against-slurm "NEEDED libpmi.so.0, no rpath, ldd: $slurm"
else
    fail swap-built-against-slurm "ldd without LD_LIBRARY_PATH gives '$slurm'"
fi
swapped=$(LD_LIBRARY_PATH=$lib resolved_libpmi "$b/swap")
if [ "$swapped" = "$ours" ]; then
    pass swap-ldd-shows-ours "$swapped"
else
    fail swap-ldd-shows-ours "LD_LIBRARY_PATH=$lib ldd gives '$swapped'"
fi
run swap-n4 0 --count 4 "8/8 business cards, libpmi.so.0 from $ours" -- \
    env LD_LIBRARY_PATH="$lib" "${L4[@]}" "$b/swap" "$ours"
if [ "$two" = 2 ]; then
    run swap-2nodes-n4 0 --count 4 "8/8 business cards, libpmi.so.0 from $ours" -- \
        env LD_LIBRARY_PATH="$lib" "${L4x[@]}" "$b/swap" "$ours"
fi
if [ "$K" = hydra4 ]; then
    launcher hydra4-port 4 2
    run swap-pmi-port-a2b2-n4 0 --count 4 "8/8 business cards, libpmi.so.0 from $ours" -- \
        env LD_LIBRARY_PATH="$lib" "${L[@]}" "$b/swap" "$ours"
fi
# Without the swap the same binary runs Slurm's library, which cannot work under Hydra:
# the test above measures the swap, not something else.
# (Under srun, Slurm's library works: it talks to Slurm itself; with -pmi-port, or under a
# PMIx launcher, it sees no PMI_FD and makes each process rank 0 of 1; under Flux, Flux's
# own library is loaded, and works. None is a control.)
# The ranks' lines are read from a file they append to (CHECK_REPORT): Hydra may end a failing job
# before it forwards what the ranks printed (a write error to a proxy that has exited:
# one make ci-stress run on c4300ce).
if [ "${K%-vc}" != srun ] && [ "${K%-vc}" != hydra4-port ] && [ "${K%-vc}" != flux ] &&
    ! check_backend_is pmix; then
    report_to no-swap-fails-with-slurm-lib
    run no-swap-fails-with-slurm-lib nonzero --expect "$REPORT" "libpmi.so.0 from $(readlink -f "$slurm")" -- \
        env CHECK_REPORT="$REPORT" "${L4[@]}" "$b/swap"
fi

# Under Flux the plain swap does not reach a task: the job shell puts the folder of Flux's
# own libpmi.so.0 first on each task's LD_LIBRARY_PATH (the launcher here takes it off
# again: scripts/flux-task). Without that, which library each way of asking loads.
if [ "${K%-vc}" = flux ]; then
    launcher "$K" 2 "$two"
    bare=("${L[@]:0:${#L[@]}-1}") # flux run, without scripts/flux-task
    fluxs=$(readlink -f "$FLUX_PREFIX/lib/flux/libpmi.so.0")
    # Flux's own client serves the job: these cases show which library, not whether.
    run flux-swap-loads-fluxs 0 --count 2 "4/4 business cards, libpmi.so.0 from $fluxs" -- \
        env LD_LIBRARY_PATH="$lib" "${bare[@]}" "$b/swap"
    run flux-env-ld-library-path-loads-fluxs 0 --count 2 "libpmi.so.0 from $fluxs" -- \
        "${bare[@]}" --env=LD_LIBRARY_PATH="$lib" "$b/swap"
    run flux-runpath-loads-fluxs 0 --count 2 "libpmi.so.0 from $fluxs" -- "${bare[@]}" "$b/swap-runpath"
    # The ways that load this library (each program fails unless PMI_Init came from it).
    run flux-ld-preload-loads-ours 0 --count 2 "4/4 business cards, libpmi.so.0 from $ours" -- \
        "${bare[@]}" --env=LD_PRELOAD="$ours" "$b/swap" "$ours"
    run flux-task-env-loads-ours 0 --count 2 "4/4 business cards, libpmi.so.0 from $ours" -- \
        "${bare[@]}" env LD_LIBRARY_PATH="$lib" "$b/swap" "$ours"
    run flux-rpath-loads-ours 0 --count 2 "4/4 business cards, libpmi.so.0 from $ours" -- \
        "${bare[@]}" "$b/swap-rpath" "$ours"
fi

# --- 2. dlopen("libpmi.so.0") -------------------------------------------------------------
run dlopen-finds-ours-and-34-symbols 0 --expect log "loaded $ours; dlsym found 34/34 functions" -- \
    env LD_LIBRARY_PATH="$lib" "$b/dlopen" "$here/symbols.txt" "$ours"
run dlopen-init-under-hydra 0 --count 2 "PMI_Init, PMI_Barrier and PMI_Finalize through dlsym" -- \
    env LD_LIBRARY_PATH="$lib" "${L2x[@]}" "$b/dlopen" "$here/symbols.txt" "$ours" --init
run dlopen-without-swap-is-not-ours 1 --expect log "loaded $(readlink -f "$slurm"), not $ours" -- \
    "$b/dlopen" "$here/symbols.txt" "$ours"

# --- 3. C++ through pkg-config, against the installed library -------------------------
if readelf -d "$b/app-cxx" | grep -q 'NEEDED.*\[libpmi.so.0\]'; then
    pass "cxx-needed-libpmi.so.0"
else
    fail cxx-needed-libpmi.so.0 "readelf -d $b/app-cxx has no NEEDED libpmi.so.0"
fi
run cxx-n2 0 --count 2 "cards" --expect log "rank 1 of 2: 4/4 cards" -- \
    env LD_LIBRARY_PATH="$prefix/lib" "${L2[@]}" "$b/app-cxx"

# --- 4. The man page (launcher-independent: once, in the default pass) ---------------------
if [ "$K" != hydra4 ]; then
    summary "dropin-tests ($K)"
    exit
fi
# Each page installed as it is, and silent under groff's and mandoc's warnings.
for page in man3/pmi.3 man3/pmi2.3 man1/pmi-probe.1; do
    name=${page#*/}
    case $name in pmi.3) id=man ;; pmi2.3) id=man2 ;; *) id=man-${name%.*} ;; esac
    if cmp -s "$here/docs/$name" "$prefix/share/man/$page"; then
        pass "$id-installed" "$prefix/share/man/$page"
    else
        fail "$id-installed" "no $prefix/share/man/$page identical to docs/$name"
    fi
    out=$(groff -t -man -ww -z "$here/docs/$name" 2>&1)
    if [ -z "$out" ]; then pass "man-groff-ww-clean-$name"; else fail "man-groff-ww-clean-$name" "$out"; fi
    if command -v mandoc >/dev/null; then
        out=$(mandoc -T lint -W warning "$here/docs/$name" 2>&1)
        if [ -z "$out" ]; then pass "man-mandoc-lint-clean-$name"; else fail "man-mandoc-lint-clean-$name" "$out"; fi
    fi
done
# Each function's own page name leads to its library's page.
missing=
for f in $(cat "$here/symbols.txt" "$here/symbols2.txt"); do
    case $f in PMI2_* | PMIX_*) want='PMI2_KVS_Fence' ;; *) want='PMI_KVS_Put' ;; esac
    MANPATH="$prefix/share/man" MANWIDTH=80 man 3 "$f" 2>/dev/null | grep -q "$want" ||
        missing="$missing $f"
done
if [ -z "$missing" ]; then
    pass man-function-pages "man 3 NAME finds its page for all $(cat "$here/symbols.txt" "$here/symbols2.txt" | wc -l) functions"
else
    fail man-function-pages "no page for:$missing"
fi
out=$(MANWIDTH=80 man --warnings -l "$prefix/share/man/man3/pmi.3" 2>&1 >"$logdir/man.txt")
if [ -z "$out" ] && grep -q 'PMI_KVS_Put' "$logdir/man.txt" &&
   [ "$(grep -c 'PMI_[A-Za-z_]*(' "$logdir/man.txt")" -ge 33 ]; then
    pass man-renders "man -l, no warnings"
else
    fail man-renders "${out:-rendering lacks the 33 functions}"
fi

summary "dropin-tests${K:+ ($K)}"
