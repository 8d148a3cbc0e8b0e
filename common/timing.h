/*
 * timing.h - how anything on the GPU is timed (internal to common/): the
 * step and its cuBLAS baseline (engine.c), the pick between two cuBLAS calls
 * (ops/op_gemv.c), the read ceiling and the read floor (ceiling.c).  One entry
 * point, kl_time_turns_us (kl_time_us for one body), so that all of them
 * are measured the same way.
 */
#ifndef KL_TIMING_H
#define KL_TIMING_H

#include "device.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One launch of what is timed.  i counts every launch of one measurement,
 * warm-ups included, so rotating buffers keep rotating: use copy i % nrot. */
typedef void (*kl_launch_fn)(void *ctx, int i);

typedef struct kl_timing {
    int warmup;         /* launches before the timed ones */
    int runs;           /* timed launches (at most, with a budget) */
    double budget_ms;   /* > 0: each warm-up is timed on its own, they stop once half the
                           budget is spent, and the runs are cut to budget / (the last
                           warm-up's time), at least min(3, runs);
                           0: the warm-ups are queued untimed, then exactly `runs` runs */
} kl_timing;

/* Median time in microseconds of the timed launches, each between its own
 * pair of CUDA events and after as many untimed ones, all queued behind a
 * held stream before the GPU starts any of them (timing.c says why). */
double kl_time_us(kl_launch_fn launch, void *ctx, const kl_timing *t, cudaStream_t s);

/* Several bodies measured in turns, for a comparison: each is warmed up,
 * then `rounds` rounds each run a share of body 0's timed launches, then of
 * body 1's, and so on; us[j] is the median of body j's launches.  A GPU whose
 * clock falls under sustained load (an H100 at its power limit) would
 * otherwise time whichever body runs first or after a pause at a higher
 * clock than the others: in turns of short shares, all see the same steps
 * of the clock (docs/harness.md).  And each share of timed launches follows
 * as many untimed launches of the same body, so that no timed launch starts
 * straight after another body's.  kl_time_us is one body in one round. */
typedef struct kl_body { kl_launch_fn launch; void *ctx; } kl_body;
void kl_time_turns_us(const kl_body *b, int nb, const kl_timing *t, int rounds, cudaStream_t s, double *us);

/* The fastest of n candidates for one job (a baseline's algorithms, say), each
 * timed by kl_time_us with 2 warm-up launches and the median of 5 runs:
 * launch(ctx, c, i) is candidate c's launch i.  us[c] gets candidate c's time
 * (us may be NULL); returns the first of the fastest, or -1 when n is 0. */
typedef void (*kl_candidate_fn)(void *ctx, int c, int i);
int kl_fastest(kl_candidate_fn launch, void *ctx, int n, cudaStream_t s, double *us);

/* Measurements (kl_time_turns_us or kl_time_us calls) this process has
 * made: --check-only must make none (engine.c checks it before exiting). */
long kl_measurements(void);

/* Copies of a buffer to rotate through so that the bytes touched between two
 * uses of one copy are three times the L2: a cold L2 for memory-bound work. */
int kl_rotations(const kl_env *env, size_t bytes_per_copy);
/* The same rule for a baseline's own (larger) copies, at most the step's
 * nrot of them, and 1 when the step has 1 (nothing timed, or no need). */
int kl_baseline_rotations(const kl_env *env, int nrot, size_t bytes_per_copy);
/* Fill the rotation's copies 1 .. copies - 1 (`stride` bytes apart from base)
 * with byte copies of copy 0's first `bytes`, queued on s. */
void kl_replicate(void *base, size_t bytes, size_t stride, int copies, cudaStream_t s);

#ifdef __cplusplus
}
#endif
#endif /* KL_TIMING_H */
