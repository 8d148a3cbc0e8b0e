# Roofline: each step once (its own method at its part's headline shape), coloured by
# part; one flat roof per compute peak, under the read ceiling's slope.  tools/plots.sh
# computes the axes, the label positions and the roofs file:
#   gnuplot -e "dat='plots/GPU/roofline.dat'; labels='labels.dat'; roofs='roofs.gp'; out='...png'; gpu='...';
#               xmin=0.25; xmax=20000; ymin=0.04; ymax=3300" plots/roofline.gp
# roofs.gp sets npeaks, peak1.., name1.. (TFLOPS and the ceiling's name), bw (GB/s, 0 if unknown),
# parts (the part indices present, "1 2 4") and part1.. (their chart names, for the key).
load roofs
set terminal pngcairo size 1200,880 font ",10"
set output out
set title sprintf("Roofline on %s: each step at its part's headline shape, its own method", gpu) noenhanced
set xlabel "FLOP per byte (the fewest bytes the problem must move)"
set ylabel "TFLOPS"
set logscale xy
set format x "%g"; set format y "%g"
set grid
set xrange [xmin:xmax]
set yrange [ymin:ymax]
set key top left box opaque noenhanced
roof(x, p) = (bw > 0 && x * bw / 1000.0 < p) ? x * bw / 1000.0 : p
slope(x) = x * bw / 1000.0
pk(i) = value(sprintf("peak%d", i))
nm(i) = value(sprintf("name%d", i))
# each roof's label sits above its flat part, at the right, in two short lines (a point
# under it gets its own label on its left: tools/plots.sh); the slope's on it, past the GEMVs
do for [i=1:npeaks] {
    set label i+10 sprintf("%s\n%.1f TFLOPS", nm(i), pk(i)) at graph 0.98, first pk(i) * 1.45 right font ",9" noenhanced
}
if (bw > 0) {
    set label 2 sprintf("read ceiling %.0f GB/s", bw) at first 4.5, first slope(4.5) * 1.7 left rotate by 29 font ",9" noenhanced
}
colours = "#1f77b4 #2ca02c #ff7f0e #d62728 #9467bd #8c564b"
plot \
    for [i=1:npeaks] roof(x, pk(i)) with lines lw 2 dt i lc rgb "#444444" notitle, \
    for [q in parts] dat using ($1 == q + 0 ? $4 : NaN):5 with points pt 7 ps 1.4 lc rgb word(colours, (q - 1) % 6 + 1) title value("part" . q), \
    labels using 1:2:($3 - $1):($4 - $2) with vectors nohead lw 0.6 lc rgb "#999999" notitle, \
    labels using (strcol(6) eq "left" ? $3 : NaN):4:5 with labels left offset 0.3,0 font ",9" noenhanced notitle, \
    labels using (strcol(6) eq "right" ? $3 : NaN):4:5 with labels right offset -0.3,0 font ",9" noenhanced notitle
