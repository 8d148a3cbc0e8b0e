#!/usr/bin/env python3
"""docs/img/v18_swizzle.svg: the 128-byte swizzle of steps/v18_ldmatrix_swizzle,
chunk(tile, r, c) = &tile[r][(c ^ (r % 8)) * 8]: where each 16-byte chunk of a
128-byte row is stored, and what that does to the banks one ldmatrix reads.

    python3 tools/figures/v18_swizzle.py   (writes docs/img/v18_swizzle.svg, or into $FIG_OUT_DIR)
"""
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
from svgfig import Fig, out_path

# one colour per logical chunk c (k = 8c .. 8c + 7)
CHUNK = ['#a6cee3', '#b2df8a', '#fdbf6f', '#cab2d6', '#fb9a99', '#ffff99', '#8dd3c7', '#d9d9d9']
HL = '#c0392b'
CW, CH = 50, 28


def panel(f, x0, y0, title, where, note):
    f.text(x0 + 4 * CW, y0 - 52, title, fs=12, anchor='middle', weight='bold')
    for p in range(8):
        f.text(x0 + p * CW + CW / 2, y0 - 24, f'{4 * p}-{4 * p + 3}', fs=10, anchor='middle', fill='#555')
        f.text(x0 + p * CW + CW / 2, y0 - 8, f'@{16 * p}', fs=10, anchor='middle', fill='#555')
    f.text(x0 - 6, y0 - 24, 'banks', fs=10, anchor='end', fill='#555')
    f.text(x0 - 6, y0 - 8, 'byte', fs=10, anchor='end', fill='#555')
    for r in range(8):
        f.text(x0 - 6, y0 + r * CH + CH / 2 + 4, f'row {r}', fs=10, anchor='end')
        for c in range(8):
            p = where(r, c)
            f.rect(x0 + p * CW, y0 + r * CH, CW, CH, fill=CHUNK[c], stroke='#777', sw=0.5,
                   label=f'c{c}', fs=11, weight='bold' if c == 0 else None)
    for r in range(8):   # the 8 chunks one ldmatrix phase reads: chunk 0 of rows 0..7
        p = where(r, 0)
        f.rect(x0 + p * CW + 1.5, y0 + r * CH + 1.5, CW - 3, CH - 3, stroke=HL, sw=2.5)
    for i, s in enumerate(note):
        f.text(x0 + 4 * CW, y0 + 8 * CH + 22 + i * 16, s, fs=11, anchor='middle', fill=HL if i == 0 else '#000')


def main(out):
    f = Fig(1060, 470, fs=12)
    f.text(530, 22, 'one 128-byte row of a tile = BK 64 bf16 = 8 chunks of 16 bytes (c0 = k 0-7, '
                    'c1 = k 8-15, ...) = the 32 banks once', fs=12, anchor='middle')
    x1, x2, y0 = 80, 610, 110
    panel(f, x1, y0, 'stored plainly (v17): chunk c at c', lambda r, c: c,
          ['chunk c0 of rows 0-7: banks 0-3, 8 times',
           'reading it (8 lanes, one row each) takes 8 passes'])
    panel(f, x2, y0, 'swizzled (v18): chunk c of row r at c ^ (r % 8)', lambda r, c: c ^ (r % 8),
          ['chunk c0 of rows 0-7: 8 different bank groups',
           'one pass; so does any other chunk column'])
    f.line(x1 + 8 * CW + 10, y0 + 4 * CH, x2 - 58, y0 + 4 * CH, stroke='#444', sw=1.5, arrow=True)
    f.text(x1 + 8 * CW + 34, y0 + 4 * CH - 8, 'c ^ r', fs=11, anchor='middle')
    lines = ['v18: chunk(tile, r, c) = &tile[r][(c ^ (r % 8)) * 8], used by the 16-byte stores and by ldmatrix;',
             'rows 8-15 repeat rows 0-7. The same layout is CUTLASS\'s Swizzle<3,4,3> and TMA\'s SWIZZLE_128B.']
    for i, s in enumerate(lines):
        f.text(530, y0 + 8 * CH + 80 + i * 17, s, fs=11, anchor='middle')
    f.save(out)


if __name__ == '__main__':
    main(out_path('v18_swizzle.svg'))
