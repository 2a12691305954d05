#!/usr/bin/env bash
# `make bench`: run every benchmark, print one table and write it, with the machine and
# the method, to BENCHMARKS.md. Called by mk/bench.mk after the binaries are built.
#
# Environment (all optional): BENCH_BIN (the C programs), BENCH_LIB (libpmi.so.0),
# BENCH_REF_LIB (MPICH's simple client as a libpmi.so.0: the second reference; another
# client with BENCH_REF_NAME, its name in the rows),
# BENCH_REF_LIB2 (MPICH's simple PMI-2 client as a libpmi2.so.0; by default the
# libpmi2.so.0 beside BENCH_REF_LIB),
# BENCH_MAPPING_BIN (the Rust mapping bench), MPIEXEC, BENCH_OUT (the results file),
# BENCH_ROUNDS and BENCH_N (client overhead: rounds, operations per batch),
# BENCH_REPS (repetitions of each Hydra job), BENCH_RUNS (runs of the init and clique
# programs), BENCH_SIZES (Hydra job sizes).
set -u
cd "$(dirname "$0")/.."

BIN=${BENCH_BIN:-build/bench}
LIBDIR=${BENCH_LIB:-build/lib}
MAPBIN=${BENCH_MAPPING_BIN:-build/bench-target/release/mapping_bench}
MPIEXEC=${MPIEXEC:-mpiexec.hydra}
OUT=${BENCH_OUT:-BENCHMARKS.md}
REF_LIB=${BENCH_REF_LIB:-}
[ -f "$REF_LIB" ] || REF_LIB=""
REF_LIB2=${BENCH_REF_LIB2:-${REF_LIB:+$(dirname "$REF_LIB")/libpmi2.so.0}}
[ -f "$REF_LIB2" ] || REF_LIB2=""
# (BENCH_REF_NAME names another client given as BENCH_REF_LIB, e.g. MPICH 5's.)
REF=${BENCH_REF_NAME:-"MPICH 4.0.2's simple client"}
ROUNDS=${BENCH_ROUNDS:-41}
N=${BENCH_N:-2000}
REPS=${BENCH_REPS:-31}
RUNS=${BENCH_RUNS:-15}
SIZES=${BENCH_SIZES:-8 32 64}
# Two run lengths for strace and valgrind; the difference is divided by N2 - N1.
N1=200
N2=1200

LOADAVG=$(cut -d' ' -f1-3 /proc/loadavg)
# What is measured: the tree as it is now, not when the table is written.
COMMIT=$(bench/commit.sh)
rm -rf "$BIN/logs"
# The harness: a clean environment and the library under test first on LD_LIBRARY_PATH.
source scripts/harness.sh "$BIN/logs" "$LIBDIR"
LOG=$logdir

say() { echo "bench: $*" >&2; }

# Client and canned server pinned to the same CPU: a round trip is then two context
# switches on that CPU, with no wake-up of another CPU (an inter-processor interrupt, on
# a virtual machine an exit to the host), so it is the lock-step limit and its noise the
# smallest (measured here: about 5 µs a round trip, against 14 µs with the server on the
# other CPU). BENCH_SERVER_CPU=1 puts the server on another.
PIN=(-s "${BENCH_SERVER_CPU:-0}" -c "${BENCH_CLIENT_CPU:-0}")
PINNOTE="the canned server on CPU ${PIN[1]}, the client on CPU ${PIN[3]}"
canned() { "$BIN/canned_server" "${PIN[@]}" -- "$@"; }

# A tool that is missing is installed with apt-get when we are root, else skipped.
have_tool() {
    command -v "$1" >/dev/null && return 0
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
        say "installing $1 with apt-get"
        { apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
            apt-get install -y -qq --no-install-recommends "$1"; } >/dev/null 2>&1
    fi
    command -v "$1" >/dev/null
}

# Small numeric helpers (awk does the arithmetic).
med() { sort -g | awk '{v[NR]=$1} END {if (NR==0) print "nan"; else if (NR%2) print v[(NR+1)/2]; else print (v[NR/2]+v[NR/2+1])/2}'; }
# (An expression with a nan in it is nan: awk would read the word as an unset variable, 0.)
calc() { case $1 in *nan*) echo nan ;; *) awk "BEGIN {print $1}" ;; esac; }
fmt() { awk -v x="$1" -v f="$2" 'BEGIN {if (x=="" || x=="nan") print "n/a"; else printf f, x}'; }
le() { awk -v a="$1" -v b="$2" 'BEGIN {exit !(a!="" && a!="nan" && a+0 <= b+0)}'; }
ok() { if "$@"; then echo "**met**"; else echo "**missed**"; fi; }
# judged MEDIAN Q1 Q3 X, for a paired ratio whose target is "<= X": met when the whole
# interquartile range lies below X, a tie when it holds X, else missed.
judged() {
    awk -v m="$1" -v a="$2" -v b="$3" -v x="$4" 'BEGIN {
        if (m == "" || m == "nan") print "**missed**"
        else if (b + 0 < x + 0) print "**met**"
        else if (a + 0 <= x + 0) print "**tie**"
        else print "**missed**" }'
}
field() { sed -n "s/.*\b$1=\([^ ]*\).*/\1/p" | head -n 1; }
# paired A B: the median of the line-by-line ratios of files A and B (one repetition a
# line), and its quartiles: "median q1 q3".
paired() {
    paste "$1" "$2" | awk '{print $1 / $2}' | sort -g |
        awk '{v[NR]=$1} END {print (NR%2 ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2), v[int(NR/4)+1], v[int(3*NR/4)+1]}'
}
# order REP N: the order of N clients in repetition REP (from 1), as indices: each
# starts in turn, the rotation forward in one cycle of N repetitions and backward in
# the next, so that over 2N repetitions each client runs before each other as often as
# after it.
order() {
    local s=$(($1 % $2)) back=$((($1 / $2) % 2)) k
    for ((k = 0; k < $2; k++)); do
        if [ "$back" = 1 ]; then echo $(((s + $2 - 1 - k) % $2)); else echo $(((s + k) % $2)); fi
    done
}

ROWS=()
row() { ROWS+=("| $1 | $2 | $3 | $4 | $5 | $6 |"); }
NOTES=()

#--------------------------------------------------------------------------------------
# 1. Client overhead against the canned server: PMI-1 (pmi_bench, libpmi.so.0), then
#    PMI-2 (pmi_bench2, libpmi2.so.0) against a raw client writing PMI-2 frames.
# overhead PROGRAM FILE GET PUT BARRIER [REFLIB]: the rows of one run (the calls' names
# given); with REFLIB, that client library is measured in the same rounds too.
overhead() {
    local prog=$1 file=$2 get=$3 put=$4 barrier=$5 reflib=${6:-} op raw lib r q1 q3 what
    BENCH_REF_LIB=$reflib canned "$BIN/$prog" overhead "$ROUNDS" "$N" >"$LOG/$file.txt" \
        2>"$LOG/$file.err" || say "$prog overhead run failed (see $LOG/$file.err)"
    ov() { grep "^op=$1 " "$LOG/$file.txt" | field "$2"; }
    for op in get put barrier getmissing; do
        raw=$(ov "$op" raw_ns) lib=$(ov "$op" lib_ns) r=$(ov "$op" ratio)
        q1=$(ov "$op" ratio_q1) q3=$(ov "$op" ratio_q3)
        case $op in
            get) what="\`$get\`, distinct keys (each read once, so not cached)";;
            put) what="\`$put\`, distinct keys (each grows the put-once record)";;
            barrier) what="\`$barrier\`";;
            getmissing) what="\`$get\` of a missing key (the whole get path, no cache growth)";;
        esac
        row "$what: time per call (canned server)" "$(fmt "$raw" %.0f) ns" "$(fmt "$lib" %.0f) ns" \
            "$(fmt "$r" %.3f)× (IQR $(fmt "$q1" %.3f)–$(fmt "$q3" %.3f))" "≤ 1.02× raw" "$(judged "$r" "$q1" "$q3" 1.02)"
        [ -n "$reflib" ] || continue
        local ref rr rq1 rq3
        ref=$(ov "$op" ref_ns) rr=$(ov "$op" ref_ratio) rq1=$(ov "$op" ref_ratio_q1) rq3=$(ov "$op" ref_ratio_q3)
        r=$(ov "$op" lib_ref) q1=$(ov "$op" lib_ref_q1) q3=$(ov "$op" lib_ref_q3)
        row "$what: against $REF, same rounds" \
            "$(fmt "$ref" %.0f) ns ($(fmt "$rr" %.3f)× raw, IQR $(fmt "$rq1" %.3f)–$(fmt "$rq3" %.3f))" \
            "$(fmt "$lib" %.0f) ns" "$(fmt "$r" %.3f)× (IQR $(fmt "$q1" %.3f)–$(fmt "$q3" %.3f))" \
            "≤ 1.00× $REF" "$(judged "$r" "$q1" "$q3" 1.00)"
    done
    raw=$(ov getcached raw_ns) lib=$(ov getcached lib_ns) r=$(ov getcached ratio)
    row "\`$get\` of a cached key: time per call" "$(fmt "$raw" %.0f) ns (a round trip)" \
        "$(fmt "$lib" %.0f) ns" "$(fmt "$r" %.0f)× faster" "≥ 100× faster than a round trip" \
        "$(ok le 100 "$r")"
}
say "1/7 client overhead: $ROUNDS rounds x $N operations, raw and library interleaved"
[ -n "$REF_LIB" ] || NOTES+=("No second reference: \`scripts/build-mpich.sh --simple-pmi\` did not give MPICH's simple client (BENCH_REF_LIB unset).")
overhead pmi_bench overhead PMI_KVS_Get PMI_KVS_Put PMI_Barrier "$REF_LIB"
say "2/7 the same for libpmi2.so.0 (PMI-2 frames)"
[ -n "$REF_LIB2" ] || NOTES+=("No PMI-2 reference: MPICH's simple PMI-2 client (libpmi2.so.0 beside BENCH_REF_LIB) is missing.")
overhead pmi_bench2 overhead2 PMI2_KVS_Get PMI2_KVS_Put PMI2_KVS_Fence "$REF_LIB2"

#--------------------------------------------------------------------------------------
# 2. System calls per operation (strace -f -c on the client only; the canned server
#    runs strace, so it is not traced itself).
say "3/7 system calls per operation (strace, $N1 and $N2 operations)"
SYSCALLS_OK=0
if have_tool strace; then
    SYSCALLS_OK=1
    # Per-syscall counts of one strace -c summary: "name calls".
    counts() { awk '$1 ~ /^[0-9.]+$/ && $NF != "total" {print $NF, $4}' "$1"; }
    per_op() { # op -> "total (name n, name n)"
        for n in $N1 $N2; do
            canned strace -f -c -o "$LOG/strace.$1.$n" "$BIN/pmi_bench" count "$1" "$n" \
                >/dev/null 2>>"$LOG/strace.err" || { echo "error"; return; }
        done
        join -a1 -a2 -e0 -o 0,1.2,2.2 <(counts "$LOG/strace.$1.$N1" | sort) \
            <(counts "$LOG/strace.$1.$N2" | sort) |
            awk -v d=$((N2 - N1)) '{x = ($3 - $2) / d; if (x > 0.005 || x < -0.005) {t += x; s = s sep sprintf("%s %.2f", $1, x); sep = ", "}}
                END {printf "%.2f (%s)\n", t, s == "" ? "none" : s}'
    }
    for op in get put barrier getmissing; do
        lib=$(per_op "$op") raw=$(per_op "raw$op")
        case $op in
            get) what='`PMI_KVS_Get`, distinct keys';; put) what='`PMI_KVS_Put`, distinct keys';;
            barrier) what='`PMI_Barrier`';; getmissing) what='`PMI_KVS_Get` of a missing key';;
        esac
        total=${lib%% *}
        row "$what: system calls per call" "$raw" "$lib" "" "exactly 2: one write, one read" \
            "$(ok awk -v t="$total" -v s="$lib" 'BEGIN {exit !(t == 2 && s ~ /(write|send|sendto) 1.00/ && s ~ /read 1.00/)}')"
    done
    lib=$(per_op getcached)
    row '`PMI_KVS_Get` of a cached key: system calls per call' "" "$lib" "" "0" \
        "$(ok awk -v t="${lib%% *}" 'BEGIN {exit !(t == 0)}')"
else
    NOTES+=("strace is not installed and could not be installed: the system call rows are skipped.")
fi

#--------------------------------------------------------------------------------------
# 3. Heap allocations per operation in steady state (valgrind's heap summary).
say "4/7 heap allocations and instructions per operation (valgrind, $N1 and $N2 operations)"
if have_tool valgrind; then
    allocs() { # op n -> total allocs of the client process
        canned valgrind --leak-check=no "$BIN/pmi_bench" count "$1" "$2" \
            >/dev/null 2>"$LOG/valgrind.$1.$2" || { echo nan; return; }
        sed -n 's/.*total heap usage: \([0-9,]*\) allocs.*/\1/p' "$LOG/valgrind.$1.$2" | tr -d , | tail -n 1
    }
    per_alloc() { local a b; a=$(allocs "$1" $N1) b=$(allocs "$1" $N2); calc "($b - $a) / ($N2 - $N1)"; }
    steady=""
    all_zero=1
    for op in barrier getcached getmissing; do
        x=$(per_alloc "$op")
        steady="$steady${steady:+, }$op $(fmt "$x" %.2f)"
        le "$x" 0 && le 0 "$x" || all_zero=0
    done
    g=$(per_alloc get) p=$(per_alloc put)
    row "Heap allocations per call, steady state" "" "$steady" "" "0" \
        "$( [ $all_zero = 1 ] && echo '**met**' || echo '**missed**')"
    row "Heap allocations per call, cache growth (reported separately)" "" \
        "get of a new key $(fmt "$g" %.2f), put of a new key $(fmt "$p" %.2f)" "" \
        "amortised growth of the get cache and the put-once record" "(growth)"
    # Instructions per call in the client process (callgrind, user space): what each
    # client does around the same round trip, deterministic where the times are noisy.
    instr() { # program reflib op n -> instructions executed by the client process
        BENCH_REF_LIB=$2 canned valgrind --tool=callgrind --callgrind-out-file="$LOG/callgrind.$1.$3.$4" \
            "$BIN/$1" count "$3" "$4" >/dev/null 2>"$LOG/callgrind.$1.$3.$4.err" || { echo nan; return; }
        sed -n 's/.*Collected : \([0-9]*\).*/\1/p' "$LOG/callgrind.$1.$3.$4.err" | tail -n 1
    }
    per_instr() { local a b; a=$(instr "$@" $N1) b=$(instr "$@" $N2); calc "($b - $a) / ($N2 - $N1)"; }
    # instr_rows PROGRAM REFLIB GET PUT BARRIER: one row per call.
    instr_rows() {
        local prog=$1 reflib=$2 op lib raw ref what
        for op in get put barrier getmissing; do
            lib=$(per_instr "$prog" "$reflib" "$op") raw=$(per_instr "$prog" "$reflib" "raw$op") ref=nan
            [ -n "$reflib" ] && ref=$(per_instr "$prog" "$reflib" "ref$op")
            case $op in
                get) what="\`$3\`, distinct keys";; put) what="\`$4\`, distinct keys";;
                barrier) what="\`$5\`";; getmissing) what="\`$3\` of a missing key";;
            esac
            row "$what: instructions per call in the client (callgrind; the loop's own key formatting included)" \
                "raw $(fmt "$raw" %.0f); $REF $(fmt "$ref" %.0f)" "$(fmt "$lib" %.0f)" \
                "$(fmt "$(calc "$lib / $ref")" %.2f)× $REF" "≤ $REF" "$(ok le "$lib" "$ref")"
        done
    }
    instr_rows pmi_bench "$REF_LIB" PMI_KVS_Get PMI_KVS_Put PMI_Barrier
    instr_rows pmi_bench2 "$REF_LIB2" PMI2_KVS_Get PMI2_KVS_Put PMI2_KVS_Fence
else
    NOTES+=("valgrind is not installed and could not be installed: the heap and instruction rows are skipped.")
fi

#--------------------------------------------------------------------------------------
# 4. PMI_Init round trips and time; the clique of a rank in a million-rank mapping.
say "5/7 PMI_Init and clique ($RUNS runs each)"
# Odd runs: the raw client's round trips first (so both meet the server cold in turn).
# With the reference, each run has the same run of its PMI_Init beside it, before it in
# every other pair of runs.
: >"$LOG/init.ref.txt"
for i in $(seq "$RUNS"); do
    order=$([ $((i % 2)) = 1 ] && echo raw-first)
    ref_first=$([ $((i / 2 % 2)) = 1 ] && echo yes)
    if [ -n "$REF_LIB" ] && [ -n "$ref_first" ]; then
        BENCH_REF_LIB=$REF_LIB canned "$BIN/pmi_bench" init $order ref >>"$LOG/init.ref.txt"
    fi
    canned "$BIN/pmi_bench" init $order
    if [ -n "$REF_LIB" ] && [ -z "$ref_first" ]; then
        BENCH_REF_LIB=$REF_LIB canned "$BIN/pmi_bench" init $order ref >>"$LOG/init.ref.txt"
    fi
done >"$LOG/init.txt" 2>"$LOG/init.err"
lines_max=$(sed -n 's/.*init_lines=\([0-9]*\).*/\1/p' "$LOG/init.txt" | sort -n | tail -n 1)
# first FILE FIELD WHO: the median of FIELD over the runs of FILE where WHO (raw or lib)
# met the server first.
first() { sed -n "s/.*$2=\([0-9]*\).*raw_first=$([ "$3" = raw ] && echo 1 || echo 0).*/\1/p" "$1" | med; }
# Warm against warm: each after the other had met the server.
init_ns=$(first "$LOG/init.txt" init_ns raw) raw2_ns=$(first "$LOG/init.txt" raw2_ns lib)
faults=$(first "$LOG/init.txt" init_faults lib)
row '`PMI_Init`: round trips (lines sent) and time, each after the other met the server' "2 round trips: $(fmt "$(calc "$raw2_ns/1000")" %.1f) µs" \
    "${lines_max:-?} round trips: $(fmt "$(calc "$init_ns/1000")" %.1f) µs" "" "≤ 2 round trips" \
    "$(ok le "${lines_max:-99}" 2)"
# What the rest of a cold PMI_Init is: its instructions (callgrind, inclusive) and the
# minor page faults of its first run through the library's code and data.
init_instr() { # [ref] -> PMI_Init's instructions, inclusive (callgrind)
    local who=${1:-}
    command -v callgrind_annotate >/dev/null || { echo nan; return; }
    BENCH_REF_LIB=$REF_LIB canned valgrind --tool=callgrind --callgrind-out-file="$LOG/callgrind.init$who" \
        "$BIN/pmi_bench" init $who >/dev/null 2>"$LOG/callgrind.init$who.err" || { echo nan; return; }
    callgrind_annotate --inclusive=yes "$LOG/callgrind.init$who" 2>/dev/null |
        awk 'NF >= 2 && $(NF-1) ~ /:PMI_Init$/ {gsub(",", "", $1); print $1; exit}'
}
init_ir=$(init_instr)
# Cold against cold: a PMI_Init that met the server first (the runs where it went first)
# against the raw client's round trips that met it first (the other runs); medians of
# each, since one run cannot have both first.
init_cold=$(first "$LOG/init.txt" init_ns lib) raw_cold=$(first "$LOG/init.txt" raw2_ns raw)
raw_warm=$(first "$LOG/init.txt" raw2_ns lib)
x=$(calc "$init_cold / $raw_cold")
row 'Cold `PMI_Init` against its two round trips, raw, each the first to meet the server (alternate runs)' \
    "$(fmt "$(calc "$raw_cold/1000")" %.1f) µs (after the library's: $(fmt "$(calc "$raw_warm/1000")" %.1f))" \
    "$(fmt "$(calc "$init_cold/1000")" %.1f) µs: $(fmt "${init_ir:-nan}" %.0f) instructions, $(fmt "$faults" %.0f) minor page faults" \
    "$(fmt "$x" %.2f)×" "≤ 1.3×" "$(ok le "$x" 1.3)"
if [ -n "$REF_LIB" ] && [ -s "$LOG/init.ref.txt" ]; then
    ref_cold=$(first "$LOG/init.ref.txt" init_ns lib) ref_raw=$(first "$LOG/init.ref.txt" raw2_ns raw)
    ref_faults=$(first "$LOG/init.ref.txt" init_faults lib)
    row "Cold \`PMI_Init\` of $REF, the same way (its runs alternate as the library's)" \
        "$(fmt "$(calc "$ref_cold/1000")" %.1f) µs ($(fmt "$(calc "$ref_cold / $ref_raw")" %.2f)× its raw round trips): $(fmt "$(init_instr ref)" %.0f) instructions, $(fmt "$ref_faults" %.0f) minor page faults" \
        "$(fmt "$(calc "$init_cold/1000")" %.1f) µs" "$(fmt "$(calc "$init_cold / $ref_cold")" %.2f)×" "side by side" "measured"
fi

for i in $(seq "$RUNS"); do
    PMI_SIZE=1048576 PMI_RANK=1000000 BENCH_MAPPING='(vector,(0,4096,256))' \
        canned "$BIN/pmi_bench" clique
done >"$LOG/clique.txt" 2>"$LOG/clique.err"
clique_ns=$(sed -n 's/.*clique_ns=\([0-9]*\).*/\1/p' "$LOG/clique.txt" | med)
rawget_ns=$(sed -n 's/.*rawget_ns=\([0-9]*\).*/\1/p' "$LOG/clique.txt" | med)
csize=$(field clique <"$LOG/clique.txt")
cfirst=$(field first <"$LOG/clique.txt") clast=$(field last <"$LOG/clique.txt")
"$MAPBIN" >"$LOG/mapping.txt" 2>&1 || say "mapping_bench failed"
parse_ns=$(field parse_ns <"$LOG/mapping.txt") cl_ns=$(field clique_ns <"$LOG/mapping.txt")
tot_ns=$(field total_ns <"$LOG/mapping.txt") cold_ns=$(field first_total_ns <"$LOG/mapping.txt")
row 'Clique of rank 1000000 in `(vector,(0,4096,256))`, 1048576 ranks: first `PMI_Get_clique_size` + `PMI_Get_clique_ranks`' \
    "one get round trip: $(fmt "$(calc "$rawget_ns/1000")" %.1f) µs" \
    "$(fmt "$(calc "$clique_ns/1000")" %.1f) µs with the round trip ($csize ranks, $cfirst..$clast); parse $(fmt "$parse_ns" %.0f) ns + clique $(fmt "$cl_ns" %.0f) ns = $(fmt "$tot_ns" %.0f) ns (cold: $(fmt "$cold_ns" %.0f) ns)" \
    "" "< 1 ms" "$(ok le "$clique_ns" 1000000)"

#--------------------------------------------------------------------------------------
# 5. Wire-up under Hydra: the MPI_Init pattern, library against the minimal C client.
say "6/7 wire-up under Hydra: n = $SIZES, one node and two simulated nodes, $REPS repetitions"
# What every rank pays before main: loading the library, with as many processes starting
# at once as in the largest job here (CPU time per process: on 2 cores that is the launch).
LOAD_N=$(tr ' ' '\n' <<<"$SIZES" | sort -n | tail -n 1)
progs=("$BIN/loadnone@/nonexistent" "$BIN/loadonly@$(realpath "$LIBDIR")")
[ -n "$REF_LIB" ] && progs+=("$BIN/loadonly@$(dirname "$(realpath "$REF_LIB")")")
if "$BIN/pmi_bench" load "$LOAD_N" "$REPS" "${progs[@]}" >"$LOG/load.txt" 2>"$LOG/load.err"; then
    lcpu() { sed -n "s/^load prog=$1 .*cpu_ns=\([0-9]*\).*/\1/p" "$LOG/load.txt"; }
    none=$(lcpu 0 | med) lib=$(lcpu 1 | med)
    what="Loading the library: CPU time per process, $LOAD_N processes started at once (\`bench/loadonly.c\`, median of $REPS batches)"
    if [ -n "$REF_LIB" ]; then
        ref=$(lcpu 2 | med)
        read -r pr pq1 pq3 < <(paste <(lcpu 1) <(lcpu 2) | awk '{print $1 / $2}' | sort -g |
            awk '{v[NR]=$1} END {print (NR%2 ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2), v[int(NR/4)+1], v[int(3*NR/4)+1]}')
        row "$what" "$REF $(fmt "$(calc "$ref/1000")" %.0f) µs; no library $(fmt "$(calc "$none/1000")" %.0f) µs" \
            "$(fmt "$(calc "$lib/1000")" %.0f) µs" "$(fmt "$pr" %.3f)× (IQR $(fmt "$pq1" %.3f)–$(fmt "$pq3" %.3f))" \
            "≤ 1.00× $REF" "$(judged "$pr" "$pq1" "$pq3" 1.00)"
    else
        row "$what" "no library $(fmt "$(calc "$none/1000")" %.0f) µs" "$(fmt "$(calc "$lib/1000")" %.0f) µs" "" "" ""
    fi
else
    say "pmi_bench load failed (see $LOG/load.err)"
fi
if command -v "$MPIEXEC" >/dev/null; then
    # One job: prints the largest wire-up time over the ranks, or "error". Client "ref"
    # is the library program on MPICH's simple client.
    job() { # client n layout
        local n=$2 hosts prog=$BIN/wireup_$1 envp=()
        if [ "$3" = 1 ]; then hosts="a:$n"; else hosts="a:$((n / 2)),b:$((n - n / 2))"; fi
        [ "$1" = ref ] && prog=$BIN/wireup_lib envp=(env LD_LIBRARY_PATH="$(dirname "$REF_LIB")")
        local out
        out=$(timeout 120 "${envp[@]}" "$MPIEXEC" -launcher fork -hosts "$hosts" -n "$n" "$prog" 2>>"$LOG/hydra.err")
        echo "$out" >>"$LOG/hydra.$1.$n.$3.txt"
        local good
        good=$(grep -c 'ok=1' <<<"$out")
        if [ "$good" != "$n" ]; then echo error; return; fi
        # The ranks' mean CPU time and minor faults, for the profile beside the time.
        awk '{for (i = 1; i <= NF; i++) {split($i, kv, "="); v[kv[1]] = kv[2]}
              c += v["cpu_us"]; f += v["minflt"]} END {print c / NR, f / NR}' <<<"$out" >>"$LOG/cost.$1"
        sed -n 's/.* ns=\([0-9]*\).*/\1/p' <<<"$out" | sort -n | tail -n 1
    }
    # cost CLIENT: "C µs CPU, F faults per rank", the medians over the jobs of the ranks' means.
    cost() {
        echo "$(fmt "$(cut -d' ' -f1 "$LOG/cost.$1" | med)" %.0f) µs CPU, $(fmt "$(cut -d' ' -f2 "$LOG/cost.$1" | med)" %.0f) faults per rank"
    }
    for n in $SIZES; do
        for layout in 1 2; do
            : >"$LOG/t.lib" ; : >"$LOG/t.raw"; : >"$LOG/t.ref"
            : >"$LOG/cost.lib" ; : >"$LOG/cost.raw"; : >"$LOG/cost.ref"
            clients="lib raw"; [ -n "$REF_LIB" ] && clients="lib raw ref"
            read -r -a cl <<<"$clients"
            for rep in $(seq "$REPS"); do
                for k in $(order "$rep" ${#cl[@]}); do
                    c=${cl[$k]}
                    job "$c" "$n" "$layout" >>"$LOG/t.$c"
                done
            done
            if grep -q error "$LOG/t.lib" "$LOG/t.raw"; then
                row "Wire-up, n = $n, $layout node(s)" "error" "error" "" "≤ 1.05× the C client" "**error** (see $LOG)"
                continue
            fi
            l=$(med <"$LOG/t.lib") r=$(med <"$LOG/t.raw")
            # Paired: the median of each repetition's library/raw ratio.
            read -r x q1 q3 < <(paired "$LOG/t.lib" "$LOG/t.raw")
            if [ "$layout" = 1 ]; then where="one node"; else where="two simulated nodes"; fi
            row "Wire-up under Hydra, n = $n, $where (max over ranks; paired, median of $REPS)" \
                "$(fmt "$(calc "$r/1e6")" %.2f) ms ($(cost raw))" "$(fmt "$(calc "$l/1e6")" %.2f) ms ($(cost lib))" \
                "$(fmt "$x" %.3f)× (IQR $(fmt "$q1" %.3f)–$(fmt "$q3" %.3f))" "≤ 1.05× the C client" "$(judged "$x" "$q1" "$q3" 1.05)"
            if [ -n "$REF_LIB" ] && ! grep -q error "$LOG/t.ref"; then
                # Paired: the median of each repetition's library/reference ratio.
                m=$(med <"$LOG/t.ref")
                read -r pr pq1 pq3 < <(paired "$LOG/t.lib" "$LOG/t.ref")
                row "Wire-up under Hydra, n = $n, $where, against $REF (paired, median of $REPS)" \
                    "$(fmt "$(calc "$m/1e6")" %.2f) ms ($(cost ref))" "$(fmt "$(calc "$l/1e6")" %.2f) ms" \
                    "$(fmt "$pr" %.3f)× (IQR $(fmt "$pq1" %.3f)–$(fmt "$pq3" %.3f))" "≤ 1.00× $REF" "$(judged "$pr" "$pq1" "$pq3" 1.00)"
            elif [ -n "$REF_LIB" ]; then
                row "Wire-up under Hydra, n = $n, $where, against $REF" "error" "" "" "≤ 1.00× $REF" "**error** (see $LOG/hydra.ref.$n.$layout.txt)"
            fi
        done
    done
else
    NOTES+=("$MPIEXEC is not available: the wire-up rows are skipped (\`make deps-hydra\` installs it).")
fi

#--------------------------------------------------------------------------------------
# 6. Wire-up under Slurm: this library through its PMIx backend (srun --mpi=pmix) against
#    the same program through the PMI-1 wire (srun --mpi=pmi2), jobs alternating.
say "7/7 wire-up under Slurm: srun --mpi=pmix against --mpi=pmi2, n = $SIZES, $REPS repetitions"
# Stop the private Slurm afterwards only if this run starts it.
slurm_dir=${LIBPMI_SLURM_DIR:-/tmp/libpmi-slurm}
slurm_was_up=no
[ -n "$(scripts/slurm.sh env "$slurm_dir" 2>/dev/null)" ] &&
    SLURM_CONF=$slurm_dir/slurm.conf sinfo >/dev/null 2>&1 && slurm_was_up=yes
if [ "$(id -u)" = 0 ] && slurm_setup=$(scripts/launchers.sh setup srun-pmix 2>>"$LOG/slurm.err"); then
    eval "$slurm_setup"
    # One job: the largest PMI_Init time and the largest wire-up time over the ranks.
    slurm_job() { # pmi2|pmix n
        local out good
        out=$(timeout 120 srun "--mpi=$1" -n "$2" "$BIN/wireup_lib" 2>>"$LOG/srun.err")
        echo "$out" >>"$LOG/srun.$1.$2.txt"
        good=$(grep -c 'ok=1' <<<"$out")
        if [ "$good" != "$2" ]; then echo error; return; fi
        echo "$(sed -n 's/.*init_ns=\([0-9]*\).*/\1/p' <<<"$out" | sort -n | tail -n 1)" \
            "$(sed -n 's/.* ns=\([0-9]*\).*/\1/p' <<<"$out" | sort -n | tail -n 1)"
    }
    for n in $SIZES; do
        : >"$LOG/s.pmi2"; : >"$LOG/s.pmix"
        for rep in $(seq "$REPS"); do
            if [ $((rep % 2)) = 1 ]; then order="pmi2 pmix"; else order="pmix pmi2"; fi
            for m in $order; do slurm_job "$m" "$n" >>"$LOG/s.$m"; done
        done
        if grep -q error "$LOG/s.pmi2" "$LOG/s.pmix"; then
            row "Wire-up under srun, n = $n: --mpi=pmix against --mpi=pmi2" "error" "error" "" "measured" "**error** (see $LOG)"
            continue
        fi
        for m in pmi2 pmix; do
            cut -d' ' -f1 "$LOG/s.$m" >"$LOG/s.$m.init"
            cut -d' ' -f2 "$LOG/s.$m" >"$LOG/s.$m.all"
        done
        wi=$(med <"$LOG/s.pmi2.init") wt=$(med <"$LOG/s.pmi2.all")
        xi=$(med <"$LOG/s.pmix.init") xt=$(med <"$LOG/s.pmix.all")
        read -r rt _ < <(paired "$LOG/s.pmix.all" "$LOG/s.pmi2.all")
        read -r ri _ < <(paired "$LOG/s.pmix.init" "$LOG/s.pmi2.init")
        row "Wire-up under srun, n = $n, one node: the PMIx backend (\`--mpi=pmix\`, library column) against the wire (\`--mpi=pmi2\`, reference column); max over ranks, median of $REPS (the ratio: paired); in brackets \`PMI_Init\` alone" \
            "$(fmt "$(calc "$wt/1e6")" %.1f) ms ($(fmt "$(calc "$wi/1e6")" %.1f) ms)" \
            "$(fmt "$(calc "$xt/1e6")" %.1f) ms ($(fmt "$(calc "$xi/1e6")" %.1f) ms)" \
            "$(fmt "$rt" %.2f)× ($(fmt "$ri" %.2f)×)" "side by side" "measured"
    done
    [ "$slurm_was_up" = yes ] || scripts/launchers.sh stop >/dev/null 2>&1
else
    NOTES+=("The Slurm rows need root and Slurm (\`scripts/launchers.sh setup srun-pmix\`): skipped (see $LOG/slurm.err).")
fi

#--------------------------------------------------------------------------------------
# The table, the machine, the method.
CPU=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)
{
    echo "# Benchmarks"
    echo
    echo "Written by \`make bench\` ($(date -u '+%Y-%m-%d %H:%M UTC')). Regenerate with \`make bench\`."
    echo
    echo "Machine: $(getconf _NPROCESSORS_ONLN) CPUs online, ${CPU:-unknown CPU}; $(uname -sr);" \
        "load average at the start: $LOADAVG. Library: $COMMIT."
    echo
    echo "| measurement | reference (raw C client) | library | ratio | target | result |"
    echo "|---|---|---|---|---|---|"
    printf '%s\n' "${ROWS[@]}"
    echo
    for note in "${NOTES[@]+"${NOTES[@]}"}"; do echo "- $note"; done
    [ ${#NOTES[@]} -gt 0 ] && echo
    cat "$(dirname "$0")/missed.md"
    cat <<EOF
## Method

- **Canned server** (\`bench/canned_server.c\`): answers every request at once with Hydra
  4.0.2's verbatim reply, on two socketpairs: \`PMI_FD\` for the library and
  \`BENCH_RAW_FD\` for the raw client, in the same process and the same \`poll\` loop, so
  both see the same server. It forks and execs the client program ($PINNOTE), so
  \`strace\` and \`valgrind\` wrap the client only.
- **Client overhead** (\`bench/pmi_bench.c overhead $ROUNDS $N\`): after \`PMI_Init\`,
  \`PMI_KVS_Get_my_name\` and a warm-up, $ROUNDS rounds; in each round and for each
  operation, $N raw round trips and $N library calls, the order alternating between
  rounds. Keys, values and raw request lines are formatted before the clock starts; the
  raw client does one \`write\` of the preformatted line and \`read\`s until the newline;
  the library is sent the same bytes. Gets and puts use keys never used before (so every
  get is a round trip and the cache grows); the cached get repeats one key already read.
  Times are the medians over rounds; the ratio is the median of the per-round ratios
  (library/raw; for the cached get, raw round trip/cached call), with its interquartile range.
  A target "≤ X" on such a ratio is **met** when the interquartile range lies below X, a
  **tie** when it holds X, and **missed** when it lies above.
  \`pmi_bench2\` is the same program built for \`libpmi2.so.0\` (\`-DBENCH_PMI2\`): PMI-2
  calls (\`PMI2_KVS_Get\` with the source-rank hint, \`PMI2_KVS_Put\`, \`PMI2_KVS_Fence\`)
  against a raw client that writes the same preformatted frames and reads each framed
  reply; the canned server answers PMI-2 frames as Hydra 4.0.2 does.
- **Second reference**: MPICH 4.0.2's simple PMI-1 client (\`src/pmi/simple/*.c\` and the
  mpl functions it calls, from Debian's MPICH source, built by
  \`scripts/build-mpich.sh --simple-pmi\` into a standalone \`libpmi.so.0\`), and its
  simple PMI-2 client (\`src/pmi/pmi2/simple/*.c\`, a standalone \`libpmi2.so.0\`, built
  as a single-threaded MPICH process runs it: its locks skipped) for the PMI-2 rows. In the
  overhead run it is a third client on its own connection (\`BENCH_REF_FD\`), loaded with
  \`dlopen(RTLD_DEEPBIND)\`, in the same rounds, each client first in turn; its rows give
  its time with its ratio to the raw client, and the library's ratio to it (median of
  the per-round ratios, with the interquartile range). In the wire-up rows it is the
  library's program run on MPICH's client (\`LD_LIBRARY_PATH\`), in the same
  repetitions; the ratio is the median of the per-repetition ratios.
- **Instructions per call**: callgrind's instruction count of the client process for
  \`pmi_bench count OP N\` (OP alone, after \`raw\` or after \`ref\`) at N = $N1 and $N2,
  the difference divided by $((N2 - N1)); the benchmark loop's own formatting of each key
  is in every column.
- **Cold \`PMI_Init\`**: \`pmi_bench init\` $RUNS times, the raw client's two round trips
  before \`PMI_Init\` in odd runs and after it in even runs; medians. The instructions are
  callgrind's inclusive count for \`PMI_Init\`, the page faults \`getrusage\`'s minor
  faults across the call. The process has allocated once before (as any process
  reaching \`PMI_Init\` has), so the heap's first setup is not counted. $REF's row
  is \`pmi_bench init ref\` after each run: its library loaded by \`dlopen\` before the
  clock starts, its \`PMI_Init\` timed the same way.
- **System calls**: \`strace -f -c\` on \`pmi_bench count OP N\` (init, a warm-up of 100
  operations, N operations, finalize) for N = $N1 and $N2; the difference divided by
  $((N2 - N1)), per system call. The reference column is the raw client doing the same.
- **Heap allocations**: valgrind's "total heap usage: X allocs" for the same runs, the
  difference divided by $((N2 - N1)). Steady state: barriers, gets of a cached key, gets of a
  key the server lacks (a whole uncached round trip without cache growth). Gets and puts
  of new keys grow the get cache and the put-once record; that growth is shown apart.
- **PMI_Init**: $RUNS runs; the lines the library sent during \`PMI_Init\` are counted by the
  canned server; the time is the median of the first (cold) \`PMI_Init\` of each
  process; the reference is the same two round trips done raw afterwards.
- **Clique**: $RUNS runs with \`PMI_SIZE=1048576 PMI_RANK=1000000\` and the canned
  server answering \`PMI_process_mapping\` with \`(vector,(0,4096,256))\`: the first
  \`PMI_Get_clique_size\` + \`PMI_Get_clique_ranks\` (after \`PMI_KVS_Get_my_name\`, so it
  includes exactly one get round trip), median. Parse and clique alone:
  \`bench/src/mapping_bench.rs\` calls \`pmi::mapping::Mapping::parse\` and \`clique\`
  (median of 501 iterations, and the first, cold one).
- **Loading the library**: \`pmi_bench load\` starts $LOAD_N processes at once with
  \`posix_spawn\` and waits for them, $REPS batches per program, each program first in
  turn: \`bench/loadonly.c\` linked with this library (which it never calls), the same
  program on $REF (\`LD_LIBRARY_PATH\`), and the program built without a library. The
  figure is the children's CPU time (user and system, \`getrusage\`) divided by $LOAD_N:
  on 2 cores, what every rank of a job costs the others before its \`main\`. The ratio
  is the median of the per-batch ratios.
- **Wire-up** (\`bench/wireup_lib.c\` against \`bench/wireup_raw.c\`, the minimal C client
  speaking the wire directly): \`$MPIEXEC -launcher fork -hosts a:N\` (one node) and
  \`-hosts a:N/2,b:N/2\` (two simulated nodes), \`-n N\`. Each rank: init, the maxima, the
  kvsname, two business cards put, commit, barrier, the 2N cards read and checked,
  barrier; each rank times from before init to after the last barrier and prints it;
  a job's figure is the largest over its ranks; the median of $REPS jobs per client,
  the clients alternating. In brackets, each rank's CPU time (user and system) and
  minor page faults from \`getrusage\` just after its last barrier, loading included:
  the median over the jobs of the ranks' mean.
- **Wire-up under Slurm** (\`bench/wireup_lib.c\` alone): \`srun --mpi=pmix -n N\` (the
  library's PMIx backend: \`PMIx_Put\`, \`PMIx_Commit\`, \`PMIx_Fence\` collecting data,
  then every get served by the PMIx client from its local copy) against
  \`srun --mpi=pmi2 -n N\` (the PMI-1 wire: every get a round trip to slurmstepd), on
  the private one-node Slurm of \`scripts/slurm.sh\`, the two alternating; each figure is
  the largest over the ranks, the median of $REPS jobs, with \`PMI_Init\` alone in
  brackets (under PMIx it loads libpmix and runs \`PMIx_Init\`).
- Raw outputs of the last run are in \`${LOG#"$PWD"/}/\`.
EOF
    # The parts written otherwise (bench/scale.sh's, and those measured by hand), each
    # between its "<!-- NAME: begin" and "<!-- NAME: end -->" lines, are kept as they were.
    [ -f "$OUT" ] && awk '/^<!-- [a-z0-9-]+: begin/ { keep = 1; print "" } keep { print }
        /^<!-- [a-z0-9-]+: end -->/ { keep = 0 }' "$OUT"
} >"$OUT.tmp"
mv "$OUT.tmp" "$OUT"
cat "$OUT"
