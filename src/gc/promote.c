/* promote.c - promotion: the condemned regions' side bits are cleared, empty regions are
 * released, the others are promoted by relabelling them with the next generation (or kept in
 * theirs when they hold only pinned plugs: demoted); then every region that was condemned (or
 * took survivors) gets its crossing table and cards rebuilt, unless relocation did it, and the
 * gen0 gaps are linked for the allocator. See docs/design/collector.md.
 */
#include "gc/gc_internal.h"

/* Clear the region's side bits. Nothing lies at or above zero_from (memory there is still
 * zero), so only the bits below it, rounded up to whole bitmap words, can be set. */
static void clear_bits(tenure_runtime *rt, tn_region *r) {
    char *top = r->start + tn_align_up((size_t)(r->zero_from - r->start), 64 * 8);
    size_t from = tn_bit_index(rt, r->start), to = tn_bit_index(rt, top < r->end ? top : r->end);
    tn_bits_clear(rt->mark_bits, from, to);
    tn_bits_clear(rt->pin_bits, from, to);
    tn_bits_clear(rt->plug_bits, from, to);
}

static void discard_tail(tenure_runtime *rt, tn_region *r) {
    if (rt->config.GCPoisonFreed)
        return;
    uintptr_t page = tn_os_page_size();
    char *from = (char *)(((uintptr_t)r->used + page - 1) & ~(page - 1));
    if (from >= r->end || (size_t)(r->end - from) < TN_DISCARD_MIN)
        return;
    if (from < r->zero_from) { /* untouched pages above zero_from hold nothing to give back */
        char *to = (char *)(((uintptr_t)r->zero_from + page - 1) & ~(page - 1)); /* whole pages */
        tn_os_discard(from, (size_t)((to < r->end ? to : r->end) - from));
        r->zero_from = from;
    }
    tn_region_discarded(rt, r, (size_t)(r->end - from));
}

/* The gaps left in gen0 (in front of the pinned plugs of demoted regions), at least
 * TN_GAP_MIN bytes and not given back to the OS, linked in address order through their third
 * word (tn_heap_set_gen0_gaps): the allocator cuts contexts from them before it takes new space
 * (heap/alloc.c). Built from rt->plan.gaps, reserved before the pause: nothing is allocated. */
static void link_gen0_gaps(tenure_runtime *rt) {
    char *head = NULL;
    for (size_t i = rt->plan.gaps.count; i-- > 0;) {
        tn_gap *gap = tn_vec_at(&rt->plan.gaps, i);
        tn_region *r = tn_region_of(rt, gap->start);
        if (gap->size < TN_GAP_MIN || r->state != TN_RS_IN_USE || r->gen != TN_GEN0 || r->discarded)
            continue;
        TN_ASSERT_INTERNAL(tn_is_free(gap->start) && ((size_t *)gap->start)[1] == gap->size);
        ((char **)gap->start)[2] = head;
        head = gap->start;
    }
    tn_heap_set_gen0_gaps(rt, head);
}

/* Release the empty regions of a generation, promote the others by relabelling them. */
static void release_and_promote(tenure_runtime *rt, tn_collection *c, int gen, tn_gen_plan *gp) {
    for (size_t i = 0; i < gp->n; i++) {
        tn_region *r = gp->regions[i];
        clear_bits(rt, r);
        tn_bgc_forget_unswept(rt, r); /* (a gen1 region a background GC's sweep has not reached) */
        bool pinned = r->compacting && r->pin_count > 0;
        r->compacting = r->kept = false;
        if (r->used == r->start) {
            tn_region_release(rt, r);
            continue;
        }
        if (r->demote) {
            r->demote = false;
            c->record.demoted = true;
        } else if (gen < TN_GEN2) {
            tn_region_set_gen(rt, r, gen + 1);
        }
        if (pinned && r->gen >= TN_GEN1 && r->gen <= TN_GEN2)
            discard_tail(rt, r);
    }
}

/* The generations whose regions get their crossing table and cards rebuilt: those relocation
 * did not rebuild. */
static bool not_rebuilt(const tn_collection *c, int g) { return !c->plans[g].rebuilt; }

/* Thread 0, before the part: empty regions released, the others promoted. */
void tn_gc_promote_begin(tenure_runtime *rt, tn_collection *c) {
    tn_assert_phase(rt, c);
    for (int g = TN_NGEN - 1; g >= 0; g--)
        release_and_promote(rt, c, g, &c->plans[g]);
}

/* The `k`-th tail of the plans relocation did not rebuild, or NULL. */
static const tn_plan_tail *tail_item(tn_collection *c, size_t k) {
    for (int g = 0; g < TN_NGEN; g++) {
        tn_gen_plan *gp = &c->plans[g];
        if (gp->rebuilt)
            continue;
        if (k < gp->ntails)
            return &gp->tails[k];
        k -= gp->ntails;
    }
    return NULL;
}

/* Every region that was condemned (or took survivors) gets its crossing table and, in
 * generation 2 (or 1, when demoted objects stayed in gen0), its cards rebuilt, unless
 * relocation did it: an item per region, then one per tail (a region of an uncondemned
 * generation, in no plan's regions). */
void tn_gc_promote_part(tenure_runtime *rt, tn_collection *c, unsigned heap) {
    (void)heap;
    bool demoted = c->record.demoted;
    size_t regions = 0;
    for (int g = 0; g < TN_NGEN; g++)
        regions += not_rebuilt(c, g) ? c->plans[g].n : 0;
    for (size_t k;;) {
        k = tn_gc_take(rt);
        int g;
        tn_region *r = k < regions ? tn_gc_region_item(c, k, not_rebuilt, &g) : NULL;
        if (r) {
            if (r->state == TN_RS_IN_USE)
                tn_gc_rebuild_region(rt, r, r->gen >= TN_GEN2 || (demoted && r->gen >= TN_GEN1));
            continue;
        }
        const tn_plan_tail *t = tail_item(c, k - regions);
        if (!t)
            break;
        tn_gc_rebuild_range(rt, t->r, t->from, t->r->gen == TN_GEN2 || demoted);
    }
}

/* While a background GC marks, what a foreground gen1 GC promoted into gen2 (the gen1 regions
 * it relabelled, the part of gen2's tail it filled) is allocated black (gc/background.h B1). */
static void promoted_to_bgc(tenure_runtime *rt, tn_collection *c) {
    if (!tn_bgc_marking(rt) || c->bgc_final || c->condemned < TN_GEN1)
        return;
    tn_gen_plan *gp = &c->plans[TN_GEN1];
    for (size_t i = 0; i < gp->n; i++) {
        tn_region *r = gp->regions[i];
        if (r->state == TN_RS_IN_USE && r->gen == TN_GEN2)
            tn_bgc_promoted(rt, r->start, r->used);
    }
    for (unsigned t = 0; t < gp->ntails; t++)
        tn_bgc_promoted(rt, gp->tails[t].from, gp->tails[t].r->used);
}

/* Thread 0, after the part. */
void tn_gc_promote_end(tenure_runtime *rt, tn_collection *c) {
    tn_assert_phase(rt, c);
    promoted_to_bgc(rt, c);
    link_gen0_gaps(rt);
    /* the gaps' pages counted again at the start of this GC (tn_region_recount_discarded) may have
     * become free regions, still committed: over a hard limit, they go back now */
    if (rt->config.GCHeapHardLimit && tn_heap_committed(rt) > rt->config.GCHeapHardLimit)
        tn_regions_trim(rt, true);
}
