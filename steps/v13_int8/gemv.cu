/*
 * Step 13 - int8 weights with a scale and a zero point per row, fp16 x.
 *
 * GEMV time is weight bytes over bandwidth, so storing weights in 1 byte
 * instead of 2 halves the time, whatever the arithmetic costs, as long as the
 * arithmetic stays hidden under the loads.  Format (common/ops/quant.h): q is
 * uint8 [N][K]; row r has an fp16 scale s[r] and zero z[r]; w = (q - z) * s.
 *
 * What changes from step 12:
 *  - a 16-byte load now brings 16 weights, which need 32 bytes of x (two
 *    float4): x bytes per weight byte double.  ROWS rows per thread would
 *    load and convert x once for ROWS rows (the sweep in the doc).
 *  - the scale is pulled out of the sum: y = s * sum_k x_k (q_k - z), one
 *    multiply per row instead of one per weight.
 *  - uint8 -> float without a conversion instruction: __byte_perm puts the
 *    byte under the exponent of 2^23 (0x4B0000qq is the float 2^23 + q), and
 *    subtracting 2^23 + z leaves q - z exactly.  One PRMT, one FADD and one
 *    FFMA per weight; I2F runs at 1/8 of the FFMA rate (16 vs 128 per SM/clk).
 *  - every weight load of a pass is issued before anything waits on
 *    memory.  Reading the SASS of the first version showed ptxas had undone
 *    the source's "loads first": it kept one 16-byte chunk in flight per
 *    thread (32 registers) and converted the row's zero point, a cold
 *    2-byte load, before issuing the first weight load - one memory latency
 *    in series at the start of every block.  Now the zero and scale are read
 *    after the pass's loads, a whole pass has no predicates (its offsets are
 *    immediates), and __launch_bounds__ grants 64 registers (SM_THREADS =
 *    1024 threads per SM): 4 x 16 bytes of weights and 8 x 16 of x in
 *    flight per thread, issued back to back.
 *  - a launch table: TPR threads per row, the smallest power of two that
 *    covers a row in one pass of UNROLL loads, at most 64 (longer rows take
 *    several passes), in blocks of BLOCK = 128 threads (two rows).
 *
 * Napkin math: at 8192^2 the weights are 64 MiB.  The fastest single launch
 * that reads 67 MB on the H100, timed as the harness times (./read_floor;
 * a few us of it are the launch and the events), takes ~25.4-25.8 us: 1.9x
 * cuBLAS fp16's ~49.9 us is 26.2 us, under 1 us above that floor.  At 16384^2
 * (256 MiB) the floor is ~84 us, 2.2x cuBLAS's ~188 us.
 * Arithmetic: 4.3 SASS instructions per weight; 268 M weights over 132 SMs
 * x 4 schedulers x 1.98 GHz is ~35 us of issue at 16384^2, under the memory
 * time, but time in which a warp issues no loads.
 *
 * K must be a multiple of 16 (16 weights per 16-byte load, rows 16-byte
 * aligned).
 *
 * Build and run:   make step13 && ./step13
 *                  ./step13 -n 1000 -k 1008 --check-only
 */
#include "kl.h"

#include <cuda_fp16.h>

#ifndef ROWS
#define ROWS 1      // rows per thread (x reuse); the sweep in the doc
#endif
#ifndef UNROLL
#define UNROLL 4    // 16-byte weight loads in flight per row per thread
#endif
#ifndef TPR
#define TPR 0       // threads per row set (a power of two, 8..512); 0: the launch table
#endif
#ifndef BLOCK
#define BLOCK 128   // threads per block (TPR x BLOCK/TPR; TPR threads when TPR > BLOCK)
#endif
#ifndef SM_THREADS
#define SM_THREADS 1024  // threads per SM the registers must allow (__launch_bounds__): 64 registers each
#endif
static_assert(ROWS >= 1 && ROWS <= 8 && UNROLL >= 1 && UNROLL * ROWS <= 16, "registers: UNROLL*ROWS uint4 live");
static_assert(TPR == 0 || ((TPR & (TPR - 1)) == 0 && TPR >= 8 && TPR <= 512), "TPR: 0 or a power of two in 8..512");
static_assert(BLOCK % 32 == 0 && BLOCK >= 32 && BLOCK <= 1024, "BLOCK: whole warps");
static_assert(SM_THREADS >= 512 && SM_THREADS <= 2048, "SM_THREADS: 512 (128 registers) .. 2048 (32)");

// Sum each of the ROWS values over the tpr threads of a row set.
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

// 2^23 + q as a float, from byte t of a word: one PRMT.  magic (0x4B000000)
// comes in a register so that the selector can be PRMT's immediate.
__device__ __forceinline__ float byte_magic(uint32_t word, uint32_t magic, int t) {
    return __uint_as_float(__byte_perm(word, magic, 0x7540 | t));
}

// A block is BLOCK threads (BLOCK / tpr rows), or one row of tpr threads when
// tpr > BLOCK; __launch_bounds__ asks for registers that fit SM_THREADS threads.
constexpr int block_threads(int tpr) { return tpr > BLOCK ? tpr : BLOCK; }
constexpr int blocks_per_sm(int tpr) { return SM_THREADS > block_threads(tpr) ? SM_THREADS / block_threads(tpr) : 1; }

template <int tpr>
__global__ void __launch_bounds__(block_threads(tpr), blocks_per_sm(tpr))
qgemv_int8(int N, int K, const uint8_t *__restrict__ W, const __half *__restrict__ scale,
           const __half *__restrict__ zero, const __half *__restrict__ x, __half *__restrict__ y) {
    const int row0 = (blockIdx.x * blockDim.y + threadIdx.y) * ROWS, K16 = K / 16;
    const uint4 *w[ROWS];
    int r[ROWS];
#pragma unroll
    for (int j = 0; j < ROWS; ++j) {
        r[j] = min(row0 + j, N - 1);   // rows past N re-read row N-1 (no branch) and are not stored
        w[j] = reinterpret_cast<const uint4 *>(W + (size_t)r[j] * K);
    }
    const float4 *x4 = reinterpret_cast<const float4 *>(x);

    // One pass: UNROLL chunks of 16 weights per row, tpr chunks apart; a
    // chunk past the row end reads nothing and counts 0 (x = 0).  Two copies
    // of the loads: unguarded when the whole pass is inside the row (ptxas
    // then issues all of them back to back, offsets as immediates), guarded
    // (predicated, zero-filled) for the row's last, partial pass.
    uint4 wv[UNROLL][ROWS];
    float4 xv[UNROLL][2];
    auto load = [&](int i, bool guard) {
        const float4 *xp = x4 + 2 * i;
#pragma unroll
        for (int u = 0; u < UNROLL; ++u) {
            const bool in = !guard || i + u * tpr < K16;
#pragma unroll
            for (int j = 0; j < ROWS; ++j) wv[u][j] = in ? __ldcs(w[j] + i + u * tpr) : make_uint4(0, 0, 0, 0);
            xv[u][0] = in ? __ldg(xp + 2 * u * tpr) : make_float4(0, 0, 0, 0);
            xv[u][1] = in ? __ldg(xp + 2 * u * tpr + 1) : make_float4(0, 0, 0, 0);
        }
    };
    auto load_pass = [&](int i) {
        if (i + (UNROLL - 1) * tpr < K16) load(i, false);
        else load(i, true);
    };
    int i = threadIdx.x;
    load_pass(i);   // the first pass's loads go out before anything waits on memory ...

    float zmagic[ROWS], s[ROWS], acc[ROWS];
#pragma unroll
    for (int j = 0; j < ROWS; ++j) {   // ... then the row's zero and scale (not after the sum)
        zmagic[j] = 8388608.0f + __half2float(zero[r[j]]);   // 2^23 + z: exact
        s[j] = __half2float(scale[r[j]]);
        acc[j] = 0.0f;
    }
    uint32_t magic;
    asm("mov.b32 %0, 0x4B000000;" : "=r"(magic));        // the float 2^23 (see byte_magic)

    for (;;) {
#pragma unroll
        for (int u = 0; u < UNROLL; ++u) {
            float xf[16];                       // x converted once, used by ROWS rows
            const __half2 *xh = reinterpret_cast<const __half2 *>(xv[u]);
#pragma unroll
            for (int h = 0; h < 8; ++h) {
                const float2 f = __half22float2(xh[h]);
                xf[2 * h] = f.x;
                xf[2 * h + 1] = f.y;
            }
#pragma unroll
            for (int j = 0; j < ROWS; ++j) {
                const uint32_t words[4] = {wv[u][j].x, wv[u][j].y, wv[u][j].z, wv[u][j].w};
#pragma unroll
                for (int b = 0; b < 4; ++b)
#pragma unroll
                    for (int t = 0; t < 4; ++t)  // byte t of word b is column 4b+t of the chunk
                        acc[j] = fmaf(xf[4 * b + t], byte_magic(words[b], magic, t) - zmagic[j], acc[j]);
            }
        }
        i += tpr * UNROLL;   // next pass (K = 8192: two passes of 64 threads x 4 loads)
        if (i >= K16) break;
        load_pass(i);
    }
    row_sums<tpr>(acc);
#pragma unroll
    for (int j = 0; j < ROWS; ++j)
        if (threadIdx.x == 0 && row0 + j < N) y[row0 + j] = __float2half(acc[j] * s[j]);
}

// The launch table: threads per row = the power of two that covers a row in
// one pass of UNROLL 16-byte loads (K = 1024: 16, 2048: 32), at most 64:
// longer rows take several passes (K = 8192: 2, 11008: 3, the last 2/3
// full).  Wider one-pass rows (128 at 8192, 256 at 16384) measured within 1%
// of 64, and 17% slower at K = 11008, where one pass leaves a third of its
// slots empty (the doc).  -DTPR=... replaces it (sweeps).
static int pick_tpr(int K) {
    if (TPR) return TPR;
    const int want = (K / 16 + UNROLL - 1) / UNROLL;   // loads per row / loads per thread
    int t = 8;
    while (t < 64 && t < want) t *= 2;
    return t;
}

template <int tpr>
static void launch_tpr(const kl_gemv_args *a, cudaStream_t stream) {
    const int rsets = block_threads(tpr) / tpr, rows_per_block = rsets * ROWS;
    const int grid = (a->n + rows_per_block - 1) / rows_per_block;
    qgemv_int8<tpr><<<grid, dim3(tpr, rsets), 0, stream>>>(a->n, a->k, (const uint8_t *)a->w,
                                                          (const __half *)a->scales, (const __half *)a->zeros,
                                                          (const __half *)a->x, (__half *)a->y);
}

static void launch(const kl_gemv_args *a, void *ctx, cudaStream_t stream) {
    (void)ctx;
    switch (pick_tpr(a->k)) {
    case 8: launch_tpr<8>(a, stream); break;
    case 16: launch_tpr<16>(a, stream); break;
    case 32: launch_tpr<32>(a, stream); break;
    case 64: launch_tpr<64>(a, stream); break;
    case 128: launch_tpr<128>(a, stream); break;
    case 256: launch_tpr<256>(a, stream); break;
    default: launch_tpr<512>(a, stream); break;
    }
    KL_CHECK_LAUNCH();
}

static int accepts(const kl_problem *p, char *msg, size_t len) {
    if (p->k % 16) {
        snprintf(msg, len, "K=%d is not a multiple of 16 (16 int8 weights per 16-byte load, rows 16-byte "
                 "aligned); pick K = %d", p->k, (p->k + 15) / 16 * 16);
        return 1;
    }
    return 0;
}

int main(int argc, char **argv) {
    kl_step step = {};
    step.number = 13;
    step.title = "int8 weights, per-row scale and zero, fp16 x: 16 weights per 16-byte load";
    step.accepts = accepts;
    step.kernels[0].op = &kl_op_qgemv_int8;
    step.kernels[0].gemv = launch;
    return kl_main(argc, argv, &step);
}
