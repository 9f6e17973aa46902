/* team.c - server GC's threads: creation before the first pause, the wake of every GC, joins
 * and restarts with their GCJoin_V2 events, parking at the GC's end (gc/team.h). */
#include "runtime.h"
#include <stdlib.h>

_Static_assert(TN_MAX_HEAPS == TN_MAX_GC_THREADS, "one GC thread per allocation heap");

unsigned tn_gc_heaps_wanted(const tenure_runtime *rt) {
    if (!rt->config.gcServer)
        return 1;
    unsigned n = rt->config.GCHeapCount ? rt->config.GCHeapCount : tn_os_cpus_allowed(NULL);
    return n > TN_MAX_GC_THREADS ? TN_MAX_GC_THREADS : n < 1 ? 1 : n;
}

/* The CPU helper `heap` is bound to: the heap-th set bit of GCHeapAffinitizeMask, or -1 (not
 * bound: GCNoAffinitize, no mask, or too few CPUs in it). Without a mask the helpers are not
 * bound: thread 0 is the program's own thread, bound to nothing, and a helper bound to CPU i
 * shared it with thread 0 whenever the scheduler put thread 0 there (measured: the mark phase
 * of a 128 MiB full GC took 38 or 80 ms, about half the runs each, with 2 GC threads). */
static int cpu_of_heap(const tenure_runtime *rt, unsigned heap) {
    uint64_t mask = rt->config.GCHeapAffinitizeMask;
    if (rt->config.GCNoAffinitize || !mask)
        return -1;
    for (unsigned cpu = 0, seen = 0; cpu < 64; cpu++)
        if (mask >> cpu & 1 && seen++ == heap)
            return (int)cpu;
    return -1;
}

typedef struct helper_start {
    tenure_runtime *rt;
    unsigned heap;
    uint64_t epoch; /* the GCs given out when it was created: it waits for the next */
} helper_start;

/* Write the join event of `heap` (at level 5: nothing to do when no session wants it). A
 * helper does not hold the instance lock: its events go to the trace files and LTTng, not to
 * listeners (trace/trace.h, tn_trace_emit_helper). */
static void join_event(tenure_runtime *rt, unsigned heap, uint32_t time, uint32_t type, uint32_t id) {
    if (heap == 0 || heap == TN_JOIN_HEAP_RESTART)
        TN_EMIT(rt, GCJoin_V2, .Heap = heap, .JoinTime = time, .JoinType = type, .JoinID = id);
    else
        TN_EMIT_HELPER(rt, GCJoin_V2, .Heap = heap, .JoinTime = time, .JoinType = type, .JoinID = id);
}

/* A helper's life: parked until an epoch (a GC) or the stop, then the GC's function. */
static void *helper_main(void *arg) {
    helper_start st = *(helper_start *)arg;
    free(arg);
    tenure_runtime *rt = st.rt;
    struct tn_gc_team *t = &rt->team;
    int cpu = cpu_of_heap(rt, st.heap);
    if (cpu >= 0)
        tn_os_bind_to_cpu((unsigned)cpu);
    pthread_mutex_lock(&t->mx);
    uint64_t seen = st.epoch; /* not t->epoch now: the first GC may have woken the team already */
    for (;;) {
        while (t->epoch == seen && !t->stop)
            pthread_cond_wait(&t->helpers_cv, &t->mx);
        if (t->stop)
            break;
        seen = t->epoch;
        if (st.heap > t->active)
            continue; /* this GC runs on fewer threads */
        tn_team_fn fn = t->fn;
        pthread_mutex_unlock(&t->mx);
        fn(rt, st.heap);
        tn_trace_thread_flush(rt); /* this thread's events of the GC, in whole packets */
        pthread_mutex_lock(&t->mx);
        if (--t->running == 0)
            pthread_cond_signal(&t->lead_cv);
    }
    pthread_mutex_unlock(&t->mx);
    return NULL;
}

static bool create_helper(tenure_runtime *rt, unsigned heap) {
    helper_start *st = tn_malloc(sizeof *st);
    if (!st)
        return false;
    *st = (helper_start){rt, heap, rt->team.epoch};
    if (pthread_create(&rt->team.threads[heap], NULL, helper_main, st) != 0) {
        free(st);
        return false;
    }
    return true;
}

static void team_init_sync(struct tn_gc_team *t) {
    pthread_mutex_init(&t->mx, NULL);
    pthread_cond_init(&t->helpers_cv, NULL);
    pthread_cond_init(&t->lead_cv, NULL);
}

/* ThreadSanitizer cannot start a thread in a forked child (base/base.h): there a forked
 * child collects on one thread. */
#define TN_FORK_RESTARTS_HELPERS (!TN_UNDER_TSAN)

void tn_gc_team_prepare(tenure_runtime *rt) {
    struct tn_gc_team *t = &rt->team;
    unsigned want = tn_gc_heaps_wanted(rt);
    if (t->forked_without_helpers)
        want = 1;
    if (want == t->n)
        return;
    if (!t->n)
        team_init_sync(t);
    t->n = want;
    while (t->created + 1 < want && create_helper(rt, t->created + 1))
        t->created++;
}

void tn_gc_team_forked_child(tenure_runtime *rt) {
    struct tn_gc_team *t = &rt->team;
    if (!t->n && TN_FORK_RESTARTS_HELPERS)
        return;        /* none yet: the child creates its own at its first GC */
    team_init_sync(t); /* the parent's helpers parked on these: none is held */
    t->created = t->running = t->join_arrived = t->active = 0;
    t->stop = false;
    t->n = 0; /* the next GC creates the helpers again */
    t->forked_without_helpers = !TN_FORK_RESTARTS_HELPERS;
}

void tn_gc_team_wake(tenure_runtime *rt, tn_team_fn fn, unsigned threads) {
    struct tn_gc_team *t = &rt->team;
    TN_ASSERT(t->running == 0 && t->join_arrived == 0 && threads >= 1);
    t->active = threads - 1 < t->created ? threads - 1 : t->created;
    if (!t->active)
        return;
    pthread_mutex_lock(&t->mx);
    t->fn = fn;
    t->running = t->active;
    t->epoch++;
    pthread_cond_broadcast(&t->helpers_cv);
    pthread_mutex_unlock(&t->mx);
}

void tn_gc_join(tenure_runtime *rt, unsigned heap, uint32_t id) {
    struct tn_gc_team *t = &rt->team;
    if (!t->active)
        return;
    pthread_mutex_lock(&t->mx);
    bool last = ++t->join_arrived == t->active + 1;
    join_event(rt, heap, 0, last ? 0 : 1, id);
    if (heap == 0) {
        while (t->join_arrived < t->active + 1)
            pthread_cond_wait(&t->lead_cv, &t->mx);
        if (!last)
            join_event(rt, heap, 1, 1, id);
    } else {
        if (last)
            pthread_cond_signal(&t->lead_cv);
        uint64_t restarts = t->restarts;
        while (t->restarts == restarts)
            pthread_cond_wait(&t->helpers_cv, &t->mx);
        if (!last)
            join_event(rt, heap, 1, 1, id);
    }
    pthread_mutex_unlock(&t->mx);
}

void tn_gc_restart(tenure_runtime *rt) {
    struct tn_gc_team *t = &rt->team;
    if (!t->active)
        return;
    pthread_mutex_lock(&t->mx);
    TN_ASSERT(t->join_arrived == t->active + 1);
    join_event(rt, TN_JOIN_HEAP_RESTART, 0, 2, UINT32_MAX);
    t->join_arrived = 0;
    t->restarts++;
    pthread_cond_broadcast(&t->helpers_cv);
    join_event(rt, TN_JOIN_HEAP_RESTART, 1, 2, UINT32_MAX);
    pthread_mutex_unlock(&t->mx);
}

void tn_gc_team_finish(tenure_runtime *rt) {
    struct tn_gc_team *t = &rt->team;
    if (!t->active)
        return;
    tn_gc_restart(rt);
    pthread_mutex_lock(&t->mx);
    while (t->running)
        pthread_cond_wait(&t->lead_cv, &t->mx);
    pthread_mutex_unlock(&t->mx);
    t->active = 0;
}

void tn_gc_team_destroy(tenure_runtime *rt) {
    struct tn_gc_team *t = &rt->team;
    if (!t->n)
        return;
    if (t->created) {
        pthread_mutex_lock(&t->mx);
        t->stop = true;
        pthread_cond_broadcast(&t->helpers_cv);
        pthread_mutex_unlock(&t->mx);
        for (unsigned i = 1; i <= t->created; i++)
            pthread_join(t->threads[i], NULL);
    }
    pthread_mutex_destroy(&t->mx);
    pthread_cond_destroy(&t->helpers_cv);
    pthread_cond_destroy(&t->lead_cv);
    t->n = t->created = 0;
}

void tn_gc_team_check(tenure_runtime *rt) {
    struct tn_gc_team *t = &rt->team;
    TN_ASSERT_INTERNAL(t->created < TN_MAX_GC_THREADS && (t->created == 0 || t->created + 1 <= t->n));
    if (!t->created)
        return;
    pthread_mutex_lock(&t->mx);
    TN_ASSERT_INTERNAL(t->join_arrived == 0 && t->running == 0); /* J1 */
    pthread_mutex_unlock(&t->mx);
}
