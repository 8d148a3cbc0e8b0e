# % of cuBLAS per step, one bar per size.
#   gnuplot -e "dat='plots/GPU/part1_pct.dat'; out='plots/GPU/part1_pct_cublas.png'; ttl='...'" plots/pct_cublas.gp
set terminal pngcairo size 1200,560 font ",10"
set output out
set title ttl
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set ylabel "% of cuBLAS (same run)"
set yrange [0:*]
set grid ytics
set key outside right top title "size" noenhanced
set xtics rotate by -35 noenhanced
set arrow from graph 0, first 100 to graph 1, first 100 nohead dt 2 lw 1.5 lc rgb "#cc0000"
ncols = system("head -n1 '" . dat . "' | wc -w") + 0
plot for [i=2:ncols] dat using i:xtic(1) title columnheader(i)
