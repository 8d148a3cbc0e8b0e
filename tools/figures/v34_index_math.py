#!/usr/bin/env python3
"""docs/img/v34_index_math.svg: v27's index arithmetic against v34's multiply-high divisions,
in the same kernel and the same process, at Part IV's 24 public shapes: each step34 row (the
`divisions` variant is v27's arithmetic) as % of cuBLAS timed beside it.  Every bar is a row
of results/h100-80gb-hbm3/step34.csv (pair_rows).

    python3 tools/figures/v34_index_math.py   (writes docs/img/v34_index_math.svg, or into $FIG_OUT_DIR)
"""
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
from svgfig import Fig, footnotes, legend, out_path, pair_rows, pct_bars

SHAPES = [(512, 512, 512), (1024, 1024, 1024), (1536, 1536, 1536), (2048, 2048, 2048), (4096, 4096, 4096),
          (8192, 8192, 8192)] + [(m, n, k) for m in (8, 32, 64, 256, 1024)
                                 for (n, k) in ((4096, 4096), (14336, 4096), (4096, 14336))] + \
         [(8192, 256, 4096), (4096, 512, 8192), (4096, 4096, 512)]
OLD_C, NEW_C = '#fdbf6f', '#ff7f00'
X0, PX = 190, 9.0                         # the bars' left edge (at 60%); pixels per percent
P_MIN, P_MAX = 60, 110                    # the axis: 60% to 110%
GROUP, BAR = 24, 9                        # a problem's rows, and each bar's height


def main(out):
    top = 84
    h = top + len(SHAPES) * GROUP + 90
    f = Fig(720, h, fs=12)
    f.text(360, 22, "v34: the same kernel with v27's divisions and with multiply-high", fs=14, anchor='middle',
           weight='bold')
    f.text(360, 40, "bf16 GEMM on the H100, Part IV's public shapes; each bar: % of cuBLAS in the same process",
           fs=10, anchor='middle')
    legend(f, 24, 64, [(OLD_C, "step34 divisions (v27's arithmetic)", 260),
                       (NEW_C, "step34: every division a multiply-high", 300)])
    rows = pair_rows(SHAPES, (34, 'divisions', OLD_C), (34, '', NEW_C))
    pct_bars(f, X0, top, PX, P_MIN, P_MAX, GROUP, BAR, rows, refs=((95, '#888'), (100, '#d62728')), fs=(10, 8))
    footnotes(f, h, ['bars start at 60%; dashed lines at 95% and 100%. Both rows run v27\'s plan;',
                     'the divisions are paid once per unit, on the producer\'s and the consumers\' paths.'])
    f.save(out)


if __name__ == '__main__':
    main(out_path('v34_index_math.svg'))
