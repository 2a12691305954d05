#!/usr/bin/awk -f
# The table of hosts that fail mid-job (scripts/hostfail.sh), in Markdown, from the
# harness's results file (SUITE<TAB>LAUNCHER<TAB>CASE<TAB>VERDICT<TAB>DETAIL): one row per
# launcher and case, in the order run, its verdict and what happened (the detail the
# runner recorded: when the ranks on the surviving host ended and how, the launcher's
# exit, what was left on the hosts). timeout names PMI_TIMEOUT in the heading.
BEGIN {
    FS = "\t"
    title["hydra4-vc"] = "Hydra 4.0.2, `PMI_FD`, 2 hosts"; title["hydra4-port-vc"] = "Hydra 4.0.2, `-pmi-port`, 2 hosts"
    title["hydra5-vc"] = "Hydra 5.0.2, 2 hosts"; title["impi-vc"] = "Intel MPI Hydra, 2 hosts"
    title["srun-vc"] = "`srun --mpi=pmi2`, 2 hosts"; title["srun-pmix-vc"] = "`srun --mpi=pmix`, 2 hosts"
    title["prterun-vc"] = "`prterun`, 2 hosts"
    # On this host, two simulated nodes (no link to cut).
    title["hydra4"] = "Hydra 4.0.2, `PMI_FD`, one host"; title["hydra5"] = "Hydra 5.0.2, one host"
    title["hydra4-port"] = "Hydra 4.0.2, `-pmi-port`, one host"
    title["impi"] = "Intel MPI Hydra, one host"
    fault["link"] = "vc2's link cut"; fault["proxy"] = "rank 3's proxy or daemon killed"
    fault["launcher"] = "the launcher killed"
}
$1 == "hostfail" {
    split($3, part, "-") # hostfail-FAULT-CALL-API
    verdict = $4 == "PASS" ? "pass" : "**FAIL**"
    detail = $5
    gsub(/\|/, "\\|", detail)
    gsub(/pid [0-9]+/, "pid N", detail)
    gsub(/ \([0-9]+\)/, "", detail)
    gsub(/PMI_FD [0-9]+/, "PMI_FD N", detail)
    gsub(/PMI_PORT [^ ]+ /, "PMI_PORT HOST:PORT ", detail)
    gsub(/tcp4:\/\/[0-9.]+:[0-9]+/, "tcp4://ADDR:PORT", detail)
    gsub(/-[0-9]+@/, "-N@", detail)
    gsub(/pmix-server\.[0-9]+/, "pmix-server.N", detail)
    row[++n] = "| " ($2 in title ? title[$2] : $2) " | " fault[part[2]] " | " \
        (part[3] == "get" ? "a get" : "barrier") " | " (part[4] == "pmi2" ? "PMI-2" : "PMI-1") " | " \
        verdict " | " detail " |"
}
END {
    print "| launcher | fault | ranks wait in | API | verdict (PMI_TIMEOUT=" timeout ") | what happened (seconds after the fault) |"
    print "|---|---|---|---|---|---|"
    for (i = 1; i <= n; i++) print row[i]
}
