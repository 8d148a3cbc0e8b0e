# cpu_tables.sh - sourced by tests/run_tests.sh (CPU part): the value markers of
# tools/update_docs.sh, the headline and ladder choices of tools/tables.sh
# (tools/parts.tsv, tools/methods.tsv), cuBLAS's throughput column, and what
# tools/plots.sh hands gnuplot (titles, roofs, label layout), from fixture CSVs
# and from the committed reference results.
fx=tests/fixtures/results/fixture-gpu
ref=results/h100-80gb-hbm3
vt=$tmp/values; rm -rf "$vt"; mkdir -p "$vt"

# ---- value markers ---------------------------------------------------------------
cat >"$vt/doc.md" <<'EOF'
v0 at 4096: <!-- val:0 4096x4096x4096 pct_cublas -->old<!-- /val -->% of cuBLAS, <!-- val:0 4096x4096x4096 tflops %.1f -->old<!-- /val --> TFLOPS.
v16 splitk: <!-- val:16:splitk 1x8192x8192 gbps -->x<!-- /val --> GB/s; v10's cuBLAS: <!-- val:10 1x8192x8192 cublas_gbps -->x<!-- /val --> GB/s
v17's cuBLAS: <!-- val:17 4096x4096x4096 cublas_tflops -->x<!-- /val --> TFLOPS
ratio: <!-- ratio:17 8192x8192x8192 tflops / 0 4096x4096x4096 tflops %.1f -->x<!-- /ratio -->x; default <!-- ratio:10 1x16384x16384 gbps / 10 1x8192x8192 gbps -->x<!-- /ratio -->
ceilings: <!-- val:ceiling 3 -->x<!-- /val --> TFLOPS, <!-- val:ceiling 2 %.1f -->x<!-- /val --> GB/s, <!-- val:ceiling 1 -->x<!-- /val -->
syntax, left alone: <!-- val:STEP[:VARIANT] MxNxK COLUMN [FMT] -->TEXT<!-- /val -->
EOF
tools/update_docs.sh "$fx" "$vt/doc.md" >"$vt/out" 2>&1; rc=$?
check "values: markers filled from the fixture CSVs (exit 0)" test $rc -eq 0
check "values: a cell as the CSV writes it, and with FMT" grep -qF 'v0 at 4096: <!-- val:0 4096x4096x4096 pct_cublas -->11.3<!-- /val -->% of cuBLAS, <!-- val:0 4096x4096x4096 tflops %.1f -->5.9<!-- /val --> TFLOPS.' "$vt/doc.md"
check "values: a variant's row, and cuBLAS's GB/s on a row (671.2 x 400 / 120)" grep -qF 'gbps -->2266.0<!-- /val --> GB/s; v10'"'"'s cuBLAS: <!-- val:10 1x8192x8192 cublas_gbps -->2237.3<!-- /val --> GB/s' "$vt/doc.md"
check "values: cuBLAS's TFLOPS on a row (549.756 x 250 / 170)" grep -qF 'cublas_tflops -->808.465<!-- /val -->' "$vt/doc.md"
check "values: ratio with FMT (687.195 / 5.857) and with the default %.2f (2147.7 / 671.2)" grep -qF 'tflops %.1f -->117.3<!-- /ratio -->x; default <!-- ratio:10 1x16384x16384 gbps / 10 1x8192x8192 gbps -->3.20<!-- /ratio -->' "$vt/doc.md"
check "values: part ceilings as tables.sh derives them (687.195 / 69.5%; 2147.7 / 69.7%)" grep -qF 'ceilings: <!-- val:ceiling 3 -->988.8<!-- /val --> TFLOPS, <!-- val:ceiling 2 %.1f -->3081.3<!-- /val --> GB/s, <!-- val:ceiling 1 -->66.7<!-- /val -->' "$vt/doc.md"
check "values: a placeholder in prose about the syntax is left alone" grep -qF 'left alone: <!-- val:STEP[:VARIANT] MxNxK COLUMN [FMT] -->TEXT<!-- /val -->' "$vt/doc.md"
cp "$vt/doc.md" "$vt/doc2.md"; tools/update_docs.sh "$fx" "$vt/doc2.md"
check "values: regeneration is idempotent" cmp -s "$vt/doc.md" "$vt/doc2.md"

# A bad marker: exit 1, one line naming the file and the marker, no file written
# (not even a good one earlier in the same run).
bad_marker() {   # bad_marker WHAT MARKER PATTERN
    printf 'stale <!-- results:step0 -->\n<!-- results:step0 -->\nstale\n<!-- /results -->\n' >"$vt/good.md"
    printf 'a line\nv0: %s\n' "$2" >"$vt/bad.md"
    cp "$vt/good.md" "$vt/good.before"; cp "$vt/bad.md" "$vt/bad.before"
    check "values: $1 -> exit 1, one line naming the file and the marker, nothing written" bash -c '
        tools/update_docs.sh '"$fx"' '"$vt"'/good.md '"$vt"'/bad.md >'"$vt"'/bad.out 2>'"$vt"'/bad.err; rc=$?
        cat '"$vt"'/bad.err; [ $rc -eq 1 ] && [ $(wc -l <'"$vt"'/bad.err) -eq 1 ] &&
        grep -qF "bad.md:2:" '"$vt"'/bad.err && grep -qF -- "$1" '"$vt"'/bad.err && grep -qF -- "$2" '"$vt"'/bad.err &&
        cmp -s '"$vt"'/good.md '"$vt"'/good.before && cmp -s '"$vt"'/bad.md '"$vt"'/bad.before' _ "${2%% -->*}" "$3"
}
bad_marker "a missing row" '<!-- val:0 8192x8192x8192 tflops -->x<!-- /val -->' "has no row at 8192x8192x8192"
bad_marker "a missing variant's row" '<!-- val:16:nosuch 1x8192x8192 gbps -->x<!-- /val -->' "has no row with variant nosuch"
bad_marker "a missing column" '<!-- val:0 4096x4096x4096 tflopz -->x<!-- /val -->' "has no column tflopz"
bad_marker "a missing CSV" '<!-- val:55 4096x4096x4096 tflops -->x<!-- /val -->' "step55.csv"
bad_marker "a missing row in a ratio's second half" '<!-- ratio:0 4096x4096x4096 tflops / 2 8x8x8 tflops -->x<!-- /ratio -->' "has no row at 8x8x8"
bad_marker "a missing part's ceiling" '<!-- val:ceiling 7 -->x<!-- /val -->' "no ceiling for part 7"
bad_marker "a FMT that is not one printf conversion" '<!-- val:0 4096x4096x4096 tflops %s%d -->x<!-- /val -->' "FMT must be"
bad_marker "a marker without its closing tag" '<!-- val:0 4096x4096x4096 tflops -->x' "no <!-- /val -->"
bad_marker "a text column under a number format" '<!-- val:0 4096x4096x4096 status %.1f -->x<!-- /val -->' "is not a number"

# Every marker the pages hold resolves against the committed results; a page
# naming a row those results lack fails (the mutant below proves the check can fail).
rm -rf "$vt/pages"; mkdir -p "$vt/pages/docs"
cp README.md "$vt/pages/"; cp docs/*.md "$vt/pages/docs/"
check "values: every marker in README.md and docs/*.md resolves against $ref" \
    tools/update_docs.sh "$ref" "$vt/pages/README.md" "$vt/pages/docs/"*.md
nmark=$(cat README.md docs/*.md | grep -oE '<!-- (val|ratio):([0-9]|ceiling)' | wc -l)
echo "# the pages hold $nmark value markers"
first=$(grep -lE '<!-- val:[0-9]+(:[A-Za-z0-9_]+)? [0-9]+x[0-9]+x[0-9]+ ' README.md docs/*.md | head -n1 || true)
if [ -n "$first" ]; then   # the first real marker, its shape changed to one no CSV has
    sed -E '0,/<!-- val:([0-9]+(:[A-Za-z0-9_]+)?) [0-9]+x[0-9]+x[0-9]+ /s//<!-- val:\1 3x5x7 /' "$first" >"$vt/pages/mutant.md"
else   # no page has a marker yet: the README with one appended
    { cat README.md; echo 'v7: <!-- val:7 3x5x7 tflops -->x<!-- /val -->'; } >"$vt/pages/mutant.md"
fi
check "values: a page whose marker names a row $ref lacks fails (mutant of ${first:-README.md})" \
    expect_exit 1 "mutant.md:[0-9]*: <!-- val:[0-9:a-z_]* 3x5x7 " tools/update_docs.sh "$ref" "$vt/pages/mutant.md"

# ---- cuBLAS's throughput in the same run -------------------------------------------
tools/tables.sh "$fx" >"$vt/summary.md"
check "tables: Part I's cumulative table has cuBLAS TFLOPS this run (5.857 x 23464.895 / 2650)" \
    grep -qF '| v0_naive | 23464.895 | 5.857 | 51.862 | 11.3 | 0.11x | 8.8 | PASS |' "$vt/summary.md"
check "tables: the column is named, in Part III's cumulative tables too" bash -c \
    "grep -qF '| step | time (us) | TFLOPS | cuBLAS TFLOPS this run | % of cuBLAS | x cuBLAS | % of bf16 tensor-core peak | check |' $vt/summary.md"
check "tables: a memory-bound part has no cuBLAS TFLOPS column" bash -c \
    "grep -qF '| step | time (us) | GB/s | % of cuBLAS |' $vt/summary.md && ! grep -q 'cuBLAS GB/s this run' $vt/summary.md"
printf '<!-- results:step17 -->\n<!-- /results -->\n<!-- results:step10 -->\n<!-- /results -->\n' >"$vt/step.md"
tools/update_docs.sh "$fx" "$vt/step.md"
check "docs: a compute-bound step's table has cuBLAS TFLOPS this run beside cuBLAS's time" \
    grep -qF '| 4096 | 4096 | 4096 | 250.000 | 549.756 | 170.000 | 808.465 | 68.0 | 55.6 | 2.00e-03 | PASS |' "$vt/step.md"
check "docs: a memory-bound step's table has not" grep -qF '| 1 | 8192 | 8192 | 400.0 | 671.2 | 120.0 | 30.0 | 21.8 | 1.00e-04 | PASS |' "$vt/step.md"

# ---- the headline: one shape per part, each step's own method ----------------------
# A copy of the fixtures where dp is the fastest v16 row: the headline still shows splitk.
rm -rf "$vt/fx"; cp -r "$fx" "$vt/fx"
sed -i 's/^16,w4a16,int4,16,8192,8192,22.0,97.6,1600.0,/16,w4a16,int4,16,8192,8192,22.0,97.6,9999.0,/' "$vt/fx/step16.csv"
tools/tables.sh --headline "$vt/fx" >"$vt/head.tsv"
check "headline: Part II at 1x8192x8192 (tools/parts.tsv), not its largest 1x16384x16384" \
    grep -qP '^10\t1x8192x8192: 671.2 GB/s, 30.0% of cuBLAS, 21.8% of read ceiling$' "$vt/head.tsv"
check "headline: v16 shows its own method (tools/methods.tsv: splitk), not the fastest row (dp)" \
    grep -qP '^16\tsplitk, 16x8192x8192: 2070.0 GB/s' "$vt/head.tsv"
check "headline: Part III at 8192^3" grep -qP '^17\t8192x8192x8192: 687.195 TFLOPS' "$vt/head.tsv"
check "headline: a step without a row at its part's shape falls back to its largest (v0 at 4096^3)" \
    grep -qP '^0\t4096x4096x4096: ' "$vt/head.tsv"
check "headline: the choices live in tools/parts.tsv and tools/methods.tsv" bash -c \
    "awk -F'\t' '!/^#/ && NF >= 7 { n++ } END { exit n < 4 }' tools/parts.tsv && grep -qP '^16\tsplitk\t' tools/methods.tsv && grep -qP '^15\tfused\t' tools/methods.tsv"
printf '<!-- steps -->\n<!-- /steps -->\n' >"$vt/steps.md"; tools/update_docs.sh "$fx" "$vt/steps.md"
check "docs: the step table's headline column comes from tables.sh --headline" \
    grep -qF '| [v16](steps/v16_splitk_w4a16/) | ' "$vt/steps.md"
check "docs: ... with v16's own method at its part's shape" grep -qF '| splitk, 16x8192x8192: 2070.0 GB/s, 376.5% of cuBLAS, 67.2% of read ceiling |' "$vt/steps.md"

# ---- the README's ladder: one row per step and part ---------------------------------
tools/tables.sh --ladder "$vt/fx" >"$vt/ladder.md"
check "ladder: v16 has one row (its own method at the part's m), the summary has four" bash -c "
    [ \$(grep -c '^| v16' $vt/ladder.md) -eq 1 ] && grep -q '^| v16_splitk_w4a16 splitk m=16 |' $vt/ladder.md &&
    [ \$(tools/tables.sh $vt/fx | grep -c '^| v16[^|]* |[^|]*([0-9.]*%)') -ge 4 ]"
check "ladder: every step of the fixtures once" bash -c \
    "[ \"\$(grep -o '^| v[0-9]*' $vt/ladder.md | sort | uniq -d)\" = '' ] && [ \$(grep -c '^| v[0-9]' $vt/ladder.md) -eq 6 ]"
tools/tables.sh --ladder "$ref" "plots/h100-80gb-hbm3" >"$vt/ladder_ref.md"
check "ladder: each part's chart is linked when it is drawn" bash -c "
    grep -qF '[<img src=\"plots/h100-80gb-hbm3/part1_throughput.png\"' $vt/ladder_ref.md &&
    [ \$(grep -c '^\[<img src=' $vt/ladder_ref.md) -eq \$(grep -c '^[^#]' tools/parts.tsv) ]"
# A part of M x N x K problems (parts.tsv's 8th column "mnk", Part IV) turns round: a row per
# problem, a column per step, and its % of cuBLAS chart (all its problems, not only its squares).
check "ladder: Part IV has a row per problem (24) and a column per step, beside its % of cuBLAS chart" bash -c "
    awk '/^### Part IV/ { on = 1 } on && /^### / && !/Part IV/ { on = 0 } on' $vt/ladder_ref.md >$vt/ladder4.md &&
    grep -q '^| M x N x K | v25_split_k' $vt/ladder4.md && grep -q '^| 32x4096x4096 | [0-9.]* ([0-9.]*%) |' $vt/ladder4.md &&
    [ \$(grep -c '^| [0-9x]* |' $vt/ladder4.md) -eq 24 ] && grep -qF 'part4_pct_cublas.png' $vt/ladder4.md"
check "README: the results section shows the ladder (no variant rows) and links summary.md" bash -c "
    awk '/^<!-- ladder -->/{on=1} /^<!-- \/ladder -->/{on=0} on' README.md | grep -q '^| v15_q4_0 fused |' &&
    ! awk '/^<!-- ladder -->/{on=1} /^<!-- \/ladder -->/{on=0} on' README.md | grep -qE 'one_thread_blocks| dp m=' &&
    grep -qF '(results/h100-80gb-hbm3/summary.md)' README.md"

# ---- charts: what plots.sh hands gnuplot (a stand-in gnuplot records it) -------------
mkdir -p "$vt/bin" "$vt/plots"
cat >"$vt/bin/gnuplot" <<'EOF'
#!/usr/bin/env bash
# records the -e line; copies the roofline's roofs and labels files it names
log=${GNUPLOT_LOG:?}; echo "$2 :: $3" >>"$log"
r=$(sed -n "s/.*roofs='\([^']*\)'.*/\1/p" <<<"$2"); [ -n "$r" ] && cp "$r" "${log%/*}/roofs.gp"
l=$(sed -n "s/.*labels='\([^']*\)'.*/\1/p" <<<"$2"); [ -n "$l" ] && cp "$l" "${log%/*}/labels.dat"
exit 0
EOF
chmod +x "$vt/bin/gnuplot"
tools/tables.sh "$ref" "$vt/plots" >/dev/null
GNUPLOT_LOG=$vt/gnuplot.log PATH="$vt/bin:$PATH" tools/plots.sh "$vt/plots" >"$vt/plots.out" 2>&1
check "plots: every chart's title names the GPU (from the step logs)" bash -c "
    [ \$(grep -c . $vt/gnuplot.log) -ge 9 ] && ! grep -v 'NVIDIA H100 80GB HBM3' $vt/gnuplot.log | grep -q ."
check "plots: the roofline gets its three roofs, FP32, bf16 and FP8 tensor-core, and the read ceiling" bash -c "
    grep -q 'name1 = \"FP32 peak\"' $vt/roofs.gp && grep -q 'name2 = \"bf16 tensor-core peak\"' $vt/roofs.gp &&
    grep -q 'name3 = \"FP8 tensor-core peak\"' $vt/roofs.gp &&
    grep -q '^npeaks = 3' $vt/roofs.gp && grep -qE '^peak1 = 66\.[0-9]+; ' $vt/roofs.gp && grep -qE '^peak2 = 10[0-9]{2}\.[0-9]+; ' $vt/roofs.gp &&
    grep -qE '^peak3 = 21[0-9]{2}\.[0-9]+; ' $vt/roofs.gp &&
    grep -qE '^bw = 3[0-9]{3}' $vt/roofs.gp"
check "plots: every step on the roofline once, v17-v24 below a y-axis that reaches the bf16 peak" bash -c "
    [ \$(grep -vc '^#' $vt/plots/roofline.dat) -eq \$(ls -d steps/v*_*/ | wc -l) ] &&
    [ \"\$(grep -v '^#' $vt/plots/roofline.dat | awk '{print \$(NF-2)}' | sort | uniq -d)\" = '' ] &&
    ymax=\$(grep roofline.gp $vt/gnuplot.log | sed -n 's/.*ymax=\([0-9.e+]*\).*/\1/p') &&
    awk -v y=\"\$ymax\" '!/^#/ && \$NF > y { exit 1 } END { exit !(y > 1070) }' $vt/plots/roofline.dat"
# Labels: those in one column (same x) keep at least 0.08 decades apart (10 px on the chart).
check "plots: roofline labels do not overlap (v1/v2, v8/v9, v21-v24 are within a few % of each other)" bash -c "
    [ \$(wc -l <$vt/labels.dat) -eq \$(grep -vc '^#' $vt/plots/roofline.dat) ] &&
    sort -k3,3g -k4,4g $vt/labels.dat | awk '{ y = log(\$4) / log(10) } \$3 == px && y - py < 0.08 { print \"overlap:\", pl, \$5; bad = 1 } { px = \$3; py = y; pl = \$5 } END { exit bad }'"
# A point in the band where a roof's label sits (right, above its line) is labelled on its left.
check "plots: v28, under the bf16 roof's label, is labelled on its left" bash -c "
    grep -q '\"v28\" right\$' $vt/labels.dat && awk '/\"v28\"/ { exit !(\$3 < \$1) }' $vt/labels.dat"
check "plots: Part II's ten sizes get ten distinct colours" bash -c "
    c=\$(sed -n 's/^colours = \"\(.*\)\"/\1/p' plots/pct_cublas.gp) && [ \$(tr ' ' '\n' <<<\"\$c\" | sort -u | wc -l) -ge 10 ] &&
    grep -q 'lc rgb word(colours' plots/pct_cublas.gp && [ \$(head -n1 $vt/plots/part2_pct.dat | grep -o '\"[^\"]*\"' | wc -l) -eq 10 ]"
rm -f "$vt/plots/ceilings.dat" "$vt/gnuplot.log" "$vt/roofs.gp"
GNUPLOT_LOG=$vt/gnuplot.log PATH="$vt/bin:$PATH" tools/plots.sh "$vt/plots" >"$vt/plots.out" 2>&1
check "plots: without ceilings it says so and draws no roof (no H100 figures stand in)" bash -c "
    grep -q 'ceilings.dat is missing' $vt/plots.out && grep -q '^npeaks = 0' $vt/roofs.gp && grep -q '^bw = 0' $vt/roofs.gp"
check "plots: roofline.gp has no GPU's figures of its own" bash -c "! grep -nE '(66\.9|1070|3000|3227)' plots/roofline.gp tools/plots.sh"
