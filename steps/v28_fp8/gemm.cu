// build: sm_90a
/*
 * Step 28 - FP8: v24's kernel multiplies e4m3 bytes, twice the FLOPs per clock.
 *
 * The H100's tensor cores multiply FP8 (e4m3: 4 exponent bits, 3 mantissa bits) at twice
 * their bf16 rate: 8192 FLOP per clock per SM instead of 4096.  The instruction is
 * wgmma ... .m64n256k32.f32.e4m3.e4m3: 32 of k per instruction instead of 16, so each
 * instruction still reads 32 bytes of every row, and a k tile of BK = 128 is the same
 * 128-byte swizzled row v24 loads with BK = 64 bf16.  The ring, its barriers, the TMA
 * boxes (in bytes), the descriptors and their advance of 32 bytes per instruction, the
 * cluster multicast and the epilogue: all v24's, byte for byte.  What changes: the tensor
 * maps say UINT8, the k loop counts k tiles of 128, and the epilogue multiplies by
 * sa * sb, the two tensors' scales (C = sa sb (A B^T): one multiply per element of C
 * instead of one per product).
 *
 * The fp32 accumulators are the tensor cores': across all of K, the adds happen inside
 * the wgmma with fewer mantissa bits than an fp32 add (cuBLASLt's FAST_ACCUM mode does the
 * same; its default promotes partial sums into fp32 registers).  The page measures what
 * that costs in error against K.
 *
 * Per k tile a block now does 128 x 256 x 128 multiply-adds, twice v24's, from the same 48 KB
 * and in the same 1024 tensor-pipe clocks (twice the work at twice the rate): the bytes per
 * FLOP halve, the bytes per second an SM asks of L2 stay v24's, and a problem has half as
 * many k tiles.  Measured on the H100: 100.6% of cuBLASLt's FP8 (fast accumulation) at
 * 8192^3, 1.89x v24's TFLOPS (docs/v28_fp8.md).
 * Build and run:   make step28 && ./step28          (an H100 or H200 only)
 */
#include "kl.h"

#include <cuda.h>   // CUtensorMap and its enums only: the driver is reached through the runtime
#include <cudaTypedefs.h>
#include <cuda_bf16.h>
#include <cuda_fp8.h>

#define BM 128   // 64 rows of C per consumer warpgroup
#define BN 256   // = the wgmma's n: one instruction spans the block's columns
#define BK 128   // e4m3: one byte per element, one 128-byte row
#define STAGES 4   // k tiles in the ring
#define WG_PENDING 1   // wgmma batches left running across the next k tile (0 lost in v20 and v21)
#define GROUP_M 16   // M-tiles that walk across N together (1: row-major, v22's order)
#define CS_COLS 128   // columns of C a consumer stages per TMA store round
#define CLUSTER_M 2   // blocks of a cluster along M: tiles (m, n), (m + 1, n) share B's strip (a cluster of
                      // one lost: 2-6% slower at 8192^3, docs/v28_fp8.md)
#define CONSUMERS (BM / 64)                  // one consumer warpgroup per 64 rows
#define NUM_THREADS (128 * (CONSUMERS + 1))   // + the producer warpgroup
#define PRODUCER_REGS 40    // a loop counter, two addresses, a parity
#define CONSUMER_REGS 232   // 128 accumulators + descriptors, indices, the epilogue's addresses
static_assert(BM % 64 == 0 && BN == 256, "warpgroups of m64n256 tile the block");
static_assert(128 * (PRODUCER_REGS + CONSUMERS * CONSUMER_REGS) <= 65536,
              "the roles' registers fit the SM's 64K, or setmaxnreg.inc waits forever");
static_assert(BN / 2 + 26 <= 65536 / NUM_THREADS / 8 * 8,
              "each wgmma compiles within the cap at entry, whatever setmaxnreg.inc raises it to: m64n256 needs 154 "
              "registers there (C7602), so 512 threads (cap 128) would need two m64n128 (v22's page)");
static_assert(BM <= 256, "a TMA box has at most 256 rows");
static_assert(BK % 32 == 0, "k steps of 32");
static_assert(STAGES - WG_PENDING >= 2, "a tile in flight, one multiplied, WG_PENDING still read by running batches");
static_assert(GROUP_M >= 1, "a group has at least one M-tile");
static_assert(CLUSTER_M <= 8, "8 blocks: the largest portable cluster");
static_assert(BN % (8 * CLUSTER_M) == 0, "each block's slice of B's box is whole 8-row groups (1024 bytes: the swizzle's period)");
static_assert(GROUP_M % CLUSTER_M == 0, "a group holds whole cluster tiles");
static_assert(CS_COLS % 64 == 0 && BN % CS_COLS == 0, "whole 64-column boxes (128 bytes: the C map's swizzle row)");
static_assert(STAGES * (BM + BN) * BK + CONSUMERS * 64 * CS_COLS * 2 + 2048 <= 227 * 1024,
              "the ring, the C staging, the alignment and the barriers fit the 227 KB a block may have");

// SWIZZLE_128B: the TMA box's inner dimension is one 128-byte row, and
// wgmma reads it as SWIZZLE_128B only if each 8-row group starts on 1024 bytes.
static_assert(BK == 128, "BK e4m3 = one 128-byte row");

// mbarriers: a 64-bit word in shared memory, addressed by its 32-bit shared address.
__device__ __forceinline__ unsigned smem_u32(const void *p) { return (unsigned)__cvta_generic_to_shared(p); }
__device__ __forceinline__ void mbar_init(uint64_t *bar, unsigned count) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(smem_u32(bar)), "r"(count));
}
// Arrive, and announce `bytes` of copies that must land before the phase completes.
__device__ __forceinline__ void mbar_arrive_expect_tx(uint64_t *bar, unsigned bytes) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(smem_u32(bar)), "r"(bytes) : "memory");
}
// Wait until the phase with this parity has completed (phases alternate 0, 1, 0, ...).
__device__ __forceinline__ void mbar_wait(uint64_t *bar, unsigned parity) {
    unsigned done = 0;
    while (!done)
        asm volatile("{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\nselp.u32 %0, 1, 0, p;\n}\n"
                     : "=r"(done) : "r"(smem_u32(bar)), "r"(parity) : "memory");
}

// This block's rank in its cluster, 0 .. CLUSTER_M - 1 (for a 1-D cluster, blockIdx.x % CLUSTER_M).
__device__ __forceinline__ unsigned cluster_rank() {
    unsigned r;
    asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r));
    return r;
}
// All threads of the cluster arrive, then wait for all.  Relaxed: fence.mbarrier_init releases the
// init, all that must be seen (arrive.release adds a MEMBAR.ALL.GPU: 0.6 us per launch).
__device__ __forceinline__ void cluster_sync() {
    asm volatile("barrier.cluster.arrive.relaxed;\nbarrier.cluster.wait.acquire;\n" ::: "memory");
}
// Arrive on the barrier at the same offset in block `rank` of the cluster (this one included):
// mapa turns our shared::cta address into that block's shared::cluster address.  The default
// .release.cta: .release.cluster adds a MEMBAR.ALL.GPU before every arrive, half the speed.
__device__ __forceinline__ void mbar_arrive_cluster(uint64_t *bar, unsigned rank) {
    asm volatile("{\n.reg .b32 remote;\nmapa.shared::cluster.u32 remote, %0, %1;\n"
                 "mbarrier.arrive.shared::cluster.b64 _, [remote];\n}\n"
                 ::"r"(smem_u32(bar)), "r"(rank) : "memory");
}

// One box of the tensor map at element coordinates (k0, row0) into shared
// memory, counted on `bar` in bytes when it lands.  Out-of-bounds elements
// (rows past M or N, columns past K) arrive as zeros and count all the same.
__device__ __forceinline__ void tma_load(void *dst, const CUtensorMap *map, int k0, int row0, uint64_t *bar) {
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];\n"
                 ::"r"(smem_u32(dst)), "l"(map), "r"(k0), "r"(row0), "r"(smem_u32(bar)) : "memory");
}
// The same box, read from L2 once and written to offset `dst` in every block whose rank has
// its bit set in `mask`; each counts the bytes on its own barrier at `bar`'s offset.
__device__ __forceinline__ void tma_load_mc(void *dst, const CUtensorMap *map, int k0, int row0, uint64_t *bar,
                                            uint16_t mask) {
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster"
                 " [%0], [%1, {%2, %3}], [%4], %5;\n"
                 ::"r"(smem_u32(dst)), "l"(map), "r"(k0), "r"(row0), "r"(smem_u32(bar)), "h"(mask) : "memory");
}
// The other direction: one box of shared memory to C at (col0, row0), only the elements
// inside the matrix.  Stores join this thread's open bulk group until commit; wait_group.read 0
// returns once none of its groups still reads shared memory, wait_group 0 once all have written.
__device__ __forceinline__ void tma_store(const CUtensorMap *map, const void *src, int col0, int row0) {
    asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%1, %2}], [%3];\n"
                 ::"l"(map), "r"(col0), "r"(row0), "r"(smem_u32(src)) : "memory");
}
__device__ __forceinline__ void bulk_commit() { asm volatile("cp.async.bulk.commit_group;\n" ::: "memory"); }
__device__ __forceinline__ void bulk_wait_read() { asm volatile("cp.async.bulk.wait_group.read 0;\n" ::: "memory"); }
__device__ __forceinline__ void bulk_wait_all() { asm volatile("cp.async.bulk.wait_group 0;\n" ::: "memory"); }
// Generic-proxy writes to shared memory, made visible to the copy engine (the async proxy).
__device__ __forceinline__ void fence_proxy_async() { asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); }
// A barrier for one consumer warpgroup (id 1 or 2; 0 is __syncthreads's), not the whole block.
__device__ __forceinline__ void wg_barrier(int id) { asm volatile("bar.sync %0, 128;\n" ::"r"(id) : "memory"); }

// A shared-memory matrix descriptor for a K-major tile in the 128-byte
// swizzle: bits 0-13 address >> 4; 16-29 leading byte offset >> 4 (unused
// when a row of the tile is one 128-byte swizzle row: 1 by convention);
// 32-45 stride byte offset >> 4 = 1024 >> 4, from one 8-row group to the
// next; 49-51 base offset 0 (groups start on 1024 bytes); 62-63 mode 1 = 128B.
__device__ __forceinline__ uint64_t make_desc(const void *tile) {
    const uint64_t addr = (unsigned)__cvta_generic_to_shared(tile);
    return (addr & 0x3FFFF) >> 4 | 1ull << 16 | (1024ull >> 4) << 32 | 1ull << 62;
}

// Give registers back to the SM's pool, or take them: the whole warpgroup
// executes it (.sync.aligned), and ptxas allocates the code after it within
// the new limit (each wgmma instruction excepted: those within the cap at entry).
template <int R> __device__ __forceinline__ void setmaxnreg_dec() { asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(R)); }
template <int R> __device__ __forceinline__ void setmaxnreg_inc() { asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(R)); }

__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
template <int N>
__device__ __forceinline__ void wgmma_wait() { asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory"); }
// Tell the compiler the accumulators may change here, so it neither reads
// them before a wait nor moves their uses across a wgmma still running.
__device__ __forceinline__ void fence_acc(float (&d)[BN / 2]) {
#pragma unroll
    for (int i = 0; i < BN / 2; ++i) asm volatile("" : "+f"(d[i])::"memory");
}

// d (64 x 256 fp32, 128 per thread) += A (64 x 32, K-major) * B (256 x 32, K-major)^T in
// e4m3, for the whole warpgroup; with accumulate = 0, d = A * B (the first k step: no
// zero-filling of d).  The trailing 1, 1: A and B scaled by +1.  FP8 has no transpose
// operands: both tiles must be K-major, as they are here.
#define D8(i) "+f"(d[i]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3]), "+f"(d[i + 4]), "+f"(d[i + 5]), \
              "+f"(d[i + 6]), "+f"(d[i + 7])
__device__ __forceinline__ void wgmma_m64n256k32_e4m3(float (&d)[BN / 2], uint64_t desc_a, uint64_t desc_b, int accumulate) {
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n256k32.f32.e4m3.e4m3 {"
                 "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
                 "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
                 "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
                 "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, "
                 "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, "
                 "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, "
                 "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, "
                 "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127"
                 "}, %128, %129, p, 1, 1;\n}\n"
                 : D8(0), D8(8), D8(16), D8(24), D8(32), D8(40), D8(48), D8(56),
                   D8(64), D8(72), D8(80), D8(88), D8(96), D8(104), D8(112), D8(120)
                 : "l"(desc_a), "l"(desc_b), "r"(accumulate));
}
#undef D8

struct Stage {
    uint8_t As[BM][BK];   // 128*128 e4m3 = 16 KB, swizzled by the TMA (16 x 1024 bytes: groups stay aligned)
    uint8_t Bs[BN][BK];   // 256*128 = 32 KB, swizzled by the TMA
};
// One consumer's C staging: CS_COLS / 64 boxes of 64 rows x 64 columns (8 KB each), each in
// the 128-byte swizzle the C map names: 16-byte chunk c of row r sits at chunk c ^ (r % 8).
typedef __nv_bfloat16 CBox[64][64];

// The producer of block cm fills its share of stage s with k tile kt of its tile at
// (row0, col0): its own A box, and slice cm of the B box all blocks of the cluster share
// (BN / CLUSTER_M rows), into all of them.  Every block's stage ends up whole: 48 KB on
// every full barrier.
__device__ __forceinline__ void fill(Stage &s, uint64_t *full, const CUtensorMap *mapA, const CUtensorMap *mapB,
                                     int kt, int row0, int col0, int cm) {
    constexpr int BR = BN / CLUSTER_M;   // rows of each slice
    mbar_arrive_expect_tx(full, sizeof(Stage));   // 48 KB, the peers' slices and zero-filled edges included
    tma_load(s.As, mapA, kt * BK, row0, full);
    tma_load_mc(s.Bs[BR * cm], mapB, kt * BK, col0 + BR * cm, full, (uint16_t)((1u << CLUSTER_M) - 1));   // to every rank
}

// Cluster tile number t (CLUSTER_M tiles along M) -> the origin in C of block cm's tile.
// v23's order, counted in cluster tiles: groups of GROUP_M M-tiles (GROUP_M / CLUSTER_M
// cluster tiles; the last group may be shorter) walk across N one column at a time.
__device__ __forceinline__ void tile_origin(int t, int ctilesM, int tilesN, int cm, int &row0, int &col0) {
    constexpr int G = GROUP_M / CLUSTER_M;
    const int per_group = G * tilesN, first = t / per_group * G;
    const int rows = min(G, ctilesM - first), r = t % per_group;
    row0 = ((first + r % rows) * CLUSTER_M + cm) * BM;   // may be >= M: a tile of zeros, stored nowhere
    col0 = r / rows * BN;
}

template <bool TMA_STORE>   // false: v22's register epilogue, for N % 8 != 0 (no tensor map for C)
__global__ void __cluster_dims__(CLUSTER_M, 1, 1)   // blocks 2c and 2c + 1 (CLUSTER_M 2): cluster c, one GPC
__launch_bounds__(NUM_THREADS, 1)   // NUM_THREADS alone gives setmaxnreg its cap at entry; without the 1 the SASS differs
gemm_fp8(int M, int N, int K, const __grid_constant__ CUtensorMap mapA, const __grid_constant__ CUtensorMap mapB,
         const __grid_constant__ CUtensorMap mapC, __nv_bfloat16 *C, const float *sa, const float *sb) {
    extern __shared__ __align__(1024) unsigned char smem[];
    // The descriptors and the TMA's swizzle need 1024-byte alignment, which the
    // declaration does not guarantee for dynamic shared memory: round up (the launcher adds 1 KB).
    const unsigned misalign = (unsigned)__cvta_generic_to_shared(smem) % 1024;
    Stage *st = reinterpret_cast<Stage *>(smem + (1024 - misalign) % 1024);   // STAGES x 48 KB
    CBox *cs = reinterpret_cast<CBox *>(st + STAGES);   // CONSUMERS x CS_COLS / 64 boxes: 2 x 16 KB
    __shared__ uint64_t full[STAGES], empty[STAGES];   // the two mbarriers of each stage

    // The cluster's unit of work: CLUSTER_M neighbouring tiles along M, one per block.
    const int tilesM = (M + BM - 1) / BM, tilesN = (N + BN - 1) / BN;
    const int ctilesM = (tilesM + CLUSTER_M - 1) / CLUSTER_M, ctiles = ctilesM * tilesN;
    const int cluster = blockIdx.x / CLUSTER_M, clusters = gridDim.x / CLUSTER_M;
    const int cm = cluster_rank();   // this block's tile within the cluster tile
    const int wg = threadIdx.x / 128;   // 0: the producer; 1.. : consumer wg - 1, rows 64 (wg - 1) ..
    const int tilesK = (K + BK - 1) / BK;   // columns past K arrive as zeros
    if (threadIdx.x == 0) {
        for (int s = 0; s < STAGES; ++s) {
            mbar_init(&full[s], 1);                          // the expect_tx arrival; the bytes do the rest
            mbar_init(&empty[s], 4 * CONSUMERS * CLUSTER_M);   // one arrival per consumer warp of the cluster
        }
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");   // visible to the copy engine and the peer
    }
    cluster_sync();   // every block's barriers are initialized before any block signals them

    // Both roles walk the same tiles and count the same k tiles: `it` is the
    // ring's position over all of this block's tiles, never reset, so stage
    // it % STAGES holds fill number it / STAGES whatever tile it belongs to,
    // and the producer runs into the next tile as soon as stages are free.
    if (wg == 0) {   // ---- producer ----------------------------------------------------
        setmaxnreg_dec<PRODUCER_REGS>();
        if (threadIdx.x == 0) {
            int it = 0;
            for (int ct = cluster; ct < ctiles; ct += clusters) {
                int row0, col0;
                tile_origin(ct, ctilesM, tilesN, cm, row0, col0);
                for (int kt = 0; kt < tilesK; ++kt, ++it) {
                    const int s = it % STAGES, f = it / STAGES;
                    // The consumers of every block released fill f - 1: our slices may overwrite theirs.
                    if (f > 0) mbar_wait(&empty[s], (f - 1) & 1);
                    fill(st[s], &full[s], &mapA, &mapB, kt, row0, col0, cm);
                }
            }
            // Exit only after the last release of every stage: then no arrival from the peer's
            // consumers (and no multicast: ours have taken every fill) can reach a block that is gone.
            for (int j = max(it - STAGES, 0); j < it; ++j) mbar_wait(&empty[j % STAGES], (j / STAGES) & 1);
        }
    } else {         // ---- consumers ---------------------------------------------------
        setmaxnreg_inc<CONSUMER_REGS>();
        const float scale = *sa * *sb;   // C = sa sb (A B^T): applied once per element of C
        const int cw = wg - 1;   // this warpgroup's rows: 64 cw .. 64 cw + 63 of the tile
        const int warp = threadIdx.x % 128 / 32, lane = threadIdx.x % 32;
        const int g = lane / 4, t = lane % 4;   // accumulator coordinates, as for mma.sync
        CBox *mine = cs + cw * (CS_COLS / 64);
        int it = 0;
        for (int ct = cluster; ct < ctiles; ct += clusters) {
            int row0, col0;
            tile_origin(ct, ctilesM, tilesN, cm, row0, col0);
            float acc[BN / 2];   // 64 x 256 of C per warpgroup, not zeroed (v20, C7515)
            for (int kt = 0; kt < tilesK; ++kt, ++it) {
                const int s = it % STAGES;
                mbar_wait(&full[s], (it / STAGES) & 1);
                __syncwarp();   // the warp together again before the .sync.aligned wgmma (v21)
                const uint64_t da = make_desc(st[s].As[64 * cw]), db = make_desc(st[s].Bs);
                wgmma_fence();   // the accumulators' registers are settled before the batch reads them
#pragma unroll
                for (int kk = 0; kk < BK / 32; ++kk)   // the next 32 of k: 32 bytes on, encoded >> 4
                    wgmma_m64n256k32_e4m3(acc, da + 2 * kk, db + 2 * kk, kt > 0 || kk > 0);
                wgmma_commit();
                wgmma_wait<WG_PENDING>();
                // No batch reads that stage any more: lane r tells block r of the cluster.
                if (kt >= WG_PENDING && lane < CLUSTER_M) mbar_arrive_cluster(&empty[(it - WG_PENDING) % STAGES], lane);
            }
            wgmma_wait<0>();
            fence_acc(acc);   // the epilogue reads acc only after the last batch is done
            // Release this tile's last stages now, before the epilogue: the producer
            // fills them with the next tile's first k tiles while we store this one.
            if (lane < CLUSTER_M)
                for (int j = max(tilesK - WG_PENDING, 0); j < tilesK; ++j) mbar_arrive_cluster(&empty[(it - tilesK + j) % STAGES], lane);

            // Accumulator layout of m64nN: warp w of the warpgroup holds rows 16 w ..
            // 16 w + 15; acc[4 j + 2 h + e] is row g + 8 h, column 8 j + 2 t + e.
            if constexpr (TMA_STORE) {
#pragma unroll
                for (int c0 = 0; c0 < BN; c0 += CS_COLS) {
                    // The buffer is free once the copy engine has read the last round out of it.
                    if (threadIdx.x % 128 == 0) bulk_wait_read();
                    wg_barrier(1 + cw);
#pragma unroll
                    for (int j = c0 / 8; j < (c0 + CS_COLS) / 8; ++j)
#pragma unroll
                        for (int h = 0; h < 2; ++h) {
                            // row r's chunk (j % 8) at chunk (j % 8) ^ (r % 8), r % 8 = g: the 8 rows
                            // of a warp's store land on 8 different chunks, 32 lanes on 32 banks.
                            const int r = 16 * warp + g + 8 * h;
                            char *box = reinterpret_cast<char *>(mine[(j - c0 / 8) / 8]);
                            *reinterpret_cast<__nv_bfloat162 *>(box + 128 * r + 16 * ((j % 8) ^ g) + 4 * t) =
                                __floats2bfloat162_rn(scale * acc[4 * j + 2 * h], scale * acc[4 * j + 2 * h + 1]);
                        }
                    fence_proxy_async();   // each writer's stores, visible to the TMA ...
                    wg_barrier(1 + cw);    // ... and all 128 writers done before one thread sends the boxes
                    if (threadIdx.x % 128 == 0) {
                        const int r0 = row0 + 64 * cw;
                        for (int b = 0; b < CS_COLS / 64; ++b)
                            if (r0 < M && col0 + c0 + 64 * b < N) tma_store(&mapC, mine[b], col0 + c0 + 64 * b, r0);
                        bulk_commit();
                    }
                }
            } else {   // v22's: straight from registers, each pair of columns one 4-byte store when N is even
#pragma unroll
                for (int j = 0; j < BN / 8; ++j)
#pragma unroll
                    for (int h = 0; h < 2; ++h) {
                        const int r = row0 + 64 * cw + 16 * warp + g + 8 * h, c = col0 + 8 * j + 2 * t;
                        if (r >= M || c >= N) continue;
                        __nv_bfloat16 *out = C + (size_t)r * N + c;
                        const float v0 = scale * acc[4 * j + 2 * h], v1 = scale * acc[4 * j + 2 * h + 1];
                        if (N % 2 == 0) *reinterpret_cast<__nv_bfloat162 *>(out) = __floats2bfloat162_rn(v0, v1);
                        else {
                            out[0] = __float2bfloat16_rn(v0);
                            if (c + 1 < N) out[1] = __float2bfloat16_rn(v1);
                        }
                    }
            }
        }
        if (TMA_STORE && threadIdx.x % 128 == 0) bulk_wait_all();   // the last stores done before the block exits
    }
}

// A row-major rows x cols matrix of `type` (bf16 or e4m3 as UINT8: the TMA moves bytes)
// as a 2-D tensor map (dimension 0 = the contiguous columns), in boxes of box_rows x
// box_cols with the 128-byte swizzle.  The row stride must be a multiple of 16 bytes:
// cols % 8 == 0 in bf16, cols % 16 == 0 in e4m3.
static CUtensorMap make_map(const void *base, CUtensorMapDataType type, int elem_bytes, int rows, int cols, int box_rows,
                            int box_cols) {
    static PFN_cuTensorMapEncodeTiled_v12000 encode = NULL;
    if (!encode) {   // the driver's entry point, through the runtime: no -lcuda
        void *fn = NULL;
        cudaDriverEntryPointQueryResult found;
        CUDA_CHECK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault, &found));
        if (found != cudaDriverEntryPointSuccess || !fn) {
            fprintf(stderr, "step28: the driver has no cuTensorMapEncodeTiled (CUDA 12.0 or later needed)\n");
            exit(KL_EXIT_NO_GPU);
        }
        encode = (PFN_cuTensorMapEncodeTiled_v12000)fn;
    }
    CUtensorMap map;
    const cuuint64_t dims[2] = {(cuuint64_t)cols, (cuuint64_t)rows};
    const cuuint64_t strides[1] = {(cuuint64_t)cols * elem_bytes};   // bytes from one row to the next
    const cuuint32_t box[2] = {(cuuint32_t)box_cols, (cuuint32_t)box_rows};   // may exceed dims: clipped
    const cuuint32_t elem_strides[2] = {1, 1};
    const CUresult r = encode(&map, type, 2, (void *)base, dims, strides, box, elem_strides,
                              CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                              CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (r != CUDA_SUCCESS) {
        fprintf(stderr, "step28: cuTensorMapEncodeTiled failed (%d) for %d x %d at %p\n", (int)r, rows, cols, base);
        exit(KL_EXIT_USAGE);
    }
    return map;
}

static void launch(const kl_gemm_fp8_args *args, void *ctx, cudaStream_t stream) {
    (void)ctx;
    const int m = args->m, n = args->n, k = args->k;
    const uint8_t *a = args->a, *b = args->b;
    kl_bf16 *c = args->c;
    // 4 x 48 KB + 2 x 16 KB + 1 KB: 225 KB
    const size_t smem = STAGES * sizeof(Stage) + CONSUMERS * (CS_COLS / 64) * sizeof(CBox) + 1024;
    static int clusters_max = 0;   // clusters resident at once (one block per SM, two SMs each)
    if (!clusters_max) {
        int dev = 0, optin = 0;
        CUDA_CHECK(cudaGetDevice(&dev));
        CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
        if ((size_t)optin < smem) {
            fprintf(stderr, "step28: %zu KB of shared memory per block needed; this GPU allows %d KB\n", smem / 1024,
                    optin / 1024);
            exit(KL_EXIT_NO_GPU);
        }
        CUDA_CHECK(cudaFuncSetAttribute(gemm_fp8<true>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
        CUDA_CHECK(cudaFuncSetAttribute(gemm_fp8<false>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
        // A cluster's blocks must land on SMs of one GPC at the same time, so the question is
        // not "blocks per SM" but "clusters at once": the occupancy API answers it per GPC.
        const cudaLaunchConfig_t cfg = {dim3(CLUSTER_M), dim3(NUM_THREADS), smem, 0, NULL, 0};   // grid, block, smem
        CUDA_CHECK(cudaOccupancyMaxActiveClusters(&clusters_max, (const void *)gemm_fp8<true>, &cfg));
        if (clusters_max < 1) {
            fprintf(stderr, "step28: no cluster of %d blocks of %zu KB fits on this GPU at once\n", CLUSTER_M, smem / 1024);
            exit(KL_EXIT_NO_GPU);
        }
    }
    // The maps depend on the pointers and sizes only: built again when they change,
    // not on every launch of the timed loop.
    static struct { const uint8_t *a, *b; kl_bf16 *c; int m, n, k; CUtensorMap mapA, mapB, mapC; } cache = {};
    if (cache.a != a || cache.b != b || cache.c != c || cache.m != m || cache.n != n || cache.k != k) {
        cache.mapA = make_map(a, CU_TENSOR_MAP_DATA_TYPE_UINT8, 1, m, k, BM, BK);
        cache.mapB = make_map(b, CU_TENSOR_MAP_DATA_TYPE_UINT8, 1, n, k, BN / CLUSTER_M, BK);   // one slice of the shared box
        cache.mapC = {};
        if (n % 8 == 0) cache.mapC = make_map(c, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, m, n, 64, 64);   // 16-byte rows, or no map
        cache.a = a, cache.b = b, cache.c = c, cache.m = m, cache.n = n, cache.k = k;
    }
    const long long ctiles = (long long)((m + CLUSTER_M * BM - 1) / (CLUSTER_M * BM)) *
                             ((n + BN - 1) / BN);   // < 2^31 for any C that fits
    const unsigned grid = CLUSTER_M * (unsigned)(ctiles < clusters_max ? ctiles : clusters_max);   // whole clusters
    if (n % 8 == 0)
        gemm_fp8<true><<<grid, NUM_THREADS, smem, stream>>>(m, n, k, cache.mapA, cache.mapB, cache.mapC,
                                                             (__nv_bfloat16 *)c, args->sa, args->sb);
    else
        gemm_fp8<false><<<grid, NUM_THREADS, smem, stream>>>(m, n, k, cache.mapA, cache.mapB, cache.mapC,
                                                              (__nv_bfloat16 *)c, args->sa, args->sb);
    KL_CHECK_LAUNCH();
}

int main(int argc, char **argv) {
    kl_step step = {};
    step.number = 28;
    step.title = "FP8: v24's kernel on e4m3 bytes, wgmma k32, the per-tensor scales in the epilogue (sm_90a)";
    step.min_cc = 90;
    step.only_cc = 90;
    step.kernels[0].op = &kl_op_gemm_fp8;
    step.kernels[0].gemm_fp8 = launch;
    return kl_main(argc, argv, &step);
}
