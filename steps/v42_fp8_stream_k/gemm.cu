// build: sm_90a
/*
 * Step 42 - FP8 block scales, the last round shared out along K (Stream-K).
 *
 * v37's plan chooses the tile width by rounds: at DeepSeek-V3's 4096 x 7168 x 16384 the
 * 192-wide tile (v37's faster one: 107% of cuBLASLt at 8192^3) makes 608 cluster tiles,
 * 9.21 rounds on the H100's 66 clusters, so 10 rounds of time; the 128-wide tile makes 896,
 * 13.58 rounds in 14, and wins.  Either way most of a round is spent with SMs idle.
 *
 * v42 keeps whole tiles for the whole rounds and shares the rest out evenly along K: the
 * last R cluster tiles are R x tilesK k tiles in a row, and each cluster takes the next
 * ceil(R tilesK / clusters) of them, in pieces where its share crosses a tile's edge.  Only
 * a share's first piece can start inside a tile and only its last can end inside one, so a
 * cut tile's piece at k tile 0 is the last of its share, done last: it waits for the other
 * pieces' fp32 partials, adds them to its sums in k order (the same bits every run) and
 * stores C; the others write their partials and set a flag.  At 4096 x 7168 x 16384 the
 * 192-wide tile then costs 9 rounds, a share of 28 k tiles and the fix-up, and the plan
 * takes it.
 *
 * The plan: for each width, the rounds of whole tiles, or the whole rounds plus the share
 * and the fix-up's measured cost, whichever is less; the cheaper width wins.  Everything
 * else is v37's: the promotion, the two turns a pass, the scales carried by the TMA, the
 * cluster of two along M.  The variant "v37" is v37's plan and kernel, the control.
 * --bn 128|192 forces a width; --share 1 never shares, 2 shares wherever a round is short.
 *
 * Build and run:   make step42 && ./step42          (an H100 or H200 only)
 */
#include "kl.h"

#include <cuda.h>   // CUtensorMap and its enums only: the driver is reached through the runtime
#include <cudaTypedefs.h>
#include <cuda_bf16.h>
#include <cuda_fp8.h>

#define BM 128   // 64 rows of C per consumer warpgroup
#define BK 128   // e4m3: one byte per element, one 128-byte row
#define GROUP_M 8    // M-tiles that walk across N together (1: row-major, v22's order)
#define CLUSTER_M 2   // blocks of a cluster along M: tiles (m, n), (m + 1, n) share B's strip
#define CONSUMERS (BM / 64)                  // one consumer warpgroup per 64 rows
#define NUM_THREADS (128 * (CONSUMERS + 1))   // + the producer warpgroup
#define PRODUCER_REGS 40    // a loop counter, two addresses, a parity
#define CONSUMER_REGS 232   // 3 x 64 or 2 x 96 accumulators + descriptors, indices, scales, the epilogue's addresses

// The two tiles: 128 x 128 with two k blocks per turn (acc twice + sum: 3 x 64 registers)
// and v29's 128 x 192 with one (2 x 96).  C is staged in rounds of 64 columns at 128 wide
// (v31's), all 192 at once at 192 wide; the ring takes what shared memory leaves: 6 stages
// of 32 KB or 4 of 40 KB.
template <int BN> __host__ __device__ constexpr int per_turn() { return BN == 128 ? 2 : 1; }
template <int BN> __host__ __device__ constexpr int cs_cols() { return BN == 128 ? 64 : BN; }
template <int BN> __host__ __device__ constexpr int stages() { return BN == 128 ? 6 : 4; }
template <int BN> __host__ __device__ constexpr void check_width() {
    static_assert(BN == 128 || BN == 192, "two widths: 128 (two k blocks per turn) and 192 (one)");
    static_assert(per_turn<BN>() * BN / 2 + BN / 2 <= 192, "acc per k block of the turn and sum fit beside ~40 registers");
    static_assert(BN % (8 * CLUSTER_M) == 0, "each block's slice of B's box is whole 8-row groups (1024 bytes: the swizzle's period)");
    static_assert(BN % cs_cols<BN>() == 0 && cs_cols<BN>() % 64 == 0, "whole 64-column boxes (128 bytes: the C map's swizzle row)");
    static_assert(BN / 2 + 26 <= 65536 / NUM_THREADS / 8 * 8,
                  "each wgmma compiles within the cap at entry, whatever setmaxnreg.inc raises it to (v22's page)");
    static_assert(stages<BN>() > per_turn<BN>(), "a turn's stages in flight, one more being filled");
    static_assert(stages<BN>() * (BM + BN) * BK + CONSUMERS * 64 * cs_cols<BN>() * 2 + stages<BN>() * (BM + 32) * 4 + 2048 <=
                  227 * 1024, "the ring, the C staging, the scales, the alignment and the barriers fit the 227 KB a block may have");
}
static_assert(BM == 128, "two consumer warpgroups of m64nBN tile the block");
static_assert(128 * (PRODUCER_REGS + CONSUMERS * CONSUMER_REGS) <= 65536,
              "the roles' registers fit the SM's 64K, or setmaxnreg.inc waits forever");
static_assert(BM <= 256, "a TMA box has at most 256 rows");
static_assert(GROUP_M >= 1, "a group has at least one M-tile");
static_assert(CLUSTER_M <= 8, "8 blocks: the largest portable cluster");
static_assert(GROUP_M % CLUSTER_M == 0, "a group holds whole cluster tiles");

// SWIZZLE_128B: the TMA box's inner dimension is one 128-byte row, and
// wgmma reads it as SWIZZLE_128B only if each 8-row group starts on 1024 bytes.
static_assert(BK == 128 && BK == KL_FP8_BLOCK, "BK e4m3 = one 128-byte row = one k block of the scales");

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
// The consumers' turns: named barriers 3 and 4, each counting both warpgroups (256 threads).
// Consumer cw waits on barrier 3 + cw before it issues a batch and, once the batch is issued,
// arrives on the other's (4 - cw) without waiting: the batches enter the tensor pipe in the
// order 0, 1, 0, 1, ...  (Written with the barrier's number as the argument: the form that
// kept ptxas's loop in uniform registers; passing cw instead ran 7-14% slower: the page.)
__device__ __forceinline__ void turn_wait(int id) { asm volatile("bar.sync %0, 256;\n" ::"r"(id) : "memory"); }
__device__ __forceinline__ void turn_pass(int id) { asm volatile("bar.arrive %0, 256;\n" ::"r"(id) : "memory"); }

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
// Wait until at most n of this warpgroup's batches are still running (n a constant once unrolled).
__device__ __forceinline__ void wgmma_wait_upto(int n) {
    if (n >= 1) wgmma_wait<1>();
    else wgmma_wait<0>();
}

// d (64 x BN fp32, BN / 2 per thread) += A (64 x 32, K-major) * B (BN x 32, K-major)^T in
// e4m3, for the whole warpgroup; with accumulate = 0, d = A * B (each k tile's first
// instruction: a new k block starts from zero).  The trailing 1, 1: A and B scaled by +1.
#define D8(i) "+f"(d[i]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3]), "+f"(d[i + 4]), "+f"(d[i + 5]), \
              "+f"(d[i + 6]), "+f"(d[i + 7])
__device__ __forceinline__ void wgmma_m64n128k32_e4m3(float (&d)[64], uint64_t desc_a, uint64_t desc_b, int accumulate) {
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3 {"
                 "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
                 "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
                 "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
                 "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
                 "}, %64, %65, p, 1, 1;\n}\n"
                 : D8(0), D8(8), D8(16), D8(24), D8(32), D8(40), D8(48), D8(56)
                 : "l"(desc_a), "l"(desc_b), "r"(accumulate));
}
__device__ __forceinline__ void wgmma_m64n192k32_e4m3(float (&d)[96], uint64_t desc_a, uint64_t desc_b, int accumulate) {
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %98, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n192k32.f32.e4m3.e4m3 {"
                 "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
                 "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
                 "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
                 "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, "
                 "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, "
                 "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95"
                 "}, %96, %97, p, 1, 1;\n}\n"
                 : D8(0), D8(8), D8(16), D8(24), D8(32), D8(40), D8(48), D8(56), D8(64), D8(72), D8(80), D8(88)
                 : "l"(desc_a), "l"(desc_b), "r"(accumulate));
}
#undef D8
template <int BN> __device__ __forceinline__ void wgmma_e4m3(float (&d)[BN / 2], uint64_t da, uint64_t db, int accumulate) {
    if constexpr (BN == 128) wgmma_m64n128k32_e4m3(d, da, db, accumulate);
    else wgmma_m64n192k32_e4m3(d, da, db, accumulate);
}

template <int BN> struct Stage {
    uint8_t As[BM][BK];   // 128*128 e4m3 = 16 KB, swizzled by the TMA (16 x 1024 bytes: groups stay aligned)
    uint8_t Bs[BN][BK];   // 16 or 24 KB, swizzled by the TMA
};
template <int BN> constexpr size_t smem_bytes() {   // 6 x 32 KB + 2 x 8 KB of C, or 4 x 40 KB + 2 x 24 KB; + 1 KB to align: 209 KB
    return stages<BN>() * sizeof(Stage<BN>) + CONSUMERS * (cs_cols<BN>() / 64) * 64 * 64 * 2 + 1024;
}
// One consumer's C staging: cs_cols / 64 boxes of 64 rows x 64 columns (8 KB each), each in
// the 128-byte swizzle the C map names: 16-byte chunk c of row r sits at chunk c ^ (r % 8).
typedef __nv_bfloat16 CBox[64][64];

// The scales of one k tile, carried by the TMA beside its tiles: sa(row0 + i, kt) for the
// BM rows (rows past M arrive as zeros), and sb of the (at most) two column blocks the tile
// touches, col0 / 128 and the next: a box of 2 x 4 of sb's padded rows, the 4 around kt.
struct __align__(128) Scales {
    float a[BM];      // 512 bytes
    float b[2][4];    // b[h][kt % 4]: block col0 / 128 + h
};
constexpr unsigned SCALE_BYTES = BM * 4 + 2 * 4 * 4;   // what the two scale boxes land

// The producer of block cm fills its share of stage s with k tile kt of its tile at
// (row0, col0): its own A box, and slice cm of the B box all blocks of the cluster share
// (BN / CLUSTER_M rows), into all of them; then its own scales.  Every block's stage ends
// up whole: 32 or 40 KB and 544 bytes of scales on every full barrier.
template <int BN>
__device__ __forceinline__ void fill(Stage<BN> &s, Scales &sc, uint64_t *full, const CUtensorMap *mapA,
                                     const CUtensorMap *mapB, const CUtensorMap *mapSA, const CUtensorMap *mapSB,
                                     int kt, int row0, int col0, int cm) {
    constexpr int BR = BN / CLUSTER_M;   // rows of each slice
    mbar_arrive_expect_tx(full, sizeof(Stage<BN>) + SCALE_BYTES);   // the peers' slices and zero-filled edges included
    tma_load(s.As, mapA, kt * BK, row0, full);
    tma_load_mc(s.Bs[BR * cm], mapB, kt * BK, col0 + BR * cm, full, (uint16_t)((1u << CLUSTER_M) - 1));   // to every rank
    tma_load(sc.a, mapSA, row0, kt, full);                            // sa's column kt, rows row0 ..
    tma_load(sc.b, mapSB, kt / 4 * 4, col0 / KL_FP8_BLOCK, full);     // sb's rows col0 / 128 and the next
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

// sum += acc times its scale, on the CUDA cores.  acc[4 j + 2 h + e] is row g + 8 h, column
// 8 j + 2 t + e: column groups j < SPLIT lie in the tile's first block of B's scales (factors
// f0 for row g, f1 for g + 8), the others in the next (g0, g1).  SPLIT is a constant: no
// select per element.
template <int BN, int SPLIT>
__device__ __forceinline__ void promote(float (&sum)[BN / 2], const float (&acc)[BN / 2], float f0, float f1, float g0,
                                        float g1) {
#pragma unroll
    for (int j = 0; j < BN / 8; ++j) {
        const float x0 = j < SPLIT ? f0 : g0, x1 = j < SPLIT ? f1 : g1;
        sum[4 * j + 0] += x0 * acc[4 * j + 0];
        sum[4 * j + 1] += x0 * acc[4 * j + 1];
        sum[4 * j + 2] += x1 * acc[4 * j + 2];
        sum[4 * j + 3] += x1 * acc[4 * j + 3];
    }
}

// One turn of a consumer: Q k blocks (k tiles kt .., ring positions it ..) issued back to
// back into acc[0 .. Q - 1], each its own batch; then, oldest first, each waited for (the
// later ones keep running), its stage released and its sums promoted.  Q = 2 at 128 wide
// (acc twice + sum: 192 registers), 1 at 192 (v29's turn).  At 192 wide (P = 1) the next
// turn's stage is waited for while this turn's batch runs; `total` is the block's count of
// k tiles (its ring positions), so the last turn waits for no fill that will never come.
template <int BN, int Q, int P>
__device__ __forceinline__ void turn(float (&acc)[P][BN / 2], float (&sum)[BN / 2], Stage<BN> *st, const Scales *sc,
                                     uint64_t *full, uint64_t *empty, int kt, int it, int total, int cw, int i0, int lane,
                                     int col0) {
    constexpr int STAGES = stages<BN>();
    int s[Q];
    uint64_t da[Q], db[Q];
#pragma unroll
    for (int q = 0; q < Q; ++q) {
        s[q] = (it + q) % STAGES;
        if (P > 1 || it == 0)   // at 192 wide, the block's first turn; the later ones were waited for in the last turn
            mbar_wait(&full[s[q]], ((it + q) / STAGES) & 1);
    }
    __syncwarp();   // the warp together again before the .sync.aligned wgmma (v21)
#pragma unroll
    for (int q = 0; q < Q; ++q) da[q] = make_desc(st[s[q]].As[64 * cw]), db[q] = make_desc(st[s[q]].Bs);
    turn_wait(3 + cw);   // the other consumer's batches before ours are issued
    wgmma_fence();   // the accumulators' registers are settled before the batches read them
#pragma unroll
    for (int q = 0; q < Q; ++q) {
#pragma unroll
        for (int kk = 0; kk < BK / 32; ++kk)   // the next 32 of k: 32 bytes on, encoded >> 4
            wgmma_e4m3<BN>(acc[q], da[q] + 2 * kk, db[q] + 2 * kk, kk > 0);   // kk 0: a new k block
        wgmma_commit();   // one batch per k block: each can be waited for alone
    }
    turn_pass(4 - cw);   // ours are: the other may issue its next
#pragma unroll
    for (int q = 0; q < Q; ++q) {
        // The scales of this k block, read from the stage while the batches run.
        const float a0 = sc[s[q]].a[i0], a1 = sc[s[q]].a[i0 + 8];
        const float b0 = sc[s[q]].b[0][(kt + q) % 4], b1 = sc[s[q]].b[1][(kt + q) % 4];
        // The next turn's stage, while the batch runs: a round trip off the chain from the
        // batch's end to the next issue (P = 1 only; Q = P = 1 there).
        if (P == 1 && it + 1 < total) mbar_wait(&full[(it + 1) % STAGES], ((it + 1) / STAGES) & 1);
        wgmma_wait_upto(Q - 1 - q);   // batch q is complete; the later ones run on ...
        fence_acc(acc[q]);            // ... and only then are its sums read
        // No batch reads that stage any more: lane r tells block r of the cluster.
        if (lane < CLUSTER_M) mbar_arrive_cluster(&empty[s[q]], lane);
        // Promotion: row g (scale a0) and g + 8 (a1); columns before the tile's first
        // 128-column boundary take b0, the rest b1 (a 128-wide tile has none).
        if (BN == 128 || col0 % KL_FP8_BLOCK == 0) promote<BN, 16>(sum, acc[q], a0 * b0, a1 * b0, a0 * b1, a1 * b1);
        else promote<BN, 8>(sum, acc[q], a0 * b0, a1 * b0, a0 * b1, a1 * b1);   // col0 % 128 == 64
    }
}

// What a launch shares out.  The first dp cluster tiles (v23's order) are done whole, as in
// v37 (all of them when nothing is shared); the k tiles of the other ctiles - dp, (ctiles -
// dp) x tilesK in a row, go `share` at a time to the clusters in order.  partials: a 64 x BN
// fp32 slot per cluster, block and consumer (a share holds at most one piece that another
// cluster finishes: its first); ready: a flag per slot, set to this launch's `epoch` once the
// slot is written (the host counts launches from 1; the flags start at 0).
struct Share {
    int dp, share;
    float *partials;
    unsigned *ready;
    unsigned epoch;
};

// The pieces of a cluster's share, walked alike by the producer and the consumers after the
// whole tiles: each the k tiles [k0, k1) of shared tile r (cluster tile dp + r), cut where
// the share crosses a tile's edge.  i .. end: what is left of the share (< 2^31: the plan
// checks); (r, k): where i lies.  The share's start is found in steps of a tile (fewer than
// the clusters) rather than by a division, whose SASS is a per-thread sequence (I2F,
// MUFU.RCP, ...); each later piece starts the next tile.
struct Pieces {
    int dp, tilesK, i, end, r, k;
    __device__ __forceinline__ Pieces(int cluster, int ctiles, int tilesK_, const Share &sh)
        : dp(sh.dp), tilesK(tilesK_), r(0) {
        const int row = (ctiles - dp) * tilesK;   // the shared k tiles
        i = min(cluster * sh.share, row), end = min(i + sh.share, row);
        for (k = i; k >= tilesK; k -= tilesK) ++r;
    }
    __device__ __forceinline__ int size() const { return end - i; }
    __device__ __forceinline__ bool next(int &t, int &k0, int &k1, int &rr) {
        if (i >= end) return false;
        t = dp + r, k0 = k, k1 = min(tilesK, k + end - i), rr = r;
        i += k1 - k0, ++r, k = 0;
        return true;
    }
};

// The fix-up, for one consumer warpgroup's 64 x BN sums of a piece of shared tile r.  Cluster
// c's share is k tiles [c share, (c + 1) share) of the row, so the tile's pieces belong to
// clusters first .. last, in the order of their k ranges.  The piece at k tile 0 (first's,
// the last piece of its share: done last) adds the others' partials to its own sums, in that
// order (the same bits every run), and returns true: it stores C.  Every other piece is the
// first of its cluster's share, done early: it writes its partial to its cluster's slot, sets
// the slot's flag and returns false.  A warp whose rows all lie past M neither writes nor
// reads (rows_live: one answer per warp).
__device__ __forceinline__ void flag_set(unsigned *flag, unsigned v) {
    asm volatile("st.release.gpu.global.u32 [%0], %1;\n" ::"l"(flag), "r"(v) : "memory");
}
__device__ __forceinline__ unsigned flag_get(const unsigned *flag) {
    unsigned v;
    asm volatile("ld.acquire.gpu.global.u32 %0, [%1];\n" : "=r"(v) : "l"(flag) : "memory");
    return v;
}
template <int BN>
__device__ __forceinline__ bool fix_up(float (&sum)[BN / 2], const Share &sh, int r, int k0, int tilesK, int cluster,
                                       int cm, int cw, bool rows_live) {
    constexpr int WG4 = 64 * BN / 4, SLOT4 = CLUSTER_M * CONSUMERS * WG4;   // float4s: one warpgroup's, one slot's
    const int tid = threadIdx.x % 128, place = cm * CONSUMERS + cw;
    // Fragment order: float4 j of thread tid at j x 128 + tid, so each store of the warpgroup
    // is 2 KB in a row, and each thread reads back what a thread of its place wrote.
    float4 *base = reinterpret_cast<float4 *>(sh.partials) + place * WG4 + tid;
    if (k0 > 0) {   // not the tile's first piece: the partial out, for the first to add
        if (rows_live)
#pragma unroll
            for (int j = 0; j < BN / 8; ++j)
                __stcg(base + (size_t)cluster * SLOT4 + j * 128,
                       make_float4(sum[4 * j], sum[4 * j + 1], sum[4 * j + 2], sum[4 * j + 3]));
        wg_barrier(1 + cw);   // the warpgroup's partial written before one thread flags it
        if (tid == 0) flag_set(&sh.ready[cluster * CLUSTER_M * CONSUMERS + place], sh.epoch);
        return false;
    }
    // The first piece: the clusters after this one with a piece of the tile, found in steps
    // (as in Pieces), each partial added once its flag says it is there.
    const int k_end = (r + 1) * tilesK;
    for (int c = cluster + 1; c * sh.share < k_end; ++c) {
        if (tid == 0)
            while (flag_get(&sh.ready[c * CLUSTER_M * CONSUMERS + place]) != sh.epoch) {}
        wg_barrier(1 + cw);   // thread 0 saw the flag: the partial is there for all 128
        if (rows_live) {
            // All loads of a piece at once: one L2 round trip a piece (v30: one float4 at a
            // time made its second kernel 4x slower).
            float4 v[BN / 8];
#pragma unroll
            for (int j = 0; j < BN / 8; ++j) v[j] = __ldcg(base + (size_t)c * SLOT4 + j * 128);
#pragma unroll
            for (int j = 0; j < BN / 8; ++j)
                sum[4 * j] += v[j].x, sum[4 * j + 1] += v[j].y, sum[4 * j + 2] += v[j].z, sum[4 * j + 3] += v[j].w;
        }
    }
    return true;
}

// What a consumer warpgroup works with, unit after unit: the block's ring, scales and C
// staging, the problem, its place.  `total`: the block's k tiles over all its units.
template <int BN> struct Consumer {
    Stage<BN> *st;
    const Scales *sc;
    uint64_t *full, *empty;
    CBox *mine;
    const CUtensorMap *mapC;
    __nv_bfloat16 *C;
    int M, N, ctilesM, tilesN, tilesK, cluster, cm, cw, warp, lane, g, t, total;
    Share sh;
};

// One unit of a consumer warpgroup: the k tiles [k0, k1) of cluster tile ct, from ring
// position it on, then its C; a piece of a cut tile (PIECE: shared tile r) writes its
// partial instead, and C only if it is the tile's last.  One function for both loops of the
// kernel, so the loop over whole tiles is v37's, with none of the share's bookkeeping live in it.
template <int BN, bool TMA_STORE, bool PIECE>
__device__ __forceinline__ void consume(const Consumer<BN> &env, int ct, int k0, int k1, int r, int &it) {
    constexpr int P = per_turn<BN>(), CS_COLS = cs_cols<BN>();
    int row0, col0;
    tile_origin<BN>(ct, env.ctilesM, env.tilesN, env.cm, row0, col0);
    const int i0 = 64 * env.cw + 16 * env.warp + env.g;   // this thread's two rows of the tile: i0 and i0 + 8
    float acc[P][BN / 2];   // each k block of a turn its own: the tensor cores' sums; not zeroed (v20, C7515)
    float sum[BN / 2];      // the promoted fp32 sums of the k blocks so far
#pragma unroll
    for (int i = 0; i < BN / 2; ++i) sum[i] = 0.0f;
    // One turn of P k blocks at k tile kt, ring positions it .. it + P - 1.
    auto k_turn = [&](int kt) {
        turn<BN, P>(acc, sum, env.st, env.sc, env.full, env.empty, kt, it, env.total, env.cw, i0, env.lane, col0);
        it += P;
    };
    int kt = k0;
    if constexpr (P == 1)   // two turns a pass (v37), then an odd last one below
        for (; kt + 1 < k1; kt += 2) {
            k_turn(kt);
            k_turn(kt + 1);
        }
    for (; kt + P <= k1; kt += P) k_turn(kt);   // whole turns of P k blocks
    if constexpr (P > 1)
        if (kt < k1) {   // an odd count of k tiles: the last turn has one
            turn<BN, 1>(acc, sum, env.st, env.sc, env.full, env.empty, kt, it, env.total, env.cw, i0, env.lane, col0);
            ++it;
        }

    // A piece of a cut tile: its partial out, and C stored by the tile's last piece only.
    if constexpr (PIECE)
        if (k0 > 0 || k1 < env.tilesK)
            if (!fix_up<BN>(sum, env.sh, r, k0, env.tilesK, env.cluster, env.cm, env.cw, row0 + 64 * env.cw + 16 * env.warp < env.M))
                return;

    // Accumulator layout of m64nN: warp w of the warpgroup holds rows 16 w ..
    // 16 w + 15; acc[4 j + 2 h + e] is row g + 8 h, column 8 j + 2 t + e.
    if constexpr (TMA_STORE) {
#pragma unroll
        for (int c0 = 0; c0 < BN; c0 += CS_COLS) {
            // The buffer is free once the copy engine has read the last round out of it.
            if (threadIdx.x % 128 == 0) bulk_wait_read();
            wg_barrier(1 + env.cw);
#pragma unroll
            for (int j = c0 / 8; j < (c0 + CS_COLS) / 8; ++j)
#pragma unroll
                for (int h = 0; h < 2; ++h) {
                    // row r's chunk (j % 8) at chunk (j % 8) ^ (r % 8), r % 8 = g: the 8 rows
                    // of a warp's store land on 8 different chunks, 32 lanes on 32 banks.
                    const int r = 16 * env.warp + env.g + 8 * h;
                    char *box = reinterpret_cast<char *>(env.mine[(j - c0 / 8) / 8]);
                    *reinterpret_cast<__nv_bfloat162 *>(box + 128 * r + 16 * ((j % 8) ^ env.g) + 4 * env.t) =
                        __floats2bfloat162_rn(sum[4 * j + 2 * h], sum[4 * j + 2 * h + 1]);
                }
            fence_proxy_async();   // each writer's stores, visible to the TMA ...
            wg_barrier(1 + env.cw);    // ... and all 128 writers done before one thread sends the boxes
            if (threadIdx.x % 128 == 0) {
                const int r0 = row0 + 64 * env.cw;
                for (int b = 0; b < CS_COLS / 64; ++b)
                    if (r0 < env.M && col0 + c0 + 64 * b < env.N) tma_store(env.mapC, env.mine[b], col0 + c0 + 64 * b, r0);
                bulk_commit();
            }
        }
    } else {   // v22's: straight from registers, each pair of columns one 4-byte store when N is even
#pragma unroll
        for (int j = 0; j < BN / 8; ++j)
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                const int r = row0 + 64 * env.cw + 16 * env.warp + env.g + 8 * h, c = col0 + 8 * j + 2 * env.t;
                if (r >= env.M || c >= env.N) continue;
                __nv_bfloat16 *out = env.C + (size_t)r * env.N + c;
                const float v0 = sum[4 * j + 2 * h], v1 = sum[4 * j + 2 * h + 1];
                if (env.N % 2 == 0) *reinterpret_cast<__nv_bfloat162 *>(out) = __floats2bfloat162_rn(v0, v1);
                else {
                    out[0] = __float2bfloat16_rn(v0);
                    if (c + 1 < env.N) out[1] = __float2bfloat16_rn(v1);
                }
            }
    }
}

// TMA_STORE false: v22's register epilogue, for N % 8 != 0 (no tensor map for C).  SK: the
// launch shares the last round out (sh.dp < ctiles); false: v37's kernel, whole tiles only.
template <int BN, bool TMA_STORE, bool SK>
__global__ void __cluster_dims__(CLUSTER_M, 1, 1)   // blocks 2c and 2c + 1 (CLUSTER_M 2): cluster c, one GPC
__launch_bounds__(NUM_THREADS, 1)   // NUM_THREADS alone gives setmaxnreg its cap at entry; without the 1 the SASS differs
gemm_fp8_block(int M, int N, int K, const __grid_constant__ CUtensorMap mapA, const __grid_constant__ CUtensorMap mapB,
               const __grid_constant__ CUtensorMap mapC, const __grid_constant__ CUtensorMap mapSA,
               const __grid_constant__ CUtensorMap mapSB, __nv_bfloat16 *C, const Share sh) {
    check_width<BN>();
    constexpr int STAGES = stages<BN>(), CS_COLS = cs_cols<BN>();
    extern __shared__ __align__(1024) unsigned char smem[];
    // The descriptors and the TMA's swizzle need 1024-byte alignment, which the
    // declaration does not guarantee for dynamic shared memory: round up (the launcher adds 1 KB).
    const unsigned misalign = (unsigned)__cvta_generic_to_shared(smem) % 1024;
    Stage<BN> *st = reinterpret_cast<Stage<BN> *>(smem + (1024 - misalign) % 1024);   // 6 x 32 KB or 4 x 40 KB
    CBox *cs = reinterpret_cast<CBox *>(st + STAGES);   // CONSUMERS x CS_COLS / 64 boxes: 2 x 8 KB or 2 x 24 KB
    __shared__ uint64_t full[STAGES], empty[STAGES];   // the two mbarriers of each stage
    __shared__ Scales sc[STAGES];                        // each stage's scales, beside its tiles

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
                    fill(st[s], sc[s], &full[s], &mapA, &mapB, &mapSA, &mapSB, kt, row0, col0, cm);
                }
            };
            for (int ct = cluster; ct < sh.dp; ct += clusters) produce(ct, 0, tilesK);   // the whole tiles
            if constexpr (SK) {   // then the pieces of this cluster's share
                Pieces p(cluster, ctiles, tilesK, sh);
                int ct, k0, k1, r;
                while (p.next(ct, k0, k1, r)) produce(ct, k0, k1);
            }
            // Exit only after the last release of every stage: then no arrival from the peer's
            // consumers (and no multicast: ours have taken every fill) can reach a block that is gone.
            for (int j = max(it - STAGES, 0); j < it; ++j) mbar_wait(&empty[j % STAGES], (j / STAGES) & 1);
        }
    } else {         // ---- consumers ---------------------------------------------------
        setmaxnreg_inc<CONSUMER_REGS>();
        const int cw = wg - 1;   // this warpgroup's rows: 64 cw .. 64 cw + 63 of the tile
        const int warp = threadIdx.x % 128 / 32, lane = threadIdx.x % 32;
        const int g = lane / 4, t = lane % 4;   // accumulator coordinates, as for mma.sync
        CBox *mine = cs + cw * (CS_COLS / 64);
        if (cw == 1) turn_pass(3);   // consumer 0 goes first: consumer 1 hands it the first turn
        // This block's k tiles over all its units: the whole tiles' and (SK) its share.
        int total = cluster < sh.dp ? (sh.dp - 1 - cluster) / clusters * tilesK + tilesK : 0;
        if constexpr (SK) total += Pieces(cluster, ctiles, tilesK, sh).size();
        const Consumer<BN> env = {st, sc, full, empty, mine, &mapC, C, M, N, ctilesM, tilesN, tilesK,
                                  cluster, cm, cw, warp, lane, g, t, total, sh};
        int it = 0;
        for (int ct = cluster; ct < sh.dp; ct += clusters) consume<BN, TMA_STORE, false>(env, ct, 0, tilesK, -1, it);
        if constexpr (SK) {   // then the pieces of this cluster's share
            Pieces p(cluster, ctiles, tilesK, sh);
            int ct, k0, k1, r;
            while (p.next(ct, k0, k1, r)) consume<BN, TMA_STORE, true>(env, ct, k0, k1, r, it);
        }
        if (cw == 0) turn_wait(3);   // consumer 1's last pass, taken: both barriers end as they began
        if (TMA_STORE && threadIdx.x % 128 == 0) bulk_wait_all();   // the last stores done before the block exits
    }
}

// A row-major rows x cols matrix of `type` (bf16, e4m3 as UINT8: the TMA moves bytes, or
// fp32 scales), rows ld elements apart, as a 2-D tensor map (dimension 0 = the contiguous
// columns), in boxes of box_rows x box_cols, swizzled or not.  The row stride must be a
// multiple of 16 bytes: ld % 8 == 0 in bf16, % 16 in e4m3, % 4 in fp32.
static CUtensorMap make_map(const void *base, CUtensorMapDataType type, int elem_bytes, int rows, int cols, int ld,
                            int box_rows, int box_cols, CUtensorMapSwizzle swizzle) {
    static PFN_cuTensorMapEncodeTiled_v12000 encode = NULL;
    if (!encode) {   // the driver's entry point, through the runtime: no -lcuda
        void *fn = NULL;
        cudaDriverEntryPointQueryResult found;
        CUDA_CHECK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault, &found));
        if (found != cudaDriverEntryPointSuccess || !fn) {
            fprintf(stderr, "step42: the driver has no cuTensorMapEncodeTiled (CUDA 12.0 or later needed)\n");
            exit(KL_EXIT_NO_GPU);
        }
        encode = (PFN_cuTensorMapEncodeTiled_v12000)fn;
    }
    CUtensorMap map;
    const cuuint64_t dims[2] = {(cuuint64_t)cols, (cuuint64_t)rows};
    const cuuint64_t strides[1] = {(cuuint64_t)ld * elem_bytes};   // bytes from one row to the next
    const cuuint32_t box[2] = {(cuuint32_t)box_cols, (cuuint32_t)box_rows};   // may exceed dims: clipped
    const cuuint32_t elem_strides[2] = {1, 1};
    const CUresult r = encode(&map, type, 2, (void *)base, dims, strides, box, elem_strides,
                              CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle,
                              CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (r != CUDA_SUCCESS) {
        fprintf(stderr, "step42: cuTensorMapEncodeTiled failed (%d) for %d x %d at %p\n", (int)r, rows, cols, base);
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
            fprintf(stderr, "step42: %zu KB of shared memory per block needed; this GPU allows %d KB\n", smem / 1024,
                    optin / 1024);
            exit(KL_EXIT_NO_GPU);
        }
        CUDA_CHECK(cudaFuncSetAttribute(gemm_fp8_block<BN, true, false>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
        CUDA_CHECK(cudaFuncSetAttribute(gemm_fp8_block<BN, false, false>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
        CUDA_CHECK(cudaFuncSetAttribute(gemm_fp8_block<BN, true, true>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
        CUDA_CHECK(cudaFuncSetAttribute(gemm_fp8_block<BN, false, true>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
        // A cluster's blocks must land on SMs of one GPC at the same time, so the question is
        // not "blocks per SM" but "clusters at once": the occupancy API answers it per GPC.
        const cudaLaunchConfig_t cfg = {dim3(CLUSTER_M), dim3(NUM_THREADS), smem, 0, NULL, 0};   // grid, block, smem
        CUDA_CHECK(cudaOccupancyMaxActiveClusters(&clusters_max, (const void *)gemm_fp8_block<BN, true, false>, &cfg));
        if (clusters_max < 1) {
            fprintf(stderr, "step42: no cluster of %d blocks of %zu KB fits on this GPU at once\n", CLUSTER_M, smem / 1024);
            exit(KL_EXIT_NO_GPU);
        }
    }
    return clusters_max;
}

// ---- the plan (host only: --plan prints it with no GPU) ----------------------------------
static int opt_bn = 0;      // --bn: the tile's width, 128 or 192 (0: chosen per problem)
static int opt_share = 0;   // --share: 0 the plan's choice, 1 never share, 2 share wherever a round is short

// Per k tile, a 192-wide column costs COST_192 of a 128-wide one (v37's plan, measured in
// v31-v33's notes).  FIX_KT: what sharing adds beyond the share's own k tiles, in k tiles of
// the width: the partials written and added, and the share's k tiles themselves slower than a
// round of whole tiles (fitted to seven shapes on the H100: the notes).
static constexpr double COST_192 = 0.95;
static constexpr int FIX_KT = 27;

// A width's plan: its cluster tiles over the clusters at once, the cost of whole tiles
// (rounds x tilesK k tiles each) and, where the last round is short, of the whole rounds
// plus a share of the rest along K and the fix-up.
struct Plan {
    int bn;
    long long ctiles, clusters, rounds, whole_kt;   // whole tiles: rounds x tilesK k tiles a cluster
    long long dp, share, shared_kt;                 // shared: dp tiles whole, then share k tiles a cluster
    bool shares;                                    // the cheaper of the two (or the option's)
    double cost() const { return (double)(shares ? shared_kt : whole_kt) * bn * (bn == 192 ? COST_192 : 1.0); }
};
static Plan plan_width(int m, int n, int k, int bn, int clusters, int share_opt) {
    Plan p = {};
    p.bn = bn;
    const long long tilesK = (k + BK - 1) / BK;
    p.ctiles = (long long)((m + CLUSTER_M * BM - 1) / (CLUSTER_M * BM)) * ((n + bn - 1) / bn);
    p.clusters = clusters;
    p.rounds = (p.ctiles + clusters - 1) / clusters;
    p.whole_kt = p.rounds * tilesK;
    p.dp = p.ctiles / clusters * clusters;   // the whole rounds' tiles
    const long long row = (p.ctiles - p.dp) * tilesK;   // the rest, along K
    p.share = (row + clusters - 1) / clusters;
    p.shared_kt = p.dp / clusters * tilesK + p.share + FIX_KT;
    // Sharing needs a short last round, and the kernel's int arithmetic on the row: every
    // cluster's share ends below 2^31 (any problem that fits in memory has far fewer).
    const bool can = row > 0 && (long long)clusters * p.share < (1ll << 31);
    p.shares = can && (share_opt == 2 || (share_opt == 0 && p.shared_kt < p.whole_kt));
    return p;
}
static Plan plan_for(int m, int n, int k, int clusters128, int clusters192, int share_opt) {
    const Plan p128 = plan_width(m, n, k, 128, clusters128, share_opt), p192 = plan_width(m, n, k, 192, clusters192, share_opt);
    if (opt_bn) return opt_bn == 128 ? p128 : p192;
    return p128.cost() <= p192.cost() ? p128 : p192;   // a tie goes to 128 (v37's)
}

static int accepts(const kl_problem *p, char *msg, size_t len) {
    (void)p;
    if (opt_bn != 0 && opt_bn != 128 && opt_bn != 192) {
        snprintf(msg, len, "--bn %d: the tile widths are 128 (two k blocks per turn) and 192 (one); give one of "
                 "them, or 0 to let the plan choose", opt_bn);
        return 1;
    }
    return 0;
}

struct Variant {
    bool shares;      // the last round may be shared out; false: v37's plan, whole tiles only (the control)
    kl_problem said;  // the problem planned last ...
    Plan plan;        // ... and its plan
};
static Variant chosen = {true, {0, 0, 0}, {}}, v37 = {false, {0, 0, 0}, {}};

// The plan of variant v for m x n x k, said in one line: the chosen width and its work, then
// each width's cost in k tiles a cluster, whole tiles and (where a round is short) shared.
static Plan plan_and_say(const Variant *v, int m, int n, int k, int clusters128, int clusters192) {
    const int share_opt = v->shares ? opt_share : 1;
    const Plan p = plan_for(m, n, k, clusters128, clusters192, share_opt);
    const Plan w[2] = {plan_width(m, n, k, 128, clusters128, share_opt), plan_width(m, n, k, 192, clusters192, share_opt)};
    printf("  plan%s for %d x %d x %d: 128 x %d tiles, ", v->shares ? "" : " (v37)", m, n, k, p.bn);
    if (p.shares)
        printf("%lld round%s of whole tiles, then %lld tile%s shared out, %lld k tiles a cluster", p.dp / p.clusters,
               p.dp / p.clusters == 1 ? "" : "s", p.ctiles - p.dp, p.ctiles - p.dp == 1 ? "" : "s", p.share);
    else
        printf("%lld round%s of whole tiles", p.rounds, p.rounds == 1 ? "" : "s");
    printf(" (k tiles a cluster x width x cost:");
    for (int i = 0; i < 2; ++i) {
        Plan q = w[i];
        q.shares = false;
        printf(" %d wide %lld = %.0f", q.bn, q.whole_kt, q.cost());
        if (v->shares && q.ctiles > q.dp) {
            q.shares = true;
            printf(", shared %lld + %lld + %d = %.0f", q.dp / q.clusters * ((k + BK - 1) / BK), q.share, FIX_KT, q.cost());
        }
        printf("%s", i == 0 ? ";" : ")\n");
    }
    return p;
}

static void show_plan(const kl_problem *q, int sms) {   // --plan SMS: both variants' plans, no GPU
    plan_and_say(&chosen, q->m, q->n, q->k, sms / CLUSTER_M, sms / CLUSTER_M);
    plan_and_say(&v37, q->m, q->n, q->k, sms / CLUSTER_M, sms / CLUSTER_M);
}

// One launch of the BN-wide kernel over the whole problem, as planned.
template <int BN> static void launch_width(const kl_gemm_fp8_args *args, const Plan &p, cudaStream_t stream) {
    const int m = args->m, n = args->n, k = args->k;
    const uint8_t *a = args->a, *b = args->b;
    kl_bf16 *c = args->c;
    // The maps depend on the pointers and sizes only: built again when they change,
    // not on every launch of the timed loop (one cache per width: B's box is BN / 2 rows).
    static struct {
        const uint8_t *a, *b; const float *sa, *sb; kl_bf16 *c; int m, n, k;
        CUtensorMap mapA, mapB, mapC, mapSA, mapSB;
    } cache = {};
    if (cache.a != a || cache.b != b || cache.sa != args->sa || cache.sb != args->sb || cache.c != c || cache.m != m ||
        cache.n != n || cache.k != k) {
        const CUtensorMapSwizzle sw = CU_TENSOR_MAP_SWIZZLE_128B, none = CU_TENSOR_MAP_SWIZZLE_NONE;
        cache.mapA = make_map(a, CU_TENSOR_MAP_DATA_TYPE_UINT8, 1, m, k, k, BM, BK, sw);
        cache.mapB = make_map(b, CU_TENSOR_MAP_DATA_TYPE_UINT8, 1, n, k, k, BN / CLUSTER_M, BK, sw);   // one slice of the shared box
        // sa: k / 128 rows of m scales (rows padded to 4: KL_FP8_SA_LD), a box of one row's BM;
        // sb: ceil(n / 128) rows of the k blocks' scales (padded: KL_FP8_SB_LD), boxes of 2 x 4.
        cache.mapSA = make_map(args->sa, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 4, k / KL_FP8_BLOCK, m, KL_FP8_SA_LD(m), 1, BM,
                               none);
        cache.mapSB = make_map(args->sb, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 4, (n + KL_FP8_BLOCK - 1) / KL_FP8_BLOCK,
                               KL_FP8_SB_LD(k), KL_FP8_SB_LD(k), 2, 4, none);
        cache.mapC = {};
        if (n % 8 == 0)   // 16-byte rows, or no map
            cache.mapC = make_map(c, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, m, n, n, 64, 64, sw);
        cache.a = a, cache.b = b, cache.sa = args->sa, cache.sb = args->sb, cache.c = c;
        cache.m = m, cache.n = n, cache.k = k;
    }
    Share sh = {(int)p.ctiles, 0, NULL, NULL, 0};   // < 2^31 cluster tiles for any C that fits
    unsigned clusters = (unsigned)(p.ctiles < p.clusters ? p.ctiles : p.clusters);
    if (p.shares) {
        // The workspace: a 64 x BN fp32 slot per cluster, block and consumer, and a flag per
        // slot, zeroed once; each launch counts itself (from 1, never 0) and a written slot's
        // flag holds that count.  It grows when a problem needs more, outside any timing that
        // matters (the check runs first).
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
        sh = {(int)p.dp, (int)p.share, partials, ready, epoch};
        clusters = (unsigned)p.clusters;   // every cluster takes a share
    }
    const unsigned grid = CLUSTER_M * clusters;   // whole clusters
    constexpr size_t smem = smem_bytes<BN>();
    const bool tma = n % 8 == 0;
    if (p.shares) {
        if (tma) gemm_fp8_block<BN, true, true><<<grid, NUM_THREADS, smem, stream>>>(m, n, k, cache.mapA, cache.mapB, cache.mapC, cache.mapSA, cache.mapSB, (__nv_bfloat16 *)c, sh);
        else gemm_fp8_block<BN, false, true><<<grid, NUM_THREADS, smem, stream>>>(m, n, k, cache.mapA, cache.mapB, cache.mapC, cache.mapSA, cache.mapSB, (__nv_bfloat16 *)c, sh);
    } else {
        if (tma) gemm_fp8_block<BN, true, false><<<grid, NUM_THREADS, smem, stream>>>(m, n, k, cache.mapA, cache.mapB, cache.mapC, cache.mapSA, cache.mapSB, (__nv_bfloat16 *)c, sh);
        else gemm_fp8_block<BN, false, false><<<grid, NUM_THREADS, smem, stream>>>(m, n, k, cache.mapA, cache.mapB, cache.mapC, cache.mapSA, cache.mapSB, (__nv_bfloat16 *)c, sh);
    }
    KL_CHECK_LAUNCH();
}

static void launch(const kl_gemm_fp8_args *args, void *ctx, cudaStream_t stream) {
    Variant *v = static_cast<Variant *>(ctx);
    if (args->m != v->said.m || args->n != v->said.n || args->k != v->said.k) {   // a new problem: plan it, and say so
        v->plan = plan_and_say(v, args->m, args->n, args->k, clusters_at_once<128>(), clusters_at_once<192>());
        v->said = (kl_problem){args->m, args->n, args->k};
    }
    if (v->plan.bn == 128) launch_width<128>(args, v->plan, stream);
    else launch_width<192>(args, v->plan, stream);
}

int main(int argc, char **argv) {
    kl_step step = {};
    step.number = 42;
    step.title = "FP8 block scales, the last round shared out along K (Stream-K) (sm_90a)";
    step.min_cc = 90;
    step.only_cc = 90;
    step.accepts = accepts;
    step.show_plan = show_plan;
    step.kernels[0].op = &kl_op_gemm_fp8_block;
    step.kernels[0].gemm_fp8 = launch;
    step.kernels[0].ctx = &chosen;
    step.kernels[1].op = &kl_op_gemm_fp8_block;
    step.kernels[1].variant = "v37";
    step.kernels[1].gemm_fp8 = launch;
    step.kernels[1].ctx = &v37;
    step.opts[0] = (kl_opt){"bn", "tile width: 128 (two k blocks per turn) or 192 (one); 0: chosen per problem", &opt_bn,
                            0, 192};
    step.opts[1] = (kl_opt){"share", "the last round shared out along K: 0 where the plan saves, 1 never, 2 wherever a "
                            "round is short", &opt_share, 0, 2};
    return kl_main(argc, argv, &step);
}
