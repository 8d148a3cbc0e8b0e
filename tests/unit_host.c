/* unit_host.c - the harness's host code, on the CPU: command line, statistics,
 * the tolerance check, the CPU reference, CSV, the random generator, the
 * rotation rule.  One line per test. */
#include "check.h"
#include "cli.h"
#include "kl.h"
#include "op.h"
#include "report.h"
#include "rng.h"
#include "timing.h"
#include "unit.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static int parse(const char *line, kl_cli *c, char *err, size_t n, const kl_opt *opts) {
    static char buf[512];   /* argv strings outlive the call: c->csv points into them */
    char *argv[32];
    int argc = 0;
    snprintf(buf, sizeof buf, "prog %s", line);
    for (char *t = strtok(buf, " "); t && argc < 31; t = strtok(NULL, " ")) argv[argc++] = t;
    argv[argc] = NULL;
    err[0] = '\0';
    return kl_parse_cli(argc, argv, opts, c, err, n);
}

static void test_cli(void) {
    kl_cli c;
    char err[256];
    TEST(parse("", &c, err, sizeof err, NULL) == 0 && c.nsizes == 0 && c.iters == 1000 && c.seed == 42 &&
         c.warmup == 2 && !c.check_only && c.csv == NULL && c.m == 0 && c.n == 0 && c.k == 0 && c.device == 0,
         "cli: defaults");
    TEST(parse("--sizes 1024,4096,7", &c, err, sizeof err, NULL) == 0 && c.nsizes == 3 && c.sizes[0] == 1024 &&
         c.sizes[2] == 7, "cli: --sizes list");
    TEST(parse("-m 1000 -n 7 -k 33 --check-only --iters 5 --warmup 0 --seed 9 --device 1 --csv x.csv --budget 7", &c, err,
               sizeof err, NULL) == 0 && c.budget_ms == 7.0 && c.m == 1000 && c.n == 7 && c.k == 33 && c.check_only && c.iters == 5 &&
         c.warmup == 0 && c.seed == 9 && c.device == 1 && strcmp(c.csv, "x.csv") == 0, "cli: every flag");
    TEST(parse("--help", &c, err, sizeof err, NULL) == 0 && c.help, "cli: --help");

    struct { const char *args, *expect; } bad[] = {
        {"--sizes 1024,,2048", "empty entry"},
        {"--sizes 1024,", "empty entry"},
        {"--sizes 12abc", "not an integer"},
        {"--sizes 1e3", "not an integer"},
        {"--sizes 123456789012345678901234567890123", "out of range"},
        {"--sizes abcdefghijklmnopqrstuvwxyzabcdefghij", "not an integer"},
        {"-k x", "not an integer"},
        {"-m 1.5", "not an integer"},
        {"--seed 0x10", "not an integer"},
        {"--budget 2ms", "not an integer"},
        {"--bogus", "unknown option '--bogus'"},
        {"-x", "unknown option '-x'"},
        {"--sizes", "needs a value"},
        {"-m", "needs a value"},
        {"stray", "unexpected argument"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
        const int rc = parse(bad[i].args, &c, err, sizeof err, NULL);
        TEST(rc == KL_EXIT_USAGE && strstr(err, bad[i].expect) && !strchr(err, '\n'),
             "cli: '%s' -> exit 2, one line: %s", bad[i].args, err);
    }

    /* Every numeric option at 0, a negative value, one past its largest, far
     * past what any integer type holds, and its smallest and largest: refused
     * with the one range message, or accepted with the value where it belongs. */
    struct { const char *flag; long long lo, hi; } rng[] = {
        {"--sizes", 1, KL_MAX_DIM}, {"-m", 1, KL_MAX_DIM}, {"-n", 1, KL_MAX_DIM}, {"-k", 1, KL_MAX_DIM},
        {"--iters", 1, KL_MAX_ITERS}, {"--warmup", 0, KL_MAX_WARMUP}, {"--budget", 1, KL_MAX_BUDGET_MS},
        {"--seed", 0, 9223372036854775807LL}, {"--device", 0, KL_MAX_DEVICE},
    };
    for (size_t i = 0; i < sizeof rng / sizeof rng[0]; ++i) {
        char line[160], want[128];
        const long long tries[] = {0, -1, rng[i].hi + (rng[i].hi < 9223372036854775807LL), rng[i].lo, rng[i].hi};
        for (int t = 0; t < 5; ++t) {
            const long long v = tries[t];
            const int refuse = v < rng[i].lo || v > rng[i].hi || (t == 2 && v == rng[i].hi);
            if (t == 2 && v == rng[i].hi) snprintf(line, sizeof line, "%s 99999999999999999999", rng[i].flag);
            else snprintf(line, sizeof line, "%s %lld", rng[i].flag, v);
            const int rc = parse(line, &c, err, sizeof err, NULL);
            if (refuse) {
                snprintf(want, sizeof want, "%s: %s is out of range: it must be from %lld to %lld", rng[i].flag,
                         strchr(line, ' ') + 1, rng[i].lo, rng[i].hi);
                TEST(rc == KL_EXIT_USAGE && strcmp(err, want) == 0, "cli: '%s' -> exit 2: %s", line, err);
                continue;
            }
            long long got = -2;
            switch (rng[i].flag[1] == '-' ? rng[i].flag[2] : rng[i].flag[1]) {
            case 's': got = rng[i].flag[3] == 'i' ? (c.nsizes == 1 ? c.sizes[0] : -3) : (long long)c.seed; break;
            case 'm': got = c.m; break;
            case 'n': got = c.n; break;
            case 'k': got = c.k; break;
            case 'i': got = c.iters; break;
            case 'w': got = c.warmup; break;
            case 'b': got = c.budget_ms == (double)(long long)c.budget_ms ? (long long)c.budget_ms : -4; break;
            case 'd': got = c.device; break;
            }
            TEST(rc == 0 && got == v, "cli: '%s' accepted, the value arrives (%lld)%s", line, got, err);
        }
    }
    /* --budget is milliseconds: what --budget 5 stores is 5 ms, as the timing reads it */
    TEST(parse("--budget 5", &c, err, sizeof err, NULL) == 0 && c.budget_ms == 5.0 && c.iters == 1000,
         "cli: --budget 5 is 5 ms (budget_ms %g), --iters untouched", c.budget_ms);
    TEST(parse("", &c, err, sizeof err, NULL) == 0 && c.budget_ms == 200.0, "cli: --budget defaults to 200 ms");
    /* the same message for every flag, one parser: a step option too */
    {
        int x = 0;
        kl_opt o[KL_MAX_OPTS] = {{"rows", "rows per block", &x, 1, 8}};
        TEST(parse("--rows 0", &c, err, sizeof err, o) == KL_EXIT_USAGE &&
             strcmp(err, "--rows: 0 is out of range: it must be from 1 to 8") == 0, "cli: step option below range: %s", err);
        TEST(parse("--rows -3", &c, err, sizeof err, o) == KL_EXIT_USAGE && strstr(err, "out of range"),
             "cli: step option negative: %s", err);
        TEST(parse("--rows 99999999999999999999", &c, err, sizeof err, o) == KL_EXIT_USAGE && strstr(err, "out of range"),
             "cli: step option past any integer: %s", err);
        TEST(parse("--rows 8", &c, err, sizeof err, o) == 0 && x == 8, "cli: step option's largest arrives");
        TEST(parse("--rows 1", &c, err, sizeof err, o) == 0 && x == 1, "cli: step option's smallest arrives");
        TEST(parse("--rows x", &c, err, sizeof err, o) == KL_EXIT_USAGE && strcmp(err, "--rows: 'x' is not an integer") == 0,
             "cli: step option not an integer: %s", err);
    }
    {   /* at most KL_MAX_SIZES sizes: 64 fit, 65 are refused */
        static char list[KL_MAX_SIZES * 4 + 16];
        char *p = list;
        for (int i = 0; i < KL_MAX_SIZES; ++i) p += sprintf(p, "%s%d", i ? "," : "", i + 1);
        int ok64 = kl_parse_sizes(list, c.sizes, KL_MAX_SIZES, &c.nsizes, err, sizeof err) == 0 &&
                   c.nsizes == KL_MAX_SIZES && c.sizes[KL_MAX_SIZES - 1] == KL_MAX_SIZES;
        sprintf(p, ",7");
        TEST(ok64 && kl_parse_sizes(list, c.sizes, KL_MAX_SIZES, &c.nsizes, err, sizeof err) == KL_EXIT_USAGE &&
             strstr(err, "more than 64 sizes"), "cli: %d sizes fit, one more is refused: %s", KL_MAX_SIZES, err);
    }
    {   /* an empty file name (argv as the shell passes --csv "") */
        char a0[] = "prog", a1[] = "--csv", a2[] = "";
        char *argv[] = {a0, a1, a2, NULL};
        TEST(kl_parse_cli(3, argv, NULL, &c, err, sizeof err) == KL_EXIT_USAGE && strstr(err, "--csv: empty file name"),
             "cli: --csv '' -> exit 2: %s", err);
    }
    TEST(parse("--sizes 7,0", &c, err, sizeof err, NULL) == KL_EXIT_USAGE &&
         strcmp(err, "--sizes: 0 is out of range: it must be from 1 to 2147483647") == 0, "cli: a bad size in a list: %s", err);

    int split = 0;
    kl_opt opts[KL_MAX_OPTS] = {{"split", "SplitK factor", &split, 0, 32}};
    TEST(parse("--split 8", &c, err, sizeof err, opts) == 0 && split == 8, "cli: step option parsed");
    TEST(parse("--split 99", &c, err, sizeof err, opts) == KL_EXIT_USAGE && strstr(err, "--split: 99 is out of range: it must be from 0 to 32"),
         "cli: step option range: %s", err);
    TEST(parse("--split", &c, err, sizeof err, opts) == KL_EXIT_USAGE && strstr(err, "needs a value"),
         "cli: step option without value: %s", err);
}

/* kl_spot_check on a 3 x 5 x 4 product computed here: right passes, one wrong element fails. */
static float spot_a[3][4], spot_b[4][5];
static void spot_fetch(void *ctx, int r, int c, float *a, float *b) {
    (void)ctx;
    for (int i = 0; i < 4; ++i) a[i] = spot_a[r][i], b[i] = spot_b[i][c];
}
static void test_spot_check(void) {
    float ref[3][5];
    char msg[160];
    for (int i = 0; i < 3; ++i) for (int j = 0; j < 4; ++j) spot_a[i][j] = 0.25f * (float)(i + 1) - 0.1f * (float)j;
    for (int i = 0; i < 4; ++i) for (int j = 0; j < 5; ++j) spot_b[i][j] = 0.5f - 0.125f * (float)(i * j);
    for (int r = 0; r < 3; ++r)
        for (int c = 0; c < 5; ++c) {
            ref[r][c] = 0.0f;
            for (int i = 0; i < 4; ++i) ref[r][c] += spot_a[r][i] * spot_b[i][c];
        }
    TEST(kl_spot_check(3, 5, 4, 42, &ref[0][0], spot_fetch, NULL, msg, sizeof msg) == 0, "spot check: a right reference passes");
    ref[2][4] += 0.5f;   /* a corner, always among the points */
    TEST(kl_spot_check(3, 5, 4, 42, &ref[0][0], spot_fetch, NULL, msg, sizeof msg) == 1 && strstr(msg, "C[2][4]"),
         "spot check: a wrong corner is named");
}

static void test_stats(void) {
    const double odd[] = {5, 1, 3}, even[] = {4, 1, 3, 2}, one[] = {7};
    TEST(kl_median(odd, 3) == 3.0, "median: odd count");
    TEST(kl_median(even, 4) == 2.5, "median: even count, unsorted input");
    TEST(kl_median(one, 1) == 7.0, "median: one value");
    const double outlier[] = {1, 1, 1, 1, 1000};
    TEST(kl_median(outlier, 5) == 1.0, "median: ignores an outlier (why not the mean)");
    TEST(kl_repeats(100.0, 200.0, 3, 100) == 3, "repeats: slow kernel gets the minimum");
    TEST(kl_repeats(0.01, 200.0, 3, 100) == 100, "repeats: fast kernel capped at --iters");
    TEST(kl_repeats(10.0, 200.0, 3, 100) == 20, "repeats: budget / time in between");
    TEST(kl_repeats(10.0, 200.0, 3, 1) == 1, "repeats: --iters 1 wins over the minimum");
}

static void test_compare(void) {
    enum { N = 1000 };
    static float ref[N], out[N];
    for (int i = 0; i < N; ++i) ref[i] = out[i] = sinf((float)i) * 10.0f;
    const kl_tol tol = kl_dot_tolerance(4096, 1.0, ldexp(1.0, -24), 0.0);
    kl_compare_result r;
    TEST(kl_compare(out, ref, N, tol, &r) == 0 && r.rel_err == 0.0, "compare: identical arrays pass");

    out[10] += (float)(tol.atol * 0.5);
    TEST(kl_compare(out, ref, N, tol, &r) == 0 && r.rel_err > 0.0, "compare: error within tolerance passes");

    out[123] = ref[123] + 0.25f;   /* one missing |a*b| term, on average */
    TEST(kl_compare(out, ref, N, tol, &r) == 1 && r.nreported == 1 && r.first[0].index == 123,
         "compare: one wrong element caught, with its index");
    out[123] = ref[123];

    out[500] = NAN;
    TEST(kl_compare(out, ref, N, tol, &r) == 1 && r.nonfinite == 1 && isnan(r.rel_err) && r.first[0].index == 500,
         "compare: NaN caught (an unwritten, poisoned output)");
    out[500] = INFINITY;
    TEST(kl_compare(out, ref, N, tol, &r) == 1 && r.nonfinite == 1, "compare: Inf caught");
    out[500] = ref[500];

    /* rel_err is ||out - ref||_2 / ||ref||_2: ref (1, 2, 2) has norm 3, out off by 0.75 in one
     * element: 0.25 exactly (an L1 or max norm, or a missing square root, reads otherwise) */
    {
        const float r3[3] = {1, 2, 2}, o3[3] = {1, 2, 2.75f};
        const kl_tol loose = {1.0, 0.0};
        TEST(kl_compare(o3, r3, 3, loose, &r) == 0 && r.rel_err == 0.25 && r.max_abs_err == 0.75,
             "compare: rel_err is the 2-norm ratio (0.25: %g), max |err| 0.75 (%g)", r.rel_err, r.max_abs_err);
        const kl_tol tight = {0.74, 0.0};
        TEST(kl_compare(o3, r3, 3, tight, &r) == 1 && r.first[0].index == 2,
             "compare: the same error against a tolerance just under it fails at [2]");
    }

    /* the relative part scales with |ref|: 0.5 off at 1000 is within rtol 1e-3, not 1e-4 */
    {
        const float r1[1] = {1000.0f}, o1[1] = {1000.5f};
        const kl_tol rel3 = {0.0, 1e-3}, rel4 = {0.0, 1e-4};
        TEST(kl_compare(o1, r1, 1, rel3, &r) == 0 && kl_compare(o1, r1, 1, rel4, &r) == 1,
             "compare: rtol * |ref| is part of the tolerance");
    }

    for (int i = 0; i < N; ++i) out[i] = NAN;
    TEST(kl_compare(out, ref, N, tol, &r) == N && r.nreported == KL_MAX_REPORTED,
         "compare: all-NaN output fails everywhere, first %d reported", KL_MAX_REPORTED);
}

static void test_tolerance(void) {
    const kl_tol t1 = kl_dot_tolerance(1024, 1.0, ldexp(1.0, -24), 0.0);
    const kl_tol t8 = kl_dot_tolerance(8192, 1.0, ldexp(1.0, -24), 0.0);
    TEST(t8.atol > t1.atol, "tolerance: grows with K");
    TEST(t8.atol < 0.01, "tolerance: at K=8192 still catches one wrong term of size ~0.25 (atol %.2e)", t8.atol);
    const kl_tol h = kl_dot_tolerance(4096, 1.0, ldexp(1.0, -11), ldexp(1.0, -11));
    TEST(h.rtol > t1.rtol && h.atol > kl_dot_tolerance(4096, 1.0, ldexp(1.0, -11), 0.0).atol,
         "tolerance: fp16 output and fp16 weights widen it");
    /* in-kernel weight rounding: k independent errors add like sqrt(k), so 8 sigma of it at
     * K = 4096 is 8 * 64 * 2^-11 = 0.25 of the largest term, and K x 4 only doubles it */
    const double w4 = h.atol - kl_dot_tolerance(4096, 1.0, ldexp(1.0, -11), 0.0).atol;
    const double w16 = kl_dot_tolerance(16384, 1.0, ldexp(1.0, -11), ldexp(1.0, -11)).atol -
                       kl_dot_tolerance(16384, 1.0, ldexp(1.0, -11), 0.0).atol;
    TEST(fabs(w4 - 0.25) < 1e-12 && fabs(w16 / w4 - 2.0) < 1e-9,
         "tolerance: the weight-rounding part grows like sqrt(K) (%.3g at K=4096, x%.3g at K x 4)", w4, w16 / w4);
}

static void test_absmax(void) {
    const float w[] = {0.5f, -3.0f, 2.0f, -0.25f};
    TEST(kl_absmax(w, 4) == 3.0 && kl_absmax(w, 1) == 0.5 && kl_absmax(w, 0) == 0.0,
         "absmax: the largest magnitude, a negative one too (term_max of the tolerances)");
}

static void test_cpu_reference(void) {
    const float a[] = {1, 2, 3, 4}, b[] = {5, 0, 6, 0, 7, 0, 8, 0};
    TEST(kl_dot_f64(a, 1, b, 2, 4) == 70.0, "cpu reference: strided dot product");
    /* fp64 keeps what fp32 loses: 2^24 + 1 - 2^24 */
    const float x[] = {16777216.0f, 1.0f, -16777216.0f}, ones[] = {1, 1, 1};
    TEST(kl_dot_f64(x, 1, ones, 1, 3) == 1.0, "cpu reference: accumulates in fp64");
}

static void test_csv(void) {
    char buf[1024];
    FILE *f = fmemopen(buf, sizeof buf, "w");
    kl_csv_header(f);
    kl_row r = {.step = 7, .op = "sgemm", .dtype = "fp32", .variant = "", .part = "1", .memory_bound = 0,
                .m = 4096, .n = 4096, .k = 4096, .time_us = 2000.0, .tflops = 68.7, .gbps = NAN,
                .cublas_time_us = 2500.0, .pct_ceiling = 90.0, .rel_err = 1.5e-7, .pass = 1};
    kl_csv_row(f, &r);
    r.time_us = NAN; r.tflops = NAN; r.cublas_time_us = NAN; r.pct_ceiling = NAN; r.pass = 0; r.variant = "dp";
    r.part = "2-skinny"; r.memory_bound = 1;
    kl_csv_row(f, &r);
    fclose(f);
    TEST(strncmp(buf, "step,op,dtype,m,n,k,time_us,tflops,gbps,cublas_time_us,pct_cublas,pct_ceiling,rel_err,status",
                 strlen("step,op,dtype,m,n,k,time_us,tflops,gbps,cublas_time_us,pct_cublas,pct_ceiling,rel_err,status")) == 0,
         "csv: the fixed header (docs/harness.md), in order");
    TEST(strncmp(buf, KL_CSV_HEADER "\n", strlen(KL_CSV_HEADER) + 1) == 0 &&
         strstr(KL_CSV_HEADER, ",status,variant,part,bound") != NULL,
         "csv: variant, part and bound follow, added at the end");
    TEST(strstr(buf, "\n7,sgemm,fp32,4096,4096,4096,2000.000,68.700,,2500.000,125.0,90.0,1.50e-07,PASS,,1,compute\n") != NULL,
         "csv: a row; pct_cublas = 100 * cublas / time; empty where it does not apply; its part and bound");
    TEST(strstr(buf, "\n7,sgemm,fp32,4096,4096,4096,,,,,,,1.50e-07,FAIL,dp,2-skinny,memory\n") != NULL,
         "csv: check-only row has empty timings, FAIL, variant, part, bound");
    char slug[64];
    kl_gpu_slug("NVIDIA H100 80GB HBM3", slug, sizeof slug);
    TEST(strcmp(slug, "h100-80gb-hbm3") == 0, "slug: %s", slug);
    kl_gpu_slug("Tesla V100-SXM2-16GB", slug, sizeof slug);
    TEST(strcmp(slug, "tesla-v100-sxm2-16gb") == 0, "slug: %s", slug);
}

/* The one generator (host fills and device fills alike): the reference
 * splitmix64 seeded with 0 starts 0xe220a8397b1dcdaf 0x6e789e6aa1b965f4
 * 0x06c45d188009454f (Vigna's splitmix64.c). */
static void test_rng(void) {
    TEST(kl_splitmix64(0, 1) == 0xe220a8397b1dcdafull && kl_splitmix64(0, 2) == 0x6e789e6aa1b965f4ull &&
         kl_splitmix64(0, 3) == 0x06c45d188009454full, "rng: kl_splitmix64 is the reference splitmix64");
    TEST(kl_splitmix64(12345, 7) == kl_splitmix64(12345 + 6 * KL_SPLITMIX64_GAMMA, 1),
         "rng: output n of a seed is output 1 of the state n - 1 steps on (counter-based)");
}

/* Cold L2: copies so that a pass over them is over three times the L2, and
 * a baseline's own (larger) copies by the same rule, never more than the
 * step's (op_gemv.c and op_w4a16.c both use it). */
static void test_rotations(void) {
    kl_env env;
    memset(&env, 0, sizeof env);
    env.l2_bytes = 50u << 20;   /* the H100's 50 MiB */
    TEST(kl_rotations(&env, 32u << 20) == 6, "rotations: 32 MiB copies under a 50 MiB L2: ceil(150/32) + 1 = 6");
    TEST(kl_rotations(&env, 151u << 20) == 1 && kl_rotations(&env, 0) == 1, "rotations: one copy of 3x L2 or more");
    TEST(kl_baseline_rotations(&env, 19, 32u << 20) == 6, "rotations: a baseline's copies follow the same rule");
    TEST(kl_baseline_rotations(&env, 3, 10u << 20) == 3, "rotations: ... at most as many as the step's");
    TEST(kl_baseline_rotations(&env, 1, 10u << 20) == 1, "rotations: ... and one when the step has one (nothing timed)");
}

/* gemm_bf16 is compute-bound (L2 warm) but for a decode batch, M <= 64, whose
 * weights rotate through copies (cold L2) for the step and cuBLAS alike. */
static void test_gemm_decode_cold(void) {
    const kl_op *ops[2] = {&kl_op_gemm_bf16, &kl_op_gemm_bf16_shapes};
    for (int i = 0; i < 2; ++i) {
        const kl_op *op = ops[i];
        const kl_problem d64 = {64, 4096, 4096}, d1 = {1, 4104, 8}, p65 = {65, 4096, 4096}, sq = {4096, 4096, 4096};
        TEST(!op->memory_bound && op->rotating_bytes(&d64) == (size_t)2 * 4096 * 4096 &&
                 op->rotating_bytes(&d1) == (size_t)2 * 4104 * 8,
             "gemm_bf16 (part %s): a decode batch (M <= 64) rotates its weights, 2 N K bytes a copy", op->part);
        TEST(op->rotating_bytes(&p65) == 0 && op->rotating_bytes(&sq) == 0,
             "gemm_bf16 (part %s): M = 65 and 4096^3 keep one copy (L2 warm)", op->part);
        TEST(op->device_bytes(&d64, 6) - op->device_bytes(&d64, 1) == (size_t)5 * 2 * 4096 * 4096,
             "gemm_bf16 (part %s): device memory counts every copy of B", op->part);
    }
}

int main(void) {
    setvbuf(stdout, NULL, _IOLBF, 0);   /* a crash keeps the lines printed before it */
    test_rng();
    test_rotations();
    test_gemm_decode_cold();
    test_cli();
    test_stats();
    test_spot_check();
    test_compare();
    test_tolerance();
    test_absmax();
    test_cpu_reference();
    test_csv();
    return unit_plan();
}
