/*
 * engine.c - kl_main: command line -> problems -> GPU -> check -> time ->
 * report.  It drives any kl_op (op.h) the same way, so the step and cuBLAS
 * are always checked and timed by one method (timing.h), against one ceiling
 * (ceiling.h).
 */
#define _GNU_SOURCE
#include "op.h"
#include "ceiling.h"
#include "cli.h"
#include "report.h"

#include <errno.h>
#include <math.h>
#include <string.h>
#include <sys/stat.h>

/* The rounds in which cuBLAS and the kernels of one problem take turns on
 * the GPU (timing.h: kl_time_turns_us). */
#define TURNS 50

/* What one run of a step holds, from the command line to the last row. */
typedef struct engine {
    const kl_step *step;
    int nk;                          /* kernels in step->kernels */
    kl_cli cli;
    kl_problem *p;                   /* the problems, in order, each once */
    int *m_given, np, cap;
    FILE *csv;
    kl_env env;
    struct cudaDeviceProp prop;
    int clock_khz;
    const kl_read_ceiling *read;     /* NULL: no memory-bound op */
    int any_variant, failures;
} engine;

static const kl_op *op_of(const engine *e, int j) { return e->step->kernels[j].op; }

/* Whether kernel j is the first of its op's: kernels are grouped by op, and
 * one setup (and one cuBLAS timing) per problem serves the whole group. */
static int first_of_op(const engine *e, int j) {
    for (int q = 0; q < j; ++q)
        if (op_of(e, q) == op_of(e, j)) return 0;
    return 1;
}

/* ---- problems ------------------------------------------------------------ */

static void add_problem(engine *e, kl_problem p, int m_given) {
    if (e->np == e->cap) {
        e->cap = e->cap ? 2 * e->cap : 16;
        e->p = realloc(e->p, (size_t)e->cap * sizeof *e->p);
        e->m_given = realloc(e->m_given, (size_t)e->cap * sizeof *e->m_given);
        if (!e->p || !e->m_given) { fprintf(stderr, "%s: out of host memory\n", kl_prog()); exit(KL_EXIT_USAGE); }
    }
    e->m_given[e->np] = m_given;
    e->p[e->np++] = p;
}

/* One n x k at the op's m list (v16), or once at -m or at s. */
static void add_at_m(engine *e, const kl_op *op, int n, int k, int s) {
    const kl_cli *c = &e->cli;
    if (c->m || !op->m_list) {
        add_problem(e, (kl_problem){c->m ? c->m : s, n, k}, c->m != 0);
        return;
    }
    for (int i = 0; i < op->nm_list; ++i) add_problem(e, (kl_problem){op->m_list[i], n, k}, 1);
}

static void list_problems(engine *e, const kl_op *op) {
    const kl_cli *c = &e->cli;
    int sizes[KL_MAX_SIZES], ns = 0;
    char err[256];
    if (c->nsizes) {
        memcpy(sizes, c->sizes, sizeof(int) * (size_t)c->nsizes);
        ns = c->nsizes;
    } else if (kl_parse_sizes(op->default_sizes, sizes, KL_MAX_SIZES, &ns, err, sizeof err)) {
        fprintf(stderr, "%s: internal: bad default sizes: %s\n", kl_prog(), err);
        exit(KL_EXIT_USAGE);
    }
    for (int i = 0; i < ns; ++i) add_at_m(e, op, c->n ? c->n : sizes[i], c->k ? c->k : sizes[i], sizes[i]);
    if (!c->nsizes && !c->n && !c->k)
        for (int i = 0; i < op->nextra_shapes; ++i) {
            const kl_problem *x = &op->extra_shapes[i];
            add_at_m(e, op, x->n, x->k, x->m ? x->m : x->n);
        }
}

/* The first op's sizes, shaped by every op (the first op's shape is the one
 * run) and accepted by the step, each problem once: equal problems arise when
 * -m -n -k are all given, or when a GEMV fixes m = 1.  0 or exit 2. */
static int plan_problems(engine *e) {
    char err[512];
    list_problems(e, op_of(e, 0));
    for (int i = 0; i < e->np; ++i) {
        for (int j = e->nk - 1; j >= 0; --j) {
            kl_problem q = e->p[i];
            if (op_of(e, j)->shape(&q, e->m_given[i], err, sizeof err)) {
                fprintf(stderr, "%s: %s\n", kl_prog(), err);
                return KL_EXIT_USAGE;
            }
            if (j == 0) e->p[i] = q;
        }
        if (e->step->accepts && e->step->accepts(&e->p[i], err, sizeof err)) {
            fprintf(stderr, "%s: %s\n", kl_prog(), err);
            return KL_EXIT_USAGE;
        }
    }
    int nu = 0;
    for (int i = 0; i < e->np; ++i) {
        int dup = 0;
        for (int j = 0; j < nu && !dup; ++j)
            dup = e->p[j].m == e->p[i].m && e->p[j].n == e->p[i].n && e->p[j].k == e->p[i].k;
        if (!dup) e->m_given[nu] = e->m_given[i], e->p[nu++] = e->p[i];
    }
    e->np = nu;
    return 0;
}

/* Copies the op rotates through: a cold L2 for memory-bound ops, and for a
 * problem of a compute-bound op that names bytes to rotate (gemm_bf16's
 * decode batches); one copy otherwise, and for --check-only, which times
 * nothing. */
static int rotations_for(const engine *e, const kl_op *op, const kl_problem *p) {
    if (e->cli.check_only) return 1;
    return op->memory_bound || op->rotating_bytes(p) ? kl_rotations(&e->env, op->rotating_bytes(p)) : 1;
}

/* Every problem must fit before anything runs: fail in one line, not halfway. */
static int check_memory(const engine *e) {
    size_t free_b = 0, total_b = 0;
    CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
    for (int i = 0; i < e->np; ++i)
        for (int j = 0; j < e->nk; ++j) {
            const kl_problem *p = &e->p[i];
            const size_t need = op_of(e, j)->device_bytes(p, rotations_for(e, op_of(e, j), p));
            if ((double)need > 0.9 * (double)free_b) {
                fprintf(stderr, "%s: m=%d n=%d k=%d needs %.2f GiB of device memory; %s has %.2f GiB free: "
                                "use smaller sizes\n", kl_prog(), p->m, p->n, p->k,
                        need / 1073741824.0, e->prop.name, free_b / 1073741824.0);
                return KL_EXIT_USAGE;
            }
        }
    return 0;
}

/* ---- the GPU ----------------------------------------------------------------- */

static int open_gpu(engine *e) {
    const int rc = kl_open_device(e->cli.device, &e->env, &e->prop);
    if (rc) return rc;
    e->env.seed = e->cli.seed;
    CUDA_CHECK(cudaDeviceGetAttribute(&e->clock_khz, cudaDevAttrClockRate, e->cli.device));
    char why[512];
    const kl_gpu_caps caps = {e->prop.name, e->env.cc, e->prop.sharedMemPerBlockOptin};
    if (kl_gpu_refuses(e->step, &caps, why, sizeof why)) {
        fprintf(stderr, "%s: %s\n", kl_prog(), why);
        return KL_EXIT_NO_GPU;
    }
    CUBLAS_CHECK(cublasCreate(&e->env.cublas));
    CUBLAS_CHECK(cublasSetStream(e->env.cublas, e->env.stream));
    /* True FP32: no TF32 tensor cores behind our back (the default, said aloud). */
    CUBLAS_CHECK(cublasSetMathMode(e->env.cublas, CUBLAS_DEFAULT_MATH));
    /* --check-only times nothing: no read ceiling, and no op picks its baseline by time */
    e->env.check_only = e->cli.check_only;
    for (int j = 0; j < e->nk && !e->cli.check_only; ++j)
        if (op_of(e, j)->memory_bound) e->read = kl_measure_read_ceiling(&e->env);
    return 0;
}

/* ---- the check --------------------------------------------------------------- */

/* Every checked launch of one kernel: pass or not; *rel_err and *tol_used the
 * worst over the launches (NaN, an output not written, wins both).  A failure
 * prints how many elements, how many NaN or Inf, the first few with their
 * error against the tolerance there, and the worst finite one for its tolerance. */
static int check_kernel(const kl_op *op, void *st, const kl_kernel *kern, double *rel_err, double *tol_used) {
    int pass = 1;
    *rel_err = 0.0;
    *tol_used = 0.0;
    for (int i = 0; i < op->checks; ++i) {
        kl_check_data d;
        memset(&d, 0, sizeof d);
        op->check(st, kern, i, &d);
        kl_compare_result r;
        kl_compare(d.out, d.ref, d.count, d.tol, &r);
        const double used = r.nonfinite ? NAN : r.tol_used;
        if (!isnan(*rel_err) && !(r.rel_err <= *rel_err)) *rel_err = r.rel_err;   /* NaN wins, and stays */
        if (!isnan(*tol_used) && !(used <= *tol_used)) *tol_used = used;
        if (r.bad) {
            pass = 0;
            const size_t cols = d.cols > 0 ? (size_t)d.cols : 1;
            printf("  FAIL %s%s%s: %zu of %zu elements wrong (%zu NaN/Inf); tolerance |out-ref| <= %.2e + %.2e*|ref|\n",
                   kern->variant && *kern->variant ? kern->variant : "", kern->variant && *kern->variant ? ", " : "",
                   d.what ? d.what : "check", r.bad, d.count, r.nonfinite, d.tol.atol, d.tol.rtol);
            for (int j = 0; j < r.nreported; ++j) {
                const kl_mismatch *m = &r.first[j];
                printf("    [%zu][%zu] = %.7g, expected %.7g (|out-ref| %.2e, tolerance there %.2e)\n",
                       m->index / cols, m->index % cols, m->out, m->ref, fabs((double)m->out - m->ref), m->tol);
            }
            if (r.bad > r.nonfinite)   /* some finite ones are wrong too: the worst of them */
                printf("    worst: [%zu][%zu] = %.7g, expected %.7g: |out-ref| %.2e, %.3g x the tolerance there\n",
                       r.worst / cols, r.worst % cols, d.out[r.worst], d.ref[r.worst],
                       fabs((double)d.out[r.worst] - d.ref[r.worst]), r.tol_used);
        }
    }
    return pass;
}

/* ---- the report -------------------------------------------------------------- */

static void print_ceiling(const engine *e, const kl_op *op) {
    const int mhz = e->clock_khz / 1000;
    if (op->memory_bound) {
        const kl_read_ceiling *r = e->read;
        printf("ceiling: best streaming read measured now: %.0f GB/s (%s, %d x %d blocks, %.0f MiB; the best "
               "of read_floor's readers at 256 MiB and up)", r->gbps, kl_read_stream_name(r->best.variant),
               e->env.sms, r->best.blocks_per_sm, r->bytes / 1048576.0);
        if (r->datasheet_gbps > 0)
            printf("; HBM datasheet %.0f GB/s (%d MHz x %d-bit bus x 2, DDR)", r->datasheet_gbps, r->mem_mhz, r->bus_bits);
        printf("; L2 cold (weights rotate through copies > 3x L2)\n");
    } else if (op->tensor_core) {
        printf("ceiling: dense %s tensor-core peak %d SMs x %d FLOP/clock x %d MHz = %.1f TFLOPS; L2 warm "
               "for step and cuBLAS alike, but where a problem's note says L2 cold\n",
               op->tensor_core == KL_TC_FP8 ? "FP8 (e4m3)" : "bf16", e->env.sms,
               kl_flop_per_clock_sm(e->env.cc, op->tensor_core), mhz, kl_peak_tflops(&e->env, op->tensor_core, e->clock_khz));
    } else {
        printf("ceiling: FP32 peak %d SMs x %d lanes x 2 FLOP x %d MHz = %.1f TFLOPS; L2 warm for "
               "step and cuBLAS alike\n", e->env.sms, kl_flop_per_clock_sm(e->env.cc, 0) / 2, mhz,
               kl_peak_tflops(&e->env, 0, e->clock_khz));
    }
}

/* The GPU and software, then each op's reference and each kind of ceiling once. */
static void print_header(const engine *e) {
    const kl_env *env = &e->env;
    const kl_cli *c = &e->cli;
    int rt = 0, drv = 0, cub = 0, mem_khz = 0, nops = 0;
    CUDA_CHECK(cudaRuntimeGetVersion(&rt));
    CUDA_CHECK(cudaDriverGetVersion(&drv));
    CUBLAS_CHECK(cublasGetVersion(env->cublas, &cub));
    cudaDeviceGetAttribute(&mem_khz, cudaDevAttrMemoryClockRate, env->device);
    printf("%s: %s\n", kl_prog(), e->step->title);
    printf("GPU %d: %s, sm_%d, %d SMs, SM clock up to %d MHz, memory clock %d MHz, L2 %.0f MiB, %.1f GiB\n",
           env->device, e->prop.name, env->cc, env->sms, e->clock_khz / 1000, mem_khz / 1000,
           env->l2_bytes / 1048576.0, e->prop.totalGlobalMem / 1073741824.0);
    printf("CUDA runtime %d.%d, driver %d.%d, cuBLAS %d.%d.%d\n", rt / 1000, rt % 1000 / 10,
           drv / 1000, drv % 1000 / 10, cub / 10000, cub % 10000 / 100, cub % 100);
    for (int j = 0; j < e->nk; ++j) nops += first_of_op(e, j);
    for (int j = 0; j < e->nk; ++j)
        if (first_of_op(e, j) && op_of(e, j)->baseline) {
            if (nops > 1) printf("reference for %s: %s\n", op_of(e, j)->name, op_of(e, j)->baseline);
            else printf("reference: %s\n", op_of(e, j)->baseline);
        }
    if (c->check_only) {
        printf("check only: nothing timed (no read ceiling, no cuBLAS timing; the reference runs once per check); "
               "check: random inputs (seed %llu), output poisoned with NaN first\n\n", (unsigned long long)c->seed);
        return;
    }
    for (int j = 0; j < e->nk; ++j) {   /* one line per kind: read, tensor-core, FP32 */
        int seen = 0;
        for (int q = 0; q < j; ++q)
            seen |= op_of(e, q)->memory_bound == op_of(e, j)->memory_bound &&
                    op_of(e, q)->tensor_core == op_of(e, j)->tensor_core;
        if (!seen) print_ceiling(e, op_of(e, j));
    }
    printf("timing: median of up to %d runs (CUDA events, %d warm-up, %.0f ms budget each; cuBLAS and the "
           "kernels in %d turns, each run after as many untimed ones); check: random inputs (seed %llu), output poisoned with NaN first\n\n",
           c->iters, c->warmup, c->budget_ms, TURNS, (unsigned long long)c->seed);
}

/* err/tol: the largest |out - ref| / tolerance of any element (1 is the limit):
 * how much room the check leaves this kernel. */
static void print_columns(const kl_op *op, int variants) {
    printf("%8s %8s %8s %s%11s %9s %9s %8s %8s %9s %8s  %s\n", "M", "N", "K", variants ? "variant           " : "",
           "time(us)", op->memory_bound ? "GB/s" : "TFLOPS", "cuBLAS",
           "%cuBLAS", op->memory_bound ? "%ceil" : "%peak", "rel_err", "err/tol", "check");
}

static void fmt(char *buf, size_t n, const char *f, double v) {
    if (isfinite(v)) snprintf(buf, n, f, v);
    else snprintf(buf, n, "-");
}

static void print_row(const kl_op *op, const kl_row *r, int variants, double cublas_rate) {
    char t[32], rate[32], cb[32], pc[32], ce[32], re[32], tu[32];
    fmt(t, sizeof t, "%.1f", r->time_us);
    fmt(rate, sizeof rate, op->memory_bound ? "%.0f" : "%.2f", op->memory_bound ? r->gbps : r->tflops);
    fmt(cb, sizeof cb, op->memory_bound ? "%.0f" : "%.2f", cublas_rate);
    fmt(pc, sizeof pc, "%.1f", kl_pct_cublas(r));
    fmt(ce, sizeof ce, "%.1f", r->pct_ceiling);
    fmt(re, sizeof re, "%.1e", r->rel_err);
    fmt(tu, sizeof tu, "%.2g", r->tol_used);
    if (variants) printf("%8d %8d %8d %-18s%11s %9s %9s %8s %8s %9s %8s  %s\n", r->m, r->n, r->k, r->variant, t, rate, cb, pc, ce, re, tu, r->pass ? "PASS" : "FAIL");
    else printf("%8d %8d %8d %11s %9s %9s %8s %8s %9s %8s  %s\n", r->m, r->n, r->k, t, rate, cb, pc, ce, re, tu, r->pass ? "PASS" : "FAIL");
    fflush(stdout);
}

/* ---- running ------------------------------------------------------------------- */

/* One timed launch: the step's kernel, or the cuBLAS reference (kern NULL),
 * through the same code and the same rotation of buffers. */
typedef struct timed_body {
    const kl_op *op;
    void *st;
    const kl_kernel *kern;
    int nrot;
    cudaStream_t s;
} timed_body;
static void launch_body(void *ctx, int i) {
    const timed_body *t = (const timed_body *)ctx;
    if (t->kern) t->op->run(t->st, t->kern, i % t->nrot, t->s);
    else t->op->run_ref(t->st, i % t->nrot, t->s);
}

/* Problem p's row for one kernel: checked here, timed later with the others. */
static void check_row(engine *e, const kl_kernel *kern, void *st, const kl_problem *p, kl_row *r) {
    const kl_op *op = kern->op;
    memset(r, 0, sizeof *r);
    r->step = e->step->number;
    r->op = op->name;
    r->dtype = op->dtype;
    r->variant = kern->variant ? kern->variant : "";
    r->part = op->part;
    r->memory_bound = op->memory_bound;
    r->m = p->m; r->n = p->n; r->k = p->k;
    r->pass = check_kernel(op, st, kern, &r->rel_err, &r->tol_used);
}

/* The row's rates from its times; print and write it. */
static void report_row(engine *e, const kl_op *op, const kl_problem *p, kl_row *r) {
    const double fl = op->flops(p), by = op->bytes(p);
    r->tflops = fl > 0 ? fl / (r->time_us * 1e-6) / 1e12 : NAN;
    r->gbps = by > 0 ? by / (r->time_us * 1e-6) / 1e9 : NAN;
    r->pct_ceiling = op->memory_bound ? (e->read ? 100.0 * r->gbps / e->read->gbps : NAN)   /* none: --check-only */
                                      : 100.0 * r->tflops / kl_peak_tflops(&e->env, op->tensor_core, e->clock_khz);
    const double ref_us = r->cublas_time_us;
    const double cublas_rate = op->memory_bound ? by / (ref_us * 1e-6) / 1e9 : fl / (ref_us * 1e-6) / 1e12;
    print_row(op, r, e->any_variant, cublas_rate);
    if (e->csv) { kl_csv_row(e->csv, r); fflush(e->csv); }
    e->failures += !r->pass;
}

/* Problem i: for each op, one setup; its kernels checked; then cuBLAS and
 * the kernels timed in turns, through the same code and the same rotation
 * of buffers, so that each sees the same clocks. */
static void run_problem(engine *e, int i) {
    const kl_problem *p = &e->p[i];
    for (int j = 0; j < e->nk; ++j) {
        if (!first_of_op(e, j)) continue;
        const kl_op *op = op_of(e, j);
        const int nrot = rotations_for(e, op, p);
        if (i == 0 || j > 0) print_columns(op, e->any_variant);
        void *st = op->setup(p, nrot, &e->env);
        kl_row rows[KL_MAX_KERNELS];
        timed_body tb[KL_MAX_KERNELS + 1];
        kl_body body[KL_MAX_KERNELS + 1];
        int nr = 0, nb = 0;
        const int ref = !e->cli.check_only && op->run_ref && (!op->has_ref || op->has_ref(st));
        if (ref) tb[nb++] = (timed_body){op, st, NULL, nrot, e->env.stream};   /* cuBLAS: body 0 */
        for (int q = j; q < e->nk; ++q) {
            if (op_of(e, q) != op) continue;
            check_row(e, &e->step->kernels[q], st, p, &rows[nr++]);
            if (!e->cli.check_only) tb[nb++] = (timed_body){op, st, &e->step->kernels[q], nrot, e->env.stream};
        }
        double us[KL_MAX_KERNELS + 1];
        for (int b = 0; b < nb; ++b) body[b] = (kl_body){launch_body, &tb[b]};
        if (nb) {
            const kl_timing t = {e->cli.warmup, e->cli.iters, e->cli.budget_ms};
            kl_time_turns_us(body, nb, &t, TURNS, e->env.stream, us);
        }
        for (int q = 0; q < nr; ++q) {
            rows[q].time_us = e->cli.check_only ? NAN : us[ref + q];
            rows[q].cublas_time_us = ref ? us[0] : NAN;
            report_row(e, op, p, &rows[q]);
        }
        if (!e->cli.check_only && op->baseline_note) {
            const char *note = op->baseline_note(st);
            if (note) printf("%8s %s\n", "", note);
        }
        op->teardown(st);
    }
}

/* ---- main ------------------------------------------------------------------------ */

/* The command line, --help, and the kernels the step declares.  -1: go on. */
static int parse_args(engine *e, int argc, char **argv) {
    char err[512];
    if (kl_parse_cli(argc, argv, e->step->opts, &e->cli, err, sizeof err)) {
        fprintf(stderr, "%s: %s (see ./%s --help)\n", kl_prog(), err, kl_prog());
        return KL_EXIT_USAGE;
    }
    if (e->cli.help) {
        printf("%s: %s\n", kl_prog(), e->step->title);
        kl_print_usage(stdout, kl_prog(), e->step->opts);
        return KL_EXIT_OK;
    }
    while (e->nk < KL_MAX_KERNELS && e->step->kernels[e->nk].op) {
        const char *v = e->step->kernels[e->nk++].variant;
        e->any_variant |= v && *v;
    }
    if (e->nk == 0) { fprintf(stderr, "%s: internal: the step declares no kernel\n", kl_prog()); return KL_EXIT_USAGE; }
    return -1;
}

/* Nothing ran: leave no CSV holding a header alone.  It is opened before the GPU
 * work, so that a path it cannot write fails first; only a regular file named
 * as such is removed (lstat: never a link such as /dev/stdout, a pipe or a device). */
static void drop_csv(engine *e) {
    struct stat sb;
    fclose(e->csv);
    e->csv = NULL;
    if (lstat(e->cli.csv, &sb) == 0 && S_ISREG(sb.st_mode)) remove(e->cli.csv);
}

static int open_csv(engine *e) {
    if (!e->cli.csv) return 0;
    e->csv = fopen(e->cli.csv, "w");
    if (!e->csv) {
        fprintf(stderr, "%s: --csv: cannot write '%s': %s\n", kl_prog(), e->cli.csv, strerror(errno));
        return KL_EXIT_USAGE;
    }
    kl_csv_header(e->csv);
    return 0;
}

int kl_main(int argc, char **argv, const kl_step *step) {
    char prog[32];
    snprintf(prog, sizeof prog, "step%d", step->number);
    kl_set_prog(prog);
    setvbuf(stdout, NULL, _IOLBF, 0);

    engine e;
    memset(&e, 0, sizeof e);
    e.step = step;
    int rc = parse_args(&e, argc, argv);
    if (rc >= 0) return rc;
    if ((rc = plan_problems(&e))) return rc;
    if (e.cli.plan_sms) {   /* the plans only: host code, no GPU */
        if (!step->show_plan) {
            fprintf(stderr, "%s: --plan: this step runs one plan for every problem (steps 25 on choose one per problem)\n",
                    kl_prog());
            return KL_EXIT_USAGE;
        }
        for (int i = 0; i < e.np; ++i) step->show_plan(&e.p[i], e.cli.plan_sms);
        free(e.p);
        free(e.m_given);
        return KL_EXIT_OK;
    }
    if ((rc = open_csv(&e)) || (rc = open_gpu(&e)) || (rc = check_memory(&e))) {
        if (e.csv) drop_csv(&e);
        return rc;
    }
    print_header(&e);
    for (int i = 0; i < e.np; ++i) run_problem(&e, i);

    if (e.csv) fclose(e.csv);
    CUBLAS_CHECK(cublasDestroy(e.env.cublas));
    CUDA_CHECK(cudaStreamDestroy(e.env.stream));
    free(e.p);
    free(e.m_given);
    if (e.cli.check_only && kl_measurements()) {   /* the promise of --help, kept by every test run */
        fprintf(stderr, "%s: internal: --check-only timed %ld measurements; it must time none\n", kl_prog(),
                kl_measurements());
        return KL_EXIT_WRONG;
    }
    if (e.failures) {
        printf("\n%s: %d result%s FAILED the check against the reference\n", kl_prog(), e.failures,
               e.failures > 1 ? "s" : "");
        return KL_EXIT_WRONG;
    }
    return KL_EXIT_OK;
}
