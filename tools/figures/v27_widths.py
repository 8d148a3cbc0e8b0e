#!/usr/bin/env python3
"""docs/img/v27_widths.svg: the tiles of 1536 x 1536 x 1536 (bf16 GEMM, 24 k steps of 64)
over the H100's 132 SMs, as two Gantt charts on one time scale: the variant
"two_widths" (v26's choice of 128 x 256 or 128 x 128 tiles: 72 tiles of 128 x 256) and
the plan v27 picks (96 tiles of 128 x 192).  Both are one wave: the grid is one block
per tile, at most one per SM, block b taking tile b, so row b is drawn as tile b.

Measured: each panel's kernel time and the cuBLAS time, read from the published run
(results/h100-80gb-hbm3/step27.csv: the rows 1536 x 1536 x 1536 of the variant
two_widths and of v27 itself, median of CUDA-event timings, L2 warm).  Schematic:
that every busy SM's bar runs from the kernel's start to its end (one solid bar per
tile; when each tile really starts and ends is not measured).

    python3 tools/figures/v27_widths.py   (writes docs/img/v27_widths.svg, or into $FIG_OUT_DIR)
"""
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
from svgfig import Fig, footnotes, legend, out_path, published_row, sm_time_axes

SMS = 132                                 # H100 SMs
T_MAX = 22                                # us, the shared x scale (wider if a run's times need it: main())
BUSY_C, IDLE_C, CUBLAS_C = '#1f78b4', '#e4e4e4', '#d62728'
X0, PX_US = 56, 30                        # plot's left edge; pixels per microsecond
ROW, BAR = 2, 1.5                         # a row per SM, and its bar's height within it
PLOT_H = SMS * ROW


def row(variant):
    """1536 x 1536 x 1536's row of the published run for variant ('' is v27 itself)."""
    return published_row(27, 1536, 1536, 1536, variant)


def xt(us):
    return X0 + us * PX_US


def axes(f, y0):
    """SM labels on the left, the time axis below."""
    sm_time_axes(f, X0, y0, SMS, ROW, PX_US, T_MAX, 2)


def marker(f, y0, t, label, colour, dash, sw):
    """A dashed line over the panel at time t, its label above it."""
    f.line(xt(t), y0 - 2, xt(t), y0 + PLOT_H, stroke=colour, sw=sw, dash=dash)
    f.text(xt(t), y0 - 6, label, fs=10, anchor='middle', weight='bold', fill=colour)


def panel(f, y0, title, caption, tiles, t, t_cublas):
    f.text(X0 - 40, y0 - 40, title, fs=12, weight='bold')
    f.text(X0 - 40, y0 - 24, caption, fs=11, fill='#444')
    for sm in range(tiles):
        f.rect(xt(0), y0 + sm * ROW, t * PX_US, BAR, fill=BUSY_C, stroke='none', sw=0)
    # The SMs without a tile: one block, so that its labels can sit inside it.
    f.rect(X0, y0 + tiles * ROW, t * PX_US, (SMS - tiles) * ROW, fill=IDLE_C, stroke='none', sw=0)
    cy = y0 + (tiles + SMS) / 2 * ROW
    f.text(xt(t / 2), cy, f'{SMS - tiles} SMs idle', fs=14, anchor='middle', weight='bold')
    f.text(xt(t / 2), cy + 18, f'SMs {tiles}-{SMS - 1}: no tile to run', fs=11, anchor='middle', fill='#444')
    marker(f, y0, t_cublas, f'cuBLAS {t_cublas:.1f} us', CUBLAS_C, '2,3', 0.8)
    marker(f, y0, t, f'{t:.1f} us', '#000', '3,2', 1)
    axes(f, y0)


def main(out):
    two, v27 = row('two_widths'), row('')
    t_two, t_v27, t_cublas = float(two['time_us']), float(v27['time_us']), float(v27['cublas_time_us'])
    global T_MAX, PX_US   # a slower run still fits the 800-pixel canvas: the scale widens, the pixels shrink
    t_most = max(t_two, t_v27, t_cublas)
    if t_most > T_MAX:
        T_MAX = 2 * int(t_most / 2 + 2)
        PX_US = 30 * 22 / T_MAX
    y1 = 130
    y2 = y1 + PLOT_H + 100                 # the second panel's top
    h = y2 + PLOT_H + 80
    f = Fig(800, h, fs=12)
    f.text(400, 22, 'v27: the tiles of 1536 x 1536 x 1536 over the 132 SMs, two widths', fs=14,
           anchor='middle', weight='bold')
    f.text(400, 40, 'bf16 GEMM on the H100; grid: one block per tile, at most one per SM; one wave each',
           fs=10, anchor='middle')
    ly = 66
    lx = legend(f, 24, ly, [(BUSY_C, 'an SM running its tile', 200), (IDLE_C, 'idle', 60)])
    f.line(lx, ly - 4, lx + 14, ly - 4, stroke=CUBLAS_C, sw=1.5, dash='2,3')
    f.text(lx + 20, ly, 'cuBLAS\'s time, same problem', fs=11)
    panel(f, y1, 'two widths (v26): 72 tiles of 128 x 256', '72 tiles x 24 k steps of 128 x 256',
          72, t_two, t_cublas)
    panel(f, y2, 'v27: 96 tiles of 128 x 192', '96 tiles x 24 k steps of 128 x 192 (3/4 of the work each)',
          96, t_v27, t_cublas)
    notes = ['rows: one thin row per SM, 132 of them; row b: the SM that runs block b, and so tile b.',
             'bar lengths: times measured on the H100 (step27.csv); one solid bar per tile is schematic.']
    footnotes(f, h, notes)
    f.save(out)


if __name__ == '__main__':
    main(out_path('v27_widths.svg'))
