/*
 * team_cpus: server GC keeps its woken helpers off the CPU of the thread that collects
 * (gc/team.h, "waiting inside a pause"): Linux would often queue a woken helper behind that
 * thread, which spins waiting for it.
 *
 * With 2 heaps on a machine where the process may use at least 2 CPUs, after a GC on the team:
 *  A. each helper may run on the CPUs the collecting thread may run on, less exactly one (the
 *     one it ran on when it woke them);
 *  B. a collecting thread bound to one CPU leaves its helpers that CPU (nothing else is theirs
 *     to take);
 *  C. with GCNoAffinitize the helpers keep the CPUs they were created with;
 *  D. with GCHeapAffinitizeMask each helper is bound to its CPU of the mask, as before.
 * Every GC's result is checked too: a chain of nodes survives whole.
 */
#define _GNU_SOURCE
#include "test_util.h"
#include "runtime.h" /* (src/) rt->team: the helpers' threads */
#include <pthread.h>
#include <sched.h>

#define NODES 20000

static tt_errlog log_ = {.fatal = 1};
static const tenure_type *node_t; /* of the instance in use */

static void cpus_of(pthread_t th, cpu_set_t *set) {
    CPU_ZERO(set);
    TT_CHECK(pthread_getaffinity_np(th, sizeof *set, set) == 0, "pthread_getaffinity_np");
}

static bool subset(const cpu_set_t *a, const cpu_set_t *b) {
    cpu_set_t both;
    CPU_AND(&both, a, b);
    return CPU_EQUAL(&both, a);
}

static tenure_runtime *create(bool no_affinitize, uint64_t mask) {
    tenure_config cfg;
    tt_config(&cfg);
    cfg.gcServer = 1;
    cfg.GCHeapCount = 2;
    cfg.GCNoAffinitize = no_affinitize;
    cfg.GCHeapAffinitizeMask = mask;
    tenure_runtime *rt = tt_create(&cfg, &log_);
    node_t = tt_register_node(rt);
    return rt;
}

/* Build a chain of NODES under a strong handle, run a full GC (which uses every GC thread),
 * and check the chain. */
static void collect_with_chain(tenure_runtime *rt) {
    const tenure_type *t = node_t;
    tenure_handle *head = tenure_handle_new(rt, TENURE_HANDLE_STRONG, NULL);
    TT_CHECK(head != NULL, "tenure_handle_new");
    for (uint64_t i = 1; i <= NODES; i++) {
        tt_node *n = tt_node_new(rt, t, i);
        n->a = tenure_handle_get(rt, head); /* the newest object: no barrier needed */
        tt_node_seal(n);
        TT_CHECK(tenure_handle_set(rt, head, n) == TENURE_OK, "tenure_handle_set");
    }
    tt_collect(rt, 2, TENURE_COLLECT_COMPACT);
    uint64_t expect = NODES;
    for (const tt_node *n = tenure_handle_get(rt, head); n; n = n->a, expect--)
        TT_CHECK_NODE(rt, t, n, expect);
    TT_CHECK(expect == 0, "the chain lost %" PRIu64 " nodes", expect);
    TT_CHECK(tenure_handle_free(rt, head) == TENURE_OK, "tenure_handle_free");
}

int main(void) {
    cpu_set_t mine, theirs;
    cpus_of(pthread_self(), &mine);
    if (CPU_COUNT(&mine) < 2) {
        printf("team_cpus: skipped (the process may run on %d CPU)\n", CPU_COUNT(&mine));
        return 0;
    }
    int first = -1, second = -1;
    for (int c = 0; c < CPU_SETSIZE && second < 0; c++)
        if (CPU_ISSET(c, &mine))
            *(first < 0 ? &first : &second) = c;

    /* A */
    tenure_runtime *rt = create(false, 0);
    collect_with_chain(rt);
    TT_CHECK(rt->team.created == 1, "%u helpers created for 2 heaps", rt->team.created);
    cpus_of(rt->team.threads[1], &theirs);
    TT_CHECK(subset(&theirs, &mine) && CPU_COUNT(&theirs) == CPU_COUNT(&mine) - 1,
             "A: the helper may run on %d of the collecting thread's %d CPUs (want all but one)", CPU_COUNT(&theirs),
             CPU_COUNT(&mine));
    printf("  A: helper on %d of %d CPUs\n", CPU_COUNT(&theirs), CPU_COUNT(&mine));

    /* B: bound to one CPU, then to another */
    int cpus[2] = {first, second};
    for (int i = 0; i < 2; i++) {
        cpu_set_t one;
        CPU_ZERO(&one);
        CPU_SET(cpus[i], &one);
        TT_CHECK(pthread_setaffinity_np(pthread_self(), sizeof one, &one) == 0, "bind to CPU %d", cpus[i]);
        collect_with_chain(rt);
        cpus_of(rt->team.threads[1], &theirs);
        TT_CHECK(CPU_EQUAL(&theirs, &one), "B: a collector bound to CPU %d left its helper %d CPUs", cpus[i],
                 CPU_COUNT(&theirs));
    }
    TT_CHECK(pthread_setaffinity_np(pthread_self(), sizeof mine, &mine) == 0, "unbind");
    collect_with_chain(rt);
    cpus_of(rt->team.threads[1], &theirs);
    TT_CHECK(CPU_COUNT(&theirs) == CPU_COUNT(&mine) - 1, "A again: the helper may run on %d CPUs", CPU_COUNT(&theirs));
    tenure_destroy(rt);
    printf("  B: helper bound with its collector to CPU %d, then %d\n", first, second);

    /* C */
    rt = create(true, 0);
    collect_with_chain(rt);
    cpus_of(rt->team.threads[1], &theirs);
    TT_CHECK(CPU_EQUAL(&theirs, &mine), "C: GCNoAffinitize, yet the helper may run on %d of %d CPUs",
             CPU_COUNT(&theirs), CPU_COUNT(&mine));
    tenure_destroy(rt);

    /* D: helper 1 takes the mask's second CPU */
    rt = create(false, (uint64_t)1 << first | (uint64_t)1 << second);
    if (second < 64 && first < 64) {
        collect_with_chain(rt);
        cpus_of(rt->team.threads[1], &theirs);
        TT_CHECK(CPU_COUNT(&theirs) == 1 && CPU_ISSET(second, &theirs),
                 "D: GCHeapAffinitizeMask gives helper 1 CPU %d, yet it may run on %d CPUs", second,
                 CPU_COUNT(&theirs));
    }
    tenure_destroy(rt);
    printf("team_cpus: ok (%d CPUs)\n", CPU_COUNT(&mine));
    return 0;
}
