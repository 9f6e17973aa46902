/*
 * plan.h - the state the plan and the phases after it own (rt->plan, gc/plan.c and the phase
 * files): the pin and gap lists and the per-generation region arrays, reserved before the
 * pause or at creation (gc/scratch.c, api/runtime.c) so that a GC allocates nothing, and the
 * pause scratch (range reports, the profilers' root batch, the heap dump). Included by
 * runtime.h (tn_vec, tn_region, TN_NGEN come from there), which embeds it in struct
 * tenure_runtime.
 */
#ifndef TENURE_GC_PLAN_H
#define TENURE_GC_PLAN_H

#include <stdbool.h>
#include <stddef.h>

struct tn_plan_state {
    tn_vec pins;         /* tn_pin: reserved before the pause (gc/scratch.c), never grown in it */
    tn_vec gaps;         /* tn_gap: as many as pins (a gap lies in front of a pinned plug) */
    bool plan_failed;    /* a plan list was full: the generation is swept instead */
    size_t pins_seen;    /* pinned plugs plan found in this GC, kept in pins or not */
    size_t pins_needed;  /* the most any GC found: pins and gaps are reserved for twice that */
    void *pause_scratch; /* reserved before the pause for the range reports, the profiler's root
                            batch and the heap dump (used one after the other: gc/scratch.c) */
    size_t pause_scratch_size;
    tn_region **plan_regions[TN_NGEN]; /* per generation: max_units slots for the regions, then
                                          max_units + TN_MAX_HEAPS for the destinations (plan.c) */
};

#endif
