/* heap_internal.h - what the heap's allocation files share, private to heap/: alloc.c (the
 * slow path), budgets.c (budgets and triggers), balance.c (allocation heaps). */
#ifndef TENURE_HEAP_INTERNAL_H
#define TENURE_HEAP_INTERNAL_H

#include <stdbool.h>

typedef struct tenure_runtime tenure_runtime;
typedef struct tn_mutator tn_mutator;

/* alloc.c: count m's context so far against its thread, the instance and its heap. */
void tn_alloc_account_context(tenure_runtime *rt, tn_mutator *m);

/* balance.c: deal m an allocation heap (its first refill or large allocation); whether m's
 * allocation must wait for a GC (its heap spent its gen0 budget and no other heap has enough
 * left: else m moves there). */
void tn_heap_deal(tenure_runtime *rt, tn_mutator *m);
bool tn_heap_gen0_spent(tenure_runtime *rt, tn_mutator *m);

/* budgets.c: collect the oldest generation whose budget one heap has spent; GCStress's count
 * of allocations (a GC every N). */
void tn_heap_collect_for_budget(tenure_runtime *rt);
void tn_heap_stress_tick(tenure_runtime *rt);

#endif
