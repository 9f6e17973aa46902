/*
 * test_embedder_conveniences.c - the conveniences an interpreter asked for (issue 18):
 *
 *   A  TENURE_SCOPED_FRAME pops itself on every way out of its scope: a return from inside a
 *      loop, a break, a goto, the closing brace, deep recursion that returns early at a random
 *      depth; nested with TENURE_FRAME in between. After each call the thread's frame chain is
 *      what it was (an outer TENURE_FRAME_POP reports a mismatch otherwise), and the objects
 *      the scoped frames name survive compacting GCs with their slots updated.
 *   B  tenure_object_type_inline gives what tenure_object_type gives for fixed objects, arrays,
 *      large and pinned objects, before and after compacting GCs moved them.
 */
#include "test_util.h"

static tenure_runtime *rt;
static const tenure_type *node_t, *refs_t, *bytes_t;
static tt_errlog g_log;
static uint64_t next_id = 1;

/* ------------------------------------------------------------------ A. scoped frames */

/* Builds a list of `depth` nodes by recursion; returns early (through the scoped frame) at
 * depth `stop_at`, collecting on the way down when `collect_every` divides the depth. */
static tt_node *build(size_t depth, size_t stop_at, size_t collect_every) {
    tt_node *n = NULL, *rest = NULL;
    TENURE_SCOPED_FRAME(rt, frame, n, rest);
    n = tt_node_new(rt, node_t, next_id++);
    if (depth == stop_at)
        return n; /* the early way out */
    if (collect_every && depth % collect_every == 0)
        tt_collect(rt, 0, TENURE_COLLECT_COMPACT);
    rest = build(depth + 1, stop_at, collect_every);
    tenure_write_ref(rt, n, &n->a, rest);
    tt_node_seal(n);
    return n;
}

/* Leaves its scopes by break, goto and the closing brace, with a GC inside each. */
static int loops_and_gotos(int rounds) {
    int seen = 0;
    for (int r = 0; r < rounds; r++) {
        tt_node *a = NULL;
        TENURE_SCOPED_FRAME(rt, frame, a);
        a = tt_node_new(rt, node_t, 1000000 + (uint64_t)r);
        tt_collect(rt, 0, TENURE_COLLECT_COMPACT);
        TT_CHECK_NODE(rt, node_t, a, 1000000 + (uint64_t)r);
        if (r == rounds - 1)
            break; /* popped by the break */
        if (r % 3 == 1)
            continue; /* popped by the continue */
        seen++;
    }
    {
        tt_node *b = NULL;
        TENURE_SCOPED_FRAME(rt, frame, b);
        b = tt_node_new(rt, node_t, 7);
        if (b->id == 7)
            goto out; /* popped by the goto */
        seen = -1000;
    }
out:
    return seen;
}

static void check_list(tt_node *head, uint64_t first_id, size_t length) {
    size_t k = 0;
    for (tt_node *p = head; p != NULL; p = p->a, k++)
        TT_CHECK_NODE(rt, node_t, p, first_id + k);
    TT_CHECK(k == length, "list of %zu nodes, expected %zu", k, length);
}

static void test_scoped_frames(void) {
    tt_node *outer = NULL, *list = NULL;
    TENURE_FRAME(rt, frame, outer, list);
    outer = tt_node_new(rt, node_t, next_id++);
    uint64_t outer_id = outer->id;
    size_t rounds = tt_scaled(60, 10);
    for (size_t r = 0; r < rounds; r++) {
        size_t stop_at = 1 + (size_t)tt_rand_below(200);
        uint64_t first = next_id;
        list = build(1, stop_at, 1 + (size_t)tt_rand_below(40));
        tt_collect(rt, (int)tt_rand_below(3), TENURE_COLLECT_COMPACT);
        check_list(list, first, stop_at);
        TT_CHECK_NODE(rt, node_t, outer, outer_id);
    }
    TT_CHECK(loops_and_gotos(7) == 4, "the loop took a wrong path");
    TT_CHECK(g_log.count == 0, "a scoped frame was not popped: %s", g_log.message);
    TENURE_FRAME_POP(rt, frame); /* reports a mismatch if a scoped frame stayed pushed */
    TT_CHECK(g_log.count == 0, "the outer frame's pop found another frame on top: %s", g_log.message);
    printf("  A: %zu recursive builds with early returns and compacting GCs inside scoped frames\n", rounds);
}

/* ------------------------------------------------------------------ B. inline type query */

static void check_types(void **objs, size_t n, const char *when) {
    for (size_t i = 0; i < n; i++) {
        const tenure_type *checked = tenure_object_type(rt, objs[i]);
        TT_CHECK(checked != NULL, "%s: object %zu is not an object", when, i);
        TT_CHECK(tenure_object_type_inline(objs[i]) == checked, "%s: object %zu: the inline type differs", when, i);
    }
}

static void test_inline_type(void) {
    enum { N = 512 };
    void **objs = calloc(N, sizeof *objs);
    TT_CHECK(objs != NULL);
    tenure_root_area *area = tenure_root_area_add(rt, objs, N);
    TT_CHECK(area != NULL);
    const tenure_type *expected[N];
    for (size_t i = 0; i < N; i++) {
        switch (tt_rand_below(5)) {
        case 0: objs[i] = tt_node_new(rt, node_t, next_id++), expected[i] = node_t; break;
        case 1: objs[i] = tenure_alloc_array(rt, refs_t, (size_t)tt_rand_below(64)), expected[i] = refs_t; break;
        case 2: objs[i] = tenure_alloc_array(rt, bytes_t, (size_t)tt_rand_below(4096)), expected[i] = bytes_t; break;
        case 3:
            objs[i] = tenure_alloc_array(rt, bytes_t, 100000 + (size_t)tt_rand_below(1000)), expected[i] = bytes_t;
            break; /* the large object heap */
        default: objs[i] = tenure_alloc_pinned(rt, node_t), expected[i] = node_t; break;
        }
        TT_CHECK(objs[i] != NULL, "allocation %zu failed", i);
    }
    check_types(objs, N, "after allocation");
    for (int round = 0; round < 3; round++) {
        tt_collect(rt, round, TENURE_COLLECT_COMPACT | TENURE_COLLECT_COMPACT_LOH);
        check_types(objs, N, "after a compacting GC");
    }
    for (size_t i = 0; i < N; i++)
        TT_CHECK(tenure_object_type_inline(objs[i]) == expected[i], "object %zu: not the type it was allocated with",
                 i);
    TT_CHECK_RESULT(tenure_root_area_remove(rt, area), TENURE_OK);
    free(objs);
    printf("  B: the inline type of %d objects (fixed, arrays, large, pinned) before and after 3 compacting GCs\n", N);
}

int main(void) {
    tt_rng_init("embedder_conveniences");
    double t0 = tt_now();
    g_log.fatal = 0;
    tenure_config cfg;
    tt_config(&cfg);
    rt = tt_create(&cfg, &g_log);
    node_t = tt_register_node(rt);
    refs_t = tt_register_ref_array(rt);
    bytes_t = tt_register_bytes(rt);
    test_scoped_frames();
    test_inline_type();
    tenure_destroy(rt);
    return tt_finish("embedder_conveniences", t0);
}
