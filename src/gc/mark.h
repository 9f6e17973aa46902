/*
 * mark.h - the state the marker owns (rt->mark, gc/mark.c): each GC thread's mark stack
 * (reserved before the pause by gc/scratch.c, never grown in it), its overflow range and what
 * it counted, and server GC's pool of shared mark work. Included by runtime.h (tn_vec comes from there), which embeds it in struct
 * tenure_runtime: a heap's own marking state, apart from the per-collection parameters
 * (gc/collection.h). pinned_objects is read by the stats (report.c). After the state: the
 * mark stacks' consistency check (gc/gc.h has gc/'s other functions).
 */
#ifndef TENURE_GC_MARK_H
#define TENURE_GC_MARK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <pthread.h>
#include "gc/team.h"

#define TN_LIVE_SLOTS 64 /* regions a marker counts for at once (a power of two) */

/* One GC thread's marking (server GC has one per GC thread; workstation GC uses w[0]). */
typedef struct tn_mark_worker {
    tn_vec stack; /* void *: reserved before the pause (scratch.c), never grown in it */
    bool overflow;
    char *overflow_lo, *overflow_hi;
    size_t marked_bytes; /* M2: every object counted once, by the thread that scans it */
    size_t stolen_bytes; /* of those, marked from work taken from the pool (server GC) */
    size_t older_bytes;  /* of those, a helper's from its part of the card scan (server GC) */
    size_t overflows;    /* times this thread's stack overflowed */
    /* Server GC: bytes counted for a region but not yet added to its live_bytes, per region in
     * a small direct-mapped table (slot: the region's first unit mod TN_LIVE_SLOTS); a region's
     * bytes are added when another region takes its slot, and all at the end of marking
     * (mark.c flush_live). */
    struct tn_region *live_r[TN_LIVE_SLOTS];
    size_t live_pending[TN_LIVE_SLOTS];
} tn_mark_worker;

/* Server GC: the pool through which GC threads share mark work (mark.c, "Parallel marking"):
 * packets of TN_MARK_PACKET stack entries, reserved before the pause. */
#define TN_MARK_PACKET 256
typedef struct tn_mark_pool {
    pthread_mutex_t mx;
    pthread_cond_t cv;              /* idle threads wait here for a packet or the end */
    uintptr_t *entries;             /* packets * TN_MARK_PACKET */
    uint32_t *lens;                 /* per packet: entries in it */
    uint32_t *free_ids;             /* packets free to fill */
    uint32_t *full_ids;             /* packets waiting for a thread */
    unsigned packets, nfree, nfull; /* nfull: written under mx, read without it by spinning threads */
    size_t packet_max;              /* entries a packet takes: TN_MARK_PACKET or less (no more than a stack holds) */
    unsigned threads, idle;         /* GC threads marking, and those waiting for work */
    unsigned sleepers;              /* of those, the ones asleep on cv (the others spin) */
    int hungry;                     /* some thread waits and no packet is full (read without mx) */
    bool done;  /* every thread was idle at once: the parallel part is over (like nfull, read by spinners) */
    bool ready; /* mx and cv exist */
} tn_mark_pool;

struct tn_mark_state {
    tn_mark_worker w[TN_MAX_GC_THREADS]; /* w[0]: the collecting thread's */
    tn_mark_pool pool;
    size_t overflow_marked; /* bytes marked while recovering from mark stack overflow */
    bool overflow_seen;
    size_t pinned_objects;
    struct tn_marker *lead; /* thread 0's marker during the mark phase (mark.c) */
};

/* ---- functions ---- */

/* Consistency check of the mark stacks (count within capacity, entries in the heap range). */
void tn_mark_stack_check(const tenure_runtime *rt);
/* tenure_destroy: the pool's lock and packets (scratch.c). */
void tn_mark_pool_destroy(tenure_runtime *rt);
/* Before the pause (scratch.c): packets for `threads` GC threads; false if they could not be
 * had (the GC then marks on one thread). */
bool tn_mark_pool_reserve(tenure_runtime *rt, unsigned threads);

#endif
