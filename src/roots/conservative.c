/* conservative.c - conservative scanning of the attached threads' stacks and registers.
 *
 * Every word on a stack (from the innermost frame, with the callee-saved registers pushed,
 * to the stack's base) that points into an object of a condemned region, interior pointers
 * included, keeps that object alive and pins it for this GC: the program may hold raw
 * pointers in locals across a collection. Finding the object that contains an address uses
 * the crossing table: in old regions it names the object covering each 512-byte granule; in gen0
 * regions every allocation quantum records its start, so the walk from there is bounded by
 * the quantum (8 KiB) and never by the region. */
#include "runtime.h"
#include "heap/crossing.h"
#include "gc/collection.h"
#include <pthread.h>
#include <setjmp.h>

#if defined(__GNUC__)
#define TN_NOINLINE __attribute__((noinline))
/* other threads' stacks are read while they are stopped (or in a blocking section, where
 * they may still write their own non-object locals): not the sanitizers' business */
#define TN_NO_ASAN __attribute__((no_sanitize("address", "thread")))
#else
#define TN_NOINLINE
#define TN_NO_ASAN
#endif

/* The high end of the calling thread's stack when it is not attached (cached). */
static char *unattached_stack_high(tenure_runtime *rt) {
    pthread_t self = pthread_self();
    if (!rt->roots.stack_high || !pthread_equal(self, rt->roots.stack_thread)) {
        rt->roots.stack_thread = self;
        rt->roots.stack_high = tn_os_stack_base();
    }
    return rt->roots.stack_high;
}

/* The live, non-free object of a condemned region that contains p, or NULL. Not one a
 * background GC found dead (H8): a stale word must not revive it, its referents may be gone. */
char *tn_roots_object_containing(tenure_runtime *rt, const void *p) {
    if (!tn_in_range(rt, p))
        return NULL;
    tn_region *r = tn_region_of(rt, p);
    if (!r || (const char *)p >= tn_region_walk_end(rt, r))
        return NULL;
    char *o = tn_crossing_object_start(rt, r, (char *)p);
    return tn_is_free(o) || tn_unswept_dead(rt, r, o) ? NULL : o;
}

TN_NO_ASAN static void scan_range(tenure_runtime *rt, char *lo, char *hi, bool condemned_only, tn_conservative_fn fn,
                                  void *ctx) {
    uintptr_t *w = (uintptr_t *)(((uintptr_t)lo + 7) & ~(uintptr_t)7);
    for (; (char *)w + sizeof *w <= hi; w++) {
        uintptr_t v = *w;
        if (v - (uintptr_t)rt->base >= rt->range)
            continue;
        if (condemned_only && rt->unit_gen[tn_unit_of(rt, (void *)v)] > rt->collection->condemned)
            continue;
        tn_region *r = tn_region_of(rt, (void *)v);
        if (!r || (condemned_only && !r->condemned))
            continue;
        void *o = tn_roots_object_containing(rt, (void *)v);
        if (o)
            fn(o, (void *)v, ctx); /* the stack word itself is never changed */
    }
}

TN_NOINLINE static void scan_from_here(tenure_runtime *rt, char *hi, bool condemned_only, tn_conservative_fn fn,
                                       void *ctx) {
    volatile char marker = 0;
    scan_range(rt, (char *)&marker, hi, condemned_only, fn, ctx);
    (void)marker;
}

/* Another thread, stopped: its stack from where it became SAFE up, and its registers then. */
static void scan_stopped_thread(tenure_runtime *rt, tn_mutator *m, bool condemned_only, tn_conservative_fn fn,
                                void *ctx) {
    if (m->safe_sp && m->stack_high && m->safe_sp < m->stack_high)
        scan_range(rt, m->safe_sp, m->stack_high, condemned_only, fn, ctx);
    scan_range(rt, (char *)&m->safe_regs, (char *)(&m->safe_regs + 1), condemned_only, fn, ctx);
}

/* The calling thread: from where the GC was entered, or (outside a GC) from here, with the
 * callee-saved registers pushed. */
TN_NOINLINE static void scan_this_thread(tenure_runtime *rt, bool condemned_only, tn_conservative_fn fn, void *ctx) {
    tn_mutator *self = tn_self(rt);
    char *hi = self && self->stack_high ? self->stack_high : unattached_stack_high(rt);
    if (!hi)
        return;
    if (rt->roots.scan_from && rt->roots.scan_from < hi) { /* a GC: from where it was entered */
        scan_range(rt, rt->roots.scan_from, hi, condemned_only, fn, ctx);
        return;
    }
    jmp_buf regs;
    __builtin_unwind_init();
    if (setjmp(regs) == 0)
        scan_from_here(rt, hi, condemned_only, fn, ctx);
}

/* The objects given to calls that wait for the instance lock are pinned whatever
 * GCConservativeStack says (tn_lock_holding); stacks and registers only when it is set. */
void tn_roots_scan_conservative(tenure_runtime *rt, bool condemned_only, tn_conservative_fn fn, void *ctx) {
    tn_roots_scan_conservative_threads(rt, condemned_only, fn, NULL, ctx);
}

/* Thread by thread (a profiler reports whose stack each root came from). */
void tn_roots_scan_conservative_threads(tenure_runtime *rt, bool condemned_only, tn_conservative_fn fn,
                                        void (*thread)(tn_mutator *m, void *ctx), void *ctx) {
    bool stacks = rt->config.GCConservativeStack;
    tn_mutator *self = tn_self(rt);
    for (tn_mutator *m = rt->threads.mutators; m; m = m->next) {
        if (thread)
            thread(m, ctx);
        scan_range(rt, (char *)m->held, (char *)(m->held + 2), condemned_only, fn, ctx);
        if (stacks && m != self && m->state == TN_MUT_SAFE)
            scan_stopped_thread(rt, m, condemned_only, fn, ctx);
    }
    if (!stacks)
        return;
    if (thread)
        thread(self, ctx);
    scan_this_thread(rt, condemned_only, fn, ctx);
}
