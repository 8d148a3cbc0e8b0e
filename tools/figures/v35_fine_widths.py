#!/usr/bin/env python3
"""docs/img/v35_fine_widths.svg: two problems' tiles over the H100's 132 SMs, each under
v34's plan (the control w64: widths 64, 128, 192, 256) and under v35's (widths in steps of
16), as Gantt charts, one time scale per problem:

- 1536 x 1536 x 1536: 96 tiles of 128 x 192 (one wave, 36 SMs idle) against 132 tiles of
  128 x 144 (one wave, every SM);
- 1024 x 14336 x 4096: 600 tiles of 128 x 192 (five waves, 72 tiles in the last) against
  512 of 128 x 224 (four waves, 116 in the last).

Measured: each panel's kernel time and cuBLAS's, from the published run
(results/h100-80gb-hbm3/step35.csv, the plan's row and the w64 row; median of CUDA-event
timings, L2 warm).  Schematic: the waves are drawn of equal length (the kernel's time /
waves), and a wave's tiles as one block of rows.

    python3 tools/figures/v35_fine_widths.py   (writes docs/img/v35_fine_widths.svg, or into $FIG_OUT_DIR)
"""
import math
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
from svgfig import Fig, footnotes, legend, out_path, published_row, shape_name

SMS = 132
W64_C, FINE_C, IDLE_C, CUBLAS_C = '#1f78b4', '#33a02c', '#e4e4e4', '#d62728'
ROW = 1.5                                # a row per SM
PLOT_H = SMS * ROW
PLOT_W = 300                             # each column's time axis, in pixels
COLS = (80, 470)                         # each column's left edge


def tiles_of(m, n, bn):
    return math.ceil(m / 128) * math.ceil(n / bn)


def panel(f, x0, y0, t_max, title, tiles, t, t_cublas, colour):
    """tiles on the SMs in waves over the kernel's time t (us); the axis runs to t_max."""
    px = PLOT_W / t_max
    waves = math.ceil(tiles / SMS)
    last = tiles - (waves - 1) * SMS
    f.text(x0 - 50, y0 - 22, title, fs=11, weight='bold')
    w = t / waves
    for v in range(waves):
        busy = SMS if v < waves - 1 else last
        f.rect(x0 + (v * w + 0.01 * w) * px, y0, 0.98 * w * px, busy * ROW, fill=colour, stroke='none', sw=0)
    if last < SMS:
        f.rect(x0 + (waves - 1) * w * px, y0 + last * ROW, w * px, (SMS - last) * ROW, fill=IDLE_C, stroke='none', sw=0)
        f.text(x0 + (waves - 0.5) * w * px, y0 + (last + SMS) / 2 * ROW + 4, f'{SMS - last} idle', fs=10,
               anchor='middle', weight='bold')
    # time axis and the two ends
    f.line(x0, y0, x0, y0 + PLOT_H, stroke='#444', sw=1)
    f.line(x0, y0 + PLOT_H, x0 + PLOT_W, y0 + PLOT_H, stroke='#444', sw=1)
    for xt, label, c, dash in ((t, f'{t:.1f} us', '#000', '3,2'), (t_cublas, f'cuBLAS {t_cublas:.1f}', CUBLAS_C, '2,3')):
        f.line(x0 + xt * px, y0 - 2, x0 + xt * px, y0 + PLOT_H, stroke=c, sw=1, dash=dash)
    f.text(x0 + t * px + 3, y0 + PLOT_H + 14, f'{t:.1f} us', fs=10, weight='bold')
    f.text(x0 + t_cublas * px - 3, y0 + PLOT_H + 14, f'cuBLAS {t_cublas:.1f}', fs=10, anchor='end', fill=CUBLAS_C)
    f.text(x0 - 6, y0 + 4, 'SM 0', fs=9, anchor='end', fill='#555')
    f.text(x0 - 6, y0 + PLOT_H, 'SM 131', fs=9, anchor='end', fill='#555')


def column(f, x0, y1, y2, m, n, k, bn64, bn):
    fine, w64 = published_row(35, m, n, k, ''), published_row(35, m, n, k, 'w64')
    t_fine, t_w64, t_cublas = float(fine['time_us']), float(w64['time_us']), float(fine['cublas_time_us'])
    t_max = max(t_fine, t_w64, t_cublas) * 1.08
    f.text(x0 - 50, y1 - 44, shape_name(m, n, k), fs=13, weight='bold')
    for y, b, t, c, who in ((y1, bn64, t_w64, W64_C, 'v34 (w64)'), (y2, bn, t_fine, FINE_C, 'v35')):
        tiles = tiles_of(m, n, b)
        waves = math.ceil(tiles / SMS)
        panel(f, x0, y, t_max, f'{who}: {tiles} tiles of 128 x {b}, {waves} wave{"s" if waves > 1 else ""}',
              tiles, t, t_cublas, c)


def main(out):
    y1 = 130
    y2 = y1 + PLOT_H + 70
    h = y2 + PLOT_H + 66
    f = Fig(800, h, fs=12)
    f.text(400, 22, 'v35: tiles over the 132 SMs, the widths of v34 against widths in steps of 16', fs=14,
           anchor='middle', weight='bold')
    f.text(400, 40, 'bf16 GEMM on the H100, one block per SM, a tile per block at a time; each problem on its own time scale',
           fs=10, anchor='middle')
    legend(f, 24, 66, [(W64_C, "a tile of v34's plan", 150), (FINE_C, "a tile of v35's plan", 150), (IDLE_C, 'idle', 40)])
    f.line(600, 62, 614, 62, stroke=CUBLAS_C, sw=1.5, dash='2,3')
    f.text(620, 66, "cuBLAS's time", fs=11)
    column(f, COLS[0], y1, y2, 1536, 1536, 1536, 192, 144)
    column(f, COLS[1], y1, y2, 1024, 14336, 4096, 192, 224)
    footnotes(f, h, ['rows: one per SM; times: step35.csv, the published run; waves drawn of equal length (schematic).'])
    f.save(out)


if __name__ == '__main__':
    main(out_path('v35_fine_widths.svg'))
