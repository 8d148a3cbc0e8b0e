#!/usr/bin/env bash
# v22 with two consumer warpgroups (the step: 128 x 256, one m64n256 per k16),
# the same with two m64n128 per k16 (-DWG_N=128: the instruction split alone),
# and three consumers (-DCONSUMERS=3: 192 x 256, 512 threads, two m64n128 under
# setmaxnreg.inc 160).  On an H100: checks each variant at the part's awkward
# shapes, then times the three in alternating processes, ROUNDS times.
#   tools/v22_consumers.sh [ROUNDS] [SIZES]     (defaults: 3, 4096,8192)
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-3}; sizes=${2:-4096,8192}
mkdir -p build/v22var
for v in "c2:" "c2n128:-DWG_N=128" "c3:-DCONSUMERS=3"; do
    name=${v%%:*}; defs=${v#*:}
    make -s step22 DEFS="$defs" >/dev/null
    cp step22 "build/v22var/$name"
    make -s regs STEP=22 DEFS="$defs" | grep -E "registers|spill" | sed "s/^/$name: /"
done
make -s step22 >/dev/null   # the default build back under its own name
for name in c2n128 c3; do
    b="build/v22var/$name"
    "$b" --check-only --sizes 1,7,33,127,1000,1023,2049 -k 64 >/dev/null
    for shp in "-m 1000 -n 7 -k 40" "-m 7 -n 1023 -k 2056" "-m 127 -n 2049 -k 8" "-m 4097 -n 129 -k 4096" \
               "-m 4097 -n 4104 -k 72" "-m 1153 -n 4104 -k 8"; do
        "$b" --check-only $shp >/dev/null
    done
    if command -v compute-sanitizer >/dev/null; then
        compute-sanitizer --tool memcheck --error-exitcode 1 "$b" --check-only -m 67 -n 45 -k 40 >/dev/null
        compute-sanitizer --tool racecheck --error-exitcode 1 "$b" --check-only -m 1153 -n 4104 -k 8 >/dev/null
    fi
    echo "$name: checks passed"
done
for r in $(seq "$rounds"); do
    for name in c2 c2n128 c3; do
        "build/v22var/$name" --sizes "$sizes" --csv "build/v22var/$name.sq.$r.csv" >/dev/null
        "build/v22var/$name" -m 4096 -n 14336 -k 4096 --sizes 4096 --csv "build/v22var/$name.ffn.$r.csv" >/dev/null
    done
done
echo "variant round m n k TFLOPS cuBLAS_TFLOPS pct_cublas"
for r in $(seq "$rounds"); do
    for name in c2 c2n128 c3; do
        for f in "build/v22var/$name.sq.$r.csv" "build/v22var/$name.ffn.$r.csv"; do
            awk -F, -v n="$name" -v r="$r" 'NR > 1 { printf "%s %s %s %s %s %s %.1f %s\n", n, r, $4, $5, $6, $8, 2.0 * $4 * $5 * $6 / $10 / 1e6, $11 }' "$f"
        done
    done
done
