#!/usr/bin/env bash
# run_tests.sh - what `make test` runs (make test TEST_STEPS="0 7": only those steps).  The CPU part always runs; the GPU part
# runs when a GPU is usable and prints as skipped otherwise.  The last line is
# "N passed, N failed, N skipped"; the exit status is nonzero on any failure.
# The GPU part runs every step's checks; compute-sanitizer on the last step of each
# operation, on every step of TEST_STEPS, or on all with TEST_SANITIZE=all (make test-all);
# TEST_JOBS (default 4) steps at a time.
set -uo pipefail
cd "$(dirname "$0")/.."
. tests/lib.sh   # ok, bad, skp, check, expect_exit and the counts pass, fail, skip
tmp=tests/tmp; rm -rf "$tmp"; mkdir -p "$tmp" tests/bin

# TEST_STEPS="0 3 7" limits the per-step tests; default: all steps.
steps=${TEST_STEPS:-$(for d in steps/v*_*/; do b=$(basename "$d"); n=${b%%_*}; echo "${n#v}"; done | sort -n)}

echo "# CPU part"
# ---- every step builds ------------------------------------------------------
built=""
not_here=$(make -s skipped 2>/dev/null)   # steps this GPU's ARCH cannot build or run: "N<tab>why"
# Side by side first (a fresh clone compiles every step); the loop reports each one's build.
buildable=$(for s in $steps; do awk -F'\t' -v s="$s" '$1 == s { f = 1 } END { exit f }' <<<"$not_here" && echo "$s"; done)
[ -z "$buildable" ] || make -s -k -j"$(nproc 2>/dev/null || echo 2)" $(printf 'step%s ' $buildable) >/dev/null 2>&1
for s in $steps; do
    why=$(awk -F'\t' -v s="$s" '$1 == s { print $2 }' <<<"$not_here")
    if [ -n "$why" ]; then skp "build step$s: $why"
    elif make -s "step$s" >"$tmp/build$s.log" 2>&1; then ok "build step$s"; built+="$s "
    else bad "build step$s: $(grep -m1 -i error "$tmp/build$s.log")"; fi
done

# ---- the build's own rules ------------------------------------------------------
# Device code of a binary: its .nv_fatbin section (nvcc's host object differs
# from build to build by a module id; the device code does not).
fatbin() { objcopy -O binary --only-section=.nv_fatbin "$1" "$tmp/fatbin" && md5sum <"$tmp/fatbin" | cut -c1-32; }
if command -v objcopy >/dev/null 2>&1; then
    check "make: a DEFS build followed by a plain build gives the default binary (device code compared)" bash -c '
        '"$(declare -f fatbin)"'; tmp='"$tmp"'
        make -s step1 && a=$(fatbin step1) && make -s step1 DEFS=-DBLOCK=16 && b=$(fatbin step1) &&
        make -s step1 && c=$(fatbin step1) && [ "$a" != "$b" ] && [ "$a" = "$c" ]'
else
    skp "make: DEFS builds (objcopy not found: it comes with binutils)"
fi
check "make NVCCFLAGS=... keeps the include path and DEFS" bash -c \
    'make -s -n step0 NVCCFLAGS="-O2" DEFS=-DBLOCK=16 | grep -- " -o step0 " | grep -- "-Icommon -Icommon/ops" | grep -q -- "-DBLOCK=16"'
fx_steps=tests/fixtures/steps
check "make: a step marked '// build: sm_90a' gets -gencode sm_90a whatever ARCH is" bash -c \
    "make -s -n step900 STEPS=$fx_steps ARCH=sm_80 | grep -- ' -o step900 ' | grep -q -- '-gencode=arch=compute_90a,code=sm_90a'"
check "make: an unmarked step gets -arch=\$(ARCH)" bash -c \
    "make -s -n step901 STEPS=$fx_steps ARCH=sm_80 | grep -- ' -o step901 ' | grep -q -- '-arch=sm_80'"
check "make: the marked fixture (wgmma) builds; the same source unmarked does not" bash -c "
    make -s step900 STEPS=$fx_steps >$tmp/sm90a.log 2>&1 && rm -f step900 &&
    ! make -s step901 STEPS=$fx_steps >$tmp/sm90.log 2>&1 && grep -q 'not supported on .target' $tmp/sm90.log"

# The harness's layering, the unit binaries (tests/unit_*.c), the docs' links and the
# charts without gnuplot: tests/cpu_harness.sh, cpu_unit.sh, cpu_links.sh, cpu_nognuplot.sh.

# ---- each program's command line: bad input is one line and exit 2 -----------------
for s in $built; do
    check "step$s --help exits 0" ./step$s --help
    check "step$s --sizes 0 -> exit 2" expect_exit 2 "0 is out of range: it must be from 1 to" ./step$s --sizes 0
    check "step$s --sizes -5 -> exit 2" expect_exit 2 "-5 is out of range: it must be from 1 to" ./step$s --sizes -5
    check "step$s -k 0 -> exit 2" expect_exit 2 "0 is out of range: it must be from 1 to" ./step$s -k 0
    check "step$s --sizes abc -> exit 2" expect_exit 2 "not an integer" ./step$s --sizes abc
    check "step$s --sizes 1024,,2048 -> exit 2" expect_exit 2 "empty entry" ./step$s --sizes 1024,,2048
    check "step$s unknown flag -> exit 2" expect_exit 2 "unknown option" ./step$s --frobnicate
    check "step$s flag without value -> exit 2" expect_exit 2 "needs a value" ./step$s --sizes
done

gpu=0
[ -x ./step0 ] || make -s step0 >/dev/null 2>&1   # the probe below (TEST_STEPS may not include 0)
if nvidia-smi -L >/dev/null 2>&1 && [ -x ./step0 ] && ./step0 --check-only --sizes 1 >/dev/null 2>&1; then gpu=1; fi
if [ $gpu -eq 0 ] && [ -x ./step0 ]; then
    check "no GPU: step0 says so in one line and exits 3" expect_exit 3 "no usable CUDA GPU" ./step0
    # (a link stands in for /dev/stdout: the harness must not remove a link it was given)
    check "no GPU: step0 --csv FILE leaves no CSV of a header alone, and a --csv link stays" bash -c "
        ./step0 --csv $tmp/none.csv 2>/dev/null; [ \$? -eq 3 ] && [ ! -e $tmp/none.csv ] &&
        : >$tmp/target.csv && ln -sf target.csv $tmp/link.csv && { ./step0 --csv $tmp/link.csv 2>/dev/null; true; } &&
        [ -L $tmp/link.csv ] && [ -s $tmp/target.csv ]"
    check "no GPU: run_all.sh builds, says so, exits 0" bash -c './run_all.sh --steps 0 >'"$tmp"'/ra.out 2>&1 && grep -q "no NVIDIA GPU found" '"$tmp"'/ra.out'
fi
if make -s read_floor >"$tmp/build_floor.log" 2>&1; then
    ok "build read_floor"
    check "read_floor --help exits 0" ./read_floor --help
    check "read_floor --mb abc -> exit 2" expect_exit 2 "sizes in MB" ./read_floor --mb abc
    check "read_floor --mb 0 -> exit 2" expect_exit 2 "sizes in MB" ./read_floor --mb 0
    check "read_floor --runs 2 -> exit 2" expect_exit 2 "from 3 to 1000" ./read_floor --runs 2
    check "read_floor stray argument -> exit 2" expect_exit 2 "unexpected argument" ./read_floor 35.7
    [ $gpu -eq 0 ] && check "no GPU: read_floor says so in one line and exits 3" expect_exit 3 "no usable CUDA GPU" ./read_floor
else bad "build read_floor: $(grep -m1 -i error "$tmp/build_floor.log")"; fi
if make -s build/libktrace.so >"$tmp/build_ktrace.log" 2>&1; then
    ok "build build/libktrace.so (the timeline's CUPTI library)"
else bad "build build/libktrace.so: $(grep -m1 -i error "$tmp/build_ktrace.log")"; fi
# the timeline's summary, from a fixture: 25 launches of ka (0.04 us apart in duration, 5 us
# apart in start), 30 of kb, 3 of kc (under the 20 shown by default), shuffled
check "timeline.sh --summary: launches, median, p10, min, gap per kernel; rare ones left out" bash -c "
    out=\$(tools/timeline.sh --summary tests/fixtures/timeline.txt) &&
    grep -qE '^kb_nvjet +30 +3\.40 +2\.20 +2\.00 +0\.70\$' <<<\"\$out\" &&
    grep -qE '^ka_gemm +25 +1\.48 +1\.08 +1\.00 +3\.52\$' <<<\"\$out\" && ! grep -q kc_rare <<<\"\$out\" &&
    [ \"\$(sed -n 2p <<<\"\$out\" | cut -c1-8)\" = kb_nvjet ]"
check "timeline.sh with no command -> exit 2" expect_exit 2 "usage" tools/timeline.sh /tmp/x.txt
check "timeline.sh --summary of a missing file -> exit 2" expect_exit 2 "usage" tools/timeline.sh --summary /nonexistent
check "run_all.sh --help exits 0" ./run_all.sh --help
check "run_all.sh --steps abc -> exit 2" expect_exit 2 "not a step number" ./run_all.sh --steps abc
check "run_all.sh --steps 99 -> exit 2" expect_exit 2 "no step 99" ./run_all.sh --steps 99
check "run_all.sh --bogus -> exit 2" expect_exit 2 "unknown option" ./run_all.sh --bogus

# ---- tables and charts from fixture CSVs ----------------------------------------
fx=tests/fixtures/results/fixture-gpu
mkdir -p "$tmp/plots"; tools/tables.sh "$fx" "$tmp/plots" >"$tmp/summary.md" 2>"$tmp/tables.err"
check "tables: Part I table with sizes as columns" grep -q "^| step | 1024 | 4096 |$" "$tmp/summary.md"
check "tables: a cell is throughput (% of cuBLAS)" grep -q "^| v0_naive | 6.435 (17.6%) | 5.857 (11.3%) |$" "$tmp/summary.md"
check "tables: a failed row is marked" grep -q "4.100 (8.1%) \*\*FAIL\*\*" "$tmp/summary.md"
check "tables: Part II in GB/s with x cuBLAS at 16384" grep -q "^| v10[^|]* | 1000.0 | 2147.7 | 250.0 | 2.50x | 69.7 | PASS |$" "$tmp/summary.md"
check "tables: v16 rows per variant and m" grep -q "^| v16[^|]* splitk m=16 |" "$tmp/summary.md"
check "tables: plot data written" test -s "$tmp/plots/part1_pct.dat" -a -s "$tmp/plots/part2_rate.dat" -a -s "$tmp/plots/roofline.dat"
# Rows say their part and bound (the CSV's last columns): the tools route them without knowing operations.
section() { awk -v h="### $1" '/^### / { on = (index($0, h) == 1) } on' "$tmp/summary.md"; }
check "tables: a Part III row (op gemm_bf16, part 3) lands in the Part III table, in TFLOPS" bash -c "
    $(declare -f section); tmp=$tmp
    section 'Part III: bf16 tensor-core GEMM' | grep -q '^| v17[^|]* | 549.756 (68.0%) | 687.195 (87.5%) | 534.555 (71.1%) |\$'"
check "tables: Part III's cumulative tables at 4096 and 8192 against the tensor-core peak" bash -c "
    $(declare -f section); tmp=$tmp
    section 'Part III at 4096: time, TFLOPS, % of cuBLAS, % of bf16 tensor-core peak' | grep -q '^| v17[^|]* | 250.000 | 549.756 | 808.465 | 68.0 | 0.68x | 55.6 | PASS |' &&
    section 'Part III at 8192:' | grep -q '^| v17[^|]* | 1600.000 |'"
check "tables: an unknown op with a new part (9) gets a table of its own, not Part II's" bash -c "
    $(declare -f section); tmp=$tmp
    section 'Part 9 (TFLOPS' | grep -q '^| v99 | 171.799 (80.0%) |' && section 'Part 9 at 2048' | grep -q '^| v99 |' &&
    ! section 'Part II' | grep -q v99"
check "tables: chart names per part for plots.sh (part3.name: Part III, TFLOPS)" bash -c \
    "[ \"\$(cat $tmp/plots/part3.name)\" = \"\$(printf 'Part III bf16 GEMM\nTFLOPS')\" ] && test -s $tmp/plots/part3_pct.dat"
op_files=0
for f in common/ops/op_*.c; do   # an op without a part would land in a table of unknown part
    [ -f "$f" ] || continue; op_files=$((op_files + 1))
    nops=$(grep -c '^ *const kl_op kl_op_' "$f"); [ "$nops" -gt 0 ] || continue
    check "$f: every kl_op says its part (the CSV's part column routes its rows)" \
        test "$(grep -cE '\.part = "|_OP\("[0-9a-z-]+"' "$f")" -ge "$nops"   # a field, or a constructor macro's first argument
done
[ $op_files -gt 0 ] || bad "every kl_op says its part: no common/ops/op_*.c to look at"
check "tools: no operation's name in tools/*.sh (a new operation needs no change there)" bash -c \
    "! grep -nwE 'sgemm|gemv|qgemv_[a-z0-9_]+|dequant_q4_0|w4a16|gemm_bf16' tools/*.sh"
if command -v gnuplot >/dev/null 2>&1; then
    tools/plots.sh "$tmp/plots" >"$tmp/plots.out" 2>&1
    for png in part1_pct_cublas part1_throughput part2_pct_cublas part2_throughput part3_pct_cublas part3_throughput roofline; do
        check "plots: $png.png drawn" bash -c "[ \$(stat -c %s $tmp/plots/$png.png 2>/dev/null || echo 0) -gt 2000 ]"
    done
else
    skp "plots: gnuplot is not installed (sudo apt-get install gnuplot-nox); tables are tested above"
fi
printf '# t\n<!-- results:step0 -->\nstale\n<!-- /results -->\n<!-- results:step17 -->\n<!-- /results -->\n<!-- include:%s -->\n<!-- /include -->\n<!-- floor:10 8192x8192=35.7 16384x16384=99.9 -->\n<!-- /floor -->\nend\n' "$fx/included.md" >"$tmp/doc.md"
tools/update_docs.sh "$fx" "$tmp/doc.md"
check "docs: results marker filled from the CSV" grep -q "^| 1024 | 1024 | 1024 | 333.700 | 6.435 |" "$tmp/doc.md"
printf '<!-- results:step0 n=4096 -->\n<!-- /results -->\n' >"$tmp/docn.md"; tools/update_docs.sh "$fx" "$tmp/docn.md"
check "docs: a results marker with n= keeps only those N" bash -c "grep -q '^| 4096 | 4096 | 4096 |' $tmp/docn.md && ! grep -q '^| 1024 |' $tmp/docn.md"
check "docs: stale text between markers replaced" bash -c "! grep -q stale $tmp/doc.md"
check "docs: a results marker holds the header, the rule and one line per CSV row" bash -c \
    "[ \$(awk '/results:step0 /{on=1; next} /\\/results/{on=0} on' $tmp/doc.md | wc -l) -eq 4 ]"
check "docs: a Part III step's table in TFLOPS and % of the tensor-core peak" grep -qF "| M | N | K | time (us) | TFLOPS | cuBLAS (us) | cuBLAS TFLOPS this run | % of cuBLAS | % of bf16 tensor-core peak |" "$tmp/doc.md"
check "docs: include marker filled" grep -q "included fixture table" "$tmp/doc.md"
check "docs: floor marker: step against read_floor.log" grep -qF "| 35.7 | 8192 x 8192 | 14.91 | 400.0 | 4% | 120.0 | 0.30x | 8.05x |" "$tmp/doc.md"
check "docs: floor marker: a size read_floor did not measure shows dashes" grep -qF "| 99.9 | 16384 x 16384 | - | 1000.0 | - | - | - | - |" "$tmp/doc.md"
cp "$tmp/doc.md" "$tmp/doc2.md"; tools/update_docs.sh "$fx" "$tmp/doc2.md"
check "docs: regeneration is idempotent" cmp -s "$tmp/doc.md" "$tmp/doc2.md"

# ---- docs: every step has its page and its README row; links resolve --------------
for s in $steps; do
    d=$(ls -d steps/v"$s"_*/ | head -n1)
    check "docs: v$s has docs/v${s}_*.md" bash -c "ls docs/v${s}_*.md >/dev/null 2>&1"
    check "docs: README has a row for v$s" grep -q "^| \[v$s\](" README.md
done
for f in docs/harness.md docs/profiling.md docs/adding_a_step.md README.md; do check "docs: $f exists" test -s "$f"; done
check "no file cites a DESIGN.md the repository does not have" bash -c \
    "[ -e DESIGN.md ] || ! git grep -n 'DESIGN\.md' -- ':!tests/run_tests.sh'"

# Further CPU tests, one file per topic (sourced: they use ok, bad, skp, check, $tmp, $steps, $built).
for t in tests/cpu_*.sh; do [ -e "$t" ] && . "$t"; done

echo "# GPU part"
if [ $gpu -eq 0 ]; then
    skp "GPU part: no usable NVIDIA GPU here (nvidia-smi/CUDA found none); run make test on a machine with one"
else
    # Each step's tests run in a process of their own, TEST_JOBS (default 4) steps at a
    # time: most of a test is a program starting CUDA and cuBLAS and preparing inputs on
    # the host, which the CPU cores do side by side; the GPU work of a check is small.
    # Each step's lines are printed, in step order, once it is done.
    jobs_max=${TEST_JOBS:-4}
    case $(nvidia-smi --query-gpu=compute_mode --format=csv,noheader 2>/dev/null | head -n1) in
        *Exclusive*) jobs_max=1 ;;   # one process at a time may hold the GPU
    esac
    gpu_wait_slot() { while [ "$(jobs -rp | wc -l)" -ge "$jobs_max" ]; do wait -n; done; }

    # One --check-only run of each step: its header, and its rows' part and operations (the
    # CSV's part and op columns, by header name).  Prints "part op...", or nothing.
    probe() {
        local s=$1 csv=$tmp/probe$1.csv
        rm -f "$csv"
        ./step$s --check-only --sizes 256 -m 1 --csv "$csv" >"$tmp/probe$s.out" 2>&1 ||
            { rm -f "$csv"; ./step$s --check-only --sizes 256 --csv "$csv" >"$tmp/probe$s.out" 2>&1; }
        [ -f "$csv" ] && awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
            { p = p == "" ? $col["part"] : p; if (!($col["op"] in seen)) { seen[$col["op"]]; ops = ops " " $col["op"] } }
            END { if (NR > 1) print (p == "" ? "?" : p) ops }' "$csv"
    }
    for s in $built; do gpu_wait_slot; probe "$s" >"$tmp/probe$s" & done
    wait

    # compute-sanitizer (memcheck, racecheck) on: every step under `make test-all`
    # (TEST_SANITIZE=all) or of TEST_STEPS; else the last step of each operation, whose
    # kernel is the most intricate of its kind (the full sweep is make test-all's).
    declare -A last_of=()
    for s in $built; do
        for o in $(cut -d' ' -f2- -s "$tmp/probe$s"); do
            [ -n "${last_of[$o]-}" ] && [ "${last_of[$o]}" -ge "$s" ] || last_of[$o]=$s
        done
    done
    if [ "${TEST_SANITIZE-}" = all ] || [ -n "${TEST_STEPS-}" ]; then
        san_steps=" $built"; san_why="every step tested"
    else
        san_steps=" $(printf '%s\n' "${last_of[@]}" | sort -nu | tr '\n' ' ')"; san_why="the last step of each operation; make test-all: every step"
    fi
    echo "# compute-sanitizer on steps${san_steps% } ($san_why)"

    # All the tests of step $1, in a subshell of its own ($tmp is its own folder).
    gpu_step() {
        local s=$1 part rest san huge timed= san_tools=
        read -r part rest <"$tmp/../probe$s" || part=
        case $part in
            1)  # SGEMM: any M, N, K
                check "step$s --check-only squares 1 7 33 127 1000 1023 2049" ./step$s --check-only --sizes 1,7,33,127,1000,1023,2049
                for shp in "-m 1000 -n 7 -k 33" "-m 7 -n 1023 -k 2049" "-m 127 -n 2049 -k 1" "-m 1 -n 1 -k 4097" "-m 513 -n 257 -k 129"; do
                    check "step$s --check-only $shp" ./step$s --check-only $shp
                done
                san="-m 67 -n 45 -k 33"; huge="-m 100000000" ;;
            2-skinny)  # W4A16: M 1..16, K a multiple of 8
                check "step$s --check-only m 1..16, N 1 33 2049, K 4096" ./step$s --check-only --sizes 1,33,2049 -k 4096
                check "step$s --check-only m 3 13, N 7 1000, K 128" bash -c "./step$s --check-only -m 3 --sizes 7,1000 -k 128 && ./step$s --check-only -m 13 --sizes 7,1000 -k 11008"
                check "step$s rejects K=100 with exit 2" expect_exit 2 "multiple of" ./step$s --check-only -n 64 -k 100
                # splitk's blocks wait for split 0's: a grid of several waves must neither hang nor add before the zeroing
                check "step$s --check-only --split 32 at 8192 x 8192, M 1 and 16 (grids of several waves, 120 s limit)" \
                    timeout 120 bash -c "./step$s --check-only -m 1 -n 8192 -k 8192 --split 32 && ./step$s --check-only -m 16 -n 8192 -k 8192 --split 32"
                timed="-m 1 -n 512 -k 512"
                san="-m 3 -n 67 -k 256"; huge="-m 16 -n 100000000 -k 4096" ;;
            3|4)  # bf16 tensor-core GEMM (Part IV: the same, over every shape): any M and N, K a multiple of 8
                check "step$s --check-only M = N 1 7 33 127 1000 1023 2049 (K 64)" ./step$s --check-only --sizes 1,7,33,127,1000,1023,2049 -k 64
                for shp in "-m 1000 -n 7 -k 40" "-m 7 -n 1023 -k 2056" "-m 127 -n 2049 -k 8" "-m 1 -n 1 -k 4104" \
                           "-m 513 -n 257 -k 136" "-m 4097 -n 129 -k 4096" "-m 33 -n 4095 -k 264" \
                           "-m 4097 -n 4104 -k 72" "-m 1 -n 8 -k 8" "-m 1153 -n 4104 -k 8"; do   # N % 8 == 0: TMA-store epilogues
                    check "step$s --check-only $shp" ./step$s --check-only $shp
                done
                check "step$s rejects K=100 with exit 2" expect_exit 2 "multiple of 8" ./step$s --check-only -m 64 -n 64 -k 100
                # N % 8 != 0, then N % 8 == 0 with more tiles (170) than SMs: both epilogues, blocks that take several tiles
                san="-m 67 -n 45 -k 40;-m 1153 -n 4104 -k 8"; huge="-m 200000 -n 200000 -k 8"
                if [ "$part" = 4 ]; then
                    # Part IV splits K where tiles are few: one tile of 64 k tiles (split 4, N % 8 != 0), and
                    # 330 units of 128 x 128 on 132 SMs; synccheck too (named barriers, the fix-up's counters)
                    san="-m 67 -n 45 -k 4096;-m 1153 -n 4104 -k 8"; san_tools="memcheck racecheck synccheck"
                    check "step$s --check-only decode and prefill batches: M 1 8 33 64 129 at N 4104, K 4096" \
                        ./step$s --check-only --sizes 1,8,33,64,129 -n 4104 -k 4096
                    # a decode batch is timed with L2 cold (B rotates), M = 65 with one copy: the note says which
                    check "step$s times 64 x 4096 x 4096 with L2 cold and 65 x 4096 x 4096 warm (the cuBLAS note says so)" bash -c \
                        "./step$s -m 64 -n 4096 -k 4096 --iters 3 --warmup 1 --budget 5 | grep -q 'L2 cold: B rotates through [0-9]* copies' &&
                         ! ./step$s -m 65 -n 4096 -k 4096 --iters 3 --warmup 1 --budget 5 | grep -q 'L2 cold: B rotates'"
                    if ./step$s --help 2>&1 | grep -q -- '--split'; then   # forced plans: every split of a short K, odd shapes
                        for sp in 2 3 5 16; do
                            check "step$s --check-only --split $sp (-m 200 -n 1000 -k 4104; -m 8 -n 4104 -k 2048)" bash -c \
                                "./step$s --check-only -m 200 -n 1000 -k 4104 --split $sp && ./step$s --check-only -m 8 -n 4104 -k 2048 --split $sp"
                        done
                        check "step$s rejects --split 9 at K = 512 (8 k tiles) with exit 2" expect_exit 2 "split" ./step$s --check-only -m 64 -n 64 -k 512 --split 9
                    fi
                    # every tile width the step offers, forced, at odd shapes: N % 8 != 0 (the register epilogue),
                    # more tiles than SMs, a last tile (and v35's tail box) cut by N, and a split
                    widths= refused= why=
                    if ./step$s --help 2>&1 | grep -q 'tile width: 64, 128, 192'; then widths="64 128 192 256" refused=96 why="tile widths"
                    elif ./step$s --help 2>&1 | grep -q 'tile width: 64 to 256 in steps of 16'; then   # v35
                        widths="64 80 96 112 128 144 160 176 192 208 224 240 256" refused="72 48" why="steps of 16"
                        san="$san;-m 300 -n 1000 -k 256 --swap 1 --bn 144 --split 3;-m 1153 -n 4104 -k 8 --swap 1 --bn 208"   # tails of 16: split, 200 units
                    fi
                    for bn in $widths; do
                        check "step$s --check-only --bn $bn (N % 8 != 0; more tiles than SMs; a tile cut by N; split 3)" bash -c \
                            "./step$s --check-only --swap 1 --bn $bn -m 513 -n 1001 -k 136 &&
                             ./step$s --check-only --swap 1 --bn $bn -m 4097 -n 4104 -k 72 &&
                             ./step$s --check-only --swap 1 --bn $bn -m 300 -n 1000 -k 72 &&
                             ./step$s --check-only --swap 1 --bn $bn -m 200 -n 4104 -k 4104 --split 3"
                    done
                    for bn in $refused; do
                        check "step$s rejects --bn $bn with exit 2" expect_exit 2 "$why" ./step$s --check-only -m 256 -n 64 -k 64 --bn $bn
                    done
                    if [ -n "$widths" ]; then
                        check "step$s rejects --bn at a swapped M with exit 2" expect_exit 2 "swap" ./step$s --check-only -m 8 -n 64 -k 64 --bn 64
                    fi
                    if ./step$s --help 2>&1 | grep -q -- '--swap'; then   # C^T = B A^T at every activation width (the plan's at M <= 64)
                        for shp in "-m 1 -n 1000 -k 4104" "-m 7 -n 4095 -k 1024" "-m 9 -n 257 -k 64" "-m 33 -n 4104 -k 4096" \
                                   "-m 64 -n 129 -k 8" "-m 17 -n 8192 -k 2048 --split 3"; do
                            check "step$s --check-only (swapped, M <= 64) $shp" ./step$s --check-only $shp
                        done
                        check "step$s rejects --swap 2 (0 the plan, 1 never) with exit 2" expect_exit 2 "swap" ./step$s --check-only --swap 2 -m 8 -n 64 -k 64
                        san="$san;-m 7 -n 1000 -k 256 --split 4"   # swapped, n = 8, split 4, N % 8 != 0 (K 256: at K 4096
                                                          # cuBLAS's reference is a split-K kernel racecheck flags)
                    fi
                    if ./step$s --help 2>&1 | grep -q -- '--dec'; then   # the decode tile (v40), forced: both cluster sizes, every token width
                        for shp in "-m 1 -n 1000 -k 4104" "-m 9 -n 4095 -k 8" "-m 33 -n 257 -k 136" "-m 64 -n 4104 -k 4096" \
                                   "-m 17 -n 9000 -k 200" "-m 64 -n 129 -k 72"; do
                            for cl in 1 2; do
                                check "step$s --check-only --dec 2 --cl $cl $shp" ./step$s --check-only --dec 2 --cl $cl $shp
                            done
                        done
                        for dn in 8 16 32 64; do   # a token tile narrower than M: several cluster units per weight tile
                            check "step$s --check-only --dec 2 --cl 2 --dn $dn -m 64 -n 1000 -k 520" ./step$s --check-only --dec 2 --cl 2 --dn $dn -m 64 -n 1000 -k 520
                        done
                        check "step$s rejects --cl without --dec 2 with exit 2" expect_exit 2 "dec 2" ./step$s --check-only -m 64 -n 64 -k 64 --cl 1
                        # clusters of 2 that walk several units each (141 weight tiles on 66 clusters), and the plan's own
                        san="$san;-m 50 -n 9000 -k 200 --dec 2 --cl 2;-m 33 -n 4104 -k 264"
                    fi
                    if ./step$s --help 2>&1 | grep -q -- '--pair'; then   # pairs of tiles side by side (v41), forced: a pair's
                        # second tile past N, a split, N % 8 != 0 (the register epilogue), more pairs than clusters
                        for shp in "-m 300 -n 1000 -k 520 --bn 96 --split 3" "-m 1000 -n 999 -k 200 --bn 144" "-m 4097 -n 4104 -k 72 --bn 128" \
                                   "-m 129 -n 9001 -k 72 --swap 1 --bn 80" "-m 8200 -n 300 -k 4104" "-m 640 -n 520 -k 4096 --bn 256"; do
                            check "step$s --check-only --pair 2 $shp" ./step$s --check-only --pair 2 $shp
                        done
                        check "step$s rejects --pair 2 at a swapped M with exit 2" expect_exit 2 "swapped" ./step$s --check-only -m 8 -n 64 -k 64 --pair 2
                        # the plan's own pairs (8200 x 300: 128 x 160), and forced pairs with a second tile past N, split 3,
                        # and with the register epilogue
                        san="$san;-m 8200 -n 300 -k 1032;-m 300 -n 1000 -k 520 --bn 96 --pair 2 --split 3;-m 1000 -n 999 -k 200 --bn 96 --pair 2"
                    fi
                    if ./step$s --help 2>&1 | grep -q -- '64 rows a block'; then   # the small tile (v43): the decode kernel at M > 64
                        # the plan's own (32 and 64 tokens, a token tile and a weight tile cut by M and N, N % 8 != 0), then
                        # every token width and both cluster sizes forced at an odd shape, several units a cluster
                        for shp in "-m 513 -n 520 -k 520" "-m 1000 -n 300 -k 512" "-m 127 -n 129 -k 72" "-m 65 -n 4100 -k 1032"; do
                            check "step$s --check-only $shp: the plan's small tile" bash -c \
                                "out=\$(./step$s --check-only $shp) && grep -q 'plan for .*: small tile' <<<\"\$out\""
                        done
                        for dn in 8 16 32 64; do
                            for cl in 1 2; do
                                check "step$s --check-only --dec 2 --dn $dn --cl $cl -m 1000 -n 999 -k 200" ./step$s --check-only --dec 2 --dn $dn --cl $cl -m 1000 -n 999 -k 200
                            done
                        done
                        check "step$s rejects --dec 2 with --pair 2 with exit 2" expect_exit 2 "never paired" ./step$s --check-only -m 512 -n 512 -k 512 --dec 2 --pair 2
                        san="$san;-m 300 -n 1001 -k 520;-m 1000 -n 999 -k 200 --dec 2 --dn 32 --cl 2"
                    fi
                    if ./step$s --help 2>&1 | grep -q -- '--pp'; then   # ping-pong (v45): each consumer warpgroup whole tiles, in turns
                        # the plan's own (K 512 to 1024, two waves or more: an odd unit count, tiles past M and N), then
                        # forced at every width class (tail boxes of 16 and 48 columns), one and many tiles a block, K of one k step
                        for shp in "-m 1100 -n 4000 -k 600" "-m 4097 -n 4104 -k 520" "-m 3000 -n 2056 -k 1000"; do
                            check "step$s --check-only $shp: the plan's ping-pong" bash -c \
                                "out=\$(./step$s --check-only $shp) && grep -q 'plan for .*, ping-pong' <<<\"\$out\""
                        done
                        for shp in "-m 513 -n 1001 -k 72 --bn 128" "-m 1000 -n 1000 -k 200 --bn 144" "-m 300 -n 4104 -k 64 --bn 176" \
                                   "-m 3000 -n 2056 -k 136 --bn 192" "-m 129 -n 9000 -k 128 --bn 80" "-m 200 -n 200 -k 4096 --bn 176 --split 1"; do
                            check "step$s --check-only --pp 2 $shp" bash -c \
                                "out=\$(./step$s --check-only --pp 2 $shp) && grep -q 'plan for .*, ping-pong' <<<\"\$out\""
                        done
                        check "step$s rejects --pp 2 with --bn 256 with exit 2" expect_exit 2 "at most 192 wide" ./step$s --check-only -m 512 -n 512 -k 512 --pp 2 --bn 256
                        check "step$s rejects --pp 2 with --split 2 with exit 2" expect_exit 2 "K whole" ./step$s --check-only -m 512 -n 512 -k 512 --pp 2 --split 2
                        # forced 144 wide (168 tiles on 132 blocks: one or two a block, a 16-column
                        # tail box; at 1100 x 4000 x 600, the plan's own, racecheck flags cuBLAS's reference kernel), and at
                        # 176 wide (288 tiles: two or three a block, a 48-column tail box, K of 3 k steps)
                        san="$san;-m 1000 -n 3000 -k 200 --pp 2 --bn 144;-m 3000 -n 2056 -k 136 --pp 2 --bn 176"
                    fi
                fi ;;
            5)  # FP8 GEMM: any M and N; K a multiple of 16 (per-tensor scales) or of 128 (block scales)
                if [ "$rest" = gemm_fp8_block ]; then
                    check "step$s --check-only M = N 1 7 33 127 1000 1023 2049 (K 256)" ./step$s --check-only --sizes 1,7,33,127,1000,1023,2049 -k 256
                    for shp in "-m 1000 -n 7 -k 128" "-m 7 -n 1023 -k 2048" "-m 127 -n 2049 -k 128" "-m 1 -n 1 -k 4224" \
                               "-m 513 -n 257 -k 640" "-m 4097 -n 129 -k 4096" "-m 33 -n 4095 -k 384" \
                               "-m 4097 -n 4104 -k 128" "-m 1 -n 8 -k 128" "-m 1153 -n 4104 -k 128" "-m 300 -n 300 -k 32768"; do
                        check "step$s --check-only $shp" ./step$s --check-only $shp
                    done
                    check "step$s rejects K=1000 with exit 2" expect_exit 2 "multiple of 128" ./step$s --check-only -m 64 -n 64 -k 1000
                    san="-m 67 -n 45 -k 384;-m 1153 -n 4104 -k 128"; huge="-m 200000 -n 200000 -k 128"
                    san_tools="memcheck racecheck synccheck"
                    if ./step$s --help 2>&1 | grep -q -- '--split'; then   # the last round split: forced, at odd shapes
                        for sp in 2 3 5 16; do
                            check "step$s --check-only --split $sp (-m 300 -n 1000 -k 2048; -m 4097 -n 4104 -k 4096; -m 67 -n 45 -k 2048)" bash -c \
                                "./step$s --check-only -m 300 -n 1000 -k 2048 --split $sp && ./step$s --check-only -m 4097 -n 4104 -k 4096 --split $sp &&
                                 ./step$s --check-only -m 67 -n 45 -k 2048 --split $sp"
                        done
                        check "step$s rejects --split 9 at K = 1024 (8 k tiles) with exit 2" expect_exit 2 "split" ./step$s --check-only -m 64 -n 64 -k 1024 --split 9
                        # split pieces through both epilogues: N % 8 == 0 (TMA) and N % 8 != 0 (K 512: at
                        # 300 x 1000 x 1024 cuBLASLt's block-scaled reference is a kernel racecheck flags)
                        san="$san;-m 300 -n 1000 -k 512 --split 4;-m 67 -n 45 -k 1024 --split 4"
                    fi
                    if ./step$s --help 2>&1 | grep -q -- '--bn'; then   # both widths forced: pairs, an odd last turn, both epilogues
                        for bn in 128 192; do
                            check "step$s --check-only --bn $bn (-m 513 -n 257 -k 640; -m 4097 -n 4104 -k 4224; -m 1000 -n 7 -k 256)" bash -c \
                                "./step$s --check-only --bn $bn -m 513 -n 257 -k 640 && ./step$s --check-only --bn $bn -m 4097 -n 4104 -k 4224 &&
                                 ./step$s --check-only --bn $bn -m 1000 -n 7 -k 256"
                        done
                        check "step$s rejects --bn 100 with exit 2" expect_exit 2 "tile widths" ./step$s --check-only -m 64 -n 64 -k 128 --bn 100
                        # the plan's 67 x 45 x 384 is 128 wide (two k blocks, then one); 1153 x 4104 x 256: pairs in
                        # 165 cluster tiles on 66 clusters (racecheck clean there; at K 384 cuBLASLt's reference is flagged)
                        san="$san;-m 67 -n 45 -k 384 --bn 192;-m 1153 -n 4104 -k 256"
                    fi
                    if ./step$s --help 2>&1 | grep -q -- '--share'; then   # the last round shared out along K (v42), forced:
                        # a share inside one tile, shares across two and three tiles, a tile cut in k tiles of one,
                        # both widths, both epilogues, no whole round (67 x 45), pieces past M
                        for bn in 128 192; do
                            check "step$s --check-only --share 2 --bn $bn (-m 4097 -n 4104 -k 4224; -m 1000 -n 999 -k 1024; -m 67 -n 45 -k 384; -m 2100 -n 1000 -k 1152)" bash -c \
                                "./step$s --check-only --share 2 --bn $bn -m 4097 -n 4104 -k 4224 && ./step$s --check-only --share 2 --bn $bn -m 1000 -n 999 -k 1024 &&
                                 ./step$s --check-only --share 2 --bn $bn -m 67 -n 45 -k 384 && ./step$s --check-only --share 2 --bn $bn -m 2100 -n 1000 -k 1152"
                        done
                        check "step$s --check-only, the plan's own shares (-m 4096 -n 7168 -k 16384)" ./step$s --check-only -m 4096 -n 7168 -k 16384
                        check "step$s rejects --share 3 with exit 2" expect_exit 2 "share" ./step$s --check-only -m 64 -n 64 -k 128 --share 3
                        # shares through both epilogues, each cut tile finished by the piece at its k tile 0
                        san="$san;-m 300 -n 1000 -k 512 --bn 192 --share 2;-m 1000 -n 999 -k 1024 --bn 128 --share 2"
                    fi
                else
                    check "step$s --check-only M = N 1 7 33 127 1000 1023 2049 (K 128)" ./step$s --check-only --sizes 1,7,33,127,1000,1023,2049 -k 128
                    for shp in "-m 1000 -n 7 -k 48" "-m 7 -n 1023 -k 2064" "-m 127 -n 2049 -k 16" "-m 1 -n 1 -k 4112" \
                               "-m 513 -n 257 -k 144" "-m 4097 -n 129 -k 4096" "-m 33 -n 4095 -k 272" \
                               "-m 4097 -n 4104 -k 80" "-m 1 -n 8 -k 16" "-m 1153 -n 4104 -k 16" "-m 300 -n 300 -k 32768"; do
                        check "step$s --check-only $shp" ./step$s --check-only $shp
                    done
                    check "step$s rejects K=72 with exit 2" expect_exit 2 "multiple of 16" ./step$s --check-only -m 64 -n 64 -k 72
                    # cuBLASLt's FP8 has no algorithm off its alignment: the column stays empty and the note says so
                    check "step$s at 1000 x 1023 x 1040 (N odd): timed, cuBLAS column empty, the note says why" bash -c \
                        "./step$s -m 1000 -n 1023 -k 1040 --iters 3 --warmup 1 --budget 5 | grep -q 'cuBLAS column empty: cublasLtMatmul has no FP8 algorithm'"
                    check "step$s at 256 x 256 x 4096: the note gives cuBLASLt's two accumulation modes and their rel_err" bash -c \
                        "./step$s -m 256 -n 256 -k 4096 --iters 3 --warmup 1 --budget 5 | grep -qE 'fast accumulation .*rel_err [0-9.e+-]+; promoted accumulation [0-9.]+ us, rel_err'"
                    san="-m 67 -n 45 -k 272;-m 1153 -n 4104 -k 16"; huge="-m 200000 -n 200000 -k 16"
                    if ./step$s --help 2>&1 | grep -q -- '--bn'; then   # every width forced: tail boxes, both epilogues
                        for bn in 128 144 160 176 192 208 224 240 256; do
                            check "step$s --check-only --bn $bn (-m 513 -n 1001 -k 144; -m 4097 -n 4104 -k 4112; -m 300 -n 2112 -k 272)" bash -c \
                                "./step$s --check-only --bn $bn -m 513 -n 1001 -k 144 && ./step$s --check-only --bn $bn -m 4097 -n 4104 -k 4112 &&
                                 ./step$s --check-only --bn $bn -m 300 -n 2112 -k 272"
                        done
                        check "step$s rejects --bn 100 with exit 2" expect_exit 2 "tile widths" ./step$s --check-only -m 64 -n 64 -k 128 --bn 100
                        san="$san;-m 1153 -n 4104 -k 16 --bn 176"   # a 48-column tail box, 120 cluster tiles on 66 clusters
                    fi
                    if ./step$s --help 2>&1 | grep -q -- '--cut'; then   # the last round cut along K (v44), forced: helpers
                        # with 9 pieces each, pieces past M, N % 8 != 0 (the register epilogue), no whole round, a tile cut
                        # in 22 and in 66 pieces (the first piece reads 21 and 65 partials), a 48-column tail box
                        for shp in "-m 4097 -n 4104 -k 4224" "-m 1000 -n 999 -k 1024" "-m 200 -n 300 -k 8192" "-m 67 -n 45 -k 16384" \
                                   "-m 3000 -n 2056 -k 2048 --bn 176" "-m 2100 -n 1000 -k 1152"; do
                            check "step$s --check-only --cut 2 $shp" bash -c \
                                "out=\$(./step$s --check-only --cut 2 $shp) && grep -q 'tiles\\? cut' <<<\"\$out\""
                        done
                        check "step$s --check-only, the plan's own cut (-m 4096 -n 7168 -k 16384)" bash -c \
                            "out=\$(./step$s --check-only -m 4096 -n 7168 -k 16384) && grep -q 'tiles cut' <<<\"\$out\""
                        check "step$s rejects --cut 3 with exit 2" expect_exit 2 "cut" ./step$s --check-only -m 64 -n 64 -k 128 --cut 3
                        # cuts through both epilogues (racecheck clean there; at 3000 x 2056 x 2048 cuBLASLt's reference is flagged)
                        san="$san;-m 700 -n 1040 -k 1024 --cut 2;-m 1000 -n 999 -k 1024 --cut 2"
                    fi
                    san_tools="memcheck racecheck synccheck"
                fi ;;
            "")
                bad "step$s: could not run a check to learn its operation: $(tail -n1 "$tmp/../probe$s.out")"; return ;;
            2)  # GEMV family: any N; K as the format allows
                check "step$s --check-only N 1 7 33 127 1000 1023 2049 (K 4096)" ./step$s --check-only --sizes 1,7,33,127,1000,1023,2049 -k 4096
                for kk in 1 7 33 127 1000 1023 2049 4100; do
                    ./step$s --check-only -n 33 -k $kk >"$tmp/out" 2>"$tmp/err"; rc=$?
                    if [ $rc -eq 0 ]; then ok "step$s --check-only K=$kk"
                    elif [ $rc -eq 2 ] && grep -q "multiple of" "$tmp/err" && [ "$(wc -l <"$tmp/err")" -eq 1 ]; then ok "step$s rejects K=$kk in one line: $(cat "$tmp/err")"
                    else bad "step$s K=$kk: exit $rc: $(head -c 300 "$tmp/err") $(grep -m3 FAIL "$tmp/out")"; fi
                done
                # tall and skinny: the launch tables' fewest-threads end and a row's partial last pass
                check "step$s --check-only N 20000 K 4224 (a partial last pass)" ./step$s --check-only -n 20000 -k 4224
                check "step$s -n 256 -k 256 runs one problem, not one per default size" bash -c '
                    ./step'"$s"' --check-only -n 256 -k 256 --csv '"$tmp"'/nk.csv >/dev/null 2>&1 &&
                    ./step'"$s"' --check-only --sizes 256 --csv '"$tmp"'/s.csv >/dev/null 2>&1 &&
                    [ "$(wc -l <'"$tmp"'/nk.csv)" -eq "$(wc -l <'"$tmp"'/s.csv)" ]'
                timed="-n 512 -k 512"
                san="-n 67 -k 256"; huge="-n 100000000 -k 4096" ;;
            *)  # a part with no tests of its own yet: small odd sizes pass, or are refused in one line
                for sz in 1 7 33 127 1000; do
                    ./step$s --check-only --sizes $sz >"$tmp/out" 2>"$tmp/err"; rc=$?
                    if [ $rc -eq 0 ]; then ok "step$s (part $part) --check-only --sizes $sz"
                    elif [ $rc -eq 2 ] && [ "$(wc -l <"$tmp/err")" -eq 1 ]; then ok "step$s (part $part) refuses $sz in one line: $(cat "$tmp/err")"
                    else bad "step$s (part $part) --sizes $sz: exit $rc: $(head -c 300 "$tmp/err") $(grep -m3 FAIL "$tmp/out")"; fi
                done
                san="--sizes 64"; huge="-m 100000000 -n 100000000 -k 100000000" ;;
        esac
        # the header of the check-only run: every op's reference (v15 has two ops), and nothing timed
        check "step$s: the header names its cuBLAS reference (reference: ...)" grep -q "^reference" "$tmp/../probe$s.out"
        check "step$s --check-only: nothing timed (no ceiling measured, no cuBLAS timing; it exits 1 if it timed anything)" \
            bash -c "grep -q '^check only: nothing timed' $tmp/../probe$s.out && ! grep -q '^ceiling:' $tmp/../probe$s.out"
        if [ -n "${timed-}" ]; then
            # memory-bound work, timed: the read ceiling measured now beside the HBM datasheet
            # figure, which it must not exceed; GEMVs name the cuBLAS call the column timed
            ./step$s $timed --iters 3 --warmup 1 --budget 5 >"$tmp/timed.out" 2>&1
            check "step$s: the read ceiling is measured now and printed beside the HBM datasheet figure, below it" \
                awk '/^ceiling: best streaming read measured now: / { c = $7; for (i = 1; i < NF; i++) if ($i == "datasheet") d = $(i + 1) }
                     END { exit !(c > 0 && d > 0 && c <= 1.02 * d) }' "$tmp/timed.out"
            [ "$part" = 2 ] && check "step$s: the log names the cuBLAS call it timed (cuBLAS column: ...)" \
                grep -q '^ *cuBLAS column: cublas[A-Za-z]*' "$tmp/timed.out"
        fi
        check "step$s: too big for the GPU -> exit 2 saying how much" expect_exit 2 "GiB of device memory" ./step$s $huge
        case $san_steps in *" $s "*) ;; *) return ;; esac
        if command -v compute-sanitizer >/dev/null 2>&1; then
            IFS=';' read -ra sans <<<"$san"   # one or more shapes, ';' between them
            for one in "${sans[@]}"; do
                for tool in ${san_tools:-memcheck racecheck}; do
                    if compute-sanitizer --tool $tool --error-exitcode 1 ./step$s --check-only $one >"$tmp/san.log" 2>&1; then
                        ok "step$s compute-sanitizer $tool ($one)"
                    else bad "step$s compute-sanitizer $tool ($one): $(grep -m2 -E 'ERROR|Invalid|hazard' "$tmp/san.log")"; fi
                done
            done
        else
            skp "step$s compute-sanitizer: not installed (it ships with the CUDA toolkit)"
        fi
    }
    for s in $built; do
        gpu_wait_slot
        ( tmp=$tmp/gpu$s; mkdir -p "$tmp"; gpu_step "$s" ) >"$tmp/gpu$s.log" 2>&1 &
    done
    wait
    for s in $built; do   # each step's lines, in order, counted here
        while IFS= read -r line; do
            case $line in
                "ok - "*) pass=$((pass + 1)) ;;
                "not ok - "*) fail=$((fail + 1)) ;;
                "skip - "*) skip=$((skip + 1)) ;;
            esac
            printf '%s\n' "$line"
        done <"$tmp/gpu$s.log"
    done
    if [ -x ./read_floor ]; then
        # 8 MB must take longer than 1 MB and no size may beat the read ceiling by more than 5%
        check "read_floor --mb 1,8: two sizes, the larger slower, neither above the ceiling" bash -c '
            ./read_floor --mb 1,8 --runs 5 >'"$tmp"'/floor.out 2>&1 || exit 1
            c=$(sed -n "s/.*read ceiling ([^)]*) \([0-9]*\) GB\/s.*/\1/p" '"$tmp"'/floor.out)
            awk -v c="$c" '"'"'$1 == "1.0" { a = $2; ga = $3 } $1 == "8.0" { b = $2; gb = $3 }
                END { exit !(c > 0 && a > 0 && b > a && ga < 1.05 * c && gb < 1.05 * c) }'"'"' '"$tmp"'/floor.out'
        check "--device N on this machine -> read_floor exit 2" expect_exit 2 "this machine has" ./read_floor --device "$(nvidia-smi -L | wc -l)"
    fi
    # Further GPU tests, one file per topic (sourced, as the CPU ones are).
    for t in tests/gpu_*.sh; do [ -e "$t" ] && . "$t"; done
    ngpu=$(nvidia-smi -L | wc -l)
    check "--device $ngpu on a $ngpu-GPU machine -> exit 2" expect_exit 2 "this machine has" ./step0 --device "$ngpu"
fi

echo
echo "$pass passed, $fail failed, $skip skipped"
[ $fail -eq 0 ]
