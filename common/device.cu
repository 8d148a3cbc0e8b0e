/*
 * device.cu - the harness's own GPU work: random inputs, poisoning, fp16
 * conversion and the streaming-read bandwidth ceiling.  Kernel names start
 * with kl_ so profiling targets can skip them (make profile).
 */
#include "op.h"

#include <cuda_fp16.h>

/* splitmix64: a counter-based generator, so element i gets the same value
 * whatever the launch shape or GPU. */
__device__ __forceinline__ float kl_uniform(uint64_t seed, size_t i, float lo, float hi) {
    uint64_t z = seed + 0x9E3779B97F4A7C15ull * (uint64_t)(i + 1);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    const float u = (float)(z >> 40) * (1.0f / 16777216.0f);   /* 24 bits: [0, 1) */
    return lo + (hi - lo) * u;
}

__global__ void kl_fill_f32_kernel(float *d, size_t n, float lo, float hi, uint64_t seed) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        d[i] = kl_uniform(seed, i, lo, hi);
}
__global__ void kl_fill_f16_kernel(__half *d, size_t n, float lo, float hi, uint64_t seed) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        d[i] = __float2half_rn(kl_uniform(seed, i, lo, hi));
}
__global__ void kl_f16_to_f32_kernel(const __half *in, float *out, size_t n) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        out[i] = __half2float(in[i]);
}
__global__ void kl_f32_to_f16_kernel(const float *in, __half *out, size_t n) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        out[i] = __float2half_rn(in[i]);
}

static unsigned grid_for(size_t n) {
    const size_t blocks = (n + 255) / 256;
    return (unsigned)(blocks < 65536 ? (blocks ? blocks : 1) : 65536);
}

extern "C" {

void kl_fill_uniform_f32(float *d, size_t n, float lo, float hi, uint64_t seed, cudaStream_t s) {
    kl_fill_f32_kernel<<<grid_for(n), 256, 0, s>>>(d, n, lo, hi, seed);
    KL_CHECK_LAUNCH();
}
void kl_fill_uniform_f16(kl_f16 *d, size_t n, float lo, float hi, uint64_t seed, cudaStream_t s) {
    kl_fill_f16_kernel<<<grid_for(n), 256, 0, s>>>((__half *)d, n, lo, hi, seed);
    KL_CHECK_LAUNCH();
}
void kl_f16_to_f32(const kl_f16 *in, float *out, size_t n, cudaStream_t s) {
    kl_f16_to_f32_kernel<<<grid_for(n), 256, 0, s>>>((const __half *)in, out, n);
    KL_CHECK_LAUNCH();
}
void kl_f32_to_f16(const float *in, kl_f16 *out, size_t n, cudaStream_t s) {
    kl_f32_to_f16_kernel<<<grid_for(n), 256, 0, s>>>(in, (__half *)out, n);
    KL_CHECK_LAUNCH();
}
void kl_poison(void *d, size_t bytes, cudaStream_t s) {
    CUDA_CHECK(cudaMemsetAsync(d, 0xFF, bytes, s));   /* all ones: NaN in fp32 and fp16 */
}

} /* extern "C" */

/* Read-only stream: 16-byte loads, 8 of them in flight per thread, a full
 * SM of threads (2048), so there are always ~4 MB of loads outstanding on the
 * chip, more than HBM's latency-bandwidth product.  The sum is stored only if
 * it equals an impossible value, so the compiler keeps the loads and almost
 * nothing is written. */
#define KL_STREAM_UNROLL 8
__global__ void kl_read_stream_kernel(const float4 *p, size_t n4, float *sink) {
    float acc = 0.0f;
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    for (; i + (KL_STREAM_UNROLL - 1) * stride < n4; i += KL_STREAM_UNROLL * stride) {
        float4 v[KL_STREAM_UNROLL];
#pragma unroll
        for (int u = 0; u < KL_STREAM_UNROLL; ++u) v[u] = __ldcs(p + i + u * stride);
#pragma unroll
        for (int u = 0; u < KL_STREAM_UNROLL; ++u) acc += (v[u].x + v[u].y) + (v[u].z + v[u].w);
    }
    for (; i < n4; i += stride) {
        const float4 a = __ldcs(p + i);
        acc += a.x + a.y + a.z + a.w;
    }
    if (acc == -1.2345e38f) *sink = acc;
}

extern "C" double kl_read_bandwidth_gbps(const kl_env *env) {
    static double cached = 0.0;
    if (cached > 0.0) return cached;
    size_t free_b = 0, total_b = 0;
    CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
    /* Far larger than L2, small enough to leave room for the problem. */
    size_t bytes = (size_t)1 << 30;
    while (bytes > ((size_t)64 << 20) && bytes > free_b / 4) bytes /= 2;
    const size_t n4 = bytes / 16;
    float4 *buf = (float4 *)kl_dmalloc(bytes);
    float *sink = (float *)kl_dmalloc(sizeof(float));
    kl_fill_uniform_f32((float *)buf, n4 * 4, 0.0f, 1.0f, 1, env->stream);
    const int blocks = env->sms * 4, threads = 512;   /* 2048 threads per SM */
    cudaEvent_t a, b;
    CUDA_CHECK(cudaEventCreate(&a));
    CUDA_CHECK(cudaEventCreate(&b));
    double t[11];
    for (int r = 0; r < 12; ++r) {   /* the first run is a warm-up */
        CUDA_CHECK(cudaEventRecord(a, env->stream));
        kl_read_stream_kernel<<<blocks, threads, 0, env->stream>>>(buf, n4, sink);
        KL_CHECK_LAUNCH();
        CUDA_CHECK(cudaEventRecord(b, env->stream));
        CUDA_CHECK(cudaEventSynchronize(b));
        float ms = 0.0f;
        CUDA_CHECK(cudaEventElapsedTime(&ms, a, b));
        if (r) t[r - 1] = ms;
    }
    cached = (double)bytes / (kl_median(t, 11) * 1e-3) / 1e9;
    CUDA_CHECK(cudaEventDestroy(a));
    CUDA_CHECK(cudaEventDestroy(b));
    CUDA_CHECK(cudaFree(buf));
    CUDA_CHECK(cudaFree(sink));
    return cached;
}
