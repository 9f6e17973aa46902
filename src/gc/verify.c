/* verify.c - the heap verifier (HeapVerify): checks invariants H1-H6 of runtime.h over every
 * region and every root, and reports each problem through the error hook. */
#include "runtime.h"

#define MAX_REPORTS 20

typedef struct verifier {
    tenure_runtime *rt;
    const char *function; /* reported as the failing function */
    const char *when;
    size_t problems;
    const char *where; /* what is being checked: "object", "root" */
    const void *holder;
} verifier;

static void problem(verifier *v, const char *what, const void *at, const void *value) {
    if (v->problems++ < MAX_REPORTS)
        tn_api_fail(v->rt, TENURE_HEAP_CORRUPT, v->function, "%s: %s %p: %s (value %p)", v->when, v->where,
                    v->holder ? v->holder : at, what, value);
}

static bool is_start(tenure_runtime *rt, const void *p) { return tn_bit_test(rt->mark_bits, tn_bit_index(rt, p)); }

static void check_ref(verifier *v, void **slot, bool in_heap) {
    tenure_runtime *rt = v->rt;
    void *t = *slot;
    if (!t)
        return;
    if (!tn_in_range(rt, t)) {
        if (!tn_frozen_is_object(rt, t))
            problem(v, "reference outside the heap (not an object of this instance)", slot, t);
        return;
    }
    tn_region *r = tn_region_of(rt, t);
    if (!r || (uintptr_t)t & 7 || !is_start(rt, t)) {
        problem(v, "reference to something that is not the start of an object", slot, t);
        return;
    }
    if (tn_is_free(t)) {
        problem(v, "reference to free space", slot, t);
        return;
    }
    if (!in_heap)
        return;
    uint8_t tgen = rt->unit_gen[tn_unit_of(rt, t)];
    uint8_t card = rt->cards[((uintptr_t)slot - (uintptr_t)rt->base) >> TENURE__CARD_SHIFT];
    if (tgen < rt->unit_gen[tn_unit_of(rt, slot)] && (card == 0 || card > tgen + 1))
        problem(v, "old-to-young reference under a clean card (missed write barrier)", slot, t);
    else if (card && !rt->card_bundles[((uintptr_t)slot - (uintptr_t)rt->base) >> TENURE__BUNDLE_SHIFT])
        problem(v, "dirty card in a clean card bundle", slot, t);
}

static void check_heap_slot(void **slot, void *ctx) { check_ref(ctx, slot, true); }
static void check_root_slot(void **slot, void *ctx) { check_ref(ctx, slot, false); }

/* Walk a region: headers, sizes, bounds; mark each object start in the mark bitmap. */
static void walk_region(verifier *v, tn_region *r, bool record) {
    tenure_runtime *rt = v->rt;
    char *end = tn_region_walk_end(rt, r);
    v->where = "object";
    for (char *o = r->start; o < end;) {
        v->holder = o;
        tn_type *t = tn_obj_type(o);
        if (!tn_type_valid(rt, t)) {
            problem(v, "header is not a type of this instance", o, (void *)t);
            return;
        }
        size_t size = tn_obj_size_t(t, o);
        if (size < 8 || size % 8 || (t->kind != TN_TK_FREE && size < TN_MIN_OBJECT) || size > (size_t)(end - o)) {
            problem(v, "impossible size", o, (void *)size);
            return;
        }
        if (record) {
            tn_bit_set(rt->mark_bits, tn_bit_index(rt, o));
        } else if (r->gen != TN_GEN0) {
            uintptr_t off = (uintptr_t)o - (uintptr_t)rt->base;
            uintptr_t cs = (off + TN_CARD_SIZE - 1) & ~(uintptr_t)(TN_CARD_SIZE - 1);
            if (cs < off + size && rt->crossing[cs >> TENURE__CARD_SHIFT] != (cs - off) / 8)
                problem(v, "crossing table does not name the object covering a card", o, NULL);
        }
        o += size;
    }
}

static void check_bits_clear(verifier *v, tn_region *r) {
    tenure_runtime *rt = v->rt;
    size_t from = tn_bit_index(rt, r->start), to = tn_bit_index(rt, r->end);
    if (tn_bit_next(rt->mark_bits, from, to) != to || tn_bit_next(rt->pin_bits, from, to) != to ||
        tn_bit_next(rt->plug_bits, from, to) != to) {
        v->holder = r->start;
        v->where = "region";
        problem(v, "side bitmaps not clear outside a GC", r->start, NULL);
    }
}

static void check_objects(verifier *v, tn_region *r) {
    tenure_runtime *rt = v->rt;
    char *end = tn_region_walk_end(rt, r);
    v->where = "object";
    for (char *o = r->start; o < end;) {
        tn_type *t = tn_obj_type(o);
        size_t size = tn_obj_size_t(t, o);
        if (t->kind != TN_TK_FREE) {
            v->holder = o;
            tn_obj_visit_slots(rt, o, check_heap_slot, v);
        }
        o += size;
    }
}

#define FOR_EACH_REGION(rt, r)                                                                   \
    for (size_t i_ = 0; i_ < (rt)->units_high; i_++)                                             \
        for (tn_region *r = &(rt)->regions[i_]; r; r = NULL)                                     \
            if (r->state == TN_RS_IN_USE && (rt)->unit_head[i_] == i_)

static size_t verify(tenure_runtime *rt, const char *function, const char *when) {
    verifier v = {rt, function, when, 0, "object", NULL};
    FOR_EACH_REGION(rt, r) check_bits_clear(&v, r);
    if (v.problems)
        return v.problems; /* the start bitmap below would be wrong */
    FOR_EACH_REGION(rt, r) walk_region(&v, r, true);
    FOR_EACH_REGION(rt, r) walk_region(&v, r, false);
    if (!v.problems) /* objects can only be read once every header is sound */
        FOR_EACH_REGION(rt, r) check_objects(&v, r);
    v.where = "root";
    v.holder = NULL;
    tn_roots_visit_stack(rt, check_root_slot, &v);
    tn_roots_visit_handles(rt, 0xffffffffu, check_root_slot, &v);
    tn_roots_visit_secondaries(rt, check_root_slot, &v);
    tn_finalize_visit_ready(rt, check_root_slot, &v);
    tn_finalize_visit_registered(rt, check_root_slot, &v);
    FOR_EACH_REGION(rt, r) {
        size_t from = tn_bit_index(rt, r->start), to = tn_bit_index(rt, r->end);
        tn_bits_clear(rt->mark_bits, from, to);
    }
    return v.problems;
}

size_t tn_gc_verify(tenure_runtime *rt, const char *when) { return verify(rt, "HeapVerify", when); }

tenure_result tenure_verify_heap(tenure_runtime *rt) {
    if (tn_cb_refused(rt, TN_OP_WALK, "tenure_verify_heap"))
        return TENURE_STATE;
    TN_LOCKED(rt);
    if (!rt)
        return TENURE_INVALID_ARGUMENT;
    if (rt->in_gc)
        return tn_api_fail(rt, TENURE_STATE, "tenure_verify_heap", "called during a collection");
    tn_world_stop(rt);
    tn_alloc_end_contexts(rt); /* the heap is walkable */
    size_t problems = verify(rt, "tenure_verify_heap", "on request");
    tn_world_restart(rt);
    return problems ? TENURE_HEAP_CORRUPT : TENURE_OK;
}

/* Checked with the instance lock held: the slot must lie inside obj, obj must be an object
 * and value NULL, an object, or outside the heap. */
static bool barrier_arguments_valid(tenure_runtime *rt, void *obj, void *slot, void *value) {
    static const char fn[] = "tenure_write_ref";
    if (!tn_is_object(rt, obj)) {
        tn_api_fail(rt, TENURE_INVALID_OBJECT, fn, "%p is not an object of this instance", obj);
        return false;
    }
    if ((char *)slot < (char *)obj + sizeof(tenure_header) || (char *)slot + sizeof(void *) > (char *)obj + tn_obj_size(obj)) {
        tn_api_fail(rt, TENURE_INVALID_ARGUMENT, fn, "slot %p is not inside object %p", slot, obj);
        return false;
    }
    if (value && tn_in_range(rt, value) && !tn_is_object(rt, value)) {
        tn_api_fail(rt, TENURE_INVALID_OBJECT, fn, "stored value %p is not an object of this instance", value);
        return false;
    }
    return true;
}

/* The checked write barrier (HeapVerify). The inline barrier is never a safepoint, so neither
 * is this: the arguments are checked only when the instance lock is free at once (another
 * thread holding it means the store goes unchecked; the verifier still checks its card at
 * the next GC). */
void tenure__write_ref_slow(tenure_runtime *rt, void *obj, void *slot, void *value) {
    if (tn_trylock(rt)) {
        bool valid = barrier_arguments_valid(rt, obj, slot, value);
        tn_unlock(rt);
        if (!valid)
            return;
    }
    tenure__store_ref(&rt->head, slot, value);
}
