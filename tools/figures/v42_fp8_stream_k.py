#!/usr/bin/env python3
"""docs/img/v42_fp8_stream_k.svg: the cluster tiles of 4096 x 7168 x 16384 over the H100's 66
clusters of two SMs, as two Gantt charts on one time scale: v37's plan (128 x 128 tiles,
896 cluster tiles: 13 full rounds and 38 tiles in a 14th) and v42's (128 x 192 tiles, 608
cluster tiles: 9 full rounds, then the last 14 tiles' 1792 k tiles shared out, 28 a
cluster, in pieces cut at the tiles' edges).  Time is in rounds of v37's tile (128 k tiles
of 128 columns); a 192-wide k tile costs 1.5 x COST_192 = 1.425 of a 128-wide one, as the
plan counts.  The plan is what `./step42 --plan 132 -m 4096 -n 7168 -k 16384` prints; the
fix-up is drawn at the plan's FIX_KT (27 k tiles) after each cut tile's first piece, the
one that adds the others' partials: schematic, the page has the measured times.

    python3 tools/figures/v42_fp8_stream_k.py   (writes docs/img/v42_fp8_stream_k.svg, or into $FIG_OUT_DIR)
"""
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
from svgfig import Fig, Gantt, footnotes, legend, out_path

CLUSTERS, KT = 66, 128
T37 = 896                                  # v37: 128 x 128 cluster tiles (two along M)
T42 = 608                                  # v42: 128 x 192
W192 = 1.5 * 0.95                          # a 192-wide k tile in 128-wide k tiles (COST_192)
FIX_KT = 27
DP = T42 // CLUSTERS                       # 9 whole rounds
LEFT = T42 - DP * CLUSTERS                 # 14 tiles shared
SHARE = -(-LEFT * KT // CLUSTERS)          # 28 k tiles a cluster
TILE_C, TILE2_C, PIECE_C, PIECE2_C, FIX_C, IDLE_C = '#1f78b4', '#3f8fc4', '#6baed6', '#9ecae1', '#e6550d', '#e4e4e4'
X0, PX_R = 70, 46                          # plot's left edge; pixels per round of v37's tile
ROW, BAR = 3, 2.2
PLOT_H = CLUSTERS * ROW
R_MAX = 14.6


G = Gantt(X0, PX_R, CLUSTERS, ROW, BAR, R_MAX)


def axes(f, y0):
    G.axes(f, y0, "time, in rounds of v37's tile (128 k tiles of 128 columns)", (0, 37, CLUSTERS - 1), 'cluster')


def end_line(f, y0, r, label):
    G.end_line(f, y0, r, label, 'end')


def v37_panel(f, y0):
    whole, left = T37 // CLUSTERS, T37 % CLUSTERS
    f.text(X0 - 50, y0 - 24, f"v37: {T37} cluster tiles 128 wide on {CLUSTERS} clusters: {whole} full rounds, "
           f"then {left} tiles in a 14th", fs=12, weight='bold')
    for c in range(CLUSTERS):
        for t in range(whole + (1 if c < left else 0)):
            G.bar(f, y0, c, t + 0.03, t + 0.97, TILE_C if t % 2 == 0 else TILE2_C)
    f.rect(G.x(whole), y0 + left * ROW, PX_R, (CLUSTERS - left) * ROW, fill=IDLE_C, stroke='none', sw=0)
    end_line(f, y0, whole + 1, '14 rounds')
    axes(f, y0)


def v42_panel(f, y0):
    f.text(X0 - 50, y0 - 24, f"v42: {T42} cluster tiles 192 wide: {DP} full rounds, then {LEFT * KT} k tiles "
           f"shared out, {SHARE} a cluster", fs=12, weight='bold')
    r_tile = KT * W192 / KT                 # one 192-wide tile, in v37 rounds
    end = 0
    for c in range(CLUSTERS):
        for t in range(DP):
            G.bar(f, y0, c, t * r_tile + 0.03, (t + 1) * r_tile - 0.03, TILE_C if t % 2 == 0 else TILE2_C)
        i, stop = c * SHARE, min((c + 1) * SHARE, LEFT * KT)
        at = DP * r_tile
        while i < stop:
            tile, k0 = divmod(i, KT)
            k1 = min(KT, k0 + stop - i)
            x1 = at + (k1 - k0) * W192 / KT
            G.bar(f, y0, c, at, x1, PIECE_C if tile % 2 == 0 else PIECE2_C)
            at, i = x1, i + k1 - k0
            if k0 == 0 and k1 < KT:         # the tile's first piece: it adds the others' partials
                G.bar(f, y0, c, at, at + FIX_KT * W192 / KT, FIX_C)
                at += FIX_KT * W192 / KT
        end = max(end, at)
    end_line(f, y0, DP * r_tile + (SHARE + FIX_KT) * W192 / KT, f'{DP} rounds of 192 wide + {SHARE} + {FIX_KT} k tiles')
    axes(f, y0)


def main(out):
    y1 = 118
    y2 = y1 + PLOT_H + 110
    h = y2 + PLOT_H + 80
    f = Fig(800, h, fs=12)
    f.text(400, 22, 'v42: the last round of 4096 x 7168 x 16384 shared out along K', fs=14, anchor='middle',
           weight='bold')
    f.text(400, 40, 'FP8 block-scaled GEMM, clusters of two tiles along M, 66 clusters on the H100', fs=10,
           anchor='middle')
    legend(f, 24, 66, [(TILE_C, 'a whole tile', 110), (PIECE_C, 'a piece of a shared tile', 190),
                       (FIX_C, "the plan's fix-up (27 k tiles)", 220), (IDLE_C, 'idle', 60)])
    v37_panel(f, y1)
    v42_panel(f, y2)
    notes = ['rows: one per cluster of two SMs; lengths from the plan, in 128-wide k tiles (a 192-wide one costs 1.425);',
             "pieces alternate in shade by tile; the fix-up is the plan's constant, not measured per piece (the page)."]
    footnotes(f, h, notes)
    f.save(out)


if __name__ == '__main__':
    main(out_path('v42_fp8_stream_k.svg'))
