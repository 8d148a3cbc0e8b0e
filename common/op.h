/*
 * op.h - how the harness drives one kind of operation (internal to common/).
 *
 * The engine (harness.c) knows nothing about SGEMM or GEMV.  It asks an op
 * for the problem's shape, FLOPs and bytes, has it allocate inputs, run one
 * checked launch (output poisoned first) and return host copies of the output
 * and of the reference, and run the timed body of the step and of cuBLAS.
 * Adding an operation means adding one kl_op; the engine stays as it is.
 */
#ifndef KL_OP_H
#define KL_OP_H

#include "kl.h"
#include "check.h"
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

/* What the engine knows about the GPU, handed to every op. */
typedef struct kl_env {
    int device;
    int sms;
    int cc;                    /* 90 for sm_90 */
    size_t l2_bytes;
    cublasHandle_t cublas;
    cudaStream_t stream;
    uint64_t seed;
} kl_env;

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
    int memory_bound;          /* 1: GB/s, % of read ceiling, cold L2 */
    int tensor_core;           /* 1: % of the dense bf16 tensor-core peak, not of FP32's */
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
    size_t (*rotating_bytes)(const kl_problem *p); /* one copy of what rotates */
    size_t (*device_bytes)(const kl_problem *p, int nrot);
    void *(*setup)(const kl_problem *p, int nrot, const kl_env *env);
    /* Checked launch number `pass` (0..checks-1): poison, run, copy back. */
    void (*check)(void *st, const kl_kernel *kern, int pass, kl_check_data *out);
    void (*run)(void *st, const kl_kernel *kern, int rot, cudaStream_t s);
    void (*run_ref)(void *st, int rot, cudaStream_t s);   /* NULL: no baseline */
    /* Optional: one line, printed under a problem's rows (not in --check-only),
     * naming what the cuBLAS column timed when the op picks it per problem;
     * NULL (or a NULL result): nothing to add. */
    const char *(*baseline_note)(void *st);
    void (*teardown)(void *st);
} kl_op;

/* ---- device helpers (common/device.cu) ---------------------------------- */
/* Deterministic uniform [lo, hi) from (seed, index): same data on any GPU. */
void kl_fill_uniform_f32(float *d, size_t n, float lo, float hi, uint64_t seed, cudaStream_t s);
void kl_fill_uniform_f16(kl_f16 *d, size_t n, float lo, float hi, uint64_t seed, cudaStream_t s);
void kl_f16_to_f32(const kl_f16 *in, float *out, size_t n, cudaStream_t s);
void kl_fill_uniform_bf16(kl_bf16 *d, size_t n, float lo, float hi, uint64_t seed, cudaStream_t s);
void kl_bf16_to_f32(const kl_bf16 *in, float *out, size_t n, cudaStream_t s);
void kl_f32_to_f16(const float *in, kl_f16 *out, size_t n, cudaStream_t s);
/* NaN in fp32 and fp16 alike (all bits set). */
void kl_poison(void *d, size_t bytes, cudaStream_t s);
/* Streaming-read bandwidth of the current GPU in GB/s (measured once). */
double kl_read_bandwidth_gbps(const kl_env *env);
/* The read streams behind it (16-byte loads, 512-thread blocks, nothing
 * written): variant 0..KL_READ_STREAMS-1 reads `bytes` (a multiple of 16)
 * from buf with `blocks` blocks.  And a launch that does nothing. */
#define KL_READ_STREAMS 4
void kl_read_stream(int variant, const void *buf, size_t bytes, int blocks, float *sink, cudaStream_t s);
const char *kl_read_stream_name(int variant);
void kl_empty_launch(int blocks, float *sink, cudaStream_t s);
/* A one-thread kernel that returns when the host sets *flag (host memory
 * mapped for the GPU) or after limit_ms: see kl_median_queued_us. */
void kl_hold_stream(const volatile int *flag, double limit_ms, cudaStream_t s);

/* ---- host helpers ------------------------------------------------------- */
void kl_set_prog(const char *name);                /* the name error messages start with */
/* Checks that `device` exists (one line and exit code 3 or 2 if not), selects
 * it, fills prop and env (all but cublas and seed) and creates env->stream. */
int kl_open_device(int device, kl_env *env, struct cudaDeviceProp *prop);
void *kl_dmalloc(size_t bytes);                    /* cudaMalloc or exit 3 */
void *kl_hmalloc(size_t bytes);                    /* malloc or exit 3 */
void kl_copy_to_host(void *h, const void *d, size_t bytes);
/* Number of rotating copies so that one pass over them is well over twice L2. */
int kl_rotations(const kl_env *env, size_t bytes_per_copy);
/* Time in ms of one launch(ctx, i), between its own pair of events, synchronized. */
double kl_launch_ms(void (*launch)(void *ctx, int i), void *ctx, int i, cudaStream_t s);
/* Median time in ms of `runs` launches of launch(ctx, i), each between its own
 * pair of events and synchronized, after `warmups` untimed ones (i counts all
 * of them).  For the read ceiling (a 1 GiB stream: the host's launch cost
 * is lost in it); the step and its baseline are timed by the engine. */
double kl_median_launch_ms(void (*launch)(void *ctx, int i), void *ctx, int warmups, int runs,
                           cudaStream_t s);
/* Median time in us of n launches of launch(ctx, i), each between its own
 * pair of events, all queued behind a held stream before the GPU starts them,
 * after `warmups` untimed ones run to completion (i counts all of them, so
 * rotating buffers keep rotating): how the engine times the step and cuBLAS,
 * how the GEMV baseline is chosen, and how tools/read_floor times reads. */
double kl_median_queued_us(void (*launch)(void *ctx, int i), void *ctx, int warmups, int n, cudaStream_t s);
/* Buffers inside one allocation start on 256-byte boundaries. */
static inline size_t kl_align256(size_t b) { return (b + 255) & ~(size_t)255; }

#ifdef __cplusplus
}
#endif
#endif /* KL_OP_H */
