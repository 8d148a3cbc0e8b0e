/*
 * What setmaxnreg changes for ptxas: the smallest kernel that shows it (v22's page).
 * Compiled only, never run: ptxas -v says what it allocated.
 *
 * A block of THREADS threads: warpgroup 0 gives registers back and leaves, the
 * others hold a 64 x 256 fp32 accumulator (128 floats per thread, one wgmma
 * m64n256k16 per k step) plus EXTRA floats loaded before the loop and read
 * after it, so that 128 + EXTRA values are live across the wgmma.
 *
 *   nvcc -gencode=arch=compute_90a,code=sm_90a -Xptxas -v -c tools/setmaxnreg_demo.cu -o /dev/null -DINC=0
 *   nvcc -gencode=arch=compute_90a,code=sm_90a -Xptxas -v -c tools/setmaxnreg_demo.cu -o /dev/null -DINC=1
 *
 * -DINC=0: the cap at entry (64K / 384 = 168) holds for the whole kernel: spills.
 * -DINC=1: setmaxnreg.inc 232 in the consumers, and no spill; ptxas -v still
 *          reports 168, the count at entry (cuobjdump -sass shows registers
 *          above R167 after the inc).
 * -DLB=0:  no __launch_bounds__: ptxas cannot know the count at entry, ignores
 *          setmaxnreg (C7508) and allocates as it likes.
 * -DTHREADS=512 -DINC=1: cap 128 at entry; the inc raises the consumers to
 *          152, but one m64n256 wgmma must compile within the cap at entry: C7602.
 */
#include <cstdint>

#ifndef THREADS
#define THREADS 384
#endif
#ifndef INC
#define INC 1   // 1: the producer decreases to PRODUCER_REGS, the consumers increase to CONSUMER_REGS
#endif
#ifndef LB
#define LB 1    // 1: __launch_bounds__(THREADS), which fixes the count at entry
#endif
#ifndef EXTRA
#define EXTRA 80   // live floats beside the accumulator
#endif
#define PRODUCER_REGS 40
// What the other warpgroups can take: the SM's 64K less the producer's, in multiples of 8.
#define CONSUMER_REGS ((65536 - 128 * PRODUCER_REGS) / (THREADS - 128) / 8 * 8)
static_assert(THREADS % 128 == 0 && THREADS >= 384, "a producer warpgroup and two or more others (setmaxnreg takes at most 256)");
static_assert(EXTRA >= 1, "at least one extra float");

#if LB
#define BOUNDS __launch_bounds__(THREADS)
#else
#define BOUNDS
#endif

#define D8(i) "+f"(d[i]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3]), "+f"(d[i + 4]), "+f"(d[i + 5]), \
              "+f"(d[i + 6]), "+f"(d[i + 7])
__device__ __forceinline__ void wgmma_m64n256k16(float (&d)[128], uint64_t desc_a, uint64_t desc_b) {
    asm volatile("wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 {"
                 "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
                 "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
                 "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
                 "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, "
                 "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, "
                 "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, "
                 "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, "
                 "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127"
                 "}, %128, %129, 1, 1, 1, 0, 0;\n"
                 : D8(0), D8(8), D8(16), D8(24), D8(32), D8(40), D8(48), D8(56),
                   D8(64), D8(72), D8(80), D8(88), D8(96), D8(104), D8(112), D8(120)
                 : "l"(desc_a), "l"(desc_b));
}
#undef D8

__global__ void BOUNDS demo(const float *in, float *out, uint64_t desc_a, uint64_t desc_b, int ksteps) {
    if (threadIdx.x < 128) {   // the producer's warpgroup: nothing to do here but give registers back
#if INC
        asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(PRODUCER_REGS));
#endif
        return;
    }
#if INC
    asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(CONSUMER_REGS));
#endif
    float extra[EXTRA], acc[128];
#pragma unroll
    for (int i = 0; i < EXTRA; ++i) extra[i] = in[threadIdx.x + THREADS * i];   // live until the end
#pragma unroll
    for (int i = 0; i < 128; ++i) acc[i] = 0.f;
    for (int s = 0; s < ksteps; ++s) {
        asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
        wgmma_m64n256k16(acc, desc_a + 2 * s, desc_b + 2 * s);
        asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
        asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
    }
    float sum = 0.f;
#pragma unroll
    for (int i = 0; i < 128; ++i) sum += acc[i] * extra[i % EXTRA];
    out[threadIdx.x] = sum;
}
