// needs: sm_80 (mma.sync m16n8k16 with bf16 operands)
/*
 * Step 17 - the tensor core, simplest: mma.sync m16n8k16 on shared-memory tiles.
 *
 * Part III computes C[m][n] = A[m][k] B[n][k]^T in bf16 with fp32 sums, the
 * layout of a linear layer (A the activations, B the weights, both with k
 * contiguous).  v9 reached ~49 TFLOPS with FP32 FMAs, one multiply-add per
 * lane per clock.  One warp-wide `mma.sync.m16n8k16` multiplies a 16 x 16
 * tile of A by a 16 x 8 tile of B and adds the 16 x 8 product into fp32
 * accumulators: 4096 FLOP in one instruction, where an FFMA is 64.
 *
 * The block tiling is v7's: a 128 x 128 tile of C per block of 8 warps, its
 * A and B strips staged through shared memory BK = 64 columns of k at a time.
 * What is new is the warp's work: a 64 x 32 piece of C held as 4 x 4 mma
 * tiles, and the fragments - which thread holds which element of A, B and
 * the accumulators - fixed by the instruction (docs/v17_mma_sync.md draws
 * them).  Each thread loads its fragments with plain 32-bit shared loads
 * (two bf16 of one row).
 *
 * Napkin math per warp and k16 step: 4 A fragments (4 x 4 LDS.32) and 4 B
 * fragments (4 x 2 LDS.32) feed 16 mma: 24 loads per 16 mma.  Shared memory
 * serves 32 banks x 4 bytes per clock per SM; one mma needs 1.5 warp-loads
 * of 128 bytes.  Those loads conflict: a row of As is 128 bytes, so the 8
 * rows a warp reads (one per group of 4 lanes) all start in bank 0 and each
 * load takes 8 passes.  v18 fixes that; this step shows the instruction.
 *
 * Build and run:   make step17 && ./step17          (sizes 1024..8192, model shapes)
 *                  ./step17 --check-only --sizes 1,7,33,1000 -k 64   (K: a multiple of 8)
 */
#include "kl.h"

#include <cuda_bf16.h>

#ifndef BM
#define BM 128
#endif
#ifndef BN
#define BN 128
#endif
#ifndef BK
#define BK 64
#endif
#ifndef WM
#define WM 64   // rows of C per warp
#endif
#ifndef WN
#define WN 32   // columns of C per warp
#endif
#define NUM_THREADS (32 * (BM / WM) * (BN / WN))
#define MI (WM / 16)   // mma tiles down a warp's piece of C
#define NI (WN / 8)    // mma tiles across it
static_assert(BM % WM == 0 && BN % WN == 0 && WM % 16 == 0 && WN % 8 == 0, "warps tile the block");
static_assert(BK % 16 == 0, "k steps of 16");
static_assert((BM * BK / 8) % NUM_THREADS == 0 && (BN * BK / 8) % NUM_THREADS == 0,
              "16-byte loads split evenly over the threads");

// D = A * B + D on one warp: a 16 x 16 (row) by 16 x 8 (col) bf16 product
// added to a 16 x 8 fp32 tile.  a: 4 registers of 2 bf16, b: 2, d: 4 floats.
__device__ __forceinline__ void mma_m16n8k16(float d[4], const uint32_t a[4], const uint32_t b[2]) {
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
                 "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

// Two bf16 of one row of a shared tile, as the 32-bit register mma reads.
__device__ __forceinline__ uint32_t lds32(const __nv_bfloat16 *p) {
    return *reinterpret_cast<const uint32_t *>(p);
}

// Copy ROWS x BK of a row-major matrix (rows of K elements) into a shared
// tile, 16 bytes (8 bf16) per load; rows past `rows` and columns past K are
// zeros, so a partial tile multiplies as if padded.
template <int ROWS>
__device__ __forceinline__ void load_tile(__nv_bfloat16 (*tile)[BK], const __nv_bfloat16 *g, int rows,
                                          int K, int k0) {
#pragma unroll
    for (int j = 0; j < ROWS * BK / 8 / NUM_THREADS; ++j) {   // a constant trip count: unrolled
        const int i = threadIdx.x + j * NUM_THREADS;
        const int r = i / (BK / 8), c = i % (BK / 8) * 8;
        uint4 v = make_uint4(0, 0, 0, 0);
        if (r < rows && k0 + c < K) v = *reinterpret_cast<const uint4 *>(g + (size_t)r * K + k0 + c);
        *reinterpret_cast<uint4 *>(&tile[r][c]) = v;
    }
}

__global__ void __launch_bounds__(NUM_THREADS)
gemm_mma_sync(int M, int N, int K, const __nv_bfloat16 *A, const __nv_bfloat16 *B, __nv_bfloat16 *C) {
    __shared__ __align__(16) __nv_bfloat16 As[BM][BK];   // 128*64*2 = 16 KB
    __shared__ __align__(16) __nv_bfloat16 Bs[BN][BK];   // 16 KB

    const int tilesN = (N + BN - 1) / BN;
    const int row0 = blockIdx.x / tilesN * BM, col0 = blockIdx.x % tilesN * BN;
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int wm = warp / (BN / WN) * WM, wn = warp % (BN / WN) * WN;   // this warp's piece of the tile
    const int g = lane / 4, t = lane % 4;   // the fragment coordinates: group and thread in group

    float acc[MI][NI][4] = {};   // 64 x 32 of C per warp: 64 floats per thread
    A += (size_t)row0 * K;
    B += (size_t)col0 * K;
    for (int k0 = 0; k0 < K; k0 += BK) {
        load_tile<BM>(As, A, M - row0, K, k0);
        load_tile<BN>(Bs, B, N - col0, K, k0);
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < BK; kk += 16) {
            // A fragment of a 16 x 16 tile: rows g and g + 8, columns 2t, 2t+1
            // and 2t + 8, 2t + 9.  B fragment of a 16 x 8 tile: column (= row
            // of Bs) g, k 2t, 2t+1 and 2t + 8, 2t + 9.
            uint32_t a[MI][4], b[NI][2];
#pragma unroll
            for (int i = 0; i < MI; ++i) {
                const __nv_bfloat16 *p = &As[wm + i * 16 + g][kk + 2 * t];
                a[i][0] = lds32(p);
                a[i][1] = lds32(p + 8 * BK);
                a[i][2] = lds32(p + 8);
                a[i][3] = lds32(p + 8 * BK + 8);
            }
#pragma unroll
            for (int j = 0; j < NI; ++j) {
                const __nv_bfloat16 *p = &Bs[wn + j * 8 + g][kk + 2 * t];
                b[j][0] = lds32(p);
                b[j][1] = lds32(p + 8);
            }
#pragma unroll
            for (int i = 0; i < MI; ++i)
#pragma unroll
                for (int j = 0; j < NI; ++j) mma_m16n8k16(acc[i][j], a[i], b[j]);
        }
        __syncthreads();
    }

    // Accumulator fragment: rows g and g + 8, columns 2t and 2t + 1.  Each
    // pair of columns is one 4-byte store when N is even (then it is aligned).
#pragma unroll
    for (int i = 0; i < MI; ++i)
#pragma unroll
        for (int j = 0; j < NI; ++j)
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                const int r = row0 + wm + i * 16 + g + 8 * h, c = col0 + wn + j * 8 + 2 * t;
                if (r >= M || c >= N) continue;
                __nv_bfloat16 *out = C + (size_t)r * N + c;
                const float v0 = acc[i][j][2 * h], v1 = acc[i][j][2 * h + 1];
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
    const long long tiles = (long long)((m + BM - 1) / BM) * ((n + BN - 1) / BN);   // < 2^31 for any C that fits
    gemm_mma_sync<<<(unsigned)tiles, NUM_THREADS, 0, stream>>>(
        m, n, k, (const __nv_bfloat16 *)a, (const __nv_bfloat16 *)b, (__nv_bfloat16 *)c);
    KL_CHECK_LAUNCH();
}

int main(int argc, char **argv) {
    kl_step step = {};
    step.number = 17;
    step.title = "tensor cores: mma.sync m16n8k16 on shared-memory tiles (bf16 in, fp32 sums)";
    step.min_cc = 80;
    step.kernels[0].op = &kl_op_gemm_bf16;
    step.kernels[0].gemm_bf16 = launch;
    return kl_main(argc, argv, &step);
}
