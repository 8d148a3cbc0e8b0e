#!/usr/bin/env python3
"""docs/img/v44_fp8_tail_cut.svg: the last round of 4096 x 7168 x 16384 (FP8 per-tensor, 128 x 256
tiles, 448 cluster tiles on the H100's 66 clusters of two SMs) after the six whole rounds, as
two Gantt charts on one time scale in k tiles of the tile.  Top, v38: 52 clusters run a 7th
tile of 128 k tiles while 14 wait.  Bottom, v44's plan (`./step44 --plan 132 -m 4096 -n 7168
-k 16384`): each of the 52 tiles' first 106 k tiles on its own cluster, then the read of its
helper's partial; the other 22 k tiles of each tile on the 14 helpers, 4 or 3 pieces each,
each piece followed by the write of its partial.  The reads and writes are drawn at the
plan's prices (READ_US and WRITE_US in the step, from the trace the page shows), in k tiles:
schematic lengths, the page has the measured times.

    python3 tools/figures/v44_fp8_tail_cut.py   (writes docs/img/v44_fp8_tail_cut.svg, or into $FIG_OUT_DIR)
"""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(__file__))
from svgfig import Fig, Gantt, footnotes, legend, out_path, published_plan

CLUSTERS, KT = 66, 128                     # clusters at once; k tiles a tile (16384 / 128)
# The published run's plan (step44.log): the whole rounds, the tiles cut (REST), the first
# piece (S), the helper pieces (L), and the prices of a read and a write in k tiles.
PLAN = re.match(r'128 x 256 tiles, (\d+) whole rounds, then (\d+) tiles cut: the first (\d+) k tiles on \d+ '
                r'clusters, 1 piece of (\d+) on the other \d+, \d+ each \(k tiles a cluster: whole \d+; cut \d+ '
                r'\+ max\(\d+ \+ 1 x ([\d.]+), \d+ x \(\d+ \+ ([\d.]+)\)\)', published_plan(44, 4096, 7168, 16384))
ROUNDS, REST, S, L = (int(x) for x in PLAN.group(1, 2, 3, 4))
READ, WRITE = float(PLAN.group(5)), float(PLAN.group(6))
HELPERS = CLUSTERS - REST                  # 14
TILE_C, PIECE_C, PIECE2_C, READ_C, WRITE_C, IDLE_C = '#1f78b4', '#6baed6', '#9ecae1', '#e6550d', '#fdae6b', '#e4e4e4'
X0, PX = 70, 46                            # plot's left edge; pixels per 10 k tiles
ROW, BAR = 3, 2.2
PLOT_H = CLUSTERS * ROW
T_MAX = 13.5                               # in tens of k tiles

G = Gantt(X0, PX, CLUSTERS, ROW, BAR, T_MAX)


def t(k):                                  # k tiles -> the axis's unit (10 k tiles)
    return k / 10.0


def axes(f, y0):
    G.axes(f, y0, f'time after the {ROUNDS}th round, in tens of k tiles of the 256-wide tile', (0, REST - 1, CLUSTERS - 1),
           'cluster')


def v38_panel(f, y0):
    f.text(X0 - 50, y0 - 24, f"v38: the {ROUNDS + 1}th round, {REST} tiles of {KT} k tiles on {CLUSTERS} clusters, "
           f"{HELPERS} idle", fs=12, weight='bold')
    for c in range(REST):
        G.bar(f, y0, c, t(0), t(KT), TILE_C)
    f.rect(G.x(0), y0 + REST * ROW, t(KT) * PX, HELPERS * ROW, fill=IDLE_C, stroke='none', sw=0)
    G.end_line(f, y0, t(KT), f'{KT} k tiles', 'end')
    axes(f, y0)


def v44_panel(f, y0):
    f.text(X0 - 50, y0 - 24, f"v44: each tile cut, its first {S} k tiles on its cluster, {KT - S} on a helper "
           f"({HELPERS} helpers)", fs=12, weight='bold')
    for c in range(REST):                  # the first pieces, then the read of the helper's partial
        G.bar(f, y0, c, t(0), t(S), TILE_C)
        G.bar(f, y0, c, t(S), t(S + READ), READ_C)
    end = S + READ
    for h in range(HELPERS):               # helper h: tiles h, h + 14, .. below 52, a piece of L each
        at, i = 0.0, 0
        for tile in range(h, REST, HELPERS):
            G.bar(f, y0, REST + h, t(at), t(at + L), PIECE_C if i % 2 == 0 else PIECE2_C)
            G.bar(f, y0, REST + h, t(at + L), t(at + L + WRITE), WRITE_C)
            at, i = at + L + WRITE, i + 1
        end = max(end, at)
    G.end_line(f, y0, t(end), f'{end:.0f} k tiles (the plan)', 'end')
    axes(f, y0)


def main(out):
    y1 = 118
    y2 = y1 + PLOT_H + 110
    h = y2 + PLOT_H + 80
    f = Fig(800, h, fs=12)
    f.text(400, 22, 'v44: the last round of 4096 x 7168 x 16384 cut along K', fs=14, anchor='middle',
           weight='bold')
    f.text(400, 40, 'FP8 per-tensor GEMM, 128 x 256 tiles in clusters of two along M, 66 clusters on the H100', fs=10,
           anchor='middle')
    legend(f, 24, 66, [(TILE_C, 'a whole tile or a first piece', 200), (PIECE_C, "a helper's piece", 125),
                       (WRITE_C, 'its partial written', 135), (READ_C, 'the partial read', 120), (IDLE_C, 'idle', 60)])
    v38_panel(f, y1)
    v44_panel(f, y2)
    notes = ["rows: one per cluster of two SMs; lengths from the plan, in k tiles of 128 x 256 x 128;",
             f"a write at the plan's 4.0 us, a read at 3.2 us ({WRITE} and {READ} k tiles): the trace on the page measured them."]
    footnotes(f, h, notes)
    f.save(out)


if __name__ == '__main__':
    main(out_path('v44_fp8_tail_cut.svg'))
