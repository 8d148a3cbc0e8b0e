/*
 * op_dequant.c - v15's first lesson: dequantize q4_0 blocks (quant.h) to
 * fp16 [n][k], nothing else.  A kernel moves the blocks in and the fp16
 * matrix out, so the op reports GB/s (no FLOPs) and has no cuBLAS baseline.
 *
 * Inputs: the weights of op_gemv.c's qgemv_q4_0 (random uniform [-1, 1) on
 * the host, quantized by quant.c), in their own seed stream.
 * Check: exact.  The host dequantizer's value (q - 8) * d is exact in fp32,
 * and the kernel's fp16 output is that value rounded once, so every element
 * must equal it rounded to fp16.
 * Cold L2: each rotating copy holds the blocks and the fp16 output (3.5x
 * their size), so reads and writes both miss L2.
 */
#include "op.h"
#include "quant.h"
#include "gemv_ops.h"

#include <string.h>

typedef struct dq_state {
    kl_problem p;
    const kl_env *env;
    int nrot;
    size_t out_off, stride;          /* inside one copy: blocks at 0, fp16 output at out_off */
    unsigned char *rot;              /* nrot copies of {blocks, output} */
    float *h_out, *h_ref;            /* host: output and the exact answer, fp32 */
    kl_f16 *h_y;                     /* host: the output as fp16 */
} dq_state;

static size_t dq_blocks(const kl_problem *p) {
    return (size_t)p->n * (p->k / KL_Q4_0_BLOCK) * sizeof(kl_block_q4_0);
}
static size_t dq_out_off(const kl_problem *p) { return kl_align256(dq_blocks(p)); }
static size_t dq_stride(const kl_problem *p) { return kl_align256(dq_out_off(p) + 2 * (size_t)p->n * p->k); }

static int dq_shape(kl_problem *p, int m_given, char *msg, size_t len) {
    return kl_gemv_shape(p, m_given, KL_Q4_0_BLOCK, msg, len);
}
static double dq_flops(const kl_problem *p) { (void)p; return 0.0; }   /* GB/s only */
/* read the blocks, write the fp16 matrix */
static double dq_bytes(const kl_problem *p) { return (double)dq_blocks(p) + 2.0 * p->n * (double)p->k; }
static size_t dq_rotating(const kl_problem *p) { return dq_stride(p); }
static size_t dq_device_bytes(const kl_problem *p, int nrot) { return (size_t)nrot * dq_stride(p) + 4096; }

static void *dq_setup(const kl_problem *p, int nrot, const kl_env *env) {
    dq_state *s = kl_hmalloc(sizeof *s);
    memset(s, 0, sizeof *s);
    s->p = *p;
    s->env = env;
    s->nrot = nrot;
    s->out_off = dq_out_off(p);
    s->stride = dq_stride(p);
    const int n = p->n, k = p->k;
    const size_t nk = (size_t)n * k, wb = dq_blocks(p);
    cudaStream_t str = env->stream;
    /* 4: a stream of its own beside the GEMV formats' 0..3 (op_gemv.c) */
    const uint64_t seed = env->seed * 1000003u + (uint64_t)n * 31 + (uint64_t)k * 17 + 4;

    s->rot = kl_dmalloc((size_t)nrot * s->stride);
    float *hw = kl_hmalloc(4 * nk);
    kl_host_uniform_rows(hw, n, k, seed);
    kl_block_q4_0 *hq = kl_hmalloc(wb);
    kl_quant_q4_0(hw, k, 0, n, hq);
    kl_dequant_q4_0(hq, k, 0, n, hw);
    CUDA_CHECK(cudaMemcpy(s->rot, hq, wb, cudaMemcpyHostToDevice));
    free(hq);
    /* The exact answer: the host dequantizer's value rounded to fp16. */
    #pragma omp parallel for schedule(static)
    for (size_t i = 0; i < nk; ++i) hw[i] = kl_half_to_float(kl_float_to_half(hw[i]));
    s->h_ref = hw;
    s->h_out = kl_hmalloc(4 * nk);
    s->h_y = kl_hmalloc(2 * nk);
    /* The other rotating copies: byte copies of the first one's blocks. */
    kl_replicate(s->rot, wb, s->stride, nrot, str);
    CUDA_CHECK(cudaStreamSynchronize(str));
    return s;
}

static kl_dequant_args dq_args(const dq_state *s, int rot) {
    unsigned char *c = s->rot + (size_t)(rot % s->nrot) * s->stride;
    kl_dequant_args a;
    a.n = s->p.n;
    a.k = s->p.k;
    a.w = c;
    a.out = (kl_f16 *)(c + s->out_off);
    return a;
}

static void dq_check(void *st, const kl_kernel *kern, int pass, kl_check_data *d) {
    dq_state *s = st;
    const size_t nk = (size_t)s->p.n * s->p.k;
    cudaStream_t str = s->env->stream;
    kl_dequant_args a = dq_args(s, pass);
    kl_poison(a.out, 2 * nk, str);
    kern->dequant(&a, kern->ctx, str);
    KL_CHECK_LAUNCH();
    CUDA_CHECK(cudaStreamSynchronize(str));
    kl_copy_to_host(s->h_y, a.out, 2 * nk);
    #pragma omp parallel for schedule(static)
    for (size_t i = 0; i < nk; ++i) s->h_out[i] = kl_half_to_float(s->h_y[i]);
    d->out = s->h_out;
    d->ref = s->h_ref;
    d->count = nk;
    d->cols = s->p.k;
    d->tol = kl_tol_exact();       /* one rounding of an exact product */
    d->what = "q4_0 -> fp16, output poisoned with NaN";
}

static void dq_run(void *st, const kl_kernel *kern, int rot, cudaStream_t str) {
    dq_state *s = st;
    kl_dequant_args a = dq_args(s, rot);
    kern->dequant(&a, kern->ctx, str);
}

static void dq_teardown(void *st) {
    dq_state *s = st;
    CUDA_CHECK(cudaFree(s->rot));
    free(s->h_out);
    free(s->h_ref);
    free(s->h_y);
    free(s);
}

const kl_op kl_op_dequant_q4_0 = {
    .name = "dequant_q4_0",
    .dtype = "q4_0",
    .baseline = NULL,
    .part = "2",
    .memory_bound = 1,
    .default_sizes = KL_GEMV_DEFAULT_SIZES,
    .extra_shapes = kl_gemv_model_shapes,
    .nextra_shapes = KL_GEMV_NMODEL_SHAPES,
    .checks = 1,
    .shape = dq_shape,
    .flops = dq_flops,
    .bytes = dq_bytes,
    .rotating_bytes = dq_rotating,
    .device_bytes = dq_device_bytes,
    .setup = dq_setup,
    .check = dq_check,
    .run = dq_run,
    .teardown = dq_teardown,
};
