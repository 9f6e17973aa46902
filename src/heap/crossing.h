/*
 * crossing.h - the crossing table (heap structure, H6 in runtime.h): for each 512-byte granule
 * of a gen1/gen2/LOH/POH region, the object that covers its first byte (or the first object
 * after it), as words back from the granule's start. It finds the start of the object holding
 * any address in an old region: the card scan (gc/cards.c), conservative roots, the public
 * object queries and the profilers use it. Allocation in old regions (heap/alloc.c) and every
 * GC that changes an old region's layout (gc/) keep it.
 */
#ifndef TENURE_HEAP_CROSSING_H
#define TENURE_HEAP_CROSSING_H

#include "runtime.h"

/* One entry per 512-byte granule (two cards): half the entries to write for every object
 * placed in an old region, for one more object walked per card scanned. */
#define TN_CROSSING_SHIFT 9
#define TN_CROSSING_GRANULE ((size_t)1 << TN_CROSSING_SHIFT)

/* Record in the crossing table that the object [o, o + size) covers the start of every
 * granule that begins inside it (H6). */
static inline void tn_crossing_set(tenure_runtime *rt, char *o, size_t size) {
    uintptr_t off = (uintptr_t)o - (uintptr_t)rt->base;
    uintptr_t gs = (off + TN_CROSSING_GRANULE - 1) & ~(uintptr_t)(TN_CROSSING_GRANULE - 1);
    for (; gs < off + size; gs += TN_CROSSING_GRANULE)
        rt->crossing[gs >> TN_CROSSING_SHIFT] = (uint32_t)((gs - off) / 8);
}

/* The object the crossing table names for the granule holding p. */
static inline char *tn_crossing_object(const tenure_runtime *rt, const void *p) {
    size_t g = ((uintptr_t)p - (uintptr_t)rt->base) >> TN_CROSSING_SHIFT;
    return rt->base + (g << TN_CROSSING_SHIFT) - (size_t)rt->crossing[g] * 8;
}

/* The object that covers address p in a gen1+/LOH/POH region r (p below its walkable end). */
char *tn_crossing_object_start(const tenure_runtime *rt, const tn_region *r, const char *p);
/* Record the crossing-table entries of an object placed in an old region (the allocator's
 * out-of-line entry to tn_crossing_set). */
void tn_crossing_note_object(tenure_runtime *rt, char *o, size_t size);

#endif
