/*
 * Step 8 - warp tiling: each warp computes a compact WM x WN sub-tile.
 *
 * Same 128x128 block tile and 8x8 outputs per thread as v7.  What changes
 * is WHICH 64 outputs a thread owns.  In v7, thread t owned the 8x8 square
 * at (t / 16, t % 16) * 8: a warp spanned 2 rows of 16 squares, and its Bs
 * reads were float4s 32 bytes apart (bank conflicts).  Here the 8 warps
 * split the block tile into WM x WN = 64x32 pieces, the 32 lanes of a warp
 * form an 8x4 grid, and each lane owns 2x2 float4 pieces spread WM/2 and
 * WN/2 apart:
 *
 *   rows  warpRow*WM + im*32 + threadRow*4 + (0..3),  im = 0, 1
 *   cols  warpCol*WN + jn*16 + threadCol*4 + (0..3),  jn = 0, 1
 *
 * Napkin math, shared memory per k for one warp: each LDS.128 now reads 8
 * (A) or 4 (B) CONSECUTIVE float4s, each shared by several lanes: no two
 * lanes ask one bank for different words, so no conflicts, and the warp
 * needs 128 + 64 distinct bytes per k instead of v7's 64 + 512.  BK goes
 * to 16 (the tuning sweep's pick): half the barriers per FMA.
 *
 * Build and run:   make step8 && ./step8            (sizes 1024..8192)
 *                  make step8 DEFS="-DWM=32 -DWN=64 -DBK=8"   (a sweep point)
 */
#include "kl.h"

#ifndef BM
#define BM 128
#endif
#ifndef BN
#define BN 128
#endif
#ifndef BK
#define BK 16
#endif
#ifndef TM
#define TM 8    // outputs per thread down a column of C
#endif
#ifndef TN
#define TN 8    // outputs per thread along a row of C
#endif
#ifndef WM
#define WM 64   // rows of C per warp
#endif
#ifndef WN
#define WN 32   // columns of C per warp
#endif
#ifndef APAD
#define APAD 4
#endif
#define NUM_THREADS ((BM / WM) * (BN / WN) * 32)
#define WTM (WM / TM)         // lanes down a warp tile
#define WTN (WN / TN)         // lanes across a warp tile
#define WSUBM (WM / (TM / 4)) // distance between a lane's float4 pieces, rows
#define WSUBN (WN / (TN / 4)) // and columns
static_assert(BM % WM == 0 && BN % WN == 0, "warp tiles tile the block tile");
static_assert(WM % TM == 0 && WN % TN == 0 && WTM * WTN == 32, "32 lanes tile a warp tile");
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
sgemm_warptile(int M, int N, int K, float alpha, const float *A,
             const float *B, float beta, float *C) {
    __shared__ __align__(16) float As[BK][BM + APAD];   // transposed: As[k][m]; 16*132*4 = 8.4 KB
    __shared__ __align__(16) float Bs[BK][BN];          // 16*128*4 = 8 KB

    // Which warp tile, and where the lane sits in the warp's WTM x WTN grid.
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int warpRow = warp / (BN / WN), warpCol = warp % (BN / WN);
    const int threadRow = lane / WTN, threadCol = lane % WTN;
    const int rowA = warpRow * WM + threadRow * 4;   // first row of the lane's pieces
    const int colB = warpCol * WN + threadCol * 4;   // first column
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
            for (int i = 0; i < TM / 4; ++i)   // lanes of a row share these: broadcast
                *reinterpret_cast<float4 *>(&regM[i * 4]) = *reinterpret_cast<const float4 *>(&As[k][rowA + i * WSUBM]);
#pragma unroll
            for (int j = 0; j < TN / 4; ++j)   // WTN lanes read WTN consecutive float4s
                *reinterpret_cast<float4 *>(&regN[j * 4]) = *reinterpret_cast<const float4 *>(&Bs[k][colB + j * WSUBN]);
#pragma unroll
            for (int i = 0; i < TM; ++i)        // outer product: TM*TN FMAs
#pragma unroll
                for (int j = 0; j < TN; ++j)    // for TM/4 + TN/4 loads
                    acc[i][j] += regM[i] * regN[j];
        }
        __syncthreads();
    }

    // acc[i][j] is row rowA + (i/4)*WSUBM + i%4, columns colB + (j/4)*WSUBN + 0..3.
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; j += 4)
            store4<CHECKED>(C + (size_t)row0 * N + col0, rowA + (i / 4) * WSUBM + i % 4, colB + (j / 4) * WSUBN,
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
        sgemm_warptile<false><<<grid, NUM_THREADS, 0, stream>>>(M, N, K, alpha, A, B, beta, C);
    else
        sgemm_warptile<true><<<grid, NUM_THREADS, 0, stream>>>(M, N, K, alpha, A, B, beta, C);
    KL_CHECK_LAUNCH();
}

int main(int argc, char **argv) {
    kl_step step = {};
    step.number = 8;
    step.title = "warp tiling: a warp computes a compact 64x32 sub-tile";
    step.kernels[0].op = &kl_op_sgemm;
    step.kernels[0].sgemm = launch;
    return kl_main(argc, argv, &step);
}
