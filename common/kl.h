/*
 * kl.h - the kernel-ladder harness, as a step sees it.
 *
 * A step file holds its kernels and a launcher; main() describes them in a
 * kl_step and hands it to kl_main(), which owns everything else: the command
 * line, the GPU, random inputs, poisoning, the cuBLAS reference, the check,
 * timing and the report.  Plain C behind extern "C" so the harness is C11.
 */
#ifndef KL_H
#define KL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <cuda_runtime.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Exit codes (cuda-samples style: they mean something to scripts). */
enum { KL_EXIT_OK = 0, KL_EXIT_WRONG = 1, KL_EXIT_USAGE = 2, KL_EXIT_NO_GPU = 3 };

/* Every CUDA call is checked; a failure names the call, file and line, adds
 * a hint where there is one, and exits (3, or 1 for a faulting kernel). */
void kl_cuda_fail(cudaError_t err, const char *call, const char *file, int line);
#define CUDA_CHECK(call)                                                        \
    do {                                                                        \
        cudaError_t kl_err_ = (call);                                           \
        if (kl_err_ != cudaSuccess) kl_cuda_fail(kl_err_, #call, __FILE__, __LINE__); \
    } while (0)

/* After every kernel launch: catches bad launch configurations at once. */
#define KL_CHECK_LAUNCH() CUDA_CHECK(cudaGetLastError())

/* fp16 and bf16 as stored in memory.  Device code reinterprets them as
 * __half and __nv_bfloat16. */
typedef uint16_t kl_f16;
typedef uint16_t kl_bf16;

/* One problem size.  SGEMM: C[m][n] = alpha*A[m][k]*B[k][n] + beta*C.
 * GEMV: y[n] = W[n][k] x[k] (m = 1).  Skinny GEMM: C[m][n] = A[m][k] W[n][k]^T. */
typedef struct kl_problem { int m, n, k; } kl_problem;

/* ---- launcher signatures, one per kind of operation -------------------- */

/* Part I.  Row-major, C = alpha*A*B + beta*C.  When beta == 0, C is not
 * read (BLAS semantics: the harness poisons C with NaN to prove it). */
typedef void (*kl_sgemm_fn)(int m, int n, int k, float alpha, const float *a,
                            const float *b, float beta, float *c,
                            void *ctx, cudaStream_t stream);
/* (Parameter names are lower-case on purpose: steps take tile sizes such as
 * BM or M as -D macros, which must never rename a prototype's parameters.) */

/* Part II.  y = W x with the weights in the op's format (see ops/quant.h):
 *   gemv_f16     w: fp16 [n][k]
 *   qgemv_int8   w: uint8 [n][k], scales/zeros: fp16 [n]      w=(q-z)*s
 *   qgemv_int4   w: uint8 [n][k/2] (low nibble = even k), scales/zeros:
 *                fp16 [n][k/128]                               w=(q-z)*s
 *   qgemv_q4_0   w: kl_block_q4_0 [n][k/32], scales/zeros NULL  w=(q-8)*d */
typedef struct kl_gemv_args {
    int n, k;
    const void *w;
    const kl_f16 *scales, *zeros;
    const kl_f16 *x;   /* [k] */
    kl_f16 *y;         /* [n] */
} kl_gemv_args;
typedef void (*kl_gemv_fn)(const kl_gemv_args *a, void *ctx, cudaStream_t stream);

/* Dequantize only (v15's first lesson): q4_0 blocks -> fp16 [n][k]. */
typedef struct kl_dequant_args {
    int n, k;
    const void *w;
    kl_f16 *out;
} kl_dequant_args;
typedef void (*kl_dequant_fn)(const kl_dequant_args *a, void *ctx, cudaStream_t stream);

/* v16.  C[m][n] (fp32) = A[m][k] (fp16) * dequant(W)[n][k]^T, W in the
 * qgemv_int4 format with the nibbles of each 4-byte word in w4a16's order
 * (ops/quant.h: columns 0 2 4 6 1 3 5 7 from the bottom).  workspace: at least
 * KL_W4A16_MAX_SPLIT*m*n floats, for steps that keep per-split partial tiles.
 * C holds garbage on entry: a step that accumulates into it must zero it
 * itself (inside the timed region). */
#define KL_W4A16_MAX_SPLIT 32
typedef struct kl_w4a16_args {
    int m, n, k;
    const uint8_t *w;
    const kl_f16 *scales, *zeros;
    const kl_f16 *a;   /* [m][k] */
    float *c;          /* [m][n] */
    float *workspace;
} kl_w4a16_args;
typedef void (*kl_w4a16_fn)(const kl_w4a16_args *a, void *ctx, cudaStream_t stream);

/* Part III.  C[m][n] (bf16) = A[m][k] (bf16) * B[n][k]^T, fp32 accumulation:
 * a linear layer's layout (activations A and weights B both K-contiguous,
 * "TN" in BLAS terms).  All three row-major and densely packed; k is a
 * multiple of 8 (16-byte rows), m and n anything from 1. */
typedef void (*kl_gemm_bf16_fn)(int m, int n, int k, const kl_bf16 *a, const kl_bf16 *b,
                                kl_bf16 *c, void *ctx, cudaStream_t stream);

/* Part V.  C[m][n] (bf16) = sa * sb * (A[m][k] B[n][k]^T), A and B in FP8
 * e4m3 (one byte per element, K-contiguous, the Part III layout), fp32
 * accumulation.  gemm_fp8: sa and sb point at one float each (per tensor),
 * on the device, as cuBLASLt takes them.  k is a multiple of 16 (rows of 16
 * bytes); m and n anything from 1.
 * gemm_fp8_block (DeepSeek-V3's recipe, the layouts cuBLASLt's VEC128 and
 * BLK128x128 modes read): A scaled per 1 x 128 (a row, 128 of k), B per
 * 128 x 128; C[i][j] = sum over k blocks kb of sa(i, kb) sb(j / 128, kb)
 * (sum over k in kb of a[i][k] b[j][k]), with
 *   sa(i, kb) = sa[kb * KL_FP8_SA_LD(m) + i]         (m fastest, columns padded)
 *   sb(jb, kb) = sb[jb * KL_FP8_SB_LD(k) + kb]       (k blocks fastest, rows padded)
 * k is a multiple of 128.  Both pads round up to 4 floats, 16 bytes: the row
 * stride a TMA copy needs, and cuBLASLt's sb; the pads hold zeros. */
#define KL_FP8_BLOCK 128
#define KL_FP8_SA_LD(m) (((m) + 3) / 4 * 4)
#define KL_FP8_SB_LD(k) ((((k) + KL_FP8_BLOCK - 1) / KL_FP8_BLOCK + 3) / 4 * 4)
typedef struct kl_gemm_fp8_args {
    int m, n, k;
    const uint8_t *a, *b;      /* e4m3 [m][k], [n][k] */
    const float *sa, *sb;      /* device: the scales */
    kl_bf16 *c;                /* [m][n] */
} kl_gemm_fp8_args;
typedef void (*kl_gemm_fp8_fn)(const kl_gemm_fp8_args *a, void *ctx, cudaStream_t stream);

/* ---- what a step hands the harness -------------------------------------- */

struct kl_op;  /* an operation the harness knows how to set up, check and time */
extern const struct kl_op kl_op_sgemm, kl_op_gemv_f16, kl_op_qgemv_int8,
    kl_op_qgemv_int4, kl_op_qgemv_q4_0, kl_op_dequant_q4_0, kl_op_w4a16, kl_op_gemm_bf16,
    kl_op_gemm_bf16_shapes,   /* Part IV: the same GEMM, over its shapes (part "4") */
    kl_op_gemm_fp8,           /* Part V: e4m3 in, per-tensor scales, bf16 out */
    kl_op_gemm_fp8_block;     /* Part V: the same with DeepSeek-V3's block scales */

/* One kernel of a step.  Most steps have one; a step may show several side by
 * side (v15: dequantize variants, then the fused GEMV; v16: decompositions). */
typedef struct kl_kernel {
    const struct kl_op *op;
    const char *variant;          /* "" or a short name: the CSV's last column */
    kl_sgemm_fn sgemm;            /* set the one field that matches op */
    kl_gemv_fn gemv;
    kl_dequant_fn dequant;
    kl_w4a16_fn w4a16;
    kl_gemm_bf16_fn gemm_bf16;
    kl_gemm_fp8_fn gemm_fp8;
    void *ctx;                    /* handed back to the launcher untouched */
} kl_kernel;

/* A step-specific integer option, e.g. {"split", "SplitK factor (0: table)", &split, 0, 32}.
 * It appears in --help and is parsed as --split N. */
typedef struct kl_opt {
    const char *name, *help;
    int *value;
    int min, max;
} kl_opt;

#define KL_MAX_KERNELS 8
#define KL_MAX_OPTS 8
typedef struct kl_step {
    int number;                   /* 7 for step7 */
    const char *title;            /* one line: what this step changes */
    /* What the step needs of the GPU; the harness checks before anything runs
     * and exits 3 with one line naming the need and what this GPU has.  The
     * source says the same to make in a line of its own (`// needs: sm_80
     * (why)` or `// build: sm_90a`, docs/adding_a_step.md). */
    int min_cc;                   /* lowest compute capability, e.g. 80; 0: any */
    int only_cc;                  /* nonzero: this compute capability only (90: sm_90a code) */
    size_t smem_per_block;        /* most shared memory one block asks for, bytes; 0: within
                                     the 48 KB every GPU gives without asking */
    /* Optional: return 0 if the step can compute p, else write why (one line,
     * with what to do instead) into msg and return nonzero: exit 2. */
    int (*accepts)(const kl_problem *p, char *msg, size_t len);
    /* Optional: print the plan each kernel would run p with on a GPU of `sms` SMs (host
     * code only, no GPU touched): --plan SMS calls it for every problem, then exits. */
    void (*show_plan)(const kl_problem *p, int sms);
    kl_kernel kernels[KL_MAX_KERNELS];
    kl_opt opts[KL_MAX_OPTS];
} kl_step;

/* Parse the command line, run, report.  Returns the exit code for main. */
int kl_main(int argc, char **argv, const kl_step *step);

/* Blocks of `kernel` (launched with `threads` threads and `smem_bytes` of
 * dynamic shared memory) that the current GPU holds at once: SMs x blocks per
 * SM, from the occupancy API; asked once per kernel and remembered.  One
 * wave of a grid is this many blocks. */
int kl_blocks_at_once(const void *kernel, int threads, size_t smem_bytes);

#ifdef __cplusplus
}
#endif
#endif /* KL_H */
