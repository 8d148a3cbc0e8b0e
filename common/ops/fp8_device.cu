/*
 * fp8_device.cu - the FP8 operations' quantizer (fp8_ops.h): amax, scale,
 * e4m3 rounding, and the dequantization the reference GEMM reads.
 */
#include "fp8_ops.h"

#include <cuda_fp8.h>

static unsigned grid_for(size_t n) {
    const size_t blocks = (n + 255) / 256;
    return (unsigned)(blocks < 4096 ? (blocks ? blocks : 1) : 4096);
}

/* max |x| of the block's share, then one atomicMax per warp on the float's bits:
 * for floats >= 0 the order of the bit patterns as unsigned is the order of the values. */
__global__ void kl_amax_kernel(const float *x, size_t n, unsigned *amax_bits) {
    float m = 0.0f;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        m = fmaxf(m, fabsf(x[i]));
    for (int o = 16; o; o /= 2) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
    if (threadIdx.x % 32 == 0) atomicMax(amax_bits, __float_as_uint(m));
}

__device__ __forceinline__ float scale_of(float amax) { return amax > 0.0f ? amax / KL_E4M3_MAX : 1.0f; }

__global__ void kl_quantize_e4m3_kernel(const float *x, size_t n, const float *amax, uint8_t *q, float *scale) {
    const float s = scale_of(*amax);
    if (blockIdx.x == 0 && threadIdx.x == 0) *scale = s;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        q[i] = __nv_cvt_float_to_fp8(x[i] / s, __NV_SATFINITE, __NV_E4M3);   // round to nearest even
}

__global__ void kl_dequantize_e4m3_kernel(const uint8_t *q, size_t n, const float *scale, float *x) {
    const float s = *scale;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        const __half_raw h = __nv_cvt_fp8_to_halfraw((__nv_fp8_storage_t)q[i], __NV_E4M3);   // exact
        x[i] = __half2float(__half(h)) * s;
    }
}

extern "C" {

void kl_fp8_quantize_tensor(const float *x, size_t n, uint8_t *q, float *scale, float *amax_tmp, cudaStream_t s) {
    CUDA_CHECK(cudaMemsetAsync(amax_tmp, 0, sizeof(float), s));   // +0.0f
    kl_amax_kernel<<<grid_for(n), 256, 0, s>>>(x, n, (unsigned *)amax_tmp);
    KL_CHECK_LAUNCH();
    kl_quantize_e4m3_kernel<<<grid_for(n), 256, 0, s>>>(x, n, amax_tmp, q, scale);
    KL_CHECK_LAUNCH();
}

void kl_fp8_dequantize_tensor(const uint8_t *q, size_t n, const float *scale, float *x, cudaStream_t s) {
    kl_dequantize_e4m3_kernel<<<grid_for(n), 256, 0, s>>>(q, n, scale, x);
    KL_CHECK_LAUNCH();
}

}   /* extern "C" */
