# cpu_plans.sh - sourced by run_tests.sh (CPU part): the plans the steps of Parts IV and V choose,
# printed by --plan SMS on the host (no GPU), against the counts their pages teach.
# Uses ok, bad, skp, check, expect_exit, $tmp, $built.

# is_built STEP: stepSTEP was built (make test builds every step; mutants.sh the ones named here).
is_built() { [[ " $built " == *" $1 "* ]]; }

# plan_refuses STEP "PATTERN" ARGS...: stepSTEP ARGS exits 2 with a line matching PATTERN,
# before any GPU is asked
plan_refuses() {
    local s=$1 pat=$2; shift 2
    is_built "$s" || { skp "step$s $*: step$s is not built"; return; }
    check "step$s $*: refused with exit 2 before any GPU is asked" expect_exit 2 "$pat" "./step$s" "$@"
}
# plan_is STEP SMS "ARGS" "PATTERN": --plan prints a line matching PATTERN (grep -E)
plan_is() {
    local s=$1 sms=$2 args=$3 pat=$4
    is_built "$s" || { skp "step$s --plan: step$s is not built"; return; }
    check "step$s --plan $sms $args: $pat" bash -c \
        "./step$s --plan $sms $args >'$tmp/plan.out' 2>&1 && grep -Eq -- '$pat' '$tmp/plan.out' || { cat '$tmp/plan.out'; exit 1; }"
}
# plans_count STEP LINES "WHAT": --plan 132 over the public shapes prints LINES plans, with no GPU
plans_count() {
    local s=$1 n=$2 what=$3
    is_built "$s" || { skp "step$s --plan, the public shapes: step$s is not built"; return; }
    check "step$s --plan runs with no GPU: every public shape, $what" bash -c \
        "[ \"\$(env CUDA_VISIBLE_DEVICES= ./step$s --plan 132 | grep -c '^  plan')\" -eq $n ]"
}
# v25: split-K where tiles are few (its page's table), the fixed grid beside it
plan_is 25 132 "-m 32 -n 4096 -k 4096" "^  plan for 32 x 4096 x 4096: tile 128 x 128, split 4: 128 units on 132 SMs, 1 wave$"
plan_is 25 132 "-m 32 -n 4096 -k 4096" "^  plan \(fixed\) for 32 x 4096 x 4096: tile 128 x 256, split 1: 16 units"
plan_is 25 132 "-m 32 -n 4096 -k 16384" "^  plan for 32 x 4096 x 16384: tile 128 x 128, split 4: 128 units on 132 SMs, 1 wave$"
plan_is 25 132 "-m 4096 -n 4096 -k 512" "^  plan for 4096 x 4096 x 512: tile 128 x 256, split 1: 512 units on 132 SMs, 4 waves$"
# v26: the swapped tile at M <= 64, n the smallest of 8, 16, 32, 64 that holds M
plan_is 26 132 "-m 8 -n 4096 -k 4096" "^  plan for 8 x 4096 x 4096: swapped, 128 weight rows x 8 activations, split 4: 128 units"
plan_is 26 132 "-m 33 -n 4096 -k 4096" "swapped, 128 weight rows x 64 activations"
plan_is 26 132 "-m 65 -n 4096 -k 4096" "^  plan for 65 x 4096 x 4096: tile 128 x 128"
# v27: the width of least waves x k-step cost (its page's waves table and exercise)
plan_is 27 132 "-m 1024 -n 1024 -k 1024" "^  plan for 1024 x 1024 x 1024: tile 128 x 64, split 1: 128 units on 132 SMs, 1 wave$"
plan_is 27 132 "-m 1024 -n 1024 -k 1024" "^  plan \(two_widths\) for 1024 x 1024 x 1024: tile 128 x 128, split 1: 64 units"
plan_is 27 132 "-m 1536 -n 1536 -k 1536" "^  plan for 1536 x 1536 x 1536: tile 128 x 192, split 1: 96 units on 132 SMs, 1 wave$"
plan_is 27 132 "-m 1024 -n 4096 -k 4096" "^  plan for 1024 x 4096 x 4096: tile 128 x 256, split 1: 128 units"
plan_is 27 132 "-m 8192 -n 8192 -k 8192" "^  plan for 8192 x 8192 x 8192: tile 128 x 256, split 1: 2048 units on 132 SMs, 16 waves$"
plan_is 27 132 "-m 256 -n 4096 -k 4096" "^  plan \(two_widths\) for 256 x 4096 x 4096: tile 128 x 128, split 2: 128 units"
# the same rule on another GPU: 114 SMs (an H100 PCIe), 1536^3 in 96 tiles is still one wave
plan_is 27 114 "-m 1536 -n 1536 -k 1536" "tile 128 x 192, split 1: 96 units on 114 SMs, 1 wave$"
# v34: v27's plan, its divisors checked on the host against `/` at every n the kernel divides
plan_is 34 132 "-m 1536 -n 1536 -k 1536" "^  plan for 1536 x 1536 x 1536: tile 128 x 192, split 1: 96 units on 132 SMs, 1 wave$"
plan_is 34 132 "-m 200 -n 1000 -k 4104 --split 5" "^  plan for 200 x 1000 x 4104: tile 128 x 64, split 5: 160 units on 132 SMs, 2 waves$"
plan_is 34 132 "-m 2100 -n 136 -k 640" "^  plan for 2100 x 136 x 640: tile 128 x 64, split 1: 51 units"   # 17 rows of tiles: a last group of 1
plan_is 34 132 "-m 17 -n 8192 -k 2048 --split 3" "^  plan for 17 x 8192 x 2048: swapped, 128 weight rows x 32 activations, split 3: 192 units"
plan_is 34 132 "-m 200000 -n 200000 -k 8192 --swap 1 --bn 64 --split 16" "split 16: 78150000 units on 132 SMs"
plans_count 34 24 "one plan each (24 lines), every divisor holds"
# v35: the same rule over 13 widths, 64 to 256 in steps of 16; w64 is v34's plan (its page's tables)
plan_is 35 132 "-m 1536 -n 1536 -k 1536" "^  plan for 1536 x 1536 x 1536: tile 128 x 144, split 1: 132 units on 132 SMs, 1 wave$"
plan_is 35 132 "-m 1536 -n 1536 -k 1536" "^  plan \(w64\) for 1536 x 1536 x 1536: tile 128 x 192, split 1: 96 units on 132 SMs, 1 wave$"
plan_is 35 132 "-m 1536 -n 1536 -k 1536" "^    waves x ns a k step: 256 1 x [0-9.]+ = [0-9]+, 240 .*, 144 1 x [0-9.]+ = [0-9]+, 128 2 x "
plan_is 35 132 "-m 1536 -n 1536 -k 1536 --bn 80" "^  plan for 1536 x 1536 x 1536: tile 128 x 80, split 1: 240 units on 132 SMs, 2 waves$"
plan_is 35 132 "-m 32 -n 4096 -k 4096" "^  plan for 32 x 4096 x 4096: swapped, 128 weight rows x 32 activations, split 4: 128 units"
plan_refuses 35 "steps of 16" --plan 132 -m 1536 -n 1536 -k 1536 --bn 72
plans_count 35 48 "a plan for each variant (48 lines), every divisor holds"
# v36: v35's plans, two k steps a turn at every width and the swapped tiles; v35 is the control
plan_is 36 132 "-m 1536 -n 1536 -k 1536" "^  plan for 1536 x 1536 x 1536: tile 128 x 144, split 1: 132 units on 132 SMs, 1 wave, two k steps a turn$"
plan_is 36 132 "-m 1536 -n 1536 -k 1536" "^  plan \(v35\) for 1536 x 1536 x 1536: tile 128 x 144, split 1: 132 units on 132 SMs, 1 wave$"
plan_is 36 132 "-m 256 -n 4096 -k 14336" "^  plan for 256 x 4096 x 14336: tile 128 x 64, split 1: 128 units on 132 SMs, 1 wave, two k steps a turn$"
plan_is 36 132 "-m 32 -n 4096 -k 4096" "^  plan for 32 x 4096 x 4096: swapped, 128 weight rows x 32 activations, split 4: 128 units on 132 SMs, 1 wave, two k steps a turn$"
plan_is 36 132 "-m 8192 -n 8192 -k 8192" "^  plan \(v35\) for 8192 x 8192 x 8192: tile 128 x 256, split 1: 2048 units on 132 SMs, 16 waves$"
plan_refuses 36 "steps of 16" --plan 132 -m 1536 -n 1536 -k 1536 --bn 72
plans_count 36 48 "a plan for each variant (48 lines), every divisor holds"
# v39: v36's plans (the same rule and cost table); v36 is the control
plan_is 39 132 "-m 256 -n 4096 -k 4096" "^  plan for 256 x 4096 x 4096: tile 128 x 64, split 1: 128 units on 132 SMs, 1 wave$"
plan_is 39 132 "-m 256 -n 4096 -k 4096" "^  plan \(v36\) for 256 x 4096 x 4096: tile 128 x 64, split 1: 128 units on 132 SMs, 1 wave$"
plan_is 39 132 "-m 64 -n 4096 -k 4096" "^  plan for 64 x 4096 x 4096: swapped, 128 weight rows x 64 activations, split 4: 128 units on 132 SMs, 1 wave$"
plan_refuses 39 "steps of 16" --plan 132 -m 1536 -n 1536 -k 1536 --bn 72
plans_count 39 48 "a plan for each variant (48 lines), every divisor holds"
# v40: the decode tile where its blocks fit the GPU at once and fill at least half of it; v39 is the control
plan_is 40 132 "-m 64 -n 4096 -k 4096" "^  plan for 64 x 4096 x 4096: decode tile, 64 weight rows x 32 tokens, clusters of 2, K whole: 64 cluster units \(128 blocks\) on 132 SMs$"
plan_is 40 132 "-m 64 -n 4096 -k 4096" "^  plan \(v39\) for 64 x 4096 x 4096: swapped, 128 weight rows x 64 activations, split 4: 128 units on 132 SMs, 1 wave$"
plan_is 40 132 "-m 32 -n 4096 -k 14336" "^  plan for 32 x 4096 x 14336: decode tile, 64 weight rows x 16 tokens, clusters of 2, K whole: 64 cluster units \(128 blocks\)"
plan_is 40 132 "-m 64 -n 8192 -k 4096" "^  plan for 64 x 8192 x 4096: decode tile, 64 weight rows x 64 tokens, clusters of 1, K whole: 128 cluster units \(128 blocks\)"
plan_is 40 132 "-m 8 -n 4096 -k 4096" "^  plan for 8 x 4096 x 4096: swapped, 128 weight rows x 8 activations, split 4: 128 units"
plan_is 40 132 "-m 64 -n 14336 -k 4096" "^  plan for 64 x 14336 x 4096: swapped, 128 weight rows x 64 activations, split 1: 112 units"
plan_is 40 132 "-m 64 -n 2048 -k 4096" "^  plan for 64 x 2048 x 4096: swapped, 128 weight rows x 64 activations, split 4: 64 units"
plan_is 40 132 "-m 64 -n 4096 -k 4096 --split 2" "^  plan for 64 x 4096 x 4096: swapped, 128 weight rows x 64 activations, split 2: 64 units"
plan_is 40 132 "-m 64 -n 4096 -k 4096 --dec 2 --cl 1 --dn 32" "^  plan for 64 x 4096 x 4096: decode tile, 64 weight rows x 32 tokens, clusters of 1, K whole: 128 cluster units \(128 blocks\)"
plan_refuses 40 "add --dec 2" --plan 132 -m 64 -n 4096 -k 4096 --cl 1
plan_refuses 40 "never splits K" --plan 132 -m 64 -n 4096 -k 4096 --dec 2 --split 2
plan_refuses 40 "8, 16, 32 or 64 tokens" --plan 132 -m 64 -n 4096 -k 4096 --dec 2 --dn 24
plan_refuses 40 "at most 64 tokens" --plan 132 -m 65 -n 4096 -k 4096 --dec 2
plans_count 40 48 "a plan for each variant (48 lines), every divisor holds"
# v41: pairs side by side where the plan narrowed the tile to at most half the widest and N is at most 4 tiles across
plan_is 41 132 "-m 8192 -n 256 -k 4096" "^  plan for 8192 x 256 x 4096: tile 128 x 128 in pairs sharing A, split 1: 128 units \(64 pair units\) on 132 SMs, 1 wave$"
plan_is 41 132 "-m 8192 -n 256 -k 4096" "^  plan \(v40\) for 8192 x 256 x 4096: tile 128 x 128, split 1: 128 units on 132 SMs, 1 wave$"
plan_is 41 132 "-m 4096 -n 512 -k 8192" "^  plan for 4096 x 512 x 8192: tile 128 x 128 in pairs sharing A, split 1: 128 units \(64 pair units\)"
plan_is 41 132 "-m 8192 -n 192 -k 4096" "^  plan for 8192 x 192 x 4096: tile 128 x 96 in pairs sharing A, split 1: 128 units \(64 pair units\)"
plan_is 41 132 "-m 256 -n 8192 -k 8192" "^  plan for 256 x 8192 x 8192: tile 128 x 128, split 1: 128 units"   # M small: never (pairs share A)
plan_is 41 132 "-m 256 -n 4096 -k 4096" "^  plan for 256 x 4096 x 4096: tile 128 x 64, split 1: 128 units on 132 SMs, 1 wave$"   # 64 wide: never
plan_is 41 132 "-m 256 -n 14336 -k 4096" "^  plan for 256 x 14336 x 4096: tile 128 x 224, split 1: 128 units"   # wider than half: never
plan_is 41 132 "-m 2816 -n 768 -k 4096" "^  plan for 2816 x 768 x 4096: tile 128 x 128, split 1: 132 units"   # 6 and 22 tiles across: never
plan_is 41 132 "-m 64 -n 4096 -k 4096" "^  plan for 64 x 4096 x 4096: decode tile, 64 weight rows x 32 tokens, clusters of 2"
plan_is 41 132 "-m 300 -n 1000 -k 520 --bn 96 --pair 2 --split 3" "^  plan for 300 x 1000 x 520: tile 128 x 96 in pairs sharing A, split 3: 108 units \(54 pair units\)"
plan_refuses 41 "never paired" --plan 132 -m 8 -n 4096 -k 4096 --pair 2
plans_count 41 48 "a plan for each variant (48 lines), every divisor holds"
# v43: the small tile (the decode kernel at M > 64) where v41's plan keeps at most half the SMs busy; v41 is the control
plan_is 43 132 "-m 512 -n 512 -k 512" "^  plan for 512 x 512 x 512: small tile, 64 weight rows x 32 tokens, clusters of 1, K whole: 128 cluster units \(128 blocks\) on 132 SMs$"
plan_is 43 132 "-m 512 -n 512 -k 512" "^  plan \(v41\) for 512 x 512 x 512: tile 128 x 64, split 1: 32 units on 132 SMs, 1 wave$"
plan_is 43 132 "-m 512 -n 512 -k 2048" "^  plan for 512 x 512 x 2048: small tile, 64 weight rows x 32 tokens, clusters of 1, K whole: 128 cluster units"   # v41: split 2, 64 units
plan_is 43 132 "-m 384 -n 768 -k 1024" "^  plan for 384 x 768 x 1024: small tile, 64 weight rows x 64 tokens, clusters of 1, K whole: 72 cluster units"   # 32 tokens: 144 blocks, two waves
plan_is 43 132 "-m 512 -n 512 -k 8192" "^  plan for 512 x 512 x 8192: tile 128 x 64, split 4: 128 units"   # v41's split fills the GPU: kept
plan_is 43 132 "-m 1024 -n 1024 -k 1024" "^  plan for 1024 x 1024 x 1024: tile 128 x 64, split 1: 128 units"   # more than half busy: kept
plan_is 43 132 "-m 64 -n 4096 -k 4096" "^  plan for 64 x 4096 x 4096: decode tile, 64 weight rows x 32 tokens, clusters of 2"   # M <= 64: v40's rule
plan_is 43 132 "-m 512 -n 512 -k 512 --dec 1" "^  plan for 512 x 512 x 512: tile 128 x 64, split 1: 32 units"
plan_is 43 132 "-m 512 -n 512 -k 512 --bn 64" "^  plan for 512 x 512 x 512: tile 128 x 64, split 1: 32 units"   # a forced width: v41's kernels
plan_is 43 132 "-m 4097 -n 100 -k 64 --dec 2" "^  plan for 4097 x 100 x 64: small tile, 64 weight rows x 64 tokens, clusters of 1, K whole: 130 cluster units"
plan_is 43 132 "-m 64 -n 1000 -k 512 --swap 1" "^  plan for 64 x 1000 x 512: tile 128 x 64, split 1: 16 units"   # --swap 1: 128-row tiles, never the (swapped) small tile
plan_refuses 43 "never paired" --plan 132 -m 512 -n 512 -k 512 --dec 2 --pair 2
plans_count 43 48 "a plan for each variant (48 lines), every divisor holds"
# v45: ping-pong where v43's plan is single 128-row tiles, K whole, two waves or more, and K 512 to 1024; v43 is the control
plan_is 45 132 "-m 4096 -n 4096 -k 512" "^  plan for 4096 x 4096 x 512: tile 128 x 176, split 1: 768 units on 132 SMs, 6 waves, ping-pong$"
plan_is 45 132 "-m 4096 -n 4096 -k 512" "^  plan \(v43\) for 4096 x 4096 x 512: tile 128 x 256, split 1: 512 units on 132 SMs, 4 waves$"
plan_is 45 132 "-m 4096 -n 4096 -k 1024" "^  plan for 4096 x 4096 x 1024: tile 128 x 176, split 1: 768 units on 132 SMs, 6 waves, ping-pong$"
plan_is 45 132 "-m 4096 -n 4096 -k 448" "^  plan for 4096 x 4096 x 448: tile 128 x 256, split 1: 512 units on 132 SMs, 4 waves$"   # 7 k steps: under PP_MIN_KT
plan_is 45 132 "-m 4096 -n 4096 -k 1088" "^  plan for 4096 x 4096 x 1088: tile 128 x 256, split 1: 512 units on 132 SMs, 4 waves$"   # 17: over PP_MAX_KT
plan_is 45 132 "-m 1000 -n 3000 -k 520" "^  plan for 1000 x 3000 x 520: tile 128 x 192, split 1: 128 units on 132 SMs, 1 wave$"   # one wave: no second tile to overlap
plan_is 45 132 "-m 8192 -n 256 -k 512" "^  plan for 8192 x 256 x 512: tile 128 x 128 in pairs sharing A"   # pairs: v43's plan
plan_is 45 132 "-m 4096 -n 4096 -k 512 --pp 1" "^  plan for 4096 x 4096 x 512: tile 128 x 256, split 1: 512 units on 132 SMs, 4 waves$"
plan_is 45 132 "-m 4096 -n 4096 -k 4096 --pp 2" "^  plan for 4096 x 4096 x 4096: tile 128 x 176, split 1: 768 units on 132 SMs, 6 waves, ping-pong$"
plan_is 45 132 "-m 4096 -n 4096 -k 512 --bn 128" "^  plan for 4096 x 4096 x 512: tile 128 x 128, split 1: 1024 units on 132 SMs, 8 waves, ping-pong$"   # a forced width, 128 to 192: ping-pong at it
plan_refuses 45 "at most 192 wide" --plan 132 -m 512 -n 512 -k 512 --pp 2 --bn 256
plans_count 45 48 "a plan for each variant (48 lines), every divisor holds"
# v30: whole rounds stay whole; a short last round splits along K where the pieces keep 32 k tiles (its page's table)
plan_is 30 132 "-m 4096 -n 4096 -k 14336" "^  plan for 4096 x 4096 x 14336: 704 tiles of 128 x 192 in clusters of 2, 352 on 66 clusters: 5 whole rounds, the last 22 split 3 ways \(66 pieces\)$"
plan_is 30 132 "-m 4096 -n 4096 -k 14336" "^  plan \(no_split\) for 4096 x 4096 x 14336: .*: 6 rounds, none split$"
plan_is 30 132 "-m 4096 -n 4096 -k 4096" "^  plan for 4096 x 4096 x 4096: .*: 6 rounds, none split$"
plan_is 30 132 "-m 2048 -n 2048 -k 2048" "^  plan for 2048 x 2048 x 2048: .*: 2 rounds, none split$"
plan_is 30 132 "-m 4096 -n 7168 -k 16384" "^  plan for 4096 x 7168 x 16384: .*: 9 whole rounds, the last 14 split 4 ways \(56 pieces\)$"
plan_is 30 132 "-m 8192 -n 8192 -k 8192" "^  plan for 8192 x 8192 x 8192: .*: 21 rounds, none split$"
plan_is 30 132 "-m 1024 -n 1024 -k 8192" "^  plan for 1024 x 1024 x 8192: .*: 0 whole rounds, the last 24 split 2 ways \(48 pieces\)$"
plan_is 30 132 "-m 1024 -n 1024 -k 1024" "^  plan for 1024 x 1024 x 1024: .*: 1 round, none split$"
# v31: the width of least rounds x width (its page's table); a tie goes to 128, w192 is v29's tile
plan_is 31 132 "-m 4096 -n 4096 -k 4096" "^  plan for 4096 x 4096 x 4096: 128 x 128 tiles, two k blocks per turn \(rounds x width: 128 wide 8 x 128 = 1024, 192 wide 6 x 192 = 1152\)$"
plan_is 31 132 "-m 4096 -n 4096 -k 4096" "^  plan \(w192\) for 4096 x 4096 x 4096: 128 x 192 tiles, one k block per turn"
plan_is 31 132 "-m 8192 -n 8192 -k 8192" "^  plan for 8192 x 8192 x 8192: 128 x 192 tiles, one k block per turn \(rounds x width: 128 wide 32 x 128 = 4096, 192 wide 21 x 192 = 4032\)$"
plan_is 31 132 "-m 4096 -n 2112 -k 7168" "^  plan for 4096 x 2112 x 7168: 128 x 192 tiles, one k block per turn"
plan_is 31 132 "-m 4096 -n 128256 -k 4096" "^  plan for 4096 x 128256 x 4096: 128 x 128 tiles, two k blocks per turn \(rounds x width: 128 wide 243 x 128 = 31104, 192 wide 162 x 192 = 31104\)$"
plan_is 31 132 "-m 1024 -n 1024 -k 1024" "^  plan for 1024 x 1024 x 1024: 128 x 128 tiles, two k blocks per turn"
plan_is 31 132 "-m 4096 -n 4096 -k 4096 --bn 192" "^  plan for 4096 x 4096 x 4096: 128 x 192 tiles, one k block per turn"
plan_refuses 31 "the tile widths are 128" --plan 132 -m 64 -n 64 -k 128 --bn 100
# v33: rounds x width x cost, a 192-wide column at 0.95 of a 128-wide one (its page's table)
plan_is 33 132 "-m 4096 -n 4096 -k 4096" "^  plan for 4096 x 4096 x 4096: 128 x 128 tiles, two k blocks per turn \(rounds x width x cost: 128 wide 8 x 128 = 1024, 192 wide 6 x 192 x 0.95 = 1094\)$"
plan_is 33 132 "-m 4096 -n 14336 -k 4096" "^  plan for 4096 x 14336 x 4096: 128 x 192 tiles, one k block per turn \(rounds x width x cost: 128 wide 28 x 128 = 3584, 192 wide 19 x 192 x 0.95 = 3466\)$"
plan_is 33 132 "-m 4096 -n 7168 -k 16384" "^  plan for 4096 x 7168 x 16384: 128 x 128 tiles, two k blocks per turn"
plan_is 33 132 "-m 8192 -n 8192 -k 8192" "^  plan for 8192 x 8192 x 8192: 128 x 192 tiles, one k block per turn"
plan_is 33 132 "-m 4096 -n 4096 -k 4096" "^  plan \(w192\) for 4096 x 4096 x 4096: 128 x 192 tiles, one k block per turn"
plan_is 33 132 "-m 4096 -n 14336 -k 4096 --bn 128" "^  plan for 4096 x 14336 x 4096: 128 x 128 tiles, two k blocks per turn"
plan_refuses 33 "the tile widths are 128" --plan 132 -m 64 -n 64 -k 128 --bn 100
# v37: v33's plans; two turns a pass where a turn is one k block (192 wide), never at 128; v33 is the control
plan_is 37 132 "-m 4096 -n 14336 -k 4096" "^  plan for 4096 x 14336 x 4096: 128 x 192 tiles, one k block per turn \(rounds x width x cost: 128 wide 28 x 128 = 3584, 192 wide 19 x 192 x 0.95 = 3466\), two turns a pass$"
plan_is 37 132 "-m 4096 -n 14336 -k 4096" "^  plan \(v33\) for 4096 x 14336 x 4096: 128 x 192 tiles, one k block per turn \(rounds x width x cost: 128 wide 28 x 128 = 3584, 192 wide 19 x 192 x 0.95 = 3466\)$"
plan_is 37 132 "-m 4096 -n 4096 -k 4096" "^  plan for 4096 x 4096 x 4096: 128 x 128 tiles, two k blocks per turn \(rounds x width x cost: 128 wide 8 x 128 = 1024, 192 wide 6 x 192 x 0.95 = 1094\)$"
plan_refuses 37 "the tile widths are 128" --plan 132 -m 64 -n 64 -k 128 --bn 100
# v38: v32's plan (the width of least rounds x k tiles x the one-wave cost); only where C is stored differs; v32 is the control
plan_is 38 132 "-m 4096 -n 2112 -k 7168" "^  plan for 4096 x 2112 x 7168: 128 x 176 tiles, 3 rounds of 56 k tiles: 93.6 us predicted \(128 x 256: 3 rounds, 134.2 us\); C stored in 64-column parts, one per k tile of the next tile$"
plan_is 38 132 "-m 4096 -n 2112 -k 7168" "^  plan \(v32\) for 4096 x 2112 x 7168: 128 x 176 tiles, 3 rounds of 56 k tiles: .*; C stored at each tile.s end$"
plan_is 38 132 "-m 4096 -n 4096 -k 4096" "^  plan for 4096 x 4096 x 4096: 128 x 256 tiles, 4 rounds of 32 k tiles: 102.3 us predicted"
plan_is 38 132 "-m 4096 -n 4096 -k 4096 --bn 192" "^  plan for 4096 x 4096 x 4096: 128 x 192 tiles, "
plan_refuses 38 "the tile widths are 128" --plan 132 -m 64 -n 64 -k 128 --bn 100
plans_count 38 20 "a plan for each variant (20 lines)"
plan_refuses 30 "give --split 8 or less" --plan 132 -m 64 -n 64 -k 1024 --split 9   # K = 1024: 8 k tiles
plan_refuses 24 "one plan for every problem" --plan 132 -m 64 -n 64 -k 64
plan_refuses 27 "plan" --plan 0
plans_count 27 48 "both variants (48 lines)"
# v32: the per-tensor tile's width, 128 to 256 in steps of 16, where it saves 10% of the 256-wide tile's time
plan_is 32 132 "-m 4096 -n 2112 -k 7168" "^  plan for 4096 x 2112 x 7168: 128 x 176 tiles, 3 rounds of 56 k tiles: 93.6 us predicted \(128 x 256: 3 rounds, 134.2 us\)$"
plan_is 32 132 "-m 4096 -n 2112 -k 7168" "^  plan \(w256\) for 4096 x 2112 x 7168: 128 x 256 tiles"
plan_is 32 132 "-m 1024 -n 1024 -k 1024" "^  plan for 1024 x 1024 x 1024: 128 x 128 tiles"
plan_is 32 132 "-m 8192 -n 8192 -k 8192" "^  plan for 8192 x 8192 x 8192: 128 x 256 tiles, 16 rounds"
plan_is 32 132 "-m 4096 -n 24576 -k 1536" "^  plan for 4096 x 24576 x 1536: 128 x 256 tiles"
plan_is 32 132 "-m 3072 -n 3072 -k 3072" "^  plan for 3072 x 3072 x 3072: 128 x 192 tiles, 3 rounds"
plan_is 32 132 "-m 4096 -n 2112 -k 7168 --bn 144" "^  plan for 4096 x 2112 x 7168: 128 x 144 tiles"
plan_refuses 32 "the tile widths are 128 to 256 in steps of 16" --plan 132 -m 64 -n 64 -k 128 --bn 100
# v42: the last round shared out along K where the whole rounds plus the share and the fix-up cost less; v37 is the control
plan_is 42 132 "-m 4096 -n 7168 -k 16384" "^  plan for 4096 x 7168 x 16384: 128 x 192 tiles, 9 rounds of whole tiles, then 14 tiles shared out, 28 k tiles a cluster \(k tiles a cluster x width x cost: 128 wide 1792 = 229376, shared 1664 \+ 74 \+ 27 = 225920; 192 wide 1280 = 233472, shared 1152 \+ 28 \+ 27 = 220157\)$"
plan_is 42 132 "-m 4096 -n 7168 -k 16384" "^  plan \(v37\) for 4096 x 7168 x 16384: 128 x 128 tiles, 14 rounds of whole tiles \(k tiles a cluster x width x cost: 128 wide 1792 = 229376; 192 wide 1280 = 233472\)$"
plan_is 42 132 "-m 4096 -n 4096 -k 14336" "^  plan for 4096 x 4096 x 14336: 128 x 192 tiles, 5 rounds of whole tiles, then 22 tiles shared out, 38 k tiles a cluster "
plan_is 42 132 "-m 4096 -n 4096 -k 4096" "^  plan for 4096 x 4096 x 4096: 128 x 128 tiles, 8 rounds of whole tiles "
plan_is 42 132 "-m 8192 -n 8192 -k 8192" "^  plan for 8192 x 8192 x 8192: 128 x 192 tiles, 21 rounds of whole tiles "
plan_is 42 132 "-m 4096 -n 4096 -k 4096 --share 2" "^  plan for 4096 x 4096 x 4096: 128 x 128 tiles, 7 rounds of whole tiles, then 50 tiles shared out, 25 k tiles a cluster "
plan_is 42 132 "-m 4096 -n 7168 -k 16384 --share 1" "^  plan for 4096 x 7168 x 16384: 128 x 128 tiles, 14 rounds of whole tiles "
plan_is 42 132 "-m 67 -n 45 -k 384 --share 2" "^  plan for 67 x 45 x 384: 128 x 128 tiles, 0 rounds of whole tiles, then 1 tile shared out, 1 k tiles a cluster "
plan_refuses 42 "the tile widths are 128" --plan 132 -m 64 -n 64 -k 128 --bn 100
plan_refuses 42 "share" --plan 132 -m 64 -n 64 -k 128 --share 3
plans_count 42 20 "a plan for each variant (20 lines)"
# v44: the per-tensor kernel's last round cut along K where the first piece and the helpers, priced from the trace, end sooner; v38 is the control
plan_is 44 132 "-m 4096 -n 7168 -k 16384" "^  plan for 4096 x 7168 x 16384: 128 x 256 tiles, 6 whole rounds, then 52 tiles cut: the first 106 k tiles on 52 clusters, 1 piece of 22 on the other 14, 4 each \(k tiles a cluster: whole 896; cut 768 \+ max\(106 \+ 1 x 4.0, 4 x \(22 \+ 5.0\)\) = 878.0\)$"
plan_is 44 132 "-m 4096 -n 7168 -k 16384" "^  plan \(v38\) for 4096 x 7168 x 16384: 128 x 256 tiles, 7 rounds of 128 k tiles \(k tiles a cluster: whole 896\)$"
plan_is 44 132 "-m 8192 -n 8192 -k 8192" "^  plan for 8192 x 8192 x 8192: 128 x 256 tiles, 15 whole rounds, then 34 tiles cut: the first 45 k tiles on 34 clusters, 1 piece of 19 on the other 32, 2 each "
plan_is 44 132 "-m 4096 -n 4096 -k 4096" "^  plan for 4096 x 4096 x 4096: 128 x 256 tiles, 4 rounds of 32 k tiles \(k tiles a cluster: whole 128; cut 96 \+ max\(31 \+ 1 x 4.0, 8 x \(1 \+ 5.0\)\) = 144.1\)$"   # 8 writes a helper: never
plan_is 44 132 "-m 4096 -n 2112 -k 7168" "^  plan for 4096 x 2112 x 7168: 128 x 176 tiles, 3 rounds of 56 k tiles "   # v38's width, not cut
plan_is 44 132 "-m 4096 -n 14336 -k 4096" "^  plan for 4096 x 14336 x 4096: 128 x 256 tiles, 14 rounds of 32 k tiles "   # saves less than one more write
plan_is 44 132 "-m 4096 -n 4096 -k 4096 --cut 2" "^  plan for 4096 x 4096 x 4096: 128 x 256 tiles, 3 whole rounds, then 58 tiles cut: the first 31 k tiles on 58 clusters, 1 piece of 1 on the other 8, 8 each "
plan_is 44 132 "-m 4096 -n 7168 -k 16384 --cut 1" "^  plan for 4096 x 7168 x 16384: 128 x 256 tiles, 7 rounds of 128 k tiles "
plan_is 44 132 "-m 67 -n 45 -k 16384 --cut 2" "^  plan for 67 x 45 x 16384: 128 x 128 tiles, 0 whole rounds, then 1 tile cut: the first 63 k tiles on 1 cluster, 65 pieces of 1 on the other 65, 1 each "
plan_is 44 132 "-m 67 -n 45 -k 384 --cut 2" "^  plan for 67 x 45 x 384: 128 x 128 tiles, 1 round of 3 k tiles \(k tiles a cluster: whole 3; no cut: 3 k tiles for 65 parts\)$"   # fewer k tiles than pieces
plan_refuses 44 "the tile widths are 128" --plan 132 -m 64 -n 64 -k 128 --bn 100
plan_refuses 44 "cut" --plan 132 -m 64 -n 64 -k 128 --cut 3
plans_count 44 20 "a plan for each variant (20 lines)"
