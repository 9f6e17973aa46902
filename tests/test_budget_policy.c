/*
 * budget_policy: allocation budgets and the compact-or-sweep decision (heap/alloc.c "budgets
 * and triggers", gc/plan.c compaction_reason; issue 13).
 *
 *  A. Repeated explicit gen0 GCs with little garbage (an interpreter that collects often): 1000
 *     tenure_collect(rt, 0, 0) with ~240 KB live, each after a little allocation (8 live nodes
 *     replaced, now and then a temporary), commit fewer than 3 regions: a young GC
 *     that finds little garbage packs its survivors into the next generation's free tail
 *     instead of promoting its nearly empty region and taking a fresh one (the old code
 *     committed a region per GC: 4000 MiB). The live data is checked at the end.
 *  B. A tiny heap keeps a tiny gen0: 256 MiB of garbage with nothing live commits one region
 *     per heap (peak RSS; the old code's gen0 budget spanned two regions whatever the heap).
 *  C. gen0 grows with survival: with GCgen0size = 1 MiB, building 64 MiB of live nodes takes
 *     few GCs (the budget grows with what survives, up to the old generations' size; the old
 *     code capped it at 6 x GCgen0size: at least 11 GCs). (No pause goal: C is about survival.)
 *  D. The pause goal holds gen1's budget (GCPauseGoalMs, heap/budgets.c "the pause goal"): a
 *     program with 8 MiB live (GCgen0size a 16th of it) that keeps replacing it runs once with
 *     no goal and once with a goal of 1 ms, which no gen1 GC of that heap can meet: with the
 *     goal, gen1 GCs come at least twice as often and condemn at most half as much of gen1
 *     (medians); its budget reaches its least (2 x GCgen0size). Without the code, both runs
 *     are the same.
 */
#include "test_util.h"

#define LIVE_NODES 6000 /* 6000 x 40 bytes: 240 KB */

static const tenure_type *node_t;

static void check_chain_ids(tenure_runtime *rt, tt_node **slots, uint64_t *ids, size_t n) {
    for (size_t i = 0; i < n; i++) {
        TT_CHECK(slots[i] != NULL);
        TT_CHECK(slots[i]->id == ids[i], "slot %zu: id %" PRIu64 ", expected %" PRIu64, i, slots[i]->id, ids[i]);
        TT_CHECK(slots[i]->check == tt_node_sum(slots[i]), "slot %zu: checksum", i);
        TT_CHECK(tenure_is_object(rt, slots[i]));
    }
}

static void repeated_explicit_gen0(void) {
    tt_errlog log = {.fatal = 1};
    tenure_config cfg;
    tt_config(&cfg);
    tenure_runtime *rt = tt_create(&cfg, &log);
    node_t = tt_register_node(rt);
    static tt_node *live[LIVE_NODES];
    static uint64_t ids[LIVE_NODES];
    memset(live, 0, sizeof live);
    tenure_root_area *ra = tenure_root_area_add(rt, (void **)live, LIVE_NODES);
    TT_CHECK(ra != NULL);
    uint64_t id = 0;
    for (size_t i = 0; i < LIVE_NODES; i++) {
        live[i] = tt_node_new(rt, node_t, ++id);
        ids[i] = id;
    }
    uint64_t region = cfg.GCRegionSize, max_committed = 0;
    size_t rounds = tt_scaled(1000, 100);
    for (size_t it = 0; it < rounds; it++) {
        if (it % 8 == 0) /* now and then a temporary: gen0 finds almost no garbage */
            (void)tt_node_new(rt, node_t, ++id);
        for (int k = 0; k < 8; k++) { /* a little state changes: the old node becomes garbage */
            size_t slot = (size_t)tt_rand_below(LIVE_NODES);
            live[slot] = tt_node_new(rt, node_t, ++id);
            ids[slot] = id;
        }
        tt_collect(rt, 0, 0);
        tenure_stats s = tt_stats(rt);
        if (s.committed_bytes > max_committed)
            max_committed = s.committed_bytes;
    }
    check_chain_ids(rt, live, ids, LIVE_NODES);
    tenure_stats s = tt_stats(rt);
    printf("  A: %zu explicit gen0 GCs, %" PRIu64 " GCs in all (gen1 %" PRIu64 ", gen2 %" PRIu64
           "), committed at most %" PRIu64 " KiB (%.1f regions), compacting %" PRIu64 ", sweeping %" PRIu64 "\n",
           rounds, s.gc_count, s.gen[1].collections, s.gen[2].collections, max_committed >> 10,
           (double)max_committed / (double)region, s.compacting_gcs, s.sweeping_gcs);
    /* GCStress forces GCs of every generation, each of which may start a region of its own */
    uint64_t bound = tt_stress_mode() ? 6 * region : 3 * region;
    TT_CHECK(max_committed < bound,
             "%zu explicit gen0 GCs with %zu KB live committed %" PRIu64 " KiB: %.1f regions of %" PRIu64 " KiB",
             rounds, (size_t)(LIVE_NODES * sizeof(tt_node)) >> 10, max_committed >> 10,
             (double)max_committed / (double)region, region >> 10);
    TT_CHECK_RESULT(tenure_root_area_remove(rt, ra), TENURE_OK);
    tenure_destroy(rt);
}

static void tiny_heap_tiny_gen0(void) {
    if (getenv("TENURE_GCgen0size") || getenv("TENURE_GCStress")) {
        printf("  B: skipped (GCgen0size or GCStress set in the environment)\n");
        return;
    }
    tt_errlog log = {.fatal = 1};
    tenure_config cfg;
    tt_config(&cfg);
    tenure_runtime *rt = tt_create(&cfg, &log);
    node_t = tt_register_node(rt);
    uint64_t max_committed = 0, total = (uint64_t)tt_scaled(256, 32) << 20;
    for (uint64_t bytes = 0; bytes < total; bytes += sizeof(tt_node)) {
        (void)tt_node_new(rt, node_t, bytes);
        if ((bytes & ((1u << 16) - 1)) < sizeof(tt_node)) {
            tenure_stats s = tt_stats(rt);
            if (s.committed_bytes > max_committed)
                max_committed = s.committed_bytes;
        }
    }
    tenure_stats s = tt_stats(rt);
    printf("  B: %" PRIu64 " MiB of garbage: %" PRIu64 " GCs, committed at most %" PRIu64 " KiB\n", total >> 20,
           s.gc_count, max_committed >> 10);
    TT_CHECK(s.gc_count > 0);
    /* one gen0 region per heap: under server GC the thread moves from heap to heap as each
     * spends its budget, and each heap allocates in regions of its own */
    TT_CHECK(max_committed <= tt_heaps(&cfg) * cfg.GCRegionSize,
             "nothing live, yet %" PRIu64 " KiB committed (a region is %" PRIu64 " KiB, %u heaps)", max_committed >> 10,
             cfg.GCRegionSize >> 10, tt_heaps(&cfg));
    tenure_destroy(rt);
}

static uint64_t gen0_gcs;
static void count_gen0(tenure_runtime *rt, const tenure_gc_info *info, void *context) {
    (void)rt;
    (void)context;
    if (info->generation == 0)
        gen0_gcs++;
}

static void gen0_grows_with_survival(void) {
    if (getenv("TENURE_GCgen0size") || getenv("TENURE_GCgen0MaxBudget") || getenv("TENURE_GCStress")) {
        printf("  C: skipped (budget options or GCStress set in the environment)\n");
        return;
    }
    tt_errlog log = {.fatal = 1};
    tenure_config cfg;
    tt_config(&cfg);
    cfg.GCgen0size = 1u << 20;
    cfg.GCPauseGoalMs = 0; /* (a slow build's pauses would hold gen0 to the goal) */
    tenure_runtime *rt = tt_create(&cfg, &log);
    node_t = tt_register_node(rt);
    tenure_set_gc_callback(rt, count_gen0, NULL);
    gen0_gcs = 0;
    tt_node *head = NULL, *n = NULL;
    TENURE_FRAME(rt, f, head, n);
    size_t count = ((size_t)64 << 20) / sizeof(tt_node);
    for (size_t i = 0; i < count; i++) {
        n = tt_node_new(rt, node_t, i + 1);
        tenure_write_ref(rt, n, &n->a, head);
        tt_node_seal(n);
        head = n;
    }
    tenure_stats s = tt_stats(rt);
    printf("  C: 64 MiB built with GCgen0size = 1 MiB: %" PRIu64 " gen0 GCs, %" PRIu64 " in all\n", gen0_gcs,
           s.gc_count);
    /* a fixed 1 MiB budget would take 64; grown to its cap (6 x GCgen0size) at once, about 11
     * (fewer when gen1 GCs, whose budget grows with the older heap, take some of the triggers) */
    TT_CHECK(gen0_gcs >= 1 && gen0_gcs <= 12, "%" PRIu64 " gen0 GCs to build 64 MiB that all survive", gen0_gcs);
    size_t seen = 0;
    for (tt_node *p = head; p; p = p->a, seen++) {
        TT_CHECK(p->id == count - seen, "node %zu: id %" PRIu64, seen, p->id);
        TT_CHECK(p->check == tt_node_sum(p));
    }
    TT_CHECK(seen == count);
    TENURE_FRAME_POP(rt, f);
    tenure_set_gc_callback(rt, NULL, NULL);
    tenure_destroy(rt);
}

/* D: what the gen1 GCs of one run condemned. */
#define MAX_GEN1 4096
typedef struct gen1_log {
    size_t n;
    uint64_t gen1_before[MAX_GEN1];
} gen1_log;

static void log_gen1(tenure_runtime *rt, const tenure_gc_info *info, void *context) {
    (void)rt;
    gen1_log *l = context;
    if (info->generation == 1 && info->reason == 0 /* AllocSmall: its budget was spent */ && l->n < MAX_GEN1)
        l->gen1_before[l->n++] = info->size_before[1];
}

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Keep `live` nodes in a root area and replace them at random, rounds x live times, with a
 * garbage node beside each; log the gen1 GCs (all but the first two: the cost is learned). */
static void churn(uint32_t goal_ms, size_t live, size_t rounds, uint64_t gen0size, gen1_log *l) {
    tt_errlog log = {.fatal = 1};
    tenure_config cfg;
    tt_config(&cfg);
    cfg.GCgen0size = gen0size;
    cfg.GCPauseGoalMs = goal_ms;
    /* one heap, blocking gen2 GCs: the rule is the same per heap, but with N heaps a gen1 GC
     * condemns N budgets at once and at a small scale each heap's budget is already its least */
    cfg.gcServer = 0;
    cfg.gcConcurrent = 0;
    tenure_runtime *rt = tt_create(&cfg, &log);
    node_t = tt_register_node(rt);
    tt_node **slots = calloc(live, sizeof *slots);
    TT_CHECK(slots != NULL);
    tenure_root_area *ra = tenure_root_area_add(rt, (void **)slots, live);
    TT_CHECK(ra != NULL);
    for (size_t i = 0; i < live; i++)
        slots[i] = tt_node_new(rt, node_t, i);
    memset(l, 0, sizeof *l);
    tenure_set_gc_callback(rt, log_gen1, l);
    for (size_t i = 0; i < rounds * live; i++) {
        size_t k = (size_t)tt_rand_below(live);
        slots[k] = tt_node_new(rt, node_t, i);
        (void)tt_node_new(rt, node_t, i);
    }
    tenure_set_gc_callback(rt, NULL, NULL);
    for (size_t i = 0; i < live; i++)
        TT_CHECK(slots[i]->check == tt_node_sum(slots[i]), "slot %zu", i);
    tenure_root_area_remove(rt, ra);
    free(slots);
    tenure_destroy(rt);
    TT_CHECK(l->n > 2, "goal %u: %zu gen1 GCs", goal_ms, l->n);
    l->n -= 2;
    memmove(l->gen1_before, l->gen1_before + 2, l->n * sizeof l->gen1_before[0]);
    qsort(l->gen1_before, l->n, sizeof l->gen1_before[0], cmp_u64);
}

static void pause_goal_holds_gen1(void) {
    if (getenv("TENURE_GCStress") || getenv("TENURE_GCgen1size") || getenv("TENURE_GCPauseGoalMs")) {
        printf("  D: skipped (GCStress, GCgen1size or GCPauseGoalMs set in the environment)\n");
        return;
    }
    size_t live = tt_scaled(((size_t)8 << 20) / sizeof(tt_node), 50000), rounds = 6;
    uint64_t gen0size = live * sizeof(tt_node) / 16;
    gen0size = gen0size < (256u << 10) ? 256u << 10 : gen0size;
    static gen1_log none, goal;
    churn(0, live, rounds, gen0size, &none);
    churn(1, live, rounds, gen0size, &goal);
    uint64_t m0 = none.gen1_before[none.n / 2], m1 = goal.gen1_before[goal.n / 2];
    printf("  D: %zu live nodes: gen1 GCs (after the second) without a goal %zu, median gen1 %" PRIu64
           " KiB; with a 1 ms goal %zu, median %" PRIu64 " KiB, least %" PRIu64 " KiB\n",
           live, none.n, m0 >> 10, goal.n, m1 >> 10, goal.gen1_before[0] >> 10);
    TT_CHECK(goal.n >= 2 * none.n, "gen1 GCs: %zu with a 1 ms goal, %zu without", goal.n, none.n);
    TT_CHECK(2 * m1 <= m0, "median gen1 size at a gen1 GC: %" PRIu64 " KiB with a 1 ms goal, %" PRIu64 " without",
             m1 >> 10, m0 >> 10);
    /* the least gen1 budget, 2 x GCgen0size, plus what one gen0 GC promotes (up to a gen0
     * budget, itself at least GCgen0size) and what the last one left over */
    TT_CHECK(goal.gen1_before[0] <= 4 * gen0size, "least gen1 at a gen1 GC with the goal: %" PRIu64 " KiB",
             goal.gen1_before[0] >> 10);
}

int main(void) {
    double t0 = tt_now();
    tt_rng_init("budget_policy");
    repeated_explicit_gen0();
    tiny_heap_tiny_gen0();
    gen0_grows_with_survival();
    pause_goal_holds_gen1();
    return tt_finish("budget_policy", t0);
}
