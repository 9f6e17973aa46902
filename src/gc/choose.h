/*
 * choose.h - which GC runs: one pure function (choose.c), the driver's only decision
 * (gc/collect.c collect_steered carries it out). .NET's generation_to_condemn and Whippet's
 * determine_collection_kind are the models.
 *
 * A request (the generation asked for, its reason and tenure_collect flags) meets the
 * collector's situation (tn_gc_situation: read from the instance just before); the answer
 * (tn_gc_choice) says, in the order the driver runs them:
 *   final_pause   the background GC has marked all it could: its final pause runs first (a
 *                 gen0 GC: gc/background.h)
 *   finish_bgc    the background GC in progress ends first, its sweep included (a blocking
 *                 gen2 GC is asked for)
 *   generation    the blocking GC to run then (TN_GC_NONE: none: the final pause did what was
 *                 asked, or a background GC already runs)
 *   start_bgc     then a background GC starts (its initial pause)
 * Nothing here reads or changes the instance, so the rule is tested alone (test gc_choose).
 */
#ifndef TENURE_GC_CHOOSE_H
#define TENURE_GC_CHOOSE_H

#include <stdbool.h>
#include <stdint.h>

#define TN_GC_NONE (-2) /* tn_gc_choice.generation: no blocking GC */

typedef struct tn_gc_situation {
    bool concurrent;      /* gcConcurrent=1 */
    bool compact_always;  /* GCCompactMode=1: gen2 GCs block (and compact) */
    bool bgc_in_progress; /* a background GC marks or sweeps */
    bool bgc_marked;      /* ... and has marked all it could: its final pause is due */
    bool bgc_no_thread;   /* a forked child that cannot start the background thread */
    int young_budget_gen; /* the generation the young budgets ask for now (0 or 1) */
} tn_gc_situation;

typedef struct tn_gc_choice {
    bool final_pause, finish_bgc, start_bgc;
    int generation; /* 0, 1, 2, or TN_GC_NONE */
} tn_gc_choice;

/* `generation` 0..2 (-1 is not passed: tenure_collect maps it to 2); reason TN_REASON_*;
 * flags TENURE_COLLECT_*. */
tn_gc_choice tn_gc_choose(const tn_gc_situation *s, int generation, uint32_t reason, unsigned flags);

#endif
