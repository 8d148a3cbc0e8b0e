#!/usr/bin/env python3
"""docs/img/v28_bytes.svg: one 128-byte row of a k tile in v24 (bf16) and in v28 (e4m3),
and which k each of the four wgmma instructions of a k tile reads from it; below, what one
k tile of a 128 x 256 block costs in bytes and in tensor-pipe clocks in each.

    python3 tools/figures/v28_bytes.py   (writes docs/img/v28_bytes.svg, or into $FIG_OUT_DIR)
"""
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
from svgfig import Fig, out_path

INSTR = ['#a6cee3', '#b2df8a', '#fdbf6f', '#cab2d6']   # one colour per wgmma of the k tile
PX = 6   # pixels per byte: the row is 128 bytes


def row(f, x0, y0, title, per_elem, k_per_instr, name):
    f.text(x0, y0 - 10, title, fs=12, weight='bold')
    for i in range(4):   # four instructions, 32 bytes each
        f.rect(x0 + 32 * i * PX, y0, 32 * PX, 34, fill=INSTR[i], stroke='#555', sw=1,
               label=f'{name} #{i}: k {k_per_instr * i}-{k_per_instr * i + k_per_instr - 1}', fs=11)
    for b in range(0, 129, 16):   # the 16-byte chunks the swizzle moves
        f.line(x0 + b * PX, y0 + 34, x0 + b * PX, y0 + 40, stroke='#555', sw=1)
        f.text(x0 + b * PX, y0 + 52, f'{b}', fs=9, anchor='middle', fill='#555')
    f.text(x0 + 128 * PX + 10, y0 + 22, f'{128 // per_elem} elements', fs=11)


def main(out):
    f = Fig(1000, 360, fs=12)
    x0 = 60
    f.text(500, 22, 'one row of the A (or B) tile in shared memory: 128 bytes, the 128-byte swizzle\'s row',
           fs=12, anchor='middle')
    row(f, x0, 70, 'v24, bf16: BK = 64, wgmma m64n256k16 reads 16 of k = 32 bytes', 2, 16, 'k16')
    row(f, x0, 160, 'v28, e4m3: BK = 128, wgmma m64n256k32 reads 32 of k = 32 bytes', 1, 32, 'k32')
    f.text(x0 + 64 * PX, 228, 'byte offset in the row before the swizzle; each instruction\'s descriptor starts 32 bytes on',
           fs=10, anchor='middle', fill='#555')
    lines = ['one k tile of a 128 x 256 block, per block:          v24 bf16         v28 e4m3',
             '  bytes in (A 16 KB + B 32 KB)                        48 KB            48 KB',
             '  multiply-adds, 128 x 256 x BK                       2.1 M            4.2 M',
             '  tensor-pipe clocks (4096 / 8192 FLOP per clock)     1024             1024',
             '  k tiles at K = 8192                                 128              64']
    for i, s in enumerate(lines):
        f.text(x0, 262 + i * 18, s, fs=11, weight='bold' if i == 0 else None)
    f.save(out)


if __name__ == '__main__':
    main(out_path('v28_bytes.svg'))
