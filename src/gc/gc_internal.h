/*
 * gc_internal.h - what the phases of a collection share (private to gc/): the phases
 * themselves, called in order by the driver (collect.c), and the plugs that plan records and
 * the later phases walk. Each phase is a function over the heap (rt) and the collection (c).
 */
#ifndef TENURE_GC_INTERNAL_H
#define TENURE_GC_INTERNAL_H

#include "gc/collection.h"

/* ---- the phases, in the driver's order (docs/design/collector.md) ---- */
/* Every phase runs inside the pause of collection c: rt->lock held, the world stopped, c the
 * collection in progress (checked at each phase's entry: TN_ASSERT, base/assert.h). */
#define tn_assert_phase(rt, c)              \
    do {                                    \
        tn_assert_world_stopped(rt);        \
        TN_ASSERT((rt)->collection == (c)); \
    } while (0)
/* mark.c: every object reachable from the roots in a condemned region is marked (M1). */
void tn_gc_mark(tenure_runtime *rt, tn_collection *c);
/* mark.c: what GC thread `heap` (1..n-1) does in a GC (server GC: gc/team.h). */
void tn_gc_mark_helper(tenure_runtime *rt, unsigned heap);
/* plan.c: per condemned generation, compact or sweep (then the plan part records every
 * region's plugs); end: the compacted generations' plugs given new places. */
void tn_gc_plan(tenure_runtime *rt, tn_collection *c);
/* After the plan part, thread 0: when the team runs it, the place part's items and each
 * compacted region's place in the pin list (from the pinned plugs the plan part counted). */
void tn_gc_place_begin(tenure_runtime *rt, tn_collection *c);
void tn_gc_plan_end(tenure_runtime *rt, tn_collection *c);
/* report.c: where every survivor goes (bulk range events, profilers), before anything moves. */
void tn_gc_report_ranges(tenure_runtime *rt, tn_collection *c);
/* relocate.c: every reference to a moving object gets its new address (begin: the cards the
 * rebuild writes cleared; end: the gaps' crossing entries). */
void tn_gc_relocate_begin(tenure_runtime *rt, tn_collection *c);
void tn_gc_relocate_end(tenure_runtime *rt, tn_collection *c);
/* compact.c: the plugs of compacted generations move, item by item in the sweep part (an item:
 * one heap's regions of one compacted small-object generation, or the whole LOH); after every
 * item, the used ends drop to the plan's and the gaps become free objects (thread 0). */
size_t tn_gc_compact_items(const tn_collection *c);
void tn_gc_compact_item(tenure_runtime *rt, tn_collection *c, size_t k);
void tn_gc_compact_end(tenure_runtime *rt, tn_collection *c);
/* promote.c: empty regions released, the others promoted (begin); cards and crossings rebuilt
 * (the part); the gen0 gaps linked (end). */
void tn_gc_promote_begin(tenure_runtime *rt, tn_collection *c);
void tn_gc_promote_end(tenure_runtime *rt, tn_collection *c);

/* ---- the phases' parallel parts (gc/parts.c, docs/design/collector.md "Server GC") ----
 *
 * The work of a phase that splits by region is a part: a function every GC thread of the
 * collection runs (heap 0 .. n-1; under workstation GC, or when the GC runs its phases on
 * thread 0 alone, only heap 0), taking items (regions, mostly) with tn_gc_take until none is
 * left, then meeting the others at the part's join. Thread 0 does the serial work between
 * parts. Within a part (invariant J4, gc/team.h):
 *  - a region is taken by exactly one thread, which alone writes its objects, side bits and
 *    fields; a region's side bits, crossing entries, cards and card bundle are its own
 *    (regions are whole units of at least 256 KiB, a bundle covers 16 KiB);
 *  - what another thread's work also writes (the cards of a plug's destination during
 *    relocation, the cards of the card scan's slots) is written with atomics
 *    (tn_gc_lower_card_shared);
 *  - everything else the part reads (plans, plug and mark bits, deltas, region fields,
 *    unit_gen) is not written by any thread during it. */
typedef void (*tn_gc_part_fn)(tenure_runtime *rt, tn_collection *c, unsigned heap);
/* The next item of the part in progress (0, 1, ...: each index once over all threads). */
size_t tn_gc_take(tenure_runtime *rt);
/* The `k`-th region of the condemned generations g for which want(c, g) holds (generation
 * order, then address: plan's order), or NULL past the last (*gen: its generation). */
typedef bool (*tn_gc_gen_filter)(const tn_collection *c, int g);
tn_region *tn_gc_region_item(tn_collection *c, size_t k, tn_gc_gen_filter want, int *gen);
/* The end of the run of a[from]'s heap in a[from, n): a plan's regions and destinations are
 * sorted by heap (plan.c), so a heap's are one run. */
static inline size_t tn_gc_heap_run_end(tn_region *const *a, size_t n, size_t from) {
    size_t to = from + 1;
    while (to < n && a[to]->heap == a[from]->heap)
        to++;
    TN_ASSERT_INTERNAL(to == n || a[to]->heap > a[from]->heap);
    return to;
}
/* The parts, in the driver's order, each ending at its join:
 * plan.c: every condemned region's plugs recorded (before their placement, the range reports
 *   and relocation), and each compacted region's pinned plugs counted;
 * plan.c: the place part, the compacted generations' plugs placed (one item per heap and
 *   generation: tn_place_item);
 * relocate.c: the roots, card slots and survivors' slots relocated;
 * sweep.c: compacted generations' plugs moved (one item per heap and generation: compact.c),
 *   swept regions swept;
 * promote.c: cards and crossing entries rebuilt. */
void tn_gc_plan_part(tenure_runtime *rt, tn_collection *c, unsigned heap);
void tn_gc_place_part(tenure_runtime *rt, tn_collection *c, unsigned heap);
void tn_gc_relocate_part(tenure_runtime *rt, tn_collection *c, unsigned heap);
void tn_gc_sweep_part(tenure_runtime *rt, tn_collection *c, unsigned heap);
void tn_gc_promote_part(tenure_runtime *rt, tn_collection *c, unsigned heap);
enum { TN_PART_PLAN, TN_PART_PLACE, TN_PART_RELOCATE, TN_PART_SWEEP, TN_PART_PROMOTE, TN_PARTS };
/* One step of the phases after marking: thread 0's serial work before the part (the team
 * waits at the previous join), the part on every GC thread of the collection, thread 0's
 * work after the part's join, then the phase whose time ends there (TN_PHASE_*, or -1). The
 * table (parts.c tn_gc_parts, in TN_PART_* order) is the one order both the driver
 * (tn_gc_run_parts) and the helpers (tn_gc_helper) follow: they cannot diverge. */
typedef void (*tn_gc_serial_fn)(tenure_runtime *rt, tn_collection *c);
typedef struct tn_gc_part_step {
    tn_gc_serial_fn before;
    tn_gc_part_fn part;
    tn_gc_serial_fn after;
    int phase_done;
} tn_gc_part_step;
extern const tn_gc_part_step tn_gc_parts[TN_PARTS];
/* parts.c, thread 0: every step of tn_gc_parts in order, each part with the team when
 * c->parallel_after_mark (the helpers are released from the previous join and met at the
 * part's), else alone; phase_done(c, phase) times each step that ends a phase. */
void tn_gc_run_parts(tenure_runtime *rt, tn_collection *c, void (*phase_done)(tn_collection *c, int phase));
/* parts.c: what each helper runs in a GC: its marking (mark.c), then, when the GC runs the
 * phases after marking on the team, every part of tn_gc_parts in order. */
void tn_gc_helper(tenure_runtime *rt, unsigned heap);

/* report.c: the record done (rt->last, tenure_stats), budgets, the end events, the GC callback. */
void tn_gc_report(tenure_runtime *rt, tn_collection *c);
/* collect.c: a background GC's final-mark pause (gc/background.h), lock held. */
void tn_gc_collect_bgc_final(tenure_runtime *rt);
/* mark.c: the final pause's card scan, once it counts as a gen0 GC (relocation's card slots). */
void tn_gc_mark_older_cards(tenure_runtime *rt, tn_collection *c);
/* report.c: the final pause's own report (budgets of the young generations, HeapVerify) and,
 * when the sweep is done, the background GC's (its record finished, history, GCEnd,
 * GCHeapStats, the GC callback; pause_ns: its pauses summed). */
void tn_gc_report_bgc_final(tenure_runtime *rt, tn_collection *c);
void tn_gc_report_background_end(tenure_runtime *rt, tn_gc_record *record, uint64_t pause_ns);
/* report.c: a pause of pause ns in tenure_stats (last, total, max). */
void tn_gc_count_pause(tenure_runtime *rt, uint64_t pause);
/* sweep.c: [p, s) becomes a free object (on fl, if not NULL); its size. */
size_t tn_gc_free_run(tenure_runtime *rt, char *p, char *s, tn_free_list *fl);
/* report.c: each generation's size and free bytes (the record's before or after, and stats)
 * and, under server GC (nheaps > 1), each heap's part of them in `heaps`, in one region walk. */
void tn_gc_measure(tenure_runtime *rt, size_t *sizes, size_t *free_sizes, tn_heap_tally *heaps, bool after);

/* ---- plugs ---- */
static inline char *tn_bit_addr(tenure_runtime *rt, size_t bit) { return rt->base + bit * 8; }
static inline bool tn_is_marked(tenure_runtime *rt, const void *p) {
    return tn_bit_test(rt->mark_bits, tn_bit_index(rt, p));
}
static inline bool tn_is_pinned(tenure_runtime *rt, const void *p) {
    return tn_bit_test(rt->pin_bits, tn_bit_index(rt, p));
}

/* Plugs: found once, by plan, and recorded.
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

/* The delta of a plug that directly follows another (next to a pinned plug): plan.c. */
intptr_t tn_plug_adjacent_delta(tenure_runtime *rt, tn_region *r, char *s);

/* The delta of the plug starting at s (bit sb) of compacting region r. */
static inline intptr_t tn_plug_delta(tenure_runtime *rt, tn_region *r, char *s, size_t sb) {
    if (s == r->start)
        return r->first_plug_delta;
    if (TENURE__UNLIKELY(tn_bit_test(rt->plug_bits, sb - 1)))
        return tn_plug_adjacent_delta(rt, r, s);
    return ((intptr_t *)s)[-1];
}

/* Walks a region's recorded plugs in address order, one plug_bits word at a time (no call
 * per plug). Regions start on a unit boundary, so their bits begin a word, and no bit of
 * another region lies in their last word. */
typedef struct tn_plug_iter {
    const uint64_t *bits;
    size_t w, end_w; /* the word being taken, the first word past the region's used end */
    uint64_t word;   /* bits of word w not taken yet */
} tn_plug_iter;

static inline void tn_plug_iter_init(tn_plug_iter *it, tenure_runtime *rt, const tn_region *r) {
    size_t from = tn_bit_index(rt, r->start), end = tn_bit_index(rt, r->used);
    TN_ASSERT_INTERNAL((from & 63) == 0);
    it->bits = rt->plug_bits;
    it->w = from >> 6;
    it->end_w = (end + 63) >> 6;
    it->word = it->w < it->end_w ? it->bits[it->w] : 0;
}

static inline size_t tn_plug_iter_bit(tn_plug_iter *it) {
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
static inline bool tn_plug_iter_next(tn_plug_iter *it, size_t *sb, size_t *eb) {
    if ((*sb = tn_plug_iter_bit(it)) == SIZE_MAX)
        return false;
    *eb = tn_plug_iter_bit(it);
    TN_ASSERT_INTERNAL(*eb != SIZE_MAX && *eb > *sb);
    return true;
}

/* Generation v will have after this GC (3 = not young: NULL or outside the heap). */
static inline int tn_gen_after(tenure_runtime *rt, const void *v) {
    if (!v || !tn_in_range(rt, v))
        return 3;
    tn_region *r = tn_region_of(rt, v);
    int g = rt->unit_gen[tn_unit_of(rt, v)];
    return r && r->condemned && !r->demote && g < TN_GEN2 ? g + 1 : g;
}

/* ---- the space around pinned plugs (issue 19) ----
 *
 * A region that keeps pinned plugs keeps the free objects (gaps) between them until a later
 * compaction fills them, and a gen1 or gen2 one its free end, which no allocation context
 * uses. The whole pages inside a gap of at least TN_DISCARD_MIN bytes (past the free object's
 * header and size words), and those of such a free end, go back to the OS (MADV_DONTNEED:
 * they read as zero if touched again) and stop counting as committed (tn_region_discarded), so that regions
 * held by a few pins do not exhaust GCHeapHardLimit. A GC that condemns the region, or packs
 * survivors into its free end (choose_tail), counts them again first: it may write there.
 * Not under GCPoisonFreed, whose poison must stay readable. The gaps of a (demoted) gen0
 * region are given back only under a hard limit: the next GC is near and refills them, and
 * giving them back costs a system call and the page faults of their reuse every GC. */
#define TN_DISCARD_MIN ((size_t)16 << 10)


#endif
