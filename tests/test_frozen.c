/*
 * frozen: frozen segments (tenure_frozen_object_init + tenure_register_frozen_segment).
 *
 *  A. a block from aligned_alloc(8, ...) holding fixed objects (tt_node), a reference array
 *     and a byte array, built back to back with tenure_frozen_object_init (header, length,
 *     zeroed rest) and registered. Frozen starts are objects (tenure_is_object, type, size,
 *     generation 2); interior addresses are not.
 *  B. frozen objects referencing heap objects (stored through tenure_write_ref) are roots:
 *     those heap objects, reachable from nothing else, survive gen0/gen1/gen2 GCs (always
 *     compacting, GCCompactMode=1, plus allocation-triggered ones), move, and the frozen
 *     references are updated (contents intact; a weak handle to each agrees). Heap objects
 *     refer to frozen objects; the frozen objects never move; the heap verifies. A reference
 *     cleared in a frozen object lets its target die (weak handle cleared).
 *  C. tenure_heap_walk visits every frozen object once, with its type and size (and
 *     generation 2).
 *  D. invalid registrations are rejected through the hook: misaligned start, misaligned size,
 *     zero size, NULL, overlapping an already registered segment (same, inside, straddling
 *     either end, containing),
 *     a block whose first word is not a type of this instance (garbage, or a type of another
 *     instance: TENURE_INVALID_OBJECT), a block whose last object does not fit; a rejected
 *     block registers nothing.
 */
#include "test_util.h"

static tenure_runtime *rt;
static tt_errlog log_ = {.fatal = 1};
static const tenure_type *node_t, *refarr_t, *bytes_t;

#define NFROZEN_NODES 300
#define FROZEN_REFS 400
#define FROZEN_BYTES 1001
#define FROZEN_ID(i) (1000000000ull + (uint64_t)(i))

static char *alloc_block; /* aligned_alloc'd: 64 slack bytes, the segment, 64 slack bytes */
static char *block;       /* the segment */
static size_t block_size;
static tt_node *fnode[NFROZEN_NODES];
static void *frefs;  /* frozen reference array */
static void *fbytes; /* frozen byte array */

static size_t bytes_size(size_t len) { return (sizeof(tenure_array_header) + len + 7) & ~(size_t)7; }

static void build_block(void) {
    size_t cap = NFROZEN_NODES * sizeof(tt_node) + sizeof(tenure_array_header) + FROZEN_REFS * sizeof(void *) +
                 bytes_size(FROZEN_BYTES) + 64;
    cap = (cap + 7) & ~(size_t)7;
    alloc_block = aligned_alloc(8, cap + 128);
    TT_CHECK(alloc_block != NULL);
    memset(alloc_block, 0xcd, cap + 128); /* init must zero what it builds */
    block = alloc_block + 64;
    char *at = block;
    for (size_t i = 0; i < NFROZEN_NODES; i++) {
        if (i == NFROZEN_NODES / 2) {
            frefs = at;
            size_t sz = tenure_frozen_object_init(rt, at, refarr_t, FROZEN_REFS);
            TT_CHECK(sz == sizeof(tenure_array_header) + FROZEN_REFS * sizeof(void *), "ref array size %zu", sz);
            TT_CHECK(tenure_array_length(frefs) == FROZEN_REFS);
            for (size_t k = 0; k < FROZEN_REFS; k++)
                TT_CHECK(tt_refs(frefs)[k] == NULL, "frozen ref array not zeroed");
            at += sz;
        }
        fnode[i] = (tt_node *)at;
        size_t sz = tenure_frozen_object_init(rt, at, node_t, 0);
        TT_CHECK(sz == sizeof(tt_node), "frozen node size %zu", sz);
        TT_CHECK(fnode[i]->a == NULL && fnode[i]->b == NULL && fnode[i]->id == 0 && fnode[i]->check == 0,
                 "frozen node not zeroed");
        fnode[i]->id = FROZEN_ID(i);
        tt_node_seal(fnode[i]);
        at += sz;
    }
    fbytes = at;
    size_t sz = tenure_frozen_object_init(rt, at, bytes_t, FROZEN_BYTES);
    TT_CHECK(sz == bytes_size(FROZEN_BYTES), "frozen byte array size %zu", sz);
    unsigned char *d = tenure_array_data(fbytes);
    for (size_t k = 0; k < FROZEN_BYTES; k++) {
        TT_CHECK(d[k] == 0, "frozen byte array not zeroed");
        d[k] = (unsigned char)(k * 13 + 1);
    }
    at += sz;
    block_size = (size_t)(at - block);
    TT_CHECK(block_size <= cap);
}

static void check_frozen_bytes(void) {
    unsigned char *d = tenure_array_data(fbytes);
    TT_CHECK(tenure_array_length(fbytes) == FROZEN_BYTES);
    for (size_t k = 0; k < FROZEN_BYTES; k++)
        TT_CHECK(d[k] == (unsigned char)(k * 13 + 1), "frozen byte %zu changed", k);
}

/* D: rejection helper */
static void expect_rejected(void *start, size_t size, tenure_result want, const char *what) {
    log_.fatal = 0;
    tt_errlog_reset(&log_);
    tenure_clear_error(rt);
    tenure_result r = tenure_register_frozen_segment(rt, start, size);
    log_.fatal = 1;
    TT_EXPECT(r != TENURE_OK, "%s: registration accepted", what);
    if (want != TENURE_OK)
        TT_EXPECT(r == want, "%s: returned %d (%s), expected %d (%s)", what, (int)r, tenure_strerror(r), (int)want,
                  tenure_strerror(want));
    TT_EXPECT(log_.count == 1, "%s: hook called %d times", what, log_.count);
    TT_EXPECT(log_.last == r, "%s: hook got %d, function returned %d", what, (int)log_.last, (int)r);
    TT_EXPECT(strcmp(log_.function, "tenure_register_frozen_segment") == 0, "%s: reported by '%s'", what,
              log_.function);
    TT_EXPECT(tenure_last_error(rt) == r);
    printf("    rejected %-44s -> %d %s (\"%s\")\n", what, (int)r, tenure_strerror(r), log_.message);
    tt_errlog_reset(&log_);
    tenure_clear_error(rt);
}

static void test_invalid(void) {
    printf("  D: invalid registrations\n");
    /* before the valid block is registered: bad shapes */
    expect_rejected(block + 4, block_size - 8, TENURE_INVALID_ARGUMENT, "misaligned start");
    expect_rejected(block, block_size - 4, TENURE_INVALID_ARGUMENT, "misaligned size");
    expect_rejected(block, 0, TENURE_INVALID_ARGUMENT, "zero size");
    expect_rejected(NULL, 64, TENURE_INVALID_ARGUMENT, "NULL start");
    /* not a type of this instance */
    uint64_t *junk = aligned_alloc(8, 256);
    TT_CHECK(junk != NULL);
    memset(junk, 0, 256);
    junk[0] = 0x1234567;
    expect_rejected(junk, 256, TENURE_INVALID_OBJECT, "first word not a type (garbage)");
    junk[0] = 0;
    expect_rejected(junk, 256, TENURE_INVALID_OBJECT, "first word zero");
    junk[0] = (uintptr_t)&junk[4]; /* a pointer, but not to a type */
    expect_rejected(junk, 256, TENURE_INVALID_OBJECT, "first word a pointer to non-type");
    /* a type of another instance */
    tenure_runtime *other = tt_create(NULL, NULL);
    const tenure_type *other_node = tt_register_node(other);
    memset(junk, 0, 256);
    TT_CHECK(tenure_frozen_object_init(other, junk, other_node, 0) == sizeof(tt_node));
    expect_rejected(junk, sizeof(tt_node), TENURE_INVALID_OBJECT, "a type of another instance");
    tenure_destroy(other);
    /* a valid first object followed by garbage */
    memset(junk, 0, 256);
    TT_CHECK(tenure_frozen_object_init(rt, junk, node_t, 0) == sizeof(tt_node));
    junk[sizeof(tt_node) / 8] = 0xdeadbeef;
    expect_rejected(junk, 256, TENURE_INVALID_OBJECT, "second object's header not a type");
    /* the last object does not fit */
    memset(junk, 0, 256);
    TT_CHECK(tenure_frozen_object_init(rt, junk, bytes_t, 200) == bytes_size(200));
    expect_rejected(junk, 128, TENURE_OK, "an object longer than the segment");
    TT_CHECK(!tenure_is_object(rt, junk), "a rejected block's first object is an object");
    free(junk);
}

static void test_overlap(void) {
    expect_rejected(block, block_size, TENURE_OK, "the same segment again");
    expect_rejected(fnode[10], sizeof(tt_node), TENURE_OK, "an object inside a registered segment");
    expect_rejected(fnode[NFROZEN_NODES - 1], sizeof(tt_node) + bytes_size(FROZEN_BYTES), TENURE_OK,
                    "the segment's tail");
    /* straddling: valid objects in the slack before and after the segment */
    char *before = alloc_block + 64 - sizeof(tt_node);
    TT_CHECK(tenure_frozen_object_init(rt, before, node_t, 0) == sizeof(tt_node));
    expect_rejected(before, 2 * sizeof(tt_node), TENURE_OK, "a range straddling the segment's start");
    char *after = block + block_size;
    TT_CHECK(tenure_frozen_object_init(rt, after, node_t, 0) == sizeof(tt_node));
    expect_rejected(fbytes, bytes_size(FROZEN_BYTES) + sizeof(tt_node), TENURE_OK,
                    "a range straddling the segment's end");
    expect_rejected(before, (size_t)(after + sizeof(tt_node) - before), TENURE_OK, "a range containing the segment");
    /* the slack objects alone do not overlap: accepted */
    TT_CHECK_RESULT(tenure_register_frozen_segment(rt, before, sizeof(tt_node)), TENURE_OK);
    TT_CHECK_RESULT(tenure_register_frozen_segment(rt, after, sizeof(tt_node)), TENURE_OK);
    TT_CHECK(tenure_is_object(rt, before) && tenure_is_object(rt, after));
}

/* C: heap walk */
typedef struct walk_state {
    size_t frozen_seen, frozen_bad, total;
    int bad_gen;
} walk_state;

static int walk_visit(void *obj, const tenure_type *type, size_t size, int generation, void *context) {
    walk_state *w = context;
    w->total++;
    if ((char *)obj >= alloc_block + 64 && (char *)obj < alloc_block + 64 + block_size) {
        w->frozen_seen++;
        size_t want = type == node_t     ? sizeof(tt_node)
                      : type == refarr_t ? sizeof(tenure_array_header) + FROZEN_REFS * 8
                                         : bytes_size(FROZEN_BYTES);
        if (size != want || tenure_object_type(rt, obj) != type)
            w->frozen_bad++;
        if (generation != 2)
            w->bad_gen = generation;
    }
    return 0;
}

int main(void) {
    tt_rng_init("frozen");
    double t0 = tt_now();
    tenure_config cfg;
    tt_config(&cfg);
    if (getenv("TENURE_GCCompactMode") == NULL)
        cfg.GCCompactMode = 1;
    if (getenv("TENURE_GCgen0size") == NULL)
        cfg.GCgen0size = 512u << 10;
    rt = tt_create(&cfg, &log_);
    node_t = tt_register_node(rt);
    refarr_t = tt_register_ref_array(rt);
    bytes_t = tt_register_bytes(rt);

    /* A */
    build_block();
    TT_CHECK(!tenure_is_object(rt, fnode[0]), "an unregistered frozen object is an object");
    test_invalid();
    TT_CHECK_RESULT(tenure_register_frozen_segment(rt, block, block_size), TENURE_OK);
    printf("  A: registered %zu bytes: %d nodes, a %d-reference array, a %d-byte array\n", block_size, NFROZEN_NODES,
           FROZEN_REFS, FROZEN_BYTES);
    for (size_t i = 0; i < NFROZEN_NODES; i++) {
        TT_CHECK(tenure_is_object(rt, fnode[i]), "frozen node %zu is not an object", i);
        TT_CHECK(tenure_object_type(rt, fnode[i]) == node_t);
        TT_CHECK(tenure_object_size(rt, fnode[i]) == sizeof(tt_node));
        TT_CHECK(tenure_object_generation(rt, fnode[i]) == 2, "frozen node in generation %d",
                 tenure_object_generation(rt, fnode[i]));
        TT_CHECK(!tenure_is_object(rt, (char *)fnode[i] + 8), "an address inside a frozen object is an object");
    }
    TT_CHECK(tenure_is_object(rt, frefs) && tenure_object_type(rt, frefs) == refarr_t);
    TT_CHECK(tenure_object_generation(rt, frefs) == 2);
    TT_CHECK(tenure_is_object(rt, fbytes) && tenure_object_type(rt, fbytes) == bytes_t);
    TT_CHECK(tenure_object_size(rt, fbytes) == bytes_size(FROZEN_BYTES));
    TT_CHECK(tenure_object_generation(rt, fbytes) == 2);
    TT_CHECK(!tenure_is_object(rt, block + block_size), "the end of a frozen segment is an object");
    TT_CHECK_RESULT(tenure_verify_heap(rt), TENURE_OK);
    test_overlap();

    /* B: frozen -> heap and heap -> frozen */
    uint64_t fb_id[NFROZEN_NODES] = {0}, fr_id[FROZEN_REFS] = {0};
    tenure_handle *fb_weak[NFROZEN_NODES] = {NULL};
    uintptr_t fb_addr[NFROZEN_NODES] = {0};
    uint64_t next_id = 1;
    void *roots[2] = {NULL, NULL}; /* roots[0]: heap ref array whose nodes refer to frozen nodes */
    tenure_root_area *ra = tenure_root_area_add(rt, roots, 2);
    TT_CHECK(ra != NULL);
    size_t nheap = 2000;
    roots[0] = tenure_alloc_array(rt, refarr_t, nheap);
    TT_CHECK(roots[0] != NULL);
    uint64_t *h_id = calloc(nheap, sizeof *h_id);
    size_t *h_target = calloc(nheap, sizeof *h_target);
    TT_CHECK(h_id && h_target);
    tt_node *t = NULL;
    TENURE_FRAME(rt, f, t);
    uintptr_t frozen_addr0 = (uintptr_t)fnode[0];

    size_t rounds = tt_scaled(500, 50);
    uint64_t moves = 0;
    for (size_t r = 0; r < rounds; r++) {
        /* frozen nodes get fresh heap targets */
        for (int k = 0; k < 40; k++) {
            size_t i = (size_t)tt_rand_below(NFROZEN_NODES);
            t = tt_node_new(rt, node_t, next_id++);
            if (tt_rand_below(2))
                tenure_write_ref(rt, t, &t->a, fnode[tt_rand_below(NFROZEN_NODES)]);
            tt_node_seal(t);
            tenure_write_ref(rt, fnode[i], &fnode[i]->b, t);
            tt_node_seal(fnode[i]);
            fb_id[i] = t->id;
            fb_addr[i] = (uintptr_t)t;
            if (fb_weak[i] == NULL) {
                fb_weak[i] = tenure_handle_new(rt, TENURE_HANDLE_WEAK_SHORT, t);
                TT_CHECK(fb_weak[i] != NULL);
            } else {
                TT_CHECK_RESULT(tenure_handle_set(rt, fb_weak[i], t), TENURE_OK);
            }
            t = NULL;
            TT_CHECK(tenure_alloc_array(rt, bytes_t, (size_t)tt_rand_range(16, 2000)) != NULL);
        }
        /* the frozen reference array too */
        for (int k = 0; k < 40; k++) {
            size_t e = (size_t)tt_rand_below(FROZEN_REFS);
            t = tt_node_new(rt, node_t, next_id++);
            tenure_write_ref(rt, frefs, &tt_refs(frefs)[e], t);
            fr_id[e] = t->id;
            t = NULL;
            TT_CHECK(tenure_alloc_array(rt, bytes_t, (size_t)tt_rand_range(16, 2000)) != NULL);
        }
        /* heap nodes referring to frozen nodes */
        for (int k = 0; k < 40; k++) {
            size_t j = (size_t)tt_rand_below(nheap), target = (size_t)tt_rand_below(NFROZEN_NODES);
            t = tt_node_new(rt, node_t, next_id++);
            tenure_write_ref(rt, t, &t->a, fnode[target]);
            tt_node_seal(t);
            tenure_write_ref(rt, roots[0], &tt_refs(roots[0])[j], t);
            h_id[j] = t->id;
            h_target[j] = target;
            t = NULL;
        }
        for (int k = 0; k < 2000; k++)
            TT_CHECK(tenure_alloc_array(rt, bytes_t, (size_t)tt_rand_range(16, 500)) != NULL);
        int gen = (int)tt_rand_below(3);
        tt_collect(rt, gen, tt_rand_below(2) ? TENURE_COLLECT_COMPACT : 0);

        /* checks */
        TT_CHECK((uintptr_t)fnode[0] == frozen_addr0);
        for (size_t i = 0; i < NFROZEN_NODES; i++) {
            tt_node *fz = fnode[i];
            TT_CHECK(tenure_is_object(rt, fz));
            TT_CHECK(fz->id == FROZEN_ID(i) && fz->check == tt_node_sum(fz), "round %zu: frozen node %zu damaged", r,
                     i);
            if (fb_id[i]) {
                TT_CHECK(fz->b != NULL, "round %zu: frozen node %zu lost its heap reference", r, i);
                TT_CHECK_NODE(rt, node_t, fz->b, fb_id[i]);
                TT_CHECK(tenure_handle_get(rt, fb_weak[i]) == fz->b,
                         "round %zu: frozen node %zu: reference %p, but the object is at %p (not updated?)", r, i,
                         (void *)fz->b, tenure_handle_get(rt, fb_weak[i]));
                if ((uintptr_t)fz->b != fb_addr[i])
                    moves++;
                fb_addr[i] = (uintptr_t)fz->b;
                if (fz->b->a)
                    TT_CHECK(tenure_object_type(rt, fz->b->a) == node_t);
            }
        }
        for (size_t e = 0; e < FROZEN_REFS; e++)
            if (fr_id[e])
                TT_CHECK_NODE(rt, node_t, tt_refs(frefs)[e], fr_id[e]);
        for (size_t j = 0; j < nheap; j++) {
            if (!h_id[j])
                continue;
            tt_node *h = tt_refs(roots[0])[j];
            TT_CHECK_NODE(rt, node_t, h, h_id[j]);
            TT_CHECK(h->a == fnode[h_target[j]], "round %zu: heap node's reference to frozen node %zu changed", r,
                     h_target[j]);
        }
        check_frozen_bytes();
        TT_CHECK_RESULT(tenure_verify_heap(rt), TENURE_OK);
    }
    tenure_stats s = tt_stats(rt);
    printf("  B: %zu rounds, %" PRIu64 " GCs (%" PRIu64 " gen1, %" PRIu64 " gen2), %" PRIu64
           " moves of heap objects referenced only from frozen objects\n",
           rounds, s.gc_count, s.gen[1].collections, s.gen[2].collections, moves);
    TT_CHECK(moves > 0, "no heap object referenced from a frozen object moved: references were never updated");

    /* clearing a frozen reference lets its target die */
    size_t cleared = 0;
    for (size_t i = 0; i < NFROZEN_NODES; i += 2) {
        if (!fb_id[i])
            continue;
        tenure_write_ref(rt, fnode[i], &fnode[i]->b, NULL);
        tt_node_seal(fnode[i]);
        fb_id[i] = 0;
        cleared++;
    }
    tt_collect(rt, -1, 0);
    for (size_t i = 0; i < NFROZEN_NODES; i++) {
        if (fb_weak[i] == NULL)
            continue;
        if (fb_id[i])
            TT_CHECK(tenure_handle_get(rt, fb_weak[i]) == fnode[i]->b);
        else
            TT_CHECK(tenure_handle_get(rt, fb_weak[i]) == NULL,
                     "frozen node %zu's former target survived a full GC after the reference was cleared", i);
    }
    printf("  B: %zu targets released by clearing frozen references\n", cleared);

    /* C: the heap walk visits the frozen objects */
    walk_state w;
    memset(&w, 0, sizeof w);
    w.bad_gen = 2;
    TT_CHECK_RESULT(tenure_heap_walk(rt, walk_visit, &w), TENURE_OK);
    printf("  C: heap walk: %zu objects, %zu frozen\n", w.total, w.frozen_seen);
    TT_CHECK(w.frozen_seen == NFROZEN_NODES + 2, "the heap walk visited %zu frozen objects, expected %d", w.frozen_seen,
             NFROZEN_NODES + 2);
    TT_CHECK(w.frozen_bad == 0, "%zu frozen objects with a wrong type or size in the walk", w.frozen_bad);
    TT_EXPECT(w.bad_gen == 2, "the heap walk reported a frozen object in generation %d", w.bad_gen);

    /* a second segment next to nothing in particular: also accepted */
    char *second = aligned_alloc(8, 64);
    TT_CHECK(second != NULL);
    TT_CHECK(tenure_frozen_object_init(rt, second, node_t, 0) == sizeof(tt_node));
    TT_CHECK_RESULT(tenure_register_frozen_segment(rt, second, sizeof(tt_node)), TENURE_OK);
    TT_CHECK(tenure_is_object(rt, second));
    tt_collect(rt, -1, TENURE_COLLECT_COMPACT);
    TT_CHECK_RESULT(tenure_verify_heap(rt), TENURE_OK);

    TENURE_FRAME_POP(rt, f);
    for (size_t i = 0; i < NFROZEN_NODES; i++)
        if (fb_weak[i])
            TT_CHECK_RESULT(tenure_handle_free(rt, fb_weak[i]), TENURE_OK);
    TT_CHECK_RESULT(tenure_root_area_remove(rt, ra), TENURE_OK);
    tenure_destroy(rt);
    free(alloc_block); /* segments stay registered for the instance's lifetime: free after destroy */
    free(second);
    free(h_id);
    free(h_target);
    return tt_finish("frozen", t0);
}
