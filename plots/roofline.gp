# Roofline: every kernel at its largest problem, FP32 peak and read bandwidth as roofs.
#   gnuplot -e "dat='plots/GPU/roofline.dat'; out='...png'; peak=66.9; bw=3000" plots/roofline.gp
set terminal pngcairo size 1200,700 font ",10"
set output out
set title "Roofline: achieved TFLOPS against arithmetic intensity (FLOP per byte moved)"
set xlabel "FLOP per byte (fewest bytes the kernel must move)"
set ylabel "TFLOPS"
set logscale xy
set grid
set key bottom right
set label 1 "v16 runs on the tensor cores (fp16 MMA): it is not bound by the FP32 roof" at graph 0.02, graph 0.95 left font ",9"
set xrange [0.1:10000]
set yrange [0.01:200]
roof(x) = (x * bw / 1000.0 < peak) ? x * bw / 1000.0 : peak
plot roof(x) with lines lw 2 lc rgb "#333333" title sprintf("roof: %.0f GB/s, %.1f TFLOPS FP32", bw, peak), \
     dat using 2:3 with points pt 7 ps 1.2 lc rgb "#1f77b4" notitle, \
     dat using 2:3:1 with labels offset char 0.8,0.6 left font ",8" noenhanced notitle
