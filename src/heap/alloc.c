/* alloc.c - allocation: the slow path behind the inline bump allocator (new quanta, the
 * budget check and GCStress's tick: heap/budgets.c; the thread's allocation heap:
 * heap/balance.c), arrays, and the free-list allocator of the large and pinned object heaps.
 *
 * Each attached thread (tn_mutator) has its own allocation context at the tail of its own
 * gen0 region (m->alloc_region, whose alloc_owner is m): [pub.alloc_ptr, ctx_end) is zeroed
 * memory not yet handed out. Only the owning thread moves its context, and only the holder of
 * rt->threads.lock changes anything else here; a GC (which holds the lock, with every other thread
 * stopped) ends every context first. */
#include "runtime.h"
#include "heap/crossing.h"
#include "gc/background.h"
#include "heap/heap_internal.h"

/* ---- accounting ---- */

#define TN_TICK_BYTES (100u * 1024u)

void tn_alloc_account_context(tenure_runtime *rt, tn_mutator *m) {
    size_t used = (size_t)(m->pub.alloc_ptr - m->ctx_start);
    m->allocated += used;
    rt->stats.bytes_allocated += used;
    rt->heap.heap_allocated[m->alloc_heap] += used;
    m->ctx_start = m->pub.alloc_ptr;
    rt->heap.tick_bytes[TN_ALLOC_KIND_SMALL] += used;
    if (rt->heap.tick_bytes[TN_ALLOC_KIND_SMALL] >= TN_TICK_BYTES)
        rt->heap.tick_pending = true; /* the object being allocated now gets the tick */
}


/* GCAllocationTick_V4: obj's allocation made the bytes of its kind pass 100 KiB. */
static void allocation_tick(tenure_runtime *rt, int kind, const tn_type *t, void *obj, size_t size, unsigned heap) {
    uint64_t amount = rt->heap.tick_bytes[kind];
    rt->heap.tick_bytes[kind] = 0;
    TN_EMIT(rt, GCAllocationTick_V4, .AllocationAmount = (uint32_t)amount, .AllocationKind = (uint32_t)kind,
            .AllocationAmount64 = amount, .TypeID = (uint64_t)(uintptr_t)t, .TypeName = t->name, .HeapIndex = heap,
            .Address = (uint64_t)(uintptr_t)obj, .ObjectSize = size);
}

/* The unused part of a context in a gap, [alloc_ptr, ctx_end), becomes a free object again
 * (H1: the region stays walkable from its start to its used end). Its cards' crossing entries
 * name it. */
static void close_gap_context(tenure_runtime *rt, tn_mutator *m) {
    char *tail = (char *)m->pub.alloc_ptr;
    size_t size = (size_t)((char *)m->ctx_end - tail);
    if (size) {
        tn_make_free(rt, tail, size);
        tn_heap_poison_free(rt, tail, size); /* GCPoisonFreed: as the GC leaves free space */
        tn_crossing_note_object(rt, tail, size);
        m->alloc_region->free_bytes += size; /* free again (take_gap counted it as used) */
    }
    m->ctx_in_gap = false;
}

void tn_alloc_reset_context(tenure_runtime *rt, tn_mutator *m) {
    tn_alloc_account_context(rt, m);
    if (m->ctx_in_gap)
        close_gap_context(rt, m);
    else if (m->alloc_region)
        m->alloc_region->used = (char *)m->pub.alloc_ptr;
    if (m->alloc_region)
        m->alloc_region->alloc_owner = NULL;
    m->alloc_region = NULL;
    m->pub.alloc_ptr = m->pub.alloc_limit = m->ctx_start = m->ctx_end = 0;
}

void tn_alloc_end_contexts(tenure_runtime *rt) {
    tn_assert_world_stopped(rt);
    for (tn_mutator *m = tn_mutators(rt); m; m = m->next)
        tn_alloc_reset_context(rt, m);
}

size_t tn_alloc_uncounted(tenure_runtime *rt) {
    tn_mutator *m = tn_self(rt);
    return m ? (size_t)(m->pub.alloc_ptr - m->ctx_start) : 0;
}

/* ---- sampled allocations (profiler) ----
 *
 * Each thread counts down to its next sample: its published limit is lowered to the point
 * where its bytes since the previous sample would pass the interval, so the inline fast path
 * runs on untouched and only the allocation that crosses takes the slow path (as the .NET
 * runtime lowers its allocation context's limit for AllocationTick). */

/* Bytes m has allocated since its previous sample (the latest object included). */
static uint64_t bytes_since_sample(const tn_mutator *m) {
    return m->allocated + (m->pub.alloc_ptr - m->ctx_start) - m->sampled_at;
}

void tn_alloc_restart_sampling(tenure_runtime *rt) {
    for (tn_mutator *m = tn_mutators(rt); m; m = m->next)
        m->sampled_at = m->allocated + (m->pub.alloc_ptr - m->ctx_start);
}

/* With rt->threads.lock held, after an allocation by m: the bytes since m's previous sample if this
 * allocation made them pass the interval (m's countdown starts again), else 0. */
static uint64_t take_sample(tenure_runtime *rt, tn_mutator *m) {
    tn_assert_locked(rt);
    uint64_t since = bytes_since_sample(m);
    uint64_t interval = tn_prof_sample_interval(rt);
    if (!interval || since <= interval)
        return 0;
    m->sampled_at += since;
    tn_alloc_publish_limit(rt, m);
    return since;
}

void tn_alloc_publish_limit(tenure_runtime *rt, tn_mutator *m) {
    /* under GCStress every allocation takes the slow path, so that it can count them; inside a
     * callback that may not allocate or a blocking section (SAFE), so that it is refused (a
     * thread parked at a safepoint while the world is stopped reopens at its next slow path) */
    bool closed =
        rt->config.GCStress || tn_prof_wants_every_allocation(rt) || m->callbacks_closed || m->state != TN_MUT_RUNNING;
    uintptr_t limit = closed ? m->pub.alloc_ptr : m->ctx_end;
    uint64_t interval = tn_prof_sample_interval(rt);
    if (interval && limit > m->pub.alloc_ptr) {
        uint64_t since = bytes_since_sample(m);
        uint64_t room = since < interval ? interval - since : 0;
        if (room < limit - m->pub.alloc_ptr)
            limit = m->pub.alloc_ptr + (uintptr_t)room;
    }
    m->pub.alloc_limit = limit;
}

tn_mutator *tn_alloc_close_for_callback(tenure_runtime *rt) {
    tn_mutator *m = tn_threads_ready(rt) ? tn_self(rt) : NULL;
    if (!m)
        return NULL;
    m->callbacks_closed++;
    m->pub.alloc_limit = m->pub.alloc_ptr;
    return m;
}

void tn_alloc_reopen_after_callback(tn_mutator *m) {
    if (--m->callbacks_closed == 0)
        tn_alloc_publish_limit(m->rt, m);
}

void tn_alloc_republish_limits(tenure_runtime *rt) {
    TN_LOCKED(rt);
    tn_world_stop(rt);
    for (tn_mutator *m = tn_mutators(rt); m; m = m->next)
        tn_alloc_publish_limit(rt, m);
    tn_world_restart(rt);
}

/* Zero [a, b) unless it is known to be zero; then it counts as dirty. */
static void prepare_memory(tn_region *r, char *a, char *b) {
    if (a < r->zero_from)
        memset(a, 0, (size_t)((b < r->zero_from ? b : r->zero_from) - a));
    if (b > r->zero_from)
        r->zero_from = b;
}

/* A gen0 region of `heap` other than `not`, holding no thread's context, with `room` bytes
 * free at its end (a demoted region whose pinned plugs stayed, or another thread's former
 * region), or NULL. */
static tn_region *gen0_region_with_room(tenure_runtime *rt, unsigned heap, const tn_region * not, size_t room) {
    for (tn_region *r = rt->heap.gens[TN_GEN0]; r; r = r->next)
        if (r != not &&r->heap == heap && !r->alloc_owner && (size_t)(r->end - r->used) >= room)
            return r;
    return NULL;
}

/* ---- contexts in the gaps between pinned plugs ----
 *
 * After a GC, the free objects of gen0 regions that kept pinned plugs (demoted) are listed in
 * rt->heap.gen0_gaps (gc/promote.c link_gen0_gaps). Before taking new space, the allocator cuts its
 * next context from the first listed gap whose region holds no other thread's context, as
 * the .NET collector allocates in the free list of gen0 built from the gaps in front of
 * pinned plugs. Contexts are cut from a gap's high end, a quantum at a time: the rest of the
 * gap stays the listed free object at the gap's start, whose cards' crossing entries already
 * name it (only its size word changes: no per-card work for what is left). A context ends on
 * a crossing-granule boundary (TN_CROSSING_GRANULE, two cards); the few bytes after it, up to
 * the pinned plug, become a free object of their own whose crossing entry names it, so finding the object at an address past a
 * context never walks through the context's zeroed, unparsable tail. Ending the context
 * (refill, a GC or a heap walk ending every context, tenure_generation_bounds) turns its
 * unused tail back into a free object. */

#define TN_GAP_SCAN 8 /* listed gaps looked at per refill: a refill costs a bounded walk */

/* Cut a context of about `want` bytes (at least `size`) from the first usable listed gap. */
static bool take_gap(tenure_runtime *rt, tn_mutator *m, size_t size, size_t want) {
    if (tn_gc_in_progress(rt))
        return false; /* the list is rebuilt by this GC */
    char **link = &rt->heap.gen0_gaps;
    for (int seen = 0; *link && seen < TN_GAP_SCAN; seen++, link = &((char **)*link)[2]) {
        char *g = *link;
        tn_region *r = tn_region_of(rt, g);
        size_t gsize = ((size_t *)g)[1];
        TN_ASSERT_INTERNAL(r->gen == TN_GEN0 && tn_is_free(g) && g + gsize <= r->used);
        if (r->alloc_owner || r->heap != m->alloc_heap)
            continue;
        char *gend = g + gsize;
        char *top = (char *)((uintptr_t)gend & ~(uintptr_t)(TN_CROSSING_GRANULE - 1));
        size_t take = tn_align_up(want, TN_CROSSING_GRANULE);
        char *from = top > g && (size_t)(top - g) > take + TN_GAP_MIN ? top - take : g;
        if (top <= from || (size_t)(top - from) < size)
            continue;
        if (top < gend) { /* up to the pinned plug: a free object its crossing entry can name */
            tn_make_free(rt, top, (size_t)(gend - top));
            tn_crossing_note_object(rt, top, (size_t)(gend - top));
        }
        if (from > g)
            ((size_t *)g)[1] = (size_t)(from - g); /* the rest stays listed, in place */
        else
            *link = ((char **)g)[2];
        memset(from, 0, (size_t)(top - from));
        tn_crossing_note_object(rt, from, (size_t)(top - from));
        /* the region's free bytes (the next GC's FreeObjBefore, tenure_stats) lose the context:
         * what it does not use comes back when it closes (close_gap_context) */
        TN_ASSERT_INTERNAL(r->free_bytes >= (size_t)(top - from));
        r->free_bytes -= (size_t)(top - from);
        r->alloc_owner = m;
        m->alloc_region = r;
        m->ctx_in_gap = true;
        m->pub.alloc_ptr = m->ctx_start = (uintptr_t)from;
        m->ctx_end = (uintptr_t)top;
        return true;
    }
    return false;
}

/* Make room for `size` bytes in m's allocation context. False if no region can be had. */
static bool refill(tenure_runtime *rt, tn_mutator *m, size_t size) {
    tn_alloc_account_context(rt, m);
    if (!m->alloc_heap_dealt)
        tn_heap_deal(rt, m);
    size_t want = size > TN_QUANTUM ? size : TN_QUANTUM;
    if (m->ctx_in_gap || (rt->heap.gen0_gaps && m->alloc_region)) {
        tn_alloc_reset_context(rt, m); /* counted above: nothing more to count */
        if (take_gap(rt, m, size, want))
            return true;
    } else if (rt->heap.gen0_gaps && take_gap(rt, m, size, want)) {
        return true;
    }
    tn_region *r = m->alloc_region;
    /* a thread moved to another heap (balanced) leaves its former heap's region */
    if (!r || r->heap != m->alloc_heap || (size_t)(r->end - (char *)m->pub.alloc_ptr) < size) {
        tn_region *next = gen0_region_with_room(rt, m->alloc_heap, r, want);
        if (!next)
            next = tn_region_acquire(rt, 1, TN_GEN0, m->alloc_heap);
        if (!next)
            return false;
        if (r) {
            r->used = (char *)m->pub.alloc_ptr;
            r->alloc_owner = NULL;
        }
        r = m->alloc_region = next;
        r->alloc_owner = m;
        m->pub.alloc_ptr = m->ctx_start = m->ctx_end = (uintptr_t)r->used;
    }
    char *from = (char *)m->ctx_end;
    char *to = (size_t)(r->end - (char *)m->pub.alloc_ptr) < want ? r->end : (char *)m->pub.alloc_ptr + want;
    if (to > from)
        prepare_memory(r, from, to);
    /* the next object starts at alloc_ptr: cards up to `to` find objects by walking from it */
    tn_crossing_note_object(rt, (char *)m->pub.alloc_ptr, (size_t)(to - (char *)m->pub.alloc_ptr));
    m->ctx_end = (uintptr_t)to;
    r->used = to;
    return true;
}

void tn_heap_set_gen0_gaps(tenure_runtime *rt, char *gaps) { rt->heap.gen0_gaps = gaps; }

/* ---- small object heap ---- */

/* The header, and for arrays the length, are written before anyone is told of the object. */
static inline void init_header(void *p, const tn_type *t, size_t length) {
    *(uintptr_t *)p = (uintptr_t)t;
    if (t->kind == TN_TK_ARRAY)
        ((tenure_array_header *)p)->length = length;
}

static void *alloc_small(tenure_runtime *rt, tn_mutator *m, const tn_type *t, size_t size, size_t length) {
    bool collected_for_budget = false, collected_for_space = false;
    tn_heap_stress_tick(rt);
    for (;;) {
        uintptr_t p = m->pub.alloc_ptr;
        if (size <= m->ctx_end - p) {
            m->pub.alloc_ptr = p + size;
            tn_alloc_publish_limit(rt, m);
            init_header((void *)p, t, length);
            if (rt->heap.tick_pending) {
                rt->heap.tick_pending = false;
                allocation_tick(rt, TN_ALLOC_KIND_SMALL, t, (void *)p, size, m->alloc_heap);
            }
            if (TN_PROF_ON(rt, TENURE_PROFILE_ALLOCATIONS))
                tn_prof_allocated(rt, (void *)p, t);
            return (void *)p;
        }
        if (!collected_for_budget && !tn_gc_in_progress(rt) && tn_heap_gen0_spent(rt, m)) {
            collected_for_budget = true;
            tn_heap_collect_for_budget(rt);
            continue;
        }
        if (refill(rt, m, size))
            continue;
        if (collected_for_space || tn_gc_in_progress(rt))
            return NULL;
        collected_for_space = true;
        tn_gc_collect(rt, TN_GEN2, TN_REASON_OOS_SOH, TENURE_COLLECT_COMPACT);
    }
}

/* ---- large and pinned object heaps: size-segregated free lists, first fit ---- */

static unsigned bucket_of(size_t size) {
    unsigned b = 63 - (unsigned)__builtin_clzll(size);
    return b < TN_FREE_BUCKETS ? b : TN_FREE_BUCKETS - 1;
}

void tn_free_list_clear(tn_free_list *fl) { memset(fl, 0, sizeof *fl); }

/* Chunks shorter than 24 bytes cannot hold the link; they stay plain free objects. */
void tn_free_list_add(tenure_runtime *rt, tn_free_list *fl, void *p, size_t size) {
    (void)rt;
    if (size < 24)
        return;
    unsigned b = bucket_of(size);
    ((void **)p)[2] = fl->buckets[b];
    fl->buckets[b] = p;
}

static void *take_chunk(tn_free_list *fl, size_t size) {
    for (unsigned b = bucket_of(size); b < TN_FREE_BUCKETS; b++) {
        for (void **link = &fl->buckets[b]; *link; link = &((void **)*link)[2]) {
            char *c = *link;
            size_t csize = ((size_t *)c)[1];
            if (csize == size || csize >= size + 8) {
                *link = ((void **)c)[2];
                return c;
            }
        }
    }
    return NULL;
}

tn_free_list *tn_heap_free_list(tenure_runtime *rt, int gen) {
    return gen == TN_LOH ? &rt->heap.loh_free : gen == TN_POH ? &rt->heap.poh_free : NULL;
}

/* A new large region of the allocating thread's heap (its free list is the generation's, shared
 * by the heaps: what it holds goes to whichever heap asks first). */
static bool grow_large(tenure_runtime *rt, int gen, size_t size, unsigned heap) {
    size_t units = (size + rt->unit_size - 1) / rt->unit_size;
    if (units < TN_LARGE_REGION_UNITS)
        units = TN_LARGE_REGION_UNITS;
    tn_region *r = tn_region_acquire(rt, (uint32_t)units, gen, heap);
    if (!r)
        return false;
    prepare_memory(r, r->start, r->end);
    r->used = r->end;
    tn_make_free(rt, r->start, (size_t)(r->end - r->start));
    tn_crossing_note_object(rt, r->start, (size_t)(r->end - r->start));
    tn_free_list_add(rt, tn_heap_free_list(rt, gen), r->start, (size_t)(r->end - r->start));
    r->free_bytes = (size_t)(r->end - r->start); /* all of it free until taken (alloc_large) */
    return true;
}

static void *alloc_large(tenure_runtime *rt, tn_mutator *m, const tn_type *t, size_t size, size_t length, int gen) {
    tn_heap_stress_tick(rt);
    if (!m->alloc_heap_dealt)
        tn_heap_deal(rt, m);
    const tn_older_budgets *o = &rt->heap.older[m->alloc_heap];
    /* (over budget while a background GC runs: that GC is the answer; asking again would run
     * a young GC per large allocation until it ends) */
    if (gen == TN_LOH && o->loh_allocated + size > o->loh_budget && !tn_gc_in_progress(rt) && !tn_bgc_in_progress(rt))
        tn_gc_collect(rt, TN_GEN2, TN_REASON_ALLOC_LARGE, 0);
    tn_free_list *fl = tn_heap_free_list(rt, gen);
    char *c;
    for (bool collected = false;;) {
        if ((c = take_chunk(fl, size)) != NULL)
            break;
        if (grow_large(rt, gen, size, m->alloc_heap))
            continue;
        if (collected || tn_gc_in_progress(rt))
            return NULL;
        collected = true;
        tn_gc_collect(rt, TN_GEN2, gen == TN_LOH ? TN_REASON_OOS_LOH : TN_REASON_OOS_SOH, TENURE_COLLECT_COMPACT);
    }
    size_t csize = ((size_t *)c)[1];
    tn_region *r = tn_region_of(rt, c);
    TN_ASSERT_INTERNAL(r && r->free_bytes >= size);
    r->free_bytes -= size; /* (the rest of the chunk stays free) */
    if (csize > size) {
        tn_make_free(rt, c + size, csize - size);
        tn_crossing_note_object(rt, c + size, csize - size);
        tn_free_list_add(rt, fl, c + size, csize - size);
    }
    memset(c, 0, size);
    init_header(c, t, length);
    tn_crossing_note_object(rt, c, size);
    tn_bgc_allocated_large(rt, c); /* (black while a background GC marks) */
    if (gen == TN_LOH)
        rt->heap.older[m->alloc_heap].loh_allocated += size;
    rt->stats.bytes_allocated += size;
    int kind = gen == TN_LOH ? TN_ALLOC_KIND_LARGE : TN_ALLOC_KIND_PINNED;
    rt->heap.tick_bytes[kind] += size;
    if (rt->heap.tick_bytes[kind] >= TN_TICK_BYTES)
        allocation_tick(rt, kind, t, c, size, m->alloc_heap);
    if (TN_PROF_ON(rt, TENURE_PROFILE_ALLOCATIONS))
        tn_prof_allocated(rt, c, t);
    return c;
}

/* ---- the public entry points ---- */

static bool check_type(tenure_runtime *rt, const tenure_type *type, const char *fn) {
    if (!type || !tn_type_valid(rt, type) || ((const tn_type *)type)->kind == TN_TK_FREE) {
        tn_api_fail(rt, TENURE_INVALID_TYPE, fn, "%p is not a type of this instance", (const void *)type);
        return false;
    }
    return true;
}

/* The calling thread may allocate: it is attached, running, and not inside a collection. */
static tn_mutator *allocating_thread(tenure_runtime *rt, const char *fn) {
    tn_mutator *m = tn_self(rt);
    if (!m)
        tn_api_fail(rt, TENURE_STATE, fn, "the calling thread is not attached to this instance");
    else if (m->state != TN_MUT_RUNNING)
        tn_api_fail(rt, TENURE_STATE, fn, "allocation inside a blocking section");
    else if (tn_gc_in_progress(rt))
        tn_api_fail(rt, TENURE_STATE, fn, "allocation during a collection (from a callback?)");
    else
        return m;
    return NULL;
}

/* NULL with the result code set: out of memory. *sampled: the bytes since m's previous
 * sample when this object is sampled, else 0. */
static void *alloc_locked(tenure_runtime *rt, tn_mutator *m, const tn_type *t, size_t size, size_t length, bool pinned,
                          const char *fn, uint64_t *sampled) {
    TN_LOCKED(rt);
    bool large = pinned || size >= rt->config.GCLOHThreshold;
    void *obj =
        large ? alloc_large(rt, m, t, size, length, pinned ? TN_POH : TN_LOH) : alloc_small(rt, m, t, size, length);
    if (!obj) {
        tn_api_fail(rt, TENURE_NOMEM, fn, "no memory for %zu bytes of %s", size, t->name);
        return NULL;
    }
    if (large)
        m->allocated += size; /* small objects are counted with their context */
    *sampled = take_sample(rt, m);
    if (t->finalize && !tn_finalize_register(rt, obj)) {
        tn_api_fail(rt, TENURE_NOMEM, fn, "no memory to register %s for finalization", t->name);
        return NULL; /* unregistered, the object is garbage */
    }
    return obj;
}

static void *alloc_sized(tenure_runtime *rt, const tn_type *t, size_t size, size_t length, bool pinned,
                         const char *fn) {
    if (tn_cb_refused(rt, TN_OP_ALLOC, fn))
        return NULL;
    tn_finalize_safepoint(rt); /* the program's objects are all rooted here: finalizers may run */
    tn_mutator *m = allocating_thread(rt, fn);
    if (!m)
        return NULL;
    uint64_t sampled = 0;
    void *obj = alloc_locked(rt, m, t, size, length, pinned, fn, &sampled);
    /* the sampled callback runs after the lock is released (see tenure_profiler.h) */
    return obj && sampled ? tn_prof_sampled(rt, m, obj, t, sampled) : obj;
}

static void *alloc_fixed(tenure_runtime *rt, const tenure_type *type, bool pinned, const char *fn) {
    if (!rt || !check_type(rt, type, fn))
        return NULL;
    const tn_type *t = (const tn_type *)type;
    if (t->kind != TN_TK_FIXED) {
        tn_api_fail(rt, TENURE_INVALID_ARGUMENT, fn, "%s is an array type: use tenure_alloc_array", t->name);
        return NULL;
    }
    return alloc_sized(rt, t, t->size, 0, pinned, fn);
}

static void *alloc_array(tenure_runtime *rt, const tenure_type *type, size_t length, bool pinned, const char *fn) {
    if (!rt || !check_type(rt, type, fn))
        return NULL;
    const tn_type *t = (const tn_type *)type;
    if (t->kind != TN_TK_ARRAY) {
        tn_api_fail(rt, TENURE_INVALID_ARGUMENT, fn, "%s is not an array type", t->name);
        return NULL;
    }
    size_t size = tn_array_size(t, length);
    if (size == 0 || size > rt->range / 2) {
        tn_api_fail(rt, TENURE_SIZE, fn, "an array of %zu elements of %zu bytes is impossible", length, t->elem_size);
        return NULL;
    }
    return alloc_sized(rt, t, size, length, pinned, fn);
}

void *tenure__alloc_slow(tenure_runtime *rt, const tenure_type *type) {
    return alloc_fixed(rt, type, false, "tenure_alloc");
}

void *tenure_alloc_pinned(tenure_runtime *rt, const tenure_type *type) {
    return alloc_fixed(rt, type, true, "tenure_alloc_pinned");
}

void *tenure__alloc_array_slow(tenure_runtime *rt, const tenure_type *type, size_t length) {
    return alloc_array(rt, type, length, false, "tenure_alloc_array");
}

void *tenure_alloc_array_pinned(tenure_runtime *rt, const tenure_type *type, size_t length) {
    return alloc_array(rt, type, length, true, "tenure_alloc_array_pinned");
}

/* ---- consistency check (base/assert.h) ---- */

/* m's allocation context lies in its own region: ctx_start <= alloc_ptr <= alloc_limit <=
 * ctx_end, inside [start, end) of alloc_region, whose alloc_owner is m; no region, no context. */
void tn_alloc_context_check(const tenure_runtime *rt, const tn_mutator *m) {
    const tn_region *r = m->alloc_region;
    if (!r) {
        TN_ASSERT_INTERNAL(m->pub.alloc_ptr == m->pub.alloc_limit && m->ctx_end == 0);
        return;
    }
    tn_region_check(rt, r);
    TN_ASSERT_INTERNAL(r->alloc_owner == m && r->gen == TN_GEN0);
    TN_ASSERT_INTERNAL(m->ctx_start <= m->pub.alloc_ptr && m->pub.alloc_ptr <= m->pub.alloc_limit);
    TN_ASSERT_INTERNAL(m->pub.alloc_limit <= m->ctx_end);
    TN_ASSERT_INTERNAL((uintptr_t)r->start <= m->ctx_start && m->ctx_end <= (uintptr_t)r->end);
    /* a context in a gap ends on a crossing-granule boundary inside the region's objects */
    TN_ASSERT_INTERNAL(!m->ctx_in_gap ||
                       (m->ctx_end <= (uintptr_t)r->used && !(m->ctx_end & (TN_CROSSING_GRANULE - 1))));
}
