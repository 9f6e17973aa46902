/* verify.c - the heap verifier (HeapVerify): checks invariants H1-H7 of runtime.h over every
 * region and every root. Each problem names what holds the bad word (an object with its type
 * and field or element, or a kind of root), the GC (its index, before or after it) and the
 * value. With an error hook, the hook gets each report and decides (the program goes on if it
 * returns); without one, the reports go to stderr and a verification around a GC aborts the
 * process: corruption is never silent. Its cost is proportional to the memory in use: the
 * side bitmaps are checked and cleared only up to each region's used end. */
#include "runtime.h"
#include "heap/crossing.h"
#include "gc/collection.h"
#include <stdio.h>
#include <stdlib.h>

#define MAX_REPORTS 20

typedef struct verifier {
    tenure_runtime *rt;
    const char *function; /* reported as the failing function */
    char when[48];        /* "before GC 12", "after GC 12", "on request after GC 12" */
    size_t problems;
    const char *where;    /* what holds the slots being checked: "object", a kind of root */
    const void *holder;   /* the object (or region) holding them, or NULL */
    const void *previous; /* walking a region: the object before `holder` */
    int exact_upto;       /* after a GC: cards of value 1..exact_upto must be exact (H7) */
} verifier;

/* The type's name if t is a type of this instance, else "?". */
static const char *type_name(const tenure_runtime *rt, const void *t) {
    return tn_type_valid(rt, t) ? ((const tn_type *)t)->name : "?";
}

/* " of type T, field at offset N" / ", element I (offset N in the element)" for a slot of obj. */
static void describe_slot(const tenure_runtime *rt, const char *obj, const void *slot, char *out, size_t cap) {
    const tn_type *t = tn_obj_type(obj);
    if (!tn_type_valid(rt, t)) {
        snprintf(out, cap, " (header %p is not a type)", (void *)t);
        return;
    }
    size_t off = (size_t)((const char *)slot - obj);
    if (!slot || slot == (const void *)obj)
        snprintf(out, cap, " of type %s", t->name);
    else if (t->kind == TN_TK_ARRAY && off >= t->size && t->elem_size)
        snprintf(out, cap, " of type %s, element %zu (offset %zu in the element)", t->name,
                 (off - t->size) / t->elem_size, (off - t->size) % t->elem_size);
    else
        snprintf(out, cap, " of type %s, field at offset %zu", t->name, off);
}

static void report(verifier *v, const char *message) {
    tenure_runtime *rt = v->rt;
    if (rt->services.error_hook) {
        tn_api_fail(rt, TENURE_HEAP_CORRUPT, v->function, "%s", message);
        return;
    }
    rt->services.last_error = TENURE_HEAP_CORRUPT;
    fprintf(stderr, "tenure: %s: heap corruption: %s\n", v->function, message);
}

static void problem(verifier *v, const char *what, const void *slot, const void *value) {
    if (v->problems++ >= MAX_REPORTS)
        return;
    char holder[200] = "", before[160] = "", message[512];
    bool object = v->holder && strcmp(v->where, "object") == 0;
    if (object)
        describe_slot(v->rt, v->holder, slot, holder, sizeof holder);
    else if (slot && v->holder)
        snprintf(holder, sizeof holder, " (slot %p)", slot);
    if (object && v->previous)
        snprintf(before, sizeof before, "; the object before it is %p of type %s", v->previous,
                 type_name(v->rt, tn_obj_type(v->previous)));
    snprintf(message, sizeof message, "%s: %s %p%s: %s (value %p)%s", v->when, v->where, v->holder ? v->holder : slot,
             holder, what, value, before);
    report(v, message);
}

/* What a reference may hold (H3; tenure.h, "The write barrier"): NULL, an object of this
 * instance's heap, or an object of a frozen segment registered with it. The verifier and the
 * checked barrier say what breaks the rule in the same words. */
static const char NOT_HEAP_OR_FROZEN[] =
    "reference outside the heap that is not a frozen object of this instance (a static or malloc'd "
    "block, or another instance's object?)";
static const char NOT_OBJECT_START[] = "reference to something that is not the start of an object";

static bool is_start(tenure_runtime *rt, const void *p) { return tn_bit_test(rt->mark_bits, tn_bit_index(rt, p)); }

static void check_ref(verifier *v, void **slot, bool in_heap) {
    tenure_runtime *rt = v->rt;
    void *t = *slot;
    if (!t)
        return;
    if (!tn_in_range(rt, t)) {
        if (!tn_frozen_is_object(rt, t))
            problem(v, NOT_HEAP_OR_FROZEN, slot, t);
        return;
    }
    tn_region *r = tn_region_of(rt, t);
    if (!r || (uintptr_t)t & 7 || !is_start(rt, t)) {
        problem(v, NOT_OBJECT_START, slot, t);
        return;
    }
    if (tn_is_free(t)) {
        problem(v, "reference to free space", slot, t);
        return;
    }
    if (tn_unswept_dead(rt, r, t)) {
        problem(v, "reference to an object the background GC found unreachable (H8: its marking lost it)", slot, t);
        return;
    }
    if (!in_heap)
        return;
    uint8_t tgen = rt->unit_gen[tn_unit_of(rt, t)];
    uint8_t card = tn_gc_card_value(rt, slot), bundle = tn_gc_bundle_value(rt, slot);
    if (tgen < rt->unit_gen[tn_unit_of(rt, slot)] && (card == 0 || card > tgen + 1))
        problem(v, "old-to-young reference under a clean card (missed write barrier)", slot, t);
    else if (card && (bundle == 0 || bundle > card))
        problem(v, "dirty card in a card bundle of a higher value or clean", slot, t);
}

/* H7: right after a GC, the cards it scanned or rebuilt (values 1..exact_upto) are exact. */
static void check_exact_cards(verifier *v, tn_region *r) {
    if (r->gen == TN_GEN0 || !v->exact_upto)
        return;
    v->where = "region";
    v->holder = r->start;
    uint8_t value;
    for (char *c = tn_gc_next_stale_card(v->rt, r, r->start, v->exact_upto, &value); c;
         c = tn_gc_next_stale_card(v->rt, r, c + TN_CARD_SIZE, v->exact_upto, &value))
        problem(v, "card not recomputed by the GC (stale: no slot refers to its generation)", c,
                (void *)(uintptr_t)value);
}

static void check_heap_slot(void **slot, void *ctx) { check_ref(ctx, slot, true); }
static void check_root_slot(void **slot, void *ctx) { check_ref(ctx, slot, false); }

/* Walk a region: headers, sizes, bounds; mark each object start in the mark bitmap. */
static void walk_region(verifier *v, tn_region *r, bool record) {
    tenure_runtime *rt = v->rt;
    char *end = tn_region_walk_end(rt, r);
    v->where = "object";
    v->previous = NULL;
    for (char *o = r->start; o < end;) {
        v->holder = o;
        tn_type *t = tn_obj_type(o);
        if (!tn_type_valid(rt, t)) {
            problem(v, "header is not a type of this instance", o, (void *)t);
            break;
        }
        size_t size = tn_obj_size_t(t, o);
        if (size < 8 || size % 8 || (t->kind != TN_TK_FREE && size < TN_MIN_OBJECT) || size > (size_t)(end - o)) {
            problem(v, "impossible size", o, (void *)size);
            break;
        }
        if (record) {
            tn_bit_set(rt->mark_bits, tn_bit_index(rt, o));
        } else if (r->gen != TN_GEN0) {
            uintptr_t off = (uintptr_t)o - (uintptr_t)rt->base;
            uintptr_t gs = (off + TN_CROSSING_GRANULE - 1) & ~(uintptr_t)(TN_CROSSING_GRANULE - 1);
            if (gs < off + size && rt->crossing[gs >> TN_CROSSING_SHIFT] != (gs - off) / 8)
                problem(v, "crossing table does not name the object covering a granule", o, NULL);
        }
        v->previous = o;
        o += size;
    }
    v->previous = NULL;
}

/* The bit range of r that objects occupy: from its start to its used end, in whole bitmap
 * words (64 bits, 512 bytes). Bits above it are never set outside a GC (a GC clears what it
 * set up to zero_from), so this is all H4 and the cleanup need: work in proportion to the
 * memory in use, not to the size of the regions. */
static void used_bits(const tenure_runtime *rt, const tn_region *r, size_t *from, size_t *to) {
    char *used = tn_region_walk_end(rt, r);
    if (used < r->used)
        used = r->used;
    char *top = r->start + tn_align_up((size_t)(used - r->start), 64 * 8);
    *from = tn_bit_index(rt, r->start);
    *to = tn_bit_index(rt, top < r->end ? top : r->end);
}

static void check_bits_clear(verifier *v, tn_region *r) {
    tenure_runtime *rt = v->rt;
    size_t from, to;
    used_bits(rt, r, &from, &to);
    if (tn_bit_next(rt->mark_bits, from, to) != to || tn_bit_next(rt->pin_bits, from, to) != to ||
        tn_bit_next(rt->plug_bits, from, to) != to) {
        v->holder = r->start;
        v->where = "region";
        problem(v, "side bitmaps not clear outside a GC", NULL, NULL);
    }
}

static void check_objects(verifier *v, tn_region *r) {
    tenure_runtime *rt = v->rt;
    char *end = tn_region_walk_end(rt, r);
    v->where = "object";
    for (char *o = r->start; o < end;) {
        tn_type *t = tn_obj_type(o);
        size_t size = tn_obj_size_t(t, o);
        if (t->kind != TN_TK_FREE && !tn_unswept_dead(rt, r, o)) { /* (H8: its slots may dangle) */
            v->holder = o;
            tn_obj_visit_slots(rt, o, check_heap_slot, v);
        }
        o += size;
    }
}

static void check_frozen_object(tenure_runtime *rt, char *obj, void *ctx) {
    verifier *v = ctx;
    v->where = "object"; /* of a frozen segment: its slots are roots (no cards) */
    v->holder = obj;
    tn_obj_visit_slots(rt, obj, check_root_slot, v);
}

#define FOR_EACH_REGION(rt, r)                               \
    for (size_t i_ = 0; i_ < (rt)->units_high; i_++)         \
        for (tn_region *r = &(rt)->regions[i_]; r; r = NULL) \
            if (r->state == TN_RS_IN_USE && (rt)->unit_head[i_] == i_)

static void check_roots(verifier *v) {
    tenure_runtime *rt = v->rt;
    v->holder = NULL;
    v->where = "root (shadow frame, root area or root scanner) slot";
    tn_roots_visit_embedder(rt, check_root_slot, v);
    tn_frozen_visit_objects(rt, check_frozen_object, v);
    v->holder = NULL;
    v->where = "handle slot";
    tn_roots_visit_handles(rt, 0xffffffffu, check_root_slot, v);
    v->where = "dependent handle's secondary slot";
    tn_roots_visit_secondaries(rt, check_root_slot, v);
    v->where = "finalizer queue slot (ready to finalize)";
    tn_finalize_visit_ready(rt, check_root_slot, v);
    v->where = "finalizer queue slot (registered)";
    tn_finalize_visit_registered(rt, check_root_slot, v);
}

static size_t verify(tenure_runtime *rt, verifier *v) {
    FOR_EACH_REGION(rt, r) check_bits_clear(v, r);
    if (v->problems)
        return v->problems; /* the start bitmap below would be wrong */
    FOR_EACH_REGION(rt, r) walk_region(v, r, true);
    FOR_EACH_REGION(rt, r) walk_region(v, r, false);
    if (!v->problems) /* objects can only be read once every header is sound */
        FOR_EACH_REGION(rt, r) check_objects(v, r);
    if (!v->problems)
        FOR_EACH_REGION(rt, r) check_exact_cards(v, r);
    check_roots(v);
    FOR_EACH_REGION(rt, r) {
        size_t from, to;
        used_bits(rt, r, &from, &to);
        tn_bits_clear(rt->mark_bits, from, to);
    }
    return v->problems;
}

size_t tn_gc_verify(tenure_runtime *rt, const char *when) {
    verifier v = {.rt = rt, .function = "HeapVerify", .where = "object"};
    /* before a GC, the GC about to run is the next one */
    bool before = strncmp(when, "before", 6) == 0;
    snprintf(v.when, sizeof v.when, "%s GC %llu", before ? "before" : "after",
             (unsigned long long)(rt->stats.gc_count + (before ? 1 : 0)));
    if (!before && rt->collection) /* (a background GC's final pause: the gen0 GC it ends as, H7) */
        v.exact_upto = rt->collection->condemned + 1;
    else if (!before && !rt->last.background) /* (a background GC's end: cards as its sweep left them) */
        v.exact_upto = rt->last.condemned + 1;
    size_t problems = verify(rt, &v);
    if (problems && !rt->services.error_hook) {
        fprintf(stderr,
                "tenure: HeapVerify found %zu problem%s %s; aborting (an error hook set with "
                "tenure_set_error_hook may decide otherwise)\n",
                problems, problems == 1 ? "" : "s", v.when);
        fflush(stderr);
        abort();
    }
    return problems;
}

tenure_result tenure_verify_heap(tenure_runtime *rt) {
    if (tn_cb_refused(rt, TN_OP_WALK, "tenure_verify_heap"))
        return TENURE_STATE;
    TN_LOCKED(rt);
    if (!rt)
        return TENURE_INVALID_ARGUMENT;
    if (rt->collection)
        return tn_api_fail(rt, TENURE_STATE, "tenure_verify_heap", "called during a collection");
    tn_world_stop(rt);
    tn_alloc_end_contexts(rt); /* the heap is walkable */
    verifier v = {.rt = rt, .function = "tenure_verify_heap", .where = "object"};
    snprintf(v.when, sizeof v.when, "on request after GC %llu", (unsigned long long)rt->stats.gc_count);
    size_t problems = verify(rt, &v);
    tn_world_restart(rt);
    return problems ? TENURE_HEAP_CORRUPT : TENURE_OK;
}

/* Checked with the instance lock held: the slot must lie inside obj, obj must be an object
 * (of the heap or a frozen segment) and value follow the rule of H3. A value that breaks it is
 * reported in the verifier's words, naming obj's type and the field. */
static bool barrier_arguments_valid(tenure_runtime *rt, void *obj, void *slot, void *value) {
    tn_assert_locked(rt);
    static const char fn[] = "tenure_write_ref";
    if (!tn_is_object(rt, obj)) {
        tn_api_fail(rt, TENURE_INVALID_OBJECT, fn, "%p is not an object of this instance", obj);
        return false;
    }
    if ((char *)slot < (char *)obj + sizeof(tenure_header) ||
        (char *)slot + sizeof(void *) > (char *)obj + tn_obj_size(obj)) {
        tn_api_fail(rt, TENURE_INVALID_ARGUMENT, fn, "slot %p is not inside object %p", slot, obj);
        return false;
    }
    if (value && !tn_is_object(rt, value)) {
        char holder[200];
        describe_slot(rt, obj, slot, holder, sizeof holder);
        tn_api_fail(rt, TENURE_INVALID_OBJECT, fn, "store refused: object %p%s: %s (value %p)", obj, holder,
                    tn_in_range(rt, value) ? NOT_OBJECT_START : NOT_HEAP_OR_FROZEN, value);
        return false;
    }
    return true;
}

/* The checked write barrier (HeapVerify). A store that breaks the rule is refused, not done:
 * the field keeps its previous (valid) value, so the heap stays what a GC can trace and the
 * verifier accepts, and the misuse is reported once, at the store that made it, instead of as
 * heap corruption at the next GC, far from its cause (and a GC never follows or updates such
 * a word: a static struct would hold no object alive, and a moved target would leave it
 * dangling). The inline barrier is never a safepoint, so neither is this: the arguments are
 * checked only when the instance lock is free at once (another thread holding it means the
 * store goes unchecked; the verifier still checks it, and its card, at the next GC). */
/* The barrier's out-of-line path (head.barrier_slow): HeapVerify's checks, and while a
 * background GC marks, the write watch after the store (gc/background.h, B1). */
void tenure__write_ref_slow(tenure_runtime *rt, void *obj, void *slot, void *value) {
    uint32_t slow = __atomic_load_n(&rt->head.barrier_slow, __ATOMIC_RELAXED);
    if ((slow & TN_BARRIER_CHECKED) && tn_trylock(rt)) {
        bool valid = barrier_arguments_valid(rt, obj, slot, value);
        tn_unlock(rt);
        if (!valid)
            return;
    }
    tenure__store_ref(&rt->head, slot, value);
    if (slow & TN_BARRIER_BGC)
        tn_bgc_watch(rt, slot);
}

/* The inline barrier's call while only the write watch is on: a store into an old object. */
void tenure__write_watch(tenure_runtime *rt, void *slot) { tn_bgc_watch(rt, slot); }
