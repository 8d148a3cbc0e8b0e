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
# eight colours, then dashed lines and other point shapes, so no two series look alike
plot for [i=2:ncols] dat using 1:i with linespoints lw 2 lt 1+(i-2)%8 dt 1+(i-2)/8 pt 1+(i-2)%13 ps 1.2 title columnheader(i)
