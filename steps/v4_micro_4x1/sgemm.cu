/*
 * Step 4 - register micro-kernel 4x1: each thread computes 4 outputs.
 *
 * The block still owns a 32x32 tile of C, but with 256 threads instead of
 * 1024: thread t computes a column of TM = 4 outputs, rows threadRow*4 ..
 * threadRow*4+3 of column threadCol.  For every k it loads ONE value of B
 * into a register and reuses it for its 4 outputs.
 *
 * Napkin math (per k, per thread): v3 did 1 FMA for 2 shared-memory loads.
 * Here: 1 load of B + 4 loads of A (a broadcast: the whole warp shares
 * threadRow) for 4 FMAs, 1.25 loads per FMA instead of 2.  And each warp
 * now covers 32 columns x 4 rows, so the global copy and the C store are
 * coalesced along threadIdx.x (threadCol follows it, unlike v1-v3).  Fewer
 * threads per output also means fewer instructions that are not FMAs:
 * index math, loop counters and the two __syncthreads are paid once per 4
 * outputs.
 *
 * Build and run:   make step4 && ./step4            (sizes 1024..8192)
 *                  make step4 DEFS="-DBM=64 -DBN=64 -DBK=8 -DTM=8"   (a sweep point)
 */
#include "kl.h"

#ifndef BM
#define BM 32   // rows of C per block
#endif
#ifndef BN
#define BN 32   // columns of C per block
#endif
#ifndef BK
#define BK 32   // depth of the A tile (BM x BK) and the B tile (BK x BN)
#endif
#ifndef TM
#define TM 4    // outputs per thread, down a column of C
#endif
#ifndef APAD
#define APAD 1  // pad each row of the transposed As (see v3)
#endif
#define NUM_THREADS (BM * BN / TM)
static_assert(BM % TM == 0, "a thread's TM rows must tile BM");
static_assert(NUM_THREADS % 32 == 0 && NUM_THREADS <= 1024, "whole warps, at most 1024 threads");
static_assert(NUM_THREADS % BK == 0 && (BM * BK) % NUM_THREADS == 0, "the A tile copy must split evenly");
static_assert(NUM_THREADS % BN == 0 && (BK * BN) % NUM_THREADS == 0, "the B tile copy must split evenly");
static_assert((BK * (BM + APAD) + BK * BN) * 4 <= 48 * 1024, "static shared memory is limited to 48 KB");

__global__ void __launch_bounds__(NUM_THREADS)
sgemm_micro_4x1(int M, int N, int K, float alpha, const float *A,
                const float *B, float beta, float *C) {
    __shared__ float As[BK][BM + APAD];   // transposed: As[k][m]; 32*33*4 = 4.1 KB
    __shared__ float Bs[BK][BN];          // 32*32*4 = 4 KB

    // threadCol follows threadIdx.x: a warp covers 32 columns of one row
    // group, so its Bs reads are consecutive and its As reads a broadcast.
    const int threadCol = threadIdx.x % BN, threadRow = threadIdx.x / BN;
    // The copy: NUM_THREADS threads copy a tile in passes of NUM_THREADS/BK
    // rows of A (NUM_THREADS/BN rows of B), consecutive threads along a row.
    const int loadRowA = threadIdx.x / BK, loadColA = threadIdx.x % BK;
    const int loadRowB = threadIdx.x / BN, loadColB = threadIdx.x % BN;
    constexpr int strideA = NUM_THREADS / BK, strideB = NUM_THREADS / BN;
    const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;

    A += (size_t)row0 * K;
    B += col0;
    const int rowsA = M - row0, colsB = N - col0;

    float acc[TM] = {};   // the thread's outputs live in registers
    for (int k0 = 0; k0 < K; k0 += BK) {
        const int colsA = K - k0;
        for (int r = loadRowA; r < BM; r += strideA)
            As[loadColA][r] = (r < rowsA && loadColA < colsA) ? A[(size_t)r * K + loadColA] : 0.0f;
        for (int r = loadRowB; r < BK; r += strideB)
            Bs[r][loadColB] = (r < colsA && loadColB < colsB) ? B[(size_t)r * N + loadColB] : 0.0f;
        __syncthreads();
        A += BK;
        B += (size_t)BK * N;

        for (int k = 0; k < BK; ++k) {
            const float b = Bs[k][threadCol];   // one load, reused TM times
#pragma unroll
            for (int i = 0; i < TM; ++i)
                acc[i] += As[k][threadRow * TM + i] * b;
        }
        __syncthreads();
    }

    const int col = col0 + threadCol;
#pragma unroll
    for (int i = 0; i < TM; ++i) {
        const int row = row0 + threadRow * TM + i;
        if (row < M && col < N) {
            float *c = &C[(size_t)row * N + col];
            *c = beta == 0.0f ? alpha * acc[i] : alpha * acc[i] + beta * *c;   // beta == 0: C not read
        }
    }
}

static void launch(int M, int N, int K, float alpha, const float *A, const float *B,
                   float beta, float *C, void *ctx, cudaStream_t stream) {
    (void)ctx;
    dim3 grid((N + BN - 1) / BN, (M + BM - 1) / BM);
    sgemm_micro_4x1<<<grid, NUM_THREADS, 0, stream>>>(M, N, K, alpha, A, B, beta, C);
    KL_CHECK_LAUNCH();
}

int main(int argc, char **argv) {
    kl_step step = {};
    step.number = 4;
    step.title = "register micro-kernel 4x1, 256 threads";
    step.kernels[0].op = &kl_op_sgemm;
    step.kernels[0].sgemm = launch;
    return kl_main(argc, argv, &step);
}
