/* mem.c - the library's own allocations from libc (tn_malloc, tn_calloc, tn_realloc,
 * tn_aligned_alloc, tn_strdup; free is plain free), for two checks:
 *
 *  - No allocation inside a GC pause. From the stop of the world to its restart the collector
 *    works only in scratch reserved before the pause, or degrades in a defined way when the
 *    scratch is short (docs/design/collector.md, "Memory inside a pause"). In checked builds
 *    (TENURE_CHECKED) an internal allocation inside a pause is a bug of the library: reported
 *    on stderr with where it happened, then abort(). Allocations inside a callback that the
 *    pause calls (a listener, a profiler, the GC callback) are not the collector's own: a
 *    callback may use another instance, whose allocations are its business.
 *  - Fault injection for tests (tn_mem_fault): the Nth internal allocation of the calling
 *    thread from now (and, if asked, every one after it) fails as malloc fails.
 *
 * Both are per thread: a pause belongs to the thread that collects (the instance lock is held,
 * every other attached thread is stopped), and a test injects faults into its own calls. The cost
 * is one thread-local load and a branch per internal allocation, none on the allocation of
 * objects (the heap's regions are not malloc'd). */
#include "base/base.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct mem_thread {
    const tenure_runtime *pause;    /* the instance whose GC pause runs on this thread, or NULL */
    const tn_cb_frame *pause_frame; /* the callback frame when the pause began */
    uint64_t fail_in;               /* fault injection: allocations until one fails (0: off) */
    bool fail_after;                /* ... and every one after it fails too */
} mem_thread;

static __thread mem_thread mem_tls __attribute__((tls_model("initial-exec"))); /* no lazy TLS allocation */

void tn_mem_pause_begin(const tenure_runtime *rt) {
    mem_tls.pause = rt;
    mem_tls.pause_frame = tn_cb_top;
}

void tn_mem_pause_end(void) { mem_tls.pause = NULL; }

bool tn_mem_in_pause(void) { return mem_tls.pause != NULL && tn_cb_top == mem_tls.pause_frame; }

void tn_mem_fault(uint64_t nth, bool and_after) {
    mem_tls.fail_in = nth;
    mem_tls.fail_after = nth && and_after;
}

#ifdef TENURE_CHECKED
static void allocated_in_pause(size_t size, const char *where) {
    fprintf(stderr,
            "tenure: internal allocation of %zu bytes inside a GC pause at %s (the collector must use scratch "
            "reserved before the pause: docs/design/collector.md, \"Memory inside a pause\")\n",
            size, where);
    abort();
}
#endif

/* true if this allocation must fail (fault injection) */
static bool fault_injected(void) {
    if (TENURE__LIKELY(!mem_tls.fail_in) || --mem_tls.fail_in)
        return false;
    if (mem_tls.fail_after)
        mem_tls.fail_in = 1;
    return true;
}

/* true if this allocation must fail. An injected failure comes first: a test that injects
 * faults sees how the code handles a failed allocation, in checked builds too. */
static bool refused(size_t size, const char *where) {
    if (fault_injected())
        return true;
#ifdef TENURE_CHECKED
    if (TENURE__UNLIKELY(tn_mem_in_pause()))
        allocated_in_pause(size, where);
#else
    (void)size;
    (void)where;
#endif
    return false;
}

void *tn_malloc_at(size_t size, const char *where) { return refused(size, where) ? NULL : malloc(size); }

void *tn_calloc_at(size_t count, size_t size, const char *where) {
    return refused(count * size, where) ? NULL : calloc(count, size);
}

void *tn_realloc_at(void *p, size_t size, const char *where) { return refused(size, where) ? NULL : realloc(p, size); }

void *tn_aligned_alloc_at(size_t alignment, size_t size, const char *where) {
    return refused(size, where) ? NULL : aligned_alloc(alignment, size);
}

char *tn_strdup_at(const char *s, const char *where) {
    size_t n = strlen(s) + 1;
    char *d = tn_malloc_at(n, where);
    return d ? memcpy(d, s, n) : NULL;
}
