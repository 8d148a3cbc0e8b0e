#!/usr/bin/env bash
# fp8_accum.sh [-s STEP] [-m M] [-n N] [-k K1,K2,...] - how the error of FP8
# accumulation grows with K.  Runs ./stepSTEP (default 28, an FP8 step) at M x N x K
# for each K (default 2048 x 2048, K = 1024 .. 65536) and prints a markdown table:
# rel_err (||C - ref|| / ||ref|| against the fp32 GEMM of the dequantized inputs)
# of the step and of cuBLASLt in its two accumulation modes, fast (all of K in the
# tensor cores, as v28) and promoted (partial sums added into fp32 as it goes), with
# each one's TFLOPS; for a block-scaled step (v29), of the step and of cuBLASLt's
# block-scaled GEMM, its one mode.  The step's check must pass at every K (exit 1 if not).
#   tools/fp8_accum.sh > results/h100-80gb-hbm3/sweeps/step28_accum.md
# Exit status: 0 ok, 1 a run failed, 2 bad usage, 3 no usable GPU.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
step=28 m=2048 n=2048 ks=1024,2048,4096,8192,16384,32768,65536
while getopts "s:m:n:k:h" o; do
    case $o in
        s) step=$OPTARG ;; m) m=$OPTARG ;; n) n=$OPTARG ;; k) ks=$OPTARG ;;
        h) print_header "$0"; exit 0 ;; *) echo "fp8_accum.sh: see tools/fp8_accum.sh -h" >&2; exit 2 ;;
    esac
done
for v in "$step" "$m" "$n" ${ks//,/ }; do
    [[ $v =~ ^[0-9]+$ ]] || { echo "fp8_accum.sh: '$v' is not a whole number" >&2; exit 2; }
done
cd "$(dirname "$0")/.."
gpu=$(gpu_name) || { echo "fp8_accum.sh: no NVIDIA GPU found (nvidia-smi shows none): nothing to run" >&2; exit 3; }
make -s "step$step" >/dev/null
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
for k in ${ks//,/ }; do
    rc=0
    "./step$step" -m "$m" -n "$n" -k "$k" --budget 20 >"$tmp/out" 2>&1 || rc=$?
    if [ $rc -eq 3 ]; then echo "fp8_accum.sh: step$step cannot run here: $(last_line "$tmp/out")" >&2; exit 3; fi
    if [ $rc -ne 0 ]; then
        echo "fp8_accum.sh: step$step -m $m -n $n -k $k exited $rc: $(last_line "$tmp/out")" >&2; exit 1
    fi
    # the row: M N K time TFLOPS cuBLAS %cuBLAS %peak rel_err err/tol check; then the note, which
    # names cuBLASLt's rel_err once (block scales) or twice (fast, then promoted accumulation)
    awk -v k="$k" -v flop="$(awk -v m="$m" -v n="$n" -v k="$k" 'BEGIN { printf "%.0f", 2 * m * n * k }')" '
        $1 ~ /^[0-9]+$/ && $3 == k && NF >= 11 { err = $9; used = $10; tf = $5; lt = $6 }
        /cuBLAS column: cublasLtMatmul FP8/ {
            for (i = 1; i < NF; i++) {
                if ($i == "rel_err" && first == "") first = $(i + 1)
                else if ($i == "rel_err") second = $(i + 1)
                if ($i == "accumulation" && $(i - 1) == "promoted") pus = $(i + 1)
            }
        }
        END {
            gsub(/[;,]/, "", first); gsub(/[;,]/, "", second)
            if (err == "" || first == "") exit 1
            if (second != "" && pus == "") exit 1
            printf "%d|%s|%s|%s|%s|%s|%s|%s\n", k, err, used, first, second, tf, lt, second == "" ? "" : sprintf("%.1f", flop / (pus * 1e6))
        }' "$tmp/out" >>"$tmp/rows" || { echo "fp8_accum.sh: step$step at K = $k printed no row and cuBLASLt note to read" >&2; exit 1; }
done
echo "step$step at M = $m, N = $n on $gpu (\`tools/fp8_accum.sh -s $step -m $m -n $n -k $ks\`):"
echo
if cut -d'|' -f5 "$tmp/rows" | grep -q .; then   # two cuBLASLt modes (per-tensor scales)
    echo "| K | v$step rel_err | v$step err/tol | cuBLASLt fast rel_err | cuBLASLt promoted rel_err | v$step TFLOPS | cuBLASLt fast TFLOPS | cuBLASLt promoted TFLOPS |"
    echo "|---:|---:|---:|---:|---:|---:|---:|---:|"
    awk -F'|' '{ printf "| %s | %s | %s | %s | %s | %s | %s | %s |\n", $1, $2, $3, $4, $5, $6, $7, $8 }' "$tmp/rows"
else                                              # one (block scales, promoted)
    echo "| K | v$step rel_err | v$step err/tol | cuBLASLt rel_err | v$step TFLOPS | cuBLASLt TFLOPS |"
    echo "|---:|---:|---:|---:|---:|---:|"
    awk -F'|' '{ printf "| %s | %s | %s | %s | %s | %s |\n", $1, $2, $3, $4, $6, $7 }' "$tmp/rows"
fi
