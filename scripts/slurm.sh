#!/usr/bin/env bash
# A private one-node Slurm 22.05 (+ munge) for tests, run as root, entirely under DIR:
# config, munge key and socket, state, spool, logs and pid files. /etc/slurm and
# /etc/munge are never read or written; ports are picked free at start.
# Usage: scripts/slurm.sh start DIR   start munged, slurmctld, slurmd (no-op if running);
#                                      wait until the node is idle; print the exports
#        scripts/slurm.sh env DIR     print the exports (eval "$(scripts/slurm.sh env DIR)")
#        scripts/slurm.sh stop DIR    cancel jobs, stop the daemons, wait until gone
# The node claims CPUS CPUs (env, default 64; the partition oversubscribes), so up to
# that many tasks fit in one step. srun --mpi=pmi2 and --mpi=pmix both work; MpiDefault=none.
set -eu

die() { # die MESSAGE [LOG]: one line, then the log's tail, exit 1
    echo "slurm.sh: $1" >&2
    if [ -n "${2:-}" ] && [ -s "$2" ]; then tail -n 15 "$2" | sed 's/^/    | /' >&2; fi
    exit 1
}

[ $# = 2 ] || die "usage: $0 start|stop|env DIR"
cmd=$1
[ "$cmd" != start ] || mkdir -p "$2"
[ -d "$2" ] || die "no directory $2: run '$0 start $2' first"
dir=$(cd "$2" && pwd)
conf=$dir/slurm.conf
node=$(hostname -s)

# A daemon named in its pid file, and really that daemon (a pid can be reused).
alive() {
    [ -s "$dir/run/$1.pid" ] || return 1
    local pid
    pid=$(cat "$dir/run/$1.pid")
    kill -0 "$pid" 2>/dev/null && [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = "$1" ]
}

exports() { echo "export SLURM_CONF=$conf"; }

# Run a daemon with no fd of ours: stdin /dev/null, output to its log, fds >2 closed.
detach() {
    local out=$1 fd
    shift
    (
        for fd in /proc/self/fd/*; do
            fd=${fd##*/}
            [ "$fd" -gt 2 ] && eval "exec $fd>&-" 2>/dev/null
        done
        exec setsid "$@" </dev/null >>"$out" 2>&1
    ) || true
}

free_port() { # free_port FROM: the first port >= FROM nobody listens on
    local p=$1
    while ss -Htan "( sport = :$p )" | grep -q .; do p=$((p + 1)); done
    echo "$p"
}

write_conf() {
    local base ctld slurmd
    base=$((20000 + $(echo "$dir" | cksum | cut -d' ' -f1) % 20000))
    ctld=$(free_port "$base")
    slurmd=$(free_port $((ctld + 1)))
    cat >"$conf" <<EOF
# Written by scripts/slurm.sh for $dir
ClusterName=pmitest
SlurmctldHost=$node(127.0.0.1)
SlurmUser=root
SlurmdUser=root
SlurmctldPort=$ctld
SlurmdPort=$slurmd
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$dir/munge/munge.socket
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/run/slurmctld.pid
SlurmdPidFile=$dir/run/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SlurmdParameters=config_overrides
ReturnToService=2
MpiDefault=none
SchedulerType=sched/builtin
MailProg=/bin/true
KillWait=5
MinJobAge=10
NodeName=$node NodeAddr=127.0.0.1 CPUs=${CPUS:-64} State=UNKNOWN
PartitionName=debug Nodes=$node Default=YES MaxTime=INFINITE OverSubscribe=YES State=UP
EOF
}

start() {
    export SLURM_CONF=$conf
    mkdir -p "$dir"/{munge,state,spool,log,run}
    chmod 755 "$dir" "$dir/munge"
    if ! alive slurmctld || ! alive slurmd || ! alive munged; then
        stop_daemons
        [ -s "$dir/munge/munge.key" ] || mungekey -c -k "$dir/munge/munge.key" \
            || die "mungekey failed"
        detach "$dir/log/munged.out" munged --socket="$dir/munge/munge.socket" \
            --key-file="$dir/munge/munge.key" --pid-file="$dir/run/munged.pid" \
            --log-file="$dir/log/munged.log" --seed-file="$dir/munge/munged.seed"
        wait_for 10 "[ -S '$dir/munge/munge.socket' ]" || die "munged did not start" "$dir/log/munged.log"
        write_conf
        detach "$dir/log/slurmctld.out" slurmctld -c -f "$conf"
        wait_for 20 "scontrol ping >/dev/null 2>&1" || die "slurmctld did not start" "$dir/log/slurmctld.log"
        detach "$dir/log/slurmd.out" slurmd -f "$conf"
    fi
    local state="" i
    for i in $(seq 60); do
        state=$(sinfo -h -n "$node" -o %T 2>/dev/null || true)
        case $state in
        idle | mixed | allocated) exports; return 0 ;;
        down* | drain* | fail*) scontrol update nodename="$node" state=resume >/dev/null 2>&1 || true ;;
        esac
        alive slurmd || [ "$i" -lt 5 ] || die "slurmd is not running" "$dir/log/slurmd.log"
        sleep 1
    done
    die "node $node not idle after 60 s (state: ${state:-none})" "$dir/log/slurmd.log"
}

wait_for() { # wait_for SECONDS CONDITION
    local i
    for ((i = 0; i < $1 * 5; i++)); do eval "$2" && return 0; sleep 0.2; done
    return 1
}

stop_daemons() {
    local d pid
    for d in slurmd slurmctld munged; do
        alive "$d" || continue
        pid=$(cat "$dir/run/$d.pid")
        kill "$pid" 2>/dev/null || true
        wait_for 20 "! kill -0 $pid 2>/dev/null" || { kill -9 "$pid" 2>/dev/null || true; sleep 0.5; }
        kill -0 "$pid" 2>/dev/null && die "$d (pid $pid) would not stop"
        rm -f "$dir/run/$d.pid"
    done
}

stop() {
    export SLURM_CONF=$conf
    if alive slurmctld; then
        scancel --full --quiet --user=root 2>/dev/null || true
        wait_for 15 "[ -z \"\$(squeue -h 2>/dev/null)\" ]" || true
    fi
    stop_daemons
}

case $cmd in
start) start ;;
stop) stop ;;
env) [ -s "$conf" ] || die "no $conf: run '$0 start $dir' first"; exports ;;
*) die "unknown command '$cmd' (start|stop|env)" ;;
esac
