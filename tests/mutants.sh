#!/usr/bin/env bash
# mutants.sh [--list] [ID...] - do the tests fail when the code is wrong?  Each
# mutant below is a realistic bug (a looser tolerance, a wrong norm, swapped
# columns, an option accepted out of range, a test that went blind), put into a
# scratch copy of this working tree, one at a time; the part of the suite that
# exercises the mutated file runs there; a mutant is caught when that part
# reports a failure.  Survivors are listed; the last line is the score, and the
# exit status is nonzero when under 90% are caught.  `make mutants` runs it.
#
#   tests/mutants.sh            every CPU mutant; the GPU ones too where a GPU is usable
#   tests/mutants.sh c3 t1      only those
#   tests/mutants.sh --list     the mutants, their suites and what they break
#
# Kept fast (a few minutes on two cores): libkl.a is built once in the scratch
# copy, so a mutant rebuilds only its own object, and each suite is one of the
# tests/cpu_*.sh files run alone (unit: the unit binaries; golden: whole tables,
# chart data and a doc page against tests/fixtures/golden/; tables: value markers,
# headline, ladder and cuBLAS columns (tests/cpu_tables.sh); harness: the layering;
# links: the docs' links; nognuplot: plots.sh without gnuplot; plans: the plans of Parts IV and V,
# printed by --plan on the host, the steps tests/cpu_plans.sh names built; ptxas: the notes ptxas left
# in a Hopper step's build, step 35 built).  A GPU mutant's
# suite is tests/gpu_*.sh (the checks that must fail on a wrong kernel, on fixture
# steps: the harness) and each built step's --check-only over its default shapes (the
# step's own kernel; a hang past 120 s fails), over the steps in MUTANT_GPU_STEPS
# (default "0 10 17"), or for a mutant of a step's own file (steps/vN_*/), step N alone.
set -uo pipefail
cd "$(dirname "$0")/.."
. tests/lib.sh   # copy_tree

# ID ||| SUITES (comma-separated) ||| FILE ||| FROM ||| TO ||| WHAT IT BREAKS
# (literal text; FROM must occur in FILE; a mutant of several edits repeats its ID)
mutants() { cat <<'EOF'
c1 ||| unit ||| common/check.c ||| 8.0 * sqrt(kd) * w_eps ||| 8.0 * kd * w_eps ||| dot tolerance: 8 * K instead of 8 * sqrt(K) for in-kernel weight rounding (16x looser at K = 4096)
c2 ||| unit ||| common/check.c ||| sqrt(num / den) : sqrt(num) ||| num / den : num ||| rel_err without the square root (a wrong norm)
c3 ||| unit ||| common/check.c ||| if (!finite || !(d <= t)) { ||| if (d > t) { ||| compare: a NaN output passes (d > tol is false for NaN)
c4 ||| unit ||| common/check.c ||| if (!finite) r->nonfinite++; ||| ; ||| compare: NaN/Inf not counted
c5 ||| unit ||| common/check.c ||| if (r->nonfinite) r->rel_err = NAN; ||| ; ||| compare: rel_err of an output with NaN is a number, not NaN
c6 ||| unit ||| common/check.c ||| 0.5 * (s[n / 2 - 1] + s[n / 2]) ||| s[n / 2] ||| median of an even count: the upper middle value
c7 ||| unit ||| common/check.c ||| if (fit <= lo) return lo; ||| if (fit <= lo) return (int)fit; ||| repeats: a slow kernel gets fewer than the minimum
c8 ||| unit ||| common/check.c ||| for (int t = 0; t < 8 && !bad; ++t) { ||| for (int t = 0; t < 1 && !bad; ++t) { ||| spot check of cuBLAS: only the first corner
c9 ||| unit ||| common/check.c ||| if (d > r->max_abs_err) r->max_abs_err = d; ||| ; ||| compare: max |err| never recorded
c10 ||| unit ||| common/cli.c ||| parse_int_opt("-k", optarg, 1, ||| parse_int_opt("-k", optarg, 0, ||| -k 0 accepted
c11 ||| unit ||| common/cli.c ||| cli->budget_ms = v; ||| cli->budget_ms = v / 1000.0; ||| --budget stored in seconds where milliseconds are read
c12 ||| unit ||| common/cli.c ||| "--warmup", optarg, 0, ||| "--warmup", optarg, -1, ||| --warmup -1 accepted
c13 ||| unit ||| common/cli.c ||| parse_int_opt(name, optarg, o->min, o->max, ||| parse_int_opt(name, optarg, INT_MIN, INT_MAX, ||| a step's own option not ranged
c14 ||| unit ||| common/cli.c ||| if (errno == ERANGE || v < min || v > max) { ||| if (v < min || v > max) { ||| a number past what strtoll holds saturates and is accepted
c15 ||| unit ||| common/cli.c ||| if (end == s || *end != '\0' || ||| if (end == s || ||| trailing garbage accepted (--budget 2ms)
c16 ||| unit ||| common/cli.c ||| KL_MAX_DEVICE, &cli->device ||| INT_MAX, &cli->device ||| --device not bounded above
c17 ||| unit ||| common/report.c ||| 100.0 * r->cublas_time_us / r->time_us ||| 100.0 * r->time_us / r->cublas_time_us ||| pct_cublas inverted
c18 ||| unit ||| common/report.c ||| r->pass ? "PASS" : "FAIL", r->variant ||| "PASS", r->variant ||| the CSV says PASS for a failed row
c19 ||| unit ||| common/ops/quant.c ||| qr[c / 2] |= (uint8_t)(c % 2 ? v << 4 : v); ||| qr[c / 2] |= (uint8_t)(c % 2 ? v : v << 4); ||| int4: nibble order swapped in the quantizer ...
c19 ||| unit ||| common/ops/quant.c ||| const int v = c % 2 ? qr[c / 2] >> 4 : qr[c / 2] & 0xF; ||| const int v = c % 2 ? qr[c / 2] & 0xF : qr[c / 2] >> 4; ||| ... and the dequantizer alike (round trips still pass)
c20 ||| unit ||| common/ops/quant.c ||| clampi((int)lrintf(-lo / s), 0, qmax) ||| clampi((int)(-lo / s), 0, qmax) ||| int8/int4 zero point truncated instead of rounded
c21 ||| unit ||| common/ops/quant.c ||| half_round_up(fabsf(d)) ||| kl_float_to_half(fabsf(d)) ||| q4_0: |d| rounded to nearest, not up (the extreme can fall off the grid)
c22 ||| unit ||| common/ops/quant.c ||| w[(size_t)r * k + c] = ((float)q[(size_t)r * k + c] - zf) * sf; ||| w[(size_t)r * k + c] = ((float)q[(size_t)r * k + c] - zf) * sf + (c == k - 1 ? sf : 0.0f); ||| int8 dequantizer: the last column one step off
c23 ||| unit ||| common/check.c ||| const double t = tol.atol + tol.rtol * fabs(e); ||| const double t = tol.atol; ||| compare: the relative part of the tolerance dropped
c24 ||| unit ||| common/check.c ||| const double a = fabs((double)w[i]); ||| const double a = (double)w[i]; ||| absmax: signed maximum (a tolerance from term_max too small for negative weights)
c25 ||| unit ||| common/cli.c ||| if (*n == max) { ||| if (*n == max + 1) { ||| --sizes: a 65th size written past the array
c26 ||| unit ||| common/cli.c ||| if (!*optarg) { snprintf(err, errlen, "--csv: empty file name"); ||| if (0) { snprintf(err, errlen, "--csv: empty file name"); ||| --csv '' accepted
c27 ||| unit ||| common/ops/quant.c ||| if (d < bd || (d == bd && c % 2 == 0)) bd = d, best = c; ||| if (d < bd) bd = d, best = c; ||| e4m3 encoder: ties to the lower code, not the even one
c28 ||| unit ||| common/check.c ||| t.atol += (k > 0 ? (double)k : 1.0) * ldexp(1.0, -12); ||| t.atol += (k > 0 ? (double)k : 1.0) * ldexp(1.0, -6); ||| FP8 tolerance 64x looser (a missing k tile passes)
c29 ||| unit ||| common/ops/fp8_ops.h ||| { return (size_t)kb * KL_FP8_SA_LD(m) + i; } ||| { return (size_t)kb * m + i; } ||| FP8 block scales: sa's columns of m not padded to 4 (a TMA map's rows must be 16 bytes apart)
c30 ||| unit ||| common/ops/fp8_ops.h ||| return (size_t)jb * KL_FP8_SB_LD(k) + kb; ||| return (size_t)jb * (k / KL_FP8_BLOCK) + kb; ||| FP8 block scales: sb's rows not padded to 4 (cuBLASLt then read rel_err 0.96 at K = 640)
c31 ||| unit ||| common/ops/quant.c ||| amax = fmaxf(amax, fabsf(x[(size_t)r * ld + c])); ||| amax = fmaxf(amax, x[(size_t)r * ld + c]); ||| host block quantizer: amax of the signed values (a block whose extreme is negative saturates)
c32 ||| unit ||| common/ops/quant.c ||| amax > 0.0f ? amax / 448.0f : 1.0f; ||| amax / 448.0f; ||| host block quantizer: an all-zero block gets scale 0 (its codes NaN)
c33 ||| unit ||| common/ops/fp8_ops.h ||| return (rb + kb) % 3; ||| return (rb + kb) % 2; ||| FP8 block magnitudes of period 2: blocks two apart share a magnitude (a kernel off by two blocks passes more often)
c34 ||| unit ||| common/check.c ||| sqrt(kd / 128.0) * 128.0 ||| (kd / 128.0) * 128.0 ||| FP8 block tolerance: the k blocks' errors added linearly (sqrt(K / 128) times looser)
c35 ||| unit ||| common/check.h ||| #define KL_FP8_BLOCK_TERM_MAX 4.0 ||| #define KL_FP8_BLOCK_TERM_MAX 1.0 ||| FP8 block tolerance written for terms up to 1 while the inputs reach 4
t1 ||| golden ||| tools/tables.sh ||| g(i, "tflops") * 1000 / g(i, "gbps"), g(i, "tflops") > pf ||| g(i, "tflops"), g(i, "tflops") * 1000 / g(i, "gbps") > pf ||| roofline.dat: intensity and TFLOPS swapped
t2 ||| golden,tables ||| tools/tables.sh ||| ceil[p] = rate / (pce / 100) ||| ceil[p] = g(i, "tflops") / (pce / 100) ||| ceilings.dat: the bandwidth ceiling computed from TFLOPS
t3 ||| golden,tables ||| tools/tables.sh ||| ceil[p] = rate / (pce / 100) ||| ceil[p] = g(i, "gbps") / (pce / 100) ||| ceilings.dat: the compute peak computed from GB/s
t4 ||| golden ||| tools/tables.sh ||| if (pcb != "") cell = cell " (" pcb "%)" ||| if (pcb != "") cell = cell " (" g(i, "pct_ceiling") "%)" ||| summary.md: a cell shows % of the ceiling as % of cuBLAS
t5 ||| golden,tables ||| tools/tables.sh ||| work > hwork[hk] ||| work < hwork[hk] ||| roofline and headline: a step without a row at its part's shape shown at its smallest problem, not its largest
t6 ||| golden ||| tools/tables.sh ||| if (g(i, "status") != "PASS") cell = cell " **FAIL**" ||| if (0) cell = cell " **FAIL**" ||| summary.md: a failed row not marked
t7 ||| golden ||| tools/tables.sh ||| rate = compute[p] ? g(i, "tflops") : g(i, "gbps") ||| rate = g(i, "gbps") ||| summary.md: compute-bound parts in GB/s
t8 ||| golden ||| tools/update_docs.sh ||| f[c["pct_cublas"]], f[c["pct_ceiling"]] ||| f[c["pct_ceiling"]], f[c["pct_cublas"]] ||| doc table: % of cuBLAS and % of the ceiling swapped
t9 ||| golden ||| tools/update_docs.sh ||| keep != "" && !index(keep, "," $(c["n"]) ",") { next } ||| 0 { next } ||| doc table: n= filter ignored
t10 ||| golden ||| tools/update_docs.sh ||| 100 * floor / t, cb ||| 100 * t / floor, cb ||| floor table: the speed ratio inverted
t11 ||| golden ||| tools/update_docs.sh ||| rate = flops ? f[c["tflops"]] : f[c["gbps"]] ||| rate = flops ? f[c["gbps"]] : f[c["tflops"]] ||| doc table: the throughput column in the other unit
t12 ||| nognuplot ||| tools/plots.sh ||| Install it: sudo apt-get install gnuplot-nox (Debian/Ubuntu), ||| Install it: ||| plots.sh without gnuplot: no install hint for Debian/Ubuntu
t13 ||| nognuplot ||| tools/plots.sh |||     exit 0 |||     exit 1 ||| plots.sh without gnuplot fails, so run_all.sh would stop before the tables
t14 ||| golden,tables ||| tools/update_docs.sh ||| return f[col[step, column]] ||| return f[col[step, column] + 1] ||| value marker: filled from the next column over (off by one)
t15 ||| golden,tables ||| tools/update_docs.sh ||| a1 / a2) ||| a2 / a1) ||| ratio marker: inverted (second over first)
t16 ||| golden,tables ||| tools/update_docs.sh ||| if (!(key in row)) fail( ||| if (!(key in row)) { missing = 1; return "" }; if (0) fail( ||| a value marker naming a missing row keeps ...
t16 ||| golden,tables ||| tools/update_docs.sh ||| text = fmt(t[4] != "" ? t[4] : deffmt, v) ||| text = missing ? substr(after, 1, c - 1) : fmt(t[4] != "" ? t[4] : deffmt, v); missing = 0 ||| ... its old TEXT, exit 0
t17 ||| golden,tables ||| tools/tables.sh ||| rate * g(i, "time_us") / g(i, "cublas_time_us") ||| rate * g(i, "cublas_time_us") / g(i, "time_us") ||| summary.md: cuBLAS TFLOPS this run scaled by the inverted time ratio
t18 ||| golden,tables ||| tools/update_docs.sh ||| sprintf("%.3f", rate * t / cb) ||| sprintf("%.3f", rate) ||| doc table: cuBLAS TFLOPS this run shows the step's own TFLOPS
t19 ||| golden,tables ||| tools/update_docs.sh ||| base = (column == "cublas_tflops") ? "tflops" : "gbps" ||| base = "tflops" ||| value marker: cublas_gbps computed from TFLOPS
t20 ||| golden,tables ||| tools/tables.sh ||| if (shape == hshape[p]) { hrow[hk] = i; hexact[hk] = 1 } ||| if (0) { hrow[hk] = i; hexact[hk] = 1 } ||| headline and roofline: tools/parts.tsv's headline shape ignored (each step at its largest problem)
t21 ||| golden,tables ||| tools/tables.sh ||| own = (s in method) ? (v == method[s]) : ||| own = ||| headline and ladder: tools/methods.tsv ignored (a step's first method, not its own)
t22 ||| golden,tables ||| tools/update_docs.sh ||| ceil[f[1]] = f[3]; cbound[f[1]] = f[2] ||| ceil[f[1]] = f[3] * 1; cbound[f[1]] = "compute" ||| val:ceiling: a memory-bound part's ceiling formatted as TFLOPS (%.1f)
t23 ||| tables ||| tools/plots.sh ||| if (y[cm[c, i]] > pk[q] && y[cm[c, i]] < pk[q] * 1.8) side = -1 ||| if (0) side = -1 ||| roofline: a point under a roof's label keeps its label on its right, over the roof's text
s1 ||| links ||| tests/cpu_links.sh ||| for link in $(prose "$f" | grep -o '](\([^)]*\))' ||| for link in $(prose "$f" | grep -o '](\([^)#]*\))' ||| link check skips every link with a #fragment
s2 ||| links ||| tests/cpu_links.sh ||| elif [[ $link == *#* && $target == *.md ]] && ! heading_anchors ||| elif false && ! heading_anchors ||| link check ignores what a #fragment names
s3 ||| unit ||| tests/cpu_unit.sh ||| if [ -z "$plan" ]; then bad ||| if [ -z "$plan" ]; then ok ||| a unit binary that crashes loses its remaining tests silently
s4 ||| harness ||| tests/cpu_harness.sh ||| check.o|cli.o|report.o|quant.o) echo 0 ;; util.o) echo 1 ;; ||| check.o|cli.o|report.o|quant.o|util.o) echo 0 ;; ||| layering: util.c back in the plain-C layer (a use between them unseen)
s5 ||| nognuplot ||| tests/cpu_nognuplot.sh ||| PATH=$PWD/$tmp/nognuplot && ||| PATH=$PWD/$tmp/nognuplot:/usr/bin:/bin && ||| the no-gnuplot test runs where gnuplot is found
s6 ||| golden ||| tests/golden.sh ||| elif diff -u "$gold/$b" "$f" ||| elif diff -u <(head -n 5 "$gold/$b") <(head -n 5 "$f") ||| golden files compared by their first lines only
s7 ||| golden ||| tests/golden.sh ||| then { head -n1 "$f"; tail -n +2 "$f" | LC_ALL=C sort; } ||| then { head -n1 "$f"; tail -n +2 "$f" | cut -d' ' -f1 | LC_ALL=C sort; } ||| roofline.dat compared by its labels only
p1 ||| plans ||| steps/v27_tile_width/gemm.cu ||| const double cost = plan_for(m, n, bn, 1, sms).waves * tile_cost(bn); ||| const double cost = tile_cost(bn); ||| v27: a width's cost without its waves (the narrowest tile always wins)
p2 ||| plans ||| steps/v27_tile_width/gemm.cu ||| bn >= MIN_BN; bn -= 64) ||| bn >= MIN_BN; bn -= 128) ||| v27: the widths 64 and 192 never tried
p3 ||| plans ||| steps/v26_small_m/gemm.cu ||| const int na = m <= 8 ? 8 : ||| const int na = m < 8 ? 8 : ||| v26: M = 8 swapped with n = 16, twice the activations' width
p4 ||| plans ||| steps/v25_split_k/gemm.cu ||| split = sms / tiles; ||| split = (sms + tiles - 1) / tiles; ||| v25: the split rounded up: more units than SMs, a second wave
p6 ||| plans ||| steps/v31_fp8_pairs/gemm.cu ||| rounds_of(m, n, 128, clusters128) * 128 <= ||| rounds_of(m, n, 128, clusters128) * 128 < ||| v31: a tie of rounds x width goes to 192 (the vocabulary shape's plan)
p7 ||| plans ||| steps/v32_fp8_widths/gemm.cu ||| return best_us <= (1.0 - MIN_SAVING) * wide ? best : MAX_BN; ||| return best; ||| v32: any saving takes the narrower tile (224 wide at 8192^3, measured slower)
p8 ||| plans ||| steps/v33_fp8_chain/gemm.cu ||| (double)rounds * bn * (bn == 192 ? COST_192 : 1.0) ||| (double)rounds * bn ||| v33: the plan without the 192-wide tile's measured cost per column (v31's rounds x width)
p9 ||| plans ||| steps/v34_index_math/gemm.cu ||| ((1ull << l) - d)) / d + 1; ||| ((1ull << l) - d)) / d; ||| v34: the magic multiplier one short (n / d one too small where n is a multiple of d, d not a power of 2)
p10 ||| plans ||| steps/v35_fine_widths/gemm.cu ||| static Variant fine = {STEP_BN, ||| static Variant fine = {64, ||| v35: the plan's widths in steps of 64 (v34's four: 1536^3 in 96 tiles of 192)
p11 ||| ptxas ||| steps/v35_fine_widths/gemm.cu |||                 wgmma_fence(); |||                 if (kt == kb) wgmma_fence(); ||| v35: the fence only before a unit's first batch (ptxas serializes every wgmma: C7520)
p12 ||| plans ||| steps/v36_two_steps/gemm.cu ||| p.two = two; ||| p.two = false; ||| v36: the plan never takes two k steps a turn (v35's loop under v36's name)
p5 ||| plans ||| common/engine.c ||| if (e.cli.plan_sms) {   /* the plans only: host code, no GPU */ ||| if (0) { ||| --plan parsed, then ignored: the step looks for a GPU
g1 ||| gpu ||| common/engine.c ||| e->failures += !r->pass; ||| e->failures += 0; ||| engine: the failure count dropped (a wrong result exits 0)
g2 ||| gpu ||| common/engine.c ||| if (r.bad) { ||| if (0) { ||| engine: a mismatch neither printed nor failed
g3 ||| gpu ||| common/ops/op_sgemm.c |||         kl_poison(s->C, 4 * mn, str); ||| ; ||| sgemm: C not poisoned with NaN (an unwritten column keeps the right answer of a previous run)
g4 ||| gpu ||| common/ops/op_gemv.c |||     kl_poison(s->y, 2 * (size_t)n, str); ||| ; ||| gemv: y not poisoned
g5 ||| gpu ||| common/ops/op_gemm_bf16.c |||     kl_poison(s->C, 2 * mn, str); ||| ; ||| bf16 GEMM: C not poisoned
g8 ||| gpu ||| common/ops/op_gemm_fp8.c |||     kl_poison(s->C, 2 * mn, str); ||| ; ||| FP8 GEMM: C not poisoned
g9 ||| gpu ||| steps/v28_fp8/gemm.cu ||| const float scale = *sa * *sb; ||| const float scale = *sa * *sa; ||| v28: A's scale applied twice, B's never (16x off with the op's inputs)
g10 ||| gpu ||| steps/v29_fp8_block/gemm.cu ||| const float a0 = sc[s].a[i0], a1 = sc[s].a[i0 + 8]; ||| const float a0 = sc[s].a[i0], a1 = sc[s].a[i0]; ||| v29: row g's scale applied to row g + 8 too (rows differ by 2x or 4x in the op's inputs)
g11 ||| gpu ||| steps/v29_fp8_block/gemm.cu ||| wgmma_m64n192k32_e4m3(acc, da + 2 * kk, db + 2 * kk, kk > 0); ||| wgmma_m64n192k32_e4m3(acc, da + 2 * kk, db + 2 * kk, kt > 0 || kk > 0); ||| v29: a k block does not start from zero (each promotion adds every block so far again)
g12 ||| gpu ||| steps/v29_fp8_block/gemm.cu ||| const float b0 = sc[s].b[0][kt % 4], b1 = sc[s].b[1][kt % 4]; ||| const float b0 = sc[s].b[0][0], b1 = sc[s].b[1][0]; ||| v29: B's scales of the first k block (of each 4) for every k block
g13 ||| gpu ||| steps/v29_fp8_block/gemm.cu ||| const float b0 = sc[s].b[0][kt % 4], b1 = sc[s].b[1][kt % 4]; ||| const float b0 = sc[s].b[0][kt % 4], b1 = b0; ||| v29: a tile's columns past a 128-column boundary take the first block's scale
g14 ||| gpu ||| steps/v29_fp8_block/gemm.cu ||| tma_load(sc.a, mapSA, row0, kt, full); ||| tma_load(sc.a, mapSA, row0, 0, full); ||| v29: A's scales of the first k block for every k block
g15 ||| gpu ||| steps/v30_fp8_last_round/gemm.cu ||| for (int r = 1; r < w.split; ++r) ||| for (int r = 1; r < w.split - 1; ++r) ||| v30: the fix-up leaves the last k range's partial out of the sum
g16 ||| gpu ||| steps/v31_fp8_pairs/gemm.cu ||| const float b0 = sc[s[q]].b[0][(kt + q) % 4], b1 = sc[s[q]].b[1][(kt + q) % 4]; ||| const float b0 = sc[s[q]].b[0][kt % 4], b1 = sc[s[q]].b[1][kt % 4]; ||| v31: the second k block of a turn takes the first's B scales
g17 ||| gpu ||| steps/v32_fp8_widths/gemm.cu ||| box + 2 * TW * r + 2 * (8 * (j - c0 / 8) + 2 * t) ||| box + 128 * r + 2 * (8 * (j - c0 / 8) + 2 * t) ||| v32: the tail box's rows staged 128 bytes apart, as a swizzled box's (the map reads them 2 TW apart)
g18 ||| gpu ||| steps/v33_fp8_chain/gemm.cu ||| if (P > 1 || it == 0)   // at 192 wide ||| if (P > 1)   // at 192 wide ||| v33: at 192 wide the block's first turn no longer waits for its stage (nothing waited for it before)
g19 ||| gpu ||| steps/v36_two_steps/gemm.cu |||                     k_step(kt + 1); |||                     k_step(kt); ||| v36: a turn's second k step takes the first's index (a unit's second k step starts the sum again)
g20 ||| gpu ||| steps/v37_fp8_two_turns/gemm.cu |||                     k_turn(kt + 1); |||                     k_turn(kt); ||| v37: a pass's second turn takes the first's k tile for B's scales (the block before's scale)
g21 ||| gpu ||| steps/v38_fp8_store_overlap/gemm.cu ||| if (sent < PARTS) store_part<BN>(pk, sent++, mine, &mapC, &mapCt, M, N, prow, pcol, ||| if (sent < PARTS) store_part<BN>(pk, sent++, mine, &mapC, &mapCt, M, N, row0 + 64 * cw, col0, ||| v38: a part sent in the next tile's k loop goes to that tile's place in C, not the last tile's
g22 ||| gpu ||| steps/v39_uniform_branch/gemm.cu ||| UNIFORM ? __all_sync(0xffffffffu, *last_flag) ||| UNIFORM ? __all_sync(0xffffffffu, 0) ||| v39: the vote taken over a constant, not the flag (no unit of a split tile is ever the last: its C is never stored)
g23 ||| gpu ||| steps/v40_decode_tile/gemm.cu ||| &mapW, k0, row0 + DEC_ROWS / CL * rank, ||| &mapW, k0, row0, ||| v40: both blocks of a cluster copy the first half of the weights' box (each to its own slice): rows 32-63 of every weight tile are rows 0-31 again
g24 ||| gpu ||| steps/v41_tile_pairs/gemm.cu ||| &mapA, kt * BK, row0 + BM / 2 * rank, ||| &mapA, kt * BK, row0, ||| v41: both blocks of a pair side by side copy the first half of the A box (each to its own half): rows 64-127 of A in every paired tile are rows 0-63 again
g25 ||| gpu ||| steps/v42_fp8_stream_k/gemm.cu ||| for (int c = cluster + 1; c * sh.share < k_end; ++c) { ||| for (int c = cluster + 1; c * sh.share < k_end && c < cluster + 2; ++c) { ||| v42: the piece at a cut tile's k tile 0 adds only the next cluster's partial (a tile cut in three or more loses the rest)
g26 ||| gpu ||| steps/v43_small_tiles/gemm.cu |||     const long long ttiles = (m + p.bn - 1) / p.bn; |||     const long long ttiles = (m + 63) / 64; ||| v43: the token tiles counted 64 wide whatever the tile's width (at 512^3, 32 wide: half of C never computed)
g27 ||| gpu ||| steps/v44_fp8_tail_cut/gemm.cu ||| k0 = cut.S + j * cut.L, k1 = k0 + cut.L, slot ||| k0 = cut.S + j * cut.L, k1 = k0 + cut.L - 1, slot ||| v44: a helper's piece stops one k tile short (the k tile before the next piece, or K's last, never multiplied)
g28 ||| gpu ||| steps/v45_ping_pong/gemm.cu |||                             const int r0 = row0 + 64 * hf; |||                             const int r0 = row0 + 64 * c; ||| v45: a ping-pong tile's two halves stored at the consumer's rows, as in the shared kernel (each warpgroup's whole tile in 64 of its rows: half of C never stored)
g6 ||| gpu ||| common/engine.c ||| if (!isnan(*rel_err) && !(r.rel_err <= *rel_err)) *rel_err = r.rel_err; ||| if (r.rel_err > *rel_err) *rel_err = r.rel_err; ||| engine: a NaN rel_err dropped from the row
g7 ||| gpu ||| common/engine.c ||| if (!isnan(*rel_err) && !(r.rel_err <= *rel_err)) *rel_err = r.rel_err; ||| if (!(r.rel_err <= *rel_err)) *rel_err = r.rel_err; ||| engine: a NaN rel_err replaced by a later, finite check's (sgemm checks twice)
EOF
}

list=0 only=()
for a in "$@"; do
    case $a in
        --list) list=1 ;;
        -h|--help) sed -n '2,21p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        -*) echo "mutants.sh: unknown option '$a'" >&2; exit 2 ;;
        *) only+=("$a") ;;
    esac
done
declare -A SUITE WHAT NEDIT
ids=()
while IFS= read -r line; do
    [ -n "$line" ] || continue
    id=${line%% ||| *}; rest=${line#* ||| }
    suite=${rest%% ||| *}; rest=${rest#* ||| }
    file=${rest%% ||| *}; rest=${rest#* ||| }
    from=${rest%% ||| *}; rest=${rest#* ||| }
    to=${rest%% ||| *}; what=${rest#* ||| }
    if [ -z "${SUITE[$id]:-}" ]; then ids+=("$id"); SUITE[$id]=$suite; WHAT[$id]=$what; NEDIT[$id]=0
    else WHAT[$id]="${WHAT[$id]} ${what}"; fi
    n=${NEDIT[$id]}
    declare -g "EDIT_${id}_${n}_FILE=$file" "EDIT_${id}_${n}_FROM=$from" "EDIT_${id}_${n}_TO=$to"
    NEDIT[$id]=$((n + 1))
done < <(mutants)
if [ ${#only[@]} -gt 0 ]; then
    for id in "${only[@]}"; do [ -n "${SUITE[$id]:-}" ] || { echo "mutants.sh: no mutant '$id' (--list names them)" >&2; exit 2; }; done
    ids=("${only[@]}")
fi
if [ $list -eq 1 ]; then
    for id in "${ids[@]}"; do
        f=EDIT_${id}_0_FILE
        printf '%-4s %-13s %-29s %s\n' "$id" "${SUITE[$id]}" "${!f}" "${WHAT[$id]}"
    done
    exit 0
fi

# ---- a scratch copy of the working tree (committed or not), libkl.a built once -----
W=$(mktemp -d "${TMPDIR:-/tmp}/kl-mutants.XXXXXX"); trap 'rm -rf "$W"' EXIT
mkdir -p "$W/base"
copy_tree "$W/base"
[ -d build ] && cp -a build "$W/base/"   # objects newer than their sources: only a mutated one rebuilds
if ! make -s -C "$W/base" build/libkl.a >"$W/lib.log" 2>&1; then echo "mutants.sh: libkl.a does not build: $(grep -m1 -i error "$W/lib.log")" >&2; exit 1; fi

gpu=0
if nvidia-smi -L >/dev/null 2>&1; then
    make -s -C "$W/base" step0 >/dev/null 2>&1 && (cd "$W/base" && ./step0 --check-only --sizes 1 >/dev/null 2>&1) && gpu=1
fi
gpu_steps=${MUTANT_GPU_STEPS:-0 10 17}

# run_suite DIR SUITE...: the suites' tests in DIR; prints their lines, then "FAILED n"
run_suite() {
    local dir=$1; shift
    (
        cd "$dir" || exit 1
        . tests/lib.sh   # run_tests.sh's helpers and counts, from the copy
        tmp=tests/tmp; rm -rf "$tmp"; mkdir -p "$tmp" tests/bin
        steps="" built="" gpu=$gpu
        make -s build/libkl.a >"$tmp/lib.log" 2>&1 || bad "libkl.a builds: $(grep -m1 -i error "$tmp/lib.log")"
        for s in "$@"; do
            case $s in
                unit) . tests/cpu_unit.sh ;;
                golden) . tests/cpu_golden.sh ;;
                tables) . tests/cpu_tables.sh ;;
                harness) . tests/cpu_harness.sh ;;
                links) . tests/cpu_links.sh ;;
                nognuplot) . tests/cpu_nognuplot.sh ;;
                plans)   # the plans on the host (--plan): the steps tests/cpu_plans.sh names
                    for st in $(grep -o '^plan[a-z_]* [0-9]*' tests/cpu_plans.sh | awk '{print $2}' | sort -un); do make -s "step$st" >"$tmp/build$st.log" 2>&1 && built+="$st "; done
                    . tests/cpu_plans.sh ;;
                ptxas)   # ptxas's notes of a Hopper step's build: step 35, the one its mutant edits
                    make -s step35 >"$tmp/build35.log" 2>&1 && built+="35 "
                    . tests/cpu_ptxas.sh ;;
                gpu)
                    for st in $gpu_steps; do make -s "step$st" >"$tmp/build$st.log" 2>&1 && built+="$st "; done
                    steps=$built
                    for st in $built; do   # the step's own kernel (the fixtures below test the harness)
                        check "step$st --check-only over its default shapes (a hang past 120 s fails)" timeout 120 "./step$st" --check-only
                    done
                    found=0
                    for t in tests/gpu_*.sh; do [ -e "$t" ] && { found=1; . "$t"; }; done
                    [ $found -eq 1 ] || { echo "NOSUITE: no tests/gpu_*.sh here (the checks that must fail on a wrong kernel)"; exit 0; } ;;
            esac
        done
        echo "FAILED $fail"
    )
}

# The suites pass on the tree as it is, or no mutant's result means anything.
declare -A used
for id in "${ids[@]}"; do
    [ "${SUITE[$id]}" = gpu ] && [ $gpu -eq 0 ] && continue
    for su in ${SUITE[$id]//,/ }; do used[$su]=1; done
done
t0=$SECONDS
for su in "${!used[@]}"; do
    run_suite "$W/base" "$su" >"$W/base.$su.out" 2>&1
    grep -q '^NOSUITE' "$W/base.$su.out" && continue
    if ! grep -q '^FAILED 0$' "$W/base.$su.out"; then
        echo "mutants.sh: the suite '$su' fails without any mutant; fix that first:"
        grep '^not ok' "$W/base.$su.out" | head -n 10
        exit 1
    fi
done
echo "suites ${!used[*]} pass on the unmutated tree ($((SECONDS - t0)) s); $( [ $gpu -eq 1 ] && echo "GPU found: GPU mutants run on steps $gpu_steps" || echo "no usable GPU: GPU mutants listed, not run")"

caught=() survived=() stale=() notrun=()
for id in "${ids[@]}"; do
    if [ "${SUITE[$id]}" = gpu ] && [ $gpu -eq 0 ]; then notrun+=("$id"); continue; fi
    t1=$SECONDS
    rm -rf "$W/work"; cp -a "$W/base" "$W/work"
    applied=1
    for ((n = 0; n < NEDIT[$id]; n++)); do
        f=EDIT_${id}_${n}_FILE; fr=EDIT_${id}_${n}_FROM; to=EDIT_${id}_${n}_TO
        file=$W/work/${!f}
        # literal replacement of the first occurrence (no regex, no escapes): awk's index()
        if ! FROM=${!fr} TO=${!to} awk 'BEGIN { RS = "^$"; ORS = "" }
                { i = index($0, ENVIRON["FROM"]); if (!i) exit 1
                  print substr($0, 1, i - 1) ENVIRON["TO"] substr($0, i + length(ENVIRON["FROM"])) }' \
                "$file" >"$file.mut"; then applied=0; break; fi
        cat "$file.mut" >"$file"; rm -f "$file.mut"; touch "$file"
    done
    if [ $applied -eq 0 ]; then
        stale+=("$id"); printf '%-4s STALE     its text is no longer in %s: update the mutant\n' "$id" "${!f}"; continue
    fi
    # a GPU mutant of a step's own file runs that step (MUTANT_GPU_STEPS's may not include it)
    f=EDIT_${id}_0_FILE; mut_steps=$gpu_steps
    [[ ${SUITE[$id]} == gpu && ${!f} =~ ^steps/v([0-9]+)_ ]] && mut_steps=${BASH_REMATCH[1]}
    gpu_steps=$mut_steps run_suite "$W/work" ${SUITE[$id]//,/ } >"$W/$id.out" 2>&1
    if grep -q '^NOSUITE' "$W/$id.out"; then notrun+=("$id"); printf '%-4s not run   %s\n' "$id" "$(grep -m1 '^NOSUITE' "$W/$id.out")"; continue; fi
    nf=$(sed -n 's/^FAILED //p' "$W/$id.out")
    if [ "${nf:-0}" -gt 0 ] || [ -z "$nf" ]; then
        caught+=("$id")
        printf '%-4s caught    %-13s %3ss  %s\n      by: %s\n' "$id" "${SUITE[$id]}" "$((SECONDS - t1))" "${WHAT[$id]}" \
            "$(grep -m1 '^not ok' "$W/$id.out" | cut -c1-150)"
    else
        survived+=("$id")
        printf '%-4s SURVIVED  %-13s %3ss  %s\n' "$id" "${SUITE[$id]}" "$((SECONDS - t1))" "${WHAT[$id]}"
    fi
done

echo
[ ${#notrun[@]} -eq 0 ] || echo "GPU mutants not run here (no usable GPU, or no tests/gpu_*.sh): ${notrun[*]}"
[ ${#stale[@]} -eq 0 ] || echo "stale (text not found, not counted): ${stale[*]}"
if [ ${#survived[@]} -gt 0 ]; then
    echo "survivors:"
    for id in "${survived[@]}"; do echo "  $id: ${WHAT[$id]}"; done
fi
run=$(( ${#caught[@]} + ${#survived[@]} ))
[ $run -gt 0 ] || { echo "no mutant ran"; exit 1; }
pct=$(( 100 * ${#caught[@]} / run ))
echo "mutants: ${#caught[@]} of $run caught ($pct%), ${#survived[@]} survived, ${#notrun[@]} GPU-only not run, ${#stale[@]} stale; $((SECONDS - t0)) s"
[ $pct -ge 90 ] && [ ${#stale[@]} -eq 0 ]
