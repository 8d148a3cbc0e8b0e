/*
 * gemv_ops.h - what the Part II ops on an n x k weight matrix share
 * (op_gemv.c, op_dequant.c), and the C++-only cuBLAS call they need
 * (gemv_device.cu).
 */
#ifndef KL_GEMV_OPS_H
#define KL_GEMV_OPS_H

#include "kl.h"
#include <cublas_v2.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Squares run when no size is given, and the model shapes (m = 1) added to them. */
#define KL_GEMV_DEFAULT_SIZES "1024,2048,4096,8192,16384"
#define KL_GEMV_NMODEL_SHAPES 6
extern const kl_problem kl_gemv_model_shapes[KL_GEMV_NMODEL_SHAPES];

/* One weight matrix, n x k, m = 1 (-m with another value is refused); and,
 * for k_multiple > 1 (q4_0's block of 32), k a multiple of it.  0, or 1 with
 * the reason in msg. */
int kl_gemv_shape(kl_problem *p, int m_given, int k_multiple, char *msg, size_t len);

/* Weights uniform in [-1, 1) on the host, one splitmix64 stream per row (rng.h),
 * OpenMP over rows: the same values whatever the thread count. */
void kl_host_uniform_rows(float *w, int n, int k, uint64_t seed);

/* y[n] = W[n][k] x with row-major fp16 W, fp32 accumulation, through
 * cublasHSHgemvStridedBatched (batch 1), which cublas_api.h declares for C++
 * only. */
cublasStatus_t kl_cublas_hshgemv(cublasHandle_t h, int n, int k, const kl_f16 *w, const kl_f16 *x, kl_f16 *y);

#ifdef __cplusplus
}
#endif
#endif
