#!/usr/bin/env bash
# plots.sh PLOTDIR - draw PLOTDIR/*.png from the .dat files tools/tables.sh
# wrote there, with the gnuplot scripts in plots/.  Exit 0 with a message
# when gnuplot is missing: the tables never depend on it.
set -euo pipefail
out=${1:?usage: tools/plots.sh PLOT_DIR}
here=$(cd "$(dirname "$0")/.." && pwd)
if ! command -v gnuplot >/dev/null 2>&1; then
    echo "gnuplot not found: no charts drawn (tables are written). Install it: sudo apt-get install gnuplot-nox (Debian/Ubuntu), brew install gnuplot (macOS)"
    exit 0
fi
drawn=0
# One pair of charts per part: tables.sh wrote part<KEY>_pct.dat, part<KEY>_rate.dat
# and part<KEY>.name (the chart's name, then the throughput unit).
for pct in "$out"/part*_pct.dat; do
    [ -s "$pct" ] || continue
    key=${pct##*/part}; key=${key%_pct.dat}
    name="Part $key" unit="GB/s"
    if [ -f "$out/part$key.name" ]; then { read -r name; read -r unit; } <"$out/part$key.name"; fi
    gnuplot -e "dat='$pct'; out='$out/part${key}_pct_cublas.png'; ttl='$name: % of cuBLAS per step'" "$here/plots/pct_cublas.gp"
    drawn=$((drawn + 1))
    rate="$out/part${key}_rate.dat"
    if [ -s "$rate" ] && [ "$(wc -l <"$rate")" -gt 1 ]; then
        gnuplot -e "dat='$rate'; out='$out/part${key}_throughput.png'; ttl='$name: throughput against size'; unit='$unit'" "$here/plots/throughput.gp"
        drawn=$((drawn + 1))
    fi
done
if [ -s "$out/roofline.dat" ] && [ "$(grep -vc '^#' "$out/roofline.dat")" -gt 0 ]; then
    read -r peak bw <"$out/ceilings.dat"
    [ "$peak" = NaN ] && peak=67
    [ "$bw" = NaN ] && bw=3000
    gnuplot -e "dat='$out/roofline.dat'; out='$out/roofline.png'; peak=$peak; bw=$bw" "$here/plots/roofline.gp"
    drawn=$((drawn + 1))
fi
echo "drew $drawn charts in $out/"
