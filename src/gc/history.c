/* history.c - what a GC reports at its end: GCGlobalHeapHistory_V4, GCPerHeapHistory_V3 and
 * GCHeapStats_V2, from the GC's record (tn_gc_record) and the heap's own accounting. */
#include "runtime.h"
#include "gc/collection.h"

static bool any_compacted(const tn_gc_record *g) {
    for (int i = 0; i < TN_NGEN; i++)
        if (g->compacted[i])
            return true;
    return false;
}


/* Bytes that entered generation gen of a heap in this GC (survivors of the generation below:
 * they stay on their heap). */
static uint64_t came_in(const tn_gc_record *g, const tn_heap_figures *f, int gen) {
    if (gen == TN_GEN1)
        return f->promoted[TN_GEN0];
    if (gen == TN_GEN2 && g->condemned >= TN_GEN1)
        return f->promoted[TN_GEN1];
    return 0;
}

static void emit_heap_history(tenure_runtime *rt, unsigned h) {
    const tn_gc_record *g = &rt->last;
    tn_heap_figures f = tn_record_heap(g, tn_heap_count(rt), h);
    uint64_t values[TN_NGEN * TN_RECORD_WIDTH_rec_gen];
    for (int gen = 0; gen < TN_NGEN; gen++) {
        bool large = gen >= TN_LOH, condemned = tn_gen_condemned(gen, g->condemned);
        uint64_t promoted = condemned ? f.promoted[gen] : 0, pinned = condemned ? f.pinned_bytes[gen] : 0;
        uint64_t *v = &values[gen * TN_RECORD_WIDTH_rec_gen];
        v[0] = f.size_before[gen];
        v[1] = large ? f.free_before[gen] : 0; /* free lists: only the large heaps have them */
        v[2] = large ? 0 : f.free_before[gen];
        v[3] = f.size_after[gen];
        v[4] = large ? f.free_after[gen] : 0;
        v[5] = large ? 0 : f.free_after[gen];
        v[6] = came_in(g, &f, gen);
        v[7] = pinned;
        v[8] = promoted - pinned;
        v[9] = tn_heap_budget_of(rt, gen, h); /* every budget is the heap's own (heap/budgets.c) */
    }
    uint32_t compact = g->compact_reason >= 0 ? 0x80000000u | (1u << g->compact_reason) : 0;
    TN_EMIT(rt, GCPerHeapHistory_V3, .FreeListAllocated = 0, .FreeListRejected = 0,
            .EndOfSegAllocated = came_in(g, &f, TN_GEN2), .CondemnedAllocated = 0, .PinnedAllocated = 0,
            .PinnedAllocatedAdvance = 0, .RunningFreeListEfficiency = 0, .CondemnReasons0 = g->condemn_reasons_gen,
            .CondemnReasons1 = g->condemn_reasons_condition, .CompactMechanisms = compact, .ExpandMechanisms = 0,
            .HeapIndex = h, .ExtraGen0Commit = 0, .Count = TN_NGEN, .Values = values);
}

/* GCGlobalHeapHistory_V4's Values: the .NET runtime's phase times (gc_heap::etw_gc_time_info,
 * gcpriv.h; fired by gc_heap::fire_pevents), microseconds as uint32, in its order. Count is
 * the runtime's too: 8 for a compacting GC, 7 for a sweeping one (index 6 is then the sweep),
 * 5 for a background GC (mark only; tenure's background GC writes 7: its final pause sweeps). */
enum {
    TN_V4_MARK_SIZEDREF = 0,
    TN_V4_MARK_ROOTS = 1,
    TN_V4_MARK_SHORT_WEAK = 2,
    TN_V4_MARK_SCAN_FINALIZATION = 3,
    TN_V4_MARK_LONG_WEAK = 4,
    TN_V4_PLAN = 5,
    TN_V4_RELOCATE = 6,
    TN_V4_SWEEP = 6,
    TN_V4_SWEEP_COUNT = 7,
    TN_V4_COMPACT = 7,
    TN_V4_COMPACT_COUNT = 8
};
_Static_assert((int)TN_MARK_STEPS == (int)TN_V4_PLAN && (int)TN_MARK_SIZEDREF == (int)TN_V4_MARK_SIZEDREF &&
                   (int)TN_MARK_ROOTS == (int)TN_V4_MARK_ROOTS &&
                   (int)TN_MARK_SHORT_WEAK == (int)TN_V4_MARK_SHORT_WEAK &&
                   (int)TN_MARK_FINALIZATION == (int)TN_V4_MARK_SCAN_FINALIZATION &&
                   (int)TN_MARK_LONG_WEAK == (int)TN_V4_MARK_LONG_WEAK,
               "the mark steps are the runtime's first five time indices");

/* Map the record's phase times onto the runtime's; returns Count. The mark steps go where they
 * are; what the mark phase spent outside them (setting up, the overflow rescan's event) goes to
 * the roots, so that the mark values add up to the mark phase. Plan, relocate and compact (or
 * sweep) mean what the runtime's do. Promotion (regions relabelled, cards and crossing tables
 * rebuilt) has no time of its own in the runtime: it is left out, and the values add up to the
 * pause less promotion and suspension. */
static uint32_t runtime_phase_times(const tn_gc_record *g, bool compacting, uint32_t values[TN_V4_COMPACT_COUNT]) {
    uint32_t steps = 0;
    for (int i = 0; i < TN_MARK_STEPS; i++) {
        values[i] = g->mark_us[i];
        steps += g->mark_us[i];
    }
    /* the steps lie inside the mark phase, and each rounds down: together no more than it */
    TN_ASSERT_INTERNAL(steps <= g->phase_us[TN_PHASE_MARK]);
    if (g->phase_us[TN_PHASE_MARK] > steps)
        values[TN_V4_MARK_ROOTS] += g->phase_us[TN_PHASE_MARK] - steps;
    values[TN_V4_PLAN] = g->phase_us[TN_PHASE_PLAN];
    if (!compacting) { /* nothing moved: relocation, which had nothing to update, counts as sweep */
        values[TN_V4_SWEEP] = g->phase_us[TN_PHASE_RELOCATE] + g->phase_us[TN_PHASE_COMPACT_OR_SWEEP];
        return TN_V4_SWEEP_COUNT;
    }
    values[TN_V4_RELOCATE] = g->phase_us[TN_PHASE_RELOCATE];
    values[TN_V4_COMPACT] = g->phase_us[TN_PHASE_COMPACT_OR_SWEEP];
    return TN_V4_COMPACT_COUNT;
}

void tn_gc_emit_history(tenure_runtime *rt) {
    const tn_gc_record *g = &rt->last;
    if (TN_EV_ON(rt, GCGlobalHeapHistory_V4)) {
        uint32_t mechanisms = 1u << TN_GLOBAL_PROMOTION;
        bool compacting = any_compacted(g);
        if (compacting)
            mechanisms |= 1u << TN_GLOBAL_COMPACTION;
        if (g->demoted)
            mechanisms |= 1u << TN_GLOBAL_DEMOTION;
        uint32_t times[TN_V4_COMPACT_COUNT];
        uint32_t count = runtime_phase_times(g, compacting, times);
        TN_EMIT(rt, GCGlobalHeapHistory_V4, .FinalYoungestDesired = tn_heap_budget(rt, TN_GEN0),
                .NumHeaps = (int32_t)tn_heap_count(rt), .CondemnedGeneration = (uint32_t)g->condemned,
                .Gen0ReductionCount = 0, .Reason = g->reason, .GlobalMechanisms = mechanisms, .PauseMode = 0,
                .MemoryPressure = tn_os_memory_load(), .CondemnReasons0 = g->condemn_reasons_gen,
                .CondemnReasons1 = g->condemn_reasons_condition, .Count = count, .Values = times);
    }
    if (TN_EV_ON(rt, GCPerHeapHistory_V3))
        for (unsigned h = 0; h < tn_heap_count(rt); h++)
            emit_heap_history(rt, h);
}

void tn_gc_emit_heap_stats(tenure_runtime *rt) {
    const tn_gc_record *g = &rt->last;
    uint64_t promoted[TN_NGEN];
    for (int gen = 0; gen < TN_NGEN; gen++)
        promoted[gen] = tn_gen_condemned(gen, g->condemned) ? g->promoted[gen] : 0;
    TN_EMIT(rt, GCHeapStats_V2, .GenerationSize0 = g->size_after[0], .TotalPromotedSize0 = promoted[0],
            .GenerationSize1 = g->size_after[1], .TotalPromotedSize1 = promoted[1], .GenerationSize2 = g->size_after[2],
            .TotalPromotedSize2 = promoted[2], .GenerationSize3 = g->size_after[3], .TotalPromotedSize3 = promoted[3],
            .FinalizationPromotedSize = g->finalization_promoted_bytes,
            .FinalizationPromotedCount = g->finalization_promoted_count,
            .PinnedObjectCount = (uint32_t)g->pinned_objects, .SinkBlockCount = (uint32_t)tn_lifetime_sync_count(rt),
            .GCHandleCount = (uint32_t)tn_handle_count(rt), .GenerationSize4 = g->size_after[4],
            .TotalPromotedSize4 = promoted[4]);
}
