// needs: sm_80 (mma.sync m16n8k16 with bf16 operands)
/*
 * Step 18 - ldmatrix and a swizzled shared-memory layout: no bank conflicts.
 *
 * v17 loads each fragment register with its own 32-bit shared load, and
 * those loads conflict 8 ways: a row of As or Bs is 64 bf16 = 128 bytes, one
 * full sweep of the 32 banks, so the 8 rows a warp reads at once (one per
 * group of 4 lanes) all start in the same bank.  Two changes:
 *
 *   ldmatrix.x4: one instruction loads four 8 x 8 bf16 matrices and hands
 *     each lane exactly the fragment registers mma wants.  Lanes 0-7 give the
 *     addresses of matrix 0's 8 rows (16 bytes each), lanes 8-15 matrix 1's,
 *     and so on.  A 16 x 16 A fragment is one ldmatrix.x4 instead of 4 LDS.32,
 *     two 16 x 8 B fragments are one instead of 4.
 *   The 128-byte swizzle: the 16-byte chunk c of row r is stored at chunk
 *     c ^ (r % 8).  ldmatrix reads one chunk column of 8 consecutive rows:
 *     with the swizzle those are 8 different chunks, i.e. all 32 banks once.
 *     The same pattern is CUTLASS's Swizzle<3,4,3> and TMA's SWIZZLE_128B,
 *     which v20 onward will ask the hardware for.
 *
 * Napkin math per warp and k16 step: 4 + 2 ldmatrix.x4 (6 x 512 bytes) for 16
 * mma, each load in 4 conflict-free passes of 128 bytes: 24 shared-memory
 * passes where v17 needed 24 loads x 8 passes = 192.
 *
 * Build and run:   make step18 && ./step18          (sizes 1024..8192, model shapes)
 *                  make profile STEP=18             (the bank-conflict counters)
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
static_assert(BK % 16 == 0 && NI % 2 == 0, "k steps of 16; B fragments loaded in pairs");
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

// Four 8 x 8 bf16 matrices from shared memory: lane l gives the address of
// row l % 8 of matrix l / 8 and receives, in r[q], the two elements (row
// l / 4, columns 2 (l % 4) and 2 (l % 4) + 1) of matrix q: an mma fragment.
__device__ __forceinline__ void ldmatrix_x4(uint32_t r[4], const __nv_bfloat16 *p) {
    const unsigned addr = (unsigned)__cvta_generic_to_shared(p);
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(addr));
}

// Where the 8 bf16 at (row r, columns 8c .. 8c+7) of a tile live: the
// 16-byte chunk c of row r is stored at chunk c ^ (r % 8) (128-byte swizzle).
static_assert(BK == 64, "the swizzle below spreads the 8 chunks of a 128-byte row");
__device__ __forceinline__ __nv_bfloat16 *chunk(__nv_bfloat16 (*tile)[BK], int r, int c) {
    return &tile[r][(c ^ (r % 8)) * 8];
}

// Copy ROWS x BK of a row-major matrix (rows of K elements) into a swizzled
// shared tile, 16 bytes (8 bf16) per load; rows past `rows` and columns past
// K are zeros, so a partial tile multiplies as if padded.
template <int ROWS>
__device__ __forceinline__ void load_tile(__nv_bfloat16 (*tile)[BK], const __nv_bfloat16 *g, int rows,
                                          int K, int k0) {
#pragma unroll
    for (int j = 0; j < ROWS * BK / 8 / NUM_THREADS; ++j) {   // a constant trip count: unrolled
        const int i = threadIdx.x + j * NUM_THREADS;
        const int r = i / (BK / 8), c = i % (BK / 8);
        uint4 v = make_uint4(0, 0, 0, 0);
        if (r < rows && k0 + 8 * c < K) v = *reinterpret_cast<const uint4 *>(g + (size_t)r * K + k0 + 8 * c);
        *reinterpret_cast<uint4 *>(chunk(tile, r, c)) = v;
    }
}

__global__ void __launch_bounds__(NUM_THREADS)
gemm_ldmatrix(int M, int N, int K, const __nv_bfloat16 *A, const __nv_bfloat16 *B, __nv_bfloat16 *C) {
    __shared__ __align__(128) __nv_bfloat16 As[BM][BK];   // 128*64*2 = 16 KB, swizzled
    __shared__ __align__(128) __nv_bfloat16 Bs[BN][BK];   // 16 KB, swizzled

    const int tilesN = (N + BN - 1) / BN;
    const int row0 = blockIdx.x / tilesN * BM, col0 = blockIdx.x % tilesN * BN;
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int wm = warp / (BN / WN) * WM, wn = warp % (BN / WN) * WN;   // this warp's piece of the tile
    const int g = lane / 4, t = lane % 4;   // accumulator coordinates: group and thread in group

    float acc[MI][NI][4] = {};   // 64 x 32 of C per warp: 64 floats per thread
    A += (size_t)row0 * K;
    B += (size_t)col0 * K;
    for (int k0 = 0; k0 < K; k0 += BK) {
        load_tile<BM>(As, A, M - row0, K, k0);
        load_tile<BN>(Bs, B, N - col0, K, k0);
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < BK; kk += 16) {
            // A fragment of a 16 x 16 tile = matrices (rows 0-7, k 0-7), (rows
            // 8-15, k 0-7), (rows 0-7, k 8-15), (rows 8-15, k 8-15): lane l
            // points at row l % 16, chunk l / 16.  Two B fragments (16 x 8
            // each, Bs rows = columns of C) = (n 0-7, k 0-7), (n 0-7, k 8-15),
            // (n 8-15, k 0-7), (n 8-15, k 8-15): row l % 8 + 8 (l / 16), chunk l / 8 % 2.
            uint32_t a[MI][4], b[NI][2];
#pragma unroll
            for (int i = 0; i < MI; ++i)
                ldmatrix_x4(a[i], chunk(As, wm + i * 16 + lane % 16, kk / 8 + lane / 16));
#pragma unroll
            for (int j = 0; j < NI; j += 2) {
                uint32_t r[4];
                ldmatrix_x4(r, chunk(Bs, wn + j * 8 + lane % 8 + 8 * (lane / 16), kk / 8 + lane / 8 % 2));
                b[j][0] = r[0], b[j][1] = r[1], b[j + 1][0] = r[2], b[j + 1][1] = r[3];
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
    gemm_ldmatrix<<<(unsigned)tiles, NUM_THREADS, 0, stream>>>(
        m, n, k, (const __nv_bfloat16 *)a, (const __nv_bfloat16 *)b, (__nv_bfloat16 *)c);
    KL_CHECK_LAUNCH();
}

int main(int argc, char **argv) {
    kl_step step = {};
    step.number = 18;
    step.title = "ldmatrix and a 128-byte swizzle: conflict-free fragment loads";
    step.min_cc = 80;
    step.kernels[0].op = &kl_op_gemm_bf16;
    step.kernels[0].gemm_bf16 = launch;
    return kl_main(argc, argv, &step);
}
