# % of cuBLAS per step, one bar per size.
#   gnuplot -e "dat='plots/GPU/part1_pct.dat'; out='plots/GPU/part1_pct_cublas.png'; ttl='...'" plots/pct_cublas.gp
ncols = system("head -n1 '" . dat . "' | tr -cd '\"' | wc -c") / 2 + 1   # quoted headers may hold spaces
nrows = system("tail -n +2 '" . dat . "' | wc -l") + 0
# wide enough that every step's group of bars and its label have room
set terminal pngcairo size (nrows > 12 ? 1600 : 1200),600 font ",10"
set output out
set title ttl noenhanced
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.9 border -1
set boxwidth 0.9
set ylabel "% of cuBLAS (same run)"
set yrange [0:*]
set grid ytics
set key outside right top title "size" noenhanced
xfont = (nrows > 12) ? ",9" : ",10"
set xtics rotate by 40 right noenhanced font xfont
set bmargin 8
set arrow from graph 0, first 100 to graph 1, first 100 nohead dt 2 lw 1.5 lc rgb "#cc0000"
# twelve distinct colours (Tableau 10 and two more): one per size, none repeated
colours = "#1f77b4 #ff7f0e #2ca02c #d62728 #9467bd #8c564b #e377c2 #7f7f7f #bcbd22 #17becf #393b79 #637939"
plot for [i=2:ncols] dat using i:xtic(1) lc rgb word(colours, (i - 2) % 12 + 1) title columnheader(i)
