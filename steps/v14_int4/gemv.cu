/*
 * Step 14 - packed int4 weights, a scale and a zero per group of 128 columns.
 *
 * Format (common/ops/quant.h): row r is K/2 bytes, byte j = column 2j (bits 0-3)
 * and 2j+1 (bits 4-7); columns [128g, 128g+128) share the fp16 scale s[r][g]
 * and zero z[r][g]; w = (q - z) * s.  K must be a multiple of 128.
 *
 * What changes from step 13 (docs/v14_int4.md):
 *  - a 16-byte load brings 32 weights (a quarter group) and needs 64 bytes of
 *    x: ROWS = 4 rows per thread share each x load and its conversion.
 *  - unpacking: one PRMT puts a nibble under the exponent of 128 (the float
 *    128 + q, exact) and sum x (q - z) = sum x (128 + q) - (128 + z) sum x:
 *    one PRMT and one FFMA per weight, the correction once per word and row.
 *  - loads first: a pass issues its 8 weight loads back to back, then scales
 *    and zeros, then the math (128 registers: 512 threads per SM).
 *  - one wave: the launch table takes the most threads per row (TPR) whose
 *    grid fits on the GPU at once.
 *
 * Napkin math: 16384^2 is 136 MiB, 45 us at ~3200 GB/s, 4x cuBLAS fp16 at
 * best; 3.7 instructions per weight are ~33 us of issue, under it.
 *
 * Build and run:   make step14 && ./step14
 *                  ./step14 -n 1000 -k 1024 --check-only
 */
#include "kl.h"
#include "quant.h"

#include <cuda_fp16.h>

constexpr int ROWS = 4;          // rows per thread: x reuse
constexpr int UNROLL = 2;        // 16-byte loads per row and thread in one pass
constexpr int BLOCK = 128;       // threads per block (TPR threads when TPR > BLOCK)
constexpr int SM_THREADS = 512;  // threads per SM the registers must allow: 128 registers each
#ifndef TPR
#define TPR 0          // threads per row set (a power of two, 8..512); 0: the launch table
#endif
#ifndef LOADS_ONLY
#define LOADS_ONLY 0   // 1: every load kept, XORs replace the arithmetic (wrong sums: the check fails)
#endif
static_assert(TPR == 0 || ((TPR & (TPR - 1)) == 0 && TPR >= 8 && TPR <= 512), "TPR: 0 or a power of two in 8..512");
static_assert(KL_INT4_GROUP == 128, "a 16-byte load (32 weights) is a quarter of a group");

// 128 + q as a float from byte t of a word of nibbles: one PRMT makes the bytes
// 0x43, q, 0, 0 (byte 2 counts whole units).  magic (0x43000000) comes in a
// register so that the selector can be PRMT's immediate.
__device__ __forceinline__ float nib_128(uint32_t word, uint32_t magic, int t) {
    return __uint_as_float(__byte_perm(word, magic, 0x7044 | (t << 8)));
}

// Sum each of the ROWS values over the tpr threads of a row set (after the kernel).
template <int tpr>
__device__ __forceinline__ void row_sums(float (&acc)[ROWS]);

// A block is BLOCK threads (BLOCK / tpr row sets), or one row set when tpr >
// BLOCK; __launch_bounds__ asks for registers that fit SM_THREADS threads.
constexpr int block_threads(int tpr) { return tpr > BLOCK ? tpr : BLOCK; }
constexpr int blocks_per_sm(int tpr) { return SM_THREADS > block_threads(tpr) ? SM_THREADS / block_threads(tpr) : 1; }

template <int tpr>
__global__ void __launch_bounds__(block_threads(tpr), blocks_per_sm(tpr))
qgemv_int4(int N, int K, const uint8_t *__restrict__ W, const __half *__restrict__ scale,
           const __half *__restrict__ zero, const __half *__restrict__ x, __half *__restrict__ y) {
    const int row0 = (blockIdx.x * blockDim.y + threadIdx.y) * ROWS;
    const int K32 = K / 32, G = K / KL_INT4_GROUP;   // 16-byte chunks and groups per row
    const uint4 *w[ROWS];
    const __half *sr[ROWS], *zr[ROWS];
    float acc[ROWS];
#pragma unroll
    for (int j = 0; j < ROWS; ++j) {
        const int r = min(row0 + j, N - 1);      // rows past N re-read row N-1, never stored
        w[j] = reinterpret_cast<const uint4 *>(W + (size_t)r * (K / 2));
        sr[j] = scale + (size_t)r * G;
        zr[j] = zero + (size_t)r * G;
        acc[j] = 0.0f;
    }
    const float4 *x4 = reinterpret_cast<const float4 *>(x);
    uint32_t magic;
    asm("mov.b32 %0, 0x43000000;" : "=r"(magic));   // exponent of 128 (see nib_128)

    // One pass: UNROLL chunks of 32 weights per row, tpr chunks apart.  All of
    // its weight loads go out first, then the scales and zeros (4 chunks per
    // group), then the arithmetic.  Two copies: unguarded when the whole pass
    // is inside the row (offsets as immediates, no predicates), guarded for a
    // row's last, partial pass, whose missing chunks are neither read nor used.
    uint4 wv[UNROLL][ROWS];
    __half2 sz[UNROLL][ROWS];                    // (scale, zero) of each chunk's group
    auto load = [&](int i, bool guard) {
#pragma unroll
        for (int u = 0; u < UNROLL; ++u)
#pragma unroll
            for (int j = 0; j < ROWS; ++j)
                if (!guard || i + u * tpr < K32) wv[u][j] = __ldcs(w[j] + i + u * tpr);
#pragma unroll
        for (int u = 0; u < UNROLL; ++u) {
            const int g = !guard || i + u * tpr < K32 ? (i + u * tpr) / 4 : 0;
#pragma unroll
            for (int j = 0; j < ROWS; ++j) sz[u][j] = __halves2half2(sr[j][g], zr[j][g]);
        }
    };
    auto compute = [&](int i, bool guard) {
#pragma unroll
        for (int u = 0; u < UNROLL; ++u) {
            const int c = i + u * tpr;
            if (guard && c >= K32) break;
#if LOADS_ONLY
            {                                    // the same loads, XORs instead of the math
                uint32_t h = 0;
#pragma unroll
                for (int b = 0; b < 4; ++b) {
                    const uint4 xq = __ldg(reinterpret_cast<const uint4 *>(x4) + 4 * c + b);
                    h ^= xq.x ^ xq.y ^ xq.z ^ xq.w;
                }
#pragma unroll
                for (int j = 0; j < ROWS; ++j) {
                    const uint4 q = wv[u][j];
                    const uint32_t s = *reinterpret_cast<const uint32_t *>(&sz[u][j]);
                    acc[j] += __uint_as_float((h ^ q.x ^ q.y ^ q.z ^ q.w ^ s) & 0x3FFFFFFFu);
                }
            }
#else
            float g[ROWS], zm[ROWS];             // this chunk's sum of x * (q - z); -(128 + z)
#pragma unroll
            for (int j = 0; j < ROWS; ++j) {
                g[j] = 0.0f;
                zm[j] = -128.0f - __high2float(sz[u][j]);
            }
#pragma unroll
            for (int b = 0; b < 4; ++b) {        // word b: columns 8b .. 8b+7 of the chunk
                const float4 xq = __ldg(x4 + 4 * c + b);
                const __half2 *xh = reinterpret_cast<const __half2 *>(&xq);
                float2 xf[4];
#pragma unroll
                for (int t = 0; t < 4; ++t) xf[t] = __half22float2(xh[t]);   // columns 2t, 2t+1
                // sum x (q - z) = sum x (128 + q) - (128 + z) sum x: the second term
                // once per word (8 weights) and row, sum x once per word for all rows
                const float sx = ((xf[0].x + xf[0].y) + (xf[1].x + xf[1].y)) + ((xf[2].x + xf[2].y) + (xf[3].x + xf[3].y));
#pragma unroll
                for (int j = 0; j < ROWS; ++j) {
                    const uint32_t word = b == 0 ? wv[u][j].x : b == 1 ? wv[u][j].y : b == 2 ? wv[u][j].z : wv[u][j].w;
                    const uint32_t lo = word & 0x0F0F0F0Fu, hi = (word >> 4) & 0x0F0F0F0Fu;
                    // start from the correction, so the running sum stays near the answer
                    g[j] = fmaf(zm[j], sx, g[j]);
#pragma unroll
                    for (int t = 0; t < 4; ++t) {  // byte t: column 2t (low nibble), 2t+1 (high)
                        g[j] = fmaf(xf[t].x, nib_128(lo, magic, t), g[j]);
                        g[j] = fmaf(xf[t].y, nib_128(hi, magic, t), g[j]);
                    }
                }
            }
#pragma unroll
            for (int j = 0; j < ROWS; ++j) acc[j] = fmaf(__low2float(sz[u][j]), g[j], acc[j]);   // the scale
#endif
        }
    };
    for (int i = threadIdx.x; i < K32; i += tpr * UNROLL) {   // K = 8192, tpr = 32: 4 passes
        if (i + (UNROLL - 1) * tpr < K32) { load(i, false); compute(i, false); }
        else { load(i, true); compute(i, true); }
    }
    row_sums<tpr>(acc);
#pragma unroll
    for (int j = 0; j < ROWS; ++j)
        if (threadIdx.x == 0 && row0 + j < N) y[row0 + j] = __float2half(acc[j]);
}

// Shuffles within a warp; a second stage through shared memory when tpr > 32.
template <int tpr>
__device__ __forceinline__ void row_sums(float (&acc)[ROWS]) {
#pragma unroll
    for (int j = 0; j < ROWS; ++j)
#pragma unroll
        for (int off = (tpr < 32 ? tpr : 32) / 2; off > 0; off /= 2)
            acc[j] += __shfl_xor_sync(0xffffffffu, acc[j], off);
    if (tpr > 32) {                               // second stage: one partial per warp
        constexpr int wpr = tpr / 32;             // warps per row set
        __shared__ float partial[ROWS][32];
        const int tid = threadIdx.x;
#pragma unroll
        for (int j = 0; j < ROWS; ++j)
            if (tid % 32 == 0) partial[j][threadIdx.y * wpr + tid / 32] = acc[j];
        __syncthreads();
#pragma unroll
        for (int j = 0; j < ROWS; ++j) {
            acc[j] = tid < wpr ? partial[j][threadIdx.y * wpr + tid] : 0.0f;
#pragma unroll
            for (int off = wpr / 2; off > 0; off /= 2) acc[j] += __shfl_xor_sync(0xffffffffu, acc[j], off);
        }
    }
}

template <int tpr>
static void launch_tpr(const kl_gemv_args *a, cudaStream_t stream) {
    const int rows_per_block = block_threads(tpr) / tpr * ROWS;
    const int grid = (a->n + rows_per_block - 1) / rows_per_block;
    qgemv_int4<tpr><<<grid, dim3(tpr, block_threads(tpr) / tpr), 0, stream>>>(
        a->n, a->k, (const uint8_t *)a->w, (const __half *)a->scales, (const __half *)a->zeros,
        (const __half *)a->x, (__half *)a->y);
}

// Blocks of one instantiation the whole GPU holds at once.
template <int tpr>
static int wave_blocks() { return kl_blocks_at_once((const void *)qgemv_int4<tpr>, block_threads(tpr), 0); }

typedef struct tpr_entry { int tpr; int (*wave)(void); void (*launch)(const kl_gemv_args *, cudaStream_t); } tpr_entry;
#define E(t) {t, wave_blocks<t>, launch_tpr<t>},
static const tpr_entry tprs[] = {E(8) E(16) E(32) E(64) E(128) E(256) E(512)};
#undef E

// The launch table: of the powers of two from lo (the fewest threads that
// cover a row in 8 passes, at least 16) to hi (the most that give every thread
// a load in one pass, at most 256), the largest whose grid fits in one wave;
// lo when none does (16384^2, 128256 x 4096).  8192^2: 32 (512 blocks of 16
// rows for 528 slots); 4096 x 14336: 64; 14336 x 4096: 16.
static int pick(const kl_gemv_args *a) {
    const int n = (int)(sizeof tprs / sizeof tprs[0]), k32 = a->k / 32;
    if (TPR)
        for (int e = 0; e < n; ++e)
            if (tprs[e].tpr == TPR) return e;
    int lo = 16, hi = 8;
    while (lo < 512 && lo * UNROLL * 8 < k32) lo *= 2;
    while (hi < 256 && hi * UNROLL < k32) hi *= 2;
    int best = -1;
    for (int e = 0; e < n; ++e) {
        const int t = tprs[e].tpr;
        if (t < lo || (t > hi && best >= 0)) continue;   // lo is taken even when above hi
        const int rows_per_block = block_threads(t) / t * ROWS;
        if (best < 0 || (a->n + rows_per_block - 1) / rows_per_block <= tprs[e].wave()) best = e;
    }
    return best;
}

static void launch(const kl_gemv_args *a, void *ctx, cudaStream_t stream) {
    (void)ctx;
    tprs[pick(a)].launch(a, stream);
    KL_CHECK_LAUNCH();
}

static int accepts(const kl_problem *p, char *msg, size_t len) {
    if (p->k % KL_INT4_GROUP) {
        snprintf(msg, len, "K=%d is not a multiple of 128 (the int4 group size); pick K = %d", p->k,
                 (p->k + 127) / 128 * 128);
        return 1;
    }
    return 0;
}

int main(int argc, char **argv) {
    kl_step step = {};
    step.number = 14;
    step.title = "packed int4 weights, group-wise scale and zero (128), 32 weights per 16-byte load";
    step.accepts = accepts;
    step.kernels[0].op = &kl_op_qgemv_int4;
    step.kernels[0].gemv = launch;
    return kl_main(argc, argv, &step);
}
