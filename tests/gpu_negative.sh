#!/usr/bin/env bash
# gpu_negative.sh - the checks fail when a kernel is wrong.  Every GPU test elsewhere runs a
# correct step and expects exit 0; here a deliberately wrong kernel of each operation
# (tests/fixtures/steps/v910-v916, one bug per --bug N) must exit 1, print the failure
# (how many elements, how many NaN, where and by how much), and write FAIL in its CSV;
# --bug 0, the same kernel without the bug, must pass.  A harness that stops counting
# failures, skips the NaN poisoning, drops a NaN rel_err or loosens a tolerance fails here.
#
# Sourced by tests/run_tests.sh in its GPU part (ok, bad, skp, check, $tmp); on a machine
# with a GPU it also runs alone:   tests/gpu_negative.sh
if [ "${BASH_SOURCE[0]}" = "$0" ]; then
    set -uo pipefail
    cd "$(dirname "$0")/.."
    . tests/lib.sh
    tmp=tests/tmp/negative; rm -rf "$tmp"; mkdir -p "$tmp"
    neg_alone=1
fi

neg_fx=tests/fixtures/steps
neg_steps="910 911 912 913 914 915 916"

# neg_run STEP BUG ARGS...: the fixture's --check-only run; output in $tmp/neg.out, rows in $tmp/neg.csv
neg_run() {
    local s=$1 b=$2; shift 2
    rm -f "$tmp/neg.csv"
    ./step$s --check-only "$@" --bug "$b" --csv "$tmp/neg.csv" >"$tmp/neg.out" 2>&1
    neg_rc=$?
}
# neg_errtol: the err/tol column of the printed table, one value per row (found by its header)
neg_errtol() {
    awk '/ err\/tol / { for (i = 1; i <= NF; i++) if ($i == "err/tol") c = i; n = NF; next }
         c && NF == n && $1 ~ /^[0-9]+$/ { print $c }' "$tmp/neg.out"
}
# neg_csv COLUMN [VARIANT]: that column of the CSV's rows (of VARIANT only), found by its header
neg_csv() {
    awk -F, -v c="$1" -v v="${2-}" 'NR == 1 { for (i = 1; i <= NF; i++) h[$i] = i; next }
        v == "" || $h["variant"] == v { print $h[c] }' "$tmp/neg.csv"
}
neg_show() { grep -E "FAIL|PASS|worst|internal" "$tmp/neg.out" | head -n 6; echo "    (exit $neg_rc)"; }

# neg_wrong STEP BUG "ARGS" EXPECT...: exit 1, the last line says the check FAILED, and each
# EXPECT holds: a pattern (grep -E) the output has; !PATTERN: one it has not;
# csv[@VARIANT]:COLUMN=VALUE: every row (of VARIANT) has it (VALUE empty: the field is empty);
# csv[@VARIANT]:COLUMN!=: not empty; errtol>1: some row's err/tol is over 1 (a finite miss).
neg_wrong() {
    local s=$1 b=$2 args=$3 e col val var
    shift 3
    neg_run "$s" "$b" $args
    [ "$neg_rc" -eq 1 ] && grep -q "FAILED the check against the reference" "$tmp/neg.out" || { neg_show; return 1; }
    for e in "$@"; do
        case $e in
            csv*)
                var=; [[ $e == csv@* ]] && { var=${e#csv@}; var=${var%%:*}; }
                col=${e#*:}; val=${col#*=}; col=${col%%=*}
                if [[ $col == *! ]]; then
                    col=${col%!}
                    if [ -z "$(neg_csv status "$var")" ] || neg_csv "$col" "$var" | grep -q '^$'; then
                        echo "    CSV $col${var:+ ($var)} empty: '$(neg_csv "$col" "$var" | tr '\n' ' ')'"; return 1
                    fi
                else
                    [ -z "$(neg_csv "$col" "$var" | grep -vxF -- "$val")" ] && [ -n "$(neg_csv status "$var")" ] ||
                        { echo "    CSV $col${var:+ ($var)}: '$(neg_csv "$col" "$var" | tr '\n' ' ')', expected '$val'"; return 1; }
                fi ;;
            'errtol>1')
                neg_errtol | awk '$1 != "-" && $1 + 0 > 1 { f = 1 } END { exit !f }' ||
                    { neg_show; echo "    no err/tol over 1: $(neg_errtol | tr '\n' ' ')"; return 1; } ;;
            !*) ! grep -qE -- "${e#!}" "$tmp/neg.out" || { neg_show; echo "    unexpected: ${e#!}"; return 1; } ;;
            *) grep -qE -- "$e" "$tmp/neg.out" || { neg_show; echo "    missing: $e"; return 1; } ;;
        esac
    done
    return 0
}
# neg_right STEP "ARGS": --bug 0 passes: exit 0, nothing timed, every row PASS with an err/tol in [0, 1]
neg_right() {
    neg_run "$1" 0 $2
    [ "$neg_rc" -eq 0 ] && grep -q "^check only: nothing timed" "$tmp/neg.out" && ! grep -q "^ceiling:" "$tmp/neg.out" &&
        [ -n "$(neg_csv status)" ] && [ -z "$(neg_csv status | grep -vx PASS)" ] &&
        [ -n "$(neg_errtol)" ] && neg_errtol | awk '!($1 ~ /^[0-9.e+-]+$/ && $1 + 0 >= 0 && $1 + 0 <= 1) { exit 1 }' ||
        { neg_show; return 1; }
}
neg_right2() { neg_right "$1" "$2" && neg_right "$1" "$3"; }

if make -s -j"$(nproc 2>/dev/null || echo 4)" $(printf 'step%s ' $neg_steps) STEPS=$neg_fx >"$tmp/neg_build.log" 2>&1; then
    ok "negative fixtures build: make step910 ... step916 STEPS=$neg_fx"
    nan="C poisoned with NaN"   # sgemm's first check: beta = 0, C full of NaN
    # SGEMM: any shape; 33 x 45 x 33 has a partial K tile
    sg="-m 33 -n 45 -k 33"
    check "negative sgemm: the control (--bug 0) passes at K 33 and 4096" neg_right2 910 "$sg" "-m 33 -n 45 -k 4096"
    check "negative sgemm: last column unwritten -> exit 1, 33 of 1485 wrong, all NaN, first at [0][44], rel_err NaN" \
        neg_wrong 910 1 "$sg" "FAIL alpha=1, beta=0, $nan: 33 of 1485 elements wrong \(33 NaN/Inf\)" \
        "^    \[0\]\[44\] = -?nan, expected [-+0-9.e]+ \(\|out-ref\| nan, tolerance there [0-9.e+-]+\)" csv:status=FAIL csv:rel_err=
    check "negative sgemm: last K tile dropped -> exit 1, no NaN, the worst error and err/tol > 1 printed" \
        neg_wrong 910 2 "$sg" "FAIL alpha=1, beta=0, $nan: [0-9]+ of 1485 elements wrong \(0 NaN/Inf\)" \
        "^    worst: \[[0-9]+\]\[[0-9]+\] = .*: \|out-ref\| [0-9.e+-]+, [0-9.e+]+ x the tolerance there" \
        'errtol>1' csv:status=FAIL csv:rel_err!=
    check "negative sgemm: beta ignored -> exit 1, caught by the beta != 0 check alone" \
        neg_wrong 910 3 "$sg" "FAIL alpha=0.75, beta=-0.5, random C: [0-9]+ of 1485 elements wrong \(0 NaN/Inf\)" \
        "!FAIL alpha=1, beta=0"
    check "negative sgemm: C read at beta = 0 -> exit 1, every element NaN (the poison)" \
        neg_wrong 910 4 "$sg" "FAIL alpha=1, beta=0, $nan: 1485 of 1485 elements wrong \(1485 NaN/Inf\)" "!random C: [0-9]+ of"
    check "negative sgemm: TF32 inputs at K 4096 -> exit 1 (the fp32 tolerance is tight enough; 16x looser would pass them)" \
        neg_wrong 910 5 "-m 33 -n 45 -k 4096" "FAIL alpha=1, beta=0, $nan: [0-9]+ of 1485 elements wrong \(0 NaN/Inf\)" 'errtol>1'

    # fp16 GEMV
    y="fresh random x, y poisoned with NaN"
    check "negative gemv: the control passes at K 33 and 4096" neg_right2 911 "-n 67 -k 33" "-n 67 -k 4096"
    check "negative gemv: last row unwritten -> exit 1, 1 of 67 wrong, NaN, at [0][66]" \
        neg_wrong 911 1 "-n 67 -k 33" "FAIL $y: 1 of 67 elements wrong \(1 NaN/Inf\)" "^    \[0\]\[66\] = -?nan" csv:rel_err=
    check "negative gemv: K % 8 tail dropped -> exit 1" \
        neg_wrong 911 2 "-n 67 -k 33" "FAIL $y: [0-9]+ of 67 elements wrong \(0 NaN/Inf\)" 'errtol>1' csv:rel_err!=
    check "negative gemv: fp16 accumulation at K 4096 -> exit 1 (the tolerance sees a sum rounded to fp16)" \
        neg_wrong 911 3 "-n 67 -k 4096" "FAIL $y: [0-9]+ of 67 elements wrong \(0 NaN/Inf\)"

    # int8 GEMV
    check "negative qgemv_int8: the control passes" neg_right 912 "-n 67 -k 33"
    check "negative qgemv_int8: last row unwritten -> exit 1, 1 NaN" \
        neg_wrong 912 1 "-n 67 -k 33" "FAIL $y: 1 of 67 elements wrong \(1 NaN/Inf\)" "^    \[0\]\[66\] = -?nan"
    check "negative qgemv_int8: q read as a signed byte -> exit 1" \
        neg_wrong 912 2 "-n 67 -k 33" "FAIL $y: [0-9]+ of 67 elements wrong \(0 NaN/Inf\)" 'errtol>1'
    check "negative qgemv_int8: K % 4 tail dropped -> exit 1" \
        neg_wrong 912 3 "-n 67 -k 33" "FAIL $y: [0-9]+ of 67 elements wrong \(0 NaN/Inf\)"

    # int4 GEMV: K 1000, eight groups, the last one partial
    check "negative qgemv_int4: the control passes" neg_right 913 "-n 67 -k 1000"
    check "negative qgemv_int4: nibbles swapped -> exit 1" \
        neg_wrong 913 1 "-n 67 -k 1000" "FAIL $y: [0-9]+ of 67 elements wrong \(0 NaN/Inf\)"
    check "negative qgemv_int4: group 0's scale and zero for every group -> exit 1" \
        neg_wrong 913 2 "-n 67 -k 1000" "FAIL $y: [0-9]+ of 67 elements wrong \(0 NaN/Inf\)" 'errtol>1'
    check "negative qgemv_int4: last partial group dropped -> exit 1" \
        neg_wrong 913 3 "-n 67 -k 1000" "FAIL $y: [0-9]+ of 67 elements wrong \(0 NaN/Inf\)"

    # q4_0: dequantize (exact check) and fused GEMV, two ops in one step; 5 x 512 is 80 q4_0 blocks
    dq="FAIL dequant, q4_0 -> fp16, output poisoned with NaN"
    check "negative q4_0: the control passes, both ops" neg_right 914 "-n 5 -k 512"
    check "negative dequant_q4_0: grid rounded down -> exit 1, the last 16 blocks (512 values) NaN from [4][0]; fused passes" \
        neg_wrong 914 1 "-n 5 -k 512" "$dq: 512 of 2560 elements wrong \(512 NaN/Inf\)" "^    \[4\]\[0\] = -?nan" \
        "!FAIL fused" csv@dequant:status=FAIL csv@fused:status=PASS
    check "negative dequant_q4_0: offset 7 instead of 8 -> exit 1, every element wrong against an exact check" \
        neg_wrong 914 2 "-n 5 -k 512" "$dq: 2560 of 2560 elements wrong \(0 NaN/Inf\); tolerance \|out-ref\| <= 0.00e\+00 \+ 0.00e\+00"
    check "negative qgemv_q4_0: int4's nibble order -> exit 1, dequant passes" \
        neg_wrong 914 3 "-n 5 -k 512" "FAIL fused, $y: [0-9]+ of 5 elements wrong \(0 NaN/Inf\)" "!FAIL dequant" \
        csv@dequant:status=PASS csv@fused:status=FAIL
    check "negative qgemv_q4_0: the row's first scale for every block -> exit 1" \
        neg_wrong 914 4 "-n 5 -k 512" "FAIL fused, $y: [0-9]+ of 5 elements wrong \(0 NaN/Inf\)"

    # W4A16: K 384 is three groups (odd: split in two, one is dropped by bug 2); K 4096 for the fp16 weights
    w4="FAIL C and workspace poisoned with NaN"
    check "negative w4a16: the control passes at K 384 and 4096 (exact dequantization, the tolerance's model)" \
        neg_right2 915 "-m 3 -n 67 -k 384" "-m 3 -n 67 -k 4096"
    check "negative w4a16: C not zeroed before the atomic adds -> exit 1, all 201 NaN" \
        neg_wrong 915 1 "-m 3 -n 67 -k 384" "$w4: 201 of 201 elements wrong \(201 NaN/Inf\)" "^    \[0\]\[0\] = -?nan" csv:rel_err=
    check "negative w4a16: the last group of an odd count dropped -> exit 1" \
        neg_wrong 915 2 "-m 3 -n 67 -k 384" "$w4: [0-9]+ of 201 elements wrong \(0 NaN/Inf\)" 'errtol>1'
    check "negative w4a16: weights rounded to fp16 at K 4096 -> exit 1 (outside the tolerance's model)" \
        neg_wrong 915 3 "-m 3 -n 67 -k 4096" "$w4: [0-9]+ of 201 elements wrong \(0 NaN/Inf\)"
    check "negative w4a16: plain int4 nibble order -> exit 1" \
        neg_wrong 915 4 "-m 3 -n 67 -k 384" "$w4: [0-9]+ of 201 elements wrong \(0 NaN/Inf\)"

    # bf16 GEMM: K 40 has a partial tile of 16
    b16="FAIL bf16 output rounded once, C poisoned with NaN"
    check "negative gemm_bf16: the control passes" neg_right 916 "-m 33 -n 45 -k 40"
    check "negative gemm_bf16: last column unwritten -> exit 1, 33 NaN, first at [0][44]" \
        neg_wrong 916 1 "-m 33 -n 45 -k 40" "$b16: 33 of 1485 elements wrong \(33 NaN/Inf\)" "^    \[0\]\[44\] = -?nan" csv:rel_err=
    check "negative gemm_bf16: last K tile dropped -> exit 1" \
        neg_wrong 916 2 "-m 33 -n 45 -k 40" "$b16: [0-9]+ of 1485 elements wrong \(0 NaN/Inf\)" 'errtol>1'
    check "negative gemm_bf16: truncated to bf16 instead of rounded -> exit 1 (rtol is one rounding)" \
        neg_wrong 916 3 "-m 33 -n 45 -k 40" "$b16: [0-9]+ of 1485 elements wrong \(0 NaN/Inf\)" 'errtol>1'
else
    bad "negative fixtures build: make step910 ... step916 STEPS=$neg_fx: $(grep -m1 -i error "$tmp/neg_build.log")"
fi

if [ -n "${neg_alone-}" ]; then
    echo
    echo "$pass passed, $fail failed, $skip skipped"
    [ $fail -eq 0 ]
fi
