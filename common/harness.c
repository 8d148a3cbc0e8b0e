/*
 * harness.c - the engine: command line -> problems -> GPU -> check -> time ->
 * report.  It drives any kl_op (op.h) the same way, so the step and cuBLAS
 * are always checked and timed by one method.
 */
#define _GNU_SOURCE
#include "op.h"
#include "cli.h"
#include "report.h"

#include <errno.h>
#include <math.h>
#include <string.h>

static char g_prog[32] = "step";

void kl_set_prog(const char *name) { snprintf(g_prog, sizeof g_prog, "%s", name); }

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

int kl_rotations(const kl_env *env, size_t bytes_per_copy) {
    /* Cycle through enough copies that the bytes touched between two uses of
     * one copy are three times the L2: it then holds none of them. */
    const double want = 3.0 * (double)env->l2_bytes;
    if (bytes_per_copy == 0 || (double)bytes_per_copy >= want) return 1;
    const double n = ceil(want / (double)bytes_per_copy);
    return n > 4096 ? 4096 : (int)n + 1;
}

double kl_launch_ms(void (*launch)(void *ctx, int i), void *ctx, int i, cudaStream_t s) {
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

double kl_median_launch_ms(void (*launch)(void *ctx, int i), void *ctx, int warmups, int runs,
                           cudaStream_t s) {
    double *t = kl_hmalloc(sizeof(double) * (size_t)runs);
    for (int i = 0; i < warmups + runs; ++i) {
        const double ms = kl_launch_ms(launch, ctx, i, s);
        if (i >= warmups) t[i - warmups] = ms;
    }
    const double med = kl_median(t, runs);
    free(t);
    return med;
}

/* The runs are queued behind a kernel that waits for the host to finish
 * queueing them (kl_hold_stream).  Queued straight onto an idle GPU, a launch
 * shorter than the host's time to queue the next one (a few us) would start
 * late, after its first event, and its time would hold part of the host's
 * launch cost: an empty kernel then read 3.6 to 7.3 us on an H100.  The limit
 * only matters if the launch queue fills up before the host is done. */
double kl_median_queued_us(void (*launch)(void *ctx, int i), void *ctx, int warmups, int n, cudaStream_t s) {
    static volatile int *hold = NULL;   /* pinned host memory the GPU reads, at hold_dev */
    static int *hold_dev = NULL;
    for (int i = 0; i < warmups; ++i) launch(ctx, i);
    if (warmups) CUDA_CHECK(cudaStreamSynchronize(s));
    if (!hold) {
        CUDA_CHECK(cudaHostAlloc((void **)&hold, sizeof *hold, cudaHostAllocMapped | cudaHostAllocPortable));
        CUDA_CHECK(cudaHostGetDevicePointer((void **)&hold_dev, (void *)hold, 0));
    }
    cudaEvent_t *ev = kl_hmalloc(sizeof(cudaEvent_t) * 2 * (size_t)n);
    double *t = kl_hmalloc(sizeof(double) * (size_t)n);
    for (int i = 0; i < 2 * n; ++i) CUDA_CHECK(cudaEventCreate(&ev[i]));
    *hold = 0;
    kl_hold_stream(hold_dev, 100.0, s);
    for (int i = 0; i < n; ++i) {
        CUDA_CHECK(cudaEventRecord(ev[2 * i], s));
        launch(ctx, warmups + i);
        CUDA_CHECK(cudaEventRecord(ev[2 * i + 1], s));
    }
    *hold = 1;   /* all queued: let the GPU go */
    CUDA_CHECK(cudaEventSynchronize(ev[2 * n - 1]));
    for (int i = 0; i < n; ++i) {
        float ms = 0.0f;
        CUDA_CHECK(cudaEventElapsedTime(&ms, ev[2 * i], ev[2 * i + 1]));
        t[i] = ms * 1e3;
    }
    const double med = kl_median(t, n);
    for (int i = 0; i < 2 * n; ++i) CUDA_CHECK(cudaEventDestroy(ev[i]));
    free(ev);
    free(t);
    return med;
}

/* ---- problems ------------------------------------------------------------ */

typedef struct plist { kl_problem *p; int *m_given; int n, cap; } plist;

static void plist_add(plist *l, kl_problem p, int m_given) {
    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 16;
        l->p = realloc(l->p, (size_t)l->cap * sizeof *l->p);
        l->m_given = realloc(l->m_given, (size_t)l->cap * sizeof *l->m_given);
        if (!l->p || !l->m_given) { fprintf(stderr, "%s: out of host memory\n", g_prog); exit(KL_EXIT_USAGE); }
    }
    l->m_given[l->n] = m_given;
    l->p[l->n++] = p;
}

static void plist_add_m(plist *l, const kl_op *op, const kl_cli *c, int n, int k, int s) {
    if (c->m || !op->m_list) {
        plist_add(l, (kl_problem){c->m ? c->m : s, n, k}, c->m != 0);
        return;
    }
    for (int i = 0; i < op->nm_list; ++i) plist_add(l, (kl_problem){op->m_list[i], n, k}, 1);
}

static void build_problems(const kl_op *op, const kl_cli *c, plist *l) {
    int sizes[KL_MAX_SIZES], ns = 0;
    char err[256];
    if (c->nsizes) {
        memcpy(sizes, c->sizes, sizeof(int) * (size_t)c->nsizes);
        ns = c->nsizes;
    } else if (kl_parse_sizes(op->default_sizes, sizes, KL_MAX_SIZES, &ns, err, sizeof err)) {
        fprintf(stderr, "%s: internal: bad default sizes: %s\n", g_prog, err);
        exit(KL_EXIT_USAGE);
    }
    for (int i = 0; i < ns; ++i)
        plist_add_m(l, op, c, c->n ? c->n : sizes[i], c->k ? c->k : sizes[i], sizes[i]);
    if (!c->nsizes && !c->n && !c->k)
        for (int i = 0; i < op->nextra_shapes; ++i)
            plist_add_m(l, op, c, op->extra_shapes[i].n, op->extra_shapes[i].k,
                        op->extra_shapes[i].m ? op->extra_shapes[i].m : op->extra_shapes[i].n);
}

/* ---- timing ---------------------------------------------------------------- */

static void body(const kl_op *op, void *st, const kl_kernel *kern, int rot, cudaStream_t s) {
    if (kern) op->run(st, kern, rot, s);
    else op->run_ref(st, rot, s);
}

typedef struct timed_body {
    const kl_op *op;
    void *st;
    const kl_kernel *kern;
    int nrot, rot0;
    cudaStream_t s;
} timed_body;
static void launch_body(void *ctx, int i) {
    const timed_body *t = (const timed_body *)ctx;
    body(t->op, t->st, t->kern, (t->rot0 + i) % t->nrot, t->s);
}

/* Median time of one launch in microseconds: warm-up runs first (they also
 * estimate the cost), then as many timed runs as fit the budget, each between
 * its own pair of events, all queued before the GPU starts them.  kern == NULL
 * times the cuBLAS reference: same code path, same rotation of buffers. */
static double time_us(const kl_cli *c, const kl_env *env, const kl_op *op, void *st,
                      const kl_kernel *kern, int nrot) {
    timed_body tb = {op, st, kern, nrot, 0, env->stream};
    int w = 0;
    double est_ms = 0.0, spent_ms = 0.0;
    for (; w < c->warmup && (w == 0 || spent_ms < c->budget_ms / 2); ++w) {
        est_ms = kl_launch_ms(launch_body, &tb, w, env->stream);
        spent_ms += est_ms;
    }
    const int n = kl_repeats(est_ms, c->budget_ms, c->iters < 3 ? c->iters : 3, c->iters);
    tb.rot0 = w;   /* the timed runs go on where the warm-ups left the rotation */
    return kl_median_queued_us(launch_body, &tb, 0, n, env->stream);
}

/* ---- the check --------------------------------------------------------------- */

static int check_kernel(const kl_op *op, void *st, const kl_kernel *kern, double *rel_err) {
    int pass = 1;
    *rel_err = 0.0;
    for (int i = 0; i < op->checks; ++i) {
        kl_check_data d;
        memset(&d, 0, sizeof d);
        op->check(st, kern, i, &d);
        kl_compare_result r;
        kl_compare(d.out, d.ref, d.count, d.tol, &r);
        if (!(r.rel_err <= *rel_err)) *rel_err = r.rel_err;   /* NaN wins */
        if (r.bad) {
            pass = 0;
            printf("  FAIL %s%s%s: %zu of %zu elements wrong (%zu NaN/Inf); tolerance |out-ref| <= %.2e + %.2e*|ref|\n",
                   kern->variant && *kern->variant ? kern->variant : "", kern->variant && *kern->variant ? ", " : "",
                   d.what ? d.what : "check", r.bad, d.count, r.nonfinite, d.tol.atol, d.tol.rtol);
            for (int j = 0; j < r.nreported; ++j) {
                const size_t idx = r.first[j].index;
                const int cols = d.cols > 0 ? d.cols : 1;
                printf("    [%zu][%zu] = %.7g, expected %.7g\n", idx / (size_t)cols, idx % (size_t)cols,
                       r.first[j].out, r.first[j].ref);
            }
        }
    }
    return pass;
}

/* ---- the report ---------------------------------------------------------------- */

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

static double peak_tflops_of(const kl_op *op, const kl_env *env, int clock_khz) {
    const double per_sm = op->tensor_core ? tc_bf16_flop_per_sm(env->cc) : 2.0 * fp32_lanes_per_sm(env->cc);
    return (double)env->sms * per_sm * clock_khz * 1e3 / 1e12;
}

static void print_header(const kl_step *step, const kl_op *op, const kl_env *env,
                         const struct cudaDeviceProp *prop, int clock_khz, double peak_tflops,
                         double ceiling_gbps, const kl_cli *c) {
    int rt = 0, drv = 0, cub = 0;
    CUDA_CHECK(cudaRuntimeGetVersion(&rt));
    CUDA_CHECK(cudaDriverGetVersion(&drv));
    CUBLAS_CHECK(cublasGetVersion(env->cublas, &cub));
    int mem_khz = 0;
    cudaDeviceGetAttribute(&mem_khz, cudaDevAttrMemoryClockRate, env->device);
    printf("%s: %s\n", g_prog, step->title);
    printf("GPU %d: %s, sm_%d, %d SMs, SM clock up to %d MHz, memory clock %d MHz, L2 %.0f MiB, %.1f GiB\n",
           env->device, prop->name, env->cc, env->sms, clock_khz / 1000, mem_khz / 1000,
           env->l2_bytes / 1048576.0, prop->totalGlobalMem / 1073741824.0);
    printf("CUDA runtime %d.%d, driver %d.%d, cuBLAS %d.%d.%d\n", rt / 1000, rt % 1000 / 10,
           drv / 1000, drv % 1000 / 10, cub / 10000, cub % 10000 / 100, cub % 100);
    if (op->baseline) printf("reference: %s\n", op->baseline);
    if (op->memory_bound)
        printf("ceiling: streaming-read bandwidth measured now: %.0f GB/s; L2 cold (weights rotate "
               "through copies > 3x L2)\n", ceiling_gbps);
    else if (op->tensor_core)
        printf("ceiling: dense bf16 tensor-core peak %d SMs x %d FLOP/clock x %d MHz = %.1f TFLOPS; L2 warm "
               "for step and cuBLAS alike\n", env->sms, tc_bf16_flop_per_sm(env->cc), clock_khz / 1000, peak_tflops);
    else
        printf("ceiling: FP32 peak %d SMs x %d lanes x 2 FLOP x %d MHz = %.1f TFLOPS; L2 warm for "
               "step and cuBLAS alike\n", env->sms, fp32_lanes_per_sm(env->cc), clock_khz / 1000, peak_tflops);
    printf("timing: median of up to %d runs (CUDA events, %d warm-up, %.0f ms budget each); "
           "check: random inputs (seed %llu), output poisoned with NaN first\n\n",
           c->iters, c->warmup, c->budget_ms, (unsigned long long)c->seed);
}

static void print_columns(const kl_op *op, int variants) {
    printf("%8s %8s %8s %s%11s %9s %9s %8s %8s %9s  %s\n", "M", "N", "K", variants ? "variant           " : "",
           "time(us)", op->memory_bound ? "GB/s" : "TFLOPS", "cuBLAS",
           "%cuBLAS", op->memory_bound ? "%ceil" : "%peak", "rel_err", "check");
}

static void fmt(char *buf, size_t n, const char *f, double v) {
    if (isfinite(v)) snprintf(buf, n, f, v);
    else snprintf(buf, n, "-");
}

static void print_row(const kl_op *op, const kl_row *r, int variants, double cublas_rate) {
    char t[32], rate[32], cb[32], pc[32], ce[32], re[32];
    fmt(t, sizeof t, "%.1f", r->time_us);
    fmt(rate, sizeof rate, op->memory_bound ? "%.0f" : "%.2f", op->memory_bound ? r->gbps : r->tflops);
    fmt(cb, sizeof cb, op->memory_bound ? "%.0f" : "%.2f", cublas_rate);
    fmt(pc, sizeof pc, "%.1f", kl_pct_cublas(r));
    fmt(ce, sizeof ce, "%.1f", r->pct_ceiling);
    fmt(re, sizeof re, "%.1e", r->rel_err);
    if (variants) printf("%8d %8d %8d %-18s%11s %9s %9s %8s %8s %9s  %s\n", r->m, r->n, r->k, r->variant, t, rate, cb, pc, ce, re, r->pass ? "PASS" : "FAIL");
    else printf("%8d %8d %8d %11s %9s %9s %8s %8s %9s  %s\n", r->m, r->n, r->k, t, rate, cb, pc, ce, re, r->pass ? "PASS" : "FAIL");
    fflush(stdout);
}

/* Copies the op rotates through: a cold L2 for memory-bound ops; one copy
 * for compute-bound ones, and for --check-only, which times nothing. */
static int rotations_for(const kl_op *op, const kl_problem *p, const kl_env *env, const kl_cli *c) {
    return op->memory_bound && !c->check_only ? kl_rotations(env, op->rotating_bytes(p)) : 1;
}

/* ---- main ------------------------------------------------------------------------ */

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

static int open_gpu(const kl_cli *c, const kl_step *step, kl_env *env, struct cudaDeviceProp *prop, int *clock_khz) {
    const int rc = kl_open_device(c->device, env, prop);
    if (rc) return rc;
    env->seed = c->seed;
    CUDA_CHECK(cudaDeviceGetAttribute(clock_khz, cudaDevAttrClockRate, c->device));
    if (step->min_cc && env->cc < step->min_cc) {
        fprintf(stderr, "%s: needs compute capability %d.%d or newer; %s is %d.%d\n", g_prog,
                step->min_cc / 10, step->min_cc % 10, prop->name, prop->major, prop->minor);
        return KL_EXIT_NO_GPU;
    }
    if (step->only_cc && env->cc != step->only_cc) {
        fprintf(stderr, "%s: uses instructions of sm_%da only (compute capability %d.%d, e.g. an H100); %s is "
                        "%d.%d: run the steps before it instead\n", g_prog, step->only_cc, step->only_cc / 10,
                step->only_cc % 10, prop->name, prop->major, prop->minor);
        return KL_EXIT_NO_GPU;
    }
    CUBLAS_CHECK(cublasCreate(&env->cublas));
    CUBLAS_CHECK(cublasSetStream(env->cublas, env->stream));
    /* True FP32: no TF32 tensor cores behind our back (the default, said aloud). */
    CUBLAS_CHECK(cublasSetMathMode(env->cublas, CUBLAS_DEFAULT_MATH));
    return 0;
}

int kl_main(int argc, char **argv, const kl_step *step) {
    snprintf(g_prog, sizeof g_prog, "step%d", step->number);
    setvbuf(stdout, NULL, _IOLBF, 0);

    kl_cli c;
    char err[512];
    if (kl_parse_cli(argc, argv, step->opts, &c, err, sizeof err)) {
        fprintf(stderr, "%s: %s (see ./%s --help)\n", g_prog, err, g_prog);
        return KL_EXIT_USAGE;
    }
    if (c.help) {
        printf("%s: %s\n", g_prog, step->title);
        kl_print_usage(stdout, g_prog, step->opts);
        return KL_EXIT_OK;
    }

    int nk = 0;
    while (nk < KL_MAX_KERNELS && step->kernels[nk].op) ++nk;
    if (nk == 0) { fprintf(stderr, "%s: internal: the step declares no kernel\n", g_prog); return KL_EXIT_USAGE; }
    const kl_op *op0 = step->kernels[0].op;

    plist pl = {0};
    build_problems(op0, &c, &pl);
    for (int i = 0; i < pl.n; ++i) {
        /* Every kernel's op must accept the problem; the first op's shape is the one run. */
        for (int j = nk - 1; j >= 0; --j) {
            kl_problem q = pl.p[i];
            if (step->kernels[j].op->shape(&q, pl.m_given[i], err, sizeof err)) {
                fprintf(stderr, "%s: %s\n", g_prog, err);
                return KL_EXIT_USAGE;
            }
            if (j == 0) pl.p[i] = q;
        }
        if (step->accepts && step->accepts(&pl.p[i], err, sizeof err)) {
            fprintf(stderr, "%s: %s\n", g_prog, err);
            return KL_EXIT_USAGE;
        }
    }
    /* Problems can be equal (-m -n -k all given over the default sizes; a GEMV
     * fixes m = 1 when shaped, so -n 8192 -k 8192 is one problem): run each once. */
    int nu = 0;
    for (int i = 0; i < pl.n; ++i) {
        int dup = 0;
        for (int j = 0; j < nu && !dup; ++j)
            dup = pl.p[j].m == pl.p[i].m && pl.p[j].n == pl.p[i].n && pl.p[j].k == pl.p[i].k;
        if (!dup) pl.m_given[nu] = pl.m_given[i], pl.p[nu++] = pl.p[i];
    }
    pl.n = nu;

    FILE *csv = NULL;
    if (c.csv) {
        csv = fopen(c.csv, "w");
        if (!csv) {
            fprintf(stderr, "%s: --csv: cannot write '%s': %s\n", g_prog, c.csv, strerror(errno));
            return KL_EXIT_USAGE;
        }
        kl_csv_header(csv);
    }

    kl_env env;
    struct cudaDeviceProp prop;
    int clock_khz = 0;
    int rc = open_gpu(&c, step, &env, &prop, &clock_khz);
    if (rc) { if (csv) fclose(csv); return rc; }

    const double peak_tflops = peak_tflops_of(op0, &env, clock_khz);
    double ceiling_gbps = NAN;
    for (int j = 0; j < nk; ++j)
        if (step->kernels[j].op->memory_bound) ceiling_gbps = kl_read_bandwidth_gbps(&env);
    /* Every problem must fit before anything runs: fail in one line, not halfway. */
    size_t free_b = 0, total_b = 0;
    CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
    for (int i = 0; i < pl.n; ++i)
        for (int j = 0; j < nk; ++j) {
            const kl_op *op = step->kernels[j].op;
            const int nrot = rotations_for(op, &pl.p[i], &env, &c);
            const size_t need = op->device_bytes(&pl.p[i], nrot);
            if ((double)need > 0.9 * (double)free_b) {
                fprintf(stderr, "%s: m=%d n=%d k=%d needs %.2f GiB of device memory; %s has %.2f GiB free: "
                                "use smaller sizes\n", g_prog, pl.p[i].m, pl.p[i].n, pl.p[i].k,
                        need / 1073741824.0, prop.name, free_b / 1073741824.0);
                if (csv) fclose(csv);
                return KL_EXIT_USAGE;
            }
        }
    print_header(step, op0, &env, &prop, clock_khz, peak_tflops, ceiling_gbps, &c);

    int any_variant = 0, failures = 0;
    for (int j = 0; j < nk; ++j) any_variant |= step->kernels[j].variant && *step->kernels[j].variant;

    for (int i = 0; i < pl.n; ++i) {
        const kl_problem p = pl.p[i];
        /* Kernels are grouped by op: one setup (and one cuBLAS timing) serves all. */
        for (int j = 0; j < nk; ++j) {
            const kl_op *op = step->kernels[j].op;
            int seen = 0;
            for (int q = 0; q < j; ++q) seen |= step->kernels[q].op == op;
            if (seen) continue;

            const int nrot = rotations_for(op, &p, &env, &c);
            if (i == 0 || j > 0) print_columns(op, any_variant);
            void *st = op->setup(&p, nrot, &env);
            double ref_us = NAN;
            if (!c.check_only && op->run_ref) ref_us = time_us(&c, &env, op, st, NULL, nrot);

            for (int q = j; q < nk; ++q) {
                const kl_kernel *kern = &step->kernels[q];
                if (kern->op != op) continue;
                kl_row r;
                memset(&r, 0, sizeof r);
                r.step = step->number;
                r.op = op->name;
                r.dtype = op->dtype;
                r.variant = kern->variant ? kern->variant : "";
                r.m = p.m; r.n = p.n; r.k = p.k;
                r.pass = check_kernel(op, st, kern, &r.rel_err);
                r.time_us = c.check_only ? NAN : time_us(&c, &env, op, st, kern, nrot);
                r.cublas_time_us = ref_us;
                const double fl = op->flops(&p), by = op->bytes(&p);
                r.tflops = fl > 0 ? fl / (r.time_us * 1e-6) / 1e12 : NAN;
                r.gbps = by > 0 ? by / (r.time_us * 1e-6) / 1e9 : NAN;
                r.pct_ceiling = op->memory_bound ? 100.0 * r.gbps / ceiling_gbps : 100.0 * r.tflops / peak_tflops;
                const double cublas_rate = op->memory_bound ? by / (ref_us * 1e-6) / 1e9 : fl / (ref_us * 1e-6) / 1e12;
                print_row(op, &r, any_variant, cublas_rate);
                if (csv) { kl_csv_row(csv, &r); fflush(csv); }
                failures += !r.pass;
            }
            if (!c.check_only && op->baseline_note) {
                const char *note = op->baseline_note(st);
                if (note) printf("%8s %s\n", "", note);
            }
            op->teardown(st);
        }
    }
    if (csv) fclose(csv);
    CUBLAS_CHECK(cublasDestroy(env.cublas));
    CUDA_CHECK(cudaStreamDestroy(env.stream));
    free(pl.p);
    free(pl.m_given);
    if (failures) {
        printf("\n%s: %d result%s FAILED the check against the reference\n", g_prog, failures, failures > 1 ? "s" : "");
        return KL_EXIT_WRONG;
    }
    return KL_EXIT_OK;
}
