# cpu_ptxas.sh - sourced by run_tests.sh (CPU part): ptxas left every wgmma of the Hopper
# steps asynchronous.  Where a wgmma or its wgmma.fence sits under a condition ptxas cannot
# prove the same for the whole warpgroup, it serializes every wgmma of the kernel and says
# so in one line of the build: "(C7520) Potential Performance Loss: wgmma.mma_async
# instructions are serialized ...".  The binary still gives the right answer; only the
# speed is gone (v35's fence moved under `if (kt == kb)`: 86.6% of cuBLAS against 95.3 over
# Part IV's 24 shapes, docs/notes/v35_fine_widths.md, call 18).  The same words are in ptxas's
# other notes of this kind (C7515: other instructions writing the accumulators while a
# batch runs, v20's page), and the check reads those too.  The make rule keeps each
# step's compiler output in build/log/stepN.log (tools/logged.sh).
# Uses ok, bad, skp, check, $built.
for s in $built; do
    src=$(ls steps/v"$s"_*/*.cu 2>/dev/null | head -n 1)
    [ -n "$src" ] && grep -q 'wgmma\.mma_async' "$src" || continue   # the steps that issue wgmma
    log=build/log/step$s.log
    if [ ! -f "$log" ]; then
        skp "step$s: ptxas's notes not kept (step$s was built before build/log/ existed: make -B step$s)"
        continue
    fi
    check "step$s: ptxas serialized none of its wgmmas (no 'instructions are serialized' in $log)" bash -c \
        "! grep -m 1 'wgmma.mma_async instructions are serialized' '$log'"
done
