/*
 * ceiling.h - what "% of the ceiling" is measured against (internal to
 * common/): the FP32 peak (Part I), the dense bf16 tensor-core peak (Part
 * III), and for memory-bound work the best read the harness can measure here,
 * with the HBM datasheet figure beside it (docs/harness.md says why).
 */
#ifndef KL_CEILING_H
#define KL_CEILING_H

#include "device.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What a peak counts: FP32 FMA lanes (0), or a dense tensor-core rate with
 * fp32 accumulation, in bf16 (Parts III-IV) or FP8 e4m3 (Part V). */
enum { KL_TC_NONE = 0, KL_TC_BF16 = 1, KL_TC_FP8 = 2 };
/* FLOP per clock per SM of that kind (0: this GPU has none, e.g. FP8 before
 * sm_89); and the peak in TFLOPS at clock_khz. */
int kl_flop_per_clock_sm(int cc, int tensor_core);
double kl_peak_tflops(const kl_env *env, int tensor_core, int clock_khz);

/* The fastest of the harness's readers at reading `bytes` (a multiple of 16)
 * from nrot copies laid end to end at buf, L2 cold: KL_READ_STREAMS kernels x
 * grids of 1, 2, 4, 8 blocks of 512 threads per SM, each timed as the steps
 * are (kl_time_us: 2 warm-ups, `runs` runs, the median). */
typedef struct kl_read_best {
    double us, gbps;
    int variant;        /* kl_read_stream_name(variant) */
    int blocks_per_sm;
} kl_read_best;
kl_read_best kl_read_floor(const kl_env *env, const void *buf, size_t bytes, int nrot, int runs, float *sink);

/* The read ceiling: the best kl_read_floor over 256, 512 and 1024 MiB (those
 * that fit in a quarter of the free memory), measured on the first call and
 * kept for the process; and the datasheet figure from the memory clock and
 * bus width (cudaDevAttrMemoryClockRate x cudaDevAttrGlobalMemoryBusWidth x 2
 * for DDR), 0 where the driver does not say. */
typedef struct kl_read_ceiling {
    double gbps;              /* the measured ceiling */
    kl_read_best best;        /* how it was reached */
    size_t bytes;             /* at this size */
    double datasheet_gbps;
    int mem_mhz, bus_bits;
} kl_read_ceiling;
const kl_read_ceiling *kl_measure_read_ceiling(const kl_env *env);

#ifdef __cplusplus
}
#endif
#endif /* KL_CEILING_H */
