/*
 * op_w4a16.c - v16: C[m][n] (fp32) = A[m][k] (fp16) x dequant(W)[n][k]^T,
 * W int4 in the quant.h format (group 128, fp16 scale and zero) with the
 * nibbles of each 4-byte word in w4a16's order (quant.h), m = 1..16.  The
 * order is made once on the host, after quantizing, as a model's weights
 * would be repacked once for the kernel that reads them: it is not timed.
 *
 * Check: cublasSgemm in FP32 (no TF32) on the dequantized weights, which are
 * exact in fp32, and on A converted to fp32.  Tolerance (kl_tol_w4a16): fp32
 * output and exact dequantization, as v16 computes it ((q - z) * a exact in
 * the mma, the scale applied in fp32); check.c says why not fp16 weights.
 * Baseline: what a user without a fused kernel runs: the weights dequantized
 * once to fp16 and cublasGemmEx fp16 x fp16 -> fp16, fp32 compute (tensor
 * cores), its fp16 weights rotated to keep L2 cold (kl_baseline_rotations).
 *
 * The weights do not depend on m: one quantization of each (n, k, seed)
 * serves every m of the m list (the cache below), and A and the reference
 * are computed once for 16 rows, of which a problem uses the first m.
 */
#include "op.h"
#include "quant.h"

#include <math.h>
#include <string.h>

#define W4_ROWS 16   /* rows of A and of the reference kept in the cache */

/* One rotating copy of the weights: nibbles, then scales, then zeros. */
static size_t w4_q_bytes(const kl_problem *p) { return kl_align256(kl_int4_row_bytes(p->k) * (size_t)p->n); }
static size_t w4_sz_bytes(const kl_problem *p) { return kl_align256((size_t)kl_int4_groups(p->k) * p->n * 2); }
static size_t w4_copy_bytes(const kl_problem *p) { return w4_q_bytes(p) + 2 * w4_sz_bytes(p); }
static size_t w4_f16_bytes(const kl_problem *p) { return kl_align256((size_t)p->n * p->k * 2); }
static int w4_rows(const kl_problem *p) { return p->m > W4_ROWS ? p->m : W4_ROWS; }

typedef struct w4_cache {
    int n, k, rows, nrot, nrot16;
    uint64_t seed;
    uint8_t *w;          /* device: nrot copies of w4_copy_bytes */
    kl_f16 *w16;         /* device: nrot16 copies of the dequantized weights in fp16 */
    kl_f16 *a;           /* device: A, rows x k */
    float *h_ref;        /* host: reference C, rows x n */
    double term_max;     /* max |a| * max |w| */
} w4_cache;
static w4_cache g_cache;

typedef struct w4_state {
    kl_problem p;
    const kl_env *env;
    w4_cache *c;
    float *C, *ws;       /* device: output, KL_W4A16_MAX_SPLIT partial tiles */
    kl_f16 *C16;         /* device: cuBLAS's fp16 output */
    float *h_out;
} w4_state;

static void cache_free(w4_cache *c) {
    if (c->w) CUDA_CHECK(cudaFree(c->w));
    if (c->w16) CUDA_CHECK(cudaFree(c->w16));
    if (c->a) CUDA_CHECK(cudaFree(c->a));
    free(c->h_ref);
    memset(c, 0, sizeof *c);
}

static void cache_build(w4_cache *c, const kl_problem *p, int nrot, const kl_env *env) {
    cache_free(c);
    const int n = p->n, k = p->k, rows = w4_rows(p), ng = kl_int4_groups(k);
    const size_t nk = (size_t)n * k, rb = kl_int4_row_bytes(k);
    cudaStream_t s = env->stream;
    c->n = n; c->k = k; c->rows = rows; c->nrot = nrot; c->seed = env->seed;
    c->nrot16 = kl_baseline_rotations(env, nrot, w4_f16_bytes(p));   /* the baseline's fp16 copies */
    const uint64_t seed = env->seed * 1000003u + (uint64_t)n * 17 + (uint64_t)k;

    /* Random fp32 weights in [-1, 1), quantized and dequantized on the host. */
    float *d_w32 = kl_dmalloc(nk * 4);
    float *h_w = kl_hmalloc(nk * 4);
    kl_fill_uniform_f32(d_w32, nk, -1.0f, 1.0f, seed + 1, s);
    CUDA_CHECK(cudaStreamSynchronize(s));
    kl_copy_to_host(h_w, d_w32, nk * 4);
    uint8_t *h_q = kl_hmalloc(rb * n);
    uint16_t *h_s = kl_hmalloc((size_t)ng * n * 2), *h_z = kl_hmalloc((size_t)ng * n * 2);
    kl_quant_int4(h_w, k, 0, n, h_q, h_s, h_z);
    kl_dequant_int4(h_q, h_s, h_z, k, 0, n, h_w);
    kl_int4_to_w4a16_order(h_q, k, 0, n);   /* the kernel's nibble order; h_w is the reference */
    const double wmax = kl_absmax(h_w, nk);

    const size_t cb = w4_copy_bytes(p);
    c->w = kl_dmalloc(cb * (size_t)nrot);
    CUDA_CHECK(cudaMemcpyAsync(c->w, h_q, rb * n, cudaMemcpyHostToDevice, s));
    CUDA_CHECK(cudaMemcpyAsync(c->w + w4_q_bytes(p), h_s, (size_t)ng * n * 2, cudaMemcpyHostToDevice, s));
    CUDA_CHECK(cudaMemcpyAsync(c->w + w4_q_bytes(p) + w4_sz_bytes(p), h_z, (size_t)ng * n * 2, cudaMemcpyHostToDevice, s));
    kl_replicate(c->w, cb, cb, nrot, s);

    /* The dequantized weights: fp32 for the reference, fp16 for cuBLAS's baseline. */
    CUDA_CHECK(cudaMemcpyAsync(d_w32, h_w, nk * 4, cudaMemcpyHostToDevice, s));
    const size_t fb = w4_f16_bytes(p);
    c->w16 = kl_dmalloc(fb * (size_t)c->nrot16);
    kl_f32_to_f16(d_w32, c->w16, nk, s);
    for (int r = 1; r < c->nrot16; ++r)
        CUDA_CHECK(cudaMemcpyAsync((char *)c->w16 + fb * r, c->w16, fb, cudaMemcpyDeviceToDevice, s));

    /* A in [-1, 1) (fp16), its fp32 copy, and the reference for all rows. */
    c->a = kl_dmalloc((size_t)rows * k * 2);
    kl_fill_uniform_f16(c->a, (size_t)rows * k, -1.0f, 1.0f, seed + 2, s);
    float *d_a32 = kl_dmalloc((size_t)rows * k * 4), *d_ref = kl_dmalloc((size_t)rows * n * 4);
    kl_f16_to_f32(c->a, d_a32, (size_t)rows * k, s);
    /* Row-major C = A W^T is column-major C^T = W A^T: W is k x n column-major, so OP_T. */
    const float one = 1.0f, zero = 0.0f;
    CUBLAS_CHECK(cublasSgemm(env->cublas, CUBLAS_OP_T, CUBLAS_OP_N, n, rows, k, &one, d_w32, k,
                             d_a32, k, &zero, d_ref, n));
    CUDA_CHECK(cudaStreamSynchronize(s));
    c->h_ref = kl_hmalloc((size_t)rows * n * 4);
    kl_copy_to_host(c->h_ref, d_ref, (size_t)rows * n * 4);
    c->term_max = 1.0 * wmax;   /* |a| < 1 */

    CUDA_CHECK(cudaFree(d_w32));
    CUDA_CHECK(cudaFree(d_a32));
    CUDA_CHECK(cudaFree(d_ref));
    free(h_w); free(h_q); free(h_s); free(h_z);
}

static int w4_shape(kl_problem *p, int m_given, char *msg, size_t len) {
    (void)m_given;
    if (p->m < 1 || p->n < 1 || p->k < 1) {
        snprintf(msg, len, "w4a16: m, n and k must be at least 1 (got %d x %d x %d)", p->m, p->n, p->k);
        return 1;
    }
    return 0;
}
static double w4_flops(const kl_problem *p) { return 2.0 * p->m * (double)p->n * p->k; }
/* int4 weights + fp16 scales and zeros + A (fp16) + C (fp32), each once. */
static double w4_bytes(const kl_problem *p) {
    return (double)kl_int4_row_bytes(p->k) * p->n + 4.0 * kl_int4_groups(p->k) * p->n +
           2.0 * p->m * p->k + 4.0 * p->m * p->n;
}
static size_t w4_rotating(const kl_problem *p) { return w4_copy_bytes(p); }
static size_t w4_device_bytes(const kl_problem *p, int nrot) {
    const size_t nk = (size_t)p->n * p->k, mn = (size_t)p->m * p->n, rows = (size_t)w4_rows(p);
    return w4_copy_bytes(p) * (size_t)nrot + w4_f16_bytes(p) * (size_t)nrot   /* at most nrot fp16 copies */
           + 4 * nk                                  /* fp32 weights while the reference is made */
           + rows * p->k * 6 + rows * p->n * 4       /* A (fp16 and fp32), reference */
           + mn * (4 + 4 * KL_W4A16_MAX_SPLIT + 2);  /* C, workspace, cuBLAS's fp16 C */
}

static void *w4_setup(const kl_problem *p, int nrot, const kl_env *env) {
    w4_cache *c = &g_cache;
    if (!c->w || c->n != p->n || c->k != p->k || c->nrot != nrot || c->seed != env->seed || c->rows < p->m)
        cache_build(c, p, nrot, env);
    w4_state *s = kl_hmalloc(sizeof *s);
    memset(s, 0, sizeof *s);
    s->p = *p;
    s->env = env;
    s->c = c;
    const size_t mn = (size_t)p->m * p->n;
    s->C = kl_dmalloc(mn * 4);
    s->ws = kl_dmalloc(mn * 4 * KL_W4A16_MAX_SPLIT);
    s->C16 = kl_dmalloc(mn * 2);
    s->h_out = kl_hmalloc(mn * 4);
    return s;
}

static kl_w4a16_args w4_args(const w4_state *s, int rot) {
    const kl_problem *p = &s->p;
    const uint8_t *base = s->c->w + w4_copy_bytes(p) * (size_t)(rot % s->c->nrot);
    kl_w4a16_args a;
    a.m = p->m; a.n = p->n; a.k = p->k;
    a.w = base;
    a.scales = (const kl_f16 *)(base + w4_q_bytes(p));
    a.zeros = (const kl_f16 *)(base + w4_q_bytes(p) + w4_sz_bytes(p));
    a.a = s->c->a;
    a.c = s->C;
    a.workspace = s->ws;
    return a;
}

/* Every pass poisons C and the workspace: a SplitK kernel must zero C itself,
 * and a second pass of an atomic kernel may add in another order. */
static void w4_check(void *st, const kl_kernel *kern, int pass, kl_check_data *d) {
    w4_state *s = st;
    const kl_problem *p = &s->p;
    const size_t mn = (size_t)p->m * p->n;
    cudaStream_t str = s->env->stream;
    kl_poison(s->C, mn * 4, str);
    kl_poison(s->ws, mn * 4 * KL_W4A16_MAX_SPLIT, str);
    const kl_w4a16_args a = w4_args(s, 0);
    kern->w4a16(&a, kern->ctx, str);
    CUDA_CHECK(cudaStreamSynchronize(str));
    kl_copy_to_host(s->h_out, s->C, mn * 4);
    d->out = s->h_out;
    d->ref = s->c->h_ref;   /* its first m rows */
    d->count = mn;
    d->cols = p->n;
    d->tol = kl_tol_w4a16(p->k, s->c->term_max);
    d->what = pass == 0 ? "C and workspace poisoned with NaN" : "again, C and workspace poisoned (atomics may add in another order)";
}

static void w4_run(void *st, const kl_kernel *kern, int rot, cudaStream_t str) {
    w4_state *s = st;
    const kl_w4a16_args a = w4_args(s, rot);
    kern->w4a16(&a, kern->ctx, str);
}

static void w4_run_ref(void *st, int rot, cudaStream_t str) {
    (void)str;   /* the handle is bound to the harness's stream */
    w4_state *s = st;
    const kl_problem *p = &s->p;
    const float one = 1.0f, zero = 0.0f;
    const kl_f16 *w16 = (const kl_f16 *)((const char *)s->c->w16 + w4_f16_bytes(p) * (size_t)(rot % s->c->nrot16));
    CUBLAS_CHECK(cublasGemmEx(s->env->cublas, CUBLAS_OP_T, CUBLAS_OP_N, p->n, p->m, p->k, &one,
                              w16, CUDA_R_16F, p->k, s->c->a, CUDA_R_16F, p->k, &zero,
                              s->C16, CUDA_R_16F, p->n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
}

static void w4_teardown(void *st) {
    w4_state *s = st;
    CUDA_CHECK(cudaFree(s->C));
    CUDA_CHECK(cudaFree(s->ws));
    CUDA_CHECK(cudaFree(s->C16));
    free(s->h_out);
    free(s);
    /* the cache stays for the next m; a new (n, k) replaces it */
}

/* Llama-style layers (N x K): MLP up/gate and down of 7B and 8B models, and
 * the 128256-token vocabulary head; 4096 x 4096 is among the squares. */
static const kl_problem w4_shapes[] = {
    {0, 11008, 4096}, {0, 4096, 11008}, {0, 14336, 4096}, {0, 4096, 14336}, {0, 128256, 4096},
};
static const int w4_m_list[] = {1, 2, 4, 8, 16};

const kl_op kl_op_w4a16 = {
    .name = "w4a16",
    .dtype = "int4",
    .baseline = "cublasGemmEx fp16 x fp16 -> fp16 (fp32 compute, tensor cores) on the weights "
                "dequantized to fp16, rotated like the step",
    .part = "2-skinny",   /* v16's own table: each n x k at m = 1..16 */
    .memory_bound = 1,
    .default_sizes = "4096,8192,16384",
    .extra_shapes = w4_shapes,
    .nextra_shapes = (int)(sizeof w4_shapes / sizeof w4_shapes[0]),
    .m_list = w4_m_list,
    .nm_list = (int)(sizeof w4_m_list / sizeof w4_m_list[0]),
    .checks = 2,
    .shape = w4_shape,
    .flops = w4_flops,
    .bytes = w4_bytes,
    .rotating_bytes = w4_rotating,
    .device_bytes = w4_device_bytes,
    .setup = w4_setup,
    .check = w4_check,
    .run = w4_run,
    .run_ref = w4_run_ref,
    .teardown = w4_teardown,
};
