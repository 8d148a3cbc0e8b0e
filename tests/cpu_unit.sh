# cpu_unit.sh - sourced by run_tests.sh in the CPU part: the unit tests of the
# host code (tests/unit_*.c, linked with build/libkl.a).  Each binary prints one
# line per test ("ok - ...", "not ok - ...", "skip - ...") and ends with its plan,
# "1..N", N the tests it ran: a binary that crashes stops before its plan, so the
# tests it never reached count as a failure instead of vanishing.
run_unit() {   # run_unit NAME BINARY: its lines as tests, then its plan against them
    local name=$1 bin=$2 rc ran=0 line plan
    "$bin" >"$tmp/$name.out" 2>&1
    rc=$?
    while IFS= read -r line; do
        case $line in
            "ok - "*) ok "$name: ${line#ok - }"; ran=$((ran + 1)) ;;
            "not ok - "*) bad "$name: ${line#not ok - }"; ran=$((ran + 1)) ;;
            "skip - "*) skp "$name: ${line#skip - }"; ran=$((ran + 1)) ;;
        esac
    done <"$tmp/$name.out"
    plan=$(sed -n 's/^1\.\.\([0-9][0-9]*\)$/\1/p' "$tmp/$name.out" | tail -n1)
    if [ -z "$plan" ]; then bad "$name stopped after $ran tests without its plan line 1..N (exit $rc: $(tail -n1 "$tmp/$name.out"))"
    elif [ "$plan" -ne "$ran" ]; then bad "$name printed $ran test lines, its plan says $plan"
    else ok "$name: all $plan tests reported (exit $rc)"; fi
    [ $rc -eq 0 ] || grep -q "^not ok" "$tmp/$name.out" || bad "$name exited with $rc: $(tail -n1 "$tmp/$name.out")"
}
cuda_home=$(dirname "$(dirname "$(command -v nvcc)")")
unit_cc() {   # unit_cc SOURCE BINARY [libkl.a ...]: compile a unit binary as the tests do (libkl.a holds C++ objects)
    gcc -std=c11 -D_GNU_SOURCE -O1 -Wall -Wextra -Icommon -Icommon/ops -I"$cuda_home/include" "$1" "${@:3}" \
        -L"$cuda_home/lib64" -lcublas -lcublasLt -lcudart -lgomp -lstdc++ -lm -fopenmp -o "$2"
}
for u in tests/unit_*.c; do
    name=$(basename "$u" .c)
    if ! unit_cc "$u" "tests/bin/$name" build/libkl.a >"$tmp/$name.build" 2>&1; then
        bad "$name builds: $(head -n1 "$tmp/$name.build")"; continue
    fi
    run_unit "$name" "tests/bin/$name"
done
# The runner itself: a binary that passes one test and then aborts is a failure, named so.
if unit_cc tests/fixtures/unit_crash.c "$tmp/unit_crash" >"$tmp/unit_crash.build" 2>&1; then
    ( pass=0 fail=0 skip=0; run_unit unit_crash "$tmp/unit_crash"; echo "fail=$fail" ) >"$tmp/unit_crash.report" 2>&1
    check "unit runner: a unit binary that crashes after one test is a failure, not one pass" bash -c "
        grep -q '^fail=[1-9]' $tmp/unit_crash.report && grep -q '^not ok - unit_crash stopped after 1 tests' $tmp/unit_crash.report ||
        { cat $tmp/unit_crash.report; false; }"
else
    bad "unit runner's fixture builds: $(head -n1 "$tmp/unit_crash.build")"
fi
