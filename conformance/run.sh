#!/usr/bin/env bash
# The conformance kit: run the conformance programs under a launcher and print the
# report.
#
#   conformance/run.sh --launcher "mpiexec.hydra -launcher fork -n 4" --bin DIR \
#                      [--api 1|2] [--lib DIR] [--logs DIR] [--ids FILE]
#
# Two jobs are run with the same launcher:
#   DIR/conform  the RFC 13 behaviours through libpmi.so.0 (from --lib, put first on
#                LD_LIBRARY_PATH): PASS/FAIL per behaviour, and the server deviations
#                it sees through the library;
#   DIR/probe    a raw PMI-1.1 wire client that does not use the library: what the server
#                does with requests the library refuses to send.
# With --api 2, DIR/conform2 and DIR/probe2 instead: the PMI-2 API through libpmi2.so.0,
# and a raw PMI-2 wire client.
# Each process prints "@@conf RANK KIND ID TEXT" lines; they are gathered here.
# --ids FILE receives one "KIND ID" line per verdict (for check-conformance).
# Exit status: 1 if a behaviour FAILed, else 0 (deviations do not count).
set -u
launcher="" bin="" lib="" logs="" ids="" api=1
while [ $# -gt 0 ]; do
    case $1 in
        --launcher) launcher=$2; shift 2 ;;
        --bin) bin=$2; shift 2 ;;
        --lib) lib=$2; shift 2 ;;
        --logs) logs=$2; shift 2 ;;
        --ids) ids=$2; shift 2 ;;
        --api) api=$2; shift 2 ;;
        *) echo "conformance/run.sh: unknown argument $1" >&2; exit 2 ;;
    esac
done
if [ -z "$launcher" ] || [ -z "$bin" ]; then
    echo "usage: conformance/run.sh --launcher \"LAUNCHER ARGS\" --bin DIR [--api 1|2] [--lib DIR] [--logs DIR] [--ids FILE]" >&2
    exit 2
fi
case $api in
    1) conform=conform probe=probe title="PMI-1 conformance report (RFC 13)" tests="maxes-before-init \
        before-init init maxes kvsname kvs-exchange put-once validation missing-key universe-size \
        appnum clique barrier-sync group-barrier names spawn finalize" ;;
    2) conform=conform2 probe=probe2 title="PMI-2 conformance report (the PMI-2 API and wire)" \
        tests="before-init init job-id kvs-exchange put-once validation job-attrs value-length \
        node-attrs names ring spawn missing-key finalize" ;;
    *) echo "conformance/run.sh: --api is 1 or 2" >&2; exit 2 ;;
esac
bin=$(cd "$bin" && pwd)
# The harness gives the clean environment and puts --lib first on LD_LIBRARY_PATH.
source "$(dirname "$0")/../scripts/harness.sh" "${logs:-$bin/logs}" "$lib"
logs=$logdir

read -r -a L <<<"$launcher"
timeout -k 5 "$HARNESS_TIMEOUT" "${L[@]}" "$bin/$conform" >"$logs/$conform.out" 2>"$logs/$conform.err"
conform_status=$?
timeout -k 5 "$HARNESS_TIMEOUT" "${L[@]}" "$bin/$probe" >"$logs/$probe.out" 2>"$logs/$probe.err"
probe_status=$?

# Launchers may prefix each line (srun --label, flux run --label-io): match anywhere.
grep -aho '@@conf .*' "$logs/$conform.out" "$logs/$probe.out" | awk \
    -v launcher="$launcher" -v cstatus="$conform_status" -v pstatus="$probe_status" \
    -v logs="$logs" -v ids="$ids" -v title="$title" -v tests="$tests" -v conform="$conform" \
    -v probe="$probe" '
function add_test(id) { if (!(id in tkind)) { torder[++nt] = id; tkind[id] = "" } }
BEGIN {
    # The report lists the tests in this order, whichever process printed first.
    n = split(tests, fixed, " ")
    for (i = 1; i <= n; i++) add_test(fixed[i])
}
{
    who = $2; kind = $3; id = $4
    text = $0; sub(/^@@conf [^ ]+ [^ ]+ [^ ]+ ?/, "", text)
    if (kind == "INFO") {
        if (id == "size" && who ~ /^[0-9]+$/) size = text + 0
        else if (id == "done") done[who] = 1
        else if (id == "probe-done") pdone[who] = 1
        else if (!(id in info)) info[id] = text
        else if (id == "kvsname" && info[id] != text) info[id] = info[id] " / " text
        next
    }
    if (kind == "DEV") {
        if (!(id in dev)) { dorder[++nd] = id; dev[id] = text }
        if (id == "get-missing-waits") { if (who ~ /^p/) pwaits = 1; else waits = 1 }
        next
    }
    add_test(id)
    if (kind == "FAIL") {
        if (tkind[id] != "FAIL") { tkind[id] = "FAIL"; ttext[id] = text " (process " who ")" }
    } else if (kind == "PASS") {
        if (tkind[id] == "" || tkind[id] == "SKIP") { tkind[id] = "PASS"; ttext[id] = text }
    } else if (kind == "SKIP") {
        if (tkind[id] == "") { tkind[id] = "SKIP"; ttext[id] = text }
    }
}
END {
    # The job as a whole: every rank finished, the launcher exited 0.
    ndone = 0; for (r in done) ndone++
    add_test("all-ranks")
    # Where the server never answers a get of a missing key, the processes leave with it
    # pending, without finalize: a launcher may then report failure (the Hydra of MPICH 5.0.2
    # does, at times). Their "done" lines are what counts there.
    # (per job: the lines of the probe come from processes named pN)
    if (size > 0 && ndone == size && waits) {
        tkind["all-ranks"] = "PASS"
        ttext["all-ranks"] = "every one of the " size " processes ran every test; they left with a get pending (get-missing-waits), the launcher exited " cstatus
    } else if (size > 0 && ndone == size && cstatus == 0) {
        tkind["all-ranks"] = "PASS"
        ttext["all-ranks"] = "every one of the " size " processes ran every test and finalized; the launcher exited 0"
    } else {
        tkind["all-ranks"] = "FAIL"
        ttext["all-ranks"] = ndone " of " size " processes finished, the launcher exited " cstatus " (see " logs "/" conform ".err)"
    }
    # The raw probe saw the server do PMI 1.2 group barriers: the library may not refuse them.
    if (info["groups"] == "refused" && ("pmi-1.2" in info) && tkind["group-barrier"] != "FAIL") {
        tkind["group-barrier"] = "FAIL"
        ttext["group-barrier"] = "the library refused group barriers that the server does (the raw probe: " info["pmi-1.2"] ")"
    }
    npdone = 0; for (r in pdone) npdone++
    # (A launcher with no PMI-1 wire, a PMIx one, has nothing to probe: the probe SKIPs.)
    if ((npdone != size || (pstatus != 0 && !pwaits)) && !("probe-incomplete" in dev) && tkind["probe"] != "SKIP") {
        dorder[++nd] = "probe-incomplete"
        dev["probe-incomplete"] = "the raw wire probe finished on " npdone " of " size " processes, the launcher exited " pstatus " (see " logs "/" probe ".err)"
    }

    lib = "? (no process reported)"; if ("library" in info) lib = info["library"]
    mode = "?"; if ("mode" in info) mode = info["mode"]
    kvs = "?"; if ("kvsname" in info) kvs = info["kvsname"]
    n = "?"; if (size > 0) n = size
    printf "%s\n", title
    printf "  launcher  %s\n", launcher
    printf "  library   %s\n", lib
    printf "  job       %s mode, %s processes, kvsname %s\n", mode, n, kvs
    if ("missing-calls" in info) printf "  left out  %s: not in the library\n", info["missing-calls"]
    if ("refusals" in info) printf "  left out  %s\n", info["refusals"]
    if ("maxes" in info) printf "  maxes     %s\n", info["maxes"]
    if ("server-version" in info) printf "  server    %s\n", info["server-version"]
    if ("process-mapping" in info) printf "  mapping   %s\n", info["process-mapping"]
    if ("universe-size" in info) printf "  universe  %s, appnum %s\n", info["universe-size"], info["appnum"]
    if ("missing-key-reply" in info) printf "  no key    %s\n", info["missing-key-reply"]

    printf "\nBEHAVIOUR (the library under this launcher)\n"
    passed = failed = skipped = 0
    for (i = 1; i <= nt; i++) {
        id = torder[i]; k = tkind[id]
        if (k == "") { k = "FAIL"; ttext[id] = "not reported by any process" }
        if (k == "PASS") passed++; else if (k == "FAIL") failed++; else skipped++
        printf "  %-4s  %-19s %s\n", k, id, ttext[id]
        if (ids != "") print k, id > ids
    }
    printf "\nSERVER DEVIATIONS (findings about the process manager, not failures of the library)\n"
    if (nd == 0) printf "  none detected\n"
    if (failed) printf "  (with FAILs above, a deviation seen through the library may be the library'"'"'s doing)\n"
    for (i = 1; i <= nd; i++) {
        printf "  DEV   %-19s %s\n", dorder[i], dev[dorder[i]]
        if (ids != "") print "DEV", dorder[i] > ids
    }
    sk = ""; if (skipped) sk = " (" skipped " skipped)"
    printf "\nconformance: %d passed, %d failed, %d deviations%s\n", passed, failed, nd, sk
    exit failed ? 1 : 0
}'
