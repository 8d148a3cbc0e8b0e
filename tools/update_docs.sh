#!/usr/bin/env bash
# update_docs.sh RESULTS_DIR [FILES...] - regenerate the tables between marker
# comments in docs/*.md and README.md from measured results, so no number in
# the docs is ever typed by hand:
#   <!-- results:stepN --> ... <!-- /results -->   stepN.csv as a table
#   <!-- results:stepN n=A,B --> ...                 only its rows with N in that list
#   <!-- include:PATH --> ... <!-- /include -->     the file PATH (repo-relative)
#   <!-- steps --> ... <!-- /steps -->              the README's step table
#   <!-- floor:N[:VARIANT] NxK=MB ... --> ... <!-- /floor -->
#       step N (M = 1, that variant) at each N x K against the fastest single
#       launch that reads MB megabytes (RESULTS_DIR/read_floor.log)
set -euo pipefail
# A wrong argument must change nothing: a missing or empty RESULTS_DIR would blank every table.
usage="usage: tools/update_docs.sh RESULTS_DIR [FILES...]: RESULTS_DIR holds stepN.csv (results/h100-80gb-hbm3)"
res=${1:-}
case $res in
    -h|--help) sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'; echo "$usage (nothing changed)"; exit 2 ;;
    "" | -*) echo "$usage" >&2; exit 2 ;;
esac
[ -d "$res" ] || { echo "update_docs.sh: no results folder '$res': nothing changed ($usage)" >&2; exit 2; }
compgen -G "$res/step*.csv" >/dev/null || { echo "update_docs.sh: no step*.csv in '$res': nothing changed" >&2; exit 1; }
shift
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
files=("$@")
[ ${#files[@]} -gt 0 ] || files=(README.md docs/*.md)
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

# The ceiling's name of each part (tools/parts.tsv, 4th field).
ceilings=$(awk -F'\t' '!/^#/ && NF >= 4 { print $1 "=" $4 }' tools/parts.tsv)

step_table() {   # $1 = csv, $2 = the N to keep (comma-separated; empty: all)
    awk -F, -v ceilings="$ceilings" -v keep="${2:+,$2,}" '
        BEGIN { nc = split(ceilings, a, "\n"); for (i = 1; i <= nc; i++) { j = index(a[i], "="); cn[substr(a[i], 1, j - 1)] = substr(a[i], j + 1) } }
        NR == 1 { next }
        keep != "" && !index(keep, "," $5 ",") { next }
        { rows[++n] = $0; if ($15 != "") var = 1; if ($17 == "compute") flops = 1; part = $16 }
        END {
            unit = flops ? "TFLOPS" : "GB/s"
            ceil = (part in cn) ? cn[part] : (flops ? "peak" : "read ceiling")
            printf "| M | N | K |%s time (us) | %s | cuBLAS (us) | %% of cuBLAS | %% of %s | rel. error | check |\n", var ? " variant |" : "", unit, ceil
            printf "|---:|---:|---:|%s---:|---:|---:|---:|---:|---:|---|\n", var ? "---|" : ""
            for (i = 1; i <= n; i++) {
                split(rows[i], f, ",")
                printf "| %s | %s | %s |%s %s | %s | %s | %s | %s | %s | %s |\n", f[4], f[5], f[6], var ? " " f[15] " |" : "", f[7], flops ? f[8] : f[9], f[10], f[11], f[12], f[13], f[14]
            }
        }' "$1"
}

floor_table() {   # $1 = step, $2 = variant, $3... = NxK=MB
    local step=$1 var=$2; shift 2
    local csv="$res/step$step.csv" log="$res/read_floor.log"
    if [ ! -f "$csv" ] || [ ! -f "$log" ]; then echo "(not measured yet: run ./run_all.sh)"; return; fi
    echo "| MB | N x K | one-launch floor (us) | step $step (us) | step $step's speed / the floor's | cuBLAS fp16 (us) | x cuBLAS, measured | x cuBLAS at the floor's speed |"
    echo "|---:|---|---:|---:|---:|---:|---:|---:|"
    local spec n k mb
    for spec in "$@"; do
        n=${spec%%x*}; k=${spec#*x}; k=${k%%=*}; mb=${spec#*=}
        awk -F, -v n="$n" -v k="$k" -v mb="$mb" -v var="$var" -v logf="$log" '
            BEGIN { while ((getline l < logf) > 0) { split(l, f, " "); if (f[1] == mb && f[2] ~ /^[0-9.]+$/) floor = f[2] } }
            NR > 1 && $4 == 1 && $5 == n && $6 == k && $15 == var { t = $7; cb = $10 }
            END {
                if (floor == "" || t == "") { printf "| %s | %s x %s | %s | %s | - | - | - | - |\n", mb, n, k, floor == "" ? "-" : floor, t == "" ? "-" : t; exit }
                printf "| %s | %s x %s | %s | %s | %.0f%% | %s | %.2fx | %.2fx |\n", mb, n, k, floor, t, 100 * floor / t, cb, cb / t, cb / floor
            }' "$csv"
    done
}

steps_table() {
    echo "| step | what it changes | doc | headline (largest default size, reference GPU) |"
    echo "|---|---|---|---|"
    for d in steps/v*_*/; do
        b=$(basename "$d"); n=${b%%_*}; n=${n#v}
        echo "$n $b"
    done | sort -n | while read -r n b; do
        title=$(grep -ho 'title = "[^"]*"' steps/"$b"/*.cu | head -n1 | sed 's/title = "//; s/"$//' || true)
        doc=$(ls docs/v"$n"_*.md 2>/dev/null | head -n1 || true)
        head="not measured yet"
        if [ -f "$res/step$n.csv" ]; then
            # the largest problem; among a step's kernels there, the fastest one that has a cuBLAS baseline
            head=$(awk -F, 'NR > 1 && $7 != "" { w = $4 * $5 * $6; base = ($11 != ""); rate = ($17 == "compute") ? $8 : $9
                if (w > best || (w == best && (base > bbase || (base == bbase && rate + 0 > brate)))) { best = w; bbase = base; brate = rate + 0; r = $0 } }
                END { if (r == "") { print "-"; exit } split(r, f, ",")
                      rate = (f[17] == "compute") ? f[8] " TFLOPS" : f[9] " GB/s"
                      v = (f[15] != "") ? f[15] ", " : ""
                      printf "%s%sx%sx%s: %s, %s%% of cuBLAS, %s%% of ceiling", v, f[4], f[5], f[6], rate, (f[11] == "" ? "-" : f[11]), f[12] }' "$res/step$n.csv")
        fi
        echo "| [v$n](steps/$b/) | $title | ${doc:+[$(basename "$doc")]($doc)} | $head |"
    done
}

for f in "${files[@]}"; do
    [ -f "$f" ] || continue
    : >"$tmp/out"
    skip=0
    while IFS= read -r line || [ -n "$line" ]; do
        if [ $skip -eq 1 ]; then
            [[ $line =~ ^\<\!--\ /(results|include|steps|floor)\ --\>$ ]] && { printf '%s\n' "$line" >>"$tmp/out"; skip=0; }
            continue
        fi
        printf '%s\n' "$line" >>"$tmp/out"
        if [[ $line =~ ^\<\!--\ results:step([0-9]+)(\ n=([0-9,]+))?\ --\>$ ]]; then
            csv="$res/step${BASH_REMATCH[1]}.csv"
            if [ -f "$csv" ]; then step_table "$csv" "${BASH_REMATCH[3]}" >>"$tmp/out"; else echo "(no results yet: run ./run_all.sh)" >>"$tmp/out"; fi
            skip=1
        elif [[ $line =~ ^\<\!--\ include:([^ ]+)\ --\>$ ]]; then
            inc=${BASH_REMATCH[1]}
            if [ -f "$inc" ] && [[ $inc == *.log ]]; then { echo '```'; cat "$inc"; echo '```'; } >>"$tmp/out"
            elif [ -f "$inc" ]; then cat "$inc" >>"$tmp/out"; else echo "($inc not generated yet)" >>"$tmp/out"; fi
            skip=1
        elif [[ $line =~ ^\<\!--\ floor:([0-9]+)(:([a-z_0-9]+))?((\ [0-9]+x[0-9]+=[0-9.]+)+)\ --\>$ ]]; then
            # shellcheck disable=SC2086
            floor_table "${BASH_REMATCH[1]}" "${BASH_REMATCH[3]}" ${BASH_REMATCH[4]} >>"$tmp/out"
            skip=1
        elif [[ $line == "<!-- steps -->" ]]; then
            steps_table >>"$tmp/out"
            skip=1
        fi
    done <"$f"
    if [ $skip -eq 1 ]; then echo "update_docs.sh: $f: a marker is not closed" >&2; exit 1; fi
    cmp -s "$tmp/out" "$f" || cp "$tmp/out" "$f"
done
