/*
 * heap.h - the state heap/ owns (rt->heap): committed memory, the generations' region lists
 * and the free regions, the large heaps' free lists, the budgets and what counts against
 * them, the allocation ticks, the registered types, and the gen0 gaps the allocator cuts
 * contexts from. Included by runtime.h (tn_region, tn_free_list, tn_type come from there),
 * which embeds it in struct tenure_runtime. The reserved range and its side tables (base,
 * regions, unit tables, bitmaps, cards, crossing) stay in struct tenure_runtime: every
 * subsystem and the inline fast paths read them, and trace/ reads the unit tables. The GC
 * (gc/) rewrites the region lists, free lists, committed bytes and gen0 gaps inside a pause.
 */
#ifndef TENURE_HEAP_HEAP_H
#define TENURE_HEAP_HEAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct tn_heap_state {
    /* committed memory (regions.c) */
    size_t committed;         /* bytes of regions committed */
    size_t committed_peak;    /* the most committed so far (gen0 may grow into it: alloc.c) */
    uint64_t commit_requests; /* for GCFaultCommit */
    /* generations: region lists, the free regions, the large heaps' free lists */
    tn_region *gens[TN_NGEN];
    tn_region *free_regions;
    tn_free_list loh_free, poh_free;
    /* budgets and what was allocated or promoted against them (alloc.c) */
    size_t gen0_budget, gen0_min_budget, gen0_max_budget; /* heap/alloc.c "budgets and triggers" */
    size_t gen1_budget, gen2_budget, loh_budget;
    size_t gen0_allocated, gen1_promoted_since, gen2_promoted_since, loh_allocated;
    uint64_t tick_bytes[3];    /* bytes per allocation kind since the last allocation tick */
    bool tick_pending;         /* the next small object crossed the 100 KiB tick threshold */
    uint32_t stress_countdown; /* GCStress: allocations until the next forced GC (alloc.c) */
    /* types (types.c) */
    tn_type *types;
    size_t type_count, type_capacity;
    tn_type *free_type;   /* free objects: size in word 1 */
    tn_type *filler_type; /* 8-byte free object */
    char *gen0_gaps;      /* free objects of gen0 regions (between pinned plugs) of at least
                            TN_GAP_MIN bytes, linked through their third word; built at the end
                            of a GC, emptied at the start of the next; allocation contexts are
                            cut from them (heap/alloc.c) */
};

#endif
