# Throughput against size (square problems), one line per step.
#   gnuplot -e "dat='plots/GPU/part1_rate.dat'; out='...png'; ttl='...'; unit='TFLOPS'" plots/throughput.gp
set terminal pngcairo size 1200,560 font ",10"
set output out
set title ttl
set xlabel "size (N for N x N problems)"
set ylabel unit
set logscale x 2
set grid
set key outside right top noenhanced
ncols = system("head -n1 '" . dat . "' | wc -w") + 0
plot for [i=2:ncols] dat using 1:i with linespoints lw 2 pt 7 title columnheader(i)
