/*
 * op_gemv.c - Part II: y = W x with W row-major n x k (a linear layer's
 * weights) in one of the formats of quant.h, fp16 x and y, fp32 accumulation.
 * (v15's dequantize-only operation is op_dequant.c.)
 *
 * Inputs: seeded random weights uniform in [-1, 1) (fp16: generated on the
 * GPU; quantized formats: generated and quantized on the host, OpenMP over
 * rows, so the check and the kernels see exactly quant.c's format), and x
 * uniform in [-1, 1), a fresh x for each checked launch.
 *
 * Reference (the check): cublasSgemv in fp32 on the dequantized weights
 * (exact in fp32) and x converted to fp32.  The tolerance assumes the kernel
 * dequantizes exactly, which (q - z) * s in fp32 does (w_eps = 0); a kernel
 * that rounds weights to fp16 on the way would have to say so here.
 *
 * Baseline (timed): cuBLAS fp16 GEMV, the faster of cublasGemmEx with n = 1
 * (CUBLAS_COMPUTE_32F) and cublasHSHgemvStridedBatched (batch 1), picked per
 * problem by timing both; for quantized weights the same on fp16 copies of
 * the dequantized weights (what a user without a quantized kernel runs).
 *
 * Cold L2: weights (+ scales and zeros) rotate through nrot copies; the
 * baseline's fp16 weights rotate through their own copies.  The bytes a
 * kernel must move count weights, scales, zeros, x and y once.
 */
#include "op.h"
#include "quant.h"
#include "gemv_ops.h"
#include "rng.h"

#include <math.h>
#include <string.h>

enum gemv_fmt { FMT_F16, FMT_INT8, FMT_INT4, FMT_Q4_0 };

typedef struct gemv_state {
    enum gemv_fmt fmt;
    kl_problem p;
    const kl_env *env;
    int nrot, nrot_ref;
    size_t copy_stride;              /* bytes between rotating copies */
    size_t w_off, s_off, z_off;      /* offsets inside one copy */
    unsigned char *rot;              /* nrot copies of {w, scales, zeros} */
    kl_f16 *wref16;                  /* quantized formats: nrot_ref fp16 copies of dequant(W) */
    float *w32, *x32, *yref;         /* the fp32 reference */
    kl_f16 *x, *y, *ybase;
    int use_hsh;                     /* baseline: 1 HSHgemvStridedBatched, 0 GemmEx */
    double pick_us[2];               /* the pick's medians: GemmEx, HSHgemv */
    char note[160];                  /* the log's line naming the baseline */
    double wmax;                     /* max |dequant(W)|: the tolerance's term size */
    float *h_out, *h_ref;            /* host copies for the compare */
    kl_f16 *h_y;
} gemv_state;

/* ---- sizes of each format ------------------------------------------------- */

static size_t w_bytes(enum gemv_fmt f, const kl_problem *p) {
    const size_t n = (size_t)p->n, k = (size_t)p->k;
    switch (f) {
    case FMT_F16: return 2 * n * k;
    case FMT_INT8: return n * k;
    case FMT_INT4: return n * kl_int4_row_bytes(p->k);
    case FMT_Q4_0: return n * (k / KL_Q4_0_BLOCK) * sizeof(kl_block_q4_0);
    }
    return 0;
}
/* scales (and as many zeros), in fp16 elements */
static size_t sz_count(enum gemv_fmt f, const kl_problem *p) {
    switch (f) {
    case FMT_INT8: return (size_t)p->n;
    case FMT_INT4: return (size_t)p->n * kl_int4_groups(p->k);
    default: return 0;
    }
}

static void layout(enum gemv_fmt f, const kl_problem *p, size_t *w_off, size_t *s_off, size_t *z_off, size_t *stride) {
    const size_t sz = 2 * sz_count(f, p);
    *w_off = 0;
    *s_off = kl_align256(w_bytes(f, p));
    *z_off = *s_off + kl_align256(sz);
    *stride = kl_align256(*z_off + kl_align256(sz));
}

int kl_gemv_shape(kl_problem *p, int m_given, int k_multiple, char *msg, size_t len) {
    if (m_given && p->m != 1) {
        snprintf(msg, len, "-m %d: GEMV is y = W x, one vector (m = 1); use -n and -k (v16 runs m > 1)", p->m);
        return 1;
    }
    p->m = 1;
    if (p->n < 1 || p->k < 1) {
        snprintf(msg, len, "n=%d k=%d: both must be at least 1", p->n, p->k);
        return 1;
    }
    if (k_multiple > 1 && p->k % k_multiple) {
        snprintf(msg, len, "K=%d is not a multiple of %d (the q4_0 block); pick K = %d", p->k, k_multiple,
                 (p->k + k_multiple - 1) / k_multiple * k_multiple);
        return 1;
    }
    return 0;
}
static int shape_common(enum gemv_fmt f, kl_problem *p, int m_given, char *msg, size_t len) {
    return kl_gemv_shape(p, m_given, f == FMT_Q4_0 ? KL_Q4_0_BLOCK : 1, msg, len);
}

static double gemv_flops(const kl_problem *p) { return 2.0 * p->n * (double)p->k; }

static double bytes_of(enum gemv_fmt f, const kl_problem *p) {
    return (double)w_bytes(f, p) + 4.0 * sz_count(f, p) + 2.0 * p->k + 2.0 * p->n;
}

static size_t rotating_of(enum gemv_fmt f, const kl_problem *p) {
    size_t a, b, c, stride;
    layout(f, p, &a, &b, &c, &stride);
    return stride;
}

static size_t device_of(enum gemv_fmt f, const kl_problem *p, int nrot) {
    const size_t nk = (size_t)p->n * p->k;
    size_t total = (size_t)nrot * rotating_of(f, p);
    total += 4 * nk + 8 * ((size_t)p->n + p->k) + 4 * (size_t)p->n;   /* w32, x32, x, yref, y, ybase */
    /* the baseline's fp16 copies: never more than the engine's nrot (they are larger) */
    if (f != FMT_F16) total += (size_t)nrot * kl_align256(2 * nk);
    return total;
}

/* ---- host generation: splitmix64 (rng.h), one stream per row ------------------ */

void kl_host_uniform_rows(float *w, int n, int k, uint64_t seed) {
    #pragma omp parallel for schedule(static)
    for (int r = 0; r < n; ++r) {
        const uint64_t s = kl_splitmix64(seed ^ kl_splitmix64((uint64_t)r, 1), 1);   /* the row's seed */
        float *row = w + (size_t)r * k;
        for (int c = 0; c < k; ++c) {
            const uint64_t z = kl_splitmix64(s, (uint64_t)c + 1);
            row[c] = (float)((double)(z >> 40) * 0x1p-23 - 1.0);   /* [-1, 1), 24 bits */
        }
    }
}

/* ---- the baseline ------------------------------------------------------------ */

/* Row-major W[n][k] is the column-major k x n matrix W^T: y = (W^T)^T x. */
static void cublas_f16(const gemv_state *s, int use_hsh, const kl_f16 *w, kl_f16 *y) {
    const float one = 1.0f, zero = 0.0f;
    const int n = s->p.n, k = s->p.k;
    if (use_hsh)
        CUBLAS_CHECK(kl_cublas_hshgemv(s->env->cublas, n, k, w, s->x, y));
    else
        CUBLAS_CHECK(cublasGemmEx(s->env->cublas, CUBLAS_OP_T, CUBLAS_OP_N, n, 1, k, &one, w, CUDA_R_16F, k,
                                  s->x, CUDA_R_16F, k, &zero, y, CUDA_R_16F, n, CUBLAS_COMPUTE_32F,
                                  CUBLAS_GEMM_DEFAULT));
}

static const kl_f16 *base_weights(const gemv_state *s, int rot) {
    if (s->fmt == FMT_F16) return (const kl_f16 *)(s->rot + (size_t)(rot % s->nrot) * s->copy_stride + s->w_off);
    return s->wref16 + (size_t)(rot % s->nrot_ref) * (kl_align256(2 * (size_t)s->p.n * s->p.k) / 2);
}

/* The two candidates are timed the way the engine times the reported run
 * (kl_time_us: queued behind a held stream), so that the host's
 * launch cost, larger for cuBLAS than for a step, cannot decide the choice at
 * the small sizes.  Each reads its own rotating copies: first + i. */
typedef struct baseline_launch { gemv_state *s; int hsh, first; } baseline_launch;
static void launch_baseline(void *ctx, int i) {
    const baseline_launch *l = ctx;
    cublas_f16(l->s, l->hsh, base_weights(l->s, l->first + i), l->s->ybase);
}

static void pick_baseline(gemv_state *s) {
    const kl_timing t = {2, 9, 0.0};   /* two warm-ups, nine runs */
    for (int hsh = 0; hsh < 2; ++hsh) {
        baseline_launch l = {s, hsh, 16 * hsh};
        s->pick_us[hsh] = kl_time_us(launch_baseline, &l, &t, s->env->stream);
    }
    s->use_hsh = s->pick_us[1] < s->pick_us[0];
}

/* The log's line under a problem's rows: which call the cuBLAS column timed. */
static const char *gemv_baseline_note(void *st) {
    gemv_state *s = st;
    snprintf(s->note, sizeof s->note, "cuBLAS column: %s (the pick's medians: cublasGemmEx n=1 %.2f us, "
             "cublasHSHgemvStridedBatched %.2f us)", s->use_hsh ? "cublasHSHgemvStridedBatched" : "cublasGemmEx n=1",
             s->pick_us[0], s->pick_us[1]);
    return s->note;
}

/* ---- setup ------------------------------------------------------------------- */

static void *setup_of(enum gemv_fmt f, const kl_problem *p, int nrot, const kl_env *env) {
    gemv_state *s = kl_hmalloc(sizeof *s);
    memset(s, 0, sizeof *s);
    s->fmt = f;
    s->p = *p;
    s->env = env;
    s->nrot = nrot;
    layout(f, p, &s->w_off, &s->s_off, &s->z_off, &s->copy_stride);
    const int n = p->n, k = p->k;
    const size_t nk = (size_t)n * k;
    cudaStream_t str = env->stream;
    const uint64_t seed = env->seed * 1000003u + (uint64_t)n * 31 + (uint64_t)k * 17 + (uint64_t)f;

    s->rot = kl_dmalloc((size_t)nrot * s->copy_stride);
    unsigned char *c0 = s->rot;
    s->x = kl_dmalloc(2 * (size_t)k);
    s->y = kl_dmalloc(2 * (size_t)n);
    s->ybase = kl_dmalloc(2 * (size_t)n);
    s->x32 = kl_dmalloc(4 * (size_t)k);
    s->yref = kl_dmalloc(4 * (size_t)n);
    s->w32 = kl_dmalloc(4 * nk);
    s->h_out = kl_hmalloc(4 * (size_t)n);
    s->h_ref = kl_hmalloc(4 * (size_t)n);
    s->h_y = kl_hmalloc(2 * (size_t)n);
    kl_fill_uniform_f16(s->x, k, -1.0f, 1.0f, seed + 7, str);   /* checks draw their own */

    if (f == FMT_F16) {
        kl_fill_uniform_f16((kl_f16 *)(c0 + s->w_off), nk, -1.0f, 1.0f, seed, str);
        kl_f16_to_f32((const kl_f16 *)(c0 + s->w_off), s->w32, nk, str);
        s->wmax = 1.0;
    } else {
        /* Host: generate, quantize, dequantize in place (the reference weights). */
        float *hw = kl_hmalloc(4 * nk);
        kl_host_uniform_rows(hw, n, k, seed);
        const size_t wb = w_bytes(f, p), nsz = sz_count(f, p);
        void *hq = kl_hmalloc(wb);
        uint16_t *hs = kl_hmalloc(2 * nsz + 2), *hz = kl_hmalloc(2 * nsz + 2);
        switch (f) {
        case FMT_INT8:
            kl_quant_int8(hw, k, 0, n, hq, hs, hz);
            kl_dequant_int8(hq, hs, hz, k, 0, n, hw);
            break;
        case FMT_INT4:
            kl_quant_int4(hw, k, 0, n, hq, hs, hz);
            kl_dequant_int4(hq, hs, hz, k, 0, n, hw);
            break;
        default:
            kl_quant_q4_0(hw, k, 0, n, hq);
            kl_dequant_q4_0(hq, k, 0, n, hw);
            break;
        }
        s->wmax = kl_absmax(hw, nk);
        CUDA_CHECK(cudaMemcpy(c0 + s->w_off, hq, wb, cudaMemcpyHostToDevice));
        if (nsz) {
            CUDA_CHECK(cudaMemcpy(c0 + s->s_off, hs, 2 * nsz, cudaMemcpyHostToDevice));
            CUDA_CHECK(cudaMemcpy(c0 + s->z_off, hz, 2 * nsz, cudaMemcpyHostToDevice));
        }
        free(hq); free(hs); free(hz);
        CUDA_CHECK(cudaMemcpy(s->w32, hw, 4 * nk, cudaMemcpyHostToDevice));
        free(hw);
        /* the baseline's weights: dequant(W) rounded to fp16, rotated too */
        s->nrot_ref = kl_baseline_rotations(env, nrot, 2 * nk);
        const size_t cstride = kl_align256(2 * nk);
        s->wref16 = kl_dmalloc((size_t)s->nrot_ref * cstride);
        kl_f32_to_f16(s->w32, s->wref16, nk, str);
        kl_replicate(s->wref16, 2 * nk, cstride, s->nrot_ref, str);
    }
    /* The other rotating copies are byte copies of the first. */
    kl_replicate(c0, s->copy_stride, s->copy_stride, nrot, str);
    CUDA_CHECK(cudaStreamSynchronize(str));
    if (!env->check_only) pick_baseline(s);   /* --check-only times nothing */
    return s;
}

static kl_gemv_args args_of(const gemv_state *s, int rot) {
    const unsigned char *c = s->rot + (size_t)(rot % s->nrot) * s->copy_stride;
    kl_gemv_args a;
    a.n = s->p.n;
    a.k = s->p.k;
    a.w = c + s->w_off;
    a.scales = sz_count(s->fmt, &s->p) ? (const kl_f16 *)(c + s->s_off) : NULL;
    a.zeros = sz_count(s->fmt, &s->p) ? (const kl_f16 *)(c + s->z_off) : NULL;
    a.x = s->x;
    a.y = s->y;
    return a;
}


/* ---- check, run, teardown ------------------------------------------------------ */

static void gemv_check(void *st, const kl_kernel *kern, int pass, kl_check_data *d) {
    gemv_state *s = st;
    const int n = s->p.n, k = s->p.k;
    cudaStream_t str = s->env->stream;
    /* A fresh x for every checked launch; y poisoned so every row must be written. */
    const uint64_t seed = s->env->seed * 7919u + (uint64_t)pass * 104729u + (uint64_t)n + (uint64_t)k * 3;
    kl_fill_uniform_f16(s->x, k, -1.0f, 1.0f, seed, str);
    kl_f16_to_f32(s->x, s->x32, k, str);
    kl_poison(s->y, 2 * (size_t)n, str);
    kl_gemv_args a = args_of(s, pass);
    kern->gemv(&a, kern->ctx, str);
    KL_CHECK_LAUNCH();
    const float one = 1.0f, zero = 0.0f;
    CUBLAS_CHECK(cublasSgemv(s->env->cublas, CUBLAS_OP_T, k, n, &one, s->w32, k, s->x32, 1, &zero, s->yref, 1));
    CUDA_CHECK(cudaStreamSynchronize(str));
    kl_copy_to_host(s->h_y, s->y, 2 * (size_t)n);
    kl_copy_to_host(s->h_ref, s->yref, 4 * (size_t)n);
    for (int i = 0; i < n; ++i) s->h_out[i] = kl_half_to_float(s->h_y[i]);
    d->out = s->h_out;
    d->ref = s->h_ref;
    d->count = (size_t)n;
    d->cols = n;
    /* |w x| <= wmax * 1; fp16 output; exact dequantization (w_eps = 0) */
    d->tol = kl_tol_gemv(k, s->wmax);
    d->what = pass == 0 ? "fresh random x, y poisoned with NaN" : "another random x, another weight copy, y poisoned";
}

static void gemv_run(void *st, const kl_kernel *kern, int rot, cudaStream_t str) {
    gemv_state *s = st;
    kl_gemv_args a = args_of(s, rot);
    kern->gemv(&a, kern->ctx, str);
}

static void gemv_run_ref(void *st, int rot, cudaStream_t str) {
    (void)str;   /* the handle is bound to the harness's stream */
    gemv_state *s = st;
    cublas_f16(s, s->use_hsh, base_weights(s, rot), s->ybase);
}

static void gemv_teardown(void *st) {
    gemv_state *s = st;
    CUDA_CHECK(cudaFree(s->rot));
    if (s->wref16) CUDA_CHECK(cudaFree(s->wref16));
    CUDA_CHECK(cudaFree(s->w32));
    CUDA_CHECK(cudaFree(s->x));
    CUDA_CHECK(cudaFree(s->x32));
    CUDA_CHECK(cudaFree(s->y));
    CUDA_CHECK(cudaFree(s->ybase));
    CUDA_CHECK(cudaFree(s->yref));
    free(s->h_out);
    free(s->h_ref);
    free(s->h_y);
    free(s);
}

/* ---- the four ops --------------------------------------------------------------- */

const kl_problem kl_gemv_model_shapes[KL_GEMV_NMODEL_SHAPES] = {
    {1, 4096, 4096}, {1, 11008, 4096}, {1, 4096, 11008},
    {1, 14336, 4096}, {1, 4096, 14336}, {1, 128256, 4096},
};

#define GEMV_OP(ID, FMT, NAME, DTYPE, BASE, CHECKS)                                                  \
    static int ID##_shape(kl_problem *p, int g, char *m, size_t l) { return shape_common(FMT, p, g, m, l); } \
    static double ID##_bytes(const kl_problem *p) { return bytes_of(FMT, p); }                         \
    static size_t ID##_rot(const kl_problem *p) { return rotating_of(FMT, p); }                        \
    static size_t ID##_dev(const kl_problem *p, int nrot) { return device_of(FMT, p, nrot); }          \
    static void *ID##_setup(const kl_problem *p, int nrot, const kl_env *e) { return setup_of(FMT, p, nrot, e); } \
    const kl_op kl_op_##ID = {                                                                      \
        .name = NAME, .dtype = DTYPE, .baseline = BASE, .part = "2", .memory_bound = 1,             \
        .default_sizes = KL_GEMV_DEFAULT_SIZES,                                                     \
        .extra_shapes = kl_gemv_model_shapes, .nextra_shapes = KL_GEMV_NMODEL_SHAPES,               \
        .checks = CHECKS, .shape = ID##_shape, .flops = gemv_flops,                                 \
        .bytes = ID##_bytes, .rotating_bytes = ID##_rot, .device_bytes = ID##_dev,                  \
        .setup = ID##_setup, .check = gemv_check, .run = gemv_run,                                  \
        .run_ref = gemv_run_ref, .teardown = gemv_teardown,                                         \
        .baseline_note = gemv_baseline_note,                                                        \
    };

#define BASE_F16 "cuBLAS fp16 GEMV (faster of cublasGemmEx n=1 COMPUTE_32F and cublasHSHgemvStridedBatched), " \
                 "cold L2; check: cublasSgemv fp32"
#define BASE_Q "cuBLAS fp16 GEMV on the dequantized weights (faster of GemmEx n=1 and HSHgemv), cold L2; " \
               "check: cublasSgemv fp32 on the dequantized weights, exact dequantization assumed"

GEMV_OP(gemv_f16, FMT_F16, "gemv", "fp16", BASE_F16, 2)
GEMV_OP(qgemv_int8, FMT_INT8, "qgemv_int8", "int8", BASE_Q, 2)
GEMV_OP(qgemv_int4, FMT_INT4, "qgemv_int4", "int4", BASE_Q, 2)
GEMV_OP(qgemv_q4_0, FMT_Q4_0, "qgemv_q4_0", "q4_0", BASE_Q, 2)
