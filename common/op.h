/*
 * op.h - how the harness drives one kind of operation (internal to common/).
 *
 * The engine (engine.c) knows nothing about SGEMM or GEMV.  It asks an op
 * for the problem's shape, FLOPs and bytes, has it allocate inputs, run one
 * checked launch (output poisoned first) and return host copies of the output
 * and of the reference, and run the timed body of the step and of cuBLAS.
 * Adding an operation means adding one kl_op; the engine and the tools stay
 * as they are (docs/adding_a_step.md).
 */
#ifndef KL_OP_H
#define KL_OP_H

#include "kl.h"
#include "check.h"
#include "device.h"
#include "timing.h"
#include "ceiling.h"   /* KL_TC_BF16, KL_TC_FP8 */
#include <cublas_v2.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CUBLAS_CHECK(call)                                                      \
    do {                                                                        \
        cublasStatus_t kl_st_ = (call);                                         \
        if (kl_st_ != CUBLAS_STATUS_SUCCESS) {                                  \
            fprintf(stderr, "cuBLAS error: %s failed at %s:%d: %s\n", #call,    \
                    __FILE__, __LINE__, cublasGetStatusString(kl_st_));         \
            exit(KL_EXIT_NO_GPU);                                               \
        }                                                                       \
    } while (0)

/* Result of one checked launch: host arrays owned by the op's state. */
typedef struct kl_check_data {
    const float *out, *ref;
    size_t count;
    int cols;                  /* row length, to print (row, col) of a mismatch */
    kl_tol tol;
    const char *what;          /* e.g. "beta=0, C poisoned with NaN" */
} kl_check_data;

typedef struct kl_op {
    const char *name;          /* CSV "op": sgemm, gemv, qgemv_int8 ... */
    const char *dtype;         /* CSV "dtype": fp32, fp16, int8, int4, q4_0 */
    const char *baseline;      /* the reference, for the header; NULL: none timed */
    const char *part;          /* CSV "part": the summary table its rows go to (tools/parts.tsv):
                                  "1", "2", "2-skinny" (v16), "3"; a new key gets a table of its own */
    int memory_bound;          /* 1: GB/s, % of read ceiling, cold L2 (CSV "bound": memory, else compute) */
    int tensor_core;           /* % of a dense tensor-core peak, not of FP32's: KL_TC_BF16 or KL_TC_FP8 */
    const char *default_sizes; /* squares used when no size is given */
    const kl_problem *extra_shapes; /* shapes appended to the defaults (models); m = 0: m = n */
    int nextra_shapes;
    const int *m_list;         /* v16: each problem is run at these m; NULL: once */
    int nm_list;
    int checks;                /* checked launches per kernel and problem */

    /* Validate p (and set m where the op fixes it, e.g. m = 1 for GEMV;
     * m_given says whether the user chose m with -m); nonzero + msg: exit 2. */
    int (*shape)(kl_problem *p, int m_given, char *msg, size_t len);
    double (*flops)(const kl_problem *p);
    double (*bytes)(const kl_problem *p);          /* fewest bytes moved */
    size_t (*rotating_bytes)(const kl_problem *p); /* one copy of what rotates; a compute-bound op
                                                       returns 0 (L2 warm) but for a problem it times
                                                       cold (gemm_bf16 at M <= 64) */
    size_t (*device_bytes)(const kl_problem *p, int nrot);
    void *(*setup)(const kl_problem *p, int nrot, const kl_env *env);
    /* Checked launch number `pass` (0..checks-1): poison, run, copy back. */
    void (*check)(void *st, const kl_kernel *kern, int pass, kl_check_data *out);
    void (*run)(void *st, const kl_kernel *kern, int rot, cudaStream_t s);
    void (*run_ref)(void *st, int rot, cudaStream_t s);   /* NULL: no baseline */
    /* Optional: 0 when the baseline cannot run this problem (the library has no
     * algorithm for it): its column stays empty and baseline_note says why. */
    int (*has_ref)(void *st);
    /* Optional: one line, printed under a problem's rows (not in --check-only),
     * naming what the cuBLAS column timed when the op picks it per problem;
     * NULL (or a NULL result): nothing to add. */
    const char *(*baseline_note)(void *st);
    void (*teardown)(void *st);
} kl_op;

#ifdef __cplusplus
}
#endif
#endif /* KL_OP_H */
