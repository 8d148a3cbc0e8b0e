/*
 * Step 11 - p threads per dot product, m rows per block, warp-shuffle reduction.
 *
 * Step 10 gave each row to one thread, so a warp read 32 rows at once: 32
 * sectors for 64 useful bytes.  Here p consecutive threads share a row and
 * thread t reads columns t, t+p, t+2p, ...: a warp now reads 32 neighbouring
 * halves (64 bytes, two sectors, every byte used), and the p partial sums are
 * added with register shuffles (a tree of log2(p) __shfl_xor_sync), plus a
 * second stage through shared memory when p > 32 (one value per warp).
 *
 * A block is p x m threads: threadIdx.x walks along a row, threadIdx.y picks
 * one of the m rows of the block.  Which (p, m) is best depends on the shape:
 * long rows want more threads per row, short rows and many of them want more
 * rows per block.  The launch table below was chosen by a sweep on the H100
 * (docs/v11_threads_per_row.md shows it); --threads-per-row / --rows-per-block
 * override it.
 *
 * Napkin math: 2 bytes per load per thread is still small.  To keep ~3 TB/s
 * in flight with ~1 us of DRAM latency an H100 needs ~3 MB of loads
 * outstanding, ~23 KB per SM: with 2-byte loads that is ~11,000 loads per SM
 * at once, more than the 2,048 threads an SM holds can issue one at a time
 * (the compiler unrolls a little).  Step 12 makes every load 16 bytes.
 *
 * Build and run:   make step11 && ./step11
 *                  ./step11 -n 1000 -k 33 --check-only --threads-per-row 64
 */
#include "kl.h"

#include <cuda_fp16.h>

#ifndef MAX_THREADS
#define MAX_THREADS 1024   // p * m: a block holds at most 1024 threads
#endif
static_assert(MAX_THREADS <= 1024 && MAX_THREADS % 32 == 0, "a block holds at most 1024 threads");

static int opt_p = 0, opt_m = 0;   // --threads-per-row, --rows-per-block (0: the table)

// Sum v over the p lanes (p a power of two <= 32) that share a row.  XOR
// offsets below p never leave an aligned group of p lanes, and every lane
// ends with the sum (handy, though only one lane writes it).
__device__ __forceinline__ float warp_reduce(float v, int p) {
    for (int off = (p < 32 ? p : 32) / 2; off > 0; off /= 2)
        v += __shfl_xor_sync(0xffffffffu, v, off);
    return v;
}

__global__ void gemv_p_threads(int N, int K, const __half *__restrict__ W,
                               const __half *__restrict__ x, __half *__restrict__ y) {
    const int p = blockDim.x, tid = threadIdx.x;
    const int row = blockIdx.x * blockDim.y + threadIdx.y;

    // Rows past N still take part in the shuffles and the barrier below, so
    // they skip the loads but do not return early.
    float acc = 0.0f;
    if (row < N) {
        const __half *w = W + (size_t)row * K;
        for (int k = tid; k < K; k += p)        // p neighbours read p neighbouring halves
            acc += __half2float(w[k]) * __half2float(x[k]);
    }
    acc = warp_reduce(acc, p);

    if (p > 32) {
        // Second stage: one partial per warp.  p * m <= 1024, so the whole
        // block has at most 32 warps: 32 floats of shared memory.
        __shared__ float partial[32];
        const int warps_per_row = p / 32;
        if (tid % 32 == 0) partial[threadIdx.y * warps_per_row + tid / 32] = acc;
        __syncthreads();
        if (tid < 32) {                          // the row's first warp adds the partials
            acc = tid < warps_per_row ? partial[threadIdx.y * warps_per_row + tid] : 0.0f;
            acc = warp_reduce(acc, 32);
        }
    }
    if (tid == 0 && row < N) y[row] = __float2half(acc);
}

// The launch table: (p, m) by shape, from the sweep in the doc (H100).  One
// warp per row (p = 32) is never best: 2-byte loads need more threads per
// row to keep enough bytes in flight.  p = 128 wins from K = 2048 up (from
// K = 4096 within 1-4% of p = 64 and 256); short rows (K = 1024) want p = 256.
static void pick(int N, int K, int *p, int *m) {
    (void)N;
    *p = K <= 1024 ? 256 : 128;
    *m = 1;
}

static void launch(const kl_gemv_args *a, void *ctx, cudaStream_t stream) {
    (void)ctx;
    int p, m;
    pick(a->n, a->k, &p, &m);
    if (opt_p) p = opt_p;
    if (opt_m) m = opt_m;
    if (p * m > MAX_THREADS) m = MAX_THREADS / p;   // --threads-per-row alone: keep the block legal
    const dim3 block(p, m);
    const int grid = (a->n + m - 1) / m;
    gemv_p_threads<<<grid, block, 0, stream>>>(a->n, a->k, (const __half *)a->w,
                                               (const __half *)a->x, (__half *)a->y);
    KL_CHECK_LAUNCH();
}

static int accepts(const kl_problem *pr, char *msg, size_t len) {
    (void)pr;
    if (opt_p & (opt_p - 1)) {
        snprintf(msg, len, "--threads-per-row %d: must be a power of two (1, 2, 4, ... 1024)", opt_p);
        return 1;
    }
    if (opt_p && opt_m && opt_p * opt_m > MAX_THREADS) {
        snprintf(msg, len, "--threads-per-row %d --rows-per-block %d: a block holds at most %d threads",
                 opt_p, opt_m, MAX_THREADS);
        return 1;
    }
    return 0;
}

int main(int argc, char **argv) {
    kl_step step = {};
    step.number = 11;
    step.title = "p threads per row, m rows per block, warp-shuffle reduction";
    step.accepts = accepts;
    step.kernels[0].op = &kl_op_gemv_f16;
    step.kernels[0].gemv = launch;
    step.opts[0] = {"threads-per-row", "threads per row p, a power of two (0: the launch table)", &opt_p, 0, 1024};
    step.opts[1] = {"rows-per-block", "rows per block m (0: the launch table)", &opt_m, 0, 1024};
    return kl_main(argc, argv, &step);
}
