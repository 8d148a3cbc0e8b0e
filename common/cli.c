/* cli.c - command-line parsing with getopt_long; every error is one line. */
#define _GNU_SOURCE
#include "cli.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int kl_parse_positive(const char *flag, const char *s, long max, int *out,
                      char *err, size_t errlen) {
    char *end = NULL;
    errno = 0;
    const long v = strtol(s, &end, 10);
    if (end == s || *end != '\0' || errno == ERANGE) {
        snprintf(err, errlen, "%s: '%s' is not an integer", flag, s);
        return KL_EXIT_USAGE;
    }
    if (v < 1) {
        snprintf(err, errlen, "%s: %ld is not allowed, it must be at least 1", flag, v);
        return KL_EXIT_USAGE;
    }
    if (v > max) {
        snprintf(err, errlen, "%s: %ld is too large (at most %ld)", flag, v, max);
        return KL_EXIT_USAGE;
    }
    *out = (int)v;
    return 0;
}

static int parse_nonneg(const char *flag, const char *s, long max, int *out,
                        char *err, size_t errlen) {
    if (strcmp(s, "0") == 0) { *out = 0; return 0; }
    if (s[0] == '-' && s[1] >= '0' && s[1] <= '9') {
        snprintf(err, errlen, "%s: %s is not allowed, it must be 0 or more", flag, s);
        return KL_EXIT_USAGE;
    }
    return kl_parse_positive(flag, s, max, out, err, errlen);
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
            snprintf(err, errlen, "--sizes: '%.*s' is not an integer", (int)len, p);
            return KL_EXIT_USAGE;
        }
        memcpy(item, p, len);
        item[len] = '\0';
        if (*n == max) {
            snprintf(err, errlen, "--sizes: more than %d sizes", max);
            return KL_EXIT_USAGE;
        }
        if (kl_parse_positive("--sizes", item, KL_MAX_DIM, &out[*n], err, errlen))
            return KL_EXIT_USAGE;
        ++*n;
        if (!comma) break;
        p = comma + 1;
    }
    return 0;
}

enum { OPT_SIZES = 256, OPT_ITERS, OPT_WARMUP, OPT_SEED, OPT_CSV, OPT_CHECK,
       OPT_DEVICE, OPT_BUDGET, OPT_STEP0 = 512 };

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
        {"help", no_argument, 0, 'h'},
    };
    int nlo = 9;
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
        case 'm': if (kl_parse_positive("-m", optarg, KL_MAX_DIM, &cli->m, err, errlen)) return KL_EXIT_USAGE; break;
        case 'n': if (kl_parse_positive("-n", optarg, KL_MAX_DIM, &cli->n, err, errlen)) return KL_EXIT_USAGE; break;
        case 'k': if (kl_parse_positive("-k", optarg, KL_MAX_DIM, &cli->k, err, errlen)) return KL_EXIT_USAGE; break;
        case OPT_ITERS: if (kl_parse_positive("--iters", optarg, 1000000, &cli->iters, err, errlen)) return KL_EXIT_USAGE; break;
        case OPT_WARMUP: if (parse_nonneg("--warmup", optarg, 10000, &cli->warmup, err, errlen)) return KL_EXIT_USAGE; break;
        case OPT_BUDGET:
            if (kl_parse_positive("--budget", optarg, 600000, &v, err, errlen)) return KL_EXIT_USAGE;
            cli->budget_ms = v;
            break;
        case OPT_SEED: {
            char *end = NULL;
            errno = 0;
            const unsigned long long s = strtoull(optarg, &end, 10);
            if (end == optarg || *end || errno || optarg[0] == '-') {
                snprintf(err, errlen, "--seed: '%s' is not a non-negative integer", optarg);
                return KL_EXIT_USAGE;
            }
            cli->seed = s;
            break;
        }
        case OPT_CSV:
            if (!*optarg) { snprintf(err, errlen, "--csv: empty file name"); return KL_EXIT_USAGE; }
            cli->csv = optarg;
            break;
        case OPT_CHECK: cli->check_only = 1; break;
        case OPT_DEVICE: if (parse_nonneg("--device", optarg, 1024, &cli->device, err, errlen)) return KL_EXIT_USAGE; break;
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
                char *end = NULL;
                errno = 0;
                const long x = strtol(optarg, &end, 10);
                if (end == optarg || *end || errno) {
                    snprintf(err, errlen, "%s: '%s' is not an integer", name, optarg);
                    return KL_EXIT_USAGE;
                }
                if (x < o->min || x > o->max) {
                    snprintf(err, errlen, "%s: %ld is out of range %d..%d", name, x, o->min, o->max);
                    return KL_EXIT_USAGE;
                }
                *o->value = (int)x;
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
