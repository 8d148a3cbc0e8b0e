#!/usr/bin/env bash
# Times step N as git revision REV had it against the working tree's, in alternating
# processes (the clock moves with the power draw: only a same-call comparison means
# anything), ROUNDS times, and checks both first.  For a change that should not move
# the speed (a comment, a fence, a reconvergence point), on the reference GPU:
#   tools/before_after.sh N REV [ROUNDS] [SIZES]     (defaults: 3, 4096,8192)
# REV may also be a file holding the old source (where the copy has no git history).
# REV's step file is built against today's common/ (it must still compile with it).
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 2 ] || { echo "usage: $0 STEP REV [ROUNDS] [SIZES]" >&2; exit 2; }
n=$1; rev=$2; rounds=${3:-3}; sizes=${4:-4096,8192}
src=$(ls steps/v"$n"_*/*.cu) || { echo "no step $n" >&2; exit 2; }
out=build/before_after/$n; rm -rf "$out/steps"; mkdir -p "$out/steps/v${n}_before"
before=$out/steps/v${n}_before/$(basename "$src")
if [ -f "$rev" ]; then cp "$rev" "$before"; else git show "$rev:$src" >"$before"; fi
# Both built by the Makefile, so with the same flags, DEFS and all (sm_90a where a source
# asks for it): REV's source as step N of a folder of its own, then the working tree's,
# which is left as ./stepN.
rm -f "step$n"; make -s "step$n" STEPS="$out/steps" >/dev/null && mv "step$n" "$out/before"
make -s "step$n" >/dev/null && cp "step$n" "$out/after"
for b in before after; do
    "$out/$b" --check-only --sizes 1,7,33,127,1000 -k 64 >/dev/null || { echo "$b: the check failed" >&2; exit 1; }
    echo "$b: checks passed"
done
echo "build round m n k TFLOPS cuBLAS_TFLOPS pct_cublas"
for r in $(seq "$rounds"); do
    for b in before after; do
        "$out/$b" --sizes "$sizes" --csv "$out/$b.$r.csv" >/dev/null
        awk -F, -v b="$b" -v r="$r" 'NR == 1 { for (j = 1; j <= NF; j++) c[$j] = j; next }   # columns by header name
            { m = $(c["m"]); n = $(c["n"]); k = $(c["k"])
              printf "%s %s %s %s %s %s %.1f %s\n", b, r, m, n, k, $(c["tflops"]), 2.0 * m * n * k / $(c["cublas_time_us"]) / 1e6, $(c["pct_cublas"]) }' "$out/$b.$r.csv"
    done
done
