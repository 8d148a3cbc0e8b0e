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
#include "op.h"
#include "fp8_ops.h"
#include "quant.h"

#include <cublasLt.h>
#include <math.h>
#include <string.h>

#define KL_LT_ALGOS 4                 /* cublasLt candidates timed per mode and problem */
#define KL_LT_WORKSPACE (32u << 20)   /* cuBLAS's own default on Hopper */
#define KL_QUANT_SAMPLE 4096          /* elements of each input checked against the host encoder */
/* Floats from one scale to the next in s->scales: cublasLtMatmul refuses a scale
 * pointer that is not 16-byte aligned ("not supported"; its heuristic does not look). */
#define SCALE_SLOT 64
#define SA (0 * SCALE_SLOT)
#define SB (1 * SCALE_SLOT)
#define AMAX_TMP (2 * SCALE_SLOT)
#define SLOTS 3

/* cublasLtMatmul runs two ways: MODE_MAIN is timed in the cuBLAS column,
 * MODE_SIDE reported in the note. */
enum { MODE_MAIN, MODE_SIDE, MODES };

/* One way to call cublasLtMatmul: its accumulation, and how it reads the
 * scales of our A and of our B (Lt's B and Lt's A: lt_setup says why). */
typedef struct lt_mode {
    int8_t fast;                                   /* CUBLASLT_MATMUL_DESC_FAST_ACCUM */
    cublasLtMatmulMatrixScale_t a_scale, b_scale;  /* SCALAR_32F: one float */
} lt_mode;

/* What an operation of this file is: how it calls cublasLtMatmul. */
typedef struct f8_kind {
    lt_mode mode[MODES];
} f8_kind;
static const f8_kind per_tensor = {
    {{1, CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F, CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F},    /* fast */
     {0, CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F, CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F}}};  /* promoted */

typedef struct fp8_state {
    kl_problem p;
    const kl_env *env;
    const f8_kind *kind;
    uint8_t *A, *B;                /* device, e4m3 */
    float *sa, *sb;                /* device: the scales the step reads (slots of `scales`) */
    float *scales;                 /* device: sa, sb and scratch for amax, SCALE_SLOT floats apart */
    float *h_sa, *h_sb;            /* host copies of sa and sb */
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
 * Row-major C[m][n] = A B^T is column-major C^T (n x m) = B^T-view x A: Lt's A
 * is our B (k x n column-major, transposed), Lt's B our A (k x m), so Lt's
 * A scale is our sb and its B scale our sa.  FP8 wants exactly this "TN" form. */
static void lt_setup(fp8_state *s) {
    const kl_problem *p = &s->p;
    CUBLAS_CHECK(cublasLtCreate(&s->lt));
    CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&s->lb, CUDA_R_8F_E4M3, p->k, p->n, p->k));
    CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&s->la, CUDA_R_8F_E4M3, p->k, p->m, p->k));
    CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&s->lc, CUDA_R_16BF, p->n, p->m, p->n));
    cublasLtMatmulPreference_t pref;
    CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&pref));
    const size_t ws = KL_LT_WORKSPACE;
    CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws));
    const cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
    for (int md = 0; md < MODES; ++md) {
        const lt_mode *mode = &s->kind->mode[md];
        const float *lt_a_scale = s->sb, *lt_b_scale = s->sa;
        CUBLAS_CHECK(cublasLtMatmulDescCreate(&s->desc[md], CUBLAS_COMPUTE_32F, CUDA_R_32F));
        cublasLtMatmulDesc_t d = s->desc[md];
        CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(d, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta));
        CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(d, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb));
        CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(d, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &lt_a_scale, sizeof lt_a_scale));
        CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(d, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &lt_b_scale, sizeof lt_b_scale));
        /* Scale modes only where they are not the default (SCALAR_32F), so the
         * per-tensor descriptors stay those that were measured. */
        if (mode->b_scale != CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F)
            CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(d, CUBLASLT_MATMUL_DESC_A_SCALE_MODE, &mode->b_scale,
                                                        sizeof mode->b_scale));
        if (mode->a_scale != CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F)
            CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(d, CUBLASLT_MATMUL_DESC_B_SCALE_MODE, &mode->a_scale,
                                                        sizeof mode->a_scale));
        CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(d, CUBLASLT_MATMUL_DESC_FAST_ACCUM, &mode->fast, sizeof mode->fast));
        cublasLtMatmulHeuristicResult_t res[KL_LT_ALGOS];
        int n = 0;
        const cublasStatus_t st = cublasLtMatmulAlgoGetHeuristic(s->lt, d, s->lb, s->la, s->lc, s->lc, pref,
                                                                 KL_LT_ALGOS, res, &n);
        if (st != CUBLAS_STATUS_SUCCESS) {
            n = 0;
            s->lt_error = cublasGetStatusString(st);
        }
        for (int i = 0; i < n; ++i) s->algo[md][s->nalgo[md]++] = res[i].algo;
    }
    CUBLAS_CHECK(cublasLtMatmulPreferenceDestroy(pref));
    s->workspace = kl_dmalloc(ws);
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
 * MODE_MAIN's again, like the step. */
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

/* ||C - ref|| / ||ref|| of a bf16 result on the device. */
static double rel_err_of(fp8_state *s, const kl_bf16 *c) {
    const size_t mn = (size_t)s->p.m * s->p.n;
    kl_bf16_to_f32(c, s->Cout, mn, s->env->stream);
    CUDA_CHECK(cudaStreamSynchronize(s->env->stream));
    kl_copy_to_host(s->h_out, s->Cout, 4 * mn);
    double num = 0, den = 0;
    for (size_t i = 0; i < mn; ++i) {
        const double d = (double)s->h_out[i] - s->h_ref[i];
        num += d * d;
        den += (double)s->h_ref[i] * s->h_ref[i];
    }
    return den > 0 ? sqrt(num / den) : sqrt(num);
}

static int f8_has_ref(void *st) { return ((fp8_state *)st)->nalgo[MODE_MAIN] > 0; }

/* The column stays empty: say why, or NULL when it does not. */
static const char *no_baseline_note(fp8_state *s, const char *what) {
    if (s->nalgo[MODE_MAIN]) return NULL;
    snprintf(s->note, sizeof s->note, "cuBLAS column empty: cublasLtMatmul has no %s algorithm for this shape (%s)",
             what, s->lt_error ? s->lt_error : "its heuristic proposed none");
    return s->note;
}

static const char *f8_baseline_note(void *st) {
    fp8_state *s = st;
    if (no_baseline_note(s, "FP8")) return s->note;
    int used = snprintf(s->note, sizeof s->note, "cuBLAS column: cublasLtMatmul FP8, fast accumulation (as the "
                        "step), best of %d algorithms; rel_err %.2e", s->nalgo[MODE_MAIN], s->rel_err[MODE_MAIN]);
    if (s->nalgo[MODE_SIDE])
        snprintf(s->note + used, sizeof s->note - used, "; promoted accumulation %.1f us, rel_err %.2e",
                 s->pick_us[MODE_SIDE], s->rel_err[MODE_SIDE]);
    return s->note;
}

/* ---- inputs and the reference ---------------------------------------------- */

/* The host's copy of the scale of A[i][kb * 128 ...] and of B[j][kb * 128 ...]. */
static float host_sa(const fp8_state *s, int i, int kb) { (void)i, (void)kb; return s->h_sa[0]; }
static float host_sb(const fp8_state *s, int j, int kb) { (void)j, (void)kb; return s->h_sb[0]; }

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

/* A row of A or B as the step reads it, decoded on the host: each element's
 * e4m3 times the scale of its k block, kscale[c / 128]. */
static void e4m3_row(const uint8_t *d, int k, const float *kscale, float *out) {
    uint8_t *h = kl_hmalloc((size_t)k);
    kl_copy_to_host(h, d, (size_t)k);
    for (int i = 0; i < k; ++i) out[i] = kl_e4m3_to_float(h[i]) * kscale[i / KL_FP8_BLOCK];
    free(h);
}
/* Row r of A and row c of B, decoded on the host from the bytes and scales the step reads. */
static void fetch_rows(void *ctx, int r, int c, float *a, float *b) {
    const fp8_state *s = ctx;
    const int k = s->p.k, kbs = (k + KL_FP8_BLOCK - 1) / KL_FP8_BLOCK;
    float *sa_row = kl_hmalloc(4 * (size_t)kbs), *sb_row = kl_hmalloc(4 * (size_t)kbs);
    for (int kb = 0; kb < kbs; ++kb) sa_row[kb] = host_sa(s, r, kb), sb_row[kb] = host_sb(s, c, kb);
    e4m3_row(s->A + (size_t)r * k, k, sa_row, a);
    e4m3_row(s->B + (size_t)c * k, k, sb_row, b);
    free(sa_row);
    free(sb_row);
}

/* One scale per tensor: quantize, check, and dequantize xa and xb in place. */
static void quantize_tensors(fp8_state *s, float *xa, float *xb) {
    const size_t mk = (size_t)s->p.m * s->p.k, nk = (size_t)s->p.n * s->p.k;
    cudaStream_t str = s->env->stream;
    kl_fp8_quantize_tensor(xa, mk, s->A, s->sa, s->scales + AMAX_TMP, str);
    kl_fp8_quantize_tensor(xb, nk, s->B, s->sb, s->scales + AMAX_TMP, str);
    CUDA_CHECK(cudaStreamSynchronize(str));
    kl_copy_to_host(s->h_sa, s->sa, sizeof(float));
    kl_copy_to_host(s->h_sb, s->sb, sizeof(float));
    check_quantizer(xa, s->A, mk, s->h_sa[0], "A");
    check_quantizer(xb, s->B, nk, s->h_sb[0], "B");
    kl_fp8_dequantize_tensor(s->A, mk, s->sa, xa, str);
    kl_fp8_dequantize_tensor(s->B, nk, s->sb, xb, str);
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
    quantize_tensors(s, xa, xb);
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

static void *setup(const kl_problem *p, const kl_env *env, const f8_kind *kind) {
    fp8_state *s = kl_hmalloc(sizeof *s);
    memset(s, 0, sizeof *s);
    s->p = *p;
    s->env = env;
    s->kind = kind;
    const size_t mk = (size_t)p->m * p->k, nk = (size_t)p->n * p->k, mn = (size_t)p->m * p->n;
    s->A = kl_dmalloc(mk);
    s->B = kl_dmalloc(nk);
    s->scales = kl_dmalloc(SLOTS * SCALE_SLOT * sizeof(float));
    s->sa = s->scales + SA;
    s->sb = s->scales + SB;
    s->h_sa = kl_hmalloc(sizeof(float));
    s->h_sb = kl_hmalloc(sizeof(float));
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
static void *f8_setup(const kl_problem *p, int nrot, const kl_env *env) {
    (void)nrot;
    return setup(p, env, &per_tensor);
}

/* One checked launch: C full of NaN first, so an element the step does not write fails. */
static void f8_check(void *st, const kl_kernel *kern, int pass, kl_check_data *d) {
    (void)pass;
    fp8_state *s = st;
    const kl_problem *p = &s->p;
    const size_t mn = (size_t)p->m * p->n;
    cudaStream_t str = s->env->stream;
    kl_poison(s->C, 2 * mn, str);
    const kl_gemm_fp8_args a = {p->m, p->n, p->k, s->A, s->B, s->sa, s->sb, s->C};
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
    const kl_gemm_fp8_args a = {s->p.m, s->p.n, s->p.k, s->A, s->B, s->sa, s->sb, s->C};
    kern->gemm_fp8(&a, kern->ctx, str);
}

static void f8_run_ref(void *st, int rot, cudaStream_t str) {
    (void)rot;
    fp8_state *s = st;
    baseline(s, MODE_MAIN, s->choice[MODE_MAIN], str);
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
    free(s->h_sa);
    free(s->h_sb);
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
