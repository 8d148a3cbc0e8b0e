#!/usr/bin/env python3
"""docs/img/v26_swap.svg: what one block multiplies per k step at a decode batch of
M = 8 tokens, drawn to scale (2 px per row or column): v25's tile (the tokens on
wgmma's M side, 128 rows of which 8 are real) against v26's swapped tile (the
weights on the M side, 128 rows, the 8 tokens as wgmma's N), with the shared
memory stage each one fills, and the time of 8 x 4096 x 4096 on the H100, read
from the published run (results/h100-80gb-hbm3/step26.csv: the variant no_swap's
row and v26's own).

    python3 tools/figures/v26_swap.py   (writes docs/img/v26_swap.svg, or into $FIG_OUT_DIR)
"""
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
from svgfig import Fig, out_path, published_us

PX = 2                                    # pixels per row or column of a tile
M_TOK, ROWS, COLS_V25 = 8, 128, 128       # tokens; wgmma M side per block; v25's tile width
REAL_C, ZERO_C, W_C = '#1f78b4', '#e4e4e4', '#33a02c'


def tile(f, x, y, w_cols, real_rows, real_colour, title, sub):
    """A tile of ROWS x w_cols at (x, y): the first real_rows rows in colour, the rest zeros."""
    f.text(x, y - 30, title, fs=12, weight='bold')
    f.text(x, y - 14, sub, fs=10, fill='#444')
    f.rect(x, y, w_cols * PX, real_rows * PX, fill=real_colour, stroke='none', sw=0)
    if real_rows < ROWS:
        f.rect(x, y + real_rows * PX, w_cols * PX, (ROWS - real_rows) * PX, fill=ZERO_C, stroke='none', sw=0)
    f.rect(x, y, w_cols * PX, ROWS * PX, fill='none', stroke='#444', sw=1)


def main(out):
    t_v25, t_v26 = published_us(26, 8, 4096, 4096, 'no_swap'), published_us(26, 8, 4096, 4096, '')
    f = Fig(760, 500, fs=12)
    f.text(380, 22, 'v26: one block\'s multiply per k step at M = 8 tokens, drawn to scale', fs=14,
           anchor='middle', weight='bold')
    f.text(380, 40, '8 x 4096 x 4096 on the H100; a row or column of a tile is 2 px', fs=10, anchor='middle')

    # v25: tokens on the M side, 128 rows, 8 real; the weights are its 128 columns.
    x0, y0 = 40, 110
    tile(f, x0, y0, COLS_V25, M_TOK, REAL_C, 'v25: C tile = tokens x weights',
         'wgmma m64n128, two of them: 128 x 128')
    f.text(x0 + COLS_V25 * PX + 8, y0 + 12, '8 token rows: real', fs=10, fill=REAL_C)
    f.text(x0 + COLS_V25 * PX / 2, y0 + ROWS * PX / 2 + 4, '120 rows of zeros', fs=11, anchor='middle',
           fill='#555')
    f.text(x0 + COLS_V25 * PX / 2, y0 + ROWS * PX / 2 + 20, 'multiplied anyway', fs=11, anchor='middle',
           fill='#555')
    yb = y0 + ROWS * PX
    f.text(x0, yb + 22, 'real work: 8 / 128 = 6% of each wgmma', fs=11)
    f.text(x0, yb + 40, 'stage: 16 KB of A (15 KB zeros) + 16 KB of B', fs=11)
    f.text(x0, yb + 64, f'{t_v25} us (variant no_swap)', fs=13, weight='bold')

    # v26: weights on the M side, 128 rows, all real; the 8 tokens are wgmma's N.
    x1 = 440
    tile(f, x1, y0, M_TOK, ROWS, W_C, 'v26: C^T tile = weights x tokens', 'wgmma m64n8, two of them: 128 x 8')
    f.text(x1 + M_TOK * PX + 10, y0 + 12, '8 token columns', fs=10, fill='#333')
    f.text(x1 + M_TOK * PX + 10, y0 + ROWS * PX / 2 + 4, '128 weight rows,', fs=11, fill='#333')
    f.text(x1 + M_TOK * PX + 10, y0 + ROWS * PX / 2 + 20, 'all real', fs=11, fill='#333')
    f.text(x1, yb + 22, 'real work: 100% of each wgmma', fs=11)
    f.text(x1, yb + 40, 'stage: 16 KB of weights + 1 KB of tokens', fs=11)
    f.text(x1, yb + 64, f'{t_v26} us (v26)', fs=13, weight='bold')

    f.text(24, 470, 'Both read the same 33.6 MB from DRAM (ncu); v25 takes the same time at M = 8, 32 and 64.',
           fs=11)
    f.text(24, 486, 'Colour: real rows; grey: rows past M, which the TMA fills with zeros.', fs=11)
    f.save(out)


if __name__ == '__main__':
    main(out_path('v26_swap.svg'))
