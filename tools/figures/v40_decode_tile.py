#!/usr/bin/env python3
"""docs/img/v40_decode_tile.svg: at a decode batch, 64 x 4096 x 4096, which part of the
weights (4096 rows x 4096 of K, drawn to scale) each SM works on, under v39's plan (32
tiles of 128 weight rows, K split 4 ways: 128 units, their partials summed by the fix-up)
and v40's (64 tiles of 64 weight rows, K whole, two token tiles of 32 each: 128 blocks in 64
clusters of two that share the weights by TMA multicast), with one cluster's stage drawn
beside it.  The times are the published run's (results/h100-80gb-hbm3/step40.csv: the
variant v39's row and v40's own).

    python3 tools/figures/v40_decode_tile.py   (writes docs/img/v40_decode_tile.svg, or into $FIG_OUT_DIR)
"""
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
from svgfig import Fig, footnotes, out_path, published_us

SIDE = 256                                # pixels for 4096 rows or 4096 of K
PX = SIDE / 4096
A_C, B_C, FIX_C, W_C, T_C = '#1f78b4', '#a6cee3', '#e6550d', '#33a02c', '#fdbf6f'


def weights(f, x, y, rows, kranges, title, sub):
    """The weights as SIDE x SIDE, cut in bands of `rows` rows and `kranges` pieces of K, each
    piece one SM's, in two alternating colours."""
    f.text(x, y - 30, title, fs=12, weight='bold')
    f.text(x, y - 14, sub, fs=10, fill='#444')
    bands, h = 4096 // rows, rows * PX
    w = SIDE / kranges
    for b in range(bands):
        for r in range(kranges):
            f.rect(x + r * w, y + b * h, w, h, fill=A_C if (b + r) % 2 == 0 else B_C, stroke='#fff', sw=0.4)
    f.rect(x, y, SIDE, SIDE, fill='none', stroke='#444', sw=1)
    f.text(x + SIDE / 2, y + SIDE + 14, 'K = 4096', fs=10, anchor='middle', fill='#555')
    f.text(x - 6, y + SIDE / 2, 'N', fs=10, anchor='end', fill='#555')


def main(out):
    t_v39, t_v40 = published_us(40, 64, 4096, 4096, 'v39'), published_us(40, 64, 4096, 4096, '')
    f = Fig(880, 590, fs=12)
    f.text(440, 22, 'v40: the weights each SM reads at 64 x 4096 x 4096 (64 tokens), drawn to scale', fs=14,
           anchor='middle', weight='bold')
    f.text(440, 40, 'a cell is one SM\'s share of the weights; the tokens (0.5 MB in all) come from L2',
           fs=10, anchor='middle')

    # v39: 32 bands of 128 rows x 4 K ranges = 128 units.
    x0, y0 = 40, 100
    weights(f, x0, y0, 128, 4, 'v39: 128 rows x 1/4 of K a unit', '32 tiles x split 4 = 128 units, 64 tokens each')
    yb = y0 + SIDE + 34
    f.text(x0, yb, 'each unit: 16 k tiles, then its 128 x 64 fp32', fs=11)
    f.text(x0, yb + 16, 'partial (32 KB) to L2; the last of a tile\'s', fs=11)
    f.text(x0, yb + 32, 'four reads the other three and stores C', fs=11, fill=FIX_C)
    f.text(x0, yb + 58, f'{t_v39} us (variant v39)', fs=13, weight='bold')

    # v40: 64 bands of 64 rows, K whole, two blocks (a cluster) a band.
    x1 = 340
    weights(f, x1, y0, 64, 1, 'v40: 64 rows x all of K a cluster', '64 tiles x 2 token tiles = 128 blocks')
    f.text(x1, yb, 'each band: two blocks, one cluster; tokens', fs=11)
    f.text(x1, yb + 16, '0-31 in one, 32-63 in the other; 64 k tiles,', fs=11)
    f.text(x1, yb + 32, 'no split, no partials, no fix-up', fs=11)
    f.text(x1, yb + 58, f'{t_v40} us (v40)', fs=13, weight='bold')

    # One cluster's stage: each block copies half of the weights' box into both.
    x2, y2 = 650, 100
    f.text(x2, y2 - 30, 'one cluster, one stage', fs=12, weight='bold')
    f.text(x2, y2 - 14, '128 of K: two 64-wide boxes', fs=10, fill='#444')
    bw, bh = 80, 64
    for i, name in enumerate(('block 0', 'block 1')):
        y = y2 + i * 150
        f.text(x2, y + 12, name, fs=11, weight='bold')
        f.rect(x2, y + 20, bw, bh / 2, fill=W_C, stroke='#444', sw=0.8, label='rows 0-31', fs=9, lfill='#fff')
        f.rect(x2, y + 20 + bh / 2, bw, bh / 2, fill='#74c476', stroke='#444', sw=0.8, label='rows 32-63', fs=9)
        f.rect(x2 + bw + 10, y + 20, 40, 32, fill=T_C, stroke='#444', sw=0.8, label='32\ntok', fs=9)
        f.text(x2, y + 20 + bh + 16, 'weights: 2 x 8 KB', fs=9, fill='#555')
        f.text(x2, y + 20 + bh + 28, f'tokens {32 * i}-{32 * i + 31}: 2 x 4 KB', fs=9, fill='#555')
    # block 0 copies rows 0-31 into both, block 1 rows 32-63 into both.
    f.path(f'M {x2 + bw + 58} {y2 + 36} C {x2 + bw + 110} {y2 + 60}, {x2 + bw + 110} {y2 + 160}, '
           f'{x2 + bw + 4} {y2 + 186}', stroke=W_C, sw=1.5, arrow=True)
    f.text(x2 + bw + 70, y2 + 110, 'multicast', fs=9, fill='#333')
    f.text(x2 + bw + 70, y2 + 121, 'each half', fs=9, fill='#333')
    f.text(x2 + bw + 70, y2 + 132, 'to both', fs=9, fill='#333')

    footnotes(f, 574, [
        'Both plans put 128 blocks on the 132 SMs in one wave and read the same 34.1 MB from DRAM (ncu).',
        'v39 splits K because 128-row tiles give only 32 tiles; v40 halves the tile, and the two token tiles',
        'of a weight tile share its rows in a cluster: each weights box is copied out of L2 once for both.',
    ])
    f.save(out)


if __name__ == '__main__':
    main(out_path('v40_decode_tile.svg'))
