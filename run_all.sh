#!/usr/bin/env bash
# run_all.sh - build every step, run them, write results/<gpu>/ and plots/<gpu>/.
#
#   ./run_all.sh                 all steps, default sizes (a few minutes)
#   ./run_all.sh --steps 0-9     a range or list: --steps 3,5,7 or 0-3,16
#   ./run_all.sh --quick         shorter timing budget, for a first look
#   ./run_all.sh --help
#
# Writes results/<gpu>/stepN.csv and stepN.log (one per step), results/<gpu>/summary.md
# (one table per part, printed at the end too), read_floor.log and plots/<gpu>/*.png.
# Without a GPU it builds, says so, and shows the committed reference results.
set -uo pipefail
cd "$(dirname "$0")"
REF_GPU=h100-80gb-hbm3

usage() { sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'; }
steps_spec="" quick=0
while [ $# -gt 0 ]; do
    case $1 in
        --steps) [ $# -ge 2 ] || { echo "run_all.sh: --steps needs a value, e.g. --steps 0-9" >&2; exit 2; }
                 steps_spec=$2; shift 2 ;;
        --steps=*) steps_spec=${1#--steps=}; shift ;;
        --quick) quick=1; shift ;;
        -h|--help) usage; exit 0 ;;
        *) echo "run_all.sh: unknown option '$1' (see ./run_all.sh --help)" >&2; exit 2 ;;
    esac
done

available=$(for d in steps/v*_*/; do b=$(basename "$d"); echo "${b%%_*}"; done | sed 's/^v//' | sort -n)
if [ -n "$steps_spec" ]; then
    selected=""
    IFS=, read -ra parts <<<"$steps_spec"
    for part in "${parts[@]}"; do
        if [[ $part =~ ^([0-9]+)-([0-9]+)$ ]]; then
            lo=${BASH_REMATCH[1]}; hi=${BASH_REMATCH[2]}
            [ "$lo" -le "$hi" ] || { echo "run_all.sh: --steps: '$part' is an empty range" >&2; exit 2; }
            for ((s = lo; s <= hi; s++)); do grep -qx "$s" <<<"$available" && selected+="$s "; done
        elif [[ $part =~ ^[0-9]+$ ]]; then
            grep -qx "$part" <<<"$available" || { echo "run_all.sh: --steps: there is no step $part (have: $(echo $available))" >&2; exit 2; }
            selected+="$part "
        else
            echo "run_all.sh: --steps: '$part' is not a step number or range like 0-9" >&2; exit 2
        fi
    done
    [ -n "$selected" ] || { echo "run_all.sh: --steps $steps_spec selects no existing step (have: $(echo $available))" >&2; exit 2; }
else
    selected=$(echo $available)
fi
read -ra steps <<<"$selected"

echo "building ${#steps[@]} steps ..."
jobs=$(nproc 2>/dev/null || echo 4)
if ! make -s -j"$jobs" $(printf 'step%s ' "${steps[@]}") read_floor; then
    echo "run_all.sh: the build failed (see above)" >&2
    exit 2
fi

gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader -i 0 2>/dev/null | head -n1)
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
res=results/$slug plt=plots/$slug
mkdir -p "$res" "$plt"
args=()
[ $quick -eq 1 ] && args=(--budget 40 --iters 20 --warmup 1)

failed=0 i=0 start=$SECONDS
for s in "${steps[@]}"; do
    i=$((i + 1))
    echo
    echo "[$i/${#steps[@]}] step$s ..."
    "./step$s" "${args[@]}" --csv "$res/step$s.csv" 2>&1 | tee "$res/step$s.log"
    rc=${PIPESTATUS[0]}
    if [ $rc -ne 0 ]; then
        echo "[$i/${#steps[@]}] step$s exited with $rc"
        failed=$((failed + 1))
    fi
done
echo
echo "ran ${#steps[@]} steps in $((SECONDS - start)) s on $gpu"

# The fastest one launch can read the bytes of the memory-bound problems
# (docs/harness.md): MB of fp16 1024^2, 2048^2; int8 4096^2; fp16 4096^2;
# int4, q4_0, int8, fp16 at 8192^2; the same at 16384^2; 1 GiB.
echo
echo "read floor ..."
floor_args=(--mb 2.1,8.4,16.8,33.6,35.7,37.8,67.1,134.2,142.6,151,268.5,536.9,1073.7)
[ $quick -eq 1 ] && floor_args+=(--runs 10)
if ! ./read_floor "${floor_args[@]}" 2>&1 | tee "$res/read_floor.log"; then
    echo "run_all.sh: read_floor failed (see above)" >&2
    failed=$((failed + 1))
fi

tools/tables.sh "$res" "$plt" >"$res/summary.md"
echo
cat "$res/summary.md"
tools/plots.sh "$plt"
if [ "$slug" = "$REF_GPU" ]; then
    tools/update_docs.sh "$res" && echo "docs/ and README.md tables regenerated from $res"
fi
if [ $failed -ne 0 ]; then
    echo "run_all.sh: $failed step(s) failed (see above)" >&2
    exit 1
fi
