/* unit.h - what every tests/unit_*.c shares: one line per test, "ok - WHAT" or
 * "not ok - WHAT...", and the plan "1..N" last.  tests/cpu_unit.sh reads those
 * lines and counts them against the plan, so a binary that dies halfway fails
 * instead of reporting fewer tests.  Included by one file per binary (the
 * counters are that file's own). */
#ifndef KL_TESTS_UNIT_H
#define KL_TESTS_UNIT_H

#include <stdio.h>

static int unit_tests, unit_failures;

/* Counts one test and prints its prefix; returns ok, so that the caller
 * prints the rest of the line (a failure's with the reason why). */
static inline int unit_start(int ok) {
    unit_tests++;
    if (!ok) unit_failures++;
    fputs(ok ? "ok - " : "not ok - ", stdout);
    return ok;
}

/* TEST(cond, printf-format, ...): cond evaluated once; a failure names the
 * condition and its line. */
#define TEST(cond, ...)                                                         \
    do {                                                                        \
        if (unit_start((cond) != 0)) { printf(__VA_ARGS__); printf("\n"); }     \
        else { printf(__VA_ARGS__); printf(": %s (line %d)\n", #cond, __LINE__); } \
    } while (0)

/* The plan, printed last; main returns it (0: every test passed, 1: some failed). */
static inline int unit_plan(void) {
    printf("1..%d\n", unit_tests);
    return unit_failures != 0;
}

#endif
