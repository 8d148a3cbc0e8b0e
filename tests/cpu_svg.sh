# cpu_svg.sh - the figures in docs/img (sourced by run_tests.sh): every lesson page has one,
# and no figure's text runs past its canvas, out of its box, into a box or over other text.
# tools/svg_check.py measures text at 0.6 em per character, which holds because every
# figure declares a monospace font; its header lists the conventions a figure follows.
for page in docs/v[0-9]*_*.md; do
    check "docs: $page shows a figure from docs/img" grep -qE '!\[[^]]*\]\(img/[^)]+\.svg\)' "$page"
done
if command -v python3 >/dev/null 2>&1; then
    # The checker itself, on figures made to pass or to fail by one thing each.
    svg() { printf '<svg xmlns="http://www.w3.org/2000/svg" width="200" height="60" viewBox="0 0 200 60" font-family="%s" font-size="10">%s</svg>\n' "$1" "$2"; }
    svg monospace '<rect x="10" y="10" width="60" height="20"/><text x="10" y="24">1234567890</text>' >"$tmp/svg_fits.svg"
    svg monospace '<rect x="10" y="10" width="60" height="20"/><text x="10" y="24">12345678901</text>' >"$tmp/svg_box.svg"
    svg monospace '<text x="190" y="24">1234567890</text>' >"$tmp/svg_canvas.svg"
    svg monospace '<text x="190" y="24" text-anchor="end">1234567890</text>' >"$tmp/svg_anchor.svg"
    svg monospace '<g font-size="12"><rect x="10" y="10" width="60" height="20"/><text x="10" y="24">1234567890</text></g>' >"$tmp/svg_size.svg"
    svg monospace '<rect x="60" y="10" width="30" height="20"/><text x="10" y="24">1234567890</text>' >"$tmp/svg_into.svg"
    svg monospace '<text x="10" y="24">1234567890</text><text x="70" y="26">abc</text>' >"$tmp/svg_overlap.svg"
    svg sans-serif '<text x="10" y="24">1</text>' >"$tmp/svg_sans.svg"
    check "svg_check: ten characters at 10 units fit a 60-wide box" python3 tools/svg_check.py "$tmp/svg_fits.svg"
    check "svg_check: text-anchor=end is measured leftwards from x" python3 tools/svg_check.py "$tmp/svg_anchor.svg"
    for c in box canvas size into overlap sans; do
        check "svg_check: fails on a figure with one fault ($c)" bash -c \
            "python3 tools/svg_check.py $tmp/svg_$c.svg >$tmp/svg_$c.out; [ \$? -eq 1 ] && grep -q . $tmp/svg_$c.out"
    done
    for f in docs/img/*.svg; do
        check "figure $f: monospace text inside its canvas and its boxes" python3 tools/svg_check.py "$f"
    done
else
    skp "figures in docs/img: python3 not found (tools/svg_check.py measures their text)"
fi
