// build: sm_90a
/*
 * Step 22 - warp specialization: a producer warpgroup and consumer warpgroups.
 *
 * v21 let thread 0 of the same 8 warps that run the wgmma also wait on the
 * empty barriers and issue the TMA copies, and every warp kept 154
 * registers whatever it did.  Here the roles split by warpgroup:
 *
 *   warpgroup 0       producer: one thread waits on empty[s], announces
 *                     the bytes on full[s] and issues the two TMA copies;
 *                     the rest of the warpgroup has nothing to do.
 *   warpgroups 1..    consumers: wait on full[s], 4 x wgmma m64n256k16,
 *                     release the stage on empty[s], then the epilogue.
 *
 * The producer needs a handful of registers, the consumers 128 accumulators
 * and more.  setmaxnreg moves registers between them at run time: the
 * producer gives its warps' registers back to the SM's pool
 * (setmaxnreg.dec to PRODUCER_REGS), the consumers take them
 * (setmaxnreg.inc to CONSUMER_REGS).  With a producer warpgroup on top, the
 * 128 x 256 tile is 3 warpgroups, 384 threads, 168 registers each at launch
 * (64K / 384, rounded down to 8).
 *
 * Napkin math, registers per SM (65536; one block per SM):
 *   launch:  384 x 168                = 64512
 *   after:   128 x (40 + 2 x 232)     = 64512   the producer's 128 x 128 freed
 *            registers become the consumers' 2 x 128 x 64 new ones
 * and per k tile the consumer warps issue no copy, no expect_tx and no wait
 * on an empty barrier: the producer runs ahead, limited by the ring only.
 * ptxas allocates the code after setmaxnreg.inc within the raised limit
 * (tools/setmaxnreg_demo.cu: 340 bytes of spills without it, none with it),
 * but compiles each wgmma within the cap at entry: with 3 consumers (192 x
 * 256, 512 threads, cap 128) one m64n256 does not compile (C7602).  Two
 * m64n128 per k step do, under a raised 160, and measured 7% slower at
 * 4096^3, level at 8192^3, 4% faster at 4096 x 14336 x 4096: the page says why.
 *
 * Build and run:   make step22 && ./step22          (an H100 or H200 only)
 */
#include "kl.h"

#include <cuda.h>   // CUtensorMap and its enums only: the driver is reached through the runtime
#include <cudaTypedefs.h>
#include <cuda_bf16.h>

#ifndef BM
#define BM 128   // 64 rows of C per consumer warpgroup
#endif
#ifndef BN
#define BN 256   // = the wgmma's n: one instruction spans the block's columns
#endif
#ifndef BK
#define BK 64
#endif
#ifndef STAGES
#define STAGES 4   // k tiles in the ring
#endif
#ifndef WG_PENDING
#define WG_PENDING 1   // wgmma batches left running across the next k tile (0 or 1)
#endif
#define CONSUMERS (BM / 64)                  // one consumer warpgroup per 64 rows
#define NUM_THREADS (128 * (CONSUMERS + 1))   // + the producer warpgroup
#ifndef PRODUCER_REGS
#define PRODUCER_REGS 40    // a loop counter, two addresses, a parity
#endif
#ifndef CONSUMER_REGS
#define CONSUMER_REGS 232   // 128 accumulators + descriptors, indices, the epilogue's addresses
#endif
static_assert(BM % 64 == 0 && BN == 256, "warpgroups of m64n256 tile the block");
static_assert(PRODUCER_REGS % 8 == 0 && CONSUMER_REGS % 8 == 0 && PRODUCER_REGS >= 24 && CONSUMER_REGS <= 256,
              "setmaxnreg takes multiples of 8 in 24..256");
static_assert(128 * (PRODUCER_REGS + CONSUMERS * CONSUMER_REGS) <= 65536,
              "the roles' registers fit the SM's 64K, or setmaxnreg.inc waits forever");
static_assert(BN / 2 + 26 <= 65536 / NUM_THREADS / 8 * 8,
              "each wgmma compiles within the cap at entry, whatever setmaxnreg.inc raises it to: m64n256 needs 154 "
              "registers there (C7602), so 512 threads (cap 128) would need two m64n128 (the page)");
static_assert(BM <= 256, "a TMA box has at most 256 rows");
static_assert(BK % 16 == 0, "k steps of 16");
static_assert(WG_PENDING == 0 || WG_PENDING == 1, "at most one batch in flight");
static_assert(STAGES - WG_PENDING - 1 >= 2, "a tile in flight, one multiplied, one being read by a running batch");

// SWIZZLE_128B: the TMA box's inner dimension is one 128-byte row, and
// wgmma reads it as SWIZZLE_128B only if each 8-row group starts on 1024 bytes.
static_assert(BK == 64, "BK bf16 = one 128-byte row");

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

// One box of the tensor map at element coordinates (k0, row0) into shared
// memory, counted on `bar` in bytes when it lands.  Out-of-bounds elements
// (rows past M or N, columns past K) arrive as zeros and count all the same.
__device__ __forceinline__ void tma_load(void *dst, const CUtensorMap *map, int k0, int row0, uint64_t *bar) {
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];\n"
                 ::"r"(smem_u32(dst)), "l"(map), "r"(k0), "r"(row0), "r"(smem_u32(bar)) : "memory");
}

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

// d (64 x 256 fp32, 128 per thread) += A (64 x 16, K-major) * B (256 x 16, K-major)^T,
// for the whole warpgroup; with accumulate = 0, d = A * B (the first k step:
// no zero-filling of d).  The trailing 1, 1, 0, 0: A and B scaled by +1,
// neither transposed (both K-major).
#define D8(i) "+f"(d[i]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3]), "+f"(d[i + 4]), "+f"(d[i + 5]), \
              "+f"(d[i + 6]), "+f"(d[i + 7])
__device__ __forceinline__ void wgmma_m64n256k16(float (&d)[BN / 2], uint64_t desc_a, uint64_t desc_b, int accumulate) {
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 {"
                 "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
                 "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
                 "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
                 "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, "
                 "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, "
                 "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, "
                 "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, "
                 "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127"
                 "}, %128, %129, p, 1, 1, 0, 0;\n}\n"
                 : D8(0), D8(8), D8(16), D8(24), D8(32), D8(40), D8(48), D8(56),
                   D8(64), D8(72), D8(80), D8(88), D8(96), D8(104), D8(112), D8(120)
                 : "l"(desc_a), "l"(desc_b), "r"(accumulate));
}
#undef D8

struct Stage {
    __nv_bfloat16 As[BM][BK];   // 128*64*2 = 16 KB, swizzled by the TMA (16 x 1024 bytes: groups stay aligned)
    __nv_bfloat16 Bs[BN][BK];   // 256*64*2 = 32 KB, swizzled by the TMA
};

// The producer fills stage kt % STAGES with k tile kt: one box of A, one of B.
__device__ __forceinline__ void fill(Stage &s, uint64_t *full, const CUtensorMap *mapA, const CUtensorMap *mapB,
                                     int kt, int row0, int col0) {
    mbar_arrive_expect_tx(full, sizeof(Stage));   // 48 KB, zero-filled edges included
    tma_load(s.As, mapA, kt * BK, row0, full);
    tma_load(s.Bs, mapB, kt * BK, col0, full);
}

__global__ void __launch_bounds__(NUM_THREADS)   // the register cap at entry (64K / threads), which setmaxnreg needs
gemm_ws(int M, int N, int K, const __grid_constant__ CUtensorMap mapA, const __grid_constant__ CUtensorMap mapB,
        __nv_bfloat16 *C) {
    extern __shared__ __align__(1024) unsigned char smem[];
    // The descriptors and the TMA's swizzle need 1024-byte alignment, which the
    // declaration does not guarantee for dynamic shared memory: round up (the launcher adds 1 KB).
    const unsigned misalign = (unsigned)__cvta_generic_to_shared(smem) % 1024;
    Stage *st = reinterpret_cast<Stage *>(smem + (1024 - misalign) % 1024);   // STAGES x 48 KB
    __shared__ uint64_t full[STAGES], empty[STAGES];   // the two mbarriers of each stage

    const int tilesN = (N + BN - 1) / BN;
    const int row0 = blockIdx.x / tilesN * BM, col0 = blockIdx.x % tilesN * BN;
    const int wg = threadIdx.x / 128;   // 0: the producer; 1.. : consumer wg - 1, rows 64 (wg - 1) ..
    const int tilesK = (K + BK - 1) / BK;   // columns past K arrive as zeros
    if (threadIdx.x == 0) {
        for (int s = 0; s < STAGES; ++s) {
            mbar_init(&full[s], 1);                  // the expect_tx arrival; the bytes do the rest
            mbar_init(&empty[s], 4 * CONSUMERS);     // one arrival per consumer warp
        }
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");   // visible to the copy engine
    }
    __syncthreads();   // the barriers are initialized before anyone waits on them

    if (wg == 0) {   // ---- producer ----------------------------------------------------
        setmaxnreg_dec<PRODUCER_REGS>();
        if (threadIdx.x == 0)
            for (int kt = 0; kt < tilesK; ++kt) {
                const int s = kt % STAGES, f = kt / STAGES;   // fill number f of stage s
                if (f > 0) mbar_wait(&empty[s], (f - 1) & 1);   // the consumers released fill f - 1
                fill(st[s], &full[s], &mapA, &mapB, kt, row0, col0);
            }
    } else {         // ---- consumers ---------------------------------------------------
        setmaxnreg_inc<CONSUMER_REGS>();
        const int cw = wg - 1;   // this warpgroup's rows: 64 cw .. 64 cw + 63 of the tile
        const int warp = threadIdx.x % 128 / 32, lane = threadIdx.x % 32;
        const int g = lane / 4, t = lane % 4;   // accumulator coordinates, as for mma.sync

        // 64 x 256 of C per warpgroup: 128 floats per thread, not zeroed (v20, C7515).
        float acc[BN / 2];
        for (int kt = 0; kt < tilesK; ++kt) {
            const int s = kt % STAGES;
            mbar_wait(&full[s], (kt / STAGES) & 1);   // tile kt has landed: fill number kt / STAGES of stage s
            __syncwarp();   // the warp together again before the .sync.aligned wgmma (v21)
            const uint64_t da = make_desc(st[s].As[64 * cw]), db = make_desc(st[s].Bs);
            wgmma_fence();   // the accumulators' registers are settled before the batch reads them
#pragma unroll
            for (int kk = 0; kk < BK / 16; ++kk)   // the next 16 of k: 32 bytes on, encoded >> 4
                wgmma_m64n256k16(acc, da + 2 * kk, db + 2 * kk, kt > 0 || kk > 0);
            wgmma_commit();
            wgmma_wait<WG_PENDING>();   // at most WG_PENDING batches of this warpgroup still running
            // Batch kt - WG_PENDING is done; release its stage one k tile later, so the
            // ring runs STAGES - WG_PENDING - 1 tiles ahead (v21's 2; at once measured slower).
            const int done = kt - WG_PENDING - 1;
            if (done >= 0 && lane == 0) mbar_arrive(&empty[done % STAGES]);
        }
        wgmma_wait<0>();
        fence_acc(acc);   // the epilogue reads acc only after the last batch is done

        // Accumulator layout of m64nN: warp w of the warpgroup holds rows 16 w ..
        // 16 w + 15; acc[4 j + 2 h + e] is row g + 8 h, column 8 j + 2 t + e: the
        // mma.sync C fragment, repeated N / 8 times along n.  Each pair of columns
        // is one 4-byte store when N is even (then it is aligned).
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

// A row-major rows x K bf16 matrix as a 2-D tensor map (dimension 0 = k, the
// contiguous one), read in boxes of box_rows x BK with the 128-byte swizzle.
// K % 8 == 0 makes the row stride a multiple of 16 bytes, as the TMA requires.
static CUtensorMap make_map(const kl_bf16 *base, int rows, int K, int box_rows) {
    static PFN_cuTensorMapEncodeTiled_v12000 encode = NULL;
    if (!encode) {   // the driver's entry point, through the runtime: no -lcuda
        void *fn = NULL;
        cudaDriverEntryPointQueryResult found;
        CUDA_CHECK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault, &found));
        if (found != cudaDriverEntryPointSuccess || !fn) {
            fprintf(stderr, "step22: the driver has no cuTensorMapEncodeTiled (CUDA 12.0 or later needed)\n");
            exit(KL_EXIT_NO_GPU);
        }
        encode = (PFN_cuTensorMapEncodeTiled_v12000)fn;
    }
    CUtensorMap map;
    const cuuint64_t dims[2] = {(cuuint64_t)K, (cuuint64_t)rows};
    const cuuint64_t strides[1] = {(cuuint64_t)K * sizeof(kl_bf16)};   // bytes from one row to the next
    const cuuint32_t box[2] = {BK, (cuuint32_t)box_rows};              // may exceed dims: the rest is zeros
    const cuuint32_t elem_strides[2] = {1, 1};
    const CUresult r = encode(&map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, (void *)base, dims, strides, box, elem_strides,
                              CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                              CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (r != CUDA_SUCCESS) {
        fprintf(stderr, "step22: cuTensorMapEncodeTiled failed (%d) for %d x %d at %p\n", (int)r, rows, K, (void *)base);
        exit(KL_EXIT_USAGE);
    }
    return map;
}

static void launch(int m, int n, int k, const kl_bf16 *a, const kl_bf16 *b, kl_bf16 *c, void *ctx,
                   cudaStream_t stream) {
    (void)ctx;
    const size_t smem = STAGES * sizeof(Stage) + 1024;   // 4 x 48 KB + 1 KB: 193 KB
    static bool once = false;
    if (!once) {
        int dev = 0, optin = 0;
        CUDA_CHECK(cudaGetDevice(&dev));
        CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
        if ((size_t)optin < smem) {
            fprintf(stderr, "step22: %d stages need %zu KB of shared memory per block; this GPU allows %d KB: "
                            "rebuild with -DSTAGES=3\n", STAGES, smem / 1024, optin / 1024);
            exit(KL_EXIT_NO_GPU);
        }
        CUDA_CHECK(cudaFuncSetAttribute(gemm_ws, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
        once = true;
    }
    // The maps depend on the pointers and sizes only: built again when they change,
    // not on every launch of the timed loop.
    static struct { const kl_bf16 *a, *b; int m, n, k; CUtensorMap mapA, mapB; } cache = {};
    if (cache.a != a || cache.b != b || cache.m != m || cache.n != n || cache.k != k) {
        cache.mapA = make_map(a, m, k, BM);
        cache.mapB = make_map(b, n, k, BN);
        cache.a = a, cache.b = b, cache.m = m, cache.n = n, cache.k = k;
    }
    const long long tiles = (long long)((m + BM - 1) / BM) * ((n + BN - 1) / BN);   // < 2^31 for any C that fits
    gemm_ws<<<(unsigned)tiles, NUM_THREADS, smem, stream>>>(m, n, k, cache.mapA, cache.mapB, (__nv_bfloat16 *)c);
    KL_CHECK_LAUNCH();
}

int main(int argc, char **argv) {
    kl_step step = {};
    step.number = 22;
    step.title = "warp specialization: a TMA producer warpgroup, wgmma consumers, setmaxnreg (sm_90a)";
    step.min_cc = 90;
    step.only_cc = 90;
    step.kernels[0].op = &kl_op_gemm_bf16;
    step.kernels[0].gemm_bf16 = launch;
    return kl_main(argc, argv, &step);
}
