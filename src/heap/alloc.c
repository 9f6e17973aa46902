/* alloc.c - allocation: the slow path behind the inline bump allocator (new quanta, budgets,
 * GC triggers, GCStress), arrays, and the free-list allocator of the large and pinned
 * object heaps.
 *
 * Each attached thread (tn_mutator) has its own allocation context at the tail of its own
 * gen0 region (m->alloc_region, whose alloc_owner is m): [pub.alloc_ptr, ctx_end) is zeroed
 * memory not yet handed out. Only the owning thread moves its context, and only the holder of
 * rt->threads.lock changes anything else here; a GC (which holds the lock, with every other thread
 * stopped) ends every context first. */
#include "runtime.h"
#include "heap/crossing.h"
#include "gc/background.h"

/* ---- accounting ---- */

#define TN_TICK_BYTES (100u * 1024u)

static void account_context(tenure_runtime *rt, tn_mutator *m) {
    size_t used = (size_t)(m->pub.alloc_ptr - m->ctx_start);
    m->allocated += used;
    rt->stats.bytes_allocated += used;
    rt->heap.heap_allocated[m->alloc_heap] += used;
    m->ctx_start = m->pub.alloc_ptr;
    rt->heap.tick_bytes[TN_ALLOC_KIND_SMALL] += used;
    if (rt->heap.tick_bytes[TN_ALLOC_KIND_SMALL] >= TN_TICK_BYTES)
        rt->heap.tick_pending = true; /* the object being allocated now gets the tick */
}

/* A thread's first refill or large allocation: it gets the next allocation heap in turn
 * ("allocation heaps"). */
static void deal_heap(tenure_runtime *rt, tn_mutator *m) {
    m->alloc_heap = rt->heap.next_heap;
    m->alloc_heap_dealt = true;
    rt->heap.next_heap = (rt->heap.next_heap + 1) % rt->heap.nheaps;
}

/* GCAllocationTick_V4: obj's allocation made the bytes of its kind pass 100 KiB. */
static void allocation_tick(tenure_runtime *rt, int kind, const tn_type *t, void *obj, size_t size, unsigned heap) {
    uint64_t amount = rt->heap.tick_bytes[kind];
    rt->heap.tick_bytes[kind] = 0;
    TN_EMIT(rt, GCAllocationTick_V4, .AllocationAmount = (uint32_t)amount, .AllocationKind = (uint32_t)kind,
            .AllocationAmount64 = amount, .TypeID = (uint64_t)(uintptr_t)t, .TypeName = t->name, .HeapIndex = heap,
            .Address = (uint64_t)(uintptr_t)obj, .ObjectSize = size);
}

/* The unused part of a context in a gap, [alloc_ptr, ctx_end), becomes a free object again
 * (H1: the region stays walkable from its start to its used end). Its cards' crossing entries
 * name it. */
static void close_gap_context(tenure_runtime *rt, tn_mutator *m) {
    char *tail = (char *)m->pub.alloc_ptr;
    size_t size = (size_t)((char *)m->ctx_end - tail);
    if (size) {
        tn_make_free(rt, tail, size);
        tn_heap_poison_free(rt, tail, size); /* GCPoisonFreed: as the GC leaves free space */
        tn_crossing_note_object(rt, tail, size);
        m->alloc_region->free_bytes += size; /* free again (take_gap counted it as used) */
    }
    m->ctx_in_gap = false;
}

void tn_alloc_reset_context(tenure_runtime *rt, tn_mutator *m) {
    account_context(rt, m);
    if (m->ctx_in_gap)
        close_gap_context(rt, m);
    else if (m->alloc_region)
        m->alloc_region->used = (char *)m->pub.alloc_ptr;
    if (m->alloc_region)
        m->alloc_region->alloc_owner = NULL;
    m->alloc_region = NULL;
    m->pub.alloc_ptr = m->pub.alloc_limit = m->ctx_start = m->ctx_end = 0;
}

void tn_alloc_end_contexts(tenure_runtime *rt) {
    tn_assert_world_stopped(rt);
    for (tn_mutator *m = tn_mutators(rt); m; m = m->next)
        tn_alloc_reset_context(rt, m);
}

size_t tn_alloc_uncounted(tenure_runtime *rt) {
    tn_mutator *m = tn_self(rt);
    return m ? (size_t)(m->pub.alloc_ptr - m->ctx_start) : 0;
}

/* ---- sampled allocations (profiler) ----
 *
 * Each thread counts down to its next sample: its published limit is lowered to the point
 * where its bytes since the previous sample would pass the interval, so the inline fast path
 * runs on untouched and only the allocation that crosses takes the slow path (as the .NET
 * runtime lowers its allocation context's limit for AllocationTick). */

/* Bytes m has allocated since its previous sample (the latest object included). */
static uint64_t bytes_since_sample(const tn_mutator *m) {
    return m->allocated + (m->pub.alloc_ptr - m->ctx_start) - m->sampled_at;
}

void tn_alloc_restart_sampling(tenure_runtime *rt) {
    for (tn_mutator *m = tn_mutators(rt); m; m = m->next)
        m->sampled_at = m->allocated + (m->pub.alloc_ptr - m->ctx_start);
}

/* With rt->threads.lock held, after an allocation by m: the bytes since m's previous sample if this
 * allocation made them pass the interval (m's countdown starts again), else 0. */
static uint64_t take_sample(tenure_runtime *rt, tn_mutator *m) {
    tn_assert_locked(rt);
    uint64_t since = bytes_since_sample(m);
    uint64_t interval = tn_prof_sample_interval(rt);
    if (!interval || since <= interval)
        return 0;
    m->sampled_at += since;
    tn_alloc_publish_limit(rt, m);
    return since;
}

void tn_alloc_publish_limit(tenure_runtime *rt, tn_mutator *m) {
    /* under GCStress every allocation takes the slow path, so that it can count them; inside a
     * callback that may not allocate or a blocking section (SAFE), so that it is refused (a
     * thread parked at a safepoint while the world is stopped reopens at its next slow path) */
    bool closed =
        rt->config.GCStress || tn_prof_wants_every_allocation(rt) || m->callbacks_closed || m->state != TN_MUT_RUNNING;
    uintptr_t limit = closed ? m->pub.alloc_ptr : m->ctx_end;
    uint64_t interval = tn_prof_sample_interval(rt);
    if (interval && limit > m->pub.alloc_ptr) {
        uint64_t since = bytes_since_sample(m);
        uint64_t room = since < interval ? interval - since : 0;
        if (room < limit - m->pub.alloc_ptr)
            limit = m->pub.alloc_ptr + (uintptr_t)room;
    }
    m->pub.alloc_limit = limit;
}

tn_mutator *tn_alloc_close_for_callback(tenure_runtime *rt) {
    tn_mutator *m = tn_threads_ready(rt) ? tn_self(rt) : NULL;
    if (!m)
        return NULL;
    m->callbacks_closed++;
    m->pub.alloc_limit = m->pub.alloc_ptr;
    return m;
}

void tn_alloc_reopen_after_callback(tn_mutator *m) {
    if (--m->callbacks_closed == 0)
        tn_alloc_publish_limit(m->rt, m);
}

void tn_alloc_republish_limits(tenure_runtime *rt) {
    TN_LOCKED(rt);
    tn_world_stop(rt);
    for (tn_mutator *m = tn_mutators(rt); m; m = m->next)
        tn_alloc_publish_limit(rt, m);
    tn_world_restart(rt);
}

/* Zero [a, b) unless it is known to be zero; then it counts as dirty. */
static void prepare_memory(tn_region *r, char *a, char *b) {
    if (a < r->zero_from)
        memset(a, 0, (size_t)((b < r->zero_from ? b : r->zero_from) - a));
    if (b > r->zero_from)
        r->zero_from = b;
}

/* A gen0 region of `heap` other than `not`, holding no thread's context, with `room` bytes
 * free at its end (a demoted region whose pinned plugs stayed, or another thread's former
 * region), or NULL. */
static tn_region *gen0_region_with_room(tenure_runtime *rt, unsigned heap, const tn_region * not, size_t room) {
    for (tn_region *r = rt->heap.gens[TN_GEN0]; r; r = r->next)
        if (r != not &&r->heap == heap && !r->alloc_owner && (size_t)(r->end - r->used) >= room)
            return r;
    return NULL;
}

/* ---- contexts in the gaps between pinned plugs ----
 *
 * After a GC, the free objects of gen0 regions that kept pinned plugs (demoted) are listed in
 * rt->heap.gen0_gaps (gc/promote.c link_gen0_gaps). Before taking new space, the allocator cuts its
 * next context from the first listed gap whose region holds no other thread's context, as
 * the .NET collector allocates in the free list of gen0 built from the gaps in front of
 * pinned plugs. Contexts are cut from a gap's high end, a quantum at a time: the rest of the
 * gap stays the listed free object at the gap's start, whose cards' crossing entries already
 * name it (only its size word changes: no per-card work for what is left). A context ends on
 * a crossing-granule boundary (TN_CROSSING_GRANULE, two cards); the few bytes after it, up to
 * the pinned plug, become a free object of their own whose crossing entry names it, so finding the object at an address past a
 * context never walks through the context's zeroed, unparsable tail. Ending the context
 * (refill, a GC or a heap walk ending every context, tenure_generation_bounds) turns its
 * unused tail back into a free object. */

#define TN_GAP_SCAN 8 /* listed gaps looked at per refill: a refill costs a bounded walk */

/* Cut a context of about `want` bytes (at least `size`) from the first usable listed gap. */
static bool take_gap(tenure_runtime *rt, tn_mutator *m, size_t size, size_t want) {
    if (tn_gc_in_progress(rt))
        return false; /* the list is rebuilt by this GC */
    char **link = &rt->heap.gen0_gaps;
    for (int seen = 0; *link && seen < TN_GAP_SCAN; seen++, link = &((char **)*link)[2]) {
        char *g = *link;
        tn_region *r = tn_region_of(rt, g);
        size_t gsize = ((size_t *)g)[1];
        TN_ASSERT_INTERNAL(r->gen == TN_GEN0 && tn_is_free(g) && g + gsize <= r->used);
        if (r->alloc_owner || r->heap != m->alloc_heap)
            continue;
        char *gend = g + gsize;
        char *top = (char *)((uintptr_t)gend & ~(uintptr_t)(TN_CROSSING_GRANULE - 1));
        size_t take = tn_align_up(want, TN_CROSSING_GRANULE);
        char *from = top > g && (size_t)(top - g) > take + TN_GAP_MIN ? top - take : g;
        if (top <= from || (size_t)(top - from) < size)
            continue;
        if (top < gend) { /* up to the pinned plug: a free object its crossing entry can name */
            tn_make_free(rt, top, (size_t)(gend - top));
            tn_crossing_note_object(rt, top, (size_t)(gend - top));
        }
        if (from > g)
            ((size_t *)g)[1] = (size_t)(from - g); /* the rest stays listed, in place */
        else
            *link = ((char **)g)[2];
        memset(from, 0, (size_t)(top - from));
        tn_crossing_note_object(rt, from, (size_t)(top - from));
        /* the region's free bytes (the next GC's FreeObjBefore, tenure_stats) lose the context:
         * what it does not use comes back when it closes (close_gap_context) */
        TN_ASSERT_INTERNAL(r->free_bytes >= (size_t)(top - from));
        r->free_bytes -= (size_t)(top - from);
        r->alloc_owner = m;
        m->alloc_region = r;
        m->ctx_in_gap = true;
        m->pub.alloc_ptr = m->ctx_start = (uintptr_t)from;
        m->ctx_end = (uintptr_t)top;
        return true;
    }
    return false;
}

/* Make room for `size` bytes in m's allocation context. False if no region can be had. */
static bool refill(tenure_runtime *rt, tn_mutator *m, size_t size) {
    account_context(rt, m);
    if (!m->alloc_heap_dealt)
        deal_heap(rt, m);
    size_t want = size > TN_QUANTUM ? size : TN_QUANTUM;
    if (m->ctx_in_gap || (rt->heap.gen0_gaps && m->alloc_region)) {
        tn_alloc_reset_context(rt, m); /* counted above: nothing more to count */
        if (take_gap(rt, m, size, want))
            return true;
    } else if (rt->heap.gen0_gaps && take_gap(rt, m, size, want)) {
        return true;
    }
    tn_region *r = m->alloc_region;
    /* a thread moved to another heap (balanced) leaves its former heap's region */
    if (!r || r->heap != m->alloc_heap || (size_t)(r->end - (char *)m->pub.alloc_ptr) < size) {
        tn_region *next = gen0_region_with_room(rt, m->alloc_heap, r, want);
        if (!next)
            next = tn_region_acquire(rt, 1, TN_GEN0, m->alloc_heap);
        if (!next)
            return false;
        if (r) {
            r->used = (char *)m->pub.alloc_ptr;
            r->alloc_owner = NULL;
        }
        r = m->alloc_region = next;
        r->alloc_owner = m;
        m->pub.alloc_ptr = m->ctx_start = m->ctx_end = (uintptr_t)r->used;
    }
    char *from = (char *)m->ctx_end;
    char *to = (size_t)(r->end - (char *)m->pub.alloc_ptr) < want ? r->end : (char *)m->pub.alloc_ptr + want;
    if (to > from)
        prepare_memory(r, from, to);
    /* the next object starts at alloc_ptr: cards up to `to` find objects by walking from it */
    tn_crossing_note_object(rt, (char *)m->pub.alloc_ptr, (size_t)(to - (char *)m->pub.alloc_ptr));
    m->ctx_end = (uintptr_t)to;
    r->used = to;
    return true;
}

/* ---- budgets and triggers ----
 *
 * A budget is how many bytes may enter a generation before it is collected: allocation for
 * gen0 and the LOH, what the generation below promotes (survivors, or regions promoted in place
 * by a sweep) for gen1 and gen2. An allocation slow path that finds gen0's budget spent
 * collects the oldest generation whose budget is spent (budget_generation). An explicit
 * tenure_collect(rt, 0, 0) collects gen0 only, as documented (the next allocation-triggered GC
 * collects gen1 if its budget is spent): what keeps repeated explicit gen0 GCs from taking a
 * region each is the compact-or-sweep rule (gc/plan.c compaction_reason).
 *
 * Each GC recomputes the budgets of the generations it condemned from what survived them, in
 * the shape of the .NET collector's desired_new_allocation: the survival rate cst (survivors /
 * the generation's size when the GC began) gives a growth factor f = surv_to_growth(cst, limit,
 * max_limit), which is `limit` when nothing survives and rises to `max_limit` as survival grows
 * (collecting a generation where most objects survive buys little: collect it less often).
 *   gen0: f x survivors (limit 9, max 20), smoothed with the previous budget when the GC came
 *         early (an induced GC, or another generation's trigger), within [floor, cap]. Both
 *         follow the heap, as HotSpot sizes its young generation from the old one: the floor
 *         is a quarter of what lives in the older generations, between TN_GEN0_FLOOR and
 *         GCgen0size (derived from the L3 cache), so a program with a tiny heap keeps a tiny
 *         gen0 (peak RSS) and one with a big heap the cache-sized one; the cap, which bounds
 *         gen0 pauses and the memory a high survival rate adds, is GCgen0MaxBudget, by
 *         default half of what lives in the older generations (HotSpot's NewRatio 2) or, if
 *         more, the memory the heap once had committed and no longer uses (growing into it
 *         raises no peak RSS), within [TN_GEN0_FLOOR, TN_GEN0_CAP].
 *   gen1: GCgen1size, or by default half of what lives in the older generations (after the
 *         gen1 GC), within [2 x GCgen0size, TN_GEN1_CAP]. Much of a gen1 GC's cost is fixed
 *         by the older heap (the cards of gen2 that refer to gen1), not by gen1's own size, so
 *         the budget grows with the older heap to keep that cost per promoted byte low.
 *   gen2: 2 x (f - 1) x what lives in gen1 and gen2 (limit 1.2, max 1.8: from 0.4x the live
 *         size when a full GC found much garbage to 1.6x when it found little), at least four
 *         GCgen0size.
 *   LOH:  twice what survived in the LOH and POH, at least 8 MiB and the gen2 budget (large
 *         allocations then trigger full GCs no more often than promotion does).
 * With GCHeapHardLimit, gen0 and gen2 are also held to a share of the room left under it, so
 * that GCs come before the limit is reached rather than at it.
 *
 * Every budget is per allocation heap, as each .NET server GC heap has its own dynamic data:
 * gen0's is one figure for every heap (below, "allocation heaps"); gen1's, gen2's and the
 * LOH's are each heap's own (tn_older_budgets), made from that heap's figures in the GC's
 * record (its survivors stay on it: gc/plan.c), counting what entered the generation on that
 * heap (a large object counts on its thread's heap), with the least sizes above per heap. A
 * GC collects the oldest generation whose budget one heap has spent. Workstation GC has one
 * heap: its figures are the record's own. */

#define TN_LOH_MIN_BUDGET ((size_t)8 << 20)
/* the automatic gen1 budget: this fraction of what lives in the older generations, at most
 * TN_GEN1_CAP (a gen1 GC copies most of what its budget let in: the cap bounds its pause) */
#define TN_GEN1_SHARE 2
#define TN_GEN1_CAP ((size_t)128 << 20)

/* Heap h's gen1 budget, within its share of the limit a background GC sets while it runs
 * (tn_heap_limit_gen1). */
static size_t gen1_budget(const tenure_runtime *rt, unsigned h) {
    size_t limit = rt->heap.gen1_limit == SIZE_MAX ? SIZE_MAX : rt->heap.gen1_limit / rt->heap.nheaps;
    return rt->heap.older[h].gen1_budget < limit ? rt->heap.older[h].gen1_budget : limit;
}

void tn_heap_limit_gen1(tenure_runtime *rt, size_t limit) { rt->heap.gen1_limit = limit; }

size_t tn_heap_budget_of(const tenure_runtime *rt, int gen, unsigned heap) {
    const tn_older_budgets *o = &rt->heap.older[heap];
    switch (gen) {
    case TN_GEN0: return rt->heap.gen0_budget;
    case TN_GEN1: return o->gen1_budget;
    case TN_GEN2: return o->gen2_budget;
    case TN_LOH: return o->loh_budget;
    default: return 0;
    }
}

size_t tn_heap_budget(const tenure_runtime *rt, int gen) {
    size_t sum = 0;
    for (unsigned h = 0; h < rt->heap.nheaps; h++)
        sum += tn_heap_budget_of(rt, gen, h);
    return sum;
}

unsigned tn_heap_count(const tenure_runtime *rt) { return rt->heap.nheaps; }

/* Bytes counted against gen0's budgets since the last GC: every allocation heap's. */
static size_t gen0_counted(const tenure_runtime *rt) {
    size_t sum = 0;
    for (unsigned h = 0; h < rt->heap.nheaps; h++)
        sum += rt->heap.heap_allocated[h];
    return sum;
}

size_t tn_heap_gen0_allocated(tenure_runtime *rt) { return gen0_counted(rt) + tn_alloc_uncounted(rt); }

void tn_heap_set_gen0_gaps(tenure_runtime *rt, char *gaps) { rt->heap.gen0_gaps = gaps; }

/* ---- allocation heaps (server GC) ----
 *
 * Under server GC gen0's budget is per heap, as in the .NET collector: nheaps (GCHeapCount, or
 * one per CPU) heaps of gen0_budget bytes each, so that N threads allocating at once run N
 * budgets between GCs rather than sharing one (each GC's cost is mostly what the threads have
 * half-built when it comes: the same per GC, whatever the budget). Each thread is dealt a heap
 * at its first refill, in turn (next_heap), and counts what it allocates against that heap
 * (heap_allocated). A thread whose heap has spent its budget moves to the heap with the most
 * left if that is at least TN_BALANCE_LEFT of a budget (.NET's balance_heaps); when none has
 * that much, it collects. A GC starts every heap's budget again (tn_budgets_update).
 * Workstation GC has one heap: the thread's own spending is the instance's.
 *
 * Each heap has its own regions (tn_region.heap): a thread takes gen0 regions, gaps and new
 * large regions of its heap only, and leaves its region at its next refill when it has moved to
 * another heap; a GC keeps each heap's survivors on its heap (gc/plan.c). The large heaps' free
 * lists are shared: a large object goes to the first free chunk that fits, whatever its heap.
 *
 * Invariant A1 (tn_alloc_heaps_check): nheaps is in [1, TN_MAX_HEAPS], every thread's heap and
 * every region's heap are below it, and no heap past nheaps has counted anything. */

#define TN_BALANCE_LEFT 8 /* a thread moves to a heap with at least 1/8 of its budget left */

/* The heap with the least allocated since the last GC. */
static unsigned least_spent_heap(const tenure_runtime *rt) {
    unsigned best = 0;
    for (unsigned h = 1; h < rt->heap.nheaps; h++)
        if (rt->heap.heap_allocated[h] < rt->heap.heap_allocated[best])
            best = h;
    return best;
}

/* Whether m's allocation must wait for a GC: its heap spent its gen0 budget and no other heap
 * has enough left to move to (then m moves there: its context's bytes so far stay counted
 * against the heap it leaves). */
static bool gen0_spent(tenure_runtime *rt, tn_mutator *m) {
    size_t pending = (size_t)(m->pub.alloc_ptr - m->ctx_start);
    if (rt->heap.heap_allocated[m->alloc_heap] + pending < rt->heap.gen0_budget)
        return false;
    unsigned best = least_spent_heap(rt);
    if (best == m->alloc_heap ||
        rt->heap.heap_allocated[best] + rt->heap.gen0_budget / TN_BALANCE_LEFT >= rt->heap.gen0_budget)
        return true;
    account_context(rt, m);
    m->alloc_heap = best;
    return false;
}

void tn_alloc_heaps_check(tenure_runtime *rt) {
    TN_ASSERT_INTERNAL(rt->heap.nheaps >= 1 && rt->heap.nheaps <= TN_MAX_HEAPS);
    for (unsigned h = rt->heap.nheaps; h < TN_MAX_HEAPS; h++) {
        const tn_older_budgets *o = &rt->heap.older[h];
        TN_ASSERT_INTERNAL(rt->heap.heap_allocated[h] == 0);
        TN_ASSERT_INTERNAL(o->gen1_promoted_since == 0 && o->gen2_promoted_since == 0 && o->loh_allocated == 0);
    }
    for (tn_mutator *m = tn_mutators(rt); m; m = m->next)
        TN_ASSERT_INTERNAL(m->alloc_heap < rt->heap.nheaps);
    for (int g = 0; g < TN_NGEN; g++)
        for (const tn_region *r = rt->heap.gens[g]; r; r = r->next)
            TN_ASSERT_INTERNAL(r->heap < rt->heap.nheaps);
}

/* The oldest generation whose budget one heap has spent (.NET: each heap's
 * generation_to_condemn, the highest of them). */
static int budget_generation(tenure_runtime *rt, uint32_t *reason) {
    int gen = TN_GEN0;
    *reason = TN_REASON_ALLOC_SMALL;
    for (unsigned h = 0; h < rt->heap.nheaps; h++) {
        const tn_older_budgets *o = &rt->heap.older[h];
        if (o->gen1_promoted_since >= gen1_budget(rt, h) && gen < TN_GEN1)
            gen = TN_GEN1;
        if (o->gen2_promoted_since >= o->gen2_budget)
            gen = TN_GEN2;
        if (o->loh_allocated >= o->loh_budget) {
            gen = TN_GEN2;
            *reason = TN_REASON_ALLOC_LARGE;
        }
    }
    return gen;
}

int tn_heap_young_budget_generation(const tenure_runtime *rt) {
    for (unsigned h = 0; h < rt->heap.nheaps; h++)
        if (rt->heap.older[h].gen1_promoted_since >= gen1_budget(rt, h))
            return TN_GEN1;
    return TN_GEN0;
}

static void collect_for_budget(tenure_runtime *rt) {
    uint32_t reason;
    int gen = budget_generation(rt, &reason);
    tn_gc_collect(rt, gen, reason, 0);
}

/* GCStress: a GC every N allocations. */
static void stress_tick(tenure_runtime *rt) {
    if (!rt->config.GCStress || tn_gc_in_progress(rt))
        return;
    if (rt->heap.stress_countdown > 1) {
        rt->heap.stress_countdown--;
        return;
    }
    rt->heap.stress_countdown = rt->config.GCStress;
    int gen = rt->config.GCStressGeneration;
    if (gen < 0 || gen > TN_GEN2)
        gen = (int)(rt->stats.gc_count % 7 == 6 ? TN_GEN2 : rt->stats.gc_count % 3 == 2 ? TN_GEN1 : TN_GEN0);
    tn_gc_collect(rt, gen, TN_REASON_STRESS, 0);
}

static size_t grew(const tn_heap_figures *f, int gen) {
    return f->size_after[gen] > f->size_before[gen] ? f->size_after[gen] - f->size_before[gen] : 0;
}

static size_t clamp_size(size_t v, size_t lo, size_t hi) { return v < lo ? lo : v > hi ? hi : v; }

/* The .NET collector's surv_to_growth: the growth factor for survival rate cst, `limit` at 0,
 * rising (hyperbolically) to max_limit. */
static double surv_to_growth(double cst, double limit, double max_limit) {
    if (cst < (max_limit - limit) / (limit * (max_limit - 1.0)))
        return (limit - limit * cst) / (1.0 - cst * limit);
    return max_limit;
}

/* Survivors of generation gen in this GC / its size when the GC began (0..1). */
static double survival_rate(const size_t *promoted, const size_t *size_before, int gen) {
    if (size_before[gen] == 0)
        return 0.0;
    double cst = (double)promoted[gen] / (double)size_before[gen];
    return cst > 1.0 ? 1.0 : cst;
}

/* Live bytes in gen1, gen2, the LOH and the POH after this GC (free objects excluded). */
static size_t older_live(const tenure_runtime *rt) {
    size_t live = 0;
    for (int g = TN_GEN1; g < TN_NGEN; g++)
        live += rt->stats.gen[g].size - rt->stats.gen[g].free_bytes;
    return live;
}

/* Room left under GCHeapHardLimit (SIZE_MAX without one). */
static size_t hard_limit_room(const tenure_runtime *rt) {
    uint64_t limit = rt->config.GCHeapHardLimit;
    if (!limit)
        return SIZE_MAX;
    return limit > rt->heap.committed ? (size_t)(limit - rt->heap.committed) : 0;
}

static size_t gen0_floor(const tenure_runtime *rt) {
    if (rt->config.GCgen0size)
        return rt->heap.gen0_min_budget;
    return clamp_size(older_live(rt) / 4,
                      TN_GEN0_FLOOR < rt->heap.gen0_min_budget ? TN_GEN0_FLOOR : rt->heap.gen0_min_budget,
                      rt->heap.gen0_min_budget);
}

/* Bytes of the regions in use (every generation), whatever their occupancy. */
static size_t regions_in_use(const tenure_runtime *rt) {
    size_t bytes = 0;
    for (int g = 0; g < TN_NGEN; g++)
        for (const tn_region *r = rt->heap.gens[g]; r; r = r->next)
            bytes += (size_t)(r->end - r->start);
    return bytes;
}

/* The largest gen0 budget: GCgen0MaxBudget, or by default half of what lives in the older
 * generations (HotSpot's young generation is half its old one by default) or, if more, the
 * committed peak's room above the regions now in use, within [TN_GEN0_FLOOR, TN_GEN0_CAP];
 * with GCHeapHardLimit at most a quarter of the limit and half of the room left under it. */
static size_t gen0_cap(const tenure_runtime *rt) {
    size_t cap = rt->heap.gen0_max_budget;
    if (!rt->config.GCgen0MaxBudget) {
        /* memory the process has already had committed costs no peak RSS to reuse */
        size_t in_use = regions_in_use(rt), share = older_live(rt) / 2;
        /* less two regions: a budget spreads over one more region than it fills, and growing
         * into exactly the room would raise the peak by that region at every GC */
        size_t margin = in_use + 2 * rt->unit_size;
        size_t paid = rt->heap.committed_peak > margin ? rt->heap.committed_peak - margin : 0;
        cap = clamp_size(share > paid ? share : paid, TN_GEN0_FLOOR < cap ? TN_GEN0_FLOOR : cap, cap);
        if (rt->config.GCgen0size) /* a gen0 size chosen by the embedder grows at most 6x */
            cap = clamp_size(cap, 0, TN_GEN0_SET_GROWTH * rt->heap.gen0_min_budget);
    }
    if (rt->config.GCHeapHardLimit) { /* (the limit's share: every heap's budget together) */
        size_t room = hard_limit_room(rt) / 2, quarter = (size_t)rt->config.GCHeapHardLimit / 4;
        cap = clamp_size(cap, 0, (quarter < room ? quarter : room) / rt->heap.nheaps);
    }
    /* near the limit gen0 still gets some room: a budget of 0 would collect at every refill */
    size_t least = TN_GEN0_FLOOR < rt->heap.gen0_min_budget ? TN_GEN0_FLOOR : rt->heap.gen0_min_budget;
    return cap > least ? cap : least;
}

static void update_gen0_budget(tenure_runtime *rt, const tn_gc_record *g) {
    /* per allocation heap: each heap's threads left about their share of the survivors */
    double desired = surv_to_growth(survival_rate(g->promoted, g->size_before, TN_GEN0), 9.0, 20.0) *
                     (double)g->promoted[TN_GEN0] / (double)rt->heap.nheaps;
    /* a GC that came before gen0 spent its budget (induced, or for another generation) saw
     * only part of an allocation cycle: its figure moves the budget only in proportion (the
     * .NET collector's linear_allocation_model) */
    size_t total = tn_heap_budget(rt, TN_GEN0);
    double fraction = total ? (double)gen0_counted(rt) / (double)total : 1.0;
    if (fraction < 0.95)
        desired = fraction * desired + (1.0 - fraction) * (double)rt->heap.gen0_budget;
    size_t cap = gen0_cap(rt), floor = gen0_floor(rt);
    size_t b0 = desired >= (double)cap ? cap : (size_t)desired;
    rt->heap.gen0_budget = clamp_size(b0, floor < cap ? floor : cap, cap);
}

/* Live bytes in gen1, gen2, the LOH and the POH of one heap after this GC. */
static size_t older_live_of(const tn_heap_figures *f) {
    size_t live = 0;
    for (int g = TN_GEN1; g < TN_NGEN; g++)
        live += f->size_after[g] - f->free_after[g];
    return live;
}

/* A heap's gen1 budget is GCgen1size, or by default half of what lives in its older
 * generations, within [2 x GCgen0size, TN_GEN1_CAP] (see above). */
static void update_gen1_budget(tenure_runtime *rt, const tn_heap_figures *f, tn_older_budgets *o) {
    if (rt->config.GCgen1size) {
        o->gen1_budget = (size_t)rt->config.GCgen1size;
        return;
    }
    size_t least = 2 * rt->heap.gen0_min_budget;
    o->gen1_budget = clamp_size(older_live_of(f) / TN_GEN1_SHARE, least, least > TN_GEN1_CAP ? least : TN_GEN1_CAP);
}

/* The gen2 and LOH budgets from figures f that hold 1/share of the instance (a heap's share of
 * the room under GCHeapHardLimit). */
static void update_gen2_budgets(tenure_runtime *rt, const tn_heap_figures *f, tn_older_budgets *o, unsigned share) {
    double rate = survival_rate(f->promoted, f->size_before, TN_GEN2);
    double growth = surv_to_growth(rate, 1.2, 1.8);
    size_t live = f->promoted[TN_GEN1] + f->promoted[TN_GEN2];
    size_t b2 = (size_t)(2.0 * (growth - 1.0) * (double)live);
    size_t min2 = 4 * rt->heap.gen0_min_budget;
    size_t room = hard_limit_room(rt) / 2 / share;
    if (b2 > room)
        b2 = room; /* collect again before the limit is reached */
    o->gen2_budget = b2 > min2 ? b2 : min2;
    size_t loh = 2 * (f->promoted[TN_LOH] + f->promoted[TN_POH]);
    o->loh_budget = loh > TN_LOH_MIN_BUDGET ? loh : TN_LOH_MIN_BUDGET;
    if (o->loh_budget < o->gen2_budget)
        o->loh_budget = o->gen2_budget;
}

static uint64_t default_gen0_budget(void) {
    uint64_t l3 = tn_os_l3_cache_size();
    uint64_t b = l3 ? l3 * 5 / 8 : (uint64_t)4 << 20;
    if (b < (256u << 10))
        b = 256u << 10;
    if (b > (6u << 20))
        b = 6u << 20;
    return b;
}

/* The budgets of an empty heap, from the options (tenure_create), and GCStress's countdown. */
void tn_budgets_init(tenure_runtime *rt) {
    rt->heap.nheaps = tn_gc_heaps_wanted(rt);
    rt->heap.gen1_limit = SIZE_MAX;
    rt->heap.stress_countdown = (uint32_t)rt->config.GCStress;
    rt->heap.gen0_min_budget = rt->config.GCgen0size ? (size_t)rt->config.GCgen0size : (size_t)default_gen0_budget();
    /* the automatic cap also follows the heap (heap/alloc.c gen0_cap) */
    rt->heap.gen0_max_budget = rt->config.GCgen0MaxBudget ? (size_t)rt->config.GCgen0MaxBudget : TN_GEN0_CAP;
    if (rt->heap.gen0_max_budget < rt->heap.gen0_min_budget)
        rt->heap.gen0_max_budget = rt->heap.gen0_min_budget;
    /* a heap starts empty: the automatic budget starts at its floor and grows with survival */
    rt->heap.gen0_budget =
        rt->config.GCgen0size || rt->heap.gen0_min_budget < TN_GEN0_FLOOR ? rt->heap.gen0_min_budget : TN_GEN0_FLOOR;
    rt->heap.whole_gen2_budget = 4 * rt->heap.gen0_min_budget;
    for (unsigned h = 0; h < TN_MAX_HEAPS; h++) {
        tn_older_budgets *o = &rt->heap.older[h];
        /* the automatic gen1 budget follows the older heap, empty now: its least (heap/alloc.c) */
        o->gen1_budget = rt->config.GCgen1size ? (size_t)rt->config.GCgen1size : 2 * rt->heap.gen0_min_budget;
        o->gen2_budget = 4 * rt->heap.gen0_min_budget;
        o->loh_budget = TN_LOH_MIN_BUDGET;
        if (o->loh_budget < o->gen2_budget) /* B2 (heap/alloc.c tn_budgets_update) */
            o->loh_budget = o->gen2_budget;
    }
}

/* B1: every budget is positive (a budget of 0 would collect at every slow path); B2: large
 * allocation triggers a full GC no sooner than promotion does (heap by heap). */
static void budgets_check(const tenure_runtime *rt) {
    TN_ASSERT_INTERNAL(rt->heap.gen0_budget > 0);
    for (unsigned h = 0; h < rt->heap.nheaps; h++) {
        const tn_older_budgets *o = &rt->heap.older[h];
        TN_ASSERT_INTERNAL(o->gen1_budget > 0 && o->gen2_budget > 0 && o->loh_budget >= o->gen2_budget);
    }
}

/* Heap h's older budgets after GC g: what each of its generations gained counts toward that
 * generation's budget (survivors, and the free space of regions swept and promoted in place;
 * survivors stay on their heap), and the budgets of the generations g collected are made
 * anew from the heap's own figures. */
static void update_older_budgets(tenure_runtime *rt, const tn_gc_record *g, unsigned h) {
    tn_heap_figures f = tn_record_heap(g, rt->heap.nheaps, h);
    tn_older_budgets *o = &rt->heap.older[h];
    size_t survived0 = f.promoted[TN_GEN0];
    o->gen1_promoted_since += grew(&f, TN_GEN1) > survived0 ? grew(&f, TN_GEN1) : survived0;
    if (g->condemned >= TN_GEN1) {
        o->gen2_promoted_since += grew(&f, TN_GEN2) > f.promoted[TN_GEN1] ? grew(&f, TN_GEN2) : f.promoted[TN_GEN1];
        o->gen1_promoted_since = 0;
        update_gen1_budget(rt, &f, o);
    }
    if (g->condemned == TN_GEN2) {
        o->gen2_promoted_since = 0;
        o->loh_allocated = 0;
        update_gen2_budgets(rt, &f, o, rt->heap.nheaps);
    }
}

/* The whole instance's gen2 budget after a GC that collected gen2: its record's own figures
 * (every heap's together) as one heap's. */
static void update_whole_gen2_budget(tenure_runtime *rt, const tn_gc_record *g) {
    tn_heap_figures f = tn_record_heap(g, 1, 0);
    tn_older_budgets whole = {0};
    update_gen2_budgets(rt, &f, &whole, 1);
    rt->heap.whole_gen2_budget = whole.gen2_budget;
}

size_t tn_heap_whole_gen2_budget(const tenure_runtime *rt) { return rt->heap.whole_gen2_budget; }

void tn_budgets_update(tenure_runtime *rt, const tn_gc_record *g) {
    for (unsigned h = 0; h < rt->heap.nheaps; h++)
        update_older_budgets(rt, g, h);
    if (g->condemned == TN_GEN2)
        update_whole_gen2_budget(rt, g);
    /* last: the older generations' sizes (floor and cap) are final now */
    update_gen0_budget(rt, g);
    memset(rt->heap.heap_allocated, 0, sizeof rt->heap.heap_allocated);
    budgets_check(rt);
}

/* A background GC's final pause, after tn_budgets_update for the gen0 GC it also is: the gen2
 * and large budgets from what its mark kept (its record: gen2's size before, its marked
 * bytes); what is promoted or allocated large from now on (during its sweep too) counts
 * toward the next. */
void tn_budgets_update_background(tenure_runtime *rt, const tn_gc_record *g) {
    for (unsigned h = 0; h < rt->heap.nheaps; h++) {
        tn_heap_figures f = tn_record_heap(g, rt->heap.nheaps, h);
        tn_older_budgets *o = &rt->heap.older[h];
        o->gen2_promoted_since = 0;
        o->loh_allocated = 0;
        update_gen2_budgets(rt, &f, o, rt->heap.nheaps);
    }
    update_whole_gen2_budget(rt, g);
    budgets_check(rt);
}

/* ---- small object heap ---- */

/* The header, and for arrays the length, are written before anyone is told of the object. */
static inline void init_header(void *p, const tn_type *t, size_t length) {
    *(uintptr_t *)p = (uintptr_t)t;
    if (t->kind == TN_TK_ARRAY)
        ((tenure_array_header *)p)->length = length;
}

static void *alloc_small(tenure_runtime *rt, tn_mutator *m, const tn_type *t, size_t size, size_t length) {
    bool collected_for_budget = false, collected_for_space = false;
    stress_tick(rt);
    for (;;) {
        uintptr_t p = m->pub.alloc_ptr;
        if (size <= m->ctx_end - p) {
            m->pub.alloc_ptr = p + size;
            tn_alloc_publish_limit(rt, m);
            init_header((void *)p, t, length);
            if (rt->heap.tick_pending) {
                rt->heap.tick_pending = false;
                allocation_tick(rt, TN_ALLOC_KIND_SMALL, t, (void *)p, size, m->alloc_heap);
            }
            if (TN_PROF_ON(rt, TENURE_PROFILE_ALLOCATIONS))
                tn_prof_allocated(rt, (void *)p, t);
            return (void *)p;
        }
        if (!collected_for_budget && !tn_gc_in_progress(rt) && gen0_spent(rt, m)) {
            collected_for_budget = true;
            collect_for_budget(rt);
            continue;
        }
        if (refill(rt, m, size))
            continue;
        if (collected_for_space || tn_gc_in_progress(rt))
            return NULL;
        collected_for_space = true;
        tn_gc_collect(rt, TN_GEN2, TN_REASON_OOS_SOH, TENURE_COLLECT_COMPACT);
    }
}

/* ---- large and pinned object heaps: size-segregated free lists, first fit ---- */

static unsigned bucket_of(size_t size) {
    unsigned b = 63 - (unsigned)__builtin_clzll(size);
    return b < TN_FREE_BUCKETS ? b : TN_FREE_BUCKETS - 1;
}

void tn_free_list_clear(tn_free_list *fl) { memset(fl, 0, sizeof *fl); }

/* Chunks shorter than 24 bytes cannot hold the link; they stay plain free objects. */
void tn_free_list_add(tenure_runtime *rt, tn_free_list *fl, void *p, size_t size) {
    (void)rt;
    if (size < 24)
        return;
    unsigned b = bucket_of(size);
    ((void **)p)[2] = fl->buckets[b];
    fl->buckets[b] = p;
}

static void *take_chunk(tn_free_list *fl, size_t size) {
    for (unsigned b = bucket_of(size); b < TN_FREE_BUCKETS; b++) {
        for (void **link = &fl->buckets[b]; *link; link = &((void **)*link)[2]) {
            char *c = *link;
            size_t csize = ((size_t *)c)[1];
            if (csize == size || csize >= size + 8) {
                *link = ((void **)c)[2];
                return c;
            }
        }
    }
    return NULL;
}

tn_free_list *tn_heap_free_list(tenure_runtime *rt, int gen) {
    return gen == TN_LOH ? &rt->heap.loh_free : gen == TN_POH ? &rt->heap.poh_free : NULL;
}

/* A new large region of the allocating thread's heap (its free list is the generation's, shared
 * by the heaps: what it holds goes to whichever heap asks first). */
static bool grow_large(tenure_runtime *rt, int gen, size_t size, unsigned heap) {
    size_t units = (size + rt->unit_size - 1) / rt->unit_size;
    if (units < TN_LARGE_REGION_UNITS)
        units = TN_LARGE_REGION_UNITS;
    tn_region *r = tn_region_acquire(rt, (uint32_t)units, gen, heap);
    if (!r)
        return false;
    prepare_memory(r, r->start, r->end);
    r->used = r->end;
    tn_make_free(rt, r->start, (size_t)(r->end - r->start));
    tn_crossing_note_object(rt, r->start, (size_t)(r->end - r->start));
    tn_free_list_add(rt, tn_heap_free_list(rt, gen), r->start, (size_t)(r->end - r->start));
    return true;
}

static void *alloc_large(tenure_runtime *rt, tn_mutator *m, const tn_type *t, size_t size, size_t length, int gen) {
    stress_tick(rt);
    if (!m->alloc_heap_dealt)
        deal_heap(rt, m);
    const tn_older_budgets *o = &rt->heap.older[m->alloc_heap];
    /* (over budget while a background GC runs: that GC is the answer; asking again would run
     * a young GC per large allocation until it ends) */
    if (gen == TN_LOH && o->loh_allocated + size > o->loh_budget && !tn_gc_in_progress(rt) && !tn_bgc_in_progress(rt))
        tn_gc_collect(rt, TN_GEN2, TN_REASON_ALLOC_LARGE, 0);
    tn_free_list *fl = tn_heap_free_list(rt, gen);
    char *c;
    for (bool collected = false;;) {
        if ((c = take_chunk(fl, size)) != NULL)
            break;
        if (grow_large(rt, gen, size, m->alloc_heap))
            continue;
        if (collected || tn_gc_in_progress(rt))
            return NULL;
        collected = true;
        tn_gc_collect(rt, TN_GEN2, gen == TN_LOH ? TN_REASON_OOS_LOH : TN_REASON_OOS_SOH, TENURE_COLLECT_COMPACT);
    }
    size_t csize = ((size_t *)c)[1];
    if (csize > size) {
        tn_make_free(rt, c + size, csize - size);
        tn_crossing_note_object(rt, c + size, csize - size);
        tn_free_list_add(rt, fl, c + size, csize - size);
    }
    memset(c, 0, size);
    init_header(c, t, length);
    tn_crossing_note_object(rt, c, size);
    tn_bgc_allocated_large(rt, c); /* (black while a background GC marks) */
    if (gen == TN_LOH)
        rt->heap.older[m->alloc_heap].loh_allocated += size;
    rt->stats.bytes_allocated += size;
    int kind = gen == TN_LOH ? TN_ALLOC_KIND_LARGE : TN_ALLOC_KIND_PINNED;
    rt->heap.tick_bytes[kind] += size;
    if (rt->heap.tick_bytes[kind] >= TN_TICK_BYTES)
        allocation_tick(rt, kind, t, c, size, m->alloc_heap);
    if (TN_PROF_ON(rt, TENURE_PROFILE_ALLOCATIONS))
        tn_prof_allocated(rt, c, t);
    return c;
}

/* ---- the public entry points ---- */

static bool check_type(tenure_runtime *rt, const tenure_type *type, const char *fn) {
    if (!type || !tn_type_valid(rt, type) || ((const tn_type *)type)->kind == TN_TK_FREE) {
        tn_api_fail(rt, TENURE_INVALID_TYPE, fn, "%p is not a type of this instance", (const void *)type);
        return false;
    }
    return true;
}

/* The calling thread may allocate: it is attached, running, and not inside a collection. */
static tn_mutator *allocating_thread(tenure_runtime *rt, const char *fn) {
    tn_mutator *m = tn_self(rt);
    if (!m)
        tn_api_fail(rt, TENURE_STATE, fn, "the calling thread is not attached to this instance");
    else if (m->state != TN_MUT_RUNNING)
        tn_api_fail(rt, TENURE_STATE, fn, "allocation inside a blocking section");
    else if (tn_gc_in_progress(rt))
        tn_api_fail(rt, TENURE_STATE, fn, "allocation during a collection (from a callback?)");
    else
        return m;
    return NULL;
}

/* NULL with the result code set: out of memory. *sampled: the bytes since m's previous
 * sample when this object is sampled, else 0. */
static void *alloc_locked(tenure_runtime *rt, tn_mutator *m, const tn_type *t, size_t size, size_t length, bool pinned,
                          const char *fn, uint64_t *sampled) {
    TN_LOCKED(rt);
    bool large = pinned || size >= rt->config.GCLOHThreshold;
    void *obj =
        large ? alloc_large(rt, m, t, size, length, pinned ? TN_POH : TN_LOH) : alloc_small(rt, m, t, size, length);
    if (!obj) {
        tn_api_fail(rt, TENURE_NOMEM, fn, "no memory for %zu bytes of %s", size, t->name);
        return NULL;
    }
    if (large)
        m->allocated += size; /* small objects are counted with their context */
    *sampled = take_sample(rt, m);
    if (t->finalize && !tn_finalize_register(rt, obj)) {
        tn_api_fail(rt, TENURE_NOMEM, fn, "no memory to register %s for finalization", t->name);
        return NULL; /* unregistered, the object is garbage */
    }
    return obj;
}

static void *alloc_sized(tenure_runtime *rt, const tn_type *t, size_t size, size_t length, bool pinned,
                         const char *fn) {
    if (tn_cb_refused(rt, TN_OP_ALLOC, fn))
        return NULL;
    tn_finalize_safepoint(rt); /* the program's objects are all rooted here: finalizers may run */
    tn_mutator *m = allocating_thread(rt, fn);
    if (!m)
        return NULL;
    uint64_t sampled = 0;
    void *obj = alloc_locked(rt, m, t, size, length, pinned, fn, &sampled);
    /* the sampled callback runs after the lock is released (see tenure_profiler.h) */
    return obj && sampled ? tn_prof_sampled(rt, m, obj, t, sampled) : obj;
}

static void *alloc_fixed(tenure_runtime *rt, const tenure_type *type, bool pinned, const char *fn) {
    if (!rt || !check_type(rt, type, fn))
        return NULL;
    const tn_type *t = (const tn_type *)type;
    if (t->kind != TN_TK_FIXED) {
        tn_api_fail(rt, TENURE_INVALID_ARGUMENT, fn, "%s is an array type: use tenure_alloc_array", t->name);
        return NULL;
    }
    return alloc_sized(rt, t, t->size, 0, pinned, fn);
}

static void *alloc_array(tenure_runtime *rt, const tenure_type *type, size_t length, bool pinned, const char *fn) {
    if (!rt || !check_type(rt, type, fn))
        return NULL;
    const tn_type *t = (const tn_type *)type;
    if (t->kind != TN_TK_ARRAY) {
        tn_api_fail(rt, TENURE_INVALID_ARGUMENT, fn, "%s is not an array type", t->name);
        return NULL;
    }
    size_t size = tn_array_size(t, length);
    if (size == 0 || size > rt->range / 2) {
        tn_api_fail(rt, TENURE_SIZE, fn, "an array of %zu elements of %zu bytes is impossible", length, t->elem_size);
        return NULL;
    }
    return alloc_sized(rt, t, size, length, pinned, fn);
}

void *tenure__alloc_slow(tenure_runtime *rt, const tenure_type *type) {
    return alloc_fixed(rt, type, false, "tenure_alloc");
}

void *tenure_alloc_pinned(tenure_runtime *rt, const tenure_type *type) {
    return alloc_fixed(rt, type, true, "tenure_alloc_pinned");
}

void *tenure__alloc_array_slow(tenure_runtime *rt, const tenure_type *type, size_t length) {
    return alloc_array(rt, type, length, false, "tenure_alloc_array");
}

void *tenure_alloc_array_pinned(tenure_runtime *rt, const tenure_type *type, size_t length) {
    return alloc_array(rt, type, length, true, "tenure_alloc_array_pinned");
}

/* ---- consistency check (base/assert.h) ---- */

/* m's allocation context lies in its own region: ctx_start <= alloc_ptr <= alloc_limit <=
 * ctx_end, inside [start, end) of alloc_region, whose alloc_owner is m; no region, no context. */
void tn_alloc_context_check(const tenure_runtime *rt, const tn_mutator *m) {
    const tn_region *r = m->alloc_region;
    if (!r) {
        TN_ASSERT_INTERNAL(m->pub.alloc_ptr == m->pub.alloc_limit && m->ctx_end == 0);
        return;
    }
    tn_region_check(rt, r);
    TN_ASSERT_INTERNAL(r->alloc_owner == m && r->gen == TN_GEN0);
    TN_ASSERT_INTERNAL(m->ctx_start <= m->pub.alloc_ptr && m->pub.alloc_ptr <= m->pub.alloc_limit);
    TN_ASSERT_INTERNAL(m->pub.alloc_limit <= m->ctx_end);
    TN_ASSERT_INTERNAL((uintptr_t)r->start <= m->ctx_start && m->ctx_end <= (uintptr_t)r->end);
    /* a context in a gap ends on a crossing-granule boundary inside the region's objects */
    TN_ASSERT_INTERNAL(!m->ctx_in_gap ||
                       (m->ctx_end <= (uintptr_t)r->used && !(m->ctx_end & (TN_CROSSING_GRANULE - 1))));
}
