// needs: sm_80 (mma.sync m16n8k16 with bf16 operands, cp.async)
/*
 * Step 19 - cp.async and a ring of stages, larger tiles: the Ampere recipe.
 *
 * v18's fragment loads no longer conflict, but every k tile still goes
 * global -> registers -> shared, then all warps wait at a barrier for the
 * slowest load before any mma runs, and again before the next tile may be
 * stored.  The tensor cores idle for a whole memory latency per tile.  Two
 * changes, the recipe of Ampere's GEMMs (sm_80 and later):
 *
 *   cp.async: a copy from global straight into shared memory that the
 *     thread issues and does not wait for (no registers in between).  Copies
 *     are committed in groups, one group per k tile, and
 *     `cp.async.wait_group N` waits until at most N groups are in flight.
 *   A ring of STAGES buffers: tiles kt+1 .. kt+STAGES-1 are in flight while
 *     tile kt is multiplied; one barrier per tile both publishes tile kt and
 *     frees the buffer that tile kt-1 used, which the next copy then fills.
 *
 * With the loads off the critical path the tile can grow: 128 x 256 per
 * block and 64 x 64 per warp.  Per warp and k16 step that is 4 + 4
 * ldmatrix.x4 for 32 mma (v18: 6 for 16), and per block and k tile
 * (128 + 256) x 64 x 2 = 48 KB loaded for 2 x 128 x 256 x 64 = 4.2 MFLOP:
 * 85 FLOP per byte of L2 traffic (BM BN / (BM + BN) for bf16), against 64
 * for v18's 128 x 128.  The cost: 128 accumulators per thread and STAGES x
 * 48 KB of shared memory, so one block (8 warps) per SM, 2 warps per scheduler.
 *
 * With 2 warps per scheduler, whatever a warp does besides mma must hide
 * behind the other warp's mma.  So the same pipelining goes one level down
 * (the ldmatrix of the next k step are issued before this step's mma, into a
 * second set of registers), the 12 copies per thread and tile are spread over
 * three k steps, and a block whose tile lies inside the matrices takes a
 * loader with no tests: 306 instructions per warp and k tile instead of 378
 * (the loop body in cuobjdump -sass; 390 in a block on the edge).
 *
 * mma.sync is the Ampere instruction: on a Hopper GPU it runs, but cannot
 * reach the rate of Hopper's own wgmma (v20), which cuBLAS uses there.
 *
 * Build and run:   make step19 && ./step19          (sizes 1024..8192, model shapes)
 */
#include "kl.h"

#include <cuda_bf16.h>

#define BM 128   // the block's tile of C
#define BN 256
#define BK 64    // k depth of a tile: 128-byte rows, the swizzle's width
#define WM 64    // rows of C per warp
#define WN 64    // columns of C per warp
#ifndef STAGES
#define STAGES 3   // k tiles in the ring: STAGES - 1 in flight while one is multiplied
#endif
#define NUM_THREADS (32 * (BM / WM) * (BN / WN))
#define MI (WM / 16)   // mma tiles down a warp's piece of C
#define NI (WN / 8)    // mma tiles across it
static_assert(BM % WM == 0 && BN % WN == 0 && WM % 16 == 0 && WN % 8 == 0, "warps tile the block");
static_assert(BK % 16 == 0 && NI % 2 == 0, "k steps of 16; B fragments loaded in pairs");
static_assert(STAGES >= 2, "a ring needs a tile in flight and one multiplied");
static_assert((BM * BK / 8) % NUM_THREADS == 0 && (BN * BK / 8) % NUM_THREADS == 0,
              "16-byte loads split evenly over the threads");

// D = A * B + D on one warp: a 16 x 16 (row) by 16 x 8 (col) bf16 product
// added to a 16 x 8 fp32 tile.  a: 4 registers of 2 bf16, b: 2, d: 4 floats.
__device__ __forceinline__ void mma_m16n8k16(float d[4], const uint32_t a[4], const uint32_t b[2]) {
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
                 "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

// Four 8 x 8 bf16 matrices from shared memory: lane l gives the address of
// row l % 8 of matrix l / 8 and receives, in r[q], the two elements (row
// l / 4, columns 2 (l % 4) and 2 (l % 4) + 1) of matrix q: an mma fragment.
__device__ __forceinline__ void ldmatrix_x4(uint32_t r[4], const __nv_bfloat16 *p) {
    const unsigned addr = (unsigned)__cvta_generic_to_shared(p);
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(addr));
}

// Where the 8 bf16 at (row r, columns 8c .. 8c+7) of a tile live: the
// 16-byte chunk c of row r is stored at chunk c ^ (r % 8) (128-byte swizzle).
static_assert(BK == 64, "the swizzle below spreads the 8 chunks of a 128-byte row");
__device__ __forceinline__ __nv_bfloat16 *chunk(__nv_bfloat16 (*tile)[BK], int r, int c) {
    return &tile[r][(c ^ (r % 8)) * 8];
}

// 16 bytes from global to shared memory, not waited for.  With src_bytes = 0
// nothing is read and the 16 bytes are zeros: a row or column past the edge.
__device__ __forceinline__ void cp_async16(void *dst, const void *src, bool valid) {
    const unsigned s = (unsigned)__cvta_generic_to_shared(dst);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(s), "l"(src), "r"(valid ? 16 : 0));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
// Wait until at most N of this thread's groups are in flight.  "memory": the
// compiler may not move a shared-memory read above it (the __syncthreads that
// follows would hold them too, but the wait should not depend on it).
template <int N>
__device__ __forceinline__ void cp_async_wait() { asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory"); }

// Copies J0 .. J1-1 of this thread's share of a ROWS x BK tile of a
// row-major matrix g (rows of K elements, k0 the tile's first column) into a
// swizzled shared tile, 16 bytes (8 bf16) each.  Copy j of thread t is row
// r = t / 8 + 32 j, chunk c = t % 8: a warp's copy covers 4 whole 128-byte
// rows, and all of a thread's copies land in the same swizzled column
// (r % 8 is the same), 32 rows = 4 KB apart.
//   EDGE false (a block whose tile lies inside A and B, K % BK == 0 and a
//     tile's byte offsets below 2^32): no test, and each address is one
//     32-bit add to a base that is the same for every thread.
//   EDGE true: rows past `rows` and columns past K are zeros (src-size 0), so
//     a partial tile multiplies as if padded.
template <int J0, int J1, bool EDGE>
__device__ __forceinline__ void load_copies(__nv_bfloat16 (*tile)[BK], const __nv_bfloat16 *g, int rows, int K,
                                            int k0) {
    const int r0 = threadIdx.x / (BK / 8), c = threadIdx.x % (BK / 8);
    constexpr int ROWS_APART = NUM_THREADS / (BK / 8);
    __nv_bfloat16 *dst = chunk(tile, r0, c);
    if (!EDGE) {
        const char *base = reinterpret_cast<const char *>(g + k0);
        const unsigned off = ((unsigned)r0 * K + 8 * c) * 2, stride = ROWS_APART * (unsigned)K * 2;
#pragma unroll
        for (int j = J0; j < J1; ++j)   // a constant trip count: unrolled
            cp_async16(dst + j * ROWS_APART * BK, base + off + j * stride, true);
    } else {
#pragma unroll
        for (int j = J0; j < J1; ++j) {
            const int r = r0 + j * ROWS_APART;
            const bool valid = r < rows && k0 + 8 * c < K;
            cp_async16(dst + j * ROWS_APART * BK, valid ? g + (size_t)r * K + k0 + 8 * c : g, valid);
        }
    }
}

struct Stage {
    __nv_bfloat16 As[BM][BK];   // 128*64*2 = 16 KB, swizzled
    __nv_bfloat16 Bs[BN][BK];   // 256*64*2 = 32 KB, swizzled
};

// The fragments of k step kk (16 deep) of a stage for this warp's 64 x 64:
// 4 A tiles of 16 x 16 and 8 B tiles of 16 x 8, 8 ldmatrix.x4 in all.
// A: matrices (rows 0-7, k 0-7), (rows 8-15, k 0-7), (rows 0-7, k 8-15),
// (rows 8-15, k 8-15): lane l points at row l % 16, chunk l / 16.  Two B
// fragments (Bs rows = columns of C) = (n 0-7, k 0-7), (n 0-7, k 8-15),
// (n 8-15, k 0-7), (n 8-15, k 8-15): row l % 8 + 8 (l / 16), chunk l / 8 % 2.
__device__ __forceinline__ void load_fragments(uint32_t a[MI][4], uint32_t b[NI][2], Stage &st, int kk, int wm,
                                               int wn, int lane) {
#pragma unroll
    for (int i = 0; i < MI; ++i) ldmatrix_x4(a[i], chunk(st.As, wm + i * 16 + lane % 16, kk / 8 + lane / 16));
#pragma unroll
    for (int j = 0; j < NI; j += 2) {
        uint32_t r[4];
        ldmatrix_x4(r, chunk(st.Bs, wn + j * 8 + lane % 8 + 8 * (lane / 16), kk / 8 + lane / 8 % 2));
        b[j][0] = r[0], b[j][1] = r[1], b[j + 1][0] = r[2], b[j + 1][1] = r[3];
    }
}

// acc += this block's A rows x B rows over all of K.  Two pipelines, one
// inside the other:
//   tiles: STAGES - 1 k tiles are being copied while one is multiplied; the
//     copies of tile kt + STAGES - 1 are spread over k steps 0-2 of tile kt
//     (A's 4 in step 0, B's 8 in steps 1 and 2), so no k step pays for all 12;
//   fragments: two register sets; the ldmatrix of k step s + 1 are issued
//     before the mma of step s, so the mma never wait for shared memory.  For
//     the last step of a tile the next fragments come from the next tile: the
//     wait and the barrier for it sit there, not at the top of the tile.
template <bool EDGE>
__device__ __forceinline__ void multiply_tiles(float acc[MI][NI][4], Stage *st, const __nv_bfloat16 *A,
                                               const __nv_bfloat16 *B, int rowsA, int rowsB, int K, int wm, int wn,
                                               int lane) {
    constexpr int COPIES_A = BM * BK / 8 / NUM_THREADS, COPIES_B = BN * BK / 8 / NUM_THREADS;
    static_assert(BK / 16 == 4 && COPIES_A == 4 && COPIES_B == 8, "the copies are spread over k steps 0-2");
    const int tilesK = (K + BK - 1) / BK;
    // Fill the ring: tiles 0 .. STAGES-2 in flight, one commit group each.
#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) {
        if (s < tilesK) {
            load_copies<0, COPIES_A, EDGE>(st[s].As, A, rowsA, K, s * BK);
            load_copies<0, COPIES_B, EDGE>(st[s].Bs, B, rowsB, K, s * BK);
        }
        cp_async_commit();   // (an empty group past the last tile keeps the count)
    }
    uint32_t a[2][MI][4], b[2][NI][2];   // two sets of fragments: 64 registers
    cp_async_wait<STAGES - 2>();         // this thread's copies of tile 0 have landed
    __syncthreads();                     // everyone's have
    load_fragments(a[0], b[0], st[0], 0, wm, wn, lane);
    for (int kt = 0; kt < tilesK; ++kt) {
        Stage &cur = st[kt % STAGES];
        const int fill = kt + STAGES - 1;   // the tile copied during this one, into
        Stage &dst = st[fill % STAGES];     // the buffer tile kt-1 used
#pragma unroll
        for (int s = 0; s < BK / 16; ++s) {   // unrolled: a[s % 2] are fixed registers
            if (s < BK / 16 - 1) {
                load_fragments(a[(s + 1) % 2], b[(s + 1) % 2], cur, (s + 1) * 16, wm, wn, lane);
            } else {
                cp_async_wait<STAGES - 2>();   // this thread's copies of tile kt+1 have landed
                __syncthreads();               // everyone's have; and every warp is done reading tile kt, whose buffer the next iteration refills
                if (kt + 1 < tilesK) load_fragments(a[0], b[0], st[(kt + 1) % STAGES], 0, wm, wn, lane);
            }
            if (fill < tilesK) {
                if (s == 0) load_copies<0, COPIES_A, EDGE>(dst.As, A, rowsA, K, fill * BK);
                if (s == 1) load_copies<0, COPIES_B / 2, EDGE>(dst.Bs, B, rowsB, K, fill * BK);
                if (s == 2) load_copies<COPIES_B / 2, COPIES_B, EDGE>(dst.Bs, B, rowsB, K, fill * BK);
            }
            if (s == 2) cp_async_commit();   // one group per tile, empty past the end
#pragma unroll
            for (int i = 0; i < MI; ++i)
#pragma unroll
                for (int j = 0; j < NI; ++j) mma_m16n8k16(acc[i][j], a[s % 2][i], b[s % 2][j]);
        }
    }
}

__global__ void __launch_bounds__(NUM_THREADS, 1)
gemm_cp_async(int M, int N, int K, const __nv_bfloat16 *A, const __nv_bfloat16 *B, __nv_bfloat16 *C) {
    extern __shared__ __align__(128) unsigned char smem[];
    Stage *st = reinterpret_cast<Stage *>(smem);   // STAGES x 48 KB: dynamic shared memory

    const int tilesN = (N + BN - 1) / BN;
    const int row0 = blockIdx.x / tilesN * BM, col0 = blockIdx.x % tilesN * BN;
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int wm = warp / (BN / WN) * WM, wn = warp % (BN / WN) * WN;   // this warp's piece of the tile
    const int g = lane / 4, t = lane % 4;   // accumulator coordinates: group and thread in group

    float acc[MI][NI][4] = {};   // 64 x 64 of C per warp: 128 floats per thread
    A += (size_t)row0 * K;
    B += (size_t)col0 * K;
    if (M - row0 >= BM && N - col0 >= BN && K % BK == 0 && (size_t)BN * K * 2 < (1ull << 32))
        multiply_tiles<false>(acc, st, A, B, M - row0, N - col0, K, wm, wn, lane);
    else
        multiply_tiles<true>(acc, st, A, B, M - row0, N - col0, K, wm, wn, lane);

    // Accumulator fragment: rows g and g + 8, columns 2t and 2t + 1.  Each
    // pair of columns is one 4-byte store when N is even (then it is aligned).
#pragma unroll
    for (int i = 0; i < MI; ++i)
#pragma unroll
        for (int j = 0; j < NI; ++j)
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                const int r = row0 + wm + i * 16 + g + 8 * h, c = col0 + wn + j * 8 + 2 * t;
                if (r >= M || c >= N) continue;
                __nv_bfloat16 *out = C + (size_t)r * N + c;
                const float v0 = acc[i][j][2 * h], v1 = acc[i][j][2 * h + 1];
                if (N % 2 == 0) *reinterpret_cast<__nv_bfloat162 *>(out) = __floats2bfloat162_rn(v0, v1);
                else {
                    out[0] = __float2bfloat16_rn(v0);
                    if (c + 1 < N) out[1] = __float2bfloat16_rn(v1);
                }
            }
}

static void launch(int m, int n, int k, const kl_bf16 *a, const kl_bf16 *b, kl_bf16 *c, void *ctx,
                   cudaStream_t stream) {
    (void)ctx;
    const size_t smem = STAGES * sizeof(Stage);   // 3 x 48 KB: over the 48 KB a block gets unasked
    static bool once = false;
    if (!once) {
        int dev = 0, optin = 0;
        CUDA_CHECK(cudaGetDevice(&dev));
        CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
        if ((size_t)optin < smem) {
            fprintf(stderr, "step19: %d stages need %zu KB of shared memory per block; this GPU allows %d KB: "
                            "rebuild with make step19 DEFS=-DSTAGES=2\n", STAGES, smem / 1024, optin / 1024);
            exit(KL_EXIT_NO_GPU);
        }
        CUDA_CHECK(cudaFuncSetAttribute(gemm_cp_async, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
        once = true;
    }
    const long long tiles = (long long)((m + BM - 1) / BM) * ((n + BN - 1) / BN);   // < 2^31 for any C that fits
    gemm_cp_async<<<(unsigned)tiles, NUM_THREADS, smem, stream>>>(
        m, n, k, (const __nv_bfloat16 *)a, (const __nv_bfloat16 *)b, (__nv_bfloat16 *)c);
    KL_CHECK_LAUNCH();
}

int main(int argc, char **argv) {
    kl_step step = {};
    step.number = 19;
    step.title = "cp.async ring of stages, 128x256 block and 64x64 warp tiles (the Ampere recipe)";
    step.min_cc = 80;
    step.smem_per_block = STAGES * sizeof(Stage);   // 144 KB: an A100 or H100, not an RTX 30 or 40 (99 KB)
    step.kernels[0].op = &kl_op_gemm_bf16;
    step.kernels[0].gemm_bf16 = launch;
    return kl_main(argc, argv, &step);
}
