/*
 * gemv_device.cu - C++-only pieces of the Part II ops (see gemv_ops.h).
 */
#include "gemv_ops.h"

#include <cuda_fp16.h>

extern "C" cublasStatus_t kl_cublas_hshgemv(cublasHandle_t h, int n, int k, const kl_f16 *w, const kl_f16 *x,
                                            kl_f16 *y) {
    const float one = 1.0f, zero = 0.0f;
    /* Row-major W[n][k] is the column-major k x n matrix W^T: y = (W^T)^T x. */
    return cublasHSHgemvStridedBatched(h, CUBLAS_OP_T, k, n, &one, (const __half *)w, k, (long long)n * k,
                                       (const __half *)x, 1, k, &zero, (__half *)y, 1, n, 1);
}
