/*
 * op_sgemm.c - Part I: C = alpha*A*B + beta*C in FP32, row-major.
 * Reference and baseline: cublasSgemm in CUBLAS_DEFAULT_MATH (no TF32).
 */
#include "op.h"

#include <math.h>
#include <string.h>

typedef struct sgemm_state {
    kl_problem p;
    const kl_env *env;
    float *A, *B, *C, *C0, *Cref;   /* device; C0: the beta != 0 check's input C */
    float *h_out, *h_ref;           /* host copies for the compare */
} sgemm_state;

static int sg_shape(kl_problem *p, int m_given, char *msg, size_t len) {
    (void)m_given; (void)msg; (void)len;
    (void)p;
    return 0;
}
static double sg_flops(const kl_problem *p) { return 2.0 * p->m * (double)p->n * p->k; }
static double sg_bytes(const kl_problem *p) {
    return 4.0 * ((double)p->m * p->k + (double)p->k * p->n + (double)p->m * p->n);
}
static size_t sg_rotating(const kl_problem *p) { (void)p; return 0; }
static size_t sg_device_bytes(const kl_problem *p, int nrot) {
    (void)nrot;
    const size_t mk = (size_t)p->m * p->k, kn = (size_t)p->k * p->n, mn = (size_t)p->m * p->n;
    return 4 * (mk + kn + 3 * mn);
}

/* Row-major C = A B is column-major C^T = B^T A^T: swap the operands. */
static void ref_sgemm(sgemm_state *s, float alpha, float beta, float *C) {
    const kl_problem *p = &s->p;
    CUBLAS_CHECK(cublasSgemm(s->env->cublas, CUBLAS_OP_N, CUBLAS_OP_N, p->n, p->m, p->k, &alpha,
                             s->B, p->n, s->A, p->k, &beta, C, p->n));
}

/* Check cuBLAS itself at a few points (corners and random ones) against the
 * fp64 CPU reference: a transposed or mis-strided reference call would
 * otherwise define "correct". */
static void fetch_row_col(void *ctx, int r, int c, float *a, float *b) {
    const sgemm_state *s = ctx;
    const kl_problem *p = &s->p;
    kl_copy_to_host(a, s->A + (size_t)r * p->k, 4 * (size_t)p->k);
    CUDA_CHECK(cudaMemcpy2D(b, 4, s->B + c, 4 * (size_t)p->n, 4, (size_t)p->k, cudaMemcpyDeviceToHost));
}
static void spot_check_reference(sgemm_state *s) {
    kl_require_spot_check(s->p.m, s->p.n, s->p.k, s->env->seed, s->h_ref, fetch_row_col, s);
}

static void *sg_setup(const kl_problem *p, int nrot, const kl_env *env) {
    (void)nrot;
    sgemm_state *s = kl_hmalloc(sizeof *s);
    memset(s, 0, sizeof *s);
    s->p = *p;
    s->env = env;
    const size_t mk = (size_t)p->m * p->k, kn = (size_t)p->k * p->n, mn = (size_t)p->m * p->n;
    s->A = kl_dmalloc(4 * mk);
    s->B = kl_dmalloc(4 * kn);
    s->C = kl_dmalloc(4 * mn);
    s->C0 = kl_dmalloc(4 * mn);
    s->Cref = kl_dmalloc(4 * mn);
    /* Uniform [-1, 1): never zeros, and a seed per matrix and size. */
    const uint64_t seed = env->seed * 1000003u + (uint64_t)p->m * 31 + (uint64_t)p->n * 17 + (uint64_t)p->k;
    kl_fill_uniform_f32(s->A, mk, -1.0f, 1.0f, seed + 1, env->stream);
    kl_fill_uniform_f32(s->B, kn, -1.0f, 1.0f, seed + 2, env->stream);
    kl_fill_uniform_f32(s->C0, mn, -1.0f, 1.0f, seed + 3, env->stream);
    CUDA_CHECK(cudaStreamSynchronize(env->stream));
    return s;
}

/* Pass 0: beta = 0 with C full of NaN: every element must be written, and C
 * must not be read.  Pass 1: beta != 0 on a random C: the update path. */
static void sg_check(void *st, const kl_kernel *kern, int pass, kl_check_data *d) {
    sgemm_state *s = st;
    const kl_problem *p = &s->p;
    const size_t mn = (size_t)p->m * p->n;
    const float alpha = pass == 0 ? 1.0f : 0.75f, beta = pass == 0 ? 0.0f : -0.5f;
    cudaStream_t str = s->env->stream;
    if (!s->h_out) {
        s->h_out = kl_hmalloc(4 * mn);
        s->h_ref = kl_hmalloc(4 * mn);
    }
    if (pass == 0) {
        kl_poison(s->C, 4 * mn, str);
        kl_poison(s->Cref, 4 * mn, str);
    } else {
        CUDA_CHECK(cudaMemcpyAsync(s->C, s->C0, 4 * mn, cudaMemcpyDeviceToDevice, str));
        CUDA_CHECK(cudaMemcpyAsync(s->Cref, s->C0, 4 * mn, cudaMemcpyDeviceToDevice, str));
    }
    kern->sgemm(p->m, p->n, p->k, alpha, s->A, s->B, beta, s->C, kern->ctx, str);
    ref_sgemm(s, alpha, beta, s->Cref);
    CUDA_CHECK(cudaStreamSynchronize(str));
    kl_copy_to_host(s->h_out, s->C, 4 * mn);
    kl_copy_to_host(s->h_ref, s->Cref, 4 * mn);
    if (pass == 0) spot_check_reference(s);
    d->out = s->h_out;
    d->ref = s->h_ref;
    d->count = mn;
    d->cols = p->n;
    /* |a*b| <= 1; the beta*C term adds one more rounding of size |beta|. */
    d->tol = kl_tol_sgemm(p->k, alpha, beta);   /* |a*b| <= 1; beta*C one rounding more */
    d->what = pass == 0 ? "alpha=1, beta=0, C poisoned with NaN" : "alpha=0.75, beta=-0.5, random C";
}

static void sg_run(void *st, const kl_kernel *kern, int rot, cudaStream_t str) {
    (void)rot;
    sgemm_state *s = st;
    kern->sgemm(s->p.m, s->p.n, s->p.k, 1.0f, s->A, s->B, 0.0f, s->C, kern->ctx, str);
}

static void sg_run_ref(void *st, int rot, cudaStream_t str) {
    (void)rot; (void)str;   /* the handle is bound to the harness's stream */
    sgemm_state *s = st;
    ref_sgemm(s, 1.0f, 0.0f, s->Cref);
}

static void sg_teardown(void *st) {
    sgemm_state *s = st;
    CUDA_CHECK(cudaFree(s->A));
    CUDA_CHECK(cudaFree(s->B));
    CUDA_CHECK(cudaFree(s->C));
    CUDA_CHECK(cudaFree(s->C0));
    CUDA_CHECK(cudaFree(s->Cref));
    free(s->h_out);
    free(s->h_ref);
    free(s);
}

const kl_op kl_op_sgemm = {
    .name = "sgemm",
    .dtype = "fp32",
    .baseline = "cublasSgemm, FP32 in CUBLAS_DEFAULT_MATH (no TF32), same inputs, same timing",
    .part = "1",
    .memory_bound = 0,
    .default_sizes = "1024,2048,4096,8192",
    .checks = 2,
    .shape = sg_shape,
    .flops = sg_flops,
    .bytes = sg_bytes,
    .rotating_bytes = sg_rotating,
    .device_bytes = sg_device_bytes,
    .setup = sg_setup,
    .check = sg_check,
    .run = sg_run,
    .run_ref = sg_run_ref,
    .teardown = sg_teardown,
};
