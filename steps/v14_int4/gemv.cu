/*
 * Step 14 - packed int4 weights, a scale and a zero per group of 128 columns.
 *
 * Half the bytes of int8 again.  Format (common/quant.h): row r is K/2 bytes;
 * byte j holds column 2j in bits 0-3 and column 2j+1 in bits 4-7; columns
 * [128g, 128g+128) share the fp16 scale s[r][g] and zero z[r][g];
 * w = (q - z) * s.  Scales and zeros add 4 bytes per 128 weights (6%).
 *
 * What changes from step 13:
 *  - a 16-byte load brings 32 weights (a quarter of a group: one scale and
 *    one zero per load), and needs 64 bytes of x: here ROWS = 2 rows per
 *    thread share each x load and its conversion (the sweep in the doc).
 *  - unpacking: lo = word & 0x0F0F0F0F holds the even columns of a word in its
 *    four bytes, hi = (word >> 4) & 0x0F0F0F0F the odd ones; then the same
 *    __byte_perm trick as step 13 makes 2^23 + q, and subtracting 2^23 + z
 *    leaves q - z exactly.  The scale multiplies the group's partial sum
 *    once per 32 weights.
 *  - a register double buffer: the next chunk's weights, scales and zeros are
 *    loaded before this chunk's arithmetic, so the loads overlap the math.
 *
 * Napkin math: at 16384^2 the weights are 128 MiB + 8 MiB of scales and
 * zeros: 47 us at ~3050 GB/s, 4x faster than cuBLAS fp16 (~187 us) at best.
 * Now arithmetic is the limit: the profiler counts ~5.6 instructions per
 * weight (PRMT, FADD, FFMA, plus unpacking, x conversion, addresses), which
 * is ~45 us of issue at 16384^2 on 132 SMs: as long as the memory time.  The
 * doc measures this and shows where the instructions go.
 *
 * K must be a multiple of 128 (whole groups; rows 64-byte aligned).
 *
 * Build and run:   make step14 && ./step14
 *                  ./step14 -n 1000 -k 1024 --check-only
 */
#include "kl.h"
#include "quant.h"

#include <cuda_fp16.h>

#ifndef ROWS
#define ROWS 2      // rows per thread: x reuse
#endif
#ifndef TPR
#define TPR 64      // threads per row set (a power of two)
#endif
#ifndef RSETS
#define RSETS 2     // row sets per block: the block is TPR x RSETS threads and covers RSETS*ROWS rows
#endif
static_assert(ROWS >= 1 && ROWS <= 8, "registers: 2*ROWS uint4 live (double buffer)");
static_assert((TPR & (TPR - 1)) == 0 && TPR * RSETS <= 1024 && RSETS >= 1, "TPR a power of two, at most 1024 threads");
static_assert(KL_INT4_GROUP == 128, "a 16-byte load (32 weights) is a quarter of a group");

__device__ __forceinline__ void row_sums(float (&acc)[ROWS]) {
#pragma unroll
    for (int j = 0; j < ROWS; ++j)
        for (int off = (TPR < 32 ? TPR : 32) / 2; off > 0; off /= 2)
            acc[j] += __shfl_xor_sync(0xffffffffu, acc[j], off);
    if (TPR > 32) {
        __shared__ float partial[ROWS][32];
        const int wpr = TPR / 32, tid = threadIdx.x;
#pragma unroll
        for (int j = 0; j < ROWS; ++j)
            if (tid % 32 == 0) partial[j][threadIdx.y * wpr + tid / 32] = acc[j];
        __syncthreads();
#pragma unroll
        for (int j = 0; j < ROWS; ++j) {
            acc[j] = tid < wpr ? partial[j][threadIdx.y * wpr + tid] : 0.0f;
            for (int off = 16; off > 0; off /= 2) acc[j] += __shfl_xor_sync(0xffffffffu, acc[j], off);
        }
    }
}

__device__ __forceinline__ float byte_magic(uint32_t word, int t) {
    return __uint_as_float(__byte_perm(word, 0x4B000000u, 0x7540 | t));
}

__global__ void __launch_bounds__(TPR * RSETS)
qgemv_int4(int N, int K, const uint8_t *__restrict__ W, const __half *__restrict__ scale,
           const __half *__restrict__ zero, const __half *__restrict__ x, __half *__restrict__ y) {
    const int row0 = (blockIdx.x * RSETS + threadIdx.y) * ROWS;
    const int K32 = K / 32, G = K / KL_INT4_GROUP;   // 16-byte chunks and groups per row
    const uint4 *w[ROWS];
    const __half *sr[ROWS], *zr[ROWS];
    float acc[ROWS];
#pragma unroll
    for (int j = 0; j < ROWS; ++j) {
        const int r = min(row0 + j, N - 1);      // rows past N re-read row N-1, never stored
        w[j] = reinterpret_cast<const uint4 *>(W + (size_t)r * (K / 2));
        sr[j] = scale + (size_t)r * G;
        zr[j] = zero + (size_t)r * G;
        acc[j] = 0.0f;
    }
    const float4 *x4 = reinterpret_cast<const float4 *>(x);

    // Register double buffer: chunk c+TPR is loaded (weights, scales, zeros)
    // before chunk c is computed, so every warp has a load in flight while it
    // does its ~110 instructions of arithmetic per 32 weights and row.
    uint4 cur[ROWS], nxt[ROWS];
    __half2 csz[ROWS], nsz[ROWS];                // (scale, zero) of the chunk's group
    auto load = [&](int c, uint4 (&wv)[ROWS], __half2 (&sz)[ROWS]) {
#pragma unroll
        for (int j = 0; j < ROWS; ++j) {
            wv[j] = __ldcs(w[j] + c);
            sz[j] = __halves2half2(sr[j][c / 4], zr[j][c / 4]);   // 4 chunks per group of 128
        }
    };
    int c = threadIdx.x;
    if (c < K32) load(c, cur, csz);
    for (; c < K32; c += TPR) {
        if (c + TPR < K32) load(c + TPR, nxt, nsz);  // in flight during the math below
        float g[ROWS];                           // this chunk's sum of x * (q - z), per row
        float zm[ROWS];
#pragma unroll
        for (int j = 0; j < ROWS; ++j) {
            g[j] = 0.0f;
            zm[j] = 8388608.0f + __high2float(csz[j]);   // 2^23 + z
        }
#pragma unroll
        for (int b = 0; b < 4; ++b) {            // word b: columns 8b .. 8b+7 of the chunk
            const float4 xq = __ldg(x4 + 4 * c + b);
            const __half2 *xh = reinterpret_cast<const __half2 *>(&xq);
            float2 xf[4];
#pragma unroll
            for (int t = 0; t < 4; ++t) xf[t] = __half22float2(xh[t]);   // columns 2t, 2t+1
#pragma unroll
            for (int j = 0; j < ROWS; ++j) {
                const uint32_t word = b == 0 ? cur[j].x : b == 1 ? cur[j].y : b == 2 ? cur[j].z : cur[j].w;
                const uint32_t lo = word & 0x0F0F0F0Fu, hi = (word >> 4) & 0x0F0F0F0Fu;
#pragma unroll
                for (int t = 0; t < 4; ++t) {      // byte t: column 2t (low nibble), 2t+1 (high)
                    g[j] = fmaf(xf[t].x, byte_magic(lo, t) - zm[j], g[j]);
                    g[j] = fmaf(xf[t].y, byte_magic(hi, t) - zm[j], g[j]);
                }
            }
        }
#pragma unroll
        for (int j = 0; j < ROWS; ++j) {
            acc[j] = fmaf(__low2float(csz[j]), g[j], acc[j]);   // the scale, once per 32 weights
            cur[j] = nxt[j];
            csz[j] = nsz[j];
        }
    }
    row_sums(acc);
#pragma unroll
    for (int j = 0; j < ROWS; ++j)
        if (threadIdx.x == 0 && row0 + j < N) y[row0 + j] = __float2half(acc[j]);
}

static void launch(const kl_gemv_args *a, void *ctx, cudaStream_t stream) {
    (void)ctx;
    const int rows_per_block = RSETS * ROWS;
    const int grid = (a->n + rows_per_block - 1) / rows_per_block;
    qgemv_int4<<<grid, dim3(TPR, RSETS), 0, stream>>>(a->n, a->k, (const uint8_t *)a->w, (const __half *)a->scales,
                                                 (const __half *)a->zeros, (const __half *)a->x, (__half *)a->y);
    KL_CHECK_LAUNCH();
}

static int accepts(const kl_problem *p, char *msg, size_t len) {
    if (p->k % KL_INT4_GROUP) {
        snprintf(msg, len, "K=%d is not a multiple of 128 (the int4 group size); pick K = %d", p->k,
                 (p->k + 127) / 128 * 128);
        return 1;
    }
    return 0;
}

int main(int argc, char **argv) {
    kl_step step = {};
    step.number = 14;
    step.title = "packed int4 weights, group-wise scale and zero (128), 32 weights per 16-byte load";
    step.accepts = accepts;
    step.kernels[0].op = &kl_op_qgemv_int4;
    step.kernels[0].gemv = launch;
    return kl_main(argc, argv, &step);
}
