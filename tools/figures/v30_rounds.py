#!/usr/bin/env python3
"""docs/img/v30_rounds.svg: the cluster tiles of 4096 x 4096 x 14336 over the H100's 66
clusters of two SMs, as two Gantt charts on one time scale, in rounds (one round: one whole
128 x 192 tile of 112 k tiles per cluster): v29's grid (352 cluster tiles: five full
rounds and 22 tiles in a sixth) and v30's plan (the same five rounds, then the 22 tiles
in 3 k ranges each: 66 pieces, a third of a round each, in a second kernel).  The plan is
what `./step30 --plan 132 -m 4096 -n 4096 -k 14336` prints; the lengths are schematic
(a piece's start and fix-up are drawn as a sliver, not measured: the page's price list
has the measured times).

    python3 tools/figures/v30_rounds.py   (writes docs/img/v30_rounds.svg, or into $FIG_OUT_DIR)
"""
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
from svgfig import Fig, Gantt, footnotes, legend, out_path

CLUSTERS, TILES, SPLIT = 66, 352, 3
WHOLE = TILES // CLUSTERS                 # 5 full rounds
LEFT = TILES - WHOLE * CLUSTERS           # 22 tiles in the last round
FIX = 0.06                                # rounds, schematic: a piece's start and fix-up
TILE_C, PIECE_C, FIX_C, IDLE_C = '#1f78b4', '#6baed6', '#e6550d', '#e4e4e4'
X0, PX_R = 70, 105                        # plot's left edge; pixels per round
ROW, BAR = 3, 2.2                         # a row per cluster, its bar's height
PLOT_H = CLUSTERS * ROW
R_MAX = 6.5


G = Gantt(X0, PX_R, CLUSTERS, ROW, BAR, R_MAX)


def axes(f, y0):
    G.axes(f, y0, 'time, in rounds (one whole tile: 112 k tiles)', (0, LEFT, CLUSTERS - 1), 'cluster')


def end_line(f, y0, r, label):
    G.end_line(f, y0, r, label, 'middle')


def tiles_panel(f, y0):
    f.text(X0 - 50, y0 - 24, f"v29: {TILES} cluster tiles on {CLUSTERS} clusters: {WHOLE} full rounds, "
           f"then {LEFT} tiles in a sixth", fs=12, weight='bold')
    for c in range(CLUSTERS):
        n = WHOLE + (1 if c < LEFT else 0)
        for t in range(n):
            G.bar(f, y0, c, t + 0.02, t + 0.98, TILE_C)
    # The clusters without a sixth tile: one block, so that its label can sit inside it.
    f.rect(G.x(WHOLE), y0 + LEFT * ROW, PX_R, (CLUSTERS - LEFT) * ROW, fill=IDLE_C, stroke='none', sw=0)
    f.text(G.x(WHOLE + 0.5), y0 + (LEFT + CLUSTERS) / 2 * ROW + 4, f'{CLUSTERS - LEFT} idle', fs=11,
           anchor='middle', weight='bold')
    end_line(f, y0, WHOLE + 1, '6 rounds')
    axes(f, y0)


def pieces_panel(f, y0):
    f.text(X0 - 50, y0 - 24, f"v30: the same {WHOLE} rounds (first kernel), then the {LEFT} tiles in {SPLIT} "
           f"k ranges each: {LEFT * SPLIT} pieces (second kernel)", fs=12, weight='bold')
    piece = 1 / SPLIT
    for c in range(CLUSTERS):
        for t in range(WHOLE):
            G.bar(f, y0, c, t + 0.02, t + 0.98, TILE_C)
        G.bar(f, y0, c, WHOLE + 0.02, WHOLE + piece, PIECE_C)
        last = c % SPLIT == SPLIT - 1            # drawn on range 2; in a run, the piece that arrives last
        G.bar(f, y0, c, WHOLE + piece, WHOLE + piece + FIX, FIX_C if last else IDLE_C)
    end = WHOLE + piece + FIX
    end_line(f, y0, end, '5 1/3 rounds + a piece\'s price')
    f.text(X0 - 50, y0 - 10, f'cluster {SPLIT}t + r runs piece r of tile t of the last {LEFT}: k range r, '
           '37 or 38 k tiles', fs=10, fill='#444')
    axes(f, y0)


def main(out):
    y1 = 118
    y2 = y1 + PLOT_H + 110
    h = y2 + PLOT_H + 80
    f = Fig(800, h, fs=12)
    f.text(400, 22, 'v30: the last round of 4096 x 4096 x 14336, split along K', fs=14, anchor='middle', weight='bold')
    f.text(400, 40, 'FP8 block-scaled GEMM, 128 x 192 tiles in clusters of two (256 x 192), 66 clusters on the H100',
           fs=10, anchor='middle')
    legend(f, 24, 66, [(TILE_C, 'a whole tile', 110), (PIECE_C, 'a piece (a third of K)', 170),
                       (FIX_C, "fix-up (the tile's last piece)", 220), (IDLE_C, 'idle', 60)])
    tiles_panel(f, y1)
    pieces_panel(f, y2)
    notes = ['rows: one per cluster of two SMs; lengths in rounds, from the plan (schematic: the price of a',
             "piece is not to scale; the page's table has the measured times)."]
    footnotes(f, h, notes)
    f.save(out)


if __name__ == '__main__':
    main(out_path('v30_rounds.svg'))
