/*
 * mixed_pinning: objects pinned by TENURE_HANDLE_PINNED handles, scattered through gen0 and
 * gen1 (some pinned while young and then promoted, some pinned after they were promoted and
 * had already moved), among many unpinned objects with garbage between them. With
 * GCCompactMode=1 every GC compacts: the pinned objects stay in place, the unpinned survivors
 * around them move and keep their contents (ids, checksums, references to neighbours and to
 * young objects), and the heap verifies after every round. Pins are also moved around: some
 * are released (the object may move again) and others taken on objects of any generation.
 */
#include "test_util.h"

static tenure_runtime *rt;
static const tenure_type *node_t, *bytes_t;
static size_t n;
static void **live;          /* root area: every object */
static tenure_handle **pins; /* pinned handle or NULL */
static uintptr_t *addr;      /* address when pinned / last seen */
static uint64_t *b_ids;
static uint64_t *ids; /* id of the object in slot i */
static uint64_t next_id;

static void garbage(size_t count) {
    for (size_t k = 0; k < count; k++) {
        void *g = tt_rand_below(3) ? tenure_alloc_array(rt, bytes_t, (size_t)tt_rand_range(8, 400))
                                   : tenure_alloc(rt, node_t);
        TT_CHECK(g != NULL);
    }
}

static void pin(size_t i) {
    TT_CHECK(pins[i] == NULL);
    pins[i] = tenure_handle_new(rt, TENURE_HANDLE_PINNED, live[i]);
    TT_CHECK(pins[i] != NULL);
    addr[i] = (uintptr_t)live[i];
}

static void unpin(size_t i) {
    TT_CHECK(pins[i] != NULL);
    TT_CHECK(tenure_handle_get(rt, pins[i]) == live[i]);
    TT_CHECK_RESULT(tenure_handle_free(rt, pins[i]), TENURE_OK);
    pins[i] = NULL;
}

static size_t build(size_t from, size_t to, unsigned pin_mod) {
    size_t pinned = 0;
    tt_node *p = NULL;
    TENURE_FRAME(rt, f, p);
    for (size_t i = from; i < to; i++) {
        garbage((size_t)tt_rand_range(0, 6));
        ids[i] = i + 1;
        p = tt_node_new(rt, node_t, ids[i]);
        if (i > 0)
            tenure_write_ref(rt, p, &p->a, live[i - 1]);
        tt_node_seal(p);
        live[i] = p;
        addr[i] = (uintptr_t)p;
        if (tt_rand_below(pin_mod) == 0) {
            pin(i);
            pinned++;
        }
    }
    TENURE_FRAME_POP(rt, f);
    return pinned;
}

static void check_all(size_t count, const char *when, uint64_t *moved) {
    for (size_t i = 0; i < count; i++) {
        tt_node *p = live[i];
        TT_CHECK(p != NULL, "%s: object %zu lost", when, i);
        TT_CHECK_NODE(rt, node_t, p, ids[i]);
        TT_CHECK(p->a == (i > 0 ? live[i - 1] : NULL), "%s: object %zu: neighbour link broken", when, i);
        if (b_ids[i])
            TT_CHECK_NODE(rt, node_t, p->b, b_ids[i]);
        else
            TT_CHECK(p->b == NULL);
        int g = tenure_object_generation(rt, p);
        TT_CHECK(g >= 0 && g <= 2, "%s: object %zu in generation %d", when, i, g);
        if (pins[i]) {
            TT_CHECK((uintptr_t)p == addr[i],
                     "%s: object %zu (generation %d) held by a pinned handle moved from %#" PRIxPTR " to %p", when, i,
                     g, addr[i], (void *)p);
            TT_CHECK(tenure_handle_get(rt, pins[i]) == p, "%s: pinned handle %zu out of date", when, i);
        } else if ((uintptr_t)p != addr[i]) {
            if (moved)
                (*moved)++;
            addr[i] = (uintptr_t)p;
        }
    }
}

static void verify(const char *when) {
    tenure_result r = tenure_verify_heap(rt);
    TT_CHECK(r == TENURE_OK, "%s: heap verification failed: %s", when, tenure_strerror(r));
}

static void mutate(size_t count, size_t upto) {
    tt_node *nn = NULL;
    TENURE_FRAME(rt, f, nn);
    for (size_t k = 0; k < count; k++) {
        nn = tt_node_new(rt, node_t, ++next_id);
        size_t i = (size_t)tt_rand_below(upto);
        tt_node *p = live[i];
        tenure_write_ref(rt, p, &p->b, tt_rand_below(5) ? nn : NULL);
        tt_node_seal(p);
        b_ids[i] = p->b ? nn->id : 0;
        garbage(2);
    }
    TENURE_FRAME_POP(rt, f);
}

/* Replace the object in slot i by a fresh (gen0) one, pinned with probability 1/3. */
static void replace(size_t i) {
    if (pins[i])
        unpin(i);
    tt_node *p = NULL;
    TENURE_FRAME(rt, f, p);
    garbage((size_t)tt_rand_range(0, 4));
    ids[i] = ++next_id;
    p = tt_node_new(rt, node_t, ids[i]);
    if (i > 0)
        tenure_write_ref(rt, p, &p->a, live[i - 1]);
    tt_node_seal(p);
    live[i] = p;
    addr[i] = (uintptr_t)p;
    b_ids[i] = 0;
    if (i + 1 < n) {
        tt_node *q = live[i + 1];
        tenure_write_ref(rt, q, &q->a, p);
        tt_node_seal(q);
    }
    if (tt_rand_below(3) == 0)
        pin(i);
    TENURE_FRAME_POP(rt, f);
}

static void count_gens(size_t count, size_t pinned_by_gen[3], size_t all_by_gen[3]) {
    memset(pinned_by_gen, 0, 3 * sizeof *pinned_by_gen);
    memset(all_by_gen, 0, 3 * sizeof *all_by_gen);
    for (size_t i = 0; i < count; i++) {
        int g = tenure_object_generation(rt, live[i]);
        TT_CHECK(g >= 0 && g <= 2);
        all_by_gen[g]++;
        if (pins[i])
            pinned_by_gen[g]++;
    }
}

int main(void) {
    tt_rng_init("mixed_pinning");
    double t0 = tt_now();
    tt_errlog log = {.fatal = 1};
    tenure_config cfg;
    tt_config(&cfg);
    if (getenv("TENURE_GCCompactMode") == NULL)
        cfg.GCCompactMode = 1;
    if (getenv("TENURE_GCgen0size") == NULL)
        cfg.GCgen0size = 64u << 20; /* the build does not collect */
    rt = tt_create(&cfg, &log);
    node_t = tt_register_node(rt);
    bytes_t = tt_register_bytes(rt);

    n = tt_scaled(30000, 3000);
    live = calloc(n, sizeof *live);
    pins = calloc(n, sizeof *pins);
    addr = calloc(n, sizeof *addr);
    b_ids = calloc(n, sizeof *b_ids);
    ids = calloc(n, sizeof *ids);
    TT_CHECK(live && pins && addr && b_ids && ids);
    tenure_root_area *ra = tenure_root_area_add(rt, live, n);
    TT_CHECK(ra != NULL);
    next_id = n + 1;
    uint64_t moved = 0;

    /* first half: pinned while young, then promoted to gen1 by a gen0 GC */
    size_t half = n / 2;
    size_t pinned = build(0, half, 12);
    check_all(half, "built first half", NULL);
    tt_collect(rt, 0, 0);
    check_all(half, "first gen0 GC", &moved);
    verify("first gen0 GC");
    /* pin some promoted objects that are not pinned yet (they may already have moved) */
    for (size_t k = 0; k < half / 40; k++) {
        size_t i = (size_t)tt_rand_below(half);
        if (!pins[i]) {
            pin(i);
            pinned++;
        }
    }
    /* second half: young, pinned and unpinned, garbage between */
    pinned += build(half, n, 12);
    size_t pg[3], ag[3];
    count_gens(n, pg, ag);
    printf("  %zu objects, %zu pinned; before the first mixed GC: pinned per generation %zu/%zu/%zu, all %zu/%zu/%zu\n",
           n, pinned, pg[0], pg[1], pg[2], ag[0], ag[1], ag[2]);
    if (!tt_stress_mode())
        TT_CHECK(pg[0] > 0 && pg[1] > 0, "pinned objects are not spread over gen0 and gen1");
    check_all(n, "built", &moved);
    verify("built");

    size_t rounds = tt_scaled(120, 25);
    uint64_t moved_before = moved, gen_pins_seen[3] = {0, 0, 0};
    for (size_t r = 0; r < rounds; r++) {
        garbage(tt_scaled(8000, 800));
        mutate(50, n);
        garbage(500);
        /* move some pins around */
        for (int k = 0; k < 10; k++) {
            size_t i = (size_t)tt_rand_below(n);
            if (pins[i])
                unpin(i);
            else
                pin(i);
        }
        /* fresh objects, some pinned, so that gen0 and gen1 keep pinned objects */
        for (int k = 0; k < 60; k++)
            replace((size_t)tt_rand_below(n));
        count_gens(n, pg, ag);
        for (int g = 0; g < 3; g++)
            gen_pins_seen[g] += pg[g];
        tenure_stats s_before = tt_stats(rt);
        uint64_t gsel = tt_rand_below(6);
        int gen = gsel < 3 ? 0 : gsel < 5 ? 1 : 2;
        tt_collect(rt, gen, tt_rand_below(2) ? TENURE_COLLECT_COMPACT : 0);
        char when[48];
        snprintf(when, sizeof when, "round %zu (gen%d GC)", r, gen);
        check_all(n, when, &moved);
        verify(when);
        tenure_gc_info info;
        tenure_get_last_gc_info(rt, &info);
        if (getenv("TENURE_GCCompactMode") == NULL)
            TT_CHECK(info.compacted & 1, "%s: GCCompactMode=1 but gen0 was not compacted (mask %d)", when,
                     info.compacted);
        size_t pinned_condemned = 0;
        for (int g = 0; g <= gen; g++)
            pinned_condemned += pg[g];
        if (info.index == s_before.gc_count + 1) /* no GCStress GC in between: pg describes this GC's heap */
            TT_EXPECT(info.pinned_objects >= pinned_condemned,
                      "%s: the GC saw %" PRIu64 " pinned objects, %zu pinned handles point into its generations", when,
                      info.pinned_objects, pinned_condemned);
    }
    tenure_stats s = tt_stats(rt);
    printf("  %zu rounds, %" PRIu64 " GCs (%" PRIu64 " compacting, %" PRIu64 " sweeping), %" PRIu64
           " moves of unpinned objects (%" PRIu64 " in the rounds), pinned_objects %" PRIu64
           ", pinned object-rounds per generation %" PRIu64 "/%" PRIu64 "/%" PRIu64 "\n",
           rounds, s.gc_count, s.compacting_gcs, s.sweeping_gcs, moved, moved - moved_before, s.pinned_objects,
           gen_pins_seen[0], gen_pins_seen[1], gen_pins_seen[2]);
    TT_CHECK(moved - moved_before > 0, "no unpinned object moved: nothing was compacted around the pins");
    if (getenv("TENURE_GCCompactMode") == NULL)
        TT_CHECK(s.sweeping_gcs == 0);

    /* drop every pin: everything still intact after compacting full GCs */
    for (size_t i = 0; i < n; i++)
        if (pins[i])
            unpin(i);
    TT_CHECK(tenure_handle_count(rt) == 0);
    for (int k = 0; k < 2; k++) {
        garbage(2000);
        tt_collect(rt, -1, TENURE_COLLECT_COMPACT);
        check_all(n, "after unpinning", NULL);
        verify("after unpinning");
    }
    TT_CHECK_RESULT(tenure_root_area_remove(rt, ra), TENURE_OK);
    tenure_destroy(rt);
    free(live);
    free(pins);
    free(addr);
    free(b_ids);
    free(ids);
    return tt_finish("mixed_pinning", t0);
}
