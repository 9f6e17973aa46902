/* choose.c - which GC runs (gc/choose.h). */
#include "runtime.h"
#include "gc/choose.h"

/* A gen2 GC the collector chose (a budget, GCStress) or a non-blocking request, which
 * background GC may take; not one that asks for compaction. */
static bool chosen_by_collector(uint32_t reason, unsigned flags) {
    bool chosen = reason == TN_REASON_ALLOC_SMALL || reason == TN_REASON_ALLOC_LARGE || reason == TN_REASON_STRESS ||
                  (flags & TENURE_COLLECT_NONBLOCKING);
    return chosen && !(flags & (TENURE_COLLECT_COMPACT | TENURE_COLLECT_COMPACT_LOH | TENURE_COLLECT_AGGRESSIVE));
}

/* With gcConcurrent, a gen2 GC the collector chose runs in the background: a gen1 GC now,
 * then the BGC's initial pause; while a BGC runs, it runs as the foreground gen0 or gen1 GC the
 * young budgets ask for. Once the BGC has marked all it could, its final pause comes first
 * (it collects gen0: what was asked is then done, unless it was a blocking gen2 GC or a
 * compacting gen0 GC). A gen2 GC asked for otherwise (induced, out of space, compacting) first
 * ends the BGC in progress, its sweep included. */
tn_gc_choice tn_gc_choose(const tn_gc_situation *s, int generation, uint32_t reason, unsigned flags) {
    tn_gc_choice ch = {.final_pause = s->bgc_marked, .generation = generation};
    bool young = generation >= 0 && generation < TN_GEN2, chosen = chosen_by_collector(reason, flags);
    /* the final pause was a gen0 GC: what a chosen gen2 GC or a plain gen0 GC asked for is done */
    if (ch.final_pause && (young ? generation == TN_GEN0 && !(flags & TENURE_COLLECT_COMPACT) : chosen)) {
        ch.generation = TN_GC_NONE;
        return ch;
    }
    if (!s->concurrent || s->compact_always || young) /* (a BGC sweeps: not with GCCompactMode=1) */
        return ch;
    if (chosen && s->bgc_in_progress) {
        ch.generation = (flags & TENURE_COLLECT_NONBLOCKING) ? TN_GC_NONE : s->young_budget_gen;
        return ch;
    }
    if (chosen && !s->bgc_no_thread) {
        ch.generation = TN_GEN1;
        ch.start_bgc = true;
        return ch;
    }
    ch.finish_bgc = s->bgc_in_progress;
    return ch;
}
