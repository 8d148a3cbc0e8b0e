/*
 * Step 9 - prefetch and double buffering: load the next tile while computing.
 *
 * v8 does, per tile: load from global, store to shared, __syncthreads,
 * compute, __syncthreads.  Every warp of the block waits for memory at the
 * top of each tile, and with 128 registers per thread only 16 warps share
 * an SM, too few for switching alone to hide the wait.  Here two pipelines
 * overlap loads with FMAs:
 *   global -> registers -> shared: tile t+1 is fetched into registers in
 *     CHUNKS pieces while tile t is computed, each piece stored to the
 *     OTHER shared buffer BK/CHUNKS - 1 steps of k later; one __syncthreads
 *     per tile instead of two.
 *   shared -> registers: the fragments (regM, regN) for k+1 are loaded while
 *     the FMAs of k run: two sets of fragment registers.
 *
 * Napkin math: 2 blocks of 8 warps per SM give each of the 4 schedulers 4
 * warps; KC - 1 = 7 steps of 64 FMAs per warp are ~1800 cycles of FMA issue
 * between fetching a piece and storing it, well over L2/DRAM latency.  Cost:
 * 2x the shared memory (2 x 33 KB with BK = 32) and registers: 64
 * accumulators + 2 x 16 fragment values + a chunk of the next tile
 * (CHUNKS = 4 keeps that at 8 floats) must fit in 128 to keep 2 blocks/SM.
 *
 * With the loads hidden, instructions are the limit: a scheduler issues one
 * per cycle and its 32 FP32 lanes retire one warp FFMA per cycle, so every
 * other instruction in the loop takes an FMA's slot.  Per 1024 FFMAs a warp
 * must also issue 64 LDS.128; the rest is overhead per tile (global loads,
 * shared stores, addresses, one barrier).  So: pointers moved once per tile,
 * two tiles per loop trip (the buffer numbers become constants and the
 * offsets immediates), and BK = 32, which halves the tiles and barriers.
 * make sass STEP=9: 1116 instructions per 1024 FFMAs (91.8% FFMA); the
 * same pipeline with BK = 16 and addresses recomputed from t was 1174 (87%).
 *
 * Build and run:   make step9 && ./step9            (sizes 1024..8192)
 *                  make step9 DEFS="-DBK=16 -DCHUNKS=2"   (a sweep point)
 */
#include "kl.h"

#ifndef BM
#define BM 128
#endif
#ifndef BN
#define BN 128
#endif
#ifndef BK
#define BK 32
#endif
#ifndef TM
#define TM 8    // outputs per thread down a column of C
#endif
#ifndef TN
#define TN 8    // outputs per thread along a row of C
#endif
#ifndef WM
#define WM 64   // rows of C per warp
#endif
#ifndef WN
#define WN 32   // columns of C per warp
#endif
#ifndef CHUNKS
#define CHUNKS 4   // the next tile is fetched in CHUNKS pieces spread over the k loop
#endif
#ifndef MIN_BLOCKS
#define MIN_BLOCKS 2   // blocks per SM the register budget must allow (65536 / (256 * 2) = 128)
#endif
#ifndef APAD
#define APAD 4
#endif
#define NUM_THREADS ((BM / WM) * (BN / WN) * 32)
#define WTM (WM / TM)         // lanes down a warp tile
#define WTN (WN / TN)         // lanes across a warp tile
#define WSUBM (WM / (TM / 4)) // distance between a lane's float4 pieces, rows
#define WSUBN (WN / (TN / 4)) // and columns
static_assert(BM % WM == 0 && BN % WN == 0, "warp tiles tile the block tile");
static_assert(WM % TM == 0 && WN % TN == 0 && WTM * WTN == 32, "32 lanes tile a warp tile");
static_assert(BM % TM == 0 && BN % TN == 0 && TM % 4 == 0 && TN % 4 == 0, "thread tiles of float4s");
static_assert(BK % 4 == 0 && BN % 4 == 0 && APAD % 4 == 0, "float4 rows of tiles");
static_assert(NUM_THREADS % 32 == 0 && NUM_THREADS <= 1024, "whole warps, at most 1024 threads");
static_assert(NUM_THREADS % (BK / 4) == 0 && (BM * BK / 4) % NUM_THREADS == 0, "the A tile copy must split evenly");
static_assert(NUM_THREADS % (BN / 4) == 0 && (BK * BN / 4) % NUM_THREADS == 0, "the B tile copy must split evenly");

// One buffer of the pipeline.  Two of them are 66 KB at the defaults, more
// than the 48 KB a block gets without asking: dynamic shared memory, see launch().
struct Stage {
    float As[BK][BM + APAD];   // transposed: As[k][m]; 32*132*4 = 16.9 KB
    float Bs[BK][BN];          // 32*128*4 = 16 KB
};
static_assert(2 * sizeof(Stage) <= 227 * 1024, "an sm_90 block has at most 227 KB of shared memory");
static_assert(MIN_BLOCKS * (2 * sizeof(Stage) + 1024) <= 228 * 1024, "MIN_BLOCKS blocks fit in an SM's 228 KB");

template <bool CHECKED>
__device__ __forceinline__ float4 load4(const float *p, int r, int c, int rows, int cols, int ld) {
    if constexpr (!CHECKED) {
        return *reinterpret_cast<const float4 *>(p + (size_t)r * ld + c);
    } else {
        float4 v = make_float4(0.f, 0.f, 0.f, 0.f);
        if (r < rows) {
            const float *q = p + (size_t)r * ld + c;
            if (c + 0 < cols) v.x = q[0];
            if (c + 1 < cols) v.y = q[1];
            if (c + 2 < cols) v.z = q[2];
            if (c + 3 < cols) v.w = q[3];
        }
        return v;
    }
}

// C(r, c..c+3) = alpha * v + beta * C(r, c..c+3).  beta == 0: C is not read.
template <bool CHECKED>
__device__ __forceinline__ void store4(float *p, int r, int c, int rows, int cols, int ld,
                                       float4 v, float alpha, float beta) {
    float *q = p + (size_t)r * ld + c;
    v = make_float4(alpha * v.x, alpha * v.y, alpha * v.z, alpha * v.w);
    if constexpr (!CHECKED) {
        if (beta != 0.0f) {
            const float4 o = *reinterpret_cast<const float4 *>(q);
            v.x += beta * o.x; v.y += beta * o.y; v.z += beta * o.z; v.w += beta * o.w;
        }
        *reinterpret_cast<float4 *>(q) = v;
    } else {
        const float w[4] = {v.x, v.y, v.z, v.w};
        if (r < rows)
            for (int j = 0; j < 4; ++j)
                if (c + j < cols) q[j] = beta == 0.0f ? w[j] : w[j] + beta * q[j];
    }
}

template <bool CHECKED>
__global__ void __launch_bounds__(NUM_THREADS, MIN_BLOCKS)
sgemm_double_buffer(int M, int N, int K, float alpha, const float *A,
                    const float *B, float beta, float *C) {
    extern __shared__ __align__(16) float smem[];
    Stage *st = reinterpret_cast<Stage *>(smem);   // st[0], st[1]: 2 * 33 KB

    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int warpRow = warp / (BN / WN), warpCol = warp % (BN / WN);
    const int threadRow = lane / WTN, threadCol = lane % WTN;
    const int rowA = warpRow * WM + threadRow * 4;
    const int colB = warpCol * WN + threadCol * 4;
    const int loadRowA = threadIdx.x / (BK / 4), loadColA = threadIdx.x % (BK / 4) * 4;
    const int loadRowB = threadIdx.x / (BN / 4), loadColB = threadIdx.x % (BN / 4) * 4;
    constexpr int strideA = NUM_THREADS / (BK / 4), strideB = NUM_THREADS / (BN / 4);
    constexpr int LA = BM * BK / 4 / NUM_THREADS, LB = BK * BN / 4 / NUM_THREADS;  // float4s per thread
    static_assert(LA % CHUNKS == 0 && LB % CHUNKS == 0 && BK % (2 * CHUNKS) == 0, "chunks split the copy evenly");
    constexpr int CA = LA / CHUNKS, CB = LB / CHUNKS, KC = BK / CHUNKS;  // per chunk; k steps per chunk
    const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;

    // A and B point at this thread's first float4 of the tile being FETCHED;
    // one add per tile moves them on (v8 moved the tile's corner instead).
    A += (size_t)(row0 + loadRowA) * K + loadColA;
    B += (size_t)loadRowB * N + col0 + loadColB;
    // What is left of A and B from there on (the checked loads' bounds):
    const int rowsA = M - row0 - loadRowA, colsB = N - col0 - loadColB;
    int colsA = K - loadColA, rowsB = K - loadRowB;
    const int tiles = (K + BK - 1) / BK;

    // Prefetch registers: one chunk of the next tile (the whole tile when CHUNKS = 1).
    // More chunks = fewer registers held: a BK = 32 tile is 32 floats per thread,
    // 4 chunks keep 8 of them in flight, and the kernel stays within 128 registers.
    float4 ldA[CA], ldB[CB];
    auto loadChunk = [&](int c) {   // global -> registers
#pragma unroll
        for (int p = 0; p < CA; ++p)
            ldA[p] = load4<CHECKED>(A, (c * CA + p) * strideA, 0, rowsA, colsA, K);
#pragma unroll
        for (int p = 0; p < CB; ++p)
            ldB[p] = load4<CHECKED>(B, (c * CB + p) * strideB, 0, rowsB, colsB, N);
        if (c == CHUNKS - 1) {      // the whole tile is on its way: on to the next
            A += BK;
            B += (size_t)BK * N;
            colsA -= BK;
            rowsB -= BK;
        }
    };
    // Where this thread's pieces land: offsets into a Stage, the same in both buffers.
    const int offA = loadColA * (BM + APAD) + loadRowA;
    const int offB = loadRowB * BN + loadColB;
    auto storeChunk = [&](int buf, int c) {   // registers -> shared buffer buf
#pragma unroll
        for (int p = 0; p < CA; ++p) {
            float *q = &st[buf].As[0][0] + offA + (c * CA + p) * strideA;
            q[0 * (BM + APAD)] = ldA[p].x;
            q[1 * (BM + APAD)] = ldA[p].y;
            q[2 * (BM + APAD)] = ldA[p].z;
            q[3 * (BM + APAD)] = ldA[p].w;
        }
#pragma unroll
        for (int p = 0; p < CB; ++p)
            *reinterpret_cast<float4 *>(&st[buf].Bs[0][0] + offB + (c * CB + p) * strideB * BN) = ldB[p];
    };

    float acc[TM][TN] = {};
    float regM[2][TM], regN[2][TN];   // fragments for k (computing) and k+1 (loading)
    auto loadFrag = [&](int buf, int k, int f) {   // shared -> registers, as in v8
#pragma unroll
        for (int i = 0; i < TM / 4; ++i)
            *reinterpret_cast<float4 *>(&regM[f][i * 4]) = *reinterpret_cast<const float4 *>(&st[buf].As[k][rowA + i * WSUBM]);
#pragma unroll
        for (int j = 0; j < TN / 4; ++j)
            *reinterpret_cast<float4 *>(&regN[f][j * 4]) = *reinterpret_cast<const float4 *>(&st[buf].Bs[k][colB + j * WSUBN]);
    };

    for (int c = 0; c < CHUNKS; ++c) {   // prologue: tile 0 into buffer 0, fragment k = 0
        loadChunk(c);
        storeChunk(0, c);
    }
    __syncthreads();
    loadFrag(0, 0, 0);

    // One tile: FMAs on buffer cur while the next tile travels into cur ^ 1.
    auto tile = [&](const int cur, const bool more) {   // more: the same for the whole block
#pragma unroll
        for (int k = 0; k < BK; ++k) {
            const int f = k & 1;           // BK is even: k = 0 always uses set 0
            if (more && k % KC == 0)
                loadChunk(k / KC);         // issued now, stored KC-1 steps of FMAs later
            if (k + 1 < BK) {
                loadFrag(cur, k + 1, f ^ 1);
                if (more && k % KC == KC - 1) storeChunk(cur ^ 1, k / KC);
            } else if (more) {
                // Buffer cur^1 was last read before the previous __syncthreads.
                storeChunk(cur ^ 1, CHUNKS - 1);
                __syncthreads();
                loadFrag(cur ^ 1, 0, f ^ 1);
            }
#pragma unroll
            for (int i = 0; i < TM; ++i)
#pragma unroll
                for (int j = 0; j < TN; ++j)
                    acc[i][j] += regM[f][i] * regN[f][j];
        }
    };
    for (int t = 0; t < tiles; t += 2) {   // two tiles per trip: the buffer numbers are constants
        tile(0, t + 1 < tiles);
        if (t + 1 < tiles) tile(1, t + 2 < tiles);
    }

#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; j += 4)
            store4<CHECKED>(C + (size_t)row0 * N + col0, rowA + (i / 4) * WSUBM + i % 4, colB + (j / 4) * WSUBN,
                            M - row0, N - col0, N,
                            make_float4(acc[i][j], acc[i][j + 1], acc[i][j + 2], acc[i][j + 3]), alpha, beta);
}

static bool aligned16(const void *p) { return ((uintptr_t)p & 15) == 0; }

static void launch(int M, int N, int K, float alpha, const float *A, const float *B,
                   float beta, float *C, void *ctx, cudaStream_t stream) {
    (void)ctx;
    dim3 grid((N + BN - 1) / BN, (M + BM - 1) / BM);
    const bool fast = M % BM == 0 && N % BN == 0 && K % BK == 0 &&
                      aligned16(A) && aligned16(B) && aligned16(C);
    constexpr int smem = 2 * sizeof(Stage);
    static bool once = [] {   // above 48 KB of dynamic shared memory, a kernel must opt in
        CUDA_CHECK(cudaFuncSetAttribute(sgemm_double_buffer<false>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
        CUDA_CHECK(cudaFuncSetAttribute(sgemm_double_buffer<true>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
        return true;
    }();
    (void)once;
    if (fast)
        sgemm_double_buffer<false><<<grid, NUM_THREADS, smem, stream>>>(M, N, K, alpha, A, B, beta, C);
    else
        sgemm_double_buffer<true><<<grid, NUM_THREADS, smem, stream>>>(M, N, K, alpha, A, B, beta, C);
    KL_CHECK_LAUNCH();
}

int main(int argc, char **argv) {
    kl_step step = {};
    step.number = 9;
    step.title = "prefetch and double buffering (global->shared and shared->registers)";
    step.smem_per_block = 2 * sizeof(Stage);   // 66,560 bytes: more than a Turing block may have (64 KB)
    step.kernels[0].op = &kl_op_sgemm;
    step.kernels[0].sgemm = launch;
    return kl_main(argc, argv, &step);
}
