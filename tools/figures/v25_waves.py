#!/usr/bin/env python3
"""docs/img/v25_waves.svg: the work units of steps/v25_split_k over the H100's
132 SMs at a decode batch, M 32, N 4096, K 4096 (64 k tiles of 64), as two
Gantt charts on one time scale: the variant "fixed" (v23's grid: 128 x 256
tiles, no split, 1 x 16 = 16 units) and the plan choose() picks (128 x 128
tiles, split 4: 32 tiles x 4 k ranges = 128 units of 16 k tiles).  The grid
is one block per unit (at most one per SM), block b taking unit b; unit u is
tile u / split, k range u % split, so row b is drawn as block b's unit.

Only the two kernel times are measured (ncu, gpu__time_duration, on the H100);
how a bar divides into launch, multiply and fix-up is drawn, not measured.

    python3 tools/figures/v25_waves.py   (writes docs/img/v25_waves.svg, or into $FIG_OUT_DIR)
"""
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
from svgfig import Fig, footnotes, legend, out_path, sm_time_axes

SMS, K_TILES = 132, 64                    # H100 SMs; K 4096 / BK 64
T_FIXED, T_CHOSEN = 42.2, 20.3            # us, the kernel times measured by ncu
LEAD = 1.5                                # us, schematic: launch and the first loads
FIXUP = 1.5                               # us, schematic: the last unit's sum of the partials
T_MAX = 45                                # us, the shared x scale
LEAD_C, MUL_C, FIX_C, IDLE_C = '#a6cee3', '#1f78b4', '#e6550d', '#e4e4e4'
X0, PX_US = 56, 16                        # plot's left edge; pixels per microsecond
ROW, BAR = 2, 1.5                         # a row per SM, and its bar's height within it
PLOT_H = SMS * ROW


def xt(us):
    return X0 + us * PX_US


def axes(f, y0, busy_to):
    """SM labels on the left, the time axis below; busy_to: rows below it had no unit."""
    sm_time_axes(f, X0, y0, SMS, ROW, PX_US, T_MAX, 5)


def bar(f, y0, sm, t0, t1, colour):
    f.rect(xt(t0), y0 + sm * ROW, (t1 - t0) * PX_US, BAR, fill=colour, stroke='none', sw=0)


def end_line(f, y0, t, label):
    """The kernel's end: a dashed line over the panel, its measured time above it."""
    f.line(xt(t), y0 - 2, xt(t), y0 + PLOT_H, stroke='#000', sw=1, dash='3,2')
    f.text(xt(t), y0 - 6, label, fs=10, anchor='middle', weight='bold')


def fixed_panel(f, y0):
    f.text(X0 - 40, y0 - 24, 'fixed: 128 x 256 tiles, no split: 1 x 16 tiles = 16 units of 64 k tiles',
           fs=12, weight='bold')
    units = 16
    for sm in range(units):
        bar(f, y0, sm, 0, LEAD, LEAD_C)
        bar(f, y0, sm, LEAD, T_FIXED, MUL_C)
    # The SMs without a unit: one block, so that its labels can sit inside it.
    f.rect(X0, y0 + units * ROW, T_FIXED * PX_US, (SMS - units) * ROW, fill=IDLE_C, stroke='none', sw=0)
    ly = y0 + units * ROW + 16
    f.line(xt(LEAD) + 40, ly - 4, xt(LEAD / 2), y0 + 8 * ROW, stroke='#333', sw=1, arrow=True)
    f.text(xt(LEAD) + 44, ly, 'launch + first loads', fs=10, fill='#333')
    cy = y0 + (units + SMS) / 2 * ROW
    f.text(xt(T_FIXED / 2), cy, '16 of 132 SMs busy, 42.2 us', fs=14, anchor='middle', weight='bold')
    f.text(xt(T_FIXED / 2), cy + 18, 'SMs 16-131: no unit to run', fs=11, anchor='middle', fill='#444')
    end_line(f, y0, T_FIXED, f'{T_FIXED} us')
    axes(f, y0, units)


def chosen_panel(f, y0):
    f.text(X0 - 40, y0 - 24, 'chosen: 128 x 128 tiles, split 4: 1 x 32 tiles x 4 k ranges = 128 units of 16 k tiles',
           fs=12, weight='bold')
    split, units = 4, 128
    t_mul = T_CHOSEN - FIXUP
    for sm in range(units):
        bar(f, y0, sm, 0, LEAD, LEAD_C)
        bar(f, y0, sm, LEAD, t_mul, MUL_C)
        if sm % split == split - 1:          # drawn on range 3; in a run, the unit that arrives last
            bar(f, y0, sm, t_mul, T_CHOSEN, FIX_C)
        else:
            bar(f, y0, sm, t_mul, T_CHOSEN, IDLE_C)
    f.rect(X0, y0 + units * ROW, T_CHOSEN * PX_US, (SMS - units) * ROW, fill=IDLE_C, stroke='none', sw=0)
    end_line(f, y0, T_CHOSEN, f'{T_CHOSEN} us')
    tx = xt(T_CHOSEN) + 24
    cy = y0 + PLOT_H / 2
    f.text(tx, cy - 20, '128 of 132 SMs busy, 20.3 us', fs=14, weight='bold')
    f.text(tx, cy, 'SM 4t + r: tile t, k range r', fs=11, fill='#444')
    f.text(tx, cy + 16, '(k tiles 16r .. 16r + 15)', fs=11, fill='#444')
    f.text(tx, cy + 36, 'fix-up drawn on range 3; in a run', fs=11, fill='#444')
    f.text(tx, cy + 52, 'it falls to whichever unit of', fs=11, fill='#444')
    f.text(tx, cy + 68, 'the tile arrives last', fs=11, fill='#444')
    f.line(tx - 4, y0 + PLOT_H - 18, xt(T_CHOSEN) + 3, y0 + PLOT_H - 5, stroke='#333', sw=1, arrow=True)
    f.text(tx, y0 + PLOT_H - 14, 'SMs 128-131: no unit', fs=10, fill='#444')
    axes(f, y0, units)


def main(out):
    y2 = 124 + PLOT_H + 90                 # the second panel's top
    h = y2 + PLOT_H + 80
    f = Fig(800, h, fs=12)
    f.text(400, 22, 'v25: work units over the 132 SMs, before and after', fs=14, anchor='middle', weight='bold')
    f.text(400, 40, 'decode batch M 32, N 4096, K 4096 (64 k tiles); grid: one block per unit, at most one per SM',
           fs=10, anchor='middle')
    # legend
    legend(f, 24, 64, [(MUL_C, 'k tiles multiplied', 170),
                       (FIX_C, 'fix-up (last unit of a tile sums the partials)', 370),
                       (IDLE_C, 'idle', 60)])
    fixed_panel(f, 124)
    chosen_panel(f, y2)
    notes = ['rows: one thin row per SM, 132 of them; row b: the SM that runs block b, and so unit b.',
             'bar lengths: the kernel times measured by ncu; the split of each bar is schematic.']
    footnotes(f, h, notes)
    f.save(out)


if __name__ == '__main__':
    main(out_path('v25_waves.svg'))
