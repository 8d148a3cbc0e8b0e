#!/usr/bin/env python3
"""docs/img/v20_descriptors.svg: which swizzled 16-byte chunks each k16 wgmma
of steps/v20_wgmma reads.  A K-major tile in the 128-byte swizzle (chunk c of
row r at c ^ (r % 8), v18's chunk()); make_desc(tile) + 2 * kk moves the
descriptor's start address 32 bytes per k16 step; the tensor core adds
128 bytes a row and SBO = 1024 bytes per 8-row group, then XORs address bits
4-6 with bits 7-9.

    python3 tools/figures/v20_descriptors.py   (writes docs/img/v20_descriptors.svg, or into $FIG_OUT_DIR)
"""
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
from svgfig import Fig, out_path

KK = ['#a6cee3', '#b2df8a', '#fdbf6f', '#cab2d6']   # one colour per k16 step kk = 0..3
IDLE = '#f4f4f4'
CW, CH = 26, 20


def main(out):
    f = Fig(1060, 600, fs=12)
    f.text(530, 22, 'v20: what each k16 wgmma reads of a K-major tile in the 128-byte swizzle '
                    '(BK = 64 bf16 = one 128-byte row)', fs=13, anchor='middle', weight='bold')
    # the logical row: 8 chunks, two per k16 step
    x0, y0 = 200, 58
    f.text(x0 - 10, y0 + 27, 'one row, as k runs:', fs=11, anchor='end')
    for c in range(8):
        f.rect(x0 + c * 80, y0 + 12, 80, 24, fill=KK[c // 2], stroke='#777', sw=0.5,
               label=f'c{c}: k {8 * c}-{8 * c + 7}', fs=10)
        f.text(x0 + c * 80 + 2, y0 + 48, f'{16 * c}', fs=9, anchor='start', fill='#555')
    f.text(x0 + 640 + 2, y0 + 48, '128 bytes', fs=9, anchor='start', fill='#555')
    for kk in range(4):
        f.text(x0 + kk * 160 + 80, y0 + 5, f'k16 step kk = {kk}', fs=11, anchor='middle', weight='bold',
               fill='#000')
    # four 8-row groups as stored, one per kk: the 16 chunks that wgmma kk reads
    py = 170
    pw = 8 * CW
    gap = (1060 - 100 - 4 * pw) / 3
    for kk in range(4):
        px = 60 + kk * (pw + gap)
        if kk == 0:
            for r in range(8):
                f.text(px - 4, py + r * CH + CH / 2 + 3, f'r{r}', fs=9, anchor='end', fill='#555')
        f.text(px + pw / 2, py - 30, f'wgmma kk = {kk}: desc + {2 * kk}', fs=11, anchor='middle',
               weight='bold')
        f.text(px + pw / 2, py - 14, f'start = tile + {32 * kk} bytes', fs=10, anchor='middle')
        for r in range(8):
            for p in range(8):
                c = p ^ r   # the logical chunk stored at position p of row r
                mine = c // 2 == kk
                f.rect(px + p * CW, py + r * CH, CW, CH, fill=KK[kk] if mine else IDLE, stroke='#999',
                       sw=0.5, label=f'c{c}', fs=9, lfill='#000' if mine else '#aaa',
                       weight='bold' if mine else None)
        f.text(px + pw / 2, py + 8 * CH + 14, 'stored position 0..7 ->', fs=9, anchor='middle', fill='#555')
    for i, s in enumerate(['rows 0-7 of a tile (one 1024-byte group); each cell is a 16-byte chunk at its '
                           'stored position, labelled with the logical chunk it holds.',
                           'k16 step kk reads chunks 2kk and 2kk+1 of every row, which the swizzle has put at '
                           'positions 2kk ^ r and (2kk+1) ^ r: two a row,',
                           'each in 8 different bank groups over the 8 rows.']):
        f.text(40, py + 8 * CH + 34 + i * 14, s, fs=10)
    # the address the tensor core forms
    ay = py + 8 * CH + 96
    lines = [
        ('address of row r, chunk j (0, 1) of step kk, before the swizzle:', True),
        ('  tile + 32 kk + 16 j   +   128 (r % 8)   +   1024 (r / 8)', False),
        ('         start address      a 128-byte row     SBO: the next 8-row group', False),
        ('then bits 4-6 ^= bits 7-9, i.e. chunk (2 kk + j) ^ (r % 8): the layout chunk() wrote. '
         'That is why each group', True),
        ('must start on 1024 bytes (As, Bs and each stage are 1024-aligned), and why +32 bytes '
         'moves one k16 step.', True)]
    for i, (s, _) in enumerate(lines):
        f.text(40, ay + i * 17, s, fs=11)
    # the groups of one operand
    gy = ay + 5 * 17 + 20
    f.text(40, gy + 15, 'As, warpgroup 0:', fs=11)
    for gi in range(8):
        f.rect(170 + gi * 66, gy, 66, 22, fill='#e8eef6', stroke='#777', sw=0.5,
               label=f'rows {8 * gi}-{8 * gi + 7}', fs=9)
    f.text(170 + 8 * 66 + 8, gy + 15, '8 x 1024 B = 8 KB: A of m64 (wg 1: rows 64-127)',
           fs=10)
    f.text(40, gy + 45, 'Bs, both warpgroups: 32 such groups (rows 0-255 = n), 32 KB: B of n256; '
           'each wgmma reads 16 chunks of every group of both.', fs=10)
    f.save(out)


if __name__ == '__main__':
    main(out_path('v20_descriptors.svg'))
