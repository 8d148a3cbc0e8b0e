/*
 * lt.h - what the two GEMM operations (op_gemm_bf16.c, op_gemm_fp8.c) share of
 * cuBLASLt: the "TN" view they give it, how many of its heuristic's algorithms
 * they time and with what workspace, and the query.
 *
 * Row-major C[m][n] = A[m][k] B[n][k]^T is column-major C^T (n x m) = op(B) A:
 * Lt's A is our B (k x n column-major, ld k, transposed), Lt's B our A (k x m,
 * ld k), Lt's C and D our C (n x m, ld n).  FP8 accepts only this form.
 */
#ifndef KL_LT_H
#define KL_LT_H

#include "op.h"
#include <cublasLt.h>

#define KL_LT_ALGOS 4                 /* cublasLt candidates timed per problem (and per mode) */
#define KL_LT_WORKSPACE (32u << 20)   /* cuBLAS's own default on Hopper */

/* The layouts of our B, A (type `in`) and C (type `out`) for problem p. */
static inline void kl_lt_tn_layouts(const kl_problem *p, cudaDataType_t in, cudaDataType_t out,
                                    cublasLtMatrixLayout_t *lb, cublasLtMatrixLayout_t *la, cublasLtMatrixLayout_t *lc) {
    CUBLAS_CHECK(cublasLtMatrixLayoutCreate(lb, in, p->k, p->n, p->k));
    CUBLAS_CHECK(cublasLtMatrixLayoutCreate(la, in, p->k, p->m, p->k));
    CUBLAS_CHECK(cublasLtMatrixLayoutCreate(lc, out, p->n, p->m, p->n));
}

/* A descriptor for fp32 compute and scale, Lt's A transposed and its B not. */
static inline cublasLtMatmulDesc_t kl_lt_tn_desc(void) {
    cublasLtMatmulDesc_t d;
    const cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
    CUBLAS_CHECK(cublasLtMatmulDescCreate(&d, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(d, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta));
    CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(d, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb));
    return d;
}

/* Up to KL_LT_ALGOS algorithms the heuristic proposes for desc on these layouts
 * (C and D the same), given KL_LT_WORKSPACE, into algo; returns how many.  A
 * query that fails returns 0 and, when err is not NULL, says why in *err. */
static inline int kl_lt_algos(cublasLtHandle_t lt, cublasLtMatmulDesc_t desc, cublasLtMatrixLayout_t lb,
                              cublasLtMatrixLayout_t la, cublasLtMatrixLayout_t lc, cublasLtMatmulAlgo_t *algo,
                              const char **err) {
    cublasLtMatmulPreference_t pref;
    CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&pref));
    const size_t ws = KL_LT_WORKSPACE;
    CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws));
    cublasLtMatmulHeuristicResult_t res[KL_LT_ALGOS];
    int n = 0;
    const cublasStatus_t st = cublasLtMatmulAlgoGetHeuristic(lt, desc, lb, la, lc, lc, pref, KL_LT_ALGOS, res, &n);
    if (st != CUBLAS_STATUS_SUCCESS) {
        n = 0;
        if (err) *err = cublasGetStatusString(st);
    }
    for (int i = 0; i < n; ++i) algo[i] = res[i].algo;
    CUBLAS_CHECK(cublasLtMatmulPreferenceDestroy(pref));
    return n;
}

#endif /* KL_LT_H */
