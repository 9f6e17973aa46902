/*
 * gc_choose: the rule that decides which GC runs (gc/choose.h tn_gc_choose), alone: every
 * request (generation 0..2, each reason, the flags that change the choice) against every
 * situation (blocking or concurrent, GCCompactMode=1, a background GC idle, marking, marked,
 * sweeping, or in a forked child without its thread; the young budgets asking for gen0 or
 * gen1), each answer checked against the rule as documented there, written here a second way
 * (by cases on the situation first), plus named cases from the background GC's lifecycle.
 */
#include "test_util.h"
#include "runtime.h"
#include "gc/choose.h"

static const uint32_t reasons[] = {TN_REASON_ALLOC_SMALL,     TN_REASON_INDUCED, TN_REASON_LOW_MEMORY,
                                   TN_REASON_ALLOC_LARGE,     TN_REASON_OOS_SOH, TN_REASON_OOS_LOH,
                                   TN_REASON_INDUCED_NOFORCE, TN_REASON_STRESS,  TN_REASON_INDUCED_COMPACTING};
static const unsigned flag_sets[] = {0,
                                     TENURE_COLLECT_NONBLOCKING,
                                     TENURE_COLLECT_COMPACT,
                                     TENURE_COLLECT_COMPACT_LOH,
                                     TENURE_COLLECT_AGGRESSIVE,
                                     TENURE_COLLECT_OPTIMIZED,
                                     TENURE_COLLECT_NONBLOCKING | TENURE_COLLECT_COMPACT};

/* The rule, by the situation first. */
static tn_gc_choice expected(const tn_gc_situation *s, int gen, uint32_t reason, unsigned flags) {
    tn_gc_choice e = {.final_pause = s->bgc_marked, .generation = gen};
    bool by_collector = (reason == TN_REASON_ALLOC_SMALL || reason == TN_REASON_ALLOC_LARGE ||
                         reason == TN_REASON_STRESS || (flags & TENURE_COLLECT_NONBLOCKING)) &&
                        !(flags & (TENURE_COLLECT_COMPACT | TENURE_COLLECT_COMPACT_LOH | TENURE_COLLECT_AGGRESSIVE));
    if (s->bgc_marked) { /* the final pause is a gen0 GC */
        if (gen == 0 && !(flags & TENURE_COLLECT_COMPACT)) {
            e.generation = TN_GC_NONE;
            return e;
        }
        if (gen == 2 && by_collector) {
            e.generation = TN_GC_NONE;
            return e;
        }
    }
    if (gen < 2 || !s->concurrent || s->compact_always)
        return e; /* blocking, as asked */
    if (by_collector && s->bgc_in_progress) {
        e.generation = (flags & TENURE_COLLECT_NONBLOCKING) ? TN_GC_NONE : s->young_budget_gen;
        return e;
    }
    if (by_collector && !s->bgc_no_thread) {
        e.generation = 1;
        e.start_bgc = true;
        return e;
    }
    e.finish_bgc = s->bgc_in_progress;
    return e;
}

static void check_all(void) {
    size_t cases = 0;
    for (unsigned bits = 0; bits < 64; bits++) {
        tn_gc_situation s = {.concurrent = bits & 1,
                             .compact_always = bits & 2,
                             .bgc_in_progress = bits & 4,
                             .bgc_marked = (bits & 4) && (bits & 8), /* marked implies in progress */
                             .bgc_no_thread = bits & 16,
                             .young_budget_gen = (bits & 32) ? 1 : 0};
        for (int gen = 0; gen <= 2; gen++)
            for (size_t r = 0; r < sizeof reasons / sizeof reasons[0]; r++)
                for (size_t f = 0; f < sizeof flag_sets / sizeof flag_sets[0]; f++) {
                    tn_gc_choice got = tn_gc_choose(&s, gen, reasons[r], flag_sets[f]);
                    tn_gc_choice want = expected(&s, gen, reasons[r], flag_sets[f]);
                    cases++;
                    TT_CHECK(got.final_pause == want.final_pause && got.finish_bgc == want.finish_bgc &&
                                 got.start_bgc == want.start_bgc && got.generation == want.generation,
                             "situation %#x, gen %d, reason %u, flags %#x: got final %d finish %d gen %d start %d, "
                             "want final %d finish %d gen %d start %d",
                             bits, gen, reasons[r], flag_sets[f], got.final_pause, got.finish_bgc, got.generation,
                             got.start_bgc, want.final_pause, want.finish_bgc, want.generation, want.start_bgc);
                    /* what always holds: a background GC starts only after a gen1 GC, never with a
                     * final pause or a finish, and only with gcConcurrent */
                    TT_CHECK(!got.start_bgc || (got.generation == 1 && !got.final_pause && !got.finish_bgc &&
                                                s.concurrent && !s.compact_always));
                    TT_CHECK(got.generation == TN_GC_NONE || (got.generation >= 0 && got.generation <= 2));
                }
    }
    printf("  %zu requests x situations checked\n", cases);
}

/* The lifecycle, by name. */
static void check_named(void) {
    tn_gc_situation blocking = {.concurrent = false}, idle = {.concurrent = true},
                    marking = {.concurrent = true, .bgc_in_progress = true, .young_budget_gen = 1},
                    marked = {.concurrent = true, .bgc_in_progress = true, .bgc_marked = true};
    tn_gc_choice c = tn_gc_choose(&blocking, 2, TN_REASON_ALLOC_SMALL, 0);
    TT_CHECK(c.generation == 2 && !c.start_bgc, "blocking: a budget's gen2 GC blocks");
    c = tn_gc_choose(&idle, 2, TN_REASON_ALLOC_SMALL, 0);
    TT_CHECK(c.generation == 1 && c.start_bgc, "concurrent: a budget's gen2 GC is a gen1 GC, then a BGC starts");
    c = tn_gc_choose(&idle, 2, TN_REASON_INDUCED, 0);
    TT_CHECK(c.generation == 2 && !c.start_bgc && !c.finish_bgc, "an induced gen2 GC blocks");
    c = tn_gc_choose(&idle, 2, TN_REASON_INDUCED, TENURE_COLLECT_NONBLOCKING);
    TT_CHECK(c.generation == 1 && c.start_bgc, "tenure_collect(2, NONBLOCKING) starts a BGC");
    c = tn_gc_choose(&marking, 2, TN_REASON_ALLOC_SMALL, 0);
    TT_CHECK(c.generation == 1 && !c.start_bgc, "while a BGC marks, a budget's gen2 GC is the young GC asked for");
    c = tn_gc_choose(&marking, 2, TN_REASON_INDUCED, TENURE_COLLECT_NONBLOCKING);
    TT_CHECK(c.generation == TN_GC_NONE, "a second NONBLOCKING request while a BGC runs does nothing");
    c = tn_gc_choose(&marking, 2, TN_REASON_INDUCED, 0);
    TT_CHECK(c.finish_bgc && c.generation == 2, "an induced gen2 GC ends the BGC, then blocks");
    c = tn_gc_choose(&marked, 0, TN_REASON_ALLOC_SMALL, 0);
    TT_CHECK(c.final_pause && c.generation == TN_GC_NONE, "the final pause is the gen0 GC asked for");
    c = tn_gc_choose(&marked, 1, TN_REASON_ALLOC_SMALL, 0);
    TT_CHECK(c.final_pause && c.generation == 1, "a gen1 GC still runs after the final pause");
    c = tn_gc_choose(&marked, 0, TN_REASON_INDUCED, TENURE_COLLECT_COMPACT);
    TT_CHECK(c.final_pause && c.generation == 0, "a compacting gen0 GC still runs after the final pause");
    c = tn_gc_choose(&(tn_gc_situation){.concurrent = true, .compact_always = true}, 2, TN_REASON_ALLOC_SMALL, 0);
    TT_CHECK(c.generation == 2 && !c.start_bgc, "GCCompactMode=1: gen2 GCs block");
    c = tn_gc_choose(&(tn_gc_situation){.concurrent = true, .bgc_no_thread = true}, 2, TN_REASON_ALLOC_SMALL, 0);
    TT_CHECK(c.generation == 2 && !c.start_bgc, "no background thread (forked child): gen2 GCs block");
}

int main(void) {
    double t0 = tt_now();
    tt_rng_init("gc_choose");
    check_named();
    check_all();
    return tt_finish("gc_choose", t0);
}
