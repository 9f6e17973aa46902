/*
 * events_listener: the GC events as a listener session receives them, against the contract
 * (docs/contract/events.md) and against the collector's own accounting.
 *
 *  A. sequence: one instance, a listener session (keywords GC|GCHandle|SurvivalAndMovement,
 *     level 5) from the start; a workload with allocation-triggered GCs of every generation,
 *     induced GCs (tenure_collect, generations 0/1/2, flags 0, COMPACT, OPTIMIZED, AGGRESSIVE,
 *     COMPACT_LOH), pinned handles, large and pinned-heap objects. Checked: the order of every
 *     GC (suspend/triggered/start/marks/ranges/history/end/heap stats/restart, same thread,
 *     Count +1, End = Start), no mutator event inside a GC, field sanity; per GC against the
 *     info of tenure_set_gc_callback: GCStart Depth/Reason = info.generation/reason,
 *     GCHeapStats GenerationSizeN = info.size_after[N], sum TotalPromotedSizeN = sum of
 *     info.promoted over the condemned generations; number of GCStart = tenure_get_stats
 *     gc_count; the reasons of induced GCs (1, 10, 7, 17); allocation ticks: at most one per
 *     allocation and it describes that allocation (Address = the new object, TypeName, TypeID,
 *     ObjectSize, AllocationKind), per kind the sum of AllocationAmount64 is within
 *     100 KiB + 8 KiB of the bytes allocated of that kind.
 *  B. pins: PinObjectAtGCTime for every object of a pinned handle in a condemned generation
 *     (HandleID = the handle, ObjectID = the object, its size and type name), none for objects
 *     of generations not condemned; PinnedObjectCount; pinned objects do not move.
 *  C. keyword GCHandle (0x2) alone: only SetGCHandle / DestroyGCHandle, one per
 *     tenure_handle_new / _set / _free, with the handle, object, kind and generation.
 *  D. two sessions with different keywords/levels get exactly their own sets (GC level 4: no
 *     allocation tick; GC|GCHandle|Survival level 5: ticks, handles, ranges; Survival level 4:
 *     nothing); on the events after both started, the wider session's events filtered by the
 *     narrower's mask are the narrower's events; a stopped session gets nothing more.
 *  E. rundown: a session started when regions exist first receives GCCreateSegment_V1 for
 *     every region in use (the set a session from the start computes from create/free
 *     events, frozen segment included), and every object lies in a reported segment of its
 *     heap's type.
 *  F. moved and surviving ranges (keyword 0x400000, level 5): after compacting GCs every
 *     survivor of a condemned generation (tracked objects carry their own id) lies in exactly
 *     one range and newStart + (old - oldStart) is where it really is; dead objects lie in no
 *     range; objects of generations not condemned lie in none and stay; with GCCompactMode=2
 *     GCBulkSurvivingObjectRanges covers every survivor exactly once and nothing moves.
 */
#include "test_util.h"
#include "tenure_events.h"

#include <pthread.h>
#include <stdbool.h>

static tt_errlog log_ = {.fatal = 1};

/* ------------------------------------------------------------------------------------------
 * Recording
 * ---------------------------------------------------------------------------------------- */
typedef struct rec_ev {
    uint64_t ts, tid;
    const tenure_event_desc *desc;
    uint8_t *payload;
    size_t size;
} rec_ev;

/* What a listener session received. `mx` (G only): a background GC's thread calls the listener
 * (holding the instance lock) while the program's thread reads the recorder after each
 * allocation; both hold mx then. The other sections' events all come on the program's thread. */
typedef struct recorder {
    rec_ev *v;
    size_t n, cap;
    size_t ticks; /* GCAllocationTick_V4 seen */
    pthread_mutex_t *mx;
} recorder;

static void rec_lock(recorder *r) {
    if (r->mx)
        pthread_mutex_lock(r->mx);
}

static void rec_unlock(recorder *r) {
    if (r->mx)
        pthread_mutex_unlock(r->mx);
}

static size_t rec_ticks(recorder *r) {
    rec_lock(r);
    size_t n = r->ticks;
    rec_unlock(r);
    return n;
}

static void rec_record(recorder *r, const tenure_event *e);

static void rec_listener(const tenure_event *e, void *ctx) {
    recorder *r = ctx;
    rec_lock(r);
    rec_record(r, e);
    rec_unlock(r);
}

static void rec_record(recorder *r, const tenure_event *e) {
    if (r->n == r->cap) {
        size_t cap = r->cap ? 2 * r->cap : 4096;
        rec_ev *v = realloc(r->v, cap * sizeof *v);
        if (!v) {
            fprintf(stderr, "out of memory in the listener\n");
            abort();
        }
        r->v = v;
        r->cap = cap;
    }
    rec_ev *x = &r->v[r->n++];
    x->ts = e->timestamp_ns;
    x->tid = e->thread_id;
    x->desc = e->desc;
    x->size = e->size;
    x->payload = malloc(e->size ? e->size : 1);
    if (!x->payload)
        abort();
    memcpy(x->payload, e->payload, e->size);
    if (!strcmp(e->desc->name, "GCAllocationTick_V4"))
        r->ticks++;
}

static void rec_clear(recorder *r) {
    for (size_t i = 0; i < r->n; i++)
        free(r->v[i].payload);
    r->n = 0;
    r->ticks = 0;
}

static void rec_free(recorder *r) {
    rec_clear(r);
    free(r->v);
    memset(r, 0, sizeof *r);
}

static tenure_event as_event(const rec_ev *x) {
    tenure_event e = {x->ts, x->tid, x->desc, x->payload, x->size};
    return e;
}

static int is(const rec_ev *x, const char *name) { return !strcmp(x->desc->name, name); }

static uint64_t fu(const rec_ev *x, const char *field) {
    tenure_event e = as_event(x);
    uint64_t v = 0;
    tenure_result r = tenure_event_read_u64(&e, field, &v);
    TT_CHECK(r == TENURE_OK, "%s has no integer field %s (%s)", x->desc->name, field, tenure_strerror(r));
    return v;
}

static const char *fs(const rec_ev *x, const char *field) {
    tenure_event e = as_event(x);
    const char *s = NULL;
    tenure_result r = tenure_event_read_string(&e, field, &s);
    TT_CHECK(r == TENURE_OK, "%s has no string field %s", x->desc->name, field);
    return s;
}

static uint64_t fel(const rec_ev *x, const char *field, size_t i, const char *rec) {
    tenure_event e = as_event(x);
    uint64_t v = 0;
    tenure_result r = tenure_event_read_element(&e, field, i, rec, &v);
    TT_CHECK(r == TENURE_OK, "%s: no element %zu.%s of %s", x->desc->name, i, rec ? rec : "", field);
    return v;
}

static size_t count_named(const recorder *r, size_t from, const char *name) {
    size_t n = 0;
    for (size_t i = from; i < r->n; i++)
        n += is(&r->v[i], name);
    return n;
}

/* ------------------------------------------------------------------------------------------
 * GC infos from the callback
 * ---------------------------------------------------------------------------------------- */
typedef struct infos {
    tenure_gc_info *v;
    size_t n, cap;
} infos;

static void info_cb(tenure_runtime *rt, const tenure_gc_info *info, void *ctx) {
    (void)rt;
    infos *s = ctx;
    if (s->n == s->cap) {
        s->cap = s->cap ? 2 * s->cap : 256;
        s->v = realloc(s->v, s->cap * sizeof *s->v);
        if (!s->v)
            abort();
    }
    s->v[s->n++] = *info;
}

static int gen_condemned(int gen, int depth) { return gen < 3 ? gen <= depth : depth == 2; }

/* ------------------------------------------------------------------------------------------
 * The order of one GC and field sanity (the same rules as trace_check.py)
 * ---------------------------------------------------------------------------------------- */
typedef struct gc_seen {
    uint64_t count, depth, reason;
    uint64_t size[5], prom[5];
    uint64_t num_heaps, heaps_seen;      /* NumHeaps; GCPerHeapHistory_V3 events so far */
    uint64_t heap_size[5], heap_surv[5]; /* their SizeAfter and survivors, summed over the heaps */
    uint64_t pinned_count, handle_count;
    size_t start, end; /* indexes of GCStart_V2 and GCRestartEEEnd_V1 */
    int complete;
} gc_seen;

static const char *const SEQ[] = {"GCSuspendEEBegin_V1",    "GCSuspendEEEnd_V1",   "GCTriggered", "GCStart_V2",
                                  "GCGlobalHeapHistory_V4", "GCPerHeapHistory_V3", "GCEnd_V1",    "GCHeapStats_V2",
                                  "GCRestartEEBegin_V1",    "GCRestartEEEnd_V1"};
enum { NSEQ = 10, STEP_MARKING = 4 };

static int seq_index(const rec_ev *x) {
    for (int i = 0; i < NSEQ; i++)
        if (is(x, SEQ[i]))
            return i;
    return -1;
}

static int is_mutator_event(const rec_ev *x) {
    return is(x, "GCAllocationTick_V4") || is(x, "SetGCHandle") || is(x, "DestroyGCHandle") ||
           is(x, "IncreaseMemoryPressure") || is(x, "DecreaseMemoryPressure");
}

static int mark_rank(uint64_t type, int after_newfq) {
    switch (type) {
    case 4: return 0;                   /* SizedRef */
    case 0: return 1;                   /* Stack */
    case 9: return 2;                   /* BGC */
    case 1: return 3;                   /* Finalizer */
    case 2: return 4;                   /* Handle */
    case 3: return 5;                   /* Older */
    case 8: return 6;                   /* Steal */
    case 6: return after_newfq ? 9 : 7; /* DependentHandle (twice) */
    case 7: return 8;                   /* NewFQ */
    default: return -1;                 /* Overflow: any time */
    }
}

/* Check the events [from, r->n); fill gcs (up to cap). Returns the number of GCs seen (GCStart
 * events). first_count: the Count of the first GC expected (0: any). */
static size_t check_sequence(const recorder *r, size_t from, uint64_t first_count, gc_seen *gcs, size_t cap,
                             const char *what) {
    int step = 0;
    size_t ngc = 0;
    uint64_t last_count = first_count ? first_count - 1 : 0;
    int have_last = first_count != 0;
    uint64_t tid = 0, trig_reason = 0;
    int last_rank = -1, marks_seen = 0, after_newfq = 0, ranges_seen = 0;
    int64_t last_steal_heap = -1; /* server GC: one Steal per heap, in heap order */
    gc_seen cur;
    memset(&cur, 0, sizeof cur);
    for (size_t i = from; i < r->n; i++) {
        const rec_ev *x = &r->v[i];
        if (is_mutator_event(x)) {
            TT_EXPECT(step == 0, "%s: event %zu %s inside GC %" PRIu64 " (step %s)", what, i, x->desc->name, cur.count,
                      SEQ[step]);
            continue;
        }
        if (is(x, "GCMarkWithType") || is(x, "PinObjectAtGCTime") || is(x, "GCBulkMovedObjectRanges") ||
            is(x, "GCBulkSurvivingObjectRanges")) {
            TT_EXPECT(step == STEP_MARKING, "%s: event %zu %s outside Start..history (next expected %s)", what, i,
                      x->desc->name, SEQ[step]);
            if (step != STEP_MARKING)
                continue;
            TT_EXPECT(x->tid == tid, "%s: %s on another thread", what, x->desc->name);
            if (is(x, "GCMarkWithType")) {
                uint64_t t = fu(x, "Type");
                TT_EXPECT(t <= 9, "%s: mark type %" PRIu64, what, t);
                TT_EXPECT(!(t == 3 && cur.depth == 2), "%s: Older roots in a full GC %" PRIu64, what, cur.count);
                TT_EXPECT(!(t == 4 && cur.depth != 2), "%s: SizedRef roots in an ephemeral GC", what);
                int rank = mark_rank(t, after_newfq);
                uint64_t heap = fu(x, "HeapNum");
                TT_EXPECT(heap == 0 || t == 8 || t == 3,
                          "%s: GC %" PRIu64 ": mark type %" PRIu64 " of heap %" PRIu64
                          " (GC threads 1.. scan only cards)",
                          what, cur.count, t, heap);
                if (heap > 0 && t == 3) /* a helper's part of the card scan: before the Steals */
                    TT_EXPECT(last_steal_heap < 0, "%s: GC %" PRIu64 ": Older of heap %" PRIu64 " after a Steal", what,
                              cur.count, heap);
                if (t == 8) { /* Steal: once per heap, in heap order, after the shared roots */
                    TT_EXPECT((int64_t)heap > last_steal_heap,
                              "%s: GC %" PRIu64 ": Steal of heap %" PRIu64 " twice or out of order", what, cur.count,
                              heap);
                    last_steal_heap = (int64_t)heap;
                    if (heap > 0)
                        rank = -1;
                }
                if (heap > 0 && t == 3)
                    rank = -1;
                if (rank >= 0) {
                    TT_EXPECT(rank > last_rank, "%s: GC %" PRIu64 ": mark type %" PRIu64 " out of the spec's order",
                              what, cur.count, t);
                    if (rank > last_rank)
                        last_rank = rank;
                    if (t == 7)
                        after_newfq = 1;
                }
                TT_EXPECT(!ranges_seen, "%s: GCMarkWithType after the bulk ranges", what);
                marks_seen++;
            } else if (is(x, "PinObjectAtGCTime")) {
                TT_EXPECT(!ranges_seen, "%s: PinObjectAtGCTime after the bulk ranges", what);
            } else {
                ranges_seen = 1;
            }
            continue;
        }
        int k = seq_index(x);
        if (k < 0)
            continue; /* segments (allowed anywhere), finalizers, joins */
        if (k != step) {
            TT_EXPECT(k == step, "%s: event %zu: %s where %s was expected (GC %" PRIu64 ")", what, i, x->desc->name,
                      SEQ[step], cur.count);
            if (k != 0)
                continue; /* skip until the next suspension */
            step = 0;
        }
        if (k == 0) {
            memset(&cur, 0, sizeof cur);
            tid = x->tid;
            TT_EXPECT(fu(x, "Reason") == 1, "%s: suspend Reason %" PRIu64, what, fu(x, "Reason"));
            if (have_last)
                TT_EXPECT(fu(x, "Count") == last_count, "%s: GCSuspendEEBegin Count %" PRIu64 ", GCs so far %" PRIu64,
                          what, fu(x, "Count"), last_count);
            last_rank = -1;
            last_steal_heap = -1;
            marks_seen = after_newfq = ranges_seen = 0;
        } else {
            TT_EXPECT(x->tid == tid, "%s: %s on thread %" PRIu64 ", suspended on %" PRIu64, what, x->desc->name, x->tid,
                      tid);
        }
        switch (k) {
        case 2: trig_reason = fu(x, "Reason"); break;
        case 3:
            cur.count = fu(x, "Count");
            cur.depth = fu(x, "Depth");
            cur.reason = fu(x, "Reason");
            cur.start = i;
            if (have_last)
                TT_EXPECT(cur.count == last_count + 1, "%s: GCStart Count %" PRIu64 ", expected %" PRIu64, what,
                          cur.count, last_count + 1);
            last_count = cur.count;
            have_last = 1;
            TT_EXPECT(cur.depth <= 2, "%s: Depth %" PRIu64, what, cur.depth);
            TT_EXPECT(cur.reason <= 17, "%s: Reason %" PRIu64, what, cur.reason);
            TT_EXPECT(cur.reason == trig_reason, "%s: GCStart Reason %" PRIu64 " but GCTriggered %" PRIu64, what,
                      cur.reason, trig_reason);
            TT_EXPECT(fu(x, "Type") == 0, "%s: GC Type %" PRIu64, what, fu(x, "Type"));
            break;
        case 4:
            TT_EXPECT(marks_seen > 0, "%s: GC %" PRIu64 " has no GCMarkWithType", what, cur.count);
            TT_EXPECT(fu(x, "CondemnedGeneration") == cur.depth, "%s: history CondemnedGeneration", what);
            TT_EXPECT(fu(x, "Reason") == cur.reason, "%s: history Reason", what);
            cur.num_heaps = fu(x, "NumHeaps");
            TT_EXPECT(cur.num_heaps >= 1 && cur.num_heaps <= 64, "%s: NumHeaps %" PRIu64, what, cur.num_heaps);
            break;
        case 5: /* once per heap, in heap order */
            TT_EXPECT(fu(x, "Count") == 5, "%s: per-heap history with %" PRIu64 " generations", what, fu(x, "Count"));
            TT_EXPECT(fu(x, "HeapIndex") == cur.heaps_seen,
                      "%s: GC %" PRIu64 ": HeapIndex %" PRIu64 ", expected %" PRIu64, what, cur.count,
                      fu(x, "HeapIndex"), cur.heaps_seen);
            for (int g = 0; g < 5; g++) {
                cur.heap_size[g] += fel(x, "Values", (size_t)g, "SizeAfter");
                cur.heap_surv[g] +=
                    fel(x, "Values", (size_t)g, "PinnedSurv") + fel(x, "Values", (size_t)g, "NonePinnedSurv");
            }
            cur.heaps_seen++;
            break;
        case 6:
            TT_EXPECT(fu(x, "Count") == cur.count && fu(x, "Depth") == cur.depth,
                      "%s: GCEnd %" PRIu64 "/%" PRIu64 " vs GCStart %" PRIu64 "/%" PRIu64, what, fu(x, "Count"),
                      fu(x, "Depth"), cur.count, cur.depth);
            break;
        case 7: {
            TT_EXPECT(i > from && is(&r->v[i - 1], "GCEnd_V1"), "%s: GCHeapStats not right after GCEnd", what);
            static const char *const gs[5] = {"GenerationSize0", "GenerationSize1", "GenerationSize2",
                                              "GenerationSize3", "GenerationSize4"};
            static const char *const ps[5] = {"TotalPromotedSize0", "TotalPromotedSize1", "TotalPromotedSize2",
                                              "TotalPromotedSize3", "TotalPromotedSize4"};
            for (int g = 0; g < 5; g++) {
                cur.size[g] = fu(x, gs[g]);
                cur.prom[g] = fu(x, ps[g]);
                /* the heaps' histories add up to the whole heap's figures */
                TT_EXPECT(cur.heap_size[g] == cur.size[g] && cur.heap_surv[g] == cur.prom[g],
                          "%s: GC %" PRIu64 ": gen%d: the heaps' SizeAfter %" PRIu64 " and survivors %" PRIu64
                          ", GCHeapStats_V2 %" PRIu64 " and %" PRIu64,
                          what, cur.count, g, cur.heap_size[g], cur.heap_surv[g], cur.size[g], cur.prom[g]);
                if (!gen_condemned(g, (int)cur.depth))
                    TT_EXPECT(cur.prom[g] == 0, "%s: GC %" PRIu64 ": TotalPromotedSize%d = %" PRIu64 " not condemned",
                              what, cur.count, g, cur.prom[g]);
            }
            for (int g = 2; g < 5; g++)
                if (gen_condemned(g, (int)cur.depth))
                    TT_EXPECT(cur.size[g] >= cur.prom[g],
                              "%s: GC %" PRIu64 ": GenerationSize%d %" PRIu64 " < TotalPromotedSize%d %" PRIu64, what,
                              cur.count, g, cur.size[g], g, cur.prom[g]);
            for (int g = 0; g < 2; g++)
                if (gen_condemned(g, (int)cur.depth)) {
                    uint64_t s = 0, p = 0;
                    for (int j = 0; j <= g + 1; j++)
                        s += cur.size[j];
                    for (int j = 0; j <= g; j++)
                        p += cur.prom[j];
                    TT_EXPECT(s >= p, "%s: GC %" PRIu64 ": survivors of gens 0..%d exceed gens 0..%d", what, cur.count,
                              g, g + 1);
                }
            cur.pinned_count = fu(x, "PinnedObjectCount");
            cur.handle_count = fu(x, "GCHandleCount");
            break;
        }
        case 9:
            cur.end = i;
            cur.complete = 1;
            if (ngc < cap)
                gcs[ngc] = cur;
            ngc++;
            break;
        }
        step = k == 5 && cur.heaps_seen < cur.num_heaps ? 5 : (k + 1) % NSEQ;
    }
    TT_EXPECT(step == 0, "%s: the events end inside a GC (next expected %s)", what, SEQ[step]);
    return ngc;
}

/* The infos of GCs [first, first + n) against the events seen. */
static void cross_check(const gc_seen *gcs, size_t n, const infos *inf, const char *what) {
    for (size_t i = 0; i < n; i++) {
        const gc_seen *g = &gcs[i];
        const tenure_gc_info *info = NULL;
        for (size_t j = 0; j < inf->n; j++)
            if (inf->v[j].index == g->count)
                info = &inf->v[j];
        TT_EXPECT(info != NULL, "%s: no callback info for GC %" PRIu64, what, g->count);
        if (!info)
            continue;
        TT_EXPECT(g->depth == (uint64_t)info->generation, "%s: GC %" PRIu64 ": Depth %" PRIu64 " info %d", what,
                  g->count, g->depth, info->generation);
        TT_EXPECT(g->reason == info->reason, "%s: GC %" PRIu64 ": Reason %" PRIu64 " info %u", what, g->count,
                  g->reason, info->reason);
        uint64_t psum = 0, isum = 0;
        for (int k = 0; k < 5; k++) {
            TT_EXPECT(g->size[k] == info->size_after[k],
                      "%s: GC %" PRIu64 ": GenerationSize%d %" PRIu64 " != size_after %" PRIu64, what, g->count, k,
                      g->size[k], info->size_after[k]);
            psum += g->prom[k];
            if (gen_condemned(k, info->generation))
                isum += info->promoted[k];
        }
        TT_EXPECT(psum == isum, "%s: GC %" PRIu64 ": sum TotalPromotedSize %" PRIu64 " != sum info.promoted %" PRIu64,
                  what, g->count, psum, isum);
        TT_EXPECT(g->pinned_count == info->pinned_objects,
                  "%s: GC %" PRIu64 ": PinnedObjectCount %" PRIu64 " != info.pinned_objects %" PRIu64, what, g->count,
                  g->pinned_count, info->pinned_objects);
    }
}

/* ------------------------------------------------------------------------------------------
 * Common setup
 * ---------------------------------------------------------------------------------------- */
typedef struct world {
    tenure_runtime *rt;
    const tenure_type *node_t, *bytes_t, *refs_t;
    recorder rec;
    infos inf;
    uint64_t alloc_kind_bytes[3]; /* by allocation kind, tracked by the test (0: from stats) */
    uint64_t tick_sum[3];
    size_t ticks_checked;
} world;

static void world_init(world *w, tenure_config *cfg) {
    memset(w, 0, sizeof *w);
    tenure_config local;
    if (!cfg) {
        tt_config(&local);
        local.gcConcurrent = 0; /* check_sequence's order is a blocking GC's (G: a background GC's) */
        cfg = &local;
    }
    w->rt = tt_create(cfg, &log_);
    w->node_t = tt_register_node(w->rt);
    w->bytes_t = tt_register_bytes(w->rt);
    w->refs_t = tt_register_ref_array(w->rt);
    tenure_set_gc_callback(w->rt, info_cb, &w->inf);
}

static void world_done(world *w) {
    tenure_destroy(w->rt);
    rec_free(&w->rec);
    free(w->inf.v);
    memset(w, 0, sizeof *w);
}

static void check_tick(world *w, void *obj, const tenure_type *t, int kind, size_t ticks_before, size_t size);

/* After an allocation of obj (kind 0/1/2): the ticks it caused describe it. */
static void after_alloc(world *w, void *obj, const tenure_type *t, int kind, size_t ticks_before) {
    TT_CHECK(obj != NULL, "allocation failed: %s", tenure_strerror(tenure_last_error(w->rt)));
    size_t size = tenure_object_size(w->rt, obj);
    if (kind > 0)
        w->alloc_kind_bytes[kind] += size;
    rec_lock(&w->rec);
    check_tick(w, obj, t, kind, ticks_before, size);
    rec_unlock(&w->rec);
}

/* The tick an allocation caused, if any, describes it (w->rec locked). */
static void check_tick(world *w, void *obj, const tenure_type *t, int kind, size_t ticks_before, size_t size) {
    if (w->rec.ticks == ticks_before)
        return;
    TT_EXPECT(w->rec.ticks == ticks_before + 1, "one allocation gave %zu ticks", w->rec.ticks - ticks_before);
    const rec_ev *x = NULL;
    for (size_t i = w->rec.n; i-- > 0;)
        if (is(&w->rec.v[i], "GCAllocationTick_V4")) {
            x = &w->rec.v[i];
            break;
        }
    TT_CHECK(x != NULL);
    w->ticks_checked++;
    TT_EXPECT(fu(x, "AllocationKind") == (uint64_t)kind, "tick kind %" PRIu64 " for an allocation of kind %d",
              fu(x, "AllocationKind"), kind);
    TT_EXPECT(fu(x, "Address") == (uint64_t)(uintptr_t)obj, "tick Address %#" PRIx64 " is not the new object %p",
              fu(x, "Address"), obj);
    TT_EXPECT(!strcmp(fs(x, "TypeName"), tenure_type_name(t)), "tick TypeName %s, object of type %s", fs(x, "TypeName"),
              tenure_type_name(t));
    TT_EXPECT(fu(x, "TypeID") != 0, "tick TypeID 0");
    TT_EXPECT(fu(x, "ObjectSize") == size, "tick ObjectSize %" PRIu64 ", object size %zu", fu(x, "ObjectSize"), size);
    tenure_config env;
    tt_config(&env); /* (server GC from the environment: a thread moves between the heaps) */
    TT_EXPECT(fu(x, "HeapIndex") < tt_heaps(&env), "HeapIndex %" PRIu64 " of %u heaps", fu(x, "HeapIndex"),
              tt_heaps(&env));
    uint64_t a64 = fu(x, "AllocationAmount64");
    TT_EXPECT(fu(x, "AllocationAmount") == (a64 & 0xffffffffu), "AllocationAmount is not the 64-bit one truncated");
    TT_EXPECT(a64 >= 100 * 1024, "tick AllocationAmount64 %" PRIu64 " < 100 KiB", a64);
}

static void *alloc_node(world *w, uint64_t id) {
    size_t t0 = rec_ticks(&w->rec);
    tt_node *n = tenure_alloc(w->rt, w->node_t);
    after_alloc(w, n, w->node_t, 0, t0);
    n->id = id;
    tt_node_seal(n);
    return n;
}

static void *alloc_bytes(world *w, size_t len, int pinned) {
    size_t t0 = rec_ticks(&w->rec);
    void *a = pinned ? tenure_alloc_array_pinned(w->rt, w->bytes_t, len) : tenure_alloc_array(w->rt, w->bytes_t, len);
    int kind = pinned ? 2 : (tenure_object_generation(w->rt, a) == 3 ? 1 : 0);
    after_alloc(w, a, w->bytes_t, kind, t0);
    if (!pinned)
        TT_EXPECT((kind == 1) == (tenure_object_size(w->rt, a) >= 85000), "array of %zu bytes in generation %d",
                  tenure_object_size(w->rt, a), tenure_object_generation(w->rt, a));
    return a;
}

static void *alloc_pinned_node(world *w, uint64_t id) {
    size_t t0 = rec_ticks(&w->rec);
    tt_node *n = tenure_alloc_pinned(w->rt, w->node_t);
    after_alloc(w, n, w->node_t, 2, t0);
    n->id = id;
    tt_node_seal(n);
    return n;
}

static void check_tick_sums(world *w, const char *what) {
    uint64_t sum[3] = {0, 0, 0};
    for (size_t i = 0; i < w->rec.n; i++)
        if (is(&w->rec.v[i], "GCAllocationTick_V4")) {
            uint64_t k = fu(&w->rec.v[i], "AllocationKind");
            TT_EXPECT(k <= 2, "kind %" PRIu64, k);
            if (k <= 2)
                sum[k] += fu(&w->rec.v[i], "AllocationAmount64");
        }
    tenure_stats s = tt_stats(w->rt);
    uint64_t alloc[3] = {s.bytes_allocated - w->alloc_kind_bytes[1] - w->alloc_kind_bytes[2], w->alloc_kind_bytes[1],
                         w->alloc_kind_bytes[2]};
    for (int k = 0; k < 3; k++) {
        uint64_t diff = alloc[k] > sum[k] ? alloc[k] - sum[k] : sum[k] - alloc[k];
        printf("  %s: kind %d allocated %" PRIu64 " ticks sum %" PRIu64 " (diff %" PRIu64 ")\n", what, k, alloc[k],
               sum[k], diff);
        TT_EXPECT(diff <= 108 * 1024, "%s: kind %d: allocated %" PRIu64 " bytes, ticks sum %" PRIu64, what, k, alloc[k],
                  sum[k]);
    }
}

static void check_filter(const recorder *r, size_t from, uint64_t kw, int level, const char *what) {
    for (size_t i = from; i < r->n; i++) {
        const tenure_event_desc *d = r->v[i].desc;
        TT_EXPECT((d->keywords & kw) && d->level <= level, "%s: got %s (keywords %#" PRIx64 " level %u)", what, d->name,
                  d->keywords, d->level);
    }
}

/* ------------------------------------------------------------------------------------------
 * A. the sequence, against the collector's accounting
 * ---------------------------------------------------------------------------------------- */
static void test_sequence(void) {
    printf("A. GC sequence, cross-checks, allocation ticks\n");
    tenure_config cfg;
    tt_config(&cfg);
    /* 256 KiB in all (per heap under server GC: one thread spends every heap's budget, and
     * promotes onto each, before its allocation triggers a GC of that generation) */
    cfg.GCgen0size = 256 * 1024 / tt_heaps(&cfg);
    cfg.gcConcurrent = 0; /* the blocking order, step by step; G checks a background GC's */
    world w;
    world_init(&w, &cfg);
    tenure_runtime *rt = w.rt;
    tenure_session *s = tenure_session_start_listener(rt, 0x400003, 5, rec_listener, &w.rec);
    TT_CHECK(s != NULL);

    enum { NROOTS = 32768, NHANDLES = 16 };
    static void *roots[NROOTS];
    memset(roots, 0, sizeof roots);
    tenure_root_area *ra = tenure_root_area_add(rt, roots, NROOTS);
    TT_CHECK(ra != NULL);
    tenure_handle *pins[NHANDLES] = {0};
    const void *pin_handles_seen[4096];
    size_t npin_handles = 0;

    /* the full workload unless GCStress forces the GCs: the checks below need allocation-triggered
     * GCs of every generation, which a smaller TENURE_TEST_SCALE does not reach */
    size_t iters = tt_stress_mode() ? tt_scaled(600000, 30000) : 600000;
    /* every server GC heap has its own LOH budget (at least 8 MiB), and one thread spreads its
     * large objects over them: as many more large objects as heaps, for AllocLarge GCs */
    size_t large_every = 500 / tt_heaps(&cfg);
    uint64_t induced = 0;
    static const unsigned flag_set[] = {0, TENURE_COLLECT_COMPACT, TENURE_COLLECT_OPTIMIZED, TENURE_COLLECT_AGGRESSIVE,
                                        TENURE_COLLECT_COMPACT | TENURE_COLLECT_COMPACT_LOH};
    for (size_t i = 0; i < iters; i++) {
        uint64_t r = tt_rand();
        tt_node *n = alloc_node(&w, i + 1);
        /* survivors: a rooted fraction, chained through the barrier */
        if (r % 2 == 0) {
            size_t slot = (size_t)((r >> 8) % NROOTS);
            if (roots[slot] && (r >> 20) % 2)
                tenure_write_ref(rt, n, &n->a, roots[slot]), tt_node_seal(n);
            roots[slot] = n;
        }
        if (i > iters / 2 && i % large_every == large_every / 5) { /* large objects (second half) */
            void *a = alloc_bytes(&w, 85000 + (size_t)tt_rand_below(200000), 0);
            if ((r >> 30) % 2)
                roots[(r >> 12) % NROOTS] = a;
        }
        if (i % 3000 == 5) { /* pinned-heap objects */
            void *p = (r >> 33) % 2 ? alloc_pinned_node(&w, i + 1) : alloc_bytes(&w, 64 + tt_rand_below(30000), 1);
            if ((r >> 34) % 2)
                roots[(r >> 14) % NROOTS] = p;
        }
        if (i % 1500 == 7) { /* pinned handles come and go */
            size_t k = (size_t)((r >> 40) % NHANDLES);
            if (pins[k])
                TT_CHECK_RESULT(tenure_handle_free(rt, pins[k]), TENURE_OK);
            pins[k] = tenure_handle_new(rt, TENURE_HANDLE_PINNED, n);
            TT_CHECK(pins[k] != NULL);
            if (npin_handles < 4096)
                pin_handles_seen[npin_handles++] = pins[k];
        }
        if (i > iters / 2 && i % (iters / 46 + 1) == 11) { /* induced GCs (second half) */
            int gen = (int)(induced % 3);
            unsigned flags = flag_set[(induced / 3) % 5];
            induced++;
            uint64_t before = tt_stats(rt).gc_count;
            size_t ninfo = w.inf.n;
            tt_collect(rt, gen, flags);
            uint64_t after = tt_stats(rt).gc_count;
            if (flags & TENURE_COLLECT_OPTIMIZED) {
                TT_EXPECT(after - before <= 1, "OPTIMIZED collect made %" PRIu64 " GCs", after - before);
            } else {
                TT_EXPECT(after == before + 1, "collect(%d, %#x) made %" PRIu64 " GCs", gen, flags, after - before);
            }
            if (after == before + 1 && w.inf.n == ninfo + 1) {
                const tenure_gc_info *info = &w.inf.v[ninfo];
                uint32_t want = (flags & TENURE_COLLECT_AGGRESSIVE)  ? 17
                                : (flags & TENURE_COLLECT_OPTIMIZED) ? 7
                                : (flags & TENURE_COLLECT_COMPACT)   ? 10
                                                                     : 1;
                TT_EXPECT(info->reason == want, "collect(%d, %#x): reason %u, expected %u", gen, flags, info->reason,
                          want);
                int wgen = (flags & TENURE_COLLECT_AGGRESSIVE) ? 2 : gen;
                TT_EXPECT(info->generation == wgen, "collect(%d, %#x): generation %d", gen, flags, info->generation);
            }
        }
    }
    for (size_t k = 0; k < NHANDLES; k++)
        if (pins[k] && k % 2) {
            TT_CHECK_RESULT(tenure_handle_free(rt, pins[k]), TENURE_OK);
            pins[k] = NULL;
        }
    tt_collect(rt, 2, 0);

    tenure_stats st = tt_stats(rt);
    size_t cap = (size_t)st.gc_count + 16;
    gc_seen *gcs = calloc(cap, sizeof *gcs);
    size_t ngc = check_sequence(&w.rec, 0, 1, gcs, cap, "A");
    TT_EXPECT(ngc == st.gc_count, "GCStart events %zu, gc_count %" PRIu64, ngc, st.gc_count);
    TT_EXPECT(w.inf.n == st.gc_count, "callbacks %zu, gc_count %" PRIu64, w.inf.n, st.gc_count);
    cross_check(gcs, ngc < cap ? ngc : cap, &w.inf, "A");
    size_t by_depth[3] = {0, 0, 0}, by_reason[18] = {0};
    for (size_t i = 0; i < ngc && i < cap; i++) {
        if (gcs[i].depth <= 2)
            by_depth[gcs[i].depth]++;
        if (gcs[i].reason < 18)
            by_reason[gcs[i].reason]++;
    }
    size_t alloc_by_depth[3] = {0, 0, 0};
    for (size_t i = 0; i < ngc && i < cap; i++)
        if ((gcs[i].reason == 0 || gcs[i].reason == 4) && gcs[i].depth <= 2)
            alloc_by_depth[gcs[i].depth]++;
    printf("  %zu GCs: gen0 %zu gen1 %zu gen2 %zu; allocation-triggered gen0 %zu gen1 %zu gen2 %zu; reasons:", ngc,
           by_depth[0], by_depth[1], by_depth[2], alloc_by_depth[0], alloc_by_depth[1], alloc_by_depth[2]);
    for (int k = 0; k < 18; k++)
        if (by_reason[k])
            printf(" %d:%zu", k, by_reason[k]);
    printf("; %zu events, %zu ticks checked\n", w.rec.n, w.ticks_checked);
    if (!tt_stress_mode()) {
        for (int g = 0; g < 3; g++)
            TT_EXPECT(alloc_by_depth[g] > 0, "no allocation-triggered GC of generation %d", g);
        TT_EXPECT(by_reason[1] && by_reason[10] && by_reason[17], "induced reasons missing");
    }
    TT_EXPECT(by_reason[4] > 0 || tt_stress_mode(), "no AllocLarge GC");
    TT_EXPECT(count_named(&w.rec, 0, "GCAllocationTick_V4") > 0, "no ticks");
    /* PinObjectAtGCTime: handles that were pinned handles */
    size_t npins = 0;
    for (size_t i = 0; i < w.rec.n; i++) {
        const rec_ev *x = &w.rec.v[i];
        if (!is(x, "PinObjectAtGCTime"))
            continue;
        npins++;
        uint64_t h = fu(x, "HandleID");
        int found = 0;
        for (size_t k = 0; k < npin_handles; k++)
            found |= (uint64_t)(uintptr_t)pin_handles_seen[k] == h;
        TT_EXPECT(found, "PinObjectAtGCTime HandleID %#" PRIx64 " is no pinned handle of the test", h);
    }
    printf("  %zu PinObjectAtGCTime\n", npins);
    TT_EXPECT(npins > 0, "no PinObjectAtGCTime");
    check_tick_sums(&w, "A");
    free(gcs);
    for (size_t k = 0; k < NHANDLES; k++)
        if (pins[k])
            TT_CHECK_RESULT(tenure_handle_free(rt, pins[k]), TENURE_OK);
    TT_CHECK_RESULT(tenure_root_area_remove(rt, ra), TENURE_OK);
    TT_CHECK_RESULT(tenure_session_stop(rt, s), TENURE_OK);
    world_done(&w);
}

/* ------------------------------------------------------------------------------------------
 * B. pins
 * ---------------------------------------------------------------------------------------- */
static void test_pins(void) {
    printf("B. PinObjectAtGCTime\n");
    world w;
    world_init(&w, NULL);
    tenure_runtime *rt = w.rt;
    enum { NP = 24 };
    void *obj[NP];
    tenure_handle *h[NP];
    for (int i = 0; i < NP; i++) {
        obj[i] = alloc_node(&w, 1000 + (uint64_t)i);
        for (int k = 0; k < 5; k++) /* garbage between them, so that compaction would move them */
            alloc_node(&w, 0);
        h[i] = tenure_handle_new(rt, TENURE_HANDLE_PINNED, obj[i]);
        TT_CHECK(h[i] != NULL);
    }
    void *poh = alloc_pinned_node(&w, 77); /* pinned heap: never moves, not counted */
    tenure_handle *strong = tenure_handle_new(rt, TENURE_HANDLE_STRONG, poh);
    tenure_session *s = tenure_session_start_listener(rt, TENURE_KW_GC, 5, rec_listener, &w.rec);
    TT_CHECK(s != NULL);
    int gens[] = {0, 0, 1, 1, 2, 2};
    for (size_t t = 0; t < sizeof gens / sizeof gens[0]; t++) {
        int before_gen = tenure_object_generation(rt, obj[0]);
        rec_clear(&w.rec);
        tt_collect(rt, gens[t], TENURE_COLLECT_COMPACT);
        gc_seen g;
        size_t n = check_sequence(&w.rec, 0, 0, &g, 1, "B");
        TT_CHECK(n == 1, "%zu GCs", n);
        int condemned = before_gen <= gens[t];
        size_t seen = 0;
        for (size_t i = 0; i < w.rec.n; i++) {
            const rec_ev *x = &w.rec.v[i];
            if (!is(x, "PinObjectAtGCTime"))
                continue;
            seen++;
            uint64_t hid = fu(x, "HandleID"), oid = fu(x, "ObjectID");
            int k = -1;
            for (int j = 0; j < NP; j++)
                if ((uint64_t)(uintptr_t)h[j] == hid)
                    k = j;
            TT_EXPECT(k >= 0, "PinObjectAtGCTime HandleID %#" PRIx64 " is not a pinned handle", hid);
            if (k < 0)
                continue;
            TT_EXPECT(oid == (uint64_t)(uintptr_t)obj[k], "ObjectID %#" PRIx64 " but the handle's object is %p", oid,
                      obj[k]);
            TT_EXPECT(fu(x, "ObjectSize") == sizeof(tt_node), "ObjectSize %" PRIu64, fu(x, "ObjectSize"));
            TT_EXPECT(!strcmp(fs(x, "TypeName"), "tt_node"), "TypeName %s", fs(x, "TypeName"));
        }
        printf("  collect(%d) with pinned objects in gen %d: %zu pins, PinnedObjectCount %" PRIu64 "\n", gens[t],
               before_gen, seen, g.pinned_count);
        TT_EXPECT(seen == (condemned ? (size_t)NP : 0), "collect(%d), objects in gen %d: %zu PinObjectAtGCTime",
                  gens[t], before_gen, seen);
        TT_EXPECT(g.pinned_count == (condemned ? (uint64_t)NP : 0), "PinnedObjectCount %" PRIu64, g.pinned_count);
        for (int j = 0; j < NP; j++) {
            TT_EXPECT(tenure_handle_get(rt, h[j]) == obj[j], "pinned object %d moved", j);
            TT_CHECK_NODE(rt, w.node_t, obj[j], 1000 + (uint64_t)j);
        }
        TT_CHECK_NODE(rt, w.node_t, poh, 77);
    }
    TT_CHECK_RESULT(tenure_session_stop(rt, s), TENURE_OK);
    for (int i = 0; i < NP; i++)
        TT_CHECK_RESULT(tenure_handle_free(rt, h[i]), TENURE_OK);
    TT_CHECK_RESULT(tenure_handle_free(rt, strong), TENURE_OK);
    world_done(&w);
}

/* ------------------------------------------------------------------------------------------
 * C. keyword GCHandle alone
 * ---------------------------------------------------------------------------------------- */
static void test_handles_only(void) {
    printf("C. keyword 0x2 alone\n");
    world w;
    world_init(&w, NULL);
    tenure_runtime *rt = w.rt;
    tenure_session *s = tenure_session_start_listener(rt, TENURE_KW_GC_HANDLE, 5, rec_listener, &w.rec);
    TT_CHECK(s != NULL);
    enum { NH = 64 };
    tenure_handle *h[NH] = {0};
    static const tenure_handle_kind kinds[] = {TENURE_HANDLE_WEAK_SHORT, TENURE_HANDLE_WEAK_LONG, TENURE_HANDLE_STRONG,
                                               TENURE_HANDLE_PINNED};
    size_t nset = 0, ndestroy = 0, checked = 0;
    size_t iters = tt_scaled(60000, 6000);
    for (size_t i = 0; i < iters; i++) {
        tt_node *n = alloc_node(&w, i + 1);
        if (i % 97 == 0) {
            size_t k = (size_t)tt_rand_below(NH);
            size_t before = w.rec.n;
            const char *op;
            if (h[k] && tt_rand_below(2)) {
                TT_CHECK_RESULT(tenure_handle_set(rt, h[k], i % 3 ? n : NULL), TENURE_OK);
                nset++;
                op = "set";
            } else if (h[k]) {
                TT_CHECK_RESULT(tenure_handle_free(rt, h[k]), TENURE_OK);
                ndestroy++;
                op = "free";
            } else {
                h[k] = tenure_handle_new(rt, kinds[i % 4], n);
                TT_CHECK(h[k] != NULL);
                nset++;
                op = "new";
            }
            TT_CHECK(w.rec.n == before + 1, "handle %s gave %zu events", op, w.rec.n - before);
            const rec_ev *x = &w.rec.v[before];
            TT_EXPECT(fu(x, "HandleID") == (uint64_t)(uintptr_t)h[k], "HandleID is not the handle");
            if (!strcmp(op, "free")) {
                TT_EXPECT(is(x, "DestroyGCHandle"), "%s for a free", x->desc->name);
                h[k] = NULL;
            } else {
                TT_EXPECT(is(x, "SetGCHandle"), "%s for a handle %s", x->desc->name, op);
                void *o = tenure_handle_get(rt, h[k]);
                TT_EXPECT(fu(x, "ObjectID") == (uint64_t)(uintptr_t)o, "ObjectID");
                TT_EXPECT(fu(x, "Generation") == (uint64_t)(o ? tenure_object_generation(rt, o) : 0),
                          "Generation %" PRIu64, fu(x, "Generation"));
                TT_EXPECT(fu(x, "AppDomainID") == 0, "AppDomainID");
                if (!strcmp(op, "new"))
                    TT_EXPECT(fu(x, "Kind") == (uint64_t)kinds[i % 4], "Kind %" PRIu64, fu(x, "Kind"));
            }
            TT_EXPECT(fu(x, "ClrInstanceID") == tenure_instance_id(rt), "ClrInstanceID");
            checked++;
        }
        if (i % 20000 == 19999)
            tt_collect(rt, 2, 0);
    }
    for (size_t k = 0; k < NH; k++)
        if (h[k]) {
            TT_CHECK_RESULT(tenure_handle_free(rt, h[k]), TENURE_OK);
            ndestroy++;
        }
    tenure_stats st = tt_stats(rt);
    check_filter(&w.rec, 0, TENURE_KW_GC_HANDLE, 5, "C");
    TT_EXPECT(count_named(&w.rec, 0, "SetGCHandle") == nset, "SetGCHandle %zu, expected %zu",
              count_named(&w.rec, 0, "SetGCHandle"), nset);
    TT_EXPECT(count_named(&w.rec, 0, "DestroyGCHandle") == ndestroy, "DestroyGCHandle %zu, expected %zu",
              count_named(&w.rec, 0, "DestroyGCHandle"), ndestroy);
    TT_EXPECT(w.rec.n == nset + ndestroy, "%zu events, %zu handle operations", w.rec.n, nset + ndestroy);
    printf("  %zu events (%zu checked one by one) over %" PRIu64 " GCs\n", w.rec.n, checked, st.gc_count);
    TT_EXPECT(st.gc_count > 0, "no GC happened");
    TT_CHECK_RESULT(tenure_session_stop(rt, s), TENURE_OK);
    world_done(&w);
}

/* ------------------------------------------------------------------------------------------
 * D. two (three) sessions
 * ---------------------------------------------------------------------------------------- */
static int same_event(const rec_ev *a, const rec_ev *b) {
    return a->desc == b->desc && a->size == b->size && !memcmp(a->payload, b->payload, a->size) && a->tid == b->tid &&
           a->ts == b->ts;
}

static void test_two_sessions(void) {
    printf("D. sessions with different keywords and levels\n");
    world w;
    world_init(&w, NULL);
    tenure_runtime *rt = w.rt;
    recorder ra = {0}, rc = {0};
    tenure_session *sa = tenure_session_start_listener(rt, TENURE_KW_GC, 4, rec_listener, &ra);
    TT_CHECK(sa != NULL);
    /* some heap first, so that the second session's rundown has something */
    for (int i = 0; i < 5000; i++)
        alloc_node(&w, 1);
    size_t a_from = ra.n;
    uint64_t kb = TENURE_KW_GC | TENURE_KW_GC_HANDLE | TENURE_KW_GC_HEAP_SURVIVAL_AND_MOVEMENT;
    tenure_session *sb = tenure_session_start_listener(rt, kb, 5, rec_listener, &w.rec);
    TT_CHECK(sb != NULL);
    size_t b_from = w.rec.n; /* after its rundown */
    for (size_t i = 0; i < b_from; i++)
        TT_EXPECT(is(&w.rec.v[i], "GCCreateSegment_V1"), "rundown event %s", w.rec.v[i].desc->name);
    TT_EXPECT(ra.n == a_from, "starting another session sent events to the first");
    tenure_session *sc =
        tenure_session_start_listener(rt, TENURE_KW_GC_HEAP_SURVIVAL_AND_MOVEMENT, 4, rec_listener, &rc);
    TT_CHECK(sc != NULL);

    static void *roots[256];
    memset(roots, 0, sizeof roots);
    tenure_root_area *area = tenure_root_area_add(rt, roots, 256);
    tenure_handle *h = NULL;
    size_t iters = tt_scaled(200000, 20000);
    for (size_t i = 0; i < iters; i++) {
        tt_node *n = alloc_node(&w, i);
        if (i % 7 == 0)
            roots[tt_rand_below(256)] = n;
        if (i % 5000 == 0) {
            if (h)
                TT_CHECK_RESULT(tenure_handle_free(rt, h), TENURE_OK);
            h = tenure_handle_new(rt, TENURE_HANDLE_PINNED, n);
        }
        if (i % 20000 == 3)
            roots[tt_rand_below(256)] = alloc_bytes(&w, 100000, 0);
        if (i % 30000 == 4)
            tt_collect(rt, (int)(i % 3), TENURE_COLLECT_COMPACT);
    }
    tt_collect(rt, 2, 0);
    if (h)
        TT_CHECK_RESULT(tenure_handle_free(rt, h), TENURE_OK);
    check_filter(&ra, 0, TENURE_KW_GC, 4, "session GC/4");
    check_filter(&w.rec, 0, kb, 5, "session GC|Handle|Survival/5");
    TT_EXPECT(rc.n == 0, "session Survival/4 got %zu events", rc.n);
    TT_EXPECT(count_named(&ra, 0, "GCAllocationTick_V4") == 0, "level 4 got allocation ticks");
    TT_EXPECT(count_named(&ra, 0, "PinObjectAtGCTime") == 0, "level 4 got PinObjectAtGCTime");
    TT_EXPECT(count_named(&w.rec, 0, "GCAllocationTick_V4") > 0, "level 5 got no allocation tick");
    TT_EXPECT(count_named(&w.rec, 0, "SetGCHandle") > 0, "GCHandle session got no SetGCHandle");
    TT_EXPECT(count_named(&w.rec, 0, "DestroyGCHandle") > 0, "GCHandle session got no DestroyGCHandle");
    TT_EXPECT(count_named(&w.rec, 0, "GCBulkMovedObjectRanges") > 0, "no moved ranges at level 5");
    TT_EXPECT(count_named(&w.rec, 0, "PinObjectAtGCTime") > 0, "no PinObjectAtGCTime at level 5");
    TT_EXPECT(count_named(&ra, a_from, "GCStart_V2") == count_named(&w.rec, b_from, "GCStart_V2"),
              "GCStart counts differ");
    /* the wider session's events, filtered by the narrower's mask, are the narrower's */
    size_t j = a_from, mism = 0;
    for (size_t i = b_from; i < w.rec.n; i++) {
        const rec_ev *x = &w.rec.v[i];
        if (!((x->desc->keywords & TENURE_KW_GC) && x->desc->level <= 4))
            continue;
        if (j >= ra.n || !same_event(x, &ra.v[j])) {
            if (mism++ < 5)
                TT_EXPECT(0, "event %zu of the wider session (%s) is not event %zu of the narrower (%s)", i,
                          x->desc->name, j, j < ra.n ? ra.v[j].desc->name : "end");
        }
        j++;
    }
    TT_EXPECT(j == ra.n, "the narrower session has %zu events, the filtered wider one %zu", ra.n - a_from, j - a_from);
    size_t ngc = check_sequence(&ra, a_from, 0, NULL, 0, "D/a");
    check_sequence(&w.rec, b_from, 0, NULL, 0, "D/b");
    printf("  GC/4: %zu events, GC|Handle|Survival/5: %zu events, Survival/4: %zu; %zu GCs\n", ra.n, w.rec.n, rc.n,
           ngc);
    /* a stopped session gets nothing more */
    TT_CHECK_RESULT(tenure_session_stop(rt, sb), TENURE_OK);
    size_t nb = w.rec.n, na = ra.n;
    tt_collect(rt, 1, 0);
    TT_EXPECT(w.rec.n == nb, "a stopped session got %zu events", w.rec.n - nb);
    TT_EXPECT(ra.n > na, "the remaining session got no event");
    TT_CHECK_RESULT(tenure_session_stop(rt, sa), TENURE_OK);
    TT_CHECK_RESULT(tenure_session_stop(rt, sc), TENURE_OK);
    TT_CHECK_RESULT(tenure_root_area_remove(rt, area), TENURE_OK);
    rec_free(&ra);
    rec_free(&rc);
    world_done(&w);
}

/* ------------------------------------------------------------------------------------------
 * E. rundown
 * ---------------------------------------------------------------------------------------- */
typedef struct seg {
    uint64_t addr, size, type;
} seg;

typedef struct walk_ctx {
    const seg *segs;
    size_t n;
    size_t objects, outside, wrong_type;
} walk_ctx;

static int walk_visit(void *obj, const tenure_type *type, size_t size, int generation, void *context) {
    (void)type;
    walk_ctx *c = context;
    c->objects++;
    uint64_t a = (uint64_t)(uintptr_t)obj;
    const seg *found = NULL;
    for (size_t i = 0; i < c->n; i++)
        if (a >= c->segs[i].addr && a + size <= c->segs[i].addr + c->segs[i].size)
            found = &c->segs[i];
    if (!found) {
        if (c->outside++ < 5)
            fprintf(stderr, "  object %p (gen %d, %zu bytes) is in no reported segment\n", obj, generation, size);
        return 0;
    }
    uint64_t want = generation == 3 ? 1 : generation == 4 ? 3 : 0;
    if (found->type != want && found->type != 2 && c->wrong_type++ < 5)
        fprintf(stderr, "  object %p of generation %d in a segment of type %" PRIu64 "\n", obj, generation,
                found->type);
    return 0;
}

static int seg_cmp(const void *a, const void *b) {
    const seg *x = a, *y = b;
    return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static void test_rundown(void) {
    printf("E. rundown\n");
    world w;
    world_init(&w, NULL);
    tenure_runtime *rt = w.rt;
    tenure_session *st = tenure_session_start_listener(rt, TENURE_KW_GC, 4, rec_listener, &w.rec);
    TT_CHECK(st != NULL);
    /* a frozen segment */
    size_t fcap = 4096;
    char *block = aligned_alloc(64, fcap);
    TT_CHECK(block != NULL);
    memset(block, 0, fcap);
    size_t used = 0;
    for (int i = 0; i < 8; i++)
        used += tenure_frozen_object_init(rt, block + used, w.node_t, 0);
    TT_CHECK_RESULT(tenure_register_frozen_segment(rt, block, used), TENURE_OK);
    static void *roots[512];
    memset(roots, 0, sizeof roots);
    tenure_root_area *area = tenure_root_area_add(rt, roots, 512);
    for (size_t i = 0; i < tt_scaled(300000, 30000); i++) {
        tt_node *n = alloc_node(&w, i);
        if (i % 11 == 0)
            roots[tt_rand_below(512)] = n;
        if (i % 9000 == 0)
            roots[tt_rand_below(512)] = alloc_bytes(&w, 90000 + tt_rand_below(500000), 0);
        if (i % 7000 == 0)
            roots[tt_rand_below(512)] = alloc_pinned_node(&w, i);
        if (i == 150000)
            tt_collect(rt, 2, TENURE_COLLECT_AGGRESSIVE); /* gives regions back */
    }
    /* one large and one pinned-heap object surely alive */
    roots[0] = alloc_bytes(&w, 200000, 0);
    roots[1] = alloc_pinned_node(&w, 5);
    /* the live set according to the session that saw everything */
    seg *live = malloc(w.rec.n * sizeof *live + sizeof *live);
    size_t nlive = 0, nfree_events = 0;
    for (size_t i = 0; i < w.rec.n; i++) {
        const rec_ev *x = &w.rec.v[i];
        if (is(x, "GCCreateSegment_V1")) {
            uint64_t a = fu(x, "Address");
            for (size_t k = 0; k < nlive; k++)
                TT_EXPECT(live[k].addr != a, "GCCreateSegment_V1 for %#" PRIx64 " that exists already", a);
            live[nlive++] = (seg){a, fu(x, "Size"), fu(x, "Type")};
        } else if (is(x, "GCFreeSegment_V1")) {
            uint64_t a = fu(x, "Address");
            nfree_events++;
            size_t k = 0;
            while (k < nlive && live[k].addr != a)
                k++;
            TT_EXPECT(k < nlive, "GCFreeSegment_V1 for %#" PRIx64 " that was never created", a);
            if (k < nlive)
                live[k] = live[--nlive];
        }
    }
    recorder late = {0};
    tenure_session *sl = tenure_session_start_listener(rt, TENURE_KW_GC, 4, rec_listener, &late);
    TT_CHECK(sl != NULL);
    size_t nrun = late.n;
    seg *run = malloc((nrun + 1) * sizeof *run);
    for (size_t i = 0; i < nrun; i++) {
        TT_EXPECT(is(&late.v[i], "GCCreateSegment_V1"), "rundown event %zu is %s", i, late.v[i].desc->name);
        run[i] = (seg){fu(&late.v[i], "Address"), fu(&late.v[i], "Size"), fu(&late.v[i], "Type")};
        TT_EXPECT(fu(&late.v[i], "ClrInstanceID") == tenure_instance_id(rt), "ClrInstanceID");
    }
    qsort(live, nlive, sizeof *live, seg_cmp);
    qsort(run, nrun, sizeof *run, seg_cmp);
    printf("  rundown %zu segments; live by create/free events %zu (%zu frees seen)\n", nrun, nlive, nfree_events);
    TT_EXPECT(nrun == nlive, "rundown gave %zu segments, the events say %zu are in use", nrun, nlive);
    for (size_t i = 0; i < nrun && i < nlive; i++)
        TT_EXPECT(run[i].addr == live[i].addr && run[i].size == live[i].size && run[i].type == live[i].type,
                  "segment %zu: rundown %#" PRIx64 "+%" PRIu64 " type %" PRIu64 ", events %#" PRIx64 "+%" PRIu64
                  " type %" PRIu64,
                  i, run[i].addr, run[i].size, run[i].type, live[i].addr, live[i].size, live[i].type);
    for (size_t i = 1; i < nrun; i++)
        TT_EXPECT(run[i - 1].addr + run[i - 1].size <= run[i].addr, "rundown segments overlap");
    int types[4] = {0};
    for (size_t i = 0; i < nrun; i++)
        if (run[i].type < 4)
            types[run[i].type]++;
    TT_EXPECT(types[0] && types[1] && types[2] && types[3], "rundown segment types: soh %d loh %d frozen %d poh %d",
              types[0], types[1], types[2], types[3]);
    walk_ctx wc = {run, nrun, 0, 0, 0};
    TT_CHECK_RESULT(tenure_heap_walk(rt, walk_visit, &wc), TENURE_OK);
    TT_EXPECT(wc.objects > 0 && wc.outside == 0 && wc.wrong_type == 0,
              "%zu objects walked, %zu outside the rundown's segments, %zu in a segment of the wrong type", wc.objects,
              wc.outside, wc.wrong_type);
    /* a session that does not want segments gets no rundown */
    recorder none = {0};
    tenure_session *sn = tenure_session_start_listener(rt, TENURE_KW_GC_HANDLE, 5, rec_listener, &none);
    TT_EXPECT(none.n == 0, "a GCHandle session got %zu rundown events", none.n);
    TT_CHECK_RESULT(tenure_session_stop(rt, sn), TENURE_OK);
    TT_CHECK_RESULT(tenure_session_stop(rt, sl), TENURE_OK);
    TT_CHECK_RESULT(tenure_session_stop(rt, st), TENURE_OK);
    TT_CHECK_RESULT(tenure_root_area_remove(rt, area), TENURE_OK);
    free(live);
    free(run);
    rec_free(&late);
    rec_free(&none);
    world_done(&w);
    free(block);
}

/* ------------------------------------------------------------------------------------------
 * F. moved and surviving ranges
 * ---------------------------------------------------------------------------------------- */
enum { NTRACK = 3000 };

typedef struct tracked {
    void *old;
    int gen;
    uint64_t id;
} tracked;

typedef struct range {
    uint64_t old, new_, len;
    int moved;
} range;

/* Tracked objects: nodes (id in the node), LOH byte arrays (id in the first data word), POH
 * nodes; slots[] is a root area. Arrays: the id is stored in data. */
static uint64_t obj_id(world *w, void *o) {
    if (tenure_object_type(w->rt, o) == w->node_t)
        return ((tt_node *)o)->id;
    uint64_t id;
    memcpy(&id, tenure_array_data(o), 8);
    return id;
}

static int range_cmp(const void *a, const void *b) {
    const range *x = a, *y = b;
    return x->old < y->old ? -1 : x->old > y->old;
}

static void ranges_check(world *w, void **slots, const tracked *tr, size_t ntr, void *const *dead, size_t ndead,
                         const tenure_gc_info *info, int sweeping, unsigned flags, const char *what) {
    size_t nr = 0;
    for (size_t i = 0; i < w->rec.n; i++) {
        const rec_ev *x = &w->rec.v[i];
        TT_EXPECT(is(x, "GCBulkMovedObjectRanges") || is(x, "GCBulkSurvivingObjectRanges"),
                  "%s: keyword 0x400000 gave %s", what, x->desc->name);
        nr += fu(x, "Count");
    }
    range *rg = calloc(nr + 1, sizeof *rg);
    size_t k = 0, nmoved_ev = 0, nsurv_ev = 0;
    uint64_t idx_m = 0, idx_s = 0;
    for (size_t i = 0; i < w->rec.n; i++) {
        const rec_ev *x = &w->rec.v[i];
        int moved = is(x, "GCBulkMovedObjectRanges");
        uint64_t c = fu(x, "Count");
        TT_EXPECT(fu(x, "Index") == (moved ? idx_m : idx_s), "%s: bulk Index %" PRIu64 ", expected %" PRIu64, what,
                  fu(x, "Index"), moved ? idx_m : idx_s);
        if (moved)
            idx_m++, nmoved_ev++;
        else
            idx_s++, nsurv_ev++;
        for (uint64_t j = 0; j < c; j++) {
            range *r = &rg[k++];
            r->moved = moved;
            if (moved) {
                r->old = fel(x, "Values", j, "OldRangeBase");
                r->new_ = fel(x, "Values", j, "NewRangeBase");
                r->len = fel(x, "Values", j, "RangeLength");
            } else {
                r->old = r->new_ = fel(x, "Values", j, "RangeBase");
                r->len = fel(x, "Values", j, "RangeLength");
            }
            TT_EXPECT(r->len > 0, "%s: empty range", what);
        }
    }
    if (sweeping && info->compacted == 0 && !(flags & (TENURE_COLLECT_COMPACT_LOH | TENURE_COLLECT_AGGRESSIVE)))
        TT_EXPECT(nmoved_ev == 0, "%s: GCCompactMode=2 but %zu moved-range events", what, nmoved_ev);
    size_t in_moved = 0, in_surv = 0, not_condemned = 0, bad = 0;
    for (size_t t = 0; t < ntr; t++) {
        uint64_t old = (uint64_t)(uintptr_t)tr[t].old;
        void *now = slots[t];
        TT_CHECK(now != NULL);
        TT_EXPECT(obj_id(w, now) == tr[t].id, "%s: tracked object %zu has id %" PRIu64 ", expected %" PRIu64, what, t,
                  obj_id(w, now), tr[t].id);
        int condemned = gen_condemned(tr[t].gen, info->generation);
        size_t hits = 0;
        const range *hit = NULL;
        for (size_t i = 0; i < nr; i++)
            if (old >= rg[i].old && old < rg[i].old + rg[i].len)
                hits++, hit = &rg[i];
        if (!condemned) {
            not_condemned++;
            if (hits != 0 && bad++ < 10)
                TT_EXPECT(hits == 0, "%s: object of generation %d (not condemned by a gen%d GC) in %zu ranges", what,
                          tr[t].gen, info->generation, hits);
            TT_EXPECT(now == tr[t].old, "%s: an object of a generation not condemned moved", what);
            continue;
        }
        if (hits != 1) {
            if (bad++ < 10)
                TT_EXPECT(hits == 1, "%s: survivor %zu (generation %d, %p) lies in %zu ranges", what, t, tr[t].gen,
                          tr[t].old, hits);
            continue;
        }
        uint64_t expect = hit->new_ + (old - hit->old);
        if (expect != (uint64_t)(uintptr_t)now && bad++ < 10)
            TT_EXPECT(0, "%s: survivor %zu (generation %d) was at %p; its %s range says %#" PRIx64 ", it is at %p",
                      what, t, tr[t].gen, tr[t].old, hit->moved ? "moved" : "surviving", expect, now);
        if (tr[t].gen < 3) {
            int compacted = (info->compacted >> tr[t].gen) & 1;
            if (compacted != hit->moved && bad++ < 10)
                TT_EXPECT(0, "%s: generation %d %s, but its survivor is in a %s range", what, tr[t].gen,
                          compacted ? "compacted" : "swept", hit->moved ? "moved" : "surviving");
        }
        if (hit->moved)
            in_moved++;
        else
            in_surv++;
    }
    size_t dead_hits = 0;
    for (size_t d = 0; d < ndead; d++) {
        uint64_t a = (uint64_t)(uintptr_t)dead[d];
        for (size_t i = 0; i < nr; i++)
            if (a >= rg[i].old && a < rg[i].old + rg[i].len)
                dead_hits++;
    }
    TT_EXPECT(dead_hits == 0, "%s: %zu dead objects lie in survivor ranges", what, dead_hits);
    /* ranges of one kind do not overlap (old side, and the new side of moved ones) */
    qsort(rg, nr, sizeof *rg, range_cmp);
    for (size_t i = 1; i < nr; i++)
        if (rg[i - 1].old + rg[i - 1].len > rg[i].old) {
            TT_EXPECT(0, "%s: ranges at %#" PRIx64 "+%" PRIu64 " and %#" PRIx64 " overlap", what, rg[i - 1].old,
                      rg[i - 1].len, rg[i].old);
            break;
        }
    printf("  %-34s gen%d compacted %#x: %zu ranges (%zu/%zu events); survivors in moved %zu, surviving %zu, "
           "not condemned %zu; %zu dead checked\n",
           what, info->generation, info->compacted, nr, nmoved_ev, nsurv_ev, in_moved, in_surv, not_condemned, ndead);
    free(rg);
}

static void ranges_scenario(int compact_mode) {
    tenure_config cfg;
    tt_config(&cfg);
    cfg.GCCompactMode = (uint32_t)compact_mode;
    cfg.GCgen0size = 4u << 20;
    cfg.gcConcurrent = 0; /* each collect is one blocking GC with its ranges */
    world w;
    world_init(&w, &cfg);
    tenure_runtime *rt = w.rt;
    static void *slots[NTRACK];
    memset(slots, 0, sizeof slots);
    tenure_root_area *area = tenure_root_area_add(rt, slots, NTRACK);
    TT_CHECK(area != NULL);
    tracked *tr = calloc(NTRACK, sizeof *tr);
    void **dead = calloc(NTRACK * 4, sizeof *dead);
    uint64_t *dead_gc = calloc(NTRACK * 4, sizeof *dead_gc);
    tenure_handle *pins[8] = {0};
    tenure_session *s =
        tenure_session_start_listener(rt, TENURE_KW_GC_HEAP_SURVIVAL_AND_MOVEMENT, 5, rec_listener, &w.rec);
    TT_CHECK(s != NULL);
    static const struct {
        int gen;
        unsigned flags;
    } plan[] = {{0, TENURE_COLLECT_COMPACT},
                {0, 0},
                {1, TENURE_COLLECT_COMPACT},
                {0, TENURE_COLLECT_COMPACT},
                {2, TENURE_COLLECT_COMPACT},
                {1, 0},
                {2, TENURE_COLLECT_COMPACT | TENURE_COLLECT_COMPACT_LOH},
                {0, TENURE_COLLECT_COMPACT},
                {2, TENURE_COLLECT_AGGRESSIVE},
                {2, 0}};
    uint64_t next_id = 1;
    for (size_t p = 0; p < sizeof plan / sizeof plan[0]; p++) {
        /* replace a third of the tracked objects by new ones, with garbage in between */
        size_t ndead = 0;
        for (size_t t = 0; t < NTRACK; t++) {
            if (slots[t] && tt_rand_below(3))
                continue;
            uint64_t r = tt_rand();
            void *o;
            if (r % 300 == 0) {
                o = alloc_bytes(&w, 90000 + (size_t)(r >> 20) % 100000, 0);
            } else if (r % 300 == 1) {
                o = alloc_pinned_node(&w, 0);
            } else {
                o = alloc_node(&w, 0);
            }
            uint64_t id = next_id++;
            if (tenure_object_type(rt, o) == w.node_t) {
                ((tt_node *)o)->id = id;
                tt_node_seal(o);
            } else {
                memcpy(tenure_array_data(o), &id, 8);
            }
            slots[t] = o;
            tr[t].id = id;
            for (uint64_t g = tt_rand_below(3); g > 0 && ndead < NTRACK * 4; g--) {
                dead_gc[ndead] = tt_stats(rt).gc_count;
                dead[ndead++] = alloc_node(&w, 0);
            }
        }
        for (size_t k = 0; k < 8; k++) { /* pinned plugs */
            if (pins[k])
                TT_CHECK_RESULT(tenure_handle_free(rt, pins[k]), TENURE_OK);
            pins[k] = tenure_handle_new(rt, TENURE_HANDLE_PINNED, slots[tt_rand_below(NTRACK)]);
        }
        /* only the dead allocated since the last GC are known to be dead and unreused */
        uint64_t gcs = tt_stats(rt).gc_count;
        size_t nd = 0;
        for (size_t d = 0; d < ndead; d++)
            if (dead_gc[d] == gcs && tenure_object_generation(rt, dead[d]) == 0)
                dead[nd++] = dead[d];
        for (size_t t = 0; t < NTRACK; t++) {
            tr[t].old = slots[t];
            tr[t].gen = tenure_object_generation(rt, slots[t]);
        }
        rec_clear(&w.rec);
        size_t ninfo = w.inf.n;
        tt_collect(rt, plan[p].gen, plan[p].flags);
        TT_CHECK(w.inf.n == ninfo + 1, "collect made %zu GCs", w.inf.n - ninfo);
        char what[96];
        snprintf(what, sizeof what, "mode %d collect(%d, %#x)", compact_mode, plan[p].gen, plan[p].flags);
        ranges_check(&w, slots, tr, NTRACK, dead, nd, &w.inf.v[ninfo], compact_mode == 2, plan[p].flags, what);
        TT_CHECK_RESULT(tenure_verify_heap(rt), TENURE_OK);
    }
    for (size_t k = 0; k < 8; k++)
        if (pins[k])
            TT_CHECK_RESULT(tenure_handle_free(rt, pins[k]), TENURE_OK);
    TT_CHECK_RESULT(tenure_session_stop(rt, s), TENURE_OK);
    TT_CHECK_RESULT(tenure_root_area_remove(rt, area), TENURE_OK);
    free(tr);
    free(dead);
    free(dead_gc);
    world_done(&w);
}

static void test_ranges(void) {
    printf("F. moved and surviving ranges\n");
    ranges_scenario(0);
    ranges_scenario(1);
    ranges_scenario(2);
}

/* ------------------------------------------------------------------------------------------ */
/* ------------------------------------------------------------------------------------------
 * G. A background GC through a listener (gcConcurrent=1): events from two threads, in the
 * spec's background order
 * ---------------------------------------------------------------------------------------- */

/* What G expects of a background GC numbered bgc in r: GCStart Type 1 Depth 2 after a
 * suspension of Reason 1; foreground GCs inside it (Type 2), each ended before the next starts;
 * its final pause (SuspendEEBegin Reason 6, no GCStart) before its GCEnd; GCEnd then
 * GCHeapStats, on the BGC's own thread; the thread created once and terminated at the end. */
static void check_background_order(const recorder *r, uint64_t bgc) {
    size_t start = r->n, final_pause = r->n, end = r->n, foreground = 0, open_fg = 0;
    size_t created = 0, terminated = 0;
    uint64_t bgc_tid = 0, fg_count = 0;
    for (size_t i = 0; i < r->n; i++) {
        const rec_ev *x = &r->v[i];
        if (is(x, "GCCreateConcurrentThread_V1"))
            created++;
        else if (is(x, "GCTerminateConcurrentThread_V1"))
            terminated++;
        else if (is(x, "GCStart_V2") && fu(x, "Count") == bgc) {
            TT_EXPECT(fu(x, "Type") == 1 && fu(x, "Depth") == 2, "G: GC %" PRIu64 " Type %" PRIu64 " Depth %" PRIu64,
                      bgc, fu(x, "Type"), fu(x, "Depth"));
            start = i;
        } else if (is(x, "GCStart_V2") && start < r->n && end == r->n) {
            TT_EXPECT(fu(x, "Type") == 2, "G: GC %" PRIu64 " during the background GC has Type %" PRIu64,
                      fu(x, "Count"), fu(x, "Type"));
            TT_EXPECT(!open_fg, "G: foreground GC %" PRIu64 " starts before the last one ended", fu(x, "Count"));
            fg_count = fu(x, "Count");
            open_fg = 1;
            foreground++;
        } else if (is(x, "GCEnd_V1") && open_fg && fu(x, "Count") == fg_count) {
            open_fg = 0;
        } else if (is(x, "GCSuspendEEBegin_V1") && fu(x, "Reason") == 6 && start < r->n && end == r->n) {
            TT_EXPECT(final_pause == r->n, "G: background GC %" PRIu64 " has two final pauses", bgc);
            TT_EXPECT(!open_fg, "G: the final pause inside a foreground GC");
            final_pause = i;
        } else if (is(x, "GCEnd_V1") && fu(x, "Count") == bgc) {
            end = i;
            bgc_tid = x->tid;
            TT_EXPECT(i + 1 < r->n && is(&r->v[i + 1], "GCHeapStats_V2") && r->v[i + 1].tid == bgc_tid,
                      "G: GCHeapStats_V2 does not follow the background GC's GCEnd on its thread");
        }
    }
    TT_EXPECT(start < final_pause && final_pause < end && end < r->n,
              "G: background GC %" PRIu64 ": start at %zu, final pause at %zu, end at %zu of %zu events", bgc, start,
              final_pause, end, r->n);
    TT_EXPECT(created == 1 && terminated == 1, "G: the BGC thread created %zu times, terminated %zu times", created,
              terminated);
    printf("  background GC %" PRIu64 ": %zu foreground GCs inside it, its end on thread %" PRIu64 "\n", bgc,
           foreground, bgc_tid);
}

static void test_background(void) {
    printf("G. a background GC through a listener\n");
    tenure_config cfg;
    tt_config(&cfg);
    cfg.gcConcurrent = 1;
    cfg.GCgen0size = 256 * 1024;
    world w;
    world_init(&w, &cfg);
    static pthread_mutex_t rec_mx = PTHREAD_MUTEX_INITIALIZER; /* the BGC thread calls the listener too */
    w.rec.mx = &rec_mx;
    tenure_runtime *rt = w.rt;
    tenure_session *s = tenure_session_start_listener(rt, 0x1, 5, rec_listener, &w.rec);
    TT_CHECK(s != NULL);
    enum { NROOTS = 4096 };
    static void *roots[NROOTS];
    memset(roots, 0, sizeof roots);
    tenure_root_area *ra = tenure_root_area_add(rt, roots, NROOTS);
    TT_CHECK(ra != NULL);
    for (size_t i = 0; i < tt_scaled(200000, 20000); i++) { /* an old heap worth marking */
        tt_node *n = alloc_node(&w, i);
        tenure_write_ref(rt, n, &n->a, roots[i % NROOTS]);
        roots[i % NROOTS] = n;
    }
    tt_collect(rt, 2, 0);
    TT_CHECK_RESULT(tenure_collect(rt, 2, TENURE_COLLECT_NONBLOCKING), TENURE_OK);
    uint64_t bgc = tt_stats(rt).gc_count; /* (its number, taken at its initial pause) */
    TT_CHECK(tt_stats(rt).background_gc_in_progress);
    for (size_t i = 0; i < 200 && tt_stats(rt).background_gc_in_progress; i++) { /* foreground GCs meanwhile */
        for (size_t k = 0; k < 2000; k++)
            alloc_node(&w, k);
        tt_collect(rt, 0, 0);
    }
    tenure_destroy(rt); /* (ends the BGC if it has not ended) */
    w.rt = NULL;
    check_background_order(&w.rec, bgc);
    rec_free(&w.rec);
    free(w.inf.v);
}

int main(int argc, char **argv) {
    double t0 = tt_now();
    tt_rng_init("events_listener");
    const char *only = argc > 1 ? argv[1] : NULL;
#define RUN(letter, fn)                            \
    do {                                           \
        if (!only || strchr(only, letter)) {       \
            double t_ = tt_now();                  \
            fn();                                  \
            printf("  (%.2f s)\n", tt_now() - t_); \
        }                                          \
    } while (0)
    RUN('A', test_sequence);
    RUN('B', test_pins);
    RUN('C', test_handles_only);
    RUN('D', test_two_sessions);
    RUN('E', test_rundown);
    RUN('F', test_ranges);
    RUN('G', test_background);
    return tt_finish("events_listener", t0);
}
