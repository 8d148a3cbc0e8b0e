/*
 * quant.h - weight formats of Part II, with host quantizers and
 * dequantizers (plain C, tested on the CPU).  Row-major W[n][k]; every format
 * stores row after row.  Dequantized values are exact in fp32.
 *
 * int8  (qgemv_int8): q uint8 [n][k]; per row r: scale s[r], zero z[r] (fp16)
 *                     w[r][c] = (q[r][c] - z[r]) * s[r]
 * int4  (qgemv_int4): row r is (k+1)/2 bytes; byte j holds column 2j in
 *                     bits 0-3 and column 2j+1 in bits 4-7; groups of
 *                     KL_INT4_GROUP columns share s[r][g], z[r][g] (fp16, g =
 *                     c / KL_INT4_GROUP, (k+127)/128 groups per row)
 *                     w[r][c] = (q - z[r][g]) * s[r][g]
 * int4, w4a16 order:  the same bytes, scales and zeros, but inside each 4-byte
 *                     word (columns 8w..8w+7 of a row) nibble i (bits 4i..4i+3
 *                     of the little-endian word) holds column 8w + {0, 2, 4,
 *                     6, 1, 3, 5, 7}[i]: bytes (0,2) (4,6) (1,3) (5,7).  A
 *                     mask of nibbles 0 and 4 then reaches the adjacent
 *                     columns (0,1), and so on (docs/v16_splitk_w4a16.md).
 *                     Made once from the int4 format, as a quantizer would.
 * q4_0  (llama.cpp):  blocks of 32 columns, 18 bytes: fp16 d, then 16 bytes;
 *                     byte j holds column j (low nibble) and j+16 (high)
 *                     w = (q - 8) * d.  k must be a multiple of 32.
 *                     Blocks are only 2-byte aligned.
 */
#ifndef KL_QUANT_H
#define KL_QUANT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* fp16 <-> fp32 on the host, round to nearest even, with Inf/NaN/subnormals. */
uint16_t kl_float_to_half(float f);
float kl_half_to_float(uint16_t h);

/* FP8 e4m3 (fp8_ops.h has the format) <-> fp32 on the host: decode exactly
 * (0x7F, 0xFF: NaN); encode to the nearest e4m3, ties to the even code,
 * saturating at +-448, NaN to 0x7F: what the GPU's cvt ... .satfinite does. */
float kl_e4m3_to_float(uint8_t v);
uint8_t kl_float_to_e4m3(float f);
/* One block of rows x cols floats (row stride ld) quantized as a tensor of its
 * own, as fp8_ops.h's GPU quantizers do each block: amax = max |x|, s = amax /
 * 448 (1 when the block is all zeros), q[r * ld + c] = e4m3(x[r * ld + c] / s).
 * Returns s.  The reference the GPU's block scales and codes are checked against. */
float kl_fp8_quant_block(const float *x, size_t ld, int rows, int cols, uint8_t *q);

#define KL_INT4_GROUP 128
#define KL_Q4_0_BLOCK 32
typedef struct kl_block_q4_0 {
    uint16_t d;        /* fp16 scale */
    uint8_t qs[16];    /* byte j: column j (bits 0-3), column j+16 (bits 4-7) */
} kl_block_q4_0;       /* 18 bytes, 2-byte aligned */

size_t kl_int4_row_bytes(int k);
int kl_int4_groups(int k);
/* Rows [r0, r1) of int4 nibbles q, in place, into w4a16's order and back.
 * The last k % 8 columns of a row (no whole word) keep the plain order. */
#define KL_INT4_W4A16_ORDER {0, 2, 4, 6, 1, 3, 5, 7}
void kl_int4_to_w4a16_order(uint8_t *q, int k, int r0, int r1);
void kl_int4_from_w4a16_order(uint8_t *q, int k, int r0, int r1);

/* Quantize rows [r0, r1) of w (fp32 [n][k]); dequantize them back to fp32. */
void kl_quant_int8(const float *w, int k, int r0, int r1, uint8_t *q, uint16_t *s, uint16_t *z);
void kl_dequant_int8(const uint8_t *q, const uint16_t *s, const uint16_t *z, int k, int r0, int r1, float *w);
void kl_quant_int4(const float *w, int k, int r0, int r1, uint8_t *q, uint16_t *s, uint16_t *z);
void kl_dequant_int4(const uint8_t *q, const uint16_t *s, const uint16_t *z, int k, int r0, int r1, float *w);
/* k % 32 == 0 (checked by the caller) */
void kl_quant_q4_0(const float *w, int k, int r0, int r1, kl_block_q4_0 *b);
void kl_dequant_q4_0(const kl_block_q4_0 *b, int k, int r0, int r1, float *w);

#ifdef __cplusplus
}
#endif
#endif
