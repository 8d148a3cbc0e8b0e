# Sourced by run_tests.sh (CPU part). What v22's page shows ptxas doing with setmaxnreg
# (tools/setmaxnreg_demo.cu): a ptxas that behaves otherwise fails here, and the page
# needs another look.
case " $(echo $steps) " in
*" 22 "*)
    sm_demo() { nvcc -gencode=arch=compute_90a,code=sm_90a -Xptxas -v -c tools/setmaxnreg_demo.cu -o /dev/null "$@" 2>&1; }
    spills() { grep -m1 -oE '[0-9]+ bytes spill stores' | cut -d' ' -f1; }
    sm_no_inc_spills()  { local s; s=$(sm_demo -DINC=0); s=$(echo "$s" | spills); [ -n "$s" ] && [ "$s" -gt 0 ]; }
    sm_inc_no_spill()   { local o; o=$(sm_demo -DINC=1) || return 1; [ "$(echo "$o" | spills)" = 0 ] && ! grep -q C7508 <<<"$o"; }
    sm_no_bounds_c7508() { local o; o=$(sm_demo -DINC=1 -DLB=0); grep -q C7508 <<<"$o"; }
    sm_512_c7602()      { local o; o=$(sm_demo -DINC=1 -DTHREADS=512 -DEXTRA=1) && return 1; grep -q C7602 <<<"$o"; }
    check "setmaxnreg demo: without setmaxnreg.inc, 168 registers spill" sm_no_inc_spills
    check "setmaxnreg demo: with setmaxnreg.inc 232, no spill and no C7508" sm_inc_no_spill
    check "setmaxnreg demo: without __launch_bounds__, ptxas ignores setmaxnreg (C7508)" sm_no_bounds_c7508
    check "setmaxnreg demo: one m64n256 under a cap of 128 at entry is C7602, inc or not" sm_512_c7602
    ;;
esac
