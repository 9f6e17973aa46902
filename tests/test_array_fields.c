/*
 * array_fields: array types with fixed fields between the length word and the elements
 * (tenure.h, "Objects and types"): a string's id and next link before its characters, a
 * closure's function before its upvalues, one object instead of two.
 *
 *  A. registration: size below the array header, reference offsets in the length word or at
 *     or past the first element, and elements holding references that start off an 8-byte
 *     boundary are refused with a reason; the valid layouts are accepted.
 *  B. sizes: an object's size is the fixed part plus its elements, rounded up to 8 (also for a
 *     fixed part that is not a multiple of 8), and the inline and out-of-line allocation
 *     paths agree.
 *  C. a random graph of such objects under random GCs (gen0, 1, 2; compacting and sweeping;
 *     stores into old objects' fixed fields and elements, so cards carry both): after every
 *     GC every object holds what a model of the graph says, its payload intact, and the
 *     heap verifies. A chain held only by fixed fields stays alive and in order.
 *  D. tenure_object_references names a fixed field by its offset and no element, an element
 *     by its index; the verifier names a bad fixed field "field at offset N" of its type.
 *
 * Random: the seed is printed (TENURE_TEST_SEED replays it).
 */
#include "test_util.h"

#include <stdbool.h>
#include <stdlib.h>
#include <tenure_profiler.h>

/* a closure: its function, an id, then its upvalues (a reference array with a fixed part) */
typedef struct closure {
    tenure_array_header h;
    void *fn;
    uint64_t id;
    void *up[];
} closure;
/* a symbol: id, next link, then characters */
typedef struct symbol {
    tenure_array_header h;
    uint64_t id;
    void *next;
    char chars[];
} symbol;
/* pairs {id, ref} after an owner and an id */
typedef struct pair {
    uint64_t tag;
    void *ref;
} pair;
typedef struct pairs {
    tenure_array_header h;
    void *owner;
    uint64_t id;
    pair e[];
} pairs;
/* a fixed part of 20 bytes (not a multiple of 8) and bytes after it */
typedef struct odd {
    tenure_array_header h;
    uint32_t tag;
    unsigned char bytes[];
} odd;

static tt_errlog log_;
static tenure_runtime *rt;
static const tenure_type *closure_t, *symbol_t, *pairs_t, *odd_t;

static const tenure_type *try_register(const tenure_type_desc *d) {
    tt_errlog_reset(&log_);
    return tenure_type_register(rt, d);
}

static void register_types(void) {
    static const size_t closure_refs[] = {offsetof(closure, fn)};
    static const size_t symbol_refs[] = {offsetof(symbol, next)};
    static const size_t pairs_refs[] = {offsetof(pairs, owner)};
    static const size_t pair_refs[] = {offsetof(pair, ref)};
    closure_t = try_register(&(tenure_type_desc){.name = "Closure",
                                                 .size = offsetof(closure, up),
                                                 .ref_offsets = closure_refs,
                                                 .ref_count = 1,
                                                 .flags = TENURE_TYPE_REF_ARRAY});
    symbol_t = try_register(&(tenure_type_desc){.name = "Symbol",
                                                .size = offsetof(symbol, chars),
                                                .elem_size = 1,
                                                .ref_offsets = symbol_refs,
                                                .ref_count = 1,
                                                .flags = TENURE_TYPE_ARRAY});
    pairs_t = try_register(&(tenure_type_desc){.name = "Pairs",
                                               .size = offsetof(pairs, e),
                                               .elem_size = sizeof(pair),
                                               .ref_offsets = pairs_refs,
                                               .ref_count = 1,
                                               .elem_ref_offsets = pair_refs,
                                               .elem_ref_count = 1,
                                               .flags = TENURE_TYPE_ARRAY});
    odd_t = try_register(&(tenure_type_desc){.name = "Odd",
                                             .size = offsetof(odd, bytes),
                                             .elem_size = 1,
                                             .flags = TENURE_TYPE_ARRAY | TENURE_TYPE_NO_REFS});
    TT_CHECK(closure_t && symbol_t && pairs_t && odd_t, "a valid layout was refused: %s", log_.message);
    TT_CHECK(offsetof(odd, bytes) == 20, "the test assumes a 20-byte fixed part");
}

/* ------------------------------------------------------------------ A. registration */

static void expect_refused(const tenure_type_desc *d, const char *word, const char *what) {
    const tenure_type *t = try_register(d);
    TT_CHECK(t == NULL, "%s: accepted", what);
    TT_CHECK(log_.last == TENURE_INVALID_ARGUMENT && strstr(log_.message, word) != NULL,
             "%s: reported %d \"%s\", expected a message with \"%s\"", what, (int)log_.last, log_.message, word);
}

static void test_registration(void) {
    static const size_t at_length[] = {8}, at_first_elem[] = {32}, inside[] = {16};
    expect_refused(&(tenure_type_desc){.name = "small", .size = 8, .elem_size = 1, .flags = TENURE_TYPE_ARRAY},
                   "impossible array size", "size below the array header");
    expect_refused(&(tenure_type_desc){.name = "len",
                                       .size = 32,
                                       .elem_size = 1,
                                       .ref_offsets = at_length,
                                       .ref_count = 1,
                                       .flags = TENURE_TYPE_ARRAY},
                   "outside the object", "a reference in the length word");
    expect_refused(&(tenure_type_desc){.name = "past",
                                       .size = 32,
                                       .elem_size = 8,
                                       .ref_offsets = at_first_elem,
                                       .ref_count = 1,
                                       .flags = TENURE_TYPE_ARRAY},
                   "outside the object", "a fixed reference at the first element");
    expect_refused(&(tenure_type_desc){.name = "unaligned", .size = 20, .flags = TENURE_TYPE_REF_ARRAY},
                   "multiple of 8", "reference elements starting at 20");
    expect_refused(&(tenure_type_desc){.name = "noref",
                                       .size = 24,
                                       .elem_size = 8,
                                       .ref_offsets = inside,
                                       .ref_count = 1,
                                       .flags = TENURE_TYPE_ARRAY | TENURE_TYPE_NO_REFS},
                   "TENURE_TYPE_NO_REFS", "NO_REFS with a fixed reference");
    /* the old layouts keep working: size 0 and 16 */
    TT_CHECK(try_register(&(tenure_type_desc){.name = "plain0", .elem_size = 4, .flags = TENURE_TYPE_ARRAY}) != NULL,
             "size 0 refused: %s", log_.message);
    TT_CHECK(try_register(&(tenure_type_desc){.name = "plain16", .size = 16, .flags = TENURE_TYPE_REF_ARRAY}) != NULL,
             "size 16 refused: %s", log_.message);
    printf("  A: five invalid layouts refused with their reasons, the old layouts accepted\n");
}

/* ------------------------------------------------------------------ B. sizes */

static size_t expected_size(size_t fixed, size_t elem, size_t n) { return (fixed + elem * n + 7) & ~(size_t)7; }

static void test_sizes(void) {
    for (size_t n = 0; n < 40; n++) {
        for (int pinned = 0; pinned < 2; pinned++) { /* the inline path when it fits; out of line */
            odd *a = pinned ? tenure_alloc_array_pinned(rt, odd_t, n) : tenure_alloc_array(rt, odd_t, n);
            TT_CHECK(a && tenure_object_size(rt, a) == expected_size(20, 1, n), "odd[%zu]%s: size %zu, expected %zu", n,
                     pinned ? " pinned" : "", a ? tenure_object_size(rt, a) : 0, expected_size(20, 1, n));
            TT_CHECK(tenure_array_length(a) == n && a->tag == 0, "odd[%zu] header", n);
        }
        closure *c = tenure_alloc_array(rt, closure_t, n);
        TT_CHECK(c && tenure_object_size(rt, c) == expected_size(32, 8, n) && c->fn == NULL,
                 "closure[%zu]: size %zu, expected %zu", n, c ? tenure_object_size(rt, c) : 0, expected_size(32, 8, n));
        for (size_t i = 0; i < n; i++)
            TT_CHECK(c->up[i] == NULL, "closure[%zu]: element %zu not zeroed", n, i);
    }
    /* around the large object threshold: the inline path's bound accounts for the fixed part */
    tenure_config cfg;
    tt_config(&cfg); /* what tt_create gave rt */
    size_t lo = cfg.GCLOHThreshold - 20 - 16;
    for (size_t n = lo; n < lo + 32; n++) {
        odd *a = tenure_alloc_array(rt, odd_t, n);
        TT_CHECK(a && tenure_array_length(a) == n, "odd[%zu] near the LOH threshold", n);
        size_t size = expected_size(20, 1, n);
        int want = size >= cfg.GCLOHThreshold ? 3 : 0;
        TT_CHECK(tenure_object_size(rt, a) == size && tenure_object_generation(rt, a) == want,
                 "odd[%zu]: %zu bytes in generation %d, expected %zu bytes in %d", n, tenure_object_size(rt, a),
                 tenure_object_generation(rt, a), size, want);
    }
    printf("  B: sizes of fixed parts of 20 and 32 bytes, inline and pinned paths agree, LOH boundary\n");
}

/* ------------------------------------------------------------------ C. random graph */

enum { K_CLOSURE, K_SYMBOL, K_PAIRS, K_KINDS };
#define MAX_OBJS 1500
#define MAX_LEN 24

typedef struct model_obj {
    int kind;
    size_t length;
    uint64_t id;
    int fixed;          /* index of the object the fixed reference holds, -1: NULL */
    int elems[MAX_LEN]; /* closures and pairs: element references */
} model_obj;

static model_obj model[MAX_OBJS];
static void *live[MAX_OBJS]; /* a root area: the model's objects, by index */
static uint64_t next_id = 1;

static uint64_t payload_of(uint64_t id, size_t i) { return tt_mix64(id * 131 + i); }

static void *fixed_slot(void *o, int kind) {
    return kind == K_CLOSURE  ? (void *)&((closure *)o)->fn
           : kind == K_SYMBOL ? (void *)&((symbol *)o)->next
                              : (void *)&((pairs *)o)->owner;
}
static void **elem_slot(void *o, int kind, size_t i) {
    return kind == K_CLOSURE ? &((closure *)o)->up[i] : &((pairs *)o)->e[i].ref;
}

/* A new object of a random kind at index ix (its old one, if any, unreferenced by now). */
static void make_object(int ix) {
    model_obj *m = &model[ix];
    m->kind = (int)tt_rand_below(K_KINDS);
    m->length = (size_t)tt_rand_below(MAX_LEN + 1);
    m->id = next_id++;
    m->fixed = -1;
    for (size_t i = 0; i < MAX_LEN; i++)
        m->elems[i] = -1;
    void *o;
    if (m->kind == K_CLOSURE) {
        closure *c = o = tenure_alloc_array(rt, closure_t, m->length);
        TT_CHECK(c, "allocation failed");
        c->id = m->id;
    } else if (m->kind == K_SYMBOL) {
        symbol *s = o = tenure_alloc_array(rt, symbol_t, m->length);
        TT_CHECK(s, "allocation failed");
        s->id = m->id;
        for (size_t i = 0; i < m->length; i++)
            s->chars[i] = (char)payload_of(m->id, i);
    } else {
        pairs *p = o = tenure_alloc_array(rt, pairs_t, m->length);
        TT_CHECK(p, "allocation failed");
        p->id = m->id;
        for (size_t i = 0; i < m->length; i++)
            p->e[i].tag = payload_of(m->id, i);
    }
    live[ix] = o; /* a root area slot, not a heap object: a plain store */
}

/* Clear every reference to ix (in the model and the heap): its object may then be replaced. */
static void unreference(int ix, int n) {
    for (int j = 0; j < n; j++) {
        model_obj *m = &model[j];
        if (m->fixed == ix) {
            m->fixed = -1;
            tenure_write_ref(rt, live[j], fixed_slot(live[j], m->kind), NULL);
        }
        if (m->kind == K_SYMBOL)
            continue;
        for (size_t i = 0; i < m->length; i++)
            if (m->elems[i] == ix) {
                m->elems[i] = -1;
                tenure_write_ref(rt, live[j], elem_slot(live[j], m->kind, i), NULL);
            }
    }
}

/* Store a random object (or NULL) in a random fixed field or element of object ix. */
static void store(int ix, int n) {
    model_obj *m = &model[ix];
    int target = tt_rand_below(8) == 0 ? -1 : (int)tt_rand_below((uint64_t)n);
    void *value = target < 0 ? NULL : live[target];
    if (m->kind == K_SYMBOL || m->length == 0 || tt_rand_below(3) == 0) {
        m->fixed = target;
        tenure_write_ref(rt, live[ix], fixed_slot(live[ix], m->kind), value);
        return;
    }
    size_t i = (size_t)tt_rand_below(m->length);
    m->elems[i] = target;
    tenure_write_ref(rt, live[ix], elem_slot(live[ix], m->kind, i), value);
}

static void check_object(int ix, int n, const char *when) {
    const model_obj *m = &model[ix];
    void *o = live[ix];
    static const tenure_type *const *types[K_KINDS] = {&closure_t, &symbol_t, &pairs_t};
    TT_CHECK(o && tenure_is_object(rt, o), "%s: object %d is gone", when, ix);
    TT_CHECK(tenure_object_type_inline(o) == *types[m->kind] && tenure_array_length(o) == m->length,
             "%s: object %d: wrong type or length", when, ix);
    void *fixed = *(void **)fixed_slot(o, m->kind);
    TT_CHECK(fixed == (m->fixed < 0 ? NULL : live[m->fixed]), "%s: object %d (id %" PRIu64 "): fixed field wrong", when,
             ix, m->id);
    uint64_t id = m->kind == K_CLOSURE  ? ((closure *)o)->id
                  : m->kind == K_SYMBOL ? ((symbol *)o)->id
                                        : ((pairs *)o)->id;
    TT_CHECK(id == m->id, "%s: object %d: id %" PRIu64 ", expected %" PRIu64, when, ix, id, m->id);
    for (size_t i = 0; i < m->length; i++) {
        if (m->kind == K_SYMBOL) {
            TT_CHECK(((symbol *)o)->chars[i] == (char)payload_of(m->id, i), "%s: symbol %d: char %zu", when, ix, i);
            continue;
        }
        if (m->kind == K_PAIRS)
            TT_CHECK(((pairs *)o)->e[i].tag == payload_of(m->id, i), "%s: pairs %d: tag %zu", when, ix, i);
        void *want = m->elems[i] < 0 ? NULL : live[m->elems[i]];
        TT_CHECK(*elem_slot(o, m->kind, i) == want, "%s: object %d element %zu wrong", when, ix, i);
    }
    (void)n;
}

static void check_all(int n, const char *when) {
    for (int i = 0; i < n; i++)
        check_object(i, n, when);
    TT_CHECK(tenure_verify_heap(rt) == TENURE_OK, "%s: the heap does not verify: %s", when, log_.message);
}

/* Garbage that points into the graph through its fixed fields (dropped at once). */
static void make_garbage(int n) {
    for (int k = 0; k < 20; k++) {
        closure *c = tenure_alloc_array(rt, closure_t, (size_t)tt_rand_below(6));
        TT_CHECK(c, "allocation failed");
        tenure_write_ref(rt, c, &c->fn, live[tt_rand_below((uint64_t)n)]);
    }
}

/* A chain reachable only through fixed fields: closure -> fn -> ... -> symbol -> next -> ... */
#define CHAIN 64
static void *make_chain(void) {
    void *head = NULL, *prev = NULL;
    TENURE_SCOPED_FRAME(rt, frame, head, prev);
    for (int i = 0; i < CHAIN; i++) {
        bool sym = i >= CHAIN / 2;
        void *o = sym ? tenure_alloc_array(rt, symbol_t, 3) : tenure_alloc_array(rt, closure_t, 1);
        TT_CHECK(o, "allocation failed");
        if (sym)
            ((symbol *)o)->id = 1000000 + (uint64_t)i;
        else
            ((closure *)o)->id = 1000000 + (uint64_t)i;
        if (prev)
            tenure_write_ref(rt, prev, fixed_slot(prev, i - 1 >= CHAIN / 2 ? K_SYMBOL : K_CLOSURE), o);
        else
            head = o;
        prev = o;
    }
    return head;
}

static void check_chain(void *o, const char *when) {
    for (int i = 0; i < CHAIN; i++) {
        bool sym = i >= CHAIN / 2;
        TT_CHECK(o && tenure_is_object(rt, o) && tenure_object_type_inline(o) == (sym ? symbol_t : closure_t),
                 "%s: chain link %d lost", when, i);
        uint64_t id = sym ? ((symbol *)o)->id : ((closure *)o)->id;
        TT_CHECK(id == 1000000 + (uint64_t)i, "%s: chain link %d has id %" PRIu64, when, i, id);
        o = *(void **)fixed_slot(o, sym ? K_SYMBOL : K_CLOSURE);
    }
    TT_CHECK(o == NULL, "%s: the chain does not end", when);
}

static void test_random_graph(void) {
    void *chain = NULL;
    TENURE_SCOPED_FRAME(rt, frame, chain);
    chain = make_chain();
    int n = (int)tt_scaled(MAX_OBJS, 200);
    tenure_root_area *area = tenure_root_area_add(rt, live, MAX_OBJS);
    TT_CHECK(area != NULL, "root area");
    for (int i = 0; i < n; i++)
        make_object(i);
    size_t rounds = tt_scaled(120, 15), gcs = 0;
    for (size_t r = 0; r < rounds; r++) {
        for (int k = 0; k < 300; k++)
            store((int)tt_rand_below((uint64_t)n), n);
        for (int k = 0; k < 8; k++) { /* replace a few objects: the old ones become garbage */
            int ix = (int)tt_rand_below((uint64_t)n);
            unreference(ix, n);
            make_object(ix);
        }
        make_garbage(n);
        int gen = (int)tt_rand_below(3);
        unsigned flags = tt_rand_below(2) ? TENURE_COLLECT_COMPACT : 0;
        tt_collect(rt, gen, flags);
        gcs++;
        char when[64];
        snprintf(when, sizeof when, "round %zu, after a gen%d GC", r, gen);
        check_all(n, when);
        check_chain(chain, when);
    }
    TT_CHECK(log_.count == 0, "unexpected report: %s", log_.message);
    tenure_root_area_remove(rt, area);
    memset(live, 0, sizeof live);
    printf("  C: %d objects, %zu rounds of stores and GCs (%zu GCs), model and heap agree\n", n, rounds, gcs);
}

/* ------------------------------------------------------------------ D. names */

typedef struct seen_refs {
    size_t count, fixed_offset, fixed_element, elems;
} seen_refs;

static int note_ref(void *obj, const tenure_object_reference *ref, void *context) {
    seen_refs *s = context;
    (void)obj;
    s->count++;
    if (ref->offset == offsetof(closure, fn)) {
        s->fixed_offset = ref->offset;
        s->fixed_element = ref->element;
    } else if (ref->element == (ref->offset - offsetof(closure, up)) / sizeof(void *)) {
        s->elems++;
    }
    return 0;
}

static void test_names(void) {
    closure *c = NULL, *d = NULL;
    TENURE_SCOPED_FRAME(rt, frame, c, d);
    c = tenure_alloc_array(rt, closure_t, 3);
    d = tenure_alloc_array(rt, closure_t, 0);
    TT_CHECK(c && d, "allocation failed");
    tenure_write_ref(rt, c, &c->fn, d);
    tenure_write_ref(rt, c, &c->up[2], d);
    seen_refs s = {0};
    TT_CHECK_RESULT(tenure_object_references(rt, c, note_ref, &s), TENURE_OK);
    TT_CHECK(
        s.count == 2 && s.fixed_offset == offsetof(closure, fn) && s.fixed_element == TENURE_NO_ELEMENT && s.elems == 1,
        "references: %zu, fixed at %zu element %zu, %zu elements", s.count, s.fixed_offset, s.fixed_element, s.elems);
    /* a plain store of a non-object into the fixed field: the verifier names type and field */
    static uint64_t not_an_object[4];
    c->fn = &not_an_object[1];
    tt_errlog_reset(&log_);
    TT_CHECK(tenure_verify_heap(rt) != TENURE_OK, "the verifier accepted a bad fixed field");
    TT_CHECK(strstr(log_.message, "of type Closure, field at offset 16") != NULL, "verifier said: %s", log_.message);
    c->fn = NULL;
    tt_errlog_reset(&log_);
    TT_CHECK(tenure_verify_heap(rt) == TENURE_OK, "the heap does not verify once mended: %s", log_.message);
    printf("  D: the fixed field reported by offset, no element; the verifier names it\n");
}

int main(void) {
    double t0 = tt_now();
    tt_rng_init("array_fields");
    rt = tt_create(NULL, &log_);
    register_types();
    test_registration();
    test_sizes();
    test_random_graph();
    test_names();
    tenure_destroy(rt);
    return tt_finish("array_fields", t0);
}
