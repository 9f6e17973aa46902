/*
 * object_references: tenure_object_references (one object's references, for profilers) and
 * the heap dump (tenure_heap_dump: GCBulkRootEdge, GCBulkNode, GCBulkEdge, BulkType,
 * GCBulkRootConditionalWeakTableElementEdge).
 *
 *  A. shapes: a fixed type (fields in ref_offsets order, NULL skipped), a reference array and
 *     an array of structs (element index and offset of each slot), a traced type (the trace
 *     callback's slots); fn returning nonzero stops; a pointer that is not an object is refused.
 *  B. from a profiler's gc_finished after a compacting GC (final addresses: each reference is
 *     where the handles say the objects are now), from a heap-walk visitor (every reference of
 *     every object is an object; Pair fields read back), refused from a root scanner, and fn may
 *     not allocate.
 *  C. the dump against the heap: a seeded random graph (pairs, arrays, traced objects, a
 *     dependent handle, weak and pinned handles, frozen objects); a listener session
 *     (GCHeapDump | Type | GC) and a profiler's root_references see one tenure_heap_dump. The
 *     nodes are exactly tenure_heap_walk's objects, in its order, with size and type; the edges
 *     of each node are exactly tenure_object_references'; the root edges are exactly the
 *     profiler's roots (object, kind, flags, root id); every node's type is in exactly one
 *     BulkType record, with its name and flags; the dependent handle's pair is reported; each
 *     kind's Index counts from 0; the dump lies between GCStart (ClientSequenceNumber = 1) and
 *     GCEnd. A second dump is numbered 2.
 */
#include "test_util.h"
#include "tenure_events.h"
#include "tenure_profiler.h"

#include <stdbool.h>

static tt_errlog log_ = {.fatal = 1};

typedef struct pair {
    tenure_header h;
    void *a, *b;
    long value;
} pair;

typedef struct traced {
    tenure_header h;
    void *slots[3];
    long n; /* the trace callback visits slots[0..n) */
} traced;

typedef struct rec3 {
    long x;
    void *p, *q;
} rec3;

static const tenure_type *pair_t, *refarr_t, *recarr_t, *traced_t, *leaf_t;

static void trace_traced(void *obj, tenure_visitor *v) {
    traced *t = obj;
    for (long i = 0; i < t->n && i < 3; i++)
        tenure_visit(v, &t->slots[i]);
}

static void register_types(tenure_runtime *rt) {
    static const size_t pair_offs[] = {offsetof(pair, a), offsetof(pair, b)};
    static const size_t rec_offs[] = {offsetof(rec3, p), offsetof(rec3, q)};
    tenure_type_desc d = {.name = "Pair", .size = sizeof(pair), .ref_offsets = pair_offs, .ref_count = 2};
    pair_t = tenure_type_register(rt, &d);
    d = (tenure_type_desc){.name = "Object[]",
                           .elem_size = sizeof(void *),
                           .flags = TENURE_TYPE_ARRAY | TENURE_TYPE_REF_ARRAY};
    refarr_t = tenure_type_register(rt, &d);
    d = (tenure_type_desc){.name = "Rec3[]",
                           .elem_size = sizeof(rec3),
                           .elem_ref_offsets = rec_offs,
                           .elem_ref_count = 2,
                           .flags = TENURE_TYPE_ARRAY};
    recarr_t = tenure_type_register(rt, &d);
    d = (tenure_type_desc){.name = "Traced", .size = sizeof(traced), .trace = trace_traced};
    traced_t = tenure_type_register(rt, &d);
    d = (tenure_type_desc){.name = "Leaf", .size = 24, .flags = TENURE_TYPE_NO_REFS};
    leaf_t = tenure_type_register(rt, &d);
    TT_CHECK(pair_t && refarr_t && recarr_t && traced_t && leaf_t);
}

/* ---- collecting references ---- */

typedef struct refs {
    tenure_object_reference r[64];
    size_t n;
    size_t stop_after; /* 0: never */
} refs;

static int collect_ref(void *obj, const tenure_object_reference *ref, void *ctx) {
    refs *rs = ctx;
    (void)obj;
    TT_CHECK(rs->n < 64);
    rs->r[rs->n++] = *ref;
    return rs->stop_after && rs->n >= rs->stop_after;
}

static refs refs_of(tenure_runtime *rt, void *obj) {
    refs rs = {.n = 0};
    TT_CHECK_RESULT(tenure_object_references(rt, obj, collect_ref, &rs), TENURE_OK);
    return rs;
}

static void check_ref(const refs *rs, size_t i, void *target, size_t offset, size_t element) {
    TT_CHECK(i < rs->n, "reference %zu missing (%zu)", i, rs->n);
    TT_CHECK(rs->r[i].target == target, "ref %zu: target %p, expected %p", i, rs->r[i].target, target);
    TT_CHECK_EQ_U64(rs->r[i].offset, offset);
    TT_CHECK_EQ_U64(rs->r[i].element, element);
}

/* ---- A ---- */

static void test_shapes(void) {
    tenure_runtime *rt = tt_create(NULL, &log_);
    register_types(rt);
    pair *p = NULL, *x = NULL, *y = NULL;
    void **arr = NULL;
    char *recs = NULL;
    traced *t = NULL;
    TENURE_FRAME(rt, frame, p, x, y, arr, recs, t);
    x = tenure_alloc(rt, pair_t);
    y = tenure_alloc(rt, pair_t);
    p = tenure_alloc(rt, pair_t);
    arr = tenure_alloc_array(rt, refarr_t, 5);
    recs = tenure_alloc_array(rt, recarr_t, 3);
    t = tenure_alloc(rt, traced_t);
    TT_CHECK(x && y && p && arr && recs && t);

    refs rs = refs_of(rt, p);
    TT_CHECK_EQ_U64(rs.n, 0); /* NULL fields are no references */
    tenure_write_ref(rt, p, &p->b, x);
    rs = refs_of(rt, p);
    TT_CHECK_EQ_U64(rs.n, 1);
    check_ref(&rs, 0, x, offsetof(pair, b), TENURE_NO_ELEMENT);
    tenure_write_ref(rt, p, &p->a, y);
    rs = refs_of(rt, p);
    TT_CHECK_EQ_U64(rs.n, 2);
    check_ref(&rs, 0, y, offsetof(pair, a), TENURE_NO_ELEMENT);
    check_ref(&rs, 1, x, offsetof(pair, b), TENURE_NO_ELEMENT);

    void **slots = tenure_array_data(arr);
    tenure_write_ref(rt, arr, &slots[1], x);
    tenure_write_ref(rt, arr, &slots[4], p);
    rs = refs_of(rt, arr);
    TT_CHECK_EQ_U64(rs.n, 2);
    check_ref(&rs, 0, x, sizeof(tenure_array_header) + 1 * sizeof(void *), 1);
    check_ref(&rs, 1, p, sizeof(tenure_array_header) + 4 * sizeof(void *), 4);

    rec3 *r = tenure_array_data(recs);
    tenure_write_ref(rt, recs, &r[0].p, y);
    tenure_write_ref(rt, recs, &r[2].q, x);
    rs = refs_of(rt, recs);
    TT_CHECK_EQ_U64(rs.n, 2);
    check_ref(&rs, 0, y, sizeof(tenure_array_header) + offsetof(rec3, p), 0);
    check_ref(&rs, 1, x, sizeof(tenure_array_header) + 2 * sizeof(rec3) + offsetof(rec3, q), 2);

    t->n = 2;
    tenure_write_ref(rt, t, &t->slots[0], p);
    tenure_write_ref(rt, t, &t->slots[2], x); /* beyond n: not visited by the trace */
    rs = refs_of(rt, t);
    TT_CHECK_EQ_U64(rs.n, 1);
    check_ref(&rs, 0, p, offsetof(traced, slots), TENURE_NO_ELEMENT);
    t->n = 3;
    rs = refs_of(rt, t);
    TT_CHECK_EQ_U64(rs.n, 2);
    check_ref(&rs, 1, x, offsetof(traced, slots) + 2 * sizeof(void *), TENURE_NO_ELEMENT);

    rs = (refs){.n = 0, .stop_after = 1}; /* nonzero stops */
    TT_CHECK_RESULT(tenure_object_references(rt, arr, collect_ref, &rs), TENURE_OK);
    TT_CHECK_EQ_U64(rs.n, 1);

    log_.fatal = 0;
    tt_errlog_reset(&log_);
    TT_CHECK_RESULT(tenure_object_references(rt, (char *)p + 8, collect_ref, &rs), TENURE_INVALID_OBJECT);
    TT_CHECK_RESULT(tenure_object_references(rt, p, NULL, NULL), TENURE_INVALID_ARGUMENT);
    log_.fatal = 1;
    TENURE_FRAME_POP(rt, frame);
    tenure_destroy(rt);
}

/* ---- B ---- */

typedef struct gc_ctx {
    tenure_runtime *rt;
    tenure_handle *holder, *x, *y;
    int checked;
} gc_ctx;

static void on_gc_finished(void *c) {
    gc_ctx *g = c;
    pair *h = tenure_handle_get(g->rt, g->holder);
    refs rs = refs_of(g->rt, h);
    TT_CHECK_EQ_U64(rs.n, 2);
    check_ref(&rs, 0, tenure_handle_get(g->rt, g->x), offsetof(pair, a), TENURE_NO_ELEMENT);
    check_ref(&rs, 1, tenure_handle_get(g->rt, g->y), offsetof(pair, b), TENURE_NO_ELEMENT);
    g->checked++;
}

typedef struct walk_ctx {
    tenure_runtime *rt;
    size_t objects, references;
    int bad;
} walk_ctx;

static int check_target(void *obj, const tenure_object_reference *ref, void *c) {
    walk_ctx *w = c;
    w->references++;
    if (!tenure_is_object(w->rt, ref->target) || *(void **)((char *)obj + ref->offset) != ref->target)
        w->bad++;
    return 0;
}

static int walk_visit(void *obj, const tenure_type *type, size_t size, int gen, void *c) {
    walk_ctx *w = c;
    (void)size, (void)gen, (void)type;
    w->objects++;
    TT_CHECK_RESULT(tenure_object_references(w->rt, obj, check_target, w), TENURE_OK);
    return 0;
}

static int alloc_from_fn(void *obj, const tenure_object_reference *ref, void *c) {
    tenure_runtime *rt = c;
    (void)obj, (void)ref;
    TT_CHECK(tenure_alloc(rt, leaf_t) == NULL, "a tenure_object_references callback allocated");
    return 1;
}

typedef struct scan_ctx {
    tenure_handle *h;
    tenure_result seen;
} scan_ctx;
static tenure_runtime *scan_rt;
static void scanner(tenure_runtime *rt, tenure_visitor *v, void *c) {
    scan_ctx *s = c;
    (void)v;
    s->seen = tenure_object_references(rt, tenure_handle_get(rt, s->h), collect_ref, &(refs){.n = 0});
    (void)scan_rt;
}

static void test_callbacks(void) {
    tenure_runtime *rt = tt_create(NULL, &log_);
    register_types(rt);
    gc_ctx g = {rt, NULL, NULL, NULL, 0};
    for (int i = 0; i < 1000; i++) /* garbage before them: compaction moves them */
        tenure_alloc(rt, leaf_t);
    g.x = tenure_handle_new(rt, TENURE_HANDLE_STRONG, tenure_alloc(rt, pair_t));
    g.y = tenure_handle_new(rt, TENURE_HANDLE_STRONG, tenure_alloc_array(rt, refarr_t, 7));
    pair *h = tenure_alloc(rt, pair_t);
    g.holder = tenure_handle_new(rt, TENURE_HANDLE_STRONG, h);
    tenure_write_ref(rt, h, &h->a, tenure_handle_get(rt, g.x));
    tenure_write_ref(rt, h, &h->b, tenure_handle_get(rt, g.y));
    void *before = tenure_handle_get(rt, g.x);
    tenure_profiler_callbacks cb = {.gc_finished = on_gc_finished};
    tenure_profiler *prof = tenure_profiler_attach(rt, &cb, TENURE_PROFILE_GC, &g);
    TT_CHECK(prof);
    TT_CHECK_RESULT(tenure_collect(rt, 0, TENURE_COLLECT_COMPACT), TENURE_OK);
    TT_CHECK_RESULT(tenure_collect(rt, 2, TENURE_COLLECT_COMPACT), TENURE_OK);
    TT_CHECK(g.checked >= 2, "gc_finished ran %d times", g.checked);
    printf("  gc_finished: references at final addresses (x %s)\n",
           before != tenure_handle_get(rt, g.x) ? "moved" : "did not move");
    tenure_profiler_detach(rt, prof);

    walk_ctx w = {rt, 0, 0, 0};
    TT_CHECK_RESULT(tenure_heap_walk(rt, walk_visit, &w), TENURE_OK);
    TT_CHECK(w.bad == 0 && w.references >= 2, "%d bad of %zu references", w.bad, w.references);

    /* fn may not allocate (refused, reported) */
    log_.fatal = 0;
    tt_errlog_reset(&log_);
    TT_CHECK_RESULT(tenure_object_references(rt, tenure_handle_get(rt, g.holder), alloc_from_fn, rt), TENURE_OK);
    TT_CHECK(log_.last == TENURE_STATE, "allocation from the callback: %d", (int)log_.last);

    /* refused from a root scanner (the heap may be half moved) */
    scan_ctx s = {g.holder, TENURE_OK};
    tenure_root_scanner *sc = tenure_root_scanner_add(rt, scanner, &s);
    tt_errlog_reset(&log_);
    TT_CHECK_RESULT(tenure_collect(rt, 0, 0), TENURE_OK);
    TT_CHECK(s.seen == TENURE_STATE, "from a root scanner: %d", (int)s.seen);
    tenure_root_scanner_remove(rt, sc);
    log_.fatal = 1;
    tenure_destroy(rt);
}

/* ---- C: the dump ---- */

typedef struct rec_ev {
    const tenure_event_desc *desc;
    uint8_t *payload;
    size_t size;
} rec_ev;

typedef struct recorder {
    rec_ev *v;
    size_t n, cap;
} recorder;

static void rec_listener(const tenure_event *e, void *ctx) {
    recorder *r = ctx;
    if (r->n == r->cap) {
        r->cap = r->cap ? 2 * r->cap : 1024;
        r->v = realloc(r->v, r->cap * sizeof *r->v);
        TT_CHECK(r->v);
    }
    rec_ev *x = &r->v[r->n++];
    x->desc = e->desc;
    x->size = e->size;
    x->payload = malloc(e->size ? e->size : 1);
    TT_CHECK(x->payload);
    memcpy(x->payload, e->payload, e->size);
}

static void recorder_clear(recorder *r) {
    for (size_t i = 0; i < r->n; i++)
        free(r->v[i].payload);
    r->n = 0;
}

static tenure_event ev_of(const rec_ev *x) { return (tenure_event){0, 0, x->desc, x->payload, x->size}; }

static uint64_t fu(const rec_ev *x, const char *field) {
    tenure_event e = ev_of(x);
    uint64_t v = 0;
    TT_CHECK_RESULT(tenure_event_read_u64(&e, field, &v), TENURE_OK);
    return v;
}

static uint64_t fel(const rec_ev *x, size_t i, const char *rec) {
    tenure_event e = ev_of(x);
    uint64_t v = 0;
    TT_CHECK_RESULT(tenure_event_read_element(&e, "Values", i, rec, &v), TENURE_OK);
    return v;
}

/* a growing array of u64 tuples */
typedef struct tuples {
    uint64_t *v;
    size_t n, cap, width;
} tuples;

static void push(tuples *t, const uint64_t *vals) {
    if (t->n == t->cap) {
        t->cap = t->cap ? 2 * t->cap : 1024;
        t->v = realloc(t->v, t->cap * t->width * sizeof(uint64_t));
        TT_CHECK(t->v);
    }
    memcpy(&t->v[t->n++ * t->width], vals, t->width * sizeof(uint64_t));
}

static int cmp4(const void *a, const void *b) {
    return memcmp(a, b, 4 * sizeof(uint64_t)) < 0 ? -1 : memcmp(a, b, 4 * sizeof(uint64_t)) > 0;
}

static void sort4(tuples *t) {
    /* memcmp order is fine: equality is what matters */
    qsort(t->v, t->n, 4 * sizeof(uint64_t), cmp4);
}

typedef struct dump_graph {
    tuples nodes; /* addr, size, type, edge count */
    tuples edges; /* value, field id */
    tuples roots; /* addr, kind, flags, root id */
    tuples cwt;   /* key, value, root id */
    tuples types; /* type id, flags, element type, name index */
    char names[64][64];
    size_t name_count;
    uint64_t sequence;
} dump_graph;

static void graph_init(dump_graph *g) {
    memset(g, 0, sizeof *g);
    g->nodes.width = 4;
    g->edges.width = 2;
    g->roots.width = 4;
    g->cwt.width = 3;
    g->types.width = 4;
}

/* Read the dump out of the events: checks the order (between GCStart and GCEnd) and Index. */
static void read_dump(const recorder *r, dump_graph *g) {
    bool in_gc = false, dumped = false;
    uint64_t next_index[64] = {0};
    for (size_t i = 0; i < r->n; i++) {
        const rec_ev *x = &r->v[i];
        const char *name = x->desc->name;
        if (!strcmp(name, "GCStart_V2")) {
            in_gc = true;
            if (fu(x, "ClientSequenceNumber"))
                g->sequence = fu(x, "ClientSequenceNumber");
            continue;
        }
        if (!strcmp(name, "GCEnd_V1")) {
            in_gc = false;
            continue;
        }
        bool bulk = x->desc->keywords & (TENURE_KW_GC_HEAP_DUMP | TENURE_KW_TYPE);
        if (!bulk)
            continue;
        TT_CHECK(in_gc, "%s outside a GC", name);
        dumped = true;
        uint64_t count = fu(x, "Count");
        TT_CHECK(count > 0, "an empty %s", name);
        if (strcmp(name, "BulkType")) {
            TT_CHECK_EQ_U64(fu(x, "Index"), next_index[x->desc->id]);
            next_index[x->desc->id]++;
        }
        for (size_t k = 0; k < count; k++) {
            if (!strcmp(name, "GCBulkNode")) {
                uint64_t v[4] = {fel(x, k, "Address"), fel(x, k, "Size"), fel(x, k, "TypeID"), fel(x, k, "EdgeCount")};
                push(&g->nodes, v);
            } else if (!strcmp(name, "GCBulkEdge")) {
                uint64_t v[2] = {fel(x, k, "Value"), fel(x, k, "ReferencingFieldID")};
                push(&g->edges, v);
            } else if (!strcmp(name, "GCBulkRootEdge")) {
                uint64_t v[4] = {fel(x, k, "RootedNodeAddress"), fel(x, k, "GCRootKind"), fel(x, k, "GCRootFlag"),
                                 fel(x, k, "GCRootID")};
                push(&g->roots, v);
            } else if (!strcmp(name, "GCBulkRootConditionalWeakTableElementEdge")) {
                uint64_t v[3] = {fel(x, k, "GCKeyNodeID"), fel(x, k, "GCValueNodeID"), fel(x, k, "GCRootID")};
                push(&g->cwt, v);
            } else if (!strcmp(name, "BulkType")) {
                tenure_event e = ev_of(x);
                const char *tn = NULL;
                TT_CHECK_RESULT(tenure_event_read_element_string(&e, "Values", k, "Name", &tn), TENURE_OK);
                TT_CHECK(g->name_count < 64);
                snprintf(g->names[g->name_count], 64, "%s", tn);
                TT_CHECK_EQ_U64(fel(x, k, "TypeParameterCount"), 0);
                uint64_t v[4] = {fel(x, k, "TypeID"), fel(x, k, "Flags"), fel(x, k, "CorElementType"), g->name_count++};
                push(&g->types, v);
            }
        }
    }
    TT_CHECK(dumped, "no dump events");
}

/* the heap walk + tenure_object_references */
typedef struct expect_ctx {
    tenure_runtime *rt;
    const dump_graph *g;
    size_t node, edge;
} expect_ctx;

static int expect_edge(void *obj, const tenure_object_reference *ref, void *c) {
    expect_ctx *x = c;
    (void)obj;
    TT_CHECK(x->edge < x->g->edges.n, "more references than edges");
    TT_CHECK(x->g->edges.v[x->edge * 2] == (uintptr_t)ref->target, "edge %zu: %#llx, reference %p", x->edge,
             (unsigned long long)x->g->edges.v[x->edge * 2], ref->target);
    TT_CHECK_EQ_U64(x->g->edges.v[x->edge * 2 + 1], 0);
    x->edge++;
    return 0;
}

static int expect_node(void *obj, const tenure_type *type, size_t size, int gen, void *c) {
    expect_ctx *x = c;
    (void)gen;
    TT_CHECK(x->node < x->g->nodes.n, "more objects than nodes (%zu)", x->g->nodes.n);
    const uint64_t *n = &x->g->nodes.v[x->node * 4];
    TT_CHECK(n[0] == (uintptr_t)obj, "node %zu: %#llx, object %p", x->node, (unsigned long long)n[0], obj);
    TT_CHECK_EQ_U64(n[1], size);
    TT_CHECK_EQ_U64(n[2], (uintptr_t)type);
    size_t first = x->edge;
    TT_CHECK_RESULT(tenure_object_references(x->rt, obj, expect_edge, x), TENURE_OK);
    TT_CHECK_EQ_U64(n[3], x->edge - first);
    /* its type: in exactly one BulkType record, named as registered */
    size_t found = 0;
    for (size_t t = 0; t < x->g->types.n; t++)
        if (x->g->types.v[t * 4] == (uintptr_t)type) {
            found++;
            TT_CHECK(!strcmp(x->g->names[x->g->types.v[t * 4 + 3]], tenure_type_name(type)), "type name %s",
                     x->g->names[x->g->types.v[t * 4 + 3]]);
            bool array = type == refarr_t || type == recarr_t;
            TT_CHECK_EQ_U64(x->g->types.v[t * 4 + 1], array ? 0x8 : 0);
            TT_CHECK_EQ_U64(x->g->types.v[t * 4 + 2], array ? 0x1d : 0x12);
        }
    TT_CHECK_EQ_U64(found, 1);
    x->node++;
    return 0;
}

static void on_roots(void *c, size_t count, void *const *ids, const tenure_root_kind *kinds, const uint32_t *flags,
                     const uintptr_t *root_ids) {
    tuples *t = c;
    for (size_t i = 0; i < count; i++) {
        uint64_t v[4] = {(uintptr_t)ids[i], (uint64_t)kinds[i], flags[i], root_ids[i]};
        push(t, v);
    }
}

static void test_dump(void) {
    tenure_config cfg;
    tt_config(&cfg);
    tenure_runtime *rt = tt_create(&cfg, &log_);
    register_types(rt);
    size_t n = tt_scaled(20000, 500);
    tenure_handle *all = tenure_handle_new(rt, TENURE_HANDLE_STRONG, tenure_alloc_array(rt, refarr_t, n));
    for (size_t i = 0; i < n; i++) {
        void *o;
        switch (tt_rand_below(5)) {
        case 0: o = tenure_alloc_array(rt, refarr_t, tt_rand_below(6)); break;
        case 1: o = tenure_alloc_array(rt, recarr_t, tt_rand_below(4)); break;
        case 2:
            o = tenure_alloc(rt, traced_t);
            ((traced *)o)->n = (long)tt_rand_below(4);
            break;
        case 3: o = tenure_alloc(rt, leaf_t); break;
        default: o = tenure_alloc(rt, pair_t);
        }
        TT_CHECK(o);
        void **slots = tenure_array_data(tenure_handle_get(rt, all));
        if (tt_rand_below(10) != 0) /* a tenth dies */
            tenure_write_ref(rt, tenure_handle_get(rt, all), &slots[i], o);
    }
    /* random references among the live ones (NULLs left here and there) */
    void **slots = tenure_array_data(tenure_handle_get(rt, all));
    for (size_t i = 0; i < n; i++) {
        void *o = slots[i];
        if (!o)
            continue;
        const tenure_type *t = tenure_object_type(rt, o);
        void *target = slots[tt_rand_below(n)];
        if (t == pair_t) {
            tenure_write_ref(rt, o, &((pair *)o)->a, target);
            tenure_write_ref(rt, o, &((pair *)o)->b, slots[tt_rand_below(n)]);
        } else if (t == traced_t) {
            for (int k = 0; k < 3; k++)
                tenure_write_ref(rt, o, &((traced *)o)->slots[k], slots[tt_rand_below(n)]);
        } else if (t == refarr_t && tenure_array_length(o)) {
            void **e = tenure_array_data(o);
            tenure_write_ref(rt, o, &e[tt_rand_below(tenure_array_length(o))], target);
        } else if (t == recarr_t && tenure_array_length(o)) {
            rec3 *e = tenure_array_data(o);
            tenure_write_ref(rt, o, &e[tt_rand_below(tenure_array_length(o))].q, target);
        }
    }
    /* handles of every kind but refcounted, a dependent pair whose secondary only it keeps */
    void *live[3];
    for (size_t i = 0, k = 0; k < 3; i++)
        if (slots[i])
            live[k++] = slots[i];
    tenure_handle *weak = tenure_handle_new(rt, TENURE_HANDLE_WEAK_SHORT, live[0]);
    tenure_handle *pinned = tenure_handle_new(rt, TENURE_HANDLE_PINNED, live[1]);
    tenure_handle *primary = tenure_handle_new(rt, TENURE_HANDLE_STRONG, live[2]);
    void *secondary = tenure_alloc(rt, pair_t); /* nothing allocates before the handle holds it */
    tenure_handle *dep = tenure_handle_new_dependent(rt, tenure_handle_get(rt, primary), secondary);
    TT_CHECK(weak && pinned && dep);
    /* a frozen segment referring to a heap object */
    static _Alignas(8) char frozen[256];
    size_t fsz = tenure_frozen_object_init(rt, frozen, pair_t, 0);
    TT_CHECK(fsz == sizeof(pair));
    ((pair *)frozen)->a = tenure_handle_get(rt, pinned);
    TT_CHECK_RESULT(tenure_register_frozen_segment(rt, frozen, fsz), TENURE_OK);

    recorder rec = {0};
    tenure_session *s = tenure_session_start_listener(rt, TENURE_KW_GC | TENURE_KW_GC_HEAP_DUMP | TENURE_KW_TYPE,
                                                      TENURE_LEVEL_INFORMATIONAL, rec_listener, &rec);
    tuples roots = {.width = 4};
    tenure_profiler_callbacks cb = {.root_references = on_roots};
    tenure_profiler *prof = tenure_profiler_attach(rt, &cb, TENURE_PROFILE_GC, &roots);
    TT_CHECK(s && prof);
    recorder_clear(&rec);
    double t0 = tt_now();
    TT_CHECK_RESULT(tenure_heap_dump(rt), TENURE_OK);
    double secs = tt_now() - t0;
    tenure_profiler_detach(rt, prof);
    dump_graph g;
    graph_init(&g);
    read_dump(&rec, &g);
    TT_CHECK_EQ_U64(g.sequence, 1);
    printf("  dump: %zu nodes, %zu edges, %zu roots, %zu types, %zu pairs, %zu events, %.3f s\n", g.nodes.n, g.edges.n,
           g.roots.n, g.types.n, g.cwt.n, rec.n, secs);

    /* nodes and edges: the heap walk and tenure_object_references, in order */
    expect_ctx x = {rt, &g, 0, 0};
    TT_CHECK_RESULT(tenure_heap_walk(rt, expect_node, &x), TENURE_OK);
    TT_CHECK_EQ_U64(x.node, g.nodes.n);
    TT_CHECK_EQ_U64(x.edge, g.edges.n);
    /* roots: the profiler's */
    TT_CHECK_EQ_U64(g.roots.n, roots.n);
    sort4(&g.roots);
    sort4(&roots);
    TT_CHECK(memcmp(g.roots.v, roots.v, roots.n * 4 * sizeof(uint64_t)) == 0, "root edges differ from root_references");
    bool weak_seen = false, pinned_seen = false;
    for (size_t i = 0; i < roots.n; i++) {
        const uint64_t *r = &roots.v[i * 4];
        weak_seen |= r[3] == (uintptr_t)weak && r[1] == TENURE_ROOT_KIND_HANDLE && r[2] == TENURE_ROOT_FLAG_WEAK;
        pinned_seen |= r[3] == (uintptr_t)pinned && r[2] == TENURE_ROOT_FLAG_PINNING;
    }
    TT_CHECK(weak_seen && pinned_seen, "weak %d pinned %d", weak_seen, pinned_seen);
    /* the dependent pair */
    TT_CHECK_EQ_U64(g.cwt.n, 1);
    TT_CHECK(g.cwt.v[0] == (uintptr_t)tenure_handle_get(rt, dep) &&
             g.cwt.v[1] == (uintptr_t)tenure_handle_get_secondary(rt, dep) && g.cwt.v[2] == (uintptr_t)dep);
    /* a second dump: numbered 2, the same graph (nothing changed) */
    recorder_clear(&rec);
    TT_CHECK_RESULT(tenure_heap_dump(rt), TENURE_OK);
    dump_graph g2;
    graph_init(&g2);
    read_dump(&rec, &g2);
    TT_CHECK_EQ_U64(g2.sequence, 2);
    TT_CHECK_EQ_U64(g2.nodes.n, g.nodes.n);
    TT_CHECK_EQ_U64(g2.edges.n, g.edges.n);
    /* a plain GC writes no dump */
    recorder_clear(&rec);
    TT_CHECK_RESULT(tenure_collect(rt, 2, 0), TENURE_OK);
    for (size_t i = 0; i < rec.n; i++)
        TT_CHECK(!(rec.v[i].desc->keywords & TENURE_KW_GC_HEAP_DUMP), "%s outside a dump", rec.v[i].desc->name);
    tenure_session_stop(rt, s);
    recorder_clear(&rec);
    free(rec.v);
    free(roots.v);
    dump_graph *gs[2] = {&g, &g2};
    for (int i = 0; i < 2; i++) {
        free(gs[i]->nodes.v);
        free(gs[i]->edges.v);
        free(gs[i]->roots.v);
        free(gs[i]->cwt.v);
        free(gs[i]->types.v);
    }
    tenure_destroy(rt);
}

int main(void) {
    double t0 = tt_now();
    tt_rng_init("object_references");
    test_shapes();
    test_callbacks();
    test_dump();
    return tt_finish("object_references", t0);
}
