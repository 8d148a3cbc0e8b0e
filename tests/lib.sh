# lib.sh - the helpers the test files share, sourced by tests/run_tests.sh, by
# tests/gpu_negative.sh when it runs alone and by tests/mutants.sh.  Sourcing it
# starts the counts at zero.  Each test prints one line, "ok - ", "not ok - " or
# "skip - " and what it tested; the caller prints the totals.  check and
# expect_exit write their output under $tmp, which the caller sets.  copy_tree:
# a copy of this checkout to run things in (mutants.sh; cpu_runs.sh's scratch).
pass=0 fail=0 skip=0
ok()   { pass=$((pass + 1)); echo "ok - $*"; }
bad()  { fail=$((fail + 1)); echo "not ok - $*"; }
skp()  { skip=$((skip + 1)); echo "skip - $*"; }
check() {   # check WHAT cmd...: ok when cmd succeeds; on failure its output is shown: the lines that
            # say what failed (a FAIL row and the mismatches under it, up to 20), then its last 5 lines
    local what=$1; shift
    if "$@" >"$tmp/check.out" 2>&1; then ok "$what"; else
        bad "$what"
        grep -E -A4 ' FAIL$|^ +FAIL ' "$tmp/check.out" | head -n 20 | sed 's/^/    /'
        tail -n 5 "$tmp/check.out" | sed 's/^/    /'
    fi
}
expect_exit() {   # expect_exit CODE PATTERN cmd...: exit code, one line on stderr matching PATTERN
    local code=$1 pat=$2; shift 2
    "$@" >"$tmp/expect.out" 2>"$tmp/err"; local rc=$?
    [ $rc -eq "$code" ] && [ "$(wc -l <"$tmp/err")" -eq 1 ] && grep -q -- "$pat" "$tmp/err" && return 0
    echo "    got exit $rc, stderr: $(head -c 300 "$tmp/err")"; return 1
}

# copy_tree DIR: the tracked and new files of this checkout (not the ignored ones) into DIR.
# Outside a git checkout (a copy of the tree without its history): every file but the
# scratch and output folders.  A tracked file deleted but not yet `git rm`-ed is left out.
copy_tree() {
    if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
        git ls-files -co --exclude-standard -z | while IFS= read -r -d '' f; do if [ -e "$f" ]; then printf '%s\0' "$f"; fi; done
    else find . \( -path ./.git -o -path ./tests/tmp -o -path ./build -o -path ./results/local -o -path ./plots/local \) -prune \
             -o -type f -print0; fi | tar --null -T - -cf - | tar -xf - -C "$1"
}
