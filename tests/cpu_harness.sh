# cpu_harness.sh - sourced by run_tests.sh in the CPU part: the harness's files
# depend one way, and docs/harness.md's file table names them all (common/ and
# common/ops/).
#
# plain C (check, cli, report, quant) <- util (errors, allocation, the spot check's
# exit) <- device.cu (kernels) <- timing <- ceiling <- the ops <- engine: an object
# may use kl_ symbols of its own layer or lower ones only, so each file reads
# without the ones above it.  Each of those is a layer of its own, so a use
# between two of them is seen (util.o uses check.o's kl_spot_check, one down).
layer_of() {
    case $1 in
        check.o|cli.o|report.o|quant.o) echo 0 ;; util.o) echo 1 ;; device.cu.o) echo 2 ;;
        timing.o) echo 3 ;; ceiling.o) echo 4 ;; engine.o) echo 6 ;; *) echo 5 ;;   # common/ops/'s op_*.o, gemv_device.cu.o; occupancy.o
    esac
}
layer_violations() {   # layer_violations USES: lines "OBJ SYMBOL DEFINING_OBJ"; prints the uses upward
    local o sym d
    while read -r o sym d; do
        [ "$(layer_of "$d")" -gt "$(layer_of "$o")" ] && echo "$o uses $sym from $d"
    done <"$1"
    return 0
}
# The two folders: common/ops/ (the operations and what only they use) builds on common/
# (the harness), never the other way; the engine meets an operation only through op.h.
ops_objs=" $(for f in common/ops/*.c common/ops/*.cu; do [ -f "$f" ] || continue
    b=$(basename "$f"); case $b in *.c) printf '%s ' "${b%.c}.o" ;; *) printf '%s ' "$b.o" ;; esac; done)"
folder_violations() {   # folder_violations USES: prints the uses of a common/ops/ object by a common/ one
    local o sym d
    while read -r o sym d; do
        [[ $ops_objs == *" $d "* && $ops_objs != *" $o "* ]] && echo "$o uses $sym from $d (common/ops/)"
    done <"$1"
    return 0
}
if command -v nm >/dev/null 2>&1 && [ -f build/libkl.a ]; then
    # The library's objects as it holds them, by file name (build/ keeps common/ops/'s in build/ops/).
    rm -rf "$tmp/libkl"; mkdir -p "$tmp/libkl"; (cd "$tmp/libkl" && ar x "$OLDPWD/build/libkl.a")
    : >"$tmp/defs"
    for o in $(ar t build/libkl.a); do
        nm -g --defined-only "$tmp/libkl/$o" 2>/dev/null | awk -v o="$o" '$3 ~ /^kl_/ { print $3, o }' >>"$tmp/defs"
    done
    : >"$tmp/layers.uses"
    for o in $(ar t build/libkl.a); do
        for sym in $(nm -u "$tmp/libkl/$o" 2>/dev/null | awk '$2 ~ /^kl_/ { print $2 }'); do
            d=$(awk -v s="$sym" '$1 == s { print $2; exit }' "$tmp/defs")
            [ -n "$d" ] && [ "$d" != "$o" ] && echo "$o $sym $d" >>"$tmp/layers.uses"
        done
    done
    layer_violations "$tmp/layers.uses" >"$tmp/layers.bad"
    check "harness: plain C <- util <- device <- timing <- ceiling <- ops <- engine, no object uses one above it" \
        bash -c "[ ! -s $tmp/layers.bad ] || { cat $tmp/layers.bad; false; }"
    check "harness: the plain-C files (check, cli, report, quant) use nothing of ours" \
        bash -c "! grep -E '^(check|cli|report|quant)\.o ' $tmp/layers.uses"
    folder_violations "$tmp/layers.uses" >"$tmp/folders.bad"
    check "harness: no object of common/ uses one of common/ops/ (the engine meets the operations through op.h)" \
        bash -c "[ ! -s $tmp/folders.bad ] || { cat $tmp/folders.bad; false; }"
    check "harness: nm saw the files' uses of each other ($(wc -l <"$tmp/layers.uses"); a blind nm would pass the three above)" \
        test "$(wc -l <"$tmp/layers.uses")" -ge 20
else
    skp "harness layering: nm (binutils) or build/libkl.a missing"
fi
# The rule itself, on made-up uses: upward between any two layers is caught, downward is not.
printf '%s\n' "check.o kl_prog util.o" "util.o kl_spot_check check.o" "util.o kl_poison device.cu.o" \
    "device.cu.o kl_cuda_fail util.o" "timing.o kl_peak_tflops ceiling.o" "op_sgemm.o kl_main engine.o" \
    "engine.o kl_op_sgemm op_sgemm.o" >"$tmp/layers.fake"
layer_violations "$tmp/layers.fake" >"$tmp/layers.fake.bad"
check "harness: the layering rule flags check->util, util->device, timing->ceiling, op->engine and nothing downward" bash -c "
    [ \"\$(cut -d' ' -f1,3 $tmp/layers.fake.bad | tr '\n' ' ')\" = 'check.o kl_prog util.o kl_poison timing.o kl_peak_tflops op_sgemm.o kl_main ' ] ||
    { cat $tmp/layers.fake.bad; false; }"
# ... and the folder rule: engine -> op_sgemm (a use downward, but into common/ops/) is caught, the rest not.
folder_violations "$tmp/layers.fake" >"$tmp/folders.fake.bad"
check "harness: the folder rule flags engine->op_sgemm and nothing else of those uses" bash -c "
    [ \"\$(cut -d' ' -f1,3 $tmp/folders.fake.bad | tr '\n' ' ')\" = 'engine.o kl_op_sgemm ' ] || { cat $tmp/folders.fake.bad; false; }"
check "harness: no file of common/ includes a header of common/ops/" bash -c '
    for h in common/ops/*.h; do ! grep -l "^ *# *include *\"$(basename "$h")\"" common/*.* || exit 1; done'
# docs/harness.md has a table per folder, each under its bold **`common/`** or **`common/ops/`** line.
doc_table() { awk -v h="**\`$1/\`" 'index($0, h) == 1 { on = 1; next } on && /^\|/ { t = 1; print; next } on && t { exit }' docs/harness.md; }
check "docs/harness.md's table of common/ names every file there, and its table of common/ops/ every file there" bash -c '
    '"$(declare -f doc_table)"'
    n=0; for d in common common/ops; do doc_table "$d" >'"$tmp"'/doc_table
        for f in "$d"/*; do [ -f "$f" ] || continue; n=$((n + 1))
            grep -q "^|.*\`$(basename "$f")\`" '"$tmp"'/doc_table || { echo "$f missing from the table of $d/"; exit 1; }; done
    done
    [ $n -ge 20 ] || { echo "only $n files seen in common/ and common/ops/"; exit 1; }'
