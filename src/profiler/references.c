/* references.c - what objects refer to: tenure_object_references (one object's references,
 * for profilers: .NET's GetObjectReferences) and the heap dump (tenure_heap_dump: the whole
 * graph as the .NET runtime's GCHeapDump events, GCBulkRootEdge, GCBulkNode, GCBulkEdge,
 * BulkType, GCBulkRootConditionalWeakTableElementEdge). Both visit a slot exactly as the
 * collector does (tn_obj_visit_slots), so the graph is the one the collector follows. */
#include "runtime.h"
#include <stdlib.h>

/* ---- one object ---- */

typedef struct ref_walk {
    char *obj;
    size_t size;
    const tn_type *type;
    tenure_object_reference_fn fn;
    void *context;
    bool stopped;
} ref_walk;

static size_t element_of(const ref_walk *w, size_t offset) {
    const tn_type *t = w->type;
    if (t->kind != TN_TK_ARRAY || offset == SIZE_MAX || offset < t->size || !t->elem_size)
        return TENURE_NO_ELEMENT;
    return (offset - t->size) / t->elem_size;
}

static void report_slot(void **slot, void *c) {
    ref_walk *w = c;
    if (w->stopped || !*slot)
        return;
    uintptr_t offset = (uintptr_t)slot - (uintptr_t)w->obj;
    tenure_object_reference ref = {*slot, offset < w->size ? (size_t)offset : SIZE_MAX, TENURE_NO_ELEMENT};
    ref.element = element_of(w, ref.offset);
    if (w->fn(w->obj, &ref, w->context))
        w->stopped = true; /* a trace callback cannot be stopped: its further slots are ignored */
}

tenure_result tenure_object_references(tenure_runtime *rt, void *obj, tenure_object_reference_fn fn, void *context) {
    static const char name[] = "tenure_object_references";
    if (!rt)
        return TENURE_INVALID_ARGUMENT;
    if (tn_cb_refused(rt, TN_OP_READ_REFS, name))
        return TENURE_STATE;
    TN_LOCKED_HOLDING(rt, obj, NULL);
    if (!fn)
        return tn_api_fail(rt, TENURE_INVALID_ARGUMENT, name, "NULL callback");
    if (!tn_is_object(rt, obj))
        return tn_api_fail(rt, TENURE_INVALID_OBJECT, name, "%p is not an object of this instance", obj);
    ref_walk w = {obj, tn_obj_size(obj), tn_obj_type(obj), fn, context, false};
    /* fn may query, not allocate or collect: the object must not move under the walk */
    tn_cb_frame frame;
    tn_cb_enter(&frame, rt, TN_CB_REFERENCE_FN);
    tn_obj_visit_slots(rt, obj, report_slot, &w);
    tn_cb_leave(&frame);
    return TENURE_OK;
}

/* ---- the heap dump ---- */

/* An event's records: at most this many bytes, so that it fits the emitter's buffer. */
#define BULK_BYTES 3600
#define TYPE_NAME_MAX 1023

typedef struct bulk {
    unsigned event; /* TN_EVI_* */
    uint32_t index; /* events of this kind written in this dump */
    uint32_t count;
    size_t n;
    uint8_t buf[BULK_BYTES];
} bulk;

typedef struct dump {
    tenure_runtime *rt;
    bulk roots, nodes, edges, types, cwt;
    bool want_types;
    uint8_t *type_seen; /* by type index: already in a BulkType record of this dump */
    uint64_t edge_count;
} dump;

#define EMIT_INDEXED(name, b, r)                                                     \
    do {                                                                             \
        tn_ev_##name a_ = {.Index = (b)->index, .Count = (b)->count, .Values = (r)}; \
        tn_trace_emit(d->rt, TN_EVI_##name, &a_, NULL);                              \
    } while (0)

static void flush(dump *d, bulk *b) {
    if (!b->count)
        return;
    tn_records r = {b->buf, b->n};
    switch (b->event) {
    case TN_EVI_GCBulkRootEdge: EMIT_INDEXED(GCBulkRootEdge, b, r); break;
    case TN_EVI_GCBulkNode: EMIT_INDEXED(GCBulkNode, b, r); break;
    case TN_EVI_GCBulkEdge: EMIT_INDEXED(GCBulkEdge, b, r); break;
    case TN_EVI_GCBulkRootConditionalWeakTableElementEdge:
        EMIT_INDEXED(GCBulkRootConditionalWeakTableElementEdge, b, r);
        break;
    default: {
        tn_ev_BulkType a = {.Count = b->count, .Values = r};
        tn_trace_emit(d->rt, TN_EVI_BulkType, &a, NULL);
    }
    }
    b->index++;
    b->count = 0;
    b->n = 0;
}

/* Room for one record of `size` bytes (the batch goes out first when it is full). */
static uint8_t *record(dump *d, bulk *b, size_t size) {
    if (b->n + size > BULK_BYTES)
        flush(d, b);
    uint8_t *p = b->buf + b->n;
    b->n += size;
    b->count++;
    return p;
}

static uint8_t *put(uint8_t *p, uint64_t v, size_t width) {
    memcpy(p, &v, width); /* little endian, as the wire */
    return p + width;
}

static void add_root(void *obj, tenure_root_kind kind, uint32_t flags, uintptr_t root_id, uint64_t thread, void *c) {
    dump *d = c;
    (void)thread; /* GCBulkRootEdge names no thread */
    uint8_t *p = record(d, &d->roots, 8 + 1 + 4 + 8);
    p = put(p, (uintptr_t)obj, 8);
    p = put(p, (uint64_t)kind, 1);
    p = put(p, flags, 4);
    put(p, root_id, 8);
}

static void dependent_pair(tn_handle_slot *h, void *c) {
    dump *d = c;
    if (!h->object || !h->secondary)
        return;
    uint8_t *p = record(d, &d->cwt, 24);
    p = put(p, (uintptr_t)h->object, 8);
    p = put(p, (uintptr_t)h->secondary, 8);
    put(p, (uintptr_t)h, 8);
}

/* The roots, exactly as the profiler's root_references reports them (one enumeration). */
static void dump_roots(dump *d) {
    tn_prof_visit_roots(d->rt, add_root, d);
    flush(d, &d->roots);
}

static void edge_slot(void **slot, void *c) {
    dump *d = c;
    if (!*slot)
        return;
    uint8_t *p = record(d, &d->edges, 8 + 4);
    p = put(p, (uintptr_t)*slot, 8);
    put(p, 0, 4); /* ReferencingFieldID: 0, as the .NET runtime writes */
    d->edge_count++;
}

static void dump_type(dump *d, const tn_type *t) {
    if (!d->want_types || d->type_seen[t->index])
        return;
    d->type_seen[t->index] = 1;
    const char *name = t->name ? t->name : "";
    size_t len = strnlen(name, TYPE_NAME_MAX);
    uint8_t *p = record(d, &d->types, 8 + 8 + 4 + 4 + 1 + len + 1 + 4);
    uint32_t flags = (t->kind == TN_TK_ARRAY ? TN_BULKTYPE_ARRAY : 0) |
                     (t->flags & TENURE_TYPE_FINALIZABLE ? TN_BULKTYPE_FINALIZABLE : 0);
    p = put(p, (uintptr_t)t, 8); /* TypeID: the type, as GCBulkNode's TypeID */
    p = put(p, 0, 8);            /* ModuleID */
    p = put(p, 0, 4);            /* TypeNameID */
    p = put(p, flags, 4);
    p = put(p, t->kind == TN_TK_ARRAY ? TN_COR_ELEMENT_SZARRAY : TN_COR_ELEMENT_CLASS, 1);
    memcpy(p, name, len);
    p[len] = 0;
    put(p + len + 1, 0, 4); /* TypeParameterCount: no type parameters */
}

static bool dump_object(char *o, tn_type *t, size_t size, int gen, void *c) {
    dump *d = c;
    (void)gen;
    d->edge_count = 0;
    tn_obj_visit_slots(d->rt, o, edge_slot, d);
    uint8_t *p = record(d, &d->nodes, 32);
    p = put(p, (uintptr_t)o, 8);
    p = put(p, size, 8);
    p = put(p, (uintptr_t)t, 8);
    put(p, d->edge_count, 8);
    dump_type(d, t);
    return false;
}

/* Every object, in tenure_heap_walk's order: frozen segments, then the regions by address. */
static void dump_objects(dump *d) {
    tn_visit_all_objects(d->rt, dump_object, d);
    flush(d, &d->edges);
    flush(d, &d->nodes);
    flush(d, &d->types);
}

/* At the end of the GC tenure_heap_dump asked for (collect.c), objects at their final
 * addresses, before the profiler's root_references. */
static bool dump_wanted(const tenure_runtime *rt) { return rt->prof.heap_dump_pending && TN_EV_ON(rt, GCBulkNode); }

uint64_t tn_heap_dump_sequence(const tenure_runtime *rt) {
    return rt->prof.heap_dump_pending ? rt->prof.heap_dumps : 0;
}

/* The dump, then one byte per type (type_seen): types cannot be registered during the GC. */
size_t tn_heap_dump_scratch_bytes(const tenure_runtime *rt) {
    return dump_wanted(rt) ? sizeof(dump) + (TN_EV_ON(rt, BulkType) ? tn_type_count(rt) + 1 : 0) : 0;
}

void tn_heap_dump_emit(tenure_runtime *rt) {
    if (!dump_wanted(rt))
        return;
    dump *d = tn_gc_pause_scratch(rt, tn_heap_dump_scratch_bytes(rt)); /* reserved before the pause */
    if (!d)
        return; /* out of memory: no dump rather than a failed GC (counted) */
    memset(d, 0, tn_heap_dump_scratch_bytes(rt));
    d->rt = rt;
    d->roots.event = TN_EVI_GCBulkRootEdge;
    d->nodes.event = TN_EVI_GCBulkNode;
    d->edges.event = TN_EVI_GCBulkEdge;
    d->types.event = TN_EVI_BulkType;
    d->cwt.event = TN_EVI_GCBulkRootConditionalWeakTableElementEdge;
    d->type_seen = TN_EV_ON(rt, BulkType) ? (uint8_t *)(d + 1) : NULL;
    d->want_types = d->type_seen != NULL;
    dump_roots(d);
    dump_objects(d);
    tn_roots_visit_handle_slots(rt, 1u << TENURE_HANDLE_DEPENDENT, dependent_pair, d);
    flush(d, &d->cwt);
}

static tenure_result dump_locked(tenure_runtime *rt) {
    TN_LOCKED(rt);
    if (tn_gc_in_progress(rt))
        return tn_api_fail(rt, TENURE_STATE, "tenure_heap_dump", "a collection is already in progress");
    rt->prof.heap_dumps++;
    rt->prof.heap_dump_pending = true;
    tenure_result r = tn_gc_collect(rt, TN_GEN2, TN_REASON_INDUCED, 0);
    rt->prof.heap_dump_pending = false;
    return r;
}

tenure_result tenure_heap_dump(tenure_runtime *rt) {
    if (!rt)
        return TENURE_INVALID_ARGUMENT;
    if (tn_cb_refused(rt, TN_OP_COLLECT, "tenure_heap_dump"))
        return TENURE_STATE;
    tenure_result r = dump_locked(rt);
    if (r == TENURE_OK)
        tn_finalize_safepoint(rt); /* as after tenure_collect */
    return r;
}
