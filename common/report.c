/* report.c - CSV rows and the GPU slug (pure C). */
#include "report.h"

#include <ctype.h>
#include <math.h>
#include <string.h>

void kl_csv_header(FILE *f) { fprintf(f, "%s\n", KL_CSV_HEADER); }

double kl_pct_cublas(const kl_row *r) {
    if (!(r->time_us > 0) || !(r->cublas_time_us > 0)) return NAN;
    return 100.0 * r->cublas_time_us / r->time_us;
}

/* A figure that does not apply (or was not measured) is an empty field. */
static void field(FILE *f, const char *fmt, double v) {
    fputc(',', f);
    if (isfinite(v)) fprintf(f, fmt, v);
}

void kl_csv_row(FILE *f, const kl_row *r) {
    fprintf(f, "%d,%s,%s,%d,%d,%d", r->step, r->op, r->dtype, r->m, r->n, r->k);
    field(f, "%.3f", r->time_us);
    field(f, "%.3f", r->tflops);
    field(f, "%.1f", r->gbps);
    field(f, "%.3f", r->cublas_time_us);
    field(f, "%.1f", kl_pct_cublas(r));
    field(f, "%.1f", r->pct_ceiling);
    field(f, "%.2e", r->rel_err);
    fprintf(f, ",%s,%s,%s,%s\n", r->pass ? "PASS" : "FAIL", r->variant ? r->variant : "", r->part ? r->part : "",
            r->memory_bound ? "memory" : "compute");
}

void kl_gpu_slug(const char *name, char *out, size_t len) {
    if (len == 0) return;
    if (strncmp(name, "NVIDIA ", 7) == 0) name += 7;
    size_t j = 0;
    int dash = 0;
    for (; *name && j + 1 < len; ++name) {
        const unsigned char c = (unsigned char)*name;
        if (isalnum(c)) {
            if (dash && j > 0 && j + 2 < len) out[j++] = '-';
            out[j++] = (char)tolower(c);
            dash = 0;
        } else {
            dash = 1;
        }
    }
    out[j] = '\0';
}
