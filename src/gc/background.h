/*
 * background.h - background GC (gcConcurrent=1, docs/design/collector.md "Background GC"):
 * the state gc/background.c owns (rt->bgc).
 *
 * A background GC (BGC) marks generation 2, the LOH and the POH on its own thread while the
 * mutators run, ends its marking with a short final pause, then sweeps on its own thread. How:
 *  - A GC the collector chose for generation 2 (its budget, a large allocation's budget,
 *    GCStress) becomes, with gcConcurrent=1, a blocking gen1 GC followed by the BGC's initial
 *    pause (suspend reason 1, GCStart Type 1): the roots' old targets are premarked in the
 *    BGC's own bitmap (bits), the barrier's slow path is switched on, the world restarts.
 *  - The BGC thread premarks what those reach, in slices that hold the instance lock (so a
 *    slice, a foreground GC and an allocation slow path never run at once) and leave it
 *    between them. Meanwhile every reference store into an old object sets the byte of its
 *    slot's card in `watch` (the barrier's slow path). Once its stack is empty, the thread
 *    revisits the watched cards itself (up to TN_BGC_REVISIT_PASSES passes), as the .NET
 *    collector revisits written pages, so that the final pause finds few.
 *  - Ephemeral GCs run as usual meanwhile (GCStart Type 2, "foreground"): they never move or
 *    free an old object; what a gen1 GC promotes into gen2 is allocated black (the grey
 *    list); a gen2 GC the collector would choose becomes gen1 or gen0; gen1's budget is at
 *    most TN_BGC_GEN1_LIMIT.
 *  - The final pause (suspend reason 6) marks as a full GC that starts from the BGC's marks
 *    (mark.c, root kind BGC; the bitmaps are swapped, not merged): it rescans what is left on
 *    the stack, the deferred objects and the premarked objects' slots under watched cards,
 *    marks through the premarked objects' references to gen0 and gen1 (under dirty cards,
 *    H5), then from the roots, stopping at premarked objects. Weak handles and finalization
 *    are a full GC's. Then it collects gen0 as a gen0 GC would, and leaves gen1 and older
 *    unswept (H8, runtime.h): their marks stay in `bits` (swapped back), the large heaps'
 *    free lists are emptied, the write watch goes off.
 *  - The BGC thread then sweeps the LOH, the POH, gen2 and gen1 region by region in slices
 *    under the lock; foreground GCs run meanwhile (Type 2) and skip the dead objects not
 *    swept yet (H8); a gen1 GC takes the gen1 regions it condemns out of the sweep. The last
 *    region swept ends the BGC: its record, history events, GCEnd_V1 and GCHeapStats_V2 and
 *    the GC callback, on the BGC thread.
 *
 * Invariants (checked by tn_bgc_check):
 *  B1 A premarked object (its bit set in bits) lies in a gen2, LOH or POH region and was
 *     reachable at some time since the BGC began (or was promoted into gen2 by a foreground
 *     GC since: allocated black; until premarked, its range waits on the grey list, which
 *     the BGC thread empties before its stack). It is on the BGC's stack (not scanned yet),
 *     or on the deferred list (a type with a trace callback: the BGC never runs user callbacks
 *     beside the mutators, unless the type says TENURE_TYPE_CONCURRENT_TRACE), or it was
 *     scanned, each slot read once (atomically) after it was premarked, every old target it
 *     read premarked. A slot written after that read has its card set in watch (or was
 *     revisited after the card was taken, by an exchange, from watch); a slot that holds a
 *     gen0 or gen1 object lies under a dirty card (H5). So the final pause, which rescans the
 *     stack, the deferred list and the premarked objects' slots under watched cards, marks
 *     through their slots under dirty cards, then marks from every root, leaves no reachable
 *     object unmarked (the incremental-update argument: docs/design/collector.md).
 *  B2 While a BGC marks, nothing in a gen2, LOH or POH region is freed or moved, and a region
 *     leaves generation 2 never: only the final pause and the sweep after it free old objects.
 *  B3 The BGC thread reads the heap only in its slices, with the instance lock held.
 *  B4 Outside a BGC (state TN_BGC_IDLE): bits and watch are zero, the stack, the deferred and
 *     the grey lists are empty, the barrier's TN_BARRIER_BGC bit is off. While it sweeps,
 *     bits are set only below the unswept_end of regions (they are rt->unswept_marks), watch
 *     is zero, the barrier bit is off.
 *  B5 While a BGC sweeps, nothing is allocated below an unswept_end (H8): the LOH and POH free
 *     lists hold swept space only, survivors a GC packs into a gen1 or gen2 region go above
 *     its used end, and a region is released only by the sweep (or, condemned by a gen1 GC
 *     or a blocking full GC, by that GC, which first takes it out of the sweep).
 */
#ifndef TENURE_GC_BACKGROUND_H
#define TENURE_GC_BACKGROUND_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "base/base.h"

enum { TN_BGC_IDLE = 0, TN_BGC_MARKING = 1, TN_BGC_SWEEPING = 2 };
/* head.barrier_slow bits: HeapVerify's checked barrier, the BGC's write watch (tenure.h's) */
enum { TN_BARRIER_CHECKED = TENURE__BARRIER_CHECKED, TN_BARRIER_BGC = TENURE__BARRIER_WATCH };

struct tn_bgc_state {
    int state;        /* TN_BGC_* */
    uint64_t index;   /* the BGC's GC number (its GCStart's Count) */
    uint32_t reason;  /* why it started (its GCStart's Reason) */
    uint64_t *bits;   /* premarked objects: one bit per 8 bytes of the range, as mark_bits */
    uint8_t *watch;   /* one byte per card: a slot under it was written while the BGC marked */
    tn_vec stack;     /* premarked objects not scanned yet */
    tn_vec deferred;  /* premarked objects of types with a trace callback (scanned at the end) */
    tn_vec grey;      /* tn_bgc_range: objects promoted into gen2 while it marks, to premark */
    bool grey_lost;   /* a promoted range found no room: the final pause rescans every premarked object */
    size_t premarked; /* bytes premarked */
    uint64_t initial_pause_ns, final_pause_ns;
    uint64_t slices; /* slices the BGC thread ran (marking and sweeping) */
    /* revisits of watched cards beside the mutators (background.c) */
    unsigned revisit_passes;  /* done (TN_BGC_REVISIT_PASSES: no more) */
    size_t revisit_cursor;    /* the next card of the pass in progress */
    size_t revisit_found;     /* watched cards the pass found so far */
    uint64_t rescanned_cards; /* watched cards the final pauses rescanned (all BGCs) */
    tn_gc_record record;      /* the BGC's record from its final pause, finished when the sweep ends */
    /* the BGC thread: started at the first BGC, waits on cv (with the instance lock) between BGCs */
    pthread_t thread;
    bool thread_started;
    bool stop;             /* the instance is being destroyed */
    bool announce_thread;  /* started for this BGC: GCCreateConcurrentThread_V1 after its GCStart */
    bool forked_no_thread; /* a forked child that cannot start threads: no BGC there */
    bool finish_pending;   /* a forked child: the BGC in progress ends at the next GC */
    bool cv_ready;
    pthread_cond_t cv;
};

/* What the rest of the collector calls (background.c) */
struct tenure_runtime;
bool tn_bgc_marking(const struct tenure_runtime *rt);
/* Marking or sweeping: a GC now is a foreground one (Type 2). */
bool tn_bgc_in_progress(const struct tenure_runtime *rt);
/* Before the initial pause (lock held, world running): the bitmap, the stack, the thread.
 * False if a BGC cannot start (one is running, out of memory, no thread). */
bool tn_bgc_prepare(struct tenure_runtime *rt);
/* In the initial pause: premark the roots' old targets, turn the write watch on. */
void tn_bgc_begin(struct tenure_runtime *rt, uint64_t index, uint32_t reason);
/* While a BGC marks, a foreground GC promoted the objects of r in [from, to) into gen2: they
 * are premarked (allocated black) and scanned by the BGC thread (B1). In the pause, into room
 * tn_bgc_reserve made before it. */
typedef struct tn_bgc_range {
    char *from, *to;
} tn_bgc_range;
void tn_bgc_promoted(struct tenure_runtime *rt, char *from, char *to);
/* Before a GC's pause (scratch.c): room for the ranges a GC may promote. Without it (out of
 * memory), a range that finds no room is not premarked, and the final pause rescans every
 * premarked object instead (grey_lost). */
void tn_bgc_reserve(struct tenure_runtime *rt);
/* An object the program allocated in the LOH or POH (lock held): while a BGC marks, it is
 * allocated black (premarked, not scanned: its slots are NULL, and the write watch catches
 * every store into them), so the final pause need not trace it. */
void tn_bgc_allocated_large(struct tenure_runtime *rt, void *obj);
/* The barrier's slow path while a BGC marks: slot was written. */
void tn_bgc_watch(struct tenure_runtime *rt, void *slot);
/* In the final pause (mark.c): premarks become marks (the bitmaps swapped); then what must
 * be rescanned. */
size_t tn_bgc_take_premarks(struct tenure_runtime *rt);
void tn_bgc_visit_rescans(struct tenure_runtime *rt, void (*fn)(void **slot, void *ctx), void *ctx);
/* In the final pause, marking done: gen1 and older become unswept (H8) and the pause goes on
 * as a gen0 GC (collect.c). Then, before its report: the bitmaps swapped back, the write
 * watch off, the free lists of the large heaps emptied, the state SWEEPING. */
struct tn_collection;
void tn_bgc_final_marked(struct tenure_runtime *rt, struct tn_collection *c);
void tn_bgc_final_swept_young(struct tenure_runtime *rt, struct tn_collection *c);
/* A GC condemned region r while it was unswept (H8): r leaves the sweep (promote.c). */
void tn_bgc_forget_unswept(struct tenure_runtime *rt, tn_region *r);
/* After the final pause's restart: the BGC thread starts sweeping. */
void tn_bgc_sweep_start(struct tenure_runtime *rt, uint64_t final_pause_ns);
/* The BGC has marked what it could (or a forked child's BGC lost its thread): the next GC
 * is its final pause. */
bool tn_bgc_marked(const struct tenure_runtime *rt);
/* The BGC's marking ends now, on the calling thread (lock held): its final pause. */
void tn_bgc_final_pause(struct tenure_runtime *rt);
/* End the BGC in progress now, on the calling thread (lock held): its marking, its final
 * pause, its sweep, its report. */
void tn_bgc_finish(struct tenure_runtime *rt);
void tn_bgc_destroy(struct tenure_runtime *rt);
/* B1 (in part), B4, H8's placement: TENURE_DEBUG_ASSERTS, with the world stopped. */
void tn_bgc_check(const struct tenure_runtime *rt);
void tn_bgc_forked_child(struct tenure_runtime *rt);

#endif
