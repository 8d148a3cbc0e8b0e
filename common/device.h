/*
 * device.h - the GPU as the harness uses it (internal to common/): the
 * device in hand (kl_env), the harness's own kernels (device.cu: random
 * inputs, poison, conversions, the read streams, the hold), and the small
 * host utilities around them (util.c: program name, errors, allocation,
 * opening the device).
 */
#ifndef KL_DEVICE_H
#define KL_DEVICE_H

#include "kl.h"
#include <cublas_v2.h>

#ifdef __cplusplus
extern "C" {
#endif

/* What the engine knows about the GPU, handed to every op. */
typedef struct kl_env {
    int device;
    int sms;
    int cc;                    /* 90 for sm_90 */
    size_t l2_bytes;
    cublasHandle_t cublas;
    cudaStream_t stream;
    uint64_t seed;
    int check_only;            /* --check-only: nothing is timed, so no op picks a baseline by time */
} kl_env;

/* Blocks of 256 threads for a grid-stride loop over n elements: one per 256
 * elements, at least 1, at most cap. */
static inline unsigned kl_grid_for(size_t n, unsigned cap) {
    const size_t blocks = (n + 255) / 256;
    return (unsigned)(blocks < cap ? (blocks ? blocks : 1) : cap);
}

/* ---- kernels (device.cu) ------------------------------------------------- */
/* Deterministic uniform [lo, hi) from (seed, index): same data on any GPU. */
void kl_fill_uniform_f32(float *d, size_t n, float lo, float hi, uint64_t seed, cudaStream_t s);
void kl_fill_uniform_f16(kl_f16 *d, size_t n, float lo, float hi, uint64_t seed, cudaStream_t s);
void kl_f16_to_f32(const kl_f16 *in, float *out, size_t n, cudaStream_t s);
void kl_f32_to_f16(const float *in, kl_f16 *out, size_t n, cudaStream_t s);
void kl_fill_uniform_bf16(kl_bf16 *d, size_t n, float lo, float hi, uint64_t seed, cudaStream_t s);
void kl_bf16_to_f32(const kl_bf16 *in, float *out, size_t n, cudaStream_t s);
/* NaN in fp32, fp16 and bf16 alike (all bits set). */
void kl_poison(void *d, size_t bytes, cudaStream_t s);
/* The read streams behind the read ceiling and read_floor (16-byte loads,
 * 512-thread blocks, nothing written): variant 0..KL_READ_STREAMS-1 reads
 * `bytes` (a multiple of 16) from buf with `blocks` blocks.  And a launch
 * that does nothing. */
#define KL_READ_STREAMS 4
void kl_read_stream(int variant, const void *buf, size_t bytes, int blocks, float *sink, cudaStream_t s);
const char *kl_read_stream_name(int variant);
void kl_empty_launch(int blocks, float *sink, cudaStream_t s);
/* A one-thread kernel that returns when the host sets *flag (host memory
 * mapped for the GPU) or after limit_ms: see timing.c. */
void kl_hold_stream(const volatile int *flag, double limit_ms, cudaStream_t s);

/* ---- host utilities (util.c) --------------------------------------------- */
void kl_set_prog(const char *name);                /* the name error messages start with */
const char *kl_prog(void);
/* Checks that `device` exists (one line and exit code 3 or 2 if not), selects
 * it, fills prop and env (all but cublas and seed) and creates env->stream. */
int kl_open_device(int device, kl_env *env, struct cudaDeviceProp *prop);
/* What the harness knows of a GPU when it decides whether a step can run. */
typedef struct kl_gpu_caps {
    const char *name;          /* "NVIDIA H100 80GB HBM3" */
    int cc;                    /* 90 for compute capability 9.0 */
    size_t smem_optin;         /* shared memory a block may have (cudaDevAttrMaxSharedMemoryPerBlockOptin) */
} kl_gpu_caps;
/* 0 if `gpu` can run `step` (its min_cc, only_cc and smem_per_block); else
 * KL_EXIT_NO_GPU with one line in msg naming the need and what gpu has. */
int kl_gpu_refuses(const kl_step *step, const kl_gpu_caps *gpu, char *msg, size_t len);
void *kl_dmalloc(size_t bytes);                    /* cudaMalloc or exit 3 */
void *kl_hmalloc(size_t bytes);                    /* malloc or exit 2 */
void kl_copy_to_host(void *h, const void *d, size_t bytes);
/* kl_spot_check (check.h) of an operation's cuBLAS reference C[m][n]: a
 * disagreement is an internal error, reported in one line, exit 1. */
void kl_require_spot_check(int m, int n, int k, uint64_t seed, const float *ref,
                           void (*fetch)(void *ctx, int r, int c, float *a, float *b), void *ctx);
/* Buffers inside one allocation start on 256-byte boundaries. */
static inline size_t kl_align256(size_t b) { return (b + 255) & ~(size_t)255; }

#ifdef __cplusplus
}
#endif
#endif /* KL_DEVICE_H */
