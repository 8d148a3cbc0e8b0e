#!/usr/bin/env python3
"""svg_check.py FILE.svg...: fail when a figure's text is clipped or collides.

A browser draws an SVG's text in whatever font it has, so a label that fits on
one machine runs past the canvas or out of its box on another.  The figures in
docs/img avoid that by declaring a monospace font, whose every glyph advances
about 0.6 em (DejaVu Sans Mono 0.602, Liberation Mono, Courier and Menlo 0.6),
so the width of a string is known without the font: 0.6 * font-size per
character.  This script measures every <text> that way and checks where it lies.

Conventions every figure in docs/img follows (and this script enforces):
  1. The root <svg> has width, height and viewBox="0 0 W H" with the same W, H.
  2. Every <text> inherits or sets a font-family whose list contains the
     generic name monospace (font-family="monospace" on the root is enough;
     "DejaVu Sans Mono, Menlo, Consolas, monospace" names the usual ones).
  3. font-size is a plain number (user units); text-anchor start, middle or
     end; dominant-baseline, if set, auto, alphabetic, middle, central,
     hanging, text-top or text-bottom; transforms are translate, scale,
     rotate or matrix.  A <tspan> may change font-size or font-weight, not
     the position (no x, y, dx, dy): a second line is a second <text>.
     White space collapses as a renderer draws it, unless the <text> says
     xml:space="preserve" (for columns aligned with spaces).
  4. A line of text (0.6 em per character wide, from 0.75 em above its
     baseline to 0.2 em below) lies inside the canvas.
  5. Text that starts inside a <rect> ends inside it, and text that starts
     outside a rect does not run into it: a label stays in its box or out of
     it.  A rect with class="nobox" (a highlight drawn over text, say) is
     exempt.
  6. No two lines of text overlap, and two on one line are 2 units apart.
Exit status: 0 when every file passes, 1 when one fails (one line per fault,
"file: text 'label...': what is wrong"), 2 on bad usage or a file that cannot
be read.
"""
import math
import re
import sys
import xml.etree.ElementTree as ET

SVG = "{http://www.w3.org/2000/svg}"
ADVANCE = 0.6     # em per character of a monospace font
ASCENT, DESCENT = 0.75, 0.2
SLACK = 0.5       # user units of overlap forgiven (rounding of hand-placed coordinates)
GAP = 2.0         # two texts side by side on one line stay this far apart, or they read as one
INHERITED = ("font-family", "font-size", "text-anchor", "font-weight", "dominant-baseline")
# where y sits for a dominant-baseline, in em below the top of the line's box
BASELINES = {"auto": ASCENT, "alphabetic": ASCENT, "middle": (ASCENT + DESCENT) / 2,
             "central": (ASCENT + DESCENT) / 2, "hanging": 0, "text-before-edge": 0,
             "text-top": 0, "text-after-edge": ASCENT + DESCENT, "text-bottom": ASCENT + DESCENT}


def style_of(el, parent):
    """The inherited properties that matter here, from attributes and style=."""
    s = dict(parent)
    for k in INHERITED:
        if el.get(k) is not None:
            s[k] = el.get(k).strip()
    for decl in (el.get("style") or "").split(";"):
        if ":" in decl:
            k, v = (p.strip() for p in decl.split(":", 1))
            if k in INHERITED:
                s[k] = v
    return s


def mul(a, b):
    """Affine matrices as (a, b, c, d, e, f), SVG's order: a * b."""
    return (a[0] * b[0] + a[2] * b[1], a[1] * b[0] + a[3] * b[1],
            a[0] * b[2] + a[2] * b[3], a[1] * b[2] + a[3] * b[3],
            a[0] * b[4] + a[2] * b[5] + a[4], a[1] * b[4] + a[3] * b[5] + a[5])


def parse_transform(t, where):
    m = (1, 0, 0, 1, 0, 0)
    for name, args in re.findall(r"(\w+)\s*\(([^)]*)\)", t or ""):
        v = [float(x) for x in re.split(r"[\s,]+", args.strip()) if x]
        if name == "translate":
            step = (1, 0, 0, 1, v[0], v[1] if len(v) > 1 else 0)
        elif name == "scale":
            step = (v[0], 0, 0, v[1] if len(v) > 1 else v[0], 0, 0)
        elif name == "rotate":
            r = math.radians(v[0])
            step = (math.cos(r), math.sin(r), -math.sin(r), math.cos(r), 0, 0)
            if len(v) == 3:
                step = mul(mul((1, 0, 0, 1, v[1], v[2]), step), (1, 0, 0, 1, -v[1], -v[2]))
        elif name == "matrix":
            step = tuple(v)
        else:
            raise ValueError(f"{where}: transform {name}() is not supported")
        m = mul(m, step)
    return m


def apply(m, x, y):
    return (m[0] * x + m[2] * y + m[4], m[1] * x + m[3] * y + m[5])


def box(m, x0, y0, x1, y1):
    """Axis-aligned bounds of a local rectangle after the transform m."""
    pts = [apply(m, x, y) for x in (x0, x1) for y in (y0, y1)]
    xs, ys = [p[0] for p in pts], [p[1] for p in pts]
    return (min(xs), min(ys), max(xs), max(ys))


def num(v, what):
    try:
        return float(re.sub(r"px$", "", (v or "0").strip()))
    except ValueError:
        raise ValueError(f"{what} {v!r} is not a plain number")


def text_width(el, style, where):
    """Width of a <text> and its <tspan>s, each run at its own font-size.
    Runs of white space count as one space, as a renderer draws them, unless
    xml:space="preserve" says otherwise."""
    width = 0.0
    keep = el.get("{http://www.w3.org/XML/1998/namespace}space") == "preserve"
    runs = []

    def walk(e, s):
        nonlocal width
        if e is not el:
            for k in ("x", "y", "dx", "dy"):
                if e.get(k) is not None:
                    raise ValueError(f"{where}: a tspan sets {k}: split it into its own <text>")
        size = num(s.get("font-size"), "font-size")
        runs.append((e.text or "", size))
        for c in e:
            walk(c, style_of(c, s))
            runs.append((c.tail or "", size))

    walk(el, style)
    if not keep:   # collapse, then drop the white space at both ends of the line
        runs = [(re.sub(r"\s+", " ", t), z) for t, z in runs]
        joined = "".join(t for t, _ in runs)
        lead, trail = len(joined) - len(joined.lstrip()), len(joined) - len(joined.rstrip())
        chars = [z for t, z in runs for _ in t]
        chars = chars[lead:len(chars) - trail]
        # a space that ends one run and starts the next is drawn once
        return sum(chars) * ADVANCE - ADVANCE * sum(z for (a, z), (b, _) in zip(runs, runs[1:]) if a.endswith(" ") and b.startswith(" "))
    return sum(len(t) * z for t, z in runs) * ADVANCE


def check(path):
    faults = []
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError) as e:
        print(f"{path}: cannot read: {e}", file=sys.stderr)
        return None
    try:
        W, H = num(root.get("width"), "width"), num(root.get("height"), "height")
        vb = [float(v) for v in re.split(r"[\s,]+", (root.get("viewBox") or "").strip()) if v]
    except ValueError as e:
        return [f"{path}: {e}"]
    if len(vb) != 4 or vb[:2] != [0, 0] or vb[2] != W or vb[3] != H:
        faults.append(f"{path}: the root needs width, height and viewBox=\"0 0 width height\" (has {root.get('viewBox')!r})")

    texts, rects = [], []

    def walk(el, style, m):
        style = style_of(el, style)
        m = mul(m, parse_transform(el.get("transform"), path))
        tag = el.tag.replace(SVG, "")
        if tag == "rect" and "nobox" not in (el.get("class") or "").split():
            def dim(k, full):   # a background rect may say width="100%"
                v = (el.get(k) or "0").strip()
                return float(v[:-1]) * full / 100 if v.endswith("%") else num(v, k)
            x, y, w, h = dim("x", W), dim("y", H), dim("width", W), dim("height", H)
            rects.append(box(m, x, y, x + w, y + h))
        if tag == "text":
            label = "".join(el.itertext()).strip()
            where = f"{path}: text '{label[:40]}'"
            if "monospace" not in (style.get("font-family") or "").lower():
                faults.append(f"{where}: font-family {style.get('font-family')!r} is not monospace, so its width cannot be known")
                return
            size = num(style.get("font-size"), "font-size")
            w = text_width(el, style, where)
            anchor = style.get("text-anchor", "start")
            if anchor not in ("start", "middle", "end"):
                raise ValueError(f"{where}: text-anchor {anchor!r}")
            base = style.get("dominant-baseline", "auto")
            if base not in BASELINES:
                raise ValueError(f"{where}: dominant-baseline {base!r}")
            x, y = num(el.get("x"), "x"), num(el.get("y"), "y")
            x0 = x - {"start": 0, "middle": w / 2, "end": w}[anchor]
            top = y - BASELINES[base] * size
            b = box(m, x0, top, x0 + w, top + (ASCENT + DESCENT) * size)
            start = apply(m, x0, top + (ASCENT - 0.35) * size)   # middle of a lower-case letter, at the text's start
            texts.append((where, b, start))
            return
        for c in el:
            walk(c, style, m)

    try:
        walk(root, {}, (1, 0, 0, 1, 0, 0))
    except ValueError as e:
        return faults + [str(e)]

    for where, (x0, y0, x1, y1), start in texts:
        if x0 < -SLACK or y0 < -SLACK or x1 > W + SLACK or y1 > H + SLACK:
            faults.append(f"{where}: spans x {x0:.0f}..{x1:.0f}, y {y0:.0f}..{y1:.0f}, past the {W:.0f} x {H:.0f} canvas")
        for r in rects:
            if r[0] <= 0 and r[1] <= 0 and r[2] >= W and r[3] >= H:
                continue   # the background: the canvas test above covers it
            span = f"spans x {x0:.0f}..{x1:.0f}, y {y0:.0f}..{y1:.0f}"
            rbox = f"x {r[0]:.0f}..{r[2]:.0f}, y {r[1]:.0f}..{r[3]:.0f}"
            if r[0] <= start[0] <= r[2] and r[1] <= start[1] <= r[3]:
                if x0 < r[0] - SLACK or x1 > r[2] + SLACK or y0 < r[1] - SLACK - 0.5 or y1 > r[3] + SLACK + 0.5:
                    faults.append(f"{where}: {span}, out of its box {rbox}")
            elif min(x1, r[2]) - max(x0, r[0]) > SLACK and min(y1, r[3]) - max(y0, r[1]) > SLACK + 0.5:
                faults.append(f"{where}: {span}, runs into the box {rbox}")
    for i, (wa, a, _) in enumerate(texts):
        for wb, b, _ in texts[i + 1:]:
            if min(a[2], b[2]) - max(a[0], b[0]) > -GAP and min(a[3], b[3]) - max(a[1], b[1]) > SLACK:
                faults.append(f"{wa}: overlaps text {wb.split(': text ', 1)[1]}")
    return faults


def main(argv):
    if len(argv) < 2 or argv[1] in ("-h", "--help"):
        print(__doc__.strip().splitlines()[0], file=sys.stderr)
        return 2
    status = 0
    for path in argv[1:]:
        faults = check(path)
        if faults is None:
            return 2
        for f in faults:
            print(f)
        if faults:
            status = 1
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv))
