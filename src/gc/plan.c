/* plan.c - the plan: for each condemned generation of the small object heap, compact or
 * sweep, decided from the space compaction would win, and in a compacted one, for each region,
 * move it or keep it (an almost entirely live region is swept in place: "kept regions"). Compaction keeps order: survivors form
 * plugs (runs of neighbouring marked objects, all pinned or all not); the plan, the only walk
 * over the survivors' sizes, records each plug's first and last word in plug_bits and gives
 * each movable plug a new address by packing plugs, in address order, into the generation's
 * own regions (also in address order), skipping pinned plugs, which stay where they are. A
 * plug's move distance (delta) is stored in the 8 bytes before it (a dead word), in the
 * region, or in a pinned plug's record (gc_internal.h "Plugs"). The plug bits and a 512-byte
 * brick table find the plug of any live address in O(1). The later phases (relocate.c,
 * compact.c, sweep.c, promote.c) carry the plan out. See docs/design/collector.md.
 */
#include "gc/gc_internal.h"

typedef struct cursor {
    tn_gen_plan *gp;
    tn_gc_record *record; /* the collection's: pinned bytes */
    size_t ri;            /* destination region index in gp->dests */
    size_t hi;            /* the end of the heap's destinations there (the cursor stays below) */
    char *pos;            /* next free byte there */
    size_t pin;           /* index in rt->plan.pins of the next pinned plug in that region */
    tn_place_item *item;  /* the place part's item it places (pins and gaps at their given
                             indexes), or NULL: thread 0 alone, pushing them */
} cursor;

/* The plan's order: by heap (each heap's survivors stay on it), then by address. */
static inline bool before(const tn_region *a, const tn_region *b) {
    return a->heap != b->heap ? a->heap < b->heap : a->start < b->start;
}

/* Heap sort in the plan's order: in place, unlike the C library's qsort, which may malloc (no
 * allocation inside a pause). */
static void sift_down(tn_region **a, size_t i, size_t n) {
    for (size_t c; (c = 2 * i + 1) < n; i = c) {
        if (c + 1 < n && before(a[c], a[c + 1]))
            c++;
        if (!before(a[i], a[c]))
            return;
        tn_region *t = a[i];
        a[i] = a[c];
        a[c] = t;
    }
}

static void sort_for_plan(tn_region **a, size_t n) {
    for (size_t i = n / 2; i-- > 0;)
        sift_down(a, i, n);
    for (size_t end = n; end-- > 1;) {
        tn_region *t = a[0];
        a[0] = a[end];
        a[end] = t;
        sift_down(a, 0, end);
    }
}

/* The generation's regions in the plan's order, in storage reserved at creation (no malloc
 * during a GC). The destinations are the regions themselves until tails are chosen. */
static void collect_regions(tenure_runtime *rt, int gen, tn_gen_plan *gp) {
    gp->regions = rt->plan.plan_regions[gen];
    gp->n = 0;
    for (tn_region *r = tn_heap_regions(rt, gen); r; r = r->next)
        gp->regions[gp->n++] = r;
    sort_for_plan(gp->regions, gp->n);
    gp->ntails = 0;
    gp->dests = gp->regions;
    gp->nd = gp->n;
}

/* The emptiest region of generation gen on `heap`, if it has room enough to be a tail. */
static tn_region *tail_of_heap(tenure_runtime *rt, int gen, unsigned heap) {
    tn_region *best = NULL;
    for (tn_region *r = tn_heap_regions(rt, gen); r; r = r->next)
        if (r->heap == heap && (!best || r->end - r->used > best->end - best->used))
            best = r;
    return best && (size_t)(best->end - best->used) >= rt->unit_size / 8 ? best : NULL;
}

/* How many of regions [from, to) of gp are not kept (they move). */
static size_t moving_regions(const tn_gen_plan *gp, size_t from, size_t to) {
    size_t n = 0;
    for (size_t i = from; i < to; i++)
        n += !gp->regions[i]->kept;
    return n;
}

/* The destinations of a compacted generation: its regions that are not kept (below) and,
 * with `tails`, first the free end of one region of the next generation per heap. Survivors of
 * a generation whose next generation is not condemned are packed first into the free end of
 * one of that generation's regions of their heap (the emptiest), so that every GC does not
 * start a new, mostly empty region of the next generation. The destinations become, heap by
 * heap, the heap's tail, then its regions not kept (storage after the regions'); a heap whose
 * regions are all kept has none (it has nothing to place). */
static void choose_dests(tenure_runtime *rt, tn_gen_plan *gp, int gen, bool tails) {
    if (!tails && !gp->nkept)
        return; /* the regions themselves */
    tn_region **dests = rt->plan.plan_regions[gen] + rt->max_units;
    size_t nd = 0;
    for (size_t from = 0, to; from < gp->n; from = to) {
        to = tn_gc_heap_run_end(gp->regions, gp->n, from);
        size_t moving = moving_regions(gp, from, to);
        if (!moving)
            continue;
        tn_region *best = tails ? tail_of_heap(rt, gen + 1, gp->regions[from]->heap) : NULL;
        if (best) {
            tn_region_recount_discarded(rt, best);
            gp->tails[gp->ntails++] = (tn_plan_tail){best, best->used};
            best->plan_used = best->used;
            dests[nd++] = best;
        }
        for (size_t i = from; i < to; i++)
            if (!gp->regions[i]->kept)
                dests[nd++] = gp->regions[i];
    }
    gp->dests = dests;
    gp->nd = nd;
}

/* End of the run of marked objects from s that stops at `stop` (a pinned object, or used). */
static char *unpinned_run_end(tenure_runtime *rt, char *s, char *stop) {
    char *e = s;
    do
        e += tn_obj_size(e);
    while (e < stop && tn_is_marked(rt, e));
    return e;
}

/* End of the run of pinned objects from s (pinned objects are marked). */
static char *pinned_run_end(tenure_runtime *rt, char *s, char *used) {
    char *e = s;
    do
        e += tn_obj_size(e);
    while (e < used && tn_is_pinned(rt, e));
    return e;
}

static inline size_t brick_of(tenure_runtime *rt, const void *p) {
    return ((uintptr_t)p - (uintptr_t)rt->base) >> TN_PLUG_BRICK_SHIFT;
}

static void record_plug_bits(tenure_runtime *rt, char *s, char *e) {
    TN_ASSERT_INTERNAL(e - s >= (ptrdiff_t)TN_MIN_OBJECT);
    tn_bit_set(rt->plug_bits, tn_bit_index(rt, s));
    tn_bit_set(rt->plug_bits, tn_bit_index(rt, e) - 1);
}

/* A plug of a compacting region (its bits recorded): the bricks it covers (each brick whose
 * first byte lies in [s, e) names s, except s's own: there the plug bits find it), and its
 * delta. */
static inline __attribute__((always_inline)) void record_plug(tenure_runtime *rt, tn_region *r, char *s, char *e,
                                                              intptr_t delta, bool adjacent) {
    int32_t off = (int32_t)((s - r->start) / 8);
    for (size_t b = brick_of(rt, s) + 1, last = brick_of(rt, e - 8); b <= last; b++)
        rt->plug_bricks[b] = off;
    if (s == r->start) {
        r->first_plug_delta = delta;
    } else if (!adjacent) {
        ((intptr_t *)s)[-1] = delta;
    } else if (!tn_is_pinned(rt, s)) { /* after a pinned plug: its record holds it (a pinned plug: 0) */
        tn_pin *last = tn_vec_at(&rt->plan.pins, (size_t)r->pin_first + r->pin_count - 1); /* the region's last */
        TN_ASSERT_INTERNAL(r->pin_count > 0 && last->end == s);
        last->after_delta = delta;
    }
}

/* The delta of a plug that directly follows another (next to a pinned plug): the pinned
 * plug's record, found by binary search among the region's pins. */
__attribute__((noinline)) intptr_t tn_plug_adjacent_delta(tenure_runtime *rt, tn_region *r, char *s) {
    size_t lo = r->pin_first, hi = (size_t)r->pin_first + r->pin_count; /* pins[lo..hi) by address */
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (((tn_pin *)tn_vec_at(&rt->plan.pins, mid))->start <= s)
            lo = mid;
        else
            hi = mid;
    }
    tn_pin *p = tn_vec_at(&rt->plan.pins, lo);
    if (p->start == s)
        return 0;
    TN_ASSERT_INTERNAL(p->end == s);
    return p->after_delta;
}

/* A swept region's plugs (maximal runs of marked objects, pinned or not): only their bits. */
static void record_runs(tenure_runtime *rt, tn_region *r) {
    size_t end = tn_bit_index(rt, r->used);
    for (size_t b = tn_bit_next(rt->mark_bits, tn_bit_index(rt, r->start), end); b < end;) {
        char *e = unpinned_run_end(rt, tn_bit_addr(rt, b), r->used);
        record_plug_bits(rt, tn_bit_addr(rt, b), e);
        b = tn_bit_next(rt->mark_bits, tn_bit_index(rt, e), end);
    }
}

static void add_gap(tenure_runtime *rt, cursor *c, char *start, size_t size) {
    if (size == 0)
        return;
    tn_gap *g;
    if (c->item) { /* its slice of the list: at most one gap per pinned plug */
        TN_ASSERT_INTERNAL(c->item->gaps < c->item->pins);
        g = tn_vec_at(&rt->plan.gaps, c->item->pin_first + c->item->gaps++);
    } else if ((g = tn_vec_push_reserved(&rt->plan.gaps)) == NULL) {
        rt->plan.plan_failed = true; /* the generation will be swept instead (scratch.c) */
        return;
    }
    g->start = start;
    g->size = size;
}

static inline tn_pin *pin_at(tenure_runtime *rt, size_t i) { return tn_vec_at(&rt->plan.pins, i); }

static void cursor_enter(cursor *c, size_t ri) {
    tn_region *r = c->gp->dests[ri];
    TN_ASSERT_INTERNAL(ri < c->hi);
    c->ri = ri;
    c->pos = r->condemned ? r->start : r->used;
    c->pin = r->pin_first;
}

/* The new address of a plug of len bytes; the cursor never passes the source plug. */
static inline __attribute__((always_inline)) char *place(tenure_runtime *rt, cursor *c, size_t len) {
    for (;;) {
        tn_region *r = c->gp->dests[c->ri];
        bool at_pin = c->pin < (size_t)r->pin_first + r->pin_count;
        char *limit = at_pin ? pin_at(rt, c->pin)->start : r->end;
        if ((size_t)(limit - c->pos) >= len) {
            char *d = c->pos;
            c->pos += len;
            return d;
        }
        if (at_pin) {
            add_gap(rt, c, c->pos, (size_t)(limit - c->pos));
            c->pos = pin_at(rt, c->pin)->end;
            c->pin++;
        } else {
            r->plan_used = c->pos;
            cursor_enter(c, c->ri + 1);
        }
    }
}

/* Regions from the cursor's on keep only their pinned plugs, with free space between. Those
 * after it hold nothing else: a gen0 or gen1 one is demoted (stays in its generation, as the
 * .NET collector demotes pinned plugs), so the space around the pins is reclaimed by the next
 * GC of that generation instead of being promoted as fragmentation. Since a pinned plug holds
 * only pinned objects (their live neighbours moved out), re-marking it in every GC of its
 * generation costs what it pins. */
static void finish_cursor(tenure_runtime *rt, cursor *c) {
    for (size_t ri = c->ri; ri < c->hi; ri++) {
        tn_region *r = c->gp->dests[ri];
        r->demote = ri > c->ri && r->pin_count > 0 && r->gen < TN_GEN2;
        char *pos = ri == c->ri ? c->pos : r->start;
        size_t pin = ri == c->ri ? c->pin : r->pin_first;
        for (; pin < (size_t)r->pin_first + r->pin_count; pin++) {
            add_gap(rt, c, pos, (size_t)(pin_at(rt, pin)->start - pos));
            pos = pin_at(rt, pin)->end;
        }
        r->plan_used = pos;
    }
}

/* A pinned plug's record: pushed on thread 0 alone; in the place part, at the index its region
 * was given (tn_gc_place_begin: the plan part counted them). Its bytes count for its heap (one
 * item per heap and generation writes each); tn_gc_plan_end sums the heaps per generation. */
static tn_pin *push_pin(tenure_runtime *rt, cursor *c, tn_region *r, char *s, char *e) {
    tn_pin *p;
    if (c->item) {
        size_t i = (size_t)r->pin_first + r->pin_count;
        TN_ASSERT_INTERNAL(i < c->item->pin_first + c->item->pins);
        p = tn_vec_at(&rt->plan.pins, i);
    } else {
        rt->plan.pins_seen++;
        if ((p = tn_vec_push_reserved(&rt->plan.pins)) == NULL) {
            rt->plan.plan_failed = true; /* as in add_gap */
            return NULL;
        }
    }
    *p = (tn_pin){s, e, 0};
    r->pin_count++;
    c->record->heaps[r->heap].pinned_bytes[r->gen] += (size_t)(e - s);
    return p;
}

/* Give one plug of a compacted region its new place (movable) or record it (pinned), with
 * its bricks and delta. Once the plan has failed (a list full: it will be abandoned) only the
 * pinned plugs are counted, so that the next GC reserves room for all of them (scratch.c). */
static inline __attribute__((always_inline)) void place_plug(tenure_runtime *rt, cursor *c, tn_region *r, char *s,
                                                             char *e, bool adjacent, bool pinned) {
    intptr_t delta = 0;
    if (pinned) {
        if (!push_pin(rt, c, r, s, e))
            return;
    } else if (rt->plan.plan_failed) {
        return; /* (its pinned neighbour may have no record) */
    } else {
        delta = place(rt, c, (size_t)(e - s)) - s;
    }
    record_plug(rt, r, s, e, delta, adjacent);
}

static void begin_placing(tenure_runtime *rt, const cursor *c, tn_region *r) {
    if (!c->item) /* (in the place part: given by tn_gc_place_begin) */
        r->pin_first = (uint32_t)rt->plan.pins.count;
    r->pin_count = 0;
    r->compacting = true;
}

/* A compacted region's plugs (the one walk over the survivors' sizes): maximal runs of marked
 * objects all pinned or all not pinned, their plug bits recorded; with a cursor (c), each also
 * placed as it is found. Inlined twice, c NULL or not. */
static inline __attribute__((always_inline)) void walk_plugs(tenure_runtime *rt, tn_region *r, cursor *c) {
    size_t end = tn_bit_index(rt, r->used);
    size_t next_pin = tn_bit_next(rt->pin_bits, tn_bit_index(rt, r->start), end);
    char *prev_end = NULL;
    for (size_t b = tn_bit_next(rt->mark_bits, tn_bit_index(rt, r->start), end); b < end;) {
        char *s = tn_bit_addr(rt, b), *e;
        bool pinned = b == next_pin;
        if (pinned) {
            e = pinned_run_end(rt, s, r->used);
            next_pin = tn_bit_next(rt->pin_bits, tn_bit_index(rt, e), end);
        } else {
            e = unpinned_run_end(rt, s, next_pin < end ? tn_bit_addr(rt, next_pin) : r->used);
        }
        record_plug_bits(rt, s, e);
        if (c)
            place_plug(rt, c, r, s, e, s == prev_end, pinned);
        else
            r->pin_count += pinned;
        prev_end = e;
        size_t eb = tn_bit_index(rt, e);
        b = eb < end && tn_bit_test(rt->mark_bits, eb) ? eb : tn_bit_next(rt->mark_bits, eb, end);
    }
}

/* In the plan part, when the GC threads share it: only the bits (placed afterwards), and the
 * region's pinned plugs counted (its share of the pin list: tn_gc_place_begin). */
static void record_plugs(tenure_runtime *rt, tn_region *r) {
    r->pin_count = 0;
    walk_plugs(rt, r, NULL);
}

/* On thread 0 alone: found and placed in one walk. */
static void plan_region(tenure_runtime *rt, cursor *c, tn_region *r) {
    begin_placing(rt, c, r);
    walk_plugs(rt, r, c);
}

/* After a shared plan part: each plug of the region (found by record_plugs) placed, per plug
 * from the plug bits. */
static void place_region(tenure_runtime *rt, cursor *c, tn_region *r) {
    begin_placing(rt, c, r);
    char *prev_end = NULL;
    tn_plug_iter it;
    tn_plug_iter_init(&it, rt, r);
    for (size_t b, eb; tn_plug_iter_next(&it, &b, &eb);) {
        char *s = tn_bit_addr(rt, b), *e = tn_bit_addr(rt, eb) + 8;
        place_plug(rt, c, r, s, e, s == prev_end, tn_bit_test(rt->pin_bits, b));
        prev_end = e;
    }
}

/* Undo a plan that could not be completed (the pin or gap list, reserved before the pause,
 * was full): the generation is swept instead, which needs no memory; the GC counts a
 * shortfall and the next one reserves room for the pinned plugs seen (scratch.c). */
static void abandon_plan(tenure_runtime *rt, tn_collection *col, tn_gen_plan *gp, int gen, size_t pins, size_t gaps) {
    for (size_t i = 0; i < gp->n; i++) {
        tn_region *r = gp->regions[i];
        tn_bits_clear(rt->plug_bits, tn_bit_index(rt, r->start), tn_bit_index(rt, r->end));
        r->compacting = r->demote = r->kept = false;
        r->pin_count = 0;
    }
    rt->plan.pins.count = pins;
    rt->plan.gaps.count = gaps;
    for (unsigned h = 0; h < tn_heap_count(rt); h++)
        col->record.heaps[h].pinned_bytes[gen] = 0;
    gp->compact = false;
    gp->nkept = gp->kept_live = 0;
    gp->ntails = 0;
    gp->dests = gp->regions;
    gp->nd = gp->n;
    rt->plan.plan_failed = false;
    col->scratch_short = true;
}

/* The cursor at the first destination of the next heap's, from dests[from] on: its plugs go
 * only there (its tail, then its own regions). */
static void cursor_next_heap(tenure_runtime *rt, cursor *c, size_t from) {
    tn_region **d = c->gp->dests;
    c->hi = tn_gc_heap_run_end(d, c->gp->nd, from);
    /* none yet: a tail has none (in the place part, the heap's first pin index, which a first
     * region that is no tail was given: its own) */
    d[from]->pin_first = (uint32_t)(c->item ? c->item->pin_first : rt->plan.pins.count);
    d[from]->pin_count = 0;
    cursor_enter(c, from);
}

static bool plan_compaction(tenure_runtime *rt, tn_collection *col, tn_gen_plan *gp, int gen) {
    cursor c = {gp, &col->record, 0, 0, NULL, 0, NULL};
    if (gp->n == 0)
        return true;
    size_t pins = rt->plan.pins.count, gaps = rt->plan.gaps.count;
    rt->plan.plan_failed = false;
    const tn_region *prev = NULL; /* the last region placed (kept regions are not: they stay) */
    for (size_t si = 0; si < gp->n; si++) {
        tn_region *r = gp->regions[si];
        if (r->kept)
            continue;
        if (!prev || r->heap != prev->heap) { /* a heap's first region placed */
            if (prev)
                finish_cursor(rt, &c);
            cursor_next_heap(rt, &c, prev ? c.hi : 0);
        }
        prev = r;
        if (col->parallel_after_mark)
            place_region(rt, &c, r);
        else
            plan_region(rt, &c, r);
    }
    if (prev)
        finish_cursor(rt, &c);
    if (!rt->plan.plan_failed)
        return true;
    abandon_plan(rt, col, gp, gen, pins, gaps);
    for (size_t i = 0; i < gp->n; i++) /* swept instead: its plugs are the plain runs */
        record_runs(rt, gp->regions[i]);
    return false;
}

/* Compact or sweep: the reason for compacting (the .NET gc_heap_compact_reason), or -1.
 *
 * Sweeping is cheaper (no relocation, no copying) but nothing allocates in the free objects
 * it leaves in the small object heap: gen0 allocates only at regions' ends, and promotion packs
 * survivors only at the end of one region of the next generation (choose_tail). So a swept
 * hole stays until its generation is compacted, and a swept young region is promoted whole.
 * Hence, as the .NET collector's decide_on_compacting / dt_high_frag_p with its fragmentation
 * burden limits (0.5 for gen0 and gen1, 0.25 for gen2):
 *   gen0, gen1 (promoted after this GC): compact when less than half of the regions' capacity
 *     (their unused tails included: a region promoted nearly empty wastes its tail too) is
 *     live, or when compaction gives back a region; else sweep: most of it survives, and
 *     copying it would cost more than the space it wins.
 *   gen2: compact when a quarter or more of its used space is free (at least a region's worth),
 *     or when compaction gives back a region and committed memory is within an eighth of
 *     GCHeapHardLimit; else sweep.
 * Within a generation compacted for the first two reasons of each, the regions that are
 * almost entirely live are then kept (choose_kept, below): swept in place and promoted whole.
 */
static int compaction_reason(tenure_runtime *rt, const tn_collection *c, int gen, const tn_gen_plan *gp) {
    unsigned flags = c->flags;
    if (gen == TN_POH)
        return -1;
    if (gen == TN_LOH)
        return (flags & TENURE_COLLECT_COMPACT_LOH) || rt->config.GCLOHCompact ? TN_COMPACT_LOH_FORCED : -1;
    if (c->reason == TN_REASON_OOS_SOH || c->reason == TN_REASON_OOS_LOH)
        return TN_COMPACT_LAST_GC;
    if ((flags & TENURE_COLLECT_COMPACT) || rt->config.GCCompactMode == 1)
        return TN_COMPACT_INDUCED;
    if (rt->config.GCCompactMode == 2 || gp->n == 0)
        return -1;
    size_t needed = (gp->live + rt->unit_size - 1) / rt->unit_size;
    bool frees_region = gp->n > needed;
    if (gen < TN_GEN2) {
        size_t capacity = 0;
        for (size_t i = 0; i < gp->n; i++)
            capacity += (size_t)(gp->regions[i]->end - gp->regions[i]->start);
        if (gp->live * 2 < capacity)
            return TN_COMPACT_HIGH_FRAG;
        return frees_region ? TN_COMPACT_FREES_REGION : -1;
    }
    size_t frag = gp->used_total - gp->live;
    if (frag * 4 >= gp->used_total && frag >= rt->unit_size)
        return TN_COMPACT_HIGH_FRAG;
    uint64_t limit = rt->config.GCHeapHardLimit;
    if (frees_region && limit && tn_heap_committed(rt) + limit / 8 >= limit)
        return TN_COMPACT_HIGH_MEM_LOAD;
    return -1;
}

/* Kept regions (the .NET collector's "sweep in plan" regions: decide_on_compaction,
 * should_sweep_in_compact). In a generation compacted for the space it wins (not a compaction
 * that is forced, induced, the last resort before running out of memory or under a memory
 * load), a region whose live bytes are at least TN_KEEP_LIVE_PCT percent of its capacity is not
 * moved: compaction would copy nearly all of it to win at most the rest. It is swept in place
 * (its dead runs become free objects, sweep.c) and promoted whole like any region of its
 * generation, and it is no destination: the generation's other regions compact among
 * themselves (and into the next generation's tail). Relocation leaves references into it
 * alone (it is not compacting) and rebuilds its cards and crossing entries like a swept
 * region's. When every region is kept, or what is left would give back no region when the
 * generation compacts only for that, the whole generation is swept. */
#define TN_KEEP_LIVE_PCT 75

static int choose_kept(tenure_runtime *rt, tn_gen_plan *gp, int why) {
    for (size_t i = 0; i < gp->n; i++) {
        tn_region *r = gp->regions[i];
        r->kept = r->live_bytes * 100 >= (size_t)(r->end - r->start) * TN_KEEP_LIVE_PCT;
        if (r->kept) {
            gp->nkept++;
            gp->kept_live += r->live_bytes;
            r->pin_count = 0;
        }
    }
    if (!gp->nkept)
        return why;
    size_t rest = gp->n - gp->nkept, needed = (gp->live - gp->kept_live + rt->unit_size - 1) / rt->unit_size;
    if (rest && (why != TN_COMPACT_FREES_REGION || rest > needed))
        return why;
    for (size_t i = 0; i < gp->n; i++) /* swept whole */
        gp->regions[i]->kept = false;
    gp->nkept = gp->kept_live = 0;
    return -1;
}

/* Plan one condemned generation: compact or sweep (its plugs: the plan part; a compacted
 * one's new places: tn_gc_plan_end). */
static void plan_generation(tenure_runtime *rt, tn_collection *c, int g) {
    tn_gen_plan *gp = &c->plans[g];
    collect_regions(rt, g, gp);
    for (size_t i = 0; i < gp->n; i++)
        tn_region_recount_discarded(rt, gp->regions[i]);
    for (size_t i = 0; i < gp->n; i++) {
        tn_region *r = gp->regions[i];
        gp->live += r->live_bytes;
        c->record.heaps[r->heap].promoted[g] += r->live_bytes;
        gp->used_total += (size_t)(r->used - r->start);
    }
    c->record.promoted[g] = gp->live;
    int why = compaction_reason(rt, c, g, gp);
    if (why == TN_COMPACT_HIGH_FRAG || why == TN_COMPACT_FREES_REGION)
        why = choose_kept(rt, gp, why);
    gp->compact = why >= 0;
    if (why >= 0 && c->record.compact_reason < 0)
        c->record.compact_reason = why;
    if (gp->compact)
        choose_dests(rt, gp, g, g < TN_GEN2 && !tn_gen_condemned(g + 1, c->condemned));
    c->record.compacted[g] = gp->compact;
}

static bool any_gen(const tn_collection *c, int g) {
    (void)c, (void)g;
    return true;
}

/* Every condemned region's plugs, one region per item (their bits lie in whole words of their
 * own: gc_internal.h "Plugs"): split at pinned objects where the generation is compacted. A
 * compacted generation's plugs are found here only when the GC threads share the part: else
 * thread 0 finds them as it places them (one walk, not two; tn_gc_plan_end). */
void tn_gc_plan_part(tenure_runtime *rt, tn_collection *c, unsigned heap) {
    (void)heap;
    int g;
    for (tn_region *r; (r = tn_gc_region_item(c, tn_gc_take(rt), any_gen, &g));) {
        if (!c->plans[g].compact || r->kept) /* (a kept region is swept) */
            record_runs(rt, r);
        else if (c->parallel_after_mark)
            record_plugs(rt, r);
        /* else found as they are placed (tn_gc_plan_end), in one walk */
    }
}

void tn_gc_plan(tenure_runtime *rt, tn_collection *c) {
    tn_assert_phase(rt, c);
    rt->plan.pins.count = 0;
    rt->plan.gaps.count = 0;
    tn_heap_set_gen0_gaps(rt, NULL); /* every gen0 region is condemned: its free objects change */
    rt->plan.pins_seen = 0;
    for (int g = 0; g < TN_NGEN; g++)
        if (tn_gen_condemned(g, c->condemned))
            plan_generation(rt, c, g);
}

/* ---- the place part (server GC): each heap's plugs placed by one GC thread ----
 *
 * A heap's plugs go only to the heap's own destinations (cursor_next_heap), so each (compacted
 * generation, heap) is placed by one cursor of its own, as thread 0 would place it alone.
 * What the heaps' cursors shared on thread 0 is split beforehand: the pin list by the counts
 * of the plan part (each region's pin_first, in the order thread 0 alone would push them), the
 * gap list by the same indexes (a gap lies in front of a pinned plug of its heap). After the
 * part thread 0 closes up the gap slices, in the same order: the lists end exactly as thread
 * 0 alone leaves them (test_server_parts compares). */

/* The first destination of `heap` in gp->dests (its tail, or its first region). */
static size_t first_dest_of_heap(const tn_gen_plan *gp, unsigned heap) {
    size_t d = 0;
    while (d + 1 < gp->nd && gp->dests[d]->heap != heap)
        d++;
    TN_ASSERT_INTERNAL(gp->dests[d]->heap == heap); /* the heap has regions here: its first dest */
    return d;
}

static void add_items_of_gen(tn_collection *c, int g, size_t *pins) {
    tn_gen_plan *gp = &c->plans[g];
    for (size_t from = 0, to; from < gp->n; from = to) {
        to = tn_gc_heap_run_end(gp->regions, gp->n, from);
        size_t moving = moving_regions(gp, from, to);
        if (!moving)
            continue; /* all kept: nothing to place, and no destination */
        tn_place_item *it = &c->place[c->nplace++];
        *it = (tn_place_item){g, from, to, *pins, 0, 0};
        for (size_t i = from; i < to; i++) {
            tn_region *r = gp->regions[i];
            r->pin_first = (uint32_t)*pins;
            *pins += r->pin_count; /* (a kept region's: 0) */
        }
        it->pins = *pins - it->pin_first;
    }
}

void tn_gc_place_begin(tenure_runtime *rt, tn_collection *c) {
    tn_assert_phase(rt, c);
    c->nplace = 0;
    if (!c->parallel_after_mark)
        return; /* thread 0 finds and places the plugs in one walk (tn_gc_plan_end) */
    size_t pins = 0;
    for (int g = 0; g < TN_NGEN; g++)
        if (tn_gen_condemned(g, c->condemned) && c->plans[g].compact)
            add_items_of_gen(c, g, &pins);
    TN_ASSERT_INTERNAL(c->nplace <= TN_PLACE_ITEMS && rt->plan.pins.count == 0 && rt->plan.gaps.count == 0);
    if (pins > rt->plan.pins.cap || pins > rt->plan.gaps.cap) {
        c->nplace = 0; /* lists too short: thread 0 places, fails, and sweeps instead (scratch.c) */
        return;
    }
    rt->plan.pins.count = pins;
    rt->plan.pins_seen += pins;
}

static void place_item(tenure_runtime *rt, tn_collection *col, tn_place_item *it) {
    tn_gen_plan *gp = &col->plans[it->gen];
    cursor c = {gp, &col->record, 0, 0, NULL, 0, it};
    cursor_next_heap(rt, &c, first_dest_of_heap(gp, gp->regions[it->from]->heap));
    for (size_t i = it->from; i < it->to; i++)
        if (!gp->regions[i]->kept)
            place_region(rt, &c, gp->regions[i]);
    finish_cursor(rt, &c);
    /* every pin counted by the plan part was placed at its index: the next heap's start here */
    TN_ASSERT_INTERNAL(gp->regions[it->to - 1]->pin_first + gp->regions[it->to - 1]->pin_count ==
                       it->pin_first + it->pins);
}

void tn_gc_place_part(tenure_runtime *rt, tn_collection *c, unsigned heap) {
    (void)heap;
    for (size_t k; (k = tn_gc_take(rt)) < c->nplace;)
        place_item(rt, c, &c->place[k]);
}

/* After the place part, thread 0: the gap slices closed up, in item order. */
static void place_end(tenure_runtime *rt, tn_collection *c) {
    size_t n = 0;
    for (size_t k = 0; k < c->nplace; k++) {
        const tn_place_item *it = &c->place[k];
        if (it->gaps && n != it->pin_first)
            memmove(tn_vec_at(&rt->plan.gaps, n), tn_vec_at(&rt->plan.gaps, it->pin_first), it->gaps * sizeof(tn_gap));
        n += it->gaps;
    }
    rt->plan.gaps.count = n;
}

/* After the plan part (and the place part, when the team ran it): the compacted generations'
 * plugs get their new places, in each generation's order (one cursor per heap); a generation
 * whose plan cannot be completed is swept. */
void tn_gc_plan_end(tenure_runtime *rt, tn_collection *c) {
    tn_assert_phase(rt, c);
    if (c->nplace)
        place_end(rt, c);
    c->any_compact = c->any_sweep = false;
    for (int g = 0; g < TN_NGEN; g++) {
        if (!tn_gen_condemned(g, c->condemned))
            continue;
        tn_gen_plan *gp = &c->plans[g];
        if (gp->compact && !c->nplace && !plan_compaction(rt, c, gp, g))
            c->record.compacted[g] = false; /* swept instead: out of memory for the plan */
        c->any_compact |= gp->compact;
        c->any_sweep |= !gp->compact;
        c->record.pinned_bytes[g] = 0; /* every heap's pinned plugs (push_pin) */
        for (unsigned h = 0; h < tn_heap_count(rt); h++)
            c->record.pinned_bytes[g] += c->record.heaps[h].pinned_bytes[g];
    }
    if (rt->plan.pins_seen > rt->plan.pins_needed)
        rt->plan.pins_needed = rt->plan.pins_seen;
}
