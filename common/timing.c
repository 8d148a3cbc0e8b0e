/*
 * timing.c - the one way the harness times work on the GPU (timing.h).
 */
#include "timing.h"
#include "check.h"

#include <math.h>

/* Time in ms of one launch(ctx, i), between its own pair of events, synchronized. */
static double launch_ms(kl_launch_fn launch, void *ctx, int i, cudaStream_t s) {
    cudaEvent_t a, b;
    CUDA_CHECK(cudaEventCreate(&a));
    CUDA_CHECK(cudaEventCreate(&b));
    CUDA_CHECK(cudaEventRecord(a, s));
    launch(ctx, i);
    CUDA_CHECK(cudaEventRecord(b, s));
    CUDA_CHECK(cudaEventSynchronize(b));
    float ms = 0.0f;
    CUDA_CHECK(cudaEventElapsedTime(&ms, a, b));
    CUDA_CHECK(cudaEventDestroy(a));
    CUDA_CHECK(cudaEventDestroy(b));
    return ms;
}

/* Times in us of n launches, launch(ctx, first + n) to launch(ctx, first +
 * 2n - 1), each between its own pair of events, into out[0..n-1], after n
 * untimed launches launch(ctx, first) .. (ctx, first + n - 1), so that no
 * timed launch starts straight after another body's (timing.h).  All are
 * queued behind a kernel that waits for the host to finish queueing them
 * (kl_hold_stream).  Queued straight onto an idle GPU, a launch shorter than
 * the host's time to queue the next one (a few us) would start late, after its
 * first event, and its time would hold part of the host's launch cost: an
 * empty kernel then read 3.6 to 7.3 us on an H100.  The limit only matters if
 * the launch queue fills up before the host is done. */
static void queued_us(kl_launch_fn launch, void *ctx, int first, int n, cudaStream_t s, double *out) {
    static volatile int *hold = NULL;   /* pinned host memory the GPU reads, at hold_dev */
    static int *hold_dev = NULL;
    if (!hold) {
        CUDA_CHECK(cudaHostAlloc((void **)&hold, sizeof *hold, cudaHostAllocMapped | cudaHostAllocPortable));
        CUDA_CHECK(cudaHostGetDevicePointer((void **)&hold_dev, (void *)hold, 0));
    }
    cudaEvent_t *ev = kl_hmalloc(sizeof(cudaEvent_t) * 2 * (size_t)n);
    for (int i = 0; i < 2 * n; ++i) CUDA_CHECK(cudaEventCreate(&ev[i]));
    *hold = 0;
    kl_hold_stream(hold_dev, 100.0, s);
    for (int i = 0; i < n; ++i) launch(ctx, first + i);
    for (int i = 0; i < n; ++i) {
        CUDA_CHECK(cudaEventRecord(ev[2 * i], s));
        launch(ctx, first + n + i);
        CUDA_CHECK(cudaEventRecord(ev[2 * i + 1], s));
    }
    *hold = 1;   /* all queued: let the GPU go */
    CUDA_CHECK(cudaEventSynchronize(ev[2 * n - 1]));
    for (int i = 0; i < n; ++i) {
        float ms = 0.0f;
        CUDA_CHECK(cudaEventElapsedTime(&ms, ev[2 * i], ev[2 * i + 1]));
        out[i] = ms * 1e3;
    }
    for (int i = 0; i < 2 * n; ++i) CUDA_CHECK(cudaEventDestroy(ev[i]));
    free(ev);
}

/* Body j's warm-ups; returns how many timed launches it gets, and in *first
 * the index its timed launches start at (the rotation goes on from there). */
static int warm_up(const kl_body *b, const kl_timing *t, cudaStream_t s, int *first) {
    if (!(t->budget_ms > 0)) {
        for (int i = 0; i < t->warmup; ++i) b->launch(b->ctx, i);
        if (t->warmup) CUDA_CHECK(cudaStreamSynchronize(s));
        *first = t->warmup;
        return t->runs;
    }
    /* The warm-ups also estimate the cost of one launch, so that a slow
     * kernel runs a few times and a fast one up to t->runs times. */
    int w = 0;
    double est_ms = 0.0, spent_ms = 0.0;
    for (; w < t->warmup && (w == 0 || spent_ms < t->budget_ms / 2); ++w) {
        est_ms = launch_ms(b->launch, b->ctx, w, s);
        spent_ms += est_ms;
    }
    *first = w;
    return kl_repeats(est_ms, t->budget_ms, t->runs < 3 ? t->runs : 3, t->runs);
}

static long g_measurements;
long kl_measurements(void) { return g_measurements; }

void kl_time_turns_us(const kl_body *b, int nb, const kl_timing *t, int rounds, cudaStream_t s, double *us) {
    ++g_measurements;
    int *first = kl_hmalloc(sizeof(int) * (size_t)nb), *n = kl_hmalloc(sizeof(int) * (size_t)nb);
    double **times = kl_hmalloc(sizeof(double *) * (size_t)nb);
    for (int j = 0; j < nb; ++j) {
        n[j] = warm_up(&b[j], t, s, &first[j]);
        times[j] = kl_hmalloc(sizeof(double) * (size_t)n[j]);
    }
    for (int r = 0; r < rounds; ++r)
        for (int j = 0; j < nb; ++j) {   /* body j's timed launches r n / rounds .. (r + 1) n / rounds - 1 */
            const int from = (int)((long long)n[j] * r / rounds), to = (int)((long long)n[j] * (r + 1) / rounds);
            /* each preceded by as many untimed ones; the indices run on without a gap, so
             * the copies rotate as in one long run */
            if (to > from) queued_us(b[j].launch, b[j].ctx, first[j] + 2 * from, to - from, s, times[j] + from);
        }
    for (int j = 0; j < nb; ++j) {
        us[j] = kl_median(times[j], n[j]);
        free(times[j]);
    }
    free(times);
    free(n);
    free(first);
}

double kl_time_us(kl_launch_fn launch, void *ctx, const kl_timing *t, cudaStream_t s) {
    const kl_body b = {launch, ctx};
    double us;
    kl_time_turns_us(&b, 1, t, 1, s, &us);
    return us;
}

typedef struct candidate { kl_candidate_fn launch; void *ctx; int c; } candidate;
static void launch_candidate(void *ctx, int i) {
    const candidate *cd = ctx;
    cd->launch(cd->ctx, cd->c, i);
}

int kl_fastest(kl_candidate_fn launch, void *ctx, int n, cudaStream_t s, double *us) {
    const kl_timing t = {.warmup = 2, .runs = 5, .budget_ms = 0};
    int best = -1;
    double best_us = 0.0;
    for (int c = 0; c < n; ++c) {
        candidate cd = {launch, ctx, c};
        const double t_us = kl_time_us(launch_candidate, &cd, &t, s);
        if (us) us[c] = t_us;
        if (best < 0 || t_us < best_us) best = c, best_us = t_us;
    }
    return best;
}

int kl_rotations(const kl_env *env, size_t bytes_per_copy) {
    /* Cycle through enough copies that the bytes touched between two uses of
     * one copy are three times the L2: it then holds none of them. */
    const double want = 3.0 * (double)env->l2_bytes;
    if (bytes_per_copy == 0 || (double)bytes_per_copy >= want) return 1;
    const double n = ceil(want / (double)bytes_per_copy);
    return n > 4096 ? 4096 : (int)n + 1;
}

int kl_baseline_rotations(const kl_env *env, int nrot, size_t bytes_per_copy) {
    if (nrot <= 1) return 1;
    const int want = kl_rotations(env, bytes_per_copy);
    return want < nrot ? want : nrot;
}

void kl_replicate(void *base, size_t bytes, size_t stride, int copies, cudaStream_t s) {
    for (int r = 1; r < copies; ++r)
        CUDA_CHECK(cudaMemcpyAsync((unsigned char *)base + (size_t)r * stride, base, bytes, cudaMemcpyDeviceToDevice, s));
}
