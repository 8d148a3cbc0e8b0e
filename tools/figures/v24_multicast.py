#!/usr/bin/env python3
"""docs/img/v24_multicast.svg: one k tile of steps/v24_clusters (CLUSTER_M 2):
the two blocks of a cluster take tiles (m, n) and (m + 1, n); each copies its
own A box and half of the B box they share, and the TMA multicasts each half
into both blocks' stage (fill(): tma_load for A, tma_load_mc for slice cm of B,
ctaMask 0b11).

    python3 tools/figures/v24_multicast.py   (writes docs/img/v24_multicast.svg, or into $FIG_OUT_DIR)
"""
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
from svgfig import Fig, out_path

A0, A1, B0, B1 = '#1f78b4', '#6a3d9a', '#e6550d', '#31a354'
A0L, A1L, B0L, B1L = '#cfe2f3', '#e1d5ec', '#fde0c5', '#d5eccf'


def main(out):
    f = Fig(1100, 640, fs=12)
    f.text(550, 22, 'v24: a cluster of 2 blocks along M shares the B box: one k tile, stage s', fs=13,
           anchor='middle', weight='bold')
    f.text(550, 40, 'cluster c = blocks 2c (rank 0, tile (m, n)) and 2c + 1 (rank 1, tile (m + 1, n)), '
                    'two SMs of one GPC: a 256 x 256 cluster tile of C', fs=11, anchor='middle')
    # global memory
    f.rect(20, 62, 340, 420, fill='#fafafa', stroke='#999', rx=6)
    f.text(190, 82, 'global memory (through L2)', fs=12, anchor='middle', weight='bold')
    gx, gw = 40, 300
    f.rect(gx, 100, gw, 56, fill=A0L, stroke=A0, sw=1.5,
           label='A box of rank 0: 128 x 64, 16 KB\nrows R .. R+127, k 64 kt .. +63', fs=11)
    f.rect(gx, 168, gw, 56, fill=A1L, stroke=A1, sw=1.5,
           label='A box of rank 1: 128 x 64, 16 KB\nrows R+128 .. R+255, same k', fs=11)
    f.text(gx, 246, 'R: the cluster tile\'s first row of C', fs=10, fill='#555')
    f.text(gx, 262, 'the B box both tiles need, 256 x 64:', fs=11)
    f.rect(gx, 268, gw, 70, fill=B0L, stroke=B0, sw=1.5,
           label='slice 0: B rows col0 .. +127\n16 KB, copied by rank 0', fs=11)
    f.rect(gx, 338, gw, 70, fill=B1L, stroke=B1, sw=1.5,
           label='slice 1: B rows col0+128 .. +255\n16 KB, copied by rank 1', fs=11)
    f.text(gx, 432, 'each block asks L2 for 16 + 16 = 32 KB', fs=11)
    f.text(gx, 448, 'per k tile (v23: 16 + 32 = 48 KB)', fs=11)
    # the two blocks
    sx, sw_ = 640, 210
    for r, y0, ac, acl in [(0, 62, A0, A0L), (1, 322, A1, A1L)]:
        f.rect(620, y0, 460, 245, fill='#fafafa', stroke='#999', rx=6)
        f.text(635, y0 + 20, f'rank {r}: block {"2c" if r == 0 else "2c + 1"}, shared memory, stage s (48 KB)',
               fs=12, weight='bold')
        f.rect(sx, y0 + 36, sw_, 50, fill=acl, stroke=ac, sw=1.5, label='As: own A box\n128 x 64', fs=11)
        f.rect(sx, y0 + 96, sw_, 50, fill=B0L, stroke=B0, sw=1.5, label='Bs rows 0-127\nfrom slice 0', fs=11)
        f.rect(sx, y0 + 146, sw_, 50, fill=B1L, stroke=B1, sw=1.5, label='Bs rows 128-255\nfrom slice 1', fs=11)
        f.text(sx, y0 + 218, 'wgmma m64n256k16 x 2 consumers', fs=10)
        f.text(sx, y0 + 233, f'-> C tile ({"m" if r == 0 else "m + 1"}, n), 128 x 256', fs=10)
        bx = 870
        f.rect(bx, y0 + 36, 195, 86, fill='#eef3fb', stroke='#1f5fa8',
               label='full[s]: count 1\n+ 48 KB of complete_tx:\n16 own A, 16 own slice,\n'
                     '16 the peer\'s slice', fs=10)
        f.rect(bx, y0 + 132, 195, 86, fill='#fbeeee', stroke='#c0392b',
               label='empty[s]: count 16\n= 8 consumer warps\nx 2 blocks; lane r of\n'
                     'each warp arrives on\nrank r\'s empty[s]', fs=10)
    # arrows: A to its own block only; each B slice multicast to both
    def arrow(y1, y2, colour, dy=0):
        f.path(f'M {gx + gw} {y1} C {480} {y1 + dy}, {520} {y2}, {sx - 2} {y2}', stroke=colour, sw=2.2,
               arrow=True)

    arrow(128, 62 + 61, A0)
    arrow(196, 322 + 61, A1)
    arrow(296, 62 + 121, B0)
    arrow(310, 322 + 121, B0)
    arrow(366, 62 + 171, B1)
    arrow(380, 322 + 171, B1)
    f.text(490, 520, 'each B slice: one TMA,', fs=11, anchor='middle', fill='#444', weight='bold')
    f.text(490, 536, 'multicast, ctaMask 0b11', fs=11, anchor='middle', fill='#444')
    notes = [
        'fill(): tma_load(As, A box of this rank) and tma_load_mc(Bs[128 cm], B rows col0 + 128 cm, mask 0b11):',
        'one read from L2, written at the same offset in both blocks, and counted on the full barrier at the same',
        'offset in each. A stage is written by both producers, so a producer refills it only when the consumers',
        'of BOTH blocks have released it (empty[s] counts 16). The cluster shares B; sharing A measured slower.']
    for i, s in enumerate(notes):
        f.text(20, 590 + i * 16 - 10, s, fs=11)
    f.save(out)


if __name__ == '__main__':
    main(out_path('v24_multicast.svg'))
