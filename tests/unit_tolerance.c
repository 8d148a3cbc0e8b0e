/* unit_tolerance.c - every operation's tolerance pinned to exact values, the
 * comparison at its boundary, and the error norms, on the CPU.  The numbers
 * are the error models of docs/harness.md ("The tolerance scales with K"),
 * worked out by hand: a tolerance 16x looser, or a norm of the wrong kind,
 * fails here before any GPU runs.  One line per test, the plan 1..N last. */
#include "check.h"
#include "fp8_ops.h"   /* KL_FP8_BLOCK_EXP_MAX: the block op's input magnitudes */
#include "unit.h"

#include <math.h>
#include <stdio.h>

#define P2(e) ldexp(1.0, e)   /* 2^e, exact */

static int same(kl_tol t, double atol, double rtol) { return t.atol == atol && t.rtol == rtol; }

static int passes(float out, float ref, kl_tol t) {
    kl_compare_result r;
    return kl_compare(&out, &ref, 1, t, &r) == 0;
}

/* At ref e: an error of exactly the tolerance passes, on either side, and the
 * next float beyond it fails.  The tolerance there must be a float distance
 * from e, so the first condition proves the test sits on the boundary. */
static int boundary(kl_tol t, float e) {
    const double tol = t.atol + t.rtol * fabs((double)e);
    const float hi = (float)((double)e + tol), lo = (float)((double)e - tol);
    if ((double)hi - e != tol || e - (double)lo != tol) return 0;   /* not on the boundary: a wrong test */
    return passes(hi, e, t) && passes(lo, e, t) && !passes(nextafterf(hi, INFINITY), e, t) &&
           !passes(nextafterf(lo, -INFINITY), e, t);
}

static void test_dot_tolerance(void) {
    /* atol = term_max (16 k 2^-24 + 8 sqrt(k) w_eps), rtol = 2 out_eps */
    TEST(same(kl_dot_tolerance(1, 1.0, P2(-24), 0.0), P2(-20), P2(-23)), "dot: k=1, fp32: atol 2^-20, rtol 2^-23");
    TEST(same(kl_dot_tolerance(64, 1.0, P2(-24), 0.0), P2(-14), P2(-23)), "dot: k=64, fp32: atol 2^-14");
    TEST(same(kl_dot_tolerance(4096, 1.0, P2(-24), 0.0), P2(-8), P2(-23)), "dot: k=4096, fp32: atol 2^-8");
    TEST(same(kl_dot_tolerance(4096, 0.5, P2(-24), 0.0), P2(-9), P2(-23)), "dot: atol scales with term_max");
    /* fp16 weights: 8 sqrt(k) 2^-11 = 2^-8 (k=1), 2^-5 (k=64), 2^-2 (k=4096) */
    TEST(same(kl_dot_tolerance(1, 1.0, P2(-11), P2(-11)), P2(-20) + P2(-8), P2(-10)),
         "dot: k=1, fp16 weights: atol 2^-20 + 2^-8, rtol 2^-10");
    TEST(same(kl_dot_tolerance(64, 1.0, P2(-11), P2(-11)), P2(-14) + P2(-5), P2(-10)),
         "dot: k=64, fp16 weights: atol 2^-14 + 2^-5 (the sqrt(k) term)");
    TEST(same(kl_dot_tolerance(4096, 1.0, P2(-11), P2(-11)), P2(-8) + P2(-2), P2(-10)),
         "dot: k=4096, fp16 weights: atol 2^-8 + 2^-2 (a quarter of term_max: why no check uses it)");
    TEST(same(kl_dot_tolerance(0, 1.0, P2(-24), 0.0), P2(-20), P2(-23)), "dot: k=0 counts as 1");
}

static void test_op_tolerances(void) {
    static const int ks[3] = {1, 64, 4096};
    static const int e[3] = {-20, -14, -8};   /* 16 k 2^-24 = 2^(log2 k - 20) */
    for (int i = 0; i < 3; ++i) {
        const int k = ks[i];
        TEST(same(kl_tol_sgemm(k, 1.0, 0.0), P2(e[i]), P2(-23)), "sgemm: k=%d, alpha 1, beta 0: atol 2^%d, rtol 2^-23", k, e[i]);
        TEST(same(kl_tol_gemv(k, 1.0), P2(e[i]), P2(-10)), "gemv: k=%d, wmax 1: atol 2^%d, rtol 2^-10 (fp16 out)", k, e[i]);
        TEST(same(kl_tol_w4a16(k, 1.0), P2(e[i]), P2(-23)),
             "w4a16: k=%d, term_max 1: atol 2^%d, rtol 2^-23 (exact dequantization, fp32 out)", k, e[i]);
        TEST(same(kl_tol_gemm_bf16(k), P2(e[i]), P2(-8)), "gemm_bf16: k=%d: atol 2^%d, rtol 2^-8 (one bf16 rounding)", k, e[i]);
    }
    /* FP8: the fp32 part plus the tensor cores' accumulation, k 2^-12 */
    TEST(same(kl_tol_gemm_fp8(4096), P2(-8) + 1.0, P2(-8)), "gemm_fp8: k=4096: atol 2^-8 + 1 (k 2^-12), rtol 2^-8");
    TEST(same(kl_tol_gemm_fp8(65536), P2(-4) + 16.0, P2(-8)), "gemm_fp8: k=65536: atol 2^-4 + 16, rtol 2^-8");
    /* FP8 with block scales (K a multiple of 128): terms up to 4, so the fp32 part is 4 * 16 k 2^-24 = k 2^-18;
     * the tensor cores' part 4 * sqrt(k / 128) * 128 * 2^-12, a random walk of one bound per k block */
    TEST(same(kl_tol_gemm_fp8_block(128), P2(-11) + P2(-3), P2(-8)),
         "gemm_fp8_block: k=128 (one block): atol 2^-11 + 2^-3, rtol 2^-8");
    TEST(same(kl_tol_gemm_fp8_block(512), P2(-9) + P2(-2), P2(-8)), "gemm_fp8_block: k=512: atol 2^-9 + 2^-2 (sqrt(4) blocks)");
    TEST(same(kl_tol_gemm_fp8_block(2048), P2(-7) + P2(-1), P2(-8)), "gemm_fp8_block: k=2048: atol 2^-7 + 2^-1");
    TEST(same(kl_tol_gemm_fp8_block(8192), P2(-5) + 1.0, P2(-8)), "gemm_fp8_block: k=8192: atol 2^-5 + 1");
    TEST(same(kl_tol_gemm_fp8_block(32768), P2(-3) + 2.0, P2(-8)),
         "gemm_fp8_block: k=32768: atol 2^-3 + 2 (gemm_fp8's is 2^-5 + 8: sqrt(K), not K)");
    TEST(fabs(kl_tol_gemm_fp8_block(4096).atol - (P2(-6) + sqrt(0.5))) < 1e-15,
         "gemm_fp8_block: k=4096: atol 2^-6 + sqrt(1/2)");
    TEST(KL_FP8_BLOCK_TERM_MAX == 2.0 * P2(KL_FP8_BLOCK_EXP_MAX) * 0.5,
         "gemm_fp8_block: term_max 4 = |a| < 2 * 2^%d times |b| <= 0.5 * 2^0 (the op's inputs, fp8_ops.h's magnitudes)",
         KL_FP8_BLOCK_EXP_MAX);
    /* What it is for: one missing k block of the largest terms (sqrt(128) rms|a*b| = sqrt(128) 4 / 3) at K = 8192 */
    TEST(sqrt(128.0) * 4.0 / 3.0 > 14.0 * kl_tol_gemm_fp8_block(8192).atol,
         "gemm_fp8_block: at k=8192 a missing k block of the largest terms is over 14x atol");
    /* the beta != 0 check: alpha 0.75 scales the terms, |beta| 0.5 adds 0.5 * 2^-22 */
    TEST(same(kl_tol_sgemm(64, 0.75, -0.5), 0.75 * P2(-14) + P2(-23), P2(-23)),
         "sgemm: k=64, alpha 0.75, beta -0.5: atol 0.75 * 2^-14 + 2^-23");
    TEST(same(kl_tol_gemv(4096, 0.9375), 0.9375 * P2(-8), P2(-10)), "gemv: atol scales with wmax (0.9375 at k=4096)");
    TEST(same(kl_tol_w4a16(4096, 0.9375), 0.9375 * P2(-8), P2(-23)), "w4a16: atol scales with term_max");
    TEST(same(kl_tol_exact(), 0.0, 0.0), "dequantize: exact, atol 0 and rtol 0");
    /* What the numbers are for: at k=4096 one missing term of average size
     * (term_max / 4 for inputs uniform in [-1, 1)) is 64x each atol. */
    TEST(kl_tol_w4a16(4096, 1.0).atol * 64 == 0.25 && kl_tol_gemv(4096, 1.0).atol * 64 == 0.25 &&
         kl_tol_sgemm(4096, 1.0, 0.0).atol * 64 == 0.25 && kl_tol_gemm_bf16(4096).atol * 64 == 0.25,
         "every op at k=4096: an average term is 64x atol");
}

static void test_boundary(void) {
    const struct { const char *name; kl_tol t; int k; } ops[] = {
        {"sgemm", kl_tol_sgemm(64, 1.0, 0.0), 64},   {"sgemm beta", kl_tol_sgemm(64, 0.75, -0.5), 64},
        {"gemv", kl_tol_gemv(64, 1.0), 64},          {"w4a16", kl_tol_w4a16(64, 1.0), 64},
        {"gemm_bf16", kl_tol_gemm_bf16(64), 64},     {"gemm_fp8", kl_tol_gemm_fp8(64), 64},
        {"gemm_fp8_block", kl_tol_gemm_fp8_block(128), 128},   /* its smallest K */
        {"exact", kl_tol_exact(), 64},
    };
    const float refs[3] = {0.0f, 1.0f, -0.5f};   /* where each tolerance is a whole number of float steps */
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; ++i) {
        for (int j = 0; j < 3; ++j)
            TEST(boundary(ops[i].t, refs[j]), "%s, k=%d, ref %g: an error equal to the tolerance passes, the next float fails",
                 ops[i].name, ops[i].k, refs[j]);
        TEST(!passes(NAN, 1.0f, ops[i].t) && !passes(INFINITY, 1.0f, ops[i].t) && !passes(-INFINITY, 1.0f, ops[i].t),
             "%s: NaN, Inf and -Inf fail", ops[i].name);
        TEST(!passes(1.0f, NAN, ops[i].t), "%s: a NaN reference fails", ops[i].name);
    }
    TEST(passes(-0.0f, 0.0f, kl_tol_exact()), "exact: -0 equals 0");
}

static void test_norms(void) {
    kl_compare_result r;
    const kl_tol wide = {2.0, 0.0}, none = {0.0, 0.0};
    /* ref (3, 4), out (4, 4): ||d||_2 / ||ref||_2 = 1 / 5; L1 would say 1/7, max 1/4, squares 1/25 */
    const float ref[2] = {3.0f, 4.0f}, out[2] = {4.0f, 4.0f};
    TEST(kl_compare(out, ref, 2, wide, &r) == 0 && fabs(r.rel_err - 0.2) < 1e-15 && r.max_abs_err == 1.0,
         "rel_err: ||out - ref||_2 / ||ref||_2 of (4, 4) against (3, 4) is 0.2 (got %.17g)", r.rel_err);
    TEST(r.tol_used == 0.5 && r.worst == 0, "err/tol: an error of 1 against atol 2 uses half the tolerance, at element 0");
    const float out2[2] = {3.0f, 5.5f};
    TEST(kl_compare(out2, ref, 2, wide, &r) == 0 && fabs(r.rel_err - 0.3) < 1e-15 && r.tol_used == 0.75 && r.worst == 1,
         "rel_err 1.5 / 5 = 0.3 and err/tol 0.75 at element 1 (got %.17g, %g)", r.rel_err, r.tol_used);
    const float zero[2] = {0.0f, 0.0f};
    TEST(kl_compare(out, zero, 2, wide, &r) == 2 && fabs(r.rel_err - sqrt(32.0)) < 1e-12,
         "rel_err against a zero reference: the absolute norm, sqrt(32)");
    TEST(kl_compare(ref, ref, 2, none, &r) == 0 && r.rel_err == 0.0 && r.tol_used == 0.0,
         "identical arrays: rel_err 0, err/tol 0 even with a zero tolerance");
    TEST(kl_compare(out, ref, 2, none, &r) == 1 && isinf(r.tol_used), "a difference against a zero tolerance: err/tol Inf");
    const float withnan[2] = {NAN, 4.0f};
    TEST(kl_compare(withnan, ref, 2, wide, &r) == 1 && r.nonfinite == 1 && isnan(r.rel_err) && r.tol_used == 0.0,
         "a NaN output: rel_err NaN, err/tol over the finite ones");
}

static void test_report(void) {
    enum { N = 9 };
    float ref[N], out[N];
    for (int i = 0; i < N; ++i) ref[i] = out[i] = (float)(i - 4);
    const kl_tol t = {P2(-10), P2(-8)};
    out[1] = NAN;
    out[2] += 0.5f;
    for (int i = 3; i < N; ++i) out[i] += 0.25f;
    kl_compare_result r;
    const size_t bad = kl_compare(out, ref, N, t, &r);
    TEST(bad == 8 && r.nonfinite == 1 && r.nreported == KL_MAX_REPORTED, "report: 8 bad, 1 NaN, the first %d kept",
         KL_MAX_REPORTED);
    TEST(r.first[0].index == 1 && isnan(r.first[0].out) && r.first[1].index == 2 && r.first[4].index == 5,
         "report: in index order, NaN included");
    TEST(r.first[1].tol == P2(-10) + P2(-8) * 2.0, "report: each with the tolerance at its element (atol + rtol |ref|)");
    /* element 2 is off by the most (0.5), element 4 (ref 0, tolerance atol alone) by the most for its tolerance */
    TEST(r.worst == 4 && r.tol_used == 256.0 && r.max_abs_err == 0.5,
         "report: the worst element by err/tol (0.25 / 2^-10 = 256 at ref 0), not by |err|");
}

int main(void) {
    test_dot_tolerance();
    test_op_tolerances();
    test_boundary();
    test_norms();
    test_report();
    return unit_plan();
}
