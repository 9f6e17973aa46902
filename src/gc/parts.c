/* parts.c - the phases after marking split by region over server GC's team (gc_internal.h
 * "the phases' parallel parts", docs/design/collector.md "Server GC"): the items' cursor, the
 * regions of the plans as items, running a part on thread 0 (with the team or alone), and
 * what a helper runs in a GC. */
#include "gc/gc_internal.h"
#include "heap/crossing.h"

size_t tn_gc_take(tenure_runtime *rt) {
    if (!rt->team.active) /* thread 0 alone: no other thread reads the cursor */
        return rt->team.cursor++;
    return __atomic_fetch_add(&rt->team.cursor, 1, __ATOMIC_RELAXED);
}

tn_region *tn_gc_region_item(tn_collection *c, size_t k, tn_gc_gen_filter want, int *gen) {
    for (int g = 0; g < TN_NGEN; g++) {
        if (!tn_gen_condemned(g, c->condemned) || !want(c, g))
            continue;
        if (k < c->plans[g].n) {
            *gen = g;
            return c->plans[g].regions[k];
        }
        k -= c->plans[g].n;
    }
    return NULL;
}

/* After the placement: the gap lists closed up, then where each survivor goes reported,
 * before anything moves. */
static void placed(tenure_runtime *rt, tn_collection *c) {
    tn_gc_plan_end(rt, c);
    tn_gc_report_ranges(rt, c);
}

const tn_gc_part_step tn_gc_parts[TN_PARTS] = {
    [TN_PART_PLAN] = {NULL, tn_gc_plan_part, NULL, -1},
    [TN_PART_PLACE] = {tn_gc_place_begin, tn_gc_place_part, placed, TN_PHASE_PLAN},
    [TN_PART_RELOCATE] = {tn_gc_relocate_begin, tn_gc_relocate_part, tn_gc_relocate_end, TN_PHASE_RELOCATE},
    /* moves (per heap and generation) and sweeping */
    [TN_PART_SWEEP] = {NULL, tn_gc_sweep_part, tn_gc_compact_end, TN_PHASE_COMPACT_OR_SWEEP},
    [TN_PART_PROMOTE] = {tn_gc_promote_begin, tn_gc_promote_part, tn_gc_promote_end, TN_PHASE_PROMOTE},
};

/* The join a part ends at: .NET's gc_join_stage of the same place in its GC (gcinternal.h):
 * after the plugs are found, gc_join_decide_on_compaction (thread 0 then gives each compacted
 * region its place in the pin list); after they are placed, gc_join_begin_relocate_phase;
 * after relocation, relocate_phase_done; after
 * compacting and sweeping, adjust_handle_age_sweep (adjust_handle_age_compact when nothing is
 * swept); at the end, gc_join_done (tn_gc_team_finish releases it). */
static uint32_t part_join(const tn_collection *c, int part) {
    switch (part) {
    case TN_PART_PLAN: return TN_JOIN_DECIDE_ON_COMPACTION;
    case TN_PART_PLACE: return TN_JOIN_BEGIN_RELOCATE_PHASE;
    case TN_PART_RELOCATE: return TN_JOIN_RELOCATE_PHASE_DONE;
    case TN_PART_SWEEP: return c->any_sweep ? TN_JOIN_ADJUST_HANDLE_AGE_SWEEP : TN_JOIN_ADJUST_HANDLE_AGE_COMPACT;
    default: return TN_JOIN_DONE;
    }
}

/* J4's ground (gc/team.h): a region (whole units) owns whole words of the side bitmaps
 * (64 bits of 8 bytes), whole crossing granules and whole card bundles. */
static void check_region_grain(const tenure_runtime *rt) {
    TN_ASSERT_INTERNAL(rt->unit_size % ((size_t)1 << TENURE__BUNDLE_SHIFT) == 0 && rt->unit_size % (64 * 8) == 0 &&
                       rt->unit_size % TN_CROSSING_GRANULE == 0 && (uintptr_t)rt->base % rt->unit_size == 0);
}

static void run_part(tenure_runtime *rt, tn_collection *c, int part) {
    check_region_grain(rt);
    rt->team.cursor = 0; /* the helpers wait at a join: they read it after the restart */
    if (c->parallel_after_mark)
        tn_gc_restart(rt); /* (the first restarts the helpers from marking's join) */
    tn_gc_parts[part].part(rt, c, 0);
    if (c->parallel_after_mark)
        tn_gc_join(rt, 0, part_join(c, part));
    /* J4: each GC thread left the part having taken an item past the last one */
    TN_ASSERT_INTERNAL(rt->team.cursor >= (c->parallel_after_mark ? rt->team.active + 1 : 1));
}

void tn_gc_run_parts(tenure_runtime *rt, tn_collection *c, void (*phase_done)(tn_collection *c, int phase)) {
    for (int part = 0; part < TN_PARTS; part++) {
        const tn_gc_part_step *step = &tn_gc_parts[part];
        if (step->before)
            step->before(rt, c);
        run_part(rt, c, part);
        if (step->after)
            step->after(rt, c);
        if (step->phase_done >= 0)
            phase_done(c, step->phase_done);
    }
}

void tn_gc_helper(tenure_runtime *rt, unsigned heap) {
    tn_gc_mark_helper(rt, heap); /* ends at the join after marking */
    /* thread 0 set this before it restarted the helpers (the team's lock orders the two) */
    tn_collection *c = rt->collection;
    if (!c->parallel_after_mark)
        return; /* released by tn_gc_team_finish */
    for (int part = 0; part < TN_PARTS; part++) {
        tn_gc_parts[part].part(rt, c, heap);
        tn_gc_join(rt, heap, part_join(c, part));
    }
}
