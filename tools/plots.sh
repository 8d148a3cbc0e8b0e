#!/usr/bin/env bash
# plots.sh PLOTDIR - draw PLOTDIR/*.png from the .dat files tools/tables.sh
# wrote there, with the gnuplot scripts in plots/.  Exit 0 with a message
# when gnuplot is missing: the tables never depend on it.
#
# Every title names the GPU (PLOTDIR/gpu.name, else the directory's name).  The
# roofline draws one roof per compute-bound part's peak, each under the memory
# ceiling's slope, from PLOTDIR/ceilings.dat; a ceiling missing there is said,
# and not drawn (no other GPU's figures stand in for it).
set -euo pipefail
out=${1:?usage: tools/plots.sh PLOT_DIR}
here=$(cd "$(dirname "$0")/.." && pwd)
if ! command -v gnuplot >/dev/null 2>&1; then
    echo "gnuplot not found: no charts drawn (tables are written). Install it: sudo apt-get install gnuplot-nox (Debian/Ubuntu), brew install gnuplot (macOS)"
    exit 0
fi
gpu=$(basename "$out")
[ -s "$out/gpu.name" ] && gpu=$(head -n1 "$out/gpu.name")
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
drawn=0
# One pair of charts per part: tables.sh wrote part<KEY>_pct.dat, part<KEY>_rate.dat
# and part<KEY>.name (the chart's name, then the throughput unit).
for pct in "$out"/part*_pct.dat; do
    [ -s "$pct" ] || continue
    key=${pct##*/part}; key=${key%_pct.dat}
    name="Part $key" unit="GB/s"
    if [ -f "$out/part$key.name" ]; then { read -r name; read -r unit; } <"$out/part$key.name"; fi
    gnuplot -e "dat='$pct'; out='$out/part${key}_pct_cublas.png'; ttl='$name on $gpu: % of cuBLAS per step (same run)'" "$here/plots/pct_cublas.gp"
    drawn=$((drawn + 1))
    rate="$out/part${key}_rate.dat"
    if [ -s "$rate" ] && [ "$(wc -l <"$rate")" -gt 1 ]; then
        gnuplot -e "dat='$rate'; out='$out/part${key}_throughput.png'; ttl='$name on $gpu: throughput against size'; unit='$unit'" "$here/plots/throughput.gp"
        drawn=$((drawn + 1))
    fi
done

# Roofline.  The roofs: each compute-bound part's peak, under the largest memory
# ceiling's slope.  The labels: each step's number, moved apart vertically where
# points crowd (a leader line joins a moved label to its point).
if [ -s "$out/roofline.dat" ] && [ "$(grep -vc '^#' "$out/roofline.dat")" -gt 0 ]; then
    # one roof per name: two parts on the same units (Parts III and IV) share theirs
    roofs=$(awk '!/^#/ && $2 == "compute" && $3 > 0 { n = $4; for (i = 5; i <= NF; i++) n = n " " $i; if (!(n in seen)) { seen[n]; print $3 "\t" n } }' "$out/ceilings.dat" 2>/dev/null || true)
    bw=$(awk '!/^#/ && $2 == "memory" && $3 > b { b = $3 } END { if (b > 0) print b }' "$out/ceilings.dat" 2>/dev/null || true)
    [ -f "$out/ceilings.dat" ] || echo "plots.sh: $out/ceilings.dat is missing: the roofline is drawn without roofs"
    [ -n "$roofs" ] || echo "plots.sh: no compute peak in $out/ceilings.dat (no compute-bound row with a % of its peak): no flat roof drawn"
    [ -n "$bw" ] || echo "plots.sh: no memory ceiling in $out/ceilings.dat (no memory-bound row with a % of the read ceiling): no bandwidth slope drawn"
    {
        n=0
        while IFS=$'\t' read -r peak name; do
            [ -n "$peak" ] || continue
            n=$((n + 1)); echo "peak$n = $peak; name$n = \"$name\""
        done <<<"$roofs"
        echo "npeaks = $n"
        echo "bw = ${bw:-0}"
        # the parts present, for the key: index and chart name (roofline.dat's first two fields)
        awk -F'"' '!/^#/ && !seen[$1]++ { i = $1 + 0; list = list " " i; printf "part%d = \"%s\"\n", i, $2 } END { print "parts = \"" list "\"" }' "$out/roofline.dat"
    } >"$tmp/roofs.gp"
    # Axes: a little below the lowest point, a little above the highest roof or point.
    read -r xmin xmax ymin ymax < <(awk -v roofs="$roofs" '
        !/^#/ { x = $(NF - 1); y = $NF; if (y <= 0 || x <= 0) next
                if (x < x0 || x0 == "") x0 = x; if (x > x1) x1 = x; if (y < y0 || y0 == "") y0 = y; if (y > y1) y1 = y }
        END { n = split(roofs, r, "\n"); for (i = 1; i <= n; i++) { split(r[i], f, "\t"); if (f[1] > y1) y1 = f[1] }
              printf "%g %g %g %g\n", x0 / 4, x1 * 8, y0 / 3, y1 * 3 }' "$out/roofline.dat")
    # Label layout, in decades: points whose x lie within 0.15 decades form a column;
    # its labels sit left of it when the next column to the right is near, or when one
    # of its points lies in the band where a roof's label sits (right, above its line), else right;
    # within a column labels keep one text line apart (gap), blocks centred on their points.
    awk -v ymin="$ymin" -v ymax="$ymax" -v xmin="$xmin" -v xmax="$xmax" -v peaks="$(cut -f1 <<<"$roofs" | tr '\n' ' ')" '
        function lg(v) { return log(v) / log(10) }
        !/^#/ { n++; x[n] = $(NF - 1); y[n] = $NF; lab[n] = $(NF - 2); lx[n] = lg(x[n]); ly[n] = lg(y[n]) }
        END {
            np = split(peaks, pk, " ")
            gap = 14 / (740 / (lg(ymax) - lg(ymin)))     # 14 px in the plot area, about 740 px tall
            dx = 0.09 * (lg(xmax) - lg(xmin)) / 5        # about 20 px
            # sort by x (insertion sort: a few dozen points)
            for (i = 1; i <= n; i++) o[i] = i
            for (i = 2; i <= n; i++) { v = o[i]; for (j = i - 1; j >= 1 && lx[o[j]] > lx[v]; j--) o[j + 1] = o[j]; o[j + 1] = v }
            nc = 0
            for (i = 1; i <= n; i++) {
                if (i == 1 || lx[o[i]] - lx[o[i - 1]] > 0.15) { nc++; cx0[nc] = lx[o[i]]; cn[nc] = 0 }
                cm[nc, ++cn[nc]] = o[i]; cx1[nc] = lx[o[i]]
            }
            for (c = 1; c <= nc; c++) {
                side = (c < nc && cx0[c + 1] - cx1[c] < 0.45) ? -1 : 1
                for (i = 1; i <= cn[c] && side > 0; i++)   # under a roof label (roofline.gp: pk * 1.3)
                    for (q = 1; q <= np; q++) if (y[cm[c, i]] > pk[q] && y[cm[c, i]] < pk[q] * 1.8) side = -1
                # sort the column by y, then merge overlapping blocks until none overlap
                m = cn[c]
                for (i = 1; i <= m; i++) s[i] = cm[c, i]
                for (i = 2; i <= m; i++) { v = s[i]; for (j = i - 1; j >= 1 && ly[s[j]] > ly[v]; j--) s[j + 1] = s[j]; s[j + 1] = v }
                nb = 0
                for (i = 1; i <= m; i++) { nb++; bs[nb] = i; bn[nb] = 1; bsum[nb] = ly[s[i]]
                    while (nb > 1) {
                        lo = bsum[nb] / bn[nb] - (bn[nb] - 1) * gap / 2
                        plo = bsum[nb - 1] / bn[nb - 1] - (bn[nb - 1] - 1) * gap / 2
                        if (plo + bn[nb - 1] * gap <= lo) break
                        bn[nb - 1] += bn[nb]; bsum[nb - 1] += bsum[nb]; nb--
                    }
                }
                for (b = 1; b <= nb; b++) {
                    lo = bsum[b] / bn[b] - (bn[b] - 1) * gap / 2
                    for (i = 0; i < bn[b]; i++) {
                        p = s[bs[b] + i]
                        X = (side > 0) ? cx1[c] + dx : cx0[c] - dx
                        printf "%g %g %g %g %s %s\n", x[p], y[p], 10 ^ X, 10 ^ (lo + i * gap), lab[p], (side > 0 ? "left" : "right")
                    }
                }
            }
        }' "$out/roofline.dat" >"$tmp/labels.dat"
    gnuplot -e "dat='$out/roofline.dat'; labels='$tmp/labels.dat'; roofs='$tmp/roofs.gp'; out='$out/roofline.png'; gpu='$gpu'; xmin=$xmin; xmax=$xmax; ymin=$ymin; ymax=$ymax" "$here/plots/roofline.gp"
    drawn=$((drawn + 1))
fi
echo "drew $drawn charts in $out/"
