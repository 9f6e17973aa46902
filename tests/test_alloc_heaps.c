/*
 * alloc_heaps: server GC's allocation heaps (heap/alloc.c "allocation heaps").
 *
 * 1. Budgets per heap, and balancing. With a steady per-heap gen0 budget (GCgen0size, on a heap
 *    that stays empty: the budget stays at its least, the same for every heap), one
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
 * GCStress would add GCs of its own: the test sets it to 0 (the other options come from the
 * environment, as for every test).
 */
#include "test_util.h"
#include "tenure_events.h"

#include <pthread.h>

#define BUDGET ((uint64_t)1 << 20) /* GCgen0size: the per-heap gen0 budget (less while the heap is small) */
#define HEAPS 4

typedef struct seen {
    uint64_t tick_heaps;       /* bit h: a GCAllocationTick_V4 said HeapIndex h */
    uint64_t ticks;            /* GCAllocationTick_V4 events */
    uint64_t youngest_desired; /* the last GCGlobalHeapHistory's FinalYoungestDesired */
    uint64_t num_heaps;        /* and its NumHeaps */
} seen;

static void on_event(const tenure_event *ev, void *ctx) {
    seen *s = ctx;
    const char *name = ev->desc->name;
    uint64_t v = 0;
    if (strcmp(name, "GCAllocationTick_V4") == 0) {
        tenure_event_read_u64(ev, "HeapIndex", &v);
        s->ticks++;
        s->tick_heaps |= v < 64 ? (uint64_t)1 << v : 0;
    } else if (strcmp(name, "GCGlobalHeapHistory_V4") == 0) {
        tenure_event_read_u64(ev, "FinalYoungestDesired", &s->youngest_desired);
        tenure_event_read_u64(ev, "NumHeaps", &s->num_heaps);
    }
}

static tenure_runtime *create(int server, unsigned heaps, seen *s) {
    tenure_config cfg;
    tt_config(&cfg);
    cfg.GCStress = 0;
    cfg.gcConcurrent = 0;
    cfg.GCgen0size = BUDGET;
    cfg.gcServer = server;
    cfg.GCHeapCount = heaps;
    tenure_runtime *rt = tt_create(&cfg, NULL);
    TT_CHECK(tenure_session_start_listener(rt, TENURE_KW_GC, TENURE_LEVEL_VERBOSE, on_event, s));
    return rt;
}

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

/* Two threads, one after the other (the main thread does not allocate): heap 0, then heap 1. */
static uint64_t tick_heaps(int server) {
    seen s = {0};
    tenure_runtime *rt = create(server, 2, &s);
    worker_arg a = {rt, tt_register_node(rt)};
    for (int i = 0; i < 2; i++) {
        pthread_t th;
        TT_CHECK(pthread_create(&th, NULL, worker, &a) == 0);
        tenure_blocking_enter(rt);
        TT_CHECK(pthread_join(th, NULL) == 0);
        tenure_blocking_leave(rt);
    }
    TT_CHECK(s.ticks > 0, "no allocation ticks");
    tenure_destroy(rt);
    return s.tick_heaps;
}

int main(void) {
    double t0 = tt_now();
    test_balance();
    uint64_t ws = tick_heaps(0), sv = tick_heaps(1);
    printf("alloc_heaps: ticks named heaps %#" PRIx64 " (workstation), %#" PRIx64 " (server, 2 heaps)\n", ws, sv);
    TT_CHECK(ws == 1, "workstation GC's ticks named heaps %#" PRIx64, ws);
    TT_CHECK(sv == 3, "two threads under server GC with 2 heaps: ticks named heaps %#" PRIx64, sv);
    return tt_finish("alloc_heaps", t0);
}
