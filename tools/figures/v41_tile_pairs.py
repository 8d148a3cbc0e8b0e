#!/usr/bin/env python3
"""docs/img/v41_tile_pairs.svg: one row of 128 x 128 tiles of 8192 x 256 x 4096 (two tiles
across N) and one k step (64 of K), under v40's plan (each tile's block reads its own copy
of A's 128 x 64 box and its own B box out of L2) and v41's (the two blocks are one cluster;
each copies 64 of the A box's 128 rows into both, TMA multicast), with the bytes a k step
asks of L2 and the published times (results/h100-80gb-hbm3/step41.csv: the variant v40's
row and v41's own).

    python3 tools/figures/v41_tile_pairs.py   (writes docs/img/v41_tile_pairs.svg, or into $FIG_OUT_DIR)
"""
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
from svgfig import Fig, footnotes, out_path, published_us

A_C, A2_C, B_C, SM_C = '#1f78b4', '#a6cee3', '#33a02c', '#f0f0f0'


def block(f, x, y, name, a_rows, b_col):
    """One SM's stage: the A box (128 x 64, drawn as two halves) and its B box."""
    f.rect(x, y, 150, 150, fill=SM_C, stroke='#888', sw=0.8)
    f.text(x + 6, y + 14, name, fs=11, weight='bold')
    f.rect(x + 12, y + 24, 48, 52, fill=a_rows[0], stroke='#444', sw=0.8, label='A 0-63', fs=9, lfill='#fff')
    f.rect(x + 12, y + 76, 48, 52, fill=a_rows[1], stroke='#444', sw=0.8, label='A 64-127', fs=9)
    f.rect(x + 80, y + 24, 52, 104, fill=B_C, stroke='#444', sw=0.8, label=b_col, fs=9, lfill='#fff')
    f.text(x + 6, y + 144, 'a stage: 16 KB A + 16 KB B', fs=9, fill='#444')


def main(out):
    t40, t41 = published_us(41, 8192, 256, 4096, 'v40'), published_us(41, 8192, 256, 4096, '')
    f = Fig(900, 560, fs=12)
    f.text(450, 22, 'v41: the two tiles of a row of 8192 x 256 x 4096 read A once, in a cluster of two',
           fs=14, anchor='middle', weight='bold')
    f.text(450, 40, 'one k step (64 of K); the A box is the tile row\'s 128 rows of A (67 MB in all, streamed from DRAM once)',
           fs=10, anchor='middle')

    # v40: two blocks, each reads the whole A box and its own B box from L2.
    x0, y0 = 40, 100
    f.text(x0, y0 - 22, 'v40: two blocks, two copies of A out of L2', fs=12, weight='bold')
    f.rect(x0, y0, 130, 60, fill='#fff', stroke='#444', sw=1, label='L2', fs=12)
    for i, bc in enumerate(('B\ncols\n0-127', 'B\ncols\n128-255')):
        bx = x0 + 170 * i + 20
        block(f, bx - 20, y0 + 110, f'block {i}', (A_C, A2_C), bc)
        f.line(x0 + 40 + 50 * i, y0 + 60, bx + 10, y0 + 132, stroke=A_C, sw=1.6, arrow=True)
        f.line(x0 + 60 + 50 * i, y0 + 60, bx + 85, y0 + 132, stroke=B_C, sw=1.2, arrow=True)
    f.text(x0, y0 + 290, 'each block asks L2 for 16 KB of A + 16 KB of B:', fs=11)
    f.text(x0, y0 + 306, '32 KB a k step; A leaves L2 twice', fs=11)
    f.text(x0, y0 + 334, f'{t40} us (variant v40)', fs=13, weight='bold')

    # v41: the pair; block r copies A rows 64 r .. 64 r + 63 into both blocks.
    x1 = 480
    f.text(x1, y0 - 22, 'v41: one cluster, each block copies half of A into both', fs=12, weight='bold')
    f.rect(x1, y0, 130, 60, fill='#fff', stroke='#444', sw=1, label='L2', fs=12)
    for i, bc in enumerate(('B\ncols\n0-127', 'B\ncols\n128-255')):
        bx = x1 + 170 * i + 20
        block(f, bx - 20, y0 + 110, f'block {i}', (A_C, A2_C), bc)
        f.line(x1 + 60 + 50 * i, y0 + 60, bx + 85, y0 + 132, stroke=B_C, sw=1.2, arrow=True)
    # block 0's half (rows 0-63) lands in both; block 1's half (rows 64-127) too.
    f.line(x1 + 30, y0 + 60, x1 + 16, y0 + 132, stroke=A_C, sw=1.6, arrow=True)
    f.line(x1 + 30, y0 + 60, x1 + 186, y0 + 132, stroke=A_C, sw=1.6, arrow=True, dash='4,3')
    f.line(x1 + 100, y0 + 60, x1 + 186, y0 + 186, stroke=A2_C, sw=1.6, arrow=True)
    f.line(x1 + 100, y0 + 60, x1 + 16, y0 + 186, stroke=A2_C, sw=1.6, arrow=True, dash='4,3')
    f.text(x1 + 140, y0 + 22, 'rows 0-63: asked by block 0,', fs=9, fill='#333')
    f.text(x1 + 140, y0 + 34, 'written into both (multicast);', fs=9, fill='#333')
    f.text(x1 + 140, y0 + 46, 'rows 64-127: by block 1', fs=9, fill='#333')
    f.text(x1, y0 + 290, 'each block asks L2 for 8 KB of A + 16 KB of B:', fs=11)
    f.text(x1, y0 + 306, '24 KB a k step; A leaves L2 once', fs=11)
    f.text(x1, y0 + 334, f'{t41} us (v41)', fs=13, weight='bold')

    footnotes(f, 544, [
        'Both plans run 128 blocks of 128 x 128 in one wave and read the same 69 MB from DRAM (ncu).',
        'A 256-wide tile would read A once too, but only 64 of them fit the problem: half the SMs would idle.',
        'The pair keeps both SMs and reads A as a 256-wide tile does; a stage is refilled only when both blocks are done with it.',
    ])
    f.save(out)


if __name__ == '__main__':
    main(out_path('v41_tile_pairs.svg'))
