/*
 * gemv_ops.h - C++-only pieces of the Part II ops (common/gemv_device.cu),
 * callable from op_gemv.c (plain C).
 */
#ifndef KL_GEMV_OPS_H
#define KL_GEMV_OPS_H

#include "kl.h"
#include <cublas_v2.h>

#ifdef __cplusplus
extern "C" {
#endif

/* y[n] = W[n][k] x with row-major fp16 W, fp32 accumulation, through
 * cublasHSHgemvStridedBatched (batch 1), which cublas_api.h declares for C++
 * only. */
cublasStatus_t kl_cublas_hshgemv(cublasHandle_t h, int n, int k, const kl_f16 *w, const kl_f16 *x, kl_f16 *y);

#ifdef __cplusplus
}
#endif
#endif
