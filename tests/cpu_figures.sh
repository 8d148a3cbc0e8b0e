# cpu_figures.sh - sourced by run_tests.sh (CPU part).  The figures drawn by
# tools/figures/*.py are committed with the scripts; each script refuses a text
# that runs past its box or the canvas.  Regenerate them into $tmp and compare:
# a script that fails, or a committed SVG that is not what its script draws
# (edited by hand, or the script changed and not re-run), fails here.
if command -v python3 >/dev/null 2>&1; then
    for fig in tools/figures/v*.py; do
        check "figures: $fig draws without clipping, and docs/img holds what it draws" bash -c '
            out='"$tmp"'/figures/$(basename '"$fig"' .py); rm -rf "$out"; mkdir -p "$out" &&
            FIG_OUT_DIR="$out" python3 '"$fig"' && n=0 &&
            for f in "$out"/*.svg; do
                [ -e "$f" ] || { echo "'"$fig"' wrote no SVG"; exit 1; }
                cmp "$f" "docs/img/$(basename "$f")" || exit 1; n=$((n + 1))
            done && [ "$n" -gt 0 ]'
    done
else
    skp "figures: python3 not found"
fi
