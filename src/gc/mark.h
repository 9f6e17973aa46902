/*
 * mark.h - the state the marker owns (rt->mark, gc/mark.c): the mark stack (reserved before
 * the pause by gc/scratch.c, never grown in it), its overflow range, and what this GC's marking
 * counted. Included by runtime.h (tn_vec comes from there), which embeds it in struct
 * tenure_runtime: a heap's own marking state, apart from the per-collection parameters
 * (gc/collection.h). pinned_objects is read by the stats (report.c). After the state: the
 * mark stack's consistency check (gc/gc.h has gc/'s other functions).
 */
#ifndef TENURE_GC_MARK_H
#define TENURE_GC_MARK_H

#include <stdbool.h>
#include <stddef.h>

struct tn_mark_state {
    tn_vec mark_stack; /* void * */
    bool mark_overflow;
    char *overflow_lo, *overflow_hi;
    size_t marked_bytes;
    size_t overflow_marked; /* bytes marked while recovering from mark stack overflow */
    bool overflow_seen;
    size_t pinned_objects;
};

/* ---- functions ---- */

/* Consistency check of the mark stack (count within capacity, entries in the heap range). */
void tn_mark_stack_check(const tenure_runtime *rt);

#endif
