/*
 * fp8_ops.h - what the FP8 operations (Part V) share: the quantizers that
 * turn the random fp32 inputs into e4m3 with scales (fp8_device.cu), one
 * scale per tensor (gemm_fp8) or per block (gemm_fp8_block), and the block
 * scales' layouts written once for the GPU and the host.
 *
 * e4m3 (OCP "E4M3FN"): 1 sign bit, 4 exponent bits (bias 7), 3 mantissa
 * bits; no infinities; 0x7F / 0xFF is NaN; the largest finite value is 448
 * (0x7E), the smallest subnormal 2^-9.  A tensor is stored as q = x / s
 * rounded to the nearest e4m3 (saturating at +-448) and stands for q * s,
 * with s = amax / 448: the largest |x| lands on 448, the top of the format.
 * A block-scaled tensor does the same in each block, with the block's amax.
 * The host's own codec (kl_e4m3_to_float, kl_float_to_e4m3) and a host
 * quantizer of one block (kl_fp8_quant_block) are in quant.h.
 */
#ifndef KL_FP8_OPS_H
#define KL_FP8_OPS_H

#include "kl.h"

#if defined(__CUDACC__)
#define KL_FP8_FN static __host__ __device__ __forceinline__
#else
#define KL_FP8_FN static inline
#endif

#ifdef __cplusplus
extern "C" {
#endif

#define KL_E4M3_MAX 448.0f

/* One scale for the whole tensor: amax = max |x| over n elements, *scale =
 * amax / 448 (1 when x is all zeros), q[i] = e4m3(x[i] / *scale).  amax_tmp:
 * one device float the reduction may clobber. */
void kl_fp8_quantize_tensor(const float *x, size_t n, uint8_t *q, float *scale, float *amax_tmp, cudaStream_t s);
/* x[i] = e4m3 q[i] times *scale, in fp32 (exact: 4 significant bits times a float). */
void kl_fp8_dequantize_tensor(const uint8_t *q, size_t n, const float *scale, float *x, cudaStream_t s);

/* ---- block scales (gemm_fp8_block; kl.h fixes the layouts) ----------------
 * A [m][k] has a scale per row i and k block kb (1 x 128), B [n][k] one per
 * row block jb = j / 128 and k block (128 x 128); k is a multiple of 128.
 * Where each lives, as cuBLASLt's VEC128_32F and BLK128x128_32F read them: */
KL_FP8_FN size_t kl_fp8_sa_index(int m, int i, int kb) { return (size_t)kb * KL_FP8_SA_LD(m) + i; }   /* m fastest, */
                                                                                                 /* columns padded to 4 */
KL_FP8_FN size_t kl_fp8_sb_index(int k, int jb, int kb) {                               /* k blocks fastest, */
    return (size_t)jb * KL_FP8_SB_LD(k) + kb;                                           /* rows padded to 4 */
}
/* Floats each array holds: k / 128 padded columns of m, and ceil(n / 128) padded rows. */
KL_FP8_FN size_t kl_fp8_sa_count(int m, int k) { return (size_t)(k / KL_FP8_BLOCK) * KL_FP8_SA_LD(m); }
KL_FP8_FN size_t kl_fp8_sb_count(int n, int k) {
    return (size_t)((n + KL_FP8_BLOCK - 1) / KL_FP8_BLOCK) * KL_FP8_SB_LD(k);
}

/* Each 1 x 128 slice of A, or 128 x 128 block of B, quantized as a tensor of
 * its own: its amax, its scale amax / 448 (1 when all zeros) at the index
 * above, its codes e4m3(x / scale).  B's last row block, when n % 128 != 0,
 * takes its amax over the rows that exist; the padding of each row of sb and
 * of each column of sa is written 0 (no kernel applies it). */
void kl_fp8_quantize_1x128(const float *x, int m, int k, uint8_t *q, float *sa, cudaStream_t s);
void kl_fp8_quantize_128x128(const float *x, int n, int k, uint8_t *q, float *sb, cudaStream_t s);
/* x = e4m3 q times its block's scale, in fp32 (exact, as above): the inputs
 * the fp32 reference multiplies. */
void kl_fp8_dequantize_1x128(const uint8_t *q, int m, int k, const float *sa, float *x, cudaStream_t s);
void kl_fp8_dequantize_128x128(const uint8_t *q, int n, int k, const float *sb, float *x, cudaStream_t s);

/* gemm_fp8_block's test data gives every block a magnitude of its own: x[r][c]
 * *= 2^(kl_fp8_block_exp(r / rows_per_block, c / 128) + e0).  Exponents 0, 1, 2
 * by (row block + k block) mod 3: neighbouring blocks along either direction,
 * and blocks 8, 16 or 64 apart, differ 2x or 4x, so a kernel that applies
 * another block's scale is off by that much (mod 3: no power-of-two offset, the
 * likely slip in a kernel's indexing, maps a block onto one of equal size). */
KL_FP8_FN int kl_fp8_block_exp(int rb, int kb) { return (rb + kb) % 3; }
#define KL_FP8_BLOCK_EXP_MAX 2
void kl_fp8_scale_blocks(float *x, int rows, int k, int rows_per_block, int e0, cudaStream_t s);

#ifdef __cplusplus
}
#endif
#endif /* KL_FP8_OPS_H */
