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
# With SLURM_VC=1 the Slurm spans the virtual cluster (scripts/cluster.sh, up): slurmctld
# on the bridge's address, one slurmd per host (vc1..vcN, NodeAddr its address), each
# with its own spool and PMIx client directory (the hosts' private CLUSTER_DIR/spool);
# jobs are started from a host (`scripts/cluster.sh exec vc1 srun ...`), as on a cluster.
set -eu

die() { # die MESSAGE [LOG]: one line, then the log's tail, exit 1
    echo "slurm.sh: $1" >&2
    if [ -n "${2:-}" ] && [ -s "$2" ]; then tail -n 15 "$2" | sed 's/^/    | /' >&2; fi
    exit 1
}

[ $# = 2 ] || die "usage: $0 start|stop|env DIR"
cmd=$1
[ ! -L "$2" ] || die "$2 is a symbolic link: refused"
[ "$cmd" != start ] || mkdir -p -m 755 "$2"
[ -d "$2" ] || die "no directory $2: run '$0 start $2' first"
# DIR holds the munge key the daemons (root) trust: a directory another user made first
# (the default is in /tmp) or may write to would hand them the key.
[ "$(stat -c %u "$2")" = "$(id -u)" ] ||
    die "$2 belongs to another user: refused (remove it, or choose another LIBPMI_SLURM_DIR)"
case $(stat -c %A "$2") in
    ?????w???? | ????????w?) die "$2 is writable by group or others: refused" ;;
esac
dir=$(cd "$2" && pwd)
conf=$dir/slurm.conf
node=$(hostname -s)
here=$(cd "$(dirname "$0")" && pwd)
vc_nodes=() # the virtual cluster's hosts, when SLURM_VC=1
if [ "${SLURM_VC:-0}" = 1 ] && [ "$cmd" != stop ]; then
    eval "$("$here/cluster.sh" env)" || die "SLURM_VC=1: the virtual cluster is down"
    read -r -a vc_addrs <<<"$CLUSTER_ADDRS"
    for i in $(seq "$CLUSTER_SIZE"); do vc_nodes+=("vc$i"); done
fi

# A daemon named in its pid file, and really that daemon (a pid can be reused).
alive() {
    [ -s "$dir/run/$1.pid" ] || return 1
    local pid
    pid=$(cat "$dir/run/$1.pid")
    kill -0 "$pid" 2>/dev/null && [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = "${1%%-*}" ]
}
all_alive() {
    local d
    for d in slurmctld $(slurmds) munged; do alive "$d" || return 1; done
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
    # Below the kernel's ephemeral range (32768 and up by default), so an outgoing
    # connection cannot take the port between the check and the daemon's bind.
    base=$((20000 + $(echo "$dir" | cksum | cut -d' ' -f1) % 12000))
    ctld=$(free_port "$base")
    slurmd=$(free_port $((ctld + 1)))
    local ctld_addr=127.0.0.1 spool=$dir/spool nodes i
    if [ ${#vc_nodes[@]} -gt 0 ]; then
        ctld_addr=${vc_addrs[0]%.*}.1 spool=$CLUSTER_DIR/spool
        # The pmix plugin's client directory, per host too (it expands no %n).
        echo "PMIxCliTmpDirBase=$CLUSTER_DIR/spool" >"$dir/mpi.conf"
    fi
    cat >"$conf" <<EOF
# Written by scripts/slurm.sh for $dir
ClusterName=pmitest
SlurmctldHost=$node($ctld_addr)
SlurmUser=root
SlurmdUser=root
SlurmctldPort=$ctld
SlurmdPort=$slurmd
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$dir/munge/munge.socket
StateSaveLocation=$dir/state
SlurmdSpoolDir=$spool
SlurmctldPidFile=$dir/run/slurmctld.pid
SlurmdPidFile=$dir/run/slurmd$([ ${#vc_nodes[@]} = 0 ] || echo -%n).pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd$([ ${#vc_nodes[@]} = 0 ] || echo -%n).log
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
EOF
    if [ ${#vc_nodes[@]} = 0 ]; then
        echo "NodeName=$node NodeAddr=127.0.0.1 CPUs=${CPUS:-64} State=UNKNOWN" >>"$conf"
        nodes=$node
    else
        for i in "${!vc_nodes[@]}"; do
            echo "NodeName=${vc_nodes[i]} NodeAddr=${vc_addrs[i]} CPUs=${CPUS:-64} State=UNKNOWN" >>"$conf"
        done
        nodes=$(IFS=,; echo "${vc_nodes[*]}")
    fi
    echo "PartitionName=debug Nodes=$nodes Default=YES MaxTime=INFINITE OverSubscribe=YES State=UP" >>"$conf"
}

# The slurmd daemons: "slurmd" here, or one "slurmd-vcI" per host of the virtual cluster.
# (To stop them, the pid files say which there are.)
slurmds() {
    if [ ${#vc_nodes[@]} -gt 0 ]; then
        printf 'slurmd-%s\n' "${vc_nodes[@]}"
    elif compgen -G "$dir/run/slurmd-*.pid" >/dev/null; then
        for f in "$dir"/run/slurmd-*.pid; do f=${f##*/}; echo "${f%.pid}"; done
    else
        echo slurmd
    fi
}
start_slurmds() {
    local n
    if [ ${#vc_nodes[@]} = 0 ]; then
        detach "$dir/log/slurmd.out" slurmd -f "$conf"
        return
    fi
    for n in "${vc_nodes[@]}"; do
        detach "$dir/log/slurmd-$n.out" "$here/cluster.sh" exec "$n" slurmd -f "$conf" -N "$n"
    done
}

start() {
    export SLURM_CONF=$conf
    [ ! -L "$dir/munge" ] || die "$dir/munge is a symbolic link: refused"
    mkdir -p "$dir"/{munge,state,spool,log,run}
    chmod 755 "$dir" "$dir/munge"
    if ! all_alive; then
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
        start_slurmds
    fi
    local state="" i n d idle nodes=("$node")
    [ ${#vc_nodes[@]} = 0 ] || nodes=("${vc_nodes[@]}")
    for i in $(seq 60); do
        idle=0
        for n in "${nodes[@]}"; do
            state=$(sinfo -h -n "$n" -o %T 2>/dev/null || true)
            case $state in
            idle | mixed | allocated) idle=$((idle + 1)) ;;
            down* | drain* | fail*) scontrol update nodename="$n" state=resume >/dev/null 2>&1 || true ;;
            esac
        done
        [ "$idle" != ${#nodes[@]} ] || { exports; return 0; }
        for d in $(slurmds); do
            alive "$d" || [ "$i" -lt 5 ] || die "$d is not running" "$dir/log/$d.log"
        done
        sleep 1
    done
    die "nodes ${nodes[*]} not idle after 60 s (last state: ${state:-none})" "$dir/log/slurmctld.log"
}

wait_for() { # wait_for SECONDS CONDITION
    local i
    for ((i = 0; i < $1 * 5; i++)); do eval "$2" && return 0; sleep 0.2; done
    return 1
}

stop_daemons() {
    local d pid
    for d in $(slurmds) slurmctld munged; do
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
