/*
 * alloc_heaps: server GC's allocation heaps (heap/alloc.c "allocation heaps").
 *
 * 1. Budgets per heap, and balancing. With a steady per-heap gen0 budget (GCgen0size and
 *    GCgen0MaxBudget alike: without the cap, the budget would grow into the memory the
 *    heaps' own gen0 regions once took, more under server GC), one
 *    thread allocating garbage under server GC with H heaps moves from heap to heap as each
 *    spends its budget (balance_heaps) and so allocates about H budgets between GCs: it makes
 *    H times fewer GCs than the same program under workstation GC (at least 1/(1 - 1/8) of H
 *    budgets per GC less what balancing leaves unspent: the ratio must lie in [0.75 H, 1.1 H]).
 *    GCGlobalHeapHistory's FinalYoungestDesired is every heap's budget together (H times
 *    workstation GC's).
 * 2. Threads are dealt heaps in turn: two threads attached one after the other allocate under
 *    heaps 0 and 1, which GCAllocationTick_V4's HeapIndex shows; workstation GC's ticks all
 *    say heap 0.
 *
 * 3. Regions per heap. Two threads (dealt heaps 0 and 1) each build a chain of nodes, heap 1's
 *    three times as long, and a compacting gen0 GC follows; twice, so that the second GC packs
 *    its survivors into each heap's gen1 region (its tail) rather than into new ones. After each,
 *    GCGlobalHeapHistory says NumHeaps 2 and each heap's GCPerHeapHistory_V3 shows its own
 *    thread's survivors: heap 1's gen0 survivors are three times heap 0's, and each heap's gen1
 *    holds exactly what survived on it so far (a plan with one cursor for every heap would slide
 *    heap 1's survivors into heap 0's region).
 *
 * 4. Plugs placed per heap on the team (gc/plan.c, the place part). Two threads (heaps 0 and 1)
 *    each build a chain of PLACE_NODES nodes (4 MB), pinning every PLACE_PIN_EVERY-th; heap 0's chain
 *    is all live, heap 1's has a garbage node after each live one. Induced compacting gen1
 *    and gen2 GCs keep more than 512 KiB, so their phases after marking run on the team (thread
 *    0 meets decide_on_compaction, join 11). Heap 0's pinned plugs follow live ones, so it has
 *    fewer gaps than pins; heap 1 has a gap in front of each pin: its slice of the gap list
 *    lies past heap 0's gaps and must be closed up. The heap is verified around every GC
 *    (HeapVerify), both chains must come back whole, in order, and the heap walk must find
 *    their nodes and no other (a gap left out of the list keeps its dead nodes).
 *
 * 5. The older generations' budgets per heap (heap/alloc.c "budgets and triggers"). With
 *    GCgen1size = G1 (now per heap) and a gen0 budget no build spends, threads on heaps 0 and
 *    1 each build a chain of 3/4 G1 and a compacting gen0 GC promotes it: together 1.5 G1 came
 *    into gen1, but neither heap has spent its own G1, so the next GC the allocations bring is
 *    a gen0 GC (one budget for the instance would have made it gen1). Heap 1 then promotes 1/2
 *    G1 more, and the next allocation-triggered GC is gen1. Each GCPerHeapHistory reports G1
 *    as its heap's gen1 NewAllocation. Then, with the automatic budgets, heap 1 alone keeps 24
 *    MiB of large arrays through a gen2 GC: its gen1 budget is half of what lives in its older
 *    generations and its LOH budget twice its LOH survivors, where heap 0 keeps the least of
 *    each (twice the gen0 budget, 8 MiB).
 *
 * GCStress would add GCs of its own: the test sets it to 0 (the other options come from the
 * environment, as for every test).
 */
#include "test_util.h"
#include "tenure_events.h"

#include <pthread.h>

#define BUDGET ((uint64_t)1 << 20) /* GCgen0size and GCgen0MaxBudget: the per-heap gen0 budget */
#define HEAPS 4

typedef struct seen {
    uint64_t tick_heaps;          /* bit h: a GCAllocationTick_V4 said HeapIndex h */
    uint64_t ticks;               /* GCAllocationTick_V4 events */
    uint64_t youngest_desired;    /* the last GCGlobalHeapHistory's FinalYoungestDesired */
    uint64_t num_heaps;           /* and its NumHeaps */
    uint64_t heap_surv0[2];       /* the last GC's gen0 survivors per heap (GCPerHeapHistory_V3) */
    uint64_t heap_gen1[2];        /* its gen1 objects per heap after it: SizeAfter - FreeObjAfter */
    uint64_t heap_events;         /* GCPerHeapHistory_V3 events */
    uint64_t place_joins;         /* thread 0's GCJoin_V2 starts with JoinID 11 (decide_on_compaction) */
    uint64_t last_depth;          /* the last GCStart_V2's Depth */
    uint64_t heap_gen1_budget[2]; /* the last GC's gen1 NewAllocation per heap */
    uint64_t heap_loh_budget[2];  /* and the LOH's */
} seen;

static uint64_t gen_field(const tenure_event *ev, size_t gen, const char *field) {
    uint64_t v = 0;
    TT_CHECK_RESULT(tenure_event_read_element(ev, "Values", gen, field, &v), TENURE_OK);
    return v;
}

static void on_event(const tenure_event *ev, void *ctx) {
    seen *s = ctx;
    const char *name = ev->desc->name;
    uint64_t v = 0;
    if (strcmp(name, "GCJoin_V2") == 0) {
        uint64_t heap = 1, time = 1;
        tenure_event_read_u64(ev, "Heap", &heap);
        tenure_event_read_u64(ev, "JoinTime", &time);
        tenure_event_read_u64(ev, "JoinID", &v);
        s->place_joins += heap == 0 && time == 0 && v == 11;
    } else if (strcmp(name, "GCStart_V2") == 0) {
        tenure_event_read_u64(ev, "Depth", &s->last_depth);
    } else if (strcmp(name, "GCAllocationTick_V4") == 0) {
        tenure_event_read_u64(ev, "HeapIndex", &v);
        s->ticks++;
        s->tick_heaps |= v < 64 ? (uint64_t)1 << v : 0;
    } else if (strcmp(name, "GCGlobalHeapHistory_V4") == 0) {
        tenure_event_read_u64(ev, "FinalYoungestDesired", &s->youngest_desired);
        tenure_event_read_u64(ev, "NumHeaps", &s->num_heaps);
    } else if (strcmp(name, "GCPerHeapHistory_V3") == 0) {
        tenure_event_read_u64(ev, "HeapIndex", &v);
        s->heap_events++;
        if (v < 2) {
            s->heap_surv0[v] = gen_field(ev, 0, "PinnedSurv") + gen_field(ev, 0, "NonePinnedSurv");
            s->heap_gen1[v] = gen_field(ev, 1, "SizeAfter") - gen_field(ev, 1, "FreeObjAfter");
            s->heap_gen1_budget[v] = gen_field(ev, 1, "NewAllocation");
            s->heap_loh_budget[v] = gen_field(ev, 3, "NewAllocation");
        }
    }
}

static tenure_runtime *create_with(int server, unsigned heaps, uint64_t budget, uint32_t verify, seen *s) {
    tenure_config cfg;
    tt_config(&cfg);
    cfg.GCStress = 0;
    cfg.gcConcurrent = 0;
    cfg.GCgen0size = budget;
    cfg.GCgen0MaxBudget = budget;
    cfg.HeapVerify = verify ? verify : cfg.HeapVerify;
    cfg.gcServer = server;
    cfg.GCHeapCount = heaps;
    tenure_runtime *rt = tt_create(&cfg, NULL);
    TT_CHECK(tenure_session_start_listener(rt, TENURE_KW_GC, TENURE_LEVEL_VERBOSE, on_event, s));
    return rt;
}

static tenure_runtime *create(int server, unsigned heaps, seen *s) { return create_with(server, heaps, BUDGET, 0, s); }

/* Allocate `bytes` of garbage (64-byte nodes) on the calling thread; the GCs it made. */
static uint64_t churn(tenure_runtime *rt, const tenure_type *t, uint64_t bytes) {
    uint64_t before = tt_stats(rt).gc_count;
    for (uint64_t done = 0; done < bytes; done += sizeof(tt_node))
        TT_CHECK(tt_node_new(rt, t, done) != NULL, "allocation failed");
    return tt_stats(rt).gc_count - before;
}

static void test_balance(void) {
    uint64_t bytes = tt_scaled(96u << 20, 48u << 20);
    seen ws_seen = {0}, sv_seen = {0};
    tenure_runtime *ws = create(0, 0, &ws_seen), *sv = create(1, HEAPS, &sv_seen);
    uint64_t ws_gcs = churn(ws, tt_register_node(ws), bytes);
    uint64_t sv_gcs = churn(sv, tt_register_node(sv), bytes);
    double ratio = sv_gcs ? (double)ws_gcs / (double)sv_gcs : 0;
    printf("alloc_heaps: %" PRIu64 " MiB of garbage: %" PRIu64 " GCs (workstation), %" PRIu64
           " GCs (server, %d heaps): %.2fx; FinalYoungestDesired %" PRIu64 " and %" PRIu64 "\n",
           bytes >> 20, ws_gcs, sv_gcs, HEAPS, ratio, ws_seen.youngest_desired, sv_seen.youngest_desired);
    TT_CHECK(ws_seen.youngest_desired > 0 && ws_gcs >= bytes / ws_seen.youngest_desired * 9 / 10,
             "workstation GC made %" PRIu64 " GCs for %" PRIu64 " budgets", ws_gcs,
             ws_seen.youngest_desired ? bytes / ws_seen.youngest_desired : 0);
    TT_CHECK(ratio >= 0.75 * HEAPS && ratio <= 1.1 * HEAPS,
             "server GC with %d heaps made %.2f times fewer GCs than workstation GC", HEAPS, ratio);
    TT_CHECK(sv_seen.youngest_desired == HEAPS * ws_seen.youngest_desired && ws_seen.youngest_desired <= BUDGET,
             "FinalYoungestDesired %" PRIu64 " (server) against %" PRIu64 " (workstation)", sv_seen.youngest_desired,
             ws_seen.youngest_desired);
    tenure_destroy(ws);
    tenure_destroy(sv);
}

typedef struct worker_arg {
    tenure_runtime *rt;
    const tenure_type *t;
} worker_arg;

static void *worker(void *p) {
    worker_arg *a = p;
    TT_CHECK_RESULT(tenure_thread_attach(a->rt), TENURE_OK);
    churn(a->rt, a->t, 512u << 10); /* ticks (one per 100 KiB), within one heap's budget */
    TT_CHECK_RESULT(tenure_thread_detach(a->rt), TENURE_OK);
    return NULL;
}

/* A new thread (dealt the next heap in turn) runs fn(a), the main thread blocking meanwhile. */
static void run_thread(tenure_runtime *rt, void *(*fn)(void *), void *a) {
    pthread_t th;
    TT_CHECK(pthread_create(&th, NULL, fn, a) == 0);
    tenure_blocking_enter(rt);
    TT_CHECK(pthread_join(th, NULL) == 0);
    tenure_blocking_leave(rt);
}

/* Two threads, one after the other (the main thread does not allocate): heap 0, then heap 1. */
static uint64_t tick_heaps(int server) {
    seen s = {0};
    tenure_runtime *rt = create(server, 2, &s);
    worker_arg a = {rt, tt_register_node(rt)};
    for (int i = 0; i < 2; i++)
        run_thread(rt, worker, &a);
    TT_CHECK(s.ticks > 0, "no allocation ticks");
    tenure_destroy(rt);
    return s.tick_heaps;
}

typedef struct chain_arg {
    tenure_runtime *rt;
    const tenure_type *t;
    unsigned nodes;
    tenure_handle *head; /* STRONG: the chain's first node */
} chain_arg;

static void *build_chain(void *p) {
    chain_arg *a = p;
    TT_CHECK_RESULT(tenure_thread_attach(a->rt), TENURE_OK);
    for (unsigned i = 0; i < a->nodes; i++) {
        tt_node *n = tt_node_new(a->rt, a->t, i);
        TT_CHECK(n != NULL);
        n->a = tenure_handle_get(a->rt, a->head);
        tt_node_seal(n);
        TT_CHECK_RESULT(tenure_handle_set(a->rt, a->head, n), TENURE_OK);
    }
    TT_CHECK_RESULT(tenure_thread_detach(a->rt), TENURE_OK);
    return NULL;
}

static void test_regions_per_heap(void) {
    seen s = {0};
    tenure_runtime *rt = create(1, 2, &s);
    const tenure_type *t = tt_register_node(rt);
    chain_arg a[2] = {{rt, t, 1000, NULL}, {rt, t, 3000, NULL}};
    uint64_t kept[2] = {0, 0};
    for (int i = 0; i < 2; i++)
        TT_CHECK((a[i].head = tenure_handle_new(rt, TENURE_HANDLE_STRONG, NULL)) != NULL);
    for (int round = 0; round < 2; round++) {
        for (int i = 0; i < 2; i++) /* one after the other: dealt heap 0, then heap 1 */
            run_thread(rt, build_chain, &a[i]);
        uint64_t events = s.heap_events;
        tt_collect(rt, 0, TENURE_COLLECT_COMPACT);
        TT_CHECK(s.num_heaps == 2 && s.heap_events == events + 2,
                 "round %d: NumHeaps %" PRIu64 ", %" PRIu64 " per-heap histories", round, s.num_heaps,
                 s.heap_events - events);
        printf("alloc_heaps: round %d: gen0 survivors %" PRIu64 " and %" PRIu64 " bytes, gen1 %" PRIu64 " and %" PRIu64
               " bytes on heaps 0 and 1\n",
               round, s.heap_surv0[0], s.heap_surv0[1], s.heap_gen1[0], s.heap_gen1[1]);
        TT_CHECK(s.heap_surv0[0] > 0 && s.heap_surv0[1] == 3 * s.heap_surv0[0],
                 "round %d: gen0 survivors per heap %" PRIu64 " and %" PRIu64 " (chains of 1000 and 3000 nodes)", round,
                 s.heap_surv0[0], s.heap_surv0[1]);
        for (int h = 0; h < 2; h++) {
            kept[h] += s.heap_surv0[h];
            TT_CHECK(s.heap_gen1[h] == kept[h],
                     "round %d: heap %d's gen1 holds %" PRIu64 " bytes, %" PRIu64 " survived there", round, h,
                     s.heap_gen1[h], kept[h]);
        }
    }
    tenure_destroy(rt);
}

#define PLACE_NODES 100000 /* 40-byte nodes: 4 MB live per chain */
#define PLACE_PIN_EVERY 1000

typedef struct place_arg {
    tenure_runtime *rt;
    const tenure_type *t;
    int garbage;          /* a garbage node after each live one */
    tenure_handle *head;  /* STRONG: the chain's last node (ids count down along a) */
    tenure_handle **pins; /* PLACE_NODES / PLACE_PIN_EVERY pinned handles */
} place_arg;

static void *build_pinned_chain(void *p) {
    place_arg *a = p;
    TT_CHECK_RESULT(tenure_thread_attach(a->rt), TENURE_OK);
    for (unsigned i = 0; i < PLACE_NODES; i++) {
        tt_node *n = tt_node_new(a->rt, a->t, i + 1);
        n->a = tenure_handle_get(a->rt, a->head);
        tt_node_seal(n);
        TT_CHECK_RESULT(tenure_handle_set(a->rt, a->head, n), TENURE_OK);
        if (i % PLACE_PIN_EVERY == PLACE_PIN_EVERY / 2)
            TT_CHECK((a->pins[i / PLACE_PIN_EVERY] = tenure_handle_new(a->rt, TENURE_HANDLE_PINNED, n)) != NULL);
        if (a->garbage)
            tt_node_new(a->rt, a->t, 0);
    }
    TT_CHECK_RESULT(tenure_thread_detach(a->rt), TENURE_OK);
    return NULL;
}

static void check_chain(tenure_runtime *rt, tenure_handle *head, int h) {
    unsigned n = 0;
    for (tt_node *x = tenure_handle_get(rt, head); x; x = x->a, n++)
        TT_CHECK(x->id == PLACE_NODES - n && x->check == tt_node_sum(x), "heap %d: node %u of the chain is wrong", h,
                 n);
    TT_CHECK(n == PLACE_NODES, "heap %d: the chain has %u nodes, not %u", h, n, PLACE_NODES);
}

static int count_node(void *obj, const tenure_type *type, size_t size, int generation, void *ctx) {
    (void)obj, (void)size, (void)generation;
    uint64_t *c = ctx;
    c[0] += type == (const tenure_type *)c[1];
    return 0;
}

static void test_place_per_heap(void) {
    seen s = {0};
    /* no budget GC while the chains grow: the induced GCs keep them whole */
    tenure_runtime *rt = create_with(1, 2, (uint64_t)256 << 20, 1, &s);
    const tenure_type *t = tt_register_node(rt);
    tenure_handle *pins[2][PLACE_NODES / PLACE_PIN_EVERY];
    place_arg a[2];
    for (int h = 0; h < 2; h++) {
        a[h] = (place_arg){rt, t, h == 1, tenure_handle_new(rt, TENURE_HANDLE_STRONG, NULL), pins[h]};
        TT_CHECK(a[h].head != NULL);
        run_thread(rt, build_pinned_chain, &a[h]); /* one after the other: dealt heap 0, then heap 1 */
    }
    int gens[] = {1, 2, 2}; /* (a gen0 GC after none kept 512 KiB marks on one thread: collect.c) */
    for (size_t i = 0; i < sizeof gens / sizeof gens[0]; i++) {
        uint64_t joins = s.place_joins;
        tt_collect(rt, gens[i], TENURE_COLLECT_COMPACT);
        TT_CHECK(s.place_joins == joins + 1, "the gen%d GC met join 11 %" PRIu64 " times: not on the team?", gens[i],
                 s.place_joins - joins);
        for (int h = 0; h < 2; h++)
            check_chain(rt, a[h].head, h);
        /* every condemned generation compacted: the heap holds the chains' nodes, no dead one
         * (a gap not made free space would leave its dead nodes in the walk) */
        uint64_t nodes[2] = {0, (uint64_t)(uintptr_t)t};
        TT_CHECK_RESULT(tenure_heap_walk(rt, count_node, nodes), TENURE_OK);
        TT_CHECK(nodes[0] == 2 * PLACE_NODES, "after the gen%d GC the heap walk finds %" PRIu64 " nodes, not %u",
                 gens[i], nodes[0], 2 * PLACE_NODES);
    }
    for (int h = 0; h < 2; h++) /* a pinned node stays where it is */
        for (unsigned k = 0; k < PLACE_NODES / PLACE_PIN_EVERY; k++)
            TT_CHECK(((tt_node *)tenure_handle_get(rt, pins[h][k]))->id ==
                     (uint64_t)k * PLACE_PIN_EVERY + PLACE_PIN_EVERY / 2 + 1);
    printf("alloc_heaps: two heaps' pinned chains placed on the team by 3 compacting GCs, heap verified: ok\n");
    tenure_destroy(rt);
}

/* Allocate garbage until an allocation-triggered GC comes. */
static void *churn_until_gc(void *p) {
    worker_arg *a = p;
    TT_CHECK_RESULT(tenure_thread_attach(a->rt), TENURE_OK);
    uint64_t before = tt_stats(a->rt).gc_count;
    for (uint64_t i = 0; tt_stats(a->rt).gc_count == before; i++)
        for (int k = 0; k < 64; k++)
            TT_CHECK(tt_node_new(a->rt, a->t, i) != NULL);
    TT_CHECK_RESULT(tenure_thread_detach(a->rt), TENURE_OK);
    return NULL;
}

#define G1 ((uint64_t)2 << 20) /* part 5: GCgen1size, per heap */
#define LARGE_KEPT 24          /* part 5: MiB of large arrays heap 1 keeps */

typedef struct large_arg {
    tenure_runtime *rt;
    const tenure_type *refs_t, *bytes_t;
    tenure_handle *head; /* STRONG: a ref array of LARGE_KEPT 1 MiB byte arrays */
} large_arg;

static void *keep_large(void *p) {
    large_arg *a = p;
    TT_CHECK_RESULT(tenure_thread_attach(a->rt), TENURE_OK);
    void *refs = tenure_alloc_array(a->rt, a->refs_t, LARGE_KEPT);
    TT_CHECK(refs != NULL);
    TT_CHECK_RESULT(tenure_handle_set(a->rt, a->head, refs), TENURE_OK);
    for (int i = 0; i < LARGE_KEPT; i++) {
        void *big = tenure_alloc_array(a->rt, a->bytes_t, (size_t)1 << 20);
        TT_CHECK(big != NULL);
        refs = tenure_handle_get(a->rt, a->head);
        tenure_write_ref(a->rt, refs, &tt_refs(refs)[i], big);
    }
    TT_CHECK_RESULT(tenure_thread_detach(a->rt), TENURE_OK);
    return NULL;
}

static void test_older_budgets_per_heap(void) {
    seen s = {0};
    tenure_config cfg;
    tt_config(&cfg);
    cfg.GCStress = 0;
    cfg.gcConcurrent = 0;
    cfg.gcServer = 1;
    cfg.GCHeapCount = 2;
    cfg.GCgen0size = cfg.GCgen0MaxBudget = (uint64_t)32 << 20; /* no chain spends it */
    cfg.GCgen1size = G1;
    tenure_runtime *rt = tt_create(&cfg, NULL);
    TT_CHECK(tenure_session_start_listener(rt, TENURE_KW_GC, TENURE_LEVEL_VERBOSE, on_event, &s));
    const tenure_type *t = tt_register_node(rt);
    unsigned three_quarters = (unsigned)(G1 * 3 / 4 / sizeof(tt_node)), half = (unsigned)(G1 / 2 / sizeof(tt_node));
    chain_arg a[2] = {{rt, t, three_quarters, NULL}, {rt, t, three_quarters, NULL}};
    worker_arg c = {rt, t};
    for (int h = 0; h < 2; h++) {
        TT_CHECK((a[h].head = tenure_handle_new(rt, TENURE_HANDLE_STRONG, NULL)) != NULL);
        run_thread(rt, build_chain, &a[h]); /* dealt heap h */
        tt_collect(rt, 0, TENURE_COLLECT_COMPACT);
        TT_CHECK(s.heap_surv0[h] >= (uint64_t)three_quarters * sizeof(tt_node) && s.heap_surv0[1 - h] < G1 / 8,
                 "the chain built on heap %d survived as %" PRIu64 " and %" PRIu64 " bytes on heaps 0 and 1", h,
                 s.heap_surv0[0], s.heap_surv0[1]);
    }
    TT_CHECK(s.heap_gen1_budget[0] == G1 && s.heap_gen1_budget[1] == G1,
             "gen1 budgets reported %" PRIu64 " and %" PRIu64 ", want GCgen1size on each heap", s.heap_gen1_budget[0],
             s.heap_gen1_budget[1]);
    run_thread(rt, churn_until_gc, &c); /* dealt heap 0 */
    TT_CHECK(s.last_depth == 0, "1.5 x GCgen1size came into gen1, 3/4 on each heap: a gen%" PRIu64 " GC came",
             s.last_depth);
    a[1].nodes = half;
    run_thread(rt, build_chain, &a[1]); /* dealt heap 1 */
    tt_collect(rt, 0, TENURE_COLLECT_COMPACT);
    run_thread(rt, churn_until_gc, &c); /* heap 0 */
    TT_CHECK(s.last_depth == 1, "heap 1 promoted 1.25 x GCgen1size: a gen%" PRIu64 " GC came", s.last_depth);
    printf("alloc_heaps: gen1 budgets per heap: 3/4 of one on each heap kept gen0 GCs, 5/4 on one made a gen1 GC\n");
    tenure_destroy(rt);

    /* the automatic budgets follow each heap's own older generations: heap 1 keeps LARGE_KEPT
     * large arrays (the LOH is heap 1's: large objects never move between heaps) */
    memset(&s, 0, sizeof s);
    cfg.GCgen1size = 0;
    cfg.GCgen0size = cfg.GCgen0MaxBudget = (uint64_t)1 << 20;
    rt = tt_create(&cfg, NULL);
    TT_CHECK(tenure_session_start_listener(rt, TENURE_KW_GC, TENURE_LEVEL_VERBOSE, on_event, &s));
    large_arg la = {rt, tt_register_ref_array(rt), tt_register_bytes(rt),
                    tenure_handle_new(rt, TENURE_HANDLE_STRONG, NULL)};
    chain_arg small = {rt, tt_register_node(rt), 1000, tenure_handle_new(rt, TENURE_HANDLE_STRONG, NULL)};
    run_thread(rt, build_chain, &small); /* heap 0 */
    run_thread(rt, keep_large, &la);     /* heap 1 */
    tt_collect(rt, 2, TENURE_COLLECT_COMPACT);
    uint64_t least = 2 * cfg.GCgen0size, kept = (uint64_t)LARGE_KEPT << 20;
    printf("alloc_heaps: automatic budgets after a gen2 GC: gen1 %" PRIu64 " and %" PRIu64 " KiB, LOH %" PRIu64
           " and %" PRIu64 " KiB (heaps 0 and 1; heap 1 keeps %d MiB of large arrays)\n",
           s.heap_gen1_budget[0] >> 10, s.heap_gen1_budget[1] >> 10, s.heap_loh_budget[0] >> 10,
           s.heap_loh_budget[1] >> 10, LARGE_KEPT);
    TT_CHECK(s.heap_gen1_budget[0] == least && s.heap_gen1_budget[1] >= kept / 2 && s.heap_gen1_budget[1] < kept,
             "automatic gen1 budgets %" PRIu64 " and %" PRIu64
             ": want twice GCgen0size on heap 0, half of %d MiB on heap 1",
             s.heap_gen1_budget[0], s.heap_gen1_budget[1], LARGE_KEPT);
    TT_CHECK(s.heap_loh_budget[0] == ((uint64_t)8 << 20) && s.heap_loh_budget[1] >= 2 * kept,
             "LOH budgets %" PRIu64 " and %" PRIu64 ": want the least (8 MiB) on heap 0, twice %d MiB on heap 1",
             s.heap_loh_budget[0], s.heap_loh_budget[1], LARGE_KEPT);
    tenure_destroy(rt);
}

int main(void) {
    double t0 = tt_now();
    test_balance();
    uint64_t ws = tick_heaps(0), sv = tick_heaps(1);
    printf("alloc_heaps: ticks named heaps %#" PRIx64 " (workstation), %#" PRIx64 " (server, 2 heaps)\n", ws, sv);
    TT_CHECK(ws == 1, "workstation GC's ticks named heaps %#" PRIx64, ws);
    TT_CHECK(sv == 3, "two threads under server GC with 2 heaps: ticks named heaps %#" PRIx64, sv);
    test_regions_per_heap();
    test_place_per_heap();
    test_older_budgets_per_heap();
    return tt_finish("alloc_heaps", t0);
}
