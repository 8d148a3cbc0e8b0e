/*
 * report.h - one measured row, as printed and as CSV (pure C, tested on the CPU).
 */
#ifndef KL_REPORT_H
#define KL_REPORT_H

#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The CSV header is fixed (docs/harness.md lists it); columns are only ever
 * added at the end.  part and bound let the tools route a row without
 * knowing its operation. */
#define KL_CSV_HEADER \
    "step,op,dtype,m,n,k,time_us,tflops,gbps,cublas_time_us,pct_cublas,pct_ceiling,rel_err,status,variant,part,bound"

typedef struct kl_row {
    int step;
    const char *op, *dtype, *variant;
    const char *part;        /* the summary table: "1", "2", "2-skinny", "3", ... */
    int memory_bound;        /* bound: "memory" (1) or "compute" (0) */
    int m, n, k;
    double time_us;          /* NAN: not timed (--check-only) */
    double tflops, gbps;     /* NAN: does not apply */
    double cublas_time_us;   /* NAN: no baseline */
    double pct_ceiling;
    double rel_err;
    double tol_used;         /* err/tol: the worst |out - ref| / tolerance (printed; not in the CSV) */
    int pass;
} kl_row;

void kl_csv_header(FILE *f);
void kl_csv_row(FILE *f, const kl_row *r);
/* 100 * cublas / time, NAN when either is missing. */
double kl_pct_cublas(const kl_row *r);
/* "NVIDIA H100 80GB HBM3" -> "h100-80gb-hbm3" */
void kl_gpu_slug(const char *name, char *out, size_t len);

#ifdef __cplusplus
}
#endif
#endif
