/* assert.c - what a failed assertion does (base/assert.h): report and abort. */
#include "runtime.h" /* struct tenure_runtime: only the statistics' GC count is read here */
#include <stdio.h>
#include <stdlib.h>

void tn_assert_fail(const char *file, int line, const char *cond) {
    const tenure_runtime *rt = tenure__current->rt;
    /* the thread's last instance, if it has one (tn_no_attachment, current.c, points at address 1) */
    if ((uintptr_t)rt > 1)
        fprintf(stderr, "tenure: %s:%d: assertion failed: %s (GC index %llu)\n", file, line, cond,
                (unsigned long long)rt->stats.gc_count);
    else
        fprintf(stderr, "tenure: %s:%d: assertion failed: %s\n", file, line, cond);
    fflush(stderr);
    abort();
}
