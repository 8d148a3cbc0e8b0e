/*
 * ptx.h - small PTX wrappers whose lesson an earlier step or the CUDA guide
 * already gave, for the steps that use them after it (device code only).
 * Each is one instruction, inlined: including this header changes no SASS.
 */
#ifndef KL_PTX_H
#define KL_PTX_H

#include <cuda_fp16.h>
#include <stdint.h>

// cp.async (step 15): global -> shared, 16 bytes, no register holds the data in flight.
// This one also asks the L2 for the whole 128-byte line around it.
static __device__ __forceinline__ void cp_async16_line(unsigned smem, const void *gmem) {
    asm volatile("cp.async.cg.shared.global.L2::128B [%0], [%1], 16;" ::"r"(smem), "l"(gmem));
}
// The same, copying `bytes` (0..16) and filling the rest of the 16 with zeros.
static __device__ __forceinline__ void cp_async16(unsigned smem, const void *gmem, int bytes) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(smem), "l"(gmem), "r"(bytes));
}
// Close this thread's group of copies (an empty group too: it keeps the count of cp_async_wait).
static __device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;"); }
// Wait until at most N of this thread's groups are in flight; "memory" keeps later reads after it.
template <int N> static __device__ __forceinline__ void cp_async_wait() {
    asm volatile("cp.async.wait_group %0;" ::"n"(N) : "memory");
}

// D = A (16x16, row) * B (16x8, col) + D: fp16 operands, fp32 accumulators (sm_80).
static __device__ __forceinline__ void mma_16816(float d[4], uint32_t a0, uint32_t a1, uint32_t a2, uint32_t a3,
                                                 uint32_t b0, uint32_t b1) {
    asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
        "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}

// Keep v in a register: an empty asm that "changes" it, so ptxas cannot recompute it at each use.
template <typename T> static __device__ __forceinline__ void pin(T &v) {
    if constexpr (sizeof(T) == 8) {
        unsigned long long u = (unsigned long long)v;
        asm volatile("" : "+l"(u));
        v = (T)u;
    } else {
        asm volatile("" : "+r"(v));
    }
}

// Programmatic dependent launch (sm_90; no-ops before, or without the launch attribute).
// Wait: the kernel before this one in the stream has finished and its writes are visible.
static __device__ __forceinline__ void griddep_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}
// Let the kernel after this one start once every block of this one has called it.
static __device__ __forceinline__ void griddep_launch_dependents() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.launch_dependents;");
#endif
}

// A flag in global memory: release orders the writer's earlier writes before it, acquire the reader's later ones after it.
static __device__ __forceinline__ void flag_release(unsigned *f, unsigned v) {
    asm volatile("st.release.gpu.global.u32 [%0], %1;" ::"l"(f), "r"(v) : "memory");
}
static __device__ __forceinline__ unsigned flag_acquire(const unsigned *f) {
    unsigned v;
    asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(f) : "memory");
    return v;
}

// The bits of a __half2 as a 32-bit register, and back.
static __device__ __forceinline__ uint32_t h2u(__half2 h) { return *reinterpret_cast<uint32_t *>(&h); }
static __device__ __forceinline__ __half2 u2h(uint32_t u) { return *reinterpret_cast<__half2 *>(&u); }

#endif /* KL_PTX_H */
