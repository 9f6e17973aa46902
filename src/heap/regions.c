/* regions.c - the reserved range, its side tables, and regions: taking them, labelling them
 * with a generation, giving them back, decommitting them after a delay. */
#include "runtime.h"
#include "heap/crossing.h"
#include <stdlib.h>

static size_t side_bits_bytes(const tenure_runtime *rt) { return rt->range / 64; }
static size_t cards_bytes(const tenure_runtime *rt) { return rt->range / TN_CARD_SIZE; }
static size_t bundle_bytes(const tenure_runtime *rt) { return rt->range >> TENURE__BUNDLE_SHIFT; }
static size_t crossing_bytes(const tenure_runtime *rt) { return (rt->range >> TN_CROSSING_SHIFT) * sizeof(uint32_t); }
static size_t plug_brick_bytes(const tenure_runtime *rt) {
    return (rt->range >> TN_PLUG_BRICK_SHIFT) * sizeof(int32_t);
}

bool tn_heap_init(tenure_runtime *rt) {
    rt->unit_size = (size_t)rt->config.GCRegionSize;
    rt->range = (size_t)rt->config.GCRegionRange & ~(rt->unit_size - 1);
    rt->max_units = rt->range / rt->unit_size;
    rt->head.unit_shift = (uint32_t)__builtin_ctzll(rt->unit_size);
    rt->base = tn_os_reserve(rt->range, rt->unit_size);
    rt->regions = tn_calloc(rt->max_units, sizeof(tn_region));
    rt->unit_head = tn_calloc(rt->max_units, sizeof(uint32_t));
    rt->unit_gen = tn_calloc(rt->max_units, 1);
    rt->cards = tn_os_reserve_lazy(cards_bytes(rt));
    rt->card_bundles = tn_os_reserve_lazy(bundle_bytes(rt));
    rt->mark_bits = tn_os_reserve_lazy(side_bits_bytes(rt));
    rt->pin_bits = tn_os_reserve_lazy(side_bits_bytes(rt));
    rt->plug_bits = tn_os_reserve_lazy(side_bits_bytes(rt));
    rt->crossing = tn_os_reserve_lazy(crossing_bytes(rt));
    rt->plug_bricks = tn_os_reserve_lazy(plug_brick_bytes(rt));
    if (!rt->base || !rt->regions || !rt->unit_head || !rt->unit_gen || !rt->cards || !rt->card_bundles ||
        !rt->mark_bits || !rt->pin_bits || !rt->plug_bits || !rt->crossing || !rt->plug_bricks)
        return false;
    for (size_t i = 0; i < rt->max_units; i++) {
        tn_region *r = &rt->regions[i];
        r->index = (uint32_t)i;
        r->start = rt->base + i * rt->unit_size;
        r->end = r->start + rt->unit_size;
        r->zero_from = r->start;
        r->units = 1;
        rt->unit_head[i] = (uint32_t)i;
    }
    rt->head.heap_base = (uintptr_t)rt->base;
    rt->head.heap_size = rt->range;
    rt->head.unit_gen = rt->unit_gen;
    rt->head.cards = rt->cards;
    rt->head.card_bundles = rt->card_bundles;
    return true;
}

void tn_heap_destroy(tenure_runtime *rt) {
    tn_os_release(rt->base, rt->range);
    tn_os_release(rt->cards, cards_bytes(rt));
    tn_os_release(rt->card_bundles, bundle_bytes(rt));
    tn_os_release(rt->mark_bits, side_bits_bytes(rt));
    tn_os_release(rt->pin_bits, side_bits_bytes(rt));
    tn_os_release(rt->plug_bits, side_bits_bytes(rt));
    tn_os_release(rt->crossing, crossing_bytes(rt));
    tn_os_release(rt->plug_bricks, plug_brick_bytes(rt));
    free(rt->regions);
    free(rt->unit_head);
    free(rt->unit_gen);
    /* nothing is left to release twice (tenure_create retries a smaller range after this) */
    rt->base = NULL;
    rt->cards = rt->card_bundles = NULL;
    rt->mark_bits = rt->pin_bits = rt->plug_bits = NULL;
    rt->crossing = NULL;
    rt->plug_bricks = NULL;
    rt->regions = NULL;
    rt->unit_head = NULL;
    rt->unit_gen = NULL;
}

void tn_region_list_add(tenure_runtime *rt, tn_region *r) {
    r->next = rt->heap.gens[r->gen];
    rt->heap.gens[r->gen] = r;
}

void tn_region_list_remove(tenure_runtime *rt, tn_region *r) {
    for (tn_region **p = &rt->heap.gens[r->gen]; *p; p = &(*p)->next)
        if (*p == r) {
            *p = r->next;
            r->next = NULL;
            return;
        }
}

tn_region *tn_heap_regions(const tenure_runtime *rt, int gen) { return rt->heap.gens[gen]; }

size_t tn_heap_committed(const tenure_runtime *rt) { return rt->heap.committed; }

void tn_region_discarded(tenure_runtime *rt, tn_region *r, size_t bytes) {
    TN_ASSERT_INTERNAL(bytes <= rt->heap.committed);
    r->discarded += bytes;
    rt->heap.committed -= bytes;
}

void tn_region_recount_discarded(tenure_runtime *rt, tn_region *r) {
    rt->heap.committed += r->discarded;
    r->discarded = 0;
}

/* Find `units` consecutive units not in use, preferring committed ones for single units. */
static size_t find_units(tenure_runtime *rt, uint32_t units) {
    /* GCPoisonFreed: fresh address space first, so that a region given back stays
     * inaccessible (and a stale pointer into it faults) for as long as the range allows */
    if (rt->config.GCPoisonFreed && (size_t)rt->units_high + units <= rt->max_units)
        return rt->units_high;
    if (units == 1) {
        for (size_t i = 0; i < rt->units_high; i++)
            if (rt->regions[i].state == TN_RS_FREE)
                return i;
        for (size_t i = 0; i < rt->max_units; i++)
            if (rt->regions[i].state == TN_RS_UNUSED)
                return i;
        return SIZE_MAX;
    }
    size_t run = 0;
    for (size_t i = 0; i < rt->max_units; i++) {
        run = rt->regions[i].state == TN_RS_IN_USE ? 0 : run + 1;
        if (run == units)
            return i + 1 - units;
    }
    return SIZE_MAX;
}

static size_t uncommitted_bytes(tenure_runtime *rt, size_t first, uint32_t units) {
    size_t n = 0;
    for (size_t i = first; i < first + units; i++)
        n += rt->regions[i].committed ? 0 : rt->unit_size;
    return n;
}

static bool commit_units(tenure_runtime *rt, size_t first, uint32_t units) {
    for (size_t i = first; i < first + units; i++) {
        tn_region *u = &rt->regions[i];
        if (u->committed)
            continue;
        uint64_t every = rt->config.GCFaultCommit;
        if (every && ++rt->heap.commit_requests % every == 0)
            return false; /* injected: as if the OS had refused */
        if (!tn_os_commit(u->start, rt->unit_size))
            return false;
        u->committed = true;
        u->zero_from = u->start;
        rt->heap.committed += rt->unit_size;
        if (rt->heap.committed > rt->heap.committed_peak)
            rt->heap.committed_peak = rt->heap.committed;
    }
    return true;
}

tn_region *tn_region_acquire(tenure_runtime *rt, uint32_t units, int gen, unsigned heap) {
    size_t first = find_units(rt, units);
    if (first == SIZE_MAX)
        return NULL;
    uint64_t limit = rt->config.GCHeapHardLimit;
    if (limit && rt->heap.committed + uncommitted_bytes(rt, first, units) > limit) {
        /* free regions kept committed for reuse count against the limit: give them back */
        tn_regions_trim(rt, true);
        first = find_units(rt, units);
        if (first == SIZE_MAX || rt->heap.committed + uncommitted_bytes(rt, first, units) > limit)
            return NULL;
    }
    if (!commit_units(rt, first, units))
        return NULL;
    tn_region *r = &rt->regions[first];
    char *zero_from = rt->regions[first + units - 1].zero_from;
    for (size_t i = first; i < first + units - 1; i++)
        if (rt->regions[i].zero_from != rt->regions[i].start)
            zero_from = rt->regions[first + units - 1].end; /* a dirty unit inside: treat all as dirty */
    for (size_t i = first; i < first + units; i++) {
        rt->regions[i].state = TN_RS_IN_USE;
        rt->unit_head[i] = (uint32_t)first;
        rt->unit_gen[i] = (uint8_t)(gen > TN_GEN2 ? TN_GEN2 : gen);
    }
    if (first + units > rt->units_high)
        rt->units_high = (uint32_t)(first + units);
    r->units = units;
    r->end = r->start + (size_t)units * rt->unit_size;
    r->used = r->start;
    r->zero_from = zero_from < r->start ? r->start : zero_from;
    r->gen = (uint8_t)gen;
    r->heap = (uint8_t)heap;
    r->free_bytes = 0;
    r->condemned = r->compacting = r->demote = r->kept = false;
    tn_region_list_add(rt, r);
    TN_EMIT(rt, GCCreateSegment_V1, .Address = (uint64_t)(uintptr_t)r->start, .Size = (uint64_t)(r->end - r->start),
            .Type = gen == TN_LOH   ? TN_SEGMENT_LOH
                    : gen == TN_POH ? TN_SEGMENT_POH
                                    : TN_SEGMENT_SOH);
    return r;
}

void tn_region_set_gen(tenure_runtime *rt, tn_region *r, int gen) {
    tn_region_list_remove(rt, r);
    r->gen = (uint8_t)gen;
    for (size_t i = r->index; i < r->index + r->units; i++)
        rt->unit_gen[i] = (uint8_t)(gen > TN_GEN2 ? TN_GEN2 : gen);
    tn_region_list_add(rt, r);
}

/* A free unit goes back to the OS: PROT_NONE until a region takes it again (commit_units). */
static void decommit_unit(tenure_runtime *rt, tn_region *u) {
    tn_os_decommit(u->start, rt->unit_size);
    tn_os_discard(rt->crossing + (((uintptr_t)u->start - (uintptr_t)rt->base) >> TN_CROSSING_SHIFT),
                  (rt->unit_size >> TN_CROSSING_SHIFT) * sizeof(uint32_t));
    u->state = TN_RS_UNUSED;
    u->committed = false;
    u->zero_from = u->start;
    rt->heap.committed -= rt->unit_size;
}

/* The region leaves its generation list; its units become free (still committed). */
void tn_region_release(tenure_runtime *rt, tn_region *r) {
    tn_region_list_remove(rt, r);
    TN_EMIT(rt, GCFreeSegment_V1, .Address = (uint64_t)(uintptr_t)r->start);
    memset(rt->cards + (((uintptr_t)r->start - (uintptr_t)rt->base) >> TENURE__CARD_SHIFT), 0,
           (size_t)(r->end - r->start) >> TENURE__CARD_SHIFT);
    char *dirty_to = r->used > r->zero_from ? r->used : r->zero_from;
    size_t first = r->index, units = r->units;
    for (size_t i = first; i < first + units; i++) {
        tn_region *u = &rt->regions[i];
        u->state = TN_RS_FREE;
        u->units = 1;
        u->end = u->start + rt->unit_size;
        u->used = u->start;
        u->zero_from = dirty_to <= u->start ? u->start : (dirty_to >= u->end ? u->end : dirty_to);
        u->freed_at_gc = rt->stats.gc_count;
        u->next = NULL;
        rt->unit_head[i] = (uint32_t)i;
        rt->unit_gen[i] = 0;
        if (rt->config.GCPoisonFreed)
            decommit_unit(rt, u); /* a stale pointer into it faults at its first use */
    }
}

/* Free units kept committed whatever their age: as many as gen0 took before this GC or its
 * budget will take before the next one (tn_region_acquire takes the lowest free units first, and so do these). Giving
 * them back and taking them again costs a system call and a page fault per page every few GCs
 * when the budget swings (binary-trees: a third of its page faults). Ephemeral GCs only: a full
 * GC returns what the program no longer uses (test_memory B). */
static size_t free_units_to_keep(const tenure_runtime *rt) {
    const tn_gc_record *last = tn_gc_last_record(rt);
    if (last->condemned == TN_GEN2)
        return 0; /* a full GC gives back what has stayed free GCRetainRegions GCs, as before */
    size_t gen0 = last->size_before[TN_GEN0];    /* what the last budget took */
    size_t budget = tn_heap_budget(rt, TN_GEN0); /* every allocation heap's */
    size_t want = gen0 > budget ? gen0 : budget;
    return (want + rt->unit_size - 1) / rt->unit_size;
}

void tn_regions_trim(tenure_runtime *rt, bool all) {
    size_t keep = all ? 0 : free_units_to_keep(rt);
    for (size_t i = 0; i < rt->units_high; i++) {
        tn_region *u = &rt->regions[i];
        if (u->state != TN_RS_FREE)
            continue;
        if (keep && u->committed) {
            keep--;
            continue;
        }
        if (!all && rt->stats.gc_count - u->freed_at_gc < rt->config.GCRetainRegions)
            continue;
        decommit_unit(rt, u);
    }
}

void tn_heap_poison(tenure_runtime *rt, void *p, size_t size) {
    if (rt->config.GCPoisonFreed && size)
        memset(p, TN_POISON_BYTE, size);
}

void tn_heap_poison_free(tenure_runtime *rt, void *p, size_t size) {
    if (size > 2 * sizeof(uintptr_t))
        tn_heap_poison(rt, (char *)p + 2 * sizeof(uintptr_t), size - 2 * sizeof(uintptr_t));
}

void tn_make_free(tenure_runtime *rt, void *p, size_t size) {
    uintptr_t *w = p;
    if (size == 8) {
        w[0] = (uintptr_t)rt->heap.filler_type;
        return;
    }
    w[0] = (uintptr_t)rt->heap.free_type;
    w[1] = size;
}

bool tn_heap_visit_objects(tenure_runtime *rt, tn_object_fn fn, void *ctx) {
    tn_assert_locked(rt);
    for (size_t i = 0; i < rt->units_high; i++) {
        tn_region *r = &rt->regions[i];
        if (r->state != TN_RS_IN_USE || rt->unit_head[i] != i)
            continue;
        char *end = tn_region_walk_end(rt, r);
        for (char *o = r->start; o < end;) {
            tn_type *t = tn_obj_type(o);
            size_t size = tn_obj_size_t(t, o);
            if (t->kind != TN_TK_FREE && !tn_unswept_dead(rt, r, o) && fn(o, t, size, r->gen, ctx))
                return true;
            o += size;
        }
    }
    return false;
}

/* ---- consistency checks (base/assert.h) ---- */

void tn_region_check(const tenure_runtime *rt, const tn_region *r) {
    TN_ASSERT_INTERNAL(r->start <= r->used && r->used <= r->end);
    TN_ASSERT_INTERNAL(r->end == r->start + ((size_t)r->units << rt->head.unit_shift));
    TN_ASSERT_INTERNAL(r->units > 0);
    TN_ASSERT_INTERNAL(r->gen < TN_NGEN);
    TN_ASSERT_INTERNAL(r->state <= TN_RS_IN_USE);
    TN_ASSERT_INTERNAL(tn_in_range(rt, r->start) && tn_in_range(rt, r->end - 1));
}

void tn_regions_check(const tenure_runtime *rt) {
    for (int g = 0; g < TN_NGEN; g++)
        for (const tn_region *r = rt->heap.gens[g]; r; r = r->next) {
            tn_region_check(rt, r);
            TN_ASSERT_EXPENSIVE(r->gen == g && r->state == TN_RS_IN_USE);
        }
    for (const tn_region *r = rt->heap.free_regions; r; r = r->next) {
        tn_region_check(rt, r);
        TN_ASSERT_EXPENSIVE(r->state == TN_RS_FREE);
    }
}
