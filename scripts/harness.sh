# The one test harness, sourced by every runner (c-tests, memcheck, drop-in, MPI programs,
# the conformance kit, the benchmarks): a clean environment, the launchers, running a case
# with a timeout, its verdict, and which libpmi.so.0 a binary loads.
#
#   source scripts/harness.sh LOGDIR [LIBDIR]
#
# LIBDIR, when given, is put first on LD_LIBRARY_PATH (the library under test).
# Counters: passed, failed. A results file (HARNESS_RESULTS, optional) gets one line per
# verdict, "SUITE<TAB>LAUNCHER<TAB>CASE<TAB>PASS|FAIL<TAB>detail", for `make compat`.
set -u
harness_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
logdir=$(mkdir -p "$1" && cd "$1" && pwd)
libdir=""
if [ $# -ge 2 ] && [ -n "$2" ]; then
    libdir=$(cd "$2" && pwd)
    export LD_LIBRARY_PATH=$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
fi
# A launcher sets these for its processes; stale ones from a calling job must not leak
# into the tests: every variable the library reads (scripts/library-variables.sh lists
# them from the core's own table; a prefix, ending in `_`, is no name), and the tests'
# own CHECK_DEVIATIONS.
read -r -a library_variables < <("$harness_root/scripts/library-variables.sh" | grep -v '_$' | tr '\n' ' ')
[ "${#library_variables[@]}" -ge 10 ] || { echo "harness: scripts/library-variables.sh listed too few variables" >&2; exit 1; }
unset "${library_variables[@]}" CHECK_DEVIATIONS
passed=0
failed=0
retried=0
HARNESS_SUITE=${HARNESS_SUITE:-tests}
HARNESS_TIMEOUT=${HARNESS_TIMEOUT:-120}
LAUNCHER=${LAUNCHER:-hydra4}

# --- verdicts -----------------------------------------------------------------------------
record() { # VERDICT NAME DETAIL
    [ -n "${HARNESS_RESULTS:-}" ] &&
        printf '%s\t%s\t%s\t%s\t%s\n' "$HARNESS_SUITE" "$LAUNCHER" "$2" "$1" "$3" >>"$HARNESS_RESULTS"
    return 0
}
pass() { # NAME [DETAIL]
    passed=$((passed + 1))
    echo "PASS $1${2:+ ($2)}"
    record PASS "$1" "${2:-}"
}
fail() { # NAME WHY [LOG]
    failed=$((failed + 1))
    echo "FAIL $1 ($2)"
    [ -n "${3:-}" ] && [ -f "$3" ] && sed 's/^/    | /' "$3" | tail -n 30
    record FAIL "$1" "$2"
}
# The closing line every runner prints, and its exit status. Retries (below) are counted
# in it: "LABEL: N passed, N failed, N retried".
summary() { # LABEL
    echo "$1: $passed passed, $failed failed$([ "$retried" = 0 ] || echo ", $retried retried")"
    [ "$failed" = 0 ]
}

# Known server flakes, set by `launchers.sh expect` for the launcher: FLAKES is a list of
# "ID|TEXT|RATE", a failure of the server's own that shows TEXT in a case's output, at the
# RATE measured (docs/CI.md). A case that fails showing TEXT is run once more; each
# retry is printed with its cause and counted; a second failure is the case's verdict.
# Nothing else is retried: a failure without a known flake's text is a FAIL.
FLAKES=()
flake_in() { # LOG: prints "ID (RATE)" of the first known flake LOG shows
    local f id text rate
    for f in "${FLAKES[@]}"; do
        IFS='|' read -r id text rate <<<"$f"
        if grep -qaF -- "$text" "$1" 2>/dev/null; then
            echo "$id ($rate)"
            return 0
        fi
    done
    return 1
}

# run NAME STATUS [CHECK]... -- COMMAND...
#   CHECK is --expect FILE TEXT, --absent FILE TEXT, --count N TEXT (in the output), or
#   --show FILE TEXT (as --expect, and the first line holding TEXT is the case's detail),
#   or --deviation ID TEXT (TEXT in the output shows the server deviation ID: the case is
#   recorded as DEV ID rather than PASS; if the server stops deviating, it FAILs);
#   FILE may be "log": the command's own output (stdout and stderr).
# The verdict: COMMAND exits with STATUS ("nonzero" for any failure, "any" for whatever
# it exits with; a timeout is never a pass) and every check holds. A failure that shows a known server flake (FLAKES) is
# run once more.
run() {
    local name=$1 want=$2 log=$logdir/$1.log
    shift 2
    local checks=()
    while [ "$1" != -- ]; do checks+=("$1" "$2" "$3"); shift 3; done
    shift
    local why detail deviation flake="" again=""
    attempt "$@"
    if [ -n "$why" ] && flake=$(flake_in "$log"); then
        retried=$((retried + 1))
        again=" after a retry (server flake $flake)"
        echo "RETRY $name: server flake $flake; the first run: $why"
        sed 's/^/    | /' "$log" | tail -n 10
        cp "$log" "$log.first"
        attempt "$@"
    fi
    if [ -z "$why" ] && [ -n "$deviation" ]; then
        passed=$((passed + 1))
        echo "DEV  $name ($deviation)$again"
        record DEV "$name" "$deviation"
    elif [ -z "$why" ]; then
        # (A retry is printed, not recorded: the recorded detail stays what the case shows.)
        [ -z "$again" ] || echo "     ($name passed$again)"
        pass "$name" "$detail"
    else
        fail "$name" "${why#; }${flake:+ (in its second run; the first showed server flake $flake)}" "$log"
    fi
}

# observe NAME STATUS [CHECK]... -- COMMAND...: a case of another client than this
# library, run as run() runs one (without a retry): its failure is a finding about that
# client, not a verdict, recorded as DIFF and not counted. What it says: the first check
# that failed, else the first line a program said of itself ("prog: ..."), else why;
# files named by their base name.
observe() {
    local name=$1 want=$2 log=$logdir/$1.log checks=() why detail deviation
    shift 2
    while [ "$1" != -- ]; do checks+=("$1" "$2" "$3"); shift 3; done
    shift
    attempt "$@"
    if [ -z "$why" ]; then
        pass "$name"
        return
    fi
    detail=$(grep -a -m 1 "check failed at " "$log" | sed 's/^.*: rank [-0-9]*: //')
    [ -n "$detail" ] || detail=$(grep -a -m 1 -E '^[a-z0-9_-]+: ' "$log")
    detail=$(printf '%s' "${detail:-$why}" | sed -E 's#/([^ /]+/)+##g')
    echo "DIFF $name ($detail)"
    record DIFF "$name" "$detail"
}

# One run of a case for run(): sets why (empty when the case holds), detail, deviation.
attempt() {
    local start=$SECONDS
    timeout -k 5 "$HARNESS_TIMEOUT" "$@" >"$log" 2>&1
    local got=$?
    why="" detail="" deviation=""
    # 124, or 137 after the grace period: timeout's; a quick 137 is the command's own
    # (srun's status when a task was killed).
    if [ "$got" = 124 ] || { [ "$got" = 137 ] && [ $((SECONDS - start)) -ge "$HARNESS_TIMEOUT" ]; }; then
        why="timed out after $HARNESS_TIMEOUT s"
    elif [ "$want" = any ]; then
        :
    elif [ "$want" = nonzero ]; then
        [ "$got" != 0 ] || why="exit 0, expected a failure"
    elif [ "$got" != "$want" ]; then
        why="exit $got, expected $want"
    fi
    local i
    for ((i = 0; i < ${#checks[@]}; i += 3)); do
        local kind=${checks[i]} arg=${checks[i + 1]} text=${checks[i + 2]}
        [ "$arg" = log ] && arg=$log
        case $kind in
            --expect) grep -qaF -- "$text" "$arg" 2>/dev/null ||
                why="$why; no \"$text\" in $arg$(file_says "$arg" "$log")" ;;
            --absent) ! grep -qaF -- "$text" "$arg" 2>/dev/null || why="$why; unexpected \"$text\" in $arg" ;;
            --show)
                detail=$(grep -aF -m 1 -- "$text" "$arg" 2>/dev/null | sed 's/^ *//')
                [ -n "$detail" ] || why="$why; no \"$text\" in $arg" ;;
            --deviation)
                deviation=${deviation:+$deviation,}$arg
                grep -qaF -- "$text" "$log" || why="$why; no \"$text\" (deviation $arg) in $log" ;;
            --count) [ "$(grep -caF -- "$text" "$log")" = "$arg" ] || why="$why; \"$text\" not $arg times" ;;
            *) why="$why; unknown check $kind" ;;
        esac
    done
    why=${why#; }
}

# file_says FILE LOG: what a verdict file other than the run's log holds, for a failed
# --expect (its logs may be gone by the time anyone looks): ` (it says "...")`, the first
# line, or ` (empty)` or ` (missing)`; nothing for the log itself.
file_says() {
    [ "$1" != "$2" ] || return 0
    if [ ! -e "$1" ]; then
        printf ' (missing)'
    elif [ ! -s "$1" ]; then
        printf ' (empty)'
    else
        printf ' (it says "%s")' "$(head -n 1 "$1" | cut -c1-200)"
    fi
}

# report_to NAME: REPORT, a fresh file for case NAME's processes to append to through
# CHECK_REPORT (c-tests/check.h), for what a failing job's processes said.
report_to() { REPORT=$logdir/$1.report; rm -f "$REPORT"; }

# The file a binary's libpmi.so.0 resolves to with the current LD_LIBRARY_PATH.
resolved_libpmi() { ldd "$1" | awk -v so="${2:-libpmi.so.0}" '$1 == so {print $3}'; }

# check_loaded BINARY: the library under test is the one the dynamic linker picks (the
# file HARNESS_LOADED_FROM when set: an installed package's); with HARNESS_STATIC=1
# (programs linked with the static archives), that no libpmi is loaded.
check_loaded() {
    local loaded
    if [ "${HARNESS_STATIC:-0}" = 1 ]; then
        local listed
        listed=$(ldd "$1" 2>&1)
        if [ ! -x "$1" ] || ! { echo "$listed" | grep -q 'libc\.so' ||
                                echo "$listed" | grep -q 'not a dynamic executable'; }; then
            fail static-no-shared-libpmi "ldd $1: $listed"
        elif echo "$listed" | grep -qE 'libpmi2?\.so'; then
            fail static-no-shared-libpmi "$1 loads $(echo "$listed" | grep -E 'libpmi2?\.so')"
        else
            pass static-no-shared-libpmi "$(echo "$listed" | awk '{print $1}' | tr '\n' ' ')"
        fi
        return
    fi
    loaded=$(resolved_libpmi "$1")
    local want=${HARNESS_LOADED_FROM:-$libdir/libpmi.so.0}
    if [ -n "$loaded" ] && [ "$(readlink -f "$loaded")" = "$(readlink -f "$want")" ]; then
        pass ldd-loads-ours "$loaded"
    else
        fail ldd-loads-ours "libpmi.so.0 resolves to '$loaded', not $want"
    fi
}

# --- launchers ----------------------------------------------------------------------------
# launcher KIND NP [LAYOUT]: sets the array L to the command that starts NP processes of the
# program that follows. LAYOUT is 1 (one node, the default) or 2 (two nodes, block) for
# every kind that can have two; a -vc kind also takes cyclic (two hosts, ranks dealt one
# by one), uneven (three hosts, 3+2+1 slots) and 4 (four hosts, block: the scale bench). Kinds (scripts/launchers.sh sets up the
# ones that need it):
#   hydra4       Debian's MPICH 4.0.2 mpiexec.hydra (PMI_FD)
#   hydra4-port  the same with -pmi-port (PMI_PORT)
#   hydra5       MPICH 5.0.2's mpiexec.hydra (HYDRA5_ROOT)
#   impi         Intel MPI 2021.19's mpiexec.hydra (IMPI_ROOT)
#   srun         Slurm's srun --mpi=pmi2 (SLURM_CONF), one node
#   srun-pmix    Slurm's srun --mpi=pmix: the library's PMIx backend, one node
#   prterun      Open MPI 5.0.11's prterun (OPENMPI_ROOT): the PMIx backend, one node
#   flux         Flux's flux run -o pmi=simple (PMI_FD), the brokers of a test instance on
#                this host each a node (FLUX_PREFIX, FLUX_TEST_URI: scripts/flux.sh), two
#                also cyclic; its processes are told CHECK_REAL_HOSTS=1 and
#                CHECK_NODE_VAR=FLUX_URI (a process's node is its broker, whose URI each
#                task gets)
#   KIND-vc      KIND across the real hosts of the virtual cluster (scripts/cluster.sh:
#                CLUSTER_ADDRS, CLUSTER_SSH, CLUSTER_BRIDGE); its processes are told
#                CHECK_REAL_HOSTS=1. Without -vc, "two nodes" are simulated on this host.
# Every Hydra (MPICH's and Intel's) is started through scripts/no-sigpipe: its mpiexec
# dies of SIGPIPE (exit 141, no message) when it writes to a proxy that has just exited
# (docs/CI.md has the causes and the rates measured).
HYDRA=("$harness_root/scripts/no-sigpipe" "${MPIEXEC:-mpiexec.hydra}")
# flux run, appended to L: NP tasks on NODES of the instance's brokers, evenly (or as
# the task map TASKMAP says: cyclic, manual:...), each task through scripts/flux-task
# (the library under test, not Flux's, is loaded: the job shell puts Flux's first on
# LD_LIBRARY_PATH). (Not -n: a job of more tasks than cores is refused; tasks per node
# are placed whatever the cores.)
add_flux() { # NP NODES [TASKMAP]
    local taskmap=()
    [ $(($1 % $2)) = 0 ] || { echo "harness: flux runs $1 tasks on $2 nodes unevenly only by a task map" >&2; return 1; }
    [ -z "${3:-}" ] || taskmap=("--taskmap=$3")
    L+=("${FLUX_PREFIX:?no FLUX_PREFIX}/bin/flux" run -o pmi=simple -N "$2" --tasks-per-node=$(($1 / $2))
        "${taskmap[@]}" "$harness_root/scripts/flux-task")
}
# flux_opts OPT...: L (a flux launcher's) with more options of flux run, after its own.
flux_opts() { L=("${L[@]:0:${#L[@]}-1}" "$@" "${L[-1]}"); }
# prterun, appended to L: each job has a session directory of its own (scripts/prte-own-tmp).
add_prterun() {
    L+=("$harness_root/scripts/prte-own-tmp" env PRTE_PREFIX="$OPENMPI_ROOT" PMIX_PREFIX="$OPENMPI_ROOT"
        OPAL_PREFIX="$OPENMPI_ROOT" "$OPENMPI_ROOT/bin/prterun" --allow-run-as-root)
}
launcher() {
    local kind=$1 np=$2 nodes=${3:-1}
    case $kind in
        *-vc) launcher_vc "${kind%-vc}" "$np" "$nodes"; return ;;
        flux)
            # (Two brokers also take the cyclic layout.)
            L=(env FLUX_URI="${FLUX_TEST_URI:?no Flux on this host (launchers.sh setup flux)}"
               CHECK_REAL_HOSTS=1 CHECK_NODE_VAR=FLUX_URI)
            if [ "$nodes" = cyclic ]; then add_flux "$np" 2 cyclic; else add_flux "$np" "$nodes"; fi
            return
            ;;
    esac
    local ppn=$(((np + nodes - 1) / nodes))
    case $kind in
        hydra4 | hydra4-port | hydra5 | hydra5-port)
            L=("${HYDRA[@]}" -launcher fork)
            case $kind in hydra5*) L[1]=$HYDRA5_ROOT/bin/mpiexec.hydra ;; esac
            case $kind in *-port) L+=(-pmi-port) ;; esac
            [ "$nodes" = 1 ] || L+=(-hosts "a:$ppn,b:$ppn")
            L+=(-n "$np")
            ;;
        impi)
            L=("${HYDRA[0]}" env I_MPI_ROOT="$IMPI_ROOT" PATH="$IMPI_ROOT/bin:$PATH" "$IMPI_ROOT/bin/mpiexec.hydra"
               -bootstrap fork)
            [ "$nodes" = 1 ] || L+=(-hosts localhost,127.0.0.1 -ppn "$ppn")
            L+=(-n "$np")
            ;;
        srun | srun-pmix)
            [ "$nodes" = 1 ] || { echo "harness: srun runs on one node here" >&2; return 1; }
            L=(srun "--mpi=$([ "$kind" = srun ] && echo pmi2 || echo pmix)" -n "$np")
            ;;
        prterun)
            [ "$nodes" = 1 ] || { echo "harness: prterun runs on one node here" >&2; return 1; }
            L=()
            add_prterun
            L+=(--map-by :OVERSUBSCRIBE -n "$np")
            ;;
        *) echo "harness: unknown launcher '$kind'" >&2; return 1 ;;
    esac
}

# The slots of LAYOUT for NP processes, one "ADDRESS:SLOTS" a host.
cluster_slots() { # NP LAYOUT
    local a
    read -r -a a <<<"${CLUSTER_ADDRS:?the virtual cluster is down (scripts/cluster.sh up 3)}"
    case $2 in
        1) echo "${a[0]}:$1" ;;
        2) echo "${a[0]}:$((($1 + 1) / 2))" "${a[1]}:$((($1 + 1) / 2))" ;;
        cyclic) echo "${a[0]}:1" "${a[1]}:1" ;;
        uneven) echo "${a[0]}:3" "${a[1]}:2" "${a[2]}:1" ;;
        4) echo "${a[0]}:$((($1 + 3) / 4))" "${a[1]}:$((($1 + 3) / 4))" "${a[2]}:$((($1 + 3) / 4))" \
            "${a[3]:?four hosts (CLUSTER_HOSTS=4)}:$((($1 + 3) / 4))" ;;
        *) echo "harness: unknown layout '$2'" >&2; return 1 ;;
    esac
}

# LAUNCHER_SLOTS: the slots of "ADDRESS:SLOTS"... added up (prterun's universe counts them).
slots_total() { local s t=0; for s; do t=$((t + ${s##*:})); done; LAUNCHER_SLOTS=$t; }

# launcher KIND-vc: KIND's command across the virtual cluster's hosts.
launcher_vc() { # KIND NP LAYOUT
    local kind=$1 np=$2 slots
    slots=$(cluster_slots "$np" "$3") || return 1
    slots_total $slots
    local ssh=(-bootstrap ssh -bootstrap-exec "$CLUSTER_SSH" -iface "$CLUSTER_BRIDGE")
    case $kind in
        hydra4 | hydra4-port | hydra5)
            L=("${HYDRA[0]}" env CHECK_REAL_HOSTS=1 "${HYDRA[1]}" "${ssh[@]}")
            case $kind in hydra5) L[3]=$HYDRA5_ROOT/bin/mpiexec.hydra ;; esac
            case $kind in *-port) L+=(-pmi-port) ;; esac
            L+=(-hosts "$(echo $slots | tr ' ' ,)" -n "$np")
            ;;
        impi)
            # (Its -hosts takes no slot counts: a machine file does.)
            local mf=$logdir/machinefile-$3
            printf '%s\n' $slots >"$mf"
            L=("${HYDRA[0]}" env CHECK_REAL_HOSTS=1 I_MPI_ROOT="$IMPI_ROOT" PATH="$IMPI_ROOT/bin:$PATH"
               "$IMPI_ROOT/bin/mpiexec.hydra" "${ssh[@]}" -machinefile "$mf" -n "$np")
            ;;
        srun | srun-pmix)
            # Started from the first host, as a user on a cluster does (the Slurm of
            # `SLURM_VC=1 scripts/slurm.sh`, SLURM_VC_CONF); -m arbitrary takes the
            # uneven layout from a host file.
            local mpi=pmi2 nodes
            [ "$kind" = srun ] || mpi=pmix
            L=("$harness_root/scripts/cluster.sh" exec vc1 env CHECK_REAL_HOSTS=1
               SLURM_CONF="${SLURM_VC_CONF:?no Slurm across the cluster (launchers.sh setup srun-vc)}")
            case $3 in
                1) L+=(srun "--mpi=$mpi" -N 1 -n "$np") ;;
                2) L+=(srun "--mpi=$mpi" -N 2 -n "$np" --ntasks-per-node=$(((np + 1) / 2))) ;;
                4) L+=(srun "--mpi=$mpi" -N 4 -n "$np" --ntasks-per-node=$(((np + 3) / 4))) ;;
                cyclic) L+=(srun "--mpi=$mpi" -N 2 -n "$np" --distribution=cyclic) ;;
                uneven)
                    local hf=$logdir/hostfile-uneven
                    printf 'vc1\nvc1\nvc1\nvc2\nvc2\nvc3\n' >"$hf"
                    L+=(SLURM_HOSTFILE="$hf" srun "--mpi=$mpi" -N 3 -n "$np" --distribution=arbitrary)
                    ;;
            esac
            ;;
        prterun)
            # Its daemons reach the hosts through the ssh agent; --prefix tells them where
            # the wheel is (its build prefix is not), and the bridge carries their traffic.
            # Cyclic: the block layout's slots, mapped by node. Oversubscribed (a spawn
            # needs slots beyond the job's; three slots on a host of two cores) and not
            # bound.
            local map=slot
            if [ "$3" = cyclic ]; then
                map=node slots=$(cluster_slots "$np" 2)
                slots_total $slots
            fi
            L=(env CHECK_REAL_HOSTS=1)
            add_prterun
            L+=(--prefix "$OPENMPI_ROOT" --prtemca plm_ssh_agent "$CLUSTER_SSH"
               --prtemca oob_tcp_if_include "$CLUSTER_BRIDGE" --host "$(echo $slots | tr ' ' ,)"
               --map-by "$map:OVERSUBSCRIBE" --bind-to none -n "$np")
            ;;
        flux)
            # Started from the first host (FLUX_VC_URI: `FLUX_VC=1 scripts/flux.sh`), one
            # broker a host; the uneven layout by a manual task map (RFC 34).
            L=("$harness_root/scripts/cluster.sh" exec vc1 env CHECK_REAL_HOSTS=1
               FLUX_URI="${FLUX_VC_URI:?no Flux across the cluster (launchers.sh setup flux-vc)}")
            case $3 in
                1 | 2 | 4) add_flux "$np" "$3" ;;
                cyclic) add_flux "$np" 2 cyclic ;;
                uneven)
                    L+=("$FLUX_PREFIX/bin/flux" run -o pmi=simple -N 3 -n 6
                        "--taskmap=manual:[[0,1,3,1],[1,1,2,1],[2,1,1,1]]" "$harness_root/scripts/flux-task")
                    ;;
            esac
            ;;
        *) echo "harness: no launcher '$kind' across the virtual cluster" >&2; return 1 ;;
    esac
}

# Whether KIND can simulate two nodes on this machine, or has real ones.
launcher_has_two_nodes() { case $1 in srun | srun-pmix | prterun) return 1 ;; esac; }
# Whether KIND runs across the virtual cluster's real hosts.
launcher_is_vc() { case $1 in *-vc) return 0 ;; esac; return 1; }
# The layouts a runner goes through under KIND: one node and (simulated) two; across real
# hosts two hosts by blocks and cyclic, and three hosts unevenly (unless
# COMPAT_THREE_HOSTS=0: make check-compat leaves them to make compat).
launcher_layouts() { # KIND
    if launcher_is_vc "$1" && [ "${COMPAT_THREE_HOSTS:-1}" = 1 ]; then
        echo "2 cyclic uneven"
    elif launcher_is_vc "$1"; then
        echo "2 cyclic"
    elif launcher_has_two_nodes "$1"; then
        echo "1 2"
    else
        echo 1
    fi
}
# What a case name ends with for LAYOUT under KIND.
layout_suffix() { # KIND LAYOUT
    case $2 in
        1) ;;
        2) if launcher_is_vc "$1"; then echo -2hosts; else echo -2nodes; fi ;;
        cyclic) echo -2hosts-cyclic ;;
        uneven) echo -3hosts-321 ;;
    esac
}

# --- a misbehaving PMI_PORT server --------------------------------------------------------
# fake_server MODE: a TCP server on a free port of 127.0.0.1 (the kernel picks it), for the
# faults no launcher stages on purpose:
#   silent  accepts each connection and never answers
#   close   reads the first line, then closes the connection
#   wrong   answers every line with a PMI-1 reply to init, whatever was asked (a server
#           that speaks PMI-1 only, or something else than what the client expects)
# Sets FAKE_PORT, and FAKE_PID (a python3 process); fake_server_stop ends it.
fake_server_py='
import socket, sys, threading
mode = sys.argv[1]
server = socket.socket()
server.bind(("127.0.0.1", 0))
server.listen(64)
print(server.getsockname()[1], flush=True)
held = []
def serve(conn):
    for line in conn.makefile("rb"):
        if mode == "close":
            conn.shutdown(socket.SHUT_RDWR)
            return
        conn.sendall(b"cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=0\n")
while True:
    conn = server.accept()[0]
    held.append(conn)
    if mode != "silent":
        threading.Thread(target=serve, args=(conn,), daemon=True).start()
'
fake_server() { # MODE
    local ports=$logdir/fake-server-$1.port i
    rm -f "$ports"
    python3 -c "$fake_server_py" "$1" >"$ports" 2>"$logdir/fake-server-$1.log" &
    FAKE_PID=$! FAKE_PORT=
    for ((i = 0; i < 100; i++)); do
        FAKE_PORT=$(head -n 1 "$ports" 2>/dev/null)
        [ -n "$FAKE_PORT" ] && return 0
        kill -0 "$FAKE_PID" 2>/dev/null || break
        sleep 0.1
    done
    echo "harness: the $1 server did not start (python3?)" >&2
    return 1
}
fake_server_stop() { kill "$FAKE_PID" 2>/dev/null; wait "$FAKE_PID" 2>/dev/null; return 0; }
