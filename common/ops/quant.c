/*
 * quant.c - host quantizers and dequantizers for the Part II weight formats
 * (see quant.h for the exact layouts).  Plain C11; every function works on a
 * range of rows so that callers can split the rows over OpenMP threads.
 *
 * The quantizers guarantee |w - dequant(quant(w))| <= step/2 for every
 * element (step = the scale actually stored, after rounding it to fp16),
 * except where q4_0's asymmetric grid [-8, 7] cannot reach a value (see
 * kl_quant_q4_0).  To keep that promise the stored scale is rounded *up* to
 * the next fp16 value: a scale rounded down would push the row's largest
 * value one step past the top of the grid.
 */
#include "quant.h"

#include <math.h>
#include <string.h>

/* ---- fp16 <-> fp32 ------------------------------------------------------- */

static uint32_t f32_bits(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
static float bits_f32(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }

uint16_t kl_float_to_half(float f) {
    const uint32_t u = f32_bits(f);
    const uint16_t sign = (uint16_t)((u >> 16) & 0x8000u);
    const uint32_t exp = (u >> 23) & 0xFFu;
    uint32_t man = u & 0x7FFFFFu;

    if (exp == 0xFFu)                              /* Inf, or NaN kept quiet */
        return (uint16_t)(sign | 0x7C00u | (man ? 0x200u | (man >> 13) : 0u));
    const int e = (int)exp - 127 + 15;             /* exponent in fp16 bias */
    if (e >= 31) return (uint16_t)(sign | 0x7C00u);  /* overflow: Inf */
    if (e <= 0) {                                  /* fp16 subnormal or zero */
        if (e < -10) return sign;                  /* below half the smallest subnormal */
        man |= 0x800000u;                          /* the implicit 1 */
        const int shift = 14 - e;                  /* 14..24 bits go */
        uint32_t h = man >> shift;
        const uint32_t rem = man & ((1u << shift) - 1u), half = 1u << (shift - 1);
        if (rem > half || (rem == half && (h & 1u))) ++h;  /* may carry into the smallest normal: right */
        return (uint16_t)(sign | h);
    }
    uint32_t h = ((uint32_t)e << 10) | (man >> 13);
    const uint32_t rem = man & 0x1FFFu;
    if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) ++h;  /* a carry may reach Inf: right */
    return (uint16_t)(sign | h);
}

float kl_half_to_float(uint16_t h) {
    const uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    const uint32_t exp = (h >> 10) & 0x1Fu, man = h & 0x3FFu;
    if (exp == 0x1Fu) return bits_f32(sign | 0x7F800000u | (man << 13));
    if (exp == 0) {                                /* subnormal: man * 2^-24, exact */
        const float v = (float)man * 0x1p-24f;
        return sign ? -v : v;
    }
    return bits_f32(sign | ((exp - 15 + 127) << 23) | (man << 13));
}

/* The smallest fp16 value >= s (s > 0, finite), saturating at 65504. */
static uint16_t half_round_up(float s) {
    if (!(s < 65504.0f)) return 0x7BFFu;
    uint16_t h = kl_float_to_half(s);
    if (kl_half_to_float(h) < s) ++h;              /* positive: next bit pattern is next value */
    return h;
}

static int clampi(int v, int lo, int hi) { return v < lo ? lo : v > hi ? hi : v; }

/* Asymmetric (min/max) quantization of one run of values to levels 0..qmax.
 * The range is widened to include 0 so that 0 stays exact (and a constant
 * row still has a range).  Returns scale and zero as fp16. */
static void minmax_params(const float *w, int n, int qmax, uint16_t *s_out, uint16_t *z_out) {
    float lo = 0.0f, hi = 0.0f;
    for (int i = 0; i < n; ++i) {
        lo = w[i] < lo ? w[i] : lo;
        hi = w[i] > hi ? w[i] : hi;
    }
    if (hi == lo) {                                /* an all-zero run */
        *s_out = 0x3C00u;                          /* 1.0: any scale works, q = z */
        *z_out = 0;
        return;
    }
    const uint16_t sh = half_round_up((hi - lo) / (float)qmax);
    const float s = kl_half_to_float(sh);
    /* lo <= 0 <= hi and s >= (hi-lo)/qmax put -lo/s in [0, qmax] */
    const int z = clampi((int)lrintf(-lo / s), 0, qmax);
    *s_out = sh;
    *z_out = kl_float_to_half((float)z);           /* small integer: exact */
}

static int quantize_one(float w, float inv_s, float z, int qmax) {
    return clampi((int)lrintf(w * inv_s + z), 0, qmax);
}

/* ---- int8, one scale and zero per row ------------------------------------ */

void kl_quant_int8(const float *w, int k, int r0, int r1, uint8_t *q, uint16_t *s, uint16_t *z) {
    #pragma omp parallel for schedule(static)
    for (int r = r0; r < r1; ++r) {
        const float *row = w + (size_t)r * k;
        minmax_params(row, k, 255, &s[r], &z[r]);
        const float inv = 1.0f / kl_half_to_float(s[r]), zf = kl_half_to_float(z[r]);
        for (int c = 0; c < k; ++c)
            q[(size_t)r * k + c] = (uint8_t)quantize_one(row[c], inv, zf, 255);
    }
}

void kl_dequant_int8(const uint8_t *q, const uint16_t *s, const uint16_t *z, int k, int r0, int r1, float *w) {
    #pragma omp parallel for schedule(static)
    for (int r = r0; r < r1; ++r) {
        const float sf = kl_half_to_float(s[r]), zf = kl_half_to_float(z[r]);
        for (int c = 0; c < k; ++c)
            w[(size_t)r * k + c] = ((float)q[(size_t)r * k + c] - zf) * sf;  /* exact in fp32 */
    }
}

/* ---- int4, packed two per byte, one scale and zero per 128 columns -------- */

float kl_e4m3_to_float(uint8_t v) {
    const int e = v >> 3 & 15, m = v & 7;
    if (e == 15 && m == 7) return NAN;
    const float f = e ? ldexpf((float)(8 + m), e - 10) : ldexpf((float)m, -9);   /* 1.m x 2^(e-7), or 0.m x 2^-6 */
    return v & 0x80 ? -f : f;
}

/* By search: the nearest of the 127 finite magnitudes; of two equally near
 * (adjacent codes), the even one.  Slow, and plainly right: it defines what
 * the GPU's quantizer is checked against. */
uint8_t kl_float_to_e4m3(float f) {
    if (isnan(f)) return 0x7F;
    const uint8_t sign = signbit(f) ? 0x80 : 0;
    const float a = fabsf(f);
    if (a >= 448.0f) return sign | 0x7E;   /* a shortcut: 448 is the nearest code to all above it */
    int best = 0;
    float bd = INFINITY;
    for (int c = 0; c <= 0x7E; ++c) {
        const float d = fabsf(kl_e4m3_to_float((uint8_t)c) - a);
        if (d < bd || (d == bd && c % 2 == 0)) bd = d, best = c;
    }
    return sign | (uint8_t)best;
}

float kl_fp8_quant_block(const float *x, size_t ld, int rows, int cols, uint8_t *q) {
    float amax = 0.0f;
    for (int r = 0; r < rows; ++r)
        for (int c = 0; c < cols; ++c) amax = fmaxf(amax, fabsf(x[(size_t)r * ld + c]));
    const float s = amax > 0.0f ? amax / 448.0f : 1.0f;   /* the GPU's division, bit for bit */
    for (int r = 0; r < rows; ++r)
        for (int c = 0; c < cols; ++c) q[(size_t)r * ld + c] = kl_float_to_e4m3(x[(size_t)r * ld + c] / s);
    return s;
}

size_t kl_int4_row_bytes(int k) { return ((size_t)k + 1) / 2; }
int kl_int4_groups(int k) { return (k + KL_INT4_GROUP - 1) / KL_INT4_GROUP; }

void kl_quant_int4(const float *w, int k, int r0, int r1, uint8_t *q, uint16_t *s, uint16_t *z) {
    const size_t rb = kl_int4_row_bytes(k);
    const int ng = kl_int4_groups(k);
    #pragma omp parallel for schedule(static)
    for (int r = r0; r < r1; ++r) {
        const float *row = w + (size_t)r * k;
        uint8_t *qr = q + (size_t)r * rb;
        memset(qr, 0, rb);                         /* odd k: the last high nibble stays 0 */
        for (int g = 0; g < ng; ++g) {
            const int c0 = g * KL_INT4_GROUP;
            const int c1 = c0 + KL_INT4_GROUP < k ? c0 + KL_INT4_GROUP : k;
            uint16_t *sg = &s[(size_t)r * ng + g], *zg = &z[(size_t)r * ng + g];
            minmax_params(row + c0, c1 - c0, 15, sg, zg);
            const float inv = 1.0f / kl_half_to_float(*sg), zf = kl_half_to_float(*zg);
            for (int c = c0; c < c1; ++c) {
                const int v = quantize_one(row[c], inv, zf, 15);
                qr[c / 2] |= (uint8_t)(c % 2 ? v << 4 : v);  /* even column: low nibble */
            }
        }
    }
}

void kl_dequant_int4(const uint8_t *q, const uint16_t *s, const uint16_t *z, int k, int r0, int r1, float *w) {
    const size_t rb = kl_int4_row_bytes(k);
    const int ng = kl_int4_groups(k);
    #pragma omp parallel for schedule(static)
    for (int r = r0; r < r1; ++r) {
        const uint8_t *qr = q + (size_t)r * rb;
        for (int c = 0; c < k; ++c) {
            const int g = c / KL_INT4_GROUP;
            const int v = c % 2 ? qr[c / 2] >> 4 : qr[c / 2] & 0xF;
            w[(size_t)r * k + c] = ((float)v - kl_half_to_float(z[(size_t)r * ng + g]))
                                 * kl_half_to_float(s[(size_t)r * ng + g]);
        }
    }
}

/* w4a16's order: inside each 4-byte word of a row (8 columns), nibble i holds
 * column KL_INT4_W4A16_ORDER[i].  Columns past the row's last whole word keep
 * the plain order.  Word by word through 32-bit values, so the result does
 * not depend on the host's byte order: nibble i is bits 4i..4i+3 of the
 * little-endian word the GPU loads. */
static const int w4a16_order[8] = KL_INT4_W4A16_ORDER;

static void int4_reorder(uint8_t *q, int k, int r0, int r1, int to_w4a16) {
    const size_t rb = kl_int4_row_bytes(k);
    const int words = k / 8;
    #pragma omp parallel for schedule(static)
    for (int r = r0; r < r1; ++r)
        for (int w = 0; w < words; ++w) {
            uint8_t *b = q + (size_t)r * rb + 4 * (size_t)w;
            const uint32_t in = b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
            uint32_t out = 0;
            for (int i = 0; i < 8; ++i) {   /* nibble i of the w4a16 word = column order[i] */
                const int from = to_w4a16 ? w4a16_order[i] : i, to = to_w4a16 ? i : w4a16_order[i];
                out |= ((in >> (4 * from)) & 0xFu) << (4 * to);
            }
            for (int j = 0; j < 4; ++j) b[j] = (uint8_t)(out >> (8 * j));
        }
}

void kl_int4_to_w4a16_order(uint8_t *q, int k, int r0, int r1) { int4_reorder(q, k, r0, r1, 1); }
void kl_int4_from_w4a16_order(uint8_t *q, int k, int r0, int r1) { int4_reorder(q, k, r0, r1, 0); }

/* ---- q4_0 (llama.cpp): blocks of 32, fp16 d, w = (q - 8) * d --------------
 * As llama.cpp does it: d = m / -8 where m is the value of largest magnitude,
 * so m lands exactly on level 0 (-8 * d); the grid is [-8d, 7d], so a value
 * of the other sign and nearly the same magnitude clamps to 7d (an error of
 * up to one step there; everywhere else at most half a step).  Unlike
 * llama.cpp we round |d| up to fp16 (not to nearest) and divide by the
 * stored d, so m cannot fall off the grid when d is rounded. */

void kl_quant_q4_0(const float *w, int k, int r0, int r1, kl_block_q4_0 *b) {
    const int nb = k / KL_Q4_0_BLOCK;
    #pragma omp parallel for schedule(static)
    for (int r = r0; r < r1; ++r) {
        for (int i = 0; i < nb; ++i) {
            const float *x = w + (size_t)r * k + (size_t)i * KL_Q4_0_BLOCK;
            kl_block_q4_0 *blk = &b[(size_t)r * nb + i];
            float amax = 0.0f, m = 0.0f;
            for (int j = 0; j < KL_Q4_0_BLOCK; ++j)
                if (fabsf(x[j]) > amax) { amax = fabsf(x[j]); m = x[j]; }
            /* |d| rounded up to fp16 (saturating), so that m / d >= -8 still */
            const float d = m / -8.0f;
            blk->d = d == 0.0f ? 0 : (uint16_t)(half_round_up(fabsf(d)) | (d < 0.0f ? 0x8000u : 0u));
            const float dh = kl_half_to_float(blk->d);
            const float inv = dh != 0.0f ? 1.0f / dh : 0.0f;
            for (int j = 0; j < KL_Q4_0_BLOCK / 2; ++j) {
                const int lo = clampi((int)lrintf(x[j] * inv) + 8, 0, 15);
                const int hi = clampi((int)lrintf(x[j + 16] * inv) + 8, 0, 15);
                blk->qs[j] = (uint8_t)(lo | hi << 4);  /* column j low, j+16 high */
            }
        }
    }
}

void kl_dequant_q4_0(const kl_block_q4_0 *b, int k, int r0, int r1, float *w) {
    const int nb = k / KL_Q4_0_BLOCK;
    #pragma omp parallel for schedule(static)
    for (int r = r0; r < r1; ++r) {
        for (int i = 0; i < nb; ++i) {
            const kl_block_q4_0 *blk = &b[(size_t)r * nb + i];
            const float d = kl_half_to_float(blk->d);
            float *out = w + (size_t)r * k + (size_t)i * KL_Q4_0_BLOCK;
            for (int j = 0; j < KL_Q4_0_BLOCK / 2; ++j) {
                out[j] = (float)((blk->qs[j] & 0xF) - 8) * d;
                out[j + 16] = (float)((blk->qs[j] >> 4) - 8) * d;
            }
        }
    }
}
