/* profiler.c - attached profilers and the calls they get: gc_started, the moved/surviving
 * ranges (fed by the same walk as the bulk range events, through a bounded buffer), the
 * roots at their final addresses, gc_finished, allocations and handles; the generation
 * bounds query; TENURE_PROFILER loading. See ../shared/spec/profiler.md. */
#include "runtime.h"
#include "tenure_profiler.h"
#include <stdio.h>
#include <stdlib.h>

struct tenure_profiler {
    struct tenure_profiler *next;
    uint32_t magic;
    unsigned mask;
    tenure_profiler_callbacks cb;
    void *context;
};
#define TN_PROFILER_MAGIC 0x9f0f11e5u
#define TN_PROFILER_DETACHED 0x9f0fdeadu /* detached during a dispatch: freed at its end */

/* Every loop that calls profilers is a dispatch: a callback frame of its kind, and a count, so
 * that a profiler detached from a callback (its own, say) is only marked (mask 0: no further
 * call) and freed when the outermost dispatch ends. */
static void dispatch_begin(tenure_runtime *rt, tn_cb_frame *f, tn_cb_kind kind) {
    tn_cb_enter(f, rt, kind);
    rt->prof_dispatches++;
}

static void free_detached(tenure_runtime *rt) {
    for (tenure_profiler **pp = &rt->profilers; *pp;)
        if ((*pp)->magic == TN_PROFILER_DETACHED) {
            tenure_profiler *p = *pp;
            *pp = p->next;
            free(p);
        } else {
            pp = &(*pp)->next;
        }
    rt->profilers_detached = false;
}

static void dispatch_end(tenure_runtime *rt, tn_cb_frame *f) {
    tn_cb_leave(f);
    if (--rt->prof_dispatches == 0 && rt->profilers_detached)
        free_detached(rt);
}

static void recompute(tenure_runtime *rt) {
    unsigned mask = 0;
    for (tenure_profiler *p = rt->profilers; p; p = p->next)
        mask |= p->mask;
    rt->prof_mask = mask;
    rt->alloc_slow_always = (mask & TENURE_PROFILE_ALLOCATIONS) != 0;
    tn_alloc_republish_limits(rt); /* every thread's inline fast path follows the mask */
}

tenure_profiler *tenure_profiler_attach(tenure_runtime *rt, const tenure_profiler_callbacks *callbacks, unsigned mask,
                                        void *context) {
    static const char fn[] = "tenure_profiler_attach";
    if (!rt || tn_cb_refused(rt, TN_OP_CHANGE, fn))
        return NULL;
    TN_LOCKED(rt);
    if (!callbacks || (mask & ~(unsigned)(TENURE_PROFILE_GC | TENURE_PROFILE_ALLOCATIONS | TENURE_PROFILE_HANDLES))) {
        tn_api_fail(rt, TENURE_INVALID_ARGUMENT, fn, callbacks ? "unknown bits in the mask" : "NULL callbacks");
        return NULL;
    }
    if (rt->in_gc) {
        tn_api_fail(rt, TENURE_STATE, fn, "called during a collection");
        return NULL;
    }
    tenure_profiler *p = tn_calloc(1, sizeof *p);
    if (!p) {
        tn_api_fail(rt, TENURE_NOMEM, fn, "out of memory");
        return NULL;
    }
    p->magic = TN_PROFILER_MAGIC;
    p->mask = mask;
    p->cb = *callbacks;
    p->context = context;
    p->next = rt->profilers;
    rt->profilers = p;
    recompute(rt);
    return p;
}

tenure_result tenure_profiler_detach(tenure_runtime *rt, tenure_profiler *profiler) {
    if (!rt)
        return TENURE_INVALID_ARGUMENT;
    TN_LOCKED(rt);
    for (tenure_profiler **pp = &rt->profilers; *pp; pp = &(*pp)->next)
        if (*pp == profiler && profiler->magic == TN_PROFILER_MAGIC) {
            if (rt->prof_dispatches) {
                profiler->magic = TN_PROFILER_DETACHED;
                profiler->mask = 0;
                rt->profilers_detached = true;
            } else {
                *pp = profiler->next;
                profiler->magic = 0;
                free(profiler);
            }
            recompute(rt);
            return TENURE_OK;
        }
    return tn_api_fail(rt, TENURE_INVALID_ARGUMENT, "tenure_profiler_detach", "%p is not a profiler of this instance",
                       (void *)profiler);
}

#define EACH(rt, p, bit) for (tenure_profiler *p = (rt)->profilers; p; p = p->next) if (p->mask & (bit))

void tn_prof_gc_started(tenure_runtime *rt) {
    int collected[TN_NGEN];
    for (int g = 0; g < TN_NGEN; g++)
        collected[g] = tn_gen_condemned(g, rt->last.condemned);
    uint32_t r = rt->last.reason;
    tenure_gc_reason_kind kind = r == TN_REASON_INDUCED || r == TN_REASON_INDUCED_NOFORCE ||
                                         r == TN_REASON_INDUCED_COMPACTING || r == TN_REASON_INDUCED_AGGRESSIVE
                                     ? TENURE_GC_REASON_INDUCED
                                     : TENURE_GC_REASON_OTHER;
    tn_cb_frame frame;
    dispatch_begin(rt, &frame, TN_CB_PROF_GC);
    EACH(rt, p, TENURE_PROFILE_GC)
    if (p->cb.gc_started)
        p->cb.gc_started(p->context, collected, kind);
    dispatch_end(rt, &frame);
}

void tn_prof_moved(tenure_runtime *rt, size_t n, const uintptr_t *old, const uintptr_t *new_starts, const size_t *len) {
    tn_cb_frame frame;
    dispatch_begin(rt, &frame, TN_CB_PROF_GC);
    EACH(rt, p, TENURE_PROFILE_GC)
    if (p->cb.moved_references)
        p->cb.moved_references(p->context, n, old, new_starts, len);
    dispatch_end(rt, &frame);
}

void tn_prof_surviving(tenure_runtime *rt, size_t n, const uintptr_t *starts, const size_t *len) {
    tn_cb_frame frame;
    dispatch_begin(rt, &frame, TN_CB_PROF_GC);
    EACH(rt, p, TENURE_PROFILE_GC)
    if (p->cb.surviving_references)
        p->cb.surviving_references(p->context, n, starts, len);
    dispatch_end(rt, &frame);
}

void tn_prof_finalizeable_queued(tenure_runtime *rt, void *obj) {
    tn_cb_frame frame;
    dispatch_begin(rt, &frame, TN_CB_PROF_GC);
    EACH(rt, p, TENURE_PROFILE_GC)
    if (p->cb.finalizeable_object_queued)
        p->cb.finalizeable_object_queued(p->context, 0, obj);
    dispatch_end(rt, &frame);
}

void tn_prof_gc_finished(tenure_runtime *rt) {
    tn_cb_frame frame;
    dispatch_begin(rt, &frame, TN_CB_PROF_GC);
    EACH(rt, p, TENURE_PROFILE_GC)
    if (p->cb.gc_finished)
        p->cb.gc_finished(p->context);
    dispatch_end(rt, &frame);
}

void tn_prof_allocated(tenure_runtime *rt, void *obj, const tn_type *t) {
    tn_cb_frame frame;
    dispatch_begin(rt, &frame, TN_CB_PROF_ALLOC);
    EACH(rt, p, TENURE_PROFILE_ALLOCATIONS)
    if (p->cb.object_allocated)
        p->cb.object_allocated(p->context, obj, &t->pub);
    dispatch_end(rt, &frame);
}

void tn_prof_handle(tenure_runtime *rt, tenure_handle *h, void *obj, bool created) {
    tn_cb_frame frame;
    dispatch_begin(rt, &frame, TN_CB_PROF_HANDLE);
    EACH(rt, p, TENURE_PROFILE_HANDLES) {
        if (created && p->cb.handle_created)
            p->cb.handle_created(p->context, h, obj);
        else if (!created && p->cb.handle_destroyed)
            p->cb.handle_destroyed(p->context, h);
    }
    dispatch_end(rt, &frame);
}

/* ---- root_references: batched ---- */

#define ROOT_BATCH 1024

typedef struct root_batch {
    tenure_runtime *rt;
    size_t n;
    tenure_root_kind kind;
    uint32_t flags;
    void *ids[ROOT_BATCH];
    tenure_root_kind kinds[ROOT_BATCH];
    uint32_t flag[ROOT_BATCH];
    uintptr_t root_ids[ROOT_BATCH];
} root_batch;

static void flush_roots(root_batch *b) {
    if (!b->n)
        return;
    tn_cb_frame frame;
    dispatch_begin(b->rt, &frame, TN_CB_PROF_GC);
    EACH(b->rt, p, TENURE_PROFILE_GC)
    if (p->cb.root_references)
        p->cb.root_references(p->context, b->n, b->ids, b->kinds, b->flag, b->root_ids);
    dispatch_end(b->rt, &frame);
    b->n = 0;
}

static void add_root(root_batch *b, void *obj, tenure_root_kind kind, uint32_t flags, uintptr_t root_id) {
    b->ids[b->n] = obj;
    b->kinds[b->n] = kind;
    b->flag[b->n] = flags;
    b->root_ids[b->n] = root_id;
    if (++b->n == ROOT_BATCH)
        flush_roots(b);
}

static void root_slot(void **slot, void *ctx) {
    root_batch *b = ctx;
    if (*slot)
        add_root(b, *slot, b->kind, b->flags, (uintptr_t)slot);
}

static void root_word(void *obj, void *word, void *ctx) {
    root_batch *b = ctx;
    uint32_t flags = TENURE_ROOT_FLAG_PINNING | (word != obj ? TENURE_ROOT_FLAG_INTERIOR : 0);
    add_root(b, obj, TENURE_ROOT_KIND_STACK, flags, 0);
}

static void handle_roots(root_batch *b, uint32_t kinds, uint32_t flags) {
    b->kind = TENURE_ROOT_KIND_HANDLE;
    b->flags = flags;
    tn_roots_visit_handles(b->rt, kinds, root_slot, b);
}

static bool roots_wanted(const tenure_runtime *rt) {
    bool wanted = false;
    EACH(rt, p, TENURE_PROFILE_GC)
    wanted |= p->cb.root_references != NULL;
    return wanted;
}

size_t tn_prof_roots_scratch_bytes(const tenure_runtime *rt) { return roots_wanted(rt) ? sizeof(root_batch) : 0; }

void tn_prof_root_references(tenure_runtime *rt) {
    if (!roots_wanted(rt))
        return;
    root_batch *b = tn_gc_pause_scratch(rt, sizeof *b); /* reserved before the pause */
    if (!b)
        return; /* the profiler misses one GC's roots rather than the GC failing (counted) */
    b->rt = rt;
    b->n = 0;
    b->kind = TENURE_ROOT_KIND_STACK;
    b->flags = 0;
    tn_roots_visit_embedder(rt, root_slot, b);
    tn_roots_scan_conservative(rt, false, root_word, b);
    b->kind = TENURE_ROOT_KIND_OTHER;
    tn_frozen_visit_slots(rt, root_slot, b);
    b->kind = TENURE_ROOT_KIND_FINALIZER;
    tn_finalize_visit_ready(rt, root_slot, b);
    handle_roots(b, 1u << TENURE_HANDLE_STRONG | 1u << TENURE_HANDLE_SIZED_REF, 0);
    handle_roots(b, 1u << TENURE_HANDLE_PINNED | 1u << TENURE_HANDLE_ASYNC_PINNED, TENURE_ROOT_FLAG_PINNING);
    handle_roots(b, 1u << TENURE_HANDLE_WEAK_SHORT | 1u << TENURE_HANDLE_WEAK_LONG | 1u << TENURE_HANDLE_DEPENDENT,
                 TENURE_ROOT_FLAG_WEAK);
    flush_roots(b);
}

/* ---- queries ---- */

size_t tenure_generation_bounds(tenure_runtime *rt, tenure_generation_range *out, size_t max) {
    if (!rt)
        return 0;
    TN_LOCKED(rt);
    size_t n = 0;
    for (size_t i = 0; i < rt->units_high; i++) {
        tn_region *r = &rt->regions[i];
        if (r->state != TN_RS_IN_USE || rt->unit_head[i] != i)
            continue;
        if (out && n < max)
            out[n] = (tenure_generation_range){(uintptr_t)r->start, (size_t)(tn_region_walk_end(rt, r) - r->start),
                                               (size_t)(r->end - r->start), r->gen};
        n++;
    }
    return n;
}

/* ---- lifecycle ---- */

/* Each profiler's shutdown runs with all of them still attached (one may detach another: it
 * then gets no shutdown call), then all are freed. */
void tn_prof_shutdown(tenure_runtime *rt) {
    tn_cb_frame frame;
    dispatch_begin(rt, &frame, TN_CB_PROF_SHUTDOWN);
    for (tenure_profiler *p = rt->profilers; p; p = p->next)
        if (p->magic == TN_PROFILER_MAGIC && p->cb.shutdown)
            p->cb.shutdown(p->context);
    dispatch_end(rt, &frame);
    while (rt->profilers) {
        tenure_profiler *p = rt->profilers;
        rt->profilers = p->next;
        free(p);
    }
    rt->prof_mask = 0;
    rt->alloc_slow_always = false;
}

/* TENURE_PROFILER=<shared library>: load it and call its tenure_profiler_main(rt). Never in a
 * secure-execution process (setuid, setgid, file capabilities): the variable belongs to the
 * user who started the program, the library would run with the program's privileges. The
 * refusal is reported on stderr (tenure_create runs this before any error hook can be set). */
void tn_prof_load_from_env(tenure_runtime *rt) {
    if (tn_os_secure_execution()) {
        if (tn_os_env_present("TENURE_PROFILER"))
            fprintf(stderr, "tenure: TENURE_PROFILER ignored: a profiler is never loaded into a secure-execution "
                            "(setuid, setgid or capability) process\n");
        return;
    }
    const char *path = tn_os_getenv("TENURE_PROFILER");
    if (!path || !*path)
        return;
    char err[512];
    tenure_profiler_main_fn main_fn =
        (tenure_profiler_main_fn)tn_os_load_library(path, "tenure_profiler_main", err, sizeof err);
    if (!main_fn) {
        fprintf(stderr, "tenure: TENURE_PROFILER=%s: not loaded: %s\n", path, err);
        return;
    }
    if (main_fn(rt) != 0)
        fprintf(stderr, "tenure: TENURE_PROFILER=%s: tenure_profiler_main failed\n", path);
}
