/*
 * collection.h - the state of one collection (gc/collect.c creates it on its stack for one GC
 * and passes it to every phase). It is not the record of the previous GC: that is rt->last,
 * which the driver sets from this collection's record once the GC is done (budgets,
 * tenure_stats, the history events and tenure_get_last_gc_info read rt->last). Outside gc/,
 * code that runs inside a GC and needs the current one's parameters (the conservative stack
 * scan, the profilers' gc_started) reads rt->collection, set for the GC's duration.
 */
#ifndef TENURE_GC_COLLECTION_H
#define TENURE_GC_COLLECTION_H

#include "runtime.h"

/* A region of the next (uncondemned) generation that takes a heap's survivors (plan.c). */
typedef struct tn_plan_tail {
    tn_region *r;
    char *from; /* its used end before this GC */
} tn_plan_tail;

/* The plan of one condemned generation (plan.c), read by the phases after it. */
typedef struct tn_gen_plan {
    tn_region **regions; /* condemned regions of the generation, by heap, then by address */
    size_t n;
    tn_region **dests; /* where plugs go: per heap, its tail (if any), then its regions */
    size_t nd;
    tn_plan_tail tails[TN_MAX_HEAPS]; /* at most one per heap, in heap order */
    unsigned ntails;
    bool compact;
    bool rebuilt; /* compacted, and relocation rebuilt its cards and crossing table */
    size_t live, used_total;
    size_t nkept, kept_live; /* compacted: its kept regions (plan.c), swept in place, and their live bytes */
} tn_gen_plan;

/* Phases timed in the record (phase_us): tenure's own, in the driver's order. The .NET runtime's
 * phases, which GCGlobalHeapHistory_V4 carries, are mapped from them in gc/history.c. */
enum { TN_PHASE_MARK, TN_PHASE_PLAN, TN_PHASE_RELOCATE, TN_PHASE_COMPACT_OR_SWEEP, TN_PHASE_PROMOTE, TN_PHASES };
/* The mark phase's steps timed in the record (mark_us), in the order (and with the meaning) of
 * the runtime's first five etw_gc_time_info indices (gcpriv.h): sized-ref handles' graphs, the
 * other roots with their transitive closure, short weak handles cleared, finalization scanned,
 * long weak handles cleared. */
enum { TN_MARK_SIZEDREF, TN_MARK_ROOTS, TN_MARK_SHORT_WEAK, TN_MARK_FINALIZATION, TN_MARK_LONG_WEAK, TN_MARK_STEPS };

/* One item of the place part (plan.c): a compacted generation's regions of one heap, placed
 * by one GC thread with a cursor of its own. Its pinned plugs are pins[pin_first, pin_first +
 * pins) (the plan part counted them); its gaps go to the same slice of the gap list (a gap lies
 * in front of a pinned plug: a heap has no more gaps than pins), `gaps` of them, joined up by
 * thread 0 afterwards. */
typedef struct tn_place_item {
    int gen;
    size_t from, to; /* plans[gen].regions[from, to) */
    size_t pin_first, pins, gaps;
} tn_place_item;
#define TN_PLACE_ITEMS (TN_NGEN * TN_MAX_HEAPS)

typedef struct tn_collection {
    int condemned;       /* 0, 1 or 2: every generation up to it (and LOH, POH with 2) */
    int requested;       /* the generation asked for (-1: the oldest) */
    uint32_t reason;     /* TN_REASON_* */
    unsigned flags;      /* TENURE_COLLECT_* */
    unsigned gc_threads; /* GC threads marking (1, or server GC's team: gc/team.h) */
    uint64_t started_ns, phase_started_ns;
    bool any_compact;           /* some generation is compacted (relocation has work) */
    bool any_sweep;             /* some condemned generation is swept */
    bool parallel_after_mark;   /* the phases after marking run on the team (gc/parts.c) */
    bool scratch_short;         /* some scratch reserved before the pause was too small (scratch.c) */
    bool bgc_final;             /* a background GC's final pause (gc/background.h): marks from the premarks,
                                   then collects as a gen1 GC (condemned becomes 1) */
    size_t bgc_premarked;       /* its bytes premarked by the background GC (mark.c, root kind BGC) */
    uint32_t gc_type;           /* GCStart's Type: TN_GC_TYPE_* */
    uint32_t suspend_reason;    /* TN_SUSPEND_FOR_GC, or _FOR_GC_PREP for a BGC's final pause */
    uint64_t queued_before;     /* finalizers queued before this GC (tn_finalize_queued_total) */
    tn_gen_plan plans[TN_NGEN]; /* per generation, for the condemned ones (plan.c) */
    /* the place part's items (none: placed on thread 0 alone; plan.c) */
    tn_place_item place[TN_PLACE_ITEMS];
    size_t nplace;
    tn_gc_record record; /* built by the phases, copied to rt->last at the end */
} tn_collection;

#endif
