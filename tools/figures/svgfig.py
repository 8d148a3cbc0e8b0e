"""A small SVG writer for the docs' figures (docs/img/*.svg).

Every text is monospace, so its width is known without the font (0.6 em a
character: tools/svg_check.py, which tests/cpu_svg.sh runs on docs/img).  save()
runs that same check on what it wrote: a figure whose text runs past the canvas,
out of its box, into a box or over other text fails here, and its file is
removed.  tests/cpu_figures.sh re-runs every script and compares its output with
the committed SVG.
"""
import csv
import html
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
import svg_check  # noqa: E402  (tools/svg_check.py)


def out_path(name):
    """Where a figure goes: docs/img/NAME, or $FIG_OUT_DIR/NAME (the test compares the two)."""
    here = os.path.dirname(os.path.abspath(__file__))
    d = os.environ.get('FIG_OUT_DIR') or os.path.join(here, '..', '..', 'docs', 'img')
    return os.path.join(d, name)


def published_row(step, m, n, k, variant=''):
    """Problem m x n x k's row of variant ('' the step itself) in the published run
    (results/h100-80gb-hbm3/stepSTEP.csv), so that a figure draws what the page quotes."""
    here = os.path.dirname(os.path.abspath(__file__))
    path = os.path.join(here, '..', '..', 'results', 'h100-80gb-hbm3', f'step{step}.csv')
    with open(path) as f:
        for r in csv.DictReader(f):
            if (r['m'], r['n'], r['k'], r['variant']) == (str(m), str(n), str(k), variant):
                return r
    sys.exit(f'{path}: no row {m} x {n} x {k} of variant "{variant}"')


def published_us(step, m, n, k, variant=''):
    """Problem m x n x k's time in the published run, us, to one decimal as the pages show it."""
    return f"{float(published_row(step, m, n, k, variant)['time_us']):.1f}"


def plan_widths(step):
    """The plan's tile width per problem (m, n, k), from the published stepSTEP.log's lines
    `plan for M x N x K: 128 x W tiles`, so that a figure labels what the run chose."""
    here = os.path.dirname(os.path.abspath(__file__))
    w = {}
    with open(os.path.join(here, '..', '..', 'results', 'h100-80gb-hbm3', f'step{step}.log')) as f:
        for line in f:
            m = re.match(r'\s+plan for (\d+) x (\d+) x (\d+): 128 x (\d+) tiles', line)
            if m:
                w[tuple(int(x) for x in m.group(1, 2, 3))] = int(m.group(4))
    return w


def published_plan(step, m, n, k):
    """The step's own plan line for m x n x k in the published stepSTEP.log (`  plan for M x N x
    K: ...`), the text after the colon, so that a figure draws what the run chose."""
    here = os.path.dirname(os.path.abspath(__file__))
    path = os.path.join(here, '..', '..', 'results', 'h100-80gb-hbm3', f'step{step}.log')
    with open(path) as f:
        for line in f:
            if line.startswith(f'  plan for {m} x {n} x {k}: '):
                return line.split(': ', 1)[1].strip()
    sys.exit(f'{path}: no plan line for {m} x {n} x {k}')


def sm_time_axes(f, x0, y0, sms, row, px_us, t_max, tick):
    """A Gantt chart's frame, one row of `row` pixels per SM from y0: SM numbers every 16
    rows on the left of x0, and below the rows a time axis to t_max us, ticks every `tick`."""
    f.text(x0 - 6, y0 - 8, 'SM', fs=10, anchor='end', fill='#555')
    for sm in range(0, sms, 16):
        f.text(x0 - 6, y0 + sm * row + 4, str(sm), fs=9, anchor='end', fill='#555')
        f.line(x0 - 3, y0 + sm * row + row / 2, x0, y0 + sm * row + row / 2, stroke='#888', sw=0.8)
    f.line(x0, y0, x0, y0 + sms * row, stroke='#444', sw=1)
    yb = y0 + sms * row
    f.line(x0, yb, x0 + t_max * px_us, yb, stroke='#444', sw=1)
    for us in range(0, t_max + 1, tick):
        f.line(x0 + us * px_us, yb, x0 + us * px_us, yb + 4, stroke='#444', sw=1)
        f.text(x0 + us * px_us, yb + 15, str(us), fs=9, anchor='middle', fill='#555')
    f.text(x0 + t_max * px_us, yb + 28, 'time from the kernel\'s start (us)', fs=10, anchor='end', fill='#555')


def legend(f, x, y, items):
    """A row of colour swatches and their labels from x, text on baseline y: items are
    (colour, label, width the label is given); returns the x after the last."""
    for c, s, w in items:
        f.rect(x, y - 10, 14, 12, fill=c, stroke='#999', sw=0.5)
        f.text(x + 20, y, s, fs=11)
        x += w + 20
    return x


def lanes(f, y, title, names, blocks):
    """A schedule drawn as lanes from x = 150 (the schematics of v38 and v45): a title, then
    one lane a name (the tensor cores, the consumer warpgroups), 24 pixels apart; blocks are
    (lane, x, width, colour, label)."""
    f.text(24, y + 10, title, fs=11, weight='bold')
    for i, name in enumerate(names):
        f.text(140, y + 32 + 24 * i, name, fs=10, anchor='end', fill='#555')
    for lane, x, w, c, s in blocks:
        f.rect(150 + x, y + 20 + 24 * lane, w, 18, fill=c, stroke='#888', sw=0.6, label=s, fs=9)


def shape_name(m, n, k):
    """A problem as the pages write it: 4096^3, or 4096 x 2112 x 7168."""
    return f'{m}^3' if m == n == k else f'{m} x {n} x {k}'


# Part V's problem list (common/ops/op_gemm_fp8.c): its squares, Part III's model shapes,
# DeepSeek-V3's at 4096 tokens.
PART5_SHAPES = [(1024, 1024, 1024), (2048, 2048, 2048), (4096, 4096, 4096), (8192, 8192, 8192),
                (4096, 14336, 4096), (4096, 4096, 14336), (4096, 128256, 4096), (4096, 2112, 7168),
                (4096, 24576, 1536), (4096, 7168, 16384)]


def pair_rows(shapes, old, new, widths=None):
    """pct_bars' rows for two published rows per problem, old and new each (step, variant,
    colour): a problem's label is its shape, with the plan's width in brackets when widths
    (plan_widths) is given."""
    rows = []
    for (m, n, k) in shapes:
        label = shape_name(m, n, k) if widths is None else '%s (%d)' % (shape_name(m, n, k), widths.get((m, n, k), 0))
        rows.append((label, [(float(published_row(st, m, n, k, var)['pct_cublas']), c) for st, var, c in (old, new)]))
    return rows


def pct_bars(f, x0, top, px, p_min, p_max, group, bar, rows, refs=((100, '#d62728'),), fs=(11, 9)):
    """Horizontal bars of percentages, a group of bars per row from y = top: rows are
    (label, [(percent, colour), ...]); the axis starts at p_min at x0, px pixels a percent,
    ticks every 10%, a dashed line at each (percent, colour) of refs.  fs: the label's and
    the values' font sizes.  Bars past p_max stop there (their value is still printed)."""
    def xp(p):
        return x0 + (p - p_min) * px
    label_fs, value_fs = fs
    for i, (label, bars) in enumerate(rows):
        y = top + i * group
        f.text(x0 - 8, y + bar + label_fs - 7, label, fs=label_fs, anchor='end')
        for j, (p, c) in enumerate(bars):
            yb = y + j * (bar + 1)
            f.rect(x0, yb, (min(p, p_max) - p_min) * px, bar, fill=c, stroke='none', sw=0)
            f.text(xp(min(p, p_max)) + 4, yb + bar + 7 - value_fs, f'{p:.1f}', fs=value_fs)
    yb = top + len(rows) * group
    f.line(x0, top - 4, x0, yb, stroke='#444', sw=1)
    f.line(x0, yb, xp(p_max), yb, stroke='#444', sw=1)
    for p in range(p_min, p_max + 1, 10):
        f.line(xp(p), yb, xp(p), yb + 4, stroke='#444', sw=1)
        f.text(xp(p), yb + 16, f'{p}%', fs=9, anchor='middle')
    for p, c in refs:
        f.line(xp(p), top - 4, xp(p), yb, stroke=c, sw=1, dash='3,3')


class Gantt:
    """A Gantt chart of rows (clusters, SMs) over time: the plot's left edge x0, px pixels per
    unit of time, `rows` rows `row` pixels apart with bars `bar` high, an axis to t_max."""
    def __init__(self, x0, px, rows, row, bar, t_max):
        self.x0, self.px, self.rows, self.row, self.bar_h, self.t_max = x0, px, rows, row, bar, t_max
        self.h = rows * row

    def x(self, t):
        return self.x0 + t * self.px

    def bar(self, f, y0, r, t0, t1, colour):
        f.rect(self.x(t0), y0 + r * self.row, (t1 - t0) * self.px, self.bar_h, fill=colour, stroke='none', sw=0)

    def axes(self, f, y0, label, named_rows, name):
        """Ticks at every whole unit, the axis's label under them, and rows named at the left."""
        f.line(self.x0, y0 + self.h + 2, self.x(self.t_max), y0 + self.h + 2, stroke='#444', sw=1)
        for t in range(0, int(self.t_max) + 1):
            f.line(self.x(t), y0 + self.h + 2, self.x(t), y0 + self.h + 6, stroke='#444', sw=1)
            f.text(self.x(t), y0 + self.h + 18, str(t), fs=10, anchor='middle')
        f.text(self.x(self.t_max / 2), y0 + self.h + 34, label, fs=10, anchor='middle')
        for r in named_rows:
            f.text(self.x0 - 6, y0 + r * self.row + 3, f'{name} {r}', fs=9, anchor='end')

    def end_line(self, f, y0, t, label, anchor):
        """A dashed line where the last row ends, labelled above the chart."""
        f.line(self.x(t), y0 - 2, self.x(t), y0 + self.h, stroke='#000', sw=1, dash='3,2')
        f.text(self.x(t), y0 - 6, label, fs=10, anchor=anchor, weight='bold')


def footnotes(f, h, lines):
    """The figure's notes, one 11-point line each, 16 pixels apart, ending near the bottom h."""
    for i, s in enumerate(lines):
        f.text(24, h - 28 + i * 16, s, fs=11)


def text_width(s, fs):
    """Width of a line of text as svg_check.py measures it (the layouts use it to fit labels)."""
    return len(s) * svg_check.ADVANCE * fs


class Fig:
    def __init__(self, w, h, fs=12):
        self.w, self.h, self.fs = w, h, fs
        self.items = []
        self.defs = []

    def text(self, x, y, s, fs=None, anchor='start', weight=None, fill='#000', italic=False):
        fs = fs or self.fs
        a = f' text-anchor="{anchor}"' if anchor != 'start' else ''
        wgt = f' font-weight="{weight}"' if weight else ''
        it = ' font-style="italic"' if italic else ''
        sp = ' xml:space="preserve"' if '  ' in s or s.startswith(' ') else ''
        self.items.append(f'<text x="{x:g}" y="{y:g}" font-size="{fs:g}"{a}{wgt}{it} fill="{fill}"{sp}>'
                          f'{html.escape(s)}</text>')

    def rect(self, x, y, w, h, fill='none', stroke='#444', sw=1, label=None, fs=None, lfill='#000',
             weight=None, rx=0, dash=None, anchor='middle'):
        d = f' stroke-dasharray="{dash}"' if dash else ''
        r = f' rx="{rx}"' if rx else ''
        self.items.append(f'<rect x="{x:g}" y="{y:g}" width="{w:g}" height="{h:g}" fill="{fill}" '
                          f'stroke="{stroke}" stroke-width="{sw:g}"{r}{d}/>')
        if label is not None:
            fs = fs or self.fs
            lines = label.split('\n')
            n = len(lines)
            for i, s in enumerate(lines):
                ty = y + h / 2 + fs * 0.35 + (i - (n - 1) / 2) * fs * 1.15
                tx = {'middle': x + w / 2, 'start': x + 3}[anchor]
                self.text(tx, ty, s, fs, anchor, weight, lfill)

    def _arrowhead(self, stroke, arrow):
        """The marker-end attribute of a line or path (one arrowhead per colour, in the defs), or ''."""
        if not arrow:
            return ''
        mid = 'ah' + stroke.strip('#')
        if mid not in self.defs:
            self.defs.append(mid)
        return f' marker-end="url(#{mid})"'

    def line(self, x1, y1, x2, y2, stroke='#444', sw=1, dash=None, arrow=False):
        d = f' stroke-dasharray="{dash}"' if dash else ''
        m = self._arrowhead(stroke, arrow)
        self.items.append(f'<line x1="{x1:g}" y1="{y1:g}" x2="{x2:g}" y2="{y2:g}" stroke="{stroke}" '
                          f'stroke-width="{sw:g}"{d}{m}/>')

    def path(self, d, stroke='#444', sw=1, fill='none', arrow=False, dash=None):
        m = self._arrowhead(stroke, arrow)
        da = f' stroke-dasharray="{dash}"' if dash else ''
        self.items.append(f'<path d="{d}" stroke="{stroke}" stroke-width="{sw:g}" fill="{fill}"{da}{m}/>')

    def raw(self, s):
        self.items.append(s)

    def save(self, path):
        out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{self.w}" height="{self.h}" '
               f'viewBox="0 0 {self.w} {self.h}" font-family="monospace" font-size="{self.fs}">',
               '<style>text { font-family: monospace; }</style>']
        if self.defs:
            out.append('<defs>')
            for mid in self.defs:
                out.append(f'<marker id="{mid}" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" '
                           f'markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" '
                           f'fill="#{mid[2:]}"/></marker>')
            out.append('</defs>')
        out.append(f'<rect width="{self.w}" height="{self.h}" fill="white"/>')
        out += self.items
        out.append('</svg>')
        with open(path, 'w') as f:
            f.write('\n'.join(out) + '\n')
        faults = svg_check.check(path)   # None: it could not be read back
        if faults != []:
            os.remove(path)
            raise ValueError('\n'.join(faults or [f'{path}: cannot read back what was written']))
