/*
 * op_gemm_fp8.c - Part V: C[m][n] = A[m][k] B[n][k]^T with A and B in FP8
 * e4m3 and fp32 scales, fp32 accumulation, bf16 out: Part III's layout (both
 * K-contiguous) at one byte per element.  Two operations, one state:
 *   gemm_fp8        one scale per tensor, C = sa * sb * (A B^T)
 *   gemm_fp8_block  DeepSeek-V3's block scales, A per 1 x 128 and B per
 *                   128 x 128 (kl.h has the layouts): each 128 of K's partial
 *                   sum times its own sa(i, kb) sb(j / 128, kb)
 *
 * Inputs: uniform in fp32, A in [-2, 2) and B in [-0.5, 0.5), quantized on
 * the GPU (fp8_ops.h: amax, s = amax / 448, q = e4m3(x / s), per tensor or per
 * block).  With block scales each block also gets a magnitude of its own
 * (fp8_ops.h, kl_fp8_block_exp): with one magnitude everywhere every block's
 * amax, and so its scale, would be about the same, and a kernel that applies
 * the wrong block's scale would pass.  The GPU's quantizer is checked against
 * the host's: per tensor, the first elements of each input against the host's
 * encoder; per block, whole blocks (the first, the last and one between)
 * against quant.c's kl_fp8_quant_block, their scales where the layout puts
 * them and every code.  Check: an fp32 GEMM (cublasSgemm, no TF32) of the
 * dequantized inputs q * s, itself checked at sample points against fp64 dot
 * products of rows the host decodes from the e4m3 bytes and the scales.  The
 * reference is computed once per problem; the fp32 copies are freed before
 * anything is timed.
 * Baseline: cublasLtMatmul in FP8 (e4m3 x e4m3 -> bf16, CUBLAS_COMPUTE_32F),
 * two ways per operation, each the fastest of the first KL_LT_ALGOS algorithms
 * its heuristic proposes, by the engine's timing; the cuBLAS column times the
 * first, the note gives the second:
 *   gemm_fp8: the same scales through A/B_SCALE_POINTER, in both accumulation
 *     modes: CUBLASLT_MATMUL_DESC_FAST_ACCUM on (the tensor cores accumulate all
 *     of K, as the steps of this operation do) and off (cuBLASLt promotes
 *     partial sums into fp32 as it goes).  The column times the fast mode, whose
 *     accumulation matches the step's; the note gives the other's time and both
 *     modes' rel_err beside the step's.
 *   gemm_fp8_block: the same scales read by cuBLASLt's VEC128_32F (our A) and
 *     BLK128x128_32F (our B) modes, which promote (on the H100 cuBLASLt refuses
 *     them with FAST_ACCUM on); and, for its speed only, the per-tensor
 *     promoted mode on the same bytes with scales of 1: the note sets its time
 *     beside the block-scaled one's, with the block-scaled rel_err.
 * L2 warm, as Part III.
 */
#include "lt.h"
#include "fp8_ops.h"
#include "quant.h"

#include <math.h>
#include <string.h>

#define KL_QUANT_SAMPLE 4096          /* elements of each input checked against the host encoder */
/* Floats from one scale to the next in s->scales: cublasLtMatmul refuses a scale
 * pointer that is not 16-byte aligned ("not supported"; its heuristic does not look).
 * The block scales are allocations of their own, aligned by cudaMalloc. */
#define SCALE_SLOT 64
#define SA (0 * SCALE_SLOT)
#define SB (1 * SCALE_SLOT)
#define AMAX_TMP (2 * SCALE_SLOT)
#define ONE (3 * SCALE_SLOT)          /* 1.0f: gemm_fp8_block's per-tensor timing */
#define SLOTS 4

/* Each operation calls cublasLtMatmul two ways: MODE_MAIN is timed in the cuBLAS
 * column, MODE_SIDE reported in the note. */
enum { MODE_MAIN, MODE_SIDE, MODES };

/* One way to call cublasLtMatmul: its accumulation, and how it reads the
 * scales of our A and of our B (Lt's B and Lt's A: lt_setup says why). */
typedef struct lt_mode {
    int8_t fast;                                   /* CUBLASLT_MATMUL_DESC_FAST_ACCUM */
    cublasLtMatmulMatrixScale_t a_scale, b_scale;  /* SCALAR_32F: one float */
    int ones;                                      /* scales of 1, not the operation's: timed only */
} lt_mode;

/* What tells the two operations apart. */
typedef struct f8_kind {
    int block;                 /* 0: a scale per tensor; 1: per block (kl.h's layouts) */
    lt_mode mode[MODES];
} f8_kind;
static const f8_kind per_tensor = {
    0, {{1, CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F, CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F, 0},    /* fast */
        {0, CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F, CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F, 0}}};  /* promoted */
static const f8_kind per_block = {
    1, {{0, CUBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F, CUBLASLT_MATMUL_MATRIX_SCALE_BLK128x128_32F, 0},
        {0, CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F, CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F, 1}}};

typedef struct fp8_state {
    kl_problem p;
    const kl_env *env;
    const f8_kind *kind;
    uint8_t *A, *B;                /* device, e4m3 */
    float *sa, *sb;                /* device: the scales the step reads (per tensor: slots of `scales`) */
    float *scales;                 /* device: per-tensor sa and sb, amax scratch, a 1; SCALE_SLOT floats apart */
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
    char note[384];
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
static int f8b_shape(kl_problem *p, int m_given, char *msg, size_t len) {
    (void)m_given;
    if (p->k % KL_FP8_BLOCK) {
        snprintf(msg, len, "k=%d: K must be a multiple of 128 (the scales' blocks are 128 deep, DeepSeek-V3's and "
                           "cuBLASLt's); pad K with zeros to the next multiple of 128", p->k);
        return 1;
    }
    return 0;
}
static double f8_flops(const kl_problem *p) { return 2.0 * p->m * (double)p->n * p->k; }
static double f8_bytes(const kl_problem *p) {
    return (double)p->m * p->k + (double)p->n * p->k + 2.0 * p->m * p->n;
}
/* ... and the scales a kernel must read: one float per row of A and per 128
 * rows of B, for each 128 of K (not B's row padding). */
static double f8b_bytes(const kl_problem *p) {
    const double kb = p->k / KL_FP8_BLOCK, nb = (p->n + KL_FP8_BLOCK - 1) / KL_FP8_BLOCK;
    return f8_bytes(p) + 4.0 * (p->m + nb) * kb;
}
static size_t f8_rotating(const kl_problem *p) { (void)p; return 0; }
/* Setup holds, at its peak, the e4m3 inputs, the fp32 inputs and reference, and the outputs. */
static size_t f8_device_bytes(const kl_problem *p, int nrot) {
    (void)nrot;
    const size_t mk = (size_t)p->m * p->k, nk = (size_t)p->n * p->k, mn = (size_t)p->m * p->n;
    return (mk + nk) + 4 * (mk + nk + mn) + 2 * 2 * mn + 4 * mn + KL_LT_WORKSPACE;
}
/* ... and the block scales. */
static size_t f8b_device_bytes(const kl_problem *p, int nrot) {
    return f8_device_bytes(p, nrot) + 4 * (kl_fp8_sa_count(p->m, p->k) + kl_fp8_sb_count(p->n, p->k));
}

/* ---- cuBLASLt ----------------------------------------------------------------
 * The TN view of lt.h: Lt's A is our B and Lt's B our A, so Lt's A scale is
 * our sb and its B scale our sa.  The block scales keep their names across:
 * Lt's A (our B) reads BLK128x128, its B (our A) VEC128, in the layouts kl.h
 * gives (a probe on the H100 with cuBLAS 13.1 settled them: docs/notes/v28_fp8.md). */
static void lt_setup(fp8_state *s) {
    CUBLAS_CHECK(cublasLtCreate(&s->lt));
    kl_lt_tn_layouts(&s->p, CUDA_R_8F_E4M3, CUDA_R_16BF, &s->lb, &s->la, &s->lc);
    for (int md = 0; md < MODES; ++md) {
        const lt_mode *mode = &s->kind->mode[md];
        const float *lt_a_scale = mode->ones ? s->scales + ONE : s->sb;
        const float *lt_b_scale = mode->ones ? s->scales + ONE : s->sa;
        cublasLtMatmulDesc_t d = s->desc[md] = kl_lt_tn_desc();
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

typedef struct pick_launch { fp8_state *s; int md; } pick_launch;
static void launch_pick(void *ctx, int algo, int i) {
    (void)i;
    const pick_launch *l = ctx;
    baseline(l->s, l->md, algo, l->s->env->stream);
}

/* Each mode's fastest algorithm, by the engine's timing; the engine then times
 * MODE_MAIN's again, like the step. */
static void pick_baseline(fp8_state *s) {
    for (int md = 0; md < MODES; ++md) {
        pick_launch l = {s, md};
        double us[KL_LT_ALGOS];
        const int best = kl_fastest(launch_pick, &l, s->nalgo[md], s->env->stream, us);
        s->pick_us[md] = best < 0 ? INFINITY : us[best];
        if (best >= 0) s->choice[md] = best;
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

/* The layouts were settled with cuBLASLt at M = 256 (M % 4 != 0 it refuses: no
 * algorithm at M = 257 or 1001 on the H100).  Were it ever to read the scales
 * laid out otherwise, its result would be wrong, not refused: the note says so
 * when its error is far above the bf16 output's own (~2e-3). */
#define LT_SUSPECT_REL_ERR 1e-2

static const char *f8b_baseline_note(void *st) {
    fp8_state *s = st;
    if (no_baseline_note(s, "block-scaled FP8")) return s->note;
    int used = snprintf(s->note, sizeof s->note, "cuBLAS column: cublasLtMatmul FP8 with block scales (1 x 128 and "
                        "128 x 128, promoted accumulation), best of %d algorithms; rel_err %.2e%s",
                        s->nalgo[MODE_MAIN], s->rel_err[MODE_MAIN],
                        s->rel_err[MODE_MAIN] > LT_SUSPECT_REL_ERR ? " (far above bf16's rounding: does cuBLASLt "
                                                                    "read the scales as laid out here?)" : "");
    if (s->nalgo[MODE_SIDE])
        snprintf(s->note + used, sizeof s->note - used, "; per-tensor scales (promoted, scales of 1, the same bytes) "
                 "%.1f us against block scales %.1f us (the pick's medians)", s->pick_us[MODE_SIDE],
                 s->pick_us[MODE_MAIN]);
    return s->note;
}

/* ---- inputs and the reference ---------------------------------------------- */

/* The host's copy of the scale of A[i][kb * 128 ...] and of B[j][kb * 128 ...]. */
static float host_sa(const fp8_state *s, int i, int kb) {
    return s->kind->block ? s->h_sa[kl_fp8_sa_index(s->p.m, i, kb)] : s->h_sa[0];
}
static float host_sb(const fp8_state *s, int j, int kb) {
    return s->kind->block ? s->h_sb[kl_fp8_sb_index(s->p.k, j / KL_FP8_BLOCK, kb)] : s->h_sb[0];
}

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

/* One block of the GPU's block quantizer against the host's (quant.c): its
 * scale, found where the layout puts it, and every code.  Block (rb, kb) of
 * A is row rb, of B rows 128 rb .. (the last: those that exist), k block kb. */
static void check_block(const fp8_state *s, int is_b, const float *x, const uint8_t *q, int rb, int kb) {
    const int k = s->p.k, per = is_b ? KL_FP8_BLOCK : 1, r0 = rb * per, left = (is_b ? s->p.n : s->p.m) - r0;
    const int rows = left < per ? left : per;
    const size_t cnt = (size_t)rows * KL_FP8_BLOCK, at = (size_t)r0 * k + (size_t)kb * KL_FP8_BLOCK;
    float *hx = kl_hmalloc(4 * cnt);
    uint8_t *hq = kl_hmalloc(cnt), *want = kl_hmalloc(cnt);
    CUDA_CHECK(cudaMemcpy2D(hx, 4 * KL_FP8_BLOCK, x + at, 4 * (size_t)k, 4 * KL_FP8_BLOCK, rows,
                            cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy2D(hq, KL_FP8_BLOCK, q + at, (size_t)k, KL_FP8_BLOCK, rows, cudaMemcpyDeviceToHost));
    const float scale = kl_fp8_quant_block(hx, KL_FP8_BLOCK, rows, KL_FP8_BLOCK, want);
    const float got = is_b ? host_sb(s, r0, kb) : host_sa(s, r0, kb);
    const char *what = is_b ? "B's 128 x 128 block" : "A's 1 x 128 slice";
    if (got != scale) {
        fprintf(stderr, "internal error: the GPU's scale of %s (%d, %d) is %g, the host quantizer's %g\n", what, rb,
                kb, got, scale);
        exit(KL_EXIT_WRONG);
    }
    for (size_t i = 0; i < cnt; ++i)
        if (hq[i] != want[i]) {
            fprintf(stderr, "internal error: the GPU quantized %s (%d, %d) element [%zu][%zu] = %g (scale %g) to "
                            "e4m3 0x%02X, the host quantizer to 0x%02X\n", what, rb, kb, i / KL_FP8_BLOCK,
                    i % KL_FP8_BLOCK, hx[i], scale, hq[i], want[i]);
            exit(KL_EXIT_WRONG);
        }
    free(hx);
    free(hq);
    free(want);
}

/* The first block of each input, the last (B's partial one when n % 128 != 0)
 * and one between. */
static void check_block_quantizer(const fp8_state *s, const float *xa, const float *xb) {
    const int kbs = s->p.k / KL_FP8_BLOCK, nbs = (s->p.n + KL_FP8_BLOCK - 1) / KL_FP8_BLOCK;
    check_block(s, 0, xa, s->A, 0, 0);
    check_block(s, 0, xa, s->A, s->p.m - 1, kbs - 1);
    check_block(s, 0, xa, s->A, s->p.m / 2, kbs / 2);
    check_block(s, 1, xb, s->B, 0, 0);
    check_block(s, 1, xb, s->B, nbs - 1, kbs - 1);
    check_block(s, 1, xb, s->B, nbs / 2, kbs / 2);
}

/* The tolerance (check.h) assumes |a*b| <= KL_FP8_BLOCK_TERM_MAX; the scales
 * bound the inputs (|a| <= 448 max sa, |b| <= 448 max sb), so the data the
 * check runs on is the data its error model was written for. */
static void check_term_bound(const fp8_state *s) {
    float ma = 0.0f, mb = 0.0f;
    for (size_t i = 0; i < kl_fp8_sa_count(s->p.m, s->p.k); ++i) ma = fmaxf(ma, s->h_sa[i]);
    for (size_t i = 0; i < kl_fp8_sb_count(s->p.n, s->p.k); ++i) mb = fmaxf(mb, s->h_sb[i]);
    const double most = (double)KL_E4M3_MAX * ma * KL_E4M3_MAX * mb;
    if (most > KL_FP8_BLOCK_TERM_MAX * (1.0 + ldexp(1.0, -20))) {   /* (448 * (amax / 448) may round up) */
        fprintf(stderr, "internal error: gemm_fp8_block's inputs reach |a*b| = %g, over the %g its tolerance "
                        "assumes (KL_FP8_BLOCK_TERM_MAX, check.h)\n", most, KL_FP8_BLOCK_TERM_MAX);
        exit(KL_EXIT_WRONG);
    }
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

/* Block scales: each block's own magnitude (A's 2^0..2^2, B's 2^-2..2^0, so
 * that |a*b| stays under 4: KL_FP8_BLOCK_TERM_MAX), then as above. */
static void quantize_blocks(fp8_state *s, float *xa, float *xb) {
    const kl_problem *p = &s->p;
    cudaStream_t str = s->env->stream;
    kl_fp8_scale_blocks(xa, p->m, p->k, 1, 0, str);
    kl_fp8_scale_blocks(xb, p->n, p->k, KL_FP8_BLOCK, -KL_FP8_BLOCK_EXP_MAX, str);
    kl_fp8_quantize_1x128(xa, p->m, p->k, s->A, s->sa, str);
    kl_fp8_quantize_128x128(xb, p->n, p->k, s->B, s->sb, str);
    CUDA_CHECK(cudaStreamSynchronize(str));
    kl_copy_to_host(s->h_sa, s->sa, 4 * kl_fp8_sa_count(p->m, p->k));
    kl_copy_to_host(s->h_sb, s->sb, 4 * kl_fp8_sb_count(p->n, p->k));
    check_block_quantizer(s, xa, xb);
    check_term_bound(s);
    kl_fp8_dequantize_1x128(s->A, p->m, p->k, s->sa, xa, str);
    kl_fp8_dequantize_128x128(s->B, p->n, p->k, s->sb, xb, str);
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
     * them twice is off by 16x), and still terms |a*b| < 1 (times the block
     * magnitudes, with block scales). */
    kl_fill_uniform_f32(xa, mk, -2.0f, 2.0f, seed + 1, str);
    kl_fill_uniform_f32(xb, nk, -0.5f, 0.5f, seed + 2, str);
    if (s->kind->block) quantize_blocks(s, xa, xb);
    else quantize_tensors(s, xa, xb);
    /* ref (row-major m x n) = xa xb^T: column-major ref^T = xb^T xa, as gemm_bf16 calls it. */
    const float one = 1.0f, zero = 0.0f;
    CUBLAS_CHECK(cublasSetStream(s->env->cublas, str));
    CUBLAS_CHECK(cublasSgemm(s->env->cublas, CUBLAS_OP_T, CUBLAS_OP_N, p->n, p->m, p->k, &one, xb, p->k, xa, p->k,
                             &zero, ref, p->n));
    CUDA_CHECK(cudaStreamSynchronize(str));
    kl_copy_to_host(s->h_ref, ref, 4 * mn);
    /* (The spot check's fp32 tolerance assumes |a*b| <= 1; the block
     * magnitudes' terms, up to 4, leave it a quarter of its 16x margin.) */
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
    if (kind->block) {
        const size_t na = kl_fp8_sa_count(p->m, p->k), nb = kl_fp8_sb_count(p->n, p->k);
        s->sa = kl_dmalloc(4 * na);   /* each its own allocation: 16-byte aligned, as cuBLASLt needs */
        s->sb = kl_dmalloc(4 * nb);
        s->h_sa = kl_hmalloc(4 * na);
        s->h_sb = kl_hmalloc(4 * nb);
        const float one = 1.0f;
        CUDA_CHECK(cudaMemcpy(s->scales + ONE, &one, sizeof one, cudaMemcpyHostToDevice));
    } else {
        s->sa = s->scales + SA;
        s->sb = s->scales + SB;
        s->h_sa = kl_hmalloc(sizeof(float));
        s->h_sb = kl_hmalloc(sizeof(float));
    }
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
        if (!s->nalgo[md] || kind->mode[md].ones) continue;   /* scales of 1: not this product */
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
static void *f8b_setup(const kl_problem *p, int nrot, const kl_env *env) {
    (void)nrot;
    return setup(p, env, &per_block);
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
    if (s->kind->block) {
        d->tol = kl_tol_gemm_fp8_block(p->k);
        d->what = "bf16 output, FP8 accumulation promoted to fp32 every 128 of K, C poisoned with NaN";
    } else {
        d->tol = kl_tol_gemm_fp8(p->k);
        d->what = "bf16 output, FP8 accumulation in the tensor cores, C poisoned with NaN";
    }
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
    if (s->kind->block) {
        CUDA_CHECK(cudaFree(s->sa));
        CUDA_CHECK(cudaFree(s->sb));
    }
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
 * tokens), then DeepSeek-V3's at 4096 tokens: n x k = 2112 x 7168 (the
 * attention's down-projections), 24576 x 1536 (the query's up-projection) and
 * 7168 x 16384 (the attention output).  Every K is a multiple of 128, so
 * gemm_fp8_block runs them all: its steps sit beside v28 at every shape. */
static const kl_problem fp8_shapes[] = {
    {4096, 14336, 4096}, {4096, 4096, 14336}, {4096, 128256, 4096},
    {4096, 2112, 7168},  {4096, 24576, 1536}, {4096, 7168, 16384},
};
#define FP8_SHAPES ((int)(sizeof fp8_shapes / sizeof fp8_shapes[0]))

const kl_op kl_op_gemm_fp8 = {
    .name = "gemm_fp8", .dtype = "e4m3",
    .baseline = "cublasLtMatmul FP8 (e4m3 in, bf16 out, CUBLAS_COMPUTE_32F, scalar scales, same layout TN), "
                "fast accumulation as the step; the best of 4 heuristic algorithms, same timing",
    .part = "5", .memory_bound = 0, .tensor_core = KL_TC_FP8, .default_sizes = "1024,2048,4096,8192",
    .extra_shapes = fp8_shapes, .nextra_shapes = FP8_SHAPES, .checks = 1,
    .shape = f8_shape, .flops = f8_flops, .bytes = f8_bytes, .rotating_bytes = f8_rotating,
    .device_bytes = f8_device_bytes, .setup = f8_setup, .check = f8_check, .run = f8_run,
    .run_ref = f8_run_ref, .has_ref = f8_has_ref, .baseline_note = f8_baseline_note, .teardown = f8_teardown,
};

const kl_op kl_op_gemm_fp8_block = {
    .name = "gemm_fp8_block", .dtype = "e4m3",
    .baseline = "cublasLtMatmul FP8 with block scales (VEC128_32F for A, BLK128x128_32F for B: DeepSeek-V3's "
                "1 x 128 and 128 x 128; e4m3 in, bf16 out, CUBLAS_COMPUTE_32F, promoted accumulation, same layout "
                "TN); the best of 4 heuristic algorithms, same timing",
    .part = "5", .memory_bound = 0, .tensor_core = KL_TC_FP8, .default_sizes = "1024,2048,4096,8192",
    .extra_shapes = fp8_shapes, .nextra_shapes = FP8_SHAPES, .checks = 1,
    .shape = f8b_shape, .flops = f8_flops, .bytes = f8b_bytes, .rotating_bytes = f8_rotating,
    .device_bytes = f8b_device_bytes, .setup = f8b_setup, .check = f8_check, .run = f8_run,
    .run_ref = f8_run_ref, .has_ref = f8_has_ref, .baseline_note = f8b_baseline_note, .teardown = f8_teardown,
};
