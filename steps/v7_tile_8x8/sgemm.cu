/*
 * Step 7 - 8x8 outputs per thread, BM = BN = 128, BK = 8.
 *
 * The kernel is v6's, unchanged: only the tile parameters move (diff the
 * two files).  Each of 256 threads now computes TM x TN = 8x8 outputs, so
 * the block tile grows to 128x128, and BK shrinks to 8 to keep the two
 * tiles at 8 KB of shared memory.
 *
 * Napkin math: per k, a thread loads TM + TN = 16 floats (4 LDS.128) and
 * does TM*TN = 64 FMAs, so shared-memory bytes per FLOP halve again
 * (v6: 8 floats for 16 FMAs = 1 byte per FLOP; v7: 16 floats for 64 FMAs =
 * 0.5 byte per FLOP).  The 64 accumulators cost registers (about 110 per
 * thread, `make regs STEP=7`), so at most 2 blocks of 256 threads fit on an
 * SM (65536 registers): 16 warps instead of v6's 40.  Fewer warps means less
 * latency hidden by switching, and more has to come from the independent
 * FMAs inside each thread: 64 per k instead of 16.  Global traffic per
 * FLOP halves too: every copied element is used 128 times instead of 64.
 *
 * Build and run:   make step7 && ./step7            (sizes 1024..8192)
 *                  make step7 DEFS="-DBM=64 -DBN=128"   (a sweep point)
 */
#include "kl.h"

#ifndef BM
#define BM 128
#endif
#ifndef BN
#define BN 128
#endif
#ifndef BK
#define BK 8
#endif
#ifndef TM
#define TM 8    // outputs per thread down a column of C
#endif
#ifndef TN
#define TN 8    // outputs per thread along a row of C
#endif
#ifndef APAD
#define APAD 4
#endif
#define NUM_THREADS ((BM / TM) * (BN / TN))
static_assert(BM % TM == 0 && BN % TN == 0 && TM % 4 == 0 && TN % 4 == 0, "thread tiles of float4s");
static_assert(BK % 4 == 0 && BN % 4 == 0 && APAD % 4 == 0, "float4 rows of tiles");
static_assert(NUM_THREADS % 32 == 0 && NUM_THREADS <= 1024, "whole warps, at most 1024 threads");
static_assert(NUM_THREADS % (BK / 4) == 0 && (BM * BK / 4) % NUM_THREADS == 0, "the A tile copy must split evenly");
static_assert(NUM_THREADS % (BN / 4) == 0 && (BK * BN / 4) % NUM_THREADS == 0, "the B tile copy must split evenly");
static_assert((BK * (BM + APAD) + BK * BN) * 4 <= 48 * 1024, "static shared memory is limited to 48 KB");

template <bool CHECKED>
__device__ __forceinline__ float4 load4(const float *p, int r, int c, int rows, int cols, int ld) {
    if constexpr (!CHECKED) {
        return *reinterpret_cast<const float4 *>(p + (size_t)r * ld + c);
    } else {
        float4 v = make_float4(0.f, 0.f, 0.f, 0.f);
        if (r < rows) {
            const float *q = p + (size_t)r * ld + c;
            if (c + 0 < cols) v.x = q[0];
            if (c + 1 < cols) v.y = q[1];
            if (c + 2 < cols) v.z = q[2];
            if (c + 3 < cols) v.w = q[3];
        }
        return v;
    }
}

// C(r, c..c+3) = alpha * v + beta * C(r, c..c+3).  beta == 0: C is not read.
template <bool CHECKED>
__device__ __forceinline__ void store4(float *p, int r, int c, int rows, int cols, int ld,
                                       float4 v, float alpha, float beta) {
    float *q = p + (size_t)r * ld + c;
    v = make_float4(alpha * v.x, alpha * v.y, alpha * v.z, alpha * v.w);
    if constexpr (!CHECKED) {
        if (beta != 0.0f) {
            const float4 o = *reinterpret_cast<const float4 *>(q);
            v.x += beta * o.x; v.y += beta * o.y; v.z += beta * o.z; v.w += beta * o.w;
        }
        *reinterpret_cast<float4 *>(q) = v;
    } else {
        const float w[4] = {v.x, v.y, v.z, v.w};
        if (r < rows)
            for (int j = 0; j < 4; ++j)
                if (c + j < cols) q[j] = beta == 0.0f ? w[j] : w[j] + beta * q[j];
    }
}

template <bool CHECKED>
__global__ void __launch_bounds__(NUM_THREADS)
sgemm_tile2d(int M, int N, int K, float alpha, const float *A,
             const float *B, float beta, float *C) {
    __shared__ __align__(16) float As[BK][BM + APAD];   // transposed: As[k][m]; 8*132*4 = 4.1 KB
    __shared__ __align__(16) float Bs[BK][BN];          // 8*128*4 = 4 KB

    // BN/TN threads side by side cover a row of the block tile.
    const int threadCol = threadIdx.x % (BN / TN), threadRow = threadIdx.x / (BN / TN);
    const int loadRowA = threadIdx.x / (BK / 4), loadColA = threadIdx.x % (BK / 4) * 4;
    const int loadRowB = threadIdx.x / (BN / 4), loadColB = threadIdx.x % (BN / 4) * 4;
    constexpr int strideA = NUM_THREADS / (BK / 4), strideB = NUM_THREADS / (BN / 4);
    const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;

    A += (size_t)row0 * K;
    B += col0;
    const int rowsA = M - row0, colsB = N - col0;

    float acc[TM][TN] = {};     // TM*TN accumulators: registers, indexed by constants only
    float regM[TM], regN[TN];   // the column of A and the row of B for one k
    for (int k0 = 0; k0 < K; k0 += BK) {
        const int colsA = K - k0;
#pragma unroll
        for (int r = loadRowA; r < BM; r += strideA) {
            const float4 a = load4<CHECKED>(A, r, loadColA, rowsA, colsA, K);
            As[loadColA + 0][r] = a.x;
            As[loadColA + 1][r] = a.y;
            As[loadColA + 2][r] = a.z;
            As[loadColA + 3][r] = a.w;
        }
#pragma unroll
        for (int r = loadRowB; r < BK; r += strideB)
            *reinterpret_cast<float4 *>(&Bs[r][loadColB]) = load4<CHECKED>(B, r, loadColB, colsA, colsB, N);
        __syncthreads();
        A += BK;
        B += (size_t)BK * N;

#pragma unroll
        for (int k = 0; k < BK; ++k) {
#pragma unroll
            for (int i = 0; i < TM; i += 4)
                *reinterpret_cast<float4 *>(&regM[i]) = *reinterpret_cast<const float4 *>(&As[k][threadRow * TM + i]);
#pragma unroll
            for (int j = 0; j < TN; j += 4)
                *reinterpret_cast<float4 *>(&regN[j]) = *reinterpret_cast<const float4 *>(&Bs[k][threadCol * TN + j]);
#pragma unroll
            for (int i = 0; i < TM; ++i)        // outer product: TM*TN FMAs
#pragma unroll
                for (int j = 0; j < TN; ++j)    // for TM/4 + TN/4 loads
                    acc[i][j] += regM[i] * regN[j];
        }
        __syncthreads();
    }

    // A thread's row of TN outputs is contiguous in C: float4 stores.
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; j += 4)
            store4<CHECKED>(C + (size_t)row0 * N + col0, threadRow * TM + i, threadCol * TN + j,
                            M - row0, colsB, N,
                            make_float4(acc[i][j], acc[i][j + 1], acc[i][j + 2], acc[i][j + 3]), alpha, beta);
}

static bool aligned16(const void *p) { return ((uintptr_t)p & 15) == 0; }

static void launch(int M, int N, int K, float alpha, const float *A, const float *B,
                   float beta, float *C, void *ctx, cudaStream_t stream) {
    (void)ctx;
    dim3 grid((N + BN - 1) / BN, (M + BM - 1) / BM);
    const bool fast = M % BM == 0 && N % BN == 0 && K % BK == 0 &&
                      aligned16(A) && aligned16(B) && aligned16(C);
    if (fast)
        sgemm_tile2d<false><<<grid, NUM_THREADS, 0, stream>>>(M, N, K, alpha, A, B, beta, C);
    else
        sgemm_tile2d<true><<<grid, NUM_THREADS, 0, stream>>>(M, N, K, alpha, A, B, beta, C);
    KL_CHECK_LAUNCH();
}

int main(int argc, char **argv) {
    kl_step step = {};
    step.number = 7;
    step.title = "8x8 per thread, 128x128x8 block tile";
    step.kernels[0].op = &kl_op_sgemm;
    step.kernels[0].sgemm = launch;
    return kl_main(argc, argv, &step);
}
