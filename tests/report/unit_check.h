/* unit_check.h - the failure counter and CHECK macro of tenure-report's C unit tests (a failed
 * check is printed with where it is, and counted; the test exits 1 if any failed). */
#ifndef TENURE_REPORT_UNIT_CHECK_H
#define TENURE_REPORT_UNIT_CHECK_H

#include <stdio.h>

static int failures;

#define CHECK(cond, ...)                                         \
    do {                                                         \
        if (!(cond)) {                                           \
            fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); \
            fprintf(stderr, __VA_ARGS__);                        \
            fprintf(stderr, "\n");                               \
            failures++;                                          \
        }                                                        \
    } while (0)

#endif
