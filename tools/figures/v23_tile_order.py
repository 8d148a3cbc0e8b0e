#!/usr/bin/env python3
"""docs/img/v23_tile_order.svg: the persistent kernel's tile order of
steps/v23_persistent at the vocabulary head (M 4096, N 128256: 32 x 501
tiles of 128 x 256), grid = 132 blocks (one per SM of the H100), block b
taking tiles b, b + 132, b + 264, ...; tile t placed by tile_origin() with
GROUP_M 16 (v23) and GROUP_M 1 (row-major, v22's order).

    python3 tools/figures/v23_tile_order.py   (writes docs/img/v23_tile_order.svg, or into $FIG_OUT_DIR)
"""
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
from svgfig import Fig, out_path

TILES_M, TILES_N, GRID = 32, 501, 132      # 4096 / 128, ceil(128256 / 256), SMs
WAVE = ['#a6cee3', '#b2df8a', '#fdbf6f']   # waves 0, 1, 2; later ones grey
LATER = '#ececec'
HL, BLOCK = '#c0392b', 3
CW, CH = 34, 15
COLS = 18                                  # N-tiles drawn of the 501


def tile_origin(t, group_m):
    """v23's tile_origin(), in tile units: (m-tile, n-tile) of tile number t."""
    per_group = group_m * TILES_N
    first = t // per_group * group_m
    rows = min(group_m, TILES_M - first)
    r = t % per_group
    return first + r % rows, r // rows


def panel(f, x0, y0, group_m, nrows, title):
    where = {}
    for t in range(TILES_M * TILES_N):
        m, n = tile_origin(t, group_m)
        if m < nrows and n < COLS:
            where[(m, n)] = t
        if len(where) == nrows * COLS:
            break
    f.text(x0, y0 - 30, title, fs=12, weight='bold')
    for n in range(COLS):
        f.text(x0 + n * CW + CW / 2, y0 - 6, str(n), fs=9, anchor='middle', fill='#555')
    f.text(x0 + COLS * CW + 4, y0 - 6, '..500', fs=9, fill='#555')
    f.text(x0 - 4, y0 - 6, 'm\\n', fs=9, anchor='end', fill='#555')
    for m in range(nrows):
        f.text(x0 - 4, y0 + m * CH + CH / 2 + 3, str(m), fs=9, anchor='end', fill='#555')
        for n in range(COLS):
            t = where[(m, n)]
            w = t // GRID
            mine = t % GRID == BLOCK
            f.rect(x0 + n * CW, y0 + m * CH, CW, CH, fill=WAVE[w] if w < 3 else LATER, stroke='#999', sw=0.4,
                   label=str(t), fs=9, lfill=HL if mine else ('#000' if w < 3 else '#888'),
                   weight='bold' if mine else None)
            if mine:
                f.rect(x0 + n * CW + 1, y0 + m * CH + 1, CW - 2, CH - 2, stroke=HL, sw=2)
        if group_m > 1 and m % group_m == group_m - 1 and m < nrows - 1:
            f.line(x0 - 20, y0 + (m + 1) * CH, x0 + COLS * CW + 20, y0 + (m + 1) * CH, stroke='#000', sw=1.5)


def main(out):
    f = Fig(960, 790, fs=12)
    f.text(480, 22, 'v23: which block takes which tile, and in which wave (vocabulary head: M 4096, '
                    'N 128256, tiles 128 x 256)', fs=13, anchor='middle', weight='bold')
    f.text(480, 40, 'cell = one tile of C, labelled with its number t; grid = 132 blocks, one per SM; '
                    'block b takes t = b, b + 132, b + 264, ...', fs=11, anchor='middle')
    x0 = 60
    panel(f, x0, 104, 16, 32, 'grouped, GROUP_M = 16 (v23): t runs down 16 m-tiles, then to the next n-tile')
    y2 = 104 + 32 * CH + 62
    panel(f, x0, y2, 1, 4, 'row-major, GROUP_M = 1 (v22\'s blockIdx order): t runs along n')
    # legend and notes on the right
    lx = x0 + COLS * CW + 44
    ly = 122
    for i, (c, s) in enumerate([(WAVE[0], 'wave 0: t 0-131'), (WAVE[1], 'wave 1: t 132-263'),
                                (WAVE[2], 'wave 2: t 264-395'), (LATER, 'later waves')]):
        f.rect(lx, ly + i * 20 - 11, 14, 14, fill=c, stroke='#999', sw=0.5)
        f.text(lx + 20, ly + i * 20, s, fs=11)
    f.rect(lx, ly + 80 - 11, 14, 14, stroke=HL, sw=2)
    f.text(lx + 20, ly + 80, f'block {BLOCK}\'s tiles', fs=11, fill=HL)
    notes = ['grouped, wave 0 covers', 'm-tiles 0-15 x n-tiles 0-8:', '16 A strips (1 MB each)',
             '+ 9 B strips (2 MB each);', 'wave 1 moves on to the', 'next 8 n-tiles; m-tiles',
             '16-31 come after all', '501 n-tiles (t 8016-).', '',
             'a strip = 128 or 256', 'rows x K 4096 x 2 bytes,', 'read by every tile of its', 'row or column.']
    for i, s in enumerate(notes):
        f.text(lx, ly + 120 + i * 16, s, fs=11)
    notes2 = ['row-major, wave 0 is', 'm-tile 0 x n-tiles 0-131:', '1 A strip + 132 B strips',
              '= 265 MB; m-tile 1 reads', 'those B strips again', '~4 waves later (t 501-),',
              'long after the 50 MB L2', 'has dropped them.']
    for i, s in enumerate(notes2):
        f.text(lx, y2 + 12 + i * 16, s, fs=11)
    f.save(out)


if __name__ == '__main__':
    main(out_path('v23_tile_order.svg'))
