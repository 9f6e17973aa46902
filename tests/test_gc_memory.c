/*
 * gc_memory: no allocation inside a GC pause. Every internal allocation of the library goes
 * through api/mem.c, which (in checked builds) aborts on one made inside a pause and lets a
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
#include "runtime.h" /* (src/)  tn_mem_fault, tn_mem_pause_begin: the test hooks of api/mem.c */
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

/* The rebuild of the identity-hash table after a GC used to calloc a fresh table and, when
 * that failed, kept the old one: moved objects' entries kept their old addresses (the object
 * got a new hash when asked again) and dead objects' entries stayed. */
static void test_identity_hash_without_memory(void) {
    tenure_runtime *rt = tt_create(NULL, &log_);
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
    for (int i = 0; i < N; i++)
        tenure_handle_free(rt, keep[i]);
    TT_CHECK(tenure_verify_heap(rt) == TENURE_OK);
    tenure_destroy(rt);
    printf("  identity hash: %zu of %d objects moved in a GC without memory, every hash kept\n", moved, N);
}

int main(void) {
    double t0 = tt_now();
    test_identity_hash_without_memory();
    return tt_finish("gc_memory", t0);
}
