/*
 * Step 12 - 16-byte vectorized loads: float4 reinterpreted as 4 half2.
 *
 * Step 11 reads 2 bytes per load.  Here each thread loads 16 bytes of W
 * (8 halves) and the matching 16 bytes of x per instruction, and issues
 * UNROLL such loads before it uses any of them.  Same p x m thread layout and
 * the same reduction as step 11; columns are now handed out in chunks of 8:
 * thread t of a row reads chunks t, t+p, t+2p, ... so a warp still reads one
 * contiguous 512-byte run per instruction.
 *
 * Napkin math: keeping ~3 TB/s in flight over ~1 us of latency needs ~23 KB
 * of loads outstanding per SM.  2,048 threads x UNROLL=4 x 16 B = 128 KB of
 * weight loads can be in flight per SM now (vs 2 B a thread in step 10), and
 * the load instructions per byte drop 8x.  At 8192^2 (128 MiB of fp16) the
 * floor at the measured ~3200 GB/s read ceiling is 42 us.
 *
 * Weights are read once, so they are loaded with __ldcs (cache-streaming:
 * evict first) and x, read by every row, with __ldg: x stays in cache.
 * K must be a multiple of 8 so that every row starts on a 16-byte boundary.
 *
 * Two ideas that did not pay off are kept as variants to measure (the doc
 * has the numbers): "x_in_smem" stages x in shared memory for the m rows of a
 * block; "two_kernels" splits each row over SPLITS blocks and adds the
 * partial sums in a second kernel.
 *
 * Build and run:   make step12 && ./step12
 *                  ./step12 -n 1000 -k 1000 --check-only
 */
#include "kl.h"

#include <cuda_fp16.h>

#ifndef UNROLL
#define UNROLL 4     // 16-byte loads in flight per thread before the first FMA
#endif
#ifndef XTILE
#define XTILE 4096   // x_in_smem: halves of x staged per pass (8 KB)
#endif
#ifndef SPLITS
#define SPLITS 4     // two_kernels: blocks per row
#endif
static_assert(UNROLL >= 1 && UNROLL <= 16, "UNROLL loads of 16 bytes live in registers");
static_assert(XTILE % 8 == 0 && XTILE * 2 <= 48 * 1024, "XTILE: whole float4s, static shared memory");

static int opt_p = 0, opt_m = 0;   // --threads-per-row, --rows-per-block (0: the table)

__device__ __forceinline__ float warp_reduce(float v, int p) {
    for (int off = (p < 32 ? p : 32) / 2; off > 0; off /= 2)
        v += __shfl_xor_sync(0xffffffffu, v, off);
    return v;
}

// 8 products of a float4 of W and a float4 of x, each seen as 4 half2, in fp32.
__device__ __forceinline__ float dot8(float4 w, float4 x, float acc) {
    const __half2 *wh = reinterpret_cast<const __half2 *>(&w);
    const __half2 *xh = reinterpret_cast<const __half2 *>(&x);
#pragma unroll
    for (int i = 0; i < 4; ++i) {
        const float2 a = __half22float2(wh[i]), b = __half22float2(xh[i]);
        acc = fmaf(a.x, b.x, acc);
        acc = fmaf(a.y, b.y, acc);
    }
    return acc;
}

// Partial dot product of row chunks [i, i1) (in float4s), stride p, UNROLL loads in flight.
// X_SMEM: x is in shared memory (plain loads; __ldg is for global memory only).
template <bool X_SMEM = false>
__device__ __forceinline__ float row_dot(const float4 *__restrict__ w, const float4 *__restrict__ x,
                                         int i, int i1, int p) {
    float acc = 0.0f;
    for (; i + (UNROLL - 1) * p < i1; i += UNROLL * p) {
        float4 wv[UNROLL], xv[UNROLL];
#pragma unroll
        for (int u = 0; u < UNROLL; ++u) {      // all loads first ...
            wv[u] = __ldcs(w + i + u * p);
            xv[u] = X_SMEM ? x[i + u * p] : __ldg(x + i + u * p);
        }
#pragma unroll
        for (int u = 0; u < UNROLL; ++u) acc = dot8(wv[u], xv[u], acc);  // ... then the math
    }
    for (; i < i1; i += p) acc = dot8(__ldcs(w + i), X_SMEM ? x[i] : __ldg(x + i), acc);  // the row's tail
    return acc;
}

// The reduction of step 11: shuffles, then shared memory when p > 32.
__device__ __forceinline__ float block_row_sum(float acc, int p) {
    acc = warp_reduce(acc, p);
    if (p > 32) {
        __shared__ float partial[32];
        const int wpr = p / 32, tid = threadIdx.x;
        if (tid % 32 == 0) partial[threadIdx.y * wpr + tid / 32] = acc;
        __syncthreads();
        acc = tid < wpr ? partial[threadIdx.y * wpr + tid] : 0.0f;
        if (tid < 32) acc = warp_reduce(acc, 32);
    }
    return acc;
}

__global__ void gemv_vec(int N, int K, const __half *__restrict__ W, const __half *__restrict__ x,
                         __half *__restrict__ y) {
    const int p = blockDim.x, row = blockIdx.x * blockDim.y + threadIdx.y;
    float acc = 0.0f;
    if (row < N)
        acc = row_dot(reinterpret_cast<const float4 *>(W + (size_t)row * K),
                      reinterpret_cast<const float4 *>(x), threadIdx.x, K / 8, p);
    acc = block_row_sum(acc, p);
    if (threadIdx.x == 0 && row < N) y[row] = __float2half(acc);
}

// Dropped idea 1: x through shared memory, loaded once per block, not per row.
__global__ void gemv_x_smem(int N, int K, const __half *__restrict__ W, const __half *__restrict__ x,
                            __half *__restrict__ y) {
    __shared__ float4 xs[XTILE / 8];   // XTILE*2 bytes
    const int p = blockDim.x, row = blockIdx.x * blockDim.y + threadIdx.y, K8 = K / 8;
    const float4 *w = reinterpret_cast<const float4 *>(W + (size_t)row * K);
    const float4 *x4 = reinterpret_cast<const float4 *>(x);
    float acc = 0.0f;
    for (int k0 = 0; k0 < K8; k0 += XTILE / 8) {
        const int len = min(XTILE / 8, K8 - k0);
        for (int i = threadIdx.y * p + threadIdx.x; i < len; i += p * blockDim.y) xs[i] = __ldg(x4 + k0 + i);
        __syncthreads();                       // the price: every block waits twice per tile
        if (row < N) acc += row_dot<true>(w + k0, xs, threadIdx.x, len, p);
        __syncthreads();
    }
    acc = block_row_sum(acc, p);
    if (threadIdx.x == 0 && row < N) y[row] = __float2half(acc);
}

// Dropped idea 2: SPLITS blocks per row write fp32 partials; a second kernel adds them.
__global__ void gemv_split(int N, int K, const __half *__restrict__ W, const __half *__restrict__ x,
                           float *__restrict__ part) {
    const int p = blockDim.x, row = blockIdx.x * blockDim.y + threadIdx.y, K8 = K / 8;
    const int per = (K8 + SPLITS - 1) / SPLITS, i0 = blockIdx.y * per, i1 = min(K8, i0 + per);
    float acc = 0.0f;
    if (row < N)
        acc = row_dot(reinterpret_cast<const float4 *>(W + (size_t)row * K),
                      reinterpret_cast<const float4 *>(x), i0 + threadIdx.x, i1, p);
    acc = block_row_sum(acc, p);
    if (threadIdx.x == 0 && row < N) part[(size_t)blockIdx.y * N + row] = acc;
}
__global__ void sum_splits(int N, const float *__restrict__ part, __half *__restrict__ y) {
    const int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= N) return;
    float s = 0.0f;
    for (int j = 0; j < SPLITS; ++j) s += part[(size_t)j * N + row];
    y[row] = __float2half(s);
}

// The launch table (p, m), from the sweep in docs/v12_vectorized.md (H100):
// the best p is about K/32, so that each thread makes one pass of UNROLL=4
// loads over its row (K = 1024: p = 32 ... K = 16384: p = 512), and a block
// keeps >= 128 threads.
static void pick(int N, int K, int *p, int *m) {
    (void)N;
    int q = 32;
    while (q < 512 && 2 * q <= K / 32) q *= 2;   // the power of two <= K/32, in [32, 512]
    *p = q;
    *m = q >= 128 ? 1 : 128 / q;
}

enum { V_MAIN, V_XSMEM, V_SPLIT };
static int variant_ids[3] = {V_MAIN, V_XSMEM, V_SPLIT};

static void launch(const kl_gemv_args *a, void *ctx, cudaStream_t stream) {
    int p, m;
    pick(a->n, a->k, &p, &m);
    if (opt_p) p = opt_p;
    if (opt_m) m = opt_m;
    if (p * m > 1024) m = 1024 / p;
    const dim3 block(p, m);
    const int grid = (a->n + m - 1) / m;
    const __half *W = (const __half *)a->w, *x = (const __half *)a->x;
    __half *y = (__half *)a->y;
    switch (*(int *)ctx) {
    case V_MAIN: gemv_vec<<<grid, block, 0, stream>>>(a->n, a->k, W, x, y); break;
    case V_XSMEM: gemv_x_smem<<<grid, block, 0, stream>>>(a->n, a->k, W, x, y); break;
    case V_SPLIT: {
        static float *part = nullptr;          // grows to the largest N seen (first use: a checked run)
        static size_t have = 0;
        const size_t need = (size_t)SPLITS * a->n * sizeof(float);
        if (need > have) {
            CUDA_CHECK(cudaFree(part));
            CUDA_CHECK(cudaMalloc(&part, need));
            have = need;
        }
        gemv_split<<<dim3(grid, SPLITS), block, 0, stream>>>(a->n, a->k, W, x, part);
        KL_CHECK_LAUNCH();
        sum_splits<<<(a->n + 255) / 256, 256, 0, stream>>>(a->n, part, y);
        break;
    }
    }
    KL_CHECK_LAUNCH();
}

static int accepts(const kl_problem *pr, char *msg, size_t len) {
    if (pr->k % 8) {
        snprintf(msg, len, "K=%d is not a multiple of 8 (16-byte loads need every row to start on a "
                 "16-byte boundary); pick K = %d, or run step11", pr->k, (pr->k + 7) / 8 * 8);
        return 1;
    }
    if ((opt_p & (opt_p - 1)) || (opt_p && opt_m && opt_p * opt_m > 1024)) {
        snprintf(msg, len, "--threads-per-row %d --rows-per-block %d: p a power of two, p*m <= 1024", opt_p, opt_m);
        return 1;
    }
    return 0;
}

int main(int argc, char **argv) {
    kl_step step = {};
    step.number = 12;
    step.title = "16-byte vectorized loads (float4 as 4 half2), UNROLL loads in flight";
    step.accepts = accepts;
    const char *names[3] = {"", "x_in_smem", "two_kernels"};
    for (int i = 0; i < 3; ++i) {
        step.kernels[i].op = &kl_op_gemv_f16;
        step.kernels[i].variant = names[i];
        step.kernels[i].gemv = launch;
        step.kernels[i].ctx = &variant_ids[i];
    }
    step.opts[0] = {"threads-per-row", "threads per row p, a power of two (0: the launch table)", &opt_p, 0, 1024};
    step.opts[1] = {"rows-per-block", "rows per block m (0: the launch table)", &opt_m, 0, 1024};
    return kl_main(argc, argv, &step);
}
