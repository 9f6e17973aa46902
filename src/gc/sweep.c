/* sweep.c - sweeping: in every swept generation (the plan did not compact it), each run of
 * dead objects between the plugs the plan recorded becomes a free object; a region with no
 * survivor is left empty (released by promote.c); the large object heaps put every free run
 * on their free lists. Nothing moves. See docs/design/collector.md. (The background GC's
 * sweep, outside the pauses, is background.c's; it makes its free runs here.)
 */
#include "gc/gc_internal.h"
#include "heap/crossing.h"

size_t tn_gc_free_run(tenure_runtime *rt, char *p, char *s, tn_free_list *fl) {
    if (s <= p)
        return 0;
    tn_make_free(rt, p, (size_t)(s - p));
    tn_crossing_set(rt, p, (size_t)(s - p)); /* (the survivors' entries stay right) */
    tn_heap_poison_free(rt, p, (size_t)(s - p));
    if (fl)
        tn_free_list_add(rt, fl, p, (size_t)(s - p));
    return (size_t)(s - p);
}

static void sweep_region(tenure_runtime *rt, tn_region *r, tn_free_list *fl) {
    char *p = r->start, *last_live_end = r->start;
    size_t free_bytes = 0;
    tn_plug_iter it;
    tn_plug_iter_init(&it, rt, r);
    for (size_t b, eb; tn_plug_iter_next(&it, &b, &eb);) {
        free_bytes += tn_gc_free_run(rt, p, tn_bit_addr(rt, b), fl);
        p = last_live_end = tn_bit_addr(rt, eb) + 8;
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

/* Sweep a large or pinned heap region, putting every free run on the free list. */
static void sweep_large_region(tenure_runtime *rt, tn_region *r, tn_free_list *fl) {
    if (r->live_bytes == 0) {
        r->used = r->start; /* released below */
        return;
    }
    sweep_region(rt, r, fl);
}

/* A large heap's regions in order, its free list rebuilt from scratch (one item: the free
 * list's order is the regions' whatever the threads). */
static void sweep_large_generation(tenure_runtime *rt, int gen, tn_gen_plan *gp) {
    tn_free_list *fl = tn_heap_free_list(rt, gen);
    tn_free_list_clear(fl);
    for (size_t i = 0; i < gp->n; i++)
        sweep_large_region(rt, gp->regions[i], fl);
}

static void sweep_small_region(tenure_runtime *rt, tn_region *r) {
    if (r->live_bytes) {
        sweep_region(rt, r, NULL);
    } else {
        if (r->zero_from < r->used)
            r->zero_from = r->used;
        r->used = r->start;
    }
}

/* A small-object generation with regions to sweep: swept, or compacted with kept regions
 * (plan.c), whose regions other than the kept ones are items that do nothing. */
static bool swept_small(const tn_collection *c, int g) {
    return g <= TN_GEN2 && (!c->plans[g].compact || c->plans[g].nkept);
}

/* Items: the compacted generations' moves (compact.c: one per heap and generation, then the
 * LOH's), then each region of a swept small-object generation (or of a compacted one with
 * kept regions: plan.c; only those are swept), then each swept large heap
 * whole. The compacted generations share no region with the swept ones (a compacted
 * generation's tail belongs to an uncondemned one); thread 0 finishes the compaction after the
 * part (tn_gc_compact_end). */
void tn_gc_sweep_part(tenure_runtime *rt, tn_collection *c, unsigned heap) {
    (void)heap;
    size_t moves = tn_gc_compact_items(c), small = 0;
    for (int g = 0; g <= TN_GEN2; g++)
        if (tn_gen_condemned(g, c->condemned) && swept_small(c, g))
            small += c->plans[g].n;
    for (size_t k; (k = tn_gc_take(rt)) < moves + small + 2;) {
        if (k < moves) {
            tn_gc_compact_item(rt, c, k);
            continue;
        }
        k -= moves;
        int g = k < small ? -1 : k == small ? TN_LOH : TN_POH;
        if (g < 0) {
            tn_region *r = tn_gc_region_item(c, k, swept_small, &g);
            if (!c->plans[g].compact || r->kept)
                sweep_small_region(rt, r);
        } else if (tn_gen_condemned(g, c->condemned) && !c->plans[g].compact)
            sweep_large_generation(rt, g, &c->plans[g]);
    }
}
