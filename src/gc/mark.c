/* mark.c - the mark phase: roots kind by kind, old-to-young references through dirty cards,
 * an explicit bounded mark stack whose overflow is recovered by rescanning, and the clearing
 * of weak handles. Invariant M1: after tn_gc_mark every object reachable from the roots in a
 * condemned region has its mark bit set; nothing else in a condemned region does. */
#include "runtime.h"

static inline bool mark_object(tenure_runtime *rt, tn_region *r, char *obj) {
    size_t bit = tn_bit_index(rt, obj);
    uint64_t *w = &rt->mark_bits[bit >> 6], m = (uint64_t)1 << (bit & 63);
    if (*w & m)
        return false;
    *w |= m;
    size_t size = tn_obj_size(obj);
    rt->marked_bytes += size;
    r->live_bytes += size;
    return true;
}

static void push(tenure_runtime *rt, char *obj) {
    tn_vec *s = &rt->mark_stack;
    TN_ASSERT_INTERNAL(tn_in_range(rt, obj));
    if (s->count < s->cap) {
        ((char **)s->data)[s->count++] = obj;
        return;
    }
    /* overflow: obj stays marked but unscanned; remember the range to rescan */
    if (!rt->mark_overflow || obj < rt->overflow_lo)
        rt->overflow_lo = obj;
    if (!rt->mark_overflow || obj > rt->overflow_hi)
        rt->overflow_hi = obj;
    if (!rt->mark_overflow)
        rt->stats.mark_stack_overflows++;
    rt->mark_overflow = true;
}

/* The region of a condemned object that v refers to, or NULL. The generation byte of the
 * unit rejects references to older generations with one load. */
static inline tn_region *condemned_region(tenure_runtime *rt, const void *v) {
    if (!v || !tn_in_range(rt, v) || rt->unit_gen[tn_unit_of(rt, v)] > rt->last.condemned)
        return NULL;
    tn_region *r = tn_region_of(rt, v);
    return r && r->condemned ? r : NULL;
}

static inline void mark_slot(void **slot, void *ctx) {
    tenure_runtime *rt = ctx;
    char *v = *slot;
    tn_region *r = condemned_region(rt, v);
    if (r && mark_object(rt, r, v))
        push(rt, v);
}

static void drain(tenure_runtime *rt) {
    tn_vec *s = &rt->mark_stack;
    while (s->count) {
        char *obj = ((char **)s->data)[--s->count];
        tn_obj_visit_slots(rt, obj, mark_slot, rt);
    }
}

/* Rescan marked objects in the overflow range until no overflow is left. */
static void process_overflow(tenure_runtime *rt) {
    while (rt->mark_overflow) {
        char *lo = rt->overflow_lo, *hi = rt->overflow_hi;
        rt->mark_overflow = false;
        size_t last = tn_unit_of(rt, hi);
        for (size_t u = rt->unit_head[tn_unit_of(rt, lo)]; u <= last;) {
            tn_region *r = &rt->regions[u];
            u += r->state == TN_RS_IN_USE ? r->units : 1;
            if (r->state != TN_RS_IN_USE || !r->condemned)
                continue;
            size_t from = tn_bit_index(rt, lo > r->start ? lo : r->start);
            size_t end = tn_bit_index(rt, hi) + 1, used_end = tn_bit_index(rt, r->used);
            if (end > used_end)
                end = used_end;
            for (size_t b = tn_bit_next(rt->mark_bits, from, end); b < end; b = tn_bit_next(rt->mark_bits, b + 1, end)) {
                tn_obj_visit_slots(rt, rt->base + b * 8, mark_slot, rt);
                drain(rt);
            }
        }
    }
}

static void drain_all(tenure_runtime *rt) {
    drain(rt);
    if (!rt->mark_overflow)
        return;
    size_t before = rt->marked_bytes;
    process_overflow(rt);
    rt->overflow_marked += rt->marked_bytes - before;
    rt->overflow_seen = true;
}

/* Roots are traced depth first, one at a time, so that millions of roots do not overflow
 * the mark stack. */
static void mark_root_slot(void **slot, void *ctx) {
    tenure_runtime *rt = ctx;
    mark_slot(slot, ctx);
    if (rt->mark_stack.count)
        drain(rt);
}

/* Pin and mark v; handle_id is the pinning handle (0 for a conservative stack root). */
static void pin_object(tenure_runtime *rt, char *v, uint64_t handle_id) {
    tn_region *r = condemned_region(rt, v);
    if (!r)
        return;
    size_t bit = tn_bit_index(rt, v);
    if (!tn_bit_test(rt->pin_bits, bit)) {
        tn_bit_set(rt->pin_bits, bit);
        rt->pinned_objects++;
        TN_EMIT(rt, PinObjectAtGCTime, .HandleID = handle_id, .ObjectID = (uint64_t)(uintptr_t)v,
                .ObjectSize = tn_obj_size(v), .TypeName = tn_obj_type(v)->name);
    }
    if (mark_object(rt, r, v))
        push(rt, v);
}

/* A pinned handle's slot is the handle itself (the object is its first field). */
static void pin_handle_slot(void **slot, void *ctx) { pin_object(ctx, *slot, (uint64_t)(uintptr_t)slot); }
static void pin_stack_word(void *obj, void *word, void *ctx) {
    (void)word;
    pin_object(ctx, obj, 0);
}

static void clear_weak(void **slot, void *ctx) {
    tenure_runtime *rt = ctx;
    char *v = *slot;
    if (condemned_region(rt, v) && !tn_bit_test(rt->mark_bits, tn_bit_index(rt, v)))
        *slot = NULL;
}

#define KIND_BIT(k) (1u << (k))

static void mark_sized_ref(tn_handle_slot *h, void *ctx) {
    tenure_runtime *rt = ctx;
    size_t before = rt->marked_bytes;
    if (h->object) {
        mark_root_slot(&h->object, rt);
        drain_all(rt);
    }
    h->sized_bytes = rt->marked_bytes - before;
}

/* AsyncPinned: the object, and each element of a reference array, are pinned. */
static void pin_async(tn_handle_slot *h, void *ctx) {
    tenure_runtime *rt = ctx;
    if (!h->object)
        return;
    pin_object(rt, h->object, (uint64_t)(uintptr_t)h);
    tn_type *t = tn_obj_type(h->object);
    if (t->kind != TN_TK_ARRAY || t->trace || t->elem_ref_count != 1 || t->elem_size != sizeof(void *) ||
        t->elem_ref_offsets[0] != 0)
        return;
    void **e = tenure_array_data(h->object);
    for (size_t i = 0, n = tenure_array_length(h->object); i < n; i++)
        if (e[i])
            pin_object(rt, e[i], (uint64_t)(uintptr_t)h);
}

/* Alive after this GC: NULL is not, an object outside the condemned regions is, a condemned
 * one is if marked. */
static bool survives(tenure_runtime *rt, void *v) {
    if (!v)
        return false;
    return !condemned_region(rt, v) || tn_bit_test(rt->mark_bits, tn_bit_index(rt, v));
}

typedef struct dep_pass {
    tenure_runtime *rt;
    bool changed;
} dep_pass;

static void mark_dependent(tn_handle_slot *h, void *ctx) {
    dep_pass *p = ctx;
    tenure_runtime *rt = p->rt;
    if (!h->secondary || !survives(rt, h->object) || survives(rt, h->secondary))
        return;
    mark_root_slot(&h->secondary, rt);
    drain_all(rt);
    p->changed = true;
}

/* Ephemerons: a secondary lives if its primary does, which marking it may change for other
 * handles: repeat until nothing changes. */
static void mark_dependents(tenure_runtime *rt) {
    dep_pass p = {rt, true};
    while (p.changed) {
        p.changed = false;
        tn_roots_visit_handle_slots(rt, KIND_BIT(TENURE_HANDLE_DEPENDENT), mark_dependent, &p);
    }
}

static bool is_dead_now(tenure_runtime *rt, const void *v) { return !survives(rt, (void *)v); }

static void queue_for_finalization(tenure_runtime *rt, void **slot) {
    if (TN_PROF_ON(rt, TENURE_PROFILE_GC))
        tn_prof_finalizeable_queued(rt, *slot);
    mark_root_slot(slot, rt);
    drain_all(rt);
}

/* A dependent handle keeps its secondary exactly while its primary is alive: a primary that
 * died, or none at all, leaves neither. */
static void clear_dependent(tn_handle_slot *h, void *ctx) {
    if (!h->object || !survives(ctx, h->object))
        h->object = h->secondary = NULL;
}

/* GCMarkWithType for one root kind: the bytes it marked, overflow processing excluded. */
typedef struct kind_meter {
    size_t marked, overflow;
} kind_meter;

static kind_meter meter_start(const tenure_runtime *rt) { return (kind_meter){rt->marked_bytes, rt->overflow_marked}; }

static void meter_end(tenure_runtime *rt, kind_meter m, uint32_t type) {
    size_t bytes = (rt->marked_bytes - m.marked) - (rt->overflow_marked - m.overflow);
    TN_EMIT(rt, GCMarkWithType, .HeapNum = 0, .Type = type, .Bytes = bytes);
}

void tn_gc_mark(tenure_runtime *rt, int condemned) {
    rt->marked_bytes = rt->overflow_marked = 0;
    rt->overflow_seen = false;
    rt->pinned_objects = 0;
    rt->mark_overflow = false;
    rt->mark_stack.count = 0; /* reserved before the pause (scratch.c): it never grows */

    tn_handles_prepare(rt);
    /* SizedRef (full GCs): each handle's graph first, one handle after the other */
    kind_meter m;
    if (condemned == TN_GEN2 && rt->handle_count) {
        m = meter_start(rt);
        tn_roots_visit_handle_slots(rt, KIND_BIT(TENURE_HANDLE_SIZED_REF), mark_sized_ref, rt);
        meter_end(rt, m, TN_ROOT_SIZEDREF);
    }
    /* Stack: shadow frames, root areas, root scanners, frozen segments, and the stack itself
     * conservatively */
    m = meter_start(rt);
    tn_roots_visit_stack(rt, mark_root_slot, rt);
    tn_roots_scan_conservative(rt, true, pin_stack_word, rt);
    drain_all(rt);
    meter_end(rt, m, TN_ROOT_STACK);
    /* Finalizer: objects waiting for their finalizer */
    if (rt->ready.count > rt->ready_head) {
        m = meter_start(rt);
        tn_finalize_visit_ready(rt, mark_root_slot, rt);
        drain_all(rt);
        meter_end(rt, m, TN_ROOT_FINALIZER);
    }
    /* Handle: pinned handles pin, strong handles keep alive */
    m = meter_start(rt);
    tn_roots_visit_handles(rt, KIND_BIT(TENURE_HANDLE_PINNED), pin_handle_slot, rt);
    tn_roots_visit_handle_slots(rt, KIND_BIT(TENURE_HANDLE_ASYNC_PINNED), pin_async, rt);
    tn_roots_visit_handles(rt, KIND_BIT(TENURE_HANDLE_STRONG) | KIND_BIT(TENURE_HANDLE_SIZED_REF), mark_root_slot, rt);
    drain_all(rt);
    meter_end(rt, m, TN_ROOT_HANDLE);
    /* Older: old-to-young references under dirty cards */
    if (condemned < TN_GEN2) {
        m = meter_start(rt);
        tn_gc_mark_cards(rt, condemned, mark_root_slot, rt); /* cards.c */
        drain_all(rt);
        meter_end(rt, m, TN_ROOT_OLDER);
    }
    /* DependentHandle: secondaries of live primaries, to a fixed point */
    if (rt->handle_count) {
        m = meter_start(rt);
        mark_dependents(rt);
        meter_end(rt, m, TN_ROOT_DEPENDENT_HANDLE);
    }
    /* short weak handles of dead objects are cleared before finalization is scanned, long
     * ones after it (they track resurrection); dependent handles whose primary died lose both
     * objects */
    tn_roots_visit_handles(rt, KIND_BIT(TENURE_HANDLE_WEAK_SHORT), clear_weak, rt);
    /* NewFQ: unreachable finalizable objects go to the ready queue and are marked through */
    if (rt->finalizable.count) {
        m = meter_start(rt);
        size_t n = tn_finalize_scan(rt, is_dead_now, queue_for_finalization);
        rt->last.finalization_promoted_count = n;
        rt->last.finalization_promoted_bytes = (rt->marked_bytes - m.marked) - (rt->overflow_marked - m.overflow);
        meter_end(rt, m, TN_ROOT_NEW_FQ);
        if (n && rt->handle_count) { /* DependentHandle again: resurrection may revive primaries */
            m = meter_start(rt);
            mark_dependents(rt);
            meter_end(rt, m, TN_ROOT_DEPENDENT_HANDLE);
        }
    }
    tn_roots_visit_handles(rt, KIND_BIT(TENURE_HANDLE_WEAK_LONG), clear_weak, rt);
    tn_roots_visit_handle_slots(rt, KIND_BIT(TENURE_HANDLE_DEPENDENT), clear_dependent, rt);
    if (rt->overflow_seen)
        TN_EMIT(rt, GCMarkWithType, .HeapNum = 0, .Type = TN_ROOT_OVERFLOW, .Bytes = rt->overflow_marked);
}

/* ---- consistency check (api/assert.h) ---- */

/* The mark stack holds pointers into the heap's range, no more than it has room for (it is
 * reserved before the pause and never grows inside it). */
void tn_mark_stack_check(const tenure_runtime *rt) {
    const tn_vec *s = &rt->mark_stack;
    TN_ASSERT_INTERNAL(s->count <= s->cap && (s->cap == 0 || s->data != NULL));
    TN_ASSERT_INTERNAL(s->count == 0 || s->elem == sizeof(void *));
    for (size_t i = 0; i < s->count; i++)
        TN_ASSERT_EXPENSIVE(tn_in_range(rt, ((char *const *)s->data)[i]));
}
