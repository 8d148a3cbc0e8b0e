#!/usr/bin/env bash
# golden.sh [--update] - the generated outputs, whole, against the files in
# tests/fixtures/golden/: tools/tables.sh's summary.md and every file it writes
# for the charts (roofline.dat, ceilings.dat, part*_pct.dat, part*_rate.dat,
# part*.name), and tools/update_docs.sh run over tests/fixtures/golden_doc.md,
# all from the fixture CSVs in tests/fixtures/results/fixture-gpu/.
#
#   tests/golden.sh            compare; one line per file, "ok - ..." or "not ok - ..."
#                              with the first lines of the diff; exit 1 on a difference
#   tests/golden.sh --update   rewrite the golden files from the tools as they are now
#                              (after a deliberate change to an output: read the diff
#                              with git diff tests/fixtures/golden/ before committing)
#
# make test runs the comparison (tests/cpu_golden.sh).  Plain bash, awk, diff.
set -uo pipefail
cd "$(dirname "$0")/.."
update=0
case ${1:-} in --update) update=1 ;; "") ;; *) echo "usage: tests/golden.sh [--update]" >&2; exit 2 ;; esac
fx=tests/fixtures/results/fixture-gpu
gold=${GOLDEN_DIR:-tests/fixtures/golden}   # GOLDEN_DIR: another copy (the self-test below uses one)
out=$(mktemp -d); trap 'rm -rf "$out"' EXIT
mkdir -p "$out/files" "$out/plots"

tools/tables.sh "$fx" "$out/plots" >"$out/files/summary.md" 2>"$out/tables.err" ||
    { echo "not ok - golden: tools/tables.sh failed: $(head -n1 "$out/tables.err")"; exit 1; }
for f in "$out"/plots/*; do
    b=$(basename "$f")
    # roofline.dat lists its points in awk's hash order: the header, then the points sorted
    if [ "$b" = roofline.dat ]; then { head -n1 "$f"; tail -n +2 "$f" | LC_ALL=C sort; } >"$out/files/$b"
    else cp "$f" "$out/files/$b"; fi
done
cp tests/fixtures/golden_doc.md "$out/files/doc.md"
tools/update_docs.sh "$fx" "$out/files/doc.md" 2>"$out/docs.err" ||
    { echo "not ok - golden: tools/update_docs.sh failed: $(head -n1 "$out/docs.err")"; exit 1; }

if [ $update -eq 1 ]; then
    rm -rf "$gold"; mkdir -p "$gold"; cp "$out"/files/* "$gold"/
    echo "golden files rewritten in $gold/ ($(ls "$gold" | wc -l) files): review them with git diff $gold/"
    exit 0
fi
rc=0
for f in "$out"/files/*; do
    b=$(basename "$f")
    if [ ! -f "$gold/$b" ]; then echo "not ok - golden: $b is new (tests/golden.sh --update adds it)"; rc=1
    elif diff -u "$gold/$b" "$f" >"$out/diff" 2>&1; then echo "ok - golden: $b ($(wc -l <"$f") lines) as in $gold/"
    else echo "not ok - golden: $b differs from $gold/$b (- golden, + now; tests/golden.sh --update if meant):"
         sed -n '3,14p' "$out/diff" | sed 's/^/    /'; rc=1; fi
done
for g in "$gold"/*; do
    [ -f "$out/files/$(basename "$g")" ] || { echo "not ok - golden: $(basename "$g") is no longer written"; rc=1; }
done
exit $rc
