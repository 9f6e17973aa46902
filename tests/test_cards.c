/*
 * cards: the card scan of ephemeral GCs (gc/cards.c, docs/design/collector.md "Cards").
 *  A  a card the scan rewrote is not wrongly cleared: old-to-young references stored into
 *     one card of a gen2 array over several gen0 GCs (each rewrites the card to "refers to
 *     gen1", and the next gen0 GCs skip it) are found by the gen1 GC that follows, and the
 *     objects survive; run with the card slot list as reserved and with the list reserved
 *     empty (every slot goes through the fallback walk of relocation, tn_mem_fault)
 *  B  stale cards are cleared: a card whose young slot was overwritten is 0 after the next
 *     GC that scans it (a gen0 GC for "refers to gen0", a gen1 GC for "refers to gen1"); the
 *     values are read from the card table and checked exactly (H7)
 *  C  HeapVerify's H7 check reports a card left stale after a GC
 *  D  random stores of young, old and NULL references into gen1 and gen2 objects over many
 *     gen0/gen1/gen2 GCs, some compacting: every reference checked after every GC against a
 *     shadow copy (seeded: TENURE_TEST_SEED replays)
 */
#include "test_util.h"
#include "runtime.h" /* (src/) the card table, tn_gc_card_value, tn_gc_verify, tn_mem_fault */

static tt_errlog log_ = {.fatal = 1};

static tenure_runtime *create(void) {
    tenure_config cfg;
    tt_config(&cfg); /* precise stacks: no stale word pins (and demotes) a young node */
    return tt_create(&cfg, &log_);
}

/* A gen0 or gen1 GC; with `no_list` the card slot list is reserved empty and the GC takes the
 * relocation walk of the cards (the first GC of the instance must have had no memory either,
 * so that nothing was reserved before). */
static void collect(tenure_runtime *rt, int gen, unsigned flags, bool no_list) {
    if (no_list)
        tn_mem_fault(1, true);
    tenure_result r = tenure_collect(rt, gen, flags);
    if (no_list)
        tn_mem_fault(0, false);
    TT_CHECK(r == TENURE_OK, "tenure_collect(%d): %s", gen, tenure_strerror(r));
}

/* A gen2 reference array of n NULLs, held by roots[0]. */
static void *old_array(tenure_runtime *rt, void **roots, size_t n, bool no_list) {
    roots[0] = tenure_alloc_array(rt, tt_register_ref_array(rt), n);
    TT_CHECK(roots[0] != NULL);
    collect(rt, -1, 0, no_list);
    collect(rt, -1, 0, no_list);
    TT_CHECK(tenure_object_generation(rt, roots[0]) == 2);
    return roots[0];
}

static void garbage(tenure_runtime *rt, const tenure_type *t, int n) {
    for (int i = 0; i < n; i++)
        tt_node_new(rt, t, 999999);
}

/* The card index of a slot. */
static size_t card_index(tenure_runtime *rt, const void *slot) {
    return ((uintptr_t)slot - (uintptr_t)rt->base) >> TENURE__CARD_SHIFT;
}

/* ------------------------------------------------------------------ A */
#define ROUNDS 6

static void test_not_wrongly_cleared(bool no_list) {
    printf("  A: old-to-young references in one card over %d gen0 GCs (%s)\n", ROUNDS,
           no_list ? "card slot list reserved empty" : "card slot list");
    tenure_runtime *rt = create();
    const tenure_type *node_t = tt_register_node(rt);
    void *roots[1] = {NULL};
    tenure_root_area *ra = tenure_root_area_add(rt, roots, 1);
    TT_CHECK(ra != NULL);
    bool exact = !tt_stress_mode();
    void *arr = old_array(rt, roots, 1024, no_list);
    if (no_list)
        TT_CHECK(rt->card.card_slots.cap == 0, "the card slot list was reserved (%zu)", rt->card.card_slots.cap);
    uint64_t shortfalls = tt_stats(rt).gc_scratch_shortfalls;
    int FIRST = 8; /* slots FIRST..FIRST+ROUNDS-1 of the array: one card */
    while (card_index(rt, &tt_refs(arr)[FIRST]) != card_index(rt, &tt_refs(arr)[FIRST + ROUNDS - 1]))
        FIRST++;
    for (int k = 0; k < ROUNDS; k++) {
        garbage(rt, node_t, 200); /* survivors move when gen0 compacts */
        tt_node *young = tt_node_new(rt, node_t, 1000 + (uint64_t)k);
        arr = roots[0];
        tenure_write_ref(rt, arr, &tt_refs(arr)[FIRST + k], young);
        young = NULL;
        TT_CHECK(tn_gc_card_value(rt, &tt_refs(arr)[FIRST + k]) == 1, "the barrier writes 1");
        collect(rt, 0, TENURE_COLLECT_COMPACT, no_list);
        arr = roots[0];
        for (int j = 0; j <= k; j++)
            TT_CHECK_NODE(rt, node_t, tt_refs(arr)[FIRST + j], 1000 + (uint64_t)j);
        if (exact) { /* (GCStress adds GCs of any generation: then only survival is checked) */
            for (int j = 0; j <= k; j++)
                TT_CHECK(tenure_object_generation(rt, tt_refs(arr)[FIRST + j]) == 1);
            /* the card now says "refers to gen1": the next gen0 GCs do not scan it */
            TT_CHECK(tn_gc_card_value(rt, &tt_refs(arr)[FIRST]) == 2, "card %u after gen0 GC %d",
                     tn_gc_card_value(rt, &tt_refs(arr)[FIRST]), k);
        }
        TT_CHECK(tn_gc_bundle_value(rt, &tt_refs(arr)[FIRST]) != 0 &&
                 tn_gc_bundle_value(rt, &tt_refs(arr)[FIRST]) <= 2);
    }
    if (no_list) {
        TT_CHECK(rt->card.card_slots_short, "the card slot list was not short: the fallback was not tested");
        TT_CHECK(tt_stats(rt).gc_scratch_shortfalls > shortfalls);
    }
    /* the gen1 GC finds them only through the card it did not clear */
    garbage(rt, node_t, 500);
    collect(rt, 1, TENURE_COLLECT_COMPACT, no_list);
    arr = roots[0];
    for (int j = 0; j < ROUNDS; j++) {
        TT_CHECK_NODE(rt, node_t, tt_refs(arr)[FIRST + j], 1000 + (uint64_t)j);
        TT_CHECK(tenure_object_generation(rt, tt_refs(arr)[FIRST + j]) == 2);
    }
    /* all now gen2 (whatever GCStress added): the gen1 GC cleared the card */
    TT_CHECK(tn_gc_card_value(rt, &tt_refs(arr)[FIRST]) == 0, "card %u after the gen1 GC",
             tn_gc_card_value(rt, &tt_refs(arr)[FIRST]));
    TT_CHECK_RESULT(tenure_verify_heap(rt), TENURE_OK);
    TT_CHECK_RESULT(tenure_root_area_remove(rt, ra), TENURE_OK);
    tenure_destroy(rt);
}

/* ------------------------------------------------------------------ B */
static void test_stale_cleared(void) {
    printf("  B: stale cards are cleared by the next GC that scans them\n");
    tenure_runtime *rt = create();
    const tenure_type *node_t = tt_register_node(rt);
    void *roots[2] = {NULL, NULL};
    tenure_root_area *ra = tenure_root_area_add(rt, roots, 2);
    void *arr = old_array(rt, roots, 1024, false);

    /* "refers to gen0", overwritten with NULL: the gen0 GC clears it */
    tt_node *young = tt_node_new(rt, node_t, 1);
    arr = roots[0];
    void **slot = &tt_refs(arr)[300];
    tenure_write_ref(rt, arr, slot, young);
    TT_CHECK(tn_gc_card_value(rt, slot) == 1);
    tenure_write_ref(rt, arr, slot, NULL);
    TT_CHECK(tn_gc_card_value(rt, slot) == 1, "the barrier never lowers a card");
    tt_collect(rt, 0, 0);
    arr = roots[0];
    slot = &tt_refs(arr)[300];
    TT_CHECK(tn_gc_card_value(rt, slot) == 0, "card %u: a stale card survived the gen0 GC that scanned it",
             tn_gc_card_value(rt, slot));

    /* "refers to gen1", overwritten with an old object: kept by gen0 GCs (they do not scan
     * it), cleared by the gen1 GC */
    young = tt_node_new(rt, node_t, 2);
    arr = roots[0];
    slot = &tt_refs(arr)[300];
    tenure_write_ref(rt, arr, slot, young);
    young = NULL;
    tt_collect(rt, 0, 0);
    arr = roots[0];
    slot = &tt_refs(arr)[300];
    TT_CHECK(tenure_object_generation(rt, *slot) == 1);
    TT_CHECK(tn_gc_card_value(rt, slot) == 2);
    roots[1] = arr; /* an old object to store instead */
    tenure_write_ref(rt, arr, slot, roots[1]);
    tt_collect(rt, 0, 0);
    arr = roots[0];
    slot = &tt_refs(arr)[300];
    TT_CHECK(tn_gc_card_value(rt, slot) == 2, "card %u (a gen0 GC does not look at \"refers to gen1\")",
             tn_gc_card_value(rt, slot));
    tt_collect(rt, 1, 0);
    arr = roots[0];
    slot = &tt_refs(arr)[300];
    TT_CHECK(tn_gc_card_value(rt, slot) == 0, "card %u: a stale card survived the gen1 GC", tn_gc_card_value(rt, slot));
    TT_CHECK(*slot == roots[0]);
    TT_CHECK_RESULT(tenure_root_area_remove(rt, ra), TENURE_OK);
    tenure_destroy(rt);
}

/* ------------------------------------------------------------------ C */
static void test_verify_reports_stale(void) {
    printf("  C: HeapVerify reports a card a GC left stale (H7)\n");
    tenure_runtime *rt = create();
    void *roots[1] = {NULL};
    tenure_root_area *ra = tenure_root_area_add(rt, roots, 1);
    void *arr = old_array(rt, roots, 1024, false);
    tt_collect(rt, 0, 0);
    arr = roots[0];
    size_t c = ((uintptr_t)&tt_refs(arr)[500] - (uintptr_t)rt->base) >> TENURE__CARD_SHIFT;
    TT_CHECK(rt->cards[c] == 0);
    rt->cards[c] = 1; /* as if the gen0 GC had not recomputed it */
    rt->card_bundles[c >> (TENURE__BUNDLE_SHIFT - TENURE__CARD_SHIFT)] = 1;
    log_.fatal = 0;
    tt_errlog_reset(&log_);
    size_t problems = tn_gc_verify(rt, "after a GC");
    log_.fatal = 1;
    TT_CHECK(problems >= 1 && log_.count >= 1, "%zu problems reported", problems);
    TT_CHECK(strstr(log_.message, "stale") != NULL, "reported: %s", log_.message);
    printf("    detected: \"%s\"\n", log_.message);
    tt_errlog_reset(&log_);
    tenure_clear_error(rt);
    rt->cards[c] = 0;
    TT_CHECK(tn_gc_verify(rt, "after a GC") == 0);
    TT_CHECK_RESULT(tenure_root_area_remove(rt, ra), TENURE_OK);
    tenure_destroy(rt);
}

/* ------------------------------------------------------------------ D */
#define HOLDERS 64
#define SLOTS 96

static void check_shadow(tenure_runtime *rt, const tenure_type *node_t, void **roots, const uint64_t *shadow) {
    for (int h = 0; h < HOLDERS; h++)
        for (int i = 0; i < SLOTS; i++) {
            void *v = tt_refs(roots[h])[i];
            uint64_t want = shadow[h * SLOTS + i];
            if (want == 0)
                TT_CHECK(v == NULL, "holder %d slot %d: expected NULL", h, i);
            else if (want >= 1000)
                TT_CHECK_NODE(rt, node_t, v, want);
            else
                TT_CHECK(v == roots[want - 1], "holder %d slot %d: expected holder %d", h, i, (int)want - 1);
        }
}

static void test_random(void) {
    tt_rng_init("cards");
    int rounds = (int)tt_scaled(300, 40);
    printf("  D: random old-to-young stores over %d GCs\n", rounds);
    tenure_runtime *rt = create();
    const tenure_type *node_t = tt_register_node(rt);
    const tenure_type *arr_t = tt_register_ref_array(rt);
    void *roots[HOLDERS];
    memset(roots, 0, sizeof roots);
    tenure_root_area *ra = tenure_root_area_add(rt, roots, HOLDERS);
    static uint64_t shadow[HOLDERS * SLOTS]; /* 0 NULL, 1..HOLDERS a holder, >= 1000 a node */
    memset(shadow, 0, sizeof shadow);
    for (int h = 0; h < HOLDERS; h++) {
        roots[h] = tenure_alloc_array(rt, arr_t, SLOTS);
        TT_CHECK(roots[h] != NULL);
        if (h == HOLDERS / 2)
            tt_collect(rt, 0, 0); /* the first half ends in gen2, the second in gen1 */
        if (h == HOLDERS / 2)
            tt_collect(rt, 1, 0);
    }
    tt_collect(rt, 0, 0);
    uint64_t next_id = 1000;
    for (int round = 0; round < rounds; round++) {
        int stores = (int)tt_rand_range(1, 40);
        for (int s = 0; s < stores; s++) {
            int h = (int)tt_rand_below(HOLDERS), i = (int)tt_rand_below(SLOTS);
            uint64_t what = tt_rand_below(10);
            void *v = NULL;
            uint64_t id = 0;
            if (what < 6) {
                id = next_id++;
                v = tt_node_new(rt, node_t, id);
            } else if (what < 8) {
                id = tt_rand_below(HOLDERS) + 1;
                v = roots[id - 1];
            }
            tenure_write_ref(rt, roots[h], &tt_refs(roots[h])[i], v);
            shadow[h * SLOTS + i] = id;
            garbage(rt, node_t, (int)tt_rand_below(20));
        }
        int gen = round % 23 == 22 ? 2 : round % 7 == 6 ? 1 : 0;
        tt_collect(rt, gen, tt_rand_below(3) == 0 ? TENURE_COLLECT_COMPACT : 0);
        check_shadow(rt, node_t, roots, shadow);
    }
    TT_CHECK_RESULT(tenure_verify_heap(rt), TENURE_OK);
    TT_CHECK_RESULT(tenure_root_area_remove(rt, ra), TENURE_OK);
    tenure_destroy(rt);
}

int main(void) {
    double t0 = tt_now();
    printf("cards\n");
    test_not_wrongly_cleared(false);
    if (!tt_stress_mode()) /* (GCStress GCs in the allocations would reserve the list) */
        test_not_wrongly_cleared(true);
    test_stale_cleared();
    test_verify_reports_stale();
    test_random();
    return tt_finish("cards", t0);
}
