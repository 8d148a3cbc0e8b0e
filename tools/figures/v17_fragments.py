#!/usr/bin/env python3
"""docs/img/v17_fragments.svg: which lane holds which element of A, B and C
for mma.sync.m16n8k16.row.col.f32.bf16.bf16.f32 (PTX ISA, "Matrix Fragments
for mma.m16n8k16 with floating point type"), as steps/v17_mma_sync loads them.

    python3 tools/figures/v17_fragments.py   (writes docs/img/v17_fragments.svg, or into $FIG_OUT_DIR)
"""
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
from svgfig import Fig, out_path

# one colour per register of a lane: a0..a3 / b0, b1 / c0..c3
REG = ['#cfe2f3', '#f9d9b4', '#d5e8c4', '#e6d3ef']
HL = '#c0392b'        # the example lane
EX = 5                # lane 5: g = 1, t = 1
CW, CH = 22, 18       # cell size


def a_owner(m, k):
    """PTX: a(2r+e) for register r: row g (+8 for r = 1, 3), col 2t + e (+8 for r = 2, 3)."""
    g, rhi = m % 8, m // 8
    t, khi = (k % 8) // 2, k // 8
    return 4 * g + t, rhi + 2 * khi          # lane, register: a0 (g, k lo), a1 (g+8), a2 (k+8), a3


def b_owner(k, n):
    """PTX: row (= k) 2t + e (+8 for b1), col (= n) g."""
    return 4 * n + (k % 8) // 2, k // 8


def c_owner(m, n):
    """PTX: c0, c1 row g, c2, c3 row g + 8; col 2t + (i & 1)."""
    return 4 * (m % 8) + n // 2, 2 * (m // 8) + n % 2


def grid(f, x0, y0, rows, cols, owner, regname, rowlab, collab):
    for r in range(rows):
        f.text(x0 - 4, y0 + r * CH + CH / 2 + 3, str(r), fs=9, anchor='end', fill='#555')
    for c in range(cols):
        f.text(x0 + c * CW + CW / 2, y0 - 4, str(c), fs=9, anchor='middle', fill='#555')
    f.text(x0 - 4, y0 - 4, rowlab + '\\' + collab, fs=9, anchor='end', fill='#555')
    hl = []
    for r in range(rows):
        for c in range(cols):
            lane, reg = owner(r, c)
            x, y = x0 + c * CW, y0 + r * CH
            f.rect(x, y, CW, CH, fill=REG[reg], stroke='#888', sw=0.5, label=f'T{lane}', fs=9,
                   lfill=HL if lane == EX else '#000', weight='bold' if lane == EX else None)
            if lane == EX:
                hl.append((x, y))
    for x, y in hl:
        f.rect(x + 1, y + 1, CW - 2, CH - 2, stroke=HL, sw=2)
    # the 8-row / 8-column halves
    if rows == 16:
        f.line(x0, y0 + 8 * CH, x0 + cols * CW, y0 + 8 * CH, stroke='#000', sw=1.5)
    if cols == 16:
        f.line(x0 + 8 * CW, y0, x0 + 8 * CW, y0 + rows * CH, stroke='#000', sw=1.5)


def legend(f, x, y, names, fs=11, first=0):
    for i, n in enumerate(names):
        f.rect(x + i * 62, y - 11, 14, 14, fill=REG[first + i], stroke='#888', sw=0.5)
        f.text(x + i * 62 + 18, y, n, fs=fs)


def main(out):
    f = Fig(940, 760, fs=12)
    f.text(470, 22, 'mma.sync.m16n8k16 .row.col, bf16 in, fp32 accumulators: which lane holds what',
           fs=13, anchor='middle', weight='bold')
    f.text(470, 40, 'lane = 4g + t (g = lane / 4, t = lane % 4); a cell is one element, labelled with '
                    'its lane; colour = register', fs=11, anchor='middle')

    ax, cy = 60, 420            # A and C share their rows
    bx, by = ax + 16 * CW + 70, 90
    # B: 16 (k) x 8 (n), above C
    f.text(bx + 4 * CW, by - 24, 'B: 16 (k) x 8 (n), "col"', fs=12, anchor='middle', weight='bold')
    grid(f, bx, by, 16, 8, b_owner, 'b', 'k', 'n')
    legend(f, bx + 8 * CW + 20, by + 10, ['b0', 'b1'])
    notes_b = ['b0: k 2t, 2t+1, column n = g', 'b1: k 2t+8, 2t+9, column g',
               '', 'in memory: Bs[n][k], k contiguous,', 'so each register is one 4-byte',
               'load of row g of Bs:', '  b0 = Bs[g][2t..2t+1]', '  b1 = Bs[g][2t+8..2t+9]']
    for i, s in enumerate(notes_b):
        f.text(bx + 8 * CW + 20, by + 40 + i * 16, s, fs=11)

    # A: 16 (m) x 16 (k)
    f.text(ax + 8 * CW, cy - 24, 'A: 16 (m) x 16 (k), "row"', fs=12, anchor='middle', weight='bold')
    grid(f, ax, cy, 16, 16, a_owner, 'a', 'm', 'k')
    # C: 16 (m) x 8 (n)
    f.text(bx + 4 * CW, cy - 24, 'C, D: 16 (m) x 8 (n), fp32', fs=12, anchor='middle', weight='bold')
    grid(f, bx, cy, 16, 8, c_owner, 'c', 'm', 'n')
    legend(f, bx + 8 * CW + 20, cy + 10, ['c0', 'c1'])
    legend(f, bx + 8 * CW + 20, cy + 30, ['c2', 'c3'], first=2)
    notes_c = ['c0, c1: row g,   n 2t, 2t+1', 'c2, c3: row g+8, n 2t, 2t+1', '',
               'epilogue: one bf16x2 store', 'per pair (c0,c1), (c2,c3)']
    for i, s in enumerate(notes_c):
        f.text(bx + 8 * CW + 20, cy + 60 + i * 16, s, fs=11)

    # A's legend and notes, above A (left of B)
    legend(f, ax, by + 10, ['a0', 'a1', 'a2', 'a3'])
    notes_a = ['a 32-bit register holds 2 bf16 of one row,',
               'adjacent in k (the PTX ISA numbers the',
               'elements a0..a7, two per register):',
               '  a0: row g,   k 2t, 2t+1',
               '  a1: row g+8, k 2t, 2t+1',
               '  a2: row g,   k 2t+8, 2t+9',
               '  a3: row g+8, k 2t+8, 2t+9',
               'v17: a0 = lds32(&As[g][kk+2t]) (rows of',
               '     the mma tile), a1 +8 rows, a2 +8 k',
               '',
               'the red outline: lane 5 (g = 1, t = 1):',
               '  A rows 1, 9 x k 2, 3, 10, 11',
               '  B k 2, 3, 10, 11 of column 1',
               '  C rows 1, 9 x columns 2, 3']
    for i, s in enumerate(notes_a):
        f.text(ax, by + 40 + i * 17, s, fs=11, fill=HL if i >= 10 else '#000')
    f.text(470, cy + 16 * CH + 30, 'C[16x8] += A[16x16] * B[16x8]: 4096 FLOP per warp instruction; '
           'a 64 x 32 warp tile is 4 x 4 of these', fs=11, anchor='middle')
    f.save(out)


if __name__ == '__main__':
    main(out_path('v17_fragments.svg'))
