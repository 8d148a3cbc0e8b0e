/*
 * Step 1 - shared-memory tiling: 32x32 tiles of A and B staged in shared memory.
 *
 * C = alpha * A * B + beta * C, row-major, A is M x K, B is K x N.
 * A block of 32x32 threads owns a 32x32 tile of C.  It walks K in steps of
 * BK = 32: the block copies a 32x32 tile of A and one of B into shared
 * memory (one element per thread, coalesced), waits, and every thread then
 * runs 32 multiply-adds out of shared memory.
 *
 * Napkin math: in v0 each of the 2 operands of an FMA came from global
 * memory (through the caches).  Now each element of A that the block copies
 * is used by 32 threads (a whole row of the C tile) and each element of B by
 * 32 threads (a whole column), so global traffic drops 32x: for 4096^3 the
 * tiles move 2 * 4096^3 / 32 * 4 B = 17 GB instead of 550 GB.
 *
 * The catch, on purpose: threadIdx.x runs DOWN a column of the C tile
 * (threadRow = threadIdx.x).  The 32 threads of a warp then read
 * As[0..31][k], 32 floats that are 32 floats apart: all in the same one of
 * shared memory's 32 banks, so the hardware serves them one after another
 * (a 32-way bank conflict).  This step is therefore SLOWER than v0; v3
 * fixes the read order and shows the profiler counter before and after.
 *
 * Build and run:   make step1 && ./step1            (sizes 1024..8192)
 *                  ./step1 -m 1000 -n 7 -k 33 --check-only
 */
#include "kl.h"

#ifndef BLOCK
#define BLOCK 32   // the C tile is BLOCK x BLOCK, and so is the thread block
#endif
#define BM BLOCK   // rows of C per block
#define BN BLOCK   // columns of C per block
#define BK BLOCK   // depth of one A tile (BM x BK) and one B tile (BK x BN)
static_assert(BLOCK * BLOCK <= 1024, "a block has at most 1024 threads");
static_assert(2 * BLOCK * BLOCK * 4 <= 48 * 1024, "static shared memory is limited to 48 KB");

__global__ void sgemm_smem(int M, int N, int K, float alpha, const float *A,
                           const float *B, float beta, float *C) {
    __shared__ float As[BM][BK];   // 32*32*4 = 4 KB
    __shared__ float Bs[BK][BN];   // 32*32*4 = 4 KB

    const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;  // this block's C tile
    // Compute mapping: threadIdx.x follows the ROW of C (see the header).
    const int row = row0 + threadIdx.x, col = col0 + threadIdx.y;

    float acc = 0.0f;
    for (int k0 = 0; k0 < K; k0 += BK) {
        // Copy mapping (independent of the compute mapping): threadIdx.x
        // follows the column, so a warp reads 32 consecutive floats of a row
        // of A and of B (one 128-byte line each).  Outside the matrix we
        // store 0, which adds nothing to the dot product: any M, N, K work.
        const int ar = row0 + threadIdx.y, ac = k0 + threadIdx.x;
        const int br = k0 + threadIdx.y, bc = col0 + threadIdx.x;
        As[threadIdx.y][threadIdx.x] = (ar < M && ac < K) ? A[(size_t)ar * K + ac] : 0.0f;
        Bs[threadIdx.y][threadIdx.x] = (br < K && bc < N) ? B[(size_t)br * N + bc] : 0.0f;
        __syncthreads();   // the tiles are complete before anyone reads them

        // A warp (fixed threadIdx.y, threadIdx.x = 0..31) reads As[0..31][k]:
        // stride 32 floats, one bank, 32-way conflict.  Bs[k][threadIdx.y]
        // is the same address for the whole warp: a broadcast, free.
        for (int k = 0; k < BK; ++k)
            acc += As[threadIdx.x][k] * Bs[k][threadIdx.y];
        __syncthreads();   // everyone is done with the tiles before they are overwritten
    }

    if (row < M && col < N) {
        float *c = &C[(size_t)row * N + col];
        // BLAS semantics: with beta == 0, C is output only and is never read.
        *c = beta == 0.0f ? alpha * acc : alpha * acc + beta * *c;
    }
}

static void launch(int M, int N, int K, float alpha, const float *A, const float *B,
                   float beta, float *C, void *ctx, cudaStream_t stream) {
    (void)ctx;
    dim3 block(BLOCK, BLOCK);
    dim3 grid((N + BN - 1) / BN, (M + BM - 1) / BM);
    sgemm_smem<<<grid, block, 0, stream>>>(M, N, K, alpha, A, B, beta, C);
    KL_CHECK_LAUNCH();
}

int main(int argc, char **argv) {
    kl_step step = {};
    step.number = 1;
    step.title = "shared-memory tiling, 32x32 tiles (bank conflicts left in)";
    step.kernels[0].op = &kl_op_sgemm;
    step.kernels[0].sgemm = launch;
    return kl_main(argc, argv, &step);
}
