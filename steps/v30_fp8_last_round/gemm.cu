// build: sm_90a
/*
 * Step 30 - the last round: its tiles split along K, in a second kernel.
 *
 * v29 runs its 128 x 192 tiles in rounds of one per cluster of two SMs, and the slowest SM
 * sets the time: 4096 x 4096 x 14336 is 704 tiles, 5.3 per SM, so the sixth round keeps a
 * third of the SMs busy.  v30 keeps the whole rounds as v29 runs them (the first kernel, v29's
 * code) and splits each tile of a short last round into `split` k ranges (split = clusters /
 * leftover cluster tiles), which a second kernel runs: the last round fills the GPU with pieces
 * a split-th as long.  Each piece promotes its own k blocks into fp32 as v29 does, writes that
 * partial sum to a workspace and counts itself in; the tile's last piece adds the partials in
 * the order of their k ranges (the same bits whichever came last) and stores C: v27's fix-up,
 * on the promoted sums.  A piece costs a pipeline's start and a fix-up, so only long pieces
 * pay: the plan splits only where each piece keeps at least 32 k tiles (K = 4096).
 *
 * Why two kernels: the same code in one (the whole tiles, then the pieces, in one persistent
 * loop) ran the whole tiles 2-8% slower than v29, with the fix-up's code present but not run
 * (20-30% before the consumers took turns: the page).
 * The second kernel is launched dependent on the first (programmatic stream serialization),
 * and the first lets it start at once (griddepcontrol.launch_dependents): its blocks take the
 * SMs as the first kernel's leave.
 *
 * From v29, unchanged: tiles of 128 x 192, two consumer warpgroups of m64n192k32 that take
 * turns (96 + 96 registers: acc and the promoted sum), each k tile one k block, the scales
 * carried by the TMA with each stage, five stages, v24's cluster of two along M, v23's
 * epilogue.  --split S forces the last round's split; the variant "no_split" runs v29's grid,
 * the control, in the same run.
 * Build and run:   make step29 && ./step29          (an H100 or H200 only)
 */
#include "kl.h"

#include <cuda.h>   // CUtensorMap and its enums only: the driver is reached through the runtime
#include <cudaTypedefs.h>
#include <cuda_bf16.h>
#include <cuda_fp8.h>

#define BM 128   // 64 rows of C per consumer warpgroup
#define BN 192   // = the wgmma's n: one instruction spans the block's columns
#define BK 128   // e4m3: one byte per element, one 128-byte row
#define STAGES 5   // k tiles in the ring
#define GROUP_M 8    // M-tiles that walk across N together (1: row-major, v22's order)
#define CS_COLS 64   // columns of C a consumer stages per TMA store round
#define CLUSTER_M 2   // blocks of a cluster along M: tiles (m, n), (m + 1, n) share B's strip
#define MAX_SPLIT 16   // most k ranges per tile
#define MIN_K_TILES_PER_SPLIT 32   // at least K = 4096 per piece: shorter ones lost (4096^3, 2048^3: the page)
#define CONSUMERS (BM / 64)                  // one consumer warpgroup per 64 rows
#define NUM_THREADS (128 * (CONSUMERS + 1))   // + the producer warpgroup
#define PRODUCER_REGS 40    // a loop counter, two addresses, a parity
#define CONSUMER_REGS 232   // 96 + 96 accumulators + descriptors, indices, scales, the epilogue's addresses
static_assert(BM == 128, "two consumer warpgroups of m64nBN tile the block");
static_assert(BN % 64 == 0 && BN <= 192, "tiles start on multiples of 64 columns (64-column C boxes), so a tile of at most "
              "192 spans at most two of B's 128-wide scale blocks: two sb per k tile");
static_assert(128 * (PRODUCER_REGS + CONSUMERS * CONSUMER_REGS) <= 65536,
              "the roles' registers fit the SM's 64K, or setmaxnreg.inc waits forever");
static_assert(BN / 2 + 26 <= 65536 / NUM_THREADS / 8 * 8,
              "each wgmma compiles within the cap at entry, whatever setmaxnreg.inc raises it to: m64n256 needed 154 "
              "registers there (C7602), so 512 threads (cap 128) would need two m64n128 (v22's page)");
static_assert(BM <= 256, "a TMA box has at most 256 rows");
static_assert(BK % 32 == 0, "k steps of 32");
static_assert(STAGES >= 2, "a tile in flight, one multiplied");
static_assert(GROUP_M >= 1, "a group has at least one M-tile");
static_assert(CLUSTER_M <= 8, "8 blocks: the largest portable cluster");
static_assert(BN % (8 * CLUSTER_M) == 0, "each block's slice of B's box is whole 8-row groups (1024 bytes: the swizzle's period)");
static_assert(GROUP_M % CLUSTER_M == 0, "a group holds whole cluster tiles");
static_assert(CS_COLS % 64 == 0 && BN % CS_COLS == 0, "whole 64-column boxes (128 bytes: the C map's swizzle row)");
static_assert(STAGES * (BM + BN) * BK + CONSUMERS * 64 * CS_COLS * 2 + STAGES * (BM + 32) * 4 + 2048 <= 227 * 1024,
              "the ring, the C staging, the scales, the alignment and the barriers fit the 227 KB a block may have");

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

// The fix-up's arrival: add 1 to a counter in global memory and return what it held.
// acq_rel at GPU scope: our partial's stores (the warpgroup's, ordered before this by the
// barrier) are released with it, and if we are last, the others' are acquired by it.
__device__ __forceinline__ int arrive_count(int *counter) {
    int old;
    asm volatile("atom.add.acq_rel.gpu.global.s32 %0, [%1], 1;\n" : "=r"(old) : "l"(counter) : "memory");
    return old;
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

// d (64 x 192 fp32, 96 per thread) += A (64 x 32, K-major) * B (192 x 32, K-major)^T in
// e4m3, for the whole warpgroup; with accumulate = 0, d = A * B (each k tile's first
// instruction: a new k block starts from zero).  The trailing 1, 1: A and B scaled by +1.
#define D8(i) "+f"(d[i]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3]), "+f"(d[i + 4]), "+f"(d[i + 5]), \
              "+f"(d[i + 6]), "+f"(d[i + 7])
__device__ __forceinline__ void wgmma_m64n192k32_e4m3(float (&d)[BN / 2], uint64_t desc_a, uint64_t desc_b, int accumulate) {
    static_assert(BN == 192, "the instruction's n");
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

struct Stage {
    uint8_t As[BM][BK];   // 128*128 e4m3 = 16 KB, swizzled by the TMA (16 x 1024 bytes: groups stay aligned)
    uint8_t Bs[BN][BK];   // 192*128 = 24 KB, swizzled by the TMA
};
// One consumer's C staging: CS_COLS / 64 boxes of 64 rows x 64 columns (8 KB each), each in
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
// up whole: 40 KB and 544 bytes of scales on every full barrier.
__device__ __forceinline__ void fill(Stage &s, Scales &sc, uint64_t *full, const CUtensorMap *mapA,
                                     const CUtensorMap *mapB, const CUtensorMap *mapSA, const CUtensorMap *mapSB,
                                     int kt, int row0, int col0, int cm) {
    constexpr int BR = BN / CLUSTER_M;   // rows of each slice
    mbar_arrive_expect_tx(full, sizeof(Stage) + SCALE_BYTES);   // the peers' slices and zero-filled edges included
    tma_load(s.As, mapA, kt * BK, row0, full);
    tma_load_mc(s.Bs[BR * cm], mapB, kt * BK, col0 + BR * cm, full, (uint16_t)((1u << CLUSTER_M) - 1));   // to every rank
    tma_load(sc.a, mapSA, row0, kt, full);                            // sa's column kt, rows row0 ..
    tma_load(sc.b, mapSB, kt / 4 * 4, col0 / KL_FP8_BLOCK, full);     // sb's rows col0 / 128 and the next
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

// The problem as the kernels walk it, the host's plan: cluster tiles 0 .. full - 1 are whole
// (the whole rounds, the first kernel's units); the rest are split, and the second kernel's
// unit v is cluster tile full + v / split, k range v % split.
struct Work {
    int tilesN, tilesK, ctilesM, ctiles, full, split;
    float *partials;   // split > 1: a 64 x BN fp32 slot per (split tile, block, k range, consumer)
    int *arrived;      // split > 1: a counter per (split tile, block, consumer), 0 between launches
};
template <bool PIECES> __device__ __forceinline__ int units_of(const Work &w) {
    return PIECES ? (w.ctiles - w.full) * w.split : w.full;
}
// Unit u -> its cluster tile, its k range's number (-1: the whole of K) and k tiles [kt0, kt1).
// Range q of `split` covers k tiles [tilesK q / split, tilesK (q + 1) / split): sizes differ by one at most.
template <bool PIECES>
__device__ __forceinline__ void unit_of(int u, const Work &w, int &ct, int &q, int &kt0, int &kt1) {
    if constexpr (!PIECES) {
        ct = u, q = -1, kt0 = 0, kt1 = w.tilesK;
    } else {
        ct = w.full + u / w.split, q = u % w.split;
        kt0 = w.tilesK * q / w.split, kt1 = w.tilesK * (q + 1) / w.split;   // < 2^24 x 16: no 64-bit division
    }
}

// C[r][c], C[r][c + 1] in bf16 where they lie inside M x N: one 4-byte store when N is even.
__device__ __forceinline__ void store_pair(__nv_bfloat16 *C, int M, int N, int r, int c, float v0, float v1) {
    if (r >= M || c >= N) return;
    __nv_bfloat16 *out = C + (size_t)r * N + c;
    if (N % 2 == 0) *reinterpret_cast<__nv_bfloat162 *>(out) = __floats2bfloat162_rn(v0, v1);
    else {
        out[0] = __float2bfloat16_rn(v0);
        if (c + 1 < N) out[1] = __float2bfloat16_rn(v1);
    }
}

// The fix-up (v27's), for one consumer warpgroup and its 64 x BN promoted sums.  Every piece
// of a split tile writes its fp32 partial to its slot of the workspace and counts itself in;
// the last to come adds all the tile's partials, its own too, in the order of their k ranges
// (the same bits whichever piece came last) and stores C from them, straight from registers
// (v22's epilogue).  A thread whose rows lie past M neither writes nor reads.
// `tile` numbers the split tiles' blocks: (ct - full) CLUSTER_M + cm.
__device__ __forceinline__ void fix_up(const float (&sum)[BN / 2], const Work &w, int tile, int q, int cw, int r0,
                                       int col0, int M, int N, __nv_bfloat16 *C, int *last_flag) {
    const int tid = threadIdx.x % 128, lane = tid % 32;
    constexpr size_t slot4 = (size_t)CONSUMERS * 64 * BN / 4;   // float4s from one k range's slot to the next
    // Fragment order: float4 j of thread tid at j x 128 + tid, so each store of the warpgroup
    // is 2 KB in a row, and each thread reads back what a thread of its place wrote.
    float4 *base = reinterpret_cast<float4 *>(w.partials) + (size_t)tile * w.split * slot4 + cw * 64 * BN / 4 + tid;
    const bool rows_live = r0 < M;   // r0: this thread's first row (g), the warp's 16 rows from r0 - g
    if (rows_live)
#pragma unroll
        for (int j = 0; j < BN / 8; ++j)
            __stcg(base + q * slot4 + j * 128, make_float4(sum[4 * j], sum[4 * j + 1], sum[4 * j + 2], sum[4 * j + 3]));
    wg_barrier(1 + cw);   // the warpgroup's partial written before one thread counts it
    if (tid == 0) *last_flag = arrive_count(&w.arrived[tile * CONSUMERS + cw]) == w.split - 1;
    wg_barrier(1 + cw);
    if (!*last_flag) return;
    if (tid == 0) w.arrived[tile * CONSUMERS + cw] = 0;   // every piece has come: ready for the next launch
    if (!rows_live) return;
    // float4 j holds rows r0 and r0 + 8, columns c and c + 1 (the accumulator's layout, below).
    // All 24 loads of a k range at once: one L2 round trip per range (a loop over j with one
    // float4 at a time made the second kernel 4x slower).
    float4 v[BN / 8];
#pragma unroll
    for (int j = 0; j < BN / 8; ++j) v[j] = __ldcg(base + j * 128);   // ((p0 + p1) + p2) + ...
    for (int r = 1; r < w.split; ++r)
#pragma unroll
        for (int j = 0; j < BN / 8; ++j) {
            const float4 x = __ldcg(base + r * slot4 + j * 128);
            v[j].x += x.x, v[j].y += x.y, v[j].z += x.z, v[j].w += x.w;
        }
#pragma unroll
    for (int j = 0; j < BN / 8; ++j) {
        const int c = col0 + 8 * j + 2 * (lane % 4);
        store_pair(C, M, N, r0, c, v[j].x, v[j].y);
        store_pair(C, M, N, r0 + 8, c, v[j].z, v[j].w);
    }
}

// sum += acc times its scale, on the CUDA cores.  acc[4 j + 2 h + e] is row g + 8 h, column
// 8 j + 2 t + e: column groups j < SPLIT lie in the tile's first block of B's scales (factors
// f0 for row g, f1 for g + 8), the others in the next (g0, g1).  SPLIT is a constant: no
// select per element.
template <int SPLIT>
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

// TMA_STORE false: v22's register epilogue, for N % 8 != 0 (no tensor map for C).  PIECES: the
// second kernel, the split tiles' pieces; false: the first, the whole tiles (v29's kernel).
template <bool TMA_STORE, bool PIECES>
__global__ void __cluster_dims__(CLUSTER_M, 1, 1)   // blocks 2c and 2c + 1 (CLUSTER_M 2): cluster c, one GPC
__launch_bounds__(NUM_THREADS, 1)   // NUM_THREADS alone gives setmaxnreg its cap at entry; without the 1 the SASS differs
gemm_fp8_block(int M, int N, const Work w, const __grid_constant__ CUtensorMap mapA, const __grid_constant__ CUtensorMap mapB,
               const __grid_constant__ CUtensorMap mapC, const __grid_constant__ CUtensorMap mapSA,
               const __grid_constant__ CUtensorMap mapSB, __nv_bfloat16 *C) {
    extern __shared__ __align__(1024) unsigned char smem[];
    // The descriptors and the TMA's swizzle need 1024-byte alignment, which the
    // declaration does not guarantee for dynamic shared memory: round up (the launcher adds 1 KB).
    const unsigned misalign = (unsigned)__cvta_generic_to_shared(smem) % 1024;
    Stage *st = reinterpret_cast<Stage *>(smem + (1024 - misalign) % 1024);   // STAGES x 40 KB
    CBox *cs = reinterpret_cast<CBox *>(st + STAGES);   // CONSUMERS x CS_COLS / 64 boxes: 2 x 8 KB
    __shared__ uint64_t full[STAGES], empty[STAGES];   // the two mbarriers of each stage
    __shared__ Scales sc[STAGES];                        // each stage's scales, beside its tiles
    __shared__ int last_flag[CONSUMERS];                 // the fix-up's answer, per consumer

    // The cluster's unit of work: CLUSTER_M neighbouring tiles along M, one per block, over
    // all of K or over one k range of a split tile.
    const int units = units_of<PIECES>(w);
    // The second kernel may start as the first's blocks leave: it writes other tiles of C.
    if constexpr (!PIECES) asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory");
    const int cluster = blockIdx.x / CLUSTER_M, clusters = gridDim.x / CLUSTER_M;
    const int cm = cluster_rank();   // this block's tile within the cluster tile
    const int wg = threadIdx.x / 128;   // 0: the producer; 1.. : consumer wg - 1, rows 64 (wg - 1) ..
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
            for (int u = cluster; u < units; u += clusters) {
                int ct, q, kt0, kt1, row0, col0;
                unit_of<PIECES>(u, w, ct, q, kt0, kt1);
                tile_origin(ct, w.ctilesM, w.tilesN, cm, row0, col0);
                for (int kt = kt0; kt < kt1; ++kt, ++it) {
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
        int it = 0;
        for (int u = cluster; u < units; u += clusters) {
            int ct, q, kt0, kt1, row0, col0;
            unit_of<PIECES>(u, w, ct, q, kt0, kt1);
            tile_origin(ct, w.ctilesM, w.tilesN, cm, row0, col0);
            const int i0 = 64 * cw + 16 * warp + g;   // this thread's two rows of the tile: i0 and i0 + 8
            float acc[BN / 2];   // this k block's sums, from the tensor cores; not zeroed (v20, C7515)
            float sum[BN / 2];   // the promoted fp32 sums of the k blocks so far
#pragma unroll
            for (int i = 0; i < BN / 2; ++i) sum[i] = 0.0f;
            for (int kt = kt0; kt < kt1; ++kt, ++it) {
                const int s = it % STAGES;
                mbar_wait(&full[s], (it / STAGES) & 1);
                __syncwarp();   // the warp together again before the .sync.aligned wgmma (v21)
                const uint64_t da = make_desc(st[s].As[64 * cw]), db = make_desc(st[s].Bs);
                turn_wait(3 + cw);   // the other consumer's batch before ours is issued
                wgmma_fence();   // the accumulators' registers are settled before the batch reads them
#pragma unroll
                for (int kk = 0; kk < BK / 32; ++kk)   // the next 32 of k: 32 bytes on, encoded >> 4
                    wgmma_m64n192k32_e4m3(acc, da + 2 * kk, db + 2 * kk, kk > 0);   // kk 0: a new k block
                wgmma_commit();
                turn_pass(4 - cw);
                // The scales of this k block, read from the stage while the batch runs.
                const float a0 = sc[s].a[i0], a1 = sc[s].a[i0 + 8];
                const float b0 = sc[s].b[0][kt % 4], b1 = sc[s].b[1][kt % 4];
                wgmma_wait<0>();   // this block's sums are complete ...
                fence_acc(acc);    // ... and only then read
                // No batch reads that stage any more: lane r tells block r of the cluster.
                if (lane < CLUSTER_M) mbar_arrive_cluster(&empty[s], lane);
                // Promotion: row g (scale a0) and g + 8 (a1); columns before the tile's first
                // 128-column boundary take b0, the rest b1.
                if (col0 % KL_FP8_BLOCK == 0) promote<KL_FP8_BLOCK / 8>(sum, acc, a0 * b0, a1 * b0, a0 * b1, a1 * b1);
                else promote<KL_FP8_BLOCK / 16>(sum, acc, a0 * b0, a1 * b0, a0 * b1, a1 * b1);   // col0 % 128 == 64
            }
            // A piece of a split tile: its partial to the workspace; the tile's last piece stores C.
            if constexpr (PIECES) {   // its partial to the workspace; the tile's last piece stores C
                fix_up(sum, w, (ct - w.full) * CLUSTER_M + cm, q, cw, row0 + i0, col0, M, N, C, &last_flag[cw]);
                continue;
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
                    for (int h = 0; h < 2; ++h)
                        store_pair(C, M, N, row0 + i0 + 8 * h, col0 + 8 * j + 2 * t, sum[4 * j + 2 * h], sum[4 * j + 2 * h + 1]);
            }
        }
        if (cw == 0) turn_wait(3);   // consumer 1's last pass, taken: both barriers end empty
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
            fprintf(stderr, "step30: the driver has no cuTensorMapEncodeTiled (CUDA 12.0 or later needed)\n");
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
        fprintf(stderr, "step30: cuTensorMapEncodeTiled failed (%d) for %d x %d at %p\n", (int)r, rows, cols, base);
        exit(KL_EXIT_USAGE);
    }
    return map;
}

// One launch of `kernel` over `clusters` clusters; dependent: it may start before the kernel
// launched before it in the stream has finished (that kernel lets it, griddepcontrol).
typedef void (*Kernel)(int, int, const Work, const CUtensorMap, const CUtensorMap, const CUtensorMap, const CUtensorMap,
                       const CUtensorMap, __nv_bfloat16 *);
static void launch_kernel(Kernel kernel, int clusters, size_t smem, cudaStream_t stream, bool dependent, int m, int n,
                          const Work &w, const CUtensorMap &mapA, const CUtensorMap &mapB, const CUtensorMap &mapC,
                          const CUtensorMap &mapSA, const CUtensorMap &mapSB, kl_bf16 *c) {
    cudaLaunchAttribute attr;
    attr.id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attr.val.programmaticStreamSerializationAllowed = 1;
    cudaLaunchConfig_t cfg = {dim3(CLUSTER_M * clusters), dim3(NUM_THREADS), smem, stream, &attr, dependent ? 1u : 0u};
    CUDA_CHECK(cudaLaunchKernelEx(&cfg, kernel, m, n, w, mapA, mapB, mapC, mapSA, mapSB, (__nv_bfloat16 *)c));
}

// ---- the plan (host only: --plan prints it with no GPU) ----------------------------------
struct Plan { long long ctiles, full, pieces; int split; };   // cluster tiles; whole ones; the split ones' pieces

static int opt_split = 0;   // --split: the last round's k ranges (0: chosen here)

// Cluster tiles in whole rounds of `clusters` stay whole; if the last round is short (at
// most half the clusters busy), its tiles split into clusters / leftover k ranges, at most
// MAX_SPLIT and no fewer than MIN_K_TILES_PER_SPLIT k tiles each.  no_split: v29's grid.
static Plan plan_for(int m, int n, int k, int clusters, bool no_split) {
    const long long tilesM = (m + BM - 1) / BM, tilesN = (n + BN - 1) / BN;
    const int tilesK = (k + BK - 1) / BK;
    Plan p = {(tilesM + CLUSTER_M - 1) / CLUSTER_M * tilesN, 0, 0, 1};
    const long long left = p.ctiles % clusters;   // the last round's cluster tiles
    long long split = 1;
    if (!no_split) {
        if (opt_split) split = opt_split;
        else if (left > 0 && 2 * left <= clusters) {
            split = clusters / left;
            if (split > MAX_SPLIT) split = MAX_SPLIT;
            if (split > tilesK / MIN_K_TILES_PER_SPLIT) split = tilesK / MIN_K_TILES_PER_SPLIT;
        }
    }
    p.split = split < 1 ? 1 : (int)split;
    p.full = p.split > 1 ? p.ctiles - left : p.ctiles;
    p.pieces = (p.ctiles - p.full) * p.split;
    return p;
}

static int accepts(const kl_problem *p, char *msg, size_t len) {
    const int tilesK = (p->k + BK - 1) / BK;
    if (opt_split > tilesK) {
        snprintf(msg, len, "--split %d: K = %d has %d k tile%s of %d; give --split %d or less", opt_split, p->k, tilesK,
                 tilesK == 1 ? "" : "s", BK, tilesK);
        return 1;
    }
    return 0;
}

struct Variant {
    int no_split;       // 1: v29's grid, the control
    kl_problem said;    // the problem planned last ...
    Plan plan;          // ... and its plan
};
static Variant chosen = {0, {0, 0, 0}, {}}, no_split = {1, {0, 0, 0}, {}};

// The plan of variant v for m x n x k on `clusters` clusters of two SMs, said in one line.
static Plan plan_and_say(const Variant *v, int m, int n, int k, int clusters) {
    const Plan p = plan_for(m, n, k, clusters, v->no_split);
    const long long rounds = p.full / clusters;
    printf("  plan%s for %d x %d x %d: %lld tiles of 128 x %d in clusters of %d, %lld on %d clusters: ", v->no_split ?
           " (no_split)" : "", m, n, k, p.ctiles * CLUSTER_M, BN, CLUSTER_M, p.ctiles, clusters);
    if (p.split > 1)
        printf("%lld whole round%s, the last %lld split %d ways (%lld pieces)\n", rounds, rounds == 1 ? "" : "s",
               p.ctiles - p.full, p.split, p.pieces);
    else
        printf("%lld round%s, none split\n", (p.ctiles + clusters - 1) / clusters,
               (p.ctiles + clusters - 1) / clusters == 1 ? "" : "s");
    return p;
}

static void show_plan(const kl_problem *q, int sms) {   // --plan SMS: both variants' plans, no GPU
    plan_and_say(&chosen, q->m, q->n, q->k, sms / CLUSTER_M);
    plan_and_say(&no_split, q->m, q->n, q->k, sms / CLUSTER_M);
}

static void launch(const kl_gemm_fp8_args *args, void *ctx, cudaStream_t stream) {
    const int m = args->m, n = args->n, k = args->k;
    const uint8_t *a = args->a, *b = args->b;
    kl_bf16 *c = args->c;
    // 5 x 40 KB + 2 x 8 KB + 1 KB: 217 KB (and 3 KB of scales, static)
    const size_t smem = STAGES * sizeof(Stage) + CONSUMERS * (CS_COLS / 64) * sizeof(CBox) + 1024;
    static int clusters_max = 0;   // clusters resident at once (one block per SM, two SMs each)
    if (!clusters_max) {
        int dev = 0, optin = 0;
        CUDA_CHECK(cudaGetDevice(&dev));
        CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
        if ((size_t)optin < smem) {
            fprintf(stderr, "step30: %zu KB of shared memory per block needed; this GPU allows %d KB\n", smem / 1024,
                    optin / 1024);
            exit(KL_EXIT_NO_GPU);
        }
        CUDA_CHECK(cudaFuncSetAttribute(gemm_fp8_block<true, false>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
        CUDA_CHECK(cudaFuncSetAttribute(gemm_fp8_block<false, false>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
        CUDA_CHECK(cudaFuncSetAttribute(gemm_fp8_block<true, true>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
        CUDA_CHECK(cudaFuncSetAttribute(gemm_fp8_block<false, true>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
        // A cluster's blocks must land on SMs of one GPC at the same time, so the question is
        // not "blocks per SM" but "clusters at once": the occupancy API answers it per GPC.
        const cudaLaunchConfig_t cfg = {dim3(CLUSTER_M), dim3(NUM_THREADS), smem, 0, NULL, 0};   // grid, block, smem
        CUDA_CHECK(cudaOccupancyMaxActiveClusters(&clusters_max, (const void *)gemm_fp8_block<true, false>, &cfg));
        if (clusters_max < 1) {
            fprintf(stderr, "step30: no cluster of %d blocks of %zu KB fits on this GPU at once\n", CLUSTER_M, smem / 1024);
            exit(KL_EXIT_NO_GPU);
        }
    }
    // The maps depend on the pointers and sizes only: built again when they change,
    // not on every launch of the timed loop.
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
    Variant *v = static_cast<Variant *>(ctx);
    if (m != v->said.m || n != v->said.n || k != v->said.k) {   // a new problem: plan it, and say so above its results
        v->plan = plan_and_say(v, m, n, k, clusters_max);
        v->said = (kl_problem){m, n, k};
    }
    const Plan &p = v->plan;
    const long long tilesM = (m + BM - 1) / BM;
    Work w = {(n + BN - 1) / BN, (k + BK - 1) / BK, (int)((tilesM + CLUSTER_M - 1) / CLUSTER_M), (int)p.ctiles,
              (int)p.full, p.split, NULL, NULL};   // < 2^31 tiles for any C that fits
    if (p.split > 1) {
        // The workspace (v27's): a 64 x BN fp32 slot per piece, block and consumer, and a counter
        // per split tile, block and consumer, zeroed once (a tile's last piece sets its counter
        // back to 0).  It grows when a problem needs more, outside any timing that matters (the
        // check runs first).
        static float *partials = NULL;
        static int *arrived = NULL;
        static size_t have_f = 0, have_c = 0;
        const size_t split_tiles = (size_t)(p.ctiles - p.full) * CLUSTER_M;
        const size_t need_f = split_tiles * p.split * CONSUMERS * 64 * BN, need_c = split_tiles * CONSUMERS;
        if (need_f > have_f) {
            CUDA_CHECK(cudaFree(partials));
            CUDA_CHECK(cudaMalloc(&partials, need_f * sizeof(float)));
            have_f = need_f;
        }
        if (need_c > have_c) {
            CUDA_CHECK(cudaFree(arrived));
            CUDA_CHECK(cudaMalloc(&arrived, need_c * sizeof(int)));
            CUDA_CHECK(cudaMemset(arrived, 0, need_c * sizeof(int)));
            have_c = need_c;
        }
        w.partials = partials, w.arrived = arrived;
    }
    // The whole tiles, then the pieces: the second kernel is launched as dependent on the
    // first (programmatic stream serialization), so its blocks take SMs as the first's leave.
    const bool tma_store = n % 8 == 0;
    if (p.full > 0)
        launch_kernel(tma_store ? gemm_fp8_block<true, false> : gemm_fp8_block<false, false>,
                      (int)(p.full < clusters_max ? p.full : clusters_max), smem, stream, false, m, n, w, cache.mapA,
                      cache.mapB, cache.mapC, cache.mapSA, cache.mapSB, c);
    if (p.split > 1) {
        launch_kernel(tma_store ? gemm_fp8_block<true, true> : gemm_fp8_block<false, true>,
                      (int)(p.pieces < clusters_max ? p.pieces : clusters_max), smem, stream, p.full > 0, m, n, w,
                      cache.mapA, cache.mapB, cache.mapC, cache.mapSA, cache.mapSB, c);
    }
    KL_CHECK_LAUNCH();
}

int main(int argc, char **argv) {
    kl_step step = {};
    step.number = 30;
    step.title = "FP8 block scales, the last round's tiles split along K (sm_90a)";
    step.min_cc = 90;
    step.only_cc = 90;
    step.accepts = accepts;
    step.show_plan = show_plan;
    step.kernels[0].op = &kl_op_gemm_fp8_block;
    step.kernels[0].gemm_fp8 = launch;
    step.kernels[0].ctx = &chosen;
    step.kernels[1].op = &kl_op_gemm_fp8_block;
    step.kernels[1].variant = "no_split";
    step.kernels[1].gemm_fp8 = launch;
    step.kernels[1].ctx = &no_split;
    step.opts[0] = (kl_opt){"split", "k ranges per tile of the last round, 1 .. 16 (0: chosen per problem)", &opt_split, 0,
                            MAX_SPLIT};
    return kl_main(argc, argv, &step);
}
