/* check.c - tolerances, comparison and statistics (pure C, tested on the CPU). */
#include "check.h"
#include "rng.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

kl_tol kl_dot_tolerance(int k, double term_max, double out_eps, double w_eps) {
    /* Two fp32 dot products of length k summed in different orders differ by
     * about 2^-24 * k * |term| / 4 (a random walk of k roundings, each of a
     * partial sum that grows like sqrt(k)); 16x that leaves a wide margin for
     * millions of elements and still catches a single wrong or missing term
     * (about |term|/4 on average) for k up to ~2^16.  Weights rounded inside
     * the kernel (fp16 dequantization) would add independent errors: sqrt(k)
     * of them, each at most w_eps * term_max, taken at 8 sigma.  The output's
     * own rounding is relative. */
    kl_tol t;
    const double kd = k > 0 ? (double)k : 1.0;
    t.atol = term_max * (16.0 * kd * ldexp(1.0, -24) + 8.0 * sqrt(kd) * w_eps);
    t.rtol = 2.0 * out_eps;
    return t;
}

/* The operations' error models (check.h; docs/harness.md, "The tolerance"). */
kl_tol kl_tol_sgemm(int k, double alpha, double beta) {
    /* |a*b| <= 1 scaled by alpha; beta * C (|C| <= 1) adds one more fp32
     * rounding of size |beta|, allowed four times over. */
    kl_tol t = kl_dot_tolerance(k, fabs(alpha), ldexp(1.0, -24), 0.0);
    t.atol += fabs(beta) * ldexp(1.0, -22);
    return t;
}

kl_tol kl_tol_gemv(int k, double wmax) {
    /* fp32 accumulation, fp16 output (rtol 2^-10: its rounding, twice). */
    return kl_dot_tolerance(k, wmax, ldexp(1.0, -11), 0.0);
}

kl_tol kl_tol_w4a16(int k, double term_max) {
    /* No fp16 rounding of weights: (q - z) is an integer of at most 4 bits,
     * exact in fp16, its products with fp16 activations are exact in fp32,
     * and the group's fp16 scale multiplies the fp32 partial sum.  A kernel
     * that rounds (q - z) * s to fp16 instead adds up to 2^-11 * sqrt(k / 3) *
     * rms|a*w| per output (one sigma; 0.006 at k = 4096 with the harness's
     * inputs, rms|a*w| = 1/3), over this whole tolerance (2^-8 there).  Room
     * for it at 8 sigma (0.048) would pass one missing term in five (|a*w|
     * of uniform a, w is below x with probability x (1 - ln x)); here one in
     * forty.  Such a kernel is outside this check's model, and fails it. */
    return kl_dot_tolerance(k, term_max, ldexp(1.0, -24), 0.0);
}

kl_tol kl_tol_gemm_bf16(int k) {
    /* |a*b| < 1; the bf16 output rounded once: rtol 2^-8, bf16's unit roundoff. */
    return kl_dot_tolerance(k, 1.0, ldexp(1.0, -9), 0.0);
}

kl_tol kl_tol_gemm_fp8(int k) {
    /* |a*b| < 1; the bf16 output rounded once (rtol 2^-8); and the tensor
     * cores' FP8 accumulation over all of K, which keeps fewer bits than an fp32
     * add.  Its error is not a random walk: measured on the H100 (docs/v28_fp8.md,
     * rel_err against K) it grows about linearly in K, and the worst element
     * stays near half of k * 2^-12 * term_max from K = 1024 to 65536.  The
     * tolerance allows k * 2^-12: at K = 4096 one missing k tile of 128 terms
     * (rms sqrt(128) / 3 = 3.8 on the harness's inputs) is still ~4x atol. */
    kl_tol t = kl_dot_tolerance(k, 1.0, ldexp(1.0, -9), 0.0);
    t.atol += (k > 0 ? (double)k : 1.0) * ldexp(1.0, -12);
    return t;
}

kl_tol kl_tol_gemm_fp8_block(int k) {
    /* Reasoned from v28's measurements, then measured with v29 on the H100: the
     * worst element at 0.40-0.50 of it from K = 1024 to 65536 (tools/fp8_accum.sh
     * -s 29), and within 0.6 in every row printed on the H100 and the H200.  Three parts:
     * - the bf16 output rounded once: rtol 2^-8, as gemm_fp8;
     * - fp32 sums (the promotion adds each k block's scaled partial sum into an
     *   fp32 accumulator; the reference is an fp32 GEMM): Part III's 16 k 2^-24,
     *   of term_max = KL_FP8_BLOCK_TERM_MAX (4: the inputs' blocks have
     *   magnitudes of their own, check.h);
     * - the tensor cores' accumulation, which keeps fewer bits than fp32, now
     *   over 128 terms only: the accumulator restarts from zero every k block.
     *   v28 measured its worst element near half of k 2^-12 term_max over one
     *   long sum (docs/v28_fp8.md); over 128 terms that allows E = 128 2^-12
     *   term_max = term_max / 32 per block, twice the worst seen at that rate.
     *   The k / 128 blocks' errors are independent (each is a rounding of its
     *   own partial sum, whose sign is random), so they add like a random walk,
     *   sqrt(k / 128) E, not k / 128 E: at K = 65536 that is 0.7 term_max, where
     *   gemm_fp8's k 2^-12 is 16 term_max.  Had the blocks' errors leaned one
     *   way, err/tol would rise with K; on the H100 it does not.
     * What it still catches, at K = 8192 where atol is 1 + 2^-5: one k block
     * missing takes sqrt(128) rms|a*b| of its terms from each element, 15 where
     * its terms are the largest (|a*b| < 4) and 0.94 where they are the smallest
     * (< 1/4); scaled by a neighbour's scale (2x or 4x off), at least half that.
     * Every row of C then has elements far outside the tolerance. */
    const double kd = k > 0 ? (double)k : 1.0;
    kl_tol t = kl_dot_tolerance(k, KL_FP8_BLOCK_TERM_MAX, ldexp(1.0, -9), 0.0);
    t.atol += KL_FP8_BLOCK_TERM_MAX * sqrt(kd / 128.0) * 128.0 * ldexp(1.0, -12);
    return t;
}

kl_tol kl_tol_exact(void) {
    kl_tol t = {0.0, 0.0};
    return t;
}

size_t kl_compare(const float *out, const float *ref, size_t n, kl_tol tol,
                  kl_compare_result *r) {
    double num = 0.0, den = 0.0;
    memset(r, 0, sizeof *r);
    for (size_t i = 0; i < n; ++i) {
        const double o = out[i], e = ref[i];
        const double d = fabs(o - e);
        const double t = tol.atol + tol.rtol * fabs(e);
        const int finite = isfinite(o);
        if (finite) {
            num += d * d;
            if (d > r->max_abs_err) r->max_abs_err = d;
            const double used = d == 0.0 ? 0.0 : d / t;   /* t == 0: Inf */
            if (used > r->tol_used) { r->tol_used = used; r->worst = i; }
        }
        den += e * e;
        /* !(d <= t) is also true when d is NaN */
        if (!finite || !(d <= t)) {
            if (!finite) r->nonfinite++;
            if (r->nreported < KL_MAX_REPORTED) {
                kl_mismatch *m = &r->first[r->nreported++];
                m->index = i;
                m->out = out[i];
                m->ref = ref[i];
                m->tol = t;
            }
            r->bad++;
        }
    }
    r->rel_err = den > 0.0 ? sqrt(num / den) : sqrt(num);
    if (r->nonfinite) r->rel_err = NAN;
    return r->bad;
}

double kl_dot_f64(const float *a, size_t sa, const float *b, size_t sb, int k) {
    double acc = 0.0;
    for (int i = 0; i < k; ++i) acc += (double)a[(size_t)i * sa] * (double)b[(size_t)i * sb];
    return acc;
}

double kl_absmax(const float *w, size_t count) {
    double m = 0.0;
    #pragma omp parallel for reduction(max : m) schedule(static)
    for (size_t i = 0; i < count; ++i) {
        const double a = fabs((double)w[i]);
        if (a > m) m = a;
    }
    return m;
}

static int cmp_double(const void *a, const void *b) {
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double kl_median(const double *v, int n) {
    if (n <= 0) return NAN;
    double *s = malloc((size_t)n * sizeof *s);
    if (!s) return NAN;
    memcpy(s, v, (size_t)n * sizeof *s);
    qsort(s, (size_t)n, sizeof *s, cmp_double);
    const double m = n % 2 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
    free(s);
    return m;
}

int kl_repeats(double per_run_ms, double budget_ms, int lo, int hi) {
    if (hi < 1) hi = 1;
    if (lo > hi) lo = hi;
    if (lo < 1) lo = 1;
    if (!(per_run_ms > 0.0)) return hi;
    const double fit = budget_ms / per_run_ms;
    if (fit >= hi) return hi;
    if (fit <= lo) return lo;
    return (int)fit;
}

#define KL_SPOT_STREAM 0x5B07C4EC5B07C4ECull   /* any constant: a stream apart from the inputs' */

int kl_spot_check(int m, int n, int k, uint64_t seed, const float *ref,
                  void (*fetch)(void *ctx, int r, int c, float *a, float *b), void *ctx,
                  char *msg, size_t len) {
    float *a = malloc(sizeof(float) * (size_t)k), *b = malloc(sizeof(float) * (size_t)k);
    if (!a || !b) { free(a); free(b); snprintf(msg, len, "out of host memory"); return 1; }
    const kl_tol tol = kl_dot_tolerance(k, 1.0, ldexp(1.0, -24), 0.0);
    /* The points: the two corners, then six from the harness's one generator,
     * on a stream of its own (the seed mixed once), so they do not follow the
     * inputs' own numbers. */
    const uint64_t stream = kl_splitmix64(seed ^ KL_SPOT_STREAM, 1);
    int bad = 0;
    for (int t = 0; t < 8 && !bad; ++t) {
        const uint64_t x = kl_splitmix64(stream, (uint64_t)t + 1);
        const int r = t == 0 ? 0 : t == 1 ? m - 1 : (int)(x % (uint64_t)m);
        const int c = t == 0 ? 0 : t == 1 ? n - 1 : (int)((x >> 32) % (uint64_t)n);
        fetch(ctx, r, c, a, b);
        const double want = kl_dot_f64(a, 1, b, 1, k), got = ref[(size_t)r * n + c];
        if (!(fabs(got - want) <= tol.atol + tol.rtol * fabs(want))) {
            snprintf(msg, len, "C[%d][%d] = %.7g disagrees with the CPU fp64 reference %.7g", r, c, got, want);
            bad = 1;
        }
    }
    free(a);
    free(b);
    return bad;
}
