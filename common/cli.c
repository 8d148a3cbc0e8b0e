/* cli.c - command-line parsing with getopt_long; every error is one line. */
#define _GNU_SOURCE
#include "cli.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The one integer parser: every numeric option, the sizes list and the
 * steps' own options come through here, so every such message has the same
 * two forms ("'x' is not an integer", "V is out of range: it must be from
 * MIN to MAX"), and a value past what strtoll holds is out of range too. */
int kl_parse_int(const char *flag, const char *s, long long min, long long max, long long *out,
                 char *err, size_t errlen) {
    char *end = NULL;
    errno = 0;
    const long long v = strtoll(s, &end, 10);
    if (end == s || *end != '\0' || (s[0] != '-' && s[0] != '+' && (s[0] < '0' || s[0] > '9'))) {
        snprintf(err, errlen, "%s: '%s' is not an integer", flag, s);
        return KL_EXIT_USAGE;
    }
    if (errno == ERANGE || v < min || v > max) {
        snprintf(err, errlen, "%s: %s is out of range: it must be from %lld to %lld", flag, s, min, max);
        return KL_EXIT_USAGE;
    }
    *out = v;
    return 0;
}

/* An int-valued option: kl_parse_int within [min, max] (both within int). */
static int parse_int_opt(const char *flag, const char *s, int min, int max, int *out,
                         char *err, size_t errlen) {
    long long v;
    if (kl_parse_int(flag, s, min, max, &v, err, errlen)) return KL_EXIT_USAGE;
    *out = (int)v;
    return 0;
}

int kl_parse_sizes(const char *s, int *out, int max, int *n, char *err, size_t errlen) {
    *n = 0;
    if (*s == '\0') {
        snprintf(err, errlen, "--sizes: empty list (example: --sizes 1024,4096)");
        return KL_EXIT_USAGE;
    }
    const char *p = s;
    for (;;) {
        const char *comma = strchr(p, ',');
        const size_t len = comma ? (size_t)(comma - p) : strlen(p);
        if (len == 0) {
            snprintf(err, errlen, "--sizes: empty entry in '%s' (example: --sizes 1024,4096)", s);
            return KL_EXIT_USAGE;
        }
        char item[32];
        if (len >= sizeof item) {
            /* longer than any integer in range: out of range if it is one at all */
            const size_t digits = strspn(p + (*p == '-' || *p == '+'), "0123456789");
            if (digits && digits + (*p == '-' || *p == '+') == len)
                snprintf(err, errlen, "--sizes: %.*s is out of range: it must be from 1 to %ld", (int)len, p, KL_MAX_DIM);
            else
                snprintf(err, errlen, "--sizes: '%.*s' is not an integer", (int)len, p);
            return KL_EXIT_USAGE;
        }
        memcpy(item, p, len);
        item[len] = '\0';
        if (*n == max) {
            snprintf(err, errlen, "--sizes: more than %d sizes", max);
            return KL_EXIT_USAGE;
        }
        if (parse_int_opt("--sizes", item, 1, KL_MAX_DIM, &out[*n], err, errlen))
            return KL_EXIT_USAGE;
        ++*n;
        if (!comma) break;
        p = comma + 1;
    }
    return 0;
}

enum { OPT_SIZES = 256, OPT_ITERS, OPT_WARMUP, OPT_SEED, OPT_CSV, OPT_CHECK,
       OPT_DEVICE, OPT_BUDGET, OPT_PLAN, OPT_STEP0 = 512 };

void kl_print_usage(FILE *f, const char *prog, const kl_opt *opts) {
    fprintf(f,
        "usage: %s [options]\n"
        "  --sizes LIST     comma-separated sizes, e.g. 1024,4096 (square problems; the\n"
        "                   default list depends on the operation)\n"
        "  -m N, -n N, -k N fix one dimension (non-square); the others follow --sizes\n"
        "  --iters N        at most N timed repeats per measurement (default 1000)\n"
        "  --warmup N       warm-up launches before timing (default 2)\n"
        "  --budget MS      time budget per measurement in ms; bounds the repeats\n"
        "                   so a slow kernel still finishes quickly (default 200)\n"
        "  --seed N         seed of the random inputs (default 42)\n"
        "  --csv FILE       also write the rows as CSV to FILE\n"
        "  --check-only     check correctness only: nothing is timed (no read ceiling, no\n"
        "                   cuBLAS timing); the reference runs once per check\n"
        "  --device N       CUDA device to use (default 0)\n"
        "  --plan SMS       print how the step would split each problem over a GPU of\n"
        "                   SMS SMs (132: the H100) and exit; needs no GPU (steps that\n"
        "                   choose a plan per problem, v25 on)\n"
        "  --help           this text\n", prog);
    for (int i = 0; opts && i < KL_MAX_OPTS && opts[i].name; ++i)
        fprintf(f, "  --%-15s %s (%d..%d)\n", opts[i].name, opts[i].help, opts[i].min, opts[i].max);
    fprintf(f, "exit status: 0 ok, 1 wrong result, 2 bad usage, 3 no usable GPU\n");
}

int kl_parse_cli(int argc, char **argv, const kl_opt *opts, kl_cli *cli,
                 char *err, size_t errlen) {
    memset(cli, 0, sizeof *cli);
    cli->iters = 1000;
    cli->warmup = 2;
    cli->budget_ms = 200.0;
    cli->seed = 42;

    struct option lo[16 + KL_MAX_OPTS] = {
        {"sizes", required_argument, 0, OPT_SIZES},
        {"iters", required_argument, 0, OPT_ITERS},
        {"warmup", required_argument, 0, OPT_WARMUP},
        {"budget", required_argument, 0, OPT_BUDGET},
        {"seed", required_argument, 0, OPT_SEED},
        {"csv", required_argument, 0, OPT_CSV},
        {"check-only", no_argument, 0, OPT_CHECK},
        {"device", required_argument, 0, OPT_DEVICE},
        {"plan", required_argument, 0, OPT_PLAN},
        {"help", no_argument, 0, 'h'},
    };
    int nlo = 10;
    for (int i = 0; opts && i < KL_MAX_OPTS && opts[i].name; ++i)
        lo[nlo++] = (struct option){opts[i].name, required_argument, 0, OPT_STEP0 + i};
    lo[nlo] = (struct option){0, 0, 0, 0};

    optind = 0;   /* glibc: 0 resets getopt fully, so argv can be parsed again (the tests do) */
    opterr = 0;   /* our own one-line messages */
    int c, v;
    while ((c = getopt_long(argc, argv, ":m:n:k:h", lo, NULL)) != -1) {
        const char *flag = argv[optind - 1];
        switch (c) {
        case OPT_SIZES:
            if (kl_parse_sizes(optarg, cli->sizes, KL_MAX_SIZES, &cli->nsizes, err, errlen))
                return KL_EXIT_USAGE;
            break;
        case 'm': if (parse_int_opt("-m", optarg, 1, KL_MAX_DIM, &cli->m, err, errlen)) return KL_EXIT_USAGE; break;
        case 'n': if (parse_int_opt("-n", optarg, 1, KL_MAX_DIM, &cli->n, err, errlen)) return KL_EXIT_USAGE; break;
        case 'k': if (parse_int_opt("-k", optarg, 1, KL_MAX_DIM, &cli->k, err, errlen)) return KL_EXIT_USAGE; break;
        case OPT_ITERS: if (parse_int_opt("--iters", optarg, 1, KL_MAX_ITERS, &cli->iters, err, errlen)) return KL_EXIT_USAGE; break;
        case OPT_WARMUP: if (parse_int_opt("--warmup", optarg, 0, KL_MAX_WARMUP, &cli->warmup, err, errlen)) return KL_EXIT_USAGE; break;
        case OPT_BUDGET:   /* milliseconds, as the help says and timing.c reads them */
            if (parse_int_opt("--budget", optarg, 1, KL_MAX_BUDGET_MS, &v, err, errlen)) return KL_EXIT_USAGE;
            cli->budget_ms = v;
            break;
        case OPT_SEED: {
            long long s;
            if (kl_parse_int("--seed", optarg, 0, LLONG_MAX, &s, err, errlen)) return KL_EXIT_USAGE;
            cli->seed = (uint64_t)s;
            break;
        }
        case OPT_CSV:
            if (!*optarg) { snprintf(err, errlen, "--csv: empty file name"); return KL_EXIT_USAGE; }
            cli->csv = optarg;
            break;
        case OPT_CHECK: cli->check_only = 1; break;
        case OPT_DEVICE: if (parse_int_opt("--device", optarg, 0, KL_MAX_DEVICE, &cli->device, err, errlen)) return KL_EXIT_USAGE; break;
        case OPT_PLAN: if (parse_int_opt("--plan", optarg, 1, KL_MAX_SMS, &cli->plan_sms, err, errlen)) return KL_EXIT_USAGE; break;
        case 'h': cli->help = 1; break;
        case ':':
            snprintf(err, errlen, "option '%s' needs a value", flag);
            return KL_EXIT_USAGE;
        case '?':
            if (optopt && optopt < 256 && optopt != '?')
                snprintf(err, errlen, "unknown option '-%c'", optopt);
            else
                snprintf(err, errlen, "unknown option '%s'", flag);
            return KL_EXIT_USAGE;
        default:
            if (c >= OPT_STEP0 && c < OPT_STEP0 + KL_MAX_OPTS) {
                const kl_opt *o = &opts[c - OPT_STEP0];
                char name[64];
                snprintf(name, sizeof name, "--%s", o->name);
                if (parse_int_opt(name, optarg, o->min, o->max, o->value, err, errlen)) return KL_EXIT_USAGE;
                break;
            }
            snprintf(err, errlen, "unexpected option '%s'", flag);
            return KL_EXIT_USAGE;
        }
    }
    if (optind < argc) {
        snprintf(err, errlen, "unexpected argument '%s'", argv[optind]);
        return KL_EXIT_USAGE;
    }
    return 0;
}
