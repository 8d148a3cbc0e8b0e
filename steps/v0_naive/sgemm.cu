/*
 * Step 0 - naive SGEMM: one thread per element of C.
 *
 * C = alpha * A * B + beta * C, row-major, A is M x K, B is K x N.
 * Thread (row, col) walks the K dimension on its own, reading a row of A and
 * a column of B straight from global memory.
 *
 * Napkin math: every FMA needs 2 loads (8 bytes) and does 2 FLOPs, so the
 * kernel asks the memory system for 4 bytes per FLOP.  At ~50 TFLOPS that
 * would be 200 TB/s; HBM gives ~3 TB/s.  What saves this kernel from being
 * 60x slower than cuBLAS is the cache: the 32 threads of a warp share one row
 * of A (a broadcast) and read 32 neighbouring floats of B (one 128-byte line),
 * and L1/L2 catch much of the rest.  Everything after this step is about
 * reusing each loaded value many more times, on purpose.
 *
 * Build and run:   make step0 && ./step0            (sizes 1024..8192)
 *                  ./step0 -m 1000 -n 7 -k 33 --check-only
 */
#include "kl.h"

#ifndef BLOCK
#define BLOCK 32   // 32x32 = 1024 threads per block; threadIdx.x runs along a row of C
#endif
static_assert(BLOCK * BLOCK <= 1024, "a block has at most 1024 threads");

__global__ void sgemm_naive(int M, int N, int K, float alpha, const float *A,
                            const float *B, float beta, float *C) {
    // x is the fastest-varying thread index, so map it to the column: the
    // warp's 32 threads then read 32 consecutive floats of B and write 32
    // consecutive floats of C (coalesced).  Swap the two lines and the same
    // kernel runs several times slower: try it.
    const int col = blockIdx.x * blockDim.x + threadIdx.x;
    const int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row >= M || col >= N) return;   // the grid is rounded up: guard the edge

    float acc = 0.0f;
    for (int k = 0; k < K; ++k)
        acc += A[(size_t)row * K + k] * B[(size_t)k * N + col];

    float *c = &C[(size_t)row * N + col];
    // BLAS semantics: with beta == 0, C is output only and is never read
    // (it may hold NaN; the harness makes sure of it).
    *c = beta == 0.0f ? alpha * acc : alpha * acc + beta * *c;
}

static void launch(int M, int N, int K, float alpha, const float *A, const float *B,
                   float beta, float *C, void *ctx, cudaStream_t stream) {
    (void)ctx;
    dim3 block(BLOCK, BLOCK);
    dim3 grid((N + BLOCK - 1) / BLOCK, (M + BLOCK - 1) / BLOCK);
    sgemm_naive<<<grid, block, 0, stream>>>(M, N, K, alpha, A, B, beta, C);
    KL_CHECK_LAUNCH();
}

int main(int argc, char **argv) {
    kl_step step = {};
    step.number = 0;
    step.title = "naive: one thread per element of C";
    step.kernels[0].op = &kl_op_sgemm;
    step.kernels[0].sgemm = launch;
    return kl_main(argc, argv, &step);
}
