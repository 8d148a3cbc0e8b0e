# cpu_nognuplot.sh - sourced by run_tests.sh in the CPU part: tools/plots.sh
# without gnuplot, wherever gnuplot is installed: run with a PATH of stubs (the
# tools plots.sh needs, and no gnuplot), it says how to install it, exits 0 and
# draws nothing.
mkdir -p "$tmp/nognuplot" "$tmp/plots.nognuplot"
for t in bash dirname basename cat grep sed wc head tail ls awk; do ln -sf "$(command -v $t)" "$tmp/nognuplot/$t"; done
rm -f "$tmp/plots.nognuplot"/*
tools/tables.sh tests/fixtures/results/fixture-gpu "$tmp/plots.nognuplot" >/dev/null 2>&1
check "plots: without gnuplot (a PATH without it) it says how to install it, exits 0 and draws nothing" bash -c "
    test -s $tmp/plots.nognuplot/roofline.dat && PATH=$PWD/$tmp/nognuplot && ! command -v gnuplot >/dev/null &&
    tools/plots.sh $tmp/plots.nognuplot >$tmp/nognuplot.out 2>&1 && grep -q 'apt-get install gnuplot' $tmp/nognuplot.out &&
    ! ls $tmp/plots.nognuplot/*.png >/dev/null 2>&1 || { cat $tmp/nognuplot.out; false; }"
