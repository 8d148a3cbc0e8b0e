/*
 * check.h - host-side correctness and statistics, pure C (tested on the CPU).
 */
#ifndef KL_CHECK_H
#define KL_CHECK_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Element i passes when |out_i - ref_i| <= atol + rtol * |ref_i| and out_i is
 * finite.  atol carries the K-dependent rounding of a dot product. */
typedef struct kl_tol { double atol, rtol; } kl_tol;

/* Tolerance for dot products of length k, accumulated in fp32, whose terms
 * are at most term_max in magnitude:
 *   atol = term_max * (16 * k * 2^-24 + 8 * sqrt(k) * w_eps),  rtol = 2 * out_eps.
 * out_eps: half the output rounding a check allows (2^-24 fp32, 2^-11 fp16,
 * 2^-9 bf16, whose rtol 2^-8 is one rounding); w_eps: the rounding of each
 * weight inside the kernel (0 when the kernel dequantizes exactly, as every
 * operation's check below assumes).  docs/harness.md derives it. */
kl_tol kl_dot_tolerance(int k, double term_max, double out_eps, double w_eps);

/* Each operation's tolerance: the one place its error model is written down
 * (tests/unit_tolerance.c pins every value).
 *   sgemm:     fp32 out, alpha * sum a*b with |a*b| <= 1, plus beta * C's one rounding
 *   gemv:      fp16 out (gemv, qgemv_*), terms |w*x| <= wmax, exact dequantization
 *   w4a16:     fp32 out, terms <= term_max, exact dequantization (integers (q - z)
 *              times fp16 activations are exact; the scale is applied in fp32)
 *   gemm_bf16: bf16 out rounded once, terms |a*b| < 1
 *   gemm_fp8:  bf16 out rounded once, terms |a*b| <= 1, the tensor cores' FP8
 *              accumulation (fewer bits than fp32: check.c says how many)
 *   gemm_fp8_block: bf16 out rounded once, terms |a*b| <= KL_FP8_BLOCK_TERM_MAX,
 *              the tensor cores' accumulation within each 128 of K, promoted to fp32
 *   exact:     q4_0 -> fp16 dequantization, bit for bit */
kl_tol kl_tol_sgemm(int k, double alpha, double beta);
kl_tol kl_tol_gemv(int k, double wmax);
kl_tol kl_tol_w4a16(int k, double term_max);
kl_tol kl_tol_gemm_bf16(int k);
kl_tol kl_tol_gemm_fp8(int k);
/* The largest |a*b| of gemm_fp8_block's inputs (op_gemm_fp8.c, which checks it
 * at setup): A uniform in [-2, 2) and B in [-0.5, 0.5), each block times 2^0..2^2
 * and 2^-2..2^0, so |a*b| <= 2 * 4 * 0.5 * 1 = 4. */
#define KL_FP8_BLOCK_TERM_MAX 4.0
kl_tol kl_tol_gemm_fp8_block(int k);
kl_tol kl_tol_exact(void);

#define KL_MAX_REPORTED 5
typedef struct kl_mismatch { size_t index; float out, ref; double tol; } kl_mismatch;
typedef struct kl_compare_result {
    size_t bad;                  /* elements out of tolerance, NaN or Inf */
    size_t nonfinite;            /* of those, NaN or Inf in out */
    double rel_err;              /* ||out - ref||_2 / ||ref||_2 (finite ones); NaN if any is not */
    double max_abs_err;          /* over the finite ones */
    /* How much of the tolerance the worst element uses: max of |out - ref| /
     * (atol + rtol * |ref|) over the finite ones (<= 1: within it; a zero
     * tolerance makes any difference Inf), and that element's index. */
    double tol_used;
    size_t worst;
    int nreported;
    kl_mismatch first[KL_MAX_REPORTED];   /* the first bad ones, with the tolerance there */
} kl_compare_result;

/* Compare n elements.  Returns the number of bad elements (0: pass). */
size_t kl_compare(const float *out, const float *ref, size_t n, kl_tol tol,
                  kl_compare_result *r);

/* The CPU reference: sum of a[i*sa] * b[i*sb] for i < k, in fp64.  The
 * harness checks the GPU reference (cuBLAS) against it at sample points, so a
 * wrong reference call cannot make a wrong step pass. */
double kl_dot_f64(const float *a, size_t sa, const float *b, size_t sb, int k);

/* A GPU reference GEMM result ref (m x n, row-major, host copy) checked at 8
 * points, the two corners C[0][0] and C[m-1][n-1] and 6 drawn from seed,
 * against fp64 dot products of row r of A and column c of B, which fetch(ctx,
 * r, c, a, b) writes into a and b (k floats each), at the fp32 tolerance.
 * Returns 0, or 1 with the disagreeing point described in msg. */
int kl_spot_check(int m, int n, int k, uint64_t seed, const float *ref,
                  void (*fetch)(void *ctx, int r, int c, float *a, float *b), void *ctx,
                  char *msg, size_t len);

/* max |w[i]| over count floats: the term size a tolerance scales with. */
double kl_absmax(const float *w, size_t count);

/* Median of n doubles (sorts a copy; n >= 1). */
double kl_median(const double *v, int n);

/* How many timed repeats fit a budget: clamp(budget / per_run, lo, hi). */
int kl_repeats(double per_run_ms, double budget_ms, int lo, int hi);

#ifdef __cplusplus
}
#endif
#endif
