# Throughput against size (square problems), one line per step.
#   gnuplot -e "dat='plots/GPU/part1_rate.dat'; out='...png'; ttl='...'; unit='TFLOPS'" plots/throughput.gp
set terminal pngcairo size 1200,600 font ",10"
set output out
set title ttl noenhanced
set xlabel "size (N for N x N problems)"
set ylabel unit
set logscale x 2
set grid
set key outside right top noenhanced
ncols = system("head -n1 '" . dat . "' | tr -cd '\"' | wc -c") / 2 + 1   # quoted headers may hold spaces
# ten colours, then dashed lines and other point shapes, so no two series look alike
colours = "#1f77b4 #ff7f0e #2ca02c #d62728 #9467bd #8c564b #e377c2 #7f7f7f #bcbd22 #17becf"
plot for [i=2:ncols] dat using 1:i with linespoints lw 2 lc rgb word(colours, (i - 2) % 10 + 1) dt 1+(i-2)/10 pt 1+(i-2)%13 ps 1.2 title columnheader(i)
