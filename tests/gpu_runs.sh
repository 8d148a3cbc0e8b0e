# gpu_runs.sh - sourced by run_tests.sh (GPU part): a real run on this GPU, in a
# scratch copy of the repository (scratch and clean come from tests/cpu_runs.sh),
# writes its results and the comparison to results/local/ and changes no tracked file.
rt=$(cd "$tmp" && pwd)/runs   # absolute: the run below works in the scratch copy
mkdir -p "$rt"
if declare -f scratch >/dev/null && [ -n "$built" ] && scratch "$rt/gpu" >"$rt/gpu_scratch.log" 2>&1; then
    g=$rt/gpu s1=${built%% *}
    [[ " $built " == *" 9 "* ]] && s1=9   # a fast SGEMM: its 8192^3 turns take seconds, step0's ten times as long
    (cd "$g" && ./run_all.sh --quick --steps "$s1" >"$rt/gpu_run.out" 2>&1); rc=$?
    check "run_all --quick --steps $s1 on this GPU: exit 0, no tracked file changed" bash -c "
        $(declare -f clean); [ $rc -eq 0 ] || { tail -n 5 $rt/gpu_run.out; exit 1; }; clean $g"
    check "run_all on this GPU: compare.md has step$s1's row against the reference, and the run says where it wrote" bash -c "
        grep -q '^| v$s1 | [1-9]' $g/results/local/*/compare.md && grep -q '^results: results/local/' $rt/gpu_run.out"
else
    skp "run_all on this GPU in a scratch copy: no step built or the copy failed"
fi
