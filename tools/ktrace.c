/*
 * ktrace.c - a CUPTI injection library: every kernel's start and end on the GPU clock (ns),
 * its grid size and its name, one line each, to $KTRACE_OUT (default ktrace.txt), while the
 * program runs as it always does: nothing is serialized or replayed, so kernels queued back
 * to back stay back to back.  CUDA loads it at initialization when CUDA_INJECTION64_PATH
 * names it; tools/timeline.sh does that and summarizes the lines.
 *
 * Build: make build/libktrace.so (gcc, the toolkit's cupti.h and libcupti).
 */
#include <cupti.h>
#include <stdio.h>
#include <stdlib.h>

#define RECORDS_BYTES (16u << 20)   /* one buffer of activity records, handed back when full */

static FILE *out;

static void CUPTIAPI give_buffer(uint8_t **buffer, size_t *size, size_t *max_records) {
    *buffer = (uint8_t *)aligned_alloc(8, RECORDS_BYTES);
    *size = *buffer ? RECORDS_BYTES : 0;
    *max_records = 0;   /* as many as fit */
}

static void CUPTIAPI take_buffer(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size, size_t valid) {
    (void)ctx, (void)stream, (void)size;
    CUpti_Activity *rec = NULL;
    while (cuptiActivityGetNextRecord(buffer, valid, &rec) == CUPTI_SUCCESS)
        if (rec->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) {
            const CUpti_ActivityKernel10 *k = (const CUpti_ActivityKernel10 *)rec;
            fprintf(out, "%llu %llu %u %s\n", (unsigned long long)k->start, (unsigned long long)k->end,
                    k->gridX * k->gridY * k->gridZ, k->name);
        }
    size_t dropped = 0;
    if (cuptiActivityGetNumDroppedRecords(ctx, stream, &dropped) == CUPTI_SUCCESS && dropped)
        fprintf(stderr, "ktrace: %zu records dropped\n", dropped);
    free(buffer);
}

static void finish(void) {
    cuptiActivityFlushAll(1);
    fclose(out);
}

int InitializeInjection(void) {
    const char *path = getenv("KTRACE_OUT") ? getenv("KTRACE_OUT") : "ktrace.txt";
    if (!(out = fopen(path, "w"))) {
        fprintf(stderr, "ktrace: cannot write %s\n", path);
        return 0;
    }
    if (cuptiActivityRegisterCallbacks(give_buffer, take_buffer) != CUPTI_SUCCESS ||
        cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) != CUPTI_SUCCESS) {
        fprintf(stderr, "ktrace: CUPTI refused the kernel activity records (is another profiler attached?)\n");
        fclose(out);
        return 0;
    }
    atexit(finish);
    return 1;
}
