#!/usr/bin/env python3
"""docs/img/v33_chain.svg: the 128 x 192 tile's kernel before and after v33 shortened the
chain a consumer walks after its batch, at the ten problems of the published run: each
step's `w192` row (the 192-wide tile everywhere: v29's loop in step31, v33's in step33),
as % of cuBLASLt's block-scaled GEMM timed beside it in the same process.  Every bar is a
row of results/h100-80gb-hbm3/step31.csv or step33.csv (pair_rows).

    python3 tools/figures/v33_chain.py   (writes docs/img/v33_chain.svg, or into $FIG_OUT_DIR)
"""
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
from svgfig import PART5_SHAPES as SHAPES, Fig, footnotes, legend, out_path, pair_rows, pct_bars

OLD_C, NEW_C = '#a6cee3', '#1f78b4'
X0, PX = 190, 9.0                         # the bars' left edge (at 60%); pixels per percent
P_MIN, P_MAX = 60, 120                    # the axis: 60% to 120%
GROUP, BAR = 30, 11                       # a problem's rows, and each bar's height


def main(out):
    top = 84
    h = top + len(SHAPES) * GROUP + 90
    f = Fig(800, h, fs=12)
    f.text(400, 22, "v33: the 128 x 192 tile's kernel, before and after its chain was shortened", fs=14,
           anchor='middle', weight='bold')
    f.text(400, 40, "FP8 block-scaled GEMM on the H100; each bar: % of cuBLASLt's block-scaled GEMM in the same process",
           fs=10, anchor='middle')
    legend(f, 24, 64, [(OLD_C, "v31's w192 row (v29's loop)", 230),
                       (NEW_C, "v33's w192 row: next stage's wait under the batch, C in one round", 480)])
    rows = pair_rows(SHAPES, (31, 'w192', OLD_C), (33, 'w192', NEW_C))
    pct_bars(f, X0, top, PX, P_MIN, P_MAX, GROUP, BAR, rows)
    footnotes(f, h, ['bars start at 60%. The w192 rows run the 192-wide tile at every problem; the plan of each',
                     'step picks 128 wide where its rounds cost less (v33: 4096^3, 4096 x 4096 x 14336, ...).'])
    f.save(out)


if __name__ == '__main__':
    main(out_path('v33_chain.svg'))
