#!/usr/bin/awk -f
# The scale bench's report (bench/scale.sh): reads scale.tsv (launcher, layout, n, client,
# rep, wall_s, launcher_cpu_s, rank_cpu_ms, rank_rss_kb, rank_private_kb, ok), prints the tables in
# Markdown and draws the curves into the SVG file `svg` (log-log, one line a launcher and
# client, one panel a layout). Every figure is a median over the good repetitions; a
# ratio is the median of the per-repetition ratios (the pairs ran side by side), with
# its interquartile range.
BEGIN { FS = "\t"; MEM_ALLOWANCE_KB = 4 }
# mixed.tsv (launcher, layout, n, rep, client, ranks, rank_cpu_ms, rank_private_kb, ok):
# the jobs whose ranks took the clients in turn.
FILENAME ~ /mixed\.tsv$/ {
    g = $1 SUBSEP $2 SUBSEP $3
    if (!(g in mseen)) { mseen[g] = 1; mgroups[++nmg] = g }
    if ($9 != 1) { if (!((g, $4) in mbad)) mfailed[g]++; mbad[g, $4] = 1; next }
    if (!((g, $4) in mrseen)) { mrseen[g, $4] = 1; mreps[g, ++nmr[g]] = $4 }
    mcpu[g, $4, $5] = $7; mpriv[g, $4, $5] = $8
    next
}
{
    k = $1 SUBSEP $2 SUBSEP $3 SUBSEP $4
    if (!(k in seen)) { seen[k] = 1; keys[++nk] = k }
    ran[$1, $2, $3] = 1
    if (!(($1 SUBSEP $2 SUBSEP $4) in sseen)) {
        sseen[$1 SUBSEP $2 SUBSEP $4] = 1; series[++ns] = $1 SUBSEP $2 SUBSEP $4
    }
    if (!($3 in nseen)) { nseen[$3] = 1; sizes[++nn] = $3 + 0 }
    if (!($2 in lseen)) { lseen[$2] = 1; layouts[++nl] = $2 }
    jobs[k]++
    if ($5 > reps_at[$3]) reps_at[$3] = $5
    if ($5 > reps) reps = $5
    if ($11 != 1) { failed[k]++; next }
    good[k]++
    wall[k, $5] = $6; own[k, good[k]] = $7; cpu[k, good[k]] = $8; rss[k, good[k]] = $9; priv[k, good[k]] = $10
    w[k, good[k]] = $6
}

# q(a, count, p): the p-quantile (0..1) of a[1..count] (sorted in place), interpolated
# between the nearest ranks (with 3 values: the quartiles are the midpoints).
function q(a, count, p,    i, j, t, pos, lo) {
    for (i = 2; i <= count; i++)
        for (j = i; j > 1 && a[j - 1] > a[j]; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
    if (count == 0) return "nan"
    pos = p * (count - 1) + 1; lo = int(pos)
    if (lo >= count) return a[count]
    return a[lo] + (pos - lo) * (a[lo + 1] - a[lo])
}
function med(src, k,    a, i) { for (i = 1; i <= good[k]; i++) a[i] = src[k, i]; return q(a, good[k], 0.5) }
# The reference each client is held against, under each launcher.
function ref_of(L, c) {
    if (c == "lib" && (L == "hydra4" || L == "srun")) return "mpich"
    if (c == "lib2" && (L == "hydra4" || L == "srun")) return "mpich2"
    if (c == "lib" && L == "flux") return "fluxlib"
    if (c == "lib") return "pmix"
    return ""
}
# ratio(k, kref): "median [q1–q3]" of the per-repetition ratios of k's wall time to kref's.
function ratio(k, kref,    a, m, r) {
    m = 0; ratio_med = ""
    for (r = 1; r <= reps; r++)
        if (((k, r) in wall) && ((kref, r) in wall) && wall[kref, r] > 0) a[++m] = wall[k, r] / wall[kref, r]
    if (m == 0) return ""
    ratio_med = q(a, m, 0.5)
    return sprintf("%.3f× [%.3f–%.3f]", ratio_med, q(a, m, 0.25), q(a, m, 0.75))
}
function lname(l) { return l == 1 ? "one host" : l " hosts" }
function fit(x, y, m,    i, sx, sy, sxx, sxy) {  # slope of ln y on ln x
    sx = sy = sxx = sxy = 0
    for (i = 1; i <= m; i++) { sx += log(x[i]); sy += log(y[i]); sxx += log(x[i])^2; sxy += log(x[i]) * log(y[i]) }
    if (m < 2 || m * sxx - sx * sx == 0) return "nan"
    return (m * sxy - sx * sy) / (m * sxx - sx * sx)
}
END {
    for (i = 2; i <= nn; i++) for (j = i; j > 1 && sizes[j - 1] > sizes[j]; j--) { t = sizes[j]; sizes[j] = sizes[j - 1]; sizes[j - 1] = t }
    print heading != "" ? heading : "## Scale: the wire-up as a user waits for it (`bench/scale.sh`)"
    print ""
    if (svg != "") { print "![whole-job time against n, log-log](docs/scale.svg)"; print "" }
    rtxt = ""
    for (z = 1; z <= nn; z++) rtxt = rtxt (z > 1 ? ", " : "") reps_at[sizes[z]] " at n = " sizes[z]
    print "Whole job from the launcher's start to its exit (`bench/jobtime.c`), median of the paired"
    print "repetitions (" rtxt "), a client and its reference back to back, either first in turn; per rank, the CPU time, the peak RSS"
    print "(VmHWM: the rank's own since its exec) and the private memory (Private_Dirty of"
    print "/proc/self/smaps_rollup: the pages the rank wrote, not the shared page cache that the"
    print "RSS counts too) each rank reported after its last barrier (mean over the ranks, median"
    print "over the jobs; a failed job is left out and counted beside the figure); the"
    print "launcher's own CPU is the launcher command's and its waited-for descendants' less the"
    print "ranks' as they reported it at their last barrier (so it keeps the ranks' finalize and"
    print "exit, and for `none`, which reports nothing, the ranks' whole exec and exit; under srun,"
    print "flux, and prterun across hosts, the command's alone: slurmstepd, Flux's job shells and the"
    print "other hosts' daemons are not counted). Ratio: the median of the"
    print "per-repetition ratios to the reference named, [interquartile range]."
    print ""
    print "| launcher | hosts | n | client | whole job s | ratio to reference | per rank CPU ms | per rank peak RSS KiB | per rank private KiB | launcher CPU s |"
    print "|---|---|---|---|---|---|---|---|---|---|"
    for (s = 1; s <= ns; s++) {
        split(series[s], p, SUBSEP)
        for (z = 1; z <= nn; z++) {
            k = p[1] SUBSEP p[2] SUBSEP sizes[z] SUBSEP p[3]
            if (!(k in seen)) continue
            if (!good[k]) { printf "| %s | %s | %d | %s | failed (%d of %d) | | | | | |\n", p[1], p[2], sizes[z], p[3], failed[k], jobs[k]; continue }
            rc = ref_of(p[1], p[3]); rtxt = ""
            if (rc != "") {
                kr = p[1] SUBSEP p[2] SUBSEP sizes[z] SUBSEP rc
                if (kr in seen) {
                    rtxt = ratio(k, kr)
                    if (rtxt != "") { rtxt = rtxt " " rc; target[p[1], p[2], sizes[z], p[3]] = ratio_med }
                    # Jobs that failed on either side are not in the pairs: said, and
                    # the library's own make the cell a miss (tg).
                    if (failed[k] || failed[kr])
                        tfail[p[1], p[2], sizes[z], p[3]] = sprintf("%d of %d failed, %s %d of %d", failed[k], jobs[k], rc, failed[kr], jobs[kr])
                }
            }
            printf "| %s | %s | %d | %s | %.3f%s | %s | %.1f | %.0f | %.0f | %.2f |\n", p[1], p[2], sizes[z], p[3],
                med(w, k), failed[k] ? " (" failed[k] " failed)" : "", rtxt, med(cpu, k), med(rss, k), med(priv, k), med(own, k)
            mwall[k] = med(w, k); mcpu[k] = med(cpu, k)
        }
    }
    print ""
    print "Growth: the exponent b of a fit of a·n^b (least squares on logarithms, over the sizes"
    print "the row names) to the whole-job time and to each rank's CPU time (the cost per rank as n grows)."
    print ""
    print "| launcher | hosts | client | n fitted | whole job b | per rank CPU b |"
    print "|---|---|---|---|---|---|"
    for (s = 1; s <= ns; s++) {
        split(series[s], p, SUBSEP); m = 0; delete xs; delete ys; delete cs; fitted = ""
        for (z = 1; z <= nn; z++) {
            k = p[1] SUBSEP p[2] SUBSEP sizes[z] SUBSEP p[3]
            if (k in mwall && mwall[k] > 0 && mcpu[k] > 0) {
                m++; xs[m] = sizes[z]; ys[m] = mwall[k]; cs[m] = mcpu[k]
                fitted = fitted (fitted == "" ? "" : ", ") sizes[z]
            }
        }
        # (Two sizes at least; `none` reports no CPU time.)
        if (m < 2) continue
        printf "| %s | %s | %s | %s | %.2f | %.2f |\n", p[1], p[2], p[3], fitted, fit(xs, ys, m), fit(xs, cs, m)
    }
    # The issue's targets, each from the pairs above (tg prints the table's head first).
    tg("this library ≤ MPICH's simple client (≤ 1.00×)", "hydra4", "lib", 1.00)
    tg("this library ≤ MPICH's simple client (≤ 1.00×)", "srun", "lib", 1.00)
    tg("this library's PMI-2 ≤ MPICH's simple PMI-2 client (≤ 1.00×)", "hydra4", "lib2", 1.00)
    tg("this library's PMI-2 ≤ MPICH's simple PMI-2 client (≤ 1.00×)", "srun", "lib2", 1.00)
    tg("PMIx backend ≤ 1.10× a native PMIx client", "srun-pmix", "lib", 1.10)
    tg("PMIx backend ≤ 1.10× a native PMIx client", "prterun", "lib", 1.10)
    share()
    if (nmg) mixed()
    if (svg != "") draw()
}
# The mixed jobs: per job, the mean CPU time of a rank of each client, and the ratios to
# MPICH's client's within the job; medians over the good jobs, [interquartile range].
function mixed(    z, g, p, i, r, m, a, b, cl, cm, cr, met, txt, d, pl, pm, mmet, mtxt) {
    print ""
    print "Per rank, in one job: the ranks of each job took the PMI-1 clients in turn (rank r"
    print "the (r + repetition) mod 3-th of this library, MPICH's simple client and the raw"
    print "wire client; `bench/byrank.c`), so every client met the same load at the same"
    print "time, and the ratio of a rank's mean CPU time (start to last barrier) is taken"
    print "within each job; so is the difference of a rank's mean private memory (after its last"
    print "barrier). Medians over the jobs, [interquartile range]."
    print ""
    print "| launcher | hosts | n | jobs | this library ms | MPICH's ms | raw ms | this library / MPICH's | raw / MPICH's | private KiB: this library, MPICH's | this library − MPICH's KiB |"
    print "|---|---|---|---|---|---|---|---|---|---|---|"
    met = 1; txt = ""; mmet = 1; mtxt = ""
    for (z = 1; z <= nmg; z++) {
        g = mgroups[z]; split(g, p, SUBSEP); m = 0
        delete a; delete b; delete cl; delete cm; delete cr; delete d; delete pl; delete pm
        for (i = 1; i <= nmr[g]; i++) {
            r = mreps[g, i]
            if ((g, r) in mbad || !mcpu[g, r, "mpich"]) continue
            m++; cl[m] = mcpu[g, r, "lib"]; cm[m] = mcpu[g, r, "mpich"]; cr[m] = mcpu[g, r, "raw"]
            a[m] = cl[m] / cm[m]; b[m] = cr[m] / cm[m]
            pl[m] = mpriv[g, r, "lib"]; pm[m] = mpriv[g, r, "mpich"]; d[m] = pl[m] - pm[m]
        }
        if (!m) { printf "| %s | %s | %d | failed | | | | | | | |\n", p[1], p[2], p[3]; met = mmet = 0; continue }
        printf "| %s | %s | %d | %d%s | %.2f | %.2f | %.2f | %.3f× [%.3f–%.3f] | %.3f× [%.3f–%.3f] | %.0f, %.0f | %+.1f [%+.1f – %+.1f] |\n",
            p[1], p[2], p[3], m, mfailed[g] ? " (" mfailed[g] " failed)" : "", q(cl, m, 0.5), q(cm, m, 0.5), q(cr, m, 0.5),
            q(a, m, 0.5), q(a, m, 0.25), q(a, m, 0.75), q(b, m, 0.5), q(b, m, 0.25), q(b, m, 0.75),
            q(pl, m, 0.5), q(pm, m, 0.5), q(d, m, 0.5), q(d, m, 0.25), q(d, m, 0.75)
        # A cell with failed jobs (a rank of any client) is not taken as met.
        if (q(a, m, 0.5) > 1.00 || mfailed[g]) met = 0
        if (q(d, m, 0.5) > MEM_ALLOWANCE_KB || mfailed[g]) mmet = 0
        ftxt = mfailed[g] ? " (failed jobs: " mfailed[g] ")" : ""
        txt = txt (txt == "" ? "" : "; ") p[1] ", " lname(p[2]) ", n = " p[3] ": " sprintf("%.3f", q(a, m, 0.5)) ftxt
        mtxt = mtxt (mtxt == "" ? "" : "; ") p[1] ", " lname(p[2]) ", n = " p[3] ": " sprintf("%+.1f", q(d, m, 0.5)) ftxt
    }
    print ""
    printf "Target, per rank in one job: this library ≤ MPICH's simple client (≤ 1.00×): %s (%s).\n",
        met ? "**met**" : "**missed**", txt
    print ""
    print "Target, memory per rank in one job: this library's private memory ≤ MPICH's client's plus"
    print "what its own records keep, here one page (" MEM_ALLOWANCE_KB " KiB: the record of the rank's own two cards;"
    print "the get cache keeps nothing in this job, where each card is read once): " (mmet ? "**met**" : "**missed**") " (KiB: " mtxt ")."
}
function tg(what, L, c, limit,    l, z, all, txt, any, notrun) {
    for (l = 1; l <= nl; l++) {
        all = 1; txt = ""; any = 0; notrun = ""
        for (z = 1; z <= nn; z++)
            if ((L, layouts[l], sizes[z], c) in target) {
                any = 1; x = target[L, layouts[l], sizes[z], c]
                txt = txt sprintf("%s%d: %.3f", txt == "" ? "" : ", ", sizes[z], x)
                if (x > limit) all = 0
                if ((L, layouts[l], sizes[z], c) in tfail) {
                    txt = txt " (" tfail[L, layouts[l], sizes[z], c] ")"
                    if (failed[L SUBSEP layouts[l] SUBSEP sizes[z] SUBSEP c]) all = 0
                }
            } else if ((L SUBSEP layouts[l] SUBSEP sizes[z] SUBSEP c) in seen) {
                all = 0; txt = txt sprintf("%s%d: no pair", txt == "" ? "" : ", ", sizes[z])
                if ((L, layouts[l], sizes[z], c) in tfail) txt = txt " (" tfail[L, layouts[l], sizes[z], c] ")"
            } else if ((L, layouts[l], sizes[z]) in ran)
                notrun = notrun (notrun == "" ? "" : ", ") sizes[z]
        # (A size this client was not run at, where others were, is no pair either way.)
        if (notrun != "") txt = txt sprintf("%snot run at %s", txt == "" ? "" : "; ", notrun)
        if (any && !tghead++) {
            print ""
            print "| target | where | met at every n? | ratios (n: median) |"
            print "|---|---|---|---|"
        }
        if (any) printf "| %s | %s, %s | %s | %s |\n", what, L, lname(layouts[l]),
            !all ? "**missed**" : notrun == "" ? "**met**" : "**met where run**", txt
    }
}
# Where the launcher is the cost: the launcher alone (client none: a program that exits at
# once) against each client's job, and each client's time beyond it, this library's
# against its reference's.
function share(    s, p, z, k, kn, kr, rc, beyond, rbeyond) {
    print ""
    print "The launcher's share: the same launcher and layout starting a program that exits at"
    print "once (`none`, no PMI library), and each client's whole job beyond that, medians."
    print ""
    print "| launcher | hosts | n | launcher alone s | client | beyond the launcher s | reference beyond s | ratio beyond |"
    print "|---|---|---|---|---|---|---|---|"
    for (s = 1; s <= ns; s++) {
        split(series[s], p, SUBSEP)
        if (p[3] != "lib" && p[3] != "lib2") continue
        rc = ref_of(p[1], p[3])
        for (z = 1; z <= nn; z++) {
            k = p[1] SUBSEP p[2] SUBSEP sizes[z] SUBSEP p[3]
            kn = p[1] SUBSEP p[2] SUBSEP sizes[z] SUBSEP "none"
            kr = p[1] SUBSEP p[2] SUBSEP sizes[z] SUBSEP rc
            if (!(k in mwall) || !(kn in mwall)) continue
            beyond = mwall[k] - mwall[kn]
            rbeyond = (kr in mwall) ? mwall[kr] - mwall[kn] : ""
            printf "| %s | %s | %d | %s | %s | %.3f | %s | %s |\n", p[1], p[2], sizes[z],
                sprintf("%.3f", mwall[kn]) (failed[kn] ? sprintf(" (%d of %d jobs failed)", failed[kn], jobs[kn]) : ""), p[3],
                beyond, rbeyond == "" ? "" : sprintf("%.3f (%s)", rbeyond, rc),
                (rbeyond != "" && rbeyond > 0 && beyond > 0) ? sprintf("%.2f×", beyond / rbeyond) : "(within the noise)"
        }
    }
}
# The curves: one panel a layout, x = n and y = whole-job seconds, both logarithmic.
function draw(    W, H, pw, ph, lx, ty, l, s, z, k, p, ymin, ymax, xmin, xmax, px, py, d, c, col, first, dec, lg) {
    W = 1000; H = 480; pw = 400; ph = 300; ty = 40
    ymin = 1e9; ymax = 0
    for (k in mwall) { if (mwall[k] < ymin) ymin = mwall[k]; if (mwall[k] > ymax) ymax = mwall[k] }
    if (ymax <= 0) return
    ymin = 10 ^ int(log(ymin) / log(10) - (ymin < 1 ? 1 : 0)); ymax = 10 ^ (int(log(ymax) / log(10)) + 1)
    xmin = sizes[1]; xmax = sizes[nn]; if (xmax == xmin) xmax = xmin * 2
    printf "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" font-family=\"sans-serif\" font-size=\"12\">\n", W, H > svg
    printf "<rect width=\"%d\" height=\"%d\" fill=\"white\"/>\n", W, H > svg
    for (l = 1; l <= nl; l++) {
        lx = 70 + (l - 1) * (pw + 80)
        printf "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\" font-size=\"14\">whole-job time, %s</text>\n", lx + pw / 2, ty - 15, lname(layouts[l]) > svg
        printf "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"#444\"/>\n", lx, ty, pw, ph > svg
        for (dec = ymin; dec <= ymax * 1.0001; dec *= 10) {
            py = ty + ph - ph * log(dec / ymin) / log(ymax / ymin)
            printf "<line x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/><text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%g s</text>\n", lx, lx + pw, py, py, lx - 5, py + 4, dec > svg
        }
        for (z = 1; z <= nn; z++) {
            px = lx + pw * log(sizes[z] / xmin) / log(xmax / xmin)
            printf "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%d\" y2=\"%d\" stroke=\"#ddd\"/><text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%d</text>\n", px, px, ty, ty + ph, px, ty + ph + 16, sizes[z] > svg
        }
        printf "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">ranks (n)</text>\n", lx + pw / 2, ty + ph + 34 > svg
        c = 0
        for (s = 1; s <= ns; s++) {
            split(series[s], p, SUBSEP)
            c++
            if (p[2] != layouts[l]) continue
            d = ""; first = 1
            for (z = 1; z <= nn; z++) {
                k = p[1] SUBSEP p[2] SUBSEP sizes[z] SUBSEP p[3]
                if (!(k in mwall)) continue
                px = lx + pw * log(sizes[z] / xmin) / log(xmax / xmin)
                py = ty + ph - ph * log(mwall[k] / ymin) / log(ymax / ymin)
                d = d sprintf("%s%.1f,%.1f", first ? "M" : " L", px, py); first = 0
                printf "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"%s\"/>\n", px, py, color_of(p[3]) > svg
            }
            legend_index(p[1] ":" p[3])
            if (d != "") printf "<path d=\"%s\" fill=\"none\" stroke=\"%s\" stroke-width=\"2\" stroke-dasharray=\"%s\"/>\n", d, color_of(p[3]), dash_of(p[1]) > svg
        }
    }
    # The legend: a launcher's clients side by side, a line sample each.
    for (i = 1; i <= nlegend; i++) {
        split(legend[i], lp, ":")
        lx = 70 + ((i - 1) % 4) * 230; py = ty + ph + 58 + int((i - 1) / 4) * 18
        printf "<line x1=\"%d\" x2=\"%d\" y1=\"%d\" y2=\"%d\" stroke=\"%s\" stroke-width=\"2\" stroke-dasharray=\"%s\"/><text x=\"%d\" y=\"%d\">%s</text>\n", lx, lx + 26, py, py, color_of(lp[2]), dash_of(lp[1]), lx + 32, py + 4, legend[i] > svg
    }
    print "</svg>" > svg
    close(svg)
}
# A client's color, a launcher's dashes.
function color_of(c) {
    return c == "lib" ? "#d62728" : c == "lib2" ? "#ff7f0e" : c == "mpich" ? "#1f77b4" : \
        c == "mpich2" ? "#17becf" : c == "slurm2" ? "#9467bd" : c == "raw" ? "#7f7f7f" : \
        c == "pmix" ? "#2ca02c" : "#000000"
}
function dash_of(L) {
    return L == "hydra4" ? "none" : L == "srun" ? "7,3" : L == "srun-pmix" ? "2,3" : "9,3,2,3"
}
function legend_index(name,    i) {
    for (i = 1; i <= nlegend; i++) if (legend[i] == name) return i
    legend[++nlegend] = name
    return nlegend
}
