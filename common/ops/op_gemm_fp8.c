/*
 * op_gemm_fp8.c - Part V: C[m][n] = sa * sb * (A[m][k] B[n][k]^T), A and B in
 * FP8 e4m3 with one fp32 scale per tensor, fp32 accumulation, bf16 out: Part
 * III's layout (both K-contiguous) at one byte per element.
 *
 * Inputs: uniform in fp32, A in [-2, 2) and B in [-0.5, 0.5), quantized on the GPU (fp8_ops.h: amax,
 * s = amax / 448, q = e4m3(x / s)); the first elements of each are checked
 * against the host's encoder.  Check: an fp32 GEMM (cublasSgemm, no TF32) of
 * the dequantized inputs q * s, itself checked at sample points against fp64
 * dot products of rows the host decodes from the e4m3 bytes.  The reference is
 * computed once per problem; the fp32 copies are freed before anything is timed.
 * Baseline: cublasLtMatmul in FP8 (e4m3 x e4m3 -> bf16, CUBLAS_COMPUTE_32F, the
 * same scales through A/B_SCALE_POINTER), in both of its accumulation modes:
 * CUBLASLT_MATMUL_DESC_FAST_ACCUM on (the tensor cores accumulate all of K, as
 * the steps of this operation do) and off (cuBLASLt promotes partial sums into
 * fp32 as it goes).  Each mode: the fastest of the first KL_LT_ALGOS algorithms
 * its heuristic proposes, by the engine's timing.  The cuBLAS column times the
 * fast mode, whose accumulation matches the step's; the note gives the other's
 * time and both modes' rel_err beside the step's.  L2 warm, as Part III.
 */
#include "lt.h"
#include "fp8_ops.h"
#include "quant.h"

#include <math.h>
#include <string.h>

#define KL_QUANT_SAMPLE 4096          /* elements of each input checked against the host encoder */
/* Floats from one scale to the next in s->scales: cublasLtMatmul refuses a scale
 * pointer that is not 16-byte aligned ("not supported"; its heuristic does not look). */
#define SCALE_SLOT 64
#define SA (0 * SCALE_SLOT)
#define SB (1 * SCALE_SLOT)
#define AMAX_TMP (2 * SCALE_SLOT)

enum { MODE_FAST, MODE_PROMOTED, MODES };   /* FAST_ACCUM 1, 0 */

typedef struct fp8_state {
    kl_problem p;
    const kl_env *env;
    uint8_t *A, *B;                /* device, e4m3 */
    float *scales;                 /* device: sa, sb and scratch for amax, SCALE_SLOT floats apart */
    float h_scales[2];
    kl_bf16 *C, *Cblas;
    float *Cout;                   /* the step's C widened to fp32 */
    float *h_out, *h_ref;          /* host: output and the fp32 reference (made in setup) */
    /* cuBLASLt, per mode: its descriptor, algorithms, the one picked and its time */
    cublasLtHandle_t lt;
    cublasLtMatmulDesc_t desc[MODES];
    cublasLtMatrixLayout_t lb, la, lc;
    cublasLtMatmulAlgo_t algo[MODES][KL_LT_ALGOS];
    int nalgo[MODES], choice[MODES];
    double pick_us[MODES], rel_err[MODES];
    const char *lt_error;          /* why cuBLASLt cannot run this problem, or NULL */
    void *workspace;
    char note[256];
} fp8_state;

static int f8_shape(kl_problem *p, int m_given, char *msg, size_t len) {
    (void)m_given;
    if (p->k % 16) {
        snprintf(msg, len, "k=%d: K must be a multiple of 16 (rows of 16 bytes, as TMA and cuBLASLt's FP8 "
                           "need); pad K with zeros to the next multiple of 16", p->k);
        return 1;
    }
    return 0;
}
static double f8_flops(const kl_problem *p) { return 2.0 * p->m * (double)p->n * p->k; }
static double f8_bytes(const kl_problem *p) {
    return (double)p->m * p->k + (double)p->n * p->k + 2.0 * p->m * p->n;
}
static size_t f8_rotating(const kl_problem *p) { (void)p; return 0; }
/* Setup holds, at its peak, the e4m3 inputs, the fp32 inputs and reference, and the outputs. */
static size_t f8_device_bytes(const kl_problem *p, int nrot) {
    (void)nrot;
    const size_t mk = (size_t)p->m * p->k, nk = (size_t)p->n * p->k, mn = (size_t)p->m * p->n;
    return (mk + nk) + 4 * (mk + nk + mn) + 2 * 2 * mn + 4 * mn + KL_LT_WORKSPACE;
}

/* ---- cuBLASLt ----------------------------------------------------------------
 * The TN view of lt.h: Lt's A is our B and Lt's B our A, so Lt's A scale is
 * our sb and its B scale our sa. */
static void lt_setup(fp8_state *s) {
    CUBLAS_CHECK(cublasLtCreate(&s->lt));
    kl_lt_tn_layouts(&s->p, CUDA_R_8F_E4M3, CUDA_R_16BF, &s->lb, &s->la, &s->lc);
    const float *lt_a_scale = s->scales + SB, *lt_b_scale = s->scales + SA;
    for (int md = 0; md < MODES; ++md) {
        cublasLtMatmulDesc_t d = s->desc[md] = kl_lt_tn_desc();
        const int8_t fast = md == MODE_FAST;
        CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(d, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &lt_a_scale, sizeof lt_a_scale));
        CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(d, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &lt_b_scale, sizeof lt_b_scale));
        CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(d, CUBLASLT_MATMUL_DESC_FAST_ACCUM, &fast, sizeof fast));
        s->nalgo[md] = kl_lt_algos(s->lt, d, s->lb, s->la, s->lc, s->algo[md], &s->lt_error);
    }
    s->workspace = kl_dmalloc(KL_LT_WORKSPACE);
}

static cublasStatus_t try_baseline(fp8_state *s, int md, int algo, cudaStream_t str) {
    const float one = 1.0f, zero = 0.0f;
    return cublasLtMatmul(s->lt, s->desc[md], &one, s->B, s->lb, s->A, s->la, &zero, s->Cblas, s->lc, s->Cblas,
                          s->lc, &s->algo[md][algo], s->workspace, KL_LT_WORKSPACE, str);
}
static void baseline(fp8_state *s, int md, int algo, cudaStream_t str) { CUBLAS_CHECK(try_baseline(s, md, algo, str)); }

/* An algorithm the heuristic proposes may still be refused by cublasLtMatmul (a
 * shape off its alignment): each is run once, and only those that run stay. */
static void keep_running_algos(fp8_state *s) {
    for (int md = 0; md < MODES; ++md) {
        int kept = 0;
        for (int a = 0; a < s->nalgo[md]; ++a) {
            const cublasStatus_t st = try_baseline(s, md, a, s->env->stream);
            if (st == CUBLAS_STATUS_SUCCESS) s->algo[md][kept++] = s->algo[md][a];
            else s->lt_error = cublasGetStatusString(st);
        }
        s->nalgo[md] = kept;
    }
    CUDA_CHECK(cudaStreamSynchronize(s->env->stream));
}

typedef struct pick_launch { fp8_state *s; int md, algo; } pick_launch;
static void launch_pick(void *ctx, int i) {
    (void)i;
    const pick_launch *l = ctx;
    baseline(l->s, l->md, l->algo, l->s->env->stream);
}

/* Each mode's fastest algorithm, by the engine's timing; the engine then times
 * the fast mode's again, like the step. */
static void pick_baseline(fp8_state *s) {
    for (int md = 0; md < MODES; ++md) {
        s->pick_us[md] = INFINITY;
        for (int a = 0; a < s->nalgo[md]; ++a) {
            pick_launch l = {s, md, a};
            const kl_timing t = {.warmup = 2, .runs = 5, .budget_ms = 0};
            const double us = kl_time_us(launch_pick, &l, &t, s->env->stream);
            if (us < s->pick_us[md]) s->pick_us[md] = us, s->choice[md] = a;
        }
    }
}

/* ||C - ref|| / ||ref|| of a bf16 result on the device (kl_compare's rel_err;
 * its tolerance plays no part in it). */
static double rel_err_of(fp8_state *s, const kl_bf16 *c) {
    const size_t mn = (size_t)s->p.m * s->p.n;
    kl_bf16_to_f32(c, s->Cout, mn, s->env->stream);
    CUDA_CHECK(cudaStreamSynchronize(s->env->stream));
    kl_copy_to_host(s->h_out, s->Cout, 4 * mn);
    kl_compare_result r;
    kl_compare(s->h_out, s->h_ref, mn, kl_tol_gemm_fp8(s->p.k), &r);
    return r.rel_err;
}

static int f8_has_ref(void *st) { return ((fp8_state *)st)->nalgo[MODE_FAST] > 0; }

static const char *f8_baseline_note(void *st) {
    fp8_state *s = st;
    if (!s->nalgo[MODE_FAST]) {
        snprintf(s->note, sizeof s->note, "cuBLAS column empty: cublasLtMatmul has no FP8 algorithm for this shape (%s)",
                 s->lt_error ? s->lt_error : "its heuristic proposed none");
        return s->note;
    }
    int used = snprintf(s->note, sizeof s->note, "cuBLAS column: cublasLtMatmul FP8, fast accumulation (as the "
                        "step), best of %d algorithms; rel_err %.2e", s->nalgo[MODE_FAST], s->rel_err[MODE_FAST]);
    if (s->nalgo[MODE_PROMOTED])
        snprintf(s->note + used, sizeof s->note - used, "; promoted accumulation %.1f us, rel_err %.2e",
                 s->pick_us[MODE_PROMOTED], s->rel_err[MODE_PROMOTED]);
    return s->note;
}

/* ---- inputs and the reference ---------------------------------------------- */

/* The GPU's e4m3 of the first elements of x against the host's encoder: the
 * quantizer the kernels read is the one fp8_ops.h describes. */
static void check_quantizer(const float *x, const uint8_t *q, size_t n, float scale, const char *what) {
    const size_t cnt = n < KL_QUANT_SAMPLE ? n : KL_QUANT_SAMPLE;
    float *hx = kl_hmalloc(4 * cnt);
    uint8_t *hq = kl_hmalloc(cnt);
    kl_copy_to_host(hx, x, 4 * cnt);
    kl_copy_to_host(hq, q, cnt);
    for (size_t i = 0; i < cnt; ++i) {
        const uint8_t want = kl_float_to_e4m3(hx[i] / scale);
        if (hq[i] != want) {
            fprintf(stderr, "internal error: the GPU quantized %s[%zu] = %g (scale %g) to e4m3 0x%02X, the host "
                            "encoder to 0x%02X\n", what, i, hx[i], scale, hq[i], want);
            exit(KL_EXIT_WRONG);
        }
    }
    free(hx);
    free(hq);
}

static void e4m3_row(const uint8_t *d, int k, float scale, float *out) {
    uint8_t *h = kl_hmalloc((size_t)k);
    kl_copy_to_host(h, d, (size_t)k);
    for (int i = 0; i < k; ++i) out[i] = kl_e4m3_to_float(h[i]) * scale;
    free(h);
}
/* Row r of A and row c of B, decoded on the host from the bytes the step reads. */
static void fetch_rows(void *ctx, int r, int c, float *a, float *b) {
    const fp8_state *s = ctx;
    e4m3_row(s->A + (size_t)r * s->p.k, s->p.k, s->h_scales[0], a);
    e4m3_row(s->B + (size_t)c * s->p.k, s->p.k, s->h_scales[1], b);
}

/* Random fp32 inputs, quantized; the fp32 reference of the dequantized ones,
 * spot-checked; then the fp32 copies are gone. */
static void make_inputs(fp8_state *s) {
    const kl_problem *p = &s->p;
    cudaStream_t str = s->env->stream;
    const size_t mk = (size_t)p->m * p->k, nk = (size_t)p->n * p->k, mn = (size_t)p->m * p->n;
    float *xa = kl_dmalloc(4 * mk), *xb = kl_dmalloc(4 * nk), *ref = kl_dmalloc(4 * mn);
    const uint64_t seed = s->env->seed * 1000003u + (uint64_t)p->m * 31 + (uint64_t)p->n * 17 + (uint64_t)p->k;
    /* Ranges 4x apart, so that sa and sb differ (a kernel that applies one of
     * them twice is off by 16x), and still terms |a*b| < 1. */
    kl_fill_uniform_f32(xa, mk, -2.0f, 2.0f, seed + 1, str);
    kl_fill_uniform_f32(xb, nk, -0.5f, 0.5f, seed + 2, str);
    kl_fp8_quantize_tensor(xa, mk, s->A, s->scales + SA, s->scales + AMAX_TMP, str);
    kl_fp8_quantize_tensor(xb, nk, s->B, s->scales + SB, s->scales + AMAX_TMP, str);
    CUDA_CHECK(cudaStreamSynchronize(str));
    kl_copy_to_host(&s->h_scales[0], s->scales + SA, sizeof(float));
    kl_copy_to_host(&s->h_scales[1], s->scales + SB, sizeof(float));
    check_quantizer(xa, s->A, mk, s->h_scales[0], "A");
    check_quantizer(xb, s->B, nk, s->h_scales[1], "B");
    kl_fp8_dequantize_tensor(s->A, mk, s->scales + SA, xa, str);
    kl_fp8_dequantize_tensor(s->B, nk, s->scales + SB, xb, str);
    /* ref (row-major m x n) = xa xb^T: column-major ref^T = xb^T xa, as gemm_bf16 calls it. */
    const float one = 1.0f, zero = 0.0f;
    CUBLAS_CHECK(cublasSetStream(s->env->cublas, str));
    CUBLAS_CHECK(cublasSgemm(s->env->cublas, CUBLAS_OP_T, CUBLAS_OP_N, p->n, p->m, p->k, &one, xb, p->k, xa, p->k,
                             &zero, ref, p->n));
    CUDA_CHECK(cudaStreamSynchronize(str));
    kl_copy_to_host(s->h_ref, ref, 4 * mn);
    kl_require_spot_check(p->m, p->n, p->k, s->env->seed, s->h_ref, fetch_rows, s);
    CUDA_CHECK(cudaFree(xa));
    CUDA_CHECK(cudaFree(xb));
    CUDA_CHECK(cudaFree(ref));
}

static void *f8_setup(const kl_problem *p, int nrot, const kl_env *env) {
    (void)nrot;
    fp8_state *s = kl_hmalloc(sizeof *s);
    memset(s, 0, sizeof *s);
    s->p = *p;
    s->env = env;
    const size_t mk = (size_t)p->m * p->k, nk = (size_t)p->n * p->k, mn = (size_t)p->m * p->n;
    s->A = kl_dmalloc(mk);
    s->B = kl_dmalloc(nk);
    s->scales = kl_dmalloc(3 * SCALE_SLOT * sizeof(float));
    s->h_out = kl_hmalloc(4 * mn);
    s->h_ref = kl_hmalloc(4 * mn);
    make_inputs(s);
    s->C = kl_dmalloc(2 * mn);
    s->Cblas = kl_dmalloc(2 * mn);
    s->Cout = kl_dmalloc(4 * mn);
    lt_setup(s);
    keep_running_algos(s);
    if (!env->check_only) pick_baseline(s);   /* --check-only times nothing */
    for (int md = 0; md < MODES; ++md) {
        s->rel_err[md] = NAN;
        if (!s->nalgo[md]) continue;
        kl_poison(s->Cblas, 2 * mn, env->stream);
        baseline(s, md, s->choice[md], env->stream);
        s->rel_err[md] = rel_err_of(s, s->Cblas);
    }
    return s;
}

/* One checked launch: C full of NaN first, so an element the step does not write fails. */
static void f8_check(void *st, const kl_kernel *kern, int pass, kl_check_data *d) {
    (void)pass;
    fp8_state *s = st;
    const kl_problem *p = &s->p;
    const size_t mn = (size_t)p->m * p->n;
    cudaStream_t str = s->env->stream;
    kl_poison(s->C, 2 * mn, str);
    const kl_gemm_fp8_args a = {p->m, p->n, p->k, s->A, s->B, s->scales + SA, s->scales + SB, s->C};
    kern->gemm_fp8(&a, kern->ctx, str);
    kl_bf16_to_f32(s->C, s->Cout, mn, str);
    CUDA_CHECK(cudaStreamSynchronize(str));
    kl_copy_to_host(s->h_out, s->Cout, 4 * mn);
    d->out = s->h_out;
    d->ref = s->h_ref;
    d->count = mn;
    d->cols = p->n;
    d->tol = kl_tol_gemm_fp8(p->k);
    d->what = "bf16 output, FP8 accumulation in the tensor cores, C poisoned with NaN";
}

static void f8_run(void *st, const kl_kernel *kern, int rot, cudaStream_t str) {
    (void)rot;
    fp8_state *s = st;
    const kl_gemm_fp8_args a = {s->p.m, s->p.n, s->p.k, s->A, s->B, s->scales + SA, s->scales + SB, s->C};
    kern->gemm_fp8(&a, kern->ctx, str);
}

static void f8_run_ref(void *st, int rot, cudaStream_t str) {
    (void)rot;
    fp8_state *s = st;
    baseline(s, MODE_FAST, s->choice[MODE_FAST], str);
}

static void f8_teardown(void *st) {
    fp8_state *s = st;
    CUDA_CHECK(cudaFree(s->A));
    CUDA_CHECK(cudaFree(s->B));
    CUDA_CHECK(cudaFree(s->scales));
    CUDA_CHECK(cudaFree(s->C));
    CUDA_CHECK(cudaFree(s->Cblas));
    CUDA_CHECK(cudaFree(s->Cout));
    CUDA_CHECK(cudaFree(s->workspace));
    CUBLAS_CHECK(cublasLtMatrixLayoutDestroy(s->la));
    CUBLAS_CHECK(cublasLtMatrixLayoutDestroy(s->lb));
    CUBLAS_CHECK(cublasLtMatrixLayoutDestroy(s->lc));
    for (int md = 0; md < MODES; ++md) CUBLAS_CHECK(cublasLtMatmulDescDestroy(s->desc[md]));
    CUBLAS_CHECK(cublasLtDestroy(s->lt));
    free(s->h_out);
    free(s->h_ref);
    free(s);
}

/* Part III's model shapes (Llama-3-8B's MLP and vocabulary head at 4096
 * tokens), and DeepSeek-V3's at 4096 tokens: n x k = 2112 x 7168 (the
 * attention's down-projections), 24576 x 1536 (the query's up-projection) and
 * 7168 x 16384 (the attention output). */
static const kl_problem fp8_shapes[] = {
    {4096, 14336, 4096}, {4096, 4096, 14336}, {4096, 128256, 4096},
    {4096, 2112, 7168},  {4096, 24576, 1536}, {4096, 7168, 16384},
};

const kl_op kl_op_gemm_fp8 = {
    .name = "gemm_fp8", .dtype = "e4m3",
    .baseline = "cublasLtMatmul FP8 (e4m3 in, bf16 out, CUBLAS_COMPUTE_32F, scalar scales, same layout TN), "
                "fast accumulation as the step; the best of 4 heuristic algorithms, same timing",
    .part = "5", .memory_bound = 0, .tensor_core = KL_TC_FP8, .default_sizes = "1024,2048,4096,8192",
    .extra_shapes = fp8_shapes, .nextra_shapes = (int)(sizeof fp8_shapes / sizeof fp8_shapes[0]), .checks = 1,
    .shape = f8_shape, .flops = f8_flops, .bytes = f8_bytes, .rotating_bytes = f8_rotating,
    .device_bytes = f8_device_bytes, .setup = f8_setup, .check = f8_check, .run = f8_run,
    .run_ref = f8_run_ref, .has_ref = f8_has_ref, .baseline_note = f8_baseline_note, .teardown = f8_teardown,
};
