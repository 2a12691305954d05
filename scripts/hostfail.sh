#!/usr/bin/env bash
# Hosts that fail mid-job: under LAUNCHER (a KIND-vc of scripts/harness.sh), across two
# hosts of the virtual cluster (4 ranks by blocks: 0 and 1 on vc1, 2 and 3 on vc2), every
# rank but the last waits in a call the last rank keeps from ending (c-tests/hostfail.c),
# then a fault strikes, and the runner watches what becomes of the job. A Hydra without
# -vc runs the same on two simulated nodes of this host (no link to cut there):
#
#   scripts/hostfail.sh BINDIR LIBDIR
#
# Faults: link (vc2's veth goes down), proxy (the launcher's process that started rank 3,
# on vc2, is killed: hydra_pmi_proxy, slurmstepd, prted), launcher (mpiexec, srun or
# prterun is killed). Each by SIGKILL, as a crash.
# HOSTFAIL_CASES lists FAULT:CALL:API (CALL barrier or get, API pmi1 or pmi2); default
# every fault with a barrier and the link with a get, for both APIs (PMI-2 only where
# the launcher serves it). PMI_TIMEOUT is HOSTFAIL_PMI_TIMEOUT (default 5; empty:
# unset), and the runner watches for at most HOSTFAIL_BOUND seconds after the fault
# (default PMI_TIMEOUT + 20, or 60 unset).
#
# A case passes when, with PMI_TIMEOUT set, every rank on vc1 (ranks 0 and 1) has ended within
# PMI_TIMEOUT + 5 s of the fault (killed by the launcher, or its call failed and it
# exited), each whose call failed said in one line of the library's which server it lost,
# the launcher has ended, and no process of the job is left on either host. Unset, a
# case is a measurement (FAIL when a rank still waits at the bound: that is a finding).
# Each verdict is recorded as suite hostfail (HARNESS_RESULTS) with what happened as its
# detail; whatever is left is then ended (by pid) and the link brought back up. Logs go
# to HOSTFAIL_LOGS (default $TMPDIR/libpmi-hostfail-logs), a directory a case.
set -u
b=$(cd "$1" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
HARNESS_SUITE=hostfail
source "$here/harness.sh" "${HOSTFAIL_LOGS:-${TMPDIR:-/tmp}/libpmi-hostfail-logs}" "$2"
K=$LAUNCHER
case $K in
    *-vc | hydra4 | hydra4-port | hydra5 | impi) ;;
    *) echo "hostfail: LAUNCHER must have two hosts (KIND-vc) or simulate two nodes (a Hydra), not '$K'" >&2; exit 2 ;;
esac
source "$here/launchers.sh" expect "$K"
T=${HOSTFAIL_PMI_TIMEOUT-5}
bound=${HOSTFAIL_BOUND:-$([ -n "$T" ] && echo $((T + 20)) || echo 60)}
cases=${HOSTFAIL_CASES:-link:barrier:pmi1 proxy:barrier:pmi1 launcher:barrier:pmi1 link:get:pmi1
    link:barrier:pmi2 proxy:barrier:pmi2 launcher:barrier:pmi2 link:get:pmi2}

now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }
comm_of() { cat "/proc/$1/comm" 2>/dev/null; }
# PID and its descendants.
tree_of() { # PID
    local all=" $1 " more=1 pid ppid
    while [ -n "$more" ]; do
        more=
        while read -r pid ppid; do
            case $all in *" $ppid "*) case $all in *" $pid "*) ;; *) all+="$pid " more=1 ;; esac ;; esac
        done < <(ps -e -o pid=,ppid=)
    done
    echo "$all"
}
# The launcher's own process (mpiexec, srun, prterun) in the tree of PID.
launcher_pid() { # PID
    local p
    for p in $(tree_of "$1"); do
        comm_of "$p" | grep -qE '^(mpiexec\.hydra|mpiexec|srun|prterun)$' && { echo "$p"; return; }
    done
}
# The job's processes: each rank's (from its .wait file; ranks[R] its pid), the
# launcher's processes that started them (their parents, at the start), with the host
# each is on: "PID NAME HOST".
job=() ranks=()
job_of() { # DIR
    local r pid host parent
    job=() ranks=()
    for r in 0 1 2 3; do
        read -r pid host <<<"$(sed -n 's/.* on \([^ ]*\) pid \([0-9]*\) since .*/\2 \1/p' "$1/rank-$r.wait")"
        ranks+=("$pid")
        job+=("$pid rank-$r $host")
        parent=$(awk '{print $4}' "/proc/$pid/stat" 2>/dev/null)
        [ -z "$parent" ] || [[ " ${job[*]} " == *" $parent "* ]] || job+=("$parent $(comm_of "$parent") $host")
    done
}
# What of the job is left: "NAME on HOST", a process.
leftovers() {
    local j pid what host out=""
    for j in "${job[@]}"; do
        read -r pid what host <<<"$j"
        alive "$pid" && out+="${out:+, }${what/rank-/rank } on $host"
    done
    echo "$out"
}
alive() { [ -n "$1" ] && kill -0 "$1" 2>/dev/null && [ "$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null)" != Z ]; }

# Bring everything back: the link up, every process of the job ended (by pid), Slurm's
# job cancelled and its nodes idle again.
restore() { # LAUNCHER_BACKGROUND_PID
    local i p j
    if launcher_is_vc "$K"; then
        # Up again, and until vc2 reaches the bridge's address again (a connection refused
        # there, not "No route to host": its neighbour entry failed while the link was
        # down), at most 30 s.
        ip link set lpvc2 up 2>/dev/null
        for ((i = 0; i < 60; i++)); do
            ip netns exec libpmi-vc2 bash -c "exec 3<>/dev/tcp/${CLUSTER_NET:-10.213.77}.1/1" 2>&1 |
                grep -q refused && break
            sleep 0.5
        done
    fi
    for p in $(tree_of "$1"); do [ "$p" = "$1" ] || kill -KILL "$p" 2>/dev/null; done
    for j in "${job[@]}"; do kill -KILL "${j%% *}" 2>/dev/null; done
    wait "$1" 2>/dev/null
    case $K in srun-vc | srun-pmix-vc)
        local slurm=("$here/cluster.sh" exec vc1 env SLURM_CONF="$SLURM_VC_CONF")
        "${slurm[@]}" squeue -h -o %i | xargs -r "${slurm[@]}" scancel
        for ((i = 0; i < 60; i++)); do
            [ -z "$("${slurm[@]}" sinfo -h -N -o '%N %T' | grep -v ' idle$')" ] && break
            # (A node that did not answer while its link was down is marked down.)
            "${slurm[@]}" sinfo -h -N -o '%N %T' | grep -q '^vc2 down' &&
                "${slurm[@]}" scontrol update nodename=vc2 state=resume 2>/dev/null
            sleep 1
        done
        ;;
    esac
}

run_case() { # FAULT CALL API
    local fault=$1 call=$2 api=$3 prog=hostfail
    [ "$api" = pmi1 ] || prog=pmi2_hostfail
    local name=hostfail-$fault-$call-$api d=$logdir/hostfail-$fault-$call-$api
    rm -rf "$d" && mkdir -p "$d"
    launcher "$K" 4 2
    job=() ranks=()
    # (In a subshell that records its status: a job killed by a signal is not reported.)
    (
        env ${T:+PMI_TIMEOUT=$T} "${L[@]}" "$b/$prog" "$call" "$d" >"$d/launcher.log" 2>&1
        echo $? >"$d/launcher.status"
    ) 2>/dev/null &
    local bg=$! i
    for ((i = 0; i < 240; i++)); do
        [ "$(ls "$d"/rank-*.wait 2>/dev/null | wc -l)" = 4 ] && break
        alive "$bg" || break
        sleep 0.25
    done
    if [ "$(ls "$d"/rank-*.wait 2>/dev/null | wc -l)" != 4 ]; then
        fail "$name" "the job did not start: $(tail -n 3 "$d/launcher.log" | tr '\n' ' ')"
        restore "$bg"
        return
    fi
    sleep 1 # (every waiting rank is in its call)
    local r pids=() lpid server
    job_of "$d"
    pids=("${ranks[0]}" "${ranks[1]}")
    lpid=$(launcher_pid "$bg")
    server=$(awk '{print $4}' "/proc/${ranks[3]}/stat" 2>/dev/null)
    local t0 victims=""
    t0=$(now)
    case $fault in
        link) ip link set lpvc2 down ;;
        proxy)
            victims=$(comm_of "$server")
            [[ $victims =~ ^(hydra_pmi_proxy|pmi_proxy|slurmstepd|prted)$ ]] ||
                { fail "$name" "rank 3's parent is '$victims', not a launcher's process"; restore "$bg"; return; }
            kill -KILL "$server"
            ;;
        launcher)
            [ -n "$lpid" ] || { fail "$name" "no launcher's process found"; restore "$bg"; return; }
            kill -KILL "$lpid"
            ;;
    esac
    # Watch: when the ranks on vc1 end, and the launcher.
    local ranks_end="" launcher_end="" status=""
    while [ "$(since "$t0" | cut -d. -f1)" -lt "$bound" ]; do
        if [ -z "$ranks_end" ] && ! alive "${pids[0]}" && ! alive "${pids[1]}"; then ranks_end=$(since "$t0"); fi
        if [ -z "$launcher_end" ] && ! alive "$bg"; then
            launcher_end=$(since "$t0")
            wait "$bg"
            status=$(cat "$d/launcher.status" 2>/dev/null)
        fi
        [ -n "$ranks_end" ] && [ -n "$launcher_end" ] && break
        sleep 0.2
    done
    [ -n "$launcher_end" ] && sleep 3 # (what the launcher's end takes with it)
    local left
    left=$(leftovers)
    # What each rank on vc1 did, and said.
    local said="" why="" line n
    for r in 0 1; do
        if [ -s "$d/rank-$r.txt" ]; then
            n=$(grep -ac '^libpmi' "$d/rank-$r.err" 2>/dev/null)
            line=$(grep -a -m 1 '^libpmi' "$d/rank-$r.err" 2>/dev/null)
            said+="; rank $r: $(sed 's/.*: \([A-Z0-9_a-z]* returned -\{0,1\}[0-9]*\) at.*/\1/' "$d/rank-$r.txt")${line:+, \"$line\"}"
            [ "$n" = 1 ] || why+="; rank $r said $n lines of the library's"
            echo "$line" | grep -qE 'PMI_FD [0-9]|PMI_PORT |PMIx server ' || why+="; rank $r's line names no server"
        elif alive "${pids[r]}"; then
            said+="; rank $r still waiting at $bound s"
        else
            said+="; rank $r killed"
        fi
    done
    local detail
    if [ -n "$ranks_end" ]; then detail="ranks 0, 1 ended at $ranks_end s"; else detail="ranks 0, 1 not ended at $bound s"; fi
    if [ -n "$launcher_end" ]; then detail+=", launcher exit $status at $launcher_end s"; else detail+=", launcher still running at $bound s"; fi
    detail+=", left: ${left:-none}$said"
    if [ -n "$T" ]; then
        [ -n "$ranks_end" ] && awk -v e="$ranks_end" -v t="$T" 'BEGIN { exit !(e <= t + 5) }' ||
            why+="; rank 0 or 1 waited past PMI_TIMEOUT ($T s) + 5 s"
    else
        [ -n "$ranks_end" ] || why+="; rank 0 or 1 still waits at $bound s"
    fi
    [ -n "$launcher_end" ] || why+="; the launcher still runs at $bound s"
    [ -z "$launcher_end" ] || [ -z "$left" ] || why+="; processes left after the launcher ended"
    echo "$detail" >"$d/detail"
    if [ -z "$why" ]; then
        pass "$name" "$detail"
    else
        # (The detail is the table's cell: what happened; the why is printed.)
        failed=$((failed + 1))
        echo "FAIL $name (${why#; }): $detail"
        record FAIL "$name" "$detail"
    fi
    restore "$bg"
}

for c in $cases; do
    IFS=: read -r fault call api <<<"$c"
    case $api in pmi2) case " $UNSUPPORTED " in *" pmi2-validation "*) continue ;; esac ;; esac
    [ "$fault" != link ] || launcher_is_vc "$K" || continue
    run_case "$fault" "$call" "$api"
done
summary "hostfail ($K, PMI_TIMEOUT=${T:-unset})"
