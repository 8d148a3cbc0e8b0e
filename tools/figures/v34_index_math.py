#!/usr/bin/env python3
"""docs/img/v34_index_math.svg: v27's index arithmetic against v34's multiply-high divisions,
in the same kernel and the same process, at Part IV's 24 public shapes: each step34 row (the
`divisions` variant is v27's arithmetic) as % of cuBLAS timed beside it.  Every bar is a row
of results/h100-80gb-hbm3/step34.csv (published_row).

    python3 tools/figures/v34_index_math.py   (writes docs/img/v34_index_math.svg, or into $FIG_OUT_DIR)
"""
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
from svgfig import Fig, footnotes, legend, out_path, published_row

SHAPES = [(512, 512, 512), (1024, 1024, 1024), (1536, 1536, 1536), (2048, 2048, 2048), (4096, 4096, 4096),
          (8192, 8192, 8192)] + [(m, n, k) for m in (8, 32, 64, 256, 1024)
                                 for (n, k) in ((4096, 4096), (14336, 4096), (4096, 14336))] + \
         [(8192, 256, 4096), (4096, 512, 8192), (4096, 4096, 512)]
OLD_C, NEW_C = '#fdbf6f', '#ff7f00'
X0, PX = 190, 9.0                         # the bars' left edge (at 60%); pixels per percent
P_MIN, P_MAX = 60, 110                    # the axis: 60% to 110%
GROUP, BAR = 24, 9                        # a problem's rows, and each bar's height


def xp(p):
    return X0 + (p - P_MIN) * PX


def name(m, n, k):
    return f'{m}^3' if m == n == k else f'{m} x {n} x {k}'


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
    for i, (m, n, k) in enumerate(SHAPES):
        y = top + i * GROUP
        old = float(published_row(34, m, n, k, 'divisions')['pct_cublas'])
        new = float(published_row(34, m, n, k, '')['pct_cublas'])
        f.text(X0 - 8, y + BAR + 3, name(m, n, k), fs=10, anchor='end')
        for j, (p, c) in enumerate([(old, OLD_C), (new, NEW_C)]):
            yb = y + j * (BAR + 1)
            f.rect(X0, yb, (min(p, P_MAX) - P_MIN) * PX, BAR, fill=c, stroke='none', sw=0)
            f.text(xp(min(p, P_MAX)) + 4, yb + BAR - 1, f'{p:.1f}', fs=8)
    yb = top + len(SHAPES) * GROUP
    f.line(X0, top - 4, X0, yb, stroke='#444', sw=1)
    f.line(X0, yb, xp(P_MAX), yb, stroke='#444', sw=1)
    for p in range(P_MIN, P_MAX + 1, 10):
        f.line(xp(p), yb, xp(p), yb + 4, stroke='#444', sw=1)
        f.text(xp(p), yb + 16, f'{p}%', fs=9, anchor='middle')
    for p, c in ((95, '#888'), (100, '#d62728')):
        f.line(xp(p), top - 4, xp(p), yb, stroke=c, sw=1, dash='3,3')
    footnotes(f, h, ['bars start at 60%; dashed lines at 95% and 100%. Both rows run v27\'s plan;',
                     'the divisions are paid once per unit, on the producer\'s and the consumers\' paths.'])
    f.save(out)


if __name__ == '__main__':
    main(out_path('v34_index_math.svg'))
