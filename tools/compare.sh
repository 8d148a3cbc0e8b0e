#!/usr/bin/env bash
# compare.sh RUN_DIR REF_DIR - this run's times against a reference run's, one
# markdown row per step, at the shapes both measured (same variant, m, n, k).
# run_all.sh writes it to RUN_DIR/compare.md after every run.
#
# time / ref is this run's time over the reference's (1.00: the same; 1.25: 25%
# slower), as the median over the shared shapes and its range; cuBLAS / ref is
# the same ratio for the cuBLAS call timed beside the step.  When both move
# together the GPU (clock, memory, model) differs; when only the step's moves,
# the step does.  Plain awk, like tables.sh.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
run=${1:-} ref=${2:-}
case $run in -h|--help) print_header "$0"; exit 0 ;; esac
[ -d "$run" ] && [ -d "$ref" ] || { echo "usage: tools/compare.sh RUN_DIR REF_DIR (both folders of stepN.csv)" >&2; exit 2; }
mapfile -t files < <(step_csvs "$run")
[ ${#files[@]} -gt 0 ] || { echo "compare.sh: no step*.csv in $run" >&2; exit 1; }

echo "| step | shapes | time / ref: median | range | cuBLAS / ref: median | checks |"
echo "|---|---:|---:|---|---:|---|"
for f in "${files[@]}"; do
    s=$(basename "$f" .csv)
    r="$ref/$s.csv"
    [ -f "$r" ] || r=/dev/null
    awk -F, -v step="${s#step}" '
        function median(a, n,   i, j, x) {   # insertion sort: mawk has no asort
            for (i = 2; i <= n; i++) { x = a[i]; for (j = i - 1; j >= 1 && a[j] > x; j--) a[j + 1] = a[j]; a[j + 1] = x }
            return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
        }
        FNR == 1 { delete col; for (j = 1; j <= NF; j++) col[$j] = j; next }   # each file: columns by header name
        { key = $(col["variant"]) SUBSEP $(col["m"]) SUBSEP $(col["n"]) SUBSEP $(col["k"]); time = $(col["time_us"]); cublas = $(col["cublas_time_us"]) }
        !in_run { t[key] = time; c[key] = cublas; next }   # the reference, read first
        {
            rows++; if ($(col["status"]) != "PASS") bad++
            if (!(key in t) || t[key] <= 0 || time == "") next
            q[++n] = time / t[key]
            if (c[key] > 0 && cublas != "") cb[++nc] = cublas / c[key]
        }
        END {
            checks = bad ? bad " of " rows " FAILED" : (rows ? "all " rows " PASS" : "no rows")
            if (!n) { printf "| v%s | 0 | - | no shape in common with the reference | - | %s |\n", step, checks; exit }
            lo = q[1]; hi = q[1]; for (i = 2; i <= n; i++) { if (q[i] < lo) lo = q[i]; if (q[i] > hi) hi = q[i] }
            printf "| v%s | %d | %.2f | %.2f-%.2f | %s | %s |\n", step, n, median(q, n), lo, hi,
                   nc ? sprintf("%.2f", median(cb, nc)) : "-", checks
        }' "$r" in_run=1 "$f"
done
