/*
 * arch_collection: a GC's own state is not the previous GC's record (issue 14, gc/collection.h).
 *
 *  A. While a GC runs (its root scanner is called during mark and relocation), the record of
 *     the last GC (tenure_get_last_gc_info) is the previous GC's, complete: the one the GC
 *     callback was given at that GC's end (index, generation, pause, sizes), never the half
 *     built record of the GC in progress (the old code kept both in rt->last: inside GC k it
 *     answered index k with no pause yet). Before the first GC ends it is index 0. (HeapVerify
 *     after a GC scans the roots once the GC's record is done: that one is the GC's own.)
 *  B. At the end of each GC the callback's info is the record of that GC, and the same as
 *     tenure_get_last_gc_info then; its index is tenure_stats.gc_count.
 */
#include "test_util.h"

typedef struct watch {
    tenure_gc_info finished; /* what the GC callback was given last (index 0: none yet) */
    size_t scans, checked;
    /* gcConcurrent: a background GC takes its number at its initial pause and its callback
     * comes after the foreground GCs that ran meanwhile, whose numbers skip it */
    int bgc;              /* background GC on */
    uint64_t max_index;   /* the highest number the callback was given */
    uint64_t bgc_pending; /* the number skipped (a background GC runs), 0: none */
} watch;

static void same_info(const tenure_gc_info *a, const tenure_gc_info *b, const char *where) {
    TT_CHECK(a->index == b->index, "%s: index %" PRIu64 ", expected %" PRIu64, where, a->index, b->index);
    TT_CHECK(a->generation == b->generation, "%s: generation %d, expected %d", where, a->generation, b->generation);
    TT_CHECK(a->pause_ns == b->pause_ns, "%s: pause %" PRIu64 ", expected %" PRIu64, where, a->pause_ns, b->pause_ns);
    for (int g = 0; g < 5; g++)
        TT_CHECK(a->size_after[g] == b->size_after[g], "%s: size after of generation %d", where, g);
}

static void scan(tenure_runtime *rt, tenure_visitor *visitor, void *context) {
    (void)visitor;
    watch *w = context;
    tenure_gc_info now;
    tenure_get_last_gc_info(rt, &now);
    /* HeapVerify after a GC (a background GC's final pause included): its record is done */
    if (now.index > w->max_index || (w->bgc_pending && now.index == w->bgc_pending)) {
        TT_CHECK(now.pause_ns > 0, "GC %" PRIu64 " in progress answered for the last GC", now.index);
        return;
    }
    same_info(&now, &w->finished, "inside a GC, the last GC's record");
    if (now.index > 0)
        TT_CHECK(now.pause_ns > 0, "the last GC's record is complete (pause %" PRIu64 ")", now.pause_ns);
    w->scans++;
}

static void gc_done(tenure_runtime *rt, const tenure_gc_info *info, void *context) {
    watch *w = context;
    if (getenv("TENURE_TEST_VERBOSE"))
        printf("  GC %" PRIu64 " ended: generation %d, background %d\n", info->index, info->generation,
               info->background);
    tenure_gc_info last;
    tenure_get_last_gc_info(rt, &last);
    same_info(info, &last, "at a GC's end, the callback's info");
    tenure_stats s;
    tenure_get_stats(rt, &s);
    if (info->background && w->bgc_pending) { /* a background GC ends after the foreground GCs */
        TT_CHECK(info->index == w->bgc_pending, "background GC %" PRIu64 " ended, GC %" PRIu64 " was skipped",
                 info->index, w->bgc_pending);
        w->bgc_pending = 0;
    } else {
        TT_CHECK(info->index == s.gc_count, "the callback's GC %" PRIu64 " is GC %" PRIu64, info->index, s.gc_count);
        if (w->bgc && !w->bgc_pending && info->index == w->max_index + 2)
            w->bgc_pending = w->max_index + 1;
        else
            TT_CHECK(info->index == w->max_index + 1, "GC %" PRIu64 " after GC %" PRIu64, info->index, w->max_index);
        w->max_index = info->index;
    }
    w->finished = *info;
    w->checked++;
}

int main(void) {
    double t0 = tt_now();
    tt_rng_init("arch_collection");
    tt_errlog log = {.fatal = 1};
    tenure_config cfg;
    tt_config(&cfg);
    tenure_runtime *rt = tt_create(&cfg, &log);
    const tenure_type *node_t = tt_register_node(rt);
    static watch w;
    w.bgc = cfg.gcConcurrent != 0 && cfg.GCCompactMode != 1;
    tenure_root_scanner *sc = tenure_root_scanner_add(rt, scan, &w);
    TT_CHECK(sc != NULL);
    tenure_set_gc_callback(rt, gc_done, &w);
    static tt_node *live[64];
    tenure_root_area *ra = tenure_root_area_add(rt, (void **)live, 64);
    TT_CHECK(ra != NULL);
    static const int gens[] = {0, 1, 0, 2, 0, 2, 1};
    uint64_t id = 0;
    size_t rounds = tt_scaled(40, 8);
    for (size_t it = 0; it < rounds; it++) {
        for (int k = 0; k < 2000; k++) { /* garbage, and a few survivors */
            tt_node *n = tt_node_new(rt, node_t, ++id);
            if (tt_rand_below(64) == 0)
                live[tt_rand_below(64)] = n;
        }
        tt_collect(rt, gens[it % (sizeof gens / sizeof gens[0])], 0);
    }
    if (tt_stats(rt).background_gc_in_progress)
        tt_collect(rt, 2, 0); /* ends it: its callback comes */
    tenure_stats s = tt_stats(rt);
    TT_CHECK(w.bgc_pending == 0, "background GC %" PRIu64 " never ended", w.bgc_pending);
    printf("  %zu scans inside %" PRIu64 " GCs saw the previous GC's record\n", w.scans, s.gc_count);
    TT_CHECK(w.checked == s.gc_count && w.scans >= s.gc_count, "%zu GC ends, %zu scans, %" PRIu64 " GCs", w.checked,
             w.scans, s.gc_count);
    tenure_set_gc_callback(rt, NULL, NULL);
    tenure_destroy(rt);
    return tt_finish("arch_collection", t0);
}
