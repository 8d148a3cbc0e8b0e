#!/usr/bin/env bash
# sweep_split.sh - the split-factor sweep behind split_table in w4a16.cu.
#
#   steps/v16_splitk_w4a16/sweep_split.sh run RAW.csv      # ~1 minute on an H100
#   steps/v16_splitk_w4a16/sweep_split.sh table RAW.csv > results/<gpu>/sweeps/step16.md
#
# "run" times ./step16 --split S for every shape of the op and the split
# factors worth trying there, and appends the CSV rows (S as an extra last
# column) to RAW.csv.  "table" prints one markdown row per shape and M: the
# splitk time in us for each S (the fastest in bold), the waves of blocks
# tiles x S / (BLOCKS_PER_SM x SMS) for M <= 8 and for M > 8, and dp and
# cuBLAS for comparison.  The M <= 8 kernel's blocks own BN (default 128)
# rows of W, the M > 8 kernel's BN_HI (64); BLOCKS_PER_SM (default 3) and
# BLOCKS_PER_SM_HI (4) are what the occupancy calculator gives for the two
# kernels' registers: see `make regs STEP=16`.  SHAPES="8192x8192 4096x4096"
# limits "run" to those shapes (several runs may append to one RAW.csv).
# A build with other blocks (-DWARPS_HI=8: BN_HI = 128) may want other
# S: S_MULT=2 doubles every S tried (and give "table" that build's BN).
set -euo pipefail
cd "$(dirname "$0")/../.."
. tools/lib.sh
mode=${1:-}; raw=${2:-}
[ -n "$mode" ] && [ -n "$raw" ] || { sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
BN=${BN:-128} BN_HI=${BN_HI:-64} BLOCKS_PER_SM=${BLOCKS_PER_SM:-3} BLOCKS_PER_SM_HI=${BLOCKS_PER_SM_HI:-4} SMS=${SMS:-132}

# shape (N K) and the split factors tried there: around one wave of blocks
shapes=(
    "4096 4096 2 4 6 8 12 16 24"
    "8192 8192 2 3 4 5 6 8 12"
    "16384 16384 1 2 3 4 6 8"
    "11008 4096 2 3 4 5 6 8"
    "4096 11008 4 8 12 16 20 24"
    "14336 4096 1 2 3 4 6"
    "4096 14336 4 8 12 16 20 24"
    "128256 4096 1 2 3"
)

if [ "$mode" = run ]; then
    make -s step16   # the default build: a binary left by a -D sweep is rebuilt (the Makefile's flag stamps)
    tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
    runs=0 failed=0
    for sh in "${shapes[@]}"; do
        set -- $sh; n=$1; k=$2; shift 2
        [ -z "${SHAPES:-}" ] || [[ " $SHAPES " == *" ${n}x${k} "* ]] || continue
        for s in "$@"; do
            s=$(( s * ${S_MULT:-1} )); [ "$s" -le 32 ] || continue
            runs=$((runs + 1)) rc=0
            ./step16 -n "$n" -k "$k" --split "$s" --iters 50 --csv "$tmp/r.csv" >"$tmp/log" 2>&1 || rc=$?
            if [ $rc -eq 3 ]; then   # this GPU cannot run step16 at all: the other runs would say the same
                echo "sweep_split.sh: step16 cannot run here: $(last_line "$tmp/log")" >&2; exit 3
            elif [ $rc -ne 0 ]; then
                failed=$((failed + 1))
                echo "sweep: -n $n -k $k --split $s failed (exit $rc):" >&2; tail -n 5 "$tmp/log" >&2; continue
            fi
            [ -s "$raw" ] || echo "$(head -n1 "$tmp/r.csv"),split" >"$raw"
            tail -n +2 "$tmp/r.csv" | sed "s/\$/,$s/" >>"$raw"
            echo "sweep: -n $n -k $k --split $s done" >&2
        done
    done
    [ $runs -gt 0 ] || { echo "sweep_split.sh: SHAPES='${SHAPES:-}' matches no shape of the sweep" >&2; exit 2; }
    [ $failed -lt $runs ] || { echo "sweep_split.sh: every one of the $runs runs failed (see above)" >&2; exit 1; }
    [ $failed -eq 0 ] || { echo "sweep_split.sh: $failed of $runs runs failed (see above); $raw has the others" >&2; exit 1; }
    exit 0
fi

[ "$mode" = table ] || { echo "sweep_split.sh: mode is run or table" >&2; exit 2; }
# CSV: step,op,dtype,m,n,k,time_us,...,cublas_time_us(10),...,status(14),variant(15),split(16)
awk -F, -v bn="$BN" -v bnh="$BN_HI" -v bps="$BLOCKS_PER_SM" -v bpsh="$BLOCKS_PER_SM_HI" -v sms="$SMS" '
NR == 1 { next }
{
    key = $5 "x" $6; m = $4
    if (!(key in seen)) { seen[key] = 1; order[++nk] = key; N[key] = $5; K[key] = $6 }
    if (!((key, m) in seenm)) { seenm[key, m] = 1; ms[key] = ms[key] " " m }
    if ($15 == "splitk") {
        if (!((key, $16) in seens)) { seens[key, $16] = 1; ss[key] = ss[key] " " $16 }
        t[key, m, $16] = $7; ok[key, m, $16] = ($14 == "PASS")
    }
    if ($15 == "dp") dp[key, m] = $7
    cb[key, m] = $10
}
END {
    printf "Split-factor sweep of step 16 (splitk kernel, time in us, median of up to 50 cold-L2 runs; fastest in bold).\n"
    printf "waves = tiles x S / (blocks per SM x %d SMs): at M <= 8 %d blocks per SM and tiles = ceil(N / %d), at M > 8 %d and ceil(N / %d).\n\n", sms, bps, bn, bpsh, bnh
    for (i = 1; i <= nk; ++i) {
        key = order[i]; nS = split(substr(ss[key], 2), S, " "); nm = split(substr(ms[key], 2), Ms, " ")
        tiles = int((N[key] + bn - 1) / bn); tilesh = int((N[key] + bnh - 1) / bnh); G = int(K[key] / 128); NST = int((G + 1) / 2)   # stages of 2 groups: the launcher caps S there
        printf "**N = %d, K = %d**: %d tiles (M <= 8) or %d (M > 8), %d groups of 128 along K\n\n", N[key], K[key], tiles, tilesh, G
        printf "| M |"; for (j = 1; j <= nS; ++j) printf " S=%s |", S[j]; printf " dp | cuBLAS fp16 |\n"
        printf "|---|"; for (j = 1; j <= nS; ++j) printf "---|"; printf "---|---|\n"
        for (h = 0; h < 2; ++h) {
            b = h ? bpsh : bps; tl = h ? tilesh : tiles
            printf "| waves, M %s |", h ? "> 8" : "<= 8"
            for (j = 1; j <= nS; ++j) { s = S[j] > NST ? NST : S[j]; printf " %.2f |", tl * s / (b * sms) }
            printf " %.2f | |\n", tl / (b * sms)
        }
        for (a = 1; a <= nm; ++a) {
            m = Ms[a]; best = ""
            for (j = 1; j <= nS; ++j) if ((key, m, S[j]) in t && (best == "" || t[key, m, S[j]] + 0 < t[key, m, best] + 0)) best = S[j]
            printf "| %s |", m
            for (j = 1; j <= nS; ++j) {
                c = ((key, m, S[j]) in t) ? sprintf("%.1f", t[key, m, S[j]]) : "-"
                if (!ok[key, m, S[j]]) c = c " FAIL"
                printf (S[j] == best ? " **%s** |" : " %s |"), c
            }
            printf " %.1f | %.1f |\n", dp[key, m], cb[key, m]
        }
        printf "\n"
    }
}' "$raw"
