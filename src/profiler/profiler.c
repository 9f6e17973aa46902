/* profiler.c - attached profilers and the calls they get: gc_started, the moved/surviving
 * ranges (fed by the same walk as the bulk range events, through a bounded buffer), the
 * roots at their final addresses, gc_finished, allocations and handles; the generation
 * bounds query; TENURE_PROFILER loading. See docs/contract/profiler.md. */
#include "runtime.h"
#include "gc/collection.h"
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
    rt->prof.prof_dispatches++;
}

static void free_detached(tenure_runtime *rt) {
    for (tenure_profiler **pp = &rt->prof.profilers; *pp;)
        if ((*pp)->magic == TN_PROFILER_DETACHED) {
            tenure_profiler *p = *pp;
            *pp = p->next;
            free(p);
        } else {
            pp = &(*pp)->next;
        }
    __atomic_store_n(&rt->prof.profilers_detached, false, __ATOMIC_RELAXED);
}

/* The sampled-allocation dispatch walks the list without the lock, on a running thread: the
 * list changes (links, marks, frees) only with every other thread stopped, and a profiler is
 * freed only when no dispatch of either kind is in progress (a sampling thread may wait,
 * SAFE, inside its callback). */
static bool dispatches_idle(tenure_runtime *rt) {
    return rt->prof.prof_dispatches == 0 && __atomic_load_n(&rt->prof.prof_sample_dispatches, __ATOMIC_ACQUIRE) == 0;
}

static void free_detached_if_idle(tenure_runtime *rt) {
    TN_LOCKED(rt); /* (recursive: a GC or a locked dispatch holds it already) */
    tn_world_stop(rt);
    if (rt->prof.profilers_detached && dispatches_idle(rt))
        free_detached(rt);
    tn_world_restart(rt);
}

static void dispatch_end(tenure_runtime *rt, tn_cb_frame *f) {
    tn_cb_leave(f);
    if (--rt->prof.prof_dispatches == 0 && rt->prof.profilers_detached)
        free_detached_if_idle(rt);
}

/* With the world stopped. */
static void recompute(tenure_runtime *rt) {
    tn_assert_world_stopped(rt);
    unsigned mask = 0;
    size_t interval = 0;
    for (tenure_profiler *p = rt->prof.profilers; p; p = p->next) {
        mask |= p->mask;
        if (p->mask & TENURE_PROFILE_ALLOCATIONS_SAMPLED) {
            size_t want = p->cb.sampling_interval ? p->cb.sampling_interval : TENURE_PROFILER_DEFAULT_SAMPLING_INTERVAL;
            interval = interval && interval < want ? interval : want;
        }
    }
    rt->prof.prof_mask = mask;
    rt->prof.alloc_slow_always = (mask & TENURE_PROFILE_ALLOCATIONS) != 0;
    if (interval != rt->prof.sample_interval) {
        rt->prof.sample_interval = interval;
        tn_alloc_restart_sampling(rt);
    }
    tn_alloc_republish_limits(rt); /* every thread's inline fast path follows the mask */
}

#define KNOWN_MASK                                                                       \
    (unsigned)(TENURE_PROFILE_GC | TENURE_PROFILE_ALLOCATIONS | TENURE_PROFILE_HANDLES | \
               TENURE_PROFILE_ALLOCATIONS_SAMPLED)

/* What is wrong with (callbacks, size, mask), or NULL. A struct larger than ours (a newer
 * header) is accepted if what we do not know of it is zero. */
static const char *attach_problem(const tenure_profiler_callbacks *callbacks, size_t size, unsigned mask) {
    if (!callbacks)
        return "NULL callbacks";
    if (mask & ~KNOWN_MASK)
        return "unknown bits in the mask";
    if (size < TENURE_PROFILER_CALLBACKS_V1_SIZE)
        return "callbacks_size is smaller than the version 1 struct";
    for (size_t i = sizeof *callbacks; i < size; i++)
        if (((const unsigned char *)callbacks)[i])
            return "the callbacks struct has fields this library does not know";
    if ((mask & TENURE_PROFILE_ALLOCATIONS_SAMPLED) && size < sizeof *callbacks)
        return "TENURE_PROFILE_ALLOCATIONS_SAMPLED needs the version 2 struct (tenure_profiler_attach2)";
    return NULL;
}

tenure_profiler *tenure_profiler_attach2(tenure_runtime *rt, const tenure_profiler_callbacks *callbacks,
                                         size_t callbacks_size, unsigned mask, void *context) {
    static const char fn[] = "tenure_profiler_attach";
    if (!rt || tn_cb_refused(rt, TN_OP_CHANGE, fn))
        return NULL;
    TN_LOCKED(rt);
    const char *problem = attach_problem(callbacks, callbacks_size, mask);
    if (problem) {
        tn_api_fail(rt, TENURE_INVALID_ARGUMENT, fn, "%s", problem);
        return NULL;
    }
    if (tn_gc_in_progress(rt)) {
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
    memcpy(&p->cb, callbacks, callbacks_size < sizeof p->cb ? callbacks_size : sizeof p->cb);
    p->context = context;
    tn_world_stop(rt);
    p->next = rt->prof.profilers;
    rt->prof.profilers = p;
    recompute(rt);
    tn_world_restart(rt);
    return p;
}

tenure_profiler *tenure_profiler_attach(tenure_runtime *rt, const tenure_profiler_callbacks *callbacks, unsigned mask,
                                        void *context) {
    return tenure_profiler_attach2(rt, callbacks, TENURE_PROFILER_CALLBACKS_V1_SIZE, mask, context);
}

tenure_result tenure_profiler_detach(tenure_runtime *rt, tenure_profiler *profiler) {
    if (!rt)
        return TENURE_INVALID_ARGUMENT;
    if (tn_cb_refused(rt, TN_OP_REMOVE, "tenure_profiler_detach"))
        return TENURE_STATE;
    TN_LOCKED(rt);
    tn_world_stop(rt);
    tenure_result r = TENURE_INVALID_ARGUMENT;
    for (tenure_profiler **pp = &rt->prof.profilers; *pp; pp = &(*pp)->next)
        if (*pp == profiler && profiler->magic == TN_PROFILER_MAGIC) {
            if (!dispatches_idle(rt)) {
                profiler->magic = TN_PROFILER_DETACHED;
                profiler->mask = 0;
                __atomic_store_n(&rt->prof.profilers_detached, true, __ATOMIC_RELEASE);
            } else {
                *pp = profiler->next;
                profiler->magic = 0;
                free(profiler);
            }
            recompute(rt);
            r = TENURE_OK;
            break;
        }
    tn_world_restart(rt);
    if (r != TENURE_OK)
        tn_api_fail(rt, r, "tenure_profiler_detach", "%p is not a profiler of this instance", (void *)profiler);
    return r;
}

#define EACH(rt, p, bit)                                            \
    for (tenure_profiler *p = (rt)->prof.profilers; p; p = p->next) \
        if (p->mask & (bit))

void tn_prof_gc_started(tenure_runtime *rt, int condemned, uint32_t r) {
    int collected[TN_NGEN];
    for (int g = 0; g < TN_NGEN; g++)
        collected[g] = tn_gen_condemned(g, condemned);
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

void tn_prof_handle_created(tenure_runtime *rt, tenure_handle *h, uint32_t kind, void *obj, void *secondary) {
    tn_cb_frame frame;
    dispatch_begin(rt, &frame, TN_CB_PROF_HANDLE);
    EACH(rt, p, TENURE_PROFILE_HANDLES) {
        if (p->cb.handle_created2)
            p->cb.handle_created2(p->context, h, (tenure_handle_kind)kind, obj, secondary);
        else if (p->cb.handle_created)
            p->cb.handle_created(p->context, h, obj);
    }
    dispatch_end(rt, &frame);
}

void tn_prof_handle_destroyed(tenure_runtime *rt, tenure_handle *h) {
    tn_cb_frame frame;
    dispatch_begin(rt, &frame, TN_CB_PROF_HANDLE);
    EACH(rt, p, TENURE_PROFILE_HANDLES)
    if (p->cb.handle_destroyed)
        p->cb.handle_destroyed(p->context, h);
    dispatch_end(rt, &frame);
}

/* ---- object_allocated_sampled: on the allocating thread, without the lock ---- */

static void sample_dispatch_end(tenure_runtime *rt) {
    if (__atomic_sub_fetch(&rt->prof.prof_sample_dispatches, 1, __ATOMIC_ACQ_REL) == 0 &&
        __atomic_load_n(&rt->prof.profilers_detached, __ATOMIC_ACQUIRE))
        free_detached_if_idle(rt);
}

void *tn_prof_sampled(tenure_runtime *rt, tn_mutator *m, void *obj, const tn_type *t, uint64_t since) {
    /* obj is rooted by this thread for the call: a query the callback makes may wait while
     * another thread collects */
    void **slots[1] = {&obj};
    tenure_frame root = {m->pub.frames, 1, slots};
    m->pub.frames = &root;
    size_t size = tn_obj_size(obj);
    __atomic_add_fetch(&rt->prof.prof_sample_dispatches, 1, __ATOMIC_ACQ_REL);
    tn_cb_frame frame;
    tn_cb_enter(&frame, rt, TN_CB_PROF_SAMPLE);
    EACH(rt, p, TENURE_PROFILE_ALLOCATIONS_SAMPLED)
    if (p->cb.object_allocated_sampled)
        p->cb.object_allocated_sampled(p->context, obj, &t->pub, size, since);
    tn_cb_leave(&frame);
    sample_dispatch_end(rt);
    m->pub.frames = root.prev;
    return obj;
}

/* ---- root_references(2) and dependent_handle_references: batched ---- */

#define ROOT_BATCH 1024

typedef struct root_batch {
    tenure_runtime *rt;
    size_t n;
    void *ids[ROOT_BATCH];
    tenure_root_kind kinds[ROOT_BATCH];
    uint32_t flag[ROOT_BATCH];
    uintptr_t root_ids[ROOT_BATCH];
    uint64_t threads[ROOT_BATCH];
} root_batch;

static void flush_roots(root_batch *b) {
    if (!b->n)
        return;
    tn_cb_frame frame;
    dispatch_begin(b->rt, &frame, TN_CB_PROF_GC);
    EACH(b->rt, p, TENURE_PROFILE_GC) {
        if (p->cb.root_references2)
            p->cb.root_references2(p->context, b->n, b->ids, b->kinds, b->flag, b->root_ids, b->threads);
        else if (p->cb.root_references)
            p->cb.root_references(p->context, b->n, b->ids, b->kinds, b->flag, b->root_ids);
    }
    dispatch_end(b->rt, &frame);
    b->n = 0;
}

static void add_root(void *obj, tenure_root_kind kind, uint32_t flags, uintptr_t root_id, uint64_t thread, void *ctx) {
    root_batch *b = ctx;
    b->ids[b->n] = obj;
    b->kinds[b->n] = kind;
    b->flag[b->n] = flags;
    b->root_ids[b->n] = root_id;
    b->threads[b->n] = thread;
    if (++b->n == ROOT_BATCH)
        flush_roots(b);
}

/* ---- the one enumeration of the roots (root_references and the heap dump's root edges) ---- */

typedef struct root_walk {
    tenure_runtime *rt;
    tn_prof_root_fn fn;
    void *ctx;
    tenure_root_kind kind;
    uint64_t thread; /* the OS thread id of the roots being visited (0: none) */
} root_walk;

static void root_slot(void **slot, void *ctx) {
    root_walk *w = ctx;
    if (*slot)
        w->fn(*slot, w->kind, 0, (uintptr_t)slot, w->thread, w->ctx);
}

static void root_word(void *obj, void *word, void *ctx) {
    root_walk *w = ctx;
    uint32_t flags = TENURE_ROOT_FLAG_PINNING | (word != obj ? TENURE_ROOT_FLAG_INTERIOR : 0);
    w->fn(obj, TENURE_ROOT_KIND_STACK, flags, 0, w->thread, w->ctx);
}

/* The conservative scan says whose stack comes next (m NULL: this thread, not attached). */
static void root_thread(tn_mutator *m, void *ctx) {
    root_walk *w = ctx;
    w->thread = m ? m->os_tid : tn_os_thread_id();
}

/* A handle's flags: by what it behaves as in this GC, and refcounted by its kind. */
static void root_handle(tn_handle_slot *h, void *ctx) {
    root_walk *w = ctx;
    uint32_t e = h->effective, flags = 0;
    if (e == TENURE_HANDLE_PINNED || e == TENURE_HANDLE_ASYNC_PINNED)
        flags |= TENURE_ROOT_FLAG_PINNING;
    if (e == TENURE_HANDLE_WEAK_SHORT || e == TENURE_HANDLE_WEAK_LONG || e == TENURE_HANDLE_DEPENDENT)
        flags |= TENURE_ROOT_FLAG_WEAK;
    if (h->kind == TENURE_HANDLE_REFCOUNTED)
        flags |= TENURE_ROOT_FLAG_REFCOUNTED;
    if (h->object)
        w->fn(h->object, TENURE_ROOT_KIND_HANDLE, flags, (uintptr_t)h, 0, w->ctx);
}

static void stack_roots(root_walk *w) {
    w->kind = TENURE_ROOT_KIND_STACK;
    for (tn_mutator *m = tn_mutators(w->rt); m; m = m->next) {
        w->thread = m->os_tid;
        tn_roots_visit_frames(w->rt, m, root_slot, w);
    }
    w->thread = 0;
    tn_roots_visit_areas_and_scanners(w->rt, root_slot, w);
    tn_roots_scan_conservative_threads(w->rt, TN_SCAN_ALL, root_word, root_thread, w);
    w->thread = 0;
}

void tn_prof_visit_roots(tenure_runtime *rt, tn_prof_root_fn fn, void *ctx) {
    root_walk w = {.rt = rt, .fn = fn, .ctx = ctx};
    stack_roots(&w);
    w.kind = TENURE_ROOT_KIND_OTHER;
    tn_frozen_visit_slots(rt, root_slot, &w);
    w.kind = TENURE_ROOT_KIND_FINALIZER;
    tn_finalize_visit_ready(rt, root_slot, &w);
    tn_roots_visit_handle_slots(rt, ~0u, root_handle, &w);
}

static void report_roots(tenure_runtime *rt, root_batch *b) {
    b->rt = rt;
    b->n = 0;
    tn_prof_visit_roots(rt, add_root, b);
    flush_roots(b);
}

typedef struct dependent_batch {
    tenure_runtime *rt;
    size_t n;
    void *primaries[ROOT_BATCH], *secondaries[ROOT_BATCH];
    uintptr_t root_ids[ROOT_BATCH];
} dependent_batch;

static void flush_dependents(dependent_batch *d) {
    if (!d->n)
        return;
    tn_cb_frame frame;
    dispatch_begin(d->rt, &frame, TN_CB_PROF_GC);
    EACH(d->rt, p, TENURE_PROFILE_GC)
    if (p->cb.dependent_handle_references)
        p->cb.dependent_handle_references(p->context, d->n, d->primaries, d->secondaries, d->root_ids);
    dispatch_end(d->rt, &frame);
    d->n = 0;
}

static void add_dependent(tn_handle_slot *h, void *ctx) {
    dependent_batch *d = ctx;
    if (!h->object)
        return; /* the primary died: the pair is gone */
    d->primaries[d->n] = h->object;
    d->secondaries[d->n] = h->secondary;
    d->root_ids[d->n] = (uintptr_t)h;
    if (++d->n == ROOT_BATCH)
        flush_dependents(d);
}

static void report_dependents(tenure_runtime *rt, dependent_batch *d) {
    d->rt = rt;
    d->n = 0;
    tn_roots_visit_handle_slots(rt, 1u << TENURE_HANDLE_DEPENDENT, add_dependent, d);
    flush_dependents(d);
}

/* Which of the root reports some profiler wants. */
static void roots_wanted(const tenure_runtime *rt, bool *roots, bool *dependents) {
    *roots = *dependents = false;
    EACH(rt, p, TENURE_PROFILE_GC) {
        *roots |= p->cb.root_references != NULL || p->cb.root_references2 != NULL;
        *dependents |= p->cb.dependent_handle_references != NULL;
    }
}

size_t tn_prof_roots_scratch_bytes(const tenure_runtime *rt) {
    bool roots, dependents;
    roots_wanted(rt, &roots, &dependents);
    size_t n = roots ? sizeof(root_batch) : 0;
    return dependents && sizeof(dependent_batch) > n ? sizeof(dependent_batch) : n;
}

/* The batches live in the pause's scratch block, reserved before the pause (one after the
 * other); without it the profiler misses one GC's roots rather than the GC failing (counted). */
void tn_prof_root_references(tenure_runtime *rt) {
    bool roots, dependents;
    roots_wanted(rt, &roots, &dependents);
    if (roots) {
        root_batch *b = tn_gc_pause_scratch(rt, sizeof *b);
        if (b)
            report_roots(rt, b);
    }
    if (dependents) {
        dependent_batch *d = tn_gc_pause_scratch(rt, sizeof *d);
        if (d)
            report_dependents(rt, d);
    }
}

/* ---- queries ---- */

/* Some thread other than the caller holds an allocation context (its pointer moves without
 * the lock). Contexts only change hands under the lock, which the caller holds. */
static bool others_hold_contexts(tenure_runtime *rt) {
    tn_mutator *self = tn_self(rt);
    for (tn_mutator *m = tn_mutators(rt); m; m = m->next)
        if (m != self && m->alloc_region)
            return true;
    return false;
}

/* Where r's objects end: a region holding a context ends at its owner's allocation pointer
 * (the context's zeroed tail, up to r->used, is no object). The owner is the caller or is
 * stopped. */
static char *objects_end(const tn_region *r) {
    return r->alloc_owner ? (char *)r->alloc_owner->pub.alloc_ptr : r->used;
}

size_t tenure_generation_bounds(tenure_runtime *rt, tenure_generation_range *out, size_t max) {
    if (!rt)
        return 0;
    TN_LOCKED(rt);
    bool stop = !tn_gc_in_progress(rt) && others_hold_contexts(rt);
    if (stop)
        tn_world_stop(rt); /* their allocation pointers hold still */
    /* a context in a gap between pinned plugs lies inside its region's objects: end it (its
     * unused tail becomes a free object) so that the range is walkable back to back */
    for (tn_mutator *m = tn_mutators(rt); m; m = m->next)
        if (m->ctx_in_gap)
            tn_alloc_reset_context(rt, m);
    size_t n = 0;
    for (size_t i = 0; i < rt->units_high; i++) {
        tn_region *r = &rt->regions[i];
        if (r->state != TN_RS_IN_USE || rt->unit_head[i] != i)
            continue;
        if (out && n < max)
            out[n] = (tenure_generation_range){(uintptr_t)r->start, (size_t)(objects_end(r) - r->start),
                                               (size_t)(r->end - r->start), r->gen};
        n++;
    }
    if (stop)
        tn_world_restart(rt);
    return n;
}

/* ---- lifecycle ---- */

/* Each profiler's shutdown runs with all of them still attached (one may detach another: it
 * then gets no shutdown call), then all are freed. */
void tn_prof_shutdown(tenure_runtime *rt) {
    tn_cb_frame frame;
    dispatch_begin(rt, &frame, TN_CB_PROF_SHUTDOWN);
    for (tenure_profiler *p = rt->prof.profilers; p; p = p->next)
        if (p->magic == TN_PROFILER_MAGIC && p->cb.shutdown)
            p->cb.shutdown(p->context);
    dispatch_end(rt, &frame);
    while (rt->prof.profilers) {
        tenure_profiler *p = rt->prof.profilers;
        rt->prof.profilers = p->next;
        free(p);
    }
    rt->prof.prof_mask = 0;
    rt->prof.alloc_slow_always = false;
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
