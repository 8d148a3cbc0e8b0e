#!/usr/bin/env bash
# run_all.sh - build every step, run them, and set the results beside the committed reference.
#
#   ./run_all.sh                 all steps, default sizes (about ten minutes on an H100)
#   ./run_all.sh --steps 0-9     a range or list: --steps 3,5,7 or 0-3,16
#   ./run_all.sh --quick         shorter timing budget, for a first look
#   ./run_all.sh --publish       replace the committed reference with this run (below)
#   ./run_all.sh --resume        go on with an interrupted or partial run: the steps it
#                                finished keep their results, the others run
#   ./run_all.sh --help
#
# A run changes no tracked file. It writes, in folders git ignores:
#   results/local/<gpu>/  stepN.csv and stepN.log per step, read_floor.log, summary.md
#                         (one table per part) and compare.md (each step's times against
#                         the committed reference); both are printed at the end
#   plots/local/<gpu>/    the charts (*.png) and the data they are drawn from
# <gpu> is a short name of GPU 0 (h100-80gb-hbm3); each run replaces the last one's files
# (--resume adds to them).
#
# --publish then copies the run into results/<gpu>/ and plots/<gpu>/ and, on the
# reference GPU, regenerates the tables in README.md and docs/ (tools/update_docs.sh),
# but only a complete run: every step, none failed or skipped, not --quick, and no DEFS,
# NVCCFLAGS or ARCH set. Otherwise it refuses in one line, exits non-zero and leaves
# every tracked file as it was.
#
# A step that cannot run on this GPU (it exits 3: instructions this GPU lacks, more
# shared memory than this one has) is reported as skipped with its reason, and so is a
# step this GPU's architecture cannot build (make says why).
#
# --resume keeps every step that results/local/<gpu>/ says has finished (its CSV, log and
# exit status) with the binary built now, runs the rest (a step rebuilt since runs again),
# and then goes on as one run: the tables, the comparison, --publish. It refuses a folder
# written with other settings (--quick, DEFS, NVCCFLAGS, ARCH) or with none at all. A whole
# run in two sittings: ./run_all.sh --steps 0-20, then ./run_all.sh --resume --publish.
#
# Exit status: 0 when every step that could run passed, 1 when one failed, 2 bad usage or
# a failed build, 3 when nvidia-smi shows a GPU but nothing could run on it. Without a GPU
# it builds, says so, shows the committed reference results and exits 0.
set -uo pipefail
cd "$(dirname "$0")"
REF_GPU=h100-80gb-hbm3
. tools/lib.sh

die() { echo "run_all.sh: $2" >&2; exit "$1"; }
steps_spec="" have_spec=0 quick=0 publish=0 resume=0
while [ $# -gt 0 ]; do
    case $1 in
        --steps) [ $# -ge 2 ] || die 2 "--steps needs a value, e.g. --steps 0-9"
                 steps_spec=$2; have_spec=1; shift 2 ;;
        --steps=*) steps_spec=${1#--steps=}; have_spec=1; shift ;;
        --quick) quick=1; shift ;;
        --publish) publish=1; shift ;;
        --resume) resume=1; shift ;;
        -h|--help) print_header "$0"; exit 0 ;;
        *) die 2 "unknown option '$1' (see ./run_all.sh --help)" ;;
    esac
done

# ---- which steps ------------------------------------------------------------
available=$(step_dirs . | cut -d' ' -f1)
if [ $have_spec -eq 1 ]; then
    [ -n "$steps_spec" ] || die 2 "--steps is empty: give steps such as --steps 0-9 or --steps 3,5,7"
    selected=""
    IFS=, read -ra parts <<<"$steps_spec"
    for part in "${parts[@]}"; do
        if [[ $part =~ ^([0-9]+)-([0-9]+)$ ]]; then
            lo=${BASH_REMATCH[1]}; hi=${BASH_REMATCH[2]}
            [ "$lo" -le "$hi" ] || die 2 "--steps: '$part' is an empty range"
            for ((s = lo; s <= hi; s++)); do grep -qx "$s" <<<"$available" && selected+="$s "; done
        elif [[ $part =~ ^[0-9]+$ ]]; then
            grep -qx "$part" <<<"$available" || die 2 "--steps: there is no step $part (have: $(echo $available))"
            selected+="$part "
        else
            die 2 "--steps: '$part' is not a step number or range like 0-9"
        fi
    done
    [ -n "$selected" ] || die 2 "--steps $steps_spec selects no existing step (have: $(echo $available))"
    selected=$(tr ' ' '\n' <<<"$selected" | sed '/^$/d' | sort -un)   # each step once, in order
else
    selected=$available
fi
read -ra steps <<<"$(echo $selected)"

# ---- --publish: what can be refused before anything runs ----------------------
if [ $publish -eq 1 ]; then
    [ $quick -eq 0 ] || die 2 "--publish: a --quick run is not published (drop --quick)"
    [ "$(echo $selected)" = "$(echo $available)" ] || die 2 "--publish needs every step: drop --steps"
    for v in DEFS NVCCFLAGS ARCH; do
        { [ -n "${!v:-}" ] || [[ ${MAKEFLAGS:-} == *"$v="* ]]; } &&
            die 2 "--publish: $v is set; the reference is the default build (unset $v)"
    done
fi

# ---- the GPU: its name from nvidia-smi ("No devices were found" is none) ----------
gpu=$(gpu_name) || gpu=""
[ -n "$gpu" ] || [ $publish -eq 0 ] || die 3 "--publish: no NVIDIA GPU found (nvidia-smi shows none); nothing to publish"

# ---- build: what this GPU's architecture can build (make skipped says why not) ----------
declare -A why=()   # step -> why it was skipped
while IFS=$'\t' read -r n reason; do
    [ -n "$n" ] && why[$n]=$reason
done < <(make -s skipped 2>/dev/null)
to_build=()
for s in "${steps[@]}"; do [ -n "${why[$s]:-}" ] || to_build+=("step$s"); done
echo "building ${#to_build[@]} of ${#steps[@]} steps ..."
jobs=$(nproc 2>/dev/null || echo 4)
make -s -j"$jobs" "${to_build[@]}" read_floor || die 2 "the build failed (see above)"

if [ -z "$gpu" ]; then
    echo "no NVIDIA GPU found (nvidia-smi shows none): built everything, ran nothing."
    if [ -f "results/$REF_GPU/summary.md" ]; then
        echo "Reference results measured on the $REF_GPU (results/$REF_GPU/summary.md):"
        echo
        cat "results/$REF_GPU/summary.md"
    fi
    exit 0
fi
slug=$(echo "$gpu" | sed 's/^NVIDIA //' | tr 'A-Z' 'a-z' | sed 's/[^a-z0-9]\{1,\}/-/g; s/^-//; s/-$//')
res=results/local/$slug plt=plots/local/$slug
# What a step's numbers depend on besides its code: a resumed run must match it.
mode="quick=$quick DEFS=${DEFS:-} NVCCFLAGS=${NVCCFLAGS:-} ARCH=${ARCH:-}"
if [ $resume -eq 1 ]; then
    [ -f "$res/run.mode" ] || die 2 "--resume: no earlier run in $res/ to go on with: run without --resume"
    [ "$(cat "$res/run.mode")" = "$mode" ] ||
        die 2 "--resume: the run in $res/ was made with $(cat "$res/run.mode"), this one has $mode: run without --resume"
    rm -rf "$plt"
else
    rm -rf "$res" "$plt"
fi
mkdir -p "$res" "$plt"
echo "$mode" >"$res/run.mode"
args=()
[ $quick -eq 1 ] && args=(--budget 40 --iters 20 --warmup 1)

# ---- run ----------------------------------------------------------------------------
failed=() skipped=() ran=0 i=0 start=$SECONDS
for s in "${steps[@]}"; do
    i=$((i + 1))
    echo
    if [ -n "${why[$s]:-}" ]; then
        echo "[$i/${#steps[@]}] step$s skipped: ${why[$s]}"
        skipped+=("v$s: ${why[$s]}")
        continue
    fi
    sum=$(cksum <"step$s")   # the binary that made a kept result must be the one built now
    if [ $resume -eq 1 ] && [ -f "$res/step$s.rc" ] && [ "$(sed -n 2p "$res/step$s.rc")" = "$sum" ]; then
        rc=$(head -n1 "$res/step$s.rc")
        echo "[$i/${#steps[@]}] step$s: kept from the earlier run (exit $rc)"
    else
        echo "[$i/${#steps[@]}] step$s ..."
        rm -f "$res/step$s.rc"
        "./step$s" "${args[@]}" --csv "$res/step$s.csv" 2>&1 | tee "$res/step$s.log"
        rc=${PIPESTATUS[0]}
        printf '%s\n%s\n' "$rc" "$sum" >"$res/step$s.rc"   # once it has finished: a step cut short runs again
    fi
    case $rc in
        0) ran=$((ran + 1)) ;;
        3) reason=$(last_line "$res/step$s.log"); reason=${reason#step$s: }
           echo "[$i/${#steps[@]}] step$s skipped: cannot run on this GPU (exit 3)"
           skipped+=("v$s: $reason") ;;   # the step wrote no CSV (the harness leaves none when nothing ran)
        *) ran=$((ran + 1))
           echo "[$i/${#steps[@]}] step$s FAILED (exit $rc)"
           failed+=("v$s: exit $rc: $(last_line "$res/step$s.log")") ;;
    esac
done
echo
echo "${#steps[@]} steps in $((SECONDS - start)) s on $gpu: $ran ran, ${#failed[@]} of them failed, ${#skipped[@]} skipped"

# The fastest one launch can read the bytes of the memory-bound problems
# (docs/harness.md): MB of fp16 1024^2, 2048^2; int8 4096^2; fp16 4096^2;
# int4, q4_0, int8, fp16 at 8192^2; the same at 16384^2; 1 GiB.
echo
echo "read floor ..."
floor_args=(--mb 2.1,8.4,16.8,33.6,35.7,37.8,67.1,134.2,142.6,151,268.5,536.9,1073.7)
[ $quick -eq 1 ] && floor_args+=(--runs 10)
./read_floor "${floor_args[@]}" 2>&1 | tee "$res/read_floor.log"
floor_rc=${PIPESTATUS[0]}
case $floor_rc in
    0) ;;
    3) reason=$(last_line "$res/read_floor.log"); skipped+=("read_floor: ${reason#read_floor: }") ;;
    *) failed+=("read_floor: exit $floor_rc: $(last_line "$res/read_floor.log")") ;;
esac

# ---- tables, charts, and the comparison with the committed reference -------------------
if ls "$res"/step*.csv >/dev/null 2>&1; then
    tools/tables.sh "$res" "$plt" >"$res/summary.md"
    echo
    cat "$res/summary.md"
    tools/plots.sh "$plt"
    ref=results/$slug label="the committed results of this GPU"
    if ! ls "$ref"/step*.csv >/dev/null 2>&1; then
        ref=results/$REF_GPU label="ANOTHER GPU's: there are none for $slug, so the $REF_GPU's"
    fi
    {
        echo "## This run against the reference"
        echo
        echo "Reference: $ref/, $label."
        echo "time / ref: this run's time over the reference's at the same shapes (1.00: the same, 1.25:"
        echo "25% slower). cuBLAS / ref: the same for cuBLAS, timed beside each step; when it moves as"
        echo "much as the step, the GPU or its clocks differ, not the step."
        [ $quick -eq 0 ] || echo "This was a --quick run: fewer timed runs, so expect more spread."
        echo
        tools/compare.sh "$res" "$ref"
    } >"$res/compare.md"
else
    echo "## This run against the reference" >"$res/compare.md"
    echo >>"$res/compare.md"
    echo "No step produced results on $gpu." >>"$res/compare.md"
fi
[ ${#skipped[@]} -eq 0 ] && [ ${#failed[@]} -eq 0 ] || echo >>"$res/compare.md"
{
    for x in "${skipped[@]}"; do echo "- skipped $x"; done
    for x in "${failed[@]}"; do echo "- FAILED $x"; done
} >>"$res/compare.md"
echo
cat "$res/compare.md"
echo
echo "results: $res/ (summary.md, compare.md, stepN.csv and .log); charts: $plt/"

# nvidia-smi names a GPU, but not even read_floor could use it: no usable GPU here.
if [ $ran -eq 0 ] && [ $floor_rc -eq 3 ]; then
    die 3 "nothing could run on $gpu: no usable GPU (see the reasons above)"
fi
[ ${#failed[@]} -eq 0 ] || die 1 "${#failed[@]} step(s) failed (see above); results are in $res/"

# ---- --publish -----------------------------------------------------------------------
[ $publish -eq 1 ] || exit 0
[ ${#skipped[@]} -eq 0 ] || die 1 "--publish: not published: ${#skipped[@]} step(s) skipped on this GPU; a published run has every step"
dest=results/$slug dplt=plots/$slug
mkdir -p "$dest" "$dplt"
rm -f "$dest"/step*.csv "$dest"/step*.log "$dest"/read_floor.log   # no stale step survives
cp "$res"/step*.csv "$res"/step*.log "$res"/read_floor.log "$dest"/
tools/tables.sh "$dest" "$dplt" >"$dest/summary.md"
tools/plots.sh "$dplt"
if [ "$slug" = "$REF_GPU" ]; then
    tools/update_docs.sh "$dest" || die 1 "--publish: tools/update_docs.sh failed (above); $dest/ is written, the docs are not"
    echo "docs/ and README.md tables regenerated from $dest"
fi
echo "published: $dest/ and $dplt/ (review with git diff, then commit)"
