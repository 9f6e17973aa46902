/*
 * gc.h - the functions gc/ offers the other subsystems: the collection's entry point, the
 * scratch reserved before a pause, HeapVerify, the history events, which generations a GC
 * condemns, the mark/pin/plug bitmaps and the GC reasons. Its state lives in gc/mark.h,
 * gc/plan.h, gc/cards.h (the card functions are there too) and gc/collection.h (one GC);
 * gc/gc_internal.h is for gc/ itself. Included by runtime.h after struct tenure_runtime.
 */
#ifndef TENURE_GC_GC_H
#define TENURE_GC_GC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* scratch.c: before the pause, reserve what the GC will need (mark stacks, pin and gap lists,
 * the pause scratch, this thread's trace streams, server GC's helpers) so that the pause
 * allocates nothing. Returns the GC threads that will mark (1, or server GC's team). */
unsigned tn_gc_reserve_scratch(tenure_runtime *rt, int condemned);
/* The pause scratch (at least `size` bytes, or NULL if it could not be reserved: the user
 * does without and the GC counts a shortfall). */
void *tn_gc_pause_scratch(tenure_runtime *rt, size_t size);
void tn_gc_scratch_destroy(tenure_runtime *rt);
/* tenure_create: the collector's empty stacks and lists; the plan's region tables (after the
 * heap is reserved: one entry per unit), given back by tn_gc_region_tables_destroy. */
void tn_gc_scratch_init(tenure_runtime *rt);
bool tn_gc_region_tables_init(tenure_runtime *rt);
void tn_gc_region_tables_destroy(tenure_runtime *rt);
/* Bytes of pause scratch the range reports (report.c) need. */
size_t tn_gc_range_scratch_bytes(void);
tenure_result tn_gc_collect(tenure_runtime *rt, int generation, uint32_t reason, unsigned flags);
/* HeapVerify around a GC (when: "before a GC" or "after a GC"): the number of problems,
 * each reported through the error hook; without a hook they go to stderr and the process
 * aborts. */
size_t tn_gc_verify(tenure_runtime *rt, const char *when);
/* GCGlobalHeapHistory_V4, GCPerHeapHistory_V3 / GCHeapStats_V2 of the GC just done (history.c) */
void tn_gc_emit_history(tenure_runtime *rt);
void tn_gc_emit_heap_stats(tenure_runtime *rt);
/* A collection of rt is in progress (from the stop of the world to its restart: collect.c). */
static inline bool tn_gc_in_progress(const tenure_runtime *rt) { return rt->collection != NULL; }
/* The record of the previous GC (set at its end: collect.c), what the budgets and the free
 * regions kept are sized by (heap/). */
static inline const tn_gc_record *tn_gc_last_record(const tenure_runtime *rt) { return &rt->last; }
static inline bool tn_gen_condemned(int gen, int condemned) {
    return gen <= condemned || (condemned == TN_GEN2 && gen > TN_GEN2);
}

/* ---- bitmaps (bits.c) ---- */
static inline size_t tn_bit_index(const tenure_runtime *rt, const void *p) {
    return ((uintptr_t)p - (uintptr_t)rt->base) >> 3;
}
static inline bool tn_bit_test(const uint64_t *bits, size_t i) { return (bits[i >> 6] >> (i & 63)) & 1; }
/* The same where other GC threads may be setting bits of the word (server GC's marking). */
static inline bool tn_bit_test_relaxed(const uint64_t *bits, size_t i) {
    return (__atomic_load_n(&bits[i >> 6], __ATOMIC_RELAXED) >> (i & 63)) & 1;
}
static inline void tn_bit_set(uint64_t *bits, size_t i) { bits[i >> 6] |= (uint64_t)1 << (i & 63); }
/* First set bit in [from, to) or `to` if none. */
size_t tn_bit_next(const uint64_t *bits, size_t from, size_t to);
void tn_bits_clear(uint64_t *bits, size_t from, size_t to);

/* GC reasons (events spec) */
enum {
    TN_REASON_ALLOC_SMALL = 0,
    TN_REASON_INDUCED = 1,
    TN_REASON_LOW_MEMORY = 2,
    TN_REASON_ALLOC_LARGE = 4,
    TN_REASON_OOS_SOH = 5,
    TN_REASON_OOS_LOH = 6,
    TN_REASON_INDUCED_NOFORCE = 7,
    TN_REASON_STRESS = 8,
    TN_REASON_INDUCED_COMPACTING = 10,
    TN_REASON_INDUCED_AGGRESSIVE = 17
};

#endif
