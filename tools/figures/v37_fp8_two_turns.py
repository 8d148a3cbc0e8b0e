#!/usr/bin/env python3
"""docs/img/v37_fp8_two_turns.svg: v33's loop (one turn a pass) against v36's (two turns a pass
where a turn is one k block, the 192-wide tile), in the same kernel and the same process, at
Part V's block-scaled shapes: each step37 row (the `v33` variant is the control) as % of
cuBLASLt's block-scaled GEMM timed beside it.  Every bar is a row of
results/h100-80gb-hbm3/step37.csv (pair_rows); the plan's width is from step37.log.

    python3 tools/figures/v37_fp8_two_turns.py   (writes docs/img/v37_fp8_two_turns.svg, or into $FIG_OUT_DIR)
"""
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
from svgfig import PART5_SHAPES as SHAPES, Fig, footnotes, legend, out_path, pair_rows, pct_bars, plan_widths

OLD_C, NEW_C = '#a6cee3', '#1f78b4'
X0, PX = 250, 9.0                         # the bars' left edge (at 80%); pixels per percent
P_MIN, P_MAX = 80, 130                    # the axis: 80% to 130%
GROUP, BAR = 30, 11                       # a problem's rows, and each bar's height


def main(out):
    top = 84
    h = top + len(SHAPES) * GROUP + 90
    f = Fig(760, h, fs=12)
    f.text(380, 22, "v37: v33's FP8 block-scaled kernel, one turn a pass against two", fs=14, anchor='middle',
           weight='bold')
    f.text(380, 40, "H100, Part V's block-scaled shapes; each bar: % of cuBLASLt in the same process",
           fs=10, anchor='middle')
    legend(f, 24, 64, [(OLD_C, "step37 v33 (one turn a pass, the control)", 300),
                       (NEW_C, "step37: two turns a pass at 192 wide", 300)])
    rows = pair_rows(SHAPES, (37, 'v33', OLD_C), (37, '', NEW_C), plan_widths(37))
    pct_bars(f, X0, top, PX, P_MIN, P_MAX, GROUP, BAR, rows, refs=((100, '#d62728'),), fs=(10, 8))
    footnotes(f, h, ['bars start at 80%; the dashed line at 100%. In brackets the plan\'s tile width, the same in both',
                     'rows; at 128 wide a turn is two k blocks already and both rows run the same loop.'])
    f.save(out)


if __name__ == '__main__':
    main(out_path('v37_fp8_two_turns.svg'))
