# cpu_golden.sh - sourced by run_tests.sh in the CPU part: the tables, the
# charts' data and a doc page generated from the fixture CSVs are compared
# whole with tests/fixtures/golden/ (tests/golden.sh; after a deliberate change
# to an output, `tests/golden.sh --update` rewrites them).
tests/golden.sh >"$tmp/golden.out" 2>&1
golden_rc=$?
golden_n=0
while IFS= read -r line; do
    case $line in
        "ok - "*) ok "${line#ok - }"; golden_n=$((golden_n + 1)) ;;
        "not ok - "*) bad "${line#not ok - }"; golden_n=$((golden_n + 1)) ;;
        "    "*) echo "$line" ;;   # the diff under a failure
    esac
done <"$tmp/golden.out"
# every golden file was compared (a golden.sh that stops early compares none)
check "golden: tests/golden.sh compared all $(ls tests/fixtures/golden | wc -l) golden files (exit $golden_rc)" \
    test "$golden_n" -ge "$(ls tests/fixtures/golden | wc -l)" -a "$golden_n" -gt 0
# The comparison itself can fail: two cells of one row swapped in a copy of the golden summary.
rm -rf "$tmp/golden.copy"; cp -r tests/fixtures/golden "$tmp/golden.copy"
sed -i 's/^| v0_naive | 6.435 (17.6%) | 5.857 (11.3%) |$/| v0_naive | 5.857 (11.3%) | 6.435 (17.6%) |/' "$tmp/golden.copy/summary.md"
check "golden: a golden file with two cells swapped fails the comparison, naming the file" bash -c "
    ! cmp -s tests/fixtures/golden/summary.md $tmp/golden.copy/summary.md &&
    ! GOLDEN_DIR=$tmp/golden.copy tests/golden.sh >$tmp/golden.self 2>&1 && grep -q '^not ok - golden: summary.md differs' $tmp/golden.self"
