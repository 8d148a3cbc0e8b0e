#!/usr/bin/env python3
"""docs/img/v29_scales.svg: DeepSeek-V3's block scales as steps/v29_fp8_block reads them
(kl.h): A (M x K) has one scale per row and 128 of k, stored k block by k block with the
rows fastest and each k block's column padded to 4 floats, sa[kb * roundup(M, 4) + m]; B (N x K) one per 128 x 128 block, stored row of blocks by
row of blocks with the k blocks fastest and each row padded to 4 floats,
sb[nb * roundup(K / 128, 4) + kb].  Drawn for M = 4 rows (of many), N = 256, K = 640.

    python3 tools/figures/v29_scales.py   (writes docs/img/v29_scales.svg, or into $FIG_OUT_DIR)
"""
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
from svgfig import Fig, out_path

KB = ['#a6cee3', '#b2df8a', '#fdbf6f', '#cab2d6', '#fb9a99']   # one colour per k block
CW = 44   # pixels per k block along K


def main(out):
    f = Fig(1060, 380, fs=12)
    f.text(530, 22, 'block scales: K = 640 is 5 k blocks of 128; a scale per colour patch', fs=12, anchor='middle')
    # A: four rows, each split into 5 slices of 128
    x0, y0, rh = 60, 70, 22
    f.text(x0, y0 - 14, 'A (activations), rows m = 0..3 of M: one scale per 1 x 128', fs=12, weight='bold')
    for m in range(4):
        f.text(x0 - 8, y0 + m * rh + 15, f'm{m}', fs=10, anchor='end')
        for kb in range(5):
            f.rect(x0 + kb * CW, y0 + m * rh, CW, rh, fill=KB[kb], stroke='#666', sw=0.6, label=f'a{m}{kb}', fs=9)
    f.text(x0, y0 + 4 * rh + 16, 'k ->   (each patch: 128 of k)', fs=10, fill='#555')
    # sa in memory
    sy = y0 + 4 * rh + 44
    f.text(x0, sy - 8, 'sa in memory: sa[kb * ld + m], the rows fastest (ld = M rounded up to 4: 4 here)', fs=11)
    for kb in range(5):
        for m in range(4):
            i = kb * 4 + m
            f.rect(x0 + i * 22, sy, 22, 20, fill=KB[kb], stroke='#666', sw=0.6, label=f'{m}{kb}', fs=8)
    f.text(x0, sy + 36, 'a k tile of 128 rows reads 128 neighbours: one 512-byte TMA box', fs=10, fill='#555')
    # B: two row blocks of 128 rows, 5 k blocks
    bx, by, bh = 600, 70, 60
    f.text(bx, by - 14, 'B (weights), N = 256: one scale per 128 x 128', fs=12, weight='bold')
    for nb in range(2):
        f.text(bx - 8, by + nb * bh + 34, f'rows {128 * nb}-{128 * nb + 127}', fs=10, anchor='end')
        for kb in range(5):
            f.rect(bx + kb * CW, by + nb * bh, CW, bh, fill=KB[kb], stroke='#666', sw=0.8, label=f'b{nb}{kb}', fs=10)
    f.text(bx, by + 2 * bh + 16, 'k ->', fs=10, fill='#555')
    # sb in memory, padded
    sby = by + 2 * bh + 44
    f.text(bx - 70, sby - 8, 'sb in memory: sb[nb * 8 + kb], 5 k blocks padded to 8 (a multiple of 4)', fs=11)
    for nb in range(2):
        for kb in range(8):
            i = nb * 8 + kb
            if kb < 5:
                f.rect(bx - 70 + i * 26, sby, 26, 20, fill=KB[kb], stroke='#666', sw=0.6, label=f'{nb}{kb}', fs=8)
            else:
                f.rect(bx - 70 + i * 26, sby, 26, 20, fill='#f4f4f4', stroke='#aaa', sw=0.6, label='0', fs=8)
    f.text(bx - 70, sby + 36, 'unpadded (a stride of 5), cuBLASLt read rel_err 0.96; padded, the bf16 floor',
           fs=10, fill='#555')
    # what one output needs
    lines = ['C[m][n] = sum over kb of sa[kb * 4 + m] x sb[(n / 128) * 8 + kb] x (sum over k in kb of qa[m][k] qb[n][k])',
             'in v29: one k tile = one k block; the tensor cores form the inner sum from zero, the CUDA cores',
             'multiply it by its two scales and add it into fp32 registers ("promotion"), 128 of k at a time']
    for i, s in enumerate(lines):
        f.text(530, 320 + i * 18, s, fs=11, anchor='middle', weight='bold' if i == 0 else None)
    f.save(out)


if __name__ == '__main__':
    main(out_path('v29_scales.svg'))
