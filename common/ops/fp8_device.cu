/*
 * fp8_device.cu - the FP8 operations' quantizers (fp8_ops.h): amax, scale,
 * e4m3 rounding, per tensor and per block, the dequantization the reference
 * GEMM reads, and the block magnitudes of gemm_fp8_block's test data.
 */
#include "device.h"
#include "fp8_ops.h"

#include <cuda_fp8.h>

static unsigned grid_for(size_t n) { return kl_grid_for(n, 4096); }

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

/* ---- block scales --------------------------------------------------------
 * One thread block of 128 threads per scale block: thread t owns column
 * kb * 128 + t of the block's rows (1 for A, up to 128 for B), so each row is
 * read as 128 consecutive floats.  Simple rather than fast: it runs once per
 * problem, in setup. */
#define QB_THREADS KL_FP8_BLOCK

/* A's 1 x 128 slices (IS_B false) or B's 128 x 128 blocks: rows per block, and
 * where block (rb, kb)'s scale lives (fp8_ops.h). */
template <bool IS_B> struct blocks {
    static constexpr int rows = IS_B ? KL_FP8_BLOCK : 1;
    static __device__ __forceinline__ size_t scale_index(int nrows, int k, int rb, int kb) {
        return IS_B ? kl_fp8_sb_index(k, rb, kb) : kl_fp8_sa_index(nrows, rb, kb);
    }
};

/* max over the block's 128 threads; every thread gets it */
static __device__ float block_max(float v) {
    __shared__ float warp_max[QB_THREADS / 32];
    for (int o = 16; o; o /= 2) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
    if (threadIdx.x % 32 == 0) warp_max[threadIdx.x / 32] = v;
    __syncthreads();
    v = warp_max[0];
    for (int w = 1; w < QB_THREADS / 32; ++w) v = fmaxf(v, warp_max[w]);
    return v;
}

/* grid (row blocks, k blocks) */
template <bool IS_B>
__global__ void kl_quantize_blocks_kernel(const float *x, int rows, int k, uint8_t *q, float *scales) {
    const int rb = blockIdx.x, kb = blockIdx.y;
    const int r0 = rb * blocks<IS_B>::rows, r1 = min(rows, r0 + blocks<IS_B>::rows);   // B's last: the rows that exist
    const size_t c = (size_t)kb * KL_FP8_BLOCK + threadIdx.x;
    float m = 0.0f;
    for (int r = r0; r < r1; ++r) m = fmaxf(m, fabsf(x[(size_t)r * k + c]));
    const float s = scale_of(block_max(m));
    if (threadIdx.x == 0) scales[blocks<IS_B>::scale_index(rows, k, rb, kb)] = s;
    for (int r = r0; r < r1; ++r)
        q[(size_t)r * k + c] = __nv_cvt_float_to_fp8(x[(size_t)r * k + c] / s, __NV_SATFINITE, __NV_E4M3);
}

template <bool IS_B>
__global__ void kl_dequantize_blocks_kernel(const uint8_t *q, int rows, int k, const float *scales, float *x) {
    const size_t n = (size_t)rows * k;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        const int r = (int)(i / k), kb = (int)(i % k) / KL_FP8_BLOCK;
        const __half_raw h = __nv_cvt_fp8_to_halfraw((__nv_fp8_storage_t)q[i], __NV_E4M3);   // exact
        x[i] = __half2float(__half(h)) * scales[blocks<IS_B>::scale_index(rows, k, r / blocks<IS_B>::rows, kb)];
    }
}

__global__ void kl_scale_blocks_kernel(float *x, int rows, int k, int rows_per_block, int e0) {
    const size_t n = (size_t)rows * k;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        const int r = (int)(i / k), kb = (int)(i % k) / KL_FP8_BLOCK;
        x[i] = ldexpf(x[i], kl_fp8_block_exp(r / rows_per_block, kb) + e0);   // exact: a power of two
    }
}

template <bool IS_B>
static void quantize_blocks(const float *x, int rows, int k, uint8_t *q, float *scales, cudaStream_t s) {
    const dim3 grid((unsigned)((rows + blocks<IS_B>::rows - 1) / blocks<IS_B>::rows), (unsigned)(k / KL_FP8_BLOCK));
    kl_quantize_blocks_kernel<IS_B><<<grid, QB_THREADS, 0, s>>>(x, rows, k, q, scales);
    KL_CHECK_LAUNCH();
}

template <bool IS_B>
static void dequantize_blocks(const uint8_t *q, int rows, int k, const float *scales, float *x, cudaStream_t s) {
    kl_dequantize_blocks_kernel<IS_B><<<grid_for((size_t)rows * k), 256, 0, s>>>(q, rows, k, scales, x);
    KL_CHECK_LAUNCH();
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

void kl_fp8_quantize_1x128(const float *x, int m, int k, uint8_t *q, float *sa, cudaStream_t s) {
    CUDA_CHECK(cudaMemsetAsync(sa, 0, kl_fp8_sa_count(m, k) * sizeof(float), s));   // each column's padding
    quantize_blocks<false>(x, m, k, q, sa, s);
}

void kl_fp8_quantize_128x128(const float *x, int n, int k, uint8_t *q, float *sb, cudaStream_t s) {
    CUDA_CHECK(cudaMemsetAsync(sb, 0, kl_fp8_sb_count(n, k) * sizeof(float), s));   // each row's padding
    quantize_blocks<true>(x, n, k, q, sb, s);
}

void kl_fp8_dequantize_1x128(const uint8_t *q, int m, int k, const float *sa, float *x, cudaStream_t s) {
    dequantize_blocks<false>(q, m, k, sa, x, s);
}

void kl_fp8_dequantize_128x128(const uint8_t *q, int n, int k, const float *sb, float *x, cudaStream_t s) {
    dequantize_blocks<true>(q, n, k, sb, x, s);
}

void kl_fp8_scale_blocks(float *x, int rows, int k, int rows_per_block, int e0, cudaStream_t s) {
    kl_scale_blocks_kernel<<<grid_for((size_t)rows * k), 256, 0, s>>>(x, rows, k, rows_per_block, e0);
    KL_CHECK_LAUNCH();
}

}   /* extern "C" */
