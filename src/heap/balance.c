/* balance.c - allocation heaps: which server GC heap a thread allocates on, and when it
 * moves to another (.NET's balance_heaps). Workstation GC has one heap. */
#include "runtime.h"
#include "heap/heap_internal.h"

/* A thread's first refill or large allocation: it gets the next allocation heap in turn
 * ("allocation heaps"). */
void tn_heap_deal(tenure_runtime *rt, tn_mutator *m) {
    m->alloc_heap = rt->heap.next_heap;
    m->alloc_heap_dealt = true;
    rt->heap.next_heap = (rt->heap.next_heap + 1) % rt->heap.nheaps;
}

/* Under server GC gen0's budget is per heap, as in the .NET collector: nheaps (GCHeapCount, or
 * one per CPU) heaps of gen0_budget bytes each, so that N threads allocating at once run N
 * budgets between GCs rather than sharing one (each GC's cost is mostly what the threads have
 * half-built when it comes: the same per GC, whatever the budget). Each thread is dealt a heap
 * at its first refill, in turn (next_heap), and counts what it allocates against that heap
 * (heap_allocated). A thread whose heap has spent its budget moves to the heap with the most
 * left if that is at least TN_BALANCE_LEFT of a budget (.NET's balance_heaps); when none has
 * that much, it collects. A GC starts every heap's budget again (tn_budgets_update).
 * Workstation GC has one heap: the thread's own spending is the instance's.
 *
 * Each heap has its own regions (tn_region.heap): a thread takes gen0 regions, gaps and new
 * large regions of its heap only, and leaves its region at its next refill when it has moved to
 * another heap; a GC keeps each heap's survivors on its heap (gc/plan.c). The large heaps' free
 * lists are shared: a large object goes to the first free chunk that fits, whatever its heap.
 *
 * Invariant A1 (tn_alloc_heaps_check): nheaps is in [1, TN_MAX_HEAPS], every thread's heap and
 * every region's heap are below it, and no heap past nheaps has counted anything. */

#define TN_BALANCE_LEFT 8 /* a thread moves to a heap with at least 1/8 of its budget left */

/* The heap with the least allocated since the last GC. */
static unsigned least_spent_heap(const tenure_runtime *rt) {
    unsigned best = 0;
    for (unsigned h = 1; h < rt->heap.nheaps; h++)
        if (rt->heap.heap_allocated[h] < rt->heap.heap_allocated[best])
            best = h;
    return best;
}

/* Whether m's allocation must wait for a GC: its heap spent its gen0 budget and no other heap
 * has enough left to move to (then m moves there: its context's bytes so far stay counted
 * against the heap it leaves). */
bool tn_heap_gen0_spent(tenure_runtime *rt, tn_mutator *m) {
    size_t pending = (size_t)(m->pub.alloc_ptr - m->ctx_start);
    if (rt->heap.heap_allocated[m->alloc_heap] + pending < rt->heap.gen0_budget)
        return false;
    unsigned best = least_spent_heap(rt);
    if (best == m->alloc_heap ||
        rt->heap.heap_allocated[best] + rt->heap.gen0_budget / TN_BALANCE_LEFT >= rt->heap.gen0_budget)
        return true;
    tn_alloc_account_context(rt, m);
    m->alloc_heap = best;
    return false;
}

void tn_alloc_heaps_check(tenure_runtime *rt) {
    TN_ASSERT_INTERNAL(rt->heap.nheaps >= 1 && rt->heap.nheaps <= TN_MAX_HEAPS);
    for (unsigned h = rt->heap.nheaps; h < TN_MAX_HEAPS; h++) {
        const tn_older_budgets *o = &rt->heap.older[h];
        TN_ASSERT_INTERNAL(rt->heap.heap_allocated[h] == 0);
        TN_ASSERT_INTERNAL(o->gen1_promoted_since == 0 && o->gen2_promoted_since == 0 && o->loh_allocated == 0);
    }
    for (tn_mutator *m = tn_mutators(rt); m; m = m->next)
        TN_ASSERT_INTERNAL(m->alloc_heap < rt->heap.nheaps);
    for (int g = 0; g < TN_NGEN; g++)
        for (const tn_region *r = rt->heap.gens[g]; r; r = r->next)
            TN_ASSERT_INTERNAL(r->heap < rt->heap.nheaps);
}

unsigned tn_heap_count(const tenure_runtime *rt) { return rt->heap.nheaps; }
