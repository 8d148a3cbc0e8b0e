/*
 * Step 15 - llama.cpp's q4_0: dequantize kernels, then a fused GEMV.
 *
 * Format (common/ops/quant.h): a row is K/32 blocks of 18 bytes, an fp16 scale d
 * and 16 bytes of nibbles (byte j: column j low, column j+16 high); w = (q - 8)
 * * d.  4.5 bits per weight, and blocks are only 2-byte aligned.
 *
 * Lesson 1, dequantize q4_0 -> fp16 three ways: occupancy alone does not make
 * it fast, coalescing does.  Lesson 2, "fused": never write fp16 weights; each
 * warp stages its passes of the block's 4 rows in shared memory and does step
 * 14's arithmetic on them, the warps split K; a table picks the launch by size.
 * The lesson, with the numbers: docs/v15_q4_0.md.
 *
 * Build and run:   make step15 && ./step15
 *                  ./step15 -n 1000 -k 992 --check-only
 *                  ./step15 -n 8192 -k 8192 --bpl 1 --stages 2 --prefetch 1   (one entry of the list)
 */
#include "kl.h"
#include "quant.h"

#include <cuda_fp16.h>

#ifndef LOADS_ONLY
#define LOADS_ONLY 0   // 1: the fused kernel keeps every load and copy, XORs replace its arithmetic (wrong sums: the check fails)
#endif
constexpr int DQ_THREADS = 256;   // threads per block of the thread_per_qblock and warp_coalesced kernels
static_assert(sizeof(kl_block_q4_0) == 18 && KL_Q4_0_BLOCK == 32, "the q4_0 block of quant.h");

// ---- lesson 1: dequantize ----------------------------------------------------

// One q4_0 block by one thread: 18 one/two-byte loads, 32 two-byte stores.
__device__ __forceinline__ void dequant_block(const kl_block_q4_0 *__restrict__ b, __half *__restrict__ out, size_t i) {
    const float d = __half2float(__ushort_as_half(b[i].d));
    for (int j = 0; j < 16; ++j) {
        const int q = b[i].qs[j];
        out[32 * i + j] = __float2half((float)((q & 0xF) - 8) * d);
        out[32 * i + j + 16] = __float2half((float)((q >> 4) - 8) * d);
    }
}
__global__ void dq_one_thread_blocks(const kl_block_q4_0 *__restrict__ b, __half *__restrict__ out) {
    dequant_block(b, out, blockIdx.x);            // launched with one thread per block
}
__global__ void dq_thread_per_qblock(size_t nb, const kl_block_q4_0 *__restrict__ b, __half *__restrict__ out) {
    const size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < nb) dequant_block(b, out, i);
}

// Four threads per q4_0 block.  Thread part t: columns [8t, 8t+8): low nibbles
// of bytes 0-7 (t=0) or 8-15 (t=1), high nibbles of the same (t=2, 3).
__global__ void dq_warp_coalesced(size_t nb, const uint16_t *__restrict__ b, __half *__restrict__ out) {
    const size_t g = (size_t)blockIdx.x * blockDim.x + threadIdx.x, i = g / 4;
    const int t = g % 4;
    if (i >= nb) return;
    const uint16_t *blk = b + 9 * i;              // 18 bytes = 9 halfwords: d, then 8 of qs
    const float d = __half2float(__ushort_as_half(blk[0]));
    const int shift = t < 2 ? 0 : 4;
    uint32_t packed[4];
#pragma unroll
    for (int h = 0; h < 4; ++h) {                 // 4 halfwords = qs bytes 8(t&1) .. +8
        const uint16_t two = blk[1 + 4 * (t & 1) + h];
        const __half a = __float2half((float)(((two >> shift) & 0xF) - 8) * d);
        const __half c = __float2half((float)(((two >> (8 + shift)) & 0xF) - 8) * d);
        packed[h] = (uint32_t)__half_as_ushort(a) | (uint32_t)__half_as_ushort(c) << 16;
    }
    // one 16-byte store: 4 threads write a block's 64 bytes, a warp 512 in a row
    reinterpret_cast<uint4 *>(out)[4 * i + t] = make_uint4(packed[0], packed[1], packed[2], packed[3]);
}

// ---- lesson 2: fused dequantize + GEMV ------------------------------------------

// 128 + q as a float, q the nibble in byte t of word (step 14): one PRMT copies byte t into
// bits 16-23 of 128.0f (magic = 0x43000000; ulp 2^-16, so they count whole units), and magic
// sits in a register so that the selector can be PRMT's immediate.
__device__ __forceinline__ float nib_128(uint32_t word, uint32_t magic, int t) {
    return __uint_as_float(__byte_perm(word, magic, 0x7044 | (t << 8)));
}

// Global -> shared with no register in between (cp.async, sm_80+): in flight while the warp computes.
template <int BYTES>
__device__ __forceinline__ void cp_async(void *smem, const void *gmem) {
    const uint32_t s = (uint32_t)__cvta_generic_to_shared(smem);
    if (BYTES == 16) asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(s), "l"(gmem));
    else asm volatile("cp.async.ca.shared.global [%0], [%1], %2;" ::"r"(s), "l"(gmem), "n"(BYTES));
}

// A block takes Rows rows; its Warps warps split K: warp w takes passes w, w + Warps, ... (a
// pass: SB = 32*Bpl blocks of each row), Stages of them in flight in a ring of cp.async
// buffers, and the partial sums meet in shared memory.  T, the staging copy: uint4 when
// K % 256 == 0, uint32_t when K % 64 == 0 (both by cp.async), else uint16_t by plain copies.
template <typename T, int Rows, int Bpl, int Warps, int Stages, bool Prefetch>
__global__ void __launch_bounds__(32 * Warps)
qgemv_q4_0(int N, int K, const uint8_t *__restrict__ W, const __half *__restrict__ x, __half *__restrict__ y,
           int ahead) {
    constexpr int SB = 32 * Bpl, SB_BYTES = SB * 18;
    static_assert(Rows >= 1 && Rows <= 8 && Bpl >= 1 && Warps >= 1 && 32 * Warps <= 1024 && Stages >= 1,
                  "fused: 1..8 rows, whole warps, at least one stage");
    static_assert(Stages * Warps * Rows * SB_BYTES + Warps * Rows * 4 <= 48 * 1024,
                  "fused: the stage ring fits in 48 KB of static shared memory");
    __shared__ uint4 stage[Stages][Warps][Rows][SB_BYTES / 16];   // Stages*Warps*Rows*SB_BYTES: 18 KB at 1, 4, 4, Bpl 2
    __shared__ float partial[Warps][Rows];                         // each warp's row sums
    constexpr int MAXW = (SB_BYTES / (int)sizeof(T) + 31) / 32;   // staging copies per lane and row
#if __CUDA_ARCH__ >= 800
    constexpr bool ASYNC = sizeof(T) >= 4;
#else
    constexpr bool ASYNC = false;   // no cp.async before sm_80: the plain-copy path, same result
#endif
    const int lane = threadIdx.x, warp = threadIdx.y;
    const int row0 = blockIdx.x * Rows, NB = K / 32;
    const uint8_t *src[Rows];
    float acc[Rows];
#pragma unroll
    for (int j = 0; j < Rows; ++j) {
        const int r = min(row0 + j, N - 1);       // rows past N re-read row N-1, never stored
        src[j] = W + (size_t)r * NB * 18;
        acc[j] = 0.0f;
    }
    const float4 *x4 = reinterpret_cast<const float4 *>(x);
    uint32_t magic;
    asm("mov.b32 %0, 0x43000000;" : "=r"(magic));

    // Stage the pass at block c0 into buffer buf: lane i copies words i, i+32, ... (a warp's copy reads one run).
    auto fill = [&](int c0, int buf) {
        const int nwords = min(SB, NB - c0) * 18 / (int)sizeof(T);
        T r[Rows][MAXW];                            // sync path: all loads before the first store
#pragma unroll
        for (int j = 0; j < Rows; ++j)
#pragma unroll
            for (int b = 0; b < MAXW; ++b) {
                const int i = lane + 32 * b;
                const T *g = reinterpret_cast<const T *>(src[j] + (size_t)c0 * 18) + i;
                T *s = reinterpret_cast<T *>(stage[buf][warp][j]) + i;
                if (i < nwords) {
                    if constexpr (ASYNC) cp_async<sizeof(T)>(s, g);
                    else r[j][b] = __ldcs(g);
                }
            }
        if constexpr (!ASYNC)
#pragma unroll
            for (int j = 0; j < Rows; ++j)
#pragma unroll
                for (int b = 0; b < MAXW; ++b)
                    if (lane + 32 * b < nwords) reinterpret_cast<T *>(stage[buf][warp][j])[lane + 32 * b] = r[j][b];
    };

#if __CUDA_ARCH__ >= 900
    // Ask L2 for the block's rows (one run), so every pass's DRAM reads start now; lane 1 for the block a wave later.
    if constexpr (Prefetch && sizeof(T) == 16)
        if (warp == 0 && lane < 2 && (lane == 0 || ahead > 0) && blockIdx.x + lane * ahead < gridDim.x) {
            const int r = (blockIdx.x + lane * ahead) * Rows;
            asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" ::"l"(W + (size_t)r * NB * 18),
                         "r"((uint32_t)(min(Rows, N - r) * NB * 18)) : "memory");
        }
#endif
    // Block l + 32b of a pass starts at byte 18l + 576b: 4-aligned for even lanes, +2 for odd.
    // Its qs word q is bytes 2..5 of words q, q+1 (even) or word q+1 (odd): one funnel shift by
    // 16 or 32 (clamped) serves both, and d is word 0 shifted by 0 or 16.
    const uint32_t odd = lane & 1, dsh = 16 * odd, qsh = 16 + 16 * odd;
    const int step = Warps * SB;                   // this warp's passes: c0 = warp*SB + i*step
    int cf = warp * SB, fb = 0;                    // next pass to stage, and its buffer
#pragma unroll
    for (int s = 0; s < Stages - 1; ++s) {         // prologue: Stages - 1 passes in flight
        if (cf < NB) fill(cf, fb);
        if constexpr (ASYNC) asm volatile("cp.async.commit_group;");   // maybe empty: keeps the count
        cf += step;
        fb = fb + 1 == Stages ? 0 : fb + 1;
    }
    for (int c0 = warp * SB, buf = 0; c0 < NB; c0 += step) {
        if (cf < NB) fill(cf, fb);                 // Stages - 1 passes ahead of this one
        if constexpr (ASYNC) asm volatile("cp.async.commit_group;");
        cf += step;
        fb = fb + 1 == Stages ? 0 : fb + 1;
        if constexpr (ASYNC) asm volatile("cp.async.wait_group %0;" ::"n"(Stages - 1) : "memory");   // this pass landed
        __syncwarp();                              // ... for every lane's copies
        const int nblk = min(SB, NB - c0);
        // Lane l takes blocks l, l + 32, ...: its x is 64 bytes from its neighbour's, so an LDG.128 of x spans 16 lines
#pragma unroll
        for (int bb = 0; bb < Bpl; ++bb) {
            const int blk = lane + 32 * bb;
            if (blk >= nblk) break;
#if LOADS_ONLY   // the same loads of x and reads of the stage, XORs instead of the math
            uint32_t h = 0;
#pragma unroll
            for (int v = 0; v < 4; ++v) {
                const uint4 xq = __ldg(reinterpret_cast<const uint4 *>(x4) + 4 * (c0 + blk) + v);
                h ^= xq.x ^ xq.y ^ xq.z ^ xq.w;
            }
#pragma unroll
            for (int j = 0; j < Rows; ++j) {
                const uint32_t *wd = reinterpret_cast<const uint32_t *>(stage[buf][warp][j]) + (18 * blk) / 4;
                uint32_t hj = h ^ dsh ^ qsh;
#pragma unroll
                for (int q = 0; q < 5; ++q) hj ^= wd[q];
                acc[j] += __uint_as_float(hj & 0x3FFFFFFFu);
            }
#else
            float xf[32];                          // the block's 32 columns of x, in fp32
#pragma unroll
            for (int v = 0; v < 4; ++v) {
                const float4 xq = __ldg(x4 + 4 * (c0 + blk) + v);
                const __half2 *xh = reinterpret_cast<const __half2 *>(&xq);
#pragma unroll
                for (int h = 0; h < 4; ++h) {
                    const float2 f = __half22float2(xh[h]);
                    xf[8 * v + 2 * h] = f.x;
                    xf[8 * v + 2 * h + 1] = f.y;
                }
            }
            // sum x (q - 8) = sum x (128 + q) - 136 sum x: the correction once per word of qs (8 columns), sum x once for all rows
            float sx[4];
#pragma unroll
            for (int q = 0; q < 4; ++q)
                sx[q] = ((xf[4 * q] + xf[4 * q + 1]) + (xf[4 * q + 2] + xf[4 * q + 3])) +
                        ((xf[16 + 4 * q] + xf[16 + 4 * q + 1]) + (xf[16 + 4 * q + 2] + xf[16 + 4 * q + 3]));
#pragma unroll
            for (int j = 0; j < Rows; ++j) {
                const uint32_t *wd = reinterpret_cast<const uint32_t *>(stage[buf][warp][j]) + (18 * blk) / 4;
                uint32_t v[5];
#pragma unroll
                for (int q = 0; q < 5; ++q) v[q] = wd[q];
                const float d = __half2float(__ushort_as_half((uint16_t)(v[0] >> dsh)));
                float sum = 0.0f;
#pragma unroll
                for (int q = 0; q < 4; ++q) {      // qs bytes 4q .. 4q+3
                    const uint32_t qs = __funnelshift_rc(v[q], v[q + 1], qsh);
                    const uint32_t lo = qs & 0x0F0F0F0Fu, hi = (qs >> 4) & 0x0F0F0F0Fu;
                    sum = fmaf(-136.0f, sx[q], sum);   // first, so the running sum stays near the answer
#pragma unroll
                    for (int t = 0; t < 4; ++t) {  // column 4q+t (low nibble) and 16+4q+t (high)
                        sum = fmaf(xf[4 * q + t], nib_128(lo, magic, t), sum);
                        sum = fmaf(xf[16 + 4 * q + t], nib_128(hi, magic, t), sum);
                    }
                }
                acc[j] = fmaf(d, sum, acc[j]);     // d once per block
            }
#endif
        }
        __syncwarp();                              // this buffer is refilled Stages - 1 passes later
        buf = buf + 1 == Stages ? 0 : buf + 1;
    }
    // Each warp's row sums, then the Warps partial sums of each row.
#pragma unroll
    for (int j = 0; j < Rows; ++j) {
        for (int off = 16; off > 0; off /= 2) acc[j] += __shfl_xor_sync(0xffffffffu, acc[j], off);
        if (lane == 0) partial[warp][j] = acc[j];
    }
    __syncthreads();
    if (warp == 0 && lane < Rows && row0 + lane < N) {
        float s = 0.0f;
#pragma unroll
        for (int w = 0; w < Warps; ++w) s += partial[w][lane];
        y[row0 + lane] = __float2half(s);
    }
}

// ---- launchers -------------------------------------------------------------------

enum { DQ_ONE, DQ_TPB, DQ_WARP };
static int ids[3] = {DQ_ONE, DQ_TPB, DQ_WARP};

static void launch_dequant(const kl_dequant_args *a, void *ctx, cudaStream_t stream) {
    const size_t nb = (size_t)a->n * (a->k / 32);   // rows are contiguous: one flat run of blocks
    const kl_block_q4_0 *b = (const kl_block_q4_0 *)a->w;
    __half *out = (__half *)a->out;
    switch (*(int *)ctx) {
    case DQ_ONE: dq_one_thread_blocks<<<(unsigned)nb, 1, 0, stream>>>(b, out); break;
    case DQ_TPB: dq_thread_per_qblock<<<(unsigned)((nb + DQ_THREADS - 1) / DQ_THREADS), DQ_THREADS, 0, stream>>>(nb, b, out); break;
    case DQ_WARP:
        dq_warp_coalesced<<<(unsigned)((4 * nb + DQ_THREADS - 1) / DQ_THREADS), DQ_THREADS, 0, stream>>>(
            nb, (const uint16_t *)a->w, out);
        break;
    }
    KL_CHECK_LAUNCH();
}

// The fused kernel's configurations (Rows, Bpl, Warps, Stages, Prefetch: 0 none, 1 the block's
// rows, 2 and a wave ahead): -D flags compile one; else the list below, from which --rows ...
// --prefetch (Prefetch + 1) or, by default, fused_table() picks.
#if defined(ROWS) || defined(BPL) || defined(WARPS) || defined(STAGES) || defined(PREFETCH)
#ifndef ROWS
#define ROWS 4
#endif
#ifndef BPL
#define BPL 2
#endif
#ifndef WARPS
#define WARPS 4
#endif
#ifndef STAGES
#define STAGES 2
#endif
#ifndef PREFETCH
#define PREFETCH 0
#endif
#define FUSED_CONFIGS X(ROWS, BPL, WARPS, STAGES, PREFETCH)
#else
// The table's five, and (4, 2, 4, 2, 0) for exercise 1 of the page.  A wave ahead measured slower everywhere: -DPREFETCH=2.
#define FUSED_CONFIGS X(4, 1, 4, 1, 1) X(4, 2, 4, 1, 1) X(4, 1, 4, 2, 0) X(4, 2, 1, 2, 0) X(4, 2, 4, 2, 0) X(4, 1, 1, 2, 0)
#endif

// Blocks of one fused kernel that the GPU holds at once.
template <typename T, int R, int B, int Wn, int S, bool P>
static int blocks_at_once() { return kl_blocks_at_once((const void *)qgemv_q4_0<T, R, B, Wn, S, P>, 32 * Wn, 0); }

template <int R, int B, int Wn, int S, int P>
static void launch_cfg(const kl_gemv_args *a, cudaStream_t stream) {
    const int grid = (a->n + R - 1) / R;           // one block per R rows: N/R blocks
    const dim3 block(32, Wn);
    const int ahead = P == 2 ? blocks_at_once<uint4, R, B, Wn, S, true>() : 0;   // prefetch a wave ahead
    const uint8_t *w = (const uint8_t *)a->w;
    const __half *x = (const __half *)a->x;
    __half *y = (__half *)a->y;
    // Row r starts at byte 18*(K/32)*r: 16-byte aligned for every r when K % 256 == 0.
    if (a->k % 256 == 0) qgemv_q4_0<uint4, R, B, Wn, S, P != 0><<<grid, block, 0, stream>>>(a->n, a->k, w, x, y, ahead);
    else if (a->k % 64 == 0) qgemv_q4_0<uint32_t, R, B, Wn, S, P != 0><<<grid, block, 0, stream>>>(a->n, a->k, w, x, y, ahead);
    else qgemv_q4_0<uint16_t, R, B, Wn, S, P != 0><<<grid, block, 0, stream>>>(a->n, a->k, w, x, y, ahead);
}

struct fused_cfg {
    int rows, bpl, warps, stages, prefetch;
    void (*launch)(const kl_gemv_args *a, cudaStream_t stream);
};
#define X(r, b, w, s, p) {r, b, w, s, p, launch_cfg<r, b, w, s, p>},
static const fused_cfg cfgs[] = {FUSED_CONFIGS};
#undef X
static const int ncfgs = (int)(sizeof cfgs / sizeof cfgs[0]);
static int opt_rows, opt_bpl, opt_warps, opt_stages, opt_prefetch;   // --rows ... (0: by size)

// The first compiled configuration that matches (0: any; prefetch as Prefetch + 1), or -1.
static int fused_find(int rows, int bpl, int warps, int stages, int prefetch) {
    for (int c = 0; c < ncfgs; ++c)
        if ((!rows || cfgs[c].rows == rows) && (!bpl || cfgs[c].bpl == bpl) && (!warps || cfgs[c].warps == warps) &&
            (!stages || cfgs[c].stages == stages) && (!prefetch || cfgs[c].prefetch == prefetch - 1))
            return c;
    return -1;
}
// One-warp blocks of (4, B, 1, 2, none) that the GPU holds at once, with the copy launch_cfg picks for K.
template <int B>
static int one_warp_wave(int k) {
    return k % 256 == 0   ? blocks_at_once<uint4, 4, B, 1, 2, false>()
           : k % 64 == 0  ? blocks_at_once<uint32_t, 4, B, 1, 2, false>()
                          : blocks_at_once<uint16_t, 4, B, 1, 2, false>();
}
// By size (the page's launch table, measured on the H100): four rows a block; one-warp blocks
// for four waves or more, or when they fill a quarter to all of one wave; else four warps
// split K, one prefetched pass each up to K = 8192, two stages of Bpl 1 above.
static int fused_table(int n, int k) {
    if (ncfgs == 1) return 0;                      // -D flags: the one configuration
    const int blocks = (n + 3) / 4;                // one block per 4 rows
    if (blocks >= 4 * one_warp_wave<2>(k)) return fused_find(4, 2, 1, 2, 1);   // very tall: many waves
    const int wave1 = one_warp_wave<1>(k);
    if (blocks <= wave1 && 4 * blocks >= wave1) return fused_find(4, 1, 1, 2, 1);   // one wave, at least a quarter full
    if (k <= 8192) return fused_find(4, k <= 4096 ? 1 : 2, 4, 1, 2);
    return fused_find(4, 1, 4, 2, 1);
}

static bool fused_options() { return opt_rows | opt_bpl | opt_warps | opt_stages | opt_prefetch; }
static int fused_by_options() { return fused_find(opt_rows, opt_bpl, opt_warps, opt_stages, opt_prefetch); }

// Options that name no compiled configuration are refused before the GPU is touched.
static int accepts(const kl_problem *, char *msg, size_t len) {
    if (!fused_options() || fused_by_options() >= 0) return 0;
    size_t o = (size_t)snprintf(msg, len, "no compiled fused configuration has --rows %d --bpl %d --warps %d --stages %d "
                                          "--prefetch %d (0: any); compiled (rows bpl warps stages prefetch+1):",
                                opt_rows, opt_bpl, opt_warps, opt_stages, opt_prefetch);
    for (int c = 0; c < ncfgs && o < len; ++c)
        o += (size_t)snprintf(msg + o, len - o, " (%d %d %d %d %d)", cfgs[c].rows, cfgs[c].bpl, cfgs[c].warps,
                              cfgs[c].stages, cfgs[c].prefetch + 1);
    return 1;
}

static void launch_fused(const kl_gemv_args *a, void *, cudaStream_t stream) {
    cfgs[fused_options() ? fused_by_options() : fused_table(a->n, a->k)].launch(a, stream);   // accepts() checked the options
    KL_CHECK_LAUNCH();
}

int main(int argc, char **argv) {
    kl_step step = {};
    step.number = 15;
    step.title = "q4_0: dequantize kernels (occupancy, coalescing), then a fused dequantize-GEMV";
    const char *names[3] = {"one_thread_blocks", "thread_per_qblock", "warp_coalesced"};
    for (int i = 0; i < 3; ++i) {
        step.kernels[i].op = &kl_op_dequant_q4_0;
        step.kernels[i].variant = names[i];
        step.kernels[i].dequant = launch_dequant;
        step.kernels[i].ctx = &ids[i];
    }
    step.kernels[3].op = &kl_op_qgemv_q4_0;
    step.kernels[3].variant = "fused";
    step.kernels[3].gemv = launch_fused;
    step.accepts = accepts;
    step.opts[0] = (kl_opt){"rows", "fused: rows per block (0: the table by size)", &opt_rows, 0, 8};
    step.opts[1] = (kl_opt){"bpl", "fused: q4_0 blocks per lane and pass (0: table)", &opt_bpl, 0, 8};
    step.opts[2] = (kl_opt){"warps", "fused: warps per block, splitting K (0: table)", &opt_warps, 0, 32};
    step.opts[3] = (kl_opt){"stages", "fused: passes in flight per warp (0: table)", &opt_stages, 0, 8};
    step.opts[4] = (kl_opt){"prefetch", "fused: L2 prefetch: 1 none, 2 the block's rows, 3 and a wave ahead (0: table)",
                            &opt_prefetch, 0, 3};
    return kl_main(argc, argv, &step);
}
