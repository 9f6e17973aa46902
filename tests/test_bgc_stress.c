/*
 * bgc_stress: background GC (gcConcurrent=1) against every kind of store the mutators make
 * while it marks (and, once the collector sweeps concurrently, while it sweeps), checked
 * against a shadow model after every background GC (issue 16, "Tests"; gc/background.h B1-B4).
 *
 * Each mutator thread owns a world: objects of six kinds (plain reference fields; a trace
 * callback without and with TENURE_TYPE_CONCURRENT_TRACE; finalizable; large, in the LOH;
 * pinned, in the POH), each with NREF reference slots, an id and a checksum of its id and
 * its referents' ids. The model knows each object's referents by number and which objects are
 * reachable: from a root area, strong handles, a "hand" root (a reference in transit),
 * resurrection handles and dependent handles (ephemerons). Every object has a long weak
 * handle (how the test finds it without keeping it alive; long: it follows resurrection),
 * most also a short weak handle.
 *
 * A round starts a background GC (tenure_collect(2, NONBLOCKING)) and, while
 * tenure_stats.background_gc_in_progress says it runs, every thread mutates its old graph:
 * new old->old edges, fresh young objects stored into old ones, deletions, subgraphs unlinked
 * from their roots, the classic hiding move (a subgraph's only reference read into a root,
 * the field cleared, other work done, then stored into another old object, often one near a
 * root, which the background GC has likely scanned), strong handle retargets, references
 * hidden in a strong handle and brought back, dependent handles made and retargeted, root
 * slots changed, and garbage allocated (foreground GCs). It polls until the background GC has
 * ended (background_gcs grew, background_gc_in_progress 0), then checks:
 *  - every model-reachable object is alive and intact: its weak handles are set, id,
 *    checksum and type right, its referents are the model's; strong and dependent handles
 *    hold what the model says; the heap verifies (and HeapVerify checks around every GC in
 *    the _verify variant);
 *  - a finalizer ran only for a model-unreachable finalizable object, never twice; those that
 *    resurrect (a strong handle to themselves) are intact with their subgraphs;
 *  - the GC callback sees background GCs (background=1, generation 2), one call each.
 * Every few rounds a blocking full GC, the finalizers, and another full GC: then every
 * model-unreachable object is gone (both weak handles cleared; floating garbage outlives one
 * background GC, not a full blocking GC), every dead finalizable object was finalized exactly
 * once, dependent handles with dead primaries are cleared.
 *
 * Random, seed printed (TENURE_TEST_SEED replays it for one thread; with two threads the
 * interleaving differs run to run). Arguments: --threads N (1 or 2, default 1); --blocking runs
 * the same rounds with gcConcurrent=0 (600 x 16 mutations each), to tell a background GC bug
 * from another one.
 */
#include "test_util.h"

#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdlib.h>

#define NREF 3
#define MAX_OBJS 60000
#define NROOTS 48
#define NSTRONG 16
#define NDEP 256
#define MAX_BIG 24
#define MAX_WORLDS 2

enum { K_PLAIN, K_TRACED, K_CTRACED, K_FIN, K_BIG, K_PINNED, K_COUNT };
static const char *const kind_names[K_COUNT] = {"plain", "traced", "ctraced", "finalizable", "large", "pinned"};

/* The part every kind shares, after the object's header (or array header for K_BIG). */
typedef struct body {
    void *ref[NREF];
    uint64_t id; /* world * ID_STRIDE + index + 1 */
    uint64_t sum;
} body;
typedef struct sobj {
    tenure_header header;
    body b;
} sobj;
typedef struct sbig {
    tenure_array_header header;
    body b;
    uint64_t pad[]; /* the array's elements: plain words */
} sbig;
#define ID_STRIDE 1000000ull
#define BIG_LENGTH 11000 /* 88 KB: above GCLOHThreshold's default */

typedef struct mobj {
    int kid[NREF];
    unsigned char kind, used;
    unsigned char short_ok; /* the short weak handle must be set while reachable */
    tenure_handle *loc;     /* long weak: finds the object */
    tenure_handle *shortw;  /* short weak (NULL: none) */
    tenure_handle *res;     /* set by its finalizer when it resurrected: a model root */
    int fin_runs;           /* finalizer runs */
    bool fin_seen;          /* fin_runs checked into the model */
} mobj;

typedef struct world {
    int index;
    uint64_t rng;
    mobj obj[MAX_OBJS];
    int nobjs, free_ix[MAX_OBJS], nfree, nbig;
    void *roots[NROOTS + 1]; /* the last slot is the hand: a reference in transit */
    int root_ix[NROOTS + 1];
    tenure_handle *strong[NSTRONG];
    int strong_ix[NSTRONG];
    tenure_handle *dep[NDEP];
    int dep_p[NDEP], dep_s[NDEP];
    unsigned char *mark;
    int *queue;
    uint64_t ops[16];
} world;
enum { OP_EDGE, OP_NEW, OP_DELETE, OP_HIDE_ROOT, OP_HIDE_COPY, OP_STRONG, OP_STRONG_HIDE, OP_DEP, OP_ROOT, OP_COUNT };
static const char *const op_names[OP_COUNT] = {"edges",  "new",          "deletes",   "hides via root", "hides by copy",
                                               "strong", "strong hides", "dependent", "roots"};
#define HAND NROOTS

static tt_errlog log_;
static tenure_runtime *rt;
static const tenure_type *types[K_COUNT];
static world *worlds[MAX_WORLDS];
static int nworlds = 1;
static int nobjs_target;

/* ---- per-world random numbers (tt_rand is one global stream) ---- */
static uint64_t wrand(world *w) {
    w->rng += 0x9e3779b97f4a7c15ull;
    return tt_mix64(w->rng);
}
static int wbelow(world *w, int n) { return (int)(wrand(w) % (uint64_t)n); }

/* ---- objects ---- */
static body *body_of(void *o) {
    return tenure_object_type_inline(o) == types[K_BIG] ? &((sbig *)o)->b : &((sobj *)o)->b;
}
static uint64_t sum_of(void *o) {
    body *b = body_of(o);
    uint64_t s = tt_mix64(b->id);
    for (int k = 0; k < NREF; k++)
        s = tt_mix64(s ^ (b->ref[k] ? body_of(b->ref[k])->id : 0x5151u + (uint64_t)k));
    return s;
}
static void seal(void *o) { body_of(o)->sum = sum_of(o); }

static void trace_body(void *obj, tenure_visitor *v) {
    /* passes the slots without reading them: what TENURE_TYPE_CONCURRENT_TRACE asks */
    for (int k = 0; k < NREF; k++)
        tenure_visit(v, &((sobj *)obj)->b.ref[k]);
}

/* The finalizer: counts the run; objects whose index is a multiple of 3 resurrect (a strong
 * handle to themselves, a model root from then on). */
static void finalize_obj(tenure_runtime *r, void *o) {
    body *b = body_of(o);
    uint64_t wi = (b->id - 1) / ID_STRIDE, i = (b->id - 1) % ID_STRIDE;
    TT_CHECK(wi < (uint64_t)nworlds && i < MAX_OBJS, "finalizer of a damaged object (id %" PRIu64 ")", b->id);
    mobj *m = &worlds[wi]->obj[i];
    m->fin_runs++;
    if (i % 3 == 0 && m->res == NULL) {
        m->res = tenure_handle_new(r, TENURE_HANDLE_STRONG, o);
        TT_CHECK(m->res != NULL, "resurrection handle");
    }
}

static void register_types(void) {
    static const size_t offs[NREF] = {offsetof(sobj, b.ref[0]), offsetof(sobj, b.ref[1]), offsetof(sobj, b.ref[2])};
    static const size_t big_offs[NREF] = {offsetof(sbig, b.ref[0]), offsetof(sbig, b.ref[1]), offsetof(sbig, b.ref[2])};
    tenure_type_desc d[K_COUNT] = {
        [K_PLAIN] = {.name = "bgc_plain", .size = sizeof(sobj), .ref_offsets = offs, .ref_count = NREF},
        [K_TRACED] = {.name = "bgc_traced", .size = sizeof(sobj), .trace = trace_body},
        [K_CTRACED] = {.name = "bgc_ctraced",
                       .size = sizeof(sobj),
                       .trace = trace_body,
                       .flags = TENURE_TYPE_CONCURRENT_TRACE},
        [K_FIN] = {.name = "bgc_fin",
                   .size = sizeof(sobj),
                   .ref_offsets = offs,
                   .ref_count = NREF,
                   .flags = TENURE_TYPE_FINALIZABLE,
                   .finalize = finalize_obj},
        [K_BIG] = {.name = "bgc_big",
                   .size = offsetof(sbig, pad),
                   .elem_size = 8,
                   .ref_offsets = big_offs,
                   .ref_count = NREF,
                   .flags = TENURE_TYPE_ARRAY},
        [K_PINNED] = {.name = "bgc_pinned", .size = sizeof(sobj), .ref_offsets = offs, .ref_count = NREF},
    };
    for (int k = 0; k < K_COUNT; k++) {
        types[k] = tenure_type_register(rt, &d[k]);
        TT_CHECK(types[k] != NULL, "registering %s", kind_names[k]);
    }
}

static void *obj_at(world *w, int i) { return i < 0 ? NULL : tenure_handle_get(rt, w->obj[i].loc); }

static bool room(world *w) { return w->nfree > 0 || w->nobjs < MAX_OBJS; }

static int pick_kind(world *w) {
    int r = wbelow(w, 100);
    if (r < 1 && w->nbig < MAX_BIG)
        return K_BIG;
    if (r < 4)
        return K_PINNED;
    if (r < 14)
        return K_FIN;
    if (r < 26)
        return K_TRACED;
    if (r < 38)
        return K_CTRACED;
    return K_PLAIN;
}

/* A new object (young, or in the LOH/POH), found through its handles only: the caller roots
 * it by storing it somewhere before the next allocation. */
static int new_obj(world *w) {
    TT_CHECK(room(w), "out of object numbers");
    int i = w->nfree ? w->free_ix[--w->nfree] : w->nobjs++;
    int kind = pick_kind(w);
    void *o = kind == K_BIG      ? tenure_alloc_array(rt, types[K_BIG], BIG_LENGTH)
              : kind == K_PINNED ? tenure_alloc_pinned(rt, types[K_PINNED])
                                 : tenure_alloc(rt, types[kind]);
    TT_CHECK(o != NULL, "allocation of a %s object failed", kind_names[kind]);
    body_of(o)->id = (uint64_t)w->index * ID_STRIDE + (uint64_t)i + 1;
    seal(o);
    mobj *m = &w->obj[i];
    *m = (mobj){.kid = {-1, -1, -1}, .kind = (unsigned char)kind, .used = 1};
    /* (o is an argument of each call: kept in place; no allocation in between) */
    m->loc = tenure_handle_new(rt, TENURE_HANDLE_WEAK_LONG, o);
    TT_CHECK(m->loc != NULL, "handle");
    if (kind != K_FIN && wbelow(w, 4) != 0) {
        m->shortw = tenure_handle_new(rt, TENURE_HANDLE_WEAK_SHORT, obj_at(w, i));
        TT_CHECK(m->shortw != NULL, "handle");
        m->short_ok = 1;
    }
    w->nbig += kind == K_BIG;
    w->ops[OP_NEW]++;
    return i;
}

/* Slot k of object i := object j (-1: NULL), in the heap and the model. */
static void set_ref(world *w, int i, int k, int j) {
    void *o = obj_at(w, i), *t = obj_at(w, j);
    TT_CHECK(o != NULL && (j < 0 || t != NULL), "world %d: object %d or %d lost before a store", w->index, i, j);
    tenure_write_ref(rt, o, &body_of(o)->ref[k], t);
    seal(o);
    w->obj[i].kid[k] = j;
}

static void set_root(world *w, int r, int j) {
    w->roots[r] = obj_at(w, j);
    w->root_ix[r] = j;
}

static void set_strong(world *w, int s, int j) {
    TT_CHECK_RESULT(tenure_handle_set(rt, w->strong[s], obj_at(w, j)), TENURE_OK);
    w->strong_ix[s] = j;
}

/* ---- the model's reachability ---- */
static void reach_push(world *w, int *tail, int i) {
    if (i >= 0 && !w->mark[i]) {
        w->mark[i] = 1;
        w->queue[(*tail)++] = i;
    }
}

/* mark[i] = 1 for each object the model reaches: roots, the hand, strong and resurrection
 * handles, then dependent handles to a fixed point. */
static void reach(world *w) {
    memset(w->mark, 0, (size_t)w->nobjs);
    int head = 0, tail = 0;
    for (int r = 0; r <= NROOTS; r++)
        reach_push(w, &tail, w->root_ix[r]);
    for (int s = 0; s < NSTRONG; s++)
        reach_push(w, &tail, w->strong_ix[s]);
    for (int i = 0; i < w->nobjs; i++)
        if (w->obj[i].used && w->obj[i].res && w->obj[i].fin_seen) /* (taken into the model) */
            reach_push(w, &tail, i);
    for (;;) {
        while (head < tail) {
            int i = w->queue[head++];
            for (int k = 0; k < NREF; k++)
                reach_push(w, &tail, w->obj[i].kid[k]);
        }
        for (int d = 0; d < NDEP; d++)
            if (w->dep[d] && w->dep_p[d] >= 0 && w->mark[w->dep_p[d]])
                reach_push(w, &tail, w->dep_s[d]);
        if (head == tail)
            return;
    }
}

/* A reachable object, by a short random walk from a root (-1 if the walk found none). */
static int random_reachable(world *w) {
    int i = wbelow(w, 5) == 0 ? w->strong_ix[wbelow(w, NSTRONG)] : w->root_ix[wbelow(w, NROOTS)];
    for (int steps = wbelow(w, 10); i >= 0 && steps > 0; steps--) {
        int next = w->obj[i].kid[wbelow(w, NREF)];
        if (next < 0)
            break;
        i = next;
    }
    return i;
}

/* An object near a root (the background GC scans those first: a likely scanned destination). */
static int near_root(world *w) {
    int i = w->root_ix[wbelow(w, NROOTS)];
    if (i >= 0 && wbelow(w, 2)) {
        int next = w->obj[i].kid[wbelow(w, NREF)];
        if (next >= 0)
            i = next;
    }
    return i;
}

/* ---- the mutations ---- */

static void allocate_garbage(world *w) {
    int n = 1 + wbelow(w, 6);
    for (int k = 0; k < n; k++)
        TT_CHECK(tenure_alloc(rt, types[K_PLAIN]) != NULL, "garbage allocation failed");
}

/* Finish the move whose reference sits in the hand: store it into a (likely scanned) object. */
static void drop_hand(world *w) {
    int child = w->root_ix[HAND];
    if (child < 0)
        return;
    int to = wbelow(w, 2) ? near_root(w) : random_reachable(w);
    if (to >= 0)
        set_ref(w, to, wbelow(w, NREF), child);
    else
        set_root(w, wbelow(w, NROOTS), child);
    set_root(w, HAND, -1);
}

static void mutate_once(world *w) {
    int op = wbelow(w, 100);
    int i = random_reachable(w);
    if (i < 0) {
        if (room(w))
            set_root(w, wbelow(w, NROOTS), new_obj(w));
        return;
    }
    int k = wbelow(w, NREF);
    if (op < 25) {
        set_ref(w, i, k, random_reachable(w));
        w->ops[OP_EDGE]++;
    } else if (op < 42 && room(w)) {
        int c = new_obj(w); /* may collect: i is a number, not a pointer */
        set_ref(w, i, k, c);
    } else if (op < 52) {
        set_ref(w, i, k, -1);
        w->ops[OP_DELETE]++;
    } else if (op < 62) {
        /* hide through a root: the only reference goes into the hand, the field is cleared, the
         * program goes on (allocating: the BGC runs) and later stores it elsewhere */
        int child = w->obj[i].kid[k];
        if (child >= 0 && w->root_ix[HAND] < 0) {
            set_root(w, HAND, child);
            set_ref(w, i, k, -1);
            w->ops[OP_HIDE_ROOT]++;
        } else {
            drop_hand(w);
        }
    } else if (op < 72) {
        /* hide by copy: the reference copied into an object near a root, then deleted at its
         * source (the source may not be scanned yet, the destination likely is) */
        int child = w->obj[i].kid[k];
        int to = near_root(w);
        if (child >= 0 && to >= 0 && to != i) {
            set_ref(w, to, wbelow(w, NREF), child);
            set_ref(w, i, k, -1);
            w->ops[OP_HIDE_COPY]++;
        }
    } else if (op < 79) {
        int s = wbelow(w, NSTRONG);
        int r = wbelow(w, 4);
        set_strong(w, s, r == 0 ? -1 : r == 1 && room(w) ? new_obj(w) : random_reachable(w));
        w->ops[OP_STRONG]++;
    } else if (op < 84) {
        /* a subgraph's only reference into a strong handle, and back into an object later */
        int s = wbelow(w, NSTRONG);
        int child = w->obj[i].kid[k];
        if (w->strong_ix[s] >= 0) {
            int to = near_root(w);
            if (to >= 0) {
                set_ref(w, to, wbelow(w, NREF), w->strong_ix[s]);
                set_strong(w, s, -1);
            }
        } else if (child >= 0) {
            set_strong(w, s, child);
            set_ref(w, i, k, -1);
            w->ops[OP_STRONG_HIDE]++;
        }
    } else if (op < 90) {
        int d = wbelow(w, NDEP);
        if (w->dep[d] == NULL) {
            int s = room(w) && wbelow(w, 2) ? new_obj(w) : random_reachable(w);
            int p = random_reachable(w); /* (after new_obj: numbers, then pointers) */
            if (p >= 0) {
                w->dep[d] = tenure_handle_new_dependent(rt, obj_at(w, p), obj_at(w, s));
                TT_CHECK(w->dep[d] != NULL, "dependent handle");
                w->dep_p[d] = p;
                w->dep_s[d] = s;
            } else if (s >= 0) {
                set_root(w, wbelow(w, NROOTS), s);
            }
        } else if (w->dep_p[d] >= 0) {
            int s = wbelow(w, 3) == 0 ? -1 : random_reachable(w);
            TT_CHECK_RESULT(tenure_handle_set_secondary(rt, w->dep[d], obj_at(w, s)), TENURE_OK);
            w->dep_s[d] = s;
        }
        w->ops[OP_DEP]++;
    } else if (op < 96) {
        drop_hand(w);
        allocate_garbage(w);
    } else {
        /* a root moves: its old subgraph is unlinked (garbage if nothing else reaches it) */
        set_root(w, wbelow(w, NROOTS), wbelow(w, 3) ? random_reachable(w) : -1);
        w->ops[OP_ROOT]++;
    }
    if (wbelow(w, 4) == 0)
        allocate_garbage(w);
}

/* ---- the checks ---- */
static void check_obj(world *w, int i, const char *when) {
    mobj *m = &w->obj[i];
    void *o = obj_at(w, i);
    TT_CHECK(o != NULL, "%s: world %d: %s object %d is reachable but was collected", when, w->index,
             kind_names[m->kind], i);
    TT_CHECK(tenure_is_object(rt, o), "%s: world %d: object %d at %p is not an object", when, w->index, i, o);
    TT_CHECK(tenure_object_type(rt, o) == types[m->kind], "%s: world %d: object %d: wrong type", when, w->index, i);
    body *b = body_of(o);
    TT_CHECK(b->id == (uint64_t)w->index * ID_STRIDE + (uint64_t)i + 1, "%s: world %d: object %d has id %" PRIu64, when,
             w->index, i, b->id);
    for (int k = 0; k < NREF; k++)
        TT_CHECK(b->ref[k] == obj_at(w, m->kid[k]), "%s: world %d: %s object %d slot %d: %p, expected object %d (%p)",
                 when, w->index, kind_names[m->kind], i, k, b->ref[k], m->kid[k], obj_at(w, m->kid[k]));
    TT_CHECK(b->sum == sum_of(o), "%s: world %d: object %d: bad checksum", when, w->index, i);
    if (m->shortw && m->short_ok)
        TT_CHECK(tenure_handle_get(rt, m->shortw) == o,
                 "%s: world %d: the short weak handle of reachable object %d "
                 "was cleared",
                 when, w->index, i);
    if (m->kind == K_PINNED)
        TT_CHECK(tenure_object_generation(rt, o) == 4, "%s: pinned object %d left the POH", when, i);
    if (m->kind == K_BIG)
        TT_CHECK(tenure_object_generation(rt, o) == 3, "%s: large object %d left the LOH", when, i);
}

/* Finalizers that ran since the last call: only for unreachable objects, once; a resurrected
 * object's short weak handle may have been cleared with those of its subgraph (they were
 * unreachable when the GC queued it), so they are no longer checked. */
static void take_finalizations(world *w, const char *when) {
    bool any = false;
    for (int i = 0; i < w->nobjs; i++) {
        mobj *m = &w->obj[i];
        TT_CHECK(m->fin_runs <= 1, "%s: world %d: object %d finalized %d times", when, w->index, i, m->fin_runs);
        if (m->used && m->fin_runs == 1 && !m->fin_seen) {
            TT_CHECK(!w->mark[i], "%s: world %d: reachable object %d was finalized", when, w->index, i);
            m->fin_seen = true;
            any |= m->res != NULL;
        }
    }
    if (!any)
        return;
    unsigned char *before = malloc((size_t)w->nobjs);
    TT_CHECK(before != NULL, "malloc");
    memcpy(before, w->mark, (size_t)w->nobjs);
    reach(w);
    for (int i = 0; i < w->nobjs; i++)
        if (w->mark[i] && !before[i])
            w->obj[i].short_ok = 0;
    free(before);
}

static void check_world(world *w, const char *when) {
    reach(w);
    tenure_run_pending_finalizers(rt);
    take_finalizations(w, when);
    for (int i = 0; i < w->nobjs; i++)
        if (w->mark[i])
            check_obj(w, i, when);
    for (int s = 0; s < NSTRONG; s++)
        TT_CHECK(tenure_handle_get(rt, w->strong[s]) == obj_at(w, w->strong_ix[s]), "%s: strong handle %d", when, s);
    for (int r = 0; r <= NROOTS; r++)
        TT_CHECK(w->roots[r] == obj_at(w, w->root_ix[r]), "%s: root %d", when, r);
    for (int d = 0; d < NDEP; d++)
        if (w->dep[d] && w->dep_p[d] >= 0 && w->mark[w->dep_p[d]]) {
            TT_CHECK(tenure_handle_get(rt, w->dep[d]) == obj_at(w, w->dep_p[d]), "%s: dependent %d's primary", when, d);
            TT_CHECK(tenure_handle_get_secondary(rt, w->dep[d]) == obj_at(w, w->dep_s[d]),
                     "%s: world %d: dependent %d's secondary (object %d)", when, w->index, d, w->dep_s[d]);
        }
}

/* After full blocking GCs with the finalizers run between them: the unreachable are gone. */
static void check_dead_gone(world *w, const char *when) {
    reach(w);
    for (int d = 0; d < NDEP; d++)
        if (w->dep[d] && w->dep_p[d] >= 0 && !w->mark[w->dep_p[d]]) {
            TT_CHECK(tenure_handle_get(rt, w->dep[d]) == NULL && tenure_handle_get_secondary(rt, w->dep[d]) == NULL,
                     "%s: world %d: dependent %d with a dead primary (object %d) not cleared", when, w->index, d,
                     w->dep_p[d]);
            TT_CHECK_RESULT(tenure_handle_free(rt, w->dep[d]), TENURE_OK);
            w->dep[d] = NULL;
        }
    for (int i = 0; i < w->nobjs; i++) {
        mobj *m = &w->obj[i];
        if (!m->used || w->mark[i])
            continue;
        TT_CHECK(tenure_handle_get(rt, m->loc) == NULL, "%s: world %d: unreachable %s object %d alive after full GCs",
                 when, w->index, kind_names[m->kind], i);
        TT_CHECK(m->shortw == NULL || tenure_handle_get(rt, m->shortw) == NULL,
                 "%s: world %d: short weak handle of dead object %d not cleared", when, w->index, i);
        TT_CHECK(m->kind != K_FIN || m->fin_runs == 1, "%s: world %d: dead finalizable object %d finalized %d times",
                 when, w->index, i, m->fin_runs);
        TT_CHECK_RESULT(tenure_handle_free(rt, m->loc), TENURE_OK);
        if (m->shortw)
            TT_CHECK_RESULT(tenure_handle_free(rt, m->shortw), TENURE_OK);
        w->nbig -= m->kind == K_BIG;
        m->used = 0;
        w->free_ix[w->nfree++] = i;
    }
}

/* ---- rounds ---- */
static pthread_barrier_t barrier;
static uint64_t round_start_bgcs; /* background_gcs before the round's BGC (set by thread 0) */
static uint64_t bgc_callbacks;    /* GC callbacks with background = 1 */
static uint64_t bgc_callback_bad;
static pthread_mutex_t cb_lock = PTHREAD_MUTEX_INITIALIZER;

static void on_gc(tenure_runtime *r, const tenure_gc_info *info, void *ctx) {
    (void)r;
    (void)ctx;
    if (getenv("TENURE_TEST_VERBOSE"))
        printf("  GC %" PRIu64 ": generation %d, reason %u, background %d, compacted 0x%x\n", info->index,
               info->generation, info->reason, info->background, (unsigned)info->compacted);
    if (!info->background)
        return;
    pthread_mutex_lock(&cb_lock);
    bgc_callbacks++;
    bgc_callback_bad += info->generation != 2;
    pthread_mutex_unlock(&cb_lock);
}

/* Wait at the barrier in a blocking section: another thread may collect meanwhile. */
static void wait_all(void) {
    tenure_blocking_enter(rt);
    pthread_barrier_wait(&barrier);
    tenure_blocking_leave(rt);
}

static bool blocking_mode; /* --blocking: the same rounds with gcConcurrent=0 (to tell BGC bugs from others) */

static bool bgc_over(uint64_t before) {
    tenure_stats s = tt_stats(rt);
    if (blocking_mode)
        return false;
    return s.background_gcs > before && !s.background_gc_in_progress;
}

/* Mutate while the round's background GC runs, then poll (allocations: foreground GCs and
 * the final pause) until it ended. */
static void mutate_round(world *w, size_t round) {
    uint64_t before = __atomic_load_n(&round_start_bgcs, __ATOMIC_ACQUIRE);
    double t0 = tt_now();
    size_t k = 0;
    for (; blocking_mode ? k < 600 : !bgc_over(before); k++) {
        for (int j = 0; j < 16; j++)
            mutate_once(w);
        if (!room(w) || k % 512 == 511)
            tt_collect(rt, 0, 0); /* no allocation, no GC: an induced gen0 GC lets it end */
        if (k % 64 == 63)
            sched_yield(); /* the background GC thread shares 2 CPUs with the mutators */
        TT_CHECK(tt_now() - t0 < 90, "round %zu: the background GC does not end (seed %" PRIu64 ")", round,
                 tt_rng_seed_value);
    }
    drop_hand(w);
}

static void round_checks(size_t round, bool full) {
    char when[96];
    snprintf(when, sizeof when, "after background GC round %zu", round);
    for (int t = 0; t < nworlds; t++)
        check_world(worlds[t], when);
    TT_CHECK(tenure_verify_heap(rt) == TENURE_OK, "%s: the heap does not verify: %s", when, log_.message);
    if (!full)
        return;
    snprintf(when, sizeof when, "after full blocking GCs (round %zu)", round);
    tt_collect(rt, 2, 0);
    for (int t = 0; t < nworlds; t++)
        check_world(worlds[t], when); /* runs the finalizers, takes resurrections into the model */
    tt_collect(rt, 2, 0);
    TT_CHECK_EQ_U64(tenure_run_pending_finalizers(rt), 0);
    for (int t = 0; t < nworlds; t++) {
        check_world(worlds[t], when);
        check_dead_gone(worlds[t], when);
    }
}

static size_t nrounds;

static bool crowded(void) {
    for (int t = 0; t < nworlds; t++)
        if (worlds[t]->nobjs - worlds[t]->nfree > MAX_OBJS * 2 / 3)
            return true;
    return false;
}

/* Ballast outside the model: ref arrays of small objects, old, so that background marking
 * takes a while (the mutators run meanwhile); checked by the heap verifier only. */
static void *ballast[1];
static void build_ballast(size_t bytes) {
    const tenure_type *arr = tt_register_ref_array(rt);
    size_t per = 256, n = bytes / (per * (sizeof(sobj) + sizeof(void *))) + 1;
    TT_CHECK(tenure_root_area_add(rt, ballast, 1) != NULL, "root area");
    ballast[0] = tenure_alloc_array(rt, arr, n);
    TT_CHECK(ballast[0] != NULL, "ballast");
    for (size_t a = 0; a < n; a++) {
        void *inner = tenure_alloc_array(rt, arr, per);
        TT_CHECK(inner != NULL, "ballast");
        tenure_write_ref(rt, ballast[0], &tt_refs(ballast[0])[a], inner);
        for (size_t e = 0; e < per; e++) {
            void *leaf = tenure_alloc(rt, types[K_PLAIN]);
            TT_CHECK(leaf != NULL, "ballast");
            inner = tt_refs(ballast[0])[a]; /* (it may have moved) */
            tenure_write_ref(rt, inner, &tt_refs(inner)[e], leaf);
            if (e > 0) /* a chain through the leaves too: marking it is sequential */
                tenure_write_ref(rt, leaf, &((sobj *)leaf)->b.ref[0], tt_refs(inner)[e - 1]);
        }
    }
}

/* Thread 0 starts each round's BGC and checks; the others mutate beside it. */
static void run_rounds(world *w) {
    for (size_t round = 0; round < nrounds; round++) {
        if (w->index == 0) {
            tenure_stats s = tt_stats(rt);
            uint64_t before = s.background_gcs;
            __atomic_store_n(&round_start_bgcs, before, __ATOMIC_RELEASE);
            TT_CHECK_RESULT(tenure_collect(rt, 2, TENURE_COLLECT_NONBLOCKING), TENURE_OK);
            s = tt_stats(rt);
            TT_CHECK(blocking_mode || s.background_gc_in_progress || s.background_gcs > before,
                     "round %zu: no background GC started", round);
        }
        wait_all();
        mutate_round(w, round);
        wait_all(); /* every world is quiet: thread 0 checks them all */
        if (w->index == 0) {
            uint64_t cbs = __atomic_load_n(&bgc_callbacks, __ATOMIC_ACQUIRE);
            round_checks(round, round % 3 == 2 || round + 1 == nrounds || crowded());
            TT_CHECK((blocking_mode || round == 0 || cbs > 0) && bgc_callback_bad == 0,
                     "round %zu: %" PRIu64 " background GC callbacks, %" PRIu64 " not of generation 2", round, cbs,
                     bgc_callback_bad);
        }
        wait_all();
    }
}

static void *thread_main(void *arg) {
    world *w = arg;
    TT_CHECK_RESULT(tenure_thread_attach(rt), TENURE_OK);
    run_rounds(w);
    TT_CHECK_RESULT(tenure_thread_detach(rt), TENURE_OK);
    return NULL;
}

/* An old graph: trees under the roots, cross edges, promoted to gen2 by two full GCs. */
static void build(world *w) {
    for (int r = 0; r <= NROOTS; r++)
        w->root_ix[r] = -1;
    for (int s = 0; s < NSTRONG; s++) {
        w->strong[s] = tenure_handle_new(rt, TENURE_HANDLE_STRONG, NULL);
        TT_CHECK(w->strong[s] != NULL, "strong handle");
        w->strong_ix[s] = -1;
    }
    TT_CHECK(tenure_root_area_add(rt, w->roots, NROOTS + 1) != NULL, "root area");
    for (int r = 0; r < NROOTS; r++)
        set_root(w, r, new_obj(w));
    while (w->nobjs < nobjs_target) {
        int c = new_obj(w);
        int p = random_reachable(w);
        set_ref(w, p >= 0 ? p : w->root_ix[0], wbelow(w, NREF), c);
    }
    for (int k = 0; k < nobjs_target / 4; k++) {
        int p = random_reachable(w), c = random_reachable(w);
        if (p >= 0)
            set_ref(w, p, wbelow(w, NREF), c);
    }
}

int main(int argc, char **argv) {
    double t0 = tt_now();
    for (int a = 1; a < argc; a++)
        if (strcmp(argv[a], "--threads") == 0 && a + 1 < argc)
            nworlds = atoi(argv[++a]);
        else if (strcmp(argv[a], "--blocking") == 0)
            blocking_mode = true;
    TT_CHECK(nworlds >= 1 && nworlds <= MAX_WORLDS, "--threads 1 or 2");
    uint64_t seed = tt_rng_init(nworlds > 1 ? "bgc_stress_threads" : "bgc_stress");
    tenure_config cfg;
    tt_config(&cfg);
    cfg.gcConcurrent = !blocking_mode;
    cfg.GCFinalizeMode = 1; /* finalizers only in tenure_run_pending_finalizers (the model counts them) */
    rt = tt_create(&cfg, &log_);
    log_.fatal = 1;
    register_types();
    tenure_set_gc_callback(rt, on_gc, NULL);
    nobjs_target = (int)tt_scaled(40000, 3000);
    nrounds = tt_scaled(30, 8);
    for (int t = 0; t < nworlds; t++) {
        worlds[t] = calloc(1, sizeof(world));
        TT_CHECK(worlds[t] != NULL, "malloc");
        worlds[t]->index = t;
        worlds[t]->rng = seed * 7919 + (uint64_t)t;
        worlds[t]->mark = calloc(MAX_OBJS, 1);
        worlds[t]->queue = calloc(MAX_OBJS, sizeof(int));
        TT_CHECK(worlds[t]->mark && worlds[t]->queue, "malloc");
        build(worlds[t]);
    }
    build_ballast(tt_scaled(16u << 20, 1u << 20));
    tt_collect(rt, 2, 0);
    tt_collect(rt, 2, 0);
    for (int t = 0; t < nworlds; t++)
        check_world(worlds[t], "after building");
    TT_CHECK(pthread_barrier_init(&barrier, NULL, (unsigned)nworlds) == 0, "barrier");
    tenure_stats s0 = tt_stats(rt);
    pthread_t th[MAX_WORLDS];
    for (int t = 1; t < nworlds; t++)
        TT_CHECK(pthread_create(&th[t], NULL, thread_main, worlds[t]) == 0, "thread");
    run_rounds(worlds[0]);
    for (int t = 1; t < nworlds; t++) {
        tenure_blocking_enter(rt);
        pthread_join(th[t], NULL);
        tenure_blocking_leave(rt);
    }
    tenure_stats s = tt_stats(rt);
    TT_CHECK(bgc_callbacks == s.background_gcs, "%" PRIu64 " background GC callbacks, %" PRIu64 " background GCs",
             bgc_callbacks, s.background_gcs);
    TT_CHECK(blocking_mode || s.background_gcs - s0.background_gcs >= nrounds,
             "%" PRIu64 " background GCs in %zu rounds", s.background_gcs - s0.background_gcs, nrounds);
    printf("  %d world(s) of %d objects, %zu rounds: %" PRIu64 " background GCs, %" PRIu64 " GCs in all, %" PRIu64
           " finalizers run\n",
           nworlds, nobjs_target, nrounds, s.background_gcs - s0.background_gcs, s.gc_count - s0.gc_count,
           s.finalizers_run);
    for (int t = 0; t < nworlds; t++) {
        printf("  world %d:", t);
        for (int op = 0; op < OP_COUNT; op++)
            printf(" %s %" PRIu64 "%s", op_names[op], worlds[t]->ops[op], op + 1 < OP_COUNT ? "," : "\n");
    }
    TT_CHECK(log_.count == 0, "unexpected report: %s", log_.message);
    tenure_destroy(rt);
    for (int t = 0; t < nworlds; t++) {
        free(worlds[t]->mark);
        free(worlds[t]->queue);
        free(worlds[t]);
    }
    return tt_finish(nworlds > 1 ? "bgc_stress_threads" : "bgc_stress", t0);
}
