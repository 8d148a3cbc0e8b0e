// build: sm_90a
/*
 * Step 44 - FP8 per-tensor: the last round cut along K, the partials read by the copy engine.
 *
 * v38 runs its tiles in rounds, one cluster tile per cluster of two SMs at a time.  At
 * DeepSeek-V3's 4096 x 7168 x 16384 the 256-wide tile makes 448 cluster tiles on 66 clusters:
 * 6 whole rounds and a 7th of 52 tiles, while 14 clusters wait.  v44 keeps the whole rounds
 * and cuts each of the last round's tiles along K: its first S k tiles on a cluster of its
 * own, the rest in pieces of L k tiles on the clusters that would have waited (the helpers),
 * q pieces each.  A helper writes its piece's fp32 partial to a workspace and sets a flag;
 * the first piece, done last, adds the partials and stores C.
 *
 * What a partial costs is the lesson.  A %globaltimer trace of the last round (the page)
 * puts a helper's write of 128 KB a block at 2-5 us, and the first piece's read at 6.3 us
 * and more when its threads load it, eight float4s at a time: a round trip per eight, in an
 * L2 busy with every other cluster's k loop.  Once both consumer warpgroups are past their
 * last wgmma the ring is idle, so the step reads each partial with one bulk copy into it
 * instead: 2.3 us and more.  The plan prices both from the trace and picks L so that the
 * first piece and the helpers end together; it cuts only where that saves more than one
 * more write.
 *
 * The width is v38's choice; --cut 1 never cuts, --cut 2 cuts wherever the last round is
 * short.  Everything else is v38's: each tile's C stored during the next unit's first k tiles,
 * the tail box, the cluster of two along M, the register epilogue when N % 8 != 0.  The
 * variant "v38" is v38's plan and kernel (whole rounds only), the control.
 *
 * Build and run:   make step44 && ./step44          (an H100 or H200 only)
 */
#include "kl.h"

#include <cuda.h>   // CUtensorMap and its enums only: the driver is reached through the runtime
#include <cudaTypedefs.h>
#include <cuda_bf16.h>
#include <cuda_fp8.h>

#define BM 128   // 64 rows of C per consumer warpgroup
#define BK 128   // e4m3: one byte per element, one 128-byte row
#define WG_PENDING 1   // wgmma batches left running across the next k tile (0 lost in v20 and v21)
#define GROUP_M 16   // M-tiles that walk across N together (1: row-major, v22's order)
#define CLUSTER_M 2   // blocks of a cluster along M: tiles (m, n), (m + 1, n) share B's strip (a cluster of
                      // one lost: 2-6% slower at 8192^3, docs/v28_fp8.md)
#define CONSUMERS (BM / 64)                  // one consumer warpgroup per 64 rows
#define NUM_THREADS (128 * (CONSUMERS + 1))   // + the producer warpgroup
#define PRODUCER_REGS 40    // a loop counter, two addresses, a parity
#define CONSUMER_REGS 232   // up to 128 accumulators, 64 registers of the last tile's C, descriptors, indices
#define MIN_BN 128   // the widths: MIN_BN, MIN_BN + 16, .. MAX_BN
#define MAX_BN 256
// Per width: columns of C staged per TMA store round (128 where the width is a multiple of
// 128, as v28; else 64), and the ring's stages in what shared memory is left: 6 at 128 and
// 144, 5 at 160-192, 4 at 208-256 (48 KB a stage at 256, as v28).
template <int BN> __host__ __device__ constexpr int cs_cols() { return BN % 128 == 0 ? 128 : 64; }
template <int BN> __host__ __device__ constexpr int stages() {
    return (227 * 1024 - 2048 - CONSUMERS * 64 * cs_cols<BN>() * 2) / ((BM + BN) * BK);
}
template <int BN> __host__ __device__ constexpr void check_width() {
    static_assert(BN % 16 == 0 && BN >= MIN_BN && BN <= MAX_BN, "the widths: 128 to 256 in steps of 16");
    static_assert(BN % (8 * CLUSTER_M) == 0, "each block's slice of B's box is whole 8-row groups (1024 bytes: the swizzle's period)");
    static_assert(BN / 2 + 26 <= 65536 / NUM_THREADS / 8 * 8,
                  "each wgmma compiles within the cap at entry, whatever setmaxnreg.inc raises it to: m64n256 needs 154 "
                  "registers there (C7602), so 512 threads (cap 128) would need two m64n128 (v22's page)");
    static_assert(stages<BN>() - WG_PENDING >= 2, "a tile in flight, one multiplied, WG_PENDING still read by running batches");
}
static_assert(128 * (PRODUCER_REGS + CONSUMERS * CONSUMER_REGS) <= 65536,
              "the roles' registers fit the SM's 64K, or setmaxnreg.inc waits forever");
static_assert(BM <= 256, "a TMA box has at most 256 rows");
static_assert(BK % 32 == 0, "k steps of 32");
static_assert(GROUP_M >= 1, "a group has at least one M-tile");
static_assert(CLUSTER_M <= 8, "8 blocks: the largest portable cluster");
static_assert(GROUP_M % CLUSTER_M == 0, "a group holds whole cluster tiles");

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
// `bytes` in a row from global memory to shared memory, counted on `bar` when they land.
__device__ __forceinline__ void bulk_load(void *dst, const void *src, unsigned bytes, uint64_t *bar) {
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n"
                 ::"r"(smem_u32(dst)), "l"(src), "r"(bytes), "r"(smem_u32(bar)) : "memory");
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
template <int R> __device__ __forceinline__ void fence_acc(float (&d)[R]) {
#pragma unroll
    for (int i = 0; i < R; ++i) asm volatile("" : "+f"(d[i])::"memory");
}

// d (64 x BN fp32, BN / 2 per thread) += A (64 x 32, K-major) * B (BN x 32, K-major)^T in
// e4m3, for the whole warpgroup; with acc = 0, d = A * B (the first k step: no zero-filling
// of d).  The trailing 1, 1: A and B scaled by +1.  FP8 has no transpose operands: both
// tiles must be K-major, as they are here.  One wrapper per width (v27's form): the N / 2
// accumulators are operands %0 .., in REGS_c (c = N / 16 groups of 8 registers), then the
// two descriptors and the accumulate flag, %(N / 2) .. %(N / 2 + 2) (given as PRED, DESC).
#define D8(i) "+f"(d[i]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3]), "+f"(d[i + 4]), "+f"(d[i + 5]), \
              "+f"(d[i + 6]), "+f"(d[i + 7])
#define REGS_1 "%0, %1, %2, %3, %4, %5, %6, %7"
#define REGS_2 REGS_1 ", %8, %9, %10, %11, %12, %13, %14, %15"
#define REGS_3 REGS_2 ", %16, %17, %18, %19, %20, %21, %22, %23"
#define REGS_4 REGS_3 ", %24, %25, %26, %27, %28, %29, %30, %31"
#define REGS_5 REGS_4 ", %32, %33, %34, %35, %36, %37, %38, %39"
#define REGS_6 REGS_5 ", %40, %41, %42, %43, %44, %45, %46, %47"
#define REGS_7 REGS_6 ", %48, %49, %50, %51, %52, %53, %54, %55"
#define REGS_8 REGS_7 ", %56, %57, %58, %59, %60, %61, %62, %63"
#define REGS_9 REGS_8 ", %64, %65, %66, %67, %68, %69, %70, %71"
#define REGS_10 REGS_9 ", %72, %73, %74, %75, %76, %77, %78, %79"
#define REGS_11 REGS_10 ", %80, %81, %82, %83, %84, %85, %86, %87"
#define REGS_12 REGS_11 ", %88, %89, %90, %91, %92, %93, %94, %95"
#define REGS_13 REGS_12 ", %96, %97, %98, %99, %100, %101, %102, %103"
#define REGS_14 REGS_13 ", %104, %105, %106, %107, %108, %109, %110, %111"
#define REGS_15 REGS_14 ", %112, %113, %114, %115, %116, %117, %118, %119"
#define REGS_16 REGS_15 ", %120, %121, %122, %123, %124, %125, %126, %127"
#define OUTS_1 D8(0)
#define OUTS_2 OUTS_1, D8(8)
#define OUTS_3 OUTS_2, D8(16)
#define OUTS_4 OUTS_3, D8(24)
#define OUTS_5 OUTS_4, D8(32)
#define OUTS_6 OUTS_5, D8(40)
#define OUTS_7 OUTS_6, D8(48)
#define OUTS_8 OUTS_7, D8(56)
#define OUTS_9 OUTS_8, D8(64)
#define OUTS_10 OUTS_9, D8(72)
#define OUTS_11 OUTS_10, D8(80)
#define OUTS_12 OUTS_11, D8(88)
#define OUTS_13 OUTS_12, D8(96)
#define OUTS_14 OUTS_13, D8(104)
#define OUTS_15 OUTS_14, D8(112)
#define OUTS_16 OUTS_15, D8(120)
#define WGMMA_WIDTH(N, C, PRED, DESC)                                                                            \
    template <> __device__ __forceinline__ void wgmma_e4m3<N>(float (&d)[N / 2], uint64_t da, uint64_t db, int acc) { \
        asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, " PRED ", 0;\n"                                            \
                     "wgmma.mma_async.sync.aligned.m64n" #N "k32.f32.e4m3.e4m3 {" REGS_##C "}, " DESC ", p, 1, 1;\n}\n" \
                     : OUTS_##C : "l"(da), "l"(db), "r"(acc));                                                  \
    }
template <int BN> __device__ __forceinline__ void wgmma_e4m3(float (&d)[BN / 2], uint64_t da, uint64_t db, int acc);
WGMMA_WIDTH(128, 8, "%66", "%64, %65") WGMMA_WIDTH(144, 9, "%74", "%72, %73") WGMMA_WIDTH(160, 10, "%82", "%80, %81")
WGMMA_WIDTH(176, 11, "%90", "%88, %89") WGMMA_WIDTH(192, 12, "%98", "%96, %97") WGMMA_WIDTH(208, 13, "%106", "%104, %105")
WGMMA_WIDTH(224, 14, "%114", "%112, %113") WGMMA_WIDTH(240, 15, "%122", "%120, %121") WGMMA_WIDTH(256, 16, "%130", "%128, %129")
#undef WGMMA_WIDTH
#undef D8

template <int BN> struct Stage {
    uint8_t As[BM][BK];   // 128*128 e4m3 = 16 KB, swizzled by the TMA (16 x 1024 bytes: groups stay aligned)
    uint8_t Bs[BN][BK];   // BN x 128 bytes, swizzled by the TMA (BN % 8 == 0: whole 1024-byte groups)
};
// One consumer's C staging: cs_cols / 64 boxes of 64 rows x 64 columns (8 KB each), each in
// the 128-byte swizzle the C map names: 16-byte chunk c of row r sits at chunk c ^ (r % 8).
// A width's last 16, 32 or 48 columns (BN % 64) go through the first box unswizzled, rows
// of BN % 64 columns one after the other: the box of the tail map.
typedef __nv_bfloat16 CBox[64][64];
template <int BN> constexpr size_t smem_bytes() {   // the ring, the C staging, 1 KB to align: 185-225 KB
    return stages<BN>() * sizeof(Stage<BN>) + CONSUMERS * (cs_cols<BN>() / 64) * sizeof(CBox) + 1024;
}

// The producer of block cm fills its share of stage s with k tile kt of its tile at
// (row0, col0): its own A box, and slice cm of the B box all blocks of the cluster share
// (BN / CLUSTER_M rows), into all of them.  Every block's stage ends up whole: 16 KB + BN x
// 128 bytes on every full barrier.
template <int BN>
__device__ __forceinline__ void fill(Stage<BN> &s, uint64_t *full, const CUtensorMap *mapA, const CUtensorMap *mapB,
                                     int kt, int row0, int col0, int cm) {
    constexpr int BR = BN / CLUSTER_M;   // rows of each slice
    mbar_arrive_expect_tx(full, sizeof(Stage<BN>));   // the peers' slices and zero-filled edges included
    tma_load(s.As, mapA, kt * BK, row0, full);
    tma_load_mc(s.Bs[BR * cm], mapB, kt * BK, col0 + BR * cm, full, (uint16_t)((1u << CLUSTER_M) - 1));   // to every rank
}

// Cluster tile number t (CLUSTER_M tiles along M) -> the origin in C of block cm's tile.
// v23's order, counted in cluster tiles: groups of GROUP_M M-tiles (GROUP_M / CLUSTER_M
// cluster tiles; the last group may be shorter) walk across N one column at a time.
template <int BN>
__device__ __forceinline__ void tile_origin(int t, int ctilesM, int tilesN, int cm, int &row0, int &col0) {
    constexpr int G = GROUP_M / CLUSTER_M;
    const int per_group = G * tilesN, first = t / per_group * G;
    const int rows = min(G, ctilesM - first), r = t % per_group;
    row0 = ((first + r % rows) * CLUSTER_M + cm) * BM;   // may be >= M: a tile of zeros, stored nowhere
    col0 = r / rows * BN;
}

// Part `part` of a warpgroup's 64 x BN of C: columns 64 part .. 64 part + 63 (one box, small
// enough to write under a batch), from the packed registers into the first staging box and out
// through the TMA, at rows r0 .. r0 + 63 and columns col0 .. of C.  The whole warpgroup calls
// it.  pk[2 j + h] holds row 16 warp + g + 8 h, columns 8 j + 2 t and 8 j + 2 t + 1 (the
// accumulators' layout, two to a register).
template <int BN>
__device__ __forceinline__ void store_part(const __nv_bfloat162 (&pk)[BN / 4], int part, CBox *mine,
                                            const CUtensorMap *mapC, const CUtensorMap *mapCt, int M, int N, int r0,
                                            int col0, int warp, int g, int t, int cw) {
    constexpr int CS_COLS = 64, TW = BN % 64;
#pragma unroll
    for (int c0 = 0; c0 < BN; c0 += CS_COLS) {
        if (c0 / CS_COLS != part) continue;   // pk's indices stay constants: one unrolled copy per part
        // The last part of a width that is not a multiple of 64 is its tail: BN % 64 columns,
        // one unswizzled box of the tail map (a 64-column box would write into the next tile).
        const bool tail = TW != 0 && c0 + 64 > BN;
        // The buffer is free once the copy engine has read the last part out of it.
        if (threadIdx.x % 128 == 0) bulk_wait_read();
        wg_barrier(1 + cw);
#pragma unroll
        for (int j = c0 / 8; j < (c0 + CS_COLS) / 8; ++j) {
            if (j >= BN / 8) continue;   // past the tail (the bound stays a constant: v27)
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                const int r = 16 * warp + g + 8 * h;
                char *box = reinterpret_cast<char *>(mine[(j - c0 / 8) / 8]);
                if (!tail)   // row r's chunk (j % 8) at chunk (j % 8) ^ (r % 8), r % 8 = g: the 8 rows
                             // of a warp's store land on 8 different chunks, 32 lanes on 32 banks
                    *reinterpret_cast<__nv_bfloat162 *>(box + 128 * r + 16 * ((j % 8) ^ g) + 4 * t) = pk[2 * j + h];
                else         // rows of TW columns, 2 TW bytes apart
                    *reinterpret_cast<__nv_bfloat162 *>(box + 2 * TW * r + 2 * (8 * (j - c0 / 8) + 2 * t)) = pk[2 * j + h];
            }
        }
        fence_proxy_async();   // each writer's stores, visible to the TMA ...
        wg_barrier(1 + cw);    // ... and all 128 writers done before one thread sends the boxes
        if (threadIdx.x % 128 == 0) {
            if (tail) {
                if (r0 < M && col0 + c0 < N) tma_store(mapCt, mine[0], col0 + c0, r0);
            } else if (r0 < M && col0 + c0 < N) {
                tma_store(mapC, mine[0], col0 + c0, r0);
            }
            bulk_commit();
        }
    }
}

// What a launch cuts.  The first dp cluster tiles (v23's order) are done whole, as in v38
// (all of them when nothing is cut); each of the other rest = ctiles - dp tiles is cut along K
// into a first piece, k tiles [0, S), done by cluster r of the first `rest`, and `parts`
// pieces of L k tiles done by the other clusters, the helpers.  Helper piece p is part
// p / rest of tile p % rest; helper h takes p = h, h + helpers, ..: at any moment the helpers
// work on neighbouring tiles.  partials: a 64 x BN fp32 slot per helper piece (fewer than the
// clusters), block and consumer; ready: a flag per slot, set to this launch's `epoch` once
// the slot is written (the host counts launches from 1; the flags start at 0).
struct Cut {
    int dp, rest, S, L, parts;
    float *partials;
    unsigned *ready;
    unsigned epoch;
};

// The pieces a cluster takes after its whole tiles, walked alike by the producer and the
// consumers: each the k tiles [k0, k1) of cluster tile ct; slot -1 for a first piece (it
// finishes the tile), else the slot its partial goes to.  (r, j): the next helper piece's
// tile and part, advanced in steps (a division is a per-thread sequence in SASS, v42's page).
struct Pieces {
    int r, j;   // only these in registers: the rest is read from the kernel's parameters
    __device__ __forceinline__ Pieces(int cluster, const Cut &cut) {
        if (cluster < cut.rest) r = cluster, j = -1;   // the first piece of tile r, then nothing
        else for (r = cluster - cut.rest, j = 0; r >= cut.rest && j < cut.parts; r -= cut.rest) ++j;
    }
    __device__ __forceinline__ bool next(const Cut &cut, int clusters, int &ct, int &k0, int &k1, int &slot) {
        if (j >= cut.parts) return false;
        ct = cut.dp + r;
        if (j < 0) {   // the first piece
            k0 = 0, k1 = cut.S, slot = -1, j = cut.parts;
            return true;
        }
        k0 = cut.S + j * cut.L, k1 = k0 + cut.L, slot = j * cut.rest + r;
        for (r += clusters - cut.rest; r >= cut.rest && j < cut.parts; r -= cut.rest) ++j;
        return true;
    }
};

__device__ __forceinline__ void flag_set(unsigned *flag, unsigned v) {
    asm volatile("st.release.gpu.global.u32 [%0], %1;\n" ::"l"(flag), "r"(v) : "memory");
}
__device__ __forceinline__ unsigned flag_get(const unsigned *flag) {
    unsigned v;
    asm volatile("ld.acquire.gpu.global.u32 %0, [%1];\n" : "=r"(v) : "l"(flag) : "memory");
    return v;
}

// The fix-up, for one consumer warpgroup's 64 x BN sums of a piece of cut tile r.  A helper
// piece (slot >= 0) writes its partial to its slot, sets the slot's flag and returns false.
// The first piece, done last, adds the helpers' partials of its tile (slots r, r + rest, ..)
// in that order, the same bits every run, and returns true: it stores C.  A warp whose rows
// all lie past M neither writes nor reads (rows_live: one answer per warp).
template <int BN>
__device__ __forceinline__ bool fix_up(float (&acc)[BN / 2], const Cut &cut, int r, int slot, int cm, int cw,
                                       bool rows_live, void *ring, uint64_t *fixbar) {
    constexpr int WG4 = 64 * BN / 4, SLOT4 = CLUSTER_M * CONSUMERS * WG4;   // float4s: one warpgroup's, one slot's
    const int tid = threadIdx.x % 128, place = cm * CONSUMERS + cw;
    // Fragment order: float4 j of thread tid at j x 128 + tid, so each store of the warpgroup
    // is 2 KB in a row, and each thread reads back what a thread of its place wrote.
    float4 *base = reinterpret_cast<float4 *>(cut.partials) + place * WG4;
    if (slot >= 0) {   // a helper's piece: the partial out, for the first piece to add
        if (rows_live)
#pragma unroll
            for (int j = 0; j < BN / 8; ++j)
                __stcg(base + (size_t)slot * SLOT4 + j * 128 + tid,
                       make_float4(acc[4 * j], acc[4 * j + 1], acc[4 * j + 2], acc[4 * j + 3]));
        wg_barrier(1 + cw);   // the warpgroup's partial written before one thread flags it
        if (tid == 0) flag_set(&cut.ready[slot * CLUSTER_M * CONSUMERS + place], cut.epoch);
        return false;
    }
    // The first piece is its cluster's last unit: once both warpgroups are past their last
    // wgmma, the ring is idle, and each partial comes in whole, 64 x BN x 4 bytes a
    // warpgroup, by one bulk copy into the ring (one L2 round trip, not one per load).
    asm volatile("bar.sync 3, 256;\n" ::: "memory");   // both consumer warpgroups
    const float4 *buf = reinterpret_cast<const float4 *>(static_cast<char *>(ring) + cw * WG4 * 16);
    for (int p = 0; p < cut.parts; ++p) {   // in the order of their parts: the same bits every run
        const int s = r + p * cut.rest;
        if (tid == 0) {
            while (flag_get(&cut.ready[s * CLUSTER_M * CONSUMERS + place]) != cut.epoch) {}
            asm volatile("fence.proxy.async.global;\n" ::: "memory");   // the flag's acquire, before the copy engine reads
            mbar_arrive_expect_tx(&fixbar[cw], WG4 * 16);
            bulk_load(const_cast<float4 *>(buf), base + (size_t)s * SLOT4, WG4 * 16, &fixbar[cw]);
        }
        mbar_wait(&fixbar[cw], p & 1);
        if (rows_live)
#pragma unroll
            for (int j = 0; j < BN / 8; ++j) {
                const float4 v = buf[j * 128 + tid];
                acc[4 * j] += v.x, acc[4 * j + 1] += v.y, acc[4 * j + 2] += v.z, acc[4 * j + 3] += v.w;
            }
        wg_barrier(1 + cw);   // all 128 have read the buffer before the next copy overwrites it
    }
    return true;
}

// A consumer warpgroup's view, unit after unit: the block's ring and C staging, the
// problem, its place.
template <int BN> struct Consumer {
    Stage<BN> *st;
    uint64_t *full, *empty, *fixbar;
    CBox *mine;
    const CUtensorMap *mapC, *mapCt;
    __nv_bfloat16 *C;
    float scale;
    int M, N, ctilesM, tilesN, cm, cw, warp, lane, g, t;
};
// The last tile's C, scaled and rounded, two columns a register (BN / 4 registers), where it
// goes, and how many of its 64-column parts are out (PARTS: none waits).
template <int BN> struct Packed {
    __nv_bfloat162 pk[BN / 4];
    int row, col, sent;
};

// One unit of a consumer warpgroup: the k tiles [k0, k1) of cluster tile ct, from ring
// position it on, then its C.  A piece of a cut tile (PIECE) writes its partial instead, or,
// the first piece, adds the helpers' partials first.  One function for both loops of the
// kernel, so the loop over whole tiles is v38's, with none of the cut's bookkeeping live in it.
template <int BN, bool TMA_STORE, bool PIECE>
__device__ __forceinline__ void consume(const Consumer<BN> &e, const Cut &cut, Packed<BN> &last, int ct, int k0, int k1,
                                        int slot, int &it) {
    constexpr int STAGES = stages<BN>(), PARTS = (BN + 63) / 64;
    int row0, col0;
    tile_origin<BN>(ct, e.ctilesM, e.tilesN, e.cm, row0, col0);
    float acc[BN / 2];   // 64 x BN of C per warpgroup, not zeroed (v20, C7515)
    for (int kt = k0; kt < k1; ++kt, ++it) {
        const int s = it % STAGES;
        mbar_wait(&e.full[s], (it / STAGES) & 1);
        __syncwarp();   // the warp together again before the .sync.aligned wgmma (v21)
        const uint64_t da = make_desc(e.st[s].As[64 * e.cw]), db = make_desc(e.st[s].Bs);
        wgmma_fence();   // the accumulators' registers are settled before the batch reads them
#pragma unroll
        for (int kk = 0; kk < BK / 32; ++kk)   // the next 32 of k: 32 bytes on, encoded >> 4
            wgmma_e4m3<BN>(acc, da + 2 * kk, db + 2 * kk, kt > k0 || kk > 0);
        wgmma_commit();
        // While this batch runs: one part of the last tile's C, from pk (no accumulator touched).
        if constexpr (TMA_STORE)
            if (last.sent < PARTS)
                store_part<BN>(last.pk, last.sent++, e.mine, e.mapC, e.mapCt, e.M, e.N, last.row, last.col, e.warp, e.g,
                               e.t, e.cw);
        wgmma_wait<WG_PENDING>();
        // No batch reads that stage any more: lane r tells block r of the cluster.
        if (kt - k0 >= WG_PENDING && e.lane < CLUSTER_M) mbar_arrive_cluster(&e.empty[(it - WG_PENDING) % STAGES], e.lane);
    }
    wgmma_wait<0>();
    fence_acc(acc);   // the epilogue reads acc only after the last batch is done
    // Release this unit's last stages now, before the epilogue: the producer fills them with
    // the next unit's first k tiles while we pack (or hand on) this one.
    const int n = k1 - k0;
    if (e.lane < CLUSTER_M)
        for (int j = max(n - WG_PENDING, 0); j < n; ++j) mbar_arrive_cluster(&e.empty[(it - n + j) % STAGES], e.lane);
    // Parts of the last tile a short k loop left (fewer k tiles than parts): out now, before
    // pk is written again or the fix-up needs registers.
    if constexpr (TMA_STORE)
        while (last.sent < PARTS)
            store_part<BN>(last.pk, last.sent++, e.mine, e.mapC, e.mapCt, e.M, e.N, last.row, last.col, e.warp, e.g, e.t,
                           e.cw);
    if constexpr (PIECE)
        if (!fix_up<BN>(acc, cut, ct - cut.dp, slot, e.cm, e.cw, row0 + 64 * e.cw + 16 * e.warp < e.M, e.st, e.fixbar)) return;

    // Accumulator layout of m64nN: warp w of the warpgroup holds rows 16 w ..
    // 16 w + 15; acc[4 j + 2 h + e] is row g + 8 h, column 8 j + 2 t + e.
    if constexpr (TMA_STORE) {
#pragma unroll
        for (int j = 0; j < BN / 8; ++j)
#pragma unroll
            for (int h = 0; h < 2; ++h)
                last.pk[2 * j + h] = __floats2bfloat162_rn(e.scale * acc[4 * j + 2 * h], e.scale * acc[4 * j + 2 * h + 1]);
        last.row = row0 + 64 * e.cw, last.col = col0, last.sent = 0;
    } else {   // v22's: straight from registers, each pair of columns one 4-byte store when N is even
#pragma unroll
        for (int j = 0; j < BN / 8; ++j)
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                const int r = row0 + 64 * e.cw + 16 * e.warp + e.g + 8 * h, c = col0 + 8 * j + 2 * e.t;
                if (r >= e.M || c >= e.N) continue;
                __nv_bfloat16 *out = e.C + (size_t)r * e.N + c;
                const float v0 = e.scale * acc[4 * j + 2 * h], v1 = e.scale * acc[4 * j + 2 * h + 1];
                if (e.N % 2 == 0) *reinterpret_cast<__nv_bfloat162 *>(out) = __floats2bfloat162_rn(v0, v1);
                else {
                    out[0] = __float2bfloat16_rn(v0);
                    if (c + 1 < e.N) out[1] = __float2bfloat16_rn(v1);
                }
            }
    }
}

// TMA_STORE false: v22's register epilogue, for N % 8 != 0 (no tensor map for C).  CUT: the
// launch cuts the last round (cut.dp < ctiles); false: v38's kernel, whole tiles only.
template <int BN, bool TMA_STORE, bool CUT>
__global__ void __cluster_dims__(CLUSTER_M, 1, 1)   // blocks 2c and 2c + 1 (CLUSTER_M 2): cluster c, one GPC
__launch_bounds__(NUM_THREADS, 1)   // NUM_THREADS alone gives setmaxnreg its cap at entry; without the 1 the SASS differs
gemm_fp8(int M, int N, int K, const __grid_constant__ CUtensorMap mapA, const __grid_constant__ CUtensorMap mapB,
         const __grid_constant__ CUtensorMap mapC, const __grid_constant__ CUtensorMap mapCt, __nv_bfloat16 *C,
         const float *sa, const float *sb, const __grid_constant__ Cut cut) {
    check_width<BN>();
    constexpr int STAGES = stages<BN>(), CS_COLS = cs_cols<BN>(), PARTS = (BN + 63) / 64;
    extern __shared__ __align__(1024) unsigned char smem[];
    // The descriptors and the TMA's swizzle need 1024-byte alignment, which the
    // declaration does not guarantee for dynamic shared memory: round up (the launcher adds 1 KB).
    const unsigned misalign = (unsigned)__cvta_generic_to_shared(smem) % 1024;
    Stage<BN> *st = reinterpret_cast<Stage<BN> *>(smem + (1024 - misalign) % 1024);   // STAGES x (16 KB + BN x 128)
    CBox *cs = reinterpret_cast<CBox *>(st + STAGES);   // CONSUMERS x CS_COLS / 64 boxes: 2 x 16 or 2 x 8 KB
    __shared__ uint64_t full[STAGES], empty[STAGES];   // the two mbarriers of each stage
    __shared__ uint64_t fixbar[CONSUMERS];               // a consumer's partials, copied in (CUT)

    // The cluster's unit of work: CLUSTER_M neighbouring tiles along M, one per block.
    const int tilesM = (M + BM - 1) / BM, tilesN = (N + BN - 1) / BN;
    const int ctilesM = (tilesM + CLUSTER_M - 1) / CLUSTER_M;
    const int cluster = blockIdx.x / CLUSTER_M, clusters = gridDim.x / CLUSTER_M;
    const int cm = cluster_rank();   // this block's tile within the cluster tile
    const int wg = threadIdx.x / 128;   // 0: the producer; 1.. : consumer wg - 1, rows 64 (wg - 1) ..
    const int tilesK = (K + BK - 1) / BK;   // columns past K arrive as zeros
    if (threadIdx.x == 0) {
        for (int s = 0; s < STAGES; ++s) {
            mbar_init(&full[s], 1);                          // the expect_tx arrival; the bytes do the rest
            mbar_init(&empty[s], 4 * CONSUMERS * CLUSTER_M);   // one arrival per consumer warp of the cluster
        }
        for (int c = 0; c < CONSUMERS; ++c) mbar_init(&fixbar[c], 1);
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");   // visible to the copy engine and the peer
    }
    cluster_sync();   // every block's barriers are initialized before any block signals them

    // Both roles walk the same units and count the same k tiles: `it` is the ring's position
    // over all of this block's units, never reset, so stage it % STAGES holds fill number
    // it / STAGES whatever unit it belongs to, and the producer runs into the next unit as
    // soon as stages are free.
    if (wg == 0) {   // ---- producer ----------------------------------------------------
        setmaxnreg_dec<PRODUCER_REGS>();
        if (threadIdx.x == 0) {
            int it = 0;
            // One unit: k tiles [k0, k1) of cluster tile ct, into the ring from position it on.
            auto produce = [&](int ct, int k0, int k1) {
                int row0, col0;
                tile_origin<BN>(ct, ctilesM, tilesN, cm, row0, col0);
                for (int kt = k0; kt < k1; ++kt, ++it) {
                    const int s = it % STAGES, f = it / STAGES;
                    // The consumers of every block released fill f - 1: our slices may overwrite theirs.
                    if (f > 0) mbar_wait(&empty[s], (f - 1) & 1);
                    fill(st[s], &full[s], &mapA, &mapB, kt, row0, col0, cm);
                }
            };
            for (int ct = cluster; ct < cut.dp; ct += clusters) produce(ct, 0, tilesK);   // the whole tiles
            if constexpr (CUT) {   // then this cluster's pieces of the last round
                Pieces p(cluster, cut);
                int ct, k0, k1, slot;
                while (p.next(cut, clusters, ct, k0, k1, slot)) produce(ct, k0, k1);
            }
            // Exit only after the last release of every stage: then no arrival from the peer's
            // consumers (and no multicast: ours have taken every fill) can reach a block that is gone.
            for (int j = max(it - STAGES, 0); j < it; ++j) mbar_wait(&empty[j % STAGES], (j / STAGES) & 1);
        }
    } else {         // ---- consumers ---------------------------------------------------
        setmaxnreg_inc<CONSUMER_REGS>();
        const int cw = wg - 1;   // this warpgroup's rows: 64 cw .. 64 cw + 63 of the tile
        const int warp = threadIdx.x % 128 / 32, lane = threadIdx.x % 32;
        const Consumer<BN> env = {st, full, empty, fixbar, cs + cw * (CS_COLS / 64), &mapC, &mapCt, C, *sa * *sb,
                                  M, N, ctilesM, tilesN, cm, cw, warp, lane, lane / 4, lane % 4};
        Packed<BN> last;   // C = sa sb (A B^T): the scale applied once per element of C, as it is packed
        last.row = last.col = 0, last.sent = PARTS;
        int it = 0;
        for (int ct = cluster; ct < cut.dp; ct += clusters) consume<BN, TMA_STORE, false>(env, cut, last, ct, 0, tilesK, -1, it);
        if constexpr (CUT) {   // then this cluster's pieces of the last round
            Pieces p(cluster, cut);
            int ct, k0, k1, slot;
            while (p.next(cut, clusters, ct, k0, k1, slot)) consume<BN, TMA_STORE, true>(env, cut, last, ct, k0, k1, slot, it);
        }
        if constexpr (TMA_STORE) {   // the last tile's parts, then its stores done before the block exits
            while (last.sent < PARTS)
                store_part<BN>(last.pk, last.sent++, env.mine, &mapC, &mapCt, M, N, last.row, last.col, warp, lane / 4,
                               lane % 4, cw);
            if (threadIdx.x % 128 == 0) bulk_wait_all();
        }
    }
}

// A row-major rows x cols matrix of `type` (bf16 or e4m3 as UINT8: the TMA moves bytes)
// as a 2-D tensor map (dimension 0 = the contiguous columns), in boxes of box_rows x
// box_cols with the 128-byte swizzle, or none (the tail boxes of C).  The row stride must be a multiple of 16 bytes:
// cols % 8 == 0 in bf16, cols % 16 == 0 in e4m3.
static CUtensorMap make_map(const void *base, CUtensorMapDataType type, int elem_bytes, int rows, int cols, int box_rows,
                            int box_cols, CUtensorMapSwizzle swizzle = CU_TENSOR_MAP_SWIZZLE_128B) {
    static PFN_cuTensorMapEncodeTiled_v12000 encode = NULL;
    if (!encode) {   // the driver's entry point, through the runtime: no -lcuda
        void *fn = NULL;
        cudaDriverEntryPointQueryResult found;
        CUDA_CHECK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault, &found));
        if (found != cudaDriverEntryPointSuccess || !fn) {
            fprintf(stderr, "step44: the driver has no cuTensorMapEncodeTiled (CUDA 12.0 or later needed)\n");
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
                              CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle,
                              CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (r != CUDA_SUCCESS) {
        fprintf(stderr, "step44: cuTensorMapEncodeTiled failed (%d) for %d x %d at %p\n", (int)r, rows, cols, base);
        exit(KL_EXIT_USAGE);
    }
    return map;
}

// Clusters of two blocks resident at once for the BN-wide kernel (one block per SM), after
// its shared memory is allowed; once per width.
template <int BN> static int clusters_at_once() {
    static int clusters_max = 0;
    if (!clusters_max) {
        constexpr size_t smem = smem_bytes<BN>();
        int dev = 0, optin = 0;
        CUDA_CHECK(cudaGetDevice(&dev));
        CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
        if ((size_t)optin < smem) {
            fprintf(stderr, "step44: %zu KB of shared memory per block needed; this GPU allows %d KB\n", smem / 1024,
                    optin / 1024);
            exit(KL_EXIT_NO_GPU);
        }
        CUDA_CHECK(cudaFuncSetAttribute(gemm_fp8<BN, true, true>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
        CUDA_CHECK(cudaFuncSetAttribute(gemm_fp8<BN, true, false>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
        CUDA_CHECK(cudaFuncSetAttribute(gemm_fp8<BN, false, true>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
        CUDA_CHECK(cudaFuncSetAttribute(gemm_fp8<BN, false, false>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
        // A cluster's blocks must land on SMs of one GPC at the same time, so the question is
        // not "blocks per SM" but "clusters at once": the occupancy API answers it per GPC.
        const cudaLaunchConfig_t cfg = {dim3(CLUSTER_M), dim3(NUM_THREADS), smem, 0, NULL, 0};   // grid, block, smem
        CUDA_CHECK(cudaOccupancyMaxActiveClusters(&clusters_max, (const void *)gemm_fp8<BN, true, true>, &cfg));
        if (clusters_max < 1) {
            fprintf(stderr, "step44: no cluster of %d blocks of %zu KB fits on this GPU at once\n", CLUSTER_M, smem / 1024);
            exit(KL_EXIT_NO_GPU);
        }
    }
    return clusters_max;
}

// ---- the plan (host only: --plan prints it with no GPU) ----------------------------------
static int opt_bn = 0;    // --bn: the tile's width (0: chosen per problem)
static int opt_cut = 0;   // --cut: 0 where the plan saves, 1 never, 2 wherever the last round is short

// The time of one k tile of a 128 x BN tile when every SM runs one (a round), in ns: one
// wave of 66 cluster tiles, K = 8192, ./step32 --bn BN -m 1536 -n 11BN -k 8192 on the H100
// (v32's page).  Index (BN - 128) / 16.
static double k_tile_ns(int bn) {
    static const double ns[] = {472, 488, 513, 557, 602, 654, 688, 749, 799};   // BN 128, 144, .. 256
    return ns[(bn - MIN_BN) / 16];
}

// Rounds of the BN-wide tiles: cluster tiles (two tiles along M) over the clusters at once.
static long long rounds_of(int m, int n, int bn, int clusters) {
    const long long ctiles = (long long)((m + CLUSTER_M * BM - 1) / (CLUSTER_M * BM)) * ((n + bn - 1) / bn);
    return (ctiles + clusters - 1) / clusters;
}

// The width (v32's rule): the width of least rounds x k tiles x k_tile_ns, if that saves at
// least MIN_SAVING of the 256-wide tile's time; else 256.  The one-wave costs do not carry
// over to many rounds in full: 224 wide, predicted 1.6-3.1% faster than 256 at five problems
// of the list, ran 0.4-8% slower at each (v32's page).
#define MIN_SAVING 0.10
static double predicted_us(int m, int n, int k, int bn, int clusters) {
    return rounds_of(m, n, bn, clusters) * (double)((k + BK - 1) / BK) * k_tile_ns(bn) / 1000.0;
}
static int width_for(int m, int n, int k, int clusters) {
    if (opt_bn) return opt_bn;
    const double wide = predicted_us(m, n, k, MAX_BN, clusters);
    int best = MAX_BN;
    double best_us = wide;
    for (int bn = MAX_BN - 16; bn >= MIN_BN; bn -= 16) {
        const double us = predicted_us(m, n, k, bn, clusters);
        if (us < best_us) best_us = us, best = bn;
    }
    return best_us <= (1.0 - MIN_SAVING) * wide ? best : MAX_BN;
}

// What a piece's partial costs, in us for a 256-wide tile (64 x 256 fp32 a warpgroup, 128 KB
// a block), scaled by the width: written by a helper (its stores, then the flag's release),
// and read by the first piece (one bulk copy a warpgroup).  Measured on a %globaltimer trace
// of the tail at 4096 x 4096 x 4096, 4096 x 7168 x 16384 and 8192^3 on the H100 (the notes).
static constexpr double WRITE_US = 4.0, READ_US = 3.2;

// The plan for m x n x k at the width: the whole rounds, then, where the last round is short,
// its cut.  With rest tiles left on `clusters`, each is cut in s = max(2, clusters / rest)
// pieces: the first on a cluster of its own, the other s - 1 (parts) on the helpers, q each.
// In k tiles of the width, the first piece takes S + parts x read, a helper q x (L + write);
// L is chosen to even them out (S = tilesK - parts x L), and the cut is taken where it saves
// more than one more write beside the whole rounds.
struct Plan {
    int bn;
    long long clusters, ctiles, rounds, tilesK, whole_kt;   // whole tiles: rounds x tilesK k tiles a cluster
    long long dp, rest, parts, q, L, S;                     // cut: dp tiles whole, then the rest in pieces
    double write_kt, read_kt, cut_kt;                       // a partial's costs, and the cut's, in k tiles
    bool cuts;
};
static Plan plan_for(int m, int n, int k, int bn, int clusters, int cut_opt) {
    Plan p = {};
    p.bn = bn, p.clusters = clusters;
    p.tilesK = (k + BK - 1) / BK;
    p.ctiles = (long long)((m + CLUSTER_M * BM - 1) / (CLUSTER_M * BM)) * ((n + bn - 1) / bn);
    p.rounds = (p.ctiles + clusters - 1) / clusters;
    p.whole_kt = p.rounds * p.tilesK;
    p.dp = p.ctiles / clusters * clusters, p.rest = p.ctiles - p.dp;
    if (p.rest > 0) {
        const long long helpers = clusters - p.rest;
        p.parts = (clusters / p.rest > 2 ? clusters / p.rest : 2) - 1;
        p.q = (p.rest * p.parts + helpers - 1) / helpers;
        p.write_kt = WRITE_US * 1000.0 * bn / MAX_BN / k_tile_ns(bn);
        p.read_kt = READ_US * 1000.0 * bn / MAX_BN / k_tile_ns(bn);
        const double even = (p.tilesK + p.parts * p.read_kt - p.q * p.write_kt) / (p.q + p.parts);
        p.L = even >= 1.0 ? (long long)even : 1;
        p.S = p.tilesK - p.parts * p.L;
        if (p.S < 1) p.L = 1, p.S = p.tilesK - p.parts;   // the reads outweigh the pieces: the shortest pieces
        const double first = p.S + p.parts * p.read_kt, helper = p.q * (p.L + p.write_kt);
        p.cut_kt = p.dp / clusters * p.tilesK + (first > helper ? first : helper);
    }
    // A cut needs a short last round and a first piece of at least one k tile; the kernel's
    // int arithmetic holds for any problem that fits in memory.
    const bool can = p.rest > 0 && p.S >= 1;
    p.cuts = can && (cut_opt == 2 || (cut_opt == 0 && p.cut_kt + p.write_kt < p.whole_kt));
    return p;
}

static int accepts(const kl_problem *p, char *msg, size_t len) {
    (void)p;
    if (opt_bn != 0 && (opt_bn < MIN_BN || opt_bn > MAX_BN || opt_bn % 16)) {
        snprintf(msg, len, "--bn %d: the tile widths are %d to %d in steps of 16; give one of them, or 0 to let the "
                 "plan choose", opt_bn, MIN_BN, MAX_BN);
        return 1;
    }
    return 0;
}

struct Variant {
    bool cuts;        // the last round may be cut; false: v38's plan, whole tiles only (the control)
    kl_problem said;  // the problem planned last ...
    Plan plan;        // ... and its plan
};
static Variant chosen = {true, {0, 0, 0}, {}}, v38 = {false, {0, 0, 0}, {}};

// The plan of variant v for m x n x k at width bn on `clusters` (those of that width at once),
// said in one line: the width, the whole rounds, the cut (or why not), each in k tiles a cluster.
static Plan plan_and_say(const Variant *v, int m, int n, int k, int bn, int clusters) {
    const Plan p = plan_for(m, n, k, bn, clusters, v->cuts ? opt_cut : 1);
    printf("  plan%s for %d x %d x %d: 128 x %d tiles, ", v->cuts ? "" : " (v38)", m, n, k, p.bn);
    if (p.cuts)
        printf("%lld whole round%s, then %lld tile%s cut: the first %lld k tiles on %lld cluster%s, %lld piece%s of %lld "
               "on the other %lld, %lld each", p.dp / clusters, p.dp / clusters == 1 ? "" : "s", p.rest,
               p.rest == 1 ? "" : "s", p.S, p.rest, p.rest == 1 ? "" : "s", p.parts, p.parts == 1 ? "" : "s", p.L, clusters - p.rest, p.q);
    else
        printf("%lld round%s of %lld k tiles", p.rounds, p.rounds == 1 ? "" : "s", p.tilesK);
    printf(" (k tiles a cluster: whole %lld", p.whole_kt);
    if (v->cuts && p.rest > 0) {
        if (p.S >= 1)
            printf("; cut %lld + max(%lld + %lld x %.1f, %lld x (%lld + %.1f)) = %.1f", p.dp / clusters * p.tilesK, p.S,
                   p.parts, p.read_kt, p.q, p.L, p.write_kt, p.cut_kt);
        else
            printf("; no cut: %lld k tiles for %lld parts", p.tilesK, p.parts);
    }
    printf(")\n");
    return p;
}

static void show_plan(const kl_problem *q, int sms) {   // --plan SMS: both variants' plans, no GPU
    const int bn = width_for(q->m, q->n, q->k, sms / CLUSTER_M);
    plan_and_say(&chosen, q->m, q->n, q->k, bn, sms / CLUSTER_M);
    plan_and_say(&v38, q->m, q->n, q->k, bn, sms / CLUSTER_M);
}

// One launch of the BN-wide kernel over the whole problem, as planned.
template <int BN> static void launch_width(const kl_gemm_fp8_args *args, const Plan &p, cudaStream_t stream) {
    const int m = args->m, n = args->n, k = args->k;
    const uint8_t *a = args->a, *b = args->b;
    kl_bf16 *c = args->c;
    // The maps depend on the pointers and sizes only: built again when they change, not on
    // every launch of the timed loop (one cache per width: B's box is BN / 2 rows).
    static struct { const uint8_t *a, *b; kl_bf16 *c; int m, n, k; CUtensorMap mapA, mapB, mapC, mapCt; } cache = {};
    if (cache.a != a || cache.b != b || cache.c != c || cache.m != m || cache.n != n || cache.k != k) {
        cache.mapA = make_map(a, CU_TENSOR_MAP_DATA_TYPE_UINT8, 1, m, k, BM, BK);
        cache.mapB = make_map(b, CU_TENSOR_MAP_DATA_TYPE_UINT8, 1, n, k, BN / CLUSTER_M, BK);   // one slice of the shared box
        cache.mapC = cache.mapCt = {};
        if (n % 8 == 0) {   // 16-byte rows, or no map
            cache.mapC = make_map(c, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, m, n, 64, 64);
            if (BN % 64)   // the tail: 64 rows of BN % 64 columns, unswizzled
                cache.mapCt = make_map(c, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, m, n, 64, BN % 64, CU_TENSOR_MAP_SWIZZLE_NONE);
        }
        cache.a = a, cache.b = b, cache.c = c, cache.m = m, cache.n = n, cache.k = k;
    }
    Cut cut = {(int)p.ctiles, 0, 0, 0, 0, NULL, NULL, 0};   // < 2^31 cluster tiles for any C that fits
    unsigned clusters = (unsigned)(p.ctiles < p.clusters ? p.ctiles : p.clusters);
    if (p.cuts) {
        // The workspace: a 64 x BN fp32 slot per helper piece (fewer than the clusters), block
        // and consumer, and a flag per slot, zeroed once; each launch counts itself (from 1,
        // never 0) and a written slot's flag holds that count.  It grows when a problem needs
        // more, outside any timing that matters (the check runs first).
        static float *partials = NULL;
        static unsigned *ready = NULL, epoch = 0;
        static size_t have_f = 0, have_r = 0;
        const size_t need_f = (size_t)p.clusters * CLUSTER_M * CONSUMERS * 64 * BN;
        const size_t need_r = (size_t)p.clusters * CLUSTER_M * CONSUMERS;
        if (need_f > have_f) {
            CUDA_CHECK(cudaFree(partials));
            CUDA_CHECK(cudaMalloc(&partials, need_f * sizeof(float)));
            have_f = need_f;
        }
        if (need_r > have_r) {
            CUDA_CHECK(cudaFree(ready));
            CUDA_CHECK(cudaMalloc(&ready, need_r * sizeof(unsigned)));
            CUDA_CHECK(cudaMemset(ready, 0, need_r * sizeof(unsigned)));
            have_r = need_r;
        }
        if (++epoch == 0) epoch = 1;
        cut = {(int)p.dp, (int)p.rest, (int)p.S, (int)p.L, (int)p.parts, partials, ready, epoch};
        clusters = (unsigned)p.clusters;   // every cluster takes a piece or waits for one
    }
    const unsigned grid = CLUSTER_M * clusters;   // whole clusters
    constexpr size_t smem = smem_bytes<BN>();
    __nv_bfloat16 *cc = (__nv_bfloat16 *)c;
    if (n % 8 == 0) {
        if (p.cuts) gemm_fp8<BN, true, true><<<grid, NUM_THREADS, smem, stream>>>(m, n, k, cache.mapA, cache.mapB, cache.mapC, cache.mapCt, cc, args->sa, args->sb, cut);
        else gemm_fp8<BN, true, false><<<grid, NUM_THREADS, smem, stream>>>(m, n, k, cache.mapA, cache.mapB, cache.mapC, cache.mapCt, cc, args->sa, args->sb, cut);
    } else {
        if (p.cuts) gemm_fp8<BN, false, true><<<grid, NUM_THREADS, smem, stream>>>(m, n, k, cache.mapA, cache.mapB, cache.mapC, cache.mapCt, cc, args->sa, args->sb, cut);
        else gemm_fp8<BN, false, false><<<grid, NUM_THREADS, smem, stream>>>(m, n, k, cache.mapA, cache.mapB, cache.mapC, cache.mapCt, cc, args->sa, args->sb, cut);
    }
    KL_CHECK_LAUNCH();
}

// The clusters at once of the width the plan chose: a cut needs every one of them resident.
static int clusters_of(int bn) {
    switch (bn) {
    case 128: return clusters_at_once<128>();
    case 144: return clusters_at_once<144>();
    case 160: return clusters_at_once<160>();
    case 176: return clusters_at_once<176>();
    case 192: return clusters_at_once<192>();
    case 208: return clusters_at_once<208>();
    case 224: return clusters_at_once<224>();
    case 240: return clusters_at_once<240>();
    default: return clusters_at_once<256>();
    }
}

static void launch(const kl_gemm_fp8_args *args, void *ctx, cudaStream_t stream) {
    Variant *v = static_cast<Variant *>(ctx);
    if (args->m != v->said.m || args->n != v->said.n || args->k != v->said.k) {   // a new problem: plan it, and say so
        const int bn = width_for(args->m, args->n, args->k, clusters_at_once<MAX_BN>());
        v->plan = plan_and_say(v, args->m, args->n, args->k, bn, clusters_of(bn));
        v->said = (kl_problem){args->m, args->n, args->k};
    }
    switch (v->plan.bn) {
    case 128: launch_width<128>(args, v->plan, stream); break;
    case 144: launch_width<144>(args, v->plan, stream); break;
    case 160: launch_width<160>(args, v->plan, stream); break;
    case 176: launch_width<176>(args, v->plan, stream); break;
    case 192: launch_width<192>(args, v->plan, stream); break;
    case 208: launch_width<208>(args, v->plan, stream); break;
    case 224: launch_width<224>(args, v->plan, stream); break;
    case 240: launch_width<240>(args, v->plan, stream); break;
    default: launch_width<256>(args, v->plan, stream); break;
    }
}

int main(int argc, char **argv) {
    kl_step step = {};
    step.number = 44;
    step.title = "FP8 per-tensor, the last round cut along K, its partials read by the copy engine (sm_90a)";
    step.min_cc = 90;
    step.only_cc = 90;
    step.accepts = accepts;
    step.show_plan = show_plan;
    step.kernels[0].op = &kl_op_gemm_fp8;
    step.kernels[0].gemm_fp8 = launch;
    step.kernels[0].ctx = &chosen;
    step.kernels[1].op = &kl_op_gemm_fp8;
    step.kernels[1].variant = "v38";
    step.kernels[1].gemm_fp8 = launch;
    step.kernels[1].ctx = &v38;
    step.opts[0] = (kl_opt){"bn", "tile width: 128 to 256 in steps of 16 (0: chosen per problem)", &opt_bn, 0, MAX_BN};
    step.opts[1] = (kl_opt){"cut", "the last round cut along K: 0 where the plan saves, 1 never, 2 wherever a round is "
                            "short", &opt_cut, 0, 2};
    return kl_main(argc, argv, &step);
}
