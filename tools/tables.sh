#!/usr/bin/env bash
# tables.sh DIR [PLOTDIR] - turn DIR/step*.csv (one per step, the harness's
# CSV) into markdown tables on stdout, and, given PLOTDIR, the .dat files the
# gnuplot scripts in plots/ draw.  run_all.sh calls it; so do the tests, on
# fixture CSVs.  Plain awk: no other dependency.
#
#   tables.sh DIR [PLOTDIR]   the summary (results/<gpu>/summary.md)
#   tables.sh --ladder DIR [PLOTDIR]  one table per part, one row per step (the
#                             step's own method), each under its chart in PLOTDIR:
#                             the README's results section
#   tables.sh --headline DIR  "STEP<TAB>cell": each step at its part's
#                             headline shape, its own method (the README's step table)
#   tables.sh --ceilings DIR  "PART<TAB>BOUND<TAB>VALUE<TAB>NAME": the ceiling
#                             each part's rows imply (throughput / % of ceiling)
#
# Summary: one table per part (steps as rows, sizes as columns, throughput and
# % of cuBLAS), then the cumulative tables (time, throughput, cuBLAS's
# throughput in the same run, % of cuBLAS, % of the ceiling) at the sizes the
# tutorial discusses.  Each row says its part and whether it is compute- or
# memory-bound (the CSV's last columns), so nothing here knows an operation's
# name; tools/parts.tsv names the parts and their headline shape,
# tools/methods.tsv each step's own method where it has several.  Columns are
# read by their header name.
set -euo pipefail
mode=summary
case ${1:-} in
    --ladder|--headline|--ceilings) mode=${1#--}; shift ;;
esac
dir=${1:?usage: tools/tables.sh [--ladder|--headline|--ceilings] RESULTS_DIR [PLOT_DIR]}
plotdir=${2:-}
here=$(cd "$(dirname "$0")/.." && pwd)
. "$here/tools/lib.sh"
shopt -s nullglob
mapfile -t files < <(step_csvs "$dir")
[ ${#files[@]} -gt 0 ] || { echo "tables.sh: no step*.csv in $dir" >&2; exit 1; }
# step number -> directory name (v7_tile_8x8), for row labels
names=$(step_dirs "$here")
# The GPU's full name, from the first step log that has one ("GPU 0: NVIDIA H100 80GB HBM3, sm_90, ...").
logs=("$dir"/step*.log)
gpuname=""
[ ${#logs[@]} -eq 0 ] || gpuname=$(sed -n 's/^GPU [0-9]*: \([^,]*\),.*/\1/p' "${logs[@]}" | head -n1 || true)

awk -F, -v names="$names" -v plotdir="$plotdir" -v gpu="$(basename "$dir")" -v gpuname="$gpuname" -v mode="$mode" \
    -v partsf="$here/tools/parts.tsv" -v methodsf="$here/tools/methods.tsv" '
function addpart(p) {   # a part not in parts.tsv: generic names, after the known ones
    if (p in known) return
    known[p] = 1; order[++nparts] = p
    short[p] = "Part " p; chart[p] = "Part " p; ceilname[p] = "ceiling"; cum[p] = ""; hshape[p] = ""
    title[p] = "Part " p " (" (compute[p] ? "TFLOPS" : "GB/s") " and % of cuBLAS)"
}
function label(p, s, v, m,   l) {
    l = (s in nm) ? nm[s] : "v" s
    if (v != "") l = l " " v
    if (mlabel[p]) l = l " m=" m
    return l
}
# A chart label: the step and its variant (v16 splitk m=4), or the step and its name (v7 tile_8x8).
function clabel(p, s, v, m,   l) {
    if (v != "") l = "v" s " " v
    else { l = (s in nm) ? nm[s] : "v" s; sub(/_/, " ", l) }
    if (mlabel[p]) l = l " m=" m
    return l
}
# A table whose rows run each n x k at several m (v16) labels rows with m;
# then, and where every row has m = 1 (GEMV), columns are n x k; else m x n x k.
function colkey(p, m, n, k) {
    if (mlabel[p] || !notm1[p]) return (n == k) ? n : n "x" k
    return (m == n && n == k) ? n : m "x" n "x" k
}
function addcol(p, c) { if (!((p, c) in hascol)) { hascol[p, c] = 1; cols[p, ++ncol[p]] = c } }
function addrow(p, r) { if (!((p, r) in hasrow)) { hasrow[p, r] = 1; rows[p, ++nrow[p]] = r } }
function g(i, name) { return D[i, name] }
BEGIN {
    n = split(names, a, "\n")
    for (i = 1; i <= n; i++) { split(a[i], b, " "); nm[b[1]] = b[2] }
    FS = "\t"
    while ((getline line < partsf) > 0) {
        if (line ~ /^#/ || line == "") continue
        split(line, f, "\t"); p = f[1]
        known[p] = 1; order[++nparts] = p
        short[p] = f[2]; chart[p] = f[3]; ceilname[p] = f[4]; cum[p] = f[5]; title[p] = f[6]; hshape[p] = f[7]
        mnk[p] = (f[8] == "mnk")
    }
    close(partsf)
    while ((getline line < methodsf) > 0) {
        if (line ~ /^#/ || line == "") continue
        split(line, f, "\t"); method[f[1]] = f[2]
    }
    close(methodsf)
    FS = ","
}
FNR == 1 { delete ci; for (j = 1; j <= NF; j++) ci[$j] = j; next }   # the header: columns by name
{
    ++nr
    for (h in ci) D[nr, h] = $(ci[h])
    if (D[nr, "part"] == "") D[nr, "part"] = "?"
}
END {
    # pass 1: the parts present, which are compute-bound, and their row and column rules
    for (i = 1; i <= nr; i++) {
        p = g(i, "part")
        if (g(i, "bound") == "compute") compute[p] = 1
        if (!(p in known)) addpart(p)
        seen[p] = 1
        if (g(i, "m") != 1) notm1[p] = 1
        key = p SUBSEP g(i, "step") SUBSEP g(i, "variant") SUBSEP g(i, "n") SUBSEP g(i, "k")
        if ((key in firstm) && firstm[key] != g(i, "m") && !mnk[p]) mlabel[p] = 1
        if (!(key in firstm)) firstm[key] = g(i, "m")
        s = g(i, "step")
        if (!(s in hasempty)) hasempty[s] = 0
        if (g(i, "variant") == "") hasempty[s] = 1
        if (!(s in firstvar)) firstvar[s] = g(i, "variant")
    }
    # pass 2: cells
    for (i = 1; i <= nr; i++) {
        s = g(i, "step"); m = g(i, "m"); n = g(i, "n"); k = g(i, "k"); v = g(i, "variant"); p = g(i, "part")
        r = label(p, s, v, m); c = colkey(p, m, n, k)
        addcol(p, c); addrow(p, r)
        rowstep[p, r] = s; rowvar[p, r] = v; rowm[p, r] = m; cl[p, r] = clabel(p, s, v, m)
        rate = compute[p] ? g(i, "tflops") : g(i, "gbps")
        pcb = g(i, "pct_cublas")
        cell = (rate == "") ? "-" : rate
        if (pcb != "") cell = cell " (" pcb "%)"
        if (g(i, "status") != "PASS") cell = cell " **FAIL**"
        val[p, r, c] = cell
        t[p, r, c] = g(i, "time_us"); rt[p, r, c] = rate; pc[p, r, c] = pcb; ce[p, r, c] = g(i, "pct_ceiling"); st[p, r, c] = g(i, "status")
        # cuBLAS on the same problem, same run: the step throughput scaled by the two times
        if (rate != "" && g(i, "cublas_time_us") > 0 && g(i, "time_us") > 0)
            cbr[p, r, c] = sprintf(compute[p] ? "%.3f" : "%.1f", rate * g(i, "time_us") / g(i, "cublas_time_us"))
        if (pcb != "" && pcb > 0) xc[p, r, c] = sprintf("%.2fx", pcb / 100)
        # The ceiling a part implies (throughput / fraction of the ceiling), from its row nearest
        # the ceiling: the CSV rounds % of ceiling to 0.1, least harmful where it is largest.
        pce = g(i, "pct_ceiling")
        if (pce > 0 && rate > 0 && (!(p in ceilpct) || pce + 0 > ceilpct[p])) { ceilpct[p] = pce + 0; ceil[p] = rate / (pce / 100) }
        # the step own method at the part headline shape (else at its largest problem)
        own = (s in method) ? (v == method[s]) : (hasempty[s] ? v == "" : v == firstvar[s])
        if (!own || g(i, "time_us") == "") continue
        shape = m "x" n "x" k; work = m * n * k
        hk = p SUBSEP s
        if (shape == hshape[p]) { hrow[hk] = i; hexact[hk] = 1 }
        else if (!hexact[hk] && (!(hk in hrow) || work > hwork[hk])) { hrow[hk] = i; hwork[hk] = work }
        if (!(s in hpart)) { hpart[s] = p; steps[++nsteps] = s }
        ownrow[p, r] = 1
    }
    if (mode == "ceilings") {
        for (q = 1; q <= nparts; q++) {
            p = order[q]
            if (p in ceil) printf "%s\t%s\t%s\t%s\n", p, (compute[p] ? "compute" : "memory"), sprintf(compute[p] ? "%.2f" : "%.1f", ceil[p]), ceilname[p]
        }
        exit
    }
    if (mode == "headline") {
        for (j = 1; j <= nsteps; j++) {
            s = steps[j]; p = hpart[s]; i = hrow[p, s]
            rate = compute[p] ? g(i, "tflops") " TFLOPS" : g(i, "gbps") " GB/s"
            v = (g(i, "variant") != "") ? g(i, "variant") ", " : ""
            printf "%s\t%s%sx%sx%s: %s, %s%% of cuBLAS, %s%% of %s\n", s, v, g(i, "m"), g(i, "n"), g(i, "k"), rate,
                (g(i, "pct_cublas") == "" ? "-" : g(i, "pct_cublas")), g(i, "pct_ceiling"), ceilname[p]
        }
        exit
    }
    if (mode == "ladder") {
        for (q = 1; q <= nparts; q++) ladder(order[q])
        exit
    }
    printf "## Results on %s\n\n", (gpuname != "" ? gpuname " (" gpu ")" : gpu)
    printf "Generated by tools/tables.sh from results/%s/step*.csv (written by ./run_all.sh). ", gpu
    printf "Cells: throughput (%% of cuBLAS, measured in the same run).\n\n"
    for (q = 1; q <= nparts; q++) table(order[q])
    for (q = 1; q <= nparts; q++) {
        p = order[q]
        if (!seen[p]) continue
        if (cum[p] == "") {   # an unnamed part: its largest square
            best = ""
            for (j = 1; j <= ncol[p]; j++) if (cols[p, j] ~ /^[0-9]+$/ && (best == "" || cols[p, j] + 0 > best + 0)) best = cols[p, j]
            cum[p] = best
        }
        nc = split(cum[p], cs, " ")
        for (j = 1; j <= nc; j++) cumulative(p, cs[j])
    }
    if (plotdir == "") exit
    printf "%s\n", (gpuname != "" ? gpuname : gpu) > (plotdir "/gpu.name"); close(plotdir "/gpu.name")
    # % of cuBLAS per step and size; throughput against size (squares); the chart names
    for (q = 1; q <= nparts; q++) {
        p = order[q]
        if (!seen[p]) continue
        pf = plotdir "/part" p "_pct.dat"; rf = plotdir "/part" p "_rate.dat"; nf = plotdir "/part" p ".name"
        printf "%s\n%s\n", chart[p], (compute[p] ? "TFLOPS" : "GB/s") > nf
        close(nf)
        printf "step" > pf
        for (j = 1; j <= ncol[p]; j++) printf " \"%s\"", cols[p, j] > pf
        printf "\n" > pf
        for (i = 1; i <= nrow[p]; i++) {
            r = rows[p, i]
            any = 0   # a row with no cuBLAS baseline (a dequantize kernel alone) has no bars
            for (j = 1; j <= ncol[p]; j++) if (pc[p, r, cols[p, j]] != "") any = 1
            if (!any) continue
            printf "\"%s\"", cl[p, r] > pf
            for (j = 1; j <= ncol[p]; j++) { x = pc[p, r, cols[p, j]]; printf " %s", (x == "" ? "NaN" : x) > pf }
            printf "\n" > pf
        }
        close(pf)
        printf "size" > rf
        for (i = 1; i <= nrow[p]; i++) printf " \"%s\"", cl[p, rows[p, i]] > rf
        printf "\n" > rf
        for (j = 1; j <= ncol[p]; j++) {
            c = cols[p, j]
            if (c !~ /^[0-9]+$/) continue
            printf "%s", c > rf
            for (i = 1; i <= nrow[p]; i++) { x = rt[p, rows[p, i], c]; printf " %s", (x == "" ? "NaN" : x) > rf }
            printf "\n" > rf
        }
        close(rf)
    }
    # Roofline: every step once, its own method at its part headline shape; FLOP per
    # byte from the row own TFLOPS and GB/s (the fewest bytes the problem must move).
    pf = plotdir "/roofline.dat"
    printf "# part_index \"part chart name\" \"step\" intensity(FLOP/byte) TFLOPS\n" > pf
    for (j = 1; j <= nsteps; j++) {
        s = steps[j]; p = hpart[s]; i = hrow[p, s]
        if (g(i, "gbps") <= 0 || g(i, "tflops") <= 0) continue
        for (q = 1; q <= nparts; q++) if (order[q] == p) break
        printf "%d \"%s\" \"v%s\" %.4f %s\n", q, chart[p], s, g(i, "tflops") * 1000 / g(i, "gbps"), g(i, "tflops") > pf
    }
    close(pf)
    # The ceilings, one line per part: part, bound, value, its name (the roofs of the roofline).
    cf = plotdir "/ceilings.dat"
    printf "# part bound ceiling(TFLOPS or GB/s) name\n" > cf
    for (q = 1; q <= nparts; q++) {
        p = order[q]
        if (p in ceil) printf "%s %s %.2f %s\n", p, (compute[p] ? "compute" : "memory"), ceil[p], ceilname[p] > cf
    }
    close(cf)
}
# The table of the cells of part p: its head (a column per size), then one row.
function thead(p,   j) {
    printf "| step |"
    for (j = 1; j <= ncol[p]; j++) printf " %s |", cols[p, j]
    printf "\n|---|"
    for (j = 1; j <= ncol[p]; j++) printf "---:|"
    printf "\n"
}
function trow(p, r,   j) {
    printf "| %s |", r
    for (j = 1; j <= ncol[p]; j++) printf " %s |", val[p, r, cols[p, j]]
    printf "\n"
}
function table(p,   i) {
    if (!seen[p]) return
    printf "### %s\n\n", title[p]
    thead(p)
    for (i = 1; i <= nrow[p]; i++) trow(p, rows[p, i])
    printf "\n"
}
# One row per step: its own method (and, where rows run at several m, the m of
# the part headline shape), every column of the part.
function ladder(p,   i, r, hm, line, png) {
    if (!seen[p]) return
    hm = hshape[p]; sub(/x.*/, "", hm)
    printf "### %s\n\n", title[p]
    # the part chart, if drawn: throughput against size (squares), else % of cuBLAS; a part of
    # M x N x K problems (mnk) the other way round: its squares are few of its problems
    png = plotdir "/part" p (mnk[p] ? "_pct_cublas.png" : "_throughput.png")
    if ((getline line < png) < 0) png = plotdir "/part" p (mnk[p] ? "_throughput.png" : "_pct_cublas.png")
    close(png)
    if (plotdir != "" && (getline line < png) >= 0) printf "[<img src=\"%s\" width=\"640\" alt=\"%s on %s\">](%s)\n\n", png, chart[p], gpu, png
    close(png)
    if (mnk[p]) { ladder_by_problem(p); return }
    thead(p)
    for (i = 1; i <= nrow[p]; i++) {
        r = rows[p, i]
        if (!ownrow[p, r] || (mlabel[p] && hm != "" && rowm[p, r] != hm)) continue
        trow(p, r)
    }
    printf "\n"
}
# The same cells turned round, for a part of many M x N x K problems: a row per problem,
# a column per step (its own method).
function ladder_by_problem(p,   i, j, r, n, own) {
    n = 0
    for (i = 1; i <= nrow[p]; i++) if (ownrow[p, rows[p, i]]) own[++n] = rows[p, i]
    printf "| M x N x K |"
    for (i = 1; i <= n; i++) printf " %s |", own[i]
    printf "\n|---|"
    for (i = 1; i <= n; i++) printf "---:|"
    printf "\n"
    for (j = 1; j <= ncol[p]; j++) {
        printf "| %s |", cols[p, j]
        for (i = 1; i <= n; i++) printf " %s |", ((p, own[i], cols[p, j]) in val) ? val[p, own[i], cols[p, j]] : "-"
        printf "\n"
    }
    printf "\n"
}
function cumulative(p, c,   i, r, unit, cb) {
    if (!((p, c) in hascol)) return
    unit = compute[p] ? "TFLOPS" : "GB/s"
    cb = compute[p]   # cuBLAS throughput column: it moves from run to run (clocks, power), so % of cuBLAS compares within a row only
    printf "### %s at %s: time, %s, %% of cuBLAS, %% of %s\n\n", short[p], c, unit, ceilname[p]
    printf "| step | time (us) | %s |%s %% of cuBLAS | x cuBLAS | %% of %s | check |\n", unit, cb ? " cuBLAS " unit " this run |" : "", ceilname[p]
    printf "|---|---:|---:|%s---:|---:|---:|---|\n", cb ? "---:|" : ""
    for (i = 1; i <= nrow[p]; i++) {
        r = rows[p, i]
        if (!((p, r, c) in t)) continue
        printf "| %s | %s | %s |%s %s | %s | %s | %s |\n", r, t[p, r, c], rt[p, r, c], cb ? " " cbr[p, r, c] " |" : "", pc[p, r, c], xc[p, r, c], ce[p, r, c], st[p, r, c]
    }
    printf "\n"
}' "${files[@]}"
