/*
 * generations: the generational machinery seen from the API.
 *
 *  A. old-to-young references stored with tenure_write_ref (young nodes reachable only from
 *     gen2 nodes) survive hundreds of explicit gen0 and gen1 GCs and allocation-triggered GCs
 *     with their contents intact; run once with the collector's choice of compact/sweep and
 *     once with GCCompactMode=1.
 *  D. (same loop) ephemeral GCs never move gen2 objects: addresses of gen2 objects recorded
 *     after one GC are unchanged after the next, unless a gen2 GC happened in between.
 *  B. an old-to-young store done without the barrier (plain assignment into a gen2 array
 *     whose cards are clean) is reported by tenure_verify_heap as TENURE_HEAP_CORRUPT through
 *     the hook; repeating the store through the barrier repairs it, and the young object
 *     (reachable only through that slot) survives a gen0 GC.
 *  C. promotion: one survived GC -> generation 1, two -> generation 2 (gen0 GC then gen1 GC;
 *     full GCs; compacting and sweeping), and generation 2 stays 2.
 *  E. an allocation-driven run with some survival produces gen0, gen1 and gen2 GCs; the GC
 *     callback sees every GC exactly once with index increasing by 1, its per-generation
 *     counts agree with tenure_get_stats, and tenure_collect's reasons are 1 (induced),
 *     10 (TENURE_COLLECT_COMPACT), 17 (TENURE_COLLECT_AGGRESSIVE) and 7
 *     (TENURE_COLLECT_OPTIMIZED, when it runs at all).
 */
#include "test_util.h"

#include <stdbool.h>

static tt_errlog log_ = {.fatal = 1};

/* TENURE_GCStressGeneration forces the generation of the GCStress GCs (-1: not forced). */
static int forced_stress_gen(void) {
    const char *s = getenv("TENURE_GCStressGeneration");
    if (!tt_stress_mode() || s == NULL || s[0] == '\0')
        return -1;
    return (int)strtol(s, NULL, 0);
}

static tenure_runtime *make_rt(int compact_mode, uint64_t gen0size) {
    tenure_config cfg;
    tt_config(&cfg);
    if (compact_mode >= 0 && getenv("TENURE_GCCompactMode") == NULL)
        cfg.GCCompactMode = (uint32_t)compact_mode;
    if (getenv("TENURE_GCgen0size") == NULL)
        cfg.GCgen0size = gen0size;
    return tt_create(&cfg, &log_);
}

static void garbage(tenure_runtime *rt, const tenure_type *bytes_t, size_t bytes) {
    size_t done = 0;
    while (done < bytes) {
        size_t len = (size_t)tt_rand_range(8, 700);
        void *g = tenure_alloc_array(rt, bytes_t, len);
        TT_CHECK(g != NULL, "garbage allocation failed: %s", tenure_strerror(tenure_last_error(rt)));
        done += len + 16;
    }
}

/* ------------------------------------------------------------------ A + D */
typedef struct gen_counts {
    uint64_t gcs, gen2;
} gen_counts;

static void test_old_to_young(int compact_mode) {
    printf("  A/D: old-to-young references, GCCompactMode=%d\n", compact_mode);
    tenure_runtime *rt = make_rt(compact_mode, 256u << 10);
    const tenure_type *node_t = tt_register_node(rt);
    const tenure_type *bytes_t = tt_register_bytes(rt);

    size_t nold = tt_scaled(2000, 300);
    void **old = calloc(nold, sizeof *old);
    uint64_t *b_id = calloc(nold, sizeof *b_id), *ba_id = calloc(nold, sizeof *ba_id);
    uint64_t *a_id = calloc(nold, sizeof *a_id);
    uintptr_t *addr_old = calloc(nold, sizeof *addr_old), *addr_b = calloc(nold, sizeof *addr_b),
              *addr_ba = calloc(nold, sizeof *addr_ba);
    TT_CHECK(old && b_id && ba_id && a_id && addr_old && addr_b && addr_ba);
    tenure_root_area *ra = tenure_root_area_add(rt, old, nold);
    TT_CHECK(ra != NULL);
    for (size_t i = 0; i < nold; i++) {
        old[i] = tt_node_new(rt, node_t, i + 1);
        if (i % 5 == 0)
            garbage(rt, bytes_t, 200);
    }
    tt_collect(rt, -1, TENURE_COLLECT_COMPACT);
    tt_collect(rt, -1, 0);
    for (size_t i = 0; i < nold; i++) {
        TT_CHECK_NODE(rt, node_t, old[i], i + 1);
        TT_CHECK(tenure_object_generation(rt, old[i]) == 2, "old node %zu in generation %d after two full GCs", i,
                 tenure_object_generation(rt, old[i]));
    }

    uint64_t next_id = 1000000;
    tt_node *y = NULL, *z = NULL;
    TENURE_FRAME(rt, f, y, z);
    size_t rounds = tt_scaled(400, 60);
    size_t per_round = 30;
    tenure_stats s0 = tt_stats(rt);
    uint64_t checked_moves = 0, gen2_gcs_seen = 0;
    for (size_t r = 0; r < rounds; r++) {
        /* D: record where the gen2 objects are */
        tenure_stats sb = tt_stats(rt);
        for (size_t i = 0; i < nold; i++) {
            tt_node *o = old[i];
            addr_old[i] = tenure_object_generation(rt, o) == 2 ? (uintptr_t)o : 0;
            addr_b[i] = o->b && tenure_object_generation(rt, o->b) == 2 ? (uintptr_t)o->b : 0;
            addr_ba[i] = o->b && o->b->a && tenure_object_generation(rt, o->b->a) == 2 ? (uintptr_t)o->b->a : 0;
        }
        /* mutations: fresh young pairs hung off old nodes, old-to-old links */
        for (size_t k = 0; k < per_round; k++) {
            size_t i = (size_t)tt_rand_below(nold);
            z = tt_node_new(rt, node_t, ++next_id);
            y = tt_node_new(rt, node_t, ++next_id);
            tenure_write_ref(rt, y, &y->a, z);
            tt_node_seal(y);
            tt_node *o = old[i];
            tenure_write_ref(rt, o, &o->b, y);
            tt_node_seal(o);
            b_id[i] = y->id;
            ba_id[i] = z->id;
            addr_b[i] = addr_ba[i] = 0; /* replaced */
            y = z = NULL;
            if (tt_rand_below(4) == 0) {
                size_t j = (size_t)tt_rand_below(nold);
                tenure_write_ref(rt, o, &o->a, old[j]);
                tt_node_seal(o);
                a_id[i] = j + 1;
            }
            garbage(rt, bytes_t, 2000);
        }
        garbage(rt, bytes_t, (size_t)tt_rand_range(0, 300000)); /* allocation-triggered GCs */
        int gen = (r % 2 == 0) ? 0 : 1;
        tt_collect(rt, gen, tt_rand_below(3) == 0 ? TENURE_COLLECT_COMPACT : 0);

        /* A: contents */
        for (size_t i = 0; i < nold; i++) {
            tt_node *o = old[i];
            TT_CHECK_NODE(rt, node_t, o, i + 1);
            if (a_id[i]) {
                TT_CHECK(o->a == old[a_id[i] - 1], "round %zu: old node %zu: old-to-old link broken", r, i);
            } else {
                TT_CHECK(o->a == NULL);
            }
            if (b_id[i]) {
                TT_CHECK(o->b != NULL, "round %zu: old node %zu lost its young object %" PRIu64, r, i, b_id[i]);
                TT_CHECK_NODE(rt, node_t, o->b, b_id[i]);
                TT_CHECK_NODE(rt, node_t, o->b->a, ba_id[i]);
                TT_CHECK(o->b->b == NULL);
            } else {
                TT_CHECK(o->b == NULL);
            }
        }
        /* D: no gen2 GC in between -> no gen2 object moved */
        tenure_stats sa = tt_stats(rt);
        if (sa.gen[2].collections == sb.gen[2].collections) {
            for (size_t i = 0; i < nold; i++) {
                tt_node *o = old[i];
                if (addr_old[i]) {
                    TT_CHECK((uintptr_t)o == addr_old[i],
                             "round %zu: gen2 node %zu moved from %#" PRIxPTR " to %p in ephemeral GCs "
                             "(gen0 GCs %" PRIu64 ", gen1 GCs %" PRIu64 " in between)",
                             r, i, addr_old[i], (void *)o, sa.gen[0].collections - sb.gen[0].collections,
                             sa.gen[1].collections - sb.gen[1].collections);
                    checked_moves++;
                }
                if (addr_b[i])
                    TT_CHECK((uintptr_t)o->b == addr_b[i], "round %zu: gen2 young-turned-old node of %zu moved", r, i);
                if (addr_ba[i])
                    TT_CHECK((uintptr_t)o->b->a == addr_ba[i], "round %zu: gen2 node moved", r);
            }
        } else {
            gen2_gcs_seen++;
        }
    }
    TENURE_FRAME_POP(rt, f);
    tenure_stats s = tt_stats(rt);
    uint64_t g0 = s.gen[0].collections - s0.gen[0].collections - (s.gen[1].collections - s0.gen[1].collections);
    uint64_t g1 = s.gen[1].collections - s0.gen[1].collections - (s.gen[2].collections - s0.gen[2].collections);
    uint64_t g2 = s.gen[2].collections - s0.gen[2].collections;
    printf("    %zu rounds: %" PRIu64 " gen0, %" PRIu64 " gen1, %" PRIu64 " gen2 GCs (%" PRIu64 " compacting, %" PRIu64
           " sweeping overall); %" PRIu64 " gen2 address checks, %" PRIu64 " rounds skipped for a gen2 GC\n",
           rounds, g0, g1, g2, s.compacting_gcs, s.sweeping_gcs, checked_moves, gen2_gcs_seen);
    TT_CHECK(g0 + g1 >= rounds, "fewer ephemeral GCs than explicit ones");
    if (forced_stress_gen() != 2)
        TT_CHECK(checked_moves > 0, "no round without a gen2 GC: the no-move property was never checked");
    TT_CHECK_RESULT(tenure_verify_heap(rt), TENURE_OK);
    /* a final full compacting GC keeps everything too */
    tt_collect(rt, -1, TENURE_COLLECT_COMPACT);
    for (size_t i = 0; i < nold; i++) {
        TT_CHECK_NODE(rt, node_t, old[i], i + 1);
        if (b_id[i])
            TT_CHECK_NODE(rt, node_t, ((tt_node *)old[i])->b, b_id[i]);
    }
    TT_CHECK_RESULT(tenure_root_area_remove(rt, ra), TENURE_OK);
    tenure_destroy(rt);
    free(old);
    free(b_id);
    free(ba_id);
    free(a_id);
    free(addr_old);
    free(addr_b);
    free(addr_ba);
}

/* ------------------------------------------------------------------ B */
static void test_missed_barrier(void) {
    printf("  B: an old-to-young store without the barrier\n");
    tenure_runtime *rt = make_rt(-1, 1u << 20);
    const tenure_type *node_t = tt_register_node(rt);
    const tenure_type *refarr_t = tt_register_ref_array(rt);
    void *roots[1] = {NULL};
    tenure_root_area *ra = tenure_root_area_add(rt, roots, 1);
    TT_CHECK(ra != NULL);
    /* a gen2 reference array of NULLs: all its cards are clean */
    roots[0] = tenure_alloc_array(rt, refarr_t, 1024);
    TT_CHECK(roots[0] != NULL);
    tt_collect(rt, -1, 0);
    tt_collect(rt, -1, 0);
    void *arr = roots[0];
    TT_CHECK(tenure_object_generation(rt, arr) == 2, "array in generation %d", tenure_object_generation(rt, arr));
    TT_CHECK_RESULT(tenure_verify_heap(rt), TENURE_OK);

    int attempts = 0;
    for (;;) {
        tt_node *young = tt_node_new(rt, node_t, 4242);
        arr = roots[0]; /* the allocation may have collected (GCStress) */
        int gy = tenure_object_generation(rt, young), ga = tenure_object_generation(rt, arr);
        TT_CHECK(gy == 0 && ga == 2, "generations %d (young) and %d (array)", gy, ga);
        tt_refs(arr)[512] = young; /* no barrier: the card stays clean */

        log_.fatal = 0;
        tt_errlog_reset(&log_);
        tenure_clear_error(rt);
        tenure_result r = tenure_verify_heap(rt);
        log_.fatal = 1;
        TT_EXPECT(r == TENURE_HEAP_CORRUPT, "missed barrier: tenure_verify_heap returned %d (%s)", (int)r,
                  tenure_strerror(r));
        TT_EXPECT(log_.count >= 1 && log_.last == TENURE_HEAP_CORRUPT,
                  "missed barrier: hook called %d times, last result %d", log_.count, (int)log_.last);
        TT_EXPECT(log_.count == 0 || strcmp(log_.function, "tenure_verify_heap") == 0, "reported by %s", log_.function);
        TT_EXPECT(tenure_last_error(rt) == TENURE_HEAP_CORRUPT);
        if (log_.count)
            printf("    detected: \"%s\"\n", log_.message);
        tt_errlog_reset(&log_);
        tenure_clear_error(rt);

        /* repair: the same store through the barrier */
        tenure_write_ref(rt, arr, &tt_refs(arr)[512], young);
        TT_CHECK_RESULT(tenure_verify_heap(rt), TENURE_OK);
        young = NULL;
        /* the young node is reachable only through the gen2 array: the card must be found */
        tt_collect(rt, 0, 0);
        arr = roots[0];
        TT_CHECK_NODE(rt, node_t, tt_refs(arr)[512], 4242);
        TT_CHECK(tenure_object_generation(rt, tt_refs(arr)[512]) >= 1);
        tt_collect(rt, 1, TENURE_COLLECT_COMPACT);
        arr = roots[0];
        TT_CHECK_NODE(rt, node_t, tt_refs(arr)[512], 4242);
        TT_CHECK_RESULT(tenure_verify_heap(rt), TENURE_OK);
        if (++attempts == 2)
            break;
        /* again after the card has been cleaned by full GCs */
        tenure_write_ref(rt, arr, &tt_refs(arr)[512], NULL);
        tt_collect(rt, -1, 0);
        tt_collect(rt, -1, 0);
        TT_CHECK_RESULT(tenure_verify_heap(rt), TENURE_OK);
    }
    TT_CHECK_RESULT(tenure_root_area_remove(rt, ra), TENURE_OK);
    tenure_destroy(rt);
}

/* ------------------------------------------------------------------ C */
static void test_promotion(void) {
    printf("  C: promotion\n");
    for (int mode = 0; mode < 3; mode++) {
        tenure_runtime *rt = make_rt(mode, 1u << 20);
        const tenure_type *node_t = tt_register_node(rt);
        const tenure_type *bytes_t = tt_register_bytes(rt);
        tt_node *p = NULL, *q = NULL;
        TENURE_FRAME(rt, f, p, q);
        for (int round = 0; round < 20; round++) {
            /* gen0 GC then gen1 GC (nothing allocates between the allocation and the GCs, so
             * GCStress cannot add GCs in between) */
            garbage(rt, bytes_t, 5000);
            p = tt_node_new(rt, node_t, 1);
            TT_CHECK(tenure_object_generation(rt, p) == 0, "new object in generation %d",
                     tenure_object_generation(rt, p));
            tt_collect(rt, 0, round % 2 ? TENURE_COLLECT_COMPACT : 0);
            TT_CHECK(tenure_object_generation(rt, p) == 1, "mode %d: after one GC: generation %d", mode,
                     tenure_object_generation(rt, p));
            tt_collect(rt, 1, round % 3 ? 0 : TENURE_COLLECT_COMPACT);
            TT_CHECK(tenure_object_generation(rt, p) == 2, "mode %d: after two GCs: generation %d", mode,
                     tenure_object_generation(rt, p));
            tt_collect(rt, 0, 0);
            tt_collect(rt, 1, 0);
            TT_CHECK(tenure_object_generation(rt, p) == 2);
            /* full GCs */
            garbage(rt, bytes_t, 5000);
            q = tt_node_new(rt, node_t, 2);
            TT_CHECK(tenure_object_generation(rt, q) == 0);
            tt_collect(rt, -1, round % 2 ? TENURE_COLLECT_COMPACT : 0);
            TT_CHECK(tenure_object_generation(rt, q) == 1, "mode %d: after one full GC: generation %d", mode,
                     tenure_object_generation(rt, q));
            tt_collect(rt, 2, 0);
            TT_CHECK(tenure_object_generation(rt, q) == 2, "mode %d: after two full GCs: generation %d", mode,
                     tenure_object_generation(rt, q));
            tt_collect(rt, 2, TENURE_COLLECT_COMPACT);
            TT_CHECK(tenure_object_generation(rt, q) == 2);
            TT_CHECK(tenure_object_generation(rt, p) == 2);
            TT_CHECK_NODE(rt, node_t, p, 1);
            TT_CHECK_NODE(rt, node_t, q, 2);
            p = q = NULL;
        }
        TENURE_FRAME_POP(rt, f);
        tenure_destroy(rt);
    }
}

/* ------------------------------------------------------------------ E */
typedef struct cb_state {
    uint64_t calls, last_index;
    uint64_t by_gen[3];
    uint64_t by_reason[32];
    int bad_index;
    uint64_t bad_at, bad_got;
    int last_gen;
    uint32_t last_reason;
    /* gcConcurrent: a background GC takes its number at its initial pause and ends (its
     * callback) after the foreground GCs that ran meanwhile: their numbers skip it */
    uint64_t bgc_pending; /* the number skipped, 0: none */
    uint64_t background_calls;
} cb_state;

/* True when the environment turns background GC on (TENURE_gcConcurrent=1: make test-bgc). */
static int bgc_mode(void) {
    tenure_config cfg;
    tt_config(&cfg);
    return cfg.gcConcurrent != 0 && cfg.GCCompactMode != 1;
}

/* Every GC's callback once: in index order, except a background GC's (bgc_pending). Blocking
 * GCs never leave a number pending. */
static void check_index(cb_state *st, const tenure_gc_info *info) {
    bool ok;
    if (info->background && st->bgc_pending != 0) {
        ok = info->index == st->bgc_pending;
        st->bgc_pending = 0;
        st->background_calls++;
        if (!ok && !st->bad_index) {
            st->bad_index = 1;
            st->bad_at = st->last_index;
            st->bad_got = info->index;
        }
        return;
    }
    ok = info->index == st->last_index + 1;
    if (!ok && !info->background && st->bgc_pending == 0 && info->index == st->last_index + 2 && bgc_mode()) {
        st->bgc_pending = st->last_index + 1; /* a background GC runs */
        ok = true;
    }
    st->background_calls += info->background != 0;
    if (!ok && !st->bad_index) {
        st->bad_index = 1;
        st->bad_at = st->last_index;
        st->bad_got = info->index;
    }
    st->last_index = info->index;
}

/* With gcConcurrent: allocate until no background GC runs (its callback has come). */
static void end_background_gc(tenure_runtime *rt, const tenure_type *bytes_t, cb_state *st) {
    for (uint64_t k = 0; tt_stats(rt).background_gc_in_progress || st->bgc_pending; k++) {
        TT_CHECK(tenure_alloc_array(rt, bytes_t, 100) != NULL);
        TT_CHECK(k < 100000000, "the background GC does not end");
    }
}

static void on_gc(tenure_runtime *rt, const tenure_gc_info *info, void *context) {
    cb_state *st = context;
    (void)rt;
    st->calls++;
    check_index(st, info);
    if (info->generation >= 0 && info->generation <= 2)
        st->by_gen[info->generation]++;
    st->by_reason[info->reason < 32 ? info->reason : 31]++;
    st->last_gen = info->generation;
    st->last_reason = info->reason;
}

static void expect_induced(tenure_runtime *rt, cb_state *st, int gen, unsigned flags, uint32_t reason, int want_gen) {
    uint64_t calls = st->calls;
    tt_collect(rt, gen, flags);
    if (bgc_mode() && (flags & TENURE_COLLECT_NONBLOCKING) && gen == 2) {
        /* a gen1 GC, then the background GC's initial pause (no callback until it ends) */
        TT_CHECK(st->calls == calls + 1 && st->last_gen == 1 && st->last_reason == reason,
                 "tenure_collect(2, NONBLOCKING) with gcConcurrent: %" PRIu64 " callbacks, the last of generation %d",
                 st->calls - calls, st->last_gen);
        for (uint64_t k = 0; tt_stats(rt).background_gc_in_progress || st->bgc_pending; k++) {
            tt_collect(rt, 0, 0); /* the first GC after its marking is its final pause */
            TT_CHECK(k < 1000000, "the background GC does not end");
        }
        return;
    }
    TT_CHECK(st->calls == calls + 1, "tenure_collect(%d, %#x): the callback ran %" PRIu64 " times", gen, flags,
             st->calls - calls);
    TT_CHECK(st->last_reason == reason, "tenure_collect(%d, %#x): reason %u, expected %u", gen, flags, st->last_reason,
             reason);
    TT_CHECK(st->last_gen == want_gen, "tenure_collect(%d, %#x): condemned generation %d, expected %d", gen, flags,
             st->last_gen, want_gen);
    tenure_gc_info info;
    tenure_get_last_gc_info(rt, &info);
    TT_CHECK(info.index == st->last_index && info.reason == reason);
}

static void test_gc_kinds_and_callback(void) {
    printf("  E: allocation-driven GCs and the GC callback\n");
    tenure_runtime *rt = make_rt(-1, 256u << 10);
    const tenure_type *node_t = tt_register_node(rt);
    const tenure_type *bytes_t = tt_register_bytes(rt);
    cb_state st;
    memset(&st, 0, sizeof st);
    tenure_set_gc_callback(rt, on_gc, &st);

    size_t nslots = 20000;
    void **slots = calloc(nslots, sizeof *slots);
    uint64_t *ids = calloc(nslots, sizeof *ids);
    TT_CHECK(slots && ids);
    tenure_root_area *ra = tenure_root_area_add(rt, slots, nslots);
    TT_CHECK(ra != NULL);
    uint64_t next_id = 0;
    uint64_t allocs = 0, max_allocs = 40u * 1000 * 1000;
    tenure_stats s;
    for (;;) {
        for (int k = 0; k < 1000; k++, allocs++) {
            if (tt_rand_below(6) == 0) {
                /* survivors: a slot in a table; short-lived slots churn, long-lived ones stay */
                size_t i = tt_rand_below(4) == 0 ? (size_t)tt_rand_below(nslots) : (size_t)tt_rand_below(nslots / 20);
                tt_node *n = tt_node_new(rt, node_t, ++next_id);
                slots[i] = n;
                ids[i] = n->id;
            } else {
                TT_CHECK(tenure_alloc_array(rt, bytes_t, (size_t)tt_rand_range(16, 200)) != NULL);
            }
        }
        s = tt_stats(rt);
        if (s.gen[2].collections >= 3 && s.gen[1].collections >= s.gen[2].collections + 3 &&
            s.gen[0].collections >= s.gen[1].collections + 3)
            break;
        if (forced_stress_gen() >= 0 && allocs >= 200000) {
            printf("    (TENURE_GCStressGeneration=%d forces the generation: not waiting for all three)\n",
                   forced_stress_gen());
            break;
        }
        TT_CHECK(allocs < max_allocs,
                 "%" PRIu64 " allocations gave gen0/gen1/gen2 collections %" PRIu64 "/%" PRIu64 "/%" PRIu64, allocs,
                 s.gen[0].collections, s.gen[1].collections, s.gen[2].collections);
    }
    for (size_t i = 0; i < nslots; i++)
        if (ids[i])
            TT_CHECK_NODE(rt, node_t, slots[i], ids[i]);
    printf("    %" PRIu64 " allocations: %" PRIu64 " GCs; by condemned generation %" PRIu64 "/%" PRIu64 "/%" PRIu64
           "; reasons:",
           allocs, s.gc_count, st.by_gen[0], st.by_gen[1], st.by_gen[2]);
    for (int r = 0; r < 32; r++)
        if (st.by_reason[r])
            printf(" %d:%" PRIu64, r, st.by_reason[r]);
    printf("\n");
    end_background_gc(rt, bytes_t, &st);
    s = tt_stats(rt);
    TT_CHECK(!st.bad_index, "GC callback: index %" PRIu64 " followed %" PRIu64, st.bad_got, st.bad_at);
    TT_CHECK_EQ_U64(st.calls, s.gc_count);
    TT_CHECK_EQ_U64(st.last_index, s.gc_count);
    TT_CHECK_EQ_U64(s.gen[0].collections, st.calls);
    TT_CHECK_EQ_U64(s.gen[1].collections, st.by_gen[1] + st.by_gen[2]);
    TT_CHECK_EQ_U64(s.gen[2].collections, st.by_gen[2]);
    TT_CHECK_EQ_U64(s.compacting_gcs + s.sweeping_gcs, s.gc_count);
    /* allocation-driven GCs: AllocSmall, AllocLarge, OutOfSpaceSOH/LOH or Stress */
    for (int r = 0; r < 32; r++)
        if (st.by_reason[r])
            TT_CHECK(r == 0 || r == 4 || r == 5 || r == 6 || (r == 8 && tt_stress_mode()),
                     "%" PRIu64 " allocation-triggered GCs with reason %d", st.by_reason[r], r);

    /* induced GCs and their reasons */
    expect_induced(rt, &st, 0, 0, 1, 0);
    expect_induced(rt, &st, 1, 0, 1, 1);
    expect_induced(rt, &st, 2, 0, 1, 2);
    expect_induced(rt, &st, -1, 0, 1, 2);
    expect_induced(rt, &st, 0, TENURE_COLLECT_COMPACT, 10, 0);
    expect_induced(rt, &st, 1, TENURE_COLLECT_COMPACT, 10, 1);
    expect_induced(rt, &st, -1, TENURE_COLLECT_COMPACT, 10, 2);
    expect_induced(rt, &st, -1, TENURE_COLLECT_AGGRESSIVE, 17, 2);
    expect_induced(rt, &st, 0, TENURE_COLLECT_AGGRESSIVE, 17, 2); /* aggressive collects everything */
    expect_induced(rt, &st, 2, TENURE_COLLECT_FORCED | TENURE_COLLECT_NONBLOCKING, 1, 2);
    /* optimized: may decline; when it runs the reason is 7 */
    int optimized_ran = 0;
    for (int k = 0; k < 2; k++) {
        if (k == 1) /* lots of pending allocation: more reason to run */
            for (int j = 0; j < 20000; j++)
                TT_CHECK(tenure_alloc_array(rt, bytes_t, 100) != NULL);
        uint64_t calls = st.calls;
        tt_collect(rt, k ? 0 : 2, TENURE_COLLECT_OPTIMIZED);
        TT_CHECK(st.calls <= calls + 1);
        if (st.calls == calls + 1) {
            optimized_ran++;
            TT_CHECK(st.last_reason == 7, "an optimized GC ran with reason %u", st.last_reason);
        }
    }
    printf("    optimized GCs: %d of 2 ran\n", optimized_ran);
    end_background_gc(rt, bytes_t, &st);
    s = tt_stats(rt);
    TT_CHECK(bgc_mode() || st.background_calls == 0, "%" PRIu64 " background GCs without gcConcurrent",
             st.background_calls);
    TT_CHECK(!st.bad_index, "GC callback: index %" PRIu64 " followed %" PRIu64, st.bad_got, st.bad_at);
    TT_CHECK_EQ_U64(st.calls, s.gc_count);
    TT_CHECK_EQ_U64(s.gen[0].collections, st.calls);
    TT_CHECK_EQ_U64(s.gen[1].collections, st.by_gen[1] + st.by_gen[2]);
    TT_CHECK_EQ_U64(s.gen[2].collections, st.by_gen[2]);
    for (size_t i = 0; i < nslots; i++)
        if (ids[i])
            TT_CHECK_NODE(rt, node_t, slots[i], ids[i]);

    /* removing the callback: no more calls */
    tenure_set_gc_callback(rt, NULL, NULL);
    uint64_t calls = st.calls;
    tt_collect(rt, 0, 0);
    TT_CHECK(st.calls == calls, "the callback ran after it was removed");
    TT_CHECK_RESULT(tenure_root_area_remove(rt, ra), TENURE_OK);
    tenure_destroy(rt);
    free(slots);
    free(ids);
}

int main(void) {
    tt_rng_init("generations");
    double t0 = tt_now();
    test_promotion();
    test_missed_barrier();
    test_old_to_young(0);
    test_old_to_young(1);
    test_old_to_young(2);
    test_gc_kinds_and_callback();
    return tt_finish("generations", t0);
}
