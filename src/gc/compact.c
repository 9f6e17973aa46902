/* compact.c - compaction: the plugs of every compacted generation move to the places the
 * plan gave them (memmove, in address order: a plug never moves past its source), each
 * region's used end drops to its plan's, and the gaps in front of pinned plugs become free
 * objects (their pages given back to the OS where gc_internal.h says). An LOH compaction
 * rebuilds its free list. The moves are items of the sweep part, one per server GC heap and
 * generation (below). See docs/design/collector.md.
 */
#include "gc/gc_internal.h"

/* Move r's plugs; the bytes moved. */
static size_t move_region(tenure_runtime *rt, tn_region *r) {
    tn_plug_iter it;
    tn_plug_iter_init(&it, rt, r);
    size_t moved = 0;
    for (size_t b, eb; tn_plug_iter_next(&it, &b, &eb);) {
        char *s = tn_bit_addr(rt, b);
        intptr_t delta = tn_plug_delta(rt, r, s, b);
        size_t size = (size_t)(tn_bit_addr(rt, eb) + 8 - s);
        if (delta) {
            memmove(s + delta, s, size);
            moved += size;
        }
    }
    return moved;
}

/* tenure_stats.moved_bytes (the GC threads of a server GC move at once). */
static void count_moved(tenure_runtime *rt, size_t moved) {
    if (moved)
        __atomic_fetch_add(&rt->stats.moved_bytes, (uint64_t)moved, __ATOMIC_RELAXED);
}

/* Every plug has moved: the space above each region's new end held objects that moved out
 * (or died). A region left empty is released, and decommitted, later (GCPoisonFreed). */
static void finish_compacted(tenure_runtime *rt, tn_gen_plan *gp) {
    for (size_t i = 0; i < gp->nd; i++) {
        tn_region *r = gp->dests[i];
        if (r->zero_from < r->used)
            r->zero_from = r->used;
        if (r->plan_used > r->start && r->plan_used < r->used)
            tn_heap_poison(rt, r->plan_used, (size_t)(r->used - r->plan_used));
        r->used = r->plan_used;
        if (r->zero_from < r->used)
            r->zero_from = r->used;
        if (r->condemned) /* (a tail keeps its free objects from before) */
            r->free_bytes = 0;
    }
}

/* After an LOH compaction: the free list is every free object left, and each region's tail. */
static void refill_free_list(tenure_runtime *rt, tn_gen_plan *gp, tn_free_list *fl) {
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

static void discard_gap(tenure_runtime *rt, tn_region *r, char *start, size_t size) {
    if (rt->config.GCPoisonFreed || size < TN_DISCARD_MIN)
        return;
    uintptr_t page = tn_os_page_size();
    uintptr_t a = ((uintptr_t)start + 2 * sizeof(uintptr_t) + page - 1) & ~(page - 1);
    uintptr_t b = ((uintptr_t)start + size) & ~(page - 1);
    if (b <= a)
        return;
    tn_os_discard((void *)a, b - a);
    tn_region_discarded(rt, r, b - a);
}

/* The gaps in front of pinned plugs become free objects. */
static void free_gaps(tenure_runtime *rt) {
    for (size_t i = 0; i < rt->plan.gaps.count; i++) {
        tn_gap *gap = tn_vec_at(&rt->plan.gaps, i);
        tn_region *r = tn_region_of(rt, gap->start);
        tn_make_free(rt, gap->start, gap->size);
        tn_heap_poison_free(rt, gap->start, gap->size);
        r->free_bytes += gap->size;
        int g = tn_gen_after(rt, gap->start); /* not the LOH's: its free list hands gaps out */
        if (r->gen <= TN_GEN2 && (g == TN_GEN1 || g == TN_GEN2 || rt->config.GCHeapHardLimit))
            discard_gap(rt, r, gap->start, gap->size);
    }
}

/* ---- compaction's items (the sweep part, sweep.c) ----
 *
 * An item is one server GC heap's regions of one compacted small-object generation: the plan
 * sorted each generation's regions by heap, then address, and placed each heap's plugs only in
 * that heap's own regions and tail ("Regions per heap"), so one thread moving a heap's regions
 * in the plan's order never overwrites a plug not yet moved, and no two items write the same
 * region. The LOH, when compacted, is one more item (its regions in the plan's order). */

static bool compacted(const tn_collection *c, int g) {
    return tn_gen_condemned(g, c->condemned) && c->plans[g].compact;
}

/* The regions [*from, *to) of gp's k-th run of regions of one heap; false past the last run. */
static bool heap_run(const tn_gen_plan *gp, size_t k, size_t *from, size_t *to) {
    for (size_t i = 0, j; i < gp->n; i = j) {
        j = tn_gc_heap_run_end(gp->regions, gp->n, i);
        if (k-- == 0) {
            *from = i;
            *to = j;
            return true;
        }
    }
    return false;
}

static size_t heap_runs(const tn_gen_plan *gp) {
    size_t k = 0, from, to;
    while (heap_run(gp, k, &from, &to))
        k++;
    return k;
}

size_t tn_gc_compact_items(const tn_collection *c) {
    size_t n = compacted(c, TN_LOH) ? 1 : 0;
    for (int g = 0; g <= TN_GEN2; g++)
        if (compacted(c, g))
            n += heap_runs(&c->plans[g]);
    return n;
}

void tn_gc_compact_item(tenure_runtime *rt, tn_collection *c, size_t k) {
    for (int g = 0; g <= TN_GEN2; g++) {
        if (!compacted(c, g))
            continue;
        const tn_gen_plan *gp = &c->plans[g];
        size_t from, to;
        if (heap_run(gp, k, &from, &to)) {
            size_t moved = 0;
            for (size_t i = from; i < to; i++)
                if (!gp->regions[i]->kept) /* (swept in place: sweep.c) */
                    moved += move_region(rt, gp->regions[i]);
            count_moved(rt, moved);
            return;
        }
        k -= heap_runs(gp);
    }
    TN_ASSERT_INTERNAL(k == 0 && compacted(c, TN_LOH));
    size_t moved = 0;
    for (size_t i = 0; i < c->plans[TN_LOH].n; i++)
        moved += move_region(rt, c->plans[TN_LOH].regions[i]);
    count_moved(rt, moved);
}

void tn_gc_compact_end(tenure_runtime *rt, tn_collection *c) {
    tn_assert_phase(rt, c);
    for (int g = 0; g < TN_NGEN; g++)
        if (compacted(c, g))
            finish_compacted(rt, &c->plans[g]);
    free_gaps(rt);
    if (compacted(c, TN_LOH))
        refill_free_list(rt, &c->plans[TN_LOH], tn_heap_free_list(rt, TN_LOH));
}
