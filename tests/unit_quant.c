/*
 * unit_quant.c - CPU tests of common/ops/quant.c: fp16 conversion, and for each
 * weight format the round trip (error within half a step), edge rows, odd K
 * and the exact bit layout; the e4m3 codec, the FP8 block scales' layouts
 * and test magnitudes (fp8_ops.h) and the host's block quantizer.  No GPU
 * needed.  One line per test; exit status nonzero if any failed.
 */
#include "quant.h"
#include "fp8_ops.h"   /* the block scales' layouts */
#include "rng.h"
#include "unit.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* A test whose reason for failing is built by the caller (fmt, ...), printed after WHAT. */
static void report(int ok, const char *what, const char *fmt, ...) {
    if (unit_start(ok)) { printf("%s\n", what); return; }
    printf("%s: ", what);
    va_list ap;
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
}

static uint64_t draws;
static float urand(float lo, float hi) {   /* the harness's splitmix64 (rng.h), uniform [lo, hi) */
    const uint64_t v = kl_splitmix64(0x243F6A8885A308D3ull, ++draws);
    return lo + (hi - lo) * (float)((v >> 40) * 0x1p-24);
}

/* ---- fp16 --------------------------------------------------------------- */

static void test_half(void) {
    struct { float f; uint16_t h; const char *what; } cases[] = {
        {0.0f, 0x0000, "+0"}, {-0.0f, 0x8000, "-0"}, {1.0f, 0x3C00, "1"},
        {-2.0f, 0xC000, "-2"}, {65504.0f, 0x7BFF, "max normal"},
        {65520.0f, 0x7C00, "65520 rounds to Inf"}, {1e6f, 0x7C00, "overflow"},
        {0x1p-14f, 0x0400, "smallest normal"}, {0x1p-24f, 0x0001, "smallest subnormal"},
        {0x1p-25f, 0x0000, "half the smallest subnormal: tie to even 0"},
        {0x1.8p-24f, 0x0002, "1.5 x smallest subnormal: tie to even 2"},
        {0x1.000002p-25f, 0x0001, "just over half the smallest subnormal"},
        {0x1.ffcp-15f, 0x0400, "tie above the largest subnormal rounds up into the normals"},
        {1.0f + 0x1p-11f, 0x3C00, "1 + half ulp: tie to even 1"},
        {1.0f + 0x3p-11f, 0x3C02, "1 + 3/2 ulp: tie to even up"},
        {1.0f + 0x1p-11f + 0x1p-20f, 0x3C01, "just over a tie rounds up"},
        {INFINITY, 0x7C00, "+Inf"}, {-INFINITY, 0xFC00, "-Inf"},
    };
    int bad = 0;
    char msg[160] = "";
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        const uint16_t h = kl_float_to_half(cases[i].f);
        if (h != cases[i].h && bad++ < 1)
            snprintf(msg, sizeof msg, "%s: %a -> 0x%04x, want 0x%04x", cases[i].what,
                     cases[i].f, h, cases[i].h);
    }
    report(!bad, "fp16: rounding ties to even, subnormals, overflow, Inf", "%s (%d cases)", msg, bad);

    const uint16_t hn = kl_float_to_half(NAN);
    report((hn & 0x7C00) == 0x7C00 && (hn & 0x3FF) && isnan(kl_half_to_float(hn)),
           "fp16: NaN stays NaN both ways", "NaN -> 0x%04x", hn);

    /* Every fp16 value survives half -> float -> half; the float is exact. */
    int rt = 0;
    for (uint32_t h = 0; h < 0x10000; ++h) {
        const float f = kl_half_to_float((uint16_t)h);
        if (isnan(f)) continue;
        if (kl_float_to_half(f) != h && !rt++) snprintf(msg, sizeof msg, "0x%04x -> %a", h, f);
    }
    report(!rt, "fp16: all 63488 non-NaN values round-trip", "%s", msg);
    report(kl_half_to_float(0x0001) == 0x1p-24f && kl_half_to_float(0x03FF) == 0x3FFp-24f &&
           kl_half_to_float(0xFBFF) == -65504.0f, "fp16: subnormal and max decode", "");

    /* Round to nearest: against a double computation on random floats. */
    int rn = 0;
    for (int i = 0; i < 200000; ++i) {
        const float f = urand(-70000.0f, 70000.0f) * (i % 2 ? 1.0f : 0x1p-20f);
        const uint16_t h = kl_float_to_half(f);
        const double e = fabs((double)kl_half_to_float(h) - f);
        const uint16_t nb = (uint16_t)((h & 0x7FFF) ? h - 1 : h);
        const double en = fabs((double)kl_half_to_float(nb) - f);
        const double e2 = fabs((double)kl_half_to_float((uint16_t)(h + 1)) - f);
        if (isfinite(kl_half_to_float(h)) && (e > en || e > e2) && !rn++)
            snprintf(msg, sizeof msg, "%a -> 0x%04x is not the nearest", f, h);
    }
    report(!rn, "fp16: nearest value for 200000 random floats", "%s", msg);
}

/* ---- formats -------------------------------------------------------------- */

/* A test matrix: random rows plus the edge rows the formats must survive. */
enum { EDGE_ROWS = 6 };
static void fill_rows(float *w, int n, int k) {
    for (int r = 0; r < n; ++r)
        for (int c = 0; c < k; ++c) {
            float v = urand(-1.0f, 1.0f);
            switch (r) {
            case 0: v = 0.75f; break;                       /* constant row */
            case 1: v = 0.0f; break;                        /* zero row */
            case 2: v = c % 2 ? 3.0e4f : -3.0e4f; break;    /* +- large */
            case 3: if (c == k / 2) v = 200.0f; break;      /* one outlier */
            case 4: v = -0.5f; break;                       /* constant negative */
            case 5: v *= 1e-6f; break;                      /* tiny: fp16-subnormal scales */
            }
            w[(size_t)r * k + c] = v;
        }
}

/* Checks |w - wq| <= step/2 (+ a hair for fp32 rounding of w/s). */
static int within_half_step(float w, float wq, float step, double *worst) {
    const double e = fabs((double)w - wq), lim = 0.5 * step * (1.0 + 1e-5) + 1e-30;
    if (e / (step > 0 ? step : 1) > *worst) *worst = e / (step > 0 ? step : 1);
    return e <= lim;
}

/* ---- FP8 e4m3 --------------------------------------------------------- */

static void test_e4m3(void) {
    struct { float f; uint8_t q; const char *what; } cases[] = {
        {0.0f, 0x00, "+0"}, {-0.0f, 0x80, "-0"}, {1.0f, 0x38, "1 (exponent 7 = the bias)"},
        {448.0f, 0x7E, "448, the largest finite"}, {-448.0f, 0xFE, "-448"},
        {0x1p-6f, 0x08, "2^-6, the smallest normal"}, {0x1p-9f, 0x01, "2^-9, the smallest subnormal"},
        {0.875f * 0x1p-6f, 0x07, "the largest subnormal"}, {1.75f, 0x3E, "1.75"},
        {1.0625f, 0x38, "1.0625, halfway 1 / 1.125: to the even code (1)"},
        {1.1875f, 0x3A, "1.1875, halfway 1.125 / 1.25: to the even code (1.25)"},
        {0x1p-10f, 0x00, "2^-10, halfway 0 / 2^-9: to 0"}, {3 * 0x1p-10f, 0x02, "3 2^-10, halfway: to 2^-8"},
        {460.0f, 0x7E, "460 saturates to 448"}, {-1e30f, 0xFE, "-1e30 saturates to -448"},
        {INFINITY, 0x7E, "+Inf saturates to 448"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        const uint8_t q = kl_float_to_e4m3(cases[i].f);
        char what[96];
        snprintf(what, sizeof what, "e4m3: encode %s -> 0x%02X", cases[i].what, cases[i].q);
        report(q == cases[i].q, what, "got 0x%02X", q);
    }
    report(isnan(kl_e4m3_to_float(0x7F)) && isnan(kl_e4m3_to_float(0xFF)) && kl_float_to_e4m3(NAN) == 0x7F,
           "e4m3: 0x7F and 0xFF decode to NaN, NaN encodes to 0x7F", "wrong");
    /* every finite code decodes to a value that encodes back to it, and the values rise with the code */
    int bad = -1;
    for (int c = 0; c < 256 && bad < 0; ++c) {
        if ((c & 0x7F) == 0x7F) continue;
        const float f = kl_e4m3_to_float((uint8_t)c);
        if (kl_float_to_e4m3(f) != c || ((c & 0x7F) && (c & 0x7F) < 0x7E && !(fabsf(kl_e4m3_to_float((uint8_t)(c + 1))) > fabsf(f))))
            bad = c;
    }
    report(bad < 0, "e4m3: all 254 finite codes round-trip, magnitudes rising with the code", "code 0x%02X", bad);
    /* between two neighbours, each value goes to the nearer */
    float worst = 0.0f;
    for (int i = 0; i < 100000; ++i) {
        const float x = urand(-500.0f, 500.0f), y = kl_e4m3_to_float(kl_float_to_e4m3(x));
        const float ax = fminf(fabsf(x), 448.0f);
        /* the step at ax: 2^(e - 3) for ax >= 2^-6, else 2^-9 */
        const float step = ax >= 0x1p-6f ? ldexpf(1.0f, ilogbf(ax) - 3) : 0x1p-9f;
        worst = fmaxf(worst, fabsf(fminf(fmaxf(x, -448.0f), 448.0f) - y) / step);
    }
    report(worst <= 0.5f, "e4m3: 100000 random values: within half a step of where they land", "%.3f steps", worst);
}

/* ---- FP8 block scales: the layouts (fp8_ops.h, as kl.h fixes them) and the host's block quantizer ---- */

static void test_fp8_layouts(void) {
    /* sb's rows: k / 128 scales padded to a multiple of 4 */
    report(KL_FP8_SB_LD(128) == 4 && KL_FP8_SB_LD(512) == 4 && KL_FP8_SB_LD(640) == 8 && KL_FP8_SB_LD(1536) == 12 &&
           KL_FP8_SB_LD(16384) == 128, "fp8 block: sb's row of k / 128 scales padded to 4 (k 128, 512, 640, 1536, 16384: "
           "4, 4, 8, 12, 128)", "got %d %d %d %d %d", KL_FP8_SB_LD(128), KL_FP8_SB_LD(512), KL_FP8_SB_LD(640),
           KL_FP8_SB_LD(1536), KL_FP8_SB_LD(16384));
    /* A, m = 5, k = 640: sa[kb * 8 + i] (columns of 5 padded to 8), 40 floats, each (i, kb) its own */
    report(kl_fp8_sa_index(5, 0, 0) == 0 && kl_fp8_sa_index(5, 4, 0) == 4 && kl_fp8_sa_index(5, 0, 1) == 8 &&
           kl_fp8_sa_index(5, 3, 4) == 35 && kl_fp8_sa_count(5, 640) == 40 && kl_fp8_sa_count(256, 640) == 1280 &&
           kl_fp8_sa_index(256, 0, 1) == 256,
           "fp8 block: sa(i, kb) = sa[kb * 8 + i] at m = 5 (columns padded to 8; m = 256 unpadded): (4, 0) -> 4, "
           "(0, 1) -> 8, (3, 4) -> 35 of 40",
           "(0, 1) -> %zu, (3, 4) -> %zu, count %zu", kl_fp8_sa_index(5, 0, 1), kl_fp8_sa_index(5, 3, 4),
           kl_fp8_sa_count(5, 640));
    /* B, n = 300 (3 row blocks, the last of 44 rows), k = 640: sb[jb * 8 + kb], 24 floats */
    report(kl_fp8_sb_index(640, 0, 4) == 4 && kl_fp8_sb_index(640, 1, 0) == 8 && kl_fp8_sb_index(640, 2, 4) == 20 &&
           kl_fp8_sb_count(300, 640) == 24 && kl_fp8_sb_count(256, 640) == 16 && kl_fp8_sb_index(512, 1, 0) == 4,
           "fp8 block: sb(jb, kb) = sb[jb * 8 + kb] at k = 640 (rows padded from 5 to 8), 3 row blocks for n = 300",
           "(1, 0) -> %zu, (2, 4) -> %zu, count %zu", kl_fp8_sb_index(640, 1, 0), kl_fp8_sb_index(640, 2, 4),
           kl_fp8_sb_count(300, 640));
    /* every block its own float inside the array, at odd shapes */
    int bad = 0;
    for (int m = 1; m <= 9 && !bad; ++m)
        for (int k = 128; k <= 1280 && !bad; k += 128) {
            const int kbs = k / 128, nbs = (m + 127) / 128;
            unsigned char seen[4096] = {0};
            for (int i = 0; i < m; ++i)
                for (int kb = 0; kb < kbs; ++kb) {
                    const size_t x = kl_fp8_sa_index(m, i, kb);
                    if (x >= kl_fp8_sa_count(m, k) || seen[x]++ || x / KL_FP8_SA_LD(m) != (size_t)kb) bad = 1;
                }
            memset(seen, 0, sizeof seen);
            for (int jb = 0; jb < nbs * 3; ++jb)   /* n = 128 * 3 nbs */
                for (int kb = 0; kb < kbs; ++kb) {
                    const size_t x = kl_fp8_sb_index(k, jb, kb);
                    if (x >= kl_fp8_sb_count(128 * 3 * nbs, k) || seen[x]++ || x % KL_FP8_SB_LD(k) != (size_t)kb) bad = 1;
                }
        }
    report(!bad, "fp8 block: every scale block has a float of its own inside sa and sb (m 1..9, k 128..1280)", "overlap");
}

/* gemm_fp8_block's magnitudes: the blocks a kernel's indexing may mix up differ */
static void test_fp8_block_exp(void) {
    int range = 1, apart = 1, both = 1, top = 0;
    for (int rb = 0; rb < 300; ++rb)
        for (int kb = 0; kb < 300; ++kb) {
            const int e = kl_fp8_block_exp(rb, kb);
            if (e < 0 || e > KL_FP8_BLOCK_EXP_MAX) range = 0;
            top = e > top ? e : top;
            for (int d = 1; d <= 1024; d *= 2)   /* neighbours, and blocks a power of two apart */
                if (kl_fp8_block_exp(rb + d, kb) == e || kl_fp8_block_exp(rb, kb + d) == e) apart = 0;
            /* A's and B's scales both taken from the next k block: their product changes */
            if (kl_fp8_block_exp(rb, kb + 1) + kl_fp8_block_exp(rb / 2, kb + 1) == e + kl_fp8_block_exp(rb / 2, kb))
                both = 0;
        }
    report(range && top == KL_FP8_BLOCK_EXP_MAX, "fp8 block magnitudes: exponents 0..KL_FP8_BLOCK_EXP_MAX", "max %d", top);
    report(apart, "fp8 block magnitudes: blocks 1, 2, 4 .. 1024 apart (rows or k) differ", "two equal");
    report(both, "fp8 block magnitudes: a k block shifted in both A and B changes the product of their magnitudes",
           "unchanged somewhere");
}

static void test_fp8_quant_block(void) {
    /* 2 x 4 of a row stride 6: amax 7 (negative), s = 7 / 448 = 2^-6 */
    const float x[12] = {1.0f, -7.0f, 3.5f, 0.0f, 9e9f, 9e9f, 0.5f, 2.0f, -3.5f, 6.0f, 9e9f, 9e9f};
    uint8_t q[12];
    memset(q, 0xAA, sizeof q);
    const float s = kl_fp8_quant_block(x, 6, 2, 4, q);
    /* x / s: 64 = 2^6 (exponent field 13: 0x68), -448 (0xFE), 224 = 1.75 2^7 (0x76), 0, 32 (0x60),
     * 128 (0x70), -224 (0xF6), 384 = 1.5 2^8 (0x7C) */
    const uint8_t want[12] = {0x68, 0xFE, 0x76, 0x00, 0xAA, 0xAA, 0x60, 0x70, 0xF6, 0x7C, 0xAA, 0xAA};
    report(s == 0x1p-6f && !memcmp(q, want, sizeof want),
           "fp8 block quantizer: amax 7 from a negative element, s = 2^-6, codes by hand, outside the block untouched",
           "s %g, codes %02X %02X %02X %02X / %02X %02X %02X %02X", s, q[0], q[1], q[2], q[3], q[6], q[7], q[8], q[9]);
    const float zeros[6] = {0};
    uint8_t qz[6];
    const float sz = kl_fp8_quant_block(zeros, 3, 2, 3, qz);
    report(sz == 1.0f && !qz[0] && !qz[5], "fp8 block quantizer: an all-zero block gets scale 1 and codes 0", "s %g", sz);
    /* random blocks (a B block of 128 x 128, a partial one of 3 rows, an A slice of 1 x 128): the scale is amax / 448
     * in fp32, as the GPU divides; every code the encoder's of x / s; the amax element at +-448 */
    static float blk[128 * 128];
    static uint8_t qb[128 * 128];
    const int rows[3] = {128, 3, 1};
    for (int t = 0; t < 3; ++t) {
        float amax = 0.0f;
        for (int i = 0; i < rows[t] * 128; ++i) {
            blk[i] = urand(-3.0f, 3.0f) * (t == 1 ? 0x1p-10f : 1.0f);
            amax = fmaxf(amax, fabsf(blk[i]));
        }
        const float sc = kl_fp8_quant_block(blk, 128, rows[t], 128, qb);
        int bad = 0, top = 0;
        for (int i = 0; i < rows[t] * 128; ++i) {
            if (qb[i] != kl_float_to_e4m3(blk[i] / sc)) bad++;
            if (fabsf(blk[i]) == amax && (qb[i] & 0x7F) == 0x7E) top = 1;
        }
        char what[128];
        snprintf(what, sizeof what, "fp8 block quantizer: %d x 128 random: s = amax / 448, codes e4m3(x / s), "
                 "amax at 448", rows[t]);
        report(sc == amax / 448.0f && !bad && top, what, "s %g against %g, %d codes off, amax at 448: %d", sc,
               amax / 448.0f, bad, top);
    }
}

static void test_int8(int n, int k) {
    float *w = malloc((size_t)n * k * 4), *d = malloc((size_t)n * k * 4);
    uint8_t *q = malloc((size_t)n * k);
    uint16_t *s = malloc(n * 2), *z = malloc(n * 2);
    fill_rows(w, n, k);
    kl_quant_int8(w, k, 0, n, q, s, z);
    kl_dequant_int8(q, s, z, k, 0, n, d);
    int bad = 0; double worst = 0; char msg[200] = "", what[96];
    for (int r = 0; r < n; ++r)
        for (int c = 0; c < k; ++c) {
            const size_t i = (size_t)r * k + c;
            if (!within_half_step(w[i], d[i], kl_half_to_float(s[r]), &worst) && !bad++)
                snprintf(msg, sizeof msg, "row %d col %d: %g -> %g (scale %g)", r, c, w[i], d[i],
                         kl_half_to_float(s[r]));
        }
    snprintf(what, sizeof what, "int8 %dx%d: round trip within half a step (worst %.3f)", n, k, worst);
    report(!bad, what, "%s", msg);
    /* exact edge rows: zeros stay zeros, a constant row stays constant */
    int exact = 1;
    for (int c = 0; c < k; ++c) exact &= d[(size_t)1 * k + c] == 0.0f && d[c] == d[0];
    snprintf(what, sizeof what, "int8 %dx%d: zero row exact, constant row constant", n, k);
    report(exact, what, "row0[0]=%g row1[0]=%g", d[0], d[k]);
    /* the layout, every byte, is test_int8_reference's */
    free(w); free(d); free(q); free(s); free(z);
}

static void test_int4(int n, int k) {
    const size_t rb = kl_int4_row_bytes(k);
    const int ng = kl_int4_groups(k);
    float *w = malloc((size_t)n * k * 4), *d = malloc((size_t)n * k * 4);
    uint8_t *q = malloc((size_t)n * rb);
    uint16_t *s = malloc((size_t)n * ng * 2), *z = malloc((size_t)n * ng * 2);
    fill_rows(w, n, k);
    kl_quant_int4(w, k, 0, n, q, s, z);
    kl_dequant_int4(q, s, z, k, 0, n, d);
    int bad = 0; double worst = 0; char msg[200] = "", what[96];
    for (int r = 0; r < n; ++r)
        for (int c = 0; c < k; ++c) {
            const size_t i = (size_t)r * k + c;
            const float st = kl_half_to_float(s[(size_t)r * ng + c / KL_INT4_GROUP]);
            if (!within_half_step(w[i], d[i], st, &worst) && !bad++)
                snprintf(msg, sizeof msg, "row %d col %d: %g -> %g (scale %g)", r, c, w[i], d[i], st);
        }
    snprintf(what, sizeof what, "int4 %dx%d: round trip within half a step (worst %.3f)", n, k, worst);
    report(!bad, what, "%s", msg);

    /* the nibble order and odd K's padding, every nibble from w itself, are test_int4_reference's */

    /* w4a16's order: nibble i of word w holds column 8w + order[i]; the tail
     * past the last whole word is untouched; and the way back is exact */
    static const int order[8] = KL_INT4_W4A16_ORDER;
    uint8_t *o = malloc((size_t)n * rb);
    memcpy(o, q, (size_t)n * rb);
    kl_int4_to_w4a16_order(o, k, 0, n);
    int moved = 0;
    for (int r = 0; r < n; ++r)
        for (int c = 0; c < k; ++c) {
            const uint8_t *qr = q + (size_t)r * rb, *or_ = o + (size_t)r * rb;
            const int want = c % 2 ? qr[c / 2] >> 4 : qr[c / 2] & 0xF;
            int got;
            if (c < k / 8 * 8) {
                const int word = c / 8;
                int pos = 0;
                while (order[pos] != c % 8) ++pos;   /* the nibble that holds column c */
                const uint8_t byte = or_[4 * word + pos / 2];
                got = pos % 2 ? byte >> 4 : byte & 0xF;
            } else {
                got = c % 2 ? or_[c / 2] >> 4 : or_[c / 2] & 0xF;
            }
            moved += got != want;
        }
    snprintf(what, sizeof what, "int4 %dx%d: w4a16 order puts column 8w+order[i] in nibble i", n, k);
    report(!moved, what, "%d nibbles misplaced", moved);
    kl_int4_from_w4a16_order(o, k, 0, n);
    snprintf(what, sizeof what, "int4 %dx%d: w4a16 order and back is the identity", n, k);
    report(memcmp(o, q, (size_t)n * rb) == 0, what, "bytes differ");
    free(o);
    free(w); free(d); free(q); free(s); free(z);
}

/* One word by hand: columns 0..7 holding the values 0..7 (bytes 10 32 54 76)
 * become nibbles 0 2 4 6 1 3 5 7 from the bottom: the word 0x75316420. */
static void test_w4a16_order_word(void) {
    uint8_t b[4] = {0x10, 0x32, 0x54, 0x76};
    kl_int4_to_w4a16_order(b, 8, 0, 1);
    const uint32_t v = b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
    report(v == 0x75316420u, "int4: w4a16 order of the word 0..7 is 0x75316420", "got 0x%08x", v);
}

static void test_q4_0(int n, int k) {
    const int nb = k / KL_Q4_0_BLOCK;
    float *w = malloc((size_t)n * k * 4), *d = malloc((size_t)n * k * 4);
    kl_block_q4_0 *b = malloc((size_t)n * nb * sizeof *b);
    fill_rows(w, n, k);
    kl_quant_q4_0(w, k, 0, n, b);
    kl_dequant_q4_0(b, k, 0, n, d);
    int bad = 0; double worst = 0; char msg[200] = "", what[96];
    for (int r = 0; r < n; ++r)
        for (int c = 0; c < k; ++c) {
            const size_t i = (size_t)r * k + c;
            const float dd = fabsf(kl_half_to_float(b[(size_t)r * nb + c / 32].d));
            /* past 7.5 steps on the side opposite the block's extreme, the
             * value clamps to level 15 (7d): up to one step there */
            const int clamped = dd > 0 && fabsf(w[i]) > 7.5f * dd;
            double wst = 0;
            const int ok = clamped ? fabs((double)w[i] - d[i]) <= dd * (1 + 1e-5)
                                   : within_half_step(w[i], d[i], dd, &wst);
            if (!clamped && wst > worst) worst = wst;
            if (!ok && !bad++)
                snprintf(msg, sizeof msg, "row %d col %d: %g -> %g (d %g)", r, c, w[i], d[i], dd);
        }
    snprintf(what, sizeof what, "q4_0 %dx%d: round trip within half a step (worst %.3f)", n, k, worst);
    report(!bad, what, "%s", msg);
    free(w); free(d); free(b);
}

static void test_q4_0_layout(void) {
    /* A hand-made block: column c holds (c % 16) - 8 for c < 16 and
     * 7 - (c % 16) above, times d = 0.5.  Byte j must be
     * (q of column j) | (q of column j+16) << 4. */
    report(sizeof(kl_block_q4_0) == 18, "q4_0: a block is 18 bytes", "sizeof = %zu", sizeof(kl_block_q4_0));
    float w[32], back[32];
    for (int c = 0; c < 32; ++c) w[c] = 0.5f * (c < 16 ? (float)(c - 8) : (float)(7 - (c - 16)));
    w[0] = -4.0f;                                  /* the extreme: d = -4 / -8 = 0.5 */
    kl_block_q4_0 b;
    kl_quant_q4_0(w, 32, 0, 1, &b);
    int ok = b.d == kl_float_to_half(0.5f);
    for (int j = 0; j < 16; ++j) {
        const int lo = j, hi = 15 - j;             /* q = w/d + 8 */
        ok &= b.qs[j] == (uint8_t)(lo | hi << 4);
    }
    unsigned char raw[18];
    memcpy(raw, &b, 18);
    ok &= raw[0] == 0x00 && raw[1] == 0x38 && raw[2] == 0xF0 && raw[17] == 0x0F;  /* d = 0x3800, little-endian */
    report(ok, "q4_0: bit layout (d first, byte j = column j low | column j+16 high)",
           "d=0x%04x qs[0]=0x%02x qs[15]=0x%02x", b.d, b.qs[0], b.qs[15]);
    kl_dequant_q4_0(&b, 32, 0, 1, back);
    int same = 1;
    for (int c = 0; c < 32; ++c) same &= back[c] == w[c];
    report(same, "q4_0: grid values dequantize exactly", "");
}

/* ---- an independent reference: every byte of a small odd shape ---------------
 * Written from the format in quant.h and the rule it states (asymmetric
 * min/max over a range widened to include 0, the scale the (hi - lo) / qmax
 * rounded up to fp16, the zero round(-lo / s), q = round(w / s + z) clamped;
 * q4_0: d = m / -8 for m the value of largest magnitude, |d| rounded up to
 * fp16, q = round(w / d) + 8 clamped), in double, with its own fp16 decoder,
 * never calling quant.c.  Each stored scale, zero, byte and nibble is compared. */
static double ref_half(uint16_t h) {   /* finite fp16 -> double */
    const int e = (h >> 10) & 31, m = h & 1023;
    const double v = e ? ldexp(1024 + m, e - 25) : ldexp(m, -24);
    return h & 0x8000 ? -v : v;
}
static uint16_t ref_half_up(double x) {   /* the smallest positive fp16 >= x (saturating at 65504) */
    uint16_t lo = 1, hi = 0x7BFF;
    while (lo < hi) { const uint16_t mid = (uint16_t)((lo + hi) / 2); if (ref_half(mid) >= x) hi = mid; else lo = (uint16_t)(mid + 1); }
    return lo;
}
/* Level of w under (s, z): the nearest, clamped; a tie within float rounding may go either way. */
static int ref_level_ok(int q, double x, int qmax) {
    const double r = nearbyint(x);
    const int want = r < 0 ? 0 : r > qmax ? qmax : (int)r;
    if (q == want) return 1;
    return fabs(fabs(x - floor(x)) - 0.5) < 1e-4 && fabs(q - x) <= 0.5 + 1e-4;
}
static void ref_params(const float *w, int n, int qmax, uint16_t *s, int *z) {
    double lo = 0, hi = 0;
    for (int i = 0; i < n; ++i) { if (w[i] < lo) lo = w[i]; if (w[i] > hi) hi = w[i]; }
    if (hi == lo) { *s = 0x3C00; *z = 0; return; }
    *s = ref_half_up((double)(float)((float)(hi - lo) / (float)qmax));
    const double zz = nearbyint(-lo / ref_half(*s));
    *z = zz < 0 ? 0 : zz > qmax ? qmax : (int)zz;
}

static void test_int8_reference(int n, int k) {
    float *w = malloc((size_t)n * k * 4);
    uint8_t *q = malloc((size_t)n * k);
    uint16_t *s = malloc(n * 2), *z = malloc(n * 2);
    fill_rows(w, n, k);
    memset(q, 0xAA, (size_t)n * k);
    kl_quant_int8(w, k, 0, n, q, s, z);
    int bad = 0, checked = 0; char msg[200] = "", what[96];
    for (int r = 0; r < n; ++r) {
        uint16_t rs; int rz;
        ref_params(w + (size_t)r * k, k, 255, &rs, &rz);
        if ((s[r] != rs || ref_half(z[r]) != rz) && !bad++)
            snprintf(msg, sizeof msg, "row %d: scale 0x%04x zero %g, want 0x%04x %d", r, s[r], ref_half(z[r]), rs, rz);
        for (int c = 0; c < k; ++c, ++checked) {
            const double x = w[(size_t)r * k + c] / ref_half(rs) + rz;
            if (!ref_level_ok(q[(size_t)r * k + c], x, 255) && !bad++)
                snprintf(msg, sizeof msg, "byte [%d][%d] = %d, want %.3f rounded", r, c, q[(size_t)r * k + c], x);
        }
    }
    snprintf(what, sizeof what, "int8 %dx%d: every scale, zero and byte [r][c] as the reference (%d)", n, k, checked);
    report(!bad, what, "%s", msg);
    free(w); free(q); free(s); free(z);
}

static void test_int4_reference(int n, int k) {
    const size_t rb = kl_int4_row_bytes(k);
    const int ng = kl_int4_groups(k);
    float *w = malloc((size_t)n * k * 4);
    uint8_t *q = malloc((size_t)n * rb);
    uint16_t *s = malloc((size_t)n * ng * 2), *z = malloc((size_t)n * ng * 2);
    fill_rows(w, n, k);
    memset(q, 0xAA, (size_t)n * rb);
    kl_quant_int4(w, k, 0, n, q, s, z);
    int bad = 0, checked = 0; char msg[200] = "", what[112];
    if (rb != (size_t)(k + 1) / 2 || ng != (k + 127) / 128) { bad++; snprintf(msg, sizeof msg, "row bytes %zu groups %d", rb, ng); }
    for (int r = 0; r < n; ++r)
        for (int g = 0; g < ng; ++g) {
            const int c0 = 128 * g, c1 = c0 + 128 < k ? c0 + 128 : k;
            uint16_t rs; int rz;
            ref_params(w + (size_t)r * k + c0, c1 - c0, 15, &rs, &rz);
            if ((s[(size_t)r * ng + g] != rs || ref_half(z[(size_t)r * ng + g]) != rz) && !bad++)
                snprintf(msg, sizeof msg, "row %d group %d: scale 0x%04x zero %g, want 0x%04x %d", r, g,
                         s[(size_t)r * ng + g], ref_half(z[(size_t)r * ng + g]), rs, rz);
            for (int c = c0; c < c1; ++c, ++checked) {
                const uint8_t byte = q[(size_t)r * rb + c / 2];
                const int nib = c % 2 ? byte >> 4 : byte & 0xF;   /* quant.h: even column low */
                const double x = w[(size_t)r * k + c] / ref_half(rs) + rz;
                if (!ref_level_ok(nib, x, 15) && !bad++)
                    snprintf(msg, sizeof msg, "row %d col %d: nibble %d, want %.3f rounded", r, c, nib, x);
            }
        }
    if (k % 2)
        for (int r = 0; r < n; ++r)
            if (q[(size_t)r * rb + rb - 1] >> 4 && !bad++) snprintf(msg, sizeof msg, "row %d: odd K's padding nibble not 0", r);
    snprintf(what, sizeof what, "int4 %dx%d: every scale, zero and nibble as the reference, padding 0 (%d)", n, k, checked);
    report(!bad, what, "%s", msg);
    free(w); free(q); free(s); free(z);
}

static void test_q4_0_reference(int n, int k) {
    const int nb = k / 32;
    float *w = malloc((size_t)n * k * 4);
    kl_block_q4_0 *b = malloc((size_t)n * nb * sizeof *b);
    fill_rows(w, n, k);
    kl_quant_q4_0(w, k, 0, n, b);
    int bad = 0, checked = 0; char msg[200] = "", what[96];
    for (int r = 0; r < n; ++r)
        for (int i = 0; i < nb; ++i) {
            const float *x = w + (size_t)r * k + 32 * i;
            const unsigned char *raw = (const unsigned char *)&b[(size_t)r * nb + i];
            double m = 0;
            for (int j = 0; j < 32; ++j) if (fabs(x[j]) > fabs(m)) m = x[j];
            const double d = m / -8;
            const uint16_t rd = d == 0 ? 0 : (uint16_t)(ref_half_up(fabs(d)) | (d < 0 ? 0x8000 : 0));
            const uint16_t gd = (uint16_t)(raw[0] | raw[1] << 8);   /* d first, little-endian */
            if (gd != rd && !bad++) snprintf(msg, sizeof msg, "row %d block %d: d 0x%04x, want 0x%04x", r, i, gd, rd);
            for (int c = 0; c < 32; ++c, ++checked) {
                const int nib = c < 16 ? raw[2 + c] & 0xF : raw[2 + c - 16] >> 4;
                const double v = rd ? x[c] / ref_half(rd) + 8 : 8;
                if (!ref_level_ok(nib, v, 15) && !bad++)
                    snprintf(msg, sizeof msg, "row %d col %d: nibble %d, want %.3f rounded", r, 32 * i + c, nib, v);
            }
        }
    snprintf(what, sizeof what, "q4_0 %dx%d: every d and nibble as the reference (%d)", n, k, checked);
    report(!bad, what, "%s", msg);
    free(w); free(b);
}

/* The ops quantize model-sized matrices on every run: it must be quick. */
static void test_speed(void) {
    const int n = 2048, k = 4096;                  /* 8M weights */
    float *w = malloc((size_t)n * k * 4);
    uint8_t *q = malloc((size_t)n * k / 2);
    uint16_t *s = malloc((size_t)n * (k / 128) * 2), *z = malloc((size_t)n * (k / 128) * 2);
    fill_rows(w, n, k);
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    kl_quant_int4(w, k, 0, n, q, s, z);
    kl_dequant_int4(q, s, z, k, 0, n, w);
    clock_gettime(CLOCK_MONOTONIC, &b);
    const double ns = ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / ((double)n * k);
    /* 128256 x 4096 = 525M weights must stay well under a minute */
    char what[96];
    snprintf(what, sizeof what, "int4: quantize + dequantize speed (%.1f ns per weight)", ns);
    report(ns < 50.0, what, "over 50 ns per weight");
    free(w); free(q); free(s); free(z);
}

int main(void) {
    setvbuf(stdout, NULL, _IOLBF, 0);   /* a crash keeps the lines printed before it */
    test_half();
    test_e4m3();
    test_fp8_layouts();
    test_fp8_block_exp();
    test_fp8_quant_block();
    test_int8(64, 1024);
    test_int8(9, 1001);     /* odd K */
    test_int8(7, 1);
    test_int4(64, 1024);
    test_int4(9, 1001);     /* odd K, a partial last group */
    test_int4(7, 3);
    test_int4(11, 130);
    test_w4a16_order_word();
    test_q4_0(64, 1024);
    test_q4_0(9, 32);
    test_q4_0_layout();
    test_int8_reference(7, 13);
    test_int8_reference(9, 1001);
    test_int4_reference(7, 13);
    test_int4_reference(9, 259);   /* two whole groups and a partial one of 3 */
    test_q4_0_reference(7, 96);
    test_speed();
    return unit_plan();
}
