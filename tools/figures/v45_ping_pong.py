#!/usr/bin/env python3
"""docs/img/v45_ping_pong.svg: where a short tile's end goes.  Top, a schematic (not to
scale) of a block's tensor cores and its two consumer warpgroups at 8 k steps a tile: under
v43 both warpgroups work on every tile and reach its end together, so its last wait and its
C store leave the tensor cores idle; under v45 each warpgroup takes every other tile whole
and passes the turn once its last batch is queued, so one stores C while the other's k loop
runs.  Below, the rows of step45 (the `v43` variant is v43's plan, the control) as % of
cuBLAS in the same process at the Part IV shapes run in several waves of single 128-row
tiles, from results/h100-80gb-hbm3/step45.csv; the plans from step45.log.

    python3 tools/figures/v45_ping_pong.py   (writes docs/img/v45_ping_pong.svg, or into $FIG_OUT_DIR)
"""
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
from svgfig import Fig, footnotes, lanes, legend, out_path, pair_rows, pct_bars, published_plan, published_us

OLD_C, NEW_C = '#a6cee3', '#1f78b4'
MMA0_C, MMA1_C, ISSUE_C, STORE_C, WAIT_C = '#b2df8a', '#33a02c', '#dddddd', '#fdbf6f', '#fb9a99'
SHAPES = [(4096, 4096, 512), (4096, 4096, 4096), (8192, 8192, 8192), (1024, 14336, 4096)]
X0, PX = 250, 15.0                        # the bars' left edge (at 80%); pixels per percent
P_MIN, P_MAX = 80, 110
GROUP, BAR = 30, 11


LANES = ('tensor cores', 'consumer 0', 'consumer 1')   # a block's schedule


def schematic(f, y):
    K = 32   # a k step's batches (both halves of the tile) in the schematic
    # v43: tile t's last k steps, both warpgroups wait and store (the tensor cores idle), tile t + 1
    b = []
    for i in range(3):
        b += [(0, i * K, K, MMA0_C, ''), (1, i * K, 10, ISSUE_C, ''), (2, i * K, 10, ISSUE_C, '')]
    b += [(1, 2 * K + 10, K - 10, WAIT_C, 'wait'), (2, 2 * K + 10, K - 10, WAIT_C, 'wait'),
          (1, 3 * K, 120, STORE_C, 'C rows 0-63'), (2, 3 * K, 120, STORE_C, 'C rows 64-127')]
    x = 3 * K + 120
    for i in range(8):
        b += [(0, x + i * K, K, MMA1_C, ''), (1, x + i * K, 10, ISSUE_C, ''), (2, x + i * K, 10, ISSUE_C, '')]
    lanes(f, y, 'v43: both warpgroups on every tile (64 rows each), the tile\'s end together', LANES, b)
    # v45: consumer 0's tile ends, the turn passes, consumer 1's k loop runs while 0 stores
    b = []
    for i in range(3):
        b += [(0, i * K, K, MMA0_C, ''), (1, i * K, 10, ISSUE_C, '')]
    b += [(1, 2 * K + 10, K - 10, WAIT_C, 'wait'), (1, 3 * K, 200, STORE_C, 'C rows 0-127 (its tile)')]
    for i in range(11):   # consumer 1's first batch is queued at the turn, behind consumer 0's last
        b += [(0, 3 * K + i * K, K, MMA1_C, ''), (2, (2 * K + 12) if i == 0 else 2 * K + i * K, 10, ISSUE_C, '')]
    f.line(150 + 2 * K + 11, y + 94 + 18, 150 + 2 * K + 11, y + 94 + 20 + 70, stroke='#d62728', sw=1.2, dash='4,3')
    lanes(f, y + 94, 'v45: each warpgroup every other tile, whole (128 rows), in turns', LANES, b)
    legend(f, 24, y + 194, [(MMA0_C, "tile t's batches", 160), (MMA1_C, 'the next tile\'s', 160),
                            (ISSUE_C, 'wait for the stage, issue', 220)])
    legend(f, 24, y + 212, [(WAIT_C, 'the last batch waited for (under it)', 300), (STORE_C, 'C: staged, TMA store', 230)])
    f.line(24, y + 226, 38, y + 226, stroke='#d62728', sw=1.2, dash='4,3')
    f.text(44, y + 230, 'v45: consumer 0 passes the turn (its last batch is queued)', fs=11)


def main(out):
    top = 348
    h = top + len(SHAPES) * GROUP + 110
    f = Fig(760, h, fs=12)
    f.text(380, 22, 'v45: ping-pong, one tile stored while the other multiplies (bf16)', fs=14,
           anchor='middle', weight='bold')
    f.text(380, 40, "a block's tensor cores and consumer warpgroups at 8 k steps a tile (a schematic, not to scale)",
           fs=10, anchor='middle')
    schematic(f, 52)
    f.text(380, 302, 'H100, % of cuBLAS in the same process (step45 and its variant v43, v43\'s plan)', fs=10,
           anchor='middle')
    legend(f, 24, 324, [(OLD_C, "step45 v43 (the control)", 300), (NEW_C, 'step45: ping-pong where the plan takes it', 330)])
    rows = pair_rows(SHAPES, (45, 'v43', OLD_C), (45, '', NEW_C))
    pct_bars(f, X0, top, PX, P_MIN, P_MAX, GROUP, BAR, rows, refs=((95, '#ff7f00'), (100, '#d62728')), fs=(10, 8))
    plan = published_plan(45, 4096, 4096, 512).split(', ping-pong')[0]
    footnotes(f, h - 16, ['bars start at 80%; dashed lines at 95% (the issue\'s floor) and 100%. At 4096 x 4096 x 512',
                     f'the plan takes ping-pong ({plan}):',
                     f'{published_us(45, 4096, 4096, 512)} us against v43\'s {published_us(45, 4096, 4096, 512, "v43")}. '
                     'At the other three K is 4096 or more: both rows run v43\'s plan.'])
    f.save(out)


if __name__ == '__main__':
    main(out_path('v45_ping_pong.svg'))
