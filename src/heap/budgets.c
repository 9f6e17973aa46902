/* budgets.c - the collector's policy: how many bytes may enter each generation before it is
 * collected (budgets), which generation an allocation slow path collects (triggers), GCStress.
 * Read by heap/alloc.c's slow path; updated by gc/report.c after each GC (tn_budgets_update). */
#include "runtime.h"
#include "heap/heap_internal.h"

/* A budget is how many bytes may enter a generation before it is collected: allocation for
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
 * With GCPauseGoalMs, gen0's and gen1's are also held to what a GC of theirs can collect within
 * the goal ("the pause goal" below).
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

/* Bytes counted against gen0's budgets since the last GC: every allocation heap's. */
static size_t gen0_counted(const tenure_runtime *rt) {
    size_t sum = 0;
    for (unsigned h = 0; h < rt->heap.nheaps; h++)
        sum += rt->heap.heap_allocated[h];
    return sum;
}

size_t tn_heap_gen0_allocated(tenure_runtime *rt) { return gen0_counted(rt) + tn_alloc_uncounted(rt); }

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

void tn_heap_collect_for_budget(tenure_runtime *rt) {
    uint32_t reason;
    int gen = budget_generation(rt, &reason);
    tn_gc_collect(rt, gen, reason, 0);
}

/* GCStress: a GC every N allocations. */
void tn_heap_stress_tick(tenure_runtime *rt) {
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

/* ---- the pause goal (GCPauseGoalMs) ----
 *
 * A young GC's pause grows with what it condemns: gen0's budget for a gen0 GC, gen0's and gen1's
 * for a gen1 GC (a gen1 GC copies or sweeps most of what gen1 took in). Each gen0 GC that came
 * because gen0's budget was spent, and each gen1 GC that came because gen1's was, measures its
 * pause per byte condemned (young_cost: the condemned generations' size when the GC began),
 * averaged over such GCs with the newest weighted TN_GOAL_NEWEST and a sample at most
 * TN_GOAL_JUMP times the average (a thread descheduled in one pause moves the average, not
 * the budget, at once). The next budget is then at most TN_GOAL_SHARE of the goal's worth of
 * bytes at that cost (for gen1, less gen0's budget, which its GCs also condemn), split among
 * the heaps (they collect in parallel), and never under the generation's least. The model is
 * proportional: a GC's fixed costs (roots, the older generations' cards) count as if they grew
 * with the budget, so where they alone exceed the goal the budget sinks to its least, the most
 * a budget can do. gen2 GCs are not held to the goal (a blocking gen2 GC condemns the heap;
 * gcConcurrent=1 marks it while the program runs). With HeapVerify nothing is learned (its
 * walks of the heap inside the pause would count as the GCs' cost): no goal then. G1's
 * MaxGCPauseMillis is the model. */

#define TN_GOAL_SHARE 0.8                        /* budgets aim at this share of the goal: the margin for a dearer GC */
#define TN_GOAL_NEWEST 0.3                       /* the newest GC's weight in the average cost */
#define TN_GOAL_JUMP 4.0                         /* a sample counts as at most this many times the average */
#define TN_GOAL_LEAST_SAMPLE ((size_t)256 << 10) /* a GC that condemned less teaches nothing */

/* Learn young GC g's cost per condemned byte, if it came because its generation's budget was
 * spent (reason AllocSmall: budget_generation). */
static void learn_pause_cost(tenure_runtime *rt, const tn_gc_record *g) {
    /* (HeapVerify's walks in the pause are not the collector's cost: with it, no goal) */
    if (!rt->config.GCPauseGoalMs || rt->config.HeapVerify || g->condemned > TN_GEN1 || g->background ||
        g->reason != TN_REASON_ALLOC_SMALL || g->pause_ns == 0)
        return;
    size_t bytes = g->size_before[TN_GEN0] + (g->condemned == TN_GEN1 ? g->size_before[TN_GEN1] : 0);
    if (bytes < TN_GOAL_LEAST_SAMPLE)
        return;
    double sample = (double)g->pause_ns / (double)bytes, *cost = &rt->heap.young_cost[g->condemned];
    if (*cost <= 0.0) {
        *cost = sample;
        return;
    }
    if (sample > TN_GOAL_JUMP * *cost)
        sample = TN_GOAL_JUMP * *cost;
    *cost = TN_GOAL_NEWEST * sample + (1.0 - TN_GOAL_NEWEST) * *cost;
}

/* The most bytes, per heap, a GC of generation gen (0 or 1) may condemn to stay within the goal
 * (SIZE_MAX: no goal, or no cost measured yet). */
static size_t goal_bytes(const tenure_runtime *rt, int gen) {
    double cost = rt->heap.young_cost[gen];
    if (!rt->config.GCPauseGoalMs || cost <= 0.0)
        return SIZE_MAX;
    double bytes = TN_GOAL_SHARE * (double)rt->config.GCPauseGoalMs * 1e6 / cost / rt->heap.nheaps;
    return bytes >= (double)(SIZE_MAX / 2) ? SIZE_MAX / 2 : (size_t)bytes;
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
    size_t cap = gen0_cap(rt), floor = gen0_floor(rt), goal = goal_bytes(rt, TN_GEN0);
    if (cap > goal) /* the floor still wins over the goal */
        cap = goal > floor ? goal : floor < cap ? floor : cap;
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
    size_t least = 2 * rt->heap.gen0_min_budget, cap = TN_GEN1_CAP, goal = goal_bytes(rt, TN_GEN1);
    if (goal != SIZE_MAX) /* a gen1 GC condemns gen0 too */
        goal = goal > rt->heap.gen0_budget ? goal - rt->heap.gen0_budget : 0;
    if (cap > goal)
        cap = goal;
    o->gen1_budget = clamp_size(older_live_of(f) / TN_GEN1_SHARE, least, least > cap ? least : cap);
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
    /* the automatic cap also follows the heap (gen0_cap) */
    rt->heap.gen0_max_budget = rt->config.GCgen0MaxBudget ? (size_t)rt->config.GCgen0MaxBudget : TN_GEN0_CAP;
    if (rt->heap.gen0_max_budget < rt->heap.gen0_min_budget)
        rt->heap.gen0_max_budget = rt->heap.gen0_min_budget;
    /* a heap starts empty: the automatic budget starts at its floor and grows with survival */
    rt->heap.gen0_budget =
        rt->config.GCgen0size || rt->heap.gen0_min_budget < TN_GEN0_FLOOR ? rt->heap.gen0_min_budget : TN_GEN0_FLOOR;
    rt->heap.whole_gen2_budget = 4 * rt->heap.gen0_min_budget;
    for (unsigned h = 0; h < TN_MAX_HEAPS; h++) {
        tn_older_budgets *o = &rt->heap.older[h];
        /* the automatic gen1 budget follows the older heap, empty now: its least (update_gen1_budget) */
        o->gen1_budget = rt->config.GCgen1size ? (size_t)rt->config.GCgen1size : 2 * rt->heap.gen0_min_budget;
        o->gen2_budget = 4 * rt->heap.gen0_min_budget;
        o->loh_budget = TN_LOH_MIN_BUDGET;
        if (o->loh_budget < o->gen2_budget) /* B2 (budgets_check) */
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
    learn_pause_cost(rt, g);
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
