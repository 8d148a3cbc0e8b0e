/*
 * read_floor - how fast can one launch read S bytes on this GPU?
 *
 * The read ceiling in every step's header is the best these readers reach at
 * 256 MiB and up: the rate once the chip is saturated.  A smaller problem never sees that rate from
 * start to end: the launch itself, the first trip to DRAM with cold caches,
 * and the last wave's tail cost the same few microseconds at any size, and at
 * 8192^2 (tens of MB, ~10-20 us) they are a large part of the time.  This
 * program measures that floor directly: for each size it reads S bytes with
 * the harness's own read streams (common/device.cu: four kernels) at grids of
 * 1, 2, 4 and 8 blocks of 512 threads per SM, L2 cold (copies rotate as for a
 * step), timed exactly as the engine times a step and cuBLAS (event pairs
 * queued behind a held stream, median), and prints the best: kl_read_floor
 * in common/ceiling.c, which the read ceiling uses too.  That is the
 * best of these readers, not a bound that no kernel can pass: variants
 * measured on the H100 (a 128-thread-block grid, a guarded last pass) moved
 * single sizes by up to ~3% either way.  So x cuBLAS for a kernel that must
 * read S bytes in one launch is at most about cuBLAS time / floor.
 *
 * usage: ./read_floor [--mb LIST] [--runs N] [--device N]
 *   --mb LIST   sizes in MB (10^6 bytes), comma-separated, 0.1 .. 16384
 *               (default 1,2,4,8,16,32,64,128,256,512,1024)
 * exit status: 0 ok, 2 bad usage or too large, 3 no usable GPU
 *
 * Build and run:   make read_floor && ./read_floor --mb 35.7,151
 */
#include "ceiling.h"
#include "timing.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SIZES 64

static int usage(const char *msg, const char *arg) {
    fprintf(stderr, "read_floor: %s%s%s (see ./read_floor --help)\n", msg, arg ? ": " : "", arg ? arg : "");
    return KL_EXIT_USAGE;
}

/* "35.7,151" -> mb[]; 1 on anything else, an empty entry included ("1,,2",
 * ",1", "1,"): strtok would skip it, so entries are cut at each comma here. */
static int parse_mb(const char *list, double *mb, int *n) {
    *n = 0;
    for (const char *t = list;; ++t) {
        char *end = NULL;
        errno = 0;
        const double v = strtod(t, &end);
        if (errno || end == t || (*end && *end != ',') || !(v >= 0.1 && v <= 16384.0) || *n == MAX_SIZES) return 1;
        mb[(*n)++] = v;
        if (!*end) return 0;
        t = end;
    }
}

typedef struct empty_launch { float *sink; cudaStream_t s; } empty_launch;
static void launch_empty(void *ctx, int i) {
    (void)i;
    const empty_launch *l = (const empty_launch *)ctx;
    kl_empty_launch(1, l->sink, l->s);
}

int main(int argc, char **argv) {
    kl_set_prog("read_floor");
    double mb[MAX_SIZES] = {1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024};
    int nmb = 11, runs = 30, device = 0;
    static const struct option opts[] = {{"mb", required_argument, 0, 'm'},
                                         {"runs", required_argument, 0, 'r'},
                                         {"device", required_argument, 0, 'd'},
                                         {"help", no_argument, 0, 'h'},
                                         {0, 0, 0, 0}};
    opterr = 0;
    for (int o; (o = getopt_long(argc, argv, "", opts, NULL)) != -1;) {
        char *end = NULL;
        long v;
        switch (o) {
        case 'm':
            if (parse_mb(optarg, mb, &nmb))
                return usage("--mb wants sizes in MB between 0.1 and 16384, comma-separated, e.g. --mb 35.7,151", optarg);
            break;
        case 'r':
        case 'd':
            errno = 0;
            v = strtol(optarg, &end, 10);
            if (errno || end == optarg || *end || v < (o == 'r' ? 3 : 0) || v > (o == 'r' ? 1000 : 1024))
                return usage(o == 'r' ? "--runs wants a whole number from 3 to 1000" : "--device wants a GPU number", optarg);
            if (o == 'r') runs = (int)v; else device = (int)v;
            break;
        case 'h':
            printf("usage: read_floor [--mb LIST] [--runs N] [--device N]\n"
                   "  the fastest one launch can read each size on this GPU, L2 cold, timed as the steps are\n"
                   "  --mb LIST   sizes in MB (10^6 bytes), comma-separated, 0.1..16384 (default 1,2,4,...,1024)\n"
                   "  --runs N    timed runs per kernel and grid (default 30; the median is kept)\n"
                   "  --device N  CUDA device to use (default 0)\n"
                   "exit status: 0 ok, 2 bad usage or too large, 3 no usable GPU\n");
            return KL_EXIT_OK;
        default:
            return usage("unknown or incomplete option", argv[optind - 1]);
        }
    }
    if (optind < argc) return usage("unexpected argument", argv[optind]);

    kl_env env;
    struct cudaDeviceProp prop;
    const int rc = kl_open_device(device, &env, &prop);
    if (rc) return rc;
    float *sink = (float *)kl_dmalloc(sizeof(float));

    setvbuf(stdout, NULL, _IOLBF, 0);
    const kl_read_ceiling *ceil_ = kl_measure_read_ceiling(&env);
    const double ceiling = ceil_->gbps;   /* measured before any buffer of ours is allocated */
    printf("read_floor: the fastest single launch that reads S bytes, L2 cold\n");
    printf("GPU %d: %s, %d SMs, L2 %d MiB; read ceiling (the best of these readers at 256 MiB and up, as in "
           "the steps) %.0f GB/s; HBM datasheet %.0f GB/s\n", device, prop.name, env.sms, prop.l2CacheSize >> 20,
           ceiling, ceil_->datasheet_gbps);
    printf("timing: median of %d runs, each between its own events, queued behind a held stream (as the steps are timed); "
           "best of %d read streams x grids of 1, 2, 4, 8 blocks of 512 per SM\n\n", runs, KL_READ_STREAMS);
    printf("%10s %10s %9s %7s  %s\n", "MB", "time(us)", "GB/s", "%ceil", "fastest");
    empty_launch l = {sink, env.stream};
    const kl_timing t = {2, runs, 0.0};
    printf("%10s %10.2f %9s %7s  %s\n", "0", kl_time_us(launch_empty, &l, &t, env.stream), "-", "-",
           "an empty kernel: what a launch costs by itself");

    for (int i = 0; i < nmb; ++i) {
        const size_t bytes = ((size_t)(mb[i] * 1e6) + 255) & ~(size_t)255;
        size_t free_b = 0, total_b = 0;
        CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
        const int want = kl_rotations(&env, bytes);
        int nrot = want;
        while (nrot > 1 && (double)bytes * nrot > 0.8 * (double)free_b) --nrot;
        if ((double)bytes * nrot > 0.8 * (double)free_b) {
            fprintf(stderr, "read_floor: %.1f MB does not fit in the %.1f GB free on this GPU: use smaller sizes\n",
                    mb[i], free_b / 1e9);
            return KL_EXIT_USAGE;
        }
        char *buf = (char *)kl_dmalloc(bytes * (size_t)nrot);
        CUDA_CHECK(cudaMemsetAsync(buf, 0, bytes * (size_t)nrot, env.stream));
        const kl_read_best b = kl_read_floor(&env, buf, bytes, nrot, runs, sink);
        CUDA_CHECK(cudaFree(buf));
        printf("%10.1f %10.2f %9.0f %7.1f  %s, %d x %d blocks%s\n", bytes / 1e6, b.us, b.gbps, 100.0 * b.gbps / ceiling,
               kl_read_stream_name(b.variant), env.sms, b.blocks_per_sm,
               nrot == want ? "" : " (fewer copies than a cold L2 needs: memory)");
    }
    CUDA_CHECK(cudaFree(sink));
    return KL_EXIT_OK;
}
