// build: sm_90a
/*
 * Step 37 - FP8 block scales, two turns a pass: v36's loop in v33's kernel.
 *
 * v36 found that writing a consumer's k loop out two k steps a turn shortens the bf16
 * kernel's k step at narrow tiles: the next step's stage, barrier and phase are worked out
 * under the first step's wgmmas, not after the loop's branch.  v33's 192-wide tile takes
 * one k block a turn (issue, promote, wait for the next stage), so its loop has the same
 * shape; v37 writes it out two turns a pass, with a second loop for an odd last turn.  The
 * 128-wide tile already takes two k blocks a turn (v31); four a pass there lost 1-3 points
 * (v33's notes), so it keeps one turn a pass.  Everything else is v33's: the plan, the
 * promotion, the scales carried by the TMA, the cluster of two along M.  The variant "v33"
 * is this kernel one turn a pass, the control.  --bn 128|192 forces a width.
 *
 * Build and run:   make step37 && ./step37          (an H100 or H200 only)
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

template <int BN, bool TMA_STORE, bool TWO>   // TMA_STORE false: v22's register epilogue, for N % 8 != 0 (no tensor map for C)
                                               // TWO: two turns a pass at 192 wide (one k block a turn)
__global__ void __cluster_dims__(CLUSTER_M, 1, 1)   // blocks 2c and 2c + 1 (CLUSTER_M 2): cluster c, one GPC
__launch_bounds__(NUM_THREADS, 1)   // NUM_THREADS alone gives setmaxnreg its cap at entry; without the 1 the SASS differs
gemm_fp8_block(int M, int N, int K, const __grid_constant__ CUtensorMap mapA, const __grid_constant__ CUtensorMap mapB,
               const __grid_constant__ CUtensorMap mapC, const __grid_constant__ CUtensorMap mapSA,
               const __grid_constant__ CUtensorMap mapSB, __nv_bfloat16 *C) {
    check_width<BN>();
    constexpr int STAGES = stages<BN>(), P = per_turn<BN>(), CS_COLS = cs_cols<BN>();
    extern __shared__ __align__(1024) unsigned char smem[];
    // The descriptors and the TMA's swizzle need 1024-byte alignment, which the
    // declaration does not guarantee for dynamic shared memory: round up (the launcher adds 1 KB).
    const unsigned misalign = (unsigned)__cvta_generic_to_shared(smem) % 1024;
    Stage<BN> *st = reinterpret_cast<Stage<BN> *>(smem + (1024 - misalign) % 1024);   // 6 x 32 KB or 5 x 40 KB
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
                tile_origin<BN>(ct, ctilesM, tilesN, cm, row0, col0);
                for (int kt = 0; kt < tilesK; ++kt, ++it) {
                    const int s = it % STAGES, f = it / STAGES;
                    // The consumers of every block released fill f - 1: our slices may overwrite theirs.
                    if (f > 0) mbar_wait(&empty[s], (f - 1) & 1);
                    fill(st[s], sc[s], &full[s], &mapA, &mapB, &mapSA, &mapSB, kt, row0, col0, cm);
                }
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
        // This block's k tiles over all its tiles (cluster tiles cluster, + clusters, ...).
        const int total = cluster < ctiles ? (ctiles - 1 - cluster) / clusters * tilesK + tilesK : 0;
        int it = 0;
        for (int ct = cluster; ct < ctiles; ct += clusters) {
            int row0, col0;
            tile_origin<BN>(ct, ctilesM, tilesN, cm, row0, col0);
            const int i0 = 64 * cw + 16 * warp + g;   // this thread's two rows of the tile: i0 and i0 + 8
            float acc[P][BN / 2];   // each k block of a turn its own: the tensor cores' sums; not zeroed (v20, C7515)
            float sum[BN / 2];      // the promoted fp32 sums of the k blocks so far
#pragma unroll
            for (int i = 0; i < BN / 2; ++i) sum[i] = 0.0f;
            // One turn of P k blocks at k tile kt, ring positions it .. it + P - 1.
            auto k_turn = [&](int kt) {
                turn<BN, P>(acc, sum, st, sc, full, empty, kt, it, total, cw, i0, lane, col0);
                it += P;
            };
            int kt = 0;
            if constexpr (TWO && P == 1)   // two turns a pass (v36), then an odd last one below
                for (; kt + 1 < tilesK; kt += 2) {
                    k_turn(kt);
                    k_turn(kt + 1);
                }
            for (; kt + P <= tilesK; kt += P) k_turn(kt);   // whole turns of P k blocks
            if constexpr (P > 1)
                if (kt < tilesK) {   // an odd count of k tiles: the last turn has one
                    turn<BN, 1>(acc, sum, st, sc, full, empty, kt, it, total, cw, i0, lane, col0);
                    ++it;
                }

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
                                __floats2bfloat162_rn(sum[4 * j + 2 * h], sum[4 * j + 2 * h + 1]);
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
                        const float v0 = sum[4 * j + 2 * h], v1 = sum[4 * j + 2 * h + 1];
                        if (N % 2 == 0) *reinterpret_cast<__nv_bfloat162 *>(out) = __floats2bfloat162_rn(v0, v1);
                        else {
                            out[0] = __float2bfloat16_rn(v0);
                            if (c + 1 < N) out[1] = __float2bfloat16_rn(v1);
                        }
                    }
            }
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
            fprintf(stderr, "step37: the driver has no cuTensorMapEncodeTiled (CUDA 12.0 or later needed)\n");
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
        fprintf(stderr, "step37: cuTensorMapEncodeTiled failed (%d) for %d x %d at %p\n", (int)r, rows, cols, base);
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
            fprintf(stderr, "step37: %zu KB of shared memory per block needed; this GPU allows %d KB\n", smem / 1024,
                    optin / 1024);
            exit(KL_EXIT_NO_GPU);
        }
        CUDA_CHECK(cudaFuncSetAttribute(gemm_fp8_block<BN, true, false>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
        CUDA_CHECK(cudaFuncSetAttribute(gemm_fp8_block<BN, false, false>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
        if constexpr (BN == 192) {   // two turns a pass: the 192-wide kernels only
            CUDA_CHECK(cudaFuncSetAttribute(gemm_fp8_block<BN, true, true>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
            CUDA_CHECK(cudaFuncSetAttribute(gemm_fp8_block<BN, false, true>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
        }
        // A cluster's blocks must land on SMs of one GPC at the same time, so the question is
        // not "blocks per SM" but "clusters at once": the occupancy API answers it per GPC.
        const cudaLaunchConfig_t cfg = {dim3(CLUSTER_M), dim3(NUM_THREADS), smem, 0, NULL, 0};   // grid, block, smem
        CUDA_CHECK(cudaOccupancyMaxActiveClusters(&clusters_max, (const void *)gemm_fp8_block<BN, true, false>, &cfg));
        if (clusters_max < 1) {
            fprintf(stderr, "step37: no cluster of %d blocks of %zu KB fits on this GPU at once\n", CLUSTER_M, smem / 1024);
            exit(KL_EXIT_NO_GPU);
        }
    }
    return clusters_max;
}

// One launch of the BN-wide kernel over the whole problem.
template <int BN, bool TWO> static void launch_width(const kl_gemm_fp8_args *args, cudaStream_t stream) {
    const int m = args->m, n = args->n, k = args->k;
    const uint8_t *a = args->a, *b = args->b;
    kl_bf16 *c = args->c;
    const int clusters_max = clusters_at_once<BN>();
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
    const long long ctiles = (long long)((m + CLUSTER_M * BM - 1) / (CLUSTER_M * BM)) *
                             ((n + BN - 1) / BN);   // < 2^31 for any C that fits
    const unsigned grid = CLUSTER_M * (unsigned)(ctiles < clusters_max ? ctiles : clusters_max);   // whole clusters
    constexpr size_t smem = smem_bytes<BN>();
    if (n % 8 == 0)
        gemm_fp8_block<BN, true, TWO><<<grid, NUM_THREADS, smem, stream>>>(m, n, k, cache.mapA, cache.mapB, cache.mapC,
                                                                      cache.mapSA, cache.mapSB, (__nv_bfloat16 *)c);
    else
        gemm_fp8_block<BN, false, TWO><<<grid, NUM_THREADS, smem, stream>>>(m, n, k, cache.mapA, cache.mapB, cache.mapC,
                                                                       cache.mapSA, cache.mapSB, (__nv_bfloat16 *)c);
    KL_CHECK_LAUNCH();
}

// ---- the plan (host only: --plan prints it with no GPU) ----------------------------------
static int opt_bn = 0;   // --bn: the tile's width, 128 or 192 (0: chosen per problem)

// Rounds of the BN-wide tiles: cluster tiles (two tiles along M) over the clusters at once.
static long long rounds_of(int m, int n, int bn, int clusters) {
    const long long ctiles = (long long)((m + CLUSTER_M * BM - 1) / (CLUSTER_M * BM)) * ((n + bn - 1) / bn);
    return (ctiles + clusters - 1) / clusters;
}

// Per k tile, a 192-wide column now costs COST_192 of a 128-wide one (v31: about the same:
// the page), so a plan costs rounds x width x cost, and the cheaper width wins; a tie goes
// to 128 (its two k blocks per turn).
static constexpr double COST_192 = 0.95;   // measured: the notes
static double cost_of(long long rounds, int bn) { return (double)rounds * bn * (bn == 192 ? COST_192 : 1.0); }

static int width_for(int m, int n, int clusters128, int clusters192) {
    if (opt_bn) return opt_bn;
    return cost_of(rounds_of(m, n, 128, clusters128), 128) <= cost_of(rounds_of(m, n, 192, clusters192), 192) ? 128 : 192;
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
    bool two;         // two turns a pass at 192 wide; false: one, the control (v33's loop)
    kl_problem said;  // the problem planned last ...
    int bn;           // ... and its width
};
static Variant two = {true, {0, 0, 0}, 0}, v33 = {false, {0, 0, 0}, 0};

// The plan of variant v for m x n x k, said in one line: both widths' rounds and costs.
static int plan_and_say(const Variant *v, int m, int n, int k, int clusters128, int clusters192) {
    const int bn = width_for(m, n, clusters128, clusters192);
    const long long r128 = rounds_of(m, n, 128, clusters128), r192 = rounds_of(m, n, 192, clusters192);
    printf("  plan%s for %d x %d x %d: 128 x %d tiles, %s per turn (rounds x width x cost: 128 wide %lld x 128 = %.0f, "
           "192 wide %lld x 192 x %.2f = %.0f)%s\n", v->two ? "" : " (v33)", m, n, k, bn,
           bn == 128 ? "two k blocks" : "one k block", r128, cost_of(r128, 128), r192, COST_192, cost_of(r192, 192),
           v->two && bn == 192 ? ", two turns a pass" : "");
    return bn;
}

static void show_plan(const kl_problem *q, int sms) {   // --plan SMS: both variants' plans, no GPU
    plan_and_say(&two, q->m, q->n, q->k, sms / CLUSTER_M, sms / CLUSTER_M);
    plan_and_say(&v33, q->m, q->n, q->k, sms / CLUSTER_M, sms / CLUSTER_M);
}

static void launch(const kl_gemm_fp8_args *args, void *ctx, cudaStream_t stream) {
    Variant *v = static_cast<Variant *>(ctx);
    if (args->m != v->said.m || args->n != v->said.n || args->k != v->said.k) {   // a new problem: plan it, and say so
        v->bn = plan_and_say(v, args->m, args->n, args->k, clusters_at_once<128>(), clusters_at_once<192>());
        v->said = (kl_problem){args->m, args->n, args->k};
    }
    if (v->bn == 128) launch_width<128, false>(args, stream);   // a turn is two k blocks already (v31)
    else if (v->two) launch_width<192, true>(args, stream);
    else launch_width<192, false>(args, stream);
}

int main(int argc, char **argv) {
    kl_step step = {};
    step.number = 37;
    step.title = "FP8 block scales, two turns a pass at 192 wide: v36's loop in v33's kernel (sm_90a)";
    step.min_cc = 90;
    step.only_cc = 90;
    step.accepts = accepts;
    step.show_plan = show_plan;
    step.kernels[0].op = &kl_op_gemm_fp8_block;
    step.kernels[0].gemm_fp8 = launch;
    step.kernels[0].ctx = &two;
    step.kernels[1].op = &kl_op_gemm_fp8_block;
    step.kernels[1].variant = "v33";
    step.kernels[1].gemm_fp8 = launch;
    step.kernels[1].ctx = &v33;
    step.opts[0] = (kl_opt){"bn", "tile width: 128 (two k blocks per turn) or 192 (one); 0: chosen per problem", &opt_bn,
                            0, 192};
    return kl_main(argc, argv, &step);
}
