/*
 * Rebuild GCs from the event order, with the rules PerfView/TraceEvent use
 * (docs/contract/events.md, "Order"):
 *  - a GCStart belongs to the most recent GCSuspendEEBegin with Reason 1 (ForGC) or 6 (ForGCPrep);
 *  - a blocking GC is complete at the GCRestartEEEnd written by the thread that suspended, and
 *    only if its GCHeapStats came before; pause = RestartEEEnd time - SuspendEEBegin time;
 *  - a background GC is complete at its GCHeapStats; its pauses are summed.
 * GCs that started and never completed are counted as incomplete (the report is partial).
 */
#include "report.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MB 1000000.0

/* The one table of GC reasons (the .NET numbering). */
static const struct {
    uint32_t value;
    const char *name;
    int induced;
} reasons[] = {
    {0, "AllocSmall", 0},
    {1, "Induced", 1},
    {2, "LowMemory", 0},
    {3, "Empty", 0},
    {4, "AllocLarge", 0},
    {5, "OutOfSpaceSOH", 0},
    {6, "OutOfSpaceLOH", 0},
    {7, "InducedNoForce", 1},
    {8, "Stress", 0},
    {9, "InducedLowMemory", 1},
    {10, "InducedCompacting", 1},
    {11, "LowMemoryHost", 0},
    {12, "PMFullGC", 0},
    {13, "LowMemoryHostBlocking", 0},
    {14, "BGCTuningSOH", 0},
    {15, "BGCTuningLOH", 0},
    {16, "BGCStepping", 0},
    {17, "InducedAggressive", 1},
};

const char *reason_name(uint32_t reason) {
    for (size_t i = 0; i < sizeof reasons / sizeof reasons[0]; i++)
        if (reasons[i].value == reason)
            return reasons[i].name;
    return NULL;
}

int reason_is_induced(uint32_t reason) {
    for (size_t i = 0; i < sizeof reasons / sizeof reasons[0]; i++)
        if (reasons[i].value == reason)
            return reasons[i].induced;
    return 0;
}

void gc_gen_label(const tr_gc *gc, char *buf, size_t len) {
    char t = gc->type == TR_GC_BACKGROUND ? 'B' : gc->type == TR_GC_FOREGROUND ? 'F' : 'N';
    snprintf(buf, len, "%d%c%s", gc->gen, t, reason_is_induced(gc->reason) ? "I" : "");
}

void gc_reason_label(const tr_gc *gc, char *buf, size_t len) {
    const char *name = reason_name(gc->reason);
    if (name)
        snprintf(buf, len, "%s", name);
    else
        snprintf(buf, len, "Reason%u", gc->reason);
}

void model_init(tr_model *m) {
    memset(m, 0, sizeof *m);
    m->susp_gc = m->cur_blocking = m->cur_bgc = m->last_ended = -1;
    m->alloc_source = TR_ALLOC_NONE;
}

void model_free(tr_model *m) {
    free(m->gcs);
    m->gcs = NULL;
    m->n = m->cap = 0;
    free(m->details);
    m->details = NULL;
    m->ndetails = m->details_cap = 0;
    free(m->join_open);
    m->join_open = NULL;
    free(m->held);
    m->held = NULL;
    m->nheld = 0;
}

void set_free(tr_set *s) {
    for (size_t i = 0; i < s->n; i++)
        model_free(&s->m[i]);
    free(s->m);
    s->m = NULL;
    s->n = 0;
}

/* Linear search: a trace holds a few processes (TR_MAX_PROCESSES at most), and the reader
 * remembers the model of the previous event. Events without a vpid (tenure's own traces, one
 * instance per trace) all go to one model. */
tr_model *set_model_for(tr_set *s, const tr_event *ev) {
    uint32_t instance = ev->has_vpid ? ev->instance : 0;
    for (size_t i = 0; i < s->n; i++) {
        tr_model *m = &s->m[i];
        if (m->has_vpid == ev->has_vpid && m->vpid == ev->vpid && m->instance == instance)
            return m;
    }
    if (s->n >= TR_MAX_PROCESSES)
        return NULL;
    tr_model *grown = realloc(s->m, (s->n + 1) * sizeof *grown);
    if (!grown)
        return NULL;
    s->m = grown;
    tr_model *m = &s->m[s->n++];
    model_init(m);
    m->has_vpid = ev->has_vpid;
    m->vpid = ev->has_vpid ? ev->vpid : 0;
    m->instance = instance;
    return m;
}

static long new_gc(tr_model *m) {
    if (m->n == m->cap) {
        size_t cap = m->cap ? m->cap * 2 : 64;
        tr_gc *g = realloc(m->gcs, cap * sizeof *g);
        if (!g)
            return -1;
        m->gcs = g;
        m->cap = cap;
    }
    memset(&m->gcs[m->n], 0, sizeof m->gcs[m->n]);
    return (long)m->n++;
}

static long find_open_gc(const tr_model *m, uint64_t number) {
    /* the background GC in progress (any number of foreground GCs may run meanwhile), else the
     * most recent GC with that number that has not ended (looking back a little) */
    if (m->cur_bgc >= 0 && m->gcs[m->cur_bgc].number == number && !m->gcs[m->cur_bgc].has_end)
        return m->cur_bgc;
    for (size_t k = 0; k < m->n && k < 64; k++) {
        const tr_gc *g = &m->gcs[m->n - 1 - k];
        if (g->number == number && !g->has_end)
            return (long)(m->n - 1 - k);
    }
    return -1;
}

/* Timestamps come from the trace (any int64 with a crafted clock offset): differences and sums
 * saturate instead of overflowing. */
static int64_t ns_sub(int64_t a, int64_t b) {
    int64_t r;
    if (__builtin_sub_overflow(a, b, &r))
        r = b < 0 ? INT64_MAX : INT64_MIN;
    return r;
}

static int64_t ns_add(int64_t a, int64_t b) {
    int64_t r;
    if (__builtin_add_overflow(a, b, &r))
        r = b < 0 ? INT64_MIN : INT64_MAX;
    return r;
}

/* ---- server GC: joins and Steal ------------------------------------------------------- */

/* The GC a join or a mark event belongs to: the blocking (or foreground) GC in progress, else
 * the GC whose pause has not ended (its GCEnd came before the restart), else the background GC. */
static long current_gc(const tr_model *m) {
    if (m->cur_blocking >= 0)
        return m->cur_blocking;
    if (m->suspended && m->susp_gc >= 0)
        return m->susp_gc;
    return m->cur_bgc;
}

/* GC i's per-heap figures, made at its first use; NULL when out of memory. The pointer lasts
 * until the next call (the array may move). */
static tr_gc_detail *gc_detail(tr_model *m, long i) {
    tr_gc *g = &m->gcs[i];
    if (g->detail)
        return &m->details[g->detail - 1];
    if (m->ndetails == m->details_cap) {
        size_t cap = m->details_cap ? m->details_cap * 2 : 16;
        tr_gc_detail *d = realloc(m->details, cap * sizeof *d);
        if (!d)
            return NULL;
        m->details = d;
        m->details_cap = cap;
    }
    tr_gc_detail *d = &m->details[m->ndetails++];
    memset(d, 0, sizeof *d);
    g->detail = (uint32_t)m->ndetails;
    return d;
}

static void detail_heap(tr_gc_detail *d, uint64_t heap) {
    if (heap < TR_HEAPS_SHOWN && (int)heap >= d->heaps)
        d->heaps = (int)heap + 1;
}

static void detail_wait(tr_gc_detail *d, uint64_t heap, uint64_t id, int64_t wait) {
    if (heap < TR_HEAPS_SHOWN) {
        detail_heap(d, heap);
        d->wait_ns[heap] = ns_add(d->wait_ns[heap], wait);
    }
    int k = 0;
    while (k < d->nids && d->ids[k].id != (uint32_t)id)
        k++;
    if (k == d->nids) {
        if (k == TR_JOIN_IDS)
            return; /* in the GC's total only */
        d->nids++;
        d->ids[k].id = (uint32_t)id;
    }
    d->ids[k].waits++;
    d->ids[k].wait_ns = ns_add(d->ids[k].wait_ns, wait);
}

/* The open joins of every heap, made at the trace's first join (only server GC traces pay). */
static int join_state(tr_model *m) {
    if (m->join_open)
        return 0;
    m->join_open = malloc(TR_JOIN_HEAPS * sizeof *m->join_open);
    if (!m->join_open)
        return -1;
    for (size_t h = 0; h < TR_JOIN_HEAPS; h++)
        m->join_open[h] = (tr_join_open){.start_ns = 0, .gc = -1, .last_gc = -1, .id = 0};
    return 0;
}

/* A join's start: the GC counts the heap as one of its GC threads (restarts are no thread),
 * and a waiting join stays open until the same heap's end. */
static int join_start(tr_model *m, const tr_event *ev, long cur) {
    tr_gc *g = &m->gcs[cur];
    g->joins++;
    if (ev->join_type == TR_JOIN_RESTART)
        return 0;
    tr_join_open *o = &m->join_open[ev->join_heap];
    if (o->last_gc != cur) {
        o->last_gc = cur;
        g->gc_threads++;
        tr_gc_detail *d = gc_detail(m, cur);
        if (!d)
            return -1;
        detail_heap(d, ev->join_heap);
    }
    if (ev->join_type != TR_JOIN_WAIT)
        return 0;
    if (o->gc >= 0)
        m->joins_unpaired++; /* the previous wait never ended */
    o->gc = cur;
    o->start_ns = ev->ts_ns;
    o->id = ev->join_id;
    return 0;
}

/* A waiting join's end: its wait goes to the GC its start was in (a helper may write its end
 * after thread 0's GCEnd). */
static int join_end(tr_model *m, const tr_event *ev) {
    tr_join_open *o = &m->join_open[ev->join_heap];
    if (o->gc < 0 || o->id != ev->join_id) {
        m->joins_unpaired++;
        o->gc = -1;
        return 0;
    }
    long i = o->gc;
    o->gc = -1;
    int64_t wait = ns_sub(ev->ts_ns, o->start_ns);
    if (wait < 0)
        wait = 0;
    tr_gc *g = &m->gcs[i];
    g->joins++;
    g->join_wait_ns = ns_add(g->join_wait_ns, wait);
    tr_gc_detail *d = gc_detail(m, i);
    if (!d)
        return -1;
    detail_wait(d, ev->join_heap, ev->join_id, wait);
    return 0;
}

/* A join in GC `cur` (-1: none); a waiting join's end goes to its start's GC. */
static int join_apply(tr_model *m, const tr_event *ev, long cur) {
    int waiting_end = ev->join_time == TR_JOIN_TIME_END && ev->join_type == TR_JOIN_WAIT;
    if (ev->join_type != TR_JOIN_RESTART && ev->join_heap >= TR_JOIN_HEAPS) {
        m->joins_unpaired += waiting_end || (ev->join_time == TR_JOIN_TIME_START && ev->join_type == TR_JOIN_WAIT);
        return 0;
    }
    if (waiting_end)
        return join_end(m, ev);
    if (cur < 0) {
        m->joins_outside++;
        return 0;
    }
    if (ev->join_time == TR_JOIN_TIME_START)
        return join_start(m, ev, cur);
    m->gcs[cur].joins++; /* a restart's end */
    return 0;
}

/* The joins held since the suspension began go to GC `cur` (-1: outside any GC), in order. */
static int release_held(tr_model *m, long cur) {
    size_t n = m->nheld;
    m->nheld = 0;
    for (size_t k = 0; k < n; k++) {
        const tr_join_held *h = &m->held[k];
        tr_event ev = {.kind = TR_EV_JOIN,
                       .ts_ns = h->ts_ns,
                       .join_heap = h->heap,
                       .join_time = h->time,
                       .join_type = h->type,
                       .join_id = h->id};
        if (join_apply(m, &ev, cur) != 0)
            return -1;
    }
    return 0;
}

/* .NET's server GC threads meet at their first join (generation_determined) before heap 0
 * writes GCStart: joins during a GC's suspension before its GCStart are held, then given to the
 * GC that starts (or, when the pause ends without one, to the background GC or to none). */
static int hold_join(tr_model *m, const tr_event *ev) {
    if (!m->held) {
        m->held = malloc(TR_JOIN_HELD * sizeof *m->held);
        if (!m->held)
            return -1;
    }
    if (m->nheld == TR_JOIN_HELD) {
        m->joins_outside++; /* more than a GC's start could hold */
        return 0;
    }
    m->held[m->nheld++] = (tr_join_held){.ts_ns = ev->ts_ns,
                                         .heap = ev->join_heap,
                                         .time = ev->join_time,
                                         .type = ev->join_type,
                                         .id = ev->join_id};
    return 0;
}

static int join_event(tr_model *m, const tr_event *ev) {
    m->join_events++;
    if (join_state(m) != 0)
        return -1;
    if (m->suspended && m->susp_gc < 0 && m->cur_blocking < 0)
        return hold_join(m, ev);
    return join_apply(m, ev, current_gc(m));
}

static int steal_event(tr_model *m, const tr_event *ev) {
    long cur = current_gc(m);
    if (ev->mark_type != TR_MARK_STEAL || cur < 0)
        return 0;
    tr_gc *g = &m->gcs[cur];
    g->steal_bytes += ev->mark_bytes;
    tr_gc_detail *d = gc_detail(m, cur);
    if (!d)
        return -1;
    detail_heap(d, ev->mark_heap);
    if (ev->mark_heap < TR_HEAPS_SHOWN)
        d->steal_bytes[ev->mark_heap] += ev->mark_bytes;
    return 0;
}

/* ---- per-heap history (GCPerHeapHistory_V3, one per heap and GC) ------------------------ */

/* One heap's records reduced to the figures kept per heap; the condemned generations are those
 * of the survival rate (model_finish: LOH and POH with gen2). */
static void hist_add(tr_heap_hist *h, const tr_phh_gen *phh, int count, int gen) {
    for (int k = 0; k < count && k < TR_GENS; k++) {
        const tr_phh_gen *p = &phh[k];
        h->size_before += p->size_before;
        h->size_after += p->size_after;
        h->free_after += p->free_list_after + p->free_obj_after;
        if (k <= gen || gen == TR_GEN2) {
            uint64_t free_before = p->free_list_before + p->free_obj_before;
            h->obj_before += p->size_before > free_before ? p->size_before - free_before : 0;
            h->survived += p->pinned_surv + p->non_pinned_surv;
        }
    }
    if (count > 0) {
        h->gen0_before += phh[0].size_before;
        h->gen0_budget += phh[0].new_allocation;
    }
}

/* GC i's per-heap figures from now on. A GC of one heap keeps only its sums (a workstation
 * trace pays no detail); when a second heap (or NumHeaps > 1) shows it has several, the one
 * heap seen so far is recovered from the sums, which then hold that heap alone. */
static tr_gc_detail *keep_heaps(tr_model *m, long i) {
    tr_gc_detail *d = gc_detail(m, i);
    const tr_gc *g = &m->gcs[i];
    if (!d || d->hist_heaps || !g->phh_seen)
        return d;
    int h = __builtin_ctzll(g->phh_seen); /* the one bit: a second heap is kept as it comes */
    memset(&d->hist[h], 0, sizeof d->hist[h]);
    hist_add(&d->hist[h], g->phh, TR_GENS, g->gen);
    d->hist_heaps = h + 1;
    return d;
}

static int global_heaps(tr_model *m, long i, uint64_t num_heaps) {
    tr_gc *g = &m->gcs[i];
    g->num_heaps = num_heaps < TR_MAX_HEAPS ? (int)num_heaps : TR_MAX_HEAPS;
    return g->num_heaps > 1 && !keep_heaps(m, i) ? -1 : 0;
}

static void phh_sum(tr_gc *g, const tr_event *ev) {
    for (int k = 0; k < ev->phh_count && k < TR_GENS; k++) {
        tr_phh_gen *d = &g->phh[k];
        const tr_phh_gen *s = &ev->phh[k];
        d->size_before += s->size_before;
        d->free_list_before += s->free_list_before;
        d->free_obj_before += s->free_obj_before;
        d->size_after += s->size_after;
        d->free_list_after += s->free_list_after;
        d->free_obj_after += s->free_obj_after;
        d->pinned_surv += s->pinned_surv;
        d->non_pinned_surv += s->non_pinned_surv;
        d->new_allocation += s->new_allocation;
    }
}

/* A heap's history: summed into the GC's figures and, in a GC of several heaps, kept apart. A
 * HeapIndex past the bound or one the GC already has is a damaged event (a heap counted twice
 * would inflate every sum): left out of every figure and counted, the report partial. */
static int heap_history(tr_model *m, const tr_event *ev) {
    long i = m->cur_blocking >= 0 ? m->cur_blocking : m->cur_bgc;
    if (i < 0)
        return 0;
    tr_gc *g = &m->gcs[i];
    if (ev->heap_index >= TR_MAX_HEAPS || (g->phh_seen >> ev->heap_index & 1)) {
        m->bad_heap_hist++;
        return 0;
    }
    tr_gc_detail *d = NULL;
    if (g->phh_seen || g->num_heaps > 1) {
        d = keep_heaps(m, i);
        if (!d)
            return -1;
        g = &m->gcs[i];
        tr_heap_hist *h = &d->hist[ev->heap_index];
        memset(h, 0, sizeof *h);
        hist_add(h, ev->phh, ev->phh_count, g->gen);
        if ((int)ev->heap_index >= d->hist_heaps)
            d->hist_heaps = (int)ev->heap_index + 1;
    }
    g->phh_seen |= 1ull << ev->heap_index;
    g->phh_heaps++;
    phh_sum(g, ev);
    if (ev->phh_count > 0) { /* TraceEvent's SurvRate of the heap's gen0: a whole percentage */
        const tr_phh_gen *p = &ev->phh[0];
        double obj = (double)p->size_before - (double)p->free_list_before - (double)p->free_obj_before;
        if (obj != 0)
            g->surv_rate0_sum += (int64_t)((double)(p->pinned_surv + p->non_pinned_surv) * 100.0 / obj);
    }
    return 0;
}

const tr_gc_detail *gc_heap_hist(const tr_model *m, const tr_gc *g) {
    if (!g->detail || g->detail > m->ndetails)
        return NULL;
    const tr_gc_detail *d = &m->details[g->detail - 1];
    return d->hist_heaps > 0 ? d : NULL;
}

static void add_bgc_pause(tr_model *m, int64_t pause) {
    if (m->cur_bgc >= 0)
        m->gcs[m->cur_bgc].pause_ns = ns_add(m->gcs[m->cur_bgc].pause_ns, pause);
}

/* ---- the GC's events, one handler each ---------------------------------------------------- */

static void on_suspend_begin(tr_model *m, const tr_event *ev) {
    if (ev->reason != TR_SUSPEND_FOR_GC && ev->reason != TR_SUSPEND_FOR_GC_PREP)
        return;
    if (m->suspended)
        m->nested_suspends++;
    m->joins_outside += m->nheld; /* a suspension that began no GC */
    m->nheld = 0;
    m->suspended = 1;
    m->susp_begin = ev->ts_ns;
    m->has_susp_end = 0;
    m->susp_tid = ev->tid;
    m->susp_reason = (uint32_t)ev->reason;
    m->susp_gc = -1;
}

static void on_suspend_end(tr_model *m, const tr_event *ev) {
    if (m->suspended && ev->tid == m->susp_tid && !m->has_susp_end) {
        m->susp_end = ev->ts_ns;
        m->has_susp_end = 1;
    }
}

static int on_gc_start(tr_model *m, const tr_event *ev) {
    long i = new_gc(m);
    if (i < 0)
        return -1;
    tr_gc *g = &m->gcs[i];
    g->number = (uint32_t)ev->count;
    g->gen = ev->depth <= 2 ? (int)ev->depth : 2;
    g->reason = (uint32_t)ev->reason;
    g->type = ev->type <= TR_GC_FOREGROUND ? (uint32_t)ev->type : TR_GC_BLOCKING;
    g->start_ns = ev->ts_ns;
    g->suspend_begin_ns = ev->ts_ns; /* no suspension seen (the trace began mid-GC): from GCStart */
    if (m->suspended && m->susp_gc < 0) {
        g->has_suspend = 1;
        g->suspend_begin_ns = m->susp_begin;
        g->has_suspend_end = m->has_susp_end;
        g->suspend_end_ns = m->susp_end;
        m->susp_gc = i;
        if (m->nheld && release_held(m, i) != 0)
            return -1;
    }
    memcpy(g->tick_alloc, m->pending_ticks, sizeof g->tick_alloc);
    memset(m->pending_ticks, 0, sizeof m->pending_ticks);
    if (g->type == TR_GC_BACKGROUND)
        m->cur_bgc = i;
    else
        m->cur_blocking = i;
    return 0;
}

static void on_gc_end(tr_model *m, const tr_event *ev) {
    long i = find_open_gc(m, ev->count);
    if (i < 0)
        return;
    tr_gc *g = &m->gcs[i];
    g->has_end = 1;
    g->end_ns = ev->ts_ns;
    m->last_ended = i;
    if (m->cur_blocking == i)
        m->cur_blocking = -1;
}

static void on_heap_stats(tr_model *m, const tr_event *ev) {
    /* the ticks since the previous GCHeapStats, whichever GC it was (TraceEvent's
     * AllocedSinceLastGCBasedOnAllocTickMB); counted again from here even without a GC */
    uint64_t hs_ticks = m->ticks_since_stats;
    m->ticks_since_stats = 0;
    long i = m->last_ended;
    if (i < 0 || m->gcs[i].has_heap_stats)
        return;
    tr_gc *g = &m->gcs[i];
    g->has_heap_stats = 1;
    g->tick_alloc0_stats = hs_ticks;
    memcpy(g->gen_size_after, ev->gen_size, sizeof g->gen_size_after);
    memcpy(g->promoted, ev->promoted, sizeof g->promoted);
    g->fin_promoted_count = ev->fin_promoted_count;
    g->fin_promoted_size = ev->fin_promoted_size;
    g->pinned_objects = ev->pinned_objects;
    g->handles = ev->handles;
    m->last_ended = -1;
    if (g->type == TR_GC_BACKGROUND) { /* a background GC is complete at its heap stats */
        g->complete = 1;
        g->restart_ns = ev->ts_ns;
        if (m->cur_bgc == i)
            m->cur_bgc = -1;
    }
}

static int on_global_history(tr_model *m, const tr_event *ev) {
    long i = m->cur_blocking >= 0 ? m->cur_blocking : m->cur_bgc;
    if (i < 0)
        return 0;
    if (global_heaps(m, i, ev->num_heaps) != 0)
        return -1;
    if (ev->phase_count == 0)
        return 0;
    tr_gc *g = &m->gcs[i];
    g->phase_count = ev->phase_count;
    memcpy(g->phase_us, ev->phase_us, sizeof g->phase_us);
    return 0;
}

/* A pause that ended: a blocking GC is complete at the restart written by the thread that
 * suspended (if its GCHeapStats came); a background GC's pauses (its thread restarts the
 * mutators itself) add up. */
static void end_pause(tr_model *m, const tr_event *ev, long si) {
    int64_t pause = ns_sub(ev->ts_ns, m->susp_begin);
    if (pause < 0)
        pause = 0;
    int64_t susp = m->has_susp_end ? ns_sub(m->susp_end, m->susp_begin) : 0;
    if (susp < 0)
        susp = 0;
    if (si >= 0 && m->gcs[si].type == TR_GC_BACKGROUND) {
        m->gcs[si].pause_ns = ns_add(m->gcs[si].pause_ns, pause);
        m->gcs[si].bgc_suspend_ns = ns_add(m->gcs[si].bgc_suspend_ns, susp);
    } else if (si < 0 && m->susp_reason == TR_SUSPEND_FOR_GC_PREP) {
        add_bgc_pause(m, pause);
        if (m->cur_bgc >= 0)
            m->gcs[m->cur_bgc].bgc_suspend_ns = ns_add(m->gcs[m->cur_bgc].bgc_suspend_ns, susp);
    } else if (si >= 0) {
        tr_gc *g = &m->gcs[si];
        if (g->has_heap_stats && !g->complete) {
            g->complete = 1;
            g->pause_ns = pause;
            g->restart_ns = ev->ts_ns;
        }
    }
}

static int on_restart_end(tr_model *m, const tr_event *ev) {
    if (!m->suspended)
        return 0;
    long si = m->susp_gc;
    int background = m->susp_reason == TR_SUSPEND_FOR_GC_PREP || (si >= 0 && m->gcs[si].type == TR_GC_BACKGROUND);
    if (ev->tid != m->susp_tid && !background)
        return 0;
    end_pause(m, ev, si);
    if (si < 0 && m->nheld && release_held(m, m->cur_blocking >= 0 ? m->cur_blocking : m->cur_bgc) != 0)
        return -1;
    m->suspended = 0;
    m->susp_gc = -1;
    return 0;
}

static void on_allocation_tick(tr_model *m, const tr_event *ev) {
    unsigned k = ev->alloc_kind < TR_ALLOC_KINDS ? (unsigned)ev->alloc_kind : TR_ALLOC_SMALL;
    m->tick_events++;
    m->pending_ticks[k] += ev->alloc_amount;
    if (k == TR_ALLOC_SMALL)
        m->ticks_since_stats += ev->alloc_amount;
    m->total_ticks[k] += ev->alloc_amount;
    m->have_ticks = 1;
}

static void note_time(tr_model *m, int64_t ts) {
    if (!m->have_time) {
        m->first_ns = m->last_ns = ts;
        m->have_time = 1;
    }
    if (ts < m->first_ns)
        m->first_ns = ts;
    if (ts > m->last_ns)
        m->last_ns = ts;
}

int model_event(tr_model *m, const tr_event *ev) {
    m->events++;
    note_time(m, ev->ts_ns);
    switch (ev->kind) {
    case TR_EV_SUSPEND_EE_BEGIN: on_suspend_begin(m, ev); return 0;
    case TR_EV_SUSPEND_EE_END: on_suspend_end(m, ev); return 0;
    case TR_EV_GC_START: return on_gc_start(m, ev);
    case TR_EV_GC_END: on_gc_end(m, ev); return 0;
    case TR_EV_HEAP_STATS: on_heap_stats(m, ev); return 0;
    case TR_EV_PER_HEAP_HISTORY: return heap_history(m, ev);
    case TR_EV_GLOBAL_HEAP_HISTORY: return on_global_history(m, ev);
    case TR_EV_RESTART_EE_END: return on_restart_end(m, ev);
    case TR_EV_ALLOCATION_TICK: on_allocation_tick(m, ev); return 0;
    case TR_EV_JOIN: return join_event(m, ev);
    case TR_EV_MARK_WITH_TYPE: return steal_event(m, ev);
    default: return 0;
    }
}

static double ns_ms(int64_t ns) { return (double)ns / 1e6; }

/* The heap size before a GC (MB): its per-heap histories' SizeBefore over all generations, 0
 * without them (TraceGC.HeapSizeBeforeMB) */
static double phh_before_mb(const tr_gc *g) {
    uint64_t before = 0;
    for (int k = 0; k < TR_GENS && g->phh_heaps; k++)
        before += g->phh[k].size_before;
    return (double)before / MB;
}

/* A generation's object bytes before and after a GC: its size less its free list and free
 * objects (TraceEvent's ObjSpaceBefore, ObjSizeAfter) */
static double obj_before(const tr_phh_gen *p) {
    return (double)p->size_before - (double)p->free_list_before - (double)p->free_obj_before;
}

static double obj_after(const tr_phh_gen *p) {
    return (double)p->size_after - (double)p->free_list_after - (double)p->free_obj_after;
}

/* Only the GCs that completed stay; those that did not are counted. */
static void keep_completed(tr_model *m) {
    size_t w = 0;
    for (size_t i = 0; i < m->n; i++)
        if (m->gcs[i].complete)
            m->gcs[w++] = m->gcs[i];
    m->incomplete = m->n - w;
    m->n = m->completed = w;
}

/* Reading is over: a join still open has no end, held joins belong to no GC. */
static void close_joins(tr_model *m) {
    if (m->join_open)
        for (size_t h = 0; h < TR_JOIN_HEAPS; h++)
            m->joins_unpaired += m->join_open[h].gc >= 0;
    free(m->join_open);
    m->join_open = NULL;
    m->joins_outside += m->nheld;
    free(m->held);
    m->held = NULL;
    m->nheld = 0;
}

static void gc_times(const tr_model *m, tr_gc *g) {
    /* from the trace's first event, as TraceEvent's TimeStampRelativeMSec */
    int64_t origin = m->have_origin ? m->origin_ns : m->first_ns;
    g->start_ms = ns_ms(ns_sub(g->start_ns, origin));
    g->end_ms = ns_ms(ns_sub(g->restart_ns, origin));
    /* a background GC's: every suspension of it, summed (TraceGC.SuspendDurationMSec) */
    g->suspend_ms = g->type == TR_GC_BACKGROUND ? ns_ms(g->bgc_suspend_ns)
                    : g->has_suspend_end        ? ns_ms(ns_sub(g->suspend_end_ns, g->suspend_begin_ns))
                                                : 0;
    if (g->suspend_ms < 0)
        g->suspend_ms = 0;
    g->pause_ms = ns_ms(g->pause_ns);
    g->join_wait_ms = ns_ms(g->join_wait_ns);
}

static void gc_sizes(tr_gc *g) {
    uint64_t after = 0, promoted = 0;
    for (int k = 0; k < TR_GENS; k++) {
        after += g->gen_size_after[k];
        promoted += g->promoted[k];
    }
    g->after_mb = (double)after / MB;
    g->promoted_mb = (double)promoted / MB;
    g->fin_surv_mb = (double)g->fin_promoted_size / MB;
}

/* gen0 allocated since the previous GC, as TraceGC.GetUserAllocated(Gen0) (PerfView's "Gen0
 * Alloc MB"): a background GC's from the allocation ticks; else, when this GC and the previous
 * one have per-heap histories, gen0's objects before this GC less the previous GC's objects
 * after it, summed over the heaps (negative when the previous GC left more than this one
 * found); else the small-object ticks between the previous GCHeapStats and this GC's (0 without
 * them). A background GC still running (its histories come at its end) has none yet when
 * TraceEvent takes this figure; and TraceEvent gives a foreground GC's GCHeapStats (so its
 * ticks) to the background GC in progress: a foreground GC's tick figure is 0. */
static void gc_gen0_alloc(tr_gc *g, const tr_gc *prev) {
    int prev_running = prev && prev->type == TR_GC_BACKGROUND && prev->restart_ns > g->start_ns;
    g->alloc_from_sizes = g->type != TR_GC_BACKGROUND && g->phh_heaps && prev && prev->phh_heaps && !prev_running;
    if (g->alloc_from_sizes)
        g->alloc_gen0_mb = (obj_before(&g->phh[TR_GEN0]) - obj_after(&prev->phh[TR_GEN0])) / MB;
    else
        g->alloc_gen0_mb = g->type == TR_GC_FOREGROUND ? 0 : (double)g->tick_alloc0_stats / MB;
}

/* The heap size before the GC: its per-heap histories' sizes, else the previous size after plus
 * what was allocated since. A background GC's peak, as PerfView's: also the heap size before of
 * every GC whose pause began before the background GC's end, taken as its first pause's start
 * plus its GCStart..GCEnd duration (TraceGC.HeapSizePeakMB). */
static void gc_peak(const tr_model *m, size_t i, int have_ticks, const tr_gc *prev) {
    tr_gc *g = &m->gcs[i];
    if (g->phh_heaps) {
        g->peak_mb = phh_before_mb(g);
    } else {
        double a = isnan(g->alloc_gen0_mb) ? 0 : g->alloc_gen0_mb;
        if (have_ticks)
            a = (double)(g->tick_alloc[TR_ALLOC_SMALL] + g->tick_alloc[TR_ALLOC_LARGE] +
                         g->tick_alloc[TR_ALLOC_PINNED]) /
                MB;
        g->peak_mb = (prev ? prev->after_mb : 0) + a;
        if (g->peak_mb < g->after_mb)
            g->peak_mb = g->after_mb;
    }
    if (g->type != TR_GC_BACKGROUND || !g->phh_heaps || !g->has_end)
        return;
    int64_t bgc_end = g->suspend_begin_ns + ns_sub(g->end_ns, g->start_ns);
    for (size_t j = i + 1; j < m->n && m->gcs[j].suspend_begin_ns <= bgc_end; j++) {
        double before = phh_before_mb(&m->gcs[j]);
        if (before > g->peak_mb)
            g->peak_mb = before;
    }
}

/* gen0's survival and fragmentation as PerfView's GCStats shows them:
 * TraceGC.SurvivalPercent(Gen0), the heaps' whole-percent SurvRate averaged in whole numbers (0
 * without per-heap histories), and GenFragmentationPercent(Gen0), gen0's free list and free
 * objects after the GC over its size after (NaN without histories); and tenure-report's own
 * survival of the condemned generations (LOH and POH with gen2). */
static void gc_survival(tr_gc *g) {
    g->survival_pct = g->phh_heaps ? (double)(g->surv_rate0_sum / g->phh_heaps) : 0;
    g->frag_pct = NAN;
    g->condemned_surv_pct = NAN;
    if (!g->phh_heaps)
        return;
    double before = 0, surv = 0;
    for (int k = 0; k < TR_GENS; k++) {
        const tr_phh_gen *c = &g->phh[k];
        if (k <= g->gen || g->gen == TR_GEN2) {
            double ob = obj_before(c);
            before += ob > 0 ? ob : 0;
            surv += (double)(c->pinned_surv + c->non_pinned_surv);
        }
    }
    if (before > 0)
        g->condemned_surv_pct = 100.0 * surv / before;
    const tr_phh_gen *p = &g->phh[0];
    double free_after = (double)(p->free_list_after + p->free_obj_after);
    g->frag_pct = p->size_after ? 100.0 * free_after / (double)p->size_after : free_after ? INFINITY : NAN;
}

/* % of the time since the previous GC ended (or since the trace began) spent paused */
static void gc_pause_pct(const tr_model *m, tr_gc *g, const tr_gc *prev) {
    int64_t since = ns_sub(g->restart_ns, prev ? prev->restart_ns : m->first_ns);
    g->pause_pct = since > 0 ? 100.0 * (double)g->pause_ns / (double)since : NAN;
    if (g->pause_pct > 100.0)
        g->pause_pct = 100.0;
}

/* ---- allocation --------------------------------------------------------------------------- */

const char *tr_alloc_source_name(tr_alloc_source s) {
    return s == TR_ALLOC_TICKS ? "ticks" : s == TR_ALLOC_SIZES ? "sizes" : "none";
}

const char *tr_alloc_source_text(tr_alloc_source s) {
    return s == TR_ALLOC_TICKS   ? "GCAllocationTick: one a thread every ~100 KB"
           : s == TR_ALLOC_SIZES ? "object bytes at each GC, up to the last one"
                                 : "no GCAllocationTick or GCPerHeapHistory events";
}

/* The generations a program allocates in: gen0, LOH and POH (gen1 and gen2 only receive
 * survivors). */
static int allocated_in(int k) { return k == TR_GEN0 || k == TR_LOH || k == TR_POH; }

/* Bytes allocated since the GC before (prev; NULL: since the trace began, on an empty heap), from
 * the per-heap histories: each allocating generation's object bytes before this GC less what the
 * GC before left in it. Object bytes, not sizes: an allocation into a free gap (between pinned
 * plugs, or from the LOH/POH free lists) makes no generation bigger, only its free space smaller. */
static double alloc_from_sizes(const tr_gc *g, const tr_gc *prev) {
    double bytes = 0;
    for (int k = 0; k < TR_GENS; k++)
        if (allocated_in(k))
            bytes += obj_before(&g->phh[k]) - (prev ? obj_after(&prev->phh[k]) : 0);
    return bytes;
}

/* The first GC of a trace found gen1 and gen2 empty: the process's first GC, so everything in
 * the heap was allocated since it began (a trace that began later, as an LTTng session of a
 * running .NET process, has no such start: its first GC's allocation is unknown). */
static int first_on_new_heap(const tr_gc *g) {
    return g->phh_heaps && obj_before(&g->phh[TR_GEN1]) <= 0 && obj_before(&g->phh[TR_GEN2]) <= 0;
}

/* What GC g's allocation since the GC before is known from: the ticks of a trace that has them
 * (every GC's from its start to the next one's), else the sizes when g and the GC before (or,
 * for the first GC, g alone) have per-heap histories and no background GC ran between. */
static void gc_allocated(const tr_model *m, tr_gc *g, const tr_gc *prev) {
    g->alloc_source = TR_ALLOC_NONE;
    g->alloc_mb = NAN;
    if (m->have_ticks) {
        uint64_t ticks = g->tick_alloc[TR_ALLOC_SMALL] + g->tick_alloc[TR_ALLOC_LARGE] + g->tick_alloc[TR_ALLOC_PINNED];
        g->alloc_source = TR_ALLOC_TICKS;
        g->alloc_mb = (double)ticks / MB;
    } else if (g->phh_heaps && (prev ? prev->phh_heaps : first_on_new_heap(g)) && g->type != TR_GC_BACKGROUND &&
               (!prev || prev->type != TR_GC_BACKGROUND)) {
        g->alloc_source = TR_ALLOC_SIZES;
        g->alloc_mb = alloc_from_sizes(g, prev) / MB;
    }
}

/* The trace's total: every tick (sampled, so estimated); else the GCs' sizes summed, estimated
 * when a GC's could not be had (no histories, a background GC). */
static void model_allocation(tr_model *m) {
    m->alloc_source = TR_ALLOC_NONE;
    m->alloc_estimated = 0;
    m->total_alloc_mb = 0;
    if (m->have_ticks) {
        m->alloc_source = TR_ALLOC_TICKS;
        m->alloc_estimated = 1;
        m->total_alloc_mb = (double)(m->total_ticks[TR_ALLOC_SMALL] + m->total_ticks[TR_ALLOC_LARGE] +
                                     m->total_ticks[TR_ALLOC_PINNED]) /
                            MB;
        return;
    }
    for (size_t i = 0; i < m->n; i++) {
        const tr_gc *g = &m->gcs[i];
        if (g->alloc_source == TR_ALLOC_SIZES) {
            m->alloc_source = TR_ALLOC_SIZES;
            m->total_alloc_mb += g->alloc_mb;
        } else {
            m->alloc_estimated = 1;
        }
    }
}

static void add_to_rollup(tr_gen_rollup *ru, const tr_gc *g) {
    ru->count++;
    if (reason_is_induced(g->reason))
        ru->induced++;
    if (g->pause_ms > ru->max_pause_ms)
        ru->max_pause_ms = g->pause_ms;
    ru->total_pause_ms += g->pause_ms;
    if (g->peak_mb > ru->peak_mb)
        ru->peak_mb = g->peak_mb;
    if (!isnan(g->alloc_mb))
        ru->alloc_mb += g->alloc_mb;
    ru->promoted_mb += g->promoted_mb;
}

static void add_to_totals(tr_model *m, const tr_gc *g) {
    m->gc_by_gen[g->gen]++;
    m->total_pause_ms += g->pause_ms;
    if (g->peak_mb > m->max_heap_mb)
        m->max_heap_mb = g->peak_mb;
    if (g->after_mb > m->max_heap_mb)
        m->max_heap_mb = g->after_mb;
    if (g->after_mb > m->max_after_mb)
        m->max_after_mb = g->after_mb;
    add_to_rollup(&m->rollup[g->gen], g);
    add_to_rollup(&m->rollup[TR_ROLLUP_ALL], g);
    m->total_join_wait_ms += g->join_wait_ms;
    m->thread_pause_ms += g->pause_ms * g->gc_threads;
    if (g->gc_threads > m->max_gc_threads)
        m->max_gc_threads = g->gc_threads;
}

static void reset_totals(tr_model *m) {
    memset(m->rollup, 0, sizeof m->rollup);
    memset(m->gc_by_gen, 0, sizeof m->gc_by_gen);
    m->total_pause_ms = m->max_heap_mb = m->max_after_mb = 0;
    m->total_join_wait_ms = m->thread_pause_ms = 0;
    m->max_gc_threads = 0;
}

static void finish_totals(tr_model *m) {
    for (int r = 0; r <= TR_ROLLUP_ALL; r++)
        if (m->rollup[r].count)
            m->rollup[r].mean_pause_ms = m->rollup[r].total_pause_ms / m->rollup[r].count;
    m->duration_ms = m->have_time ? ns_ms(ns_sub(m->last_ns, m->first_ns)) : 0;
    m->pause_pct = m->duration_ms > 0 ? 100.0 * m->total_pause_ms / m->duration_ms : 0;
    m->join_pct_pause = m->total_pause_ms > 0 ? 100.0 * m->total_join_wait_ms / m->total_pause_ms : NAN;
    m->join_pct_thread_time = m->thread_pause_ms > 0 ? 100.0 * m->total_join_wait_ms / m->thread_pause_ms : NAN;
}

void model_finish(tr_model *m) {
    keep_completed(m);
    close_joins(m);
    reset_totals(m);
    const tr_gc *prev = NULL;
    for (size_t i = 0; i < m->n; i++) {
        tr_gc *g = &m->gcs[i];
        gc_times(m, g);
        gc_sizes(g);
        gc_gen0_alloc(g, prev);
        gc_allocated(m, g, prev);
        gc_peak(m, i, m->have_ticks, prev);
        gc_survival(g);
        gc_pause_pct(m, g, prev);
        add_to_totals(m, g);
        prev = g;
    }
    model_allocation(m);
    finish_totals(m);
}

/* What a report that read to the end still lacks, in res->error ("; " between). */
static void add_reason(tr_result *res, const char *fmt, unsigned long long n, const char *more) {
    size_t len = strlen(res->error);
    if (len + 3 >= sizeof res->error)
        return;
    if (len)
        len += (size_t)snprintf(res->error + len, sizeof res->error - len, "; ");
    if (len < sizeof res->error)
        snprintf(res->error + len, sizeof res->error - len, fmt, n, more);
}

void model_status(const tr_model *m, tr_result *res) {
    if (res->status == TR_UNREADABLE)
        return;
    if (!m->incomplete && !m->discarded_events && !m->discarded_packets && !m->cut_packets && !m->bad_payloads &&
        !m->bad_heap_hist)
        return;
    if (res->status == TR_FULL)
        res->error[0] = '\0';
    res->status = TR_PARTIAL;
    if (m->cut_packets)
        add_reason(res, "%llu cut packet(s) left out: %s", m->cut_packets, m->cut_note);
    if (m->discarded_packets)
        add_reason(res, "%llu packet(s) lost while tracing%s", m->discarded_packets, "");
    if (m->discarded_events)
        add_reason(res, "%llu event(s) discarded while tracing%s", m->discarded_events, "");
    if (m->incomplete)
        add_reason(res, "%llu GC(s) did not complete in the trace%s", m->incomplete, "");
    if (m->bad_payloads)
        add_reason(res, "%llu GC event(s) with a malformed packed payload left out, the first: %s", m->bad_payloads,
                   m->bad_note);
    if (m->bad_heap_hist)
        add_reason(res, "%llu GCPerHeapHistory event(s) with a HeapIndex past 63 or repeated in a GC left out%s",
                   m->bad_heap_hist, "");
}

/* ---- pauses ------------------------------------------------------------------------------- */

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

double *model_sorted_pauses(const tr_model *m, int gen, size_t *n) {
    *n = 0;
    double *p = m->n ? malloc(m->n * sizeof *p) : NULL;
    for (size_t i = 0; p && i < m->n; i++)
        if (gen < 0 || m->gcs[i].gen == gen)
            p[(*n)++] = m->gcs[i].pause_ms;
    if (!*n) {
        free(p);
        return NULL;
    }
    qsort(p, *n, sizeof *p, cmp_double);
    return p;
}

double pause_percentile(const double *sorted, size_t n, double p) {
    return sorted[(size_t)((double)(n - 1) * p + 0.5)];
}

size_t model_longest_pauses(const tr_model *m, size_t *idx, size_t max) {
    size_t n = 0;
    for (size_t i = 0; i < m->n; i++) {
        /* insertion into the list kept longest first (an earlier GC first among equal pauses) */
        size_t at = n < max ? n++ : max;
        while (at > 0 && m->gcs[idx[at - 1]].pause_ns < m->gcs[i].pause_ns) {
            if (at < max)
                idx[at] = idx[at - 1];
            at--;
        }
        if (at < max)
            idx[at] = i;
    }
    return n;
}
