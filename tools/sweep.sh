#!/usr/bin/env bash
# sweep.sh - run one step under several compile-time (-D) and run-time settings
# and print a markdown table: one row per setting, one column per problem.
#
#   tools/sweep.sh -s 7 -z 4096,8192 "-DBM=64 -DBN=64" "-DBM=128 -DBN=128"
#   tools/sweep.sh -s 16 -a "-n 8192 -k 8192" "|--split 1" "|--split 4" "|--split 8"
#
# A setting is "DEFS" or "DEFS|ARGS": DEFS go to nvcc (make stepN DEFS=...),
# ARGS to the program.  Each cell: throughput (TFLOPS or GB/s) and % of cuBLAS
# (or the time in us with -t).  The Makefile records the flags of each build,
# so every setting rebuilds, and so does the next plain `make stepN`.
# Exit status: 0 when every setting built and ran, 1 when one did not (its row
# says why), 2 bad usage, 3 no usable GPU (nothing is built then).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
bad_usage() { echo "sweep.sh: $1 (see tools/sweep.sh --help)" >&2; exit 2; }
step="" sizes="" args="" metric=rate
while [ $# -gt 0 ]; do   # by hand: settings start with -D, which getopts would take
    case $1 in
        -s|-z|-a) [ $# -ge 2 ] || bad_usage "$1 needs a value"
                  case $1 in -s) step=$2 ;; -z) sizes=$2 ;; -a) args=$2 ;; esac; shift 2 ;;
        -t) metric=time; shift ;; -h|--help) print_header "$0"; exit 0 ;; --) shift; break ;; *) break ;;
    esac
done
[ -n "$step" ] && [ $# -gt 0 ] || bad_usage "need -s STEP and at least one setting"
[[ $step =~ ^[0-9]+$ ]] || bad_usage "-s wants a step number, not '$step'"
cd "$(dirname "$0")/.."
# No GPU behind nvidia-smi ("No devices were found" included): say so before building anything.
gpu_name >/dev/null || { echo "sweep.sh: no NVIDIA GPU found (nvidia-smi shows none): nothing to time" >&2; exit 3; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
i=0 nfail=0
for setting in "$@"; do
    defs=${setting%%|*}; run=""; [[ $setting == *"|"* ]] && run=${setting#*|}
    # a "|" inside a markdown cell would split the table: label as "DEFS; args: ARGS"
    label=$defs; [ -n "$run" ] && label="${defs:+$defs; }args: $run"; [ -n "$label" ] || label="defaults"
    if ! make -s "step$step" DEFS="$defs" >"$tmp/build$i.log" 2>&1; then
        echo "| \`$label\` | build failed: $(grep -m1 -i error "$tmp/build$i.log" | cut -c1-80) |" >>"$tmp/rows"
        i=$((i + 1)) nfail=$((nfail + 1)); continue
    fi
    rc=0
    # shellcheck disable=SC2086
    "./step$step" ${sizes:+--sizes $sizes} $args $run --csv "$tmp/r$i.csv" >"$tmp/run$i.log" 2>&1 || rc=$?
    if [ $rc -eq 3 ]; then   # the GPU cannot run this step: every other setting would say the same
        echo "sweep.sh: step$step cannot run here: $(last_line "$tmp/run$i.log")" >&2; exit 3
    fi
    if [ $rc -ne 0 ] && [ $rc -ne 1 ]; then   # 1: wrong results, which its cells show as FAIL
        echo "| \`$label\` | run failed (exit $rc): $(last_line "$tmp/run$i.log" | cut -c1-100) |" >>"$tmp/rows"
        rm -f "$tmp/r$i.csv"; i=$((i + 1)) nfail=$((nfail + 1)); continue
    fi
    [ $rc -eq 0 ] || nfail=$((nfail + 1))
    echo "$label" >"$tmp/name$i"
    i=$((i + 1))
done
# header from the first CSV that has rows
first=$(ls "$tmp"/r*.csv 2>/dev/null | head -n1 || true)
[ -n "$first" ] || { cat "$tmp"/run*.log "$tmp"/build*.log 2>/dev/null | tail -n 20; [ -f "$tmp/rows" ] && cat "$tmp/rows"; echo "sweep.sh: no setting produced results" >&2; exit 1; }
awk -F, 'NR == 1 { for (j = 1; j <= NF; j++) c[$j] = j; next }   # columns by header name
           { v = $(c["variant"]); printf "| %sx%sx%s%s ", $(c["m"]), $(c["n"]), $(c["k"]), (v != "" ? " " v : "") } END { print "|" }' "$first" | sed 's/^/| setting /' >"$tmp/head"
cat "$tmp/head"
awk -F'|' '{ printf "|---"; for (i = 3; i < NF; i++) printf "|---"; print "|" }' "$tmp/head"
for ((j = 0; j < i; j++)); do
    [ -f "$tmp/r$j.csv" ] || continue
    awk -F, -v name="$(cat "$tmp/name$j")" -v metric=$metric '
        NR == 1 { for (j = 1; j <= NF; j++) c[$j] = j; next }   # columns by header name
        {
            rate = ($(c["bound"]) == "memory") ? $(c["gbps"]) " GB/s" : $(c["tflops"]) " TFLOPS"
            cell = (metric == "time") ? $(c["time_us"]) " us" : rate
            if ($(c["pct_cublas"]) != "") cell = cell " (" $(c["pct_cublas"]) "%)"
            if ($(c["status"]) != "PASS") cell = cell " FAIL"
            line = line "| " cell " "
        }
        END { printf "| `%s` %s|\n", name, line }' "$tmp/r$j.csv"
done
[ -f "$tmp/rows" ] && cat "$tmp/rows"
[ $nfail -eq 0 ] || { echo "sweep.sh: $nfail of $i settings failed (see their rows)" >&2; exit 1; }
