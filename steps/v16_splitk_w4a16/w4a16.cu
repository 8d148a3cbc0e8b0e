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
 * mma fragments in registers, never through shared memory or DRAM.
 *
 * Decomposition: a block owns BN = 128 columns of C (rows of W) and all M
 * rows.  8192 / 128 = 64 tiles: data parallel ("dp", one block per tile, all
 * of K) fills 64 of 132 SMs with 4 warps each, far too little to keep 3 TB/s
 * of loads in flight.  SplitK also cuts K into S slices: 64 x S blocks, each
 * adding its partial tile into C ("splitk": atomicAdd, C zeroed first) or
 * writing it to a workspace that a second kernel sums in a fixed order
 * ("splitk_det": the same bits every run).  Waves = tiles x S / (blocks per
 * SM x 132); S comes from the table below (measured: see the doc), or --split.
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
#ifndef UNROLL
#define UNROLL 2   // groups of 128 k whose weights are in flight before the first mma
#endif
#define GROUP 128  // KL_INT4_GROUP: one scale and one zero per 128 columns of W
#define BN (WARPS * 8 * NT)
static_assert(NT >= 1 && NT <= 8, "NT n8 tiles of accumulators: 4 * NT registers");
static_assert(WARPS >= 1 && WARPS * 32 <= 1024, "a block has at most 1024 threads");
static_assert(UNROLL >= 1 && UNROLL <= 8, "UNROLL * NT * 16 bytes of weights per thread in flight");
static_assert(GROUP == 4 * 32, "4 threads x 32 nibbles cover one group of a row");

enum { OUT_STORE, OUT_ATOMIC, OUT_PARTIAL };

// Weights are read exactly once: bypass L1 so they do not evict A and the scales.
__device__ __forceinline__ uint4 ld_stream(const void *p) {
    uint4 v;
    asm("ld.global.nc.L1::no_allocate.v4.u32 {%0,%1,%2,%3}, [%4];"
        : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
    return v;
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

// Eight nibbles of one word (columns c..c+7, nibble i = column c+i) -> four
// half2 of (q - z), exact.  OR-ing a nibble into the mantissa of 1024.0
// (0x6400) gives the fp16 number 1024 + q; a nibble at bits 4-7 gives
// 1024 + 16q.  One mask reaches two nibbles 16 bits apart, so the pairs come
// out as columns (0,4) (1,5) (2,6) (3,7); A is permuted to match (load_a).
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

// 32 consecutive halves of a row of A (this thread's k range in the group),
// as mma A-fragment words in the order dequant8 produced the weights:
// a[4w + i] pairs columns (8w + i', 8w + i' + 4) with i' = 0, 1, 2, 3 in the
// order (0,4) (1,5) (2,6) (3,7).  prmt picks two 16-bit halves of two words.
__device__ __forceinline__ void load_a(const __half *p, uint32_t a[16]) {
    const uint4 *q = reinterpret_cast<const uint4 *>(p);
#pragma unroll
    for (int w = 0; w < 4; ++w) {
        const uint4 x = __ldg(q + w);   // columns 8w..8w+7: x.x = (0,1) x.y = (2,3) x.z = (4,5) x.w = (6,7)
        a[4 * w + 0] = __byte_perm(x.x, x.z, 0x5410);   // (0, 4)
        a[4 * w + 1] = __byte_perm(x.x, x.z, 0x7632);   // (1, 5)
        a[4 * w + 2] = __byte_perm(x.y, x.w, 0x5410);   // (2, 6)
        a[4 * w + 3] = __byte_perm(x.y, x.w, 0x7632);   // (3, 7)
    }
}

// One block: BN columns of C, all M rows, groups [grp0, grp1) of K (its split).
// M_HI: M > 8, so rows 8..15 of the 16-row mma tile are real rows of A.
template <bool M_HI>
__global__ void __launch_bounds__(WARPS * 32)
w4a16_mma(kl_w4a16_args p, float *out, int splits, int mode) {
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
    // Rows past M or N are clamped: loaded (in bounds), computed, never stored.
    const __half *arow0 = A + (size_t)min(g, M - 1) * K + 32 * t;
    const __half *arow1 = A + (size_t)min(g + 8, M - 1) * K + 32 * t;

    float acc[NT][4] = {};   // C fragment of tile j: (g, 2t) (g, 2t+1) (g+8, 2t) (g+8, 2t+1)
    for (int grp = grp0; grp < grp1; grp += UNROLL) {
        // Issue every weight load of UNROLL groups before using any: 16 bytes
        // per thread per tile = 32 nibbles of row nbase+8j+g, a quarter of a group.
        uint4 wq[UNROLL][NT];
#pragma unroll
        for (int u = 0; u < UNROLL; ++u)
#pragma unroll
            for (int j = 0; j < NT; ++j) {
                const int row = min(nbase + 8 * j + g, N - 1);
                wq[u][j] = grp + u < grp1
                    ? ld_stream(p.w + (size_t)row * (K / 2) + (size_t)(grp + u) * (GROUP / 2) + 16 * t)
                    : make_uint4(0, 0, 0, 0);
            }
#pragma unroll
        for (int u = 0; u < UNROLL; ++u) {
            const int gr = grp + u;
            if (gr >= grp1) break;
            uint32_t alo[16], ahi[16];   // A fragments of this group, reused by all NT tiles
            load_a(arow0 + (size_t)gr * GROUP, alo);
            if (M_HI) load_a(arow1 + (size_t)gr * GROUP, ahi);
            else
#pragma unroll
                for (int i = 0; i < 16; ++i) ahi[i] = 0;
#pragma unroll
            for (int j = 0; j < NT; ++j) {
                // The zero belongs to the W row this thread dequantizes (B column g);
                // the scales to the two C columns it accumulates (2t, 2t+1).
                const int wrow = min(nbase + 8 * j + g, N - 1);
                const int c0 = min(nbase + 8 * j + 2 * t, N - 1), c1 = min(nbase + 8 * j + 2 * t + 1, N - 1);
                const float z = __half2float(Z[(size_t)wrow * G + gr]);
                const __half2 z1024 = __float2half2_rn(1024.0f + z), z64 = __float2half2_rn(-64.0f - z);
                const float s0 = __half2float(S[(size_t)c0 * G + gr]), s1 = __half2float(S[(size_t)c1 * G + gr]);
                const uint32_t wv[4] = {wq[u][j].x, wq[u][j].y, wq[u][j].z, wq[u][j].w};
                // The mma sums (q - z) * a over the group exactly; the scale, one
                // per column of C, multiplies the group's sum once, in fp32.
                float part[4] = {0.0f, 0.0f, 0.0f, 0.0f};
#pragma unroll
                for (int w = 0; w < 4; ++w) {
                    uint32_t b[4];
                    dequant8(wv[w], z1024, z64, b);
                    mma_16816(part, alo[4 * w + 0], ahi[4 * w + 0], alo[4 * w + 1], ahi[4 * w + 1], b[0], b[1]);
                    mma_16816(part, alo[4 * w + 2], ahi[4 * w + 2], alo[4 * w + 3], ahi[4 * w + 3], b[2], b[3]);
                }
                acc[j][0] = fmaf(s0, part[0], acc[j][0]);
                acc[j][1] = fmaf(s1, part[1], acc[j][1]);
                acc[j][2] = fmaf(s0, part[2], acc[j][2]);
                acc[j][3] = fmaf(s1, part[3], acc[j][3]);
            }
        }
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
    {4096, 4096, {4, 4, 4, 4, 4}},
    {8192, 8192, {8, 8, 8, 8, 8}},
    {16384, 16384, {4, 4, 4, 4, 4}},
    {11008, 4096, {4, 4, 4, 4, 4}},
    {4096, 11008, {8, 8, 8, 8, 8}},
    {14336, 4096, {4, 4, 4, 4, 4}},
    {4096, 14336, {8, 8, 8, 8, 8}},
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
