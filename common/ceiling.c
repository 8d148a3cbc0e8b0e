/*
 * ceiling.c - the peaks and the read ceiling (ceiling.h).
 */
#include "ceiling.h"
#include "timing.h"

static int fp32_lanes_per_sm(int cc) {
    switch (cc) {
    case 60: case 70: case 72: case 75: case 80: return 64;
    default: return 128;   /* 6.1, 8.6, 8.7, 8.9, 9.0, 10.x, 12.x */
    }
}

/* Dense bf16 tensor-core FLOP per clock per SM with fp32 accumulation (the
 * datasheets' dense figures over SMs x boost clock: A100 312 TFLOPS = 108 x
 * 2048 x 1410 MHz; H100 SXM 989 = 132 x 4096 x 1830 MHz; L40 181 = 142 x 512 x
 * 2490 MHz; GeForce parts accumulate fp32 at half their fp16 rate). */
static int tc_bf16_flop_per_sm(int cc) {
    if (cc >= 100 && cc < 110) return 8192;
    if (cc >= 90) return cc == 90 ? 4096 : 512;
    if (cc == 80) return 2048;
    return 512;   /* 8.6, 8.7, 8.9 */
}

/* FP8 (e4m3, fp32 accumulation): twice bf16's rate where there is one (sm_89
 * on; H100 SXM 1979 dense TFLOPS = 132 x 8192 x 1830 MHz). */
static int tc_fp8_flop_per_sm(int cc) { return cc >= 89 ? 2 * tc_bf16_flop_per_sm(cc) : 0; }

int kl_flop_per_clock_sm(int cc, int tensor_core) {
    switch (tensor_core) {
    case KL_TC_BF16: return tc_bf16_flop_per_sm(cc);
    case KL_TC_FP8: return tc_fp8_flop_per_sm(cc);
    default: return 2 * fp32_lanes_per_sm(cc);
    }
}

double kl_peak_tflops(const kl_env *env, int tensor_core, int clock_khz) {
    return (double)env->sms * kl_flop_per_clock_sm(env->cc, tensor_core) * clock_khz * 1e3 / 1e12;
}

typedef struct read_launch {
    int variant, blocks, nrot;
    const char *base;
    size_t bytes;
    float *sink;
    cudaStream_t s;
} read_launch;

static void launch_read(void *ctx, int i) {
    const read_launch *l = (const read_launch *)ctx;
    kl_read_stream(l->variant, l->base + (size_t)(i % l->nrot) * l->bytes, l->bytes, l->blocks, l->sink, l->s);
}

kl_read_best kl_read_floor(const kl_env *env, const void *buf, size_t bytes, int nrot, int runs, float *sink) {
    kl_read_best best = {1e300, 0.0, 0, 0};
    const kl_timing t = {2, runs, 0.0};
    for (int v = 0; v < KL_READ_STREAMS; ++v)
        for (int per_sm = 1; per_sm <= 8; per_sm *= 2) {
            read_launch l = {v, env->sms * per_sm, nrot, (const char *)buf, bytes, sink, env->stream};
            const double us = kl_time_us(launch_read, &l, &t, env->stream);
            if (us < best.us) best.us = us, best.variant = v, best.blocks_per_sm = per_sm;
        }
    best.gbps = (double)bytes / (best.us * 1e-6) / 1e9;
    return best;
}

/* Sizes of 256 MiB and up: from there one launch's fixed costs are under 2%
 * of its time, so the best reader shows the rate the memory sustains (on the
 * H100, read_floor's readers peak between 268 and 1074 MB).  11 runs each
 * keep the cost near 0.15 s per process on the H100. */
const kl_read_ceiling *kl_measure_read_ceiling(const kl_env *env) {
    static kl_read_ceiling c;
    static int measured = 0;
    if (measured) return &c;
    measured = 1;
    int mem_khz = 0, bus = 0;
    if (cudaDeviceGetAttribute(&mem_khz, cudaDevAttrMemoryClockRate, env->device) != cudaSuccess) mem_khz = 0;
    if (cudaDeviceGetAttribute(&bus, cudaDevAttrGlobalMemoryBusWidth, env->device) != cudaSuccess) bus = 0;
    cudaGetLastError();   /* an attribute the driver lacks is not an error here */
    c.mem_mhz = mem_khz / 1000;
    c.bus_bits = bus;
    c.datasheet_gbps = (double)mem_khz * 1e3 * 2.0 * (bus / 8) / 1e9;

    size_t free_b = 0, total_b = 0;
    CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
    size_t sizes[3] = {(size_t)256 << 20, (size_t)512 << 20, (size_t)1024 << 20};
    int nrots[3], nsizes = 0;
    size_t alloc = 0;
    for (int i = 0; i < 3; ++i) {
        const int nrot = kl_rotations(env, sizes[i]);
        if ((double)sizes[i] * nrot > free_b / 4.0) break;
        nrots[nsizes] = nrot;
        sizes[nsizes++] = sizes[i];
        if (sizes[i] * nrot > alloc) alloc = sizes[i] * nrot;
    }
    if (nsizes == 0) {   /* a small GPU: the largest power of two from 64 MiB that fits */
        size_t b = (size_t)128 << 20;
        while (b > ((size_t)64 << 20) && b > free_b / 4) b /= 2;
        sizes[0] = alloc = b;
        nrots[0] = 1;
        nsizes = 1;
    }
    char *buf = (char *)kl_dmalloc(alloc);
    float *sink = (float *)kl_dmalloc(sizeof(float));
    CUDA_CHECK(cudaMemsetAsync(buf, 0, alloc, env->stream));
    for (int i = 0; i < nsizes; ++i) {
        const kl_read_best b = kl_read_floor(env, buf, sizes[i], nrots[i], 11, sink);
        if (b.gbps > c.gbps) c.gbps = b.gbps, c.best = b, c.bytes = sizes[i];
    }
    CUDA_CHECK(cudaFree(buf));
    CUDA_CHECK(cudaFree(sink));
    return &c;
}
