// build: sm_90a
/*
 * Step 20 - wgmma: a warpgroup multiplies straight from shared memory (sm_90a).
 *
 * v19 keeps the tensor pipe 76-81% busy at ~410-425 TFLOPS: every warp must
 * first ldmatrix its fragments into registers, then issue 32 mma.sync, each
 * a small synchronous 16 x 8 x 16 product, and only 2 warps per scheduler
 * are there to hide the dependencies.  Hopper's own instruction changes the
 * contract:
 *
 *   wgmma.mma_async.m64n256k16: issued together by a warpgroup (4
 *     consecutive warps, 128 threads), it multiplies a 64 x 16 tile of A by a
 *     16 x 256 tile of B into a 64 x 256 fp32 accumulator held in the
 *     warpgroup's registers (128 floats per thread).  A and B are not in
 *     registers at all: each is named by a 64-bit descriptor (shared address,
 *     row-group stride, swizzle mode) and the tensor core reads shared memory
 *     itself.  It is asynchronous: wgmma.commit_group closes a batch,
 *     wgmma.wait_group N waits until at most N batches are unfinished.
 *
 * The tiles keep v18's layout (chunk c of row r at c ^ (r % 8)), which is
 * exactly the SWIZZLE_128B layout of a K-major tile with 128-byte rows, and
 * v19's cp.async ring keeps filling them.  One new fence: cp.async writes
 * through the generic proxy, wgmma reads through the async proxy, so each
 * thread issues fence.proxy.async after its copies land, before the barrier.
 *
 * Napkin math, per SM and clock: the dense bf16 peak is 4096 FLOP, so one
 * m64n256k16 (524,288 FLOP) is 128 clocks and a 128 x 256 x 64 block tile
 * (2 warpgroups x 4 wgmma) 1024 clocks.  Per warp and k tile that is 4
 * wgmma instructions where v19 issued 128 mma.sync and 32 ldmatrix.x4.  The
 * price moves to shared memory: per k tile the two warpgroups read
 * 2 x (8 + 32) KB and cp.async writes 48 KB: 128 KB per 1024 clocks, all
 * of the 128 bytes per clock an SM's shared memory delivers.  At the peak
 * both units would be saturated together; at v19's rate there is room.
 *
 * Build and run:   make step20 && ./step20          (an H100 or H200 only)
 */
#include "kl.h"

#include <cuda_bf16.h>

#ifndef BM
#define BM 128   // 64 rows of C per warpgroup
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
#define WG_PENDING 1   // wgmma batches left running across the next barrier (0 or 1)
#endif
#define NUM_THREADS (128 * (BM / 64))   // one warpgroup per 64 rows
static_assert(BM % 64 == 0 && BN == 256, "warpgroups of m64n256 tile the block");
static_assert(BK % 16 == 0, "k steps of 16");
static_assert(WG_PENDING == 0 || WG_PENDING == 1, "at most one batch in flight");
static_assert(STAGES - WG_PENDING >= 2, "a tile in flight, one multiplied, one being read by a running batch");

// The 128-byte swizzle below spreads the 8 chunks of a 128-byte row, and
// wgmma reads it as SWIZZLE_128B only if each 8-row group starts on 1024 bytes.
static_assert(BK == 64, "BK bf16 = one 128-byte row");
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

// Start copying ROWS x BK of a row-major matrix (rows of K elements) into a
// swizzled shared tile, 16 bytes (8 bf16) per copy; rows past `rows` and
// columns past K are zeros, so a partial tile multiplies as if padded.
template <int ROWS>
__device__ __forceinline__ void load_tile(__nv_bfloat16 (*tile)[BK], const __nv_bfloat16 *g, int rows,
                                          int K, int k0) {
    constexpr int COPIES = ROWS * BK / 8;
#pragma unroll
    for (int j = 0; j < (COPIES + NUM_THREADS - 1) / NUM_THREADS; ++j) {   // a constant trip count
        const int i = threadIdx.x + j * NUM_THREADS;
        if (COPIES % NUM_THREADS != 0 && i >= COPIES) break;   // (3 warpgroups: 2048 = 5 x 384 + 128)
        const int r = i / (BK / 8), c = i % (BK / 8);
        const bool valid = r < rows && k0 + 8 * c < K;
        cp_async16(chunk(tile, r, c), valid ? g + (size_t)r * K + k0 + 8 * c : g, valid);
    }
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

__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
template <int N>
__device__ __forceinline__ void wgmma_wait() { asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory"); }
// cp.async's writes (generic proxy) made visible to wgmma's reads (async proxy).
__device__ __forceinline__ void fence_proxy_async() { asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); }
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
    __nv_bfloat16 As[BM][BK];   // 128*64*2 = 16 KB, swizzled (16 x 1024 bytes: groups stay aligned)
    __nv_bfloat16 Bs[BN][BK];   // 256*64*2 = 32 KB, swizzled
};

__global__ void __launch_bounds__(NUM_THREADS, 1)
gemm_wgmma(int M, int N, int K, const __nv_bfloat16 *A, const __nv_bfloat16 *B, __nv_bfloat16 *C) {
    extern __shared__ __align__(1024) unsigned char smem[];
    // The descriptors need 1024-byte alignment, which the declaration does not
    // guarantee for dynamic shared memory: round up (the launcher adds 1 KB).
    const unsigned misalign = (unsigned)__cvta_generic_to_shared(smem) % 1024;
    Stage *st = reinterpret_cast<Stage *>(smem + (1024 - misalign) % 1024);   // STAGES x 48 KB

    const int tilesN = (N + BN - 1) / BN;
    const int row0 = blockIdx.x / tilesN * BM, col0 = blockIdx.x % tilesN * BN;
    const int wg = threadIdx.x / 128;   // this warpgroup's rows: 64 wg .. 64 wg + 63 of the tile
    const int warp = threadIdx.x % 128 / 32, lane = threadIdx.x % 32;
    const int g = lane / 4, t = lane % 4;   // accumulator coordinates, as for mma.sync

    // 64 x 256 of C per warpgroup: 128 floats per thread.  Not zeroed: the
    // first wgmma overwrites it, and zeroing it here (ordinary moves into
    // registers a running wgmma also writes) makes ptxas serialize every
    // wgmma of the kernel (its warning C7515).
    float acc[BN / 2];
    A += (size_t)row0 * K;
    B += (size_t)col0 * K;
    const int tilesK = (K + BK - 1) / BK;
    // The ring runs AHEAD tiles ahead; with a wgmma batch left running across
    // the barrier, one more buffer is still being read, so one tile less.
    constexpr int AHEAD = STAGES - 1 - WG_PENDING;
#pragma unroll
    for (int s = 0; s < AHEAD; ++s) {
        if (s < tilesK) {
            load_tile<BM>(st[s].As, A, M - row0, K, s * BK);
            load_tile<BN>(st[s].Bs, B, N - col0, K, s * BK);
        }
        cp_async_commit();   // (an empty group past the last tile keeps the count)
    }
    for (int kt = 0; kt < tilesK; ++kt) {
        cp_async_wait<AHEAD - 1>();   // this thread's copies of tile kt have landed
        fence_proxy_async();          // ... and are visible to the tensor cores
        __syncthreads();              // everyone's; and tile kt-1-WG_PENDING's batches are done
        const int next = kt + AHEAD;  // refill the buffer that tile used
        if (next < tilesK) {
            load_tile<BM>(st[next % STAGES].As, A, M - row0, K, next * BK);
            load_tile<BN>(st[next % STAGES].Bs, B, N - col0, K, next * BK);
        }
        cp_async_commit();
        const uint64_t da = make_desc(st[kt % STAGES].As[64 * wg]), db = make_desc(st[kt % STAGES].Bs);
        wgmma_fence();   // the accumulators' registers are settled before the batch reads them
#pragma unroll
        for (int kk = 0; kk < BK / 16; ++kk)   // the next 16 of k: 32 bytes on, encoded >> 4
            wgmma_m64n256k16(acc, da + 2 * kk, db + 2 * kk, kt > 0 || kk > 0);
        wgmma_commit();
        wgmma_wait<WG_PENDING>();   // at most WG_PENDING batches of this warpgroup still running
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
            const int r = row0 + 64 * wg + 16 * warp + g + 8 * h, c = col0 + 8 * j + 2 * t;
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

static void launch(int m, int n, int k, const kl_bf16 *a, const kl_bf16 *b, kl_bf16 *c, void *ctx,
                   cudaStream_t stream) {
    (void)ctx;
    const size_t smem = STAGES * sizeof(Stage) + 1024;   // 4 x 48 KB + 1 KB to align: 193 KB
    static bool once = false;
    if (!once) {
        int dev = 0, optin = 0;
        CUDA_CHECK(cudaGetDevice(&dev));
        CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
        if ((size_t)optin < smem) {
            fprintf(stderr, "step20: %d stages need %zu KB of shared memory per block; this GPU allows %d KB: "
                            "rebuild with -DSTAGES=3\n", STAGES, smem / 1024, optin / 1024);
            exit(KL_EXIT_NO_GPU);
        }
        CUDA_CHECK(cudaFuncSetAttribute(gemm_wgmma, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
        once = true;
    }
    const long long tiles = (long long)((m + BM - 1) / BM) * ((n + BN - 1) / BN);   // < 2^31 for any C that fits
    gemm_wgmma<<<(unsigned)tiles, NUM_THREADS, smem, stream>>>(
        m, n, k, (const __nv_bfloat16 *)a, (const __nv_bfloat16 *)b, (__nv_bfloat16 *)c);
    KL_CHECK_LAUNCH();
}

int main(int argc, char **argv) {
    kl_step step = {};
    step.number = 20;
    step.title = "wgmma m64n256k16 from shared-memory descriptors, 2 warpgroups, cp.async ring (sm_90a)";
    step.min_cc = 90;
    step.only_cc = 90;
    step.kernels[0].op = &kl_op_gemm_bf16;
    step.kernels[0].gemm_bf16 = launch;
    return kl_main(argc, argv, &step);
}
