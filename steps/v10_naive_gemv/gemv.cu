/*
 * Step 10 - naive GEMV: one thread per row.  Part II starts here.
 *
 * y = W x, W row-major N x K in fp16, x and y fp16, accumulation in fp32.
 * Thread `row` walks its row of W on its own, one 2-byte load at a time.
 *
 * Napkin math: GEMV does 2 FLOPs per weight and reads each weight once, so it
 * is memory-bound on every GPU: at 8192^2 the weights are 128 MiB, and at the
 * H100's ~3.2 TB/s that is ~42 us; the FLOPs (134 M) would take 3 us.  Every
 * step of Part II is therefore about one number: how close the weight stream
 * gets to the read bandwidth.
 *
 * This kernel's problem is the access pattern.  At a given moment the 32
 * threads of a warp read W[row..row+31][k]: 32 addresses 2*K bytes apart, so
 * one load instruction touches 32 different 32-byte sectors and uses 2 bytes
 * of each.  L1 keeps those sectors for the next 15 values of k, so DRAM still
 * reads each weight about once; but every load of W now costs L1 32 sector
 * lookups instead of 2, and the warp waits on it before its next FMA.
 * Nsight Compute at 8192^2: 16.5 sectors per request (W's 32, x's 1), 3.7% of DRAM
 * bandwidth.  The next step gives each row to a group of threads that read
 * neighbouring addresses instead.
 *
 * Build and run:   make step10 && ./step10
 *                  ./step10 -n 1000 -k 33 --check-only
 */
#include "kl.h"

#include <cuda_fp16.h>

#ifndef BLOCK
#define BLOCK 256   // threads (rows) per block
#endif
static_assert(BLOCK % 32 == 0 && BLOCK <= 1024, "whole warps, at most 1024 threads");

__global__ void gemv_naive(int N, int K, const __half *__restrict__ W,
                           const __half *__restrict__ x, __half *__restrict__ y) {
    const int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= N) return;                       // the grid is rounded up

    const __half *w = W + (size_t)row * K;      // size_t: row * K overflows an int once N*K > 2^31
    float acc = 0.0f;                           // fp32 accumulation: fp16 would lose digits after ~2K terms
    for (int k = 0; k < K; ++k)
        acc += __half2float(w[k]) * __half2float(x[k]);
    y[row] = __float2half(acc);
}

static void launch(const kl_gemv_args *a, void *ctx, cudaStream_t stream) {
    (void)ctx;
    const int grid = (a->n + BLOCK - 1) / BLOCK;
    gemv_naive<<<grid, BLOCK, 0, stream>>>(a->n, a->k, (const __half *)a->w,
                                           (const __half *)a->x, (__half *)a->y);
    KL_CHECK_LAUNCH();
}

int main(int argc, char **argv) {
    kl_step step = {};
    step.number = 10;
    step.title = "naive GEMV: one thread per row";
    step.kernels[0].op = &kl_op_gemv_f16;
    step.kernels[0].gemv = launch;
    return kl_main(argc, argv, &step);
}
