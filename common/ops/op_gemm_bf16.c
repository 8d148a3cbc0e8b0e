/*
 * op_gemm_bf16.c - Part III: C[m][n] = A[m][k] B[n][k]^T, bf16 in and out,
 * fp32 accumulation: a linear layer's layout (A the activations, B the
 * weights, both K-contiguous; "TN" for a column-major BLAS).
 *
 * Check: cublasGemmEx on the same bf16 inputs writing fp32, itself checked
 * at sample points against an fp64 dot product on the CPU.  The step's bf16
 * output may differ from it by one bf16 rounding (2^-8 relative) plus the
 * fp32 summation-order slack of a length-k dot product.
 * Baseline: the faster of cublasGemmEx (bf16 x bf16 -> bf16, CUBLAS_COMPUTE_32F,
 * the call a framework makes for this layer) and cublasLtMatmul with each of
 * the first KL_LT_ALGOS algorithms its heuristic proposes, chosen per problem
 * by the engine's own timing and then timed the same way as the step.
 * Compute-bound: one copy of each operand, L2 warm for step and cuBLAS alike,
 * except a decode batch (M <= KL_DECODE_M tokens).  There each weight is used
 * by a few tokens, the weights' bytes set the time, and in a model they come
 * from DRAM (the other layers' weights have evicted them); one copy of 4096 x
 * 4096 (32 MB) would instead sit in the 50 MB L2 between timed launches.  So B
 * rotates through copies, as Part II's weights do (kl_rotations), for the step
 * and cuBLAS alike, and the GB/s column is a DRAM rate beside the read floor.
 */
#include "lt.h"

#include <math.h>
#include <string.h>

#define KL_DECODE_M 64                /* M up to this: a decode batch, timed with L2 cold */


typedef struct gemm_state {
    kl_problem p;
    const kl_env *env;
    kl_bf16 *A, *B, *C, *Cblas;   /* device; Cblas: the baseline's bf16 output; B: nrot copies */
    int nrot;                     /* copies of B the timed launches rotate through (1: L2 warm) */
    float *Cref, *Cout;           /* device: fp32 reference, the step's C widened */
    float *h_out, *h_ref;
    /* The baseline: choice 0 is cublasGemmEx, 1..nalgo cublasLtMatmul with algo[choice-1]. */
    cublasLtHandle_t lt;
    cublasLtMatmulDesc_t op;
    cublasLtMatrixLayout_t lb, la, lc;   /* column-major views of B, A and C */
    cublasLtMatmulAlgo_t algo[KL_LT_ALGOS];
    int nalgo, choice;
    double pick_us[1 + KL_LT_ALGOS];
    void *workspace;
    char note[224];
} gemm_state;

static int gb_shape(kl_problem *p, int m_given, char *msg, size_t len) {
    (void)m_given;
    if (p->k % 8) {
        snprintf(msg, len, "k=%d: K must be a multiple of 8 (rows of 16 bytes, as TMA and 16-byte "
                           "loads need); pad K with zeros to the next multiple of 8", p->k);
        return 1;
    }
    return 0;
}
static double gb_flops(const kl_problem *p) { return 2.0 * p->m * (double)p->n * p->k; }
static double gb_bytes(const kl_problem *p) {
    return 2.0 * ((double)p->m * p->k + (double)p->n * p->k + (double)p->m * p->n);
}
/* The weights, at a decode batch; nothing (L2 warm) otherwise. */
static size_t gb_rotating(const kl_problem *p) { return p->m <= KL_DECODE_M ? 2 * (size_t)p->n * p->k : 0; }
static size_t gb_device_bytes(const kl_problem *p, int nrot) {
    const size_t mk = (size_t)p->m * p->k, nk = (size_t)p->n * p->k, mn = (size_t)p->m * p->n;
    return 2 * (mk + nk * (size_t)nrot + 2 * mn) + 4 * 2 * mn;
}

/* Row-major C[m][n] = A B^T is column-major C^T = B A^T: B (column-major
 * k x n, ld k) transposed, times A (column-major k x m, ld k). */
static void gemm_ex(gemm_state *s, const kl_bf16 *B, void *C, cudaDataType_t ctype) {
    const kl_problem *p = &s->p;
    const float one = 1.0f, zero = 0.0f;
    CUBLAS_CHECK(cublasGemmEx(s->env->cublas, CUBLAS_OP_T, CUBLAS_OP_N, p->n, p->m, p->k, &one,
                              B, CUDA_R_16BF, p->k, s->A, CUDA_R_16BF, p->k, &zero,
                              C, ctype, p->n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
}

/* The same product through cublasLt (lt.h: the TN view). */
static void lt_setup(gemm_state *s) {
    CUBLAS_CHECK(cublasLtCreate(&s->lt));
    s->op = kl_lt_tn_desc();
    kl_lt_tn_layouts(&s->p, CUDA_R_16BF, CUDA_R_16BF, &s->lb, &s->la, &s->lc);
    /* none proposed: cublasGemmEx alone */
    s->nalgo = kl_lt_algos(s->lt, s->op, s->lb, s->la, s->lc, s->algo, NULL);
    s->workspace = kl_dmalloc(KL_LT_WORKSPACE);
}

/* Copy `rot` of B (the weights). */
static const kl_bf16 *b_copy(const gemm_state *s, int rot) { return s->B + (size_t)(rot % s->nrot) * s->p.n * s->p.k; }

static void baseline(gemm_state *s, int choice, int rot, cudaStream_t str) {
    if (choice == 0) { gemm_ex(s, b_copy(s, rot), s->Cblas, CUDA_R_16BF); return; }
    const float one = 1.0f, zero = 0.0f;
    CUBLAS_CHECK(cublasLtMatmul(s->lt, s->op, &one, b_copy(s, rot), s->lb, s->A, s->la, &zero, s->Cblas, s->lc,
                                  s->Cblas, s->lc, &s->algo[choice - 1], s->workspace, KL_LT_WORKSPACE, str));
}

static void launch_pick(void *ctx, int choice, int i) {
    gemm_state *s = ctx;
    baseline(s, choice, i, s->env->stream);
}

/* The engine's timing (queued behind a held stream, median) decides; the
 * engine then times the winner again like the step. */
static void pick_baseline(gemm_state *s) {
    s->choice = kl_fastest(launch_pick, s, 1 + s->nalgo, s->env->stream, s->pick_us);
}

static const char *gb_baseline_note(void *st) {
    gemm_state *s = st;
    if (!s->nalgo) return "cuBLAS column: cublasGemmEx (cublasLt proposed no algorithm)";
    double lt_best = s->pick_us[1];
    for (int c = 2; c <= s->nalgo; ++c) lt_best = fmin(lt_best, s->pick_us[c]);
    snprintf(s->note, sizeof s->note, "cuBLAS column: %s (picked by time: cublasGemmEx %.1f us, best of %d "
             "cublasLtMatmul algorithms %.1f us)", s->choice ? "cublasLtMatmul" : "cublasGemmEx",
             s->pick_us[0], s->nalgo, lt_best);
    if (s->nrot > 1) {
        const size_t used = strlen(s->note);
        snprintf(s->note + used, sizeof s->note - used, "; L2 cold: B rotates through %d copies", s->nrot);
    }
    return s->note;
}

static void bf16_row(const kl_bf16 *d, int k, float *out) {
    kl_bf16 *h = kl_hmalloc(2 * (size_t)k);
    kl_copy_to_host(h, d, 2 * (size_t)k);
    for (int i = 0; i < k; ++i) {
        const uint32_t u = (uint32_t)h[i] << 16;   /* bf16 is the top half of an fp32 */
        memcpy(&out[i], &u, sizeof u);
    }
    free(h);
}
/* Row r of A and row c of B (= column c of B^T), widened to fp32. */
static void fetch_rows(void *ctx, int r, int c, float *a, float *b) {
    const gemm_state *s = ctx;
    bf16_row(s->A + (size_t)r * s->p.k, s->p.k, a);
    bf16_row(s->B + (size_t)c * s->p.k, s->p.k, b);
}

/* cuBLAS's fp32 output checked at corners and random points against fp64 on
 * the CPU: a transposed or mis-strided reference call would otherwise define
 * "correct". */
static void spot_check_reference(gemm_state *s) {
    kl_require_spot_check(s->p.m, s->p.n, s->p.k, s->env->seed, s->h_ref, fetch_rows, s);
}

static void *gb_setup(const kl_problem *p, int nrot, const kl_env *env) {
    gemm_state *s = kl_hmalloc(sizeof *s);
    memset(s, 0, sizeof *s);
    s->p = *p;
    s->env = env;
    const size_t mk = (size_t)p->m * p->k, nk = (size_t)p->n * p->k, mn = (size_t)p->m * p->n;
    s->A = kl_dmalloc(2 * mk);
    s->nrot = nrot < 1 ? 1 : nrot;
    s->B = kl_dmalloc(2 * nk * (size_t)s->nrot);
    s->C = kl_dmalloc(2 * mn);
    s->Cblas = kl_dmalloc(2 * mn);
    s->Cref = kl_dmalloc(4 * mn);
    s->Cout = kl_dmalloc(4 * mn);
    /* Uniform [-1, 1) rounded to bf16: never zeros, a seed per matrix and size. */
    const uint64_t seed = env->seed * 1000003u + (uint64_t)p->m * 31 + (uint64_t)p->n * 17 + (uint64_t)p->k;
    kl_fill_uniform_bf16(s->A, mk, -1.0f, 1.0f, seed + 1, env->stream);
    kl_fill_uniform_bf16(s->B, nk, -1.0f, 1.0f, seed + 2, env->stream);
    kl_replicate(s->B, 2 * nk, 2 * nk, s->nrot, env->stream);   /* the other copies: byte copies of the first */
    CUDA_CHECK(cudaStreamSynchronize(env->stream));
    lt_setup(s);
    if (!env->check_only) pick_baseline(s);   /* --check-only times nothing */
    return s;
}

/* One checked launch: C full of NaN first, so an element the step does not
 * write fails; then the reference, and both widened to fp32 for the compare. */
static void gb_check(void *st, const kl_kernel *kern, int pass, kl_check_data *d) {
    (void)pass;
    gemm_state *s = st;
    const kl_problem *p = &s->p;
    const size_t mn = (size_t)p->m * p->n;
    cudaStream_t str = s->env->stream;
    if (!s->h_out) {
        s->h_out = kl_hmalloc(4 * mn);
        s->h_ref = kl_hmalloc(4 * mn);
    }
    kl_poison(s->C, 2 * mn, str);
    kl_poison(s->Cref, 4 * mn, str);
    kern->gemm_bf16(p->m, p->n, p->k, s->A, s->B, s->C, kern->ctx, str);
    gemm_ex(s, s->B, s->Cref, CUDA_R_32F);
    kl_bf16_to_f32(s->C, s->Cout, mn, str);
    CUDA_CHECK(cudaStreamSynchronize(str));
    kl_copy_to_host(s->h_out, s->Cout, 4 * mn);
    kl_copy_to_host(s->h_ref, s->Cref, 4 * mn);
    spot_check_reference(s);
    d->out = s->h_out;
    d->ref = s->h_ref;
    d->count = mn;
    d->cols = p->n;
    /* Terms |a*b| < 1; rtol 2^-8: one rounding to bf16. */
    d->tol = kl_tol_gemm_bf16(p->k);
    d->what = "bf16 output rounded once, C poisoned with NaN";
}

static void gb_run(void *st, const kl_kernel *kern, int rot, cudaStream_t str) {
    gemm_state *s = st;
    kern->gemm_bf16(s->p.m, s->p.n, s->p.k, s->A, b_copy(s, rot), s->C, kern->ctx, str);
}

static void gb_run_ref(void *st, int rot, cudaStream_t str) {
    gemm_state *s = st;
    baseline(s, s->choice, rot, str);
}

static void gb_teardown(void *st) {
    gemm_state *s = st;
    CUDA_CHECK(cudaFree(s->A));
    CUDA_CHECK(cudaFree(s->B));
    CUDA_CHECK(cudaFree(s->C));
    CUDA_CHECK(cudaFree(s->Cblas));
    CUDA_CHECK(cudaFree(s->Cref));
    CUDA_CHECK(cudaFree(s->Cout));
    CUDA_CHECK(cudaFree(s->workspace));
    CUBLAS_CHECK(cublasLtMatrixLayoutDestroy(s->la));
    CUBLAS_CHECK(cublasLtMatrixLayoutDestroy(s->lb));
    CUBLAS_CHECK(cublasLtMatrixLayoutDestroy(s->lc));
    CUBLAS_CHECK(cublasLtMatmulDescDestroy(s->op));
    CUBLAS_CHECK(cublasLtDestroy(s->lt));
    free(s->h_out);
    free(s->h_ref);
    free(s);
}

/* A linear layer at 4096 tokens: n x k of Llama-3-8B's attention (4096 x
 * 4096), MLP up and down (14336 x 4096, 4096 x 14336) and vocabulary head
 * (128256 x 4096). */
static const kl_problem gemm_shapes[] = {
    {4096, 14336, 4096}, {4096, 4096, 14336}, {4096, 128256, 4096},
};

/* Part IV: the same operation over the shapes where one big tile grid loses.
 * After the squares 512 .. 8192: decode and prefill batches (M 8 .. 1024) at
 * the same three layers' weights; then skinny N and short K. */
static const kl_problem part4_shapes[] = {
    {8, 4096, 4096},    {8, 14336, 4096},    {8, 4096, 14336},
    {32, 4096, 4096},   {32, 14336, 4096},   {32, 4096, 14336},
    {64, 4096, 4096},   {64, 14336, 4096},   {64, 4096, 14336},
    {256, 4096, 4096},  {256, 14336, 4096},  {256, 4096, 14336},
    {1024, 4096, 4096}, {1024, 14336, 4096}, {1024, 4096, 14336},
    {8192, 256, 4096},  {4096, 512, 8192},   {4096, 4096, 512},
};

/* Everything but the part and the problem list: the two ops are one operation. */
#define GEMM_BF16_OP(part_key, sizes, shapes)                                                               \
    {                                                                                                        \
        .name = "gemm_bf16", .dtype = "bf16",                                                                \
        .baseline = "the faster of cublasGemmEx and cublasLtMatmul (4 heuristic algorithms), bf16 in and "  \
                    "out, CUBLAS_COMPUTE_32F, same layout (TN), same timing",                               \
        .part = part_key, .memory_bound = 0, .tensor_core = KL_TC_BF16, .default_sizes = sizes,                       \
        .extra_shapes = shapes, .nextra_shapes = (int)(sizeof shapes / sizeof shapes[0]), .checks = 1,       \
        .shape = gb_shape, .flops = gb_flops, .bytes = gb_bytes, .rotating_bytes = gb_rotating,              \
        .device_bytes = gb_device_bytes, .setup = gb_setup, .check = gb_check, .run = gb_run,                \
        .run_ref = gb_run_ref, .baseline_note = gb_baseline_note, .teardown = gb_teardown,                   \
    }

const kl_op kl_op_gemm_bf16 = GEMM_BF16_OP("3", "1024,2048,4096,8192", gemm_shapes);
const kl_op kl_op_gemm_bf16_shapes = GEMM_BF16_OP("4", "512,1024,1536,2048,4096,8192", part4_shapes);
