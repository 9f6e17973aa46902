/*
 * heap.h - the state heap/ owns (rt->heap): committed memory, the generations' region lists
 * and the free regions, the large heaps' free lists, the budgets and what counts against
 * them, the allocation ticks, the registered types, and the gen0 gaps the allocator cuts
 * contexts from. Included by runtime.h (tn_region, tn_free_list, tn_type come from there),
 * which embeds it in struct tenure_runtime. The reserved range and its side tables (base,
 * regions, unit tables, bitmaps, cards, crossing) stay in struct tenure_runtime: every
 * subsystem and the inline fast paths read them, and trace/ reads the unit tables. The GC
 * (gc/) rewrites the region lists, free lists, committed bytes and gen0 gaps inside a pause,
 * through the functions below (tn_heap_regions, tn_heap_free_list, tn_region_discarded,
 * tn_heap_set_gen0_gaps): no other subsystem names these fields (scripts/depgraph.py).
 * After the state: heap/'s functions (regions.c, alloc.c). The inline address helpers that
 * read struct tenure_runtime (tn_in_range, tn_region_of, tn_region_walk_end, ...) follow that
 * struct in runtime.h.
 */
#ifndef TENURE_HEAP_HEAP_H
#define TENURE_HEAP_HEAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TN_MAX_HEAPS 64 /* allocation heaps (server GC): as many as GC threads (gc/team.h) */

/* One allocation heap's budgets of the older generations, as each .NET server GC heap has its
 * own, and what entered each generation on the heap since that generation was last collected
 * (heap/budgets.c). */
typedef struct tn_older_budgets {
    size_t gen1_budget, gen2_budget, loh_budget;
    size_t gen1_promoted_since, gen2_promoted_since, loh_allocated;
} tn_older_budgets;

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
    size_t gen0_budget, gen0_min_budget, gen0_max_budget; /* heap/budgets.c */
    size_t gen1_limit; /* at most this much gen1 budget in all (SIZE_MAX; less while a background GC runs) */
    tn_older_budgets older[TN_MAX_HEAPS]; /* per allocation heap (heap/balance.c) */
    size_t whole_gen2_budget;             /* the gen2 budget of every heap's figures together, with its least once */
    double young_cost[2]; /* GCPauseGoalMs: ns of pause per byte condemned by recent gen0 / gen1 GCs (0: none yet) */
    /* allocation heaps (server GC, heap/balance.c): nheaps budgets of
     * gen0_budget bytes each; heap_allocated[h] is what the threads of heap h allocated since
     * the last GC (their sum is what gen0 took); next_heap deals heaps to threads in turn */
    unsigned nheaps, next_heap;
    size_t heap_allocated[TN_MAX_HEAPS];
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

/* ---- functions (runtime.h includes this header before struct tenure_runtime) ---- */

/* regions.c */
bool tn_heap_init(tenure_runtime *rt);
/* Consistency checks (TN_ASSERT_INTERNAL / TN_ASSERT_EXPENSIVE, base/assert.h): one region;
 * every region of every generation and the free list (whole heap). */
void tn_region_check(const tenure_runtime *rt, const tn_region *r);
void tn_regions_check(const tenure_runtime *rt);
void tn_heap_destroy(tenure_runtime *rt);
/* Take a region of `units` units for generation gen, owned by allocation heap `heap`; NULL if
 * out of memory. */
tn_region *tn_region_acquire(tenure_runtime *rt, uint32_t units, int gen, unsigned heap);
void tn_region_release(tenure_runtime *rt, tn_region *r);
void tn_region_set_gen(tenure_runtime *rt, tn_region *r, int gen);
void tn_region_list_remove(tenure_runtime *rt, tn_region *r);
void tn_region_list_add(tenure_runtime *rt, tn_region *r);
/* The regions of generation gen, a list through r->next (a GC walks and rewrites it). */
tn_region *tn_heap_regions(const tenure_runtime *rt, int gen);
/* Bytes of regions committed (what GCHeapHardLimit bounds). */
size_t tn_heap_committed(const tenure_runtime *rt);
/* `bytes` of r's pages went back to the OS (gc/: the space around pinned plugs): they stop
 * counting as committed until tn_region_recount_discarded, before the GC writes there. */
void tn_region_discarded(tenure_runtime *rt, tn_region *r, size_t bytes);
void tn_region_recount_discarded(tenure_runtime *rt, tn_region *r);
/* Decommit free regions that have stayed free long enough. */
void tn_regions_trim(tenure_runtime *rt, bool all);
/* Call fn on every object of the regions (free objects left out), by address; fn returns true
 * to stop (then so does this). With rt->threads.lock held and every allocation context ended.
 * The heap walk and the heap dump call tn_visit_all_objects (roots/frozen.c): frozen segments
 * first, then this. */
typedef bool (*tn_object_fn)(char *obj, tn_type *t, size_t size, int gen, void *ctx);
bool tn_heap_visit_objects(tenure_runtime *rt, tn_object_fn fn, void *ctx);
/* Make [p, p+size) a free object (size >= 8). */
void tn_make_free(tenure_runtime *rt, void *p, size_t size);
/* GCPoisonFreed (a no-op when it is off): fill [p, p+size), space no object occupies any
 * more, with TN_POISON_BYTE / the same for the free object [p, p+size) past its header and
 * size words (the heap stays walkable). A word of poison is neither a type (a header read
 * through a stale pointer fails every check) nor a canonical address (a reference read from
 * it faults at its first use). Regions left empty are decommitted at once (PROT_NONE). */
#define TN_POISON_BYTE 0xcc
#define TN_POISON_WORD ((uintptr_t)0xccccccccccccccccull)
void tn_heap_poison(tenure_runtime *rt, void *p, size_t size);
void tn_heap_poison_free(tenure_runtime *rt, void *p, size_t size);


/* alloc.c */
/* Consistency check of m's allocation context (inside its own region; none without one). */
void tn_alloc_context_check(const tenure_runtime *rt, const tn_mutator *m);
void tn_free_list_clear(tn_free_list *fl);
/* The free list of the LOH or the POH (gen); NULL for the other generations. */
tn_free_list *tn_heap_free_list(tenure_runtime *rt, int gen);
void tn_free_list_add(tenure_runtime *rt, tn_free_list *fl, void *p, size_t size);
void tn_budgets_update(tenure_runtime *rt, const tn_gc_record *g);
void tn_budgets_update_background(tenure_runtime *rt, const tn_gc_record *g);
/* The budget of generation gen (TN_GEN0..TN_LOH; 0 for the POH, which has none): the bytes
 * allocated (gen0, LOH) or promoted into it (gen1, gen2) that trigger its next GC; every
 * allocation heap's together. */
size_t tn_heap_budget(const tenure_runtime *rt, int gen);
/* The same, of allocation heap `heap` alone: a GC comes when one heap has spent one of its own. */
size_t tn_heap_budget_of(const tenure_runtime *rt, int gen, unsigned heap);
/* The gen2 budget the instance would have as one heap (its least counted once, not per heap):
 * for what belongs to no heap, such as memory pressure (lifetime/lifetime.c). */
size_t tn_heap_whole_gen2_budget(const tenure_runtime *rt);
/* The allocation heaps (1 under workstation GC; server GC: heap/balance.c). */
unsigned tn_heap_count(const tenure_runtime *rt);
/* Bytes allocated in gen0 since the last GC, the calling thread's context counted to the byte. */
size_t tn_heap_gen0_allocated(tenure_runtime *rt);
/* Invariant A1 (alloc.c "allocation heaps"). */
void tn_alloc_heaps_check(tenure_runtime *rt);
/* The gaps of gen0 that allocation contexts may be cut from (gc/promote.c builds the list at
 * the end of a GC; NULL: none, at the start of the next). */
void tn_heap_set_gen0_gaps(tenure_runtime *rt, char *gaps);
/* The gen1 budgets the GCs go by are at most `limit` in all (each heap's at most its share;
 * SIZE_MAX: no limit). */
void tn_heap_limit_gen1(tenure_runtime *rt, size_t limit);
/* The budgets of an empty heap (tenure_create). */
void tn_budgets_init(tenure_runtime *rt);
/* Count the context's bytes, end it, hand its region back (a GC, or the thread detaches). */
void tn_alloc_reset_context(tenure_runtime *rt, tn_mutator *m);
/* With the world stopped: every thread's context ends, so every region is walkable. */
void tn_alloc_end_contexts(tenure_runtime *rt);
/* Bytes the calling thread has allocated in its context that are not counted yet. */
size_t tn_alloc_uncounted(tenure_runtime *rt);
/* The young generation the budgets ask to collect (0 or 1): what a gen2 GC becomes while a
 * background GC marks (gc/collect.c). */
int tn_heap_young_budget_generation(const tenure_runtime *rt);
/* A profiler now wants every allocation (or no longer): every context's limit is republished. */
void tn_alloc_republish_limits(tenure_runtime *rt);
/* m's inline allocation limit: closed (the slow path every time) under GCStress, for a
 * profiler of allocations, or while a callback that may not allocate runs on m's thread. */
void tn_alloc_publish_limit(tenure_runtime *rt, tn_mutator *m);
/* Around a callback that may not allocate (tn_cb_enter/leave, through rt->services.calls):
 * close the calling thread's context (its mutator, or NULL if it has none) / reopen it when
 * the last such callback on the thread returns. */
tn_mutator *tn_alloc_close_for_callback(tenure_runtime *rt);
void tn_alloc_reopen_after_callback(tn_mutator *m);
/* Sampling turned on (interval changed): every thread's countdown starts now. World stopped. */
void tn_alloc_restart_sampling(tenure_runtime *rt);

#endif
