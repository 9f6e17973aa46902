/* report.c - what a collection tells the world: the ranges of survivors (bulk range events
 * and the profilers' moved/surviving references, after plan, before anything moves), and at
 * the end the finished record (rt->last, tenure_stats), the budgets for the next GC, HeapVerify
 * after the GC, the history and end events, the heap dump, the profilers' end callbacks and
 * the GC callback. See docs/design/collector.md and trace.md.
 */
#include "gc/gc_internal.h"

/* ---- the ranges of survivors, for the events (and the profiler) ---- */

#define RANGE_BATCH 128 /* 128 moved records: 3 KiB, one event fits a 4 KiB CTF packet */

/* Ranges in a bounded buffer, flushed to the bulk range events and to the profilers. */
typedef struct range_batch {
    tenure_runtime *rt;
    bool moved, events, profilers;
    uint32_t index, count;
    uintptr_t old[RANGE_BATCH], new_start[RANGE_BATCH];
    size_t len[RANGE_BATCH];
} range_batch;

static void flush_batch(range_batch *b) {
    if (!b->count)
        return;
    if (b->events) {
        uint64_t values[RANGE_BATCH * 3];
        int w = b->moved ? 3 : 2;
        for (uint32_t i = 0; i < b->count; i++) {
            values[i * w] = b->old[i];
            values[i * w + 1] = b->moved ? b->new_start[i] : b->len[i];
            if (b->moved)
                values[i * w + 2] = b->len[i];
        }
        if (b->moved)
            TN_EMIT(b->rt, GCBulkMovedObjectRanges, .Index = b->index, .Count = b->count, .Values = values);
        else
            TN_EMIT(b->rt, GCBulkSurvivingObjectRanges, .Index = b->index, .Count = b->count, .Values = values);
    }
    if (b->profilers && b->moved)
        tn_prof_moved(b->rt, b->count, b->old, b->new_start, b->len);
    else if (b->profilers)
        tn_prof_surviving(b->rt, b->count, b->old, b->len);
    b->index++;
    b->count = 0;
}

static void add_range(range_batch *b, char *old, char *new_start, size_t len) {
    b->old[b->count] = (uintptr_t)old;
    b->new_start[b->count] = (uintptr_t)new_start;
    b->len[b->count] = len;
    if (++b->count == RANGE_BATCH)
        flush_batch(b);
}

/* One record per plug: compacted generations report where each plug goes (old == new for a
 * pinned plug), swept ones where each run of survivors is. Nothing has moved yet. */
void tn_gc_report_ranges(tenure_runtime *rt, tn_collection *c) {
    tn_assert_phase(rt, c);
    const tn_gen_plan *plans = c->plans;
    bool prof = TN_PROF_ON(rt, TENURE_PROFILE_GC) != 0;
    bool moved_on = TN_EV_ON(rt, GCBulkMovedObjectRanges), surv_on = TN_EV_ON(rt, GCBulkSurvivingObjectRanges);
    if (!moved_on && !surv_on && !prof)
        return;
    static const int order[TN_NGEN] = {TN_GEN0, TN_GEN1, TN_GEN2, TN_LOH, TN_POH};
    range_batch *moved = tn_gc_pause_scratch(rt, tn_gc_range_scratch_bytes()), *surv = moved + 1;
    if (!moved)
        return; /* the observers miss this GC's ranges rather than the GC failing (counted) */
    *moved = (range_batch){.rt = rt, .moved = true, .events = moved_on, .profilers = prof};
    *surv = (range_batch){.rt = rt, .moved = false, .events = surv_on, .profilers = prof};
    for (int k = 0; k < TN_NGEN; k++) {
        const tn_gen_plan *gp = &plans[order[k]];
        if (!tn_gen_condemned(order[k], c->condemned))
            continue;
        for (size_t i = 0; i < gp->n; i++) {
            tn_region *r = gp->regions[i];
            tn_plug_iter it;
            tn_plug_iter_init(&it, rt, r);
            for (size_t b, eb; tn_plug_iter_next(&it, &b, &eb);) {
                char *s = tn_bit_addr(rt, b), *e = tn_bit_addr(rt, eb) + 8;
                if (gp->compact && !r->kept)
                    add_range(moved, s, s + tn_plug_delta(rt, r, s, b), (size_t)(e - s));
                else
                    add_range(surv, s, NULL, (size_t)(e - s));
            }
        }
    }
    flush_batch(moved);
    flush_batch(surv);
}

size_t tn_gc_range_scratch_bytes(void) { return 2 * sizeof(range_batch); }

/* ---- the end of a collection ---- */

/* A heap tally's "before" or "after" figures. */
static size_t *tally_sizes(tn_heap_tally *t, bool after) { return after ? t->size_after : t->size_before; }
static size_t *tally_free(tn_heap_tally *t, bool after) { return after ? t->free_after : t->free_before; }

void tn_gc_measure(tenure_runtime *rt, size_t *sizes, size_t *free_sizes, tn_heap_tally *heaps, bool after) {
    unsigned nheaps = tn_heap_count(rt);
    bool per_heap = heaps && nheaps > 1; /* else heap 0's figures are the record's own (gc/history.c) */
    for (unsigned h = 0; per_heap && h < nheaps; h++) {
        memset(tally_sizes(&heaps[h], after), 0, TN_NGEN * sizeof(size_t));
        memset(tally_free(&heaps[h], after), 0, TN_NGEN * sizeof(size_t));
    }
    for (int g = 0; g < TN_NGEN; g++) {
        size_t size = 0, free_bytes = 0;
        for (tn_region *r = tn_heap_regions(rt, g); r; r = r->next) {
            size_t used = (size_t)(r->used - r->start);
            size += used;
            free_bytes += r->free_bytes;
            if (per_heap) {
                tally_sizes(&heaps[r->heap], after)[g] += used;
                tally_free(&heaps[r->heap], after)[g] += r->free_bytes;
            }
        }
        sizes[g] = size;
        free_sizes[g] = free_bytes;
        rt->stats.gen[g].size = size;
        rt->stats.gen[g].free_bytes = free_bytes;
    }
}

void tn_gc_count_pause(tenure_runtime *rt, uint64_t pause) {
    tenure_stats *s = &rt->stats;
    s->last_pause_ns = pause;
    s->total_pause_ns += pause;
    if (pause > s->max_pause_ns)
        s->max_pause_ns = pause;
}

/* The record g of a GC that condemned `condemned` is done: its sizes after, the statistics. */
static void update_stats(tenure_runtime *rt, tn_gc_record *g, int condemned) {
    tenure_stats *s = &rt->stats;
    tn_gc_measure(rt, g->size_after, g->free_after, g->heaps, true);
    s->heap_bytes = s->live_bytes_after_gc = s->promoted_bytes = 0;
    for (int i = 0; i < TN_NGEN; i++) {
        s->heap_bytes += s->gen[i].size;
        s->live_bytes_after_gc += s->gen[i].size - s->gen[i].free_bytes;
        if (tn_gen_condemned(i, condemned)) {
            s->gen[i].collections++;
            s->promoted_bytes += g->promoted[i];
        }
    }
    if (g->compacted[0])
        s->compacting_gcs++;
    else
        s->sweeping_gcs++;
    s->committed_bytes = tn_heap_committed(rt);
    s->pinned_objects = g->pinned_objects;
    s->sync_blocks = tn_lifetime_sync_count(rt);
    s->finalization_promoted_bytes = g->finalization_promoted_bytes;
    s->finalization_promoted_count = g->finalization_promoted_count;
}

/* The record is done: it becomes the previous GC's (rt->last), which what follows reads. */
static void finish_record(tenure_runtime *rt, tn_collection *c) {
    tn_gc_record *g = &c->record;
    g->pinned_objects = rt->mark.pinned_objects;
    update_stats(rt, g, c->condemned);
    if (c->condemned == TN_GEN2)
        tn_lifetime_gen2_done(rt);
    g->pause_ns = tn_os_now_ns() - c->started_ns;
    tn_gc_count_pause(rt, g->pause_ns);
    rt->last = *g;
}

/* The history events, a heap dump asked for and the profilers' end of the GC (none for a
 * background GC: no profiler walk, events spec). */
static void emit_history(tenure_runtime *rt) {
    tn_gc_emit_history(rt);
    if (rt->last.background)
        return;
    tn_heap_dump_emit(rt); /* (if tenure_heap_dump asked for this GC) */
    if (TN_PROF_ON(rt, TENURE_PROFILE_GC)) {
        tn_prof_root_references(rt);
        tn_prof_gc_finished(rt);
    }
}

/* GCEnd, GCHeapStats and the GC callback: in the pause, or for a background GC when its
 * sweep ends (its last events, as the events spec orders them). */
static void report_end(tenure_runtime *rt) {
    TN_EMIT(rt, GCEnd_V1, .Count = (uint32_t)rt->last.index, .Depth = (uint32_t)rt->last.condemned);
    tn_gc_emit_heap_stats(rt);
    if (rt->gc_callback) {
        tenure_gc_info info;
        tenure_get_last_gc_info(rt, &info);
        tn_cb_frame frame;
        tn_cb_enter(&frame, rt, TN_CB_GC_CALLBACK);
        rt->gc_callback(rt, &info, rt->gc_callback_context);
        tn_cb_leave(&frame);
    }
}

void tn_gc_report(tenure_runtime *rt, tn_collection *c) {
    tn_assert_phase(rt, c);
    finish_record(rt, c);
    tn_budgets_update(rt, &rt->last);
    tn_regions_trim(rt, (c->flags & TENURE_COLLECT_AGGRESSIVE) != 0);
    if (rt->config.HeapVerify)
        tn_gc_verify(rt, "after a GC");
    emit_history(rt);
    report_end(rt);
}

/* A background GC's final pause: gen0's budget as after a gen0 GC, gen2's from what the mark
 * kept; its record waits for the sweep (rt->bgc.record). */
void tn_gc_report_bgc_final(tenure_runtime *rt, tn_collection *c) {
    tn_assert_phase(rt, c);
    tn_gc_record young = c->record;
    young.condemned = TN_GEN0;
    /* (young.heaps is the background GC's table: its gen0 and gen1 figures are kept) */
    tn_gc_measure(rt, young.size_after, young.free_after, young.heaps, true);
    memcpy(rt->bgc.record.size_after, young.size_after, sizeof young.size_after);
    memcpy(rt->bgc.record.free_after, young.free_after, sizeof young.free_after);
    tn_budgets_update(rt, &young);
    tn_budgets_update_background(rt, &c->record);
    tn_lifetime_gen2_done(rt);
    rt->bgc.record.pinned_objects = rt->mark.pinned_objects;
    tn_regions_trim(rt, false);
    if (rt->config.HeapVerify)
        tn_gc_verify(rt, "after a GC");
    if (TN_PROF_ON(rt, TENURE_PROFILE_GC)) { /* the end of its young GC, for the profilers */
        tn_prof_root_references(rt);
        tn_prof_gc_finished(rt);
    }
}

/* Generations 0 and 1 of a record (and its heaps'), after the background GC's final pause
 * collected them: saved before the end measures every generation, then put back. */
typedef struct young_sizes {
    size_t size[TN_GEN2], free[TN_GEN2];
} young_sizes;

static void keep_young(tenure_runtime *rt, const tn_gc_record *record, young_sizes *y) {
    for (int g = TN_GEN0; g < TN_GEN2; g++) {
        y[0].size[g] = record->size_after[g], y[0].free[g] = record->free_after[g];
        for (unsigned h = 0; h < tn_heap_count(rt); h++)
            y[1 + h].size[g] = record->heaps[h].size_after[g], y[1 + h].free[g] = record->heaps[h].free_after[g];
    }
}

static void put_young_back(tenure_runtime *rt, tn_gc_record *record, const young_sizes *y) {
    for (int g = TN_GEN0; g < TN_GEN2; g++) {
        record->size_after[g] = y[0].size[g], record->free_after[g] = y[0].free[g];
        for (unsigned h = 0; h < tn_heap_count(rt); h++)
            record->heaps[h].size_after[g] = y[1 + h].size[g], record->heaps[h].free_after[g] = y[1 + h].free[g];
    }
}

void tn_gc_report_background_end(tenure_runtime *rt, tn_gc_record *record, uint64_t pause_ns) {
    tn_assert_locked(rt);
    young_sizes young[1 + TN_MAX_HEAPS];
    keep_young(rt, record, young);
    update_stats(rt, record, TN_GEN2);
    put_young_back(rt, record, young);
    record->pause_ns = pause_ns;
    rt->stats.last_pause_ns = pause_ns; /* (each pause was counted in the total when it ended) */
    rt->last = *record;
    emit_history(rt);
    report_end(rt);
}
