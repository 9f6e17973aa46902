/*
 * gc_memory: no allocation inside a GC pause. Every internal allocation of the library goes
 * through base/mem.c, which (in checked builds) aborts on one made inside a pause and lets a
 * test make the calling thread's allocations fail (tn_mem_fault). With every allocation
 * failing from the start of a collection on, each GC-time structure must keep working or
 * degrade as docs/design/collector.md ("Memory inside a pause") says:
 *  - identity hashes follow moved objects and drop dead ones (the table is rebuilt in place);
 *  - the ready queue takes every registered object found dead (room reserved at registration);
 *  - the pin and gap lists hold what plan needs, or the generation is swept and the GC counted
 *    in tenure_stats.gc_scratch_shortfalls, the same way every time;
 *  - the range reports and the profiler's root batch use scratch reserved before the pause.
 */
#include "test_util.h"
#include "tenure_events.h"
#include "runtime.h" /* (src/)  tn_mem_fault, tn_mem_pause_begin: the test hooks of base/mem.c */
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

static tt_errlog log_ = {.fatal = 1};

/* Allocate n unreachable nodes: what compaction squeezes out, so that survivors move. */
static void garbage(tenure_runtime *rt, const tenure_type *t, int n) {
    for (int i = 0; i < n; i++)
        tt_node_new(rt, t, 999);
}

/* A GC in which every internal allocation fails (fault injection from its first allocation). */
static void collect_without_memory(tenure_runtime *rt, int gen, unsigned flags) {
    tn_mem_fault(1, true);
    tenure_result r = tenure_collect(rt, gen, flags);
    tn_mem_fault(0, false);
    TT_CHECK(r == TENURE_OK, "tenure_collect without memory: %s", tenure_strerror(r));
}

static tenure_runtime *create_quiet(uint32_t finalize_mode) {
    tenure_config cfg;
    tt_config(&cfg);
    cfg.GCStress = 0; /* the test's GCs are the only ones: what each reserves is known */
    cfg.GCFinalizeMode = finalize_mode;
    return tt_create(&cfg, &log_);
}

/* The rebuild of the identity-hash table after a GC used to calloc a fresh table and, when
 * that failed, kept the old one: moved objects' entries kept their old addresses (the object
 * got a new hash when asked again) and dead objects' entries stayed. */
static void test_identity_hash_without_memory(void) {
    tenure_runtime *rt = create_quiet(1); /* its first GC is the one without memory */
    const tenure_type *node_t = tt_register_node(rt);
    enum { N = 64 };
    tenure_handle *keep[N];
    uint32_t hash[N];
    uintptr_t before[N];
    for (int i = 0; i < N; i++) {
        garbage(rt, node_t, 8);
        tt_node *n = tt_node_new(rt, node_t, (uint64_t)i);
        keep[i] = tenure_handle_new(rt, TENURE_HANDLE_STRONG, n);
        hash[i] = tenure_identity_hash(rt, n);
        before[i] = (uintptr_t)n;
        TT_CHECK(hash[i] != 0);
    }
    for (int i = 0; i < N; i++) /* hashed objects that die in the GC: their entries must go */
        TT_CHECK(tenure_identity_hash(rt, tt_node_new(rt, node_t, 1000 + (uint64_t)i)) != 0);

    collect_without_memory(rt, 0, TENURE_COLLECT_COMPACT);

    size_t moved = 0, lost = 0;
    for (int i = 0; i < N; i++) {
        void *n = tenure_handle_get(rt, keep[i]);
        moved += (uintptr_t)n != before[i];
        lost += tenure_identity_hash(rt, n) != hash[i];
        TT_CHECK_NODE(rt, node_t, n, (uint64_t)i);
    }
    tenure_stats s = tt_stats(rt);
    TT_CHECK(moved > 0, "no object moved: the test would not see stale keys");
    TT_CHECK(lost == 0, "%zu of %zu moved objects lost their identity hash in a GC without memory", lost, moved);
    TT_CHECK(s.sync_blocks == N, "%llu hash entries after the GC for %d live objects: dead keys stayed",
             (unsigned long long)s.sync_blocks, N);
    /* no mark stack could be reserved either: marking went by overflow and rescanning alone */
    TT_CHECK(s.mark_stack_overflows > 0, "marking without a mark stack did not overflow");
    for (int i = 0; i < N; i++)
        tenure_handle_free(rt, keep[i]);
    TT_CHECK(tenure_verify_heap(rt) == TENURE_OK);
    tenure_destroy(rt);
    printf("  identity hash: %zu of %d objects moved in a GC without memory (and without a mark stack), every "
           "hash kept\n",
           moved, N);
}

/* ---- the ready queue: room reserved at registration ---- */

static size_t finalized;
static void count_finalized(tenure_runtime *rt, void *obj) {
    (void)rt;
    (void)obj;
    finalized++;
}

static const tenure_type *register_finalizable(tenure_runtime *rt) {
    return tt_register_finalizable(rt, "finalizable", sizeof(tt_node), count_finalized);
}


/* The ready queue used to grow inside the GC: without memory, objects found dead stayed
 * registered ("found again next GC") and their finalizers did not run. */
static void test_finalization_without_memory(void) {
    tenure_runtime *rt = create_quiet(1);
    const tenure_type *fin_t = register_finalizable(rt);
    enum { K = 1000 };
    finalized = 0;
    for (int i = 0; i < K; i++)
        TT_CHECK(tenure_alloc(rt, fin_t) != NULL);
    collect_without_memory(rt, 0, 0);
    TT_CHECK(tenure_run_pending_finalizers(rt) == K, "%zu of %d finalizers ran after a GC without memory", finalized,
             K);
    /* registration reserves the queue's room: when it cannot, the allocation fails (NOMEM)
     * and every object that did register is queued by the next GC */
    size_t registered = 0, refused = 0;
    log_.fatal = 0;
    tn_mem_fault(1, true);
    for (int i = 0; i < 3 * K; i++) {
        if (tenure_alloc(rt, fin_t))
            registered++;
        else
            refused += tenure_last_error(rt) == TENURE_NOMEM;
    }
    tn_mem_fault(0, false);
    log_.fatal = 1;
    TT_CHECK(refused > 0 && registered + refused == 3 * K, "%zu registered, %zu refused for want of memory", registered,
             refused);
    finalized = 0;
    collect_without_memory(rt, 0, 0);
    TT_CHECK(tenure_run_pending_finalizers(rt) == registered, "%zu of %zu finalizers ran", finalized, registered);
    TT_CHECK(tenure_verify_heap(rt) == TENURE_OK);
    tenure_destroy(rt);
    printf("  finalization: %d objects queued in a GC without memory; %zu registered, %zu refused (NOMEM) "
           "when the queue could not grow, all registered ones queued\n",
           K, registered, refused);
}

/* ---- the pin and gap lists: more pinned plugs than reserved ---- */

typedef struct pin_outcome {
    uint64_t shortfalls, sweeping, compacting;
    int first_compacted, second_compacted;
} pin_outcome;

/* P objects pinned through one async-pinned array, each its own plug (garbage between them):
 * no bound before the first GC knows them. That GC sweeps generation 0 instead of compacting
 * it and counts a shortfall; the next GC reserves enough and compacts. */
static pin_outcome pin_shortfall_run(void) {
    enum { P = 2000 };
    tenure_runtime *rt = create_quiet(1);
    const tenure_type *node_t = tt_register_node(rt), *arr_t = tt_register_ref_array(rt);
    void *arr = tenure_alloc_array(rt, arr_t, P);
    TT_CHECK(arr != NULL);
    tenure_handle *h = tenure_handle_new(rt, TENURE_HANDLE_ASYNC_PINNED, arr);
    for (int i = 0; i < P; i++) {
        garbage(rt, node_t, 1);
        tt_node *n = tt_node_new(rt, node_t, (uint64_t)i);
        arr = tenure_handle_get(rt, h);
        tenure_write_ref(rt, arr, &tt_refs(arr)[i], n);
    }
    pin_outcome o;
    tenure_gc_info info;
    tt_collect(rt, 0, TENURE_COLLECT_COMPACT);
    tenure_get_last_gc_info(rt, &info);
    o.first_compacted = info.compacted & 1;
    TT_CHECK(tt_stats(rt).gc_scratch_shortfalls == 1, "%d pinned plugs fit the pin list reserved for none", (int)P);
    tt_collect(rt, 1, TENURE_COLLECT_COMPACT);
    tenure_get_last_gc_info(rt, &info);
    o.second_compacted = info.compacted & 1;
    arr = tenure_handle_get(rt, h);
    for (int i = 0; i < P; i++)
        TT_CHECK_NODE(rt, node_t, tt_refs(arr)[i], (uint64_t)i);
    tenure_stats s = tt_stats(rt);
    o.shortfalls = s.gc_scratch_shortfalls;
    o.sweeping = s.sweeping_gcs;
    o.compacting = s.compacting_gcs;
    TT_CHECK(tenure_verify_heap(rt) == TENURE_OK);
    tenure_handle_free(rt, h);
    tenure_destroy(rt);
    return o;
}

static void test_pin_list_shortfall(void) {
    pin_outcome a = pin_shortfall_run(), b = pin_shortfall_run();
    TT_CHECK(!a.first_compacted && a.second_compacted,
             "first GC compacted %d, second %d: expected a sweep, "
             "then a compaction",
             a.first_compacted, a.second_compacted);
    TT_CHECK(a.shortfalls == 1 && a.sweeping == 1 && a.compacting == 1, "shortfalls %llu, sweeping %llu",
             (unsigned long long)a.shortfalls, (unsigned long long)a.sweeping);
    TT_CHECK(memcmp(&a, &b, sizeof a) == 0, "the same heap degraded differently twice");
    printf("  pin list: 2000 pinned plugs over the reservation: swept once (counted), compacted the next GC; "
           "the same both runs\n");
}

/* ---- the pause scratch: range reports ---- */

static void count_ranges(const tenure_event *ev, void *ctx) {
    if (!strcmp(ev->desc->name, "GCBulkMovedObjectRanges") || !strcmp(ev->desc->name, "GCBulkSurvivingObjectRanges"))
        (*(size_t *)ctx)++;
}

static void test_range_scratch(void) {
    tenure_runtime *rt = create_quiet(1);
    const tenure_type *node_t = tt_register_node(rt);
    size_t ranges = 0;
    tenure_session *s = tenure_session_start_listener(rt, TENURE_KW_GC | TENURE_KW_GC_HEAP_SURVIVAL_AND_MOVEMENT,
                                                      TENURE_LEVEL_VERBOSE, count_ranges, &ranges);
    TT_CHECK(s != NULL);
    tenure_handle *h = tenure_handle_new(rt, TENURE_HANDLE_STRONG, tt_node_new(rt, node_t, 1));
    garbage(rt, node_t, 100);
    collect_without_memory(rt, 0, TENURE_COLLECT_COMPACT);
    TT_CHECK(ranges == 0 && tt_stats(rt).gc_scratch_shortfalls == 1,
             "without scratch: %zu range events, %llu shortfalls", ranges,
             (unsigned long long)tt_stats(rt).gc_scratch_shortfalls);
    garbage(rt, node_t, 100);
    tt_collect(rt, 1, TENURE_COLLECT_COMPACT);
    TT_CHECK(ranges > 0 && tt_stats(rt).gc_scratch_shortfalls == 1, "with scratch: %zu range events", ranges);
    TT_CHECK_NODE(rt, node_t, tenure_handle_get(rt, h), 1);
    TT_CHECK(tenure_session_stop(rt, s) == TENURE_OK);
    tenure_handle_free(rt, h);
    tenure_destroy(rt);
    printf("  range reports: skipped and counted without scratch, reported with it\n");
}

/* ---- every pause-time observer at once, under the pause check ---- */

static size_t roots_seen, moved_seen, events_seen;
static void on_roots(void *ctx, size_t count, void *const *ids, const tenure_root_kind *kinds, const uint32_t *flags,
                     const uintptr_t *root_ids) {
    (void)ctx, (void)ids, (void)kinds, (void)flags, (void)root_ids;
    roots_seen += count;
}
static void on_moved(void *ctx, size_t count, const uintptr_t *old, const uintptr_t *new_starts, const size_t *len) {
    (void)ctx, (void)old, (void)new_starts, (void)len;
    moved_seen += count;
}
static void on_any_event(const tenure_event *ev, void *ctx) {
    (void)ev, (void)ctx;
    events_seen++;
}

/* GCs with a profiler (ranges, roots), every GC event and a heap dump: in a checked build an
 * allocation in the pause aborts, so passing shows their scratch was reserved before it. */
static void test_observers_allocate_nothing_in_pause(void) {
    tenure_runtime *rt = create_quiet(1);
    const tenure_type *node_t = tt_register_node(rt);
    tenure_profiler_callbacks cb;
    memset(&cb, 0, sizeof cb);
    cb.root_references = on_roots;
    cb.moved_references = on_moved;
    tenure_profiler *p = tenure_profiler_attach(rt, &cb, TENURE_PROFILE_GC, NULL);
    TT_CHECK(p != NULL);
    tenure_session *s = tenure_session_start_listener(rt, ~0ull, TENURE_LEVEL_VERBOSE, on_any_event, NULL);
    TT_CHECK(s != NULL);
    tenure_handle *h[16];
    for (int i = 0; i < 16; i++) {
        garbage(rt, node_t, 50);
        h[i] = tenure_handle_new(rt, i % 4 ? TENURE_HANDLE_STRONG : TENURE_HANDLE_PINNED, tt_node_new(rt, node_t, i));
        TT_CHECK(tenure_identity_hash(rt, tenure_handle_get(rt, h[i])) != 0);
    }
    for (int gc = 0; gc < 6; gc++) {
        garbage(rt, node_t, 200);
        tt_collect(rt, gc % 3, TENURE_COLLECT_COMPACT);
    }
    TT_CHECK(tenure_heap_dump(rt) == TENURE_OK);
    TT_CHECK(roots_seen > 0 && moved_seen > 0 && events_seen > 0);
    TT_CHECK(tt_stats(rt).gc_scratch_shortfalls == 0);
    for (int i = 0; i < 16; i++) {
        TT_CHECK_NODE(rt, node_t, tenure_handle_get(rt, h[i]), (uint64_t)i);
        tenure_handle_free(rt, h[i]);
    }
    TT_CHECK(tenure_session_stop(rt, s) == TENURE_OK);
    TT_CHECK(tenure_profiler_detach(rt, p) == TENURE_OK);
    tenure_destroy(rt);
    printf("  observers: 7 GCs with a profiler, every event and a heap dump: nothing allocated in a pause\n");
}

/* ---- the check itself ---- */

/* In a child: an internal allocation inside a pause aborts (checked builds); one inside a
 * callback the pause calls is the callback's business. */
static void test_pause_check(void) {
#ifdef TENURE_CHECKED
    tenure_runtime *rt = create_quiet(1);
    fflush(stdout);
    pid_t pid = fork();
    TT_CHECK(pid >= 0);
    if (pid == 0) {
        tn_mem_pause_begin(rt);
        tn_cb_frame frame;
        tn_cb_push(&frame, rt, TN_CB_LISTENER);
        free(tn_malloc(16)); /* allowed: inside a callback */
        tn_cb_pop(&frame);
        (void)fprintf(stderr, "  (the child now allocates inside a pause: the abort below is expected)\n");
        free(tn_malloc(16));
        _exit(0);
    }
    int status = 0;
    TT_CHECK(waitpid(pid, &status, 0) == pid);
    TT_CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT, "an allocation inside a pause did not abort");
    tenure_destroy(rt);
    printf("  pause check: an internal allocation inside a pause aborts; inside a callback it does not\n");
#else
    printf("  pause check: not built (TENURE_CHECKED=OFF)\n");
#endif
}

int main(void) {
    double t0 = tt_now();
    test_identity_hash_without_memory();
    test_finalization_without_memory();
    test_pin_list_shortfall();
    test_range_scratch();
    test_observers_allocate_nothing_in_pause();
    test_pause_check();
    return tt_finish("gc_memory", t0);
}
