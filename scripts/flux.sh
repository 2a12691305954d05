#!/usr/bin/env bash
# A private Flux instance for the tests, kept running between their jobs, its files under
# DIR. Flux is not built here: FLUX_PREFIX names the folder an installed flux-core lives
# in (FLUX_PREFIX/bin/flux; the site installs it, docs/FLUX.md).
#
#   scripts/flux.sh start DIR   on this host, a test instance of FLUX_BROKERS brokers
#                               (default 2: flux start --test-size), each broker a node of
#                               the jobs; print the exports (FLUX_TEST_URI). A no-op when
#                               it runs already.
#   FLUX_VC=1 scripts/flux.sh start DIR
#                               across the virtual cluster (scripts/cluster.sh, up): one
#                               broker per host, bootstrapped from DIR/conf/system.toml over
#                               the hosts' addresses, with a CURVE certificate of its own;
#                               print the exports (FLUX_VC_URI, the first host's broker;
#                               jobs are started from that host, as on a cluster)
#   [FLUX_VC=1] scripts/flux.sh env DIR    the exports again
#   scripts/flux.sh stop DIR    flux shutdown, then the brokers still there (their pids)
set -euo pipefail

die() { # die MESSAGE [LOG]: one line, then the log's tail, exit 1
    echo "flux.sh: $1" >&2
    if [ -n "${2:-}" ] && [ -s "$2" ]; then tail -n 15 "$2" | sed 's/^/    | /' >&2; fi
    exit 1
}
[ $# = 2 ] || die "usage: $0 start|stop|env DIR"
cmd=$1
here=$(cd "$(dirname "$0")" && pwd)
[ "$cmd" != start ] || mkdir -p -m 755 "$2"
[ -d "$2" ] || die "no directory $2: run '$0 start $2' first"
dir=$(cd "$2" && pwd)
# (Without it, stop still ends the brokers, by their pids.)
flux=${FLUX_PREFIX:+$FLUX_PREFIX/bin/flux}
[ "$cmd" = stop ] || [ -n "$flux" ] || die "FLUX_PREFIX is not set: the prefix of an installed flux-core"
[ -z "$flux" ] || [ -x "$flux" ] || die "no $flux (FLUX_PREFIX=$FLUX_PREFIX)"
vc=${FLUX_VC:-0}
var=FLUX_TEST_URI
[ "$vc" = 0 ] || var=FLUX_VC_URI

# The URI of the first broker: its socket in its run directory.
uri() {
    local sock
    if [ "$vc" = 0 ]; then sock=$dir/run/local-0; else sock=$dir/vc1/local-0; fi
    echo "local://$sock"
}
exports() { echo "export $var=$(uri)"; }
# Whether the instance answers, with every broker up.
up() {
    local want status
    want=${FLUX_BROKERS:-2}
    [ "$vc" = 0 ] || want=$CLUSTER_SIZE
    status=$(FLUX_URI=$(uri) timeout 10 "$flux" overlay status --summary 2>/dev/null) || return 1
    [ "$status" = full ] &&
        [ "$(FLUX_URI=$(uri) timeout 10 "$flux" getattr size 2>/dev/null)" = "$want" ]
}
# The brokers' pids, each from its own socket, into DIR/pids (stop's last resort).
record_pids() {
    local sock
    : >"$dir/pids"
    for sock in "$dir"/run/local-* "$dir"/vc*/local-*; do
        [ -S "$sock" ] || continue
        FLUX_URI=local://$sock timeout 10 "$flux" getattr broker.pid >>"$dir/pids" 2>/dev/null || true
    done
}

case $cmd in
    env) exports ;;
    start)
        if [ "$vc" != 0 ]; then
            eval "$("$here/cluster.sh" env)" || die "FLUX_VC=1: the virtual cluster is down"
        fi
        if up; then
            exports
            exit 0
        fi
        "$0" stop "$dir" >/dev/null 2>&1 || true
        if [ "$vc" = 0 ]; then
            rm -rf "$dir/run"
            mkdir -p "$dir/run"
            # The instance lives as long as its initial program; no fd of the caller's is
            # kept (a daemon holding a pipe open would hold up whatever started it).
            setsid "$flux" start --test-size="${FLUX_BROKERS:-2}" --test-rundir="$dir/run" \
                sleep infinity </dev/null >"$dir/start.log" 2>&1 &
        else
            read -r -a addrs <<<"$CLUSTER_ADDRS"
            mkdir -p "$dir/conf"
            [ -s "$dir/curve.cert" ] || "$flux" keygen "$dir/curve.cert" >/dev/null
            {
                echo "[bootstrap]"
                echo "curve_cert = \"$dir/curve.cert\""
                echo "hosts = ["
                for i in $(seq "$CLUSTER_SIZE"); do
                    a=tcp://${addrs[$((i - 1))]}:8050
                    echo "  { host = \"vc$i\", bind = \"$a\", connect = \"$a\" },"
                done
                echo "]"
            } >"$dir/conf/system.toml"
            # Each broker finds its rank by its host's name; the first one runs no initial
            # program (the instance lives until flux shutdown).
            for i in $(seq "$CLUSTER_SIZE" -1 1); do
                rm -rf "$dir/vc$i"
                mkdir -p "$dir/vc$i"
                setsid "$here/cluster.sh" exec "vc$i" "$flux" broker --config-path="$dir/conf" \
                    -Srundir="$dir/vc$i" -Sbroker.rc2_none=1 </dev/null >"$dir/vc$i.log" 2>&1 &
            done
        fi
        for _ in $(seq 120); do
            ! up || break
            sleep 0.5
        done
        up || die "the instance did not come up in 60 s" "$dir/$([ "$vc" = 0 ] && echo start || echo vc1).log"
        record_pids
        exports
        ;;
    stop)
        # (Whichever instance DIR holds.)
        for sock in "$dir/run/local-0" "$dir/vc1/local-0"; do
            [ -z "$flux" ] || [ ! -S "$sock" ] ||
                FLUX_URI=local://$sock timeout 60 "$flux" shutdown --quiet >/dev/null 2>&1 || true
        done
        # What did not go: each broker by its pid, if it is still a broker.
        rc=0
        for pid in $(cat "$dir/pids" 2>/dev/null); do
            for _ in $(seq 20); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
            if kill -0 "$pid" 2>/dev/null && grep -qa broker "/proc/$pid/cmdline" 2>/dev/null; then
                kill -KILL "$pid" 2>/dev/null || rc=1
            fi
        done
        rm -f "$dir/pids"
        exit $rc
        ;;
    *) die "usage: $0 start|stop|env DIR" ;;
esac
