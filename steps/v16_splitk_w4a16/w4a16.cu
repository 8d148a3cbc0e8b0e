// needs: sm_80 (mma.sync m16n8k16 with fp16 operands, cp.async)
/*
 * Step 16 - W4A16 skinny GEMM, M = 1..16: dequantize int4 weights in
 * registers, multiply on the tensor cores, and split K across blocks.
 *
 * C[M][N] (fp32) = A[M][K] (fp16) x dequant(W)[N][K]^T, W in quant.h's int4
 * format (fp16 scale s and zero z per 128 columns, w = (q - z) * s), each
 * word's 8 nibbles in w4a16's order 0 2 4 6 1 3 5 7 (the harness repacks once).
 * W is the 16-row operand of mma.sync m16n8k16, the activations the 8-column
 * one; the variants (OUT_*) differ in how the blocks share K and reach C.
 * The lesson, with the arithmetic and the numbers: docs/v16_splitk_w4a16.md.
 *
 * Build and run:   make step16 && ./step16
 *                  ./step16 -m 3 -n 1000 -k 4096 --check-only
 *                  ./step16 -n 8192 -k 8192 --split 4
 */
#include "kl.h"
#include "ptx.h"   // cp.async, mma.sync, pin, PDL and flag wrappers
#include <cuda_fp16.h>
#include <cstddef>

#ifndef WARPS_HI
#define WARPS_HI 4   // warps per block of the M > 8 kernel, side by side along N: BN = 64 rows of W
#endif
#define WARPS 8      // the same for the M <= 8 kernel: BN = 8 x 16 = 128 rows of W
#define KG 2         // groups of 128 k per pipeline stage: one wait and one barrier per 2 groups
#define STAGES 2     // slots of shared memory: one is filled while the other is used
#define GROUP 128    // KL_INT4_GROUP: one scale and one zero per 128 columns of W
#define ROWS 2       // W rows per thread: g and g + 8 of its warp's m16 tile
// The two kernels' warps, BN rows of W (columns of C), and blocks per SM (16 warps: <= 128 registers).
template <bool M_HI> __host__ __device__ constexpr int warps_of() { return M_HI ? WARPS_HI : WARPS; }
template <bool M_HI> __host__ __device__ constexpr int bn_of() { return warps_of<M_HI>() * 16; }
template <bool M_HI> constexpr int min_blocks() { return 16 / warps_of<M_HI>() > 1 ? 16 / warps_of<M_HI>() : 1; }
static_assert(WARPS_HI >= 1 && WARPS_HI * 32 <= 1024, "a block has at most 1024 threads");
static_assert(GROUP == 4 * 32, "4 threads x 32 nibbles cover one group of a row");

// One pipeline stage: KG groups (128 k each) of the block's BN rows of W and of A's AROWS rows.
template <int AROWS, int NW> struct Stage {
    uint4 w[KG][NW][ROWS][32];   // 16 bytes per thread and row: KG x BN x 64 B = 16 KB (8 warps) or 8 KB (4)
    uint4 a[KG][AROWS][16];      // AROWS x 128 halves in swizzled 16-byte chunks: 4 or 8 KB
};
template <bool M_HI> using StageOf = Stage<M_HI ? 16 : 8, warps_of<M_HI>()>;
template <bool M_HI> constexpr int smem_bytes() { return STAGES * (int)sizeof(StageOf<M_HI>); }   // 40 KB (M <= 8), 32 KB (M > 8)
// A slot 16 bytes off a 128-byte boundary measured ~20% slower (see the doc's pitfalls).
static_assert(sizeof(StageOf<false>) % 128 == 0 && sizeof(StageOf<true>) % 128 == 0, "slots start on 128-byte boundaries");
static_assert(smem_bytes<false>() <= 48 * 1024 && smem_bytes<true>() <= 48 * 1024, "more would need cudaFuncSetAttribute");

// What a block does with its tile: store it (dp), add it into C that zero_c zeroed (splitk), write it to its
// split's slice of a workspace (splitk_det), or add it into C once the tile's split-0 block zeroed it and raised
// flags[tile] (splitk_flag: relies on the GPU starting blocks in index order, which CUDA does not promise).
enum { OUT_STORE, OUT_ATOMIC, OUT_PARTIAL, OUT_ATOMIC_FLAG };

// (v & MASK) | bits in one LOP3.  In C it is two: an instruction carries one 32-bit immediate, MASK and 0x64006400 are two.
template <uint32_t MASK> __device__ __forceinline__ uint32_t and_or(uint32_t v, uint32_t bits) {
    uint32_t r;
    asm("lop3.b32 %0, %1, %2, %3, 0xEA;" : "=r"(r) : "r"(v), "n"(MASK), "r"(bits));
    return r;
}

// Eight nibbles of one word (w4a16's order) -> four half2 of (q - z), exact: a nibble OR-ed into the mantissa
// of 1024.0 (magic = 0x6400 twice) is the fp16 1024 + q (1024 + 16q at bits 4-7).  One mask reaches nibbles i
// and i + 4, adjacent columns: the pairs (0,1) (2,3) (4,5) (6,7), as A lies in memory.  9 instructions per 8 weights.
__device__ __forceinline__ void dequant8(uint32_t v, uint32_t magic, __half2 z1024, __half2 z64, uint32_t b[4]) {
    const __half2 sixteenth = __float2half2_rn(1.0f / 16.0f);
    b[0] = h2u(__hsub2(u2h(and_or<0x000F000F>(v, magic)), z1024));             // (1024+q) - (1024+z)
    b[1] = h2u(__hfma2(u2h(and_or<0x00F000F0>(v, magic)), sixteenth, z64));    // (1024+16q)/16 - (64+z)
    v >>= 8;
    b[2] = h2u(__hsub2(u2h(and_or<0x000F000F>(v, magic)), z1024));
    b[3] = h2u(__hfma2(u2h(and_or<0x00F000F0>(v, magic)), sixteenth, z64));
}

// Row r of A in a stage is 16 chunks of 16 bytes, chunk c at c ^ swz(c, r).  Thread (g, t) reads
// chunks 4t..4t+3 of row g: without the XOR a quarter-warp would hit only 2 of the 8 bank groups.
__device__ __forceinline__ int swz(int c, int r) { return ((c >> 2) & 2) | (r & 1); }

// One block: BN columns of C, all M rows, its split's stages of K.  W is the mma's 16-row operand
// (PTX's A), the activations its 8-column one (B); M_HI: M = 9..16, two mma per 16 x 16 of W.
// ZP: K / 128 is even, and a row's zeros (and scales) of a stage's two groups are one 4-byte load.
template <bool M_HI, bool ZP>
__global__ void __launch_bounds__(warps_of<M_HI>() * 32, min_blocks<M_HI>())
w4a16_mma(kl_w4a16_args p, float *out, int splits, int mode, unsigned *flags, unsigned epoch) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
    __trap();   // mma.sync and cp.async need sm_80; the harness stops earlier (min_cc)
#else
    constexpr int AROWS = M_HI ? 16 : 8, NW = warps_of<M_HI>(), BN = bn_of<M_HI>();
    using St = StageOf<M_HI>;
    extern __shared__ uint4 smem_raw[];   // STAGES x St: 2 x 20 KB (M <= 8) or 2 x 16 KB (M > 8)
    St *sm = reinterpret_cast<St *>(smem_raw);
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    const int g = lane / 4, t = lane % 4;      // PTX's groupID and threadID_in_group
    const int M = p.m, N = p.n, K = p.k, G = K / GROUP, NST = (G + KG - 1) / KG;   // NST stages in K
    const int split = blockIdx.y;
    const int first = (int)((long long)NST * split / splits), end = (int)((long long)NST * (split + 1) / splits);
    const int nbase = blockIdx.x * BN + warp * 16;   // first W row (column of C) of this warp
    const __half *A = reinterpret_cast<const __half *>(p.a);
    const __half *zeros = reinterpret_cast<const __half *>(p.zeros), *scales = reinterpret_cast<const __half *>(p.scales);
    griddep_launch_dependents();   // splitk_det's sum_splits may launch now (it waits for us)

    // Thread (g, t) owns W rows nbase + g and + 8: it copies, dequantizes and scales their bytes 16t..16t+15 of each group.
    const uint8_t *wsrc[ROWS];   // this thread's 16 bytes of group 0 of row j
    int zs[ROWS];   // index of row j's zero and scale of group 0: one 32-bit offset for both arrays (N x K / 128 < 2^31)
#pragma unroll
    for (int j = 0; j < ROWS; ++j) {   // row nbase + 8j + g
        const size_t row = (size_t)min(nbase + 8 * j + g, N - 1);   // rows past N: loaded, never stored
        wsrc[j] = p.w + row * (K / 2) + 16 * t;
        zs[j] = (int)row * G;
        pin(wsrc[j]);
        pin(zs[j]);
    }
    // A is copied by the whole block: thread i % (32 NW) copies 16-byte chunk i of a stage (group kg, row r, chunk c).
    constexpr int ACHUNKS = KG * AROWS * 16;
    constexpr int ACOPY = (ACHUNKS + NW * 32 - 1) / (NW * 32);   // chunks per thread
    const __half *asrc[ACOPY];
    int adst[ACOPY], akg[ACOPY], abytes[ACOPY];
#pragma unroll
    for (int q = 0; q < ACOPY; ++q) {
        const int i = min((int)threadIdx.x + q * NW * 32, ACHUNKS - 1);
        const int kg = i / (AROWS * 16), r = (i / 16) % AROWS, c = i % 16;
        akg[q] = kg;
        abytes[q] = r < M ? 16 : 0;   // rows past M: zero-filled, nothing read
        asrc[q] = A + (size_t)min(r, M - 1) * K + kg * GROUP + 8 * c;
        adst[q] = (int)offsetof(St, a) + ((kg * AROWS + r) * 16 + (c ^ swz(c, r))) * 16;
        pin(asrc[q]);
        pin(adst[q]);
    }
    unsigned smem = (unsigned)__cvta_generic_to_shared(sm);
    int wdst = (int)offsetof(St, w) + (warp * ROWS * 32 + lane) * 16;
    pin(smem);
    pin(wdst);
    // This thread's A fragments: row g, chunk 4t + w, swizzled by swz(4t + w, g) = (t & 2) | (g & 1): four offsets.
    int aread[4];
#pragma unroll
    for (int w = 0; w < 4; ++w) {
        const int c = 4 * t + w;
        aread[w] = (int)offsetof(St, a) + (g * 16 + (c ^ swz(c, g))) * 16;
        pin(aread[w]);
    }

    // Start the copies of stage i (groups i KG .. i KG + KG - 1) into a slot, if it is one of ours.
    auto issue = [&](int i, unsigned st) {   // st: the slot's shared-memory address
        if (i < end) {
            const int gr = i * KG;
#pragma unroll
            for (int kg = 0; kg < KG; ++kg) {
                if (gr + kg >= G) break;   // the last stage of K may be short
#pragma unroll
                for (int j = 0; j < ROWS; ++j)
                    cp_async16_line(st + kg * (NW * ROWS * 32 * 16) + wdst + j * 32 * 16,
                                 wsrc[j] + (unsigned)(gr + kg) * (GROUP / 2));
            }
#pragma unroll
            for (int q = 0; q < ACOPY; ++q)   // does this thread copy chunk q of this stage?
                if ((ACOPY * NW * 32 == ACHUNKS || (int)threadIdx.x + q * NW * 32 < ACHUNKS) && gr + akg[q] < G)
                    cp_async16(st + adst[q], asrc[q] + (unsigned)gr * GROUP, abytes[q]);
        }
        cp_async_commit();   // empty groups too: the count in cp_async_wait stays right
    };
    // Zero and scale of this thread's rows, a stage ahead in registers, through L1 (a sector: 16 groups).
    auto load_zs = [&](int i, __half z[KG][ROWS], __half s[KG][ROWS]) {
        if (i < end)
#pragma unroll
            for (int kg = 0; kg < KG; kg += ZP ? 2 : 1)
                if (i * KG + kg < G)
#pragma unroll
                    for (int j = 0; j < ROWS; ++j) {
                        const int e = zs[j] + i * KG + kg;   // even when ZP
                        if (ZP) {
                            const __half2 zz = *reinterpret_cast<const __half2 *>(zeros + e);
                            const __half2 ss = *reinterpret_cast<const __half2 *>(scales + e);
                            z[kg][j] = __low2half(zz), z[kg + 1][j] = __high2half(zz);
                            s[kg][j] = __low2half(ss), s[kg + 1][j] = __high2half(ss);
                        } else {
                            z[kg][j] = zeros[e], s[kg][j] = scales[e];
                        }
                    }
    };

#pragma unroll
    for (int k = 0; k < STAGES - 1; ++k) issue(first + k, smem + k * (unsigned)sizeof(St));
    __half z[KG][ROWS], s[KG][ROWS], z_next[KG][ROWS], s_next[KG][ROWS];
    load_zs(first, z, s);
    if (mode == OUT_ATOMIC_FLAG && split == 0) {   // zero this tile of C while the first loads fly
        for (int i = threadIdx.x; i < M * BN; i += NW * 32) {
            const int n = blockIdx.x * BN + i % BN;
            if (n < N) out[(size_t)(i / BN) * N + n] = 0.0f;
        }
        __syncthreads();
        if (threadIdx.x == 0) flag_release(flags + blockIdx.x, epoch);
    }

    uint32_t magic = 0x64006400;      // fp16 1024.0 twice (see dequant8)
    asm volatile("" : "+r"(magic));   // opaque to the compiler: it stays in a register
    // acc[mh]: C fragment of activation rows 8mh..8mh+7: (W row g, a row 2t), (g, 2t+1), (g+8, 2t), (g+8, 2t+1)
    float acc[2][4] = {};
    unsigned zflag = 0;   // splitk_flag: the tile's flag, read during the last stage
    int slot = 0;         // slot of stage sg; the one before it is refilled
    constexpr unsigned SLOT = sizeof(St);
    const char *const sm_gen = reinterpret_cast<const char *>(sm);
    int flag_reader = mode == OUT_ATOMIC_FLAG && split != 0 && threadIdx.x == 0;   // splitk_flag, split > 0: thread 0 reads zflag
    pin(flag_reader);
    for (int sg = first; sg < end; ++sg) {   // stage sg: groups gr .. gr + KG - 1
        const int gr = sg * KG;
        cp_async_wait<STAGES - 2>();   // my copies of stage sg have landed ...
        __syncthreads();               // ... and everyone's; and the slot used last is free again
        issue(sg + STAGES - 1, smem + (slot == 0 ? STAGES - 1 : slot - 1) * SLOT);
        load_zs(sg + 1, z_next, s_next);
        if (flag_reader && sg + 1 >= end)
            zflag = flag_acquire(flags + blockIdx.x);   // the last stage: look now, use it at the end
        const St &st = *reinterpret_cast<const St *>(sm_gen + slot * SLOT);
        slot = slot == STAGES - 1 ? 0 : slot + 1;

#pragma unroll
        for (int kg = 0; kg < KG; ++kg) {
            if (KG > 1 && gr + kg >= G) break;
            uint4 wq[ROWS];                  // 32 nibbles of each of this thread's rows
            __half2 z1024[ROWS], z64[ROWS];  // 1024 + z and -(64 + z), for dequant8
#pragma unroll
            for (int j = 0; j < ROWS; ++j) {
                wq[j] = *reinterpret_cast<const uint4 *>(reinterpret_cast<const char *>(&st) + wdst +
                                                         kg * (NW * ROWS * 32 * 16) + j * 32 * 16);   // st.w[kg][warp][j][lane]
                const __half2 z2 = __half2half2(z[kg][j]);   // exact: z is 0..15
                z1024[j] = __hadd2(z2, __float2half2_rn(1024.0f));
                z64[j] = __hneg2(__hadd2(z2, __float2half2_rn(64.0f)));
            }
            // The mma sums (q - z) * a over the group exactly, in fp32; each row's scale multiplies it once.
            float part[2][4] = {};
#pragma unroll
            for (int w = 0; w < 4; ++w) {    // columns 8w..8w+7 of this thread's 32
                // activation rows g and g + 8 (the mma's B): columns (0,1) (2,3) (4,5) (6,7), as in memory
                const char *ab = reinterpret_cast<const char *>(&st) + aread[w] + kg * AROWS * 16 * 16;
                const uint4 alo = *reinterpret_cast<const uint4 *>(ab);
                const uint4 ahi = M_HI ? *reinterpret_cast<const uint4 *>(ab + 8 * 16 * 16) : alo;   // row g + 8
                const uint32_t v0 = w == 0 ? wq[0].x : w == 1 ? wq[0].y : w == 2 ? wq[0].z : wq[0].w;
                const uint32_t v1 = w == 0 ? wq[1].x : w == 1 ? wq[1].y : w == 2 ? wq[1].z : wq[1].w;
                uint32_t b0[4], b1[4];   // W rows g and g + 8, columns (0,1) (2,3) (4,5) (6,7)
                dequant8(v0, magic, z1024[0], z64[0], b0);
                dequant8(v1, magic, z1024[1], z64[1], b1);
                // mma h of the word: k slots 2t, 2t+1 = columns 4h, 4h+1 (pair 2h); 2t+8, 2t+9 = 4h+2, 4h+3
                mma_16816(part[0], b0[0], b1[0], b0[1], b1[1], alo.x, alo.y);
                if (M_HI) mma_16816(part[1], b0[0], b1[0], b0[1], b1[1], ahi.x, ahi.y);
                mma_16816(part[0], b0[2], b1[2], b0[3], b1[3], alo.z, alo.w);
                if (M_HI) mma_16816(part[1], b0[2], b1[2], b0[3], b1[3], ahi.z, ahi.w);
            }
            const float s0 = __half2float(s[kg][0]), s1 = __half2float(s[kg][1]);   // W rows g, g + 8
#pragma unroll
            for (int mh = 0; mh < (M_HI ? 2 : 1); ++mh)
#pragma unroll
                for (int r = 0; r < 4; ++r) acc[mh][r] = fmaf(r < 2 ? s0 : s1, part[mh][r], acc[mh][r]);
        }
#pragma unroll
        for (int kg = 0; kg < KG; ++kg)
#pragma unroll
            for (int j = 0; j < ROWS; ++j) z[kg][j] = z_next[kg][j], s[kg][j] = s_next[kg][j];
    }

    // Write the tile (OUT_*).  Before adding, C must be zero: splitk waits for zero_c, splitk_flag for split 0's block.
    if (mode == OUT_ATOMIC) griddep_wait();
    if (mode == OUT_ATOMIC_FLAG && split != 0) {
        if (threadIdx.x == 0)
            while (zflag != epoch) zflag = flag_acquire(flags + blockIdx.x);
        __syncthreads();
    }
    float *dst = mode == OUT_PARTIAL ? out + (size_t)split * M * N : out;
#pragma unroll
    for (int mh = 0; mh < (M_HI ? 2 : 1); ++mh)
#pragma unroll
        for (int r = 0; r < 4; ++r) {
            const int m = 8 * mh + 2 * t + (r & 1), n = nbase + g + (r >= 2 ? 8 : 0);
            if (m >= M || n >= N) continue;
            float *c = dst + (size_t)m * N + n;
            if (mode == OUT_ATOMIC || mode == OUT_ATOMIC_FLAG) atomicAdd(c, acc[mh][r]);
            else *c = acc[mh][r];
        }
#endif
}

// splitk's first kernel: C = 0.  The GEMM (PDL) starts once every block here has, and waits only before its atomics.
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

// ---- the launcher ------------------------------------------------------------
// The four instantiations (M > 8 or not; ZP where K / 128 is even), each with its block shape.
struct MmaKernel { void (*fn)(kl_w4a16_args, float *, int, int, unsigned *, unsigned); int threads, bn, smem; };
static MmaKernel pick_kernel(int m, int k) {
    const bool hi = m > 8, zp = KG % 2 == 0 && (k / GROUP) % 2 == 0;
    if (hi) return {zp ? w4a16_mma<true, true> : w4a16_mma<true, false>, warps_of<true>() * 32, bn_of<true>(), smem_bytes<true>()};
    return {zp ? w4a16_mma<false, true> : w4a16_mma<false, false>, warps_of<false>() * 32, bn_of<false>(), smem_bytes<false>()};
}

// Measured best S for M <= 1, 2, 4, 8, 16 (sweep_split.sh; results/h100-80gb-hbm3/sweeps/step16.md;
// 8192^2 at M <= 8: side-by-side runs chose 4, within 0.1 us of 6 in the sweep).  Other shapes: one wave.
static const struct { int n, k; unsigned char s[5]; } split_table[] = {
    {4096, 4096, {8, 8, 8, 8, 6}},   {8192, 8192, {4, 4, 4, 4, 4}},   {16384, 16384, {6, 6, 6, 2, 2}},
    {11008, 4096, {4, 4, 4, 4, 3}},  {4096, 11008, {12, 8, 8, 8, 8}}, {14336, 4096, {3, 3, 3, 3, 2}},
    {4096, 14336, {8, 8, 12, 8, 8}}, {128256, 4096, {1, 1, 1, 1, 1}},
};
static int g_split = 0;   // --split: 0 = the table
static int pick_split(int m, int n, int k, const MmaKernel &kern, int tiles) {
    if (g_split) return g_split;
    const int mi = m <= 1 ? 0 : m <= 2 ? 1 : m <= 4 ? 2 : m <= 8 ? 3 : 4;
    for (const auto &e : split_table)
        if (e.n == n && e.k == k) return e.s[mi];
    // One wave (H100: 3 x 132 blocks of 8 warps at M <= 8, 4 x 132 of 4 warps at M > 8)
    return max(1, kl_blocks_at_once((const void *)kern.fn, kern.threads, kern.smem) / tiles);
}

// Launch k<<<grid, block, smem, s>>>(args...), with the PDL attribute if pdl.
template <typename... P, typename... Args>
static void launch_k(void (*k)(P...), dim3 grid, dim3 block, int smem, cudaStream_t s, bool pdl, Args... args) {
    cudaLaunchAttribute attr = {};
    attr.id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attr.val.programmaticStreamSerializationAllowed = 1;
    cudaLaunchConfig_t cfg = {grid, block, (size_t)smem, s, &attr, pdl ? 1u : 0u};
    CUDA_CHECK(cudaLaunchKernelEx(&cfg, k, args...));
    KL_CHECK_LAUNCH();
}

// Whether PDL can be used (asked once): the kernels' machine code must be sm_90+, not only the GPU.
static bool prepare() {
    static const bool ok = [] {
        cudaFuncAttributes fa;
        CUDA_CHECK(cudaFuncGetAttributes(&fa, w4a16_mma<true, true>));
        return fa.binaryVersion >= 90;
    }();
    return ok;
}

// splitk_flag's flags, one per tile of C (grown with N), and this launch's epoch (a flag that holds an older one is down).
static unsigned *tile_flags(int tiles, cudaStream_t stream, unsigned *epoch) {
    static unsigned *flags = nullptr, last = 0;
    static int have = 0;
    if (tiles > have) {
        if (flags) CUDA_CHECK(cudaFree(flags));
        CUDA_CHECK(cudaMalloc(&flags, tiles * sizeof(unsigned)));
        CUDA_CHECK(cudaMemsetAsync(flags, 0, tiles * sizeof(unsigned), stream));
        have = tiles;
    }
    if (++last == 0) ++last;
    *epoch = last;
    return flags;
}

static void launch(const kl_w4a16_args *a, void *ctx, cudaStream_t stream) {
    const int mode = *static_cast<const int *>(ctx);
    const MmaKernel kern = pick_kernel(a->m, a->k);
    const int stages = (a->k / GROUP + KG - 1) / KG, tiles = (a->n + kern.bn - 1) / kern.bn;
    const bool pdl = prepare();
    int splits = mode == OUT_STORE ? 1 : pick_split(a->m, a->n, a->k, kern, tiles);
    splits = min(min(splits, stages), KL_W4A16_MAX_SPLIT);   // every split gets at least one stage
    const size_t mn = (size_t)a->m * a->n;
    float *out = mode == OUT_PARTIAL ? a->workspace : a->c;
    unsigned epoch = 0, *flags = mode == OUT_ATOMIC_FLAG ? tile_flags(tiles, stream, &epoch) : nullptr;
    if (mode == OUT_ATOMIC)   // C = 0 first; the GEMM overlaps it (PDL) where it can
        launch_k(zero_c, dim3((unsigned)min((mn + 255) / 256, (size_t)1024)), dim3(256), 0, stream, false, a->c, mn);
    launch_k(kern.fn, dim3(tiles, splits), dim3(kern.threads), kern.smem, stream, pdl && mode == OUT_ATOMIC, *a, out,
             splits, mode, flags, epoch);
    if (mode == OUT_PARTIAL)
        launch_k(sum_splits, dim3((unsigned)((mn + 255) / 256)), dim3(256), 0, stream, pdl, (const float *)a->workspace,
                 a->c, mn, splits);
}

static int accepts(const kl_problem *p, char *msg, size_t len) {
    if (p->k % GROUP)
        return snprintf(msg, len, "-k %d: this step needs K to be a multiple of %d (whole quantization groups)", p->k, GROUP), 1;
    if (p->m > 16)
        return snprintf(msg, len, "-m %d: this step is for skinny GEMMs, M = 1..16 (two n8 mma tiles of rows)", p->m), 1;
    return 0;
}

int main(int argc, char **argv) {
    kl_step step = {};
    step.number = 16;
    step.title = "W4A16 skinny GEMM: int4 dequantized into tensor-core fragments, SplitK";
    step.min_cc = 80;   // mma.sync m16n8k16 with fp16 operands
    step.accepts = accepts;
    const char *names[4] = {"dp", "splitk", "splitk_det", "splitk_flag"};
    static int modes[4] = {OUT_STORE, OUT_ATOMIC, OUT_PARTIAL, OUT_ATOMIC_FLAG};
    for (int i = 0; i < 4; ++i) {
        step.kernels[i].op = &kl_op_w4a16;
        step.kernels[i].variant = names[i];
        step.kernels[i].w4a16 = launch;
        step.kernels[i].ctx = &modes[i];
    }
    step.opts[0] = {"split", "SplitK factor of the splitk variants (0: the measured table)", &g_split, 0, KL_W4A16_MAX_SPLIT};
    return kl_main(argc, argv, &step);
}
