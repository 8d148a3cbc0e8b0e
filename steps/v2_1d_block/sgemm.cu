/*
 * Step 2 - one-dimensional thread block, index arithmetic hoisted.
 *
 * Same tiles and same (conflicting) shared-memory reads as v1.  What
 * changes is bookkeeping: the block is 1024 threads in one dimension, each
 * thread derives its coordinates (threadRow, threadCol for the compute, and
 * loadRow, loadCol for the copy) ONCE from threadIdx.x, and the A and B
 * pointers are advanced by a tile per iteration instead of recomputing
 * row * K + col for every load.
 *
 * Napkin math: v1's loop body already spends ~2 integer instructions per
 * load on addressing against 32 FMAs per tile per thread, and the compiler
 * hoists loop-invariant arithmetic on its own.  So expect no measurable gain:
 * the time goes to the 32-way bank conflict of the As reads, which this
 * step keeps.  The doc compares `make regs` and the SASS of v1 and v2 to
 * show what the compiler had already done.
 *
 * Build and run:   make step2 && ./step2            (sizes 1024..8192)
 *                  make regs STEP=2 ; make sass STEP=2
 */
#include "kl.h"

#ifndef BLOCK
#define BLOCK 32   // the C tile is BLOCK x BLOCK; the block has BLOCK*BLOCK threads
#endif
#define BM BLOCK
#define BN BLOCK
#define BK BLOCK
static_assert(BLOCK * BLOCK <= 1024, "a block has at most 1024 threads");
static_assert(2 * BLOCK * BLOCK * 4 <= 48 * 1024, "static shared memory is limited to 48 KB");

__global__ void sgemm_smem_1d(int M, int N, int K, float alpha, const float *A,
                              const float *B, float beta, float *C) {
    __shared__ float As[BM][BK];   // 32*32*4 = 4 KB
    __shared__ float Bs[BK][BN];   // 32*32*4 = 4 KB

    // Computed once.  Compute mapping as in v1: threadRow follows threadIdx.x.
    const int threadRow = threadIdx.x % BM, threadCol = threadIdx.x / BM;
    // Copy mapping as in v1: consecutive threads take consecutive columns.
    const int loadRow = threadIdx.x / BK, loadCol = threadIdx.x % BK;
    const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;

    // Move the operand pointers to this block's first tiles; each iteration
    // then adds a constant (BK along a row of A, BK rows down B).
    A += (size_t)row0 * K;
    B += col0;
    const int rowsA = M - row0, colsB = N - col0;   // what is left at the edges

    float acc = 0.0f;
    for (int k0 = 0; k0 < K; k0 += BK) {
        const int colsA = K - k0;                   // == rows of B left
        As[loadRow][loadCol] = (loadRow < rowsA && loadCol < colsA) ? A[loadRow * K + loadCol] : 0.0f;
        Bs[loadRow][loadCol] = (loadRow < colsA && loadCol < colsB) ? B[loadRow * N + loadCol] : 0.0f;
        __syncthreads();
        A += BK;
        B += BK * N;

        for (int k = 0; k < BK; ++k)   // still a 32-way conflict on As (v1's read order)
            acc += As[threadRow][k] * Bs[k][threadCol];
        __syncthreads();
    }

    const int row = row0 + threadRow, col = col0 + threadCol;
    if (row < M && col < N) {
        float *c = &C[(size_t)row * N + col];
        *c = beta == 0.0f ? alpha * acc : alpha * acc + beta * *c;   // beta == 0: C not read
    }
}

static void launch(int M, int N, int K, float alpha, const float *A, const float *B,
                   float beta, float *C, void *ctx, cudaStream_t stream) {
    (void)ctx;
    dim3 grid((N + BN - 1) / BN, (M + BM - 1) / BM);
    sgemm_smem_1d<<<grid, BM * BN, 0, stream>>>(M, N, K, alpha, A, B, beta, C);
    KL_CHECK_LAUNCH();
}

int main(int argc, char **argv) {
    kl_step step = {};
    step.number = 2;
    step.title = "1D thread block, index arithmetic hoisted (conflicts kept)";
    step.kernels[0].op = &kl_op_sgemm;
    step.kernels[0].sgemm = launch;
    return kl_main(argc, argv, &step);
}
