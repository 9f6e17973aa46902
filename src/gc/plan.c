/* plan.c - after marking: plan, relocate, compact or sweep, promote.
 *
 * Each condemned generation of the small object heap is either compacted or swept, decided
 * from the space compaction would win. Compaction keeps order: survivors form plugs (runs of
 * neighbouring marked objects); the plan gives each plug a new address by packing plugs, in
 * address order, into the generation's own regions (also in address order), skipping pinned
 * plugs, which stay where they are. A plug's move distance (delta) is stored in the 8 bytes
 * before it (always a dead object: plugs are maximal runs) or, for a plug at a region's
 * start, in the region. A plug-start bitmap and a 4 KiB brick table find the plug of any
 * live address in O(1). Then every reference is relocated, plugs are moved, the space in
 * front of pinned plugs becomes free objects, and empty regions are released. Finally every
 * surviving region is promoted by relabelling it with the next generation.
 * See docs/design/collector.md.
 */
#include "runtime.h"

typedef struct gen_plan {
    tn_region **regions; /* condemned regions of the generation, by address */
    size_t n;
    tn_region **dests;   /* where plugs go: [tail] + regions */
    size_t nd;
    tn_region *tail;     /* a region of the next (uncondemned) generation that takes survivors */
    char *tail_from;     /* its used end before this GC */
    bool compact;
    size_t live, used_total;
} gen_plan;

typedef struct cursor {
    gen_plan *gp;
    size_t ri;  /* destination region index in gp->regions */
    char *pos;  /* next free byte there */
    size_t pin; /* index in rt->pins of the next pinned plug in that region */
} cursor;

/* Heap sort by address: in place, unlike the C library's qsort, which may malloc (no
 * allocation inside a pause). */
static void sift_down(tn_region **a, size_t i, size_t n) {
    for (size_t c; (c = 2 * i + 1) < n; i = c) {
        if (c + 1 < n && a[c + 1]->start > a[c]->start)
            c++;
        if (a[i]->start >= a[c]->start)
            return;
        tn_region *t = a[i];
        a[i] = a[c];
        a[c] = t;
    }
}

static void sort_by_address(tn_region **a, size_t n) {
    for (size_t i = n / 2; i-- > 0;)
        sift_down(a, i, n);
    for (size_t end = n; end-- > 1;) {
        tn_region *t = a[0];
        a[0] = a[end];
        a[end] = t;
        sift_down(a, 0, end);
    }
}

/* The generation's regions, sorted by address, in storage reserved at creation (no malloc
 * during a GC); one slot is kept in front for a tail region. */
static void collect_regions(tenure_runtime *rt, int gen, gen_plan *gp) {
    tn_region **all = rt->plan_regions[gen];
    gp->regions = all + 1;
    gp->n = 0;
    for (tn_region *r = rt->gens[gen]; r; r = r->next)
        gp->regions[gp->n++] = r;
    sort_by_address(gp->regions, gp->n);
    gp->tail = NULL;
    gp->dests = gp->regions;
    gp->nd = gp->n;
}

/* Survivors of a generation whose next generation is not condemned are packed first into
 * the free end of one of that generation's regions (the emptiest), so that every GC does not
 * start a new, mostly empty region of the next generation. */
static void choose_tail(tenure_runtime *rt, gen_plan *gp, int gen) {
    tn_region *best = NULL;
    for (tn_region *r = rt->gens[gen + 1]; r; r = r->next)
        if (!best || r->end - r->used > best->end - best->used)
            best = r;
    if (!best || (size_t)(best->end - best->used) < rt->unit_size / 8)
        return;
    gp->tail = best;
    gp->tail_from = best->used;
    best->plan_used = best->used;
    gp->dests = gp->regions - 1;
    gp->dests[0] = best;
    gp->nd = gp->n + 1;
}

static inline char *bit_addr(tenure_runtime *rt, size_t bit) { return rt->base + bit * 8; }
static inline bool is_marked(tenure_runtime *rt, const void *p) {
    return tn_bit_test(rt->mark_bits, tn_bit_index(rt, p));
}

/* End of the plug (maximal run of marked objects) starting at s; *pinned if any is pinned. */
static char *plug_end(tenure_runtime *rt, tn_region *r, char *s, bool *pinned) {
    char *e = s;
    bool pin = false;
    do {
        pin |= tn_bit_test(rt->pin_bits, tn_bit_index(rt, e));
        e += tn_obj_size(e);
    } while (e < r->used && is_marked(rt, e));
    if (pinned)
        *pinned = pin;
    return e;
}

static inline size_t brick_of(tenure_runtime *rt, const void *p) {
    return ((uintptr_t)p - (uintptr_t)rt->base) >> TN_PLUG_BRICK_SHIFT;
}

static void record_plug(tenure_runtime *rt, tn_region *r, char *s, intptr_t delta) {
    tn_bit_set(rt->plug_bits, tn_bit_index(rt, s));
    rt->plug_bricks[brick_of(rt, s)] = (int32_t)((s - r->start) / 8);
    if (s == r->start)
        r->first_plug_delta = delta;
    else
        ((intptr_t *)s)[-1] = delta;
}

static inline intptr_t plug_delta(tn_region *r, char *s) {
    return s == r->start ? r->first_plug_delta : ((intptr_t *)s)[-1];
}

static void add_gap(tenure_runtime *rt, char *start, size_t size) {
    if (size == 0)
        return;
    tn_gap *g = tn_vec_push_reserved(&rt->gaps);
    if (!g) {
        rt->plan_failed = true; /* the generation will be swept instead (scratch.c) */
        return;
    }
    g->start = start;
    g->size = size;
}

static inline tn_pin *pin_at(tenure_runtime *rt, size_t i) { return tn_vec_at(&rt->pins, i); }

static void cursor_enter(cursor *c, size_t ri) {
    tn_region *r = c->gp->dests[ri];
    c->ri = ri;
    c->pos = r->condemned ? r->start : r->used;
    c->pin = r->pin_first;
}

/* The new address of a plug of len bytes; the cursor never passes the source plug. */
static char *place(tenure_runtime *rt, cursor *c, size_t len) {
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
            add_gap(rt, c->pos, (size_t)(limit - c->pos));
            c->pos = pin_at(rt, c->pin)->end;
            c->pin++;
        } else {
            r->plan_used = c->pos;
            cursor_enter(c, c->ri + 1);
        }
    }
}

/* Regions from the cursor's on keep only their pinned plugs, with free space between. Those
 * after it hold nothing else: they are demoted (stay in their generation, as the .NET
 * collector demotes pinned plugs), so the space around the pins is reclaimed by the next GC
 * of that generation instead of being promoted as fragmentation. */
static void finish_cursor(tenure_runtime *rt, cursor *c) {
    for (size_t ri = c->ri; ri < c->gp->nd; ri++) {
        tn_region *r = c->gp->dests[ri];
        r->demote = ri > c->ri && r->pin_count > 0 && r->gen < TN_GEN2;
        char *pos = ri == c->ri ? c->pos : r->start;
        size_t pin = ri == c->ri ? c->pin : r->pin_first;
        for (; pin < (size_t)r->pin_first + r->pin_count; pin++) {
            add_gap(rt, pos, (size_t)(pin_at(rt, pin)->start - pos));
            pos = pin_at(rt, pin)->end;
        }
        r->plan_used = pos;
    }
}

static void plan_region(tenure_runtime *rt, cursor *c, tn_region *r) {
    r->pin_first = (uint32_t)rt->pins.count;
    r->pin_count = 0;
    r->compacting = true;
    size_t b0 = brick_of(rt, r->start), b1 = brick_of(rt, r->end);
    for (size_t b = b0; b < b1; b++)
        rt->plug_bricks[b] = -1;
    size_t end = tn_bit_index(rt, r->used);
    for (size_t b = tn_bit_next(rt->mark_bits, tn_bit_index(rt, r->start), end); b < end;) {
        char *s = bit_addr(rt, b);
        bool pinned;
        char *e = plug_end(rt, r, s, &pinned);
        intptr_t delta = 0;
        if (pinned) {
            rt->pins_seen++;
            tn_pin *p = tn_vec_push_reserved(&rt->pins);
            if (!p) {
                rt->plan_failed = true; /* as in add_gap */
                b = tn_bit_next(rt->mark_bits, tn_bit_index(rt, e), end);
                continue;
            }
            p->start = s;
            p->end = e;
            r->pin_count++;
            rt->last.pinned_bytes[r->gen] += (size_t)(e - s);
        } else {
            delta = place(rt, c, (size_t)(e - s)) - s;
        }
        record_plug(rt, r, s, delta);
        b = tn_bit_next(rt->mark_bits, tn_bit_index(rt, e), end);
    }
    int32_t last = -1; /* each brick without a plug start gets the last plug start before it */
    for (size_t b = b0; b < b1; b++) {
        if (rt->plug_bricks[b] >= 0)
            last = rt->plug_bricks[b];
        else
            rt->plug_bricks[b] = last;
    }
}

/* Undo a plan that could not be completed (the pin or gap list, reserved before the pause,
 * was full): the generation is swept instead, which needs no memory; the GC counts a
 * shortfall and the next one reserves room for the pinned plugs seen (scratch.c). */
static void abandon_plan(tenure_runtime *rt, gen_plan *gp, int gen, size_t pins, size_t gaps) {
    for (size_t i = 0; i < gp->n; i++) {
        tn_region *r = gp->regions[i];
        tn_bits_clear(rt->plug_bits, tn_bit_index(rt, r->start), tn_bit_index(rt, r->end));
        r->compacting = r->demote = false;
        r->pin_count = 0;
    }
    rt->pins.count = pins;
    rt->gaps.count = gaps;
    rt->last.pinned_bytes[gen] = 0;
    gp->compact = false;
    gp->tail = NULL;
    gp->dests = gp->regions;
    gp->nd = gp->n;
    rt->plan_failed = false;
    rt->last.scratch_short = true;
}

static bool plan_compaction(tenure_runtime *rt, gen_plan *gp, int gen) {
    cursor c = {gp, 0, NULL, 0};
    if (gp->n == 0)
        return true;
    size_t pins = rt->pins.count, gaps = rt->gaps.count;
    rt->plan_failed = false;
    gp->dests[0]->pin_first = (uint32_t)rt->pins.count;
    gp->dests[0]->pin_count = 0;
    cursor_enter(&c, 0);
    for (size_t si = 0; si < gp->n; si++)
        plan_region(rt, &c, gp->regions[si]);
    finish_cursor(rt, &c);
    if (!rt->plan_failed)
        return true;
    abandon_plan(rt, gp, gen, pins, gaps);
    return false;
}

/* ---- relocation ---- */

static inline char *relocate(tenure_runtime *rt, char *v) {
    if (!v || !tn_in_range(rt, v) || rt->unit_gen[tn_unit_of(rt, v)] > rt->last.condemned)
        return v;
    tn_region *r = tn_region_of(rt, v);
    if (!r || !r->compacting)
        return v;
    size_t bit = tn_bit_index(rt, v);
    size_t lo = tn_bit_index(rt, rt->base + (brick_of(rt, v) << TN_PLUG_BRICK_SHIFT));
    size_t sb = tn_bit_prev(rt->plug_bits, bit, lo);
    char *s = sb != SIZE_MAX ? bit_addr(rt, sb) : r->start + (size_t)rt->plug_bricks[brick_of(rt, v) - 1] * 8;
    return v + plug_delta(r, s);
}

static inline void relocate_slot(void **slot, void *ctx) { *slot = relocate(ctx, *slot); }

/* Dead in this GC: in a condemned region and not marked (valid until the bits are cleared). */
static bool is_dead(tenure_runtime *rt, const void *v) {
    if (!tn_in_range(rt, v))
        return false;
    tn_region *r = tn_region_of(rt, v);
    return r && r->condemned && !tn_bit_test(rt->mark_bits, tn_bit_index(rt, v));
}

typedef struct card_ctx {
    tenure_runtime *rt;
    int youngest; /* youngest generation referenced from the card after this GC (3: none) */
} card_ctx;

/* Generation v will have after this GC (3 = not young: NULL or outside the heap). */
static inline int gen_after(tenure_runtime *rt, const void *v) {
    if (!v || !tn_in_range(rt, v))
        return 3;
    tn_region *r = tn_region_of(rt, v);
    int g = rt->unit_gen[tn_unit_of(rt, v)];
    return r && r->condemned && !r->demote && g < TN_GEN2 ? g + 1 : g;
}

static void relocate_card_slot(void **slot, void *c) {
    card_ctx *cc = c;
    tenure_runtime *rt = cc->rt;
    *slot = relocate(rt, *slot);
    int g = gen_after(rt, *slot);
    if (g < rt->unit_gen[tn_unit_of(rt, slot)] && g < cc->youngest)
        cc->youngest = g;
}

static void after_card(tenure_runtime *rt, uint8_t *card, void *c) {
    card_ctx *cc = c;
    (void)rt;
    *card = cc->youngest < 3 ? (uint8_t)(cc->youngest + 1) : 0;
    cc->youngest = 3;
}

static void relocate_marked(tenure_runtime *rt, tn_region *r) {
    size_t end = tn_bit_index(rt, r->used);
    for (size_t b = tn_bit_next(rt->mark_bits, tn_bit_index(rt, r->start), end); b < end;
         b = tn_bit_next(rt->mark_bits, b + 1, end))
        tn_obj_visit_slots(rt, bit_addr(rt, b), relocate_slot, rt);
}

static void relocate_all(tenure_runtime *rt, gen_plan *plans) {
    tn_roots_visit_stack(rt, relocate_slot, rt);
    tn_roots_visit_handles(rt, 0xffffffffu, relocate_slot, rt);
    tn_roots_visit_secondaries(rt, relocate_slot, rt);
    tn_finalize_visit_ready(rt, relocate_slot, rt);
    tn_finalize_visit_registered(rt, relocate_slot, rt);
    for (int g = 0; g < TN_NGEN; g++)
        for (size_t i = 0; i < plans[g].n; i++)
            relocate_marked(rt, plans[g].regions[i]);
}

/* ---- moving and sweeping ---- */

static void move_region(tenure_runtime *rt, tn_region *r) {
    size_t end = tn_bit_index(rt, r->used);
    for (size_t b = tn_bit_next(rt->plug_bits, tn_bit_index(rt, r->start), end); b < end;
         b = tn_bit_next(rt->plug_bits, b + 1, end)) {
        char *s = bit_addr(rt, b);
        char *e = plug_end(rt, r, s, NULL);
        intptr_t delta = plug_delta(r, s);
        if (delta)
            memmove(s + delta, s, (size_t)(e - s));
    }
}

/* Every plug has moved: the space above each region's new end held objects that moved out
 * (or died). A region left empty is released, and decommitted, later (GCPoisonFreed). */
static void finish_compacted(tenure_runtime *rt, gen_plan *gp) {
    for (size_t i = 0; i < gp->nd; i++) {
        tn_region *r = gp->dests[i];
        if (r->zero_from < r->used)
            r->zero_from = r->used;
        if (r->plan_used > r->start && r->plan_used < r->used)
            tn_heap_poison(rt, r->plan_used, (size_t)(r->used - r->plan_used));
        r->used = r->plan_used;
        if (r->zero_from < r->used)
            r->zero_from = r->used;
        if (r != gp->tail)
            r->free_bytes = 0;
    }
}

static void sweep_region(tenure_runtime *rt, tn_region *r, tn_free_list *fl) {
    size_t end = tn_bit_index(rt, r->used);
    char *p = r->start, *last_live_end = r->start;
    size_t free_bytes = 0;
    for (size_t b = tn_bit_next(rt->mark_bits, tn_bit_index(rt, p), end); b < end;) {
        char *s = bit_addr(rt, b);
        if (s > p) {
            tn_make_free(rt, p, (size_t)(s - p));
            tn_heap_poison_free(rt, p, (size_t)(s - p));
            if (fl)
                tn_free_list_add(rt, fl, p, (size_t)(s - p));
            free_bytes += (size_t)(s - p);
        }
        char *e = plug_end(rt, r, s, NULL);
        p = last_live_end = e;
        b = tn_bit_next(rt->mark_bits, tn_bit_index(rt, e), end);
    }
    if (fl && last_live_end < r->end) { /* large heaps keep the tail on the free list */
        tn_make_free(rt, last_live_end, (size_t)(r->end - last_live_end));
        tn_heap_poison_free(rt, last_live_end, (size_t)(r->used - last_live_end));
        tn_free_list_add(rt, fl, last_live_end, (size_t)(r->end - last_live_end));
        free_bytes += (size_t)(r->end - last_live_end);
        last_live_end = r->end;
    }
    if (r->zero_from < r->used)
        r->zero_from = r->used;
    if (last_live_end > r->start && last_live_end < r->used) /* dead objects at the end */
        tn_heap_poison(rt, last_live_end, (size_t)(r->used - last_live_end));
    r->used = last_live_end;
    r->free_bytes = free_bytes;
}

/* Clear the region's side bits. Nothing lies at or above zero_from (memory there is still
 * zero), so only the bits below it, rounded up to whole bitmap words, can be set. */
static void clear_bits(tenure_runtime *rt, tn_region *r) {
    char *top = r->start + tn_align_up((size_t)(r->zero_from - r->start), 64 * 8);
    size_t from = tn_bit_index(rt, r->start), to = tn_bit_index(rt, top < r->end ? top : r->end);
    tn_bits_clear(rt->mark_bits, from, to);
    tn_bits_clear(rt->pin_bits, from, to);
    tn_bits_clear(rt->plug_bits, from, to);
}

/* Sweep a large or pinned heap region, putting every free run on the free list. */
static void sweep_large_region(tenure_runtime *rt, tn_region *r, tn_free_list *fl) {
    if (r->live_bytes == 0) {
        r->used = r->start; /* released below */
        return;
    }
    sweep_region(rt, r, fl);
}

/* After an LOH compaction: the free list is every free object left, and each region's tail. */
static void refill_free_list(tenure_runtime *rt, gen_plan *gp, tn_free_list *fl) {
    tn_free_list_clear(fl);
    for (size_t i = 0; i < gp->n; i++) {
        tn_region *r = gp->regions[i];
        if (r->used == r->start)
            continue;
        for (char *o = r->start; o < r->used; o += tn_obj_size(o))
            if (tn_is_free(o))
                tn_free_list_add(rt, fl, o, tn_obj_size(o));
        if (r->used < r->end) {
            tn_make_free(rt, r->used, (size_t)(r->end - r->used));
            tn_free_list_add(rt, fl, r->used, (size_t)(r->end - r->used));
            r->free_bytes += (size_t)(r->end - r->used);
            r->used = r->end;
        }
    }
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
 */
static int compaction_reason(tenure_runtime *rt, int gen, gen_plan *gp, unsigned flags) {
    if (gen == TN_POH)
        return -1;
    if (gen == TN_LOH)
        return (flags & TENURE_COLLECT_COMPACT_LOH) || rt->config.GCLOHCompact ? TN_COMPACT_LOH_FORCED : -1;
    if (rt->last.reason == TN_REASON_OOS_SOH || rt->last.reason == TN_REASON_OOS_LOH)
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
    if (frees_region && limit && rt->committed + limit / 8 >= limit)
        return TN_COMPACT_HIGH_MEM_LOAD;
    return -1;
}

static void sweep_generation(tenure_runtime *rt, int gen, gen_plan *gp) {
    tn_free_list *fl = gen == TN_LOH ? &rt->loh_free : gen == TN_POH ? &rt->poh_free : NULL;
    if (fl)
        tn_free_list_clear(fl);
    for (size_t i = 0; i < gp->n; i++) {
        tn_region *r = gp->regions[i];
        if (fl) {
            sweep_large_region(rt, r, fl);
        } else if (r->live_bytes) {
            sweep_region(rt, r, NULL);
        } else {
            if (r->zero_from < r->used)
                r->zero_from = r->used;
            r->used = r->start;
        }
    }
}

/* Release the empty regions of a generation, promote the others by relabelling them. */
static void release_and_promote(tenure_runtime *rt, int gen, gen_plan *gp) {
    for (size_t i = 0; i < gp->n; i++) {
        tn_region *r = gp->regions[i];
        clear_bits(rt, r);
        r->compacting = false;
        if (r->used == r->start) {
            tn_region_release(rt, r);
            continue;
        }
        if (r->demote) {
            r->demote = false;
            rt->last.demoted = true;
            continue;
        }
        if (gen < TN_GEN2)
            tn_region_set_gen(rt, r, gen + 1);
    }
}

/* Record the time since `since` as phase i (microseconds); return now. */
static uint64_t phase_mark(tenure_runtime *rt, int i, uint64_t since) {
    uint64_t now = tn_os_now_ns();
    rt->last.phase_us[i] = (uint32_t)((now - since) / 1000);
    return now;
}

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
static void report_ranges(tenure_runtime *rt, gen_plan *plans, int condemned) {
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
        gen_plan *gp = &plans[order[k]];
        if (!tn_gen_condemned(order[k], condemned))
            continue;
        for (size_t i = 0; i < gp->n; i++) {
            tn_region *r = gp->regions[i];
            const uint64_t *bits = gp->compact ? rt->plug_bits : rt->mark_bits;
            size_t end = tn_bit_index(rt, r->used);
            for (size_t b = tn_bit_next(bits, tn_bit_index(rt, r->start), end); b < end;) {
                char *s = bit_addr(rt, b), *e = plug_end(rt, r, s, NULL);
                if (gp->compact)
                    add_range(moved, s, s + plug_delta(r, s), (size_t)(e - s));
                else
                    add_range(surv, s, NULL, (size_t)(e - s));
                b = tn_bit_next(bits, gp->compact ? b + 1 : tn_bit_index(rt, e), end);
            }
        }
    }
    flush_batch(moved);
    flush_batch(surv);
}

size_t tn_gc_range_scratch_bytes(void) { return 2 * sizeof(range_batch); }

void tn_gc_plan_and_reclaim(tenure_runtime *rt, int condemned, unsigned flags) {
    uint64_t t = tn_os_now_ns();
    gen_plan plans[TN_NGEN];
    memset(plans, 0, sizeof plans);
    rt->pins.count = 0;
    rt->gaps.count = 0;
    rt->pins_seen = 0;
    bool any_compact = false;
    for (int g = 0; g < TN_NGEN; g++) {
        if (!tn_gen_condemned(g, condemned))
            continue;
        gen_plan *gp = &plans[g];
        collect_regions(rt, g, gp);
        for (size_t i = 0; i < gp->n; i++) {
            gp->live += gp->regions[i]->live_bytes;
            gp->used_total += (size_t)(gp->regions[i]->used - gp->regions[i]->start);
        }
        rt->last.promoted[g] = gp->live;
        int why = compaction_reason(rt, g, gp, flags);
        gp->compact = why >= 0;
        if (why >= 0 && rt->last.compact_reason < 0)
            rt->last.compact_reason = why;
        if (gp->compact && g < TN_GEN2 && !tn_gen_condemned(g + 1, condemned))
            choose_tail(rt, gp, g);
        rt->last.compacted[g] = gp->compact;
        any_compact |= gp->compact;
        if (gp->compact && !plan_compaction(rt, gp, g)) {
            rt->last.compacted[g] = false; /* swept instead: out of memory for the plan */
            any_compact = false;
            for (int k = 0; k < g; k++)
                any_compact |= plans[k].compact;
        }
    }
    if (rt->pins_seen > rt->pins_needed)
        rt->pins_needed = rt->pins_seen;
    report_ranges(rt, plans, condemned);
    t = phase_mark(rt, 1, t);
    if (any_compact)
        relocate_all(rt, plans);
    if (condemned < TN_GEN2) {
        card_ctx cc = {rt, 3};
        tn_gc_visit_dirty_cards(rt, condemned, relocate_card_slot, &cc, after_card);
    }
    tn_lifetime_update_sync(rt, relocate, is_dead);
    t = phase_mark(rt, 2, t);
    for (int g = 0; g < TN_NGEN; g++) {
        gen_plan *gp = &plans[g];
        if (!tn_gen_condemned(g, condemned))
            continue;
        if (!gp->compact) {
            sweep_generation(rt, g, gp);
            continue;
        }
        for (size_t i = 0; i < gp->n; i++)
            move_region(rt, gp->regions[i]);
        finish_compacted(rt, gp);
    }
    for (size_t i = 0; i < rt->gaps.count; i++) {
        tn_gap *gap = tn_vec_at(&rt->gaps, i);
        tn_make_free(rt, gap->start, gap->size);
        tn_heap_poison_free(rt, gap->start, gap->size);
        tn_region_of(rt, gap->start)->free_bytes += gap->size;
    }
    if (plans[TN_LOH].compact)
        refill_free_list(rt, &plans[TN_LOH], &rt->loh_free);
    t = phase_mark(rt, 3, t);
    for (int g = TN_NGEN - 1; g >= 0; g--)
        release_and_promote(rt, g, &plans[g]);
    /* every region that was condemned (or took survivors) gets its crossing table and, in
     * generation 2 (or 1, when demoted objects stayed in gen0), its cards rebuilt */
    bool demoted = rt->last.demoted;
    for (int g = 0; g < TN_NGEN; g++) {
        gen_plan *gp = &plans[g];
        for (size_t i = 0; i < gp->n; i++) {
            tn_region *r = gp->regions[i];
            if (r->state == TN_RS_IN_USE)
                tn_gc_rebuild_region(rt, r, r->gen >= TN_GEN2 || (demoted && r->gen >= TN_GEN1));
        }
        if (gp->tail)
            tn_gc_rebuild_range(rt, gp->tail, gp->tail_from, gp->tail->gen == TN_GEN2 || demoted);
    }
    phase_mark(rt, 4, t);
}
