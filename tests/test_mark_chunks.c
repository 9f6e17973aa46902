/*
 * mark_chunks: large arrays are marked in chunks (gc/mark.c; collector.md, "Mark loop").
 *
 * A reference array of 1,000,000 slots (140,000 under stress), every element a distinct live
 * tt_node holding a distinct child, and an array of 300,000 structs of two references each
 * (30,000 under stress), live in gen2 and go through full GCs (compacting, then the
 * collector's choice) in an instance with the default mark stack (65,536 entries, far fewer
 * than the slots): no GC may overflow the stack (stats.mark_stack_overflows stays 0: before
 * chunking, popping the array pushed all its elements at once) and every node survives
 * intact. Then every element is replaced by a young node, found by gen0 and gen1 GCs through
 * the cards of the old array, still without overflow. The same run in an instance with
 * GCMarkStackSize=16 must overflow, recover and keep everything too.
 */
#include "test_util.h"

typedef struct pair {
    tt_node *left;
    uint64_t tag;
    tt_node *right;
} pair;

typedef struct job {
    uint64_t mark_stack;
    size_t slots, pairs;
    uint64_t overflows;
} job;

static const tenure_type *register_pair_array(tenure_runtime *rt) {
    static const size_t offs[] = {offsetof(pair, left), offsetof(pair, right)};
    return tt_register_struct_array(rt, "pair_array", sizeof(pair), offs, 2);
}

/* Element i of the reference array: node 2i holding its child 2i+1 (generation `base`). */
static void check_refs(tenure_runtime *rt, const tenure_type *node_t, void *arr, size_t n, uint64_t base,
                       const char *when) {
    TT_CHECK(tenure_array_length(arr) == n, "%s: array length %zu", when, tenure_array_length(arr));
    void **e = tt_refs(arr);
    for (size_t i = 0; i < n; i++) {
        tt_node *p = (tt_node *)e[i];
        TT_CHECK(p != NULL, "%s: slot %zu of %zu is empty", when, i, n);
        TT_CHECK(p->id == base + 2 * i && p->check == tt_node_sum(p), "%s: slot %zu broken", when, i);
        TT_CHECK(p->a != NULL && p->a->id == base + 2 * i + 1 && p->a->check == tt_node_sum(p->a),
                 "%s: child of slot %zu broken", when, i);
        if (i % 4096 == 0) {
            TT_CHECK_NODE(rt, node_t, p, base + 2 * i);
            TT_CHECK_NODE(rt, node_t, p->a, base + 2 * i + 1);
        }
    }
}

static void check_pairs(void *arr, size_t n, const char *when) {
    TT_CHECK(tenure_array_length(arr) == n, "%s", when);
    pair *e = (pair *)tenure_array_data(arr);
    for (size_t i = 0; i < n; i++) {
        TT_CHECK(e[i].tag == ~(uint64_t)i, "%s: pair %zu tag", when, i);
        TT_CHECK(e[i].left != NULL && e[i].left->id == 3 * i && e[i].left->check == tt_node_sum(e[i].left),
                 "%s: pair %zu left broken", when, i);
        TT_CHECK(e[i].right != NULL && e[i].right->id == 3 * i + 1 && e[i].right->check == tt_node_sum(e[i].right),
                 "%s: pair %zu right broken", when, i);
    }
}

static tt_node *node_with_child(tenure_runtime *rt, const tenure_type *node_t, uint64_t id) {
    tt_node *child = tt_node_new(rt, node_t, id + 1), *n = NULL;
    TENURE_FRAME(rt, f, child, n);
    n = tt_node_new(rt, node_t, id);
    tenure_write_ref(rt, n, &n->a, child);
    tt_node_seal(n);
    TENURE_FRAME_POP(rt, f);
    return n;
}

static void fill_refs(tenure_runtime *rt, const tenure_type *node_t, void **root, size_t n, uint64_t base) {
    for (size_t i = 0; i < n; i++) {
        tt_node *p = node_with_child(rt, node_t, base + 2 * i);
        tenure_write_ref(rt, *root, &tt_refs(*root)[i], p);
    }
}

static void run(job *j) {
    tt_errlog log = {.fatal = 1};
    tenure_config cfg;
    tt_config(&cfg);
    cfg.GCMarkStackSize = j->mark_stack;
    tenure_runtime *rt = tt_create(&cfg, &log);
    const tenure_type *node_t = tt_register_node(rt);
    const tenure_type *refarr_t = tt_register_ref_array(rt);
    const tenure_type *pairarr_t = register_pair_array(rt);
    void *roots[2] = {NULL, NULL}; /* [0] the reference array, [1] the pair array */
    tenure_root_area *ra = tenure_root_area_add(rt, roots, 2);
    TT_CHECK(ra != NULL);

    roots[0] = tenure_alloc_array(rt, refarr_t, j->slots);
    TT_CHECK(roots[0] != NULL);
    fill_refs(rt, node_t, &roots[0], j->slots, 0);
    roots[1] = tenure_alloc_array(rt, pairarr_t, j->pairs);
    TT_CHECK(roots[1] != NULL);
    for (size_t i = 0; i < j->pairs; i++) {
        tt_node *l = tt_node_new(rt, node_t, 3 * i), *r = NULL;
        TENURE_FRAME(rt, f, l, r);
        r = tt_node_new(rt, node_t, 3 * i + 1);
        pair *e = (pair *)tenure_array_data(roots[1]) + i;
        e->tag = ~(uint64_t)i;
        tenure_write_ref(rt, roots[1], (void **)&e->left, l);
        tenure_write_ref(rt, roots[1], (void **)&e->right, r);
        TENURE_FRAME_POP(rt, f);
    }
    check_refs(rt, node_t, roots[0], j->slots, 0, "built");
    check_pairs(roots[1], j->pairs, "built");

    tt_collect(rt, 2, TENURE_COLLECT_COMPACT); /* promotes everything towards gen2 */
    tt_collect(rt, 2, TENURE_COLLECT_COMPACT);
    int g_arr = tenure_object_generation(rt, roots[0]), g_node = tenure_object_generation(rt, tt_refs(roots[0])[0]);
    TT_CHECK(g_arr >= 2 && g_node == 2, "array in generation %d, its first node in %d", g_arr, g_node);
    check_refs(rt, node_t, roots[0], j->slots, 0, "full compacting GC");
    check_pairs(roots[1], j->pairs, "full compacting GC");
    tt_collect(rt, 2, 0);
    check_refs(rt, node_t, roots[0], j->slots, 0, "full GC");
    check_pairs(roots[1], j->pairs, "full GC");

    /* the old array's elements become young: the ephemeral GCs find them through its cards */
    fill_refs(rt, node_t, &roots[0], j->slots, 10000000);
    tt_collect(rt, 0, 0);
    check_refs(rt, node_t, roots[0], j->slots, 10000000, "gen0 GC");
    tt_collect(rt, 1, 0);
    check_refs(rt, node_t, roots[0], j->slots, 10000000, "gen1 GC");
    tt_collect(rt, 2, 0);
    check_refs(rt, node_t, roots[0], j->slots, 10000000, "last full GC");
    check_pairs(roots[1], j->pairs, "last full GC");

    tenure_stats s = tt_stats(rt);
    j->overflows = s.mark_stack_overflows;
    size_t nodes = 2 * j->slots + 2 * j->pairs;
    TT_CHECK(s.live_bytes_after_gc >= nodes * sizeof(tt_node) + j->slots * sizeof(void *) + j->pairs * sizeof(pair),
             "%llu bytes live after the last GC for %zu nodes and two arrays",
             (unsigned long long)s.live_bytes_after_gc, nodes);
    TT_CHECK(tenure_verify_heap(rt) == TENURE_OK);
    TT_CHECK_RESULT(tenure_root_area_remove(rt, ra), TENURE_OK);
    tenure_destroy(rt);
    printf("  mark stack %" PRIu64 ": %zu slots, %zu pairs: %" PRIu64 " mark stack overflows\n", j->mark_stack,
           j->slots, j->pairs, j->overflows);
}

int main(void) {
    double t0 = tt_now();
    tenure_config def;
    tenure_config_init(&def);
    job normal = {.mark_stack = def.GCMarkStackSize,
                  .slots = tt_scaled(1000000, 140000), /* (more than twice the stack) */
                  .pairs = tt_scaled(300000, 30000)};
    TT_CHECK(normal.slots > 2 * normal.mark_stack, "the array must be far larger than the mark stack");
    run(&normal);
    TT_CHECK(normal.overflows == 0, "%" PRIu64 " mark stack overflows marking a %zu-slot array in chunks",
             normal.overflows, normal.slots);

    job tiny = {.mark_stack = 16, .slots = tt_scaled(300000, 20000), .pairs = tt_scaled(100000, 5000)};
    run(&tiny);
    TT_CHECK(tiny.overflows > 0, "GCMarkStackSize=16 never overflowed");
    printf("mark_chunks: OK (%.2f s)\n", tt_now() - t0);
    return 0;
}
