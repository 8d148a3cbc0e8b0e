/*
 * fp8_ops.h - what the FP8 operations (Part V) share: the quantizer that
 * turns the random fp32 inputs into e4m3 with a scale (fp8_device.cu).
 *
 * e4m3 (OCP "E4M3FN"): 1 sign bit, 4 exponent bits (bias 7), 3 mantissa
 * bits; no infinities; 0x7F / 0xFF is NaN; the largest finite value is 448
 * (0x7E), the smallest subnormal 2^-9.  A tensor is stored as q = x / s
 * rounded to the nearest e4m3 (saturating at +-448) and stands for q * s,
 * with s = amax / 448: the largest |x| lands on 448, the top of the format.
 * The host's own codec (kl_e4m3_to_float, kl_float_to_e4m3) is in quant.h.
 */
#ifndef KL_FP8_OPS_H
#define KL_FP8_OPS_H

#include "kl.h"

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

#ifdef __cplusplus
}
#endif
#endif /* KL_FP8_OPS_H */
