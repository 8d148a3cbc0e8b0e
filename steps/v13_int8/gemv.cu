/*
 * Step 13 - int8 weights with a scale and a zero point per row, fp16 x.
 *
 * GEMV time is weight bytes over bandwidth, so storing weights in 1 byte
 * instead of 2 halves the time, whatever the arithmetic costs, as long as the
 * arithmetic stays hidden under the loads.  Format (common/quant.h): q is
 * uint8 [N][K]; row r has an fp16 scale s[r] and zero z[r]; w = (q - z) * s.
 *
 * What changes from step 12:
 *  - a 16-byte load now brings 16 weights, which need 32 bytes of x (two
 *    float4): x bytes per weight byte double.  ROWS rows per thread would
 *    load and convert x once for ROWS rows; on the H100 ROWS = 1 wins anyway
 *    (the sweep in the doc: ROWS = 2 halves the warps and loses 10%).
 *  - the scale is pulled out of the sum: y = s * sum_k x_k (q_k - z), one
 *    multiply per row instead of one per weight.
 *  - uint8 -> float without a conversion instruction: __byte_perm puts the
 *    byte under the exponent of 2^23 (0x4B0000qq is the float 2^23 + q), and
 *    subtracting 2^23 + z leaves q - z exactly.  One PRMT, one FADD and one
 *    FFMA per weight; I2F would be a quarter-rate instruction.
 *  - TPR = 64 threads per row (two warps, the shared-memory second stage of
 *    step 11) and UNROLL = 4: each thread has 4 x 16 bytes of weights in flight.
 *
 * Napkin math: at 16384^2 the weights are 256 MiB (fp16 took 512): at the
 * ~3050 GB/s read ceiling that is 88 us, ~2.1x faster than cuBLAS fp16's
 * ~187 us.  Arithmetic: 268 M weights x 3 instructions over 132 SMs x 128
 * lanes x 1.98 GHz is ~24 us of issue, well under the 88 us of memory time.
 *
 * K must be a multiple of 16 (16 weights per 16-byte load, rows 16-byte
 * aligned).
 *
 * Build and run:   make step13 && ./step13
 *                  ./step13 -n 1000 -k 1008 --check-only
 */
#include "kl.h"

#include <cuda_fp16.h>

#ifndef ROWS
#define ROWS 1      // rows per thread (x reuse); the sweep in the doc: 1 wins on the H100
#endif
#ifndef UNROLL
#define UNROLL 4    // 16-byte weight loads in flight per row per thread
#endif
#ifndef TPR
#define TPR 64      // threads per row set (a power of two)
#endif
#ifndef RSETS
#define RSETS 2     // row sets per block: the block is TPR x RSETS threads and covers RSETS*ROWS rows
#endif
static_assert(ROWS >= 1 && ROWS <= 8 && UNROLL >= 1 && UNROLL * ROWS <= 16, "registers: UNROLL*ROWS uint4 live");
static_assert((TPR & (TPR - 1)) == 0 && TPR * RSETS <= 1024 && RSETS >= 1, "TPR a power of two, at most 1024 threads");

// Sum each of the ROWS values over the TPR threads of a row set.
__device__ __forceinline__ void row_sums(float (&acc)[ROWS]) {
#pragma unroll
    for (int j = 0; j < ROWS; ++j)
        for (int off = (TPR < 32 ? TPR : 32) / 2; off > 0; off /= 2)
            acc[j] += __shfl_xor_sync(0xffffffffu, acc[j], off);
    if (TPR > 32) {                               // second stage: one partial per warp
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

// 2^23 + q as a float, from byte t of a word: one PRMT.
__device__ __forceinline__ float byte_magic(uint32_t word, int t) {
    return __uint_as_float(__byte_perm(word, 0x4B000000u, 0x7540 | t));
}

__global__ void __launch_bounds__(TPR * RSETS)
qgemv_int8(int N, int K, const uint8_t *__restrict__ W, const __half *__restrict__ scale,
           const __half *__restrict__ zero, const __half *__restrict__ x, __half *__restrict__ y) {
    const int row0 = (blockIdx.x * RSETS + threadIdx.y) * ROWS, K16 = K / 16;
    const uint4 *w[ROWS];
    float zmagic[ROWS], acc[ROWS];
#pragma unroll
    for (int j = 0; j < ROWS; ++j) {
        // Rows past N re-read row N-1 (no branch in the loop) and are not stored.
        const int r = min(row0 + j, N - 1);
        w[j] = reinterpret_cast<const uint4 *>(W + (size_t)r * K);
        zmagic[j] = 8388608.0f + __half2float(zero[r]);   // 2^23 + z: exact
        acc[j] = 0.0f;
    }
    const float4 *x4 = reinterpret_cast<const float4 *>(x);

    for (int i = threadIdx.x; i < K16; i += TPR * UNROLL) {
        uint4 wv[UNROLL][ROWS];
        float4 xv[UNROLL][2];
#pragma unroll
        for (int u = 0; u < UNROLL; ++u) {      // loads first; a chunk past the row end reads nothing
            const int c = i + u * TPR;
            const bool in = c < K16;
#pragma unroll
            for (int j = 0; j < ROWS; ++j) wv[u][j] = in ? __ldcs(w[j] + c) : make_uint4(0, 0, 0, 0);
            xv[u][0] = in ? __ldg(x4 + 2 * c) : make_float4(0, 0, 0, 0);   // 0 * (q - z) = 0
            xv[u][1] = in ? __ldg(x4 + 2 * c + 1) : make_float4(0, 0, 0, 0);
        }
#pragma unroll
        for (int u = 0; u < UNROLL; ++u) {
            float xf[16];                       // x converted once, used by ROWS rows
            const __half2 *xh = reinterpret_cast<const __half2 *>(xv[u]);
#pragma unroll
            for (int h = 0; h < 8; ++h) {
                const float2 f = __half22float2(xh[h]);
                xf[2 * h] = f.x;
                xf[2 * h + 1] = f.y;
            }
#pragma unroll
            for (int j = 0; j < ROWS; ++j) {
                const uint32_t words[4] = {wv[u][j].x, wv[u][j].y, wv[u][j].z, wv[u][j].w};
#pragma unroll
                for (int b = 0; b < 4; ++b)
#pragma unroll
                    for (int t = 0; t < 4; ++t)  // byte t of word b is column 4b+t of the chunk
                        acc[j] = fmaf(xf[4 * b + t], byte_magic(words[b], t) - zmagic[j], acc[j]);
            }
        }
    }
    row_sums(acc);
#pragma unroll
    for (int j = 0; j < ROWS; ++j)
        if (threadIdx.x == 0 && row0 + j < N) y[row0 + j] = __float2half(acc[j] * __half2float(scale[row0 + j]));
}

static void launch(const kl_gemv_args *a, void *ctx, cudaStream_t stream) {
    (void)ctx;
    const int rows_per_block = RSETS * ROWS;
    const int grid = (a->n + rows_per_block - 1) / rows_per_block;
    qgemv_int8<<<grid, dim3(TPR, RSETS), 0, stream>>>(a->n, a->k, (const uint8_t *)a->w, (const __half *)a->scales,
                                                 (const __half *)a->zeros, (const __half *)a->x, (__half *)a->y);
    KL_CHECK_LAUNCH();
}

static int accepts(const kl_problem *p, char *msg, size_t len) {
    if (p->k % 16) {
        snprintf(msg, len, "K=%d is not a multiple of 16 (16 int8 weights per 16-byte load, rows 16-byte "
                 "aligned); pick K = %d", p->k, (p->k + 15) / 16 * 16);
        return 1;
    }
    return 0;
}

int main(int argc, char **argv) {
    kl_step step = {};
    step.number = 13;
    step.title = "int8 weights, per-row scale and zero, fp16 x: 16 weights per 16-byte load";
    step.accepts = accepts;
    step.kernels[0].op = &kl_op_qgemv_int8;
    step.kernels[0].gemv = launch;
    return kl_main(argc, argv, &step);
}
