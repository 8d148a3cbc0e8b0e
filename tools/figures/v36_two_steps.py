#!/usr/bin/env python3
"""docs/img/v36_two_steps.svg: the consumer warpgroup's k loop as ptxas compiled it, one k
step a turn (v35) against two (v36), one small cell per SASS instruction, left to right in
program order, coloured by kind.  v35's body is drawn for two turns (two k steps) so that
it lines up with one turn of v36's.  Under each row, brackets mark the stretch from each
release of a stage (mbarrier arrive on `empty`) to the next try_wait (on `full`), with the
number of instructions between them, counted here from the strings.

The data is the SASS of gemm_split<128, true, false, TWO> (the 128-wide tile's kernel) from
`cuobjdump -sass` of step36's H100 build, written one character per instruction (V35, V36
below; KINDS says what each character stands for).

    python3 tools/figures/v36_two_steps.py   (writes docs/img/v36_two_steps.svg, or into $FIG_OUT_DIR)
"""
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
from svgfig import Fig, footnotes, legend, out_path, text_width

# The SASS of gemm_split<128, true, false, TWO> from `cuobjdump -sass` of step36 on the H100,
# the consumer's loop bodies 0x600-0xac0 (TWO false: v35's loop) and 0x610-0xf30 (TWO true:
# v36's), one character per instruction in program order (KINDS below).
V35 = "S..........T........B.......F............W...........W.......W..........WDR.B"
V36 = ("S..........TB..B.........F.....................W.........W........W................WDRTB"
       "..........F...............W..........W........W.....WDR...B")

# character: (colour, legend label)
KINDS = {
    'W': ('#ff7f00', 'wgmma (HGMMA)'),
    'T': ('#1f78b4', 'try_wait on full'),
    'D': ('#6a3d9a', 'wait_group 1 (DEPBAR)'),
    'R': ('#33a02c', 'arrive on empty (release)'),
    'S': ('#e31a1c', 'S2R SR_CgaCtaId'),
    'F': ('#b15928', 'wgmma.fence'),
    'B': ('#555555', 'branch'),
    '.': ('#d9d9d9', 'integer work'),
}
W_FIG = 760
X0, CW, CH = 24, 4.6, 24                  # the rows' left edge, a cell's width and height


def stretches(body, turns):
    """Each release (R) in `turns` copies of body, drawn back to back, and the next try_wait
    (T) after it, which may lie in the turn after the last drawn: (r, t, between), positions
    in the drawn row (t may be past its end)."""
    row = body * (turns + 1)
    out = []
    for r in (i for i, c in enumerate(body * turns) if c == 'R'):
        t = row.index('T', r + 1)
        out.append((r, t, t - r - 1))
    return out


def cx(i):
    return X0 + i * CW


def bracket(f, a, b, y, dash=None):
    """A bracket under cells a .. b-1 (b > a), its arms up at y."""
    f.path(f'M{cx(a) + 0.3:g},{y:g} v5 H{cx(b) - 0.9:g} v-5', stroke='#222', sw=1, dash=dash)


def draw_row(f, y, label, body, turns):
    """A row of cells at y (its label above), body drawn `turns` times, a marker where the loop
    branches back; returns the stretches (stretches()) and the row's cell count."""
    f.text(X0, y - 20, label, fs=12, weight='bold')
    row = body * turns
    for i, c in enumerate(row):
        f.rect(cx(i), y, CW - 0.8, CH, fill=KINDS[c][0], stroke='none', sw=0)
    for k in range(1, turns):
        x = cx(k * len(body)) - 0.4
        f.line(x, y - 10, x, y + CH + 3, stroke='#000', sw=1.4)
    if turns > 1:
        f.text(X0, y - 5, 'turn 1', fs=9, fill='#555')
        for k in range(1, turns):
            f.text(cx(k * len(body)) + 3, y - 5, f'turn {k + 1} (the loop branched back here)', fs=9, fill='#555')
    return stretches(body, turns), len(row)


def annotate(f, y, body, st, n):
    """Under a row whose cells end at y: a bracket on each stretch from a release to the next
    try_wait, with its count; one that runs past the row's end is drawn as its two ends, dashed
    (the end of the row and the start of the turn), and explained on a line of its own."""
    yb = y + 4
    lines = []
    for r, t, between in st:
        if t < n:
            if between:
                bracket(f, r + 1, t, yb)
                f.text((cx(r + 1) + cx(t)) / 2, yb + 18, f'{between} between release and next wait',
                       fs=10, anchor='middle')
            else:
                x = cx(t) - 0.4
                f.line(x, yb + 26, x, yb + 1, stroke='#222', sw=1, arrow=True)
                lines.append((x, f'{between} between release and next wait: the second k step\'s wait '
                                 f'follows the first\'s release'))
        else:
            head = t - n                      # where the wait lies in the next turn
            tail = n - r - 1
            assert body.index('T') == head
            bracket(f, r + 1, n, yb, dash='2,1.5')
            bracket(f, 0, head, yb, dash='2,1.5')
            f.text((cx(r + 1) + cx(n)) / 2, yb + 18, str(tail), fs=10, anchor='middle')
            f.text((cx(0) + cx(head)) / 2, yb + 18, str(head), fs=10, anchor='middle')
            lines.append((None, f'dashed: the stretch across the turn\'s end, {tail} here + {head} at the '
                                f'turn\'s start = {between} between release and next wait'))
    for i, (x, s) in enumerate(lines):
        ys = yb + 34 + i * 14
        if x is None:
            f.text(cx(n), ys, s, fs=10, anchor='end')
        else:
            w = text_width(s, 10)
            xm = min(max(x, X0 + w / 2), W_FIG - 24 - w / 2)
            f.text(xm, ys, s, fs=10, anchor='middle')
    return yb + 34 + len(lines) * 14


def main(out):
    f = Fig(W_FIG, 0, fs=12)              # its height is set once the rows are laid out
    f.text(W_FIG / 2, 22, "v36: the consumer's k loop, one k step a turn against two (SASS, 128-wide tile)",
           fs=14, anchor='middle', weight='bold')
    f.text(W_FIG / 2, 40, "the consumer warpgroup's loop body in gemm_split<128, true, false, TWO>, as ptxas "
                          "compiled it", fs=10, anchor='middle')
    items = [(c, s, text_width(s, 11) + 12) for c, s in KINDS.values()]
    legend(f, X0, 64, items[:4])
    legend(f, X0, 84, items[4:])

    y1 = 132
    st35, n35 = draw_row(f, y1, f'v35: one k step a turn ({len(V35)} instructions), drawn for two turns', V35, 2)
    end1 = annotate(f, y1 + CH, V35, st35, n35)
    y2 = end1 + 44
    st36, n36 = draw_row(f, y2, f'v36: two k steps a turn ({len(V36)} instructions)', V36, 1)
    end2 = annotate(f, y2 + CH, V36, st36, n36)

    # per k step: v35 runs one a turn, v36 two
    per35 = sum(b for _, _, b in st35) / len(st35)
    per36 = sum(b for _, _, b in st36) / len(st36)
    counts = ', '.join(str(b) for _, _, b in st36)
    ys = end2 + 16
    f.text(X0, ys, f'two k steps: {n35} instructions in v35, {n36} in v36.', fs=11)
    f.text(X0, ys + 16, f'instructions between a release and the next wait, per k step: {per35:g} in v35, '
                        f'({counts.replace(", ", " + ")}) / 2 = {per36:g} in v36', fs=11)
    f.h = h = ys + 16 + 28 + 2 * 16
    footnotes(f, h, ['each cell one instruction in program order, not time; from cuobjdump -sass of step36 '
                     '(H100 build)',
                     "a B after a T: the wait's retry branch (or the warp's BRA.DIV); the last B of a turn: the branch back"])
    f.save(out)


if __name__ == '__main__':
    main(out_path('v36_two_steps.svg'))
