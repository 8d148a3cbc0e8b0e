#!/usr/bin/env bash
# timeline.sh OUT CMD [ARGS...] - run CMD with every kernel's start and end on the GPU's
# clock written to OUT (a CUPTI injection library, tools/ktrace.c: nothing is serialized or
# replayed, unlike ncu), then summarize OUT: per kernel name with at least 20 launches, the
# launches, the median, 10th percentile and shortest duration in us, and the median gap from
# one launch's end to the next launch of the same kernel.  The harness times each launch
# between two CUDA events; this is what the GPU spent inside the kernel, the step's and
# cuBLAS's alike, and which cuBLAS kernel its timed launches ran.
#   tools/timeline.sh /tmp/t.txt ./step44 -m 4096 -n 2112 -k 7168   (builds build/libktrace.so first)
# timeline.sh --summary OUT [MIN] - the summary of a timeline written before (MIN: launches).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
case ${1:-} in -h|--help) print_header "$0"; exit 0 ;; esac

summary() {   # $1: a timeline (start end grid name, ns); $2: the fewest launches shown
    # one line per duration (d) and per gap to the same kernel's previous launch (g), then
    # each kernel's values in order: its durations, then its gaps
    sort -n -k1,1 "$1" | awk '{ n = substr($4, 1, 64); printf "%s d %.3f\n", n, ($2 - $1) / 1000
                                 if (n == pn) printf "%s g %.3f\n", n, ($1 - pe) / 1000; pn = n; pe = $2 }' |
        sort -k1,1 -k2,2 -k3,3g | awk -v min="$2" '
        function flush() {
            if (cnt >= min)
                printf "%-64s %7d %10.2f %10.2f %10.2f %10s\n", name, cnt, d[int((cnt + 1) / 2)], d[int((cnt + 9) / 10)], d[1],
                       ng ? sprintf("%.2f", g[int((ng + 1) / 2)]) : "-"
        }
        $1 != name { if (name != "") flush(); name = $1; cnt = 0; ng = 0 }
        $2 == "d" { d[++cnt] = $3 }
        $2 == "g" { g[++ng] = $3 }
        END { if (name != "") flush() }' | sort -k2,2nr
}

if [ "${1:-}" = --summary ]; then
    [ -f "${2:-}" ] || { echo "usage: tools/timeline.sh --summary OUT [MIN]" >&2; exit 2; }
    out=$2 min=${3:-20}
else
    [ $# -ge 2 ] || { echo "usage: tools/timeline.sh OUT CMD [ARGS...] (see --help)" >&2; exit 2; }
    out=$1; shift
    root=$(cd "$(dirname "$0")/.." && pwd); lib=$root/build/libktrace.so
    make -s -C "$root" build/libktrace.so >/dev/null ||
        { echo "timeline.sh: could not build $lib (make build/libktrace.so says why; it needs the toolkit's cupti.h and libcupti)" >&2; exit 2; }
    CUDA_INJECTION64_PATH=$lib KTRACE_OUT=$out "$@"
    [ -s "$out" ] || { echo "timeline.sh: $out is empty: no kernel ran, or CUDA did not load $lib" >&2; exit 1; }
    min=20
fi
printf "%-64s %7s %10s %10s %10s %10s\n" kernel launches "median us" "p10 us" "min us" "gap us"
summary "$out" "$min"
