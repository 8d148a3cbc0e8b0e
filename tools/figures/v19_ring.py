#!/usr/bin/env python3
"""docs/img/v19_ring.svg: the cp.async ring of steps/v19_cp_async (STAGES 3)
over its prologue and k tiles 0-2: what each k step issues, the commit
groups, where the code waits (before the LAST k step of a tile), and what
each stage of shared memory holds meanwhile.

    python3 tools/figures/v19_ring.py   (writes docs/img/v19_ring.svg, or into $FIG_OUT_DIR)
"""
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
from svgfig import Fig, out_path

TILE = ['#a6cee3', '#b2df8a', '#fdbf6f', '#cab2d6', '#fb9a99', '#f2f2f2']   # the last: a free stage
LIGHT = ['#dcebf4', '#e3f2d6', '#fee6c6', '#e9e0ef', '#fdd9d8', '#f2f2f2']
RED = '#c0392b'
LX = 178           # where the time axis starts
PW, SW = 74, 66    # a prologue slot, a k-step slot
RH = 34            # row height


def main(out):
    f = Fig(1270, 500, fs=12)
    f.text(635, 22, 'v19: the cp.async ring, STAGES = 3 (each stage As 128 x 64 + Bs 256 x 64 bf16 = 48 KB, '
                    'swizzled as in v18)', fs=13, anchor='middle', weight='bold')
    f.text(635, 40, 'one block, time to the right; tK.kS = k step S (16 of k) of k tile K; '
                    'every thread runs this (8 warps)', fs=11, anchor='middle')
    # slot x positions: 3 prologue slots, then (kt, s) for kt 0..2, s 0..3
    xs = [LX + i * PW for i in range(3)]
    x0 = LX + 3 * PW + 10

    def sx(kt, s):
        return x0 + (4 * kt + s) * SW

    xend = sx(3, 0)
    y = 62
    f.rect(LX, y, 3 * PW, 22, fill='#eee', stroke='#999', label='prologue', fs=11)
    for kt in range(3):
        f.rect(sx(kt, 0), y, 4 * SW, 22, fill='#eee', stroke='#999', label=f'k tile kt = {kt}', fs=11,
               weight='bold')
        for s in range(4):
            f.text(sx(kt, s) + SW / 2, y + 38, f's = {s}', fs=10, anchor='middle', fill='#555')
    rows = ['mma.sync', 'ldmatrix (next)', 'cp.async', 'commit group', 'stage 0', 'stage 1', 'stage 2']
    ry = {n: 112 + i * (RH + 6) + (14 if i >= 4 else 0) for i, n in enumerate(rows)}
    for n, yy in ry.items():
        f.text(LX - 8, yy + RH / 2 + 4, n, fs=11, anchor='end', weight='bold')
    f.text(LX - 8, ry['stage 0'] - 6, 'shared memory:', fs=10, anchor='end', fill='#555')

    def cell(row, x, w, label, fill, **kw):
        f.rect(x + 1, ry[row] + 1, w - 2, RH - 2, fill=fill, stroke='#777', sw=0.5, label=label, fs=10, **kw)

    # prologue: tiles 0 and 1 copied, one group each; then wait_group 1 + barrier, ldmatrix t0.k0
    cell('cp.async', xs[0], PW, 'A, B of\nt0', TILE[0])
    cell('cp.async', xs[1], PW, 'A, B of\nt1', TILE[1])
    cell('commit group', xs[0], PW, 'G0', '#fff')
    cell('commit group', xs[1], PW, 'G1', '#fff')
    cell('ldmatrix (next)', xs[2], PW, 't0.k0', TILE[0])
    for kt in range(3):
        for s in range(4):
            x = sx(kt, s)
            cell('mma.sync', x, SW, f't{kt}.k{s}', TILE[kt], weight='bold')
            nt, ns = (kt, s + 1) if s < 3 else (kt + 1, 0)
            cell('ldmatrix (next)', x, SW, f't{nt}.k{ns}', TILE[nt])
            j = kt + 2
            lab = [f'A of\nt{j}', f'B 0-127\nof t{j}', f'B 128-255\nof t{j}', None][s]
            if lab:
                cell('cp.async', x, SW, lab, TILE[j])
            if s == 2:
                cell('commit group', x, SW, f'G{j}', '#fff', weight='bold')
    # the waits: end of the prologue, and before k step 3 of every tile
    waits = [(xs[2], 'G0')] + [(sx(kt, 3), f'G{kt + 1}') for kt in range(3)]
    ytop, ybot = ry['mma.sync'] - 4, ry['stage 2'] + RH + 4
    for x, g in waits:
        f.line(x, ytop, x, ybot, stroke=RED, sw=2.5)
    # stage rows: in flight (light, dashed) until the wait that covers it; then read; then free
    def bar(st, xa, xb, label, j, flight):
        f.rect(xa + 2, ry[f'stage {st}'] + 3, xb - xa - 4, RH - 6, fill=LIGHT[j] if flight else TILE[j],
               stroke='#555' if flight else '#333', sw=1, dash='4,3' if flight else None, label=label, fs=10)

    bar(0, xs[0], xs[2], 't0 in flight', 0, True)
    bar(0, xs[2], sx(0, 3), 't0: ldmatrix reads it', 0, False)
    bar(0, sx(0, 3), sx(1, 0), 'free', 5, False)
    bar(0, sx(1, 0), sx(2, 3), 't3 in flight (G3): copies, then landing', 3, True)
    bar(0, sx(2, 3), xend, 't3', 3, False)
    bar(1, xs[1], sx(0, 3), 't1 in flight (G1)', 1, True)
    bar(1, sx(0, 3), sx(1, 3), 't1: ldmatrix reads it', 1, False)
    bar(1, sx(1, 3), sx(2, 0), 'free', 5, False)
    bar(1, sx(2, 0), xend, 't4 in flight (G4) ...', 4, True)
    bar(2, xs[0], sx(0, 0), '(unused yet)', 5, False)
    bar(2, sx(0, 0), sx(1, 3), 't2 in flight (G2): copies, then landing', 2, True)
    bar(2, sx(1, 3), sx(2, 3), 't2: ldmatrix reads it', 2, False)
    bar(2, sx(2, 3), xend, 'free', 5, False)
    # legend and notes
    yn = ybot + 24
    f.line(LX, yn - 4, LX + 26, yn - 4, stroke=RED, sw=2.5)
    notes = [
        'cp.async.wait_group 1 + __syncthreads, BEFORE the last k step of tile kt (and once after the prologue):',
        'every group but the newest has landed, so tile kt+1 is in shared memory for the ldmatrix of t(kt+1).k0',
        'issued right after it; and every warp has issued its last ldmatrix of tile kt (at s = 2), so its stage',
        'may be refilled (with tile kt+3) from the next s = 0. One group per tile, committed even when empty (past',
        'the last tile): without it, wait_group 1 would let tile kt+1, then the newest group, still be in flight.']
    for i, s in enumerate(notes):
        f.text(LX + 34, yn + i * 16, s, fs=11)
    f.save(out)


if __name__ == '__main__':
    main(out_path('v19_ring.svg'))
