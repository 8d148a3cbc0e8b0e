/*
 * cli.h - the command line every step shares (pure C, tested on the CPU).
 */
#ifndef KL_CLI_H
#define KL_CLI_H

#include <stddef.h>
#include <stdint.h>
#include "kl.h"

#ifdef __cplusplus
extern "C" {
#endif

#define KL_MAX_SIZES 64
#define KL_MAX_DIM 2147483647L
/* The other options' ranges (--help prints them). */
#define KL_MAX_ITERS 1000000
#define KL_MAX_WARMUP 10000
#define KL_MAX_BUDGET_MS 600000   /* ten minutes per measurement */
#define KL_MAX_DEVICE 1024
#define KL_MAX_SMS 1024       /* --plan: SMs of the GPU planned for */

typedef struct kl_cli {
    int sizes[KL_MAX_SIZES];
    int nsizes;              /* 0: the op's defaults */
    int m, n, k;             /* 0: not given */
    int iters;               /* most timed repeats per measurement */
    int warmup;              /* warm-up launches before timing */
    double budget_ms;        /* time budget per measurement (bounds repeats) */
    uint64_t seed;
    const char *csv;         /* NULL: no CSV */
    int check_only;
    int plan_sms;            /* --plan SMS: print each problem's plan for SMS SMs, then exit (0: run) */
    int device;
    int help;
} kl_cli;

/* Defaults, then argv.  Step-specific options (opts, up to KL_MAX_OPTS,
 * name == NULL ends the list) write their int.  Returns 0, or KL_EXIT_USAGE
 * with a one-line message in err. */
int kl_parse_cli(int argc, char **argv, const kl_opt *opts, kl_cli *cli,
                 char *err, size_t errlen);

/* Parse "1024,2048": positive integers, no empty entries.  0 or KL_EXIT_USAGE. */
int kl_parse_sizes(const char *s, int *out, int max, int *n, char *err, size_t errlen);

/* Parse one integer in [min, max] into *out; else KL_EXIT_USAGE and one of the
 * two messages every numeric option shares, naming the flag, in err. */
int kl_parse_int(const char *flag, const char *s, long long min, long long max, long long *out,
                 char *err, size_t errlen);

void kl_print_usage(FILE *f, const char *prog, const kl_opt *opts);

#ifdef __cplusplus
}
#endif
#endif
