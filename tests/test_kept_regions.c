/*
 * generations_kept_regions: in a compacted gen1, a region that is almost entirely live is kept
 * (gc/plan.c "kept regions", docs/design/collector.md "Kept regions"): its objects stay where
 * they are and are promoted with it, while the survivors of the mostly dead regions of the same
 * generation move. References both ways (kept -> moving, moving -> kept, gen2 -> both) stay
 * right, and so do the kept region's cards: after the GC its objects (now gen2) refer to new
 * gen0 objects, which the next gen0 GC finds through them.
 *
 * On the old collector (compaction decided per generation) every survivor of the compacted
 * gen1 was packed into the free end of a gen2 region first, so the dense region's objects
 * moved too: the test fails there. tenure_stats.moved_bytes counts the nodes that moved.
 *
 * Layout (regions of 256 KiB): a few old (gen2) objects, with room left in their region; then
 * DENSE nodes, all kept alive (about 2.5 regions), then SPARSE nodes, 1 in 10 kept alive once
 * they are in gen1 (about 4 regions). A gen0 GC puts all of them in gen1 (nothing dead: the
 * regions are promoted in place), then the gen1 GC: gen1 is then less than half live, so it
 * compacts, and the regions holding only dense nodes are kept.
 */
#include "test_util.h"

static tenure_runtime *rt;
static const tenure_type *node_t;
enum { REGION = 256 << 10, OLD = 64, SPARSE_EVERY = 10, DENSE_HOLE_EVERY = 20 };

static uintptr_t region_of(const void *p) { return (uintptr_t)p & ~(uintptr_t)(REGION - 1); }

static int run(void) {
    size_t node_size = sizeof(tt_node); /* (checked below: the nodes' size in the heap) */
    size_t ndense = (size_t)(2.5 * REGION) / node_size, nsparse = (size_t)(4.0 * REGION) / node_size;
    size_t n = OLD + ndense + nsparse;
    void **nodes = calloc(n, sizeof *nodes);
    uintptr_t *before = calloc(n, sizeof *before);
    uint64_t *ids = calloc(n, sizeof *ids);
    TT_CHECK(nodes && before && ids);
    tenure_root_area *ra = tenure_root_area_add(rt, nodes, n);
    TT_CHECK(ra != NULL);
    void **old = nodes, **dense = nodes + OLD, **sparse = dense + ndense;
    uint64_t id = 0;

    tt_collect(rt, -1, TENURE_COLLECT_COMPACT);
    for (size_t i = 0; i < OLD; i++)
        old[i] = tt_node_new(rt, node_t, ids[i] = ++id);
    TT_CHECK(tenure_object_size(rt, old[0]) == node_size);
    tt_collect(rt, -1, TENURE_COLLECT_COMPACT); /* gen1 */
    tt_collect(rt, -1, TENURE_COLLECT_COMPACT); /* gen2, in a region with room: a tail for gen1's survivors */
    TT_CHECK(tenure_object_generation(rt, old[0]) == 2);
    uint64_t first_gc = tt_stats(rt).gc_count;
    for (size_t i = 0; i < ndense; i++)
        dense[i] = tt_node_new(rt, node_t, ids[OLD + i] = ++id);
    for (size_t i = 0; i < nsparse; i++)
        sparse[i] = tt_node_new(rt, node_t, ids[OLD + ndense + i] = ++id);
    tt_collect(rt, 0, 0); /* all in gen1 */
    /* links: dense -> sparse survivors, sparse survivors -> dense, old -> both */
    for (size_t i = 0; i < nsparse; i++)
        if (i % SPARSE_EVERY)
            sparse[i] = NULL;
    for (size_t i = 1; i < ndense; i += DENSE_HOLE_EVERY) /* small holes: many plugs */
        dense[i] = NULL;
    size_t nsurv = (nsparse + SPARSE_EVERY - 1) / SPARSE_EVERY;
    for (size_t i = 0; i < ndense; i++) {
        tt_node *p = dense[i];
        if (!p)
            continue;
        tenure_write_ref(rt, p, &p->a, sparse[(i % nsurv) * SPARSE_EVERY]);
        tt_node_seal(p);
    }
    for (size_t i = 0; i < nsparse; i += SPARSE_EVERY) {
        tt_node *p = sparse[i];
        tenure_write_ref(rt, p, &p->a, dense[(i * 7) % ndense / 2 * 2]);
        tt_node_seal(p);
    }
    for (size_t i = 0; i < OLD; i++) {
        tt_node *p = old[i];
        tenure_write_ref(rt, p, &p->a, dense[(i * 131) % ndense / 2 * 2]);
        tenure_write_ref(rt, p, &p->b, sparse[((i * 17) % nsurv) * SPARSE_EVERY]);
        tt_node_seal(p);
    }
    for (size_t i = 0; i < n; i++)
        before[i] = (uintptr_t)nodes[i];

    /* the premise: every dense and sparse node in gen1 (gen0 GCs may have run: the budget of
     * a small heap is small; they keep everything and promote it in order) */
    int premise = 1;
    for (size_t i = OLD; i < n; i++)
        premise &= !nodes[i] || tenure_object_generation(rt, nodes[i]) == 1;
    if (!premise) {
        size_t g1 = 0, all = 0;
        for (size_t i = OLD; i < n; i++)
            if (nodes[i])
                all++, g1 += tenure_object_generation(rt, nodes[i]) == 1;
        printf("  premise: %llu GCs, %zu of %zu nodes in gen1\n",
               (unsigned long long)(tt_stats(rt).gc_count - first_gc), g1, all);
        TT_CHECK(tt_stress_mode(), "a GC of gen1 ran while the layout was built");
        printf("  skipped: a GC of gen1 (stress) ran while the layout was built\n");
        tenure_root_area_remove(rt, ra);
        free(nodes), free(before), free(ids);
        return 0;
    }

    uint64_t moved_before = tt_stats(rt).moved_bytes;
    tt_collect(rt, 1, 0);
    uint64_t moved = tt_stats(rt).moved_bytes - moved_before;
    tenure_gc_info info;
    tenure_get_last_gc_info(rt, &info);
    TT_CHECK(info.generation == 1 && (info.compacted & 2), "gen1 was not compacted (compacted %#x)", info.compacted);
    for (size_t i = 0; i < n; i++) {
        if (!nodes[i])
            continue;
        TT_CHECK_NODE(rt, node_t, nodes[i], ids[i]);
        TT_CHECK(tenure_object_generation(rt, nodes[i]) == 2, "node %zu not promoted to gen2", i);
    }
    /* dense nodes in regions that were at least 90% live stayed; sparse survivors moved */
    size_t kept = 0, dense_moved = 0, sparse_moved = 0, sparse_n = 0;
    for (size_t i = OLD; i < OLD + ndense; i++) {
        void *was = (void *)before[i];
        if (!was)
            continue;
        /* (the live bytes of its region before the GC: every node there is one of ours) */
        size_t live = 0;
        for (size_t j = OLD; j < n; j++)
            if (before[j] && region_of((void *)before[j]) == region_of(was))
                live += node_size;
        if (live * 10 >= (size_t)REGION * 9) {
            kept++;
            dense_moved += (uintptr_t)nodes[i] != before[i];
        }
    }
    for (size_t i = OLD + ndense; i < n; i++) {
        if (!nodes[i])
            continue;
        sparse_n++;
        sparse_moved += (uintptr_t)nodes[i] != before[i];
    }
    printf("  gen1 GC: %zu dense nodes in regions >= 90%% live, %zu of them moved; %zu of %zu sparse survivors moved\n",
           kept, dense_moved, sparse_moved, sparse_n);
    TT_CHECK(kept >= ndense / 3, "the dense nodes do not fill whole regions (%zu of %zu)", kept, ndense);
    TT_CHECK(dense_moved == 0, "%zu nodes of almost entirely live regions moved", dense_moved);
    TT_CHECK(sparse_moved > 0, "no survivor of the mostly dead regions moved");
    /* tenure_stats.moved_bytes counts what compaction moved: our moved nodes (and little else) */
    size_t ours = 0;
    for (size_t i = 0; i < n; i++)
        ours += nodes[i] && (uintptr_t)nodes[i] != before[i] ? node_size : 0;
    printf("  moved_bytes: %" PRIu64 " (our moved nodes: %zu bytes)\n", moved, ours);
    TT_CHECK(moved >= ours && moved <= ours + (64u << 10), "moved_bytes %" PRIu64 ", our moved nodes %zu bytes", moved,
             ours);

    /* the kept regions' cards: their nodes (gen2 now) refer to new gen0 nodes */
    for (size_t i = 0; i < ndense; i += 98) {
        tt_node *p = dense[i];
        tt_node *y = tt_node_new(rt, node_t, ++id);
        tenure_write_ref(rt, p, &p->b, y);
        tt_node_seal(p);
    }
    tt_collect(rt, 0, 0);
    tt_collect(rt, 0, 0);
    for (size_t i = 0; i < ndense; i += 98) {
        tt_node *p = dense[i];
        TT_CHECK_NODE(rt, node_t, p, ids[OLD + i]);
        TT_CHECK(p->b != NULL && tenure_object_generation(rt, p->b) >= 1);
        TT_CHECK_NODE(rt, node_t, p->b, p->b->id);
    }
    TT_CHECK_RESULT(tenure_verify_heap(rt), TENURE_OK);
    tt_collect(rt, -1, TENURE_COLLECT_COMPACT);
    for (size_t i = 0; i < n; i++)
        if (nodes[i])
            TT_CHECK_NODE(rt, node_t, nodes[i], ids[i]);
    TT_CHECK_RESULT(tenure_root_area_remove(rt, ra), TENURE_OK);
    free(nodes), free(before), free(ids);
    return 1;
}

int main(void) {
    double t0 = tt_now();
    tenure_config cfg;
    tt_config(&cfg);
    cfg.GCRegionSize = REGION;
    cfg.HeapVerify = 1;
    rt = tt_create(&cfg, NULL);
    node_t = tt_register_node(rt);
    int checked = 0;
    for (int attempt = 0; attempt < 5 && !checked; attempt++)
        checked = run();
    TT_CHECK(checked || tt_stress_mode(), "never built the layout without a GC of gen1 in between");
    tenure_destroy(rt);
    return tt_finish("generations_kept_regions", t0);
}
