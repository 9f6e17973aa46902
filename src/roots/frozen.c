/* frozen.c - frozen segments: blocks of pre-built objects (literals, images built ahead of
 * time) that the embedder hands over. They are never collected or moved; the references they
 * hold are roots and are updated when their targets move. */
#include "runtime.h"
#include "heap/crossing.h"
#include <stdlib.h>

static bool overlaps(const tenure_runtime *rt, const char *a, const char *b) {
    if (a < rt->base + rt->range && b > rt->base)
        return true;
    for (size_t i = 0; i < rt->roots.frozen_count; i++)
        if (a < rt->roots.frozen[i].end && b > rt->roots.frozen[i].start)
            return true;
    return false;
}

/* An object's size computed without overflow (a length near SIZE_MAX wraps the plain sum);
 * 0 if no object can be that large. */
static size_t checked_size(const tn_type *t, const char *o) {
    if (t->kind != TN_TK_ARRAY)
        return t->size;
    return tn_array_size(t, ((const tenure_array_header *)o)->length);
}

/* Walk the proposed segment: every object must have a type of rt and fit. */
static const char *check_objects(const tenure_runtime *rt, char *start, char *end, uint64_t *starts) {
    for (char *o = start; o < end;) {
        if ((size_t)(end - o) < TN_MIN_OBJECT)
            return "an object does not fit in the segment";
        const tn_type *t = tn_obj_type(o);
        if (!tn_type_valid(rt, t) || t->kind == TN_TK_FREE)
            return "an object's header is not a type of this instance";
        size_t size = checked_size(t, o);
        if (size < TN_MIN_OBJECT || size > (size_t)(end - o))
            return "an object does not fit in the segment";
        size_t bit = (size_t)(o - start) / 8;
        starts[bit >> 6] |= (uint64_t)1 << (bit & 63);
        o += size;
    }
    return NULL;
}

/* The references of the segment's objects must be what a GC can follow (H3): NULL, an object
 * of the heap, or an object of a frozen segment (this one included). */
typedef struct ref_check {
    tenure_runtime *rt;
    const char *start, *end;
    const uint64_t *starts;
    const void *bad;
} ref_check;

static void check_ref(void **slot, void *c) {
    ref_check *rc = c;
    const char *v = *slot;
    if (!v || rc->bad)
        return;
    bool ok;
    if (v >= rc->start && v < rc->end) {
        size_t bit = (size_t)(v - rc->start) / 8;
        ok = ((uintptr_t)v & 7) == 0 && ((rc->starts[bit >> 6] >> (bit & 63)) & 1);
    } else {
        ok = tn_is_object(rc->rt, v);
    }
    if (!ok)
        rc->bad = slot;
}

static const void *check_references(tenure_runtime *rt, char *start, char *end, const uint64_t *starts) {
    ref_check rc = {rt, start, end, starts, NULL};
    for (char *o = start; o < end && !rc.bad; o += tn_obj_size(o))
        tn_obj_visit_slots(rt, o, check_ref, &rc);
    return rc.bad;
}

size_t tenure_frozen_object_init(tenure_runtime *rt, void *at, const tenure_type *type, size_t length) {
    static const char fn[] = "tenure_frozen_object_init";
    if (!rt)
        return 0;
    const tn_type *t = (const tn_type *)type;
    if (!tn_type_valid(rt, t) || t->kind == TN_TK_FREE) {
        tn_api_fail(rt, TENURE_INVALID_TYPE, fn, "%p is not a type of this instance", (const void *)type);
        return 0;
    }
    if (!at || ((uintptr_t)at & 7)) {
        tn_api_fail(rt, TENURE_INVALID_ARGUMENT, fn, "%p is not 8-byte aligned", at);
        return 0;
    }
    if (tn_in_range(rt, at)) {
        tn_api_fail(rt, TENURE_INVALID_ARGUMENT, fn, "%p lies in the heap", at);
        return 0;
    }
    size_t size = t->kind == TN_TK_ARRAY ? tn_array_size(t, length) : t->size;
    if (size == 0) {
        tn_api_fail(rt, TENURE_SIZE, fn, "an array of %zu elements is impossible", length);
        return 0;
    }
    memset(at, 0, size);
    ((tenure_header *)at)->tenure__word = (uintptr_t)t;
    if (t->kind == TN_TK_ARRAY)
        ((tenure_array_header *)at)->length = length;
    return size;
}

tenure_result tenure_register_frozen_segment(tenure_runtime *rt, void *start, size_t size) {
    static const char fn[] = "tenure_register_frozen_segment";
    if (tn_cb_refused(rt, TN_OP_CHANGE, fn))
        return TENURE_STATE;
    TN_LOCKED(rt);
    if (!rt)
        return TENURE_INVALID_ARGUMENT;
    if (!start || ((uintptr_t)start & 7) || (size & 7) || size == 0)
        return tn_api_fail(rt, TENURE_INVALID_ARGUMENT, fn, "segment %p+%zu is not 8-byte aligned or empty", start,
                           size);
    if (size > UINTPTR_MAX - (uintptr_t)start)
        return tn_api_fail(rt, TENURE_INVALID_ARGUMENT, fn, "segment %p+%zu wraps around the address space", start,
                           size);
    char *a = start, *b = (char *)start + size;
    if (tn_gc_in_progress(rt))
        return tn_api_fail(rt, TENURE_STATE, fn, "called during a collection");
    if (overlaps(rt, a, b))
        return tn_api_fail(rt, TENURE_INVALID_ARGUMENT, fn, "segment %p+%zu overlaps the heap or another segment",
                           start, size);
    uint64_t *starts = tn_calloc(size / 512 + 1, sizeof *starts);
    struct tn_frozen *fz = tn_realloc(rt->roots.frozen, (rt->roots.frozen_count + 1) * sizeof *fz);
    if (!starts || !fz) {
        free(starts);
        if (fz)
            rt->roots.frozen = fz;
        return tn_api_fail(rt, TENURE_NOMEM, fn, "out of memory");
    }
    rt->roots.frozen = fz;
    const char *why = check_objects(rt, a, b, starts);
    if (why) {
        free(starts);
        return tn_api_fail(rt, TENURE_INVALID_OBJECT, fn, "segment %p+%zu: %s", start, size, why);
    }
    const void *bad = check_references(rt, a, b, starts);
    if (bad) {
        const void *value = *(void *const *)bad;
        free(starts);
        return tn_api_fail(rt, TENURE_INVALID_OBJECT, fn,
                           "segment %p+%zu: the reference at %p (%p) is not NULL or an object of this instance", start,
                           size, bad, value);
    }
    rt->roots.frozen[rt->roots.frozen_count++] = (struct tn_frozen){a, b, starts};
    TN_EMIT(rt, GCCreateSegment_V1, .Address = (uint64_t)(uintptr_t)a, .Size = size, .Type = TN_SEGMENT_FROZEN);
    return TENURE_OK;
}

/* The frozen segment holding p, or NULL. */
static const struct tn_frozen *segment_of(const tenure_runtime *rt, const void *p) {
    for (size_t i = 0; i < rt->roots.frozen_count; i++)
        if ((const char *)p >= rt->roots.frozen[i].start && (const char *)p < rt->roots.frozen[i].end)
            return &rt->roots.frozen[i];
    return NULL;
}

const tn_frozen *tn_frozen_segments(const tenure_runtime *rt, size_t *count) {
    *count = rt->roots.frozen_count;
    return rt->roots.frozen;
}

bool tn_frozen_is_object(const tenure_runtime *rt, const void *p) {
    const struct tn_frozen *fz = segment_of(rt, p);
    if (!fz || ((uintptr_t)p & 7))
        return false;
    size_t bit = (size_t)((const char *)p - fz->start) / 8;
    return (fz->starts[bit >> 6] >> (bit & 63)) & 1;
}

/* Here, beside the frozen segments, because it walks both. */
bool tn_visit_all_objects(tenure_runtime *rt, tn_object_fn fn, void *ctx) {
    tn_assert_locked(rt);
    for (size_t i = 0; i < rt->roots.frozen_count; i++)
        for (char *o = rt->roots.frozen[i].start; o < rt->roots.frozen[i].end; o += tn_obj_size(o))
            if (fn(o, tn_obj_type(o), tn_obj_size(o), TN_GEN2, ctx))
                return true;
    return tn_heap_visit_objects(rt, fn, ctx);
}

/* An object of rt: a live object of the heap (at its start, not in a context's unused tail) or
 * one of a frozen segment. Here, beside the frozen segments, because it asks both. */
bool tn_is_object(tenure_runtime *rt, const void *obj) {
    tn_assert_locked(rt);
    if (!obj || ((uintptr_t)obj & 7))
        return 0;
    if (!tn_in_range(rt, obj))
        return tn_frozen_is_object(rt, obj);
    tn_region *r = tn_region_of(rt, obj);
    if (!r || (char *)obj >= tn_region_walk_end(rt, r) || (size_t)(tn_region_walk_end(rt, r) - (char *)obj) < 8)
        return 0;
    uintptr_t word = *(const uintptr_t *)obj;
    const tn_type *t = (const tn_type *)(word & ~(uintptr_t)7);
    if (!tn_type_valid(rt, t) || t->kind == TN_TK_FREE)
        return 0;
    return tn_crossing_object_start(rt, r, (char *)obj) == obj;
}

void tn_frozen_visit_objects(tenure_runtime *rt, void (*fn)(tenure_runtime *rt, char *obj, void *ctx), void *ctx) {
    for (size_t i = 0; i < rt->roots.frozen_count; i++)
        for (char *o = rt->roots.frozen[i].start; o < rt->roots.frozen[i].end; o += tn_obj_size(o))
            fn(rt, o, ctx);
}

typedef struct slot_visit {
    tn_slot_fn fn;
    void *ctx;
} slot_visit;

static void visit_object_slots(tenure_runtime *rt, char *obj, void *c) {
    slot_visit *sv = c;
    tn_obj_visit_slots(rt, obj, sv->fn, sv->ctx);
}

void tn_frozen_visit_slots(tenure_runtime *rt, tn_slot_fn fn, void *ctx) {
    slot_visit sv = {fn, ctx};
    tn_frozen_visit_objects(rt, visit_object_slots, &sv);
}

void tn_frozen_destroy(tenure_runtime *rt) {
    for (size_t i = 0; i < rt->roots.frozen_count; i++)
        free(rt->roots.frozen[i].starts);
    free(rt->roots.frozen);
    rt->roots.frozen = NULL;
    rt->roots.frozen_count = 0;
}
