/* plan.c - after marking: plan, relocate, compact or sweep, promote.
 *
 * Each condemned generation of the small object heap is either compacted or swept, decided
 * from the space compaction would win. Compaction keeps order: survivors form plugs (runs of
 * neighbouring marked objects, all pinned or all not); the plan, the only walk over the
 * survivors' sizes, records each plug's first and last word in plug_bits and gives each
 * movable plug a new address by packing plugs, in address order, into the generation's own
 * regions (also in address order), skipping pinned plugs, which stay where they are. A plug's
 * move distance (delta) is stored in the 8 bytes before it (a dead word), in the region, or
 * in a pinned plug's record ("plugs" below). The plug bits and a 512-byte brick table find
 * the plug of any live address in O(1). Then every reference is relocated, plugs are moved,
 * the space in front of pinned plugs becomes free objects (its pages given back: issue 19),
 * and empty regions are released. Finally every surviving region is promoted by relabelling
 * it with the next generation.
 * See docs/design/collector.md.
 */
#include "gc/collection.h"

typedef tn_gen_plan gen_plan;

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

static void recount_discarded(tenure_runtime *rt, tn_region *r);

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
    recount_discarded(rt, best);
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
static inline bool is_pinned(tenure_runtime *rt, const void *p) {
    return tn_bit_test(rt->pin_bits, tn_bit_index(rt, p));
}

/* ---- plugs: found once, by plan, and recorded ----
 *
 * Plan is the only phase that reads the objects' sizes to find plugs. It records each plug
 * [s, e) as two bits of plug_bits, at s and at e - 8 (its last word; a plug is at least one
 * real object, 16 bytes, so the two bits differ). Relocation, moving, sweeping and the range
 * reports walk plugs from those bits: the start bits and end bits alternate.
 *
 * In a compacted generation a plug is a maximal run of neighbouring marked objects that are
 * either all pinned or all not pinned: a pinned object keeps only itself (and pinned
 * neighbours) in place, and the marked objects around it move. A plug's move distance
 * (delta) is kept in the 8 bytes before it when that word is dead (a gap), in the region for
 * a plug at its start, and, for a plug directly after another one (its end bit is the bit just
 * before its start bit; this happens only next to a pinned plug), in the pinned plug's record
 * (after_delta) or, for the pinned plug itself, nowhere (0). */

/* End of the run of marked objects from s that stops at `stop` (a pinned object, or used). */
static char *unpinned_run_end(tenure_runtime *rt, char *s, char *stop) {
    char *e = s;
    do
        e += tn_obj_size(e);
    while (e < stop && is_marked(rt, e));
    return e;
}

/* End of the run of pinned objects from s (pinned objects are marked). */
static char *pinned_run_end(tenure_runtime *rt, char *s, char *used) {
    char *e = s;
    do
        e += tn_obj_size(e);
    while (e < used && is_pinned(rt, e));
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

/* A plug of a compacting region: its bits, the bricks it covers (each brick whose first byte
 * lies in [s, e) names s, except s's own: there the plug bits find it), and its delta. */
static void record_plug(tenure_runtime *rt, tn_region *r, char *s, char *e, intptr_t delta, bool adjacent) {
    record_plug_bits(rt, s, e);
    int32_t off = (int32_t)((s - r->start) / 8);
    for (size_t b = brick_of(rt, s) + 1, last = brick_of(rt, e - 8); b <= last; b++)
        rt->plug_bricks[b] = off;
    if (s == r->start) {
        r->first_plug_delta = delta;
    } else if (!adjacent) {
        ((intptr_t *)s)[-1] = delta;
    } else if (!is_pinned(rt, s)) { /* after a pinned plug: its record holds it (a pinned plug: 0) */
        TN_ASSERT_INTERNAL(rt->pins.count > r->pin_first &&
                           ((tn_pin *)tn_vec_at(&rt->pins, rt->pins.count - 1))->end == s);
        ((tn_pin *)tn_vec_at(&rt->pins, rt->pins.count - 1))->after_delta = delta;
    }
}

/* The delta of a plug that directly follows another (next to a pinned plug): the pinned
 * plug's record, found by binary search among the region's pins. */
static __attribute__((noinline)) intptr_t adjacent_delta(tenure_runtime *rt, tn_region *r, char *s) {
    size_t lo = r->pin_first, hi = (size_t)r->pin_first + r->pin_count; /* pins[lo..hi) by address */
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (((tn_pin *)tn_vec_at(&rt->pins, mid))->start <= s)
            lo = mid;
        else
            hi = mid;
    }
    tn_pin *p = tn_vec_at(&rt->pins, lo);
    if (p->start == s)
        return 0;
    TN_ASSERT_INTERNAL(p->end == s);
    return p->after_delta;
}

/* The delta of the plug starting at s (bit sb) of compacting region r. */
static inline intptr_t plug_delta(tenure_runtime *rt, tn_region *r, char *s, size_t sb) {
    if (s == r->start)
        return r->first_plug_delta;
    if (TENURE__UNLIKELY(tn_bit_test(rt->plug_bits, sb - 1)))
        return adjacent_delta(rt, r, s);
    return ((intptr_t *)s)[-1];
}

/* Walks a region's recorded plugs in address order, one plug_bits word at a time (no call
 * per plug). Regions start on a unit boundary, so their bits begin a word, and no bit of
 * another region lies in their last word. */
typedef struct plug_iter {
    const uint64_t *bits;
    size_t w, end_w; /* the word being taken, the first word past the region's used end */
    uint64_t word;   /* bits of word w not taken yet */
} plug_iter;

static inline void plug_iter_init(plug_iter *it, tenure_runtime *rt, const tn_region *r) {
    size_t from = tn_bit_index(rt, r->start), end = tn_bit_index(rt, r->used);
    TN_ASSERT_INTERNAL((from & 63) == 0);
    it->bits = rt->plug_bits;
    it->w = from >> 6;
    it->end_w = (end + 63) >> 6;
    it->word = it->w < it->end_w ? it->bits[it->w] : 0;
}

static inline size_t plug_iter_bit(plug_iter *it) {
    while (!it->word) {
        if (++it->w >= it->end_w)
            return SIZE_MAX;
        it->word = it->bits[it->w];
    }
    size_t i = (it->w << 6) + (size_t)__builtin_ctzll(it->word);
    it->word &= it->word - 1;
    return i;
}

/* The next plug: its start bit and its end bit (the bit of its last word). */
static inline bool plug_iter_next(plug_iter *it, size_t *sb, size_t *eb) {
    if ((*sb = plug_iter_bit(it)) == SIZE_MAX)
        return false;
    *eb = plug_iter_bit(it);
    TN_ASSERT_INTERNAL(*eb != SIZE_MAX && *eb > *sb);
    return true;
}

/* A swept region's plugs (maximal runs of marked objects, pinned or not): only their bits. */
static void record_runs(tenure_runtime *rt, tn_region *r) {
    size_t end = tn_bit_index(rt, r->used);
    for (size_t b = tn_bit_next(rt->mark_bits, tn_bit_index(rt, r->start), end); b < end;) {
        char *e = unpinned_run_end(rt, bit_addr(rt, b), r->used);
        record_plug_bits(rt, bit_addr(rt, b), e);
        b = tn_bit_next(rt->mark_bits, tn_bit_index(rt, e), end);
    }
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
 * after it hold nothing else: a gen0 or gen1 one is demoted (stays in its generation, as the
 * .NET collector demotes pinned plugs), so the space around the pins is reclaimed by the next
 * GC of that generation instead of being promoted as fragmentation. Since a pinned plug holds
 * only pinned objects (their live neighbours moved out), re-marking it in every GC of its
 * generation costs what it pins. */
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

static tn_pin *push_pin(tenure_runtime *rt, tn_region *r, char *s, char *e) {
    rt->pins_seen++;
    tn_pin *p = tn_vec_push_reserved(&rt->pins);
    if (!p) {
        rt->plan_failed = true; /* as in add_gap */
        return NULL;
    }
    *p = (tn_pin){s, e, 0};
    r->pin_count++;
    rt->collection->record.pinned_bytes[r->gen] += (size_t)(e - s);
    return p;
}

/* Find the region's plugs (the one walk over the survivors' sizes), give each movable plug
 * its new place, record pinned plugs. */
static void plan_region(tenure_runtime *rt, cursor *c, tn_region *r) {
    r->pin_first = (uint32_t)rt->pins.count;
    r->pin_count = 0;
    r->compacting = true;
    size_t end = tn_bit_index(rt, r->used);
    size_t next_pin = tn_bit_next(rt->pin_bits, tn_bit_index(rt, r->start), end);
    bool adjacent = false; /* the plug at b begins where the previous one ended */
    for (size_t b = tn_bit_next(rt->mark_bits, tn_bit_index(rt, r->start), end); b < end;) {
        char *s = bit_addr(rt, b), *e;
        intptr_t delta = 0;
        if (b == next_pin) {
            e = pinned_run_end(rt, s, r->used);
            next_pin = tn_bit_next(rt->pin_bits, tn_bit_index(rt, e), end);
            if (!push_pin(rt, r, s, e)) {
                b = tn_bit_next(rt->mark_bits, tn_bit_index(rt, e), end);
                adjacent = false;
                continue; /* the plan is abandoned: bits and deltas no longer matter */
            }
        } else {
            e = unpinned_run_end(rt, s, next_pin < end ? bit_addr(rt, next_pin) : r->used);
            if (adjacent && rt->plan_failed) { /* its pinned neighbour has no record */
                b = tn_bit_next(rt->mark_bits, tn_bit_index(rt, e), end);
                adjacent = false;
                continue;
            }
            delta = place(rt, c, (size_t)(e - s)) - s;
        }
        record_plug(rt, r, s, e, delta, adjacent);
        size_t eb = tn_bit_index(rt, e);
        b = eb < end && tn_bit_test(rt->mark_bits, eb) ? eb : tn_bit_next(rt->mark_bits, eb, end);
        adjacent = b == eb;
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
    rt->collection->record.pinned_bytes[gen] = 0;
    gp->compact = false;
    gp->tail = NULL;
    gp->dests = gp->regions;
    gp->nd = gp->n;
    rt->plan_failed = false;
    rt->collection->scratch_short = true;
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

/* The new address of v (a live object, or not in a compacting region: unchanged). The plug
 * holding v starts at the last plug bit at or before v in v's own plug_bits word (a start bit:
 * no end bit lies between a plug's start and its objects), or, if that word has none, where
 * v's brick says. Then one delta. */
static inline __attribute__((always_inline)) char *relocate(tenure_runtime *rt, char *v) {
    if (!v || !tn_in_range(rt, v) || rt->unit_gen[tn_unit_of(rt, v)] > rt->collection->condemned)
        return v;
    tn_region *r = tn_region_of(rt, v);
    if (!r || !r->compacting)
        return v;
    TN_ASSERT_EXPENSIVE(is_marked(rt, v));
    size_t bit = tn_bit_index(rt, v);
    uint64_t below = rt->plug_bits[bit >> 6] & (~(uint64_t)0 >> (63 - (bit & 63)));
    size_t sb = below ? (bit & ~(size_t)63) + 63 - (size_t)__builtin_clzll(below)
                      : tn_bit_index(rt, r->start) + (size_t)rt->plug_bricks[bit >> 6];
    return v + plug_delta(rt, r, bit_addr(rt, sb), sb);
}

static inline void relocate_slot(void **slot, void *ctx) { *slot = relocate(ctx, *slot); }

/* Dead in this GC: in a condemned region and not marked (valid until the bits are cleared). */
static bool is_dead(tenure_runtime *rt, const void *v) {
    if (!tn_in_range(rt, v))
        return false;
    tn_region *r = tn_region_of(rt, v);
    return r && r->condemned && !tn_bit_test(rt->mark_bits, tn_bit_index(rt, v));
}

/* Generation v will have after this GC (3 = not young: NULL or outside the heap). */
static inline int gen_after(tenure_runtime *rt, const void *v) {
    if (!v || !tn_in_range(rt, v))
        return 3;
    tn_region *r = tn_region_of(rt, v);
    int g = rt->unit_gen[tn_unit_of(rt, v)];
    return r && r->condemned && !r->demote && g < TN_GEN2 ? g + 1 : g;
}

/* A slot the card scan found (cards.c): relocated; its object's generation after this GC
 * sets the slot's card. */
static int relocate_card_slot(void **slot, void *ctx) {
    tenure_runtime *rt = ctx;
    *slot = relocate(rt, *slot);
    return gen_after(rt, *slot);
}

/* Relocate the slots of every survivor of r, walking its recorded plugs object by object. */
static void relocate_survivors(tenure_runtime *rt, tn_region *r) {
    plug_iter it;
    plug_iter_init(&it, rt, r);
    for (size_t b, eb; plug_iter_next(&it, &b, &eb);) {
        char *e = bit_addr(rt, eb) + 8;
        for (char *o = bit_addr(rt, b); o < e;) {
            tn_type *t = tn_obj_type(o);
            size_t size = tn_obj_size_t(t, o);
            if (t->ref_count || t->elem_ref_count || t->trace)
                tn_obj_visit_slots(rt, o, relocate_slot, rt);
            o += size;
        }
    }
}

/* ---- rebuilding cards and crossing entries during relocation ----
 *
 * A compacted region's objects get new places, so its crossing entries (H6) and its cards
 * (H5, H7: exact after the GC) must be computed again. Relocation already walks every
 * survivor and every slot, knowing each plug's delta: it records each object's crossing
 * entries at its new address and, for each slot, the card of its new address from the
 * generation its (relocated) referent has after the GC, instead of a second walk over the
 * survivors after they moved. Before, the cards of the destinations (the regions and the
 * tail's part above its old end) are zeroed; afterwards the gaps (free objects between
 * pinned plugs) get their crossing entries. Not when the card scan overflowed: relocation
 * then walks uncondemned cards by the crossing table, and must see no card of the tail
 * (above its old end) set yet; nor for the large object heap (its free list is rebuilt
 * after). */
typedef struct rebuild_ctx {
    tenure_runtime *rt;
    intptr_t delta; /* of the plug being walked */
    int holder_gen; /* the generation its objects have after this GC */
} rebuild_ctx;

static inline void relocate_slot_noting_card(void **slot, void *ctx) {
    rebuild_ctx *rc = ctx;
    void *v = relocate(rc->rt, *slot);
    *slot = v;
    int g = gen_after(rc->rt, v);
    if (g < rc->holder_gen)
        tn_gc_lower_card(rc->rt, (char *)slot + rc->delta, (uint8_t)(g + 1));
}

/* relocate_survivors for a region of a generation whose plan rebuilds as it relocates. */
static void relocate_survivors_rebuilding(tenure_runtime *rt, tn_region *r) {
    plug_iter it;
    plug_iter_init(&it, rt, r);
    for (size_t b, eb; plug_iter_next(&it, &b, &eb);) {
        char *s = bit_addr(rt, b), *e = bit_addr(rt, eb) + 8;
        intptr_t delta = r->compacting ? plug_delta(rt, r, s, b) : 0;
        rebuild_ctx rc = {rt, delta, gen_after(rt, s + delta)}; /* a plug lands in one region */
        for (char *o = s; o < e;) {
            tn_type *t = tn_obj_type(o);
            size_t size = tn_obj_size_t(t, o);
            tn_crossing_set(rt, o + delta, size);
            if (!(t->ref_count || t->elem_ref_count || t->trace))
                ;
            else if (rc.holder_gen > TN_GEN0)
                tn_obj_visit_slots(rt, o, relocate_slot_noting_card, &rc);
            else /* nothing is younger than gen0: no card */
                tn_obj_visit_slots(rt, o, relocate_slot, rt);
            o += size;
        }
    }
}

static bool rebuilds_while_relocating(tenure_runtime *rt, int gen, const gen_plan *gp) {
    return gp->n && gen <= TN_GEN2 && !rt->card_slots_short;
}

/* (A region that keeps nothing is released: its cards are left as the old rebuild left them.) */
static void clear_destination_cards(tenure_runtime *rt, gen_plan *gp) {
    for (size_t i = 0; i < gp->n; i++) {
        tn_region *r = gp->regions[i];
        if (gp->compact ? r->plan_used > r->start : r->live_bytes > 0)
            tn_gc_clear_cards(rt, r, r->start);
    }
    if (gp->tail)
        tn_gc_clear_cards(rt, gp->tail, gp->tail_from);
}

static void note_gap_crossings(tenure_runtime *rt) {
    for (size_t i = 0; i < rt->gaps.count; i++) {
        tn_gap *gap = tn_vec_at(&rt->gaps, i);
        tn_crossing_set(rt, gap->start, gap->size);
    }
}

static void relocate_all(tenure_runtime *rt, gen_plan *plans) {
    for (int g = 0; g < TN_NGEN; g++) {
        plans[g].rebuilt = rebuilds_while_relocating(rt, g, &plans[g]);
        if (plans[g].rebuilt)
            clear_destination_cards(rt, &plans[g]);
    }
    tn_roots_visit_stack(rt, relocate_slot, rt);
    tn_roots_visit_handles(rt, 0xffffffffu, relocate_slot, rt);
    tn_roots_visit_secondaries(rt, relocate_slot, rt);
    tn_finalize_visit_ready(rt, relocate_slot, rt);
    tn_finalize_visit_registered(rt, relocate_slot, rt);
    for (int g = 0; g < TN_NGEN; g++)
        for (size_t i = 0; i < plans[g].n; i++) {
            if (plans[g].rebuilt)
                relocate_survivors_rebuilding(rt, plans[g].regions[i]);
            else
                relocate_survivors(rt, plans[g].regions[i]);
        }
    note_gap_crossings(rt);
}

/* ---- moving and sweeping ---- */

static void move_region(tenure_runtime *rt, tn_region *r) {
    plug_iter it;
    plug_iter_init(&it, rt, r);
    for (size_t b, eb; plug_iter_next(&it, &b, &eb);) {
        char *s = bit_addr(rt, b);
        intptr_t delta = plug_delta(rt, r, s, b);
        if (delta)
            memmove(s + delta, s, (size_t)(bit_addr(rt, eb) + 8 - s));
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
    char *p = r->start, *last_live_end = r->start;
    size_t free_bytes = 0;
    plug_iter it;
    plug_iter_init(&it, rt, r);
    for (size_t b, eb; plug_iter_next(&it, &b, &eb);) {
        char *s = bit_addr(rt, b);
        if (s > p) {
            tn_make_free(rt, p, (size_t)(s - p));
            tn_crossing_set(rt, p, (size_t)(s - p)); /* (the survivors' entries stay right) */
            tn_heap_poison_free(rt, p, (size_t)(s - p));
            if (fl)
                tn_free_list_add(rt, fl, p, (size_t)(s - p));
            free_bytes += (size_t)(s - p);
        }
        p = last_live_end = bit_addr(rt, eb) + 8;
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
    if (rt->collection->reason == TN_REASON_OOS_SOH || rt->collection->reason == TN_REASON_OOS_LOH)
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

/* ---- the space around pinned plugs (issue 19) ----
 *
 * A region that keeps pinned plugs keeps the free objects (gaps) between them until a later
 * compaction fills them, and a gen1 or gen2 one its free end, which no allocation context
 * uses. The whole pages inside a gap of at least DISCARD_MIN bytes (past the free object's
 * header and size words), and those of such a free end, go back to the OS (MADV_DONTNEED:
 * they read as zero if touched again) and stop counting in rt->committed, so that regions
 * held by a few pins do not exhaust GCHeapHardLimit. A GC that condemns the region, or packs
 * survivors into its free end (choose_tail), counts them again first: it may write there.
 * Not under GCPoisonFreed, whose poison must stay readable. The gaps of a (demoted) gen0
 * region are given back only under a hard limit: the next GC is near and refills them, and
 * giving them back costs a system call and the page faults of their reuse every GC. */
#define DISCARD_MIN ((size_t)16 << 10)

static void discard_gap(tenure_runtime *rt, tn_region *r, char *start, size_t size) {
    if (rt->config.GCPoisonFreed || size < DISCARD_MIN)
        return;
    uintptr_t page = tn_os_page_size();
    uintptr_t a = ((uintptr_t)start + 2 * sizeof(uintptr_t) + page - 1) & ~(page - 1);
    uintptr_t b = ((uintptr_t)start + size) & ~(page - 1);
    if (b <= a)
        return;
    tn_os_discard((void *)a, b - a);
    r->discarded += b - a;
    rt->committed -= b - a;
}

static void discard_tail(tenure_runtime *rt, tn_region *r) {
    if (rt->config.GCPoisonFreed)
        return;
    uintptr_t page = tn_os_page_size();
    char *from = (char *)(((uintptr_t)r->used + page - 1) & ~(page - 1));
    if (from >= r->end || (size_t)(r->end - from) < DISCARD_MIN)
        return;
    if (from < r->zero_from) { /* untouched pages above zero_from hold nothing to give back */
        char *to = (char *)(((uintptr_t)r->zero_from + page - 1) & ~(page - 1)); /* whole pages */
        tn_os_discard(from, (size_t)((to < r->end ? to : r->end) - from));
        r->zero_from = from;
    }
    r->discarded += (size_t)(r->end - from);
    rt->committed -= (size_t)(r->end - from);
}

static void recount_discarded(tenure_runtime *rt, tn_region *r) {
    rt->committed += r->discarded;
    r->discarded = 0;
}

/* The gaps left in gen0 (in front of the pinned plugs of demoted regions), at least
 * TN_GAP_MIN bytes and not given back to the OS, linked in address order through their third
 * word (rt->gen0_gaps): the allocator cuts contexts from them before it takes new space
 * (heap/alloc.c). Built from rt->gaps, reserved before the pause: nothing is allocated. */
static void link_gen0_gaps(tenure_runtime *rt) {
    char *head = NULL;
    for (size_t i = rt->gaps.count; i-- > 0;) {
        tn_gap *gap = tn_vec_at(&rt->gaps, i);
        tn_region *r = tn_region_of(rt, gap->start);
        if (gap->size < TN_GAP_MIN || r->state != TN_RS_IN_USE || r->gen != TN_GEN0 || r->discarded)
            continue;
        TN_ASSERT_INTERNAL(tn_is_free(gap->start) && ((size_t *)gap->start)[1] == gap->size);
        ((char **)gap->start)[2] = head;
        head = gap->start;
    }
    rt->gen0_gaps = head;
}

/* Release the empty regions of a generation, promote the others by relabelling them. */
static void release_and_promote(tenure_runtime *rt, int gen, gen_plan *gp) {
    for (size_t i = 0; i < gp->n; i++) {
        tn_region *r = gp->regions[i];
        clear_bits(rt, r);
        bool pinned = r->compacting && r->pin_count > 0;
        r->compacting = false;
        if (r->used == r->start) {
            tn_region_release(rt, r);
            continue;
        }
        if (r->demote) {
            r->demote = false;
            rt->collection->record.demoted = true;
        } else if (gen < TN_GEN2) {
            tn_region_set_gen(rt, r, gen + 1);
        }
        if (pinned && r->gen >= TN_GEN1 && r->gen <= TN_GEN2)
            discard_tail(rt, r);
    }
}

/* Record the time since `since` as phase i (microseconds); return now. */
static uint64_t phase_mark(tenure_runtime *rt, int i, uint64_t since) {
    uint64_t now = tn_os_now_ns();
    rt->collection->record.phase_us[i] = (uint32_t)((now - since) / 1000);
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
            plug_iter it;
            plug_iter_init(&it, rt, r);
            for (size_t b, eb; plug_iter_next(&it, &b, &eb);) {
                char *s = bit_addr(rt, b), *e = bit_addr(rt, eb) + 8;
                if (gp->compact)
                    add_range(moved, s, s + plug_delta(rt, r, s, b), (size_t)(e - s));
                else
                    add_range(surv, s, NULL, (size_t)(e - s));
            }
        }
    }
    flush_batch(moved);
    flush_batch(surv);
}

size_t tn_gc_range_scratch_bytes(void) { return 2 * sizeof(range_batch); }

void tn_gc_plan_and_reclaim(tenure_runtime *rt, tn_collection *col) {
    int condemned = col->condemned;
    unsigned flags = col->flags;
    uint64_t t = tn_os_now_ns();
    gen_plan *plans = col->plans;
    rt->pins.count = 0;
    rt->gaps.count = 0;
    rt->gen0_gaps = NULL; /* every gen0 region is condemned: its free objects change */
    rt->pins_seen = 0;
    bool any_compact = false;
    for (int g = 0; g < TN_NGEN; g++) {
        if (!tn_gen_condemned(g, condemned))
            continue;
        gen_plan *gp = &plans[g];
        collect_regions(rt, g, gp);
        for (size_t i = 0; i < gp->n; i++)
            recount_discarded(rt, gp->regions[i]);
        for (size_t i = 0; i < gp->n; i++) {
            gp->live += gp->regions[i]->live_bytes;
            gp->used_total += (size_t)(gp->regions[i]->used - gp->regions[i]->start);
        }
        rt->collection->record.promoted[g] = gp->live;
        int why = compaction_reason(rt, g, gp, flags);
        gp->compact = why >= 0;
        if (why >= 0 && rt->collection->record.compact_reason < 0)
            rt->collection->record.compact_reason = why;
        if (gp->compact && g < TN_GEN2 && !tn_gen_condemned(g + 1, condemned))
            choose_tail(rt, gp, g);
        rt->collection->record.compacted[g] = gp->compact;
        any_compact |= gp->compact;
        if (gp->compact && !plan_compaction(rt, gp, g)) {
            rt->collection->record.compacted[g] = false; /* swept instead: out of memory for the plan */
            any_compact = false;
            for (int k = 0; k < g; k++)
                any_compact |= plans[k].compact;
        }
        if (!gp->compact)
            for (size_t i = 0; i < gp->n; i++)
                record_runs(rt, gp->regions[i]);
    }
    if (rt->pins_seen > rt->pins_needed)
        rt->pins_needed = rt->pins_seen;
    report_ranges(rt, plans, condemned);
    t = phase_mark(rt, 1, t);
    if (any_compact)
        relocate_all(rt, plans);
    if (condemned < TN_GEN2)
        tn_gc_update_card_slots(rt, condemned, relocate_card_slot, rt);
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
        tn_region *r = tn_region_of(rt, gap->start);
        tn_make_free(rt, gap->start, gap->size);
        tn_heap_poison_free(rt, gap->start, gap->size);
        r->free_bytes += gap->size;
        int g = gen_after(rt, gap->start); /* not the LOH's: its free list hands gaps out */
        if (r->gen <= TN_GEN2 && (g == TN_GEN1 || g == TN_GEN2 || rt->config.GCHeapHardLimit))
            discard_gap(rt, r, gap->start, gap->size);
    }
    if (plans[TN_LOH].compact)
        refill_free_list(rt, &plans[TN_LOH], &rt->loh_free);
    t = phase_mark(rt, 3, t);
    for (int g = TN_NGEN - 1; g >= 0; g--)
        release_and_promote(rt, g, &plans[g]);
    /* every region that was condemned (or took survivors) gets its crossing table and, in
     * generation 2 (or 1, when demoted objects stayed in gen0), its cards rebuilt */
    bool demoted = rt->collection->record.demoted;
    for (int g = 0; g < TN_NGEN; g++) {
        gen_plan *gp = &plans[g];
        if (gp->rebuilt)
            continue; /* done during relocation */
        for (size_t i = 0; i < gp->n; i++) {
            tn_region *r = gp->regions[i];
            if (r->state == TN_RS_IN_USE)
                tn_gc_rebuild_region(rt, r, r->gen >= TN_GEN2 || (demoted && r->gen >= TN_GEN1));
        }
        if (gp->tail)
            tn_gc_rebuild_range(rt, gp->tail, gp->tail_from, gp->tail->gen == TN_GEN2 || demoted);
    }
    link_gen0_gaps(rt);
    /* the gaps' pages counted again at the start of this GC (recount_discarded) may have
     * become free regions, still committed: over a hard limit, they go back now */
    if (rt->config.GCHeapHardLimit && rt->committed > rt->config.GCHeapHardLimit)
        tn_regions_trim(rt, true);
    phase_mark(rt, 4, t);
}
