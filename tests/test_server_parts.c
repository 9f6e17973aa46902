/*
 * server_parts: server GC runs the phases after marking (plan, relocate, compact or sweep,
 * promote) on its team, split by region, and leaves exactly the heap workstation GC leaves.
 *
 * Two instances get the same program (as test_server_gc.c): one with workstation GC, one with
 * server GC and GCHeapCount GC threads (TENURE_GCHeapCount, else 2). Each keeps a chain of
 * CHAIN nodes (about 7 MiB: every GC that condemns it keeps enough to use the team after
 * marking) and a random graph under a rooted array that it grows and cuts, then collects
 * generation 0, 1 and 2 in turn, compacting and not (so that both compaction and sweeping
 * run, and relocation with the card slots of gen0 and gen1 GCs). After every induced GC:
 *  - the two heaps hold the same objects at the same offsets from their first object, with
 *    the same sizes and generations (tenure_heap_walk): the parts' output does not depend on
 *    which thread took which region (sweeping, relocation's cards and crossing entries,
 *    promotion's rebuild; HeapVerify, when the environment sets it, checks those);
 *  - the server instance's thread 0 wrote the joins of the GC in .NET's order (GCJoin_V2,
 *    JoinTime 0, Heap 0): begin_mark_phase (3) and scan_dependent_handles (4) when the team
 *    marked, then, when the condemned generations kept at least 512 KiB, decide_on_compaction
 *    (11: the plugs found, before each heap's are placed on its own GC thread),
 *    begin_relocate_phase (15), relocate_phase_done (16), adjust_handle_age_compact (13, everything condemned was
 *    compacted) or adjust_handle_age_sweep (14), and done (1); one restart (Heap 100) per join.
 * Some chain nodes stay pinned, and young nodes are pinned and let go as the program runs, so
 * that compaction places plugs around pinned plugs (the place part's pin and gap slices).
 * The gen2 GCs must have used the team after marking (before this part, only marking did).
 */
#include "test_util.h"
#include "tenure_events.h"
#include <stdbool.h>

#define ROOTS 256
#define CHAIN 150000
#define CHAIN_PIN_EVERY 9973 /* chain nodes pinned for good (old pinned plugs) */
#define PINS 48              /* young nodes pinned at a time, the oldest let go first */
#define MAX_JOINS 16
#define PARALLEL_MIN_KEPT ((uint64_t)512 << 10) /* collect.c TN_PARALLEL_MIN_SURVIVED */

typedef struct side {
    tenure_runtime *rt;
    tt_errlog log;
    const tenure_type *node_t, *arr_t;
    tenure_handle *root;  /* STRONG: a REF_ARRAY of ROOTS nodes */
    tenure_handle *chain; /* STRONG: the first of CHAIN nodes linked by a */
    tenure_handle *pins[PINS];
    unsigned next_pin;
} side;

/* Thread 0's joins in the GC in progress (the server side's listener). */
typedef struct joins {
    uint32_t ids[MAX_JOINS];
    unsigned n, restarts;
    uint64_t bad; /* events past MAX_JOINS */
} joins;

static void on_event(const tenure_event *ev, void *ctx) {
    joins *j = ctx;
    const char *name = ev->desc->name;
    if (strcmp(name, "GCStart_V2") == 0) {
        j->n = j->restarts = 0;
        return;
    }
    if (strcmp(name, "GCJoin_V2") != 0)
        return;
    uint64_t heap = 0, time = 0, id = 0;
    tenure_event_read_u64(ev, "Heap", &heap);
    tenure_event_read_u64(ev, "JoinTime", &time);
    tenure_event_read_u64(ev, "JoinID", &id);
    if (time != 0)
        return;
    if (heap == 100)
        j->restarts++;
    else if (heap != 0 || j->n == MAX_JOINS)
        j->bad++; /* helpers' events do not reach listeners (trace/trace.h) */
    else
        j->ids[j->n++] = (uint32_t)id;
}

static void side_init(side *sd, const tenure_config *cfg) {
    memset(sd, 0, sizeof *sd);
    sd->rt = tt_create(cfg, &sd->log);
    sd->node_t = tt_register_node(sd->rt);
    sd->arr_t = tt_register_ref_array(sd->rt);
    void *arr = tenure_alloc_array(sd->rt, sd->arr_t, ROOTS);
    TT_CHECK(arr != NULL);
    sd->root = tenure_handle_new(sd->rt, TENURE_HANDLE_STRONG, arr);
    TT_CHECK(sd->root != NULL);
    sd->chain = tenure_handle_new(sd->rt, TENURE_HANDLE_STRONG, NULL);
    TT_CHECK(sd->chain != NULL);
    for (uint64_t i = 0; i < CHAIN; i++) { /* the handle holds the head (no conservative scan) */
        tt_node *n = tt_node_new(sd->rt, sd->node_t, 1u << 30 | i);
        n->a = tenure_handle_get(sd->rt, sd->chain);
        tt_node_seal(n);
        TT_CHECK(tenure_handle_set(sd->rt, sd->chain, n) == TENURE_OK);
        if (i % CHAIN_PIN_EVERY == CHAIN_PIN_EVERY / 2) /* (never freed: destroy frees it) */
            TT_CHECK(tenure_handle_new(sd->rt, TENURE_HANDLE_PINNED, n) != NULL);
    }
}

/* Pin n, letting go of the oldest of the pins (the plan's pinned plugs and the gaps in front
 * of them move from GC to GC). */
static void pin_young(side *sd, tt_node *n) {
    tenure_handle **slot = &sd->pins[sd->next_pin++ % PINS];
    if (*slot)
        TT_CHECK(tenure_handle_free(sd->rt, *slot) == TENURE_OK);
    *slot = tenure_handle_new(sd->rt, TENURE_HANDLE_PINNED, n);
    TT_CHECK(*slot != NULL);
}

static void **roots_of(side *sd) { return tt_refs(tenure_handle_get(sd->rt, sd->root)); }

/* One step of the program, the same on both sides (r: a random number drawn once for both). */
static void grow(side *sd, uint64_t r, uint64_t id) {
    void **roots = roots_of(sd);
    tt_node *n = tt_node_new(sd->rt, sd->node_t, id);
    if ((r >> 40) % 512 == 0)
        pin_young(sd, n);
    tt_node *parent = roots[r % ROOTS];
    if (parent && (r >> 20) % 4 != 0) { /* under a rooted node (old -> young) */
        if ((r >> 8) & 1)
            tenure_write_ref(sd->rt, parent, &parent->a, n);
        else
            tenure_write_ref(sd->rt, parent, &parent->b, n);
        tt_node_seal(parent);
        return;
    }
    if ((r >> 22) % 3 == 0) { /* a new root: the old one's graph may die */
        n->a = parent;
        tt_node_seal(n);
        tenure_write_ref(sd->rt, tenure_handle_get(sd->rt, sd->root), &roots[r % ROOTS], n);
    }
}

/* The heap's layout: (offset from the first object, size, generation) of every object. */
typedef struct obj_rec {
    uintptr_t at;
    size_t size;
    int gen;
} obj_rec;

typedef struct layout {
    obj_rec *recs;
    size_t n, cap;
} layout;

static int note_object(void *obj, const tenure_type *type, size_t size, int generation, void *ctx) {
    (void)type;
    layout *l = ctx;
    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 65536;
        l->recs = realloc(l->recs, l->cap * sizeof *l->recs);
        TT_CHECK(l->recs != NULL);
    }
    l->recs[l->n++] = (obj_rec){(uintptr_t)obj, size, generation};
    return 0;
}

static int by_address(const void *a, const void *b) {
    uintptr_t x = ((const obj_rec *)a)->at, y = ((const obj_rec *)b)->at;
    return x < y ? -1 : x > y;
}

static void take_layout(side *sd, layout *l) {
    l->n = 0;
    TT_CHECK(tenure_heap_walk(sd->rt, note_object, l) == TENURE_OK);
    qsort(l->recs, l->n, sizeof *l->recs, by_address);
    for (size_t i = l->n; i-- > 0;)
        l->recs[i].at -= l->recs[0].at;
}

static void compare_layouts(side *ws, side *sv, layout *a, layout *b, int round) {
    take_layout(ws, a);
    take_layout(sv, b);
    TT_CHECK(a->n == b->n, "round %d: %zu objects with workstation GC, %zu with server GC", round, a->n, b->n);
    for (size_t i = 0; i < a->n; i++) {
        const obj_rec *x = &a->recs[i], *y = &b->recs[i];
        TT_CHECK(x->at == y->at && x->size == y->size && x->gen == y->gen,
                 "round %d: object %zu is at +%" PRIuPTR " (%zu bytes, gen%d) with workstation GC, at +%" PRIuPTR
                 " (%zu bytes, gen%d) with server GC",
                 round, i, x->at, x->size, x->gen, y->at, y->size, y->gen);
    }
}

/* Thread 0's joins in the GC just done, against what the GC's record implies. */
static bool check_joins(side *sv, const joins *j, int round) {
    tenure_gc_info info;
    tenure_get_last_gc_info(sv->rt, &info);
    if (j->n == 0)
        return false; /* a gen0 GC after small ones: on one thread (collect.c gc_threads_for) */
    uint64_t kept = 0;
    unsigned condemned = 0;
    for (int g = 0; g < 5; g++) {
        bool c = g <= info.generation || (info.generation == 2 && g > 2);
        kept += c ? info.promoted[g] : 0;
        condemned |= c ? 1u << g : 0;
    }
    bool parallel = kept >= PARALLEL_MIN_KEPT;
    uint32_t after_sweep = (info.compacted & condemned) == condemned ? 13 : 14;
    uint32_t want[] = {3, 4, 11, 15, 16, after_sweep, 1};
    unsigned nwant = parallel ? 7 : 2;
    TT_CHECK(j->n == nwant, "round %d (gen%d, %" PRIu64 " bytes kept): thread 0 met %u joins, expected %u", round,
             info.generation, kept, j->n, nwant);
    for (unsigned i = 0; i < nwant; i++)
        TT_CHECK(j->ids[i] == want[i], "round %d: join %u of thread 0 is %u, expected %u", round, i, j->ids[i],
                 want[i]);
    TT_CHECK(j->restarts == j->n, "round %d: %u restarts for %u joins", round, j->restarts, j->n);
    return parallel;
}

int main(void) {
    uint64_t seed = tt_rng_init("server_parts");
    (void)seed;
    double t0 = tt_now();
    tenure_config cfg;
    tt_config(&cfg);
    cfg.GCConservativeStack = 0; /* both sides see exactly the same roots */
    cfg.GCStress = 0;            /* GCs at the same moments on both sides */
    /* only the induced GCs: server GC's gen0 budget is per heap (heap/alloc.c "allocation heaps"),
     * so a budget the GCs could spend would bring them at other moments on the two sides */
    cfg.GCgen0size = cfg.GCgen0MaxBudget = (uint64_t)1 << 30;
    side ws, sv;
    cfg.gcServer = 0;
    side_init(&ws, &cfg);
    cfg.gcServer = 1;
    if (!cfg.GCHeapCount)
        cfg.GCHeapCount = 2;
    side_init(&sv, &cfg);
    joins j = {0};
    TT_CHECK(tenure_session_start_listener(sv.rt, TENURE_KW_GC, TENURE_LEVEL_VERBOSE, on_event, &j));

    layout a = {0}, b = {0};
    size_t per_round = tt_scaled(60000, 5000);
    uint64_t id = 1;
    unsigned parallel_gen2 = 0, gen2 = 0;
    uint64_t pinned_parallel = 0; /* objects the parallel GCs found pinned */
    for (int round = 0; round < 12; round++) {
        for (size_t i = 0; i < per_round; i++, id++) {
            uint64_t r = tt_rand();
            grow(&ws, r, id);
            grow(&sv, r, id);
        }
        int gen = round % 3;
        unsigned flags = (round / 3) % 2 ? 0 : TENURE_COLLECT_COMPACT;
        tt_collect(ws.rt, gen, flags);
        tt_collect(sv.rt, gen, flags);
        TT_CHECK(j.bad == 0, "round %d: %" PRIu64 " join events not from thread 0, or too many", round, j.bad);
        bool parallel = check_joins(&sv, &j, round);
        tenure_gc_info info;
        tenure_get_last_gc_info(sv.rt, &info);
        pinned_parallel += parallel ? info.pinned_objects : 0;
        if (gen == 2) {
            gen2++;
            parallel_gen2 += parallel;
        }
        compare_layouts(&ws, &sv, &a, &b, round);
    }
    TT_CHECK(parallel_gen2 == gen2, "only %u of %u gen2 GCs ran the phases after marking on the team", parallel_gen2,
             gen2);
    TT_CHECK(pinned_parallel > 0, "the GCs on the team found no pinned object: their place part placed no pin");
    printf("server_parts: %u GC threads, %u gen2 GCs with parallel parts, %" PRIu64
           " pinned objects in them, %zu objects compared\n",
           (unsigned)cfg.GCHeapCount, parallel_gen2, pinned_parallel, a.n);
    free(a.recs);
    free(b.recs);
    tenure_destroy(ws.rt);
    tenure_destroy(sv.rt);
    return tt_finish("server_parts", t0);
}
