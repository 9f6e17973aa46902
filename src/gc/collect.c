/* collect.c - the collect driver: one blocking GC from start to end, in the order of the
 * events spec (suspend, mark, plan, relocate, compact or sweep, promote, report, restart),
 * each phase a function over the heap and the collection (gc_internal.h) in its own file.
 * Also the public tenure_collect and the statistics. */
#include "gc/gc_internal.h"
#include "gc/choose.h"
#include <setjmp.h>

static void set_condemned(tenure_runtime *rt, int condemned, bool on) {
    for (int g = 0; g < TN_NGEN; g++) {
        bool c = on && tn_gen_condemned(g, condemned);
        for (tn_region *r = tn_heap_regions(rt, g); r; r = r->next) {
            r->condemned = c;
            if (c)
                r->live_bytes = 0;
        }
    }
}

static void verify_if_asked(tenure_runtime *rt, const char *when) {
    if (rt->config.HeapVerify)
        tn_gc_verify(rt, when);
}

/* Why this generation: packed as the .NET collector packs gen_to_condemn_tuning. */
static void record_condemn_reasons(tn_gc_record *g, int requested, uint32_t reason) {
    int initial = requested < 0 || requested > TN_GEN2 ? TN_GEN2 : requested;
    g->condemn_reasons_gen = (uint32_t)initial << (2 * TN_CR_GEN_INITIAL) | (uint32_t)g->condemned
                                                                                << (2 * TN_CR_GEN_FINAL);
    if (reason == TN_REASON_ALLOC_SMALL || reason == TN_REASON_ALLOC_LARGE)
        g->condemn_reasons_gen |= (uint32_t)initial << (2 * TN_CR_GEN_ALLOC_BUDGET);
    uint32_t c = 0;
    if ((reason == TN_REASON_INDUCED || reason == TN_REASON_INDUCED_COMPACTING ||
         reason == TN_REASON_INDUCED_AGGRESSIVE) &&
        g->condemned == TN_GEN2)
        c |= 1u << TN_CR_INDUCED_FULLGC;
    if (reason == TN_REASON_INDUCED_NOFORCE)
        c |= 1u << TN_CR_INDUCED_NOFORCE;
    if (reason == TN_REASON_OOS_SOH || reason == TN_REASON_OOS_LOH)
        c |= 1u << TN_CR_BEFORE_OOM;
    if (reason == TN_REASON_STRESS)
        c |= 1u << TN_CR_STRESS;
    g->condemn_reasons_condition = c;
}

/* TENURE_DEBUG_ASSERTS: the core structures are consistent (base/assert.h), with the world
 * stopped (so no thread moves its allocation context meanwhile). The whole-heap walks (every
 * region, every handle slab) cost about what TENURE_HeapVerify does. */
static void check_structures(tenure_runtime *rt) {
    if (!TN_DEBUG_ASSERTS)
        return;
    tn_assert_world_stopped(rt);
    for (const tn_mutator *m = tn_mutators(rt); m; m = m->next)
        tn_alloc_context_check(rt, m);
    tn_alloc_heaps_check(rt);
    tn_mark_stack_check(rt);
    tn_gc_team_check(rt);
    tn_trace_sessions_check(rt);
    tn_regions_check(rt);
    tn_handle_slabs_check(rt);
    tn_bgc_check(rt);
}

/* The collection's parameters and its record's first fields. */
static void begin_collection(tenure_runtime *rt, tn_collection *c, int requested, uint32_t reason, unsigned flags) {
    memset(c, 0, sizeof *c);
    c->gc_type = tn_bgc_in_progress(rt) ? TN_GC_TYPE_FOREGROUND : TN_GC_TYPE_BLOCKING;
    c->suspend_reason = TN_SUSPEND_FOR_GC;
    c->requested = requested;
    c->condemned = requested < 0 || requested > TN_GEN2 ? TN_GEN2 : requested;
    c->reason = reason;
    c->flags = flags;
    c->started_ns = tn_os_now_ns();
    c->queued_before = tn_finalize_queued_total(rt);
}

static void start_gc(tenure_runtime *rt, tn_collection *c) {
    tn_gc_record *g = &c->record;
    if (c->bgc_final) { /* the background GC's final pause: its GCStart was the initial pause's */
        g->index = rt->bgc.index;
        g->background = true;
    } else {
        rt->stats.gc_count++;
        g->index = rt->stats.gc_count;
    }
    g->condemned = c->condemned;
    g->reason = c->reason;
    g->compact_reason = -1;
    record_condemn_reasons(g, c->requested, c->reason);
    g->heaps = rt->tallies[c->bgc_final ? 1 : 0];
    memset(g->heaps, 0, tn_heap_count(rt) * sizeof *g->heaps);
    tn_gc_measure(rt, g->size_before, g->free_before, g->heaps, false);
    /* a background GC's final pause is a gen0 GC to the profilers: the older generations are
     * swept later, unreported (no profiler heap walk for a background GC: events spec) */
    if (TN_PROF_ON(rt, TENURE_PROFILE_GC))
        tn_prof_gc_started(rt, c->bgc_final ? TN_GEN0 : c->condemned, c->reason);
    if (!c->bgc_final) {
        TN_EMIT(rt, GCStart_V2, .Count = (uint32_t)g->index, .Depth = (uint32_t)c->condemned, .Reason = c->reason,
                .Type = (uint32_t)c->gc_type, .ClientSequenceNumber = tn_heap_dump_sequence(rt));
    }
    set_condemned(rt, c->condemned, true);
    c->phase_started_ns = tn_os_now_ns();
}

/* Stop the world, in the events' order: every other attached thread reaches a safepoint (the
 * collecting thread holds rt->threads.lock, so none can start a GC meanwhile), then every thread's
 * allocation context ends so that the heap is walkable. From here to restart, c is the
 * collection in progress (rt->collection) and nothing is allocated (base/mem.c). */
static void suspend(tenure_runtime *rt, tn_collection *c) {
    TN_EMIT(rt, GCSuspendEEBegin_V1, .Reason = c->suspend_reason, .Count = (uint32_t)rt->stats.gc_count);
    tn_world_stop(rt);
    check_structures(rt); /* the contexts as the threads left them */
    tn_alloc_end_contexts(rt);
    TN_EMIT(rt, GCSuspendEEEnd_V1, .ClrInstanceID = 0);
    if (c->suspend_reason == TN_SUSPEND_FOR_GC)
        TN_EMIT(rt, GCTriggered, .Reason = c->reason);
    tn_mem_pause_begin(rt);
    rt->collection = c;
    verify_if_asked(rt, "before a GC");
}

/* Record the time since the previous phase ended as phase i's. */
static void phase_done(tn_collection *c, int i) {
    uint64_t now = tn_os_now_ns();
    c->record.phase_us[i] = (uint32_t)((now - c->phase_started_ns) / 1000);
    c->phase_started_ns = now;
}

static void restart(tenure_runtime *rt, tn_collection *c) {
    if (c->scratch_short)
        rt->stats.gc_scratch_shortfalls++;
    rt->collection = NULL;
    check_structures(rt);
    tn_mem_pause_end();
    TN_EMIT(rt, GCRestartEEBegin_V1, .ClrInstanceID = 0);
    tn_world_restart(rt);
    TN_EMIT(rt, GCRestartEEEnd_V1, .ClrInstanceID = 0);
    tn_trace_gc_end(rt);
    if (tn_finalize_queued_total(rt) != c->queued_before)
        tn_finalize_notify(rt);
}

/* Server GC: a gen0 GC after one that kept less than TN_PARALLEL_MIN_SURVIVED bytes marks on
 * the collecting thread alone: waking the helpers and meeting them at two joins costs more
 * than it saves when there is little to mark. (Measured: GCBench's gen0 GCs, which keep a few
 * hundred KiB, paused 1.7 times as long in total with 2 GC threads as with 1 when a woken
 * helper queued behind thread 0 and the rule was 4 MiB; with the helpers kept off thread 0's
 * CPU, team.h, 512 KiB gave the least pause on bench/threads_alloc and GCBench, and using the
 * team for every GC still cost more: docs/design/collector.md "Waiting inside a pause".)
 * Under GCStress every GC uses every GC thread, so that stress tests drive the parallel
 * marking. */
#define TN_PARALLEL_MIN_SURVIVED ((size_t)512 << 10)

static unsigned gc_threads_for(const tenure_runtime *rt, const tn_collection *c, unsigned available) {
    if (available <= 1 || c->condemned > 0 || rt->config.GCStress)
        return available;
    size_t survived = 0;
    for (int g = 0; g < TN_NGEN; g++)
        survived += rt->last.promoted[g];
    return survived < TN_PARALLEL_MIN_SURVIVED ? 1 : available;
}

/* Server GC: the phases after marking run on the team (gc/parts.c) when the team marked and
 * the condemned generations keep at least TN_PARALLEL_MIN_SURVIVED bytes (their walks are
 * over the survivors; each part costs a join), or under GCStress (so that stress tests drive
 * the parallel parts); else on thread 0 alone, the helpers waiting at the join after
 * marking until the GC's end. */
static bool parallel_after_mark(const tenure_runtime *rt, const tn_collection *c) {
    if (!rt->team.active)
        return false;
    if (rt->config.GCStress)
        return true;
    size_t live = 0;
    for (int g = 0; g < TN_NGEN; g++)
        live += c->record.promoted[g];
    return live >= TN_PARALLEL_MIN_SURVIVED;
}

/* From the plan to promotion: the plan's decisions, then the steps of the part table
 * (gc/parts.c tn_gc_parts: each phase's serial work on thread 0, its part, the work split by
 * region, on every GC thread of the collection; gc_internal.h, "the phases' parallel parts"). */
static void after_mark(tenure_runtime *rt, tn_collection *c) {
    tn_gc_plan(rt, c);
    c->parallel_after_mark = parallel_after_mark(rt, c);
    tn_gc_run_parts(rt, c, phase_done);
}

/* The phases of collection c, from the suspension to the restart. A background GC's final
 * pause (c->bgc_final) marks as a full GC, then goes on as a gen0 GC, leaving the older
 * generations to the BGC thread's sweep, which ends the BGC (gc/background.h). */
static void run_collection(tenure_runtime *rt, tn_collection *c) {
    c->gc_threads = gc_threads_for(rt, c, tn_gc_reserve_scratch(rt, c->condemned)); /* the pause allocates nothing */
    suspend(rt, c);
    start_gc(rt, c);
    tn_gc_team_wake(rt, tn_gc_helper, c->gc_threads); /* server GC's helpers (gc/team.h) */
    tn_gc_mark(rt, c);                                /* a BGC's final pause: its premarks first (B1) */
    if (c->bgc_final) {
        tn_bgc_final_marked(rt, c); /* gen1 and older unswept (H8); a gen0 GC from here */
        tn_gc_mark_older_cards(rt, c);
    }
    phase_done(c, TN_PHASE_MARK);
    after_mark(rt, c);
    tn_gc_team_finish(rt); /* the helpers leave their last join and park */
    set_condemned(rt, c->condemned, false);
    if (c->bgc_final) {
        tn_bgc_final_swept_young(rt, c);
        tn_gc_report_bgc_final(rt, c);
    } else {
        tn_gc_report(rt, c);
    }
    restart(rt, c);
    if (c->bgc_final) {
        uint64_t pause = tn_os_now_ns() - c->started_ns;
        tn_gc_count_pause(rt, pause);
        tn_bgc_sweep_start(rt, pause);
    }
}

/* One collection, on the calling thread, with rt->threads.lock held (T1: no other GC can start, and
 * every other thread that wants the lock waits SAFE): the phases in order, each a function
 * over the heap and the collection (docs/design/collector.md). */
static void collect_locked(tenure_runtime *rt, int generation, uint32_t reason, unsigned flags) {
    tn_assert_locked(rt);
    tn_collection c;
    begin_collection(rt, &c, generation, reason, flags);
    run_collection(rt, &c);
}


/* ---- background GC (gc/background.h): its two pauses ---- */

/* The initial pause: the roots' old targets premarked, the write watch on, GCStart Type 1. */
static void collect_bgc_initial(tenure_runtime *rt, uint32_t reason) {
    if (!tn_bgc_prepare(rt))
        return; /* (out of memory or no thread: the next gen2 GC blocks) */
    tn_collection c;
    begin_collection(rt, &c, TN_GEN2, reason, 0);
    suspend(rt, &c);
    rt->stats.gc_count++;
    TN_EMIT(rt, GCStart_V2, .Count = (uint32_t)rt->stats.gc_count, .Depth = TN_GEN2, .Reason = reason,
            .Type = TN_GC_TYPE_BACKGROUND, .ClientSequenceNumber = 0);
    tn_bgc_begin(rt, rt->stats.gc_count, reason);
    restart(rt, &c);
    rt->bgc.initial_pause_ns = tn_os_now_ns() - c.started_ns;
    tn_gc_count_pause(rt, rt->bgc.initial_pause_ns);
}

/* The final-mark pause (suspend reason 6), on the thread whose GC comes after the BGC marked
 * all it could, or that needs the BGC over: a full mark that starts from the BGC's marks
 * (mark.c), then a gen0 GC; with the BGC's GC number, no GCStart and no profiler walk of the
 * older generations (its gen0 GC is a profiler's gen0 GC). */
void tn_gc_collect_bgc_final(tenure_runtime *rt) {
    tn_assert_locked(rt);
    tn_collection c;
    begin_collection(rt, &c, TN_GEN2, rt->bgc.reason, 0);
    c.bgc_final = true;
    c.gc_type = TN_GC_TYPE_BACKGROUND;
    c.suspend_reason = TN_SUSPEND_FOR_GC_PREP;
    run_collection(rt, &c);
}

/* What tn_gc_choose (gc/choose.h) needs to know of the instance. A forked child's background GC
 * ends at this GC (finish_pending): it counts as over. */
static tn_gc_situation situation(const tenure_runtime *rt) {
    return (tn_gc_situation){.concurrent = rt->config.gcConcurrent != 0,
                             .compact_always = rt->config.GCCompactMode == 1,
                             .bgc_in_progress = tn_bgc_in_progress(rt) && !rt->bgc.finish_pending,
                             .bgc_marked = tn_bgc_marked(rt),
                             .bgc_no_thread = rt->bgc.forked_no_thread,
                             .young_budget_gen = tn_heap_young_budget_generation(rt)};
}

/* Carry out what tn_gc_choose chose for this request, in its order. */
static void collect_steered(tenure_runtime *rt, int generation, uint32_t reason, unsigned flags) {
    tn_gc_situation s = situation(rt);
    tn_gc_choice ch = tn_gc_choose(&s, generation, reason, flags);
    if (ch.final_pause)
        tn_bgc_final_pause(rt);
    if (rt->bgc.finish_pending) /* a forked child: no BGC thread to sweep */
        tn_bgc_finish(rt);
    if (ch.finish_bgc)
        tn_bgc_finish(rt);
    if (ch.generation == TN_GC_NONE)
        return; /* a background GC's final pause did it, or one runs already */
    collect_locked(rt, ch.generation, reason, flags);
    if (ch.start_bgc)
        collect_bgc_initial(rt, reason);
}

tenure_result tn_gc_collect(tenure_runtime *rt, int generation, uint32_t reason, unsigned flags) {
    TN_LOCKED(rt);
    if (rt->collection)
        return TENURE_STATE;
    /* the conservative scan of this thread starts here: the program's registers are saved in
     * this frame, and the collector's own deeper frames (and what they leave behind) are not
     * scanned */
    jmp_buf regs;
    __builtin_unwind_init();
    setjmp(regs);
    char *outer_scan_from = tn_roots_set_scan_from(rt, (char *)&regs);
    collect_steered(rt, generation, reason, flags);
    tn_roots_set_scan_from(rt, outer_scan_from);
    return TENURE_OK;
}

void tenure_get_last_gc_info(const tenure_runtime *crt, tenure_gc_info *info) {
    tenure_runtime *rt = (tenure_runtime *)crt;
    if (!rt || !info)
        return;
    TN_LOCKED(rt);
    const tn_gc_record *g = &rt->last;
    memset(info, 0, sizeof *info);
    info->index = g->index;
    info->generation = g->condemned;
    info->reason = g->reason;
    for (int i = 0; i < TN_NGEN; i++)
        info->compacted |= g->compacted[i] && tn_gen_condemned(i, g->condemned) ? 1 << i : 0;
    info->pause_ns = g->pause_ns;
    for (int i = 0; i < TN_NGEN; i++) {
        info->size_before[i] = g->size_before[i];
        info->size_after[i] = g->size_after[i];
        info->promoted[i] = g->promoted[i];
    }
    info->pinned_objects = g->pinned_objects;
    memcpy(info->phase_us, g->phase_us, sizeof info->phase_us);
    info->background = g->background;
}
_Static_assert(sizeof(((tenure_gc_info *)0)->phase_us) == sizeof(((tn_gc_record *)0)->phase_us) &&
                   sizeof(((tn_gc_record *)0)->phase_us) == TN_PHASES * sizeof(uint32_t),
               "tenure_gc_info.phase_us holds the record's phases, in its order");

void tenure_set_gc_callback(tenure_runtime *rt, tenure_gc_callback callback, void *context) {
    if (!rt)
        return;
    TN_LOCKED(rt);
    rt->gc_callback = callback;
    rt->gc_callback_context = context;
}

static tenure_result collect_induced(tenure_runtime *rt, int generation, uint32_t reason, unsigned flags) {
    TN_LOCKED(rt);
    if (rt->collection)
        return tn_api_fail(rt, TENURE_STATE, "tenure_collect",
                           "a collection is already in progress (called from a callback?)");
    if (flags & TENURE_COLLECT_OPTIMIZED) {
        if (tn_heap_gen0_allocated(rt) < tn_heap_budget(rt, TN_GEN0) / 2)
            return TENURE_OK; /* little to gain: declined, as GCCollectionMode.Optimized may */
    }
    return tn_gc_collect(rt, generation, reason, flags);
}

tenure_result tenure_collect(tenure_runtime *rt, int generation, unsigned flags) {
    static const char fn[] = "tenure_collect";
    if (!rt)
        return TENURE_INVALID_ARGUMENT;
    if (tn_cb_refused(rt, TN_OP_COLLECT, fn))
        return TENURE_STATE;
    if (generation < -1 || generation > TN_GEN2)
        return tn_api_fail(rt, TENURE_INVALID_ARGUMENT, fn, "generation %d is not -1, 0, 1 or 2", generation);
    if (flags & ~(unsigned)(TENURE_COLLECT_OPTIMIZED | TENURE_COLLECT_COMPACT | TENURE_COLLECT_NONBLOCKING |
                            TENURE_COLLECT_COMPACT_LOH | TENURE_COLLECT_AGGRESSIVE))
        return tn_api_fail(rt, TENURE_INVALID_ARGUMENT, fn, "unknown flags 0x%x", flags);
    if ((flags & TENURE_COLLECT_OPTIMIZED) && (flags & TENURE_COLLECT_AGGRESSIVE))
        return tn_api_fail(rt, TENURE_INVALID_ARGUMENT, fn, "OPTIMIZED and AGGRESSIVE contradict each other");
    if (flags & TENURE_COLLECT_AGGRESSIVE) {
        generation = TN_GEN2;
        flags |= TENURE_COLLECT_COMPACT | TENURE_COLLECT_COMPACT_LOH;
    }
    uint32_t reason = (flags & TENURE_COLLECT_AGGRESSIVE)  ? TN_REASON_INDUCED_AGGRESSIVE
                      : (flags & TENURE_COLLECT_OPTIMIZED) ? TN_REASON_INDUCED_NOFORCE
                      : (flags & TENURE_COLLECT_COMPACT)   ? TN_REASON_INDUCED_COMPACTING
                                                           : TN_REASON_INDUCED;
    tenure_result r = collect_induced(rt, generation, reason, flags);
    if (r == TENURE_OK)
        tn_finalize_safepoint(rt);
    return r;
}

/* bytes_allocated counts the calling thread's context to the byte, other threads' up to
 * their last slow path. */
void tenure_get_stats(const tenure_runtime *crt, tenure_stats *stats) {
    tenure_runtime *rt = (tenure_runtime *)crt;
    if (!rt || !stats)
        return;
    TN_LOCKED(rt);
    *stats = rt->stats;
    stats->bytes_allocated += tn_alloc_uncounted(rt);
    stats->committed_bytes = tn_heap_committed(rt);
    stats->background_gc_in_progress = tn_bgc_in_progress(rt);
}
