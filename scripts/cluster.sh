#!/usr/bin/env bash
# A virtual cluster on this machine, for tests across real hosts (as root). A host is a
# network namespace (its own interfaces and addresses) plus a UTS namespace (its own
# hostname) plus a mount namespace (its own /etc/hosts and spool), joined to a bridge by
# a veth pair. Entering one with nsenter is an ssh without a daemon.
#
#   scripts/cluster.sh up N      hosts vc1..vcN (idempotent: an existing cluster of N is
#                                kept, one of another size is taken down first)
#   scripts/cluster.sh down      kill every process in the hosts, remove all it made
#   scripts/cluster.sh status    the hosts, their addresses and processes
#   scripts/cluster.sh exec HOST COMMAND...   run COMMAND on HOST (vcI or its address)
#   scripts/cluster.sh env       the shell exports the harness reads (CLUSTER_*)
#
# scripts/cluster-ssh is the same exec in ssh's shape (`cluster-ssh [-x] HOST CMD...`), for
# Hydra's -bootstrap-exec and PRRTE's plm_ssh_agent. Only the hosts' own addresses
# (CLUSTER_NET, a /24 on the bridge) carry traffic: the hosts have no route elsewhere and
# the bridge forwards nothing out. Everything lives under CLUSTER_DIR
# (default /run/libpmi-cluster) and is named with the prefix libpmi-/lpvc; `down` removes it
# by those names and by the pids in the namespaces, also after a failed run.
set -euo pipefail

CLUSTER_DIR=${CLUSTER_DIR:-/run/libpmi-cluster}
CLUSTER_NET=${CLUSTER_NET:-10.213.77}
BRIDGE=libpmi-br0
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

die() { echo "cluster.sh: $*" >&2; exit 1; }
need_root() { [ "$(id -u)" = 0 ] || die "needs root (network namespaces)"; }

size() { cat "$CLUSTER_DIR/size" 2>/dev/null || echo 0; }
addr_of() { echo "$CLUSTER_NET.$((10 + $1))"; } # host number -> address

# HOST (vcI, its address, or I) -> I
host_index() {
    local h=$1 n
    n=$(size)
    case $h in
        vc[0-9]*) h=${h#vc} ;;
        "$CLUSTER_NET".*) h=$((${h##*.} - 10)) ;;
    esac
    [[ $h =~ ^[0-9]+$ ]] && [ "$h" -ge 1 ] && [ "$h" -le "$n" ] || die "no host '$1' in the cluster (size $n)"
    echo "$h"
}

enter() { # enter I COMMAND...: run COMMAND in host I's namespaces, in this directory
    local i=$1 ns=$CLUSTER_DIR/ns
    shift
    exec nsenter --net="/run/netns/libpmi-vc$i" --uts="$ns/vc$i.uts" --mount="$ns/vc$i.mnt" \
        --wd="$PWD" -- "$@"
}

down() {
    local i n pid
    n=$(size)
    # Processes first (in any of our network namespaces), then the namespaces themselves.
    for ns in $(ip netns list 2>/dev/null | awk '$1 ~ /^libpmi-vc[0-9]+$/ {print $1}'); do
        for pid in $(ip netns pids "$ns" 2>/dev/null); do kill -TERM "$pid" 2>/dev/null || true; done
    done
    sleep 0.2
    for ns in $(ip netns list 2>/dev/null | awk '$1 ~ /^libpmi-vc[0-9]+$/ {print $1}'); do
        for pid in $(ip netns pids "$ns" 2>/dev/null); do kill -KILL "$pid" 2>/dev/null || true; done
        ip netns del "$ns" 2>/dev/null || true
    done
    for link in $(ip -o link show 2>/dev/null | awk -F': ' '{print $2}' | sed 's/@.*//' | grep -E '^lpvc[0-9]+$'); do
        ip link del "$link" 2>/dev/null || true
    done
    ip link del "$BRIDGE" 2>/dev/null || true
    if [ -d "$CLUSTER_DIR/ns" ]; then
        for f in "$CLUSTER_DIR"/ns/*; do umount "$f" 2>/dev/null || true; done
        umount "$CLUSTER_DIR/ns" 2>/dev/null || true
    fi
    rm -rf "$CLUSTER_DIR"
    [ "$n" = 0 ] || echo "cluster: down ($n hosts)" >&2
}

up() {
    local n=$1 i a
    [[ $n =~ ^[0-9]+$ ]] && [ "$n" -ge 1 ] && [ "$n" -le 8 ] || die "up N: 1 to 8 hosts"
    "$here/ensure-deps.sh" iproute >&2
    if [ "$(size)" = "$n" ] && ip link show "$BRIDGE" >/dev/null 2>&1; then
        local ok=yes
        for i in $(seq "$n"); do [ -e "/run/netns/libpmi-vc$i" ] || ok=no; done
        [ $ok = no ] || return 0
    fi
    down
    # A failure half-way leaves nothing behind.
    trap 'echo "cluster.sh: up failed; taking down what was made" >&2; down' ERR
    mkdir -p "$CLUSTER_DIR/ns"
    # Persistent UTS and mount namespaces are files bind-mounted on a private mount.
    mount --bind "$CLUSTER_DIR/ns" "$CLUSTER_DIR/ns"
    mount --make-private "$CLUSTER_DIR/ns"
    ip link add "$BRIDGE" type bridge
    ip addr add "$CLUSTER_NET.1/24" dev "$BRIDGE"
    ip link set "$BRIDGE" up
    {
        echo "127.0.0.1 localhost"
        for i in $(seq "$n"); do echo "$(addr_of "$i") vc$i"; done
    } >"$CLUSTER_DIR/hosts"
    for i in $(seq "$n"); do
        a=$(addr_of "$i")
        ip netns add "libpmi-vc$i"
        # Inside, the interface has the bridge's name: -iface names one interface for
        # mpiexec and for its proxies (Hydra's -pmi-port listens on it too).
        ip link add "lpvc$i" type veth peer name "$BRIDGE" netns "libpmi-vc$i"
        ip link set "lpvc$i" master "$BRIDGE" up
        ip -n "libpmi-vc$i" link set lo up
        ip -n "libpmi-vc$i" addr add "$a/24" dev "$BRIDGE"
        ip -n "libpmi-vc$i" link set "$BRIDGE" up
        mkdir -p "$CLUSTER_DIR/host/vc$i/spool"
        touch "$CLUSTER_DIR/ns/vc$i.uts" "$CLUSTER_DIR/ns/vc$i.mnt"
        # The host's own name, /etc/hosts naming every host, and its own spool directory
        # at the one path $CLUSTER_DIR/spool.
        mkdir -p "$CLUSTER_DIR/spool"
        unshare --uts="$CLUSTER_DIR/ns/vc$i.uts" --mount="$CLUSTER_DIR/ns/vc$i.mnt" \
            --propagation private sh -c "hostname vc$i &&
                mount --bind '$CLUSTER_DIR/hosts' /etc/hosts &&
                mount --bind '$CLUSTER_DIR/host/vc$i/spool' '$CLUSTER_DIR/spool'"
    done
    echo "$n" >"$CLUSTER_DIR/size"
    trap - ERR
    echo "cluster: up, $n hosts: $(for i in $(seq "$n"); do printf 'vc%d=%s ' "$i" "$(addr_of "$i")"; done)" >&2
}

case ${1:-} in
    up) need_root; up "${2:?up N}" ;;
    down) need_root; down ;;
    status)
        n=$(size)
        [ "$n" != 0 ] || { echo "cluster: down"; exit 0; }
        for i in $(seq "$n"); do
            echo "vc$i $(addr_of "$i") pids: $(ip netns pids "libpmi-vc$i" 2>/dev/null | tr '\n' ' ')"
        done
        ;;
    exec)
        [ $# -ge 3 ] || die "exec HOST COMMAND..."
        i=$(host_index "$2")
        shift 2
        enter "$i" "$@"
        ;;
    env)
        n=$(size)
        [ "$n" != 0 ] || die "the cluster is down (scripts/cluster.sh up N)"
        echo "export CLUSTER_SIZE=$n CLUSTER_BRIDGE=$BRIDGE CLUSTER_SSH=$here/cluster-ssh CLUSTER_DIR=$CLUSTER_DIR"
        echo "export CLUSTER_ADDRS='$(for i in $(seq "$n"); do printf '%s ' "$(addr_of "$i")"; done | sed 's/ $//')'"
        ;;
    *) sed -n '2,20s/^# \{0,1\}//p' "${BASH_SOURCE[0]}" >&2; exit 2 ;;
esac
