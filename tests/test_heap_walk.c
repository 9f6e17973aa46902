/*
 * heap_walk and generations.
 *
 *  - before any GC, tenure_heap_walk visits every allocated object (live and garbage) exactly
 *    once; after a full GC it visits exactly the live objects (small, LOH, POH), each once,
 *    with the type, size and generation that the object queries report, and the sizes add up
 *    to live_bytes_after_gc; a visitor returning nonzero stops the walk;
 *  - generations: a new object is in gen0; a gen0 GC moves survivors to gen1 and leaves gen1
 *    alone; a gen1 GC moves gen1 survivors to gen2; after a full GC survivors are in gen 1 or
 *    2, after two they are in gen2; LOH 3, POH 4 throughout;
 *  - gc_count rises by one per tenure_collect, gen[k].collections by the condemned
 *    generations, compacting_gcs / sweeping_gcs by the mode; pause times are consistent.
 * Run with GCCompactMode=1 and =2.
 */
#include "test_util.h"

typedef struct seen {
    void **objs;
    const tenure_type **types;
    size_t *sizes;
    int *gens;
    size_t count, cap, stop_after;
} seen;

static int visit(void *obj, const tenure_type *type, size_t size, int generation, void *context) {
    seen *s = (seen *)context;
    if (s->count < s->cap) {
        s->objs[s->count] = obj;
        s->types[s->count] = type;
        s->sizes[s->count] = size;
        s->gens[s->count] = generation;
    }
    s->count++;
    return s->stop_after != 0 && s->count >= s->stop_after;
}

static void seen_init(seen *s, size_t cap) {
    memset(s, 0, sizeof *s);
    s->cap = cap;
    s->objs = calloc(cap, sizeof *s->objs);
    s->types = calloc(cap, sizeof *s->types);
    s->sizes = calloc(cap, sizeof *s->sizes);
    s->gens = calloc(cap, sizeof *s->gens);
    TT_CHECK(s->objs && s->types && s->sizes && s->gens);
}

static void seen_free(seen *s) {
    free(s->objs);
    free(s->types);
    free(s->sizes);
    free(s->gens);
}

static int cmp_ptr(const void *a, const void *b) {
    uintptr_t x = (uintptr_t) * (void *const *)a, y = (uintptr_t) * (void *const *)b;
    return x < y ? -1 : x > y;
}

static tenure_runtime *rt;
static const tenure_type *node_t, *refarr_t, *bytes_t;

static void walk(seen *s, size_t stop_after) {
    s->count = 0;
    s->stop_after = stop_after;
    TT_CHECK_RESULT(tenure_heap_walk(rt, visit, s), TENURE_OK);
    TT_CHECK(s->count <= s->cap, "walk visited %zu objects (more than %zu allocated)", s->count, s->cap);
}

/* Every visited object's data agrees with the object queries. */
static void check_visited(seen *s) {
    for (size_t i = 0; i < s->count; i++) {
        void *o = s->objs[i];
        TT_CHECK(tenure_is_object(rt, o), "walk visited %p, not an object", o);
        TT_CHECK(tenure_object_type(rt, o) == s->types[i]);
        TT_CHECK(tenure_object_size(rt, o) == s->sizes[i], "size %zu vs %zu", tenure_object_size(rt, o), s->sizes[i]);
        TT_CHECK(tenure_object_generation(rt, o) == s->gens[i]);
        TT_CHECK(s->sizes[i] >= 16 && s->sizes[i] % 8 == 0 && (uintptr_t)o % 8 == 0);
    }
    /* each once */
    void **sorted = malloc(s->count * sizeof(void *) + 1);
    TT_CHECK(sorted != NULL);
    memcpy(sorted, s->objs, s->count * sizeof(void *));
    qsort(sorted, s->count, sizeof(void *), cmp_ptr);
    for (size_t i = 1; i < s->count; i++)
        TT_CHECK(sorted[i] != sorted[i - 1], "an object visited twice");
    free(sorted);
}

static void check_stats_step(const tenure_stats *a, const tenure_stats *b, int gen, int mode) {
    TT_CHECK_EQ_U64(b->gc_count, a->gc_count + 1);
    int g = gen < 0 ? 2 : gen;
    for (int k = 0; k <= 2; k++)
        TT_CHECK_EQ_U64(b->gen[k].collections, a->gen[k].collections + (k <= g ? 1 : 0));
    if (mode == 1) {
        TT_CHECK_EQ_U64(b->compacting_gcs, a->compacting_gcs + 1);
        TT_CHECK_EQ_U64(b->sweeping_gcs, a->sweeping_gcs);
    } else {
        TT_CHECK_EQ_U64(b->sweeping_gcs, a->sweeping_gcs + 1);
        TT_CHECK_EQ_U64(b->compacting_gcs, a->compacting_gcs);
    }
    TT_CHECK(b->max_pause_ns >= b->last_pause_ns && b->total_pause_ns >= b->max_pause_ns);
    TT_CHECK(b->total_pause_ns >= a->total_pause_ns + b->last_pause_ns);
    TT_CHECK(b->total_pause_ns > a->total_pause_ns, "a GC took no time");
}

static tenure_stats collect_checked(int gen, int mode) {
    tenure_stats a = tt_stats(rt);
    tt_collect(rt, gen, 0);
    tenure_stats b = tt_stats(rt);
    check_stats_step(&a, &b, gen, mode);
    return b;
}

static void run(int mode) {
    double t0 = tt_now();
    tt_errlog log = {.fatal = 1};
    tenure_config cfg;
    tt_config(&cfg);
    cfg.GCCompactMode = (uint32_t)mode;
    cfg.GCgen0size = 256u << 20; /* no allocation-triggered GC in this test */
    cfg.GCgen0MaxBudget = 256u << 20;
    cfg.GCStress = 0;
    rt = tt_create(&cfg, &log);
    node_t = tt_register_node(rt);
    refarr_t = tt_register_ref_array(rt);
    bytes_t = tt_register_bytes(rt);

    size_t k = tt_scaled(3000, 300), g = tt_scaled(10000, 1000);
    static void *slots[8];
    memset(slots, 0, sizeof slots);
    tenure_root_area *ra = tenure_root_area_add(rt, slots, 8);
    TT_CHECK(ra != NULL);
    /* live: one array of k nodes, two LOH arrays, two POH nodes; garbage interleaved */
    slots[0] = tenure_alloc_array(rt, refarr_t, k);
    TT_CHECK(slots[0] != NULL);
    size_t allocated = 1, garbage = 0;
    for (size_t i = 0; i < k; i++) {
        tt_node *n = tt_node_new(rt, node_t, i + 1);
        tenure_write_ref(rt, slots[0], &tt_refs(slots[0])[i], n);
        allocated++;
        for (size_t j = 0; j < g / k; j++, garbage++)
            TT_CHECK(tenure_alloc_array(rt, bytes_t, (size_t)tt_rand_below(200)) != NULL);
    }
    slots[1] = tenure_alloc_array(rt, bytes_t, 100000);
    slots[2] = tenure_alloc_array(rt, refarr_t, 20000);
    slots[3] = tenure_alloc_pinned(rt, node_t);
    slots[4] = tenure_alloc_array_pinned(rt, bytes_t, 64);
    TT_CHECK(slots[1] && slots[2] && slots[3] && slots[4]);
    tenure_write_ref(rt, slots[2], &tt_refs(slots[2])[5], tt_refs(slots[0])[5]);
    allocated += 4;
    void *dead_loh = tenure_alloc_array(rt, bytes_t, 200000);
    void *dead_poh = tenure_alloc_pinned(rt, node_t);
    TT_CHECK(dead_loh && dead_poh);
    garbage += 2;
    size_t live = allocated;

    tenure_stats s0 = tt_stats(rt);
    TT_CHECK(s0.gc_count == 0, "a GC happened with a 256 MiB gen0 budget");
    seen s;
    seen_init(&s, live + garbage + 16);
    walk(&s, 0);
    TT_CHECK(s.count == live + garbage, "before any GC: walked %zu objects, allocated %zu", s.count, live + garbage);
    check_visited(&s);
    size_t loh = 0, poh = 0;
    for (size_t i = 0; i < s.count; i++) {
        loh += s.gens[i] == 3;
        poh += s.gens[i] == 4;
        TT_CHECK(s.gens[i] == 0 || s.gens[i] == 3 || s.gens[i] == 4, "generation %d before any GC", s.gens[i]);
    }
    TT_CHECK(loh == 3 && poh == 3, "LOH %zu, POH %zu objects walked", loh, poh);

    /* early stop */
    walk(&s, 5);
    TT_CHECK(s.count == 5, "the walk went on after the visitor returned nonzero (%zu visits)", s.count);

    /* after a full GC: exactly the live objects */
    tenure_stats s1 = collect_checked(-1, mode);
    walk(&s, 0);
    TT_CHECK(s.count == live, "after a full GC: walked %zu objects, %zu are live", s.count, live);
    check_visited(&s);
    uint64_t total = 0;
    size_t nodes = 0;
    for (size_t i = 0; i < s.count; i++) {
        total += s.sizes[i];
        if (s.types[i] == node_t && s.gens[i] != 4) {
            nodes++;
            TT_CHECK(s.gens[i] == 1 || s.gens[i] == 2, "a survivor of a full GC in generation %d", s.gens[i]);
        }
        TT_CHECK(s.types[i] != bytes_t || s.gens[i] >= 1, "garbage-typed object in gen0 after a full GC");
    }
    TT_CHECK(nodes == k);
    TT_CHECK(total == s1.live_bytes_after_gc, "walked %" PRIu64 " bytes, live_bytes_after_gc %" PRIu64, total,
             s1.live_bytes_after_gc);
    TT_CHECK(s1.promoted_bytes > 0);
    /* the walked nodes are exactly those in the array */
    void **want = malloc(k * sizeof(void *)), **got = malloc(k * sizeof(void *));
    TT_CHECK(want && got);
    memcpy(want, tt_refs(slots[0]), k * sizeof(void *));
    size_t j = 0;
    for (size_t i = 0; i < s.count; i++)
        if (s.types[i] == node_t && s.gens[i] != 4)
            got[j++] = s.objs[i];
    qsort(want, k, sizeof(void *), cmp_ptr);
    qsort(got, k, sizeof(void *), cmp_ptr);
    TT_CHECK(memcmp(want, got, k * sizeof(void *)) == 0, "the walk's nodes are not the live nodes");
    free(want);
    free(got);
    for (size_t i = 0; i < k; i++)
        TT_CHECK_NODE(rt, node_t, tt_refs(slots[0])[i], i + 1);

    collect_checked(-1, mode);
    for (size_t i = 0; i < k; i++)
        TT_CHECK(tenure_object_generation(rt, tt_refs(slots[0])[i]) == 2, "not gen2 after two full GCs");
    TT_CHECK(tenure_object_generation(rt, slots[0]) == 2);
    TT_CHECK(tenure_object_generation(rt, slots[1]) == 3 && tenure_object_generation(rt, slots[2]) == 3);
    TT_CHECK(tenure_object_generation(rt, slots[3]) == 4 && tenure_object_generation(rt, slots[4]) == 4);
    TT_CHECK(tt_refs(slots[2])[5] == tt_refs(slots[0])[5]);

    /* step by step */
    slots[5] = tt_node_new(rt, node_t, 5005);
    TT_CHECK(tenure_object_generation(rt, slots[5]) == 0);
    collect_checked(0, mode);
    TT_CHECK(tenure_object_generation(rt, slots[5]) == 1, "gen0 survivor of a gen0 GC in generation %d",
             tenure_object_generation(rt, slots[5]));
    slots[6] = tt_node_new(rt, node_t, 6006);
    collect_checked(0, mode);
    TT_CHECK(tenure_object_generation(rt, slots[5]) == 1, "a gen0 GC promoted a gen1 object");
    TT_CHECK(tenure_object_generation(rt, slots[6]) == 1);
    slots[7] = tt_node_new(rt, node_t, 7007);
    collect_checked(1, mode);
    TT_CHECK(tenure_object_generation(rt, slots[5]) == 2, "gen1 survivor of a gen1 GC in generation %d",
             tenure_object_generation(rt, slots[5]));
    TT_CHECK(tenure_object_generation(rt, slots[7]) == 1 || tenure_object_generation(rt, slots[7]) == 2);
    collect_checked(2, mode);
    TT_CHECK(tenure_object_generation(rt, slots[5]) == 2 && tenure_object_generation(rt, slots[6]) == 2 &&
             tenure_object_generation(rt, slots[7]) == 2);
    TT_CHECK_NODE(rt, node_t, slots[5], 5005);
    TT_CHECK_NODE(rt, node_t, slots[6], 6006);
    TT_CHECK_NODE(rt, node_t, slots[7], 7007);

    /* drop half, full GC: the walk follows */
    for (size_t i = 0; i < k; i += 2)
        tenure_write_ref(rt, slots[0], &tt_refs(slots[0])[i], NULL);
    slots[1] = NULL;
    collect_checked(-1, mode);
    walk(&s, 0);
    size_t expect = live - (k + 1) / 2 - 1 + 3; /* + slots 5..7 */
    TT_CHECK(s.count == expect, "walked %zu, expected %zu", s.count, expect);
    check_visited(&s);

    tenure_stats fin = tt_stats(rt);
    printf("  mode %d: %zu live + %zu garbage objects, %" PRIu64 " GCs, %.2f s\n", mode, live, garbage, fin.gc_count,
           tt_now() - t0);
    seen_free(&s);
    TT_CHECK_RESULT(tenure_root_area_remove(rt, ra), TENURE_OK);
    tenure_destroy(rt);
}

int main(void) {
    tt_rng_init("heap_walk");
    double t0 = tt_now();
    run(1);
    run(2);
    printf("heap_walk: OK (%.2f s)\n", tt_now() - t0);
    return 0;
}
