#!/usr/bin/env python3
"""docs/img/v38_store_overlap.svg: where a tile's C is stored.  Top, a schematic (not to
scale) of one consumer warpgroup at a tile boundary: the last wait runs under the last
batch; then v32 stores the tile in two 128-column rounds before the next tile's first batch,
and the tensor cores wait; v38 packs the tile into registers, issues the next tile's batches
at once, and writes one 64-column part under each of its first four batches.  Below, every row of step38 (the `v32` variant is the
control: v32's epilogue, line for line, in the same kernel) as % of cuBLASLt's per-tensor FP8 GEMM in the
same process, from results/h100-80gb-hbm3/step38.csv (pair_rows); the plan's width
from step38.log.

    python3 tools/figures/v38_store_overlap.py   (writes docs/img/v38_store_overlap.svg, or into $FIG_OUT_DIR)
"""
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
from svgfig import PART5_SHAPES as SHAPES, Fig, footnotes, lanes, legend, out_path, pair_rows, pct_bars, plan_widths

OLD_C, NEW_C = '#a6cee3', '#1f78b4'
MMA_C, ISSUE_C, STORE_C, WAIT_C, PACK_C = '#b2df8a', '#dddddd', '#fdbf6f', '#fb9a99', '#cab2d6'
X0, PX = 250, 9.0                         # the bars' left edge (at 80%); pixels per percent
P_MIN, P_MAX = 80, 130                    # the axis: 80% to 130%
GROUP, BAR = 30, 11                       # a problem's rows, and each bar's height


LANES = ('tensor cores', 'consumer')   # one consumer warpgroup's schedule


def schematic(f, y):
    K = 54   # a batch's width in the schematic
    # v32: the last two batches, the epilogue (the tensor cores idle), the next tile's first batches
    b32 = [(0, 0, K, MMA_C, 'kt 30'), (0, K, K, MMA_C, 'kt 31'),
           (1, 0, 20, ISSUE_C, ''), (1, K, 20, ISSUE_C, ''), (1, K + 20, K - 20, WAIT_C, 'wait 0'),
           (1, 2 * K, 100, STORE_C, 'cols 0-127'), (1, 2 * K + 100, 100, STORE_C, 'cols 128-255')]
    x = 2 * K + 200
    for i in range(4):
        b32 += [(0, x + i * K, K, MMA_C, 'kt %d' % i), (1, x + i * K, 20, ISSUE_C, '')]
    lanes(f, y, "v32: the tile's C at its end", LANES, b32)
    # v38: pack, then the next tile's batches at once, a 64-column part under each of the first four
    b38 = [(0, 0, K, MMA_C, 'kt 30'), (0, K, K, MMA_C, 'kt 31'),
           (1, 0, 20, ISSUE_C, ''), (1, K, 20, ISSUE_C, ''), (1, K + 20, K - 20, WAIT_C, 'wait 0'),
           (1, 2 * K, 40, PACK_C, 'pack')]
    x = 2 * K + 40
    for i in range(6):
        b38 += [(0, x + i * K, K, MMA_C, 'kt %d' % i), (1, x + i * K, 14, ISSUE_C, '')]
        if i < 4:
            b38.append((1, x + i * K + 14, K - 16, STORE_C, 'part %d' % i))
    lanes(f, y + 80, "v38: the same C, 64 columns under each of the next tile's first batches", LANES, b38)
    legend(f, 24, y + 166, [(MMA_C, 'a k tile\'s wgmma batch', 250), (ISSUE_C, 'wait for the stage, issue', 250)])
    legend(f, 24, y + 184, [(WAIT_C, 'last wait, under the last batch', 250),
                            (STORE_C, 'stage, TMA store (v32: + scale, round)', 250)])
    legend(f, 24, y + 202, [(PACK_C, 'v38: scale and round into pk', 250)])


def main(out):
    top = 328
    h = top + len(SHAPES) * GROUP + 90
    f = Fig(760, h, fs=12)
    f.text(380, 22, "v38: each tile's C stored while the next tile multiplies (FP8, per-tensor)", fs=14,
           anchor='middle', weight='bold')
    f.text(380, 40, 'one consumer warpgroup at a tile boundary, 256 wide (a schematic, not to scale)', fs=10,
           anchor='middle')
    schematic(f, 50)
    f.text(380, 278, "H100, Part V's shapes; each bar: % of cuBLASLt (per-tensor, fast accumulation) in the "
           "same process", fs=10, anchor='middle')
    legend(f, 24, 302, [(OLD_C, "step38 v32 (v32's epilogue, the control)", 300),
                        (NEW_C, "step38: C stored during the next tile", 300)])
    rows = pair_rows(SHAPES, (38, 'v32', OLD_C), (38, '', NEW_C), plan_widths(38))
    pct_bars(f, X0, top, PX, P_MIN, P_MAX, GROUP, BAR, rows, refs=((100, '#d62728'),), fs=(10, 8))
    footnotes(f, h, ['bars start at 80%; the dashed line at 100%. In brackets the plan\'s tile width, the same in both',
                     'rows. At 176 wide v32 already stored 64 columns a round (v38: three parts, 64, 64 and 48).'])
    f.save(out)


if __name__ == '__main__':
    main(out_path('v38_store_overlap.svg'))
