# cpu_runs.sh - sourced by run_tests.sh (CPU part): runs never damage the
# committed reference, every tool fails loudly, and the build knows what an
# architecture can run.  Uses ok, bad, skp, check, expect_exit, $tmp, $built.
#
# run_all.sh is run in a scratch copy of the repository (its own git history),
# with a fake nvidia-smi on the PATH, so `git status` there shows anything a run
# changed, and a bug here cannot touch this checkout.

runs_tmp=$(cd "$tmp" && pwd)/runs
rm -rf "$runs_tmp"; mkdir -p "$runs_tmp/h100" "$runs_tmp/none0" "$runs_tmp/none6" "$runs_tmp/make"
# A fake H100 with no GPU behind it, and two machines whose nvidia-smi finds none.
cat >"$runs_tmp/h100/nvidia-smi" <<'EOF'
#!/bin/sh
case "$*" in *compute_cap*) echo 9.0 ;; -L) echo "GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-0)" ;; *) echo "NVIDIA H100 80GB HBM3" ;; esac
EOF
printf '#!/bin/sh\necho "No devices were found"\nexit 0\n' >"$runs_tmp/none0/nvidia-smi"
printf '#!/bin/sh\necho "No devices were found"\nexit 6\n' >"$runs_tmp/none6/nvidia-smi"
printf '#!/bin/sh\nexit 0\n' >"$runs_tmp/make/make"   # for fake step binaries: build nothing
chmod +x "$runs_tmp"/*/*
fake_h100="$runs_tmp/h100:$PATH"
# On a machine with a GPU, the fake H100's runs must not find the real one either.
nogpu='env CUDA_VISIBLE_DEVICES='
# on_fake_h100 CMD...: CMD (expect_exit, say) in a subshell that sees the fake H100 and no real GPU
on_fake_h100() { (export CUDA_VISIBLE_DEVICES= PATH=$fake_h100; "$@"); }


# scratch DIR: copy_tree (tests/lib.sh), the built binaries and build/ (mtimes kept, so
# make finds them up to date), committed in a fresh repo (whose own .gitignore leaves the
# binaries out).
scratch() {
    rm -rf "$1"; mkdir -p "$1"
    copy_tree "$1" && test -x "$1/run_all.sh" &&
    tar -cf - build $(ls -d step[0-9]* read_floor 2>/dev/null) 2>/dev/null | tar -xf - -C "$1" &&
    (cd "$1" && git init -q && git add -A && git -c user.name=t -c user.email=t@t commit -qm base)
}
# clean DIR: nothing tracked changed and nothing new outside the ignored folders.
clean() { [ -z "$(git -C "$1" status --porcelain)" ] || { git -C "$1" status --porcelain | head -n 5; false; }; }

# ---- run_all.sh with real step binaries on a fake H100: every step exits 3 ----------------
ra_steps=$(echo $built | tr ' ' ,)
if [ -n "$ra_steps" ] && [ -x ./read_floor ] && scratch "$runs_tmp/repo" >"$runs_tmp/scratch.log" 2>&1; then
    r=$runs_tmp/repo
    (cd "$r" && $nogpu PATH=$fake_h100 ./run_all.sh --steps "$ra_steps" >"$runs_tmp/fake.out" 2>&1); rc=$?
    check "run_all on a fake H100 (no GPU behind it): exit 3, says nothing could run" \
        bash -c "[ $rc -eq 3 ] && tail -n1 $runs_tmp/fake.out | grep -q 'nothing could run'"
    check "run_all on a fake H100: every step reported as skipped with its reason, none as failed" bash -c "
        [ \$(grep -c '^- skipped v[0-9]*: no usable CUDA GPU' $runs_tmp/fake.out) -eq $(echo $built | wc -w) ] &&
        ! grep -q 'FAILED' $runs_tmp/fake.out"
    check "run_all on a fake H100: no tracked file changed, nothing new outside results/local and plots/local" clean "$r"
    check "run_all on a fake H100: wrote its logs and compare.md to results/local/h100-80gb-hbm3/ and says where" bash -c "
        test -s $r/results/local/h100-80gb-hbm3/compare.md && grep -q '^results: results/local/h100-80gb-hbm3/' $runs_tmp/fake.out"
    s1=${built%% *}
    (cd "$r" && $nogpu PATH=$fake_h100 ./run_all.sh --quick --steps "$s1,$s1,$s1" >"$runs_tmp/q.out" 2>&1)
    check "run_all --quick --steps $s1,$s1,$s1: step$s1 runs once, README and docs untouched" bash -c "
        grep -q '^\[1/1\] step$s1 ' $runs_tmp/q.out && ! grep -q '^\[2/' $runs_tmp/q.out && $(declare -f clean); clean $r"
    for stub in none0 none6; do
        (cd "$r" && PATH="$runs_tmp/$stub:$PATH" ./run_all.sh --steps "$s1" >"$runs_tmp/$stub.out" 2>&1); rc=$?
        check "run_all, nvidia-smi says 'No devices were found' ($stub): no GPU, exit 0, nothing written" bash -c "
            [ $rc -eq 0 ] && grep -q 'no NVIDIA GPU found' $runs_tmp/$stub.out && [ ! -e $r/results/local/no-devices-were-found ]"
    done
    check "run_all --publish --steps $s1 refuses before building: exit 2, one line" \
        on_fake_h100 expect_exit 2 'needs every step' "$r/run_all.sh" --publish --steps "$s1"
    check "run_all --publish --quick refuses: exit 2, one line" \
        on_fake_h100 expect_exit 2 'quick' "$r/run_all.sh" --publish --quick
    check "DEFS=-DBM=64 run_all --publish refuses: exit 2, one line" \
        on_fake_h100 expect_exit 2 'DEFS is set' env DEFS=-DBM=64 "$r/run_all.sh" --publish
    check "after the refused publishes nothing tracked changed" clean "$r"
else
    skp "run_all in a scratch copy: no step built, read_floor missing, or the copy failed ($(tail -n1 "$runs_tmp/scratch.log" 2>/dev/null))"
fi

# ---- run_all.sh with fake step binaries: the comparison, failures, skips and --publish -------
# Each fake step writes the reference's CSV (step0 with one time 20% slower) or fails
# or exits 3; `make` is a stub that builds nothing, so the fakes are what runs.
if scratch "$runs_tmp/pub" >"$runs_tmp/scratch2.log" 2>&1; then
    r=$runs_tmp/pub ref=$r/results/h100-80gb-hbm3
    fake_step() {   # fake_step N EXIT [SED]: writes the reference CSV through SED, prints its log, exits EXIT
        printf '#!/bin/sh\nwhile [ $# -gt 0 ]; do [ "$1" = --csv ] && csv=$2; shift; done\n' >"$r/step$1"
        if [ "$2" = 3 ]; then printf 'echo "step%s: needs compute capability 9.0 or newer; Fake GPU is 8.0" >&2\n' "$1" >>"$r/step$1"
        else printf 'sed "%s" %s/step%s.csv >"$csv"\ncat %s/step%s.log\n' "${3:-s/^//}" "$ref" "$1" "$ref" "$1" >>"$r/step$1"; fi
        echo "exit $2" >>"$r/step$1"; chmod +x "$r/step$1"
    }
    all=$(cd "$r" && for d in steps/v*_*/; do b=$(basename "$d"); n=${b%%_*}; echo "${n#v}"; done | sort -n)
    for s in $all; do fake_step "$s" 0; done
    fake_step 0 0 '2s/^\(\([^,]*,\)\{6\}\)[0-9.]*/\1999999/'
    printf '#!/bin/sh\ncat %s/read_floor.log\n' "$ref" >"$r/read_floor"; chmod +x "$r/read_floor"
    fakes="$runs_tmp/make:$fake_h100"
    (cd "$r" && $nogpu PATH=$fakes ./run_all.sh --steps 0,1 >"$runs_tmp/cmp.out" 2>&1); rc=$?
    check "run_all (fake steps that pass): exit 0, tracked files untouched" bash -c "[ $rc -eq 0 ] && $(declare -f clean); clean $r"
    check "run_all prints and writes the comparison: v0 median 1.00 over 4 shapes, its slow one in the range" bash -c "
        grep -q '^| v0 | 4 | 1.00 | 1.00-[0-9.]* |' $runs_tmp/cmp.out && grep -q '^| v1 | ' $r/results/local/h100-80gb-hbm3/compare.md &&
        ! grep -q '^| v0 | 4 | 1.00 | 1.00-1.00 ' $runs_tmp/cmp.out"
    (cd "$r" && $nogpu PATH=$fakes ./run_all.sh --steps "0-99,0-99" >"$runs_tmp/r2.out" 2>&1)
    check "run_all --steps 0-99,0-99: each step once" bash -c "
        n=\$(ls -d $r/steps/v*_*/ | wc -l); grep -q \"^\[\$n/\$n\] \" $runs_tmp/r2.out && ! grep -q \"^\[\$((n + 1))/\" $runs_tmp/r2.out"
    fake_step 1 1
    (cd "$r" && $nogpu PATH=$fakes ./run_all.sh --steps 0,1 >"$runs_tmp/f.out" 2>&1); rc=$?
    check "run_all with a failing step: exit 1, the step listed as FAILED" bash -c "[ $rc -eq 1 ] && grep -q '^- FAILED v1: exit 1' $runs_tmp/f.out"
    fake_step 1 0; fake_step 2 3
    (cd "$r" && $nogpu PATH=$fakes ./run_all.sh --steps 0-2 >"$runs_tmp/s.out" 2>&1); rc=$?
    check "run_all with a step that exits 3: skipped with its reason, exit 0" bash -c "
        [ $rc -eq 0 ] && grep -q '^- skipped v2: needs compute capability 9.0' $runs_tmp/s.out && ! grep -q FAILED $runs_tmp/s.out"
    (cd "$r" && env -u DEFS -u NVCCFLAGS -u ARCH $nogpu PATH=$fakes ./run_all.sh --publish >"$runs_tmp/p1.out" 2>&1); rc=$?
    check "run_all --publish with a skipped step: refused in one line, exit 1, nothing tracked changed" bash -c "
        [ $rc -eq 1 ] && tail -n1 $runs_tmp/p1.out | grep -q 'not published' && $(declare -f clean); clean $r"
    fake_step 2 0
    (cd "$r" && env -u DEFS -u NVCCFLAGS -u ARCH $nogpu PATH=$fakes ./run_all.sh --publish >"$runs_tmp/p2.out" 2>&1); rc=$?
    check "run_all --publish of a complete passing run: exit 0, results/h100-80gb-hbm3/ replaced by the run's CSVs" bash -c "
        [ $rc -eq 0 ] && grep -q '^published: ' $runs_tmp/p2.out && grep -q '999999' $ref/step0.csv &&
        cmp -s $ref/step5.csv $r/results/local/h100-80gb-hbm3/step5.csv"
    # --resume: a run in two sittings keeps what the first finished, reruns a rebuilt step, and publishes as one
    loc=$r/results/local/h100-80gb-hbm3
    (cd "$r" && $nogpu PATH=$fakes ./run_all.sh --steps 0-2 >"$runs_tmp/r1.out" 2>&1)
    fake_step 1 0 's/^//;'   # step1 rebuilt: another binary
    (cd "$r" && env -u DEFS -u NVCCFLAGS -u ARCH $nogpu PATH=$fakes ./run_all.sh --resume --publish >"$runs_tmp/r3.out" 2>&1); rc=$?
    n=$(echo $all | wc -w)
    check "run_all --steps 0-2, then --resume --publish: 0 and 2 kept, step1 (rebuilt) and the rest run, published" bash -c "
        [ $rc -eq 0 ] && grep -q '^\[1/$n\] step0: kept from the earlier run (exit 0)$' $runs_tmp/r3.out &&
        grep -q '^\[3/$n\] step2: kept from the earlier run (exit 0)$' $runs_tmp/r3.out &&
        grep -q '^\[2/$n\] step1 \.\.\.$' $runs_tmp/r3.out && grep -q '^\[4/$n\] step3 \.\.\.$' $runs_tmp/r3.out &&
        grep -q '^published: ' $runs_tmp/r3.out && grep -q '999999' $ref/step0.csv && [ \$(ls $ref/step*.csv | wc -l) -eq $n ]"
    on_fakes() { (export CUDA_VISIBLE_DEVICES= PATH=$fakes; "$@"); }
    check "run_all --resume --quick after a full run: refused in one line, exit 2" \
        on_fakes expect_exit 2 'was made with quick=0' "$r/run_all.sh" --resume --quick --steps 0
    rm -rf "$loc"
    check "run_all --resume with no earlier run: refused in one line, exit 2" \
        on_fakes expect_exit 2 'no earlier run' "$r/run_all.sh" --resume --steps 0
else
    skp "run_all with fake steps: the scratch copy failed ($(tail -n1 "$runs_tmp/scratch2.log" 2>/dev/null))"
fi

# ---- usage errors -------------------------------------------------------------------
check "run_all.sh --steps '' -> exit 2, one line" expect_exit 2 "empty" ./run_all.sh --steps ""
check "run_all.sh --help ends at its own text" bash -c "./run_all.sh --help | tail -n1 | grep -vq 'set -'"
if [ -x ./read_floor ]; then
    for mb in "1,,2" ",1" "1,"; do check "read_floor --mb $mb -> exit 2" expect_exit 2 "sizes in MB" ./read_floor --mb "$mb"; done
fi
# In the scratch copy: an update_docs.sh that ignored its argument would blank this checkout's docs.
if [ -d "$runs_tmp/pub" ]; then
    mkdir -p "$runs_tmp/empty"
    for arg in "$runs_tmp/nonexistent" "$runs_tmp/empty" --help ""; do
        check "update_docs.sh ${arg:-(no argument)}: exit non-zero, README and docs unchanged" bash -c "
            cd $runs_tmp/pub && a=\$(md5sum README.md docs/*.md) && ! tools/update_docs.sh $arg >/dev/null 2>&1 &&
            [ \"\$a\" = \"\$(md5sum README.md docs/*.md)\" ]"
    done
fi

# ---- sweeps ---------------------------------------------------------------------------
check "sweep.sh with no GPU ('No devices were found'): exit 3, one line" \
    bash -c "PATH=$runs_tmp/none6:\$PATH; $(declare -f expect_exit); tmp=$runs_tmp; expect_exit 3 'no NVIDIA GPU' tools/sweep.sh -s 0 ''"
if [ -x ./step0 ]; then
    check "sweep.sh on a fake H100 (step0 exits 3): exit 3, one line" \
        on_fake_h100 expect_exit 3 'cannot run here' tools/sweep.sh -s 0 ''
fi
check "sweep.sh -s without a value -> exit 2, one line" expect_exit 2 "needs a value" tools/sweep.sh -s
check "sweep.sh --help ends at its own text" bash -c "tools/sweep.sh --help | tail -n1 | grep -vq 'set -'"
check "fp8_accum.sh with no GPU ('No devices were found'): exit 3, one line" \
    bash -c "PATH=$runs_tmp/none6:\$PATH; $(declare -f expect_exit); tmp=$runs_tmp; expect_exit 3 'no NVIDIA GPU' tools/fp8_accum.sh"
if [ -x ./step28 ]; then
    check "fp8_accum.sh on a fake H100 (step28 exits 3): exit 3, one line" \
        on_fake_h100 expect_exit 3 'step28 cannot run here' tools/fp8_accum.sh
fi
check "fp8_accum.sh -k 4096,1e4 -> exit 2, one line" expect_exit 2 "not a whole number" tools/fp8_accum.sh -k 4096,1e4
if [ -d "$runs_tmp/pub" ]; then
    printf '#!/bin/sh\necho "step16: 1 result FAILED the check"\nexit 1\n' >"$runs_tmp/pub/step16"
    check "sweep_split.sh when every run fails: exit 1, says so" bash -c "
        cd $runs_tmp/pub && PATH=$runs_tmp/make:\$PATH SHAPES=4096x4096 steps/v16_splitk_w4a16/sweep_split.sh run $runs_tmp/raw.csv 2>$runs_tmp/ss.err
        [ \$? -eq 1 ] && tail -n1 $runs_tmp/ss.err | grep -q 'every one of the 7 runs failed'"
fi

# ---- the Makefile: ARCH, what it builds, inspection targets --------------------------------
for stub in none0 none6; do
    check "make: nvidia-smi 'No devices were found' ($stub) -> ARCH sm_90, not sm_Nodeviceswerefound" bash -c "
        PATH=$runs_tmp/$stub:\$PATH env -u ARCH make -s -n step0 | grep -- ' -o step0 ' | grep -q -- '-arch=sm_90 '"
done
make -s -n ARCH=sm_75 all >"$runs_tmp/all75.n" 2>&1
# Every step from v16 on needs sm_80 or more (Part III and after: tensor cores), every step from v20 on sm_90a.
from16=$(ls -d steps/v*_*/ | sed 's|steps/v\([0-9]*\)_.*|\1|' | sort -n | awk '$1 >= 16' | tr '\n' ' ')
from20=$(awk '$1 >= 20' RS=' ' ORS=' ' <<<"$from16")
last=${from16% }; last=${last##* }
check "make -n ARCH=sm_75 all: builds v0-v15 (v9 and v15 among them), not v16-v$last" bash -c "
    grep -q -- '-arch=sm_75 .* -o step9 ' $runs_tmp/all75.n && grep -q -- ' -o step15 ' $runs_tmp/all75.n &&
    ! grep -qE -- ' -o step(1[6-9]|[2-9][0-9]) ' $runs_tmp/all75.n"
make -s skipped ARCH=sm_75 >"$runs_tmp/skip75" 2>&1
check "make skipped ARCH=sm_75: v16-v$last, one line each with the reason" bash -c "
    [ \"\$(cut -f1 $runs_tmp/skip75 | tr '\n' ' ')\" = '$from16' ] &&
    grep -q '^17	needs sm_80 (mma.sync' $runs_tmp/skip75 && grep -q '^20	uses sm_90a' $runs_tmp/skip75"
check "make skipped ARCH=sm_80: v20-v$last only; ARCH=sm_90: none" bash -c "
    [ \"\$(make -s skipped ARCH=sm_80 | cut -f1 | tr '\n' ' ')\" = '$from20' ] && [ -z \"\$(make -s skipped ARCH=sm_90)\" ]"
check "make step17 ARCH=sm_75: refused in one line before anything is built" bash -c "
    make -s step17 ARCH=sm_75 >$runs_tmp/m17.out 2>&1; [ \$? -eq 2 ] && [ \$(wc -l <$runs_tmp/m17.out) -eq 1 ] &&
    grep -q 'needs sm_80' $runs_tmp/m17.out && [ \"\$(make -s -n step17 ARCH=sm_75 2>&1 | grep -c nvcc)\" = 0 ]"
# The runtime declaration (kl_step) and the build's (the source line) must say the same.
for f in steps/v*_*/*.cu; do
    need=$(sed -n 's|^// needs: sm_\([0-9]*\).*|\1|p' "$f" | head -n1)
    if grep -q '^// build: sm_90a' "$f"; then
        check "$f: '// build: sm_90a' and step.only_cc = 90 agree" grep -q 'step\.only_cc = 90;' "$f"
    elif [ -n "$need" ]; then
        check "$f: '// needs: sm_$need' and step.min_cc = $need agree" grep -q "step\.min_cc = $need;" "$f"
    else
        check "$f: no '// needs:' line, so no step.min_cc either" bash -c "! grep -q 'step\.min_cc = [1-9]' $f"
    fi
done
check "make regs STEP=99 -> non-zero, one line naming the steps there are" bash -c "
    make -s regs STEP=99 >$runs_tmp/o 2>&1; [ \$? -ne 0 ] && [ \$(wc -l <$runs_tmp/o) -eq 1 ] && grep -q 'no step 99' $runs_tmp/o"
check "make regs with DEFS that break the build -> non-zero, a line saying what to do" bash -c "
    ! make -s regs STEP=0 DEFS=-DBLOCK=x >$runs_tmp/o 2>&1 && grep -q 'did not compile with DEFS=-DBLOCK=x' $runs_tmp/o"
check "make regs STEP=0 prints ptxas's registers line" bash -c "make -s regs STEP=0 | grep -q 'registers'"
check "make diff (no A, B) -> non-zero, one line" bash -c "
    make -s diff >$runs_tmp/o 2>&1; [ \$? -ne 0 ] && [ \$(wc -l <$runs_tmp/o) -eq 1 ] && grep -q 'A=6 B=7' $runs_tmp/o"
check "make diff A=6 -> non-zero" bash -c "! make -s diff A=6 >/dev/null 2>&1"
check "make diff A=6 B=7 -> exit 0 and the diff" bash -c "make -s diff A=6 B=7 | grep -q '^+++ steps/v7_'"
if [ -x ./step0 ]; then
    check "make sass with a cuobjdump that fails -> non-zero, a line saying what to do" bash -c "
        ! make -s sass STEP=0 CUOBJDUMP=false >$runs_tmp/o 2>&1 && grep -q \"make sass: 'false -sass ./step0' failed\" $runs_tmp/o"
    check "make sass without cuobjdump -> non-zero, a line saying what to do" bash -c "
        ! make -s sass STEP=0 CUOBJDUMP=$runs_tmp/no/cuobjdump >$runs_tmp/o 2>&1 && grep -q 'not found: it ships with the CUDA toolkit' $runs_tmp/o"
fi
# A learner's checkout may hold a tracked file deleted without `git rm`: the scratch copies above must still be made.
check "copy_tree: a tracked file deleted but not git rm-ed is left out, and the copy succeeds" bash -c "
    lib=\$PWD/tests/lib.sh; w=\$(mktemp -d) && cd \$w && git init -q && echo a >a && echo b >b && git add a b &&
    git -c user.email=t@t -c user.name=t commit -qm t && rm b && . \$lib && mkdir out && set -o pipefail && copy_tree out 2>err &&
    [ ! -s err ] && [ -f out/a ] && [ ! -e out/b ]; rc=\$?; rm -rf \$w; exit \$rc"
