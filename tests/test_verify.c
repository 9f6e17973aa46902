/*
 * verify: tenure_verify_heap returns TENURE_OK (and stays quiet) on a healthy heap, and
 * returns TENURE_HEAP_CORRUPT, reporting through the hook, when a reference field is corrupted
 * behind the barrier's back:
 *   - a reference into the middle of another object,
 *   - a reference to malloc'd memory,
 *   - an old-to-young reference stored without the barrier (card not dirty),
 *   - a reference to a dead object whose space a sweeping GC turned into free space,
 *   - a header word that is not a type.
 * Each corruption is undone before anything else happens, and the heap verifies again.
 */
#include "test_util.h"

static tenure_runtime *rt;
static tt_errlog log_;
static const tenure_type *node_t, *refarr_t, *bytes_t;
static void *roots[4];
static size_t list_len;

static void expect_ok(const char *when) {
    tt_errlog_reset(&log_);
    tenure_clear_error(rt);
    tenure_result r = tenure_verify_heap(rt);
    TT_CHECK(r == TENURE_OK, "%s: tenure_verify_heap returned %d (%s); hook: %s", when, (int)r, tenure_strerror(r),
             log_.message);
    TT_CHECK(log_.count == 0, "%s: the verifier reported '%s' on a healthy heap", when, log_.message);
}

static void expect_corrupt(const char *what) {
    int fatal = log_.fatal;
    log_.fatal = 0;
    tt_errlog_reset(&log_);
    tenure_clear_error(rt);
    tenure_result r = tenure_verify_heap(rt);
    log_.fatal = fatal;
    TT_EXPECT(r == TENURE_HEAP_CORRUPT, "%s: tenure_verify_heap returned %d (%s)", what, (int)r, tenure_strerror(r));
    TT_EXPECT(log_.count >= 1, "%s: not reported through the hook", what);
    if (log_.count >= 1) {
        TT_EXPECT(log_.last == TENURE_HEAP_CORRUPT, "%s: hook got %d", what, (int)log_.last);
        TT_EXPECT(strcmp(log_.function, "tenure_verify_heap") == 0, "%s: reported by '%s'", what, log_.function);
    }
    TT_EXPECT(tenure_last_error(rt) == r);
    if (r == TENURE_HEAP_CORRUPT)
        printf("  %s: detected (%d report%s, e.g. \"%s\")\n", what, log_.count, log_.count == 1 ? "" : "s",
               log_.message);
    tt_errlog_reset(&log_);
    tenure_clear_error(rt);
}

static void build(void) {
    tt_node *n = NULL;
    TENURE_FRAME(rt, f, n);
    for (size_t i = list_len; i-- > 0;) {
        n = tt_node_new(rt, node_t, i + 1);
        tenure_write_ref(rt, n, &n->a, roots[0]);
        tt_node_seal(n);
        roots[0] = n;
        if (i % 7 == 0)
            TT_CHECK(tenure_alloc_array(rt, bytes_t, (size_t)tt_rand_below(300)) != NULL);
    }
    roots[1] = tenure_alloc_array(rt, refarr_t, 200);
    TT_CHECK(roots[1] != NULL);
    n = (tt_node *)roots[0];
    for (size_t i = 0; i < 200; i++, n = n->a)
        tenure_write_ref(rt, roots[1], &tt_refs(roots[1])[i], n);
    TENURE_FRAME_POP(rt, f);
}

static void check(void) {
    tt_node *n = (tt_node *)roots[0];
    for (size_t i = 0; i < list_len; i++, n = n->a)
        TT_CHECK_NODE(rt, node_t, n, i + 1);
    TT_CHECK(n == NULL);
    n = (tt_node *)roots[0];
    for (size_t i = 0; i < 200; i++, n = n->a)
        TT_CHECK(tt_refs(roots[1])[i] == n);
}

static tt_node *nth(size_t i) {
    tt_node *n = (tt_node *)roots[0];
    while (i-- > 0)
        n = n->a;
    return n;
}

int main(void) {
    tt_rng_init("verify");
    double t0 = tt_now();
    log_.fatal = 1;
    tenure_config cfg;
    tt_config(&cfg);
    cfg.GCCompactMode = 0;
    rt = tt_create(&cfg, &log_);
    node_t = tt_register_node(rt);
    refarr_t = tt_register_ref_array(rt);
    bytes_t = tt_register_bytes(rt);
    tenure_root_area *ra = tenure_root_area_add(rt, roots, 4);
    TT_CHECK(ra != NULL);
    list_len = tt_scaled(20000, 2000);

    expect_ok("empty heap");
    build();
    expect_ok("before any GC");
    tt_collect(rt, 0, 0);
    expect_ok("after a gen0 GC");
    tt_collect(rt, -1, TENURE_COLLECT_COMPACT);
    expect_ok("after a compacting full GC");
    tt_collect(rt, -1, 0);
    expect_ok("after a full GC");
    check();

    /* 1. a reference into the middle of another object */
    tt_node *x = nth(10), *y = nth(500);
    tt_node *saved = x->b;
    x->b = (tt_node *)((char *)y + 8);
    expect_corrupt("reference into the middle of an object");
    x->b = saved;
    expect_ok("after undoing corruption 1");

    /* 2. a reference to malloc'd memory */
    void *m = calloc(1, 128);
    TT_CHECK(m != NULL);
    x = nth(20);
    saved = x->b;
    x->b = (tt_node *)m;
    expect_corrupt("reference to malloc'd memory");
    x->b = saved;
    expect_ok("after undoing corruption 2");
    free(m);

    /* 3. old -> young without the barrier */
    roots[2] = tt_node_new(rt, node_t, 999999); /* young (allocation does not collect here unless GCStress) */
    x = nth(30);
    int gx = tenure_object_generation(rt, x), gz = tenure_object_generation(rt, roots[2]);
    if (gz < gx) {
        saved = x->b;
        x->b = (tt_node *)roots[2]; /* no tenure_write_ref: the card stays clean */
        expect_corrupt("old-to-young reference stored without the barrier");
        x->b = saved;
        expect_ok("after undoing corruption 3");
    } else {
        printf("  (skipped the card check: generations %d -> %d)\n", gx, gz);
    }
    roots[2] = NULL;

    /* still a working heap */
    tt_collect(rt, -1, TENURE_COLLECT_COMPACT);
    check();
    expect_ok("at the end");
    TT_CHECK_RESULT(tenure_root_area_remove(rt, ra), TENURE_OK);
    tenure_destroy(rt);

    /* 4. a reference to a dead object in swept space (always-sweep instance) */
    tt_config(&cfg);
    cfg.GCCompactMode = 2;
    rt = tt_create(&cfg, &log_);
    node_t = tt_register_node(rt);
    refarr_t = tt_register_ref_array(rt);
    bytes_t = tt_register_bytes(rt);
    memset(roots, 0, sizeof roots);
    ra = tenure_root_area_add(rt, roots, 4);
    list_len = tt_scaled(2000, 500);
    build();
    /* a dead node between live ones */
    int before = (int)tt_stats(rt).gc_count;
    roots[2] = tt_node_new(rt, node_t, 1);
    tt_node *dead = tt_node_new(rt, node_t, 2);
    roots[3] = tt_node_new(rt, node_t, 3);
    uintptr_t dead_addr = (uintptr_t)dead;
    dead = NULL;
    tt_collect(rt, -1, 0);
    tt_collect(rt, -1, 0);
    expect_ok("sweeping instance");
    TT_CHECK(tt_stats(rt).compacting_gcs == 0);
    if ((int)tt_stats(rt).gc_count == before + 2) {
        /* nothing moved, so the dead node's space is free space now */
        TT_CHECK(tenure_is_object(rt, (void *)dead_addr) == 0, "a dead object is still an object after a sweep");
        x = (tt_node *)roots[2];
        TT_CHECK_NODE(rt, node_t, x, 1);
        x->b = (tt_node *)dead_addr;
        expect_corrupt("reference to a dead object in swept space");
        x->b = NULL;
        expect_ok("after undoing corruption 4");
    } else {
        printf("  (skipped the swept-space check: GCStress collected in between)\n");
    }
    check();

    /* 5. a header word that is not a type (last: a verifier that trusts headers crashes here) */
    printf("  corrupting a header word...\n");
    fflush(stdout);
    x = nth(40);
    uintptr_t word = x->header.tenure__word;
    x->header.tenure__word = (uintptr_t)0x10;
    expect_corrupt("header word that is not a type");
    x->header.tenure__word = word;
    expect_ok("after undoing corruption 5");
    check();

    TT_CHECK_RESULT(tenure_root_area_remove(rt, ra), TENURE_OK);
    tenure_destroy(rt);
    return tt_finish("verify", t0);
}
