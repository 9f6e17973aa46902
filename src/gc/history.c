/* history.c - what a GC reports at its end: GCGlobalHeapHistory_V4, GCPerHeapHistory_V3 and
 * GCHeapStats_V2, from the GC's record (tn_gc_record) and the heap's own accounting. */
#include "runtime.h"

static bool any_compacted(const tn_gc_record *g) {
    for (int i = 0; i < TN_NGEN; i++)
        if (g->compacted[i])
            return true;
    return false;
}

static uint64_t budget_of(const tenure_runtime *rt, int gen) {
    switch (gen) {
    case TN_GEN0: return rt->heap.gen0_budget;
    case TN_GEN1: return rt->heap.gen1_budget;
    case TN_GEN2: return rt->heap.gen2_budget;
    case TN_LOH: return rt->heap.loh_budget;
    default: return 0;
    }
}

/* Bytes that entered generation gen in this GC (survivors of the generation below). */
static uint64_t came_in(const tn_gc_record *g, int gen) {
    if (gen == TN_GEN1)
        return g->promoted[TN_GEN0];
    if (gen == TN_GEN2 && g->condemned >= TN_GEN1)
        return g->promoted[TN_GEN1];
    return 0;
}

static void emit_per_heap(tenure_runtime *rt) {
    const tn_gc_record *g = &rt->last;
    uint64_t values[TN_NGEN * TN_RECORD_WIDTH_rec_gen];
    for (int gen = 0; gen < TN_NGEN; gen++) {
        bool large = gen >= TN_LOH, condemned = tn_gen_condemned(gen, g->condemned);
        uint64_t promoted = condemned ? g->promoted[gen] : 0, pinned = condemned ? g->pinned_bytes[gen] : 0;
        uint64_t *v = &values[gen * TN_RECORD_WIDTH_rec_gen];
        v[0] = g->size_before[gen];
        v[1] = large ? g->free_before[gen] : 0; /* free lists: only the large heaps have them */
        v[2] = large ? 0 : g->free_before[gen];
        v[3] = g->size_after[gen];
        v[4] = large ? g->free_after[gen] : 0;
        v[5] = large ? 0 : g->free_after[gen];
        v[6] = came_in(g, gen);
        v[7] = pinned;
        v[8] = promoted - pinned;
        v[9] = budget_of(rt, gen);
    }
    uint32_t compact = g->compact_reason >= 0 ? 0x80000000u | (1u << g->compact_reason) : 0;
    TN_EMIT(rt, GCPerHeapHistory_V3, .FreeListAllocated = 0, .FreeListRejected = 0,
            .EndOfSegAllocated = came_in(g, TN_GEN2), .CondemnedAllocated = 0, .PinnedAllocated = 0,
            .PinnedAllocatedAdvance = 0, .RunningFreeListEfficiency = 0, .CondemnReasons0 = g->condemn_reasons_gen,
            .CondemnReasons1 = g->condemn_reasons_condition, .CompactMechanisms = compact, .ExpandMechanisms = 0,
            .HeapIndex = 0, .ExtraGen0Commit = 0, .Count = TN_NGEN, .Values = values);
}

void tn_gc_emit_history(tenure_runtime *rt) {
    const tn_gc_record *g = &rt->last;
    if (TN_EV_ON(rt, GCGlobalHeapHistory_V4)) {
        uint32_t mechanisms = 1u << TN_GLOBAL_PROMOTION;
        if (any_compacted(g))
            mechanisms |= 1u << TN_GLOBAL_COMPACTION;
        if (g->demoted)
            mechanisms |= 1u << TN_GLOBAL_DEMOTION;
        TN_EMIT(rt, GCGlobalHeapHistory_V4, .FinalYoungestDesired = rt->heap.gen0_budget, .NumHeaps = 1,
                .CondemnedGeneration = (uint32_t)g->condemned, .Gen0ReductionCount = 0, .Reason = g->reason,
                .GlobalMechanisms = mechanisms, .PauseMode = 0, .MemoryPressure = tn_os_memory_load(),
                .CondemnReasons0 = g->condemn_reasons_gen, .CondemnReasons1 = g->condemn_reasons_condition, .Count = 5,
                .Values = g->phase_us);
    }
    if (TN_EV_ON(rt, GCPerHeapHistory_V3))
        emit_per_heap(rt);
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
            .PinnedObjectCount = (uint32_t)g->pinned_objects, .SinkBlockCount = (uint32_t)rt->lifetime.sync_count,
            .GCHandleCount = (uint32_t)rt->roots.handle_count, .GenerationSize4 = g->size_after[4],
            .TotalPromotedSize4 = promoted[4]);
}
