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
 * weights reads 128 MB: ~43 us at best.
 * Arithmetic at M = 16: every weight is used 16 times, 2 FLOPs each, so
 * 64 FLOPs per byte of nibbles: 3 TB/s needs 190 TFLOPS.  The FP32 cores give
 * 132 SMs x 128 x 2 x 1.98 GHz = 67 TFLOPS (HFMA2 twice that), and the
 * dequantization needs those same cores; the tensor cores (mma.sync
 * m16n8k16, fp16 in, fp32 out) give several hundred.  So: dequantize into
 * mma fragments in registers, and let the tensor cores do the FMAs.
 *
 * Bytes in flight: to stream 3 TB/s with ~1 us of DRAM latency under load,
 * each SM needs ~23 KB of loads outstanding.  cp.async copies each group of
 * 128 k (8 KB of nibbles for the block's 128 rows, plus 4 KB of A) into
 * shared memory while the previous group is multiplied: 8 KB per block, 32 KB
 * per SM at 4 blocks, and no register holds them.  Measured, deeper rings
 * (-DSTAGES=3, 4) were slower: they only take L1 away (see the doc).
 *
 * Decomposition: a block owns BN = 128 columns of C (rows of W) and all M
 * rows.  8192 / 128 = 64 tiles: data parallel ("dp", one block per tile, all
 * of K) fills 64 of 132 SMs with one block each.  SplitK also cuts K into S
 * slices: 64 x S blocks, each adding its partial tile into C ("splitk":
 * atomicAdd, C zeroed first) or writing it to a workspace that a second
 * kernel sums in a fixed order ("splitk_det": the same bits every run).
 * Waves = tiles x S / (4 blocks per SM x 132 SMs); S comes from the table
 * below (measured: see the doc), or --split.
 *
 * Where the time goes (H100, N = K = 8192, S = 8, M = 1): 27 us, 1.33 TB/s,
 * 0.97 waves.  The limit is instructions, not bytes: a warp issues ~600
 * instructions per group of its 32 rows (2 KB of nibbles), under half of them
 * dequantization, mma and A; the rest addresses, scales, the pipeline.  The
 * doc shows the counters and what to cut next.
 *
 * Build and run:   make step16 && ./step16
 *                  ./step16 -m 3 -n 1000 -k 4096 --check-only
 *                  ./step16 -n 8192 -k 8192 --split 4
 */
#include "kl.h"
#include <cuda_fp16.h>

#ifndef NT
#define NT 4       // n8 mma tiles per warp: a warp owns 8 * NT = 32 rows of W
#endif
#ifndef WARPS
#define WARPS 4    // warps per block, side by side along N: BN = 128 rows of W
#endif
#ifndef STAGES
#define STAGES 2   // groups of 128 k in shared memory: STAGES - 1 of them in flight
#endif
#ifndef MIN_BLOCKS
#define MIN_BLOCKS 4   // blocks per SM we ask registers for: 4 x 128 threads -> <= 128 registers
#endif
#define GROUP 128  // KL_INT4_GROUP: one scale and one zero per 128 columns of W
#define BN (WARPS * 8 * NT)
static_assert(NT >= 1 && NT <= 8, "NT n8 tiles of accumulators: 4 * NT registers");
static_assert(WARPS >= 1 && WARPS * 32 <= 1024, "a block has at most 1024 threads");
static_assert(STAGES >= 2, "a pipeline needs a stage to fill while one is used");
static_assert(GROUP == 4 * 32, "4 threads x 32 nibbles cover one group of a row");

// One pipeline stage: one group (128 k) of the block's BN rows of W, and of A.
struct Stage {
    uint4 w[WARPS][NT][32];   // 16 bytes per thread per tile: BN x 64 B = 8 KB
    uint4 a[16][16];          // 16 rows x 128 halves (swizzled 16-byte chunks) = 4 KB
};
static_assert(STAGES * sizeof(Stage) <= 48 * 1024, "static shared memory is at most 48 KB");

enum { OUT_STORE, OUT_ATOMIC, OUT_PARTIAL };

// Asynchronous 16-byte copy global -> shared (L2 only): no register holds the
// data in flight, so STAGES - 1 groups can be on their way at little cost.
__device__ __forceinline__ void cp_async16(void *smem, const void *gmem) {
    const unsigned s = (unsigned)__cvta_generic_to_shared(smem);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(s), "l"(gmem));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;"); }
template <int N> __device__ __forceinline__ void cp_async_wait() { asm volatile("cp.async.wait_group %0;" ::"n"(N)); }

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

// Eight nibbles of one word (columns c..c+7, nibble i = column c+i) -> four
// half2 of (q - z), exact.  OR-ing a nibble into the mantissa of 1024.0
// (0x6400) gives the fp16 number 1024 + q; a nibble at bits 4-7 gives
// 1024 + 16q.  One mask reaches two nibbles 16 bits apart, so the pairs come
// out as columns (0,4) (1,5) (2,6) (3,7); A is permuted to match (read_a).
// z is an integer 0..15 (kl_quant_int4), so 1024 + z is exact in fp16.
__device__ __forceinline__ void dequant8(uint32_t v, __half2 z1024, __half2 z64, uint32_t b[4]) {
    const uint32_t MAGIC = 0x64006400, LO = 0x000F000F, HI = 0x00F000F0;
    const __half2 sixteenth = __float2half2_rn(1.0f / 16.0f);
    b[0] = h2u(__hsub2(u2h((v & LO) | MAGIC), z1024));                // (1024+q) - (1024+z)
    b[1] = h2u(__hfma2(u2h((v & HI) | MAGIC), sixteenth, z64));       // (1024+16q)/16 - (64+z)
    v >>= 8;
    b[2] = h2u(__hsub2(u2h((v & LO) | MAGIC), z1024));
    b[3] = h2u(__hfma2(u2h((v & HI) | MAGIC), sixteenth, z64));
}

// Row r of A in a stage is 16 chunks of 16 bytes; chunk c sits at
// c ^ swz(c, r).  Thread (g, t) reads chunks 4t..4t+3 of row g: without the
// XOR the 8 threads of a quarter-warp would hit only 2 of the 8 bank groups.
__device__ __forceinline__ int swz(int c, int r) { return ((c >> 2) & 2) | (r & 1); }

// Chunk w (columns 8w..8w+7) of this thread's 32 halves of row r (columns
// 32t..32t+31 of the group), as mma A-fragment words in the order dequant8
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
// M_HI: M > 8, so rows 8..15 of the 16-row mma tile are real rows of A.
template <bool M_HI>
__global__ void __launch_bounds__(WARPS * 32, MIN_BLOCKS)
w4a16_mma(kl_w4a16_args p, float *out, int splits, int mode) {
    __shared__ Stage sm[STAGES];   // 2 x 12 KB = 24 KB
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    const int g = lane / 4, t = lane % 4;      // PTX's groupID and threadID_in_group
    const int M = p.m, N = p.n, K = p.k, G = K / GROUP;
    const int split = blockIdx.y;
    const int grp0 = (int)((long long)G * split / splits);
    const int grp1 = (int)((long long)G * (split + 1) / splits);
    const int nbase = blockIdx.x * BN + warp * 8 * NT;   // first column of C of this warp
    const __half *A = reinterpret_cast<const __half *>(p.a);
    const __half *S = reinterpret_cast<const __half *>(p.scales);
    const __half *Z = reinterpret_cast<const __half *>(p.zeros);
    constexpr int AROWS = M_HI ? 16 : 8;

    // Start the copies of group gr into a stage.  Each thread copies the 16
    // bytes of W it will read itself; A is copied by the whole block.  Rows
    // past N or M are clamped: loaded (in bounds), computed, never stored.
    auto issue = [&](int gr, int slot) {
        if (gr < grp1) {
#pragma unroll
            for (int j = 0; j < NT; ++j) {
                const int row = min(nbase + 8 * j + g, N - 1);
                cp_async16(&sm[slot].w[warp][j][lane], p.w + (size_t)row * (K / 2) + (size_t)gr * (GROUP / 2) + 16 * t);
            }
            for (int i = threadIdx.x; i < AROWS * 16; i += WARPS * 32) {
                const int r = i / 16, c = i % 16;
                cp_async16(&sm[slot].a[r][c ^ swz(c, r)], A + (size_t)min(r, M - 1) * K + (size_t)gr * GROUP + 8 * c);
            }
        }
        cp_async_commit();   // empty groups too: the count in cp_async_wait stays right
    };
    // The zero of the W row this thread dequantizes (B column g) and the scales
    // of the two C columns it accumulates (2t, 2t+1), one group ahead in registers.
    auto load_sz = [&](int gr, __half z[NT], __half2 s01[NT]) {
#pragma unroll
        for (int j = 0; j < NT; ++j) {
            const int wrow = min(nbase + 8 * j + g, N - 1);
            const int c0 = min(nbase + 8 * j + 2 * t, N - 1), c1 = min(nbase + 8 * j + 2 * t + 1, N - 1);
            z[j] = Z[(size_t)wrow * G + gr];
            s01[j] = __halves2half2(S[(size_t)c0 * G + gr], S[(size_t)c1 * G + gr]);
        }
    };

#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) issue(grp0 + s, s);
    __half z[NT], z_next[NT];
    __half2 s01[NT], s01_next[NT];
    load_sz(grp0, z, s01);

    float acc[NT][4] = {};   // C fragment of tile j: (g, 2t) (g, 2t+1) (g+8, 2t) (g+8, 2t+1)
    for (int gr = grp0; gr < grp1; ++gr) {
        const int i = gr - grp0;
        cp_async_wait<STAGES - 2>();   // my copies of group gr have landed ...
        __syncthreads();               // ... and everyone's; and stage i-1 is free again
        issue(gr + STAGES - 1, (i + STAGES - 1) % STAGES);
        if (gr + 1 < grp1) load_sz(gr + 1, z_next, s01_next);
        const Stage &st = sm[i % STAGES];

        uint4 wq[NT];                // 32 nibbles of each of this thread's NT rows
        __half2 z1024[NT], z64[NT];  // 1024 + z and -(64 + z), for dequant8
#pragma unroll
        for (int j = 0; j < NT; ++j) {
            wq[j] = st.w[warp][j][lane];
            const float zf = __half2float(z[j]);
            z1024[j] = __float2half2_rn(1024.0f + zf);
            z64[j] = __float2half2_rn(-64.0f - zf);
        }
        // The mma sums (q - z) * a over the group exactly (small integers times
        // fp16, in fp32); the scale, one per column of C, multiplies that once.
        float part[NT][4] = {};
#pragma unroll
        for (int w = 0; w < 4; ++w) {    // 8 columns of A, reused by the NT tiles
            uint32_t alo[4], ahi[4] = {0, 0, 0, 0};
            read_a(st, g, t, w, alo);
            if (M_HI) read_a(st, g + 8, t, w, ahi);
#pragma unroll
            for (int j = 0; j < NT; ++j) {
                const uint32_t v = w == 0 ? wq[j].x : w == 1 ? wq[j].y : w == 2 ? wq[j].z : wq[j].w;
                uint32_t b[4];
                dequant8(v, z1024[j], z64[j], b);
                mma_16816(part[j], alo[0], ahi[0], alo[1], ahi[1], b[0], b[1]);
                mma_16816(part[j], alo[2], ahi[2], alo[3], ahi[3], b[2], b[3]);
            }
        }
#pragma unroll
        for (int j = 0; j < NT; ++j) {
            const float s0 = __low2float(s01[j]), s1 = __high2float(s01[j]);
            acc[j][0] = fmaf(s0, part[j][0], acc[j][0]);
            acc[j][1] = fmaf(s1, part[j][1], acc[j][1]);
            acc[j][2] = fmaf(s0, part[j][2], acc[j][2]);
            acc[j][3] = fmaf(s1, part[j][3], acc[j][3]);
        }
#pragma unroll
        for (int j = 0; j < NT; ++j) z[j] = z_next[j], s01[j] = s01_next[j];
    }

    // Write this block's tile: plainly (dp), added into C (splitk), or into
    // this split's own slice of the workspace (splitk_det).
    float *dst = mode == OUT_PARTIAL ? out + (size_t)split * M * N : out;
#pragma unroll
    for (int j = 0; j < NT; ++j)
#pragma unroll
        for (int r = 0; r < 4; ++r) {
            const int m = g + (r >= 2 ? 8 : 0), n = nbase + 8 * j + 2 * t + (r & 1);
            if (m >= M || n >= N) continue;
            float *c = dst + (size_t)m * N + n;
            if (mode == OUT_ATOMIC) atomicAdd(c, acc[j][r]);
            else *c = acc[j][r];
        }
}

// splitk_det's second pass: C = sum of the S partial tiles, always in order s = 0, 1, ...
__global__ void sum_splits(const float *ws, float *c, size_t mn, int splits) {
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
    {4096, 4096, {16, 16, 16, 12, 8}},
    {8192, 8192, {8, 8, 8, 8, 8}},
    {16384, 16384, {4, 4, 4, 4, 4}},
    {11008, 4096, {6, 6, 4, 4, 3}},
    {4096, 11008, {16, 16, 16, 16, 12}},
    {14336, 4096, {3, 3, 3, 3, 3}},
    {4096, 14336, {16, 16, 16, 16, 12}},
    {128256, 4096, {1, 1, 1, 1, 1}},
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

static void launch(const kl_w4a16_args *a, void *ctx, cudaStream_t stream) {
    const int mode = *static_cast<const int *>(ctx);
    const int G = a->k / GROUP, tiles = (a->n + BN - 1) / BN;
    int splits = mode == OUT_STORE ? 1 : pick_split(a->m, a->n, a->k);
    splits = min(min(splits, G), KL_W4A16_MAX_SPLIT);   // every slice gets at least one group
    const size_t mn = (size_t)a->m * a->n;
    float *out = mode == OUT_PARTIAL ? a->workspace : a->c;
    if (mode == OUT_ATOMIC) CUDA_CHECK(cudaMemsetAsync(a->c, 0, mn * sizeof(float), stream));
    const dim3 grid(tiles, splits);
    if (a->m > 8) w4a16_mma<true><<<grid, WARPS * 32, 0, stream>>>(*a, out, splits, mode);
    else w4a16_mma<false><<<grid, WARPS * 32, 0, stream>>>(*a, out, splits, mode);
    KL_CHECK_LAUNCH();
    if (mode == OUT_PARTIAL) {
        sum_splits<<<(unsigned)((mn + 255) / 256), 256, 0, stream>>>(a->workspace, a->c, mn, splits);
        KL_CHECK_LAUNCH();
    }
}

static int accepts(const kl_problem *p, char *msg, size_t len) {
    if (p->k % GROUP) {
        snprintf(msg, len, "-k %d: this step needs K to be a multiple of %d (whole quantization groups)", p->k, GROUP);
        return 1;
    }
    if (p->m > 16) {
        snprintf(msg, len, "-m %d: this step is for skinny GEMMs, M = 1..16 (one m16n8k16 tile of rows)", p->m);
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
