/*
 * events_phase_times: GCGlobalHeapHistory_V4's Values carry the .NET runtime's phase times
 * (gc_heap::etw_gc_time_info, gcpriv.h: 0..4 mark steps, 5 plan, 6 relocate or sweep, 7 compact)
 * in its order, as a listener session receives them, checked against the GC's own info.
 *
 *  A. compacting GCs (TENURE_COLLECT_COMPACT) of a heap holding a large live list: Count 8
 *     (the runtime's max_compact_time_type), info.compacted set.
 *  B. sweeping GCs (GCCompactMode=2): Count 7 (max_sweep_time_type), info.compacted 0.
 *  Every GC: the values add up to no more than the pause (each is a part of it, rounded down).
 *  Full GCs of the large list: marking it is the mark-roots step (index 1, not the plan's
 *  index as our own order had it), so index 1 is non-zero and at least the other four mark
 *  steps together (handles only), and the plan (index 5) walked the heap: non-zero. Timings on
 *  a shared machine can be preempted: these hold in most GCs, not necessarily every one.
 */
#include "test_util.h"
#include "tenure_events.h"

#include <stdbool.h>

enum { V4_MARK_ROOTS = 1, V4_PLAN = 5, V4_MAX = 8, FULL_GCS = 6 };

static tt_errlog log_ = {.fatal = 1};

typedef struct last_history {
    int seen;
    uint64_t count;
    uint64_t values[V4_MAX];
} last_history;

static void on_event(const tenure_event *e, void *ctx) {
    last_history *h = ctx;
    if (strcmp(e->desc->name, "GCGlobalHeapHistory_V4") != 0)
        return;
    h->seen++;
    TT_CHECK(tenure_event_read_u64(e, "Count", &h->count) == TENURE_OK, "GCGlobalHeapHistory_V4 without Count");
    TT_CHECK(h->count <= V4_MAX, "GCGlobalHeapHistory_V4 Count %llu: the runtime writes at most %d",
             (unsigned long long)h->count, V4_MAX);
    for (uint64_t i = 0; i < h->count; i++)
        TT_CHECK(tenure_event_read_element(e, "Values", i, NULL, &h->values[i]) == TENURE_OK, "Values[%llu]",
                 (unsigned long long)i);
}

/* A list of n nodes, rooted by a strong handle: marking it dominates the mark phase. */
static tenure_handle *build_list(tenure_runtime *rt, size_t n) {
    const tenure_type *t = tt_register_node(rt);
    tt_node *head = tt_node_new(rt, t, 1);
    tenure_handle *root = tenure_handle_new(rt, TENURE_HANDLE_STRONG, head);
    TT_CHECK(root != NULL, "tenure_handle_new");
    for (size_t i = 2; i <= n; i++) {
        tt_node *node = tt_node_new(rt, t, i);
        head = tenure_handle_get(rt, root);
        tenure_write_ref(rt, node, &node->a, head);
        tenure_handle_set(rt, root, node);
    }
    /* weak handles, so that the weak steps have something to do */
    TT_CHECK(tenure_handle_new(rt, TENURE_HANDLE_WEAK_SHORT, tenure_handle_get(rt, root)) != NULL, "short weak");
    TT_CHECK(tenure_handle_new(rt, TENURE_HANDLE_WEAK_LONG, tenure_handle_get(rt, root)) != NULL, "long weak");
    return root;
}

/* One GC; returns whether its mark and plan times landed where the runtime has them. */
static bool one_gc(tenure_runtime *rt, last_history *h, int gen, unsigned flags, int want_count) {
    int seen = h->seen;
    tt_collect(rt, gen, flags);
    TT_CHECK(h->seen == seen + 1, "one GCGlobalHeapHistory_V4 per GC, got %d", h->seen - seen);
    tenure_gc_info info;
    tenure_get_last_gc_info(rt, &info);
    TT_CHECK(h->count == (uint64_t)want_count, "gen%d GC (compacted 0x%x): Count %llu, the runtime's is %d", gen,
             info.compacted, (unsigned long long)h->count, want_count);
    TT_CHECK((info.compacted != 0) == (want_count == V4_MAX), "compacted 0x%x with Count %d", info.compacted,
             want_count);
    uint64_t sum = 0, other_mark = 0;
    for (uint64_t i = 0; i < h->count; i++)
        sum += h->values[i];
    for (int i = 0; i < V4_PLAN; i++)
        other_mark += i == V4_MARK_ROOTS ? 0 : h->values[i];
    TT_CHECK(sum <= info.pause_ns / 1000, "phase times add up to %llu us, more than the pause (%llu us)",
             (unsigned long long)sum, (unsigned long long)(info.pause_ns / 1000));
    /* tenure's own phases (tenure_gc_info.phase_us): the V4 mark steps add up to its mark
     * phase, V4's plan is its plan, and together they fit in the pause */
    uint64_t v4_mark = 0, own = 0;
    for (int i = 0; i < V4_PLAN; i++)
        v4_mark += h->values[i];
    for (int i = 0; i < 5; i++)
        own += info.phase_us[i];
    TT_CHECK(info.phase_us[0] == v4_mark, "own mark phase %u us, the V4 mark steps add up to %llu us", info.phase_us[0],
             (unsigned long long)v4_mark);
    TT_CHECK(info.phase_us[1] == h->values[V4_PLAN], "own plan phase %u us, V4 plan %llu us", info.phase_us[1],
             (unsigned long long)h->values[V4_PLAN]);
    TT_CHECK(own <= info.pause_ns / 1000, "own phase times add up to %llu us, more than the pause",
             (unsigned long long)own);
    return h->values[V4_MARK_ROOTS] > 0 && h->values[V4_MARK_ROOTS] >= other_mark && h->values[V4_PLAN] > 0;
}

static void run(const char *what, uint32_t compact_mode, unsigned flags, int want_count, size_t nodes) {
    tenure_config cfg;
    tt_config(&cfg);
    cfg.GCCompactMode = compact_mode;
    /* blocking GCs' phase times, one history event per collection asked for: a background GC
     * (TENURE_gcConcurrent=1 with GCStress) would write its own history when its sweep ends */
    cfg.gcConcurrent = 0;
    tenure_runtime *rt = tt_create(&cfg, &log_);
    last_history h = {0};
    tenure_session *s = tenure_session_start_listener(rt, 0x1, 4, on_event, &h);
    TT_CHECK(s != NULL, "listener session");
    build_list(rt, nodes);
    int placed = 0;
    for (int i = 0; i < FULL_GCS; i++)
        placed += one_gc(rt, &h, 2, flags, want_count);
    printf("%s: %d of %d full GCs with the mark time at mark roots; the last: mark roots %llu us, plan %llu us\n", what,
           placed, FULL_GCS, (unsigned long long)h.values[V4_MARK_ROOTS], (unsigned long long)h.values[V4_PLAN]);
    one_gc(rt, &h, 0, flags, want_count); /* ephemeral: Count and sum only */
    TT_CHECK(placed * 2 > FULL_GCS, "%s: the mark time is at the runtime's mark-roots index in only %d of %d GCs", what,
             placed, FULL_GCS);
    TT_CHECK(tenure_session_stop(rt, s) == TENURE_OK, "session stop");
    tenure_destroy(rt);
}

int main(void) {
    double t0 = tt_now();
    size_t nodes = tt_scaled(400000, 100000);
    run("compacting", 1, TENURE_COLLECT_COMPACT, 8, nodes);
    run("sweeping", 2, 0, 7, nodes);
    return tt_finish("events_phase_times", t0);
}
