/*
 * objtrack_gc: the object tracker fed by the real collector's profiler callbacks.
 *
 * A seeded random mutator (TENURE_TEST_SEED replays) builds and rewires a graph of objects
 * (two-reference nodes, small and large arrays, pinned nodes, a few pinned handles) that each
 * store their own number; every object is added to the tracker right after its allocation,
 * with its number as payload. Thousands of GCs happen: allocation-triggered ones and
 * tenure_collect of generations 0/1/2 with random flags (forced, compact, optimized, LOH
 * compaction, aggressive), on three instances with GCCompactMode 0, 1 and 2 (or only the one
 * TENURE_GCCompactMode names). The profiler feeds the tracker (gc_started with
 * tenure_generation_bounds, moved/surviving ranges, gc_finished) and then, still inside
 * gc_finished with the world stopped, checks it against the truth:
 *  - every reachable object is in the tracker under its current address, with its number;
 *  - every death reported is of an object that is unreachable, under the address the object
 *    last had, with a generation 0..4, once;
 *  - count == allocated - reported deaths, and after a GC that collected every generation,
 *    count == reachable (every unreachable object was reported dead).
 * At the end every root is dropped and a full compacting GC must report every remaining
 * object dead: each object ever allocated is reported dead exactly once.
 * Precise roots only (conservative stack scanning off): the truth is exact.
 */
#include "test_util.h"
#include "tenure_objtrack.h"
#include "tenure_profiler.h"

typedef struct node {
    tenure_header header;
    void *a, *b;
    uint64_t num;
} node;

enum { NROOT = 256, NPIN = 4, LIVE_SOFT_MAX = 20000 };

static tenure_runtime *rt;
static const tenure_type *node_t, *blob_t;
static tenure_objtrack *tr;
static void *roots[NROOT];
static void *pinobj[NPIN];
static tenure_handle *pinh[NPIN];

/* the truth, by object number */
static uint64_t next_num, cap_num;
static uintptr_t *last_addr;
static uint8_t *died;
static uint32_t *seen;
static uint32_t epoch;
static uint64_t walk_gcs, unchecked_deaths, heap_walks;
static uint64_t deaths_total, deaths_this_gc;

/* per GC */
static tenure_generation_range *bounds;
static size_t cap_bounds;
static int in_gc, all_collected;
static int gen_collected[5];
static uint64_t gcs, moved_calls, surviving_calls, moved_ranges, surviving_ranges, full_gcs, last_reach;
static void **stack;
static size_t cap_stack;

static uint64_t num_of(void *obj) {
    const tenure_type *t = tenure_object_type(rt, obj);
    TT_CHECK(t == node_t || t == blob_t, "object %p of an unknown type", obj);
    if (t == node_t)
        return ((node *)obj)->num;
    return ((uint64_t *)tenure_array_data(obj))[0];
}

static void ensure_num_capacity(void) {
    if (next_num < cap_num)
        return;
    uint64_t cap = cap_num ? cap_num * 2 : 1 << 16;
    last_addr = realloc(last_addr, cap * sizeof *last_addr);
    died = realloc(died, cap * sizeof *died);
    seen = realloc(seen, cap * sizeof *seen);
    TT_CHECK(last_addr && died && seen);
    memset(died + cap_num, 0, (cap - cap_num) * sizeof *died);
    memset(seen + cap_num, 0, (cap - cap_num) * sizeof *seen);
    cap_num = cap;
}

/* ---- profiler callbacks ---- */

static void on_death(void *ctx, uintptr_t id, void *payload, int generation) {
    (void)ctx;
    uint64_t num = *(uint64_t *)payload;
    TT_CHECK(num < next_num, "death of unknown object %" PRIu64, num);
    TT_CHECK(!died[num], "object %" PRIu64 " reported dead twice", num);
    /* last_addr is exact if this is the first GC since the last heap walk (an unreachable
     * object may still move: kept alive by an old unreachable one, it is promoted) */
    if (gcs == walk_gcs + 1) /* gcs counts this GC already */
        TT_CHECK(id == last_addr[num], "object %" PRIu64 " reported dead at %#" PRIxPTR ", it was at %#" PRIxPTR, num,
                 id, last_addr[num]);
    else
        unchecked_deaths++;
    TT_CHECK(generation >= 0 && generation <= 4 && gen_collected[generation],
             "object %" PRIu64 " died in generation %d, which was not collected", num, generation);
    died[num] = 1;
    deaths_total++;
    deaths_this_gc++;
}

static void cb_gc_started(void *ctx, const int collected[5], tenure_gc_reason_kind reason) {
    (void)ctx;
    (void)reason;
    TT_CHECK(!in_gc, "gc_started twice");
    in_gc = 1;
    size_t n = tenure_generation_bounds(rt, NULL, 0);
    if (n > cap_bounds) {
        cap_bounds = n * 2;
        bounds = realloc(bounds, cap_bounds * sizeof *bounds);
        TT_CHECK(bounds != NULL);
    }
    n = tenure_generation_bounds(rt, bounds, cap_bounds);
    all_collected = 1;
    for (int g = 0; g < 5; g++) {
        gen_collected[g] = collected[g];
        all_collected &= collected[g] != 0;
    }
    tenure_objtrack_gc_started(tr, collected, bounds, n);
}

static void cb_moved(void *ctx, size_t count, const uintptr_t *old_starts, const uintptr_t *new_starts,
                     const size_t *lengths) {
    (void)ctx;
    TT_CHECK(in_gc, "moved_references outside a GC");
    moved_calls++;
    moved_ranges += count;
    tenure_objtrack_moved(tr, count, old_starts, new_starts, lengths);
}

static void cb_surviving(void *ctx, size_t count, const uintptr_t *starts, const size_t *lengths) {
    (void)ctx;
    TT_CHECK(in_gc, "surviving_references outside a GC");
    surviving_calls++;
    surviving_ranges += count;
    tenure_objtrack_surviving(tr, count, starts, lengths);
}

static void push(void *obj, size_t *sp) {
    if (obj == NULL)
        return;
    if (*sp == cap_stack) {
        cap_stack = cap_stack ? cap_stack * 2 : 4096;
        stack = realloc(stack, cap_stack * sizeof *stack);
        TT_CHECK(stack != NULL);
    }
    stack[(*sp)++] = obj;
}

/* Walk the graph from the roots: every reachable object must be tracked, under its address. */
static uint64_t check_reachable(void) {
    epoch++;
    size_t sp = 0;
    uint64_t reach = 0;
    for (int i = 0; i < NROOT; i++)
        push(roots[i], &sp);
    for (int i = 0; i < NPIN; i++)
        push(pinobj[i], &sp);
    while (sp) {
        void *obj = stack[--sp];
        uint64_t num = num_of(obj);
        TT_CHECK(num < next_num, "object number %" PRIu64 " out of range", num);
        if (seen[num] == epoch)
            continue;
        seen[num] = epoch;
        reach++;
        TT_CHECK(!died[num], "gc %" PRIu64 ": reachable object %" PRIu64 " was reported dead", gcs, num);
        uint64_t *p = tenure_objtrack_find(tr, (uintptr_t)obj);
        TT_CHECK(p != NULL, "gc %" PRIu64 ": reachable object %" PRIu64 " at %p (was %#" PRIxPTR ") not tracked there",
                 gcs, num, obj, last_addr[num]);
        TT_CHECK(*p == num, "gc %" PRIu64 ": at %p the tracker has object %" PRIu64 ", it is %" PRIu64, gcs, obj, *p,
                 num);
        last_addr[num] = (uintptr_t)obj;
        if (tenure_object_type(rt, obj) == node_t) {
            push(((node *)obj)->a, &sp);
            push(((node *)obj)->b, &sp);
        }
    }
    return reach;
}

static void cb_gc_finished(void *ctx) {
    (void)ctx;
    TT_CHECK(in_gc, "gc_finished without gc_started");
    in_gc = 0;
    gcs++;
    deaths_this_gc = 0;
    TT_CHECK(tenure_objtrack_gc_finished(tr) == 0, "tracker out of memory");
    uint64_t reach = check_reachable();
    last_reach = reach;
    TT_CHECK_EQ_U64(tenure_objtrack_count(tr), next_num - deaths_total);
    if (all_collected) {
        full_gcs++;
        TT_CHECK(tenure_objtrack_count(tr) == reach,
                 "gc %" PRIu64 " collected everything: %zu tracked, %" PRIu64 " reachable", gcs,
                 tenure_objtrack_count(tr), reach);
    }
}

/* ---- after a GC, outside it: the whole heap (reachable or not) ---- */

static int walk_visit(void *obj, const tenure_type *type, size_t size, int generation, void *ctx) {
    (void)size;
    (void)generation;
    uint64_t *n = ctx;
    TT_CHECK(type == node_t || type == blob_t, "heap walk: object %p of an unknown type", obj);
    uint64_t num = type == node_t ? ((node *)obj)->num : ((uint64_t *)tenure_array_data(obj))[0];
    TT_CHECK(num < next_num && !died[num], "heap walk: object %" PRIu64 " in the heap but reported dead", num);
    uint64_t *p = tenure_objtrack_find(tr, (uintptr_t)obj);
    TT_CHECK(p != NULL && *p == num, "heap walk after gc %" PRIu64 ": object %" PRIu64 " not tracked at %p", gcs, num,
             obj);
    last_addr[num] = (uintptr_t)obj;
    (*n)++;
    return 0;
}

/* Every object in the heap is tracked under its address, and nothing else is tracked. */
static void check_heap(void) {
    if (walk_gcs == gcs)
        return;
    uint64_t n = 0;
    TT_CHECK_RESULT(tenure_heap_walk(rt, walk_visit, &n), TENURE_OK);
    TT_CHECK(n == tenure_objtrack_count(tr), "after gc %" PRIu64 ": %" PRIu64 " objects in the heap, %zu tracked", gcs,
             n, tenure_objtrack_count(tr));
    walk_gcs = gcs;
    heap_walks++;
}

/* ---- the mutator ---- */

static void *new_object(void) {
    ensure_num_capacity();
    uint64_t num = next_num;
    void *obj;
    uint64_t k = tt_rand_below(1000);
    if (k < 2) { /* large object heap */
        obj = tenure_alloc_array(rt, blob_t, (size_t)tt_rand_range(11000, 14000));
    } else if (k < 6) {
        obj = tenure_alloc_pinned(rt, node_t);
    } else if (k < 250) {
        obj = tenure_alloc_array(rt, blob_t, (size_t)tt_rand_range(1, 40));
    } else {
        obj = tenure_alloc(rt, node_t);
    }
    TT_CHECK(obj != NULL, "allocation failed: %s", tenure_strerror(tenure_last_error(rt)));
    if (tenure_object_type(rt, obj) == node_t)
        ((node *)obj)->num = num;
    else
        ((uint64_t *)tenure_array_data(obj))[0] = num;
    next_num++;
    last_addr[num] = (uintptr_t)obj;
    uint64_t *p = tenure_objtrack_add(tr, (uintptr_t)obj);
    TT_CHECK(p != NULL, "tracker add failed for %p", obj);
    TT_CHECK(*p == 0);
    *p = num;
    return obj;
}

/* A random node reachable from the roots (NULL if the walk finds none). */
static node *random_node(void) {
    void *o = roots[tt_rand_below(NROOT)];
    node *found = NULL;
    for (int steps = (int)tt_rand_below(4); o != NULL; steps--) {
        if (tenure_object_type(rt, o) != node_t)
            break;
        found = o;
        if (steps <= 0)
            break;
        o = tt_rand_below(2) ? ((node *)o)->a : ((node *)o)->b;
    }
    return found;
}

static void store_somewhere(void *obj) {
    node *n = last_reach < LIVE_SOFT_MAX && tt_rand_below(2) ? random_node() : NULL;
    if (n != NULL) {
        void **slot = tt_rand_below(2) ? &n->a : &n->b;
        tenure_write_ref(rt, n, slot, obj);
    } else {
        roots[tt_rand_below(NROOT)] = obj;
    }
}

static void mutate(void) {
    uint64_t k = tt_rand_below(100);
    if (k < 60) {
        void *obj = new_object(); /* unrooted until stored: no allocation in between */
        store_somewhere(obj);
    } else if (k < 75) {
        roots[tt_rand_below(NROOT)] = NULL;
    } else if (k < 90) {
        node *n = random_node();
        if (n != NULL) {
            void *target = tt_rand_below(3) ? roots[tt_rand_below(NROOT)] : NULL;
            tenure_write_ref(rt, n, tt_rand_below(2) ? (void *)&n->a : (void *)&n->b, target);
        }
    } else if (k < 91) {
        int i = (int)tt_rand_below(NPIN);
        if (pinh[i] != NULL) {
            TT_CHECK_RESULT(tenure_handle_free(rt, pinh[i]), TENURE_OK);
            pinh[i] = NULL;
            pinobj[i] = NULL;
        } else {
            void *o = roots[tt_rand_below(NROOT)];
            if (o != NULL) {
                pinh[i] = tenure_handle_new(rt, TENURE_HANDLE_PINNED, o);
                TT_CHECK(pinh[i] != NULL);
                pinobj[i] = o;
            }
        }
    } else {
        roots[tt_rand_below(NROOT)] = roots[tt_rand_below(NROOT)];
    }
}

static void random_collect(void) {
    int gen = (int)tt_rand_below(3);
    static const unsigned flag_set[] = {TENURE_COLLECT_FORCED,    TENURE_COLLECT_COMPACT,
                                        TENURE_COLLECT_OPTIMIZED, TENURE_COLLECT_COMPACT | TENURE_COLLECT_COMPACT_LOH,
                                        TENURE_COLLECT_FORCED,    TENURE_COLLECT_AGGRESSIVE};
    unsigned flags = flag_set[tt_rand_below(tt_rand_below(20) == 0 ? 6 : 5)];
    if (flags & TENURE_COLLECT_AGGRESSIVE)
        gen = 2;
    tt_collect(rt, gen, flags);
}

static void run_instance(int compact_mode, uint64_t target_gcs) {
    tt_errlog log = {.fatal = 1};
    tenure_config cfg;
    tt_config(&cfg);
    if (compact_mode >= 0)
        cfg.GCCompactMode = (uint32_t)compact_mode;
    if (getenv("TENURE_GCgen0size") == NULL)
        cfg.GCgen0size = 256 << 10;
    rt = tt_create(&cfg, &log);
    static const size_t offs[] = {offsetof(node, a), offsetof(node, b)};
    tenure_type_desc d;
    memset(&d, 0, sizeof d);
    d.name = "ot_node";
    d.size = sizeof(node);
    d.ref_offsets = offs;
    d.ref_count = 2;
    node_t = tenure_type_register(rt, &d);
    memset(&d, 0, sizeof d);
    d.name = "ot_blob";
    d.size = sizeof(tenure_array_header);
    d.elem_size = sizeof(uint64_t);
    d.flags = TENURE_TYPE_ARRAY | TENURE_TYPE_NO_REFS;
    blob_t = tenure_type_register(rt, &d);
    TT_CHECK(node_t && blob_t);
    memset(roots, 0, sizeof roots);
    memset(pinobj, 0, sizeof pinobj);
    memset(pinh, 0, sizeof pinh);
    tenure_root_area *ra = tenure_root_area_add(rt, roots, NROOT);
    tenure_root_area *pa = tenure_root_area_add(rt, pinobj, NPIN);
    TT_CHECK(ra && pa);

    tr = tenure_objtrack_create(sizeof(uint64_t), on_death, NULL);
    TT_CHECK(tr != NULL);
    next_num = 0;
    deaths_total = 0;
    walk_gcs = unchecked_deaths = heap_walks = 0;
    gcs = moved_calls = surviving_calls = moved_ranges = surviving_ranges = full_gcs = last_reach = 0;
    if (died != NULL)
        memset(died, 0, cap_num * sizeof *died);
    tenure_profiler_callbacks cb;
    memset(&cb, 0, sizeof cb);
    cb.gc_started = cb_gc_started;
    cb.moved_references = cb_moved;
    cb.surviving_references = cb_surviving;
    cb.gc_finished = cb_gc_finished;
    tenure_profiler *prof = tenure_profiler_attach(rt, &cb, TENURE_PROFILE_GC, NULL);
    TT_CHECK(prof != NULL, "tenure_profiler_attach failed");

    double t0 = tt_now();
    uint64_t steps = 0;
    while (gcs < target_gcs) {
        mutate();
        steps++;
        if (tt_rand_below(400) == 0)
            random_collect();
        check_heap();
        TT_CHECK(steps < target_gcs * 100000, "too few GCs happen");
    }
    /* the end: nothing is reachable; a full GC must report every remaining object dead */
    memset(roots, 0, sizeof roots);
    for (int i = 0; i < NPIN; i++)
        if (pinh[i] != NULL) {
            TT_CHECK_RESULT(tenure_handle_free(rt, pinh[i]), TENURE_OK);
            pinh[i] = NULL;
            pinobj[i] = NULL;
        }
    tt_collect(rt, 2, TENURE_COLLECT_COMPACT | TENURE_COLLECT_COMPACT_LOH);
    check_heap();
    TT_CHECK(all_collected, "a full GC did not collect every generation");
    TT_CHECK(tenure_objtrack_count(tr) == 0, "%zu objects still tracked after the last GC", tenure_objtrack_count(tr));
    for (uint64_t num = 0; num < next_num; num++)
        TT_CHECK(died[num] == 1, "object %" PRIu64 " never reported dead", num);
    printf("  GCCompactMode %d: %" PRIu64 " GCs (%" PRIu64 " full, %" PRIu64 " heap walks), %" PRIu64
           " objects, %" PRIu64 " moved ranges in %" PRIu64 " calls, %" PRIu64 " surviving ranges in %" PRIu64
           " calls, %" PRIu64 " deaths (%" PRIu64 " without a known last address), %.2f s\n",
           compact_mode, gcs, full_gcs, heap_walks, next_num, moved_ranges, moved_calls, surviving_ranges,
           surviving_calls, deaths_total, unchecked_deaths, tt_now() - t0);
    if (compact_mode != 2)
        TT_CHECK(moved_ranges > 0, "no moved ranges were reported");
    if (compact_mode != 1)
        TT_CHECK(surviving_ranges > 0, "no surviving ranges were reported");
    TT_CHECK_RESULT(tenure_profiler_detach(rt, prof), TENURE_OK);
    tenure_root_area_remove(rt, ra);
    tenure_root_area_remove(rt, pa);
    tenure_destroy(rt);
    tenure_objtrack_destroy(tr);
    tr = NULL;
    rt = NULL;
}

int main(void) {
    double t0 = tt_now();
    tt_rng_init("objtrack_gc");
    uint64_t target = tt_scaled(1000, 100);
    const char *mode = getenv("TENURE_GCCompactMode");
    if (mode != NULL && mode[0] != '\0') {
        run_instance((int)strtol(mode, NULL, 0), 3 * target);
    } else {
        for (int m = 0; m <= 2; m++)
            run_instance(m, target);
    }
    free(last_addr);
    free(died);
    free(seen);
    free(bounds);
    free(stack);
    return tt_finish("objtrack_gc", t0);
}
