#!/usr/bin/env python3
"""docs/img/v39_uniform_branch.svg: one turn (two k steps) of the consumer warpgroup's k loop
as ptxas compiled it, with the fix-up's flag read from shared memory (v36, the control) and
by a warp vote (v39), one small cell per SASS instruction, left to right in program order,
coloured by the datapath it runs on.  Under each row, the count of each kind.

The data is the SASS of gemm_split<128, true, false, UNIFORM> (the 128-wide tile's kernel,
the TMA-store epilogue) from `cuobjdump -sass` of step39's H100 build, the loop bodies
0x610-0xf30 (UNIFORM false) and 0x640-0xee0 (UNIFORM true), written one character per
instruction (V36, V39 below; KINDS says what each character stands for).

    python3 tools/figures/v39_uniform_branch.py   (writes docs/img/v39_uniform_branch.svg, or into $FIG_OUT_DIR)
"""
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
from svgfig import Fig, footnotes, legend, out_path, text_width

# One character per instruction of the loop body, in program order (KINDS below).
V36 = ("VVVDVVVVVVVTBDUD.VVVDVVVV.VCUCVVVVVVDVVVVVVCCVVWCCVCCVVVVWCCVCCVVVWCVCCVCVVVVVVVVVVW.RTBDVVV"
       ".VVCVV.VUVVVVVVCCCVVVVWCCVCVCVVVVWCCVCCVVVWCVCCCW.RVVVB")
V39 = ("UUUUUUVVUUTBUVUVU.UV.CUVVVUVUVVUVUVCUVUWCUCUVVUVUWCUCUUWCUCUVUVVUUUVUVUVUUVVVVW.RTBU.VU.UVV"
       "UVUUCVVUUVCUVUWCUCUVVUWCUCUVVUWCUCUVVUUUUUUW.RVB")

# character: (colour, legend label)
KINDS = {
    'W': ('#ff7f00', 'wgmma (HGMMA)'),
    'T': ('#1f78b4', 'try_wait on full'),
    'R': ('#33a02c', 'arrive on empty'),
    'U': ('#a6cee3', 'uniform datapath (U..., one per warp)'),
    'V': ('#bdbdbd', 'integer work per thread (IMAD, LEA, LOP3, ...)'),
    'C': ('#cab2d6', 'R2UR: a thread register copied to a uniform one'),
    'D': ('#e31a1c', 'divergence: BRA.DIV, WARPSYNC, BSSY, BSYNC'),
    'B': ('#555555', 'branch'),
    '.': ('#f0f0f0', 'other (NOP, WARPGROUP.ARRIVE, DEPBAR)'),
}
W_FIG = 760
X0, CW, CH = 24, 4.6, 24                  # the rows' left edge, a cell's width and height


def cx(i):
    return X0 + i * CW


def draw_row(f, y, label, body):
    """A row of cells at y, its label above; under it the count of each kind, in KINDS' order."""
    f.text(X0, y - 8, label, fs=12, weight='bold')
    for i, c in enumerate(body):
        f.rect(cx(i), y, CW - 0.8, CH, fill=KINDS[c][0], stroke='none', sw=0)
    parts = [f'{body.count(k)} {name}' for k, name in (('W', 'wgmma'), ('U', 'uniform'), ('V', 'per-thread integer'),
                                                       ('C', 'R2UR'), ('D', 'divergence')) if body.count(k)]
    f.text(X0, y + CH + 16, ', '.join(parts), fs=10, fill='#333')


def main(out):
    f = Fig(W_FIG, 0, fs=12)              # its height is set once the rows are laid out
    f.text(W_FIG / 2, 22, "v39: the same k loop, the fix-up's flag read thread by thread or by a vote (SASS)",
           fs=14, anchor='middle', weight='bold')
    f.text(W_FIG / 2, 40, "one turn (two k steps) of the consumer's loop in gemm_split<128, true, false, UNIFORM>, "
                          "as ptxas compiled it", fs=10, anchor='middle')
    items = [(c, s, text_width(s, 11) + 12) for c, s in KINDS.values()]
    legend(f, X0, 62, items[:3])
    legend(f, X0, 80, items[3:5])
    legend(f, X0, 98, items[5:7])
    legend(f, X0, 116, items[7:])
    y1 = 158
    draw_row(f, y1, f"v36's branch: the flag from shared memory ({len(V36)} instructions)", V36)
    y2 = y1 + CH + 58
    draw_row(f, y2, f'v39: the flag by __all_sync ({len(V39)} instructions)', V39)
    f.h = h = y2 + CH + 16 + 28 + 2 * 16
    footnotes(f, h, ['each cell one instruction in program order, not time; from cuobjdump -sass of step39 '
                     '(H100 build)',
                     "the loop is the same source in both rows; only the fix-up's branch, after the loop, differs"])
    f.save(out)


if __name__ == '__main__':
    main(out_path('v39_uniform_branch.svg'))
