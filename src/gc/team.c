/* team.c - server GC's threads: creation before the first pause, the wake of every GC, joins
 * and restarts with their GCJoin_V2 events, parking at the GC's end (gc/team.h). */
#include "runtime.h"
#include <stdlib.h>
#include <string.h>

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

/* On the creating thread's stack until the helper has started (create_helper). */
typedef struct helper_start {
    tenure_runtime *rt;
    unsigned heap;
    uint64_t epoch; /* the GCs given out when it was created: it waits for the next */
    bool started;   /* the helper runs its own code (set under the team's mx) */
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
    tenure_runtime *rt = st.rt;
    struct tn_gc_team *t = &rt->team;
    int cpu = cpu_of_heap(rt, st.heap);
    if (cpu >= 0)
        tn_os_bind_to_cpu((unsigned)cpu);
    pthread_mutex_lock(&t->mx);
    ((helper_start *)arg)->started = true; /* arg is gone once the creator sees this */
    pthread_cond_broadcast(&t->lead_cv);
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
        tn_threads_helper_begin(rt); /* its callbacks borrow the instance lock (threads.c) */
        fn(rt, st.heap);
        tn_threads_helper_end();
        tn_trace_thread_flush(rt); /* this thread's events of the GC, in whole packets */
        pthread_mutex_lock(&t->mx);
        if (__atomic_sub_fetch(&t->running, 1, __ATOMIC_SEQ_CST) == 0 && t->sleepers)
            pthread_cond_signal(&t->lead_cv);
    }
    pthread_mutex_unlock(&t->mx);
    return NULL;
}

/* Returns once the helper runs its own code: no helper is still inside the thread library's
 * (or a sanitizer's) start-up when the GC ends, so none can hold a lock of theirs when the
 * program forks next (measured: AddressSanitizer's allocator lock, held by a helper starting
 * in the parent, hung 1 forked child in 13 with 4 heaps; tests/test_fork.c). */
static bool create_helper(tenure_runtime *rt, unsigned heap) {
    struct tn_gc_team *t = &rt->team;
    helper_start st = {rt, heap, t->epoch, false};
    if (pthread_create(&t->threads[heap], NULL, helper_main, &st) != 0)
        return false;
    pthread_mutex_lock(&t->mx);
    while (!st.started)
        pthread_cond_wait(&t->lead_cv, &t->mx);
    pthread_mutex_unlock(&t->mx);
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
    t->spin = want <= tn_os_cpus_allowed(NULL);
    while (t->created + 1 < want && create_helper(rt, t->created + 1)) {
        t->created++;
        t->helper_cpus_set = false; /* a new helper has thread 0's CPUs: set them all again */
    }
}

void tn_gc_team_forked_child(tenure_runtime *rt) {
    struct tn_gc_team *t = &rt->team;
    if (!t->n && TN_FORK_RESTARTS_HELPERS)
        return;        /* none yet: the child creates its own at its first GC */
    team_init_sync(t); /* the parent's helpers parked on these: none is held */
    t->created = t->running = t->join_arrived = t->join_reported = t->sleepers = t->active = 0;
    t->stop = false;
    t->helper_cpus_set = false;
    t->n = 0; /* the next GC creates the helpers again */
    t->forked_without_helpers = !TN_FORK_RESTARTS_HELPERS;
}

/* Before the helpers wake: they may run where thread 0 may, except on the CPU thread 0 runs
 * on now (team.h, "waiting inside a pause"). A system call per helper only when that set
 * changed since the last GC. */
static void keep_helpers_beside(tenure_runtime *rt) {
    struct tn_gc_team *t = &rt->team;
    if (!t->spin || rt->config.GCNoAffinitize || rt->config.GCHeapAffinitizeMask)
        return;
    tn_cpu_set cpus;
    if (!tn_os_cpus_beside_current(&cpus))
        return;
    if (t->helper_cpus_set && memcmp(&cpus, &t->helper_cpus, sizeof cpus) == 0)
        return;
    bool all = true;
    for (unsigned i = 1; i <= t->created; i++)
        all &= tn_os_set_thread_cpus(t->threads[i], &cpus);
    t->helper_cpus = cpus;
    t->helper_cpus_set = all; /* one refused: try again at the next GC */
}

void tn_gc_team_wake(tenure_runtime *rt, tn_team_fn fn, unsigned threads) {
    struct tn_gc_team *t = &rt->team;
    TN_ASSERT(t->running == 0 && t->join_arrived == 0 && threads >= 1);
    t->active = threads - 1 < t->created ? threads - 1 : t->created;
    if (!t->active)
        return;
    keep_helpers_beside(rt);
    tn_threads_team_begin(rt); /* before any helper runs a callback */
    pthread_mutex_lock(&t->mx);
    t->fn = fn;
    __atomic_store_n(&t->running, t->active, __ATOMIC_SEQ_CST);
    t->epoch++;
    pthread_cond_broadcast(&t->helpers_cv);
    pthread_mutex_unlock(&t->mx);
}

/* ---- waits: spin, then sleep (team.h "waiting inside a pause") ---- */

bool tn_gc_spin_until(bool (*ready)(const void *arg), const void *arg) {
    uint64_t deadline = 0;
    for (unsigned i = 1;; i++) {
        if (ready(arg))
            return true;
        tn_cpu_relax();
        if (i % 64 == 0) { /* the clock is read now and then: a read costs tens of pauses */
            uint64_t now = tn_os_now_ns();
            if (!deadline)
                deadline = now + TN_GC_SPIN_NS;
            else if (now >= deadline)
                return false;
        }
    }
}

typedef struct team_wait {
    const struct tn_gc_team *t;
    uint64_t seen; /* the restarts a helper saw when it arrived */
} team_wait;

static bool join_full(const void *arg) {
    const struct tn_gc_team *t = ((const team_wait *)arg)->t;
    return __atomic_load_n(&t->join_reported, __ATOMIC_ACQUIRE) == t->active + 1;
}

static bool restarted(const void *arg) {
    const team_wait *w = arg;
    return __atomic_load_n(&w->t->restarts, __ATOMIC_ACQUIRE) != w->seen;
}

static bool all_parked(const void *arg) {
    const struct tn_gc_team *t = ((const team_wait *)arg)->t;
    return __atomic_load_n(&t->running, __ATOMIC_ACQUIRE) == 0;
}

/* Wait until ready(w): spin, then sleep on cv. A sleeper counts itself in t->sleepers under
 * t->mx before it tests ready; whoever makes ready true changes the state first, then wakes
 * the sleepers if it sees any (wake_sleepers): one of the two sees the other's write. */
static void wait_for(struct tn_gc_team *t, pthread_cond_t *cv, bool (*ready)(const void *), const team_wait *w) {
    if (t->spin && tn_gc_spin_until(ready, w))
        return;
    pthread_mutex_lock(&t->mx);
    __atomic_add_fetch(&t->sleepers, 1, __ATOMIC_SEQ_CST);
    while (!ready(w))
        pthread_cond_wait(cv, &t->mx);
    __atomic_sub_fetch(&t->sleepers, 1, __ATOMIC_SEQ_CST);
    pthread_mutex_unlock(&t->mx);
}

static void wake_sleepers(struct tn_gc_team *t) {
    if (!__atomic_load_n(&t->sleepers, __ATOMIC_SEQ_CST))
        return;
    pthread_mutex_lock(&t->mx);
    pthread_cond_broadcast(&t->helpers_cv);
    pthread_cond_broadcast(&t->lead_cv);
    pthread_mutex_unlock(&t->mx);
}

/* A thread arrives (the last one writes "last_join"), writes its join event, and counts as
 * reported: thread 0 goes on once every thread has written its event, so that every join
 * event of a join comes before the restart that ends it. */
void tn_gc_join(tenure_runtime *rt, unsigned heap, uint32_t id) {
    struct tn_gc_team *t = &rt->team;
    if (!t->active)
        return;
    team_wait w = {t, __atomic_load_n(&t->restarts, __ATOMIC_ACQUIRE)}; /* no restart before we arrive */
    bool last = __atomic_add_fetch(&t->join_arrived, 1, __ATOMIC_SEQ_CST) == t->active + 1;
    join_event(rt, heap, 0, last ? 0 : 1, id);
    if (__atomic_add_fetch(&t->join_reported, 1, __ATOMIC_SEQ_CST) == t->active + 1)
        wake_sleepers(t);
    if (heap == 0)
        wait_for(t, &t->lead_cv, join_full, &w);
    else
        wait_for(t, &t->helpers_cv, restarted, &w);
    if (!last)
        join_event(rt, heap, 1, 1, id);
}

void tn_gc_restart(tenure_runtime *rt) {
    struct tn_gc_team *t = &rt->team;
    if (!t->active)
        return;
    TN_ASSERT(__atomic_load_n(&t->join_reported, __ATOMIC_ACQUIRE) == t->active + 1);
    join_event(rt, TN_JOIN_HEAP_RESTART, 0, 2, UINT32_MAX);
    __atomic_store_n(&t->join_arrived, 0, __ATOMIC_SEQ_CST);
    __atomic_store_n(&t->join_reported, 0, __ATOMIC_SEQ_CST);
    __atomic_add_fetch(&t->restarts, 1, __ATOMIC_SEQ_CST);
    wake_sleepers(t);
    join_event(rt, TN_JOIN_HEAP_RESTART, 1, 2, UINT32_MAX);
}

void tn_gc_team_finish(tenure_runtime *rt) {
    struct tn_gc_team *t = &rt->team;
    if (!t->active)
        return;
    tn_gc_restart(rt);
    team_wait w = {t, 0};
    wait_for(t, &t->lead_cv, all_parked, &w);
    tn_threads_team_end(rt); /* no helper runs a callback now */
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
    TN_ASSERT_INTERNAL(t->join_arrived == 0 && t->join_reported == 0 && t->running == 0); /* J1 */
    TN_ASSERT_INTERNAL(t->sleepers == 0);
    pthread_mutex_unlock(&t->mx);
}
