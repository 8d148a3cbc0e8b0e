/*
 * util.c - the small host utilities every part of the harness uses: the
 * program's name in messages, CUDA errors with a hint, allocation that exits
 * with a clear message, opening the device, whether a GPU can run a step,
 * and the spot check of a cuBLAS reference that exits when it disagrees.
 */
#include "device.h"
#include "check.h"

#include <string.h>

static char g_prog[32] = "step";

void kl_set_prog(const char *name) { snprintf(g_prog, sizeof g_prog, "%s", name); }
const char *kl_prog(void) { return g_prog; }

void kl_cuda_fail(cudaError_t err, const char *call, const char *file, int line) {
    fprintf(stderr, "%s: CUDA error: %s failed at %s:%d: %s\n", g_prog, call, file, line,
            cudaGetErrorString(err));
    switch (err) {
    case cudaErrorNoKernelImageForDevice:
    case cudaErrorUnsupportedPtxVersion:
        fprintf(stderr, "%s: this binary has no code for this GPU: rebuild with "
                        "'make clean && make ARCH=sm_XX' (XX from nvidia-smi --query-gpu=compute_cap)\n", g_prog);
        exit(KL_EXIT_NO_GPU);
    case cudaErrorMemoryAllocation:
        fprintf(stderr, "%s: out of device memory: use smaller sizes\n", g_prog);
        exit(KL_EXIT_USAGE);
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchFailure:
    case cudaErrorMisalignedAddress:
    case cudaErrorIllegalInstruction:
        fprintf(stderr, "%s: a kernel faulted: run 'make sanitize STEP=N' to find the access\n", g_prog);
        exit(KL_EXIT_WRONG);
    default:
        exit(KL_EXIT_NO_GPU);
    }
}

void *kl_dmalloc(size_t bytes) {
    void *p = NULL;
    CUDA_CHECK(cudaMalloc(&p, bytes ? bytes : 1));
    return p;
}

void *kl_hmalloc(size_t bytes) {
    void *p = malloc(bytes ? bytes : 1);
    if (!p) {
        fprintf(stderr, "%s: out of host memory allocating %.2f GiB: use smaller sizes\n", g_prog,
                bytes / 1073741824.0);
        exit(KL_EXIT_USAGE);
    }
    return p;
}

void kl_copy_to_host(void *h, const void *d, size_t bytes) {
    CUDA_CHECK(cudaMemcpy(h, d, bytes, cudaMemcpyDeviceToHost));
}

int kl_open_device(int device, kl_env *env, struct cudaDeviceProp *prop) {
    int count = 0;
    const cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess || count == 0) {
        fprintf(stderr, "%s: no usable CUDA GPU (%s): this program needs an NVIDIA GPU and its driver; "
                        "check with nvidia-smi\n", g_prog,
                e != cudaSuccess ? cudaGetErrorString(e) : "no device found");
        return KL_EXIT_NO_GPU;
    }
    if (device >= count) {
        fprintf(stderr, "%s: --device %d: this machine has %d GPU%s, numbered 0..%d\n", g_prog, device,
                count, count > 1 ? "s" : "", count - 1);
        return KL_EXIT_USAGE;
    }
    CUDA_CHECK(cudaSetDevice(device));
    CUDA_CHECK(cudaGetDeviceProperties(prop, device));
    memset(env, 0, sizeof *env);
    env->device = device;
    env->sms = prop->multiProcessorCount;
    env->cc = prop->major * 10 + prop->minor;
    env->l2_bytes = (size_t)prop->l2CacheSize;
    CUDA_CHECK(cudaStreamCreateWithFlags(&env->stream, cudaStreamNonBlocking));
    return 0;
}

int kl_gpu_refuses(const kl_step *step, const kl_gpu_caps *gpu, char *msg, size_t len) {
    const int cc = gpu->cc;
    if (step->only_cc && cc != step->only_cc) {
        snprintf(msg, len, "uses instructions of sm_%da, which run on compute capability %d.%d only (e.g. an H100); "
                           "%s is %d.%d: run the steps before it instead", step->only_cc, step->only_cc / 10,
                 step->only_cc % 10, gpu->name, cc / 10, cc % 10);
        return KL_EXIT_NO_GPU;
    }
    if (step->min_cc && cc < step->min_cc) {
        snprintf(msg, len, "needs compute capability %d.%d or newer; %s is %d.%d", step->min_cc / 10,
                 step->min_cc % 10, gpu->name, cc / 10, cc % 10);
        return KL_EXIT_NO_GPU;
    }
    if (step->smem_per_block > gpu->smem_optin) {
        snprintf(msg, len, "needs %zu bytes (%.1f KiB) of shared memory per block; %s (compute capability %d.%d) "
                           "allows %zu (%.1f KiB)", step->smem_per_block, step->smem_per_block / 1024.0, gpu->name,
                 cc / 10, cc % 10, gpu->smem_optin, gpu->smem_optin / 1024.0);
        return KL_EXIT_NO_GPU;
    }
    return 0;
}

void kl_require_spot_check(int m, int n, int k, uint64_t seed, const float *ref,
                           void (*fetch)(void *ctx, int r, int c, float *a, float *b), void *ctx) {
    char msg[160];
    if (kl_spot_check(m, n, k, seed, ref, fetch, ctx, msg, sizeof msg)) {
        fprintf(stderr, "internal error: the cuBLAS reference %s\n", msg);
        exit(KL_EXIT_WRONG);
    }
}
