#!/usr/bin/env bash
# update_docs.sh RESULTS_DIR [FILES...] - regenerate the tables between marker
# comments in docs/*.md and README.md from measured results, so no number in
# the docs is ever typed by hand:
#   <!-- results:stepN --> ... <!-- /results -->   stepN.csv as a table
#   <!-- results:stepN n=A,B --> ...                 only its rows with N in that list
#   <!-- include:PATH --> ... <!-- /include -->     the file PATH (repo-relative)
#   <!-- steps --> ... <!-- /steps -->              the README's step table: each step at its
#       part's headline shape, its own method (tools/tables.sh --headline)
#   <!-- ladder --> ... <!-- /ladder -->            one table per part, one row per step, and
#       the part's chart (tools/tables.sh --ladder)
# Value markers, inline, several per line (TEXT is replaced on every run):
#   <!-- val:STEP[:VARIANT] MxNxK COLUMN [FMT] -->TEXT<!-- /val -->
#       one cell of stepSTEP.csv: the row with that variant (none: the empty one)
#       and m, n, k; COLUMN a header name, or cublas_tflops / cublas_gbps (cuBLAS's
#       throughput on that row: the step's scaled by the two times); FMT a printf
#       format such as %.1f (default: the CSV's text; derived figures %.3f / %.1f)
#   <!-- ratio:STEP[:VARIANT] MxNxK COLUMN / STEP[:VARIANT] MxNxK COLUMN [FMT] -->TEXT<!-- /ratio -->
#       the first value over the second (default FMT %.2f)
#   <!-- val:ceiling PART [FMT] -->TEXT<!-- /val -->
#       the ceiling tools/tables.sh --ceilings derives for PART (tools/parts.tsv's
#       key: 1, 2, 2-skinny, 3), TFLOPS or GB/s (default %.1f / %.0f)
#   A marker naming a missing CSV, row, column or value stops the script with one
#   line naming the file and the marker (exit 1), before any file is written.
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
. tools/lib.sh
files=("$@")
[ ${#files[@]} -gt 0 ] || files=(README.md docs/*.md)
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT


# The ceiling's name of each part (tools/parts.tsv, 4th field).
ceilings=$(awk -F'\t' '!/^#/ && NF >= 4 { print $1 "=" $4 }' tools/parts.tsv)
plots=plots/$(basename "$res")

step_table() {   # $1 = csv, $2 = the N to keep (comma-separated; empty: all)
    awk -F, -v ceilings="$ceilings" -v keep="${2:+,$2,}" '
        BEGIN { nc = split(ceilings, a, "\n"); for (i = 1; i <= nc; i++) { j = index(a[i], "="); cn[substr(a[i], 1, j - 1)] = substr(a[i], j + 1) } }
        NR == 1 { for (j = 1; j <= NF; j++) c[$j] = j; next }   # columns by header name
        keep != "" && !index(keep, "," $(c["n"]) ",") { next }
        { rows[++n] = $0; if ($(c["variant"]) != "") var = 1; if ($(c["bound"]) == "compute") flops = 1; part = $(c["part"]) }
        END {
            unit = flops ? "TFLOPS" : "GB/s"
            ceil = (part in cn) ? cn[part] : (flops ? "peak" : "read ceiling")
            # compute-bound steps show cuBLAS TFLOPS too: it moves between runs (clocks, power), so
            # % of cuBLAS compares a step with the cuBLAS of its own row only
            printf "| M | N | K |%s time (us) | %s | cuBLAS (us) |%s %% of cuBLAS | %% of %s | rel. error | check |\n", var ? " variant |" : "", unit, flops ? " cuBLAS TFLOPS this run |" : "", ceil
            printf "|---:|---:|---:|%s---:|---:|---:|%s---:|---:|---:|---|\n", var ? "---|" : "", flops ? "---:|" : ""
            for (i = 1; i <= n; i++) {
                split(rows[i], f, ",")
                t = f[c["time_us"]]; cb = f[c["cublas_time_us"]]; rate = flops ? f[c["tflops"]] : f[c["gbps"]]
                cbr = (rate != "" && t > 0 && cb > 0) ? sprintf("%.3f", rate * t / cb) : ""
                printf "| %s | %s | %s |%s %s | %s | %s |%s %s | %s | %s | %s |\n", f[c["m"]], f[c["n"]], f[c["k"]], var ? " " f[c["variant"]] " |" : "",
                    t, rate, cb, flops ? " " cbr " |" : "", f[c["pct_cublas"]], f[c["pct_ceiling"]], f[c["rel_err"]], f[c["status"]]
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
            NR == 1 { for (j = 1; j <= NF; j++) c[$j] = j; next }
            $(c["m"]) == 1 && $(c["n"]) == n && $(c["k"]) == k && $(c["variant"]) == var { t = $(c["time_us"]); cb = $(c["cublas_time_us"]) }
            END {
                if (floor == "" || t == "") { printf "| %s | %s x %s | %s | %s | - | - | - | - |\n", mb, n, k, floor == "" ? "-" : floor, t == "" ? "-" : t; exit }
                printf "| %s | %s x %s | %s | %s | %.0f%% | %s | %.2fx | %.2fx |\n", mb, n, k, floor, t, 100 * floor / t, cb, cb / t, cb / floor
            }' "$csv"
    done
}

steps_table() {
    echo "| step | what it changes | doc | headline on the reference GPU: one shape per part, the step's own method |"
    echo "|---|---|---|---|"
    local heads
    heads=$(tools/tables.sh --headline "$res" </dev/null)
    step_dirs . | while read -r n b; do
        title=$(grep -ho 'title = "[^"]*"' steps/"$b"/*.cu | head -n1 | sed 's/title = "//; s/"$//' || true)
        doc=$(ls docs/v"$n"_*.md 2>/dev/null | head -n1 || true)
        head=$(awk -F'\t' -v n="$n" '$1 == n { print $2 }' <<<"$heads")
        echo "| [v$n](steps/$b/) | $title | ${doc:+[$(basename "$doc")]($doc)} | ${head:-not measured yet} |"
    done
}

# Value markers: one awk pass over a file, the CSVs read by header name as they are named.
fill_values() {   # $1 = input, $2 = the file's name for messages; writes stdout
    awk -v res="$res" -v fname="$2" -v ceils="$ceils" '
        function fail(msg) { printf "update_docs.sh: %s:%d: %s: %s\n", fname, FNR, marker, msg > "/dev/stderr"; failed = 1; exit 1 }
        function load(step,   csv, line, h, n, j, f, key) {
            if (step in loaded) return loaded[step]
            csv = res "/step" step ".csv"; loaded[step] = 0
            if ((getline line < csv) <= 0) return 0
            n = split(line, h, ","); for (j = 1; j <= n; j++) col[step, h[j]] = j
            while ((getline line < csv) > 0) {
                split(line, f, ",")
                key = step SUBSEP f[col[step, "variant"]] SUBSEP f[col[step, "m"]] "x" f[col[step, "n"]] "x" f[col[step, "k"]]
                if (!(key in row)) row[key] = line
            }
            close(csv); loaded[step] = 1; return 1
        }
        function num(v) { return v ~ /^[-+]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?$/ }
        # the value of one STEP[:VARIANT] MxNxK COLUMN; sets deffmt to the default format
        function value(spec, shape, column,   step, var, key, f, t, cb, base) {
            if (spec !~ /^[0-9]+(:[A-Za-z0-9_]+)?$/) fail("STEP[:VARIANT] expected, got \"" spec "\"")
            if (shape !~ /^[0-9]+x[0-9]+x[0-9]+$/) fail("MxNxK expected, got \"" shape "\"")
            step = spec; var = ""
            if (index(spec, ":")) { step = substr(spec, 1, index(spec, ":") - 1); var = substr(spec, index(spec, ":") + 1) }
            if (!load(step)) fail("no " res "/step" step ".csv")
            key = step SUBSEP var SUBSEP shape
            if (!(key in row)) fail(res "/step" step ".csv has no row " (var == "" ? "" : "with variant " var " ") "at " shape)
            split(row[key], f, ",")
            deffmt = ""
            if (column == "cublas_tflops" || column == "cublas_gbps") {
                base = (column == "cublas_tflops") ? "tflops" : "gbps"
                t = f[col[step, "time_us"]]; cb = f[col[step, "cublas_time_us"]]
                if (!num(f[col[step, base]]) || !(t > 0) || !(cb > 0)) fail(res "/step" step ".csv: no cuBLAS time or " base " at " shape)
                deffmt = (base == "tflops") ? "%.3f" : "%.1f"
                return f[col[step, base]] * t / cb
            }
            if (!((step, column) in col)) fail(res "/step" step ".csv has no column " column)
            if (f[col[step, column]] == "") fail(res "/step" step ".csv: " column " is empty at " shape)
            return f[col[step, column]]
        }
        function fmt(f, v) {
            if (f == "") return v
            if (!num(v)) fail("\"" v "\" is not a number for " f)
            return sprintf(f, v)
        }
        function checkfmt(f) {
            if (f != "" && f !~ /^[^%]*%[-+ 0#]*[0-9]*(\.[0-9]+)?[dieEfgG][^%]*$/) fail("FMT must be one printf conversion such as %.1f, got \"" f "\"")
        }
        BEGIN { n = split(ceils, a, "\n"); for (i = 1; i <= n; i++) { split(a[i], f, "\t"); ceil[f[1]] = f[3]; cbound[f[1]] = f[2] } }
        {
            s = $0; out = ""
            while (match(s, /<!-- (val|ratio):/)) {
                pre = substr(s, 1, RSTART - 1); rest = substr(s, RSTART)
                kind = (substr(rest, 6, 3) == "val") ? "val" : "ratio"
                # a placeholder (val:STEP in prose about the syntax) is left alone
                if (substr(rest, 6) !~ /^(val|ratio):([0-9]|ceiling( |-|$))/) { out = out pre substr(rest, 1, 5); s = substr(rest, 6); continue }
                e = index(rest, "-->")
                inner = (e > 0) ? substr(rest, 6, e - 7) : substr(rest, 6)
                marker = "<!-- " inner (e > 0 ? " -->" : "")
                if (e == 0) fail("the marker is not closed with -->")
                close_tag = "<!-- /" kind " -->"
                after = substr(rest, e + 3)
                c = index(after, close_tag)
                if (c == 0) fail("no " close_tag " after it on the same line")
                nt = split(inner, t, " ")
                if (kind == "val" && t[1] == "val:ceiling") {
                    if (nt < 2 || nt > 3) fail("expected val:ceiling PART [FMT]")
                    if (!(t[2] in ceil)) fail("no ceiling for part " t[2] " from " res " (tools/tables.sh --ceilings)")
                    checkfmt(t[3])
                    text = fmt(t[3] != "" ? t[3] : (cbound[t[2]] == "compute" ? "%.1f" : "%.0f"), ceil[t[2]])
                } else if (kind == "val") {
                    if (nt < 3 || nt > 4) fail("expected val:STEP[:VARIANT] MxNxK COLUMN [FMT]")
                    checkfmt(t[4])
                    v = value(substr(t[1], 5), t[2], t[3])
                    text = fmt(t[4] != "" ? t[4] : deffmt, v)
                } else {
                    if (nt < 7 || nt > 8 || t[4] != "/") fail("expected ratio:STEP[:VARIANT] MxNxK COLUMN / STEP[:VARIANT] MxNxK COLUMN [FMT]")
                    checkfmt(t[8])
                    a1 = value(substr(t[1], 7), t[2], t[3]); a2 = value(t[5], t[6], t[7])
                    if (!num(a1) || !num(a2) || a2 == 0) fail("a ratio needs two numbers, the second not zero (got " a1 " and " a2 ")")
                    text = sprintf(t[8] != "" ? t[8] : "%.2f", a1 / a2)
                }
                out = out pre "<!-- " inner " -->" text close_tag
                s = substr(after, c + length(close_tag))
            }
            print out s
        }
        END { if (failed) exit 1 }' "$1"
}

ceils=$(tools/tables.sh --ceilings "$res" </dev/null)

# Every file is regenerated into $tmp first; a failing marker anywhere leaves every file as it was.
nf=0
for f in "${files[@]}"; do
    [ -f "$f" ] || continue
    nf=$((nf + 1))
    : >"$tmp/out"
    skip=0
    while IFS= read -r line || [ -n "$line" ]; do
        if [ $skip -eq 1 ]; then
            [[ $line =~ ^\<\!--\ /(results|include|steps|floor|ladder)\ --\>$ ]] && { printf '%s\n' "$line" >>"$tmp/out"; skip=0; }
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
        elif [[ $line == "<!-- ladder -->" ]]; then
            tools/tables.sh --ladder "$res" "$plots" </dev/null >>"$tmp/out"
            skip=1
        fi
    done <"$f"
    if [ $skip -eq 1 ]; then echo "update_docs.sh: $f: a marker is not closed" >&2; exit 1; fi
    fill_values "$tmp/out" "$f" >"$tmp/new$nf" || exit 1
done
nf=0
for f in "${files[@]}"; do
    [ -f "$f" ] || continue
    nf=$((nf + 1))
    cmp -s "$tmp/new$nf" "$f" || cp "$tmp/new$nf" "$f"
done
