// build: sm_90a
/*
 * Step 45 - ping-pong: where a tile's k loop is short, each consumer warpgroup takes whole
 * tiles, in turns, and stores one while the other multiplies.
 *
 * At 4096 x 4096 x 512 v43's plan runs 128 x 256 tiles, 4 waves of 8 k steps.  Both
 * consumer warpgroups work on every tile (64 rows each) and reach its end together: both
 * wait for their last batch, write C, and only then issue the next tile's first batch, and
 * for that time the tensor cores have nothing queued.  Eight k steps do not hide it.  v45
 * gives each warpgroup every other tile of the block, whole (128 x BN: two m64nBN wgmmas a
 * k step, BN accumulators a thread, so BN <= 192), and a turn passes between them once a
 * tile's last batch is issued: one's C goes out while the other's k loop runs.  The plan
 * takes it where v43's plan runs single 128-row tiles, K whole, in at least two waves, and
 * K is 512 to 1024 (PP_MIN_KT to PP_MAX_KT k steps); the width is v43's rule over the widths
 * up to 192.
 * Everywhere else v43's plan, unchanged.  The variant `v43` is v43's plan everywhere, the
 * control.  --pp 1 never takes it, --pp 2 wherever the tile allows (with --bn, that width).
 *
 * Build and run:   make step45 && ./step45          (an H100 or H200 only)
 */
#include "kl.h"

#include <cuda.h>   // CUtensorMap and its enums only: the driver is reached through the runtime
#include <cudaTypedefs.h>
#include <cuda_bf16.h>

#define BM 128   // 64 rows of C per consumer warpgroup
#define BK 64
#define WG_PENDING 1   // wgmma batches left running across the next k tile
#define GROUP_M 16   // M-tiles that walk across N together (v23)
#define CS_COLS 128   // columns of C a consumer stages per TMA store round
#define MAX_SPLIT 16   // most k ranges per tile
#define PP_MIN_KT 8    // ping-pong where a tile has 8 to 16 k steps (K 512 to 1024): where it gained at 4096 x 4096
#define PP_MAX_KT 16   // (v45's page: at K 256 and from K 2048 on it lost)
#define PP_MAX_BN 192  // and at most this wide: 2 x 64 x BN fp32 a warpgroup, BN registers a thread
#define CONSUMERS (BM / 64)                  // one consumer warpgroup per 64 rows
#define NUM_THREADS (128 * (CONSUMERS + 1))   // + the producer warpgroup
#define PRODUCER_REGS 40
#define CONSUMER_REGS 232
// The ring: 192 of the 227 KB a block may have, the rest for C's staging boxes and the alignment.
template <int BN> __host__ __device__ constexpr int stages() {
    // A stage is 16 KB of A and BN x 128 B of B: 4 at BN 256 (48 KB) and 192 (40 KB), 6 at
    // 128, 8 at 64; a swapped tile (BN <= 64 activations) 8 to 11.
    return 192 * 1024 / (16 * 1024 + BN * 128);
}
static_assert(BK == 64, "BK bf16 = one 128-byte row: the TMA's and wgmma's 128-byte swizzle");
static_assert(128 * (PRODUCER_REGS + CONSUMERS * CONSUMER_REGS) <= 65536, "the roles' registers fit the SM's 64K");
static_assert(128 + 26 <= 65536 / NUM_THREADS / 8 * 8, "an m64n256 wgmma compiles within the cap at entry (v22)");
static_assert(stages<128>() - WG_PENDING >= 2 && stages<256>() - WG_PENDING >= 2, "a tile in flight, one multiplied, WG_PENDING still read by running batches");
static_assert(GROUP_M >= 1 && CS_COLS % 64 == 0 && 128 % CS_COLS == 0, "whole groups; whole 64-column boxes of C");

// mbarriers: a 64-bit word in shared memory, addressed by its 32-bit shared address.
__device__ __forceinline__ unsigned smem_u32(const void *p) { return (unsigned)__cvta_generic_to_shared(p); }
__device__ __forceinline__ void mbar_init(uint64_t *bar, unsigned count) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(smem_u32(bar)), "r"(count));
}
__device__ __forceinline__ void mbar_arrive(uint64_t *bar) {
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(smem_u32(bar)) : "memory");
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

// One box of the tensor map at element coordinates (k0, row0) into shared memory, counted
// on `bar` in bytes when it lands; elements outside the matrix arrive as zeros.
__device__ __forceinline__ void tma_load(void *dst, const CUtensorMap *map, int k0, int row0, uint64_t *bar) {
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];\n"
                 ::"r"(smem_u32(dst)), "l"(map), "r"(k0), "r"(row0), "r"(smem_u32(bar)) : "memory");
}
// One box of shared memory to C at (col0, row0), only the elements inside the matrix (v23).
__device__ __forceinline__ void tma_store(const CUtensorMap *map, const void *src, int col0, int row0) {
    asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%1, %2}], [%3];\n"
                 ::"l"(map), "r"(col0), "r"(row0), "r"(smem_u32(src)) : "memory");
}
__device__ __forceinline__ void bulk_commit() { asm volatile("cp.async.bulk.commit_group;\n" ::: "memory"); }
__device__ __forceinline__ void bulk_wait_read() { asm volatile("cp.async.bulk.wait_group.read 0;\n" ::: "memory"); }
__device__ __forceinline__ void bulk_wait_all() { asm volatile("cp.async.bulk.wait_group 0;\n" ::: "memory"); }
__device__ __forceinline__ void fence_proxy_async() { asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); }
// A barrier for one consumer warpgroup (id 1 or 2; 0 is __syncthreads's), not the whole block.
// Ping-pong's turn: named barriers 3 and 4, each counting both consumer warpgroups (256
// threads).  turn_wait(3 + c) takes the turn warpgroup c was passed; turn_pass(4 - c) hands
// it to the other (bar.arrive: the passer does not wait).
__device__ __forceinline__ void turn_wait(int id) { asm volatile("bar.sync %0, 256;\n" ::"r"(id) : "memory"); }
__device__ __forceinline__ void turn_pass(int id) { asm volatile("bar.arrive %0, 256;\n" ::"r"(id) : "memory"); }
__device__ __forceinline__ void wg_barrier(int id) { asm volatile("bar.sync %0, 128;\n" ::"r"(id) : "memory"); }

// The fix-up's arrival: add 1 to a counter in global memory and return what it held.
// acq_rel at GPU scope: our partial's stores (the warpgroup's, ordered before this by the
// barrier) are released with it, and if we are last, the others' are acquired by it.
__device__ __forceinline__ int arrive_count(int *counter) {
    int old;
    asm volatile("atom.add.acq_rel.gpu.global.s32 %0, [%1], 1;\n" : "=r"(old) : "l"(counter) : "memory");
    return old;
}

// K-major tile in the 128-byte swizzle: address, leading offset 1 (unused), stride 1024 B, mode 1 (v20).
__device__ __forceinline__ uint64_t make_desc(const void *tile) {
    const uint64_t addr = (unsigned)__cvta_generic_to_shared(tile);
    return (addr & 0x3FFFF) >> 4 | 1ull << 16 | (1024ull >> 4) << 32 | 1ull << 62;
}

template <int R> __device__ __forceinline__ void setmaxnreg_dec() { asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(R)); }
template <int R> __device__ __forceinline__ void setmaxnreg_inc() { asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(R)); }

__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
template <int N>
__device__ __forceinline__ void wgmma_wait() { asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory"); }
template <int R> __device__ __forceinline__ void fence_acc(float (&d)[R]) {
#pragma unroll
    for (int i = 0; i < R; ++i) asm volatile("" : "+f"(d[i])::"memory");
}

// d (64 x N fp32, N / 2 per thread) += A (64 x 16, K-major) * B (N x 16, K-major)^T for the
// warpgroup; accumulate = 0: d = A * B.  One wrapper per width N, a multiple of 16 (v20's,
// written once for every width): the descriptors and the flag are operands %0 .. %2, the
// N / 2 accumulators %3 onward, in REGS_c (c = N / 16 groups of 8 registers).
#define D8(i) "+f"(d[i]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3]), "+f"(d[i + 4]), "+f"(d[i + 5]), \
              "+f"(d[i + 6]), "+f"(d[i + 7])
#define REGS_1 "%3, %4, %5, %6, %7, %8, %9, %10"
#define REGS_2 REGS_1 ", %11, %12, %13, %14, %15, %16, %17, %18"
#define REGS_3 REGS_2 ", %19, %20, %21, %22, %23, %24, %25, %26"
#define REGS_4 REGS_3 ", %27, %28, %29, %30, %31, %32, %33, %34"
#define REGS_5 REGS_4 ", %35, %36, %37, %38, %39, %40, %41, %42"
#define REGS_6 REGS_5 ", %43, %44, %45, %46, %47, %48, %49, %50"
#define REGS_7 REGS_6 ", %51, %52, %53, %54, %55, %56, %57, %58"
#define REGS_8 REGS_7 ", %59, %60, %61, %62, %63, %64, %65, %66"
#define REGS_9 REGS_8 ", %67, %68, %69, %70, %71, %72, %73, %74"
#define REGS_10 REGS_9 ", %75, %76, %77, %78, %79, %80, %81, %82"
#define REGS_11 REGS_10 ", %83, %84, %85, %86, %87, %88, %89, %90"
#define REGS_12 REGS_11 ", %91, %92, %93, %94, %95, %96, %97, %98"
#define REGS_13 REGS_12 ", %99, %100, %101, %102, %103, %104, %105, %106"
#define REGS_14 REGS_13 ", %107, %108, %109, %110, %111, %112, %113, %114"
#define REGS_15 REGS_14 ", %115, %116, %117, %118, %119, %120, %121, %122"
#define REGS_16 REGS_15 ", %123, %124, %125, %126, %127, %128, %129, %130"
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
#define WGMMA_WIDTH(N, C)                                                                                        \
    __device__ __forceinline__ void wgmma_m64nNk16(float (&d)[N / 2], uint64_t desc_a, uint64_t desc_b, int accumulate) { \
        asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %2, 0;\n"                                                       \
                     "wgmma.mma_async.sync.aligned.m64n" #N "k16.f32.bf16.bf16 {" REGS_##C "}, %0, %1, p, 1, 1, 0, 0;\n}\n" \
                     : "+l"(desc_a), "+l"(desc_b), "+r"(accumulate), OUTS_##C);                                         \
    }
WGMMA_WIDTH(16, 1) WGMMA_WIDTH(32, 2)   // swapped tiles (v26)
WGMMA_WIDTH(64, 4) WGMMA_WIDTH(80, 5) WGMMA_WIDTH(96, 6) WGMMA_WIDTH(112, 7) WGMMA_WIDTH(128, 8) WGMMA_WIDTH(144, 9)
WGMMA_WIDTH(160, 10) WGMMA_WIDTH(176, 11) WGMMA_WIDTH(192, 12) WGMMA_WIDTH(208, 13) WGMMA_WIDTH(224, 14)
WGMMA_WIDTH(240, 15) WGMMA_WIDTH(256, 16)
// n = 8, the swapped tile's narrowest (v26): four accumulators.
__device__ __forceinline__ void wgmma_m64nNk16(float (&d)[4], uint64_t desc_a, uint64_t desc_b, int accumulate) {
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %2, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16 {%3, %4, %5, %6}, %0, %1, p, 1, 1, 0, 0;\n}\n"
                 : "+l"(desc_a), "+l"(desc_b), "+r"(accumulate), "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]));
}
#undef WGMMA_WIDTH
#undef D8

template <int BN> struct Stage {
    __nv_bfloat16 As[BM][BK];   // 16 KB, swizzled by the TMA
    __nv_bfloat16 Bs[BN][BK];   // 32 or 16 KB; swapped, the tokens: 1 to 8 KB
};
typedef __nv_bfloat16 CBox[64][64];   // one 64 x 64 box of C staged in the 128-byte swizzle (v23)
template <int BN> constexpr size_t smem_bytes() {
    return stages<BN>() * sizeof(Stage<BN>) + CONSUMERS * (CS_COLS / 64) * sizeof(CBox) + 1024;
}
template <int... BNs> constexpr bool all_fit() { return ((smem_bytes<BNs>() + 1024 <= 227 * 1024) && ...); }
static_assert(all_fit<8, 16, 32, 64, 80, 96, 112, 128, 144, 160, 176, 192, 208, 224, 240, 256>(),
              "the ring, the C staging, the alignment and the barriers fit the 227 KB a block may have");

// Clusters (v24): a block's rank, the cluster's barrier, an arrival on a peer's barrier, a
// multicast copy.
__device__ __forceinline__ unsigned cluster_rank() {
    unsigned r;
    asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r));
    return r;
}
__device__ __forceinline__ void cluster_sync() {
    asm volatile("barrier.cluster.arrive.relaxed;\nbarrier.cluster.wait.acquire;\n" ::: "memory");
}
// Arrive on the barrier at `bar`'s offset in block `rank` of the cluster (v24).
__device__ __forceinline__ void mbar_arrive_cluster(uint64_t *bar, unsigned rank) {
    asm volatile("{\n.reg .b32 remote;\nmapa.shared::cluster.u32 remote, %0, %1;\n"
                 "mbarrier.arrive.shared::cluster.b64 _, [remote];\n}\n"
                 ::"r"(smem_u32(bar)), "r"(rank) : "memory");
}
// One box, read once, written at `dst`'s offset in every block of the cluster in `mask` (v24).
__device__ __forceinline__ void tma_load_mc(void *dst, const CUtensorMap *map, int k0, int row0, uint64_t *bar,
                                            uint16_t mask) {
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster"
                 " [%0], [%1, {%2, %3}], [%4], %5;\n"
                 ::"r"(smem_u32(dst)), "l"(map), "r"(k0), "r"(row0), "r"(smem_u32(bar)), "h"(mask) : "memory");
}

// n / d without a divide, for 0 <= n < 2^31 and d >= 1: (umulhi(n, m) + n) >> l, where
// l = ceil(log2 d) and m = floor(2^32 (2^l - d) / d) + 1 (Granlund and Montgomery, 1994).
// umulhi(n, m) + n is n (2^32 + m) / 2^32 rounded down, a little over n 2^l / d; the shift
// by l leaves n / d.  The sum fits 32 bits because n < 2^31.  make_divisor runs on the host,
// once per problem; divisors_hold() checks it there against every n the kernel will divide.
struct Divisor { int d; unsigned m, l; };
static Divisor make_divisor(int d) {
    unsigned l = 0;
    while ((1ull << l) < (unsigned long long)d) ++l;
    const unsigned long long m = ((1ull << 32) * ((1ull << l) - d)) / d + 1;
    return {d, (unsigned)m, l};
}
__host__ __device__ __forceinline__ int divide(int n, const Divisor &v) {
#ifdef __CUDA_ARCH__
    const unsigned hi = __umulhi((unsigned)n, v.m);   // IMAD.HI: one instruction
#else
    const unsigned hi = (unsigned)((unsigned long long)(unsigned)n * v.m >> 32);
#endif
    return (int)((hi + (unsigned)n) >> v.l);
}

// The problem as the kernel walks it, in pairs of tiles side by side (CN = 2) or single tiles
// (CN = 1): cols = tilesN / CN rounded up, units = tilesM x cols x split, unit u = (pair u /
// split, k range u % split).  Block r of a pair takes tile column CN col + r.
struct Work {
    int tilesM, cols, tilesK, split;
    float *partials;   // split > 1: a 64 x BN fp32 slot per (unit, consumer)
    int *arrived;      // split > 1: a counter per (tile, consumer), 0 between launches
    Divisor by_split, by_group, by_last;   // split; GROUP_M x cols; the last group's rows of tiles
};

// Unit u of the walk: its tile, its k range s and k tiles [kb, ke), and the tile's origin.
// v23's order: groups of GROUP_M M-tiles (the last may be shorter) walk across N one column
// at a time.  Split s of `split` covers k tiles [tilesK s / split, tilesK (s + 1) / split):
// sizes differ by one at most.  Every division by a Divisor (v34).
struct Unit { int tile, s, row0, col0, kb, ke; };
template <int BN, int CN> __device__ __forceinline__ Unit unit_at(int u, const Work &w, int rank) {
    Unit x;
    const int pair = divide(u, w.by_split);
    x.s = u - pair * w.split;
    x.tile = pair * CN + rank;   // the block's own tile: its slots in the workspace
    const int group = divide(pair, w.by_group), first = group * GROUP_M, r = pair - group * w.by_group.d;
    int col, row;
    if (w.tilesM - first >= GROUP_M) col = r / GROUP_M, row = r % GROUP_M;   // a constant: the compiler's shift
    else col = divide(r, w.by_last), row = r - col * w.by_last.d;
    x.row0 = (first + row) * BM, x.col0 = (col * CN + rank) * BN;
    x.kb = divide(w.tilesK * x.s, w.by_split), x.ke = divide(w.tilesK * (x.s + 1), w.by_split);
    return x;
}

// The fix-up, for one consumer warpgroup and its 64 x BN accumulators.  Every unit of a split
// tile writes its fp32 partial to its slot of the workspace and counts itself in; the last to
// come reads all the tile's partials back, in the order of their k ranges, and returns true:
// acc holds the sum, the same bit for bit whichever unit came last, and this warpgroup stores
// C.  The others return false.  A warp whose 16 rows lie past M (unswapped at M = 8: three
// of every four) neither writes nor reads.
template <int BN>
__device__ __forceinline__ bool fix_up(float (&acc)[BN / 2], const Work &w, int tile, int s, int cw, bool rows_live,
                                       int *last_flag) {
    const int tid = threadIdx.x % 128;
    constexpr size_t slot4 = (size_t)CONSUMERS * 64 * BN / 4;   // float4s from one split's slot to the next
    // Fragment order: float4 j of thread tid at j x 128 + tid, so each store of the warpgroup
    // is 2 KB in a row, and each thread reads back what a thread of its place wrote.
    float4 *base = reinterpret_cast<float4 *>(w.partials) + (size_t)tile * w.split * slot4 + cw * 64 * BN / 4 + tid;
    if (rows_live)
#pragma unroll
        for (int j = 0; j < BN / 8; ++j)
            __stcg(base + s * slot4 + j * 128, make_float4(acc[4 * j], acc[4 * j + 1], acc[4 * j + 2], acc[4 * j + 3]));
    wg_barrier(1 + cw);   // the warpgroup's partial written before one thread counts it
    if (tid == 0) *last_flag = arrive_count(&w.arrived[tile * CONSUMERS + cw]) == w.split - 1;
    wg_barrier(1 + cw);
    // One answer per warp that the compiler can see is one (v39).
    const bool last = __all_sync(0xffffffffu, *last_flag);
    if (!last) return false;
    if (tid == 0) w.arrived[tile * CONSUMERS + cw] = 0;   // every unit has come: ready for the next launch
    if (rows_live) {   // ((p0 + p1) + p2) + ...
#pragma unroll
        for (int j = 0; j < BN / 8; ++j) {
            const float4 v = __ldcg(base + j * 128);
            acc[4 * j] = v.x, acc[4 * j + 1] = v.y, acc[4 * j + 2] = v.z, acc[4 * j + 3] = v.w;
        }
        for (int q = 1; q < w.split; ++q)
#pragma unroll
            for (int j = 0; j < BN / 8; ++j) {
                const float4 v = __ldcg(base + q * slot4 + j * 128);
                acc[4 * j] += v.x, acc[4 * j + 1] += v.y, acc[4 * j + 2] += v.z, acc[4 * j + 3] += v.w;
            }
    }
    return true;
}

// TMA_STORE false: the register epilogue, for N % 8 != 0 (no tensor map for C).  SWAP: the
// kernel multiplies C^T = B A^T (its M the weights' N, its N the activations' M), and the
// register epilogue stores each accumulator at its transposed place in C.  mapCt: the tail
// of a width that is not a multiple of 64, its last BN % 64 columns (unused otherwise).
// The fix-up's answer is read through a warp vote (v39), in every kernel.  PP (this step):
// ping-pong, single tiles (CN 1), K whole, the TMA store; each consumer warpgroup takes
// every other unit of the block, whole.
template <int BN, bool TMA_STORE, bool SWAP, int CN, bool PP = false>
__global__ void __launch_bounds__(NUM_THREADS, 1)
gemm_split(int M, int N, const Work w, const __grid_constant__ CUtensorMap mapA, const __grid_constant__ CUtensorMap mapB,
           const __grid_constant__ CUtensorMap mapC, const __grid_constant__ CUtensorMap mapCt, __nv_bfloat16 *C) {
    constexpr int STAGES = stages<BN>();
    extern __shared__ __align__(1024) unsigned char smem[];
    const unsigned misalign = (unsigned)__cvta_generic_to_shared(smem) % 1024;   // the launcher adds 1 KB
    Stage<BN> *st = reinterpret_cast<Stage<BN> *>(smem + (1024 - misalign) % 1024);
    CBox *cs = reinterpret_cast<CBox *>(st + STAGES);
    __shared__ uint64_t full[STAGES], empty[STAGES];
    __shared__ int last_flag[CONSUMERS];   // the fix-up's answer, one per consumer warpgroup

    static_assert(CN == 1 || CN == 2, "single tiles or pairs");
    static_assert(!PP || (CN == 1 && !SWAP && TMA_STORE && BN <= PP_MAX_BN), "ping-pong: single tiles, the TMA store, "
                  "BN accumulators a thread beside the epilogue's registers");
    const int units = w.tilesM * w.cols * w.split;
    const int wg = threadIdx.x / 128;
    const int rank = CN > 1 ? (int)cluster_rank() : 0;
    const int cluster = blockIdx.x / CN, clusters = gridDim.x / CN;
    if (threadIdx.x == 0) {
        for (int s = 0; s < STAGES; ++s) {
            mbar_init(&full[s], 1);
            mbar_init(&empty[s], 4 * (PP ? 1 : CONSUMERS) * CN);   // one arrival per consumer warp that reads it
        }
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    }
    __syncthreads();
    if constexpr (CN > 1) cluster_sync();   // both blocks' barriers set before either signals them

    // Both roles walk the same units and count the same k tiles: `it`, never reset, is the ring's position.
    if (wg == 0) {   // ---- producer ----------------------------------------------------
        setmaxnreg_dec<PRODUCER_REGS>();
        if (threadIdx.x == 0) {
            int it = 0;
            for (int u = cluster; u < units; u += clusters) {
                const Unit x = unit_at<BN, CN>(u, w, rank);
                const int row0 = x.row0, col0 = x.col0, kb = x.kb, ke = x.ke;
                for (int kt = kb; kt < ke; ++kt, ++it) {
                    const int stg = it % STAGES, f = it / STAGES;
                    if (f > 0) mbar_wait(&empty[stg], (f - 1) & 1);   // both blocks' consumers released fill f - 1
                    mbar_arrive_expect_tx(&full[stg], sizeof(Stage<BN>));   // the peer's half of A included
                    if constexpr (CN > 1)   // our half of the pair's A box, into both blocks (mask 0b11)
                        tma_load_mc(st[stg].As[BM / 2 * rank], &mapA, kt * BK, row0 + BM / 2 * rank, &full[stg], 3);
                    else
                        tma_load(st[stg].As, &mapA, kt * BK, row0, &full[stg]);
                    tma_load(st[stg].Bs, &mapB, kt * BK, col0, &full[stg]);
                }
            }
            // A pair: exit only after the last release of every stage, so that no arrival or
            // multicast from the peer can reach a block that has gone (v24).
            if constexpr (CN > 1)
                for (int j = max(it - STAGES, 0); j < it; ++j) mbar_wait(&empty[j % STAGES], (j / STAGES) & 1);
        }
    } else {         // ---- consumers ---------------------------------------------------
        setmaxnreg_inc<CONSUMER_REGS>();
        if constexpr (PP) {   // ---- ping-pong: unit n of this block is consumer n % 2's, whole
            const int c = wg - 1;
            const int warp = threadIdx.x % 128 / 32, lane = threadIdx.x % 32;
            const int g = lane / 4, t = lane % 4;
            CBox *mine = cs + c * (CS_COLS / 64);
            if (c == 1) turn_pass(3);   // unit 0 is consumer 0's: consumer 1 hands it the first turn
            int it = 0, n = 0;          // the ring's position (the other's units skipped), the block's unit count
            for (int u = cluster; u < units; u += clusters, ++n) {
                const Unit x = unit_at<BN, CN>(u, w, rank);
                const int row0 = x.row0, col0 = x.col0, kb = x.kb, ke = x.ke, nk = ke - kb;
                if (n % 2 != c) {   // the other's unit: its stages go by
                    it += nk;
                    continue;
                }
                float acc[2][BN / 2];   // rows 0-63 and 64-127 of the tile
                // The turn: the other's last unit is all issued, so every stage before this
                // unit's first has been filled, and each full barrier waited on below is at
                // most one phase ahead of the phase we ask for.
                turn_wait(3 + c);
                for (int kt = kb; kt < ke; ++kt, ++it) {
                    const int stg = it % STAGES;
                    mbar_wait(&full[stg], (it / STAGES) & 1);
                    __syncwarp();
                    const uint64_t da0 = make_desc(st[stg].As[0]), da1 = make_desc(st[stg].As[64]), db = make_desc(st[stg].Bs);
                    wgmma_fence();
#pragma unroll
                    for (int kk = 0; kk < BK / 16; ++kk) {
                        wgmma_m64nNk16(acc[0], da0 + 2 * kk, db + 2 * kk, kt > kb || kk > 0);
                        wgmma_m64nNk16(acc[1], da1 + 2 * kk, db + 2 * kk, kt > kb || kk > 0);
                    }
                    wgmma_commit();
                    if (kt == ke - 1) turn_pass(4 - c);   // our last batch is queued: the other may start its unit
                    wgmma_wait<WG_PENDING>();
                    if (kt - kb >= WG_PENDING && lane == 0) mbar_arrive(&empty[(it - WG_PENDING) % STAGES]);
                }
                wgmma_wait<0>();
                fence_acc(acc[0]);
                fence_acc(acc[1]);
                if (lane == 0)
                    for (int j = max(nk - WG_PENDING, 0); j < nk; ++j) mbar_arrive(&empty[(it - nk + j) % STAGES]);
                // C, while the other consumer's k loop runs: the 64-row halves in turn, through
                // this warpgroup's staging boxes, as the kernel below stores its 64 rows.
                constexpr int TW = BN % 64;
#pragma unroll
                for (int hf = 0; hf < 2; ++hf) {
#pragma unroll
                    for (int c0 = 0; c0 < BN; c0 += CS_COLS) {
                        if (threadIdx.x % 128 == 0) bulk_wait_read();
                        wg_barrier(1 + c);
#pragma unroll
                        for (int j = c0 / 8; j < (c0 + CS_COLS) / 8; ++j)
#pragma unroll
                            for (int h = 0; h < 2; ++h) {
                                if (j >= BN / 8) continue;
                                const int r = 16 * warp + g + 8 * h;
                                char *box = reinterpret_cast<char *>(mine[(j - c0 / 8) / 8]);
                                const bool tail = TW != 0 && j >= BN / 64 * 8;
                                *reinterpret_cast<__nv_bfloat162 *>(box + (tail ? 2 * TW * r + 16 * (j % 8) : 128 * r + 16 * ((j % 8) ^ g)) + 4 * t) =
                                    __floats2bfloat162_rn(acc[hf][4 * j + 2 * h], acc[hf][4 * j + 2 * h + 1]);
                            }
                        fence_proxy_async();
                        wg_barrier(1 + c);
                        if (threadIdx.x % 128 == 0) {
                            const int r0 = row0 + 64 * hf;
                            for (int b = 0; b < CS_COLS / 64; ++b) {
                                const int cc = c0 + 64 * b;
                                if (cc < BN && r0 < M && col0 + cc < N) tma_store(cc + 64 <= BN ? &mapC : &mapCt, mine[b], col0 + cc, r0);
                            }
                            bulk_commit();
                        }
                    }
                }
            }
            if (n % 2 == c) turn_wait(3 + c);   // the last pass was to us: taken, both barriers end as they began
            if (threadIdx.x % 128 == 0) bulk_wait_all();
            return;
        }
        const int cw = wg - 1;
        const int warp = threadIdx.x % 128 / 32, lane = threadIdx.x % 32;
        const int g = lane / 4, t = lane % 4;
        CBox *mine = cs + cw * (CS_COLS / 64);
        int it = 0;
        // No batch reads stage i any more: lane 0 tells this block, or lane r block r of the pair.
        auto release = [&](int i) {
            if constexpr (CN > 1) {
                if (lane < CN) mbar_arrive_cluster(&empty[i % STAGES], lane);
            } else if (lane == 0) {
                mbar_arrive(&empty[i % STAGES]);
            }
        };
        for (int u = cluster; u < units; u += clusters) {
            const Unit x = unit_at<BN, CN>(u, w, rank);
            const int tile = x.tile, s = x.s, row0 = x.row0, col0 = x.col0, kb = x.kb, ke = x.ke;
            float acc[BN / 2];
            // One k step: wait for its stage, fence, BK / 16 wgmmas, commit, leave WG_PENDING
            // batches running, release the stage the last finished batch read.
            auto k_step = [&](int kt) {
                const int stg = it % STAGES;
                mbar_wait(&full[stg], (it / STAGES) & 1);
                __syncwarp();
                const uint64_t da = make_desc(st[stg].As[64 * cw]), db = make_desc(st[stg].Bs);
                wgmma_fence();
#pragma unroll
                for (int kk = 0; kk < BK / 16; ++kk) wgmma_m64nNk16(acc, da + 2 * kk, db + 2 * kk, kt > kb || kk > 0);
                wgmma_commit();
                wgmma_wait<WG_PENDING>();
                if (kt - kb >= WG_PENDING) release(it - WG_PENDING);
                ++it;
            };
            // Two k steps a turn (v36), then an odd last step in a loop of its own.
            int kt = kb;
            for (; kt + 1 < ke; kt += 2) {
                k_step(kt);
                k_step(kt + 1);
            }
            for (; kt < ke; ++kt) k_step(kt);
            wgmma_wait<0>();
            fence_acc(acc);
            const int nk = ke - kb;
            for (int j = max(nk - WG_PENDING, 0); j < nk; ++j) release(it - nk + j);   // before the epilogue (v23)
            // A pair's second tile past N: it loaded its half of A for its peer, and stores nothing.
            if (CN > 1 && col0 >= N) continue;

            if (w.split > 1 && !fix_up<BN>(acc, w, tile, s, cw, row0 + 64 * cw + 16 * warp < M, &last_flag[cw]))
                continue;   // our partial is in the workspace; the tile's last unit stores C

            // acc[4 j + 2 h + e] is row 16 warp + g + 8 h, column 8 j + 2 t + e of the warpgroup's 64 x BN (v20).
            if constexpr (TMA_STORE) {
                // Boxes of 64 columns, and for a width not a multiple of 64 a last box of its
                // TW = BN % 64 columns: unswizzled, row r's TW columns at r x 2 TW bytes (the
                // tail map's box).  The bounds below are constants once unrolled.
                constexpr int TW = BN % 64;
#pragma unroll
                for (int c0 = 0; c0 < BN; c0 += CS_COLS) {
                    if (threadIdx.x % 128 == 0) bulk_wait_read();
                    wg_barrier(1 + cw);
#pragma unroll
                    for (int j = c0 / 8; j < (c0 + CS_COLS) / 8; ++j)
#pragma unroll
                        for (int h = 0; h < 2; ++h) {
                            if (j >= BN / 8) continue;   // past the width: a last round of one box, or of the tail
                            const int r = 16 * warp + g + 8 * h;
                            char *box = reinterpret_cast<char *>(mine[(j - c0 / 8) / 8]);
                            const bool tail = TW != 0 && j >= BN / 64 * 8;   // this 8-column chunk is in the tail
                            *reinterpret_cast<__nv_bfloat162 *>(box + (tail ? 2 * TW * r + 16 * (j % 8) : 128 * r + 16 * ((j % 8) ^ g)) + 4 * t) =
                                __floats2bfloat162_rn(acc[4 * j + 2 * h], acc[4 * j + 2 * h + 1]);
                        }
                    fence_proxy_async();
                    wg_barrier(1 + cw);
                    if (threadIdx.x % 128 == 0) {
                        const int r0 = row0 + 64 * cw;
                        for (int b = 0; b < CS_COLS / 64; ++b) {
                            const int c = c0 + 64 * b;   // the box's first column in the tile
                            if (c < BN && r0 < M && col0 + c < N)
                                tma_store(c + 64 <= BN ? &mapC : &mapCt, mine[b], col0 + c, r0);
                        }
                        bulk_commit();
                    }
                }
            } else if constexpr (SWAP) {   // acc's row r (a weight) is C's column, its column c (a token) C's row: C[c][r]
#pragma unroll
                for (int j = 0; j < BN / 8; ++j)
#pragma unroll
                    for (int h = 0; h < 2; ++h)
#pragma unroll
                        for (int e = 0; e < 2; ++e) {
                            const int r = row0 + 64 * cw + 16 * warp + g + 8 * h, c = col0 + 8 * j + 2 * t + e;
                            if (r < M && c < N) C[(size_t)c * M + r] = __float2bfloat16_rn(acc[4 * j + 2 * h + e]);
                        }
            } else {
#pragma unroll
                for (int j = 0; j < BN / 8; ++j)
#pragma unroll
                    for (int h = 0; h < 2; ++h) {
                        const int r = row0 + 64 * cw + 16 * warp + g + 8 * h, c = col0 + 8 * j + 2 * t;
                        if (r >= M || c >= N) continue;
                        __nv_bfloat16 *out = C + (size_t)r * N + c;
                        const float v0 = acc[4 * j + 2 * h], v1 = acc[4 * j + 2 * h + 1];
                        if (N % 2 == 0) *reinterpret_cast<__nv_bfloat162 *>(out) = __floats2bfloat162_rn(v0, v1);
                        else {
                            out[0] = __float2bfloat16_rn(v0);
                            if (c + 1 < N) out[1] = __float2bfloat16_rn(v1);
                        }
                    }
            }
        }
        if (TMA_STORE && threadIdx.x % 128 == 0) bulk_wait_all();
    }
}

// ---- the decode tile (v40) -------------------------------------------------------------
// A block: 64 weight rows (wgmma's M, one consumer warpgroup, warps 0-3) x DN tokens (its N:
// 8, 16, 32 or 64), over the whole of K; a producer warp (warp 4) feeds a ring of stages.
// CL blocks make a cluster: the same 64 weight rows, CL neighbouring token tiles.  Each block
// copies its 64 / CL rows of a weights box into every block of the cluster (multicast), and
// its own tokens.  A stage holds STAGE_KT k tiles of both, each its own 64-wide box (the
// 128-byte swizzle's row is 64 bf16): one barrier round trip per 128 of K, not per 64.
#define DEC_ROWS 64                // weight rows a block: one consumer warpgroup
#define DEC_THREADS (128 + 32)     // warps 0-3 the consumers (a warpgroup), warp 4 the producer
#define MAX_CL 2                   // blocks of a cluster
#define STAGE_KT 2                 // k tiles a stage (v40's page has the alternative, one)
template <int DN> __host__ __device__ constexpr int dec_stages() {
    return 192 * 1024 / (STAGE_KT * (DEC_ROWS * BK * 2 + DN * BK * 2));   // 8 KB of weights + DN x 128 B of tokens a k tile
}
template <int DN> struct DecStage {
    __nv_bfloat16 Ws[STAGE_KT][DEC_ROWS][BK];   // 8 KB a k tile, 1024-byte aligned
    __nv_bfloat16 Ts[STAGE_KT][DN][BK];         // DN x 128 B: whole 1024-byte swizzle periods for DN % 8 == 0
};
template <int DN> constexpr size_t dec_smem_bytes() { return dec_stages<DN>() * sizeof(DecStage<DN>) + 1024; }
static_assert(dec_smem_bytes<8>() + 1024 <= 227 * 1024 && dec_smem_bytes<64>() + 1024 <= 227 * 1024, "the decode ring fits");
static_assert(dec_stages<64>() - WG_PENDING >= 2, "a stage in flight, one multiplied, WG_PENDING still read");

// C (M tokens x N weights) = T W^T, swapped: a block computes the 64 x DN piece
// W[row0 .. row0 + 63] T[col0 .. col0 + DN - 1]^T over all of K and stores it transposed.
// Cluster unit cu: weight tile cu % wtiles, token group cu / wtiles; the block of rank r
// takes token tile group x CL + r (past M: zeros in, nothing out).  The blocks of a cluster
// walk the same units in lockstep (one unit each when the plan chose the decode tile).
template <int DN, int CL>
__global__ void __launch_bounds__(DEC_THREADS, 1)
gemm_decode(int N, int M, int tilesK, int wtiles, int cunits, const __grid_constant__ CUtensorMap mapW,
            const __grid_constant__ CUtensorMap mapT, __nv_bfloat16 *C) {
    constexpr int STAGES = dec_stages<DN>();
    extern __shared__ __align__(1024) unsigned char smem[];
    const unsigned misalign = (unsigned)__cvta_generic_to_shared(smem) % 1024;
    DecStage<DN> *st = reinterpret_cast<DecStage<DN> *>(smem + (1024 - misalign) % 1024);
    __shared__ uint64_t full[STAGES], empty[STAGES];
    const int rank = CL > 1 ? (int)cluster_rank() : 0;
    const int cluster = blockIdx.x / CL, clusters = gridDim.x / CL;
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int steps = (tilesK + STAGE_KT - 1) / STAGE_KT;   // stages a unit
    if (threadIdx.x == 0) {
        for (int s = 0; s < STAGES; ++s) {
            mbar_init(&full[s], 1);
            mbar_init(&empty[s], 4 * CL);   // one arrival per consumer warp of the cluster
        }
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    }
    if constexpr (CL > 1) cluster_sync();   // every block's barriers set before any block signals them
    else __syncthreads();

    if (warp == 4) {   // ---- producer ----------------------------------------------------
        if (lane == 0) {
            int it = 0;
            for (int cu = cluster; cu < cunits; cu += clusters) {
                const int row0 = cu % wtiles * DEC_ROWS, col0 = (cu / wtiles * CL + rank) * DN;
                for (int ks = 0; ks < steps; ++ks, ++it) {
                    const int stg = it % STAGES, f = it / STAGES;
                    if (f > 0) mbar_wait(&empty[stg], (f - 1) & 1);   // every block of the cluster released fill f - 1
                    mbar_arrive_expect_tx(&full[stg], sizeof(DecStage<DN>));
#pragma unroll
                    for (int q = 0; q < STAGE_KT; ++q) {
                        const int k0 = (ks * STAGE_KT + q) * BK;
                        tma_load(st[stg].Ts[q], &mapT, k0, col0, &full[stg]);
                        if constexpr (CL == 1) tma_load(st[stg].Ws[q], &mapW, k0, row0, &full[stg]);
                        else   // our slice of the weights' box, into every block of the cluster
                            tma_load_mc(st[stg].Ws[q][DEC_ROWS / CL * rank], &mapW, k0, row0 + DEC_ROWS / CL * rank,
                                        &full[stg], (uint16_t)((1u << CL) - 1));
                    }
                }
            }
            // Leave only after the last release of every stage: then no arrival from a peer's
            // consumers can reach a block that has gone (v24).
            if constexpr (CL > 1)
                for (int j = max(it - STAGES, 0); j < it; ++j) mbar_wait(&empty[j % STAGES], (j / STAGES) & 1);
        }
    } else {           // ---- consumers ---------------------------------------------------
        const int g = lane / 4, t = lane % 4;
        int it = 0;
        for (int cu = cluster; cu < cunits; cu += clusters) {
            const int row0 = cu % wtiles * DEC_ROWS, col0 = (cu / wtiles * CL + rank) * DN;
            float acc[DN / 2];
            // No batch reads stage i any more: lane r tells block r of the cluster (v24).
            auto release = [&](int i) {
                if constexpr (CL == 1) { if (lane == 0) mbar_arrive(&empty[i % STAGES]); }
                else if (lane < CL) mbar_arrive_cluster(&empty[i % STAGES], lane);
            };
            // One stage: wait for it, 4 x STAGE_KT wgmmas in one batch, leave WG_PENDING
            // batches running, release the stage the last finished batch read.
            auto k_step = [&](int ks) {
                const int stg = it % STAGES;
                mbar_wait(&full[stg], (it / STAGES) & 1);
                __syncwarp();
                wgmma_fence();
#pragma unroll
                for (int q = 0; q < STAGE_KT; ++q) {
                    const uint64_t dw = make_desc(st[stg].Ws[q]), dt = make_desc(st[stg].Ts[q]);
#pragma unroll
                    for (int kk = 0; kk < BK / 16; ++kk) wgmma_m64nNk16(acc, dw + 2 * kk, dt + 2 * kk, ks > 0 || q > 0 || kk > 0);
                }
                wgmma_commit();
                wgmma_wait<WG_PENDING>();
                if (ks >= WG_PENDING) release(it - WG_PENDING);
                ++it;
            };
            int ks = 0;   // two stages a turn (v36)
            for (; ks + 1 < steps; ks += 2) {
                k_step(ks);
                k_step(ks + 1);
            }
            for (; ks < steps; ++ks) k_step(ks);
            wgmma_wait<0>();
            fence_acc(acc);
            for (int j = max(steps - WG_PENDING, 0); j < steps; ++j) release(it - steps + j);
            // acc[4 j + 2 h + e]: weight row0 + 16 warp + g + 8 h, token col0 + 8 j + 2 t + e; C[token][weight].
#pragma unroll
            for (int j = 0; j < DN / 8; ++j)
#pragma unroll
                for (int h = 0; h < 2; ++h)
#pragma unroll
                    for (int e = 0; e < 2; ++e) {
                        const int r = row0 + 16 * warp + g + 8 * h, c = col0 + 8 * j + 2 * t + e;
                        if (r < N && c < M) C[(size_t)c * N + r] = __float2bfloat16_rn(acc[4 * j + 2 * h + e]);
                    }
        }
    }
}

// A row-major rows x cols bf16 matrix as a 2-D tensor map in boxes of box_rows x box_cols,
// 128-byte swizzle (v21) or none (the tail box of C).  cols % 8 == 0: the row stride is a
// multiple of 16 bytes.
static CUtensorMap make_map(const kl_bf16 *base, int rows, int cols, int box_rows, int box_cols,
                            CUtensorMapSwizzle swizzle = CU_TENSOR_MAP_SWIZZLE_128B) {
    static PFN_cuTensorMapEncodeTiled_v12000 encode = NULL;
    if (!encode) {
        void *fn = NULL;
        cudaDriverEntryPointQueryResult found;
        CUDA_CHECK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault, &found));
        if (found != cudaDriverEntryPointSuccess || !fn) {
            fprintf(stderr, "step45: the driver has no cuTensorMapEncodeTiled (CUDA 12.0 or later needed)\n");
            exit(KL_EXIT_NO_GPU);
        }
        encode = (PFN_cuTensorMapEncodeTiled_v12000)fn;
    }
    CUtensorMap map;
    const cuuint64_t dims[2] = {(cuuint64_t)cols, (cuuint64_t)rows};
    const cuuint64_t strides[1] = {(cuuint64_t)cols * sizeof(kl_bf16)};
    const cuuint32_t box[2] = {(cuuint32_t)box_cols, (cuuint32_t)box_rows};
    const cuuint32_t elem_strides[2] = {1, 1};
    const CUresult r = encode(&map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, (void *)base, dims, strides, box, elem_strides,
                              CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle,
                              CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (r != CUDA_SUCCESS) {
        fprintf(stderr, "step45: cuTensorMapEncodeTiled failed (%d) for %d x %d at %p\n", (int)r, rows, cols, (void *)base);
        exit(KL_EXIT_USAGE);
    }
    return map;
}

// ---- the plan ---------------------------------------------------------------------
// A grid of one block per SM runs its units in waves of `sms`, and the busiest SM sets the
// time: waves x the time of one unit.  For the same K every width's unit has the same k
// steps, so a plan costs waves x tile_cost(BN), and the width with the least wins.
// tile_cost: the time of one k step of a 128 x BN tile in a full wave (132 tiles, K = 4096,
// ./step36 --swap 1 --bn BN -m 1536 -n 11BN -k 4096, the plan's row, time / 64) on the H100,
// in ns, for BN = 64, 80, .. 256, the mean of four passes in two processes (v36's notes,
// calls 1 and 2).
#define MIN_BN 64
#define MAX_BN 256
#define STEP_BN 16
static double tile_cost(int bn) {
    static const double ns[] = {363.1, 366.5, 368.6, 387.4, 431.4, 450.6, 488.8, 559.9, 574.1, 627.6, 666.2, 698.8, 762.0};
    return ns[(bn - MIN_BN) / STEP_BN];
}
// A split pays a partial tile written to L2 and read back: 1024^3 in 128 x 128 tiles took
// 11.4 us unsplit and 13.4 us in two (8 k tiles each) on the H100.  Worth it only for at
// least 16 k tiles (K = 1024) of work per unit.
#define MIN_K_TILES_PER_SPLIT 16
// swap: C^T = B A^T, bn activations wide.  work: the walk the kernel gets, made by plan_of().
// cl > 0: the decode tile instead (64 weight rows x bn tokens, clusters of cl, K whole);
// units then counts cluster units.
// cn: 2 for pairs of tiles side by side, else 1.  tiles and units count the blocks' tiles
// and units, a pair's tile past N included; waves count the pairs' units over the pairs the
// GPU holds at once.
struct Plan { int bn, split, swap; long long tiles, units, waves; Work work; int cl, cn, pp; };

static Plan plan_for(int m, int n, int bn, int split, int sms, int cn = 1) {
    Plan p = {bn, split, 0, 0, 0, 0, {}, 0, cn};
    const long long pairs = (long long)((m + BM - 1) / BM) * (((n + bn - 1) / bn + cn - 1) / cn);
    p.tiles = pairs * cn;
    p.units = p.tiles * split;
    p.waves = (pairs * split + sms / cn - 1) / (sms / cn);
    return p;
}

static int opt_split = 0, opt_swap = 0, opt_bn = 0;   // --split, --swap, --bn: 0 = chosen here
static int opt_dec = 0, opt_dn = 0, opt_cl = 0;       // --dec (1 never, 2 always), --dn, --cl: 0 = chosen here
static int opt_pp = 0;     // --pp: 0 chosen here, 1 never, 2 wherever the tile allows
static int opt_pair = 0;   // --pair: 0 chosen here, 1 never, 2 always

// If a grid of `tiles` leaves more than half the SMs idle, split K so that every SM gets a
// unit: split = SMs / tiles, at most 16 and no more than keeps 16 k tiles in each range.
static int split_for(long long tiles, int k, int sms) {
    if (opt_split) return opt_split;
    if (2 * tiles > sms) return 1;
    const int tilesK = (k + BK - 1) / BK;
    long long split = sms / tiles;
    if (split > MAX_SPLIT) split = MAX_SPLIT;
    if (split > tilesK / MIN_K_TILES_PER_SPLIT) split = tilesK / MIN_K_TILES_PER_SPLIT;
    return split < 1 ? 1 : (int)split;
}

// The width of least waves x tile_cost (the wider on a tie), from `widest` down in steps of 16.
static int least_cost_width(int m, int n, int sms, int widest) {
    int best = 0;
    double best_cost = 0;
    for (int bn = widest; bn >= MIN_BN; bn -= STEP_BN) {
        const double cost = plan_for(m, n, bn, 1, sms).waves * tile_cost(bn);
        if (!best || cost < best_cost) best = bn, best_cost = cost;
    }
    return best;
}
// 1. That width from MAX_BN down (--bn forces one).  2. split_for() on its tiles.
static Plan choose(int m, int n, int k, int sms) {
    const int best = opt_bn ? opt_bn : least_cost_width(m, n, sms, MAX_BN);
    return plan_for(m, n, best, split_for(plan_for(m, n, best, 1, sms).tiles, k, sms), sms);
}

// Pairs (this step).  Where the plan narrowed the tile to fill the GPU (at most half the
// widest) and N is at most PAIR_ACROSS tiles across, A is the big operand, streaming through
// L2, and each of its tiles is read by that few tiles.  Two tiles side by side then run as
// a cluster and read it once, multicast.  Not at 64 wide, where pairs lost, and only where
// the pairs take no more waves than the single tiles.
#define PAIR_ACROSS 4
#define PAIR_MIN_BN 80
static Plan choose_pair(int m, int n, int k, int sms, const Plan &single) {
    const int tilesN = (n + single.bn - 1) / single.bn;
    const bool pair = opt_pair ? opt_pair == 2
                               : single.bn >= PAIR_MIN_BN && 2 * single.bn <= MAX_BN && tilesN <= PAIR_ACROSS;
    if (!pair) return single;
    const Plan p = plan_for(m, n, single.bn, split_for(plan_for(m, n, single.bn, 1, sms, 2).tiles / 2, k, sms / 2), sms, 2);
    return opt_pair || p.waves <= single.waves ? p : single;
}

// Small M (v26): at M <= 64 the activations would fill 64 or fewer of a tile's 128 rows;
// swapped, the weights fill wgmma's M side (128 rows a block) and the activations its N side,
// n the smallest of 8, 16, 32, 64 that holds M.  Then v25's split rule on the weights' tiles.
static Plan choose_swapped(int m, int n, int k, int sms) {
    const int na = m <= 8 ? 8 : m <= 16 ? 16 : m <= 32 ? 32 : 64;
    const long long tiles = plan_for(n, m, na, 1, sms).tiles;   // the kernel's M is n, its N is m
    Plan p = plan_for(n, m, na, split_for(tiles, k, sms), sms);
    p.swap = 1;
    return p;
}

static bool swaps(int m) { return !opt_swap && m <= 64; }

static int accepts(const kl_problem *p, char *msg, size_t len) {
    if (opt_bn && (opt_bn % STEP_BN || opt_bn < MIN_BN)) {
        snprintf(msg, len, "--bn %d: the tile widths are %d to %d in steps of %d", opt_bn, MIN_BN, MAX_BN, STEP_BN);
        return 1;
    }
    if (opt_bn && swaps(p->m)) {
        snprintf(msg, len, "--bn %d: at M = %d the tile is swapped (its width is the activations); add --swap 1 to force a width",
                 opt_bn, p->m);
        return 1;
    }
    if (opt_pair == 2 && swaps(p->m)) {
        snprintf(msg, len, "--pair 2: at M = %d the tile is swapped and never paired; add --swap 1 to pair 128-row tiles", p->m);
        return 1;
    }
    if ((opt_dn || opt_cl) && opt_dec != 2) {
        snprintf(msg, len, "--%s: an option of the decode tile; add --dec 2 to force it", opt_dn ? "dn" : "cl");
        return 1;
    }
    if (opt_dec == 2 && (opt_split || opt_bn || opt_pair == 2)) {
        snprintf(msg, len, "--dec 2 with --%s: the decode tile never splits K, is 64 weight rows tall and never paired (drop one)",
                 opt_split ? "split" : opt_bn ? "bn" : "pair 2");
        return 1;
    }
    if (opt_pp == 2 && (opt_bn > PP_MAX_BN || opt_split > 1 || opt_pair == 2 || opt_dec == 2)) {
        snprintf(msg, len, "--pp 2 with --%s: ping-pong runs single 128-row tiles, K whole, at most %d wide (drop one)",
                 opt_bn > PP_MAX_BN ? "bn wider than 192" : opt_split > 1 ? "split" : opt_pair == 2 ? "pair 2" : "dec 2",
                 PP_MAX_BN);
        return 1;
    }
    if (opt_dn && opt_dn != 8 && opt_dn != 16 && opt_dn != 32 && opt_dn != 64) {
        snprintf(msg, len, "--dn %d: the decode tile takes 8, 16, 32 or 64 tokens", opt_dn);
        return 1;
    }
    const int tilesK = (p->k + BK - 1) / BK;
    if (opt_split > tilesK) {
        snprintf(msg, len, "--split %d: K = %d has %d k tile%s of %d; give --split %d or less", opt_split, p->k, tilesK,
                 tilesK == 1 ? "" : "s", BK, tilesK);
        return 1;
    }
    return 0;
}

// The walk of a plan for the kernel's km x kn (swapped: the weights' N x the activations' M),
// with the divisors of unit_at().
static Work work_for(int km, int kn, int k, int bn, int split, int cn) {
    Work w = {(km + BM - 1) / BM, ((kn + bn - 1) / bn + cn - 1) / cn, (k + BK - 1) / BK, split, NULL, NULL, {}, {}, {}};
    w.by_split = make_divisor(split);
    w.by_group = make_divisor(GROUP_M * w.cols);
    w.by_last = make_divisor(w.tilesM % GROUP_M ? w.tilesM % GROUP_M : GROUP_M);
    return w;
}

// Each divisor of w, checked against `/` at every n unit_at() will divide by it: the units,
// the tiles, a group's tiles and the k ranges' bounds (a few million at most, once a problem).
static bool divisors_hold(const Work &w, char *msg, size_t len) {
    const long long pairs = (long long)w.tilesM * w.cols, units = pairs * w.split;
    struct { const Divisor *v; long long end; } uses[] = {{&w.by_split, units}, {&w.by_group, pairs},
                                                          {&w.by_last, (long long)GROUP_M * w.cols}};
    for (const auto &use : uses)
        for (long long n = 0; n < use.end; ++n)
            if (divide((int)n, *use.v) != n / use.v->d) {
                snprintf(msg, len, "%lld / %d by multiply-high gave %d", n, use.v->d, divide((int)n, *use.v));
                return false;
            }
    for (int s = 0; s <= w.split; ++s)
        if (divide(w.tilesK * s, w.by_split) != w.tilesK * s / w.split) {
            snprintf(msg, len, "%d / %d by multiply-high gave %d", w.tilesK * s, w.split, divide(w.tilesK * s, w.by_split));
            return false;
        }
    return true;
}


template <int BN, bool TMA_STORE, bool SWAP, int CN> static void allow_smem() {
    CUDA_CHECK(cudaFuncSetAttribute(gemm_split<BN, TMA_STORE, SWAP, CN>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                    (int)smem_bytes<BN>()));
}
// A launch of the split kernel in clusters of C blocks: the cluster's size is an attribute
// of the launch, written into *attr, which the config points to.
template <int BN, int C> static cudaLaunchConfig_t split_config(unsigned grid, cudaStream_t stream, cudaLaunchAttribute *attr) {
    *attr = {};
    attr->id = cudaLaunchAttributeClusterDimension;
    attr->val.clusterDim.x = C, attr->val.clusterDim.y = 1, attr->val.clusterDim.z = 1;
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(grid), cfg.blockDim = dim3(NUM_THREADS), cfg.dynamicSmemBytes = smem_bytes<BN>();
    cfg.stream = stream, cfg.attrs = attr, cfg.numAttrs = 1;
    return cfg;
}
// Once per kernel: its shared memory, and the pairs resident at once (single tiles: blocks).
template <int BN, bool SWAP = false, int CN = 1> static int prepare() {
    static int most = 0;
    if (!most) {
        allow_smem<BN, false, SWAP, CN>();
        if constexpr (!SWAP) allow_smem<BN, true, false, CN>();
        if constexpr (!SWAP && CN == 1 && BN <= 192)
            CUDA_CHECK(cudaFuncSetAttribute(gemm_split<BN, true, false, 1, true>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem_bytes<BN>()));
        if constexpr (CN == 1) {
            most = kl_blocks_at_once((const void *)gemm_split<BN, false, SWAP, 1>, NUM_THREADS, smem_bytes<BN>());
        } else {
            cudaLaunchAttribute attr;
            const cudaLaunchConfig_t cfg = split_config<BN, CN>(CN, NULL, &attr);
            CUDA_CHECK(cudaOccupancyMaxActiveClusters(&most, (const void *)gemm_split<BN, true, false, CN>, &cfg));
            if (most < 1) {
                fprintf(stderr, "step45: no cluster of %d blocks of %zu KB fits on this GPU at once\n", CN, smem_bytes<BN>() / 1024);
                exit(KL_EXIT_NO_GPU);
            }
        }
    }
    return most;
}

template <int BN, bool SWAP, int CN = 1>
static void run_plan(int m, int n, int k, const Plan &p, const kl_bf16 *a, const kl_bf16 *b, kl_bf16 *c,
                     cudaStream_t stream) {
    // The maps depend on the pointers, sizes and box: built again when they change.
    static struct { const kl_bf16 *a, *b; kl_bf16 *c; int m, n, k; CUtensorMap mapA, mapB, mapC, mapCt; } cache = {};
    if (cache.a != a || cache.b != b || cache.c != c || cache.m != m || cache.n != n || cache.k != k) {
        // swapped: the weights on the M side; a pair: each block copies half of A's box
        cache.mapA = SWAP ? make_map(b, n, k, BM, BK) : make_map(a, m, k, BM / CN, BK);
        cache.mapB = SWAP ? make_map(a, m, k, BN, BK) : make_map(b, n, k, BN, BK);
        cache.mapC = {}, cache.mapCt = {};
        if (!SWAP && n % 8 == 0) {
            cache.mapC = make_map(c, m, n, 64, 64);
            if (BN % 64) cache.mapCt = make_map(c, m, n, 64, BN % 64, CU_TENSOR_MAP_SWIZZLE_NONE);   // the tail's box
        }
        cache.a = a, cache.b = b, cache.c = c, cache.m = m, cache.n = n, cache.k = k;
    }
    const int km = SWAP ? n : m, kn = SWAP ? m : n;   // the kernel's M and N
    Work w = p.work;
    if (p.split > 1) {
        // The workspace: a 64 x BN fp32 slot per unit and consumer, and a counter per tile and
        // consumer, zeroed once (the last unit of a tile sets its counter back to 0).  It grows
        // when a problem needs more, outside any timing that matters (the check runs first).
        static float *partials = NULL;
        static int *arrived = NULL;
        static size_t have_f = 0, have_c = 0;
        const size_t need_f = (size_t)p.units * CONSUMERS * 64 * BN, need_c = (size_t)p.units / p.split * CONSUMERS;
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
    const long long most = prepare<BN, SWAP, CN>(), groups = p.units / CN;   // pairs (blocks) at once; the pairs' units
    const unsigned grid = CN * (unsigned)(groups < most ? groups : most);
    __nv_bfloat16 *cc = (__nv_bfloat16 *)c;
    if constexpr (SWAP) {
        gemm_split<BN, false, true, 1><<<grid, NUM_THREADS, smem_bytes<BN>(), stream>>>(km, kn, w, cache.mapA, cache.mapB,
                                                                                        cache.mapC, cache.mapCt, cc);
    } else if constexpr (CN == 1) {
        if constexpr (BN <= 192) {
            if (n % 8 == 0 && p.pp) {
                gemm_split<BN, true, false, 1, true><<<grid, NUM_THREADS, smem_bytes<BN>(), stream>>>(m, n, w, cache.mapA, cache.mapB,
                                                                                                cache.mapC, cache.mapCt, cc);
                KL_CHECK_LAUNCH();
                return;
            }
        }
        if (n % 8 == 0)
            gemm_split<BN, true, false, 1><<<grid, NUM_THREADS, smem_bytes<BN>(), stream>>>(m, n, w, cache.mapA, cache.mapB,
                                                                                            cache.mapC, cache.mapCt, cc);
        else
            gemm_split<BN, false, false, 1><<<grid, NUM_THREADS, smem_bytes<BN>(), stream>>>(m, n, w, cache.mapA, cache.mapB,
                                                                                             cache.mapC, cache.mapCt, cc);
    } else {
        cudaLaunchAttribute attr;
        const cudaLaunchConfig_t cfg = split_config<BN, CN>(grid, stream, &attr);
        if (n % 8 == 0)
            CUDA_CHECK(cudaLaunchKernelEx(&cfg, gemm_split<BN, true, false, CN>, m, n, w, cache.mapA, cache.mapB,
                                          cache.mapC, cache.mapCt, cc));
        else
            CUDA_CHECK(cudaLaunchKernelEx(&cfg, gemm_split<BN, false, false, CN>, m, n, w, cache.mapA, cache.mapB,
                                          cache.mapC, cache.mapCt, cc));
    }
    KL_CHECK_LAUNCH();
}

// The decode tile (v40), at M <= 64, when its blocks fit the GPU at once and fill at
// least half of it: 64-row weight tiles, two token tiles each in clusters of two (M > 8), or
// one (the tokens whole) where two would not fit.  --bn and --split force v39's kernels;
// --dec 2 forces the decode kernel at any M (this step).
static bool decodes(int m, int n, int sms) {
    if (opt_dec == 1) return false;
    if (opt_dec == 2) return true;
    if (!swaps(m) || opt_bn || opt_split) return false;
    const long long wtiles = (n + DEC_ROWS - 1) / DEC_ROWS, blocks = (m > 8 && 2 * wtiles <= sms ? 2 : 1) * wtiles;
    return blocks <= sms && 2 * blocks >= sms;
}
// The small tile (v43): the decode kernel at M > 64, 32 tokens a block where that
// many blocks fit one wave, else 64 (0: neither fits).  Clusters of one: the pair lost at
// every shape measured (notes, call 2).
#define SMALL_DN 32
static int small_dn(int m, int n, int sms) {
    const long long wtiles = (n + DEC_ROWS - 1) / DEC_ROWS;
    for (int dn = SMALL_DN; dn <= 64; dn *= 2)
        if (wtiles * ((m + dn - 1) / dn) <= sms) return dn;
    return 0;
}
static Plan choose_decode(int m, int n, int sms) {
    Plan p = {};
    p.swap = 1;
    const long long wtiles = (n + DEC_ROWS - 1) / DEC_ROWS;
    if (m > 64) {   // the small tile
        p.cl = opt_cl ? opt_cl : 1;
        const int dn = small_dn(m, n, sms);
        p.bn = opt_dn ? opt_dn : dn ? dn : 64;
    } else {
        p.cl = opt_cl ? opt_cl : m > 8 && 2 * wtiles <= sms ? 2 : 1;
        const int per = (m + p.cl - 1) / p.cl;   // tokens a block: the smallest of 8, 16, 32, 64 that holds them
        p.bn = opt_dn ? opt_dn : per <= 8 ? 8 : per <= 16 ? 16 : per <= 32 ? 32 : 64;
    }
    p.split = 1;
    const long long ttiles = (m + p.bn - 1) / p.bn;
    p.units = wtiles * ((ttiles + p.cl - 1) / p.cl);   // cluster units
    return p;
}

// v43's rule: at M > 64, where v41's plan p (its pairs included) keeps at most half
// the SMs busy and the small tile's blocks, in one wave, are more than p's units.  Forced
// v41 kernels (--bn, --split, --pair 2) and --dec 1 keep v41's plan.
static bool takes_small(int m, int n, int sms, const Plan &p) {
    if (m <= 64 || p.swap || opt_dec == 1 || opt_bn || opt_split || opt_pair == 2 || 2 * p.units > sms) return false;
    return small_dn(m, n, sms) && choose_decode(m, n, sms).units > p.units;   // one block a cluster unit
}

// Ping-pong (this step), where p is single 128-row tiles, K whole, in at least two waves
// (every block has a second unit), and K is PP_MIN_KT to PP_MAX_KT k steps: the width of least
// waves x tile_cost up to PP_MAX_BN; --bn forces one, --pp 2 the rest.
static Plan choose_pp(int m, int n, int k, int sms, const Plan &p) {
    const bool fit = !p.swap && p.cl == 0 && p.cn == 1 && p.split == 1;
    if (!fit || opt_pp == 1) return p;
    const int tilesK = (k + BK - 1) / BK;
    if (opt_pp != 2 && (tilesK < PP_MIN_KT || tilesK > PP_MAX_KT || p.waves < 2)) return p;
    if (opt_bn > PP_MAX_BN) return p;
    Plan q = plan_for(m, n, opt_bn ? opt_bn : least_cost_width(m, n, sms, PP_MAX_BN), 1, sms);
    q.pp = 1;
    return q;
}
// The plan for m x n x k on `sms` SMs, and its walk, whose divisors are checked here, on the
// host, before the kernel relies on them.  pp: this step's ping-pong may be taken (v43: never).
static Plan plan_of(int m, int n, int k, int sms, bool pp) {
    if (decodes(m, n, sms)) return choose_decode(m, n, sms);
    Plan p = swaps(m) ? choose_swapped(m, n, k, sms) : choose(m, n, k, sms);
    if (!p.swap) p = choose_pair(m, n, k, sms, p);
    if (takes_small(m, n, sms, p)) return choose_decode(m, n, sms);
    if (pp) p = choose_pp(m, n, k, sms, p);
    p.work = p.swap ? work_for(n, m, k, p.bn, p.split, 1) : work_for(m, n, k, p.bn, p.split, p.cn);
    char why[128];
    if (!divisors_hold(p.work, why, sizeof why)) {
        fprintf(stderr, "step45: a divisor for %d x %d x %d is wrong (%s): make_divisor has a bug\n", m, n, k, why);
        exit(KL_EXIT_WRONG);
    }
    return p;
}

// A grid of the decode kernel in clusters of CL: the cluster's size is an attribute of the
// launch (cudaLaunchKernelEx), written into *attr, which the config points to.
template <int DN, int CL> static cudaLaunchConfig_t decode_config(unsigned grid, cudaStream_t stream,
                                                                  cudaLaunchAttribute *attr) {
    *attr = {};
    attr->id = cudaLaunchAttributeClusterDimension;
    attr->val.clusterDim.x = CL, attr->val.clusterDim.y = 1, attr->val.clusterDim.z = 1;
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(grid), cfg.blockDim = dim3(DEC_THREADS), cfg.dynamicSmemBytes = dec_smem_bytes<DN>();
    cfg.stream = stream, cfg.attrs = attr, cfg.numAttrs = 1;
    return cfg;
}

template <int DN, int CL> static int decode_clusters() {   // clusters resident at once, once per kernel
    static int most = 0;
    if (!most) {
        CUDA_CHECK(cudaFuncSetAttribute(gemm_decode<DN, CL>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                        (int)dec_smem_bytes<DN>()));
        cudaLaunchAttribute attr;
        const cudaLaunchConfig_t cfg = decode_config<DN, CL>(CL, NULL, &attr);
        CUDA_CHECK(cudaOccupancyMaxActiveClusters(&most, (const void *)gemm_decode<DN, CL>, &cfg));
        if (most < 1) {
            fprintf(stderr, "step45: no cluster of %d blocks of %zu KB fits on this GPU at once\n", CL,
                    dec_smem_bytes<DN>() / 1024);
            exit(KL_EXIT_NO_GPU);
        }
    }
    return most;
}

template <int DN, int CL>
static void run_decode(int m, int n, int k, const Plan &p, const kl_bf16 *a, const kl_bf16 *b, kl_bf16 *c,
                       cudaStream_t stream) {
    static struct { const kl_bf16 *a, *b; int m, n, k; CUtensorMap mapW, mapT; } cache = {};
    if (cache.a != a || cache.b != b || cache.m != m || cache.n != n || cache.k != k) {
        cache.mapW = make_map(b, n, k, DEC_ROWS / CL, BK);   // a block copies one slice of the shared box
        cache.mapT = make_map(a, m, k, DN, BK);
        cache.a = a, cache.b = b, cache.m = m, cache.n = n, cache.k = k;
    }
    const int most = decode_clusters<DN, CL>();
    const int wtiles = (n + DEC_ROWS - 1) / DEC_ROWS, tilesK = (k + BK - 1) / BK;
    const unsigned grid = CL * (unsigned)(p.units < most ? p.units : most);
    cudaLaunchAttribute attr;
    const cudaLaunchConfig_t cfg = decode_config<DN, CL>(grid, stream, &attr);
    CUDA_CHECK(cudaLaunchKernelEx(&cfg, gemm_decode<DN, CL>, n, m, tilesK, wtiles, (int)p.units, cache.mapW, cache.mapT,
                                  (__nv_bfloat16 *)c));
    KL_CHECK_LAUNCH();
}

// The plan, said in one line; the control's is marked.
static void say_plan(const Plan &p, const char *variant, int m, int n, int k, int sms) {
    if (p.cl)
        printf("  plan%s for %d x %d x %d: %s tile, 64 weight rows x %d tokens, clusters of %d, K whole: %lld "
               "cluster unit%s (%lld blocks) on %d SMs\n", variant, m, n, k, m > 64 ? "small" : "decode", p.bn, p.cl,
               p.units, p.units == 1 ? "" : "s", p.units * p.cl, sms);
    else if (p.swap)
        printf("  plan%s for %d x %d x %d: swapped, 128 weight rows x %d activations, split %d: %lld unit%s on %d SMs, "
               "%lld wave%s\n", variant, m, n, k, p.bn, p.split, p.units, p.units == 1 ? "" : "s", sms, p.waves,
               p.waves == 1 ? "" : "s");
    else if (p.cn > 1)
        printf("  plan%s for %d x %d x %d: tile 128 x %d in pairs sharing A, split %d: %lld unit%s (%lld pair units) on "
               "%d SMs, %lld wave%s\n", variant, m, n, k, p.bn, p.split, p.units, p.units == 1 ? "" : "s", p.units / 2,
               sms, p.waves, p.waves == 1 ? "" : "s");
    else
        printf("  plan%s for %d x %d x %d: tile 128 x %d, split %d: %lld unit%s on %d SMs, %lld wave%s%s\n", variant, m, n,
               k, p.bn, p.split, p.units, p.units == 1 ? "" : "s", sms, p.waves, p.waves == 1 ? "" : "s", p.pp ? ", ping-pong" : "");
}

// A variant: whether it may take ping-pong, and its plan for the problem in hand, chosen
// once per problem (not on every launch of the timed loop) and said above the problem's results.
struct Variant { bool pp; const char *name; kl_problem said; Plan p; };
static Variant chosen = {true, "", {0, 0, 0}, {}}, v43 = {false, " (v43)", {0, 0, 0}, {}};

static void show_plan(const kl_problem *q, int sms) {   // --plan SMS: no GPU
    for (const Variant *v : {&chosen, &v43}) say_plan(plan_of(q->m, q->n, q->k, sms, v->pp), v->name, q->m, q->n, q->k, sms);
    if (swaps(q->m)) return;
    printf("    waves x ns a k step:");   // the table the rule read, every width
    for (int bn = MAX_BN; bn >= MIN_BN; bn -= STEP_BN) {
        const Plan c = plan_for(q->m, q->n, bn, 1, sms);
        printf(" %d %lld x %.1f = %.0f%s", bn, c.waves, tile_cost(bn), c.waves * tile_cost(bn), bn > MIN_BN ? "," : "\n");
    }
}

static void launch(int m, int n, int k, const kl_bf16 *a, const kl_bf16 *b, kl_bf16 *c, void *ctx, cudaStream_t stream) {
    const int sms = prepare<256>();
    Variant *v = static_cast<Variant *>(ctx);
    if (m != v->said.m || n != v->said.n || k != v->said.k) {
        v->p = plan_of(m, n, k, sms, v->pp);
        say_plan(v->p, v->name, m, n, k, sms);
        v->said = (kl_problem){m, n, k};
    }
    const Plan &p = v->p;
#define WIDTH(B)                                                       \
    case B:                                                            \
        if (p.cn == 2) run_plan<B, false, 2>(m, n, k, p, a, b, c, stream); \
        else run_plan<B, false, 1>(m, n, k, p, a, b, c, stream);           \
        break;
#define SWAPPED(B) \
    case B: run_plan<B, true>(m, n, k, p, a, b, c, stream); break;
#define DECODE(D)                                                                                 \
    case D:                                                                                       \
        if (p.cl == 1) run_decode<D, 1>(m, n, k, p, a, b, c, stream);                             \
        else run_decode<D, 2>(m, n, k, p, a, b, c, stream);                                       \
        break;
    if (p.cl)
        switch (p.bn) { DECODE(8) DECODE(16) DECODE(32) DECODE(64) }
    else if (p.swap)
        switch (p.bn) { SWAPPED(8) SWAPPED(16) SWAPPED(32) SWAPPED(64) }
    else
        switch (p.bn) {
            WIDTH(64) WIDTH(80) WIDTH(96) WIDTH(112) WIDTH(128) WIDTH(144) WIDTH(160) WIDTH(176) WIDTH(192)
            WIDTH(208) WIDTH(224) WIDTH(240) WIDTH(256)
        }
#undef WIDTH
#undef SWAPPED
#undef DECODE
}

int main(int argc, char **argv) {
    kl_step step = {};
    step.number = 45;
    step.title = "ping-pong: where K is short, each consumer warpgroup whole tiles, one's C stored under the other's k loop (sm_90a)";
    step.min_cc = 90;
    step.only_cc = 90;
    step.smem_per_block = smem_bytes<256>();
    step.accepts = accepts;
    step.show_plan = show_plan;
    step.kernels[0].op = &kl_op_gemm_bf16_shapes;
    step.kernels[0].gemm_bf16 = launch;
    step.kernels[0].ctx = &chosen;
    step.kernels[1].op = &kl_op_gemm_bf16_shapes;
    step.kernels[1].variant = "v43";
    step.kernels[1].gemm_bf16 = launch;
    step.kernels[1].ctx = &v43;
    step.opts[0] = (kl_opt){"bn", "tile width: 64 to 256 in steps of 16 (0: chosen per problem)", &opt_bn, 0, MAX_BN};
    step.opts[1] = (kl_opt){"split", "k ranges per tile, 1 .. 16 (0: chosen per problem)", &opt_split, 0, MAX_SPLIT};
    step.opts[2] = (kl_opt){"swap", "C^T = B A^T: 0 at M <= 64 (the plan), 1 never", &opt_swap, 0, 1};
    step.opts[3] = (kl_opt){"dec", "the decode tile (64 rows a block): 0 chosen, 1 never, 2 always", &opt_dec, 0, 2};
    step.opts[4] = (kl_opt){"dn", "decode tile: tokens a block, 8 16 32 64 (0: chosen)", &opt_dn, 0, 64};
    step.opts[5] = (kl_opt){"cl", "decode tile: blocks a cluster, 1 or 2 (0: chosen)", &opt_cl, 0, MAX_CL};
    step.opts[6] = (kl_opt){"pair", "pairs of tiles side by side sharing A: 0 chosen, 1 never, 2 always", &opt_pair, 0, 2};
    step.opts[7] = (kl_opt){"pp", "ping-pong (single tiles, K whole, <= 192 wide): 0 chosen, 1 never, 2 wherever the tile allows",
                            &opt_pp, 0, 2};
    return kl_main(argc, argv, &step);
}
