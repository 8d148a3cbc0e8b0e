#!/usr/bin/env python3
"""docs/img/v32_rounds.svg: 4096 x 2112 x 7168's tiles over the H100's 66 clusters of two
SMs, as two Gantt charts on one time scale: v28's 128 x 256 tiles (9 across N = 2112,
2304 columns; 144 cluster tiles: two full rounds and 12 in a third) and v32's 128 x 176
(12 across, exactly 2112; 192 cluster tiles: two full rounds and 60 in a third).  A tile's
length is its width (one unit: a 128-wide tile over all of K), the plan's rounds x width at
one rate per column (the widths from 160 up measured within 5% of each other: the page);
schematic in everything else.  The drawing is v31_rounds.py's.

    python3 tools/figures/v32_rounds.py   (writes docs/img/v32_rounds.svg, or into $FIG_OUT_DIR)
"""
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
from svgfig import out_path
from v31_rounds import IDLE_C, NARROW_C, WIDE_C, draw, scale


def main(out):
    draw(out, scale(105, 6.5), 'a 256-wide tile: 2, a 176-wide: 1.375',
         "v32: 4096 x 2112 x 7168's tiles on the H100, 128 x 256 against 128 x 176",
         'FP8 GEMM with per-tensor scales, tiles in clusters of two along M, 66 clusters',
         [(WIDE_C, 'a 128 x 256 tile (v28)', 170), (NARROW_C, 'a 128 x 176 tile (v32)', 170), (IDLE_C, 'idle', 60)],
         [("v28's tile: 144 cluster tiles, 2 full rounds and 12 tiles in a third", 256, 144, WIDE_C),
          ("v32's tile: 192 cluster tiles, 2 full rounds and 60 tiles in a third", 176, 192, NARROW_C)],
         ['rows: one per cluster of two SMs; lengths from the plan: rounds x width, at one rate per column.',
          "v28's 9 tiles across N are 2304 columns: 8% of its work lies past N = 2112; v32's 12 are 2112.",
          "The last box of each 176-wide tile is 48 columns, stored through a second tensor map."])


if __name__ == '__main__':
    main(out_path('v32_rounds.svg'))
