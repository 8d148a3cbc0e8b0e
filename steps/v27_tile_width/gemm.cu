// build: sm_90a
/*
 * Step 27 - the tile's width: a whole number of waves.
 *
 * v25 and v26 choose between two tiles, 128 x 128 and 128 x 256.  A grid of tiles runs in
 * waves of one tile per SM, and the slowest SM sets the time: waves x (one tile's time).
 * With two widths the waves are often far from whole: 1536 x 1536 is 72 tiles of 128 x 256
 * on 132 SMs (60 idle) or 144 of 128 x 128 (2 waves, the second 12 tiles); 1024 x 1024 is
 * 64 tiles of 128 x 128 (68 SMs idle).  Two more widths fill them: 128 x 192 cuts
 * 1536 x 1536 into 96 tiles, one wave with 36 SMs idle but each tile three quarters of
 * the wide one's work; 128 x 64 cuts 1024 x 1024 into 128.
 *
 * A narrow tile multiplies more slowly per FLOP: each k step loads a 16 KB slice of A for
 * fewer columns of B, and its wgmmas are shorter.  So the plan weighs both: the time of a
 * k step of each width, measured once on the H100 (tile_cost), times the waves its grid
 * takes; the width with the least wins.  Everything else is v26's: split-K where tiles are
 * few, the swapped tile at M <= 64.
 *
 * --bn W forces a width (64, 128, 192 or 256); the variant "two_widths" plans with 128 and
 * 256 only, as v25 and v26 did: the control.
 * Build and run:   make step27 && ./step27          (an H100 or H200 only)
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
WGMMA_WIDTH(64, 4) WGMMA_WIDTH(128, 8) WGMMA_WIDTH(192, 12) WGMMA_WIDTH(256, 16)
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
static_assert(smem_bytes<256>() + 1024 <= 227 * 1024 && smem_bytes<192>() + 1024 <= 227 * 1024 &&
                  smem_bytes<128>() + 1024 <= 227 * 1024 &&
                  smem_bytes<64>() + 1024 <= 227 * 1024 && smem_bytes<8>() + 1024 <= 227 * 1024,
              "the ring, the C staging, the alignment and the barriers fit the 227 KB a block may have");

// The problem as the kernel walks it: units = tiles x split, unit u = (tile u / split, k range u % split).
struct Work {
    int tilesM, tilesN, tilesK, split;
    float *partials;   // split > 1: a 64 x BN fp32 slot per (unit, consumer)
    int *arrived;      // split > 1: a counter per (tile, consumer), 0 between launches
};

// v23's order: groups of GROUP_M M-tiles (the last may be shorter) walk across N one column at a time.
template <int BN> __device__ __forceinline__ void tile_origin(int t, int tilesM, int tilesN, int &row0, int &col0) {
    const int per_group = GROUP_M * tilesN, first = t / per_group * GROUP_M;
    const int rows = min(GROUP_M, tilesM - first), r = t % per_group;
    row0 = (first + r % rows) * BM;
    col0 = r / rows * BN;
}
// Split s of `split` covers k tiles [tilesK s / split, tilesK (s + 1) / split): sizes differ by one at most.
__device__ __forceinline__ int k_begin(int s, const Work &w) { return (int)((long long)w.tilesK * s / w.split); }

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
    if (!*last_flag) return false;
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
// register epilogue stores each accumulator at its transposed place in C.
template <int BN, bool TMA_STORE, bool SWAP = false>
__global__ void __launch_bounds__(NUM_THREADS, 1)
gemm_split(int M, int N, const Work w, const __grid_constant__ CUtensorMap mapA, const __grid_constant__ CUtensorMap mapB,
           const __grid_constant__ CUtensorMap mapC, __nv_bfloat16 *C) {
    constexpr int STAGES = stages<BN>();
    extern __shared__ __align__(1024) unsigned char smem[];
    const unsigned misalign = (unsigned)__cvta_generic_to_shared(smem) % 1024;   // the launcher adds 1 KB
    Stage<BN> *st = reinterpret_cast<Stage<BN> *>(smem + (1024 - misalign) % 1024);
    CBox *cs = reinterpret_cast<CBox *>(st + STAGES);
    __shared__ uint64_t full[STAGES], empty[STAGES];
    __shared__ int last_flag[CONSUMERS];   // the fix-up's answer, one per consumer warpgroup

    const int units = w.tilesM * w.tilesN * w.split;
    const int wg = threadIdx.x / 128;
    if (threadIdx.x == 0) {
        for (int s = 0; s < STAGES; ++s) {
            mbar_init(&full[s], 1);
            mbar_init(&empty[s], 4 * CONSUMERS);   // one arrival per consumer warp
        }
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    }
    __syncthreads();

    // Both roles walk the same units and count the same k tiles: `it`, never reset, is the ring's position.
    if (wg == 0) {   // ---- producer ----------------------------------------------------
        setmaxnreg_dec<PRODUCER_REGS>();
        if (threadIdx.x == 0) {
            int it = 0;
            for (int u = blockIdx.x; u < units; u += gridDim.x) {
                const int tile = u / w.split, s = u % w.split;
                int row0, col0;
                tile_origin<BN>(tile, w.tilesM, w.tilesN, row0, col0);
                const int kb = k_begin(s, w), ke = k_begin(s + 1, w);
                for (int kt = kb; kt < ke; ++kt, ++it) {
                    const int stg = it % STAGES, f = it / STAGES;
                    if (f > 0) mbar_wait(&empty[stg], (f - 1) & 1);   // the consumers released fill f - 1
                    mbar_arrive_expect_tx(&full[stg], sizeof(Stage<BN>));
                    tma_load(st[stg].As, &mapA, kt * BK, row0, &full[stg]);
                    tma_load(st[stg].Bs, &mapB, kt * BK, col0, &full[stg]);
                }
            }
        }
    } else {         // ---- consumers ---------------------------------------------------
        setmaxnreg_inc<CONSUMER_REGS>();
        const int cw = wg - 1;
        const int warp = threadIdx.x % 128 / 32, lane = threadIdx.x % 32;
        const int g = lane / 4, t = lane % 4;
        CBox *mine = cs + cw * (CS_COLS / 64);
        int it = 0;
        for (int u = blockIdx.x; u < units; u += gridDim.x) {
            const int tile = u / w.split, s = u % w.split;
            int row0, col0;
            tile_origin<BN>(tile, w.tilesM, w.tilesN, row0, col0);
            const int kb = k_begin(s, w), ke = k_begin(s + 1, w);
            float acc[BN / 2];
            for (int kt = kb; kt < ke; ++kt, ++it) {
                const int stg = it % STAGES;
                mbar_wait(&full[stg], (it / STAGES) & 1);
                __syncwarp();
                const uint64_t da = make_desc(st[stg].As[64 * cw]), db = make_desc(st[stg].Bs);
                wgmma_fence();
#pragma unroll
                for (int kk = 0; kk < BK / 16; ++kk) wgmma_m64nNk16(acc, da + 2 * kk, db + 2 * kk, kt > kb || kk > 0);
                wgmma_commit();
                wgmma_wait<WG_PENDING>();
                if (kt - kb >= WG_PENDING && lane == 0) mbar_arrive(&empty[(it - WG_PENDING) % STAGES]);
            }
            wgmma_wait<0>();
            fence_acc(acc);
            const int nk = ke - kb;
            if (lane == 0)   // this unit's last stages, released before the epilogue (v23)
                for (int j = max(nk - WG_PENDING, 0); j < nk; ++j) mbar_arrive(&empty[(it - nk + j) % STAGES]);

            if (w.split > 1 && !fix_up<BN>(acc, w, tile, s, cw, row0 + 64 * cw + 16 * warp < M, &last_flag[cw]))
                continue;   // our partial is in the workspace; the tile's last unit stores C

            // acc[4 j + 2 h + e] is row 16 warp + g + 8 h, column 8 j + 2 t + e of the warpgroup's 64 x BN (v20).
            if constexpr (TMA_STORE) {
#pragma unroll
                for (int c0 = 0; c0 < BN; c0 += CS_COLS) {
                    if (threadIdx.x % 128 == 0) bulk_wait_read();
                    wg_barrier(1 + cw);
#pragma unroll
                    for (int j = c0 / 8; j < (c0 + CS_COLS) / 8; ++j)
#pragma unroll
                        for (int h = 0; h < 2; ++h) {
                            if (j >= BN / 8) continue;   // BN 64 and 192: a last round of one box
                            const int r = 16 * warp + g + 8 * h;
                            char *box = reinterpret_cast<char *>(mine[(j - c0 / 8) / 8]);
                            *reinterpret_cast<__nv_bfloat162 *>(box + 128 * r + 16 * ((j % 8) ^ g) + 4 * t) =
                                __floats2bfloat162_rn(acc[4 * j + 2 * h], acc[4 * j + 2 * h + 1]);
                        }
                    fence_proxy_async();
                    wg_barrier(1 + cw);
                    if (threadIdx.x % 128 == 0) {
                        const int r0 = row0 + 64 * cw;
                        for (int b = 0; b < CS_COLS / 64; ++b)
                            if (c0 + 64 * b < BN && r0 < M && col0 + c0 + 64 * b < N) tma_store(&mapC, mine[b], col0 + c0 + 64 * b, r0);
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

// A row-major rows x cols bf16 matrix as a 2-D tensor map in boxes of box_rows x box_cols,
// 128-byte swizzle (v21).  cols % 8 == 0: the row stride is a multiple of 16 bytes.
static CUtensorMap make_map(const kl_bf16 *base, int rows, int cols, int box_rows, int box_cols) {
    static PFN_cuTensorMapEncodeTiled_v12000 encode = NULL;
    if (!encode) {
        void *fn = NULL;
        cudaDriverEntryPointQueryResult found;
        CUDA_CHECK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault, &found));
        if (found != cudaDriverEntryPointSuccess || !fn) {
            fprintf(stderr, "step27: the driver has no cuTensorMapEncodeTiled (CUDA 12.0 or later needed)\n");
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
                              CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                              CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (r != CUDA_SUCCESS) {
        fprintf(stderr, "step27: cuTensorMapEncodeTiled failed (%d) for %d x %d at %p\n", (int)r, rows, cols, (void *)base);
        exit(KL_EXIT_USAGE);
    }
    return map;
}

// ---- the plan ---------------------------------------------------------------------
// A grid of one block per SM runs its units in waves of `sms`, and the busiest SM sets the
// time: waves x the time of one unit.  For the same K every width's unit has the same k
// steps, so a plan costs waves x tile_cost(BN), and the width with the least wins.
// tile_cost: the time of one k step of a 128 x BN tile in a full wave (132 tiles, K = 4096,
// ./step27 --swap 1 --bn BN -m 1536 -n 11BN -k 4096) on the H100, in ns.  Per column the
// wide tile is the cheapest: 6.0, 3.5, 3.1, 3.1 ns (each k step loads a 16 KB slice of A
// for BN columns of B).
#define MIN_BN 64
#define MAX_BN 256
static double tile_cost(int bn) {
    static const double ns[] = {384, 452, 597, 783};   // BN 64, 128, 192, 256
    return ns[bn / 64 - 1];
}
// A split pays a partial tile written to L2 and read back: 1024^3 in 128 x 128 tiles took
// 11.4 us unsplit and 13.4 us in two (8 k tiles each) on the H100.  Worth it only for at
// least 16 k tiles (K = 1024) of work per unit.
#define MIN_K_TILES_PER_SPLIT 16
struct Plan { int bn, split, swap; long long tiles, units, waves; };   // swap: C^T = B A^T, bn activations wide

static Plan plan_for(int m, int n, int bn, int split, int sms) {
    Plan p = {bn, split, 0, 0, 0, 0};
    p.tiles = (long long)((m + BM - 1) / BM) * ((n + bn - 1) / bn);
    p.units = p.tiles * split;
    p.waves = (p.units + sms - 1) / sms;
    return p;
}

static int opt_split = 0, opt_swap = 0, opt_bn = 0;   // --split, --swap, --bn: 0 = chosen here

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

// 1. The width of least waves x tile_cost (the wider on a tie).  two_widths: 128 or 256 only,
// v26's rule (the SMs' busy share times the tile's speed, the same measure upside down).
// 2. split_for() on its tiles.
static Plan choose(int m, int n, int k, int sms, bool two_widths) {
    if (opt_bn) return plan_for(m, n, opt_bn, split_for(plan_for(m, n, opt_bn, 1, sms).tiles, k, sms), sms);   // both variants
    int best = 0;
    double best_cost = 0;
    for (int bn = MAX_BN; bn >= MIN_BN; bn -= 64) {
        if (two_widths && bn != 128 && bn != 256) continue;
        const double cost = plan_for(m, n, bn, 1, sms).waves * tile_cost(bn);
        if (!best || cost < best_cost) best = bn, best_cost = cost;
    }
    return plan_for(m, n, best, split_for(plan_for(m, n, best, 1, sms).tiles, k, sms), sms);
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
    if (opt_bn && opt_bn % 64) {
        snprintf(msg, len, "--bn %d: the tile widths are 64, 128, 192 and 256", opt_bn);
        return 1;
    }
    if (opt_bn && swaps(p->m)) {
        snprintf(msg, len, "--bn %d: at M = %d the tile is swapped (its width is the activations); add --swap 1 to force a width",
                 opt_bn, p->m);
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

struct Variant {
    int two_widths;     // 1: v26's plan (128 or 256 wide), the control
    kl_problem said;    // the problem planned last ...
    Plan plan;          // ... and its plan: chosen once, not on every launch of the timed loop
};

template <int BN, bool SWAP = false> static int prepare() {   // once per tile: shared memory, blocks at once
    static int grid_max = 0;
    if (!grid_max) {
        CUDA_CHECK(cudaFuncSetAttribute(gemm_split<BN, false, SWAP>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem_bytes<BN>()));
        if constexpr (!SWAP)
            CUDA_CHECK(cudaFuncSetAttribute(gemm_split<BN, true>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem_bytes<BN>()));
        grid_max = kl_blocks_at_once((const void *)gemm_split<BN, false, SWAP>, NUM_THREADS, smem_bytes<BN>());
    }
    return grid_max;
}

template <int BN, bool SWAP = false>
static void run_plan(int m, int n, int k, const Plan &p, const kl_bf16 *a, const kl_bf16 *b, kl_bf16 *c,
                     cudaStream_t stream) {
    // The maps depend on the pointers, sizes and box: built again when they change.
    static struct { const kl_bf16 *a, *b; kl_bf16 *c; int m, n, k; CUtensorMap mapA, mapB, mapC; } cache = {};
    if (cache.a != a || cache.b != b || cache.c != c || cache.m != m || cache.n != n || cache.k != k) {
        cache.mapA = SWAP ? make_map(b, n, k, BM, BK) : make_map(a, m, k, BM, BK);   // swapped: the weights on the M side
        cache.mapB = SWAP ? make_map(a, m, k, BN, BK) : make_map(b, n, k, BN, BK);
        cache.mapC = {};
        if (!SWAP && n % 8 == 0) cache.mapC = make_map(c, m, n, 64, 64);
        cache.a = a, cache.b = b, cache.c = c, cache.m = m, cache.n = n, cache.k = k;
    }
    const int km = SWAP ? n : m, kn = SWAP ? m : n;   // the kernel's M and N
    Work w = {(km + BM - 1) / BM, (kn + BN - 1) / BN, (k + BK - 1) / BK, p.split, NULL, NULL};
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
    const int grid_max = prepare<BN, SWAP>();
    const unsigned grid = (unsigned)(p.units < grid_max ? p.units : grid_max);
    if constexpr (SWAP)
        gemm_split<BN, false, true><<<grid, NUM_THREADS, smem_bytes<BN>(), stream>>>(km, kn, w, cache.mapA, cache.mapB,
                                                                                     cache.mapC, (__nv_bfloat16 *)c);
    else if (n % 8 == 0)
        gemm_split<BN, true><<<grid, NUM_THREADS, smem_bytes<BN>(), stream>>>(m, n, w, cache.mapA, cache.mapB, cache.mapC,
                                                                              (__nv_bfloat16 *)c);
    else
        gemm_split<BN, false><<<grid, NUM_THREADS, smem_bytes<BN>(), stream>>>(m, n, w, cache.mapA, cache.mapB, cache.mapC,
                                                                               (__nv_bfloat16 *)c);
    KL_CHECK_LAUNCH();
}

// The plan of variant v for m x n x k on `sms` SMs, said in one line.
static Plan plan_and_say(const Variant *v, int m, int n, int k, int sms) {
    const Plan p = swaps(m) ? choose_swapped(m, n, k, sms) : choose(m, n, k, sms, v->two_widths);
    const char *name = v->two_widths ? " (two_widths)" : "";
    if (p.swap)
        printf("  plan%s for %d x %d x %d: swapped, 128 weight rows x %d activations, split %d: %lld unit%s on %d SMs, "
               "%lld wave%s\n", name, m, n, k, p.bn, p.split, p.units, p.units == 1 ? "" : "s", sms, p.waves,
               p.waves == 1 ? "" : "s");
    else
        printf("  plan%s for %d x %d x %d: tile 128 x %d, split %d: %lld unit%s on %d SMs, %lld wave%s\n", name, m, n, k,
               p.bn, p.split, p.units, p.units == 1 ? "" : "s", sms, p.waves, p.waves == 1 ? "" : "s");
    return p;
}

static Variant chosen = {0, {0, 0, 0}, {}}, two_widths = {1, {0, 0, 0}, {}};

static void show_plan(const kl_problem *q, int sms) {   // --plan SMS: both variants' plans, no GPU
    plan_and_say(&chosen, q->m, q->n, q->k, sms);
    plan_and_say(&two_widths, q->m, q->n, q->k, sms);
}

static void launch(int m, int n, int k, const kl_bf16 *a, const kl_bf16 *b, kl_bf16 *c, void *ctx, cudaStream_t stream) {
    const int sms = prepare<256>();
    Variant *v = static_cast<Variant *>(ctx);
    if (m != v->said.m || n != v->said.n || k != v->said.k) {   // a new problem: plan it, and say so above its results
        v->plan = plan_and_say(v, m, n, k, sms);
        v->said = (kl_problem){m, n, k};
    }
    const Plan &p = v->plan;
#define WIDTH(B) \
    case B: run_plan<B>(m, n, k, p, a, b, c, stream); break;
#define SWAPPED(B) \
    case B: run_plan<B, true>(m, n, k, p, a, b, c, stream); break;
    if (p.swap)
        switch (p.bn) { SWAPPED(8) SWAPPED(16) SWAPPED(32) SWAPPED(64) }
    else
        switch (p.bn) {
            WIDTH(64) WIDTH(128) WIDTH(192) WIDTH(256)
        }
#undef WIDTH
#undef SWAPPED
}

int main(int argc, char **argv) {
    kl_step step = {};
    step.number = 27;
    step.title = "the tile's width per problem (64, 128, 192, 256): waves x a tile's time (sm_90a)";
    step.min_cc = 90;
    step.only_cc = 90;
    step.smem_per_block = smem_bytes<256>();
    step.accepts = accepts;
    step.show_plan = show_plan;
    step.kernels[0].op = &kl_op_gemm_bf16_shapes;
    step.kernels[0].gemm_bf16 = launch;
    step.kernels[0].ctx = &chosen;
    step.kernels[1].op = &kl_op_gemm_bf16_shapes;
    step.kernels[1].variant = "two_widths";
    step.kernels[1].gemm_bf16 = launch;
    step.kernels[1].ctx = &two_widths;
    step.opts[0] = (kl_opt){"bn", "tile width: 64, 128, 192 or 256 (0: chosen per problem)", &opt_bn, 0, MAX_BN};
    step.opts[1] = (kl_opt){"split", "k ranges per tile, 1 .. 16 (0: chosen per problem)", &opt_split, 0, MAX_SPLIT};
    step.opts[2] = (kl_opt){"swap", "C^T = B A^T: 0 at M <= 64 (the plan), 1 never", &opt_swap, 0, 1};
    return kl_main(argc, argv, &step);
}
