#!/usr/bin/env python3
"""docs/img/v31_rounds.svg: 4096^3's tiles over the H100's 66 clusters of two SMs, as two
Gantt charts on one time scale: v29's 128 x 192 tiles (352 cluster tiles: five full
rounds and 22 tiles in a sixth; 22 x 192 = 4224 columns for N = 4096) and v31's 128 x 128
(512 cluster tiles: seven full rounds and 50 in an eighth).  A tile's length is its width
(one unit: a 128-wide tile over all of K; a 192-wide one takes 1.5): the two kernels run
at the same rate per column (the page), so the time is rounds x width, the plan's cost
(`./step31 --plan 132 --sizes 4096`).  Schematic in everything else (a tile's start and
epilogue are not drawn).

    python3 tools/figures/v31_rounds.py   (writes docs/img/v31_rounds.svg, or into $FIG_OUT_DIR)
"""
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
from svgfig import Fig, Gantt, footnotes, legend, out_path

CLUSTERS = 66
WIDE_C, NARROW_C, IDLE_C = '#1f78b4', '#33a02c', '#e4e4e4'
X0 = 70                                   # plot's left edge
ROW, BAR = 3, 2.2                         # a row per cluster, its bar's height
PLOT_H = CLUSTERS * ROW


def scale(px, u_max):
    """Time to pixels: px pixels per unit (a 128-wide tile over all of K), u_max units drawn."""
    return Gantt(X0, px, CLUSTERS, ROW, BAR, u_max)


def panel(f, sc, note, y0, title, width, n, colour):
    """n cluster tiles of `width` columns on the clusters, round by round."""
    unit = width / 128
    full, left = divmod(n, CLUSTERS)
    f.text(X0 - 50, y0 - 24, title, fs=12, weight='bold')
    for c in range(CLUSTERS):
        for t in range(full + (1 if c < left else 0)):
            sc.bar(f, y0, c, t * unit + 0.02, (t + 1) * unit - 0.02, colour)
    rounds = full + (1 if left else 0)
    f.rect(sc.x(full * unit), y0 + left * ROW, unit * sc.px, (CLUSTERS - left) * ROW, fill=IDLE_C, stroke='none', sw=0)
    f.text(sc.x((full + 0.5) * unit), y0 + (left + CLUSTERS) / 2 * ROW + 4, f'{CLUSTERS - left} idle', fs=11,
           anchor='middle', weight='bold')
    sc.end_line(f, y0, rounds * unit, f'{rounds} rounds x {width} = {rounds * width}', 'end')
    sc.axes(f, y0, f'time, in 128-wide tiles over all of K ({note})', (0, CLUSTERS - 1), 'cluster')


def draw(out, sc, note, title, subtitle, swatches, panels, notes):
    """Two panels (title, width, cluster tiles, colour) one above the other, and the notes."""
    y1 = 118
    y2 = y1 + PLOT_H + 100
    h = y2 + PLOT_H + 112
    f = Fig(800, h, fs=12)
    f.text(400, 22, title, fs=14, anchor='middle', weight='bold')
    f.text(400, 40, subtitle, fs=10, anchor='middle')
    legend(f, 24, 66, swatches)
    for y, p in zip((y1, y2), panels):
        panel(f, sc, note, y, *p)
    footnotes(f, h - 32, notes)   # three lines
    f.save(out)


def main(out):
    draw(out, scale(72, 9.6), 'a 192-wide tile: 1.5', "v31: 4096^3's tiles on the H100, 128 x 192 against 128 x 128",
         'FP8 block-scaled GEMM, tiles in clusters of two along M, 66 clusters',
         [(WIDE_C, 'a 128 x 192 tile (v29)', 170), (NARROW_C, 'a 128 x 128 tile (v31)', 170), (IDLE_C, 'idle', 60)],
         [("v29's tile: 352 cluster tiles, 5 full rounds and 22 tiles in a sixth", 192, 352, WIDE_C),
          ("v31's tile: 512 cluster tiles, 7 full rounds and 50 tiles in an eighth", 128, 512, NARROW_C)],
         ['rows: one per cluster of two SMs; lengths from the plan: rounds x width, at one rate per column',
          "(measured: the page; the 128-wide tile keeps it only with two k blocks per turn). v29's 22 tiles",
          'across N are 4224 columns: 3% of its work lies past N = 4096.'])


if __name__ == '__main__':
    main(out_path('v31_rounds.svg'))
