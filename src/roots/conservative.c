/* conservative.c - conservative scanning of the attached threads' stacks and registers.
 *
 * Every word on a stack (from the innermost frame, with the callee-saved registers pushed,
 * to the stack's base) that points into an object of a condemned region, interior pointers
 * included, keeps that object alive and pins it for this GC: the program may hold raw
 * pointers in locals across a collection. Finding the object that contains an address uses
 * the crossing table: in old regions it names the object covering each 512-byte granule; in gen0
 * regions every allocation quantum records its start, so the walk from there is bounded by
 * the quantum (8 KiB) and never by the region.
 *
 * A stack word that is a slot of one of the thread's shadow-stack frames (TENURE_FRAME) is a
 * precise root: marked and updated as such (roots.c), so the scan skips it rather than pin
 * its object. Without this, a tree built recursively with a frame per level pinned the
 * subtree each level's frame held: the pinned nodes kept their regions in their generation
 * (demoted), GC after GC (binary-trees depth 20: ~0.3 s more CPU and ~100 MB more peak RSS
 * than with GCConservativeStack=0). Other copies of the same pointer (a register, a spill
 * slot) still pin. */
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

/* The addresses of frame slots inside a stretch of a stack, ascending, at most
 * TN_PRECISE_SLOTS of them (kept on the scanning thread's stack: a pause allocates nothing).
 * A stack is scanned in stretches, one batch of whole frames each (scan_stack): frames are
 * pushed innermost last and inner frames lie lower on a stack, so a batch's slots lie below
 * the next frame's and any number of frames is skipped precisely. A slot left out (a frame of
 * more than TN_PRECISE_SLOTS, a frame out of stack order) is scanned as any other word: it
 * pins its object, which is safe. */
#define TN_PRECISE_SLOTS 256

typedef struct precise_slots {
    size_t count;
    uintptr_t addr[TN_PRECISE_SLOTS];
} precise_slots;

static bool slot_in(uintptr_t a, const char *lo, const char *hi) {
    return a >= (uintptr_t)lo && a < (uintptr_t)hi && !(a & 7);
}

static void add_slot(precise_slots *ps, uintptr_t a) {
    if (ps->count == TN_PRECISE_SLOTS)
        return;
    /* insertion sort: a frame's slots are few and mostly in order */
    size_t k = ps->count++;
    for (; k > 0 && ps->addr[k - 1] > a; k--)
        ps->addr[k] = ps->addr[k - 1];
    ps->addr[k] = a;
}

/* The slots in [lo, hi) of the frames from *f on, whole frames while they fit (the first even
 * if it does not); *f becomes the first frame left out. Returns where the stretch these slots
 * cover ends: the lowest slot of the frame left out, past the batch's own highest slot, or hi
 * when no frame is left. */
static char *collect_precise_slots(const tenure_frame **f, const char *lo, char *hi, precise_slots *ps) {
    ps->count = 0;
    for (; *f; *f = (*f)->prev) {
        size_t n = 0;
        uintptr_t least = UINTPTR_MAX;
        for (size_t i = 0; i < (*f)->count; i++) {
            uintptr_t a = (uintptr_t)(*f)->slots[i];
            if (slot_in(a, lo, hi)) {
                n++;
                least = a < least ? a : least;
            }
        }
        if (ps->count && ps->count + n > TN_PRECISE_SLOTS) {
            uintptr_t past = ps->addr[ps->count - 1] + sizeof(void *);
            return (char *)(least > past ? least : past);
        }
        for (size_t i = 0; i < (*f)->count; i++)
            if (slot_in((uintptr_t)(*f)->slots[i], lo, hi))
                add_slot(ps, (uintptr_t)(*f)->slots[i]);
    }
    return hi;
}

/* `precise`: the frame slots of the range (skipped), or NULL. */
TN_NO_ASAN static void scan_range(tenure_runtime *rt, char *lo, char *hi, const precise_slots *precise, int condemned,
                                  tn_conservative_fn fn, void *ctx) {
    uintptr_t *w = (uintptr_t *)(((uintptr_t)lo + 7) & ~(uintptr_t)7);
    size_t next_precise = 0, precise_count = precise ? precise->count : 0;
    for (; (char *)w + sizeof *w <= hi; w++) {
        uintptr_t v = *w;
        if (next_precise < precise_count && precise->addr[next_precise] <= (uintptr_t)w) {
            bool is_slot = precise->addr[next_precise] == (uintptr_t)w;
            while (next_precise < precise_count && precise->addr[next_precise] <= (uintptr_t)w)
                next_precise++; /* (a slot named twice is skipped once) */
            if (is_slot)
                continue;
        }
        if (v - (uintptr_t)rt->base >= rt->range)
            continue;
        if (condemned != TN_SCAN_ALL && rt->unit_gen[tn_unit_of(rt, (void *)v)] > condemned)
            continue;
        tn_region *r = tn_region_of(rt, (void *)v);
        if (!r || (condemned != TN_SCAN_ALL && !r->condemned))
            continue;
        void *o = tn_roots_object_containing(rt, (void *)v);
        if (o)
            fn(o, (void *)v, ctx); /* the stack word itself is never changed */
    }
}

/* A stack from lo up to hi, skipping m's frame slots (m may be NULL: no frames), one
 * stretch per batch of frames. */
static void scan_stack(tenure_runtime *rt, const tn_mutator *m, char *lo, char *hi, int condemned,
                       tn_conservative_fn fn, void *ctx) {
    const tenure_frame *f = m ? m->pub.frames : NULL;
    for (char *from = lo; from < hi;) {
        precise_slots precise;
        char *to = collect_precise_slots(&f, from, hi, &precise);
        scan_range(rt, from, to, &precise, condemned, fn, ctx);
        from = to;
    }
}

TN_NOINLINE static void scan_from_here(tenure_runtime *rt, const tn_mutator *self, char *hi, int condemned,
                                       tn_conservative_fn fn, void *ctx) {
    volatile char marker = 0;
    scan_stack(rt, self, (char *)&marker, hi, condemned, fn, ctx);
    (void)marker;
}

/* Another thread, stopped: its stack from where it became SAFE up, and its registers then. */
static void scan_stopped_thread(tenure_runtime *rt, tn_mutator *m, int condemned, tn_conservative_fn fn, void *ctx) {
    if (m->safe_sp && m->stack_high && m->safe_sp < m->stack_high)
        scan_stack(rt, m, m->safe_sp, m->stack_high, condemned, fn, ctx);
    scan_range(rt, (char *)&m->safe_regs, (char *)(&m->safe_regs + 1), NULL, condemned, fn, ctx);
}

/* The calling thread: from where the GC was entered, or (outside a GC) from here, with the
 * callee-saved registers pushed. */
TN_NOINLINE static void scan_this_thread(tenure_runtime *rt, int condemned, tn_conservative_fn fn, void *ctx) {
    tn_mutator *self = tn_self(rt);
    char *hi = self && self->stack_high ? self->stack_high : unattached_stack_high(rt);
    if (!hi)
        return;
    if (rt->roots.scan_from && rt->roots.scan_from < hi) { /* a GC: from where it was entered */
        scan_stack(rt, self, rt->roots.scan_from, hi, condemned, fn, ctx);
        return;
    }
    jmp_buf regs;
    __builtin_unwind_init();
    if (setjmp(regs) == 0)
        scan_from_here(rt, self, hi, condemned, fn, ctx);
}

/* The objects given to calls that wait for the instance lock are pinned whatever
 * GCConservativeStack says (tn_lock_holding); stacks and registers only when it is set. */
char *tn_roots_set_scan_from(tenure_runtime *rt, char *from) {
    char *previous = rt->roots.scan_from;
    rt->roots.scan_from = from;
    return previous;
}

void tn_roots_scan_conservative(tenure_runtime *rt, int condemned, tn_conservative_fn fn, void *ctx) {
    tn_roots_scan_conservative_threads(rt, condemned, fn, NULL, ctx);
}

/* Thread by thread (a profiler reports whose stack each root came from). */
void tn_roots_scan_conservative_threads(tenure_runtime *rt, int condemned, tn_conservative_fn fn,
                                        void (*thread)(tn_mutator *m, void *ctx), void *ctx) {
    bool stacks = rt->config.GCConservativeStack;
    tn_mutator *self = tn_self(rt);
    for (tn_mutator *m = tn_mutators(rt); m; m = m->next) {
        if (thread)
            thread(m, ctx);
        scan_range(rt, (char *)m->held, (char *)(m->held + 2), NULL, condemned, fn, ctx);
        if (stacks && m != self && m->state == TN_MUT_SAFE)
            scan_stopped_thread(rt, m, condemned, fn, ctx);
    }
    if (!stacks)
        return;
    if (thread)
        thread(self, ctx);
    scan_this_thread(rt, condemned, fn, ctx);
}
