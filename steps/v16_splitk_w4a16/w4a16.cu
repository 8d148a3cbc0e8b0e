/*
 * Step 16 - W4A16 skinny GEMM, M = 1..16: dequantize int4 weights in
 * registers, multiply on the tensor cores, and split K across blocks.
 *
 * C[M][N] (fp32) = A[M][K] (fp16) x dequant(W)[N][K]^T, W in the int4 format
 * of quant.h (two columns per byte, even column in the low nibble; fp16 scale
 * s and zero z per 128 columns; w = (q - z) * s).
 *
 * Napkin math at N = K = 8192: the weights are 32 MB of nibbles plus 2 MB of
 * scales and zeros; A (256 KB at M = 16) and C (512 KB) are noise.  Read cold
 * at ~3 TB/s that is ~11 us, the floor.  cuBLAS fp16 on the dequantized
 * weights reads 128 MB: ~43 us at best (it takes ~50).
 * Arithmetic at M = 16: every weight is used 16 times, 2 FLOPs each, so
 * 64 FLOPs per byte of nibbles: 3 TB/s needs 190 TFLOPS.  The FP32 cores give
 * 132 SMs x 128 x 2 x 1.98 GHz = 67 TFLOPS (HFMA2 twice that), and the
 * dequantization needs those same cores; the tensor cores (mma.sync
 * m16n8k16, fp16 in, fp32 out) give several hundred.  So: dequantize into
 * mma fragments in registers, and let the tensor cores do the FMAs.
 * W is the mma's 16-row operand and A its 8-column one, so no tensor-core
 * row is padding: one mma per 16 x 16 weights at M <= 8, two at M = 9..16.
 *
 * Instructions: a warp owns 16 rows of W and spends 178 (M <= 8) to 201
 * (M > 8) instructions on one group of 128 k of them (2048 weights, 1 KB):
 * 72 dequantize (9 per 8 weights), 8 or 16 are mma, 20 or 40 read A, the
 * rest load scales, address and run the pipeline.  3 TB/s is 23 bytes per ns
 * per SM: a warp-group (1 KB) every ~80 cycles at 1.75 GHz, so ~2.4 of the 4
 * instructions per cycle that an SM's four schedulers can issue.  Under the
 * limit, but not by much.  (With A as the 16-row operand this step spent
 * ~625 instructions per 32 rows: 4 per cycle, all that the SM can issue.)
 *
 * Bytes in flight: to stream 3 TB/s with ~1 us of DRAM latency under load,
 * each SM needs ~23 KB of loads outstanding.  cp.async copies a group (8 KB
 * of nibbles for the block's 128 rows, and A) into a ring of STAGES = 3 slots
 * in shared memory, two groups ahead of the one being multiplied; no
 * register holds them.
 *
 * Decomposition: a block (8 warps, 80 registers a thread: 3 blocks per SM)
 * owns BN = 128 columns of C (rows of W) and all M rows.  8192 / 128 = 64
 * tiles: data parallel ("dp", one block per tile, all of K) fills 64 of 132
 * SMs.  SplitK also cuts K into S slices: 64 x S blocks, each adding its
 * partial tile into C ("splitk": atomicAdd, C zeroed first) or writing it to
 * a workspace that a second kernel sums in a fixed order ("splitk_det": the
 * same bits every run).  S comes from the table below (measured: see the
 * doc), or --split.  splitk zeroes C with a kernel that the GEMM overlaps
 * (programmatic dependent launch, sm_90): a memset in front cost ~1.5 us.
 *
 * Measured (H100, 8192 x 8192, S = 4): splitk 20.6-20.8 us at M = 1..8
 * (1.73 TB/s, 2.4x cuBLAS fp16), 24.1 us at M = 16 (2.1x).  DRAM is 57% busy
 * and the schedulers 41%: the doc shows where the rest goes.
 *
 * Build and run:   make step16 && ./step16
 *                  ./step16 -m 3 -n 1000 -k 4096 --check-only
 *                  ./step16 -n 8192 -k 8192 --split 4
 */
#include "kl.h"
#include <cuda_fp16.h>
#include <cstddef>

#ifndef MT
#define MT 1       // m16 mma tiles per warp: a warp owns 16 * MT = 16 rows of W
#endif
#ifndef WARPS
#define WARPS 8    // warps per block, side by side along N: BN = 8 x 16 = 128 rows of W
#endif
#ifndef STAGES
#define STAGES 3   // groups of 128 k in shared memory: STAGES - 1 of them in flight
#endif
#ifndef MIN_BLOCKS
#define MIN_BLOCKS 3   // blocks per SM we ask registers for: 3 x 256 threads -> <= 85 registers
#endif
#ifndef PDL
#define PDL 1      // 1: programmatic dependent launch hides splitk's zeroing of C (sm_90); 0: cudaMemsetAsync
#endif
#ifndef L2_PREFETCH
#define L2_PREFETCH 128   // bytes an L2 miss of a weight copy fetches from DRAM: 0 (the sector), 128, 256
#endif
#define GROUP 128  // KL_INT4_GROUP: one scale and one zero per 128 columns of W
#define BN (WARPS * 16 * MT)
#define ROWS (2 * MT)   // W rows per thread: g and g + 8 of each m16 tile
static_assert(MT >= 1 && MT <= 4, "MT m16 tiles: 8 * MT accumulator registers per n8 of M");
static_assert(WARPS >= 1 && WARPS * 32 <= 1024, "a block has at most 1024 threads");
static_assert(STAGES >= 2, "a pipeline needs a stage to fill while one is used");
static_assert(GROUP == 4 * 32, "4 threads x 32 nibbles cover one group of a row");
static_assert(L2_PREFETCH == 0 || L2_PREFETCH == 128 || L2_PREFETCH == 256, "cp.async knows .L2::128B and ::256B");

// One pipeline stage: one group (128 k) of the block's BN rows of W, and of A.
struct Stage {
    uint4 w[WARPS][ROWS][32];   // 16 bytes per thread per row: BN x 64 B = 8 KB
    uint4 a[16][16];            // 16 rows x 128 halves (swizzled 16-byte chunks) = 4 KB
};
static_assert(STAGES * sizeof(Stage) <= 48 * 1024, "static shared memory is at most 48 KB");

enum { OUT_STORE, OUT_ATOMIC, OUT_PARTIAL };

// Asynchronous 16-byte copy global -> shared (L2 only): no register holds the
// data in flight, so STAGES - 1 groups can be on their way at little cost.
// The weights' copies ask the L2 to fetch more than the 64 bytes a row's group
// needs: the row's next groups are what this block reads next.
#if L2_PREFETCH == 256
#define CP_ASYNC_W "cp.async.cg.shared.global.L2::256B [%0], [%1], 16;"
#elif L2_PREFETCH == 128
#define CP_ASYNC_W "cp.async.cg.shared.global.L2::128B [%0], [%1], 16;"
#else
#define CP_ASYNC_W "cp.async.cg.shared.global [%0], [%1], 16;"
#endif
__device__ __forceinline__ void cp_async16_w(unsigned smem, const void *gmem) {
    asm volatile(CP_ASYNC_W ::"r"(smem), "l"(gmem));
}
__device__ __forceinline__ void cp_async16(unsigned smem, const void *gmem) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(smem), "l"(gmem));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;"); }
template <int N> __device__ __forceinline__ void cp_async_wait() { asm volatile("cp.async.wait_group %0;" ::"n"(N)); }

// Programmatic dependent launch (sm_90): a kernel launched with the PDL
// attribute may start while the kernel before it in the stream still runs,
// once every block of that one has called griddep_launch_dependents; it must
// griddep_wait (which returns once the earlier kernel has finished and its
// writes are visible) before it touches what the earlier kernel writes.
// Without the attribute, or before sm_90, both are no-ops.
__device__ __forceinline__ void griddep_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}
__device__ __forceinline__ void griddep_launch_dependents() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.launch_dependents;");
#endif
}

// D = A (16x16, row) * B (16x8, col) + D, fp16 operands, fp32 accumulators.
__device__ __forceinline__ void mma_16816(float d[4], uint32_t a0, uint32_t a1, uint32_t a2,
                                          uint32_t a3, uint32_t b0, uint32_t b1) {
    asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
        "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}

__device__ __forceinline__ uint32_t h2u(__half2 h) { return *reinterpret_cast<uint32_t *>(&h); }
__device__ __forceinline__ __half2 u2h(uint32_t u) { return *reinterpret_cast<__half2 *>(&u); }

// (v & MASK) | bits in one LOP3.  Written in C it compiles into two: an
// instruction carries one 32-bit immediate, and MASK and 0x64006400 are two.
template <uint32_t MASK>
__device__ __forceinline__ uint32_t and_or(uint32_t v, uint32_t bits) {
    uint32_t r;
    asm("lop3.b32 %0, %1, %2, %3, 0xEA;" : "=r"(r) : "r"(v), "n"(MASK), "r"(bits));
    return r;
}

// Eight nibbles of one word (columns c..c+7, nibble i = column c+i) -> four
// half2 of (q - z), exact.  OR-ing a nibble into the mantissa of 1024.0
// (0x6400, passed in a register as magic) gives the fp16 number 1024 + q; a
// nibble at bits 4-7 gives 1024 + 16q.  One mask reaches two nibbles 16 bits
// apart, so the pairs come out as columns (0,4) (1,5) (2,6) (3,7); A is
// permuted to match (read_a).  z is an integer 0..15 (kl_quant_int4), so
// 1024 + z is exact in fp16.
__device__ __forceinline__ void dequant8(uint32_t v, uint32_t magic, __half2 z1024, __half2 z64, uint32_t b[4]) {
    const __half2 sixteenth = __float2half2_rn(1.0f / 16.0f);
    b[0] = h2u(__hsub2(u2h(and_or<0x000F000F>(v, magic)), z1024));             // (1024+q) - (1024+z)
    b[1] = h2u(__hfma2(u2h(and_or<0x00F000F0>(v, magic)), sixteenth, z64));    // (1024+16q)/16 - (64+z)
    v >>= 8;
    b[2] = h2u(__hsub2(u2h(and_or<0x000F000F>(v, magic)), z1024));
    b[3] = h2u(__hfma2(u2h(and_or<0x00F000F0>(v, magic)), sixteenth, z64));
}

// Row r of A in a stage is 16 chunks of 16 bytes; chunk c sits at
// c ^ swz(c, r).  Thread (g, t) reads chunks 4t..4t+3 of row g: without the
// XOR the 8 threads of a quarter-warp would hit only 2 of the 8 bank groups.
__device__ __forceinline__ int swz(int c, int r) { return ((c >> 2) & 2) | (r & 1); }

// Chunk w (columns 8w..8w+7) of this thread's 32 halves of row r (columns
// 32t..32t+31 of the group), as mma fragment words in the order dequant8
// produces the weights: pairs of columns (0,4) (1,5) (2,6) (3,7).  prmt picks
// two 16-bit halves out of two words.
__device__ __forceinline__ void read_a(const Stage &st, int r, int t, int w, uint32_t a[4]) {
    const int c = 4 * t + w;
    const uint4 x = st.a[r][c ^ swz(c, r)];   // x.x = columns (0,1), x.y = (2,3), x.z = (4,5), x.w = (6,7)
    a[0] = __byte_perm(x.x, x.z, 0x5410);     // (0, 4)
    a[1] = __byte_perm(x.x, x.z, 0x7632);     // (1, 5)
    a[2] = __byte_perm(x.y, x.w, 0x5410);     // (2, 6)
    a[3] = __byte_perm(x.y, x.w, 0x7632);     // (3, 7)
}

// One block: BN columns of C, all M rows, groups [grp0, grp1) of K (its split).
// The weights are the 16-row operand of the mma (A in PTX's names) and the
// activations the 8-column one (B): M <= 8 needs one mma per 16 x 16 of W,
// M = 9..16 two (M_HI: activation rows 8..15 are real).
template <bool M_HI>
__global__ void __launch_bounds__(WARPS * 32, MIN_BLOCKS)
w4a16_mma(kl_w4a16_args p, float *out, int splits, int mode) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
    __trap();   // mma.sync and cp.async need sm_80; the harness stops earlier (min_cc)
#else
    __shared__ Stage sm[STAGES];   // 3 x 12 KB = 36 KB
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    const int g = lane / 4, t = lane % 4;      // PTX's groupID and threadID_in_group
    const int M = p.m, N = p.n, K = p.k, G = K / GROUP;
    const int split = blockIdx.y;
    const int grp0 = (int)((long long)G * split / splits);
    const int grp1 = (int)((long long)G * (split + 1) / splits);
    const int nbase = blockIdx.x * BN + warp * 16 * MT;   // first W row (column of C) of this warp
    const __half *A = reinterpret_cast<const __half *>(p.a);
    constexpr int AROWS = M_HI ? 16 : 8;
    griddep_launch_dependents();   // splitk_det's sum_splits may launch now (it waits for us)

    // Thread (g, t) owns W rows nbase + 16i + g and + 8 (i < MT): it copies
    // and dequantizes their bytes 16t..16t+15 of each group (columns
    // 32t..32t+31), and scales their sums: mma rows g and g + 8 are C
    // fragment rows g and g + 8.  Rows past N are clamped: loaded (in
    // bounds), computed with, never stored.  Every address moves by a fixed
    // stride from one group to the next, so the row pointers are made once,
    // here, and the loop adds gr x stride (one IMAD.WIDE each).
    const uint8_t *wsrc[ROWS];   // this thread's 16 bytes of group 0 of row j
    const __half *zsrc[ROWS], *ssrc[ROWS];   // zero and scale of group 0 of row j
#pragma unroll
    for (int j = 0; j < ROWS; ++j) {   // j = 2i + half: row nbase + 16i + 8 half + g
        const size_t row = (size_t)min(nbase + 8 * j + g, N - 1);
        wsrc[j] = p.w + row * (K / 2) + 16 * t;
        zsrc[j] = reinterpret_cast<const __half *>(p.zeros) + row * G;
        ssrc[j] = reinterpret_cast<const __half *>(p.scales) + row * G;
    }
    // A is copied by the whole block, 16 bytes a thread; rows past M repeat row M-1.
    constexpr int ACOPY = (AROWS * 16 + WARPS * 32 - 1) / (WARPS * 32);   // chunks per thread
    const __half *asrc[ACOPY];
    int adst[ACOPY];
#pragma unroll
    for (int q = 0; q < ACOPY; ++q) {
        const int i = threadIdx.x + q * WARPS * 32, r = min(i / 16, AROWS - 1), c = i % 16;
        asrc[q] = A + (size_t)min(r, M - 1) * K + 8 * c;
        adst[q] = (int)offsetof(Stage, a) + (r * 16 + (c ^ swz(c, r))) * 16;
    }
    const unsigned smem = (unsigned)__cvta_generic_to_shared(sm);
    const int wdst = (int)offsetof(Stage, w) + (warp * ROWS * 32 + lane) * 16;

    // Start the copies of group gr into a stage.
    auto issue = [&](int gr, int slot) {
        if (gr < grp1) {
            const unsigned st = smem + slot * (unsigned)sizeof(Stage);
#pragma unroll
            for (int j = 0; j < ROWS; ++j) cp_async16_w(st + wdst + j * 32 * 16, wsrc[j] + (unsigned)gr * (GROUP / 2));
#pragma unroll
            for (int q = 0; q < ACOPY; ++q)
                if (ACOPY * WARPS * 32 == AROWS * 16 || threadIdx.x + q * WARPS * 32 < AROWS * 16)
                    cp_async16(st + adst[q], asrc[q] + (unsigned)gr * GROUP);
        }
        cp_async_commit();   // empty groups too: the count in cp_async_wait stays right
    };
    // Zero and scale of this thread's rows, one group ahead in registers.
    // 2 bytes per row: they go through L1, where one 32-byte sector serves 16 groups.
    auto load_zs = [&](int gr, __half z[ROWS], __half s[ROWS]) {
#pragma unroll
        for (int j = 0; j < ROWS; ++j) z[j] = zsrc[j][gr], s[j] = ssrc[j][gr];
    };

#pragma unroll
    for (int k = 0; k < STAGES - 1; ++k) issue(grp0 + k, k);
    __half z[ROWS], s[ROWS], z_next[ROWS], s_next[ROWS];
    load_zs(grp0, z, s);

    uint32_t magic = 0x64006400;      // fp16 1024.0 twice (see dequant8)
    asm volatile("" : "+r"(magic));   // opaque to the compiler: it stays in a register
    // acc[i][mh]: C fragment of m16 tile i and activation rows 8mh..8mh+7:
    // (W row g, a row 2t), (g, 2t+1), (g+8, 2t), (g+8, 2t+1).
    float acc[MT][2][4] = {};
    int slot = 0;   // stage of group gr; the one before it is refilled
    for (int gr = grp0; gr < grp1; ++gr) {
        cp_async_wait<STAGES - 2>();   // my copies of group gr have landed ...
        __syncthreads();               // ... and everyone's; and the stage used last is free again
        issue(gr + STAGES - 1, slot == 0 ? STAGES - 1 : slot - 1);
        if (gr + 1 < grp1) load_zs(gr + 1, z_next, s_next);
        const Stage &st = sm[slot];
        slot = slot == STAGES - 1 ? 0 : slot + 1;

        uint4 wq[ROWS];                  // 32 nibbles of each of this thread's rows
        __half2 z1024[ROWS], z64[ROWS];  // 1024 + z and -(64 + z), for dequant8
#pragma unroll
        for (int j = 0; j < ROWS; ++j) {
            wq[j] = st.w[warp][j][lane];
            const __half2 z2 = __half2half2(z[j]);   // exact: z is 0..15
            z1024[j] = __hadd2(z2, __float2half2_rn(1024.0f));
            z64[j] = __hneg2(__hadd2(z2, __float2half2_rn(64.0f)));
        }
        // The mma sums (q - z) * a over the group exactly (small integers times
        // fp16, in fp32); the scale of each row multiplies that once, in fp32.
        float part[MT][2][4] = {};
#pragma unroll
        for (int w = 0; w < 4; ++w) {    // columns 8w..8w+7 of this thread's 32
            uint32_t alo[4], ahi[4];     // activation rows g and g + 8 (the mma's B)
            read_a(st, g, t, w, alo);
            if (M_HI) read_a(st, g + 8, t, w, ahi);
#pragma unroll
            for (int i = 0; i < MT; ++i) {
                const uint32_t v0 = w == 0 ? wq[2 * i].x : w == 1 ? wq[2 * i].y : w == 2 ? wq[2 * i].z : wq[2 * i].w;
                const uint32_t v1 = w == 0 ? wq[2 * i + 1].x : w == 1 ? wq[2 * i + 1].y : w == 2 ? wq[2 * i + 1].z : wq[2 * i + 1].w;
                uint32_t b0[4], b1[4];   // W rows g and g + 8, pairs (0,4) (1,5) (2,6) (3,7)
                dequant8(v0, magic, z1024[2 * i], z64[2 * i], b0);
                dequant8(v1, magic, z1024[2 * i + 1], z64[2 * i + 1], b1);
#pragma unroll
                for (int h = 0; h < 2; ++h) {   // k slots 2t, 2t+1 = pair 2h; 2t+8, 2t+9 = pair 2h+1
                    mma_16816(part[i][0], b0[2 * h], b1[2 * h], b0[2 * h + 1], b1[2 * h + 1], alo[2 * h], alo[2 * h + 1]);
                    if (M_HI)
                        mma_16816(part[i][1], b0[2 * h], b1[2 * h], b0[2 * h + 1], b1[2 * h + 1], ahi[2 * h], ahi[2 * h + 1]);
                }
            }
        }
#pragma unroll
        for (int i = 0; i < MT; ++i) {
            const float s0 = __half2float(s[2 * i]), s1 = __half2float(s[2 * i + 1]);   // W rows g, g + 8
#pragma unroll
            for (int mh = 0; mh < (M_HI ? 2 : 1); ++mh) {
                acc[i][mh][0] = fmaf(s0, part[i][mh][0], acc[i][mh][0]);
                acc[i][mh][1] = fmaf(s0, part[i][mh][1], acc[i][mh][1]);
                acc[i][mh][2] = fmaf(s1, part[i][mh][2], acc[i][mh][2]);
                acc[i][mh][3] = fmaf(s1, part[i][mh][3], acc[i][mh][3]);
            }
        }
#pragma unroll
        for (int j = 0; j < ROWS; ++j) z[j] = z_next[j], s[j] = s_next[j];
    }

    // Write this block's tile: plainly (dp), added into C (splitk), or into
    // this split's own slice of the workspace (splitk_det).  splitk first
    // waits for the kernel that zeroes C, which ran alongside the loop above.
    if (mode == OUT_ATOMIC) griddep_wait();
    float *dst = mode == OUT_PARTIAL ? out + (size_t)split * M * N : out;
#pragma unroll
    for (int i = 0; i < MT; ++i)
#pragma unroll
        for (int mh = 0; mh < (M_HI ? 2 : 1); ++mh)
#pragma unroll
            for (int r = 0; r < 4; ++r) {
                const int m = 8 * mh + 2 * t + (r & 1), n = nbase + 16 * i + g + (r >= 2 ? 8 : 0);
                if (m >= M || n >= N) continue;
                float *c = dst + (size_t)m * N + n;
                if (mode == OUT_ATOMIC) atomicAdd(c, acc[i][mh][r]);
                else *c = acc[i][mh][r];
            }
#endif
}

// splitk's zeroing of C, in place of cudaMemsetAsync so that the GEMM can
// start (and stream its weights) before it ends.
__global__ void zero_c(float *c, size_t mn) {
    griddep_launch_dependents();
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < mn; i += (size_t)gridDim.x * blockDim.x)
        c[i] = 0.0f;
}

// splitk_det's second pass: C = sum of the S partial tiles, always in order s = 0, 1, ...
__global__ void sum_splits(const float *ws, float *c, size_t mn, int splits) {
    griddep_wait();   // the partial tiles are complete
    const size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i >= mn) return;
    float s = 0.0f;
    for (int k = 0; k < splits; ++k) s += ws[k * mn + i];
    c[i] = s;
}

// ---- the split factor -------------------------------------------------------
// Measured best S per shape (results/h100-80gb-hbm3/sweeps/step16.md) for
// M <= 1, 2, 4, 8, 16.  Other shapes: enough slices for about one full wave.
static const struct { int n, k; unsigned char s[5]; } split_table[] = {
    {4096, 4096, {8, 8, 8, 8, 8}},
    {8192, 8192, {4, 4, 4, 4, 4}},
    {16384, 16384, {2, 2, 2, 2, 3}},
    {11008, 4096, {4, 4, 3, 3, 3}},
    {4096, 11008, {8, 8, 8, 8, 8}},
    {14336, 4096, {2, 2, 2, 2, 2}},
    {4096, 14336, {8, 8, 8, 8, 8}},
    {128256, 4096, {2, 2, 2, 1, 1}},
};
static int g_split = 0;   // --split: 0 = the table

static int pick_split(int m, int n, int k) {
    if (g_split) return g_split;
    const int mi = m <= 1 ? 0 : m <= 2 ? 1 : m <= 4 ? 2 : m <= 8 ? 3 : 4;
    for (const auto &e : split_table)
        if (e.n == n && e.k == k) return e.s[mi];
    static int slots = 0;   // blocks resident on the whole GPU at once
    if (!slots) {
        int dev, sms, per_sm;
        CUDA_CHECK(cudaGetDevice(&dev));
        CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
        CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, w4a16_mma<true>, WARPS * 32, 0));
        slots = sms * per_sm;
    }
    const int tiles = (n + BN - 1) / BN;
    return (slots + tiles - 1) / tiles;
}

// Launch k<<<grid, block, 0, s>>>(args...), with the PDL attribute if pdl.
template <typename... P, typename... Args>
static void launch_k(void (*k)(P...), dim3 grid, dim3 block, cudaStream_t s, bool pdl, Args... args) {
    cudaLaunchAttribute attr;
    attr.id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attr.val.programmaticStreamSerializationAllowed = 1;
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = grid;
    cfg.blockDim = block;
    cfg.stream = s;
    cfg.attrs = &attr;
    cfg.numAttrs = pdl ? 1 : 0;
    CUDA_CHECK(cudaLaunchKernelEx(&cfg, k, args...));
    KL_CHECK_LAUNCH();
}

// PDL needs the kernels' machine code to be sm_90 or later (griddep_wait is
// compiled out before), not only the GPU.
static bool use_pdl() {
    static int ok = -1;
    if (ok < 0) {
        cudaFuncAttributes fa;
        CUDA_CHECK(cudaFuncGetAttributes(&fa, w4a16_mma<true>));
        ok = PDL && fa.binaryVersion >= 90;
    }
    return ok;
}

static void launch(const kl_w4a16_args *a, void *ctx, cudaStream_t stream) {
    const int mode = *static_cast<const int *>(ctx);
    const int G = a->k / GROUP, tiles = (a->n + BN - 1) / BN;
    int splits = mode == OUT_STORE ? 1 : pick_split(a->m, a->n, a->k);
    splits = min(min(splits, G), KL_W4A16_MAX_SPLIT);   // every slice gets at least one group
    const size_t mn = (size_t)a->m * a->n;
    float *out = mode == OUT_PARTIAL ? a->workspace : a->c;
    const bool pdl = use_pdl();
    if (mode == OUT_ATOMIC) {   // C = 0 first; with PDL the GEMM overlaps it
        if (pdl) launch_k(zero_c, dim3((unsigned)min((mn + 255) / 256, (size_t)1024)), dim3(256), stream, false, a->c, mn);
        else CUDA_CHECK(cudaMemsetAsync(a->c, 0, mn * sizeof(float), stream));
    }
    const dim3 grid(tiles, splits), block(WARPS * 32);
    const bool after_zero = pdl && mode == OUT_ATOMIC;
    if (a->m > 8) launch_k(w4a16_mma<true>, grid, block, stream, after_zero, *a, out, splits, mode);
    else launch_k(w4a16_mma<false>, grid, block, stream, after_zero, *a, out, splits, mode);
    if (mode == OUT_PARTIAL)
        launch_k(sum_splits, dim3((unsigned)((mn + 255) / 256)), dim3(256), stream, pdl, (const float *)a->workspace,
                 a->c, mn, splits);
}

static int accepts(const kl_problem *p, char *msg, size_t len) {
    if (p->k % GROUP) {
        snprintf(msg, len, "-k %d: this step needs K to be a multiple of %d (whole quantization groups)", p->k, GROUP);
        return 1;
    }
    if (p->m > 16) {
        snprintf(msg, len, "-m %d: this step is for skinny GEMMs, M = 1..16 (two n8 mma tiles of rows)", p->m);
        return 1;
    }
    return 0;
}

static int mode_dp = OUT_STORE, mode_splitk = OUT_ATOMIC, mode_det = OUT_PARTIAL;

int main(int argc, char **argv) {
    kl_step step = {};
    step.number = 16;
    step.title = "W4A16 skinny GEMM: int4 dequantized into tensor-core fragments, SplitK";
    step.min_cc = 80;   // mma.sync m16n8k16 with fp16 operands
    step.accepts = accepts;
    const char *names[3] = {"dp", "splitk", "splitk_det"};
    int *modes[3] = {&mode_dp, &mode_splitk, &mode_det};
    for (int i = 0; i < 3; ++i) {
        step.kernels[i].op = &kl_op_w4a16;
        step.kernels[i].variant = names[i];
        step.kernels[i].w4a16 = launch;
        step.kernels[i].ctx = modes[i];
    }
    step.opts[0] = {"split", "SplitK factor for splitk and splitk_det (0: the measured table)", &g_split, 0,
                    KL_W4A16_MAX_SPLIT};
    return kl_main(argc, argv, &step);
}
