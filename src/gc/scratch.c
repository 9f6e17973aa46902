/* scratch.c - the memory a GC works in, reserved before its pause.
 *
 * Inside a pause the collector allocates nothing (base/mem.c checks it in checked builds):
 * a GC that could fail half way through for want of a few bytes of malloc would have to undo
 * work or leave the heap inconsistent. Everything it needs is reserved here, with rt->threads.lock
 * held, before the world stops; what cannot be reserved is done without, in a defined way
 * (docs/design/collector.md, "Memory inside a pause"):
 *
 *   mark stacks       GCMarkStackSize entries (at least 64 if that fails), more after a GC
 *                     whose stack overflowed (reserve_mark_stack); an overflow is recovered
 *                     by rescanning (mark.c), so any size works, even none. Server GC: one
 *                     per GC thread and the pool's packets; the helper threads themselves are
 *                     created here (gc/team.c); a GC thread without its stack sits out the GC
 *                     (reserve_mark_stacks)
 *   pins, gaps        one per handle, two per thread, and twice the most pinned plugs a GC
 *                     has found (at least 256); when plan finds more, the generation is swept
 *                     instead of compacted and the GC is counted in
 *                     tenure_stats.gc_scratch_shortfalls; the next GC reserves more
 *   card slots        twice the most old-to-condemned slots a card scan has found (at least
 *                     16384); when full, relocation walks the cards not recorded (cards.c)
 *   pause scratch     the range reports, the heap dump and the profilers' root batch (one
 *                     after the other, never at once); without it they are skipped (counted)
 *   trace streams     the collecting thread's stream of each CTF session is taken now
 *   identity hashes   need nothing: the table is rehashed in place (lifetime.c)
 *   ready queue       needs nothing: room is reserved when an object registers (finalize.c)
 */
#include "runtime.h"
#include "gc/collection.h"
#include <stdlib.h>

#define MIN_PLAN_ENTRIES 256

/* The mark stack a GC needs depends on the graph's shape (a depth-first trace of a random
 * graph keeps a share of all its objects on the stack), not on anything known before the
 * pause. It starts at GCMarkStackSize entries; a GC whose stack overflowed (rescans cost
 * another pass over the marked objects of the overflow range) makes the next one reserve
 * MARK_STACK_GROWTH times as many, up to one entry per MARK_STACK_HEAP_BYTES of committed heap.
 * A GCMarkStackSize under MARK_STACK_MIN (tests that force overflow) stays fixed at
 * MARK_STACK_MIN entries. Only the entries used are touched. */
#define MARK_STACK_MIN 64
#define MARK_STACK_GROWTH 4
#define MARK_STACK_HEAP_BYTES 32

static size_t mark_stack_grown(const tenure_runtime *rt) {
    size_t want = rt->config.GCMarkStackSize, have = rt->mark.w[0].stack.cap;
    if (want < MARK_STACK_MIN || !rt->mark.overflow_seen || have < want)
        return want;
    size_t bound = tn_heap_committed(rt) / MARK_STACK_HEAP_BYTES;
    size_t grown = have <= bound / MARK_STACK_GROWTH ? have * MARK_STACK_GROWTH : bound;
    return grown > want ? grown : want;
}

/* A young GC never overflows (a rescan would cost a young pause a pass over every marked
 * object of the range: issue 34): marking pushes each condemned object once (its mark bit is
 * set first), and an array scanned in chunks (mark.c) holds two more entries for its rest
 * while its chunk is traced (such an array spans far more than three TN_MIN_OBJECT), so a
 * stack of two entries per TN_MIN_OBJECT bytes of the condemned regions cannot fill. It is
 * reserved, not touched: only the entries used cost memory. (Not for a
 * GCMarkStackSize under MARK_STACK_MIN: the tests that overflow on purpose.) */
static size_t young_mark_stack(const tenure_runtime *rt, int condemned) {
    if (condemned > TN_GEN1 || rt->config.GCMarkStackSize < MARK_STACK_MIN)
        return 0;
    size_t bytes = 0;
    for (int g = TN_GEN0; g <= condemned; g++)
        for (const tn_region *r = tn_heap_regions(rt, g); r; r = r->next)
            bytes += (size_t)(r->used - r->start);
    return 2 * (bytes / TN_MIN_OBJECT);
}

/* want entries, or if that memory cannot be had the `fallback` (the size without the young
 * bound), or MARK_STACK_MIN: a stack too small only costs rescans (mark.c). */
static bool reserve_mark_stack(tn_vec *stack, size_t want, size_t fallback) {
    if (want <= stack->cap)
        return true;
    if (stack->cap >= MARK_STACK_MIN)
        tn_vec_free(stack); /* empty between GCs: a new block, not a copy */
    return tn_vec_reserve(stack, want) || tn_vec_reserve(stack, fallback) || tn_vec_reserve(stack, MARK_STACK_MIN);
}

/* Every GC thread marks from a stack of its own (server GC: gc/team.h): as many GC threads
 * as have their stack and the pool's packets mark this GC; the others wait it out. */
static unsigned reserve_mark_stacks(tenure_runtime *rt, int condemned) {
    size_t fallback = mark_stack_grown(rt), young = young_mark_stack(rt, condemned);
    size_t want = young > fallback ? young : fallback;
    reserve_mark_stack(&rt->mark.w[0].stack, want, fallback);
    tn_gc_team_prepare(rt);
    unsigned threads = 1, n = tn_gc_team_threads(&rt->team);
    while (threads < n && reserve_mark_stack(&rt->mark.w[threads].stack, want, fallback))
        threads++;
    return threads > 1 && tn_mark_pool_reserve(rt, threads) ? threads : 1;
}

/* Pinned plugs come from pinning handles (one object each: every live handle is counted, as
 * a variable handle may become pinning), from the objects held by threads waiting for the lock
 * (two each) and, with no bound known before the pause, from conservative stack words and the
 * elements of async-pinned arrays: for those, twice the most pinned plugs a GC has seen. A
 * gap (free space a compaction leaves) lies in front of a pinned plug, at most one per plug:
 * the gap list needs no more entries than the pin list. Large reservations cost address
 * space; only the entries used are touched. */
static void reserve_plan_lists(tenure_runtime *rt) {
    size_t want = tn_handle_count(rt) + 2 * tn_mutator_count(rt) + 2 * rt->plan.pins_needed;
    if (want < MIN_PLAN_ENTRIES)
        want = MIN_PLAN_ENTRIES;
    tn_vec_reserve(&rt->plan.pins, want); /* or what there is: plan degrades beyond it */
    tn_vec_reserve(&rt->plan.gaps, rt->plan.pins.cap);
}

static size_t pause_scratch_bytes(const tenure_runtime *rt) {
    size_t n = 0, k;
    if (TN_PROF_ON(rt, TENURE_PROFILE_GC) || TN_EV_ON(rt, GCBulkMovedObjectRanges) ||
        TN_EV_ON(rt, GCBulkSurvivingObjectRanges))
        n = tn_gc_range_scratch_bytes();
    if ((k = tn_heap_dump_scratch_bytes(rt)) > n)
        n = k;
    if ((k = tn_prof_roots_scratch_bytes(rt)) > n)
        n = k;
    return n;
}

static void reserve_pause_scratch(tenure_runtime *rt) {
    size_t want = pause_scratch_bytes(rt);
    if (want <= rt->plan.pause_scratch_size)
        return;
    void *p = tn_realloc(rt->plan.pause_scratch, want);
    if (!p)
        return; /* the GC does without (tn_gc_pause_scratch says so) */
    rt->plan.pause_scratch = p;
    rt->plan.pause_scratch_size = want;
}

unsigned tn_gc_reserve_scratch(tenure_runtime *rt, int condemned) {
    unsigned threads = reserve_mark_stacks(rt, condemned);
    reserve_plan_lists(rt);
    tn_gc_reserve_card_slots(rt); /* cards.c */
    tn_bgc_reserve(rt);           /* background.c (without room, its final pause rescans all) */
    reserve_pause_scratch(rt);
    tn_trace_pause_prepare(rt);
    return threads;
}

void *tn_gc_pause_scratch(tenure_runtime *rt, size_t size) {
    if (size <= rt->plan.pause_scratch_size)
        return rt->plan.pause_scratch;
    rt->collection->scratch_short = true;
    return NULL;
}

/* The collector's own state an instance starts with: empty stacks and lists (tenure_create). */
void tn_gc_scratch_init(tenure_runtime *rt) {
    for (unsigned i = 0; i < TN_MAX_GC_THREADS; i++)
        tn_vec_init(&rt->mark.w[i].stack, sizeof(void *));
    tn_vec_init(&rt->plan.pins, sizeof(tn_pin));
    tn_vec_init(&rt->plan.gaps, sizeof(tn_gap));
    tn_vec_init(&rt->card.card_slots, sizeof(void **));
}

/* The plan's per-generation region tables: the condemned regions (one entry per unit of the
 * reserved range), then the destinations (the same with a tail per heap; gc/plan.c). */
bool tn_gc_region_tables_init(tenure_runtime *rt) {
    for (int g = 0; g < TN_NGEN; g++)
        if (!(rt->plan.plan_regions[g] = tn_calloc(2 * rt->max_units + TN_MAX_HEAPS, sizeof(tn_region *))))
            return false;
    return true;
}

void tn_gc_region_tables_destroy(tenure_runtime *rt) {
    for (int g = 0; g < TN_NGEN; g++) {
        free(rt->plan.plan_regions[g]);
        rt->plan.plan_regions[g] = NULL;
    }
}

void tn_gc_scratch_destroy(tenure_runtime *rt) {
    tn_gc_team_destroy(rt);
    for (unsigned i = 0; i < TN_MAX_GC_THREADS; i++)
        tn_vec_free(&rt->mark.w[i].stack);
    tn_mark_pool_destroy(rt);
    tn_vec_free(&rt->plan.pins);
    tn_vec_free(&rt->plan.gaps);
    tn_vec_free(&rt->card.card_slots);
    free(rt->plan.pause_scratch);
    rt->plan.pause_scratch = NULL;
    rt->plan.pause_scratch_size = 0;
}
