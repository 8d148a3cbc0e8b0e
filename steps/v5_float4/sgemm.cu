/*
 * Step 5 - float4: 16-byte global and shared-memory accesses.
 *
 * Same 32x32 tile and 4x1 micro-kernel as v4.  The copy now moves four
 * consecutive floats per instruction (LDG.E.128 instead of 4x LDG.E), Bs is
 * written with one 16-byte store, and the inner loop reads a thread's 4
 * values of A with ONE 16-byte load from the transposed As (they are 4
 * consecutive floats of a row of As).
 *
 * Napkin math (per k, per thread): v4 asked for 1 + 4 shared loads for 4
 * FMAs (ptxas merged them to 2.75); now 1 + 1 (LDS + LDS.128), and the
 * copy issues 1 global load instead of 4 per matrix per tile.  The bytes
 * are the same: what shrinks is the number of instructions the SM has to
 * issue that are not FMAs.
 *
 * A 16-byte access must be 16-byte aligned.  That holds when the base
 * pointers are, K and N are multiples of 4 (so every row starts aligned)
 * and the tiles divide the matrix (no edge checks needed).  Otherwise the
 * launcher picks the CHECKED instantiation of the same kernel: scalar,
 * bounds-checked loads and stores.  Slower, never wrong, never refused.
 *
 * Build and run:   make step5 && ./step5            (sizes 1024..8192)
 *                  ./step5 -m 1000 -n 7 -k 33 --check-only   (the checked path)
 */
#include "kl.h"

#ifndef BM
#define BM 32
#endif
#ifndef BN
#define BN 32
#endif
#ifndef BK
#define BK 32
#endif
#ifndef TM
#define TM 4
#endif
#ifndef APAD
#define APAD 4  // keeps rows of As 16-byte aligned for the float4 reads (v3 used 1)
#endif
#define NUM_THREADS (BM * BN / TM)
static_assert(BM % TM == 0 && TM % 4 == 0, "TM rows per thread, read as float4s");
static_assert(BK % 4 == 0 && BN % 4 == 0 && APAD % 4 == 0, "float4 rows of tiles");
static_assert(NUM_THREADS % 32 == 0 && NUM_THREADS <= 1024, "whole warps, at most 1024 threads");
static_assert(NUM_THREADS % (BK / 4) == 0 && (BM * BK / 4) % NUM_THREADS == 0, "the A tile copy must split evenly");
static_assert(NUM_THREADS % (BN / 4) == 0 && (BK * BN / 4) % NUM_THREADS == 0, "the B tile copy must split evenly");
static_assert((BK * (BM + APAD) + BK * BN) * 4 <= 48 * 1024, "static shared memory is limited to 48 KB");

// Four consecutive floats (r, c..c+3) of a rows x cols matrix with row
// stride ld.  Fast path: one 16-byte load, alignment and bounds guaranteed
// by the launcher.  CHECKED: four guarded loads, 0 outside the matrix
// (a 0 adds nothing to a dot product).
template <bool CHECKED>
__device__ __forceinline__ float4 load4(const float *p, int r, int c, int rows, int cols, int ld) {
    if constexpr (!CHECKED) {
        return *reinterpret_cast<const float4 *>(p + (size_t)r * ld + c);
    } else {
        float4 v = make_float4(0.f, 0.f, 0.f, 0.f);
        if (r < rows) {
            const float *q = p + (size_t)r * ld + c;
            if (c + 0 < cols) v.x = q[0];
            if (c + 1 < cols) v.y = q[1];
            if (c + 2 < cols) v.z = q[2];
            if (c + 3 < cols) v.w = q[3];
        }
        return v;
    }
}

template <bool CHECKED>
__global__ void __launch_bounds__(NUM_THREADS)
sgemm_float4(int M, int N, int K, float alpha, const float *A,
             const float *B, float beta, float *C) {
    __shared__ __align__(16) float As[BK][BM + APAD];   // transposed: As[k][m]; 32*36*4 = 4.5 KB
    __shared__ __align__(16) float Bs[BK][BN];          // 32*32*4 = 4 KB

    const int threadCol = threadIdx.x % BN, threadRow = threadIdx.x / BN;
    // The copy now counts in float4s: BK/4 of them per row of A, BN/4 per row of B.
    const int loadRowA = threadIdx.x / (BK / 4), loadColA = threadIdx.x % (BK / 4) * 4;
    const int loadRowB = threadIdx.x / (BN / 4), loadColB = threadIdx.x % (BN / 4) * 4;
    constexpr int strideA = NUM_THREADS / (BK / 4), strideB = NUM_THREADS / (BN / 4);
    const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;

    A += (size_t)row0 * K;
    B += col0;
    const int rowsA = M - row0, colsB = N - col0;

    float acc[TM] = {};
    for (int k0 = 0; k0 < K; k0 += BK) {
        const int colsA = K - k0;
#pragma unroll
        for (int r = loadRowA; r < BM; r += strideA) {
            const float4 a = load4<CHECKED>(A, r, loadColA, rowsA, colsA, K);
            // Transposing needs 4 scalar stores: the 4 values land in 4 rows of As.
            As[loadColA + 0][r] = a.x;
            As[loadColA + 1][r] = a.y;
            As[loadColA + 2][r] = a.z;
            As[loadColA + 3][r] = a.w;
        }
#pragma unroll
        for (int r = loadRowB; r < BK; r += strideB)
            *reinterpret_cast<float4 *>(&Bs[r][loadColB]) = load4<CHECKED>(B, r, loadColB, colsA, colsB, N);
        __syncthreads();
        A += BK;
        B += (size_t)BK * N;

        for (int k = 0; k < BK; ++k) {
            const float b = Bs[k][threadCol];
#pragma unroll
            for (int i = 0; i < TM; i += 4) {   // TM values of A, 4 per LDS.128
                const float4 a = *reinterpret_cast<const float4 *>(&As[k][threadRow * TM + i]);
                acc[i + 0] += a.x * b;
                acc[i + 1] += a.y * b;
                acc[i + 2] += a.z * b;
                acc[i + 3] += a.w * b;
            }
        }
        __syncthreads();
    }

    // A thread's outputs form a column of C, so the stores stay scalar.
    const int col = col0 + threadCol;
#pragma unroll
    for (int i = 0; i < TM; ++i) {
        const int row = row0 + threadRow * TM + i;
        if (!CHECKED || (row < M && col < N)) {
            float *c = &C[(size_t)row * N + col];
            *c = beta == 0.0f ? alpha * acc[i] : alpha * acc[i] + beta * *c;   // beta == 0: C not read
        }
    }
}

static bool aligned16(const void *p) { return ((uintptr_t)p & 15) == 0; }

static void launch(int M, int N, int K, float alpha, const float *A, const float *B,
                   float beta, float *C, void *ctx, cudaStream_t stream) {
    (void)ctx;
    dim3 grid((N + BN - 1) / BN, (M + BM - 1) / BM);
    // Fast path only where every tile is full and every row 16-byte aligned.
    const bool fast = M % BM == 0 && N % BN == 0 && K % BK == 0 &&
                      aligned16(A) && aligned16(B) && aligned16(C);
    if (fast)
        sgemm_float4<false><<<grid, NUM_THREADS, 0, stream>>>(M, N, K, alpha, A, B, beta, C);
    else
        sgemm_float4<true><<<grid, NUM_THREADS, 0, stream>>>(M, N, K, alpha, A, B, beta, C);
    KL_CHECK_LAUNCH();
}

int main(int argc, char **argv) {
    kl_step step = {};
    step.number = 5;
    step.title = "float4 global and shared-memory accesses (4x1 micro-kernel)";
    step.kernels[0].op = &kl_op_sgemm;
    step.kernels[0].sgemm = launch;
    return kl_main(argc, argv, &step);
}
