#!/usr/bin/env python3
"""docs/img/v21_barriers.svg and docs/img/v22_barriers.svg: the TMA ring with
full/empty mbarriers over three k tiles of steady state (kt = 3, 4, 5, where
stage 0 starts its second fill and the parity flips), as the code of
steps/v21_tma and steps/v22_warp_specialized runs it (STAGES 4, WG_PENDING 1).

  v21: all 8 warps multiply; at k tile kt lane 0 of each warp arrives on
       empty[(kt-1)%4], then thread 0 waits on empty[(kt-2)%4] (released a
       k tile ago) and refills that stage with tile kt+2.
  v22: a producer warpgroup; thread 0 waits on empty[s] for the fill before
       and refills; the consumers arrive on empty[(kt-2)%4] (one tile later).

Times are schematic (one k tile = one column); the order of events is the code's.

    python3 tools/figures/v21_v22_barriers.py   (writes docs/img/v21_barriers.svg and v22_barriers.svg, or into $FIG_OUT_DIR)
"""
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
from svgfig import Fig, out_path, text_width

TILE = {0: '#ffffff', 2: '#fdbf6f', 3: '#cab2d6', 4: '#a6cee3', 5: '#b2df8a', 6: '#fb9a99', 7: '#ffff99',
        1: '#8dd3c7'}
FULLC, EMPTYC = '#1f5fa8', '#c0392b'
LX = 190            # the time axis starts here
SWID = 360          # one k tile of the consumers
KTS = [3, 4, 5]
# within a k tile: wait full, 4 wgmma + commit, wait_group 1, arrive empty
WF, WG, WT, AR = (0, 72), (72, 160), (160, 250), (250, 320)
LAND = 250          # a TMA fill issued at t lands at t + LAND (schematic)


def T(kt, off=0):
    return LX + (kt - KTS[0]) * SWID + off


def draw(mode, out):
    v22 = mode == 'v22'
    lag = 2 if v22 else 1                # the consumers release tile kt - lag at k tile kt
    f = Fig(LX + 3 * SWID + 30, 660, fs=12)
    W = f.w
    title = ('v22: producer warpgroup, consumer warpgroups, full/empty mbarriers' if v22 else
             'v21: TMA ring with full/empty mbarriers (the same 8 warps multiply and, thread 0, copy)')
    f.text(W / 2, 22, title, fs=13, anchor='middle', weight='bold')
    f.text(W / 2, 40, 'STAGES = 4; tile kt lives in stage kt % 4 as its fill f = kt / 4; a barrier phase '
                      'completes with parity f & 1; k tiles 3-5 of steady state (times schematic)',
           fs=11, anchor='middle')
    xmin, xmax = T(3), T(6)
    # the k-tile header
    for kt in KTS:
        s, p = kt % 4, (kt // 4) & 1
        f.rect(T(kt), 54, SWID, 22, fill='#eee', stroke='#999',
               label=f'consumers\' k tile kt = {kt}: stage {s}, fill {kt // 4}, parity {p}', fs=11)
    rows = ['producer', 'TMA engine', 'consumers', 'tensor core', 's0', 's1', 's2', 's3']
    RH = {'producer': 40, 'TMA engine': 30, 'consumers': 40, 'tensor core': 28}
    ry, y = {}, 92
    for r in rows:
        ry[r] = y
        y += RH.get(r, 30) + (22 if r.startswith('s') or r == 'tensor core' else 8)
    names = {'producer': 'thread 0 (wg 0)' if v22 else 'thread 0 (warp 0)', 'TMA engine': 'TMA (copy engine)',
             'consumers': 'consumer warps' if v22 else 'all 8 warps', 'tensor core': 'wgmma batches',
             's0': 'stage 0', 's1': 'stage 1', 's2': 'stage 2', 's3': 'stage 3'}
    for r in rows:
        f.text(LX - 8, ry[r] + RH.get(r, 30) / 2 + 4, names[r], fs=11, anchor='end', weight='bold')
    sub = {'producer': 'producer warpgroup' if v22 else 'also a consumer', 'consumers': 'wg 1, 2 (8 warps)'
           if v22 else 'wg 0, 1'}
    for r, s in sub.items():
        f.text(LX - 8, ry[r] + RH.get(r, 30) / 2 + 17, s, fs=9, anchor='end', fill='#555')

    def box(row, xa, xb, label, fill, fs=9, dash=None, h=None, lfill='#000'):
        xa, xb = max(xa, xmin), min(xb, xmax)
        if xb - xa < 4:
            return
        hh = h or RH.get(row, 30)
        # a box cut by the window's edge keeps as much of its label as fits: the full label,
        # its first line, or none
        for lab in (label, label.split('\n')[0], None):
            if lab is None or max(text_width(s_, fs) for s_ in lab.split('\n')) <= xb - xa - 6:
                break
        f.rect(xa + 1, ry[row] + 1, xb - xa - 2, hh - 2, fill=fill, stroke='#666', sw=0.7, label=lab,
               fs=fs, dash=dash, lfill=lfill)

    # consumers and the tensor core
    for kt in KTS:
        s, p = kt % 4, (kt // 4) & 1
        box('consumers', T(kt, WF[0]), T(kt, WF[1]), f'wait\nfull[{s}] p{p}', '#dbe7f5')
        box('consumers', T(kt, WG[0]), T(kt, WG[1]), f'4 x wgmma\nt{kt}, commit', TILE[kt])
        box('consumers', T(kt, WT[0]), T(kt, WT[1]), f'wait_group 1\nbatch {kt - 1} done', '#f4f4f4')
        r = kt - lag
        box('consumers', T(kt, AR[0]), T(kt, AR[1]), f'arrive\nempty[{r % 4}]', '#f6d5d1')
        box('tensor core', T(kt - 1, WT[1]), T(kt, WT[1]), f'batch {kt - 1}: reads stage {(kt - 1) % 4}',
            TILE[kt - 1])
    box('tensor core', T(5, WT[1]), T(6, WT[1]), 'batch 5', TILE[5])
    # the producer's fills of tiles kt+2 (into the stage of tile kt-2) and their landing
    fills = []
    for kt in [1, 2, 3, 4, 5]:
        j, old = kt + 2, kt - 2            # tile filled, tile whose release it waits for
        s, fpar = j % 4, (old // 4) & 1
        if v22:
            t0 = T(kt, AR[1])              # the last consumer warp's arrival completes empty[s]
            box('producer', T(kt, AR[1]) - SWID + 100, t0, f'blocked: wait empty[{s}] parity {fpar}\n'
                f'(the release of tile {old})', '#f6d5d1', fs=10)
        else:
            t0 = T(kt, AR[1]) + 70         # after its own warp's arrival, in the same k tile
            box('producer', T(kt, AR[1]), t0, f'wait\nempty[{s}] p{fpar}', '#f6d5d1')
        box('producer', t0, t0 + 100, f'expect_tx 48K\n2 TMA: t{j}', TILE[j])
        box('TMA engine', t0 + 100, t0 + LAND, f'A + B of t{j} -> stage {s}', TILE[j], dash='4,3')
        fills.append((j, s, t0 + 100, t0 + LAND))
    # the stages: being written, ready, read, done (held), released / free
    def sbar(s, xa, xb, label, fill, dash=None):
        box(f's{s}', xa, xb, label, fill, fs=10, dash=dash)

    for j, s, ta, tb in fills:
        sbar(s, ta - 100, tb, f'TMA writes t{j}', TILE[j], dash='4,3')
        sbar(s, tb, T(j, WG[0]), f't{j} ready', TILE[j])
    for j in [0, 1, 2, 3, 4, 5]:
        s = j % 4
        sbar(s, T(j, WG[0]), T(j + 1, WT[1]), f't{j}: read by batch {j}', TILE[j])
        rel = T(j + lag, AR[1])
        sbar(s, T(j + 1, WT[1]), rel, f't{j} done, held' if lag == 2 else 'done', '#e8e8e8')
        # the stage is free from its release until the producer refills it with tile j + 4
        refill = T(j + 2, AR[1]) + (0 if v22 else 70)
        sbar(s, rel, refill, 'free', '#ffffff')
    # pre-window state of stage 0 (tile 4 being written since kt = 2) is drawn by the fills loop
    # barrier events: full completes when the bytes land; empty when the 8th warp arrives
    def mark(s, x, text, colour, above=True):
        if not (xmin <= x <= xmax):
            return
        yy = ry[f's{s}']
        f.line(x, yy - 4, x, yy + 30 + 2, stroke=colour, sw=2.5)
        tx = min(max(x, LX + 60), xmax - 60)
        f.text(tx, yy - 7, text, fs=10, anchor='middle', fill=colour, weight='bold')

    for j, s, ta, tb in fills:
        mark(s, tb, f'full[{s}] done, p{(j // 4) & 1}', FULLC)
    for j in [1, 2, 3, 4]:
        mark(j % 4, T(j + lag, AR[1]), f'empty[{j % 4}] done, p{(j // 4) & 1}', EMPTYC)
    # notes
    ny = ry['s3'] + 30 + 26
    if v22:
        notes = ['full[s]: count 1 (the producer\'s expect_tx) + 48 KB of complete_tx from the two TMA boxes. '
                 'empty[s]: count 8, lane 0',
                 'of each consumer warp. The consumers wait full[kt%4] parity (kt/4)&1; the producer waits '
                 'empty[s] parity (f-1)&1 before fill f.',
                 'A consumer releases tile kt-2 at k tile kt (batch kt-1 is done there, the release lags one '
                 'more tile): the producer runs 2 tiles ahead.']
    else:
        notes = ['full[s]: count 1 (thread 0\'s expect_tx) + 48 KB of complete_tx from the two TMA boxes. '
                 'empty[s]: count 8, lane 0 of each',
                 'warp. Every warp waits full[kt%4] parity (kt/4)&1, and after wait_group 1 releases tile kt-1; '
                 'thread 0 then waits for',
                 'the release of tile kt-2 (a k tile old, so its wait is short) and refills that stage with '
                 'tile kt+2: the ring runs 2 ahead.']
    for i, s in enumerate(notes):
        f.text(LX - 170, ny + i * 16, s, fs=11)
    f.h = int(ny + len(notes) * 16 + 4)
    f.save(out)


if __name__ == '__main__':
    for m in ('v21', 'v22'):
        draw(m, out_path(f'{m}_barriers.svg'))
