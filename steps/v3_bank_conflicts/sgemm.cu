/*
 * Step 3 - bank-conflict fix: store the A tile transposed (and padded).
 *
 * v1 and v2 read As[threadRow][k] with threadRow = threadIdx.x % 32: the 32
 * threads of a warp hit 32 addresses 32 floats apart, all in one bank, and
 * shared memory serves them in 32 turns.  Here the copy writes A's tile
 * TRANSPOSED, As[k][m], so the same values are read as As[k][threadRow]:
 * 32 consecutive floats, 32 different banks, one turn.
 *
 * The transpose moves the conflict to the copy: a warp now writes
 * As[0..31][loadRow], a column.  Padding each row of As by one float (33
 * instead of 32) shifts every row by one bank, so a column spreads over all
 * 32 banks too.  The copy happens once per tile, the reads 32 times, but
 * there is no reason to pay either.
 *
 * Napkin math: per warp and k, v2 issues one As read that takes 32 shared
 * memory cycles plus one Bs broadcast, for 32 FMAs: at most ~1 FMA per cycle
 * per SM out of 128.  Without the conflict it is 2 cycles for 32 FMAs, so the
 * inner loop should run up to ~16x faster, until the 2 loads per FMA become
 * the limit (v4 attacks that).
 *
 * Build and run:   make step3 && ./step3            (sizes 1024..8192)
 *                  make profile STEP=3   (Nsight Compute)
 */
#include "kl.h"

#ifndef BLOCK
#define BLOCK 32   // the C tile is BLOCK x BLOCK; the block has BLOCK*BLOCK threads
#endif
#define BM BLOCK
#define BN BLOCK
#define BK BLOCK
#ifndef APAD
#define APAD 1   // one float of padding per row of As: a column then spans all banks
#endif
static_assert(BLOCK * BLOCK <= 1024, "a block has at most 1024 threads");
static_assert(2 * BLOCK * BLOCK * 4 <= 48 * 1024, "static shared memory is limited to 48 KB");

__global__ void sgemm_smem_transposed(int M, int N, int K, float alpha, const float *A,
                                      const float *B, float beta, float *C) {
    __shared__ float As[BK][BM + APAD];   // transposed: As[k][m]; 32*33*4 = 4.1 KB
    __shared__ float Bs[BK][BN];   // 32*32*4 = 4 KB

    // Computed once.  Compute mapping as in v1/v2: threadRow follows threadIdx.x.
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
        // Transposed store: element (m = loadRow, k = loadCol) goes to As[k][m].
        As[loadCol][loadRow] = (loadRow < rowsA && loadCol < colsA) ? A[loadRow * K + loadCol] : 0.0f;
        Bs[loadRow][loadCol] = (loadRow < colsA && loadCol < colsB) ? B[loadRow * N + loadCol] : 0.0f;
        __syncthreads();
        A += BK;
        B += BK * N;

        for (int k = 0; k < BK; ++k)   // a warp reads As[k][0..31]: no conflict
            acc += As[k][threadRow] * Bs[k][threadCol];
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
    sgemm_smem_transposed<<<grid, BM * BN, 0, stream>>>(M, N, K, alpha, A, B, beta, C);
    KL_CHECK_LAUNCH();
}

int main(int argc, char **argv) {
    kl_step step = {};
    step.number = 3;
    step.title = "bank-conflict fix: A tile stored transposed and padded";
    step.kernels[0].op = &kl_op_sgemm;
    step.kernels[0].sgemm = launch;
    return kl_main(argc, argv, &step);
}
