/* relocate.c - relocation: every reference to an object of a compacting region (roots,
 * handles, finalization queues, survivors' slots, the slots the card scan found, identity
 * hashes) gets the object's new address, found from the plan's plug bits and deltas. For
 * compacted generations it also rebuilds the cards and crossing entries of the survivors'
 * new places as it goes (below). Nothing moves yet (compact.c). See docs/design/collector.md.
 */
#include "gc/gc_internal.h"
#include "heap/crossing.h"

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
    TN_ASSERT_EXPENSIVE(tn_is_marked(rt, v));
    size_t bit = tn_bit_index(rt, v);
    uint64_t below = rt->plug_bits[bit >> 6] & (~(uint64_t)0 >> (63 - (bit & 63)));
    size_t sb = below ? (bit & ~(size_t)63) + 63 - (size_t)__builtin_clzll(below)
                      : tn_bit_index(rt, r->start) + (size_t)rt->plug_bricks[bit >> 6];
    return v + tn_plug_delta(rt, r, tn_bit_addr(rt, sb), sb);
}

static inline void relocate_slot(void **slot, void *ctx) { *slot = relocate(ctx, *slot); }

/* Dead in this GC: in a condemned region and not marked (valid until the bits are cleared),
 * or found dead by a background GC's final mark (H8). */
static bool is_dead(tenure_runtime *rt, const void *v) {
    if (!tn_in_range(rt, v))
        return false;
    tn_region *r = tn_region_of(rt, v);
    return r && (r->condemned ? !tn_bit_test(rt->mark_bits, tn_bit_index(rt, v)) : tn_unswept_dead(rt, r, v));
}

/* A slot the card scan found (cards.c): relocated; its object's generation after this GC
 * sets the slot's card. */
static int relocate_card_slot(void **slot, void *ctx) {
    tenure_runtime *rt = ctx;
    *slot = relocate(rt, *slot);
    return tn_gen_after(rt, *slot);
}

/* Relocate the slots of every survivor of r, walking its recorded plugs object by object. */
static void relocate_survivors(tenure_runtime *rt, tn_region *r) {
    tn_plug_iter it;
    tn_plug_iter_init(&it, rt, r);
    for (size_t b, eb; tn_plug_iter_next(&it, &b, &eb);) {
        char *e = tn_bit_addr(rt, eb) + 8;
        for (char *o = tn_bit_addr(rt, b); o < e;) {
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
    char *plug_start, *plug_end; /* the plug being walked: [start, end) */
    intptr_t delta;              /* of the plug being walked */
    int holder_gen;              /* the generation its objects have after this GC */
} rebuild_ctx;

/* `shared`: other GC threads relocate too, and a destination card may be theirs (a constant
 * in each of the two visitors below: workstation GC pays no test). */
static inline __attribute__((always_inline)) void note_card(void **slot, void *ctx, bool shared) {
    rebuild_ctx *rc = ctx;
    char *old = *slot;
    /* a reference into the plug being walked (a tree's node to its children, allocated just
     * before it): the plug moves as one, by its delta, into the holder's own region (no card
     * to lower), so neither the plug bits nor the region tables are read */
    if ((uintptr_t)old - (uintptr_t)rc->plug_start < (uintptr_t)rc->plug_end - (uintptr_t)rc->plug_start) {
        TN_ASSERT_EXPENSIVE(tn_is_marked(rc->rt, old)); /* a plug holds only live objects */
        *slot = old + rc->delta;
        return;
    }
    void *v = relocate(rc->rt, old);
    *slot = v;
    int g = tn_gen_after(rc->rt, v);
    if (g >= rc->holder_gen)
        return;
    if (shared)
        tn_gc_lower_card_shared(rc->rt, (char *)slot + rc->delta, (uint8_t)(g + 1));
    else
        tn_gc_lower_card(rc->rt, (char *)slot + rc->delta, (uint8_t)(g + 1));
}

static void relocate_slot_noting_card(void **slot, void *ctx) { note_card(slot, ctx, false); }
static void relocate_slot_noting_card_shared(void **slot, void *ctx) { note_card(slot, ctx, true); }

/* relocate_survivors for a region of a generation whose plan rebuilds as it relocates. The
 * crossing entries it writes are the destination granules' whose first byte a survivor of r
 * covers: no other region's survivor covers them. Inlined twice, `shared` a constant in each
 * (the visits inline their constant visitor: runtime.h). */
static inline __attribute__((always_inline)) void rebuilding_walk(tenure_runtime *rt, tn_region *r, bool shared) {
    tn_plug_iter it;
    tn_plug_iter_init(&it, rt, r);
    for (size_t b, eb; tn_plug_iter_next(&it, &b, &eb);) {
        char *s = tn_bit_addr(rt, b), *e = tn_bit_addr(rt, eb) + 8;
        intptr_t delta = r->compacting ? tn_plug_delta(rt, r, s, b) : 0;
        rebuild_ctx rc = {rt, s, e, delta, tn_gen_after(rt, s + delta)}; /* a plug lands in one region */
        for (char *o = s; o < e;) {
            tn_type *t = tn_obj_type(o);
            size_t size = tn_obj_size_t(t, o);
            tn_crossing_set(rt, o + delta, size);
            if (!(t->ref_count || t->elem_ref_count || t->trace))
                ;
            else if (rc.holder_gen > TN_GEN0)
                tn_obj_visit_slots(rt, o, shared ? relocate_slot_noting_card_shared : relocate_slot_noting_card, &rc);
            else /* nothing is younger than gen0: no card */
                tn_obj_visit_slots(rt, o, relocate_slot, rt);
            o += size;
        }
    }
}

/* (Each its own function: inlined into the part, the walk's loop was 8% slower in callgrind.) */
static __attribute__((noinline)) void rebuilding_walk_alone(tenure_runtime *rt, tn_region *r) {
    rebuilding_walk(rt, r, false);
}
static __attribute__((noinline)) void rebuilding_walk_shared(tenure_runtime *rt, tn_region *r) {
    rebuilding_walk(rt, r, true);
}

static void relocate_survivors_rebuilding(tenure_runtime *rt, tn_region *r, bool shared) {
    if (shared)
        rebuilding_walk_shared(rt, r);
    else
        rebuilding_walk_alone(rt, r);
}

static bool rebuilds_while_relocating(tenure_runtime *rt, int gen, const tn_gen_plan *gp) {
    return gp->n && gen <= TN_GEN2 && !rt->card.card_slots_short;
}

/* (A region that keeps nothing is released: its cards are left as the old rebuild left them.
 * A kept region of a compacted generation keeps its survivors in place, as a swept one.) */
static void clear_destination_cards(tenure_runtime *rt, tn_gen_plan *gp) {
    for (size_t i = 0; i < gp->n; i++) {
        tn_region *r = gp->regions[i];
        if (gp->compact && !r->kept ? r->plan_used > r->start : r->live_bytes > 0)
            tn_gc_clear_cards(rt, r, r->start);
    }
    for (unsigned t = 0; t < gp->ntails; t++)
        tn_gc_clear_cards(rt, gp->tails[t].r, gp->tails[t].from);
}

static void note_gap_crossings(tenure_runtime *rt) {
    for (size_t i = 0; i < rt->plan.gaps.count; i++) {
        tn_gap *gap = tn_vec_at(&rt->plan.gaps, i);
        tn_crossing_set(rt, gap->start, gap->size);
    }
}

/* The slots outside the heap that may refer to a moving object. */
static void relocate_roots(tenure_runtime *rt, tn_collection *c) {
    if (c->any_compact) {
        tn_roots_visit_stack(rt, relocate_slot, rt);
        tn_roots_visit_handles(rt, 0xffffffffu, relocate_slot, rt);
        tn_roots_visit_secondaries(rt, relocate_slot, rt);
        tn_finalize_visit_ready(rt, relocate_slot, rt);
        tn_finalize_visit_registered(rt, relocate_slot, rt);
    }
    tn_lifetime_update_sync(rt, relocate, is_dead);
}

/* Thread 0, before the part: the roots relocated, while the other GC threads wait (the
 * embedder's root scanners run here and may ask tenure_is_object about the old addresses,
 * which reads the crossing table the part rewrites: a race under server GC, found by
 * callbacks_threads under ThreadSanitizer); which plans rebuild as they relocate, their
 * destinations' cards cleared (before any GC thread lowers one). */
void tn_gc_relocate_begin(tenure_runtime *rt, tn_collection *c) {
    tn_assert_phase(rt, c);
    relocate_roots(rt, c);
    if (!c->any_compact)
        return;
    for (int g = 0; g < TN_NGEN; g++) {
        c->plans[g].rebuilt = rebuilds_while_relocating(rt, g, &c->plans[g]);
        if (c->plans[g].rebuilt)
            clear_destination_cards(rt, &c->plans[g]);
    }
}

static bool any_gen(const tn_collection *c, int g) {
    (void)c, (void)g;
    return true;
}

/* Card slots are taken this many at a time (an item after the regions'). */
#define CARD_SLOTS_PER_ITEM ((size_t)4096)

void tn_gc_relocate_part(tenure_runtime *rt, tn_collection *c, unsigned heap) {
    bool shared = rt->team.active && c->parallel_after_mark;
    bool card_slots = c->condemned < TN_GEN2;
    /* Card slots: split in items, unless the card scan's list filled: then the walk over the
     * cards it left must come first (cards.c), and thread 0 does both. */
    bool split_slots = card_slots && !rt->card.card_slots_short;
    if (heap == 0 && card_slots && !split_slots) {
        tn_gc_rescan_card_slots(rt, c->condemned, relocate_card_slot, rt);
        tn_gc_update_card_slot_range(rt, 0, rt->card.card_slots.count, relocate_card_slot, rt, false);
    }
    size_t regions = 0;
    if (c->any_compact)
        for (int g = 0; g < TN_NGEN; g++)
            regions += c->plans[g].n;
    size_t slots = split_slots ? rt->card.card_slots.count : 0; /* emptied after the part */
    size_t items = regions + (slots + CARD_SLOTS_PER_ITEM - 1) / CARD_SLOTS_PER_ITEM;
    for (size_t k; (k = tn_gc_take(rt)) < items;) {
        if (k >= regions) {
            size_t from = (k - regions) * CARD_SLOTS_PER_ITEM;
            size_t to = from + CARD_SLOTS_PER_ITEM < slots ? from + CARD_SLOTS_PER_ITEM : slots;
            tn_gc_update_card_slot_range(rt, from, to, relocate_card_slot, rt, shared);
            continue;
        }
        int g;
        tn_region *r = tn_gc_region_item(c, k, any_gen, &g);
        if (c->plans[g].rebuilt)
            relocate_survivors_rebuilding(rt, r, shared);
        else
            relocate_survivors(rt, r);
    }
}

/* Thread 0, after the part: the gaps' crossing entries (the survivors' were written as they
 * were relocated), the card slot list emptied. */
void tn_gc_relocate_end(tenure_runtime *rt, tn_collection *c) {
    tn_assert_phase(rt, c);
    if (c->any_compact)
        note_gap_crossings(rt);
    rt->card.card_slots.count = 0;
}
