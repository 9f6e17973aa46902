/* types.c - type registration, object sizes, and visiting an object's reference slots. */
#include "runtime.h"
#include <stdlib.h>

#define TN_MAX_TYPES ((size_t)1 << 20)

static tn_type *new_type(tenure_runtime *rt) {
    if (rt->heap.type_count == TN_MAX_TYPES)
        return NULL;
    tn_type *t = &rt->heap.types[rt->heap.type_count];
    memset(t, 0, sizeof *t);
    t->index = (uint32_t)rt->heap.type_count++;
    t->magic = TN_TYPE_MAGIC;
    t->pub.tenure__owner = rt;
    return t;
}

bool tn_type_init_builtin(tenure_runtime *rt) {
    rt->heap.types = tn_os_reserve_lazy(TN_MAX_TYPES * sizeof(tn_type));
    if (!rt->heap.types)
        return false;
    rt->heap.type_count = 0;
    rt->heap.free_type = new_type(rt);
    rt->heap.free_type->kind = TN_TK_FREE;
    rt->heap.free_type->size = 16;
    rt->heap.free_type->name = tn_strdup("Free");
    rt->heap.filler_type = new_type(rt);
    rt->heap.filler_type->kind = TN_TK_FREE;
    rt->heap.filler_type->size = 8;
    rt->heap.filler_type->name = tn_strdup("Free");
    return rt->heap.free_type->name && rt->heap.filler_type->name;
}

void tn_type_free_all(tenure_runtime *rt) {
    if (!rt->heap.types)
        return;
    for (size_t i = 0; i < rt->heap.type_count; i++) {
        free(rt->heap.types[i].name);
        free(rt->heap.types[i].ref_offsets);
        free(rt->heap.types[i].elem_ref_offsets);
    }
    tn_os_release(rt->heap.types, TN_MAX_TYPES * sizeof(tn_type));
    rt->heap.types = NULL;
}

bool tn_type_valid(const tenure_runtime *rt, const void *t) {
    uintptr_t off = (uintptr_t)t - (uintptr_t)rt->heap.types;
    return t && off < rt->heap.type_count * sizeof(tn_type) && off % sizeof(tn_type) == 0 &&
           ((const tn_type *)t)->magic == TN_TYPE_MAGIC;
}

size_t tn_type_count(const tenure_runtime *rt) { return rt->heap.type_count; }

size_t tn_array_size(const tn_type *t, size_t length) {
    if (t->elem_size && length > (SIZE_MAX / 4 - t->size) / t->elem_size)
        return 0;
    size_t n = tn_align_up(t->size + t->elem_size * length, TN_ALIGN);
    return n < TN_MIN_OBJECT ? TN_MIN_OBJECT : n;
}

static size_t *copy_offsets(const size_t *src, size_t n) {
    if (n == 0)
        return NULL;
    size_t *d = tn_malloc(n * sizeof *d);
    if (d)
        memcpy(d, src, n * sizeof *d);
    return d;
}

#define TN_MAX_OBJECT_SIZE ((size_t)1 << 40)
#define TN_TYPE_FLAGS                                                                            \
    (TENURE_TYPE_ARRAY | TENURE_TYPE_REF_ARRAY | TENURE_TYPE_FINALIZABLE | TENURE_TYPE_NO_REFS | \
     TENURE_TYPE_CONCURRENT_TRACE | TENURE_TYPE_SERIAL_TRACE)

/* Offsets of reference slots in [lo, hi): 8-byte aligned, inside, at most one per slot (the
 * count is checked before a single offset is read). Duplicates are found after copying. */
static const char *check_offsets(const size_t *offs, size_t n, size_t lo, size_t hi) {
    if (n && !offs)
        return "reference count without offsets";
    if (n > hi / sizeof(void *))
        return "more reference offsets than the object has slots";
    for (size_t i = 0; i < n; i++) {
        if (offs[i] % TN_ALIGN)
            return "reference offset not 8-byte aligned";
        if (offs[i] < lo || hi < sizeof(void *) || offs[i] > hi - sizeof(void *))
            return "reference offset outside the object";
    }
    return NULL;
}

/* Flags and fields that contradict each other, whatever the kind. */
static const char *check_consistent(const tenure_type_desc *d, bool array) {
    if (d->flags & ~(uint32_t)TN_TYPE_FLAGS)
        return "unknown flags";
    if (d->trace && (d->ref_count || d->elem_ref_count))
        return "both a trace callback and reference offsets";
    if (d->trace && (d->flags & TENURE_TYPE_REF_ARRAY))
        return "both a trace callback and TENURE_TYPE_REF_ARRAY";
    if ((d->flags & TENURE_TYPE_NO_REFS) &&
        (d->trace || d->ref_count || d->elem_ref_count || (d->flags & TENURE_TYPE_REF_ARRAY)))
        return "TENURE_TYPE_NO_REFS with references (offsets, a trace callback or TENURE_TYPE_REF_ARRAY)";
    if ((d->flags & TENURE_TYPE_CONCURRENT_TRACE) && !d->trace)
        return "TENURE_TYPE_CONCURRENT_TRACE without a trace callback";
    if ((d->flags & TENURE_TYPE_SERIAL_TRACE) && !d->trace)
        return "TENURE_TYPE_SERIAL_TRACE without a trace callback";
    if ((d->flags & TENURE_TYPE_FINALIZABLE) && !d->finalize)
        return "a finalizable type without a finalize callback";
    if (!array && d->elem_ref_count)
        return "elem_ref_offsets on a type that is not an array";
    if ((d->flags & TENURE_TYPE_REF_ARRAY) && d->elem_ref_count)
        return "a reference array with elem_ref_offsets (its elements are the references)";
    return NULL;
}

/* An array type: t->size is where the elements start (16, or more with fixed fields, whose
 * reference offsets lie in [16, size)). */
static const char *describe_array(const tenure_type_desc *d, tn_type *t) {
    t->kind = TN_TK_ARRAY;
    t->size = d->size ? d->size : sizeof(tenure_array_header);
    if (t->size < sizeof(tenure_array_header) || t->size > TN_MAX_OBJECT_SIZE)
        return "impossible array size (the offset of the first element: 0, or at least sizeof(tenure_array_header))";
    bool elem_refs = d->elem_ref_count || (d->flags & TENURE_TYPE_REF_ARRAY);
    if (elem_refs && t->size % TN_ALIGN)
        return "elements with references must start at a multiple of 8 bytes (size)";
    const char *why = check_offsets(d->ref_offsets, d->ref_count, sizeof(tenure_array_header), t->size);
    if (why)
        return why;
    t->elem_size = d->elem_size;
    if (d->flags & TENURE_TYPE_REF_ARRAY) {
        if (d->elem_size && d->elem_size != sizeof(void *))
            return "reference arrays have elem_size 0 or sizeof(void *)";
        t->elem_size = sizeof(void *);
        return NULL;
    }
    if (t->elem_size == 0)
        return "array type with elem_size 0";
    if (t->elem_size > TN_MAX_OBJECT_SIZE)
        return "impossible element size";
    if (d->elem_ref_count && t->elem_size % TN_ALIGN)
        return "elements with references must be a multiple of 8 bytes";
    return check_offsets(d->elem_ref_offsets, d->elem_ref_count, 0, t->elem_size);
}

/* Returns NULL if desc is valid, else why not. Fills kind/size fields of t. */
static const char *describe(tenure_runtime *rt, const tenure_type_desc *d, tn_type *t) {
    bool array = (d->flags & (TENURE_TYPE_ARRAY | TENURE_TYPE_REF_ARRAY)) || d->elem_size;
    const char *why = check_consistent(d, array);
    if (why)
        return why;
    if (array)
        return describe_array(d, t);
    if (d->size < sizeof(tenure_header) || d->size > TN_MAX_OBJECT_SIZE)
        return "impossible object size";
    t->kind = TN_TK_FIXED;
    t->size = tn_align_up(d->size < TN_MIN_OBJECT ? TN_MIN_OBJECT : d->size, TN_ALIGN);
    (void)rt;
    return check_offsets(d->ref_offsets, d->ref_count, sizeof(tenure_header), d->size);
}

static int by_value(const void *a, const void *b) {
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    return x < y ? -1 : x > y;
}

/* Sorts the copied offsets; true if one appears twice (its slot would be visited, and
 * relocated, twice). */
static bool has_duplicates(size_t *offs, size_t n) {
    if (n < 2)
        return false;
    qsort(offs, n, sizeof *offs, by_value);
    for (size_t i = 1; i < n; i++)
        if (offs[i] == offs[i - 1])
            return true;
    return false;
}

/* Take back the type just added (the last one). */
static void drop_last_type(tenure_runtime *rt, tn_type *t) {
    free(t->name);
    free(t->ref_offsets);
    free(t->elem_ref_offsets);
    memset(t, 0, sizeof *t);
    rt->heap.type_count--;
}

/* Arrays of more bytes than this always take the slow path (it keeps length * elem_size small). */
#define TN_FAST_ARRAY_MAX_BYTES ((size_t)1 << 30)

/* Which allocations of t may take the inline paths of tenure.h: small objects of types that
 * need nothing at allocation but their header (finalizable ones must be registered). */
static void set_fast_paths(const tenure_runtime *rt, tn_type *t) {
    bool plain = !(t->flags & TENURE_TYPE_FINALIZABLE);
    bool small = t->size < rt->config.GCLOHThreshold;
    t->pub.tenure__fast_size = (t->kind == TN_TK_FIXED && plain && small) ? t->size : 0;
    size_t limit = rt->config.GCLOHThreshold < TN_FAST_ARRAY_MAX_BYTES ? (size_t)rt->config.GCLOHThreshold
                                                                       : TN_FAST_ARRAY_MAX_BYTES;
    if (t->kind != TN_TK_ARRAY || !plain || limit <= t->size + 8)
        return;
    /* the inline path sizes an array as size + length * elem_size rounded up to 8: with
     * length < max, that is below size + (limit - size - 8) + 8 = limit (<= GCLOHThreshold),
     * and it equals tn_array_size(t, length) (size >= 16: no minimum to apply) */
    TN_ASSERT_INTERNAL(t->size >= sizeof(tenure_array_header) && t->elem_size != 0);
    t->pub.tenure__fast_base = t->size;
    t->pub.tenure__fast_elem_size = t->elem_size;
    t->pub.tenure__fast_max_length = (limit - t->size - 8) / t->elem_size;
}

const tenure_type *tenure_type_register(tenure_runtime *rt, const tenure_type_desc *desc) {
    static const char fn[] = "tenure_type_register";
    if (tn_cb_refused(rt, TN_OP_CHANGE, fn))
        return NULL;
    TN_LOCKED(rt);
    if (!rt)
        return NULL;
    if (!desc) {
        tn_api_fail(rt, TENURE_INVALID_ARGUMENT, fn, "NULL descriptor");
        return NULL;
    }
    tn_type probe;
    memset(&probe, 0, sizeof probe);
    const char *why = describe(rt, desc, &probe);
    if (why) {
        tn_api_fail(rt, TENURE_INVALID_ARGUMENT, fn, "type %s: %s", desc->name ? desc->name : "?", why);
        return NULL;
    }
    tn_type *t = new_type(rt);
    if (!t) {
        tn_api_fail(rt, TENURE_NOMEM, fn, "too many types");
        return NULL;
    }
    t->kind = probe.kind;
    t->size = probe.size;
    t->elem_size = probe.elem_size;
    t->flags = desc->flags;
    t->trace = desc->trace;
    t->finalize = desc->finalize;
    t->name = tn_strdup(desc->name ? desc->name : "<anonymous>");
    t->ref_count = desc->ref_count;
    t->ref_offsets = copy_offsets(desc->ref_offsets, desc->ref_count);
    if (desc->flags & TENURE_TYPE_REF_ARRAY) {
        static const size_t zero = 0;
        t->elem_ref_count = 1;
        t->elem_ref_offsets = copy_offsets(&zero, 1);
    } else if (t->kind == TN_TK_ARRAY) {
        t->elem_ref_count = desc->elem_ref_count;
        t->elem_ref_offsets = copy_offsets(desc->elem_ref_offsets, desc->elem_ref_count);
    }
    if (!t->name || (t->ref_count && !t->ref_offsets) || (t->elem_ref_count && !t->elem_ref_offsets)) {
        drop_last_type(rt, t);
        tn_api_fail(rt, TENURE_NOMEM, fn, "out of memory copying the descriptor");
        return NULL;
    }
    if (has_duplicates(t->ref_offsets, t->ref_count) || has_duplicates(t->elem_ref_offsets, t->elem_ref_count)) {
        drop_last_type(rt, t);
        tn_api_fail(rt, TENURE_INVALID_ARGUMENT, fn, "type %s: the same reference offset twice",
                    desc->name ? desc->name : "?");
        return NULL;
    }
    set_fast_paths(rt, t);
    return &t->pub;
}

const char *tenure_type_name(const tenure_type *type) {
    const tn_type *t = (const tn_type *)type;
    return t && t->magic == TN_TYPE_MAGIC ? t->name : NULL;
}


/* TENURE_TYPE_SERIAL_TRACE: the call holds the instance lock, which on server GC's threads
 * is the team's lock they borrow (threads/threads.c): one call at a time across the GC
 * threads. Elsewhere the caller holds the lock already (a collection on one thread, a
 * background GC's slice, a heap walk): a nesting count, nothing waits. Measured cost:
 * docs/design/collector.md "Trace callbacks on the GC threads". */
void tn_obj_visit_traced(void *obj, tn_slot_fn fn, void *ctx) {
    struct tenure_visitor v = {fn, ctx};
    tn_type *t = tn_obj_type(obj);
    tenure_runtime *rt = (tenure_runtime *)t->pub.tenure__owner;
    bool serial = t->flags & TENURE_TYPE_SERIAL_TRACE;
    tn_cb_frame frame;
    if (serial)
        tn_lock(rt);
    tn_cb_push(&frame, rt, TN_CB_TRACE);
    t->trace(obj, &v);
    tn_cb_pop(&frame);
    if (serial)
        tn_unlock(rt);
}

void tenure_visit(tenure_visitor *visitor, void **slot) {
    if (visitor && slot)
        visitor->fn(slot, visitor->ctx);
}
