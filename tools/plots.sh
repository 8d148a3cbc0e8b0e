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
declare -A what=([1]="Part I SGEMM" [2]="Part II GEMV" [3]="v16 W4A16")
declare -A unit=([1]="TFLOPS" [2]="GB/s" [3]="GB/s")
drawn=0
for p in 1 2 3; do
    if [ -s "$out/part${p}_pct.dat" ]; then
        gnuplot -e "dat='$out/part${p}_pct.dat'; out='$out/part${p}_pct_cublas.png'; ttl='${what[$p]}: % of cuBLAS per step'" "$here/plots/pct_cublas.gp"
        drawn=$((drawn + 1))
    fi
    if [ -s "$out/part${p}_rate.dat" ] && [ "$(wc -l <"$out/part${p}_rate.dat")" -gt 1 ]; then
        gnuplot -e "dat='$out/part${p}_rate.dat'; out='$out/part${p}_throughput.png'; ttl='${what[$p]}: throughput against size'; unit='${unit[$p]}'" "$here/plots/throughput.gp"
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
