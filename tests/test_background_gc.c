/*
 * background_gc: background GC (gcConcurrent=1) marks the old generation while this thread
 * mutates it hard, and nothing reachable is lost (gc/background.h, B1-B4).
 *
 * A graph of nodes (tt_node: two references, an id, a checksum of the ids it references)
 * lives mostly in generation 2, reachable from a few roots (a root area). A model holds each
 * node's children by number; every node also has a weak handle, which is how the test finds
 * it without keeping it alive. Each round starts a background GC (tenure_collect(2,
 * NONBLOCKING)) and, while it marks, stores into the old nodes: old->old edges, new young
 * nodes hung under old ones, deletions (edges set to NULL), and the classic hiding move (an
 * edge copied from a node the background GC may not have scanned yet into one it may have,
 * then deleted at its source). Sometimes a blocking gen2 GC is asked for meanwhile (it ends
 * the background GC first). The final pause comes at the first GC after the background
 * marking is done (an allocation's, or an induced gen0 GC when no node number is free).
 * After each background GC:
 *  - every node the model reaches from the roots is alive (its weak handle is set), holds its
 *    id and checksum, and its children are the model's (the heap verifies too);
 *  - stats and the GC info say a background GC ran, and the pause is not the whole GC.
 * After a blocking full GC, every node the model cannot reach is gone (its weak handle
 * cleared): the background GC's floating garbage does not outlive the next full GC.
 * Then finalizable objects detached, moved and resurrected around a background GC, and
 * dependent handles (test_finalization_and_dependents).
 *
 * Random: the seed is printed (TENURE_TEST_SEED replays it).
 */
#include "test_util.h"

#include <stdbool.h>
#include <stdlib.h>
#include <time.h>

#define MAX_NODES 120000
#define NROOTS 64

typedef struct model_node {
    int a, b; /* children, -1: NULL */
    bool used;
} model_node;

static tt_errlog log_;
static tenure_runtime *rt;
static const tenure_type *node_t;
static model_node model[MAX_NODES];
static tenure_handle *weak[MAX_NODES];
static int nnodes;
static void *roots[NROOTS];
static int root_ix[NROOTS]; /* the model's roots (-1: NULL) */
static uint64_t stores, hides, news;

static tt_node *node_at(int i) { return i < 0 ? NULL : tenure_handle_get(rt, weak[i]); }

static int free_ix[MAX_NODES], nfree; /* numbers of nodes collected, to reuse */

static bool room_for_node(void) { return nfree > 0 || nnodes < MAX_NODES; }

static int new_node(void) {
    TT_CHECK(room_for_node(), "out of node numbers");
    int i = nfree ? free_ix[--nfree] : nnodes++;
    tt_node *n = tenure_alloc(rt, node_t);
    TT_CHECK(n != NULL, "allocation failed");
    n->id = (uint64_t)i + 1;
    tt_node_seal(n);
    weak[i] = tenure_handle_new(rt, TENURE_HANDLE_WEAK_SHORT, n);
    TT_CHECK(weak[i] != NULL, "handle");
    model[i] = (model_node){-1, -1, true};
    news++;
    return i;
}

/* Set child `which` of node i to node j (-1: NULL), in the heap and the model. */
static void set_child(int i, int which, int j) {
    tt_node *n = node_at(i), *c = node_at(j);
    TT_CHECK(n != NULL && (j < 0 || c != NULL), "node %d or %d lost before a store", i, j);
    tenure_write_ref(rt, n, which ? (void *)&n->b : (void *)&n->a, c);
    tt_node_seal(n);
    if (which)
        model[i].b = j;
    else
        model[i].a = j;
    stores++;
}

static void set_root(int r, int j) {
    roots[r] = node_at(j);
    root_ix[r] = j;
}

/* The nodes the model reaches from the roots (mark[i] = 1). */
static void reach(unsigned char *mark) {
    static int queue[MAX_NODES];
    memset(mark, 0, (size_t)nnodes);
    int head = 0, tail = 0;
    for (int r = 0; r < NROOTS; r++)
        if (root_ix[r] >= 0 && !mark[root_ix[r]]) {
            mark[root_ix[r]] = 1;
            queue[tail++] = root_ix[r];
        }
    while (head < tail) {
        int i = queue[head++];
        int kids[2] = {model[i].a, model[i].b};
        for (int k = 0; k < 2; k++)
            if (kids[k] >= 0 && !mark[kids[k]]) {
                mark[kids[k]] = 1;
                queue[tail++] = kids[k];
            }
    }
}

/* A random node the model reaches (by a short walk from a random root), -1 if none. */
static int random_reachable(void) {
    int i = root_ix[tt_rand_below(NROOTS)];
    for (int steps = (int)tt_rand_below(12); i >= 0 && steps > 0; steps--) {
        int next = tt_rand_below(2) ? model[i].a : model[i].b;
        if (next < 0)
            break;
        i = next;
    }
    return i;
}

static void check_reachable(const char *when) {
    static unsigned char mark[MAX_NODES];
    reach(mark);
    size_t n = 0;
    for (int i = 0; i < nnodes; i++) {
        if (!mark[i])
            continue;
        n++;
        tt_node *x = node_at(i);
        TT_CHECK(x != NULL, "%s: node %d is reachable but was collected", when, i);
        TT_CHECK(x->id == (uint64_t)i + 1 && x->check == tt_node_sum(x), "%s: node %d damaged (id %" PRIu64 ")", when,
                 i, x->id);
        TT_CHECK(x->a == node_at(model[i].a) && x->b == node_at(model[i].b), "%s: node %d has wrong children", when, i);
    }
    TT_CHECK(tenure_verify_heap(rt) == TENURE_OK, "%s: the heap does not verify: %s", when, log_.message);
    (void)n;
}

static void check_unreachable_gone(const char *when) {
    static unsigned char mark[MAX_NODES];
    reach(mark);
    for (int i = 0; i < nnodes; i++)
        if (!mark[i] && model[i].used) {
            TT_CHECK(node_at(i) == NULL, "%s: node %d is unreachable but alive after a full GC", when, i);
            tenure_handle_free(rt, weak[i]);
            model[i].used = false;
            free_ix[nfree++] = i;
        }
}

/* Build a graph: trees under the roots, then random cross edges; promoted to gen2. */
static void build(int n) {
    for (int r = 0; r < NROOTS; r++)
        set_root(r, new_node());
    while (nnodes < n) {
        int parent = random_reachable();
        int child = new_node();
        set_child(parent, (int)tt_rand_below(2), child);
    }
    for (int k = 0; k < n / 4; k++)
        set_child(random_reachable(), (int)tt_rand_below(2), random_reachable());
    tt_collect(rt, 2, 0);
    tt_collect(rt, 2, 0);
}

static void mutate_once(void) {
    unsigned op = (unsigned)tt_rand_below(100);
    int i = random_reachable();
    if (i < 0) {
        if (room_for_node())
            set_root((int)tt_rand_below(NROOTS), new_node());
        return;
    }
    if (op < 35) { /* old -> old (or anything reachable) */
        set_child(i, (int)tt_rand_below(2), random_reachable());
    } else if (op < 55 && room_for_node()) { /* a new young node under an old one */
        int c = new_node();
        set_child(i, (int)tt_rand_below(2), c);
    } else if (op < 70) { /* a deletion */
        set_child(i, (int)tt_rand_below(2), -1);
    } else if (op < 95) { /* hide: copy an edge elsewhere, then delete it at its source */
        int which = (int)tt_rand_below(2);
        int child = which ? model[i].b : model[i].a;
        int to = random_reachable();
        if (child >= 0 && to >= 0 && to != i) {
            set_child(to, (int)tt_rand_below(2), child);
            set_child(i, which, -1);
            hides++;
        }
    } else { /* a root moves */
        set_root((int)tt_rand_below(NROOTS), tt_rand_below(4) ? random_reachable() : -1);
    }
}

static tenure_stats stats(void) { return tt_stats(rt); }

/* Mutate until the background GC in progress is over (or a blocking GC ends it). */
static void mutate_during_bgc(size_t round) {
    uint64_t before = stats().background_gcs, final_pauses = stats().background_final_pauses;
    TT_CHECK_RESULT(tenure_collect(rt, 2, TENURE_COLLECT_NONBLOCKING), TENURE_OK);
    tenure_stats s = stats();
    TT_CHECK(s.background_gc_in_progress || s.background_gcs > before, "round %zu: no background GC started", round);
    bool blocking = tt_rand_below(6) == 0;
    for (size_t k = 0; stats().background_gcs == before; k++) {
        mutate_once();
        if (!room_for_node()) /* no allocation, no GC: an induced gen0 GC (the final pause, once marked) */
            tt_collect(rt, 0, 0);
        if (blocking && k == 2000)
            tt_collect(rt, 2, 0); /* ends the background GC first */
        if (k > 50000000)
            TT_CHECK(0, "round %zu: the background GC does not end", round);
    }
    s = stats(); /* one final pause per background GC (the torture tester learns them from this count);
                    one more if the next has passed its own already */
    uint64_t ended = s.background_gcs - before, paused = s.background_final_pauses - final_pauses;
    TT_CHECK(paused >= ended && paused <= ended + (uint64_t)s.background_gc_in_progress,
             "round %zu: %" PRIu64 " final pauses for %" PRIu64 " background GCs", round,
             s.background_final_pauses - final_pauses, s.background_gcs - before);
}

/* ---- finalization and dependent handles beside background marking ----
 *
 * Finalizable objects (fin: a reference to a node and a number) hang under old nodes; while
 * a background GC marks, some are detached (their only reference cleared), others moved
 * (their reference copied elsewhere, then cleared at its source), and dependent handles keep
 * fresh nodes (secondaries) alive as long as their old primaries live. Finalizers run only in
 * tenure_run_pending_finalizers (GCFinalizeMode=1) and resurrect every other object into a
 * root area. Checked: no finalizer runs for an object that is reachable; after a blocking
 * full GC, every detached object was finalized exactly once; a resurrected object and its node
 * are intact; the secondaries of reachable primaries are intact. */
#define NFIN 400
typedef struct fin {
    tenure_header header;
    tt_node *node;
    uint64_t number;
} fin;
static const tenure_type *fin_t;
static void *fin_holder[NFIN];        /* a root area: one node per fin, whose field a holds it */
static unsigned char fin_state[NFIN]; /* 0 attached, 1 moved, 2 detached */
static int fin_finalized[NFIN];
static void *resurrected[NFIN]; /* a root area */
static size_t nresurrected;

static void finalize_fin(tenure_runtime *r, void *obj) {
    (void)r;
    fin *f = obj;
    TT_CHECK(f->number < NFIN, "finalizer of a damaged object (number %" PRIu64 ")", f->number);
    fin_finalized[f->number]++;
    if (f->number % 2 == 0 && nresurrected < NFIN)
        resurrected[nresurrected++] = f; /* a root area slot: a plain store */
}

static void check_fins(const char *when) {
    for (int i = 0; i < NFIN; i++)
        TT_CHECK(fin_state[i] == 2 || fin_finalized[i] == 0, "%s: fin %d is reachable but was finalized", when, i);
}

static void test_finalization_and_dependents(void) {
    static const size_t fin_refs[] = {offsetof(fin, node)};
    fin_t = tenure_type_register(rt, &(tenure_type_desc){.name = "Fin",
                                                         .size = sizeof(fin),
                                                         .ref_offsets = fin_refs,
                                                         .ref_count = 1,
                                                         .flags = TENURE_TYPE_FINALIZABLE,
                                                         .finalize = finalize_fin});
    TT_CHECK(fin_t != NULL, "fin type");
    TT_CHECK(tenure_root_area_add(rt, fin_holder, NFIN) && tenure_root_area_add(rt, resurrected, NFIN), "areas");
    tenure_handle *dep[NFIN];
    for (int i = 0; i < NFIN; i++) {
        tt_node *holder = tenure_alloc(rt, node_t);
        TT_CHECK(holder != NULL, "allocation failed");
        fin_holder[i] = holder;
        fin *f = tenure_alloc(rt, fin_t); /* rooted at once through its holder */
        TT_CHECK(f != NULL, "allocation failed");
        f->number = (uint64_t)i;
        tenure_write_ref(rt, fin_holder[i], &((tt_node *)fin_holder[i])->a, f);
        tt_node *n = tenure_alloc(rt, node_t);
        TT_CHECK(n != NULL, "allocation failed");
        n->id = 1000000 + (uint64_t)i;
        tt_node_seal(n);
        f = (fin *)((tt_node *)fin_holder[i])->a; /* (it may have moved) */
        tenure_write_ref(rt, f, &f->node, n);
        tt_node *sec = tenure_alloc(rt, node_t);
        TT_CHECK(sec != NULL, "allocation failed");
        sec->id = 2000000 + (uint64_t)i;
        tt_node_seal(sec);
        dep[i] = tenure_handle_new_dependent(rt, fin_holder[i], sec);
        TT_CHECK(dep[i] != NULL, "dependent handle");
    }
    tt_collect(rt, 2, 0);
    tt_collect(rt, 2, 0);
    uint64_t before = stats().background_gcs;
    TT_CHECK_RESULT(tenure_collect(rt, 2, TENURE_COLLECT_NONBLOCKING), TENURE_OK);
    for (int i = 0; i < NFIN; i++) {
        tt_node *h = fin_holder[i];
        int to = (int)tt_rand_below(NFIN);
        if (i % 3 == 1 && to != i && fin_state[to] == 0 && ((tt_node *)fin_holder[to])->b == NULL) {
            tenure_write_ref(rt, fin_holder[to], &((tt_node *)fin_holder[to])->b, h->a); /* moved */
            tenure_write_ref(rt, h, &h->a, NULL);
            fin_state[i] = 1;
        } else if (i % 3 == 2) {
            tenure_write_ref(rt, h, &h->a, NULL); /* detached */
            fin_state[i] = 2;
        }
        for (int k = 0; k < 50; k++) /* allocation: foreground GCs, and the final pause */
            TT_CHECK(tenure_alloc(rt, node_t) != NULL, "allocation failed");
    }
    for (size_t k = 0; stats().background_gcs == before; k++) {
        TT_CHECK(tenure_alloc(rt, node_t) != NULL, "allocation failed");
        TT_CHECK(k < 100000000, "the background GC does not end");
    }
    tenure_run_pending_finalizers(rt);
    check_fins("after the background GC");
    tt_collect(rt, 2, 0);
    tenure_run_pending_finalizers(rt);
    check_fins("after a blocking full GC");
    size_t detached = 0;
    for (int i = 0; i < NFIN; i++) {
        if (fin_state[i] == 2) {
            detached++;
            TT_CHECK(fin_finalized[i] == 1, "detached fin %d finalized %d times", i, fin_finalized[i]);
        }
        /* every holder is a root: its dependent secondary lives, intact */
        tt_node *sec = tenure_handle_get_secondary(rt, dep[i]);
        TT_CHECK(sec && sec->id == 2000000 + (uint64_t)i && sec->check == tt_node_sum(sec), "secondary %d lost", i);
    }
    for (size_t k = 0; k < nresurrected; k++) {
        fin *f = resurrected[k];
        TT_CHECK(tenure_is_object(rt, f) && f->number < NFIN && f->node && f->node->id == 1000000 + f->number &&
                     f->node->check == tt_node_sum(f->node),
                 "resurrected fin %zu damaged", k);
    }
    TT_CHECK(tenure_verify_heap(rt) == TENURE_OK, "the heap does not verify: %s", log_.message);
    for (int i = 0; i < NFIN; i++)
        tenure_handle_free(rt, dep[i]);
    printf("  finalization: %d finalizable objects, %zu detached during background marking (each finalized "
           "once), %zu resurrected and intact, %d dependent secondaries intact\n",
           NFIN, detached, nresurrected, NFIN);
}

/* ---- the concurrent sweep ----
 *
 * A chain of old nodes and a large array of references to them (the LOH) become garbage; a
 * background GC ends, the program allocating meanwhile. While it runs, every heap walk sees
 * either all of the garbage (before the final pause) or none of it (after: dead, skipped
 * until swept, H8), never part; the verifier agrees. After it: the garbage is gone without a
 * blocking GC (gen2's objects and the LOH shrank by its size), and a new array of the same
 * size fits in the LOH's swept space. */
#define GARBAGE_ID 5000000u
static size_t walk_garbage;
static int count_garbage(void *obj, const tenure_type *type, size_t size, int generation, void *ctx) {
    (void)size, (void)generation, (void)ctx;
    if (type == node_t && ((tt_node *)obj)->id >= GARBAGE_ID)
        walk_garbage++;
    return 0;
}

/* The GC callback: a background GC's comes from the collector's thread when its sweep ends;
 * it may query (tenure_get_stats takes the instance's lock, which that thread holds). */
static unsigned background_callbacks;
static void on_gc(tenure_runtime *r, const tenure_gc_info *info, void *ctx) {
    (void)ctx;
    if (!info->background)
        return;
    tenure_stats s;
    tenure_get_stats(r, &s);
    TT_CHECK(info->generation == 2 && s.background_gcs >= 1, "background GC %" PRIu64 ": generation %d", info->index,
             info->generation);
    background_callbacks++;
}

static size_t garbage_seen(void) {
    walk_garbage = 0;
    TT_CHECK_RESULT(tenure_heap_walk(rt, count_garbage, NULL), TENURE_OK);
    return walk_garbage;
}

static void test_sweep(void) {
    static void *holder[2]; /* a root area: the chain, the array */
    static const size_t elem[] = {0};
    const tenure_type *refs_t = tt_register_struct_array(rt, "refs", sizeof(void *), elem, 1);
    TT_CHECK(tenure_root_area_add(rt, holder, 2) != NULL, "area");
    size_t n = tt_scaled(200000, 20000), bytes = n * sizeof(tt_node);
    holder[1] = tenure_alloc_array(rt, refs_t, n);
    TT_CHECK(holder[1] != NULL, "allocation failed");
    for (size_t i = 0; i < n; i++) {
        tt_node *x = tt_node_new(rt, node_t, GARBAGE_ID + i);
        tenure_write_ref(rt, x, &x->a, holder[0]);
        tt_node_seal(x);
        holder[0] = x;
        tenure_write_ref(rt, holder[1], (void **)((char *)holder[1] + sizeof(tenure_array_header)) + i, x);
    }
    tt_collect(rt, 2, 0);
    tt_collect(rt, 2, 0);
    TT_CHECK(garbage_seen() == n, "the chain is not all there");
    tenure_stats s0 = stats();
    size_t objects0 = s0.gen[2].size - s0.gen[2].free_bytes, large0 = s0.gen[3].size - s0.gen[3].free_bytes;
    holder[0] = holder[1] = NULL;
    uint64_t before = s0.background_gcs;
    tenure_set_gc_callback(rt, on_gc, NULL);
    background_callbacks = 0;
    TT_CHECK_RESULT(tenure_collect(rt, 2, TENURE_COLLECT_NONBLOCKING), TENURE_OK);
    size_t walks = 0, walks_none = 0;
    for (size_t k = 0; stats().background_gcs == before; k++) {
        TT_CHECK(tenure_alloc(rt, node_t) != NULL, "allocation failed");
        if (k % 100 == 0) {
            size_t seen = garbage_seen();
            TT_CHECK(seen == n || seen == 0, "a heap walk during the background GC saw %zu of %zu dead nodes", seen, n);
            walks++;
            walks_none += seen == 0 && stats().background_gc_in_progress;
        }
        if (k % 20000 == 0)
            TT_CHECK(tenure_verify_heap(rt) == TENURE_OK, "the heap does not verify: %s", log_.message);
        TT_CHECK(k < 100000000, "the background GC does not end");
    }
    TT_CHECK(garbage_seen() == 0, "dead nodes are still walked after the background GC");
    tenure_set_gc_callback(rt, NULL, NULL);
    TT_CHECK(background_callbacks == 1, "%u GC callbacks for one background GC", background_callbacks);
    tenure_stats s1 = stats();
    size_t objects1 = s1.gen[2].size - s1.gen[2].free_bytes, large1 = s1.gen[3].size - s1.gen[3].free_bytes;
    TT_CHECK(objects1 + bytes * 9 / 10 <= objects0, "gen2 kept its garbage: %zu bytes of objects, %zu before", objects1,
             objects0);
    size_t array_bytes = sizeof(tenure_array_header) + n * sizeof(void *);
    TT_CHECK(large1 + array_bytes <= large0, "the LOH kept its garbage: %zu bytes of objects, %zu before", large1,
             large0);
    holder[1] = tenure_alloc_array(rt, refs_t, n); /* fits in what the sweep gave back */
    TT_CHECK(holder[1] != NULL, "allocation failed");
    TT_CHECK(stats().gen[3].size <= s0.gen[3].size,
             "the LOH grew from %zu to %zu bytes for an array the sweep made room for", (size_t)s0.gen[3].size,
             (size_t)stats().gen[3].size);
    holder[1] = NULL;
    check_reachable("after the sweep test");
    printf("  sweep: %zu dead nodes and their array swept without a blocking GC; %zu heap walks during it "
           "(%zu after its final pause)\n",
           n, walks, walks_none);
}

/* An array the program allocates in the LOH while a BGC marks is allocated black: it lives
 * through that BGC though nothing refers to it (floating garbage, as in .NET), and the next
 * blocking gen2 GC frees it. Without it, the final pause traced it from the roots, and found
 * it dead. */
static size_t marker_length, marker_arrays;
static int count_marker_arrays(void *obj, const tenure_type *type, size_t size, int generation, void *ctx) {
    (void)size;
    if (type == (const tenure_type *)ctx && generation == 3 && tenure_array_length(obj) == marker_length)
        marker_arrays++;
    return 0;
}

static size_t marker_arrays_walked(const tenure_type *refs_t) {
    marker_arrays = 0;
    TT_CHECK_RESULT(tenure_heap_walk(rt, count_marker_arrays, (void *)refs_t), TENURE_OK);
    return marker_arrays;
}

static void test_large_allocated_black(void) {
    static const size_t elem[] = {0};
    const tenure_type *refs_t = tt_register_struct_array(rt, "black refs", sizeof(void *), elem, 1);
    marker_length = 30011; /* (240 KB: the LOH) */
    uint64_t before = stats().background_gcs;
    TT_CHECK_RESULT(tenure_collect(rt, 2, TENURE_COLLECT_NONBLOCKING), TENURE_OK);
    uint64_t gcs = stats().gc_count;
    TT_CHECK(stats().background_gc_in_progress, "no background GC started");
    TT_CHECK(tenure_alloc_array(rt, refs_t, marker_length) != NULL, "allocation failed"); /* dropped at once */
    TT_CHECK(stats().gc_count == gcs && stats().background_gcs == before,
             "a GC ran during the allocation: the test needs the BGC still marking");
    /* past the LOH's budget while the BGC runs: that BGC is the answer, no GC per allocation */
    size_t large = tt_scaled(1024, 256);
    for (size_t i = 0; i < large; i++)
        TT_CHECK(tenure_alloc_array(rt, refs_t, 32768) != NULL, "allocation failed");
    uint64_t gcs_large = stats().gc_count - gcs;
    TT_CHECK(gcs_large <= 2, "%zu large arrays (%zu MiB) during a background GC ran %" PRIu64 " GCs", large, large / 4,
             gcs_large);
    for (size_t k = 0; stats().background_gcs == before; k++) {
        TT_CHECK(tenure_alloc(rt, node_t) != NULL, "allocation failed");
        TT_CHECK(k < 100000000, "the background GC does not end");
    }
    TT_CHECK(marker_arrays_walked(refs_t) == 1, "an array allocated while the BGC marked was not allocated black");
    tt_collect(rt, 2, 0);
    TT_CHECK(marker_arrays_walked(refs_t) == 0, "the blocking GC after it kept the unreachable array");
    printf("  large allocated black: an unreachable LOH array allocated during marking lived through the BGC; "
           "%zu MiB of large arrays then allocated with %" PRIu64 " GCs\n",
           large / 4, gcs_large);
}

/* tenure_destroy with a BGC still marking: the BGC ends first (marking, final pause, sweep),
 * and its callback comes, so no GC started and never ended (events, listeners, callbacks). */
static void destroy_while_marking(void) {
    tenure_set_gc_callback(rt, on_gc, NULL);
    background_callbacks = 0;
    TT_CHECK_RESULT(tenure_collect(rt, 2, TENURE_COLLECT_NONBLOCKING), TENURE_OK);
    TT_CHECK(stats().background_gc_in_progress, "no background GC started");
    tenure_destroy(rt);
    TT_CHECK(background_callbacks == 1, "tenure_destroy during a background GC: %u callbacks for it",
             background_callbacks);
}

int main(void) {
    double t0 = tt_now();
    tt_rng_init("background_gc");
    tenure_config cfg;
    tt_config(&cfg);
    cfg.gcConcurrent = 1;
    cfg.GCFinalizeMode = 1; /* finalizers only in tenure_run_pending_finalizers */
    rt = tt_create(&cfg, &log_);
    node_t = tt_register_node(rt);
    for (int r = 0; r < NROOTS; r++)
        root_ix[r] = -1;
    TT_CHECK(tenure_root_area_add(rt, roots, NROOTS) != NULL, "root area");
    int n = (int)tt_scaled(60000, 3000);
    build(n);
    size_t rounds = tt_scaled(30, 4);
    uint64_t bgcs0 = stats().background_gcs;
    for (size_t round = 0; round < rounds; round++) {
        mutate_during_bgc(round);
        char when[64];
        snprintf(when, sizeof when, "after background GC round %zu", round);
        check_reachable(when);
        if (!room_for_node() || nnodes > MAX_NODES - 20000 || round % 5 == 4) {
            tt_collect(rt, 2, 0);
            check_unreachable_gone("after a blocking full GC");
        }
    }
    test_finalization_and_dependents();
    test_sweep();
    test_large_allocated_black();
    tenure_stats s = stats();
    TT_CHECK(s.background_gcs > bgcs0, "no background GC ended");
    printf("  %d nodes built, %zu rounds: %" PRIu64 " background GCs, %" PRIu64 " GCs in all, %" PRIu64
           " stores, %" PRIu64 " hiding moves, %" PRIu64 " new nodes\n",
           n, rounds, s.background_gcs - bgcs0, s.gc_count, stores, hides, news);
    TT_CHECK(log_.count == 0, "unexpected report: %s", log_.message);
    destroy_while_marking();
    return tt_finish("background_gc", t0);
}
