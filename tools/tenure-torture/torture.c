/*
 * tenure-torture: a model-based random tester of the tenure collector (public API only).
 *
 * A program is a seeded random sequence of mutator operations on one fresh instance:
 * allocations of many types and sizes (fixed objects with 0..4 references, reference arrays,
 * arrays of {tag, reference} records, byte arrays, large objects, pinned-heap objects),
 * reference stores through tenure_write_ref, root changes (a root reference array held by a
 * strong handle, shadow frames, registered root areas, a root scanner), handles of every
 * supported kind (strong, pinned, weak short, weak long), pins and unpins, induced GCs of
 * random generations and flags, frozen segments whose objects refer to heap objects.
 *
 * A reference model outside the heap (objects by number: type, length, size, payload seed,
 * references by number, last known address and generation) predicts exactly what every GC
 * keeps: what the roots reach, plus what any object of an older, not condemned generation
 * refers to (dead or alive: the card table makes those references roots of an ephemeral GC).
 * After every GC (the GC callback) the heap is traversed from the real roots and compared
 * with the model: every live object is where its references say, of its type, size, length,
 * with its number and payload intact; pinned, pinned-heap, frozen and not condemned objects
 * did not move; objects of swept generations did not move; generations never decrease; weak
 * handles are cleared exactly when the model says their object was reclaimed; objects do not
 * overlap. After every induced GC and every N allocations a full check adds tenure_verify_heap,
 * every existing object's payload and references, every root and handle, the handle count,
 * and a heap walk that must list exactly the objects the model says exist.
 *
 * Lifetime services (GCFinalizeMode=1: finalizers run only inside tenure_run_pending_finalizers
 * and tenure_wait_for_pending_finalizers, on this thread, so runs are deterministic):
 *  - finalizable objects. The model mirrors the collector's registry (in order: appended at
 *    allocation and reregistration, swap-removed by tenure_suppress_finalize) and its ready
 *    queue. Each GC it predicts which registered objects of condemned generations are found
 *    unreachable and queued (in registry order), that they and what they reach survive, that
 *    weak short handles to them are cleared and weak long ones are not (a weak long "tracker"
 *    handle per finalizable object also gives the model their addresses), the stats'
 *    FinalizationPromotedCount/Size. Every finalizer call must be the head of the model's
 *    queue (suppressed entries skipped), inside a run call, never nested; a run returns the
 *    model's count and leaves nothing pending. A finalizer (decided from the seed, the object
 *    number and its run count) may resurrect its object into a scanner slot, reregister it,
 *    allocate (which may collect while it runs: the object stays queued), and store the new
 *    object into its object.
 *  - dependent handles (ephemerons, to a fixed point, before and after finalization marking;
 *    both objects cleared when the primary dies), variable handles (weak short / weak long /
 *    strong / pinned), refcounted handles (the model holds per-object counts and answers the
 *    callback), async pinned handles (the object and a reference array's elements do not
 *    move), SizedRef handles (strong; after a full GC the bytes of all SizedRef handles add up
 *    to the bytes of the union of their graphs, each is at most its own graph's bytes and
 *    exactly that when its graph shares nothing with another SizedRef graph).
 *  - memory pressure (the sum; an add induces at most one GC, a gen2 one of reason Induced,
 *    never before 8 MiB were added since the last gen2 GC), identity hashes (the same at every
 *    query of an object, across moves; the table's size after a GC is the number of live hashed
 *    objects).
 *
 * Every program is run in a child process (a crash or a hang is a failure with the seed and
 * the op index). See usage() for the options.
 */
#define _GNU_SOURCE
#include "tenure.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* ------------------------------------------------------------------------------------------
 * Random numbers (splitmix64)
 * ---------------------------------------------------------------------------------------- */
static uint64_t mix64(uint64_t z) {
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}
typedef struct rng { uint64_t s; } rng;
static uint64_t rnext(rng *r) {
    r->s += 0x9e3779b97f4a7c15ull;
    return mix64(r->s);
}
static uint64_t rbelow(rng *r, uint64_t n) { return n ? rnext(r) % n : 0; }
static uint64_t rrange(rng *r, uint64_t lo, uint64_t hi) { return lo + rbelow(r, hi - lo + 1); }
static int rchance(rng *r, unsigned percent) { return rbelow(r, 100) < percent; }

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ------------------------------------------------------------------------------------------
 * Operation kinds (--drop names them)
 * ---------------------------------------------------------------------------------------- */
#define OPS(X)                                                                                 \
    X(ALLOC, "alloc", 200, 120)     /* a small fixed object to a random place */              \
    X(ARRAY, "array", 80, 60)       /* a small reference / record / byte array */             \
    X(LARGE, "large", 15, 140)      /* a large object (>= the LOH threshold) */               \
    X(PINNED, "pinned", 20, 30)     /* an object on the pinned object heap */                 \
    X(CHAIN, "chain", 30, 30)       /* a chain / tree of new objects */                       \
    X(GARBAGE, "garbage", 60, 20)   /* a burst of short-lived objects linked to each other */ \
    X(LINK, "link", 150, 100)       /* store a reference (or NULL) into a reachable object */ \
    X(UNLINK, "unlink", 50, 60)     /* clear a reference */                                   \
    X(ROOT, "root", 80, 90)         /* set or drop a frame / area / scanner / root-array slot */ \
    X(HANDLE, "handle", 80, 60)     /* new / set / free handles of every supported kind */    \
    X(PIN, "pin", 30, 25)           /* pin (new pinned handle) or unpin (free one) */         \
    X(FRAME, "frame", 25, 20)       /* push or pop a shadow frame */                          \
    X(AREA, "area", 10, 10)         /* remove or add a root area */                           \
    X(COLLECT, "collect", 30, 30)   /* an induced GC of a random generation and flags */      \
    X(FROZEN, "frozen", 3, 3)       /* register a frozen segment */                           \
    X(PAYLOAD, "payload", 30, 15)   /* rewrite an object's payload */                         \
    X(MISC, "misc", 10, 10)         /* queries, unsupported handle kinds, bad flags */        \
    X(VERIFY, "verify", 10, 10)     /* a full check now */                                    \
    X(FINAL, "final", 30, 15)       /* finalizable objects (some garbage at once, some weakly held) */ \
    X(FINOP, "finop", 25, 15)       /* run / wait for finalizers, suppress, reregister */    \
    X(DEPEND, "depend", 25, 15)     /* dependent handles: new, set primary / secondary, free */ \
    X(XHANDLE, "xhandle", 25, 15)   /* variable, refcounted, async pinned, sized ref handles */ \
    X(PRESSURE, "pressure", 6, 6)   /* add / remove memory pressure */                      \
    X(HASH, "hash", 10, 6)          /* identity hashes */

enum {
#define OP_ENUM(name, text, w, woom) OP_##name,
    OPS(OP_ENUM)
#undef OP_ENUM
        OP_COUNT
};
static const char *const op_names[] = {
#define OP_NAME(name, text, w, woom) text,
    OPS(OP_NAME)
#undef OP_NAME
};
static const unsigned op_weight[2][OP_COUNT] = {
#define OP_W(name, text, w, woom) w,
    {OPS(OP_W)},
#undef OP_W
#define OP_WO(name, text, w, woom) woom,
    {OPS(OP_WO)},
#undef OP_WO
};

/* ------------------------------------------------------------------------------------------
 * Parameters and the result a program reports to the parent (shared memory)
 * ---------------------------------------------------------------------------------------- */
typedef struct params {
    uint64_t seed;
    long ops;
    long verify_every; /* allocations between full checks (0: only after induced GCs) */
    uint64_t hard_limit;
    uint32_t drop_mask; /* op kinds that are skipped */
    int verbose;
    int trace;    /* print every op and GC */
    int paranoid; /* a full check after every op */
    int inject;   /* self-test: 1 stores without the barrier, 2 weak handles made strong,
                     3 weak short handles to finalizable objects made weak long */
} params;

typedef struct shres {
    volatile long op;      /* the op being run (ops: the final phase; -1: setup) */
    volatile uint64_t gcs; /* GCs so far */
    volatile uint64_t nomem;
    volatile uint64_t allocs;
    volatile int failed;
    volatile int done;
    char msg[600]; /* the first difference */
} shres;

/* ------------------------------------------------------------------------------------------
 * Types
 * ---------------------------------------------------------------------------------------- */
enum { K_FIX, K_REFARR, K_RECARR, K_BYTES };
typedef struct ttype {
    const tenure_type *t;
    int kind;
    unsigned k, p;                /* K_FIX: references, payload words */
    unsigned ref_off, pay_off;    /* K_FIX: byte offsets of the first reference / payload word */
    size_t size;                  /* K_FIX: bytes */
    int fin;                      /* TENURE_TYPE_FINALIZABLE */
    char name[24];
} ttype;
#define MAX_TYPES 40

#define IDW(j) (((uint64_t)0x7e57u << 48) | (uint64_t)(j))

/* payload word i of object j with seed s */
static uint64_t pw(uint32_t j, uint64_t s, uint64_t i) {
    return mix64((uint64_t)j * 0x9e3779b97f4a7c15ull ^ mix64(s + i * 0x632be59bd9b4e019ull));
}

/* byte-array payload word k (cheap: large arrays are long) */
static inline uint64_t bw(uint64_t base, uint64_t k) {
    uint64_t x = base + k * 0x9e3779b97f4a7c15ull;
    return x ^ (x >> 29);
}

/* trace callbacks: layout B (header, id, payload[2], refs[k]) */
#define TRACE_FN(K)                                                                            \
    static void trace_##K(void *obj, tenure_visitor *v) {                                      \
        void **refs = (void **)((char *)obj + 32);                                             \
        for (int i = 0; i < K; i++) tenure_visit(v, &refs[i]);                                 \
    }
TRACE_FN(1)
TRACE_FN(2)
TRACE_FN(3)
TRACE_FN(4)
static const tenure_trace_fn trace_fns[5] = {NULL, trace_1, trace_2, trace_3, trace_4};
/* a record array {tag, ref} traced by a callback */
static void trace_recs(void *obj, tenure_visitor *v) {
    size_t n = tenure_array_length(obj);
    char *d = tenure_array_data(obj);
    for (size_t i = 0; i < n; i++) tenure_visit(v, (void **)(d + 16 * i + 8));
}

/* ------------------------------------------------------------------------------------------
 * The model
 * ---------------------------------------------------------------------------------------- */
enum { F_LARGE = 1, F_POH = 2, F_FROZEN = 4 };
typedef struct mobj {
    uintptr_t addr;     /* current address (valid while the object exists) */
    uintptr_t new_addr; /* during a GC check */
    uint32_t *refs;     /* nrefs object numbers (0: NULL) */
    uint32_t nrefs;
    uint16_t tix;
    uint8_t flags;
    uint8_t reclaimed;
    int gen; /* last known generation (0..4) */
    size_t length, size;
    uint64_t seed;
    uint32_t mark, mark2; /* epochs (checks) */
    uint32_t rmark;       /* reach_epoch: strongly reachable (operand choice) */
    long born;            /* op index */
    uint32_t hash;        /* identity hash (0: never asked) */
    uint32_t sref_stamp;  /* SizedRef graphs (full GCs) */
    int sref_owner;
    uint16_t fin_runs;    /* finalizer runs of this object */
    uint8_t rc;           /* refcount (refcounted handles ask it) */
    uint8_t registered;   /* in the model's finalization registry */
    tenure_handle *trk;   /* finalizable objects: a weak long handle (the model's own) */
} mobj;

#define FRAME_SLOTS 12
#define MAX_FRAMES 6
typedef struct mframe {
    tenure_frame f;
    void *vars[FRAME_SLOTS];
    void **slots[FRAME_SLOTS];
    uint32_t obj[FRAME_SLOTS];
    unsigned n;
} mframe;

#define AREA_SLOTS 24
typedef struct marea {
    tenure_root_area *ra;
    void *slots[AREA_SLOTS];
    uint32_t obj[AREA_SLOTS];
    int active;
} marea;

#define SCAN_SLOTS 16
#define MAX_HANDLES 96
typedef struct mhandle {
    tenure_handle *h;
    int kind;
    uint32_t obj;
    int active;
    int vkind;                  /* TENURE_HANDLE_VARIABLE: its variable kind */
    uint32_t sec;               /* TENURE_HANDLE_DEPENDENT: the secondary */
    uint64_t sized_lo, sized_hi;/* TENURE_HANDLE_SIZED_REF: what tenure_handle_sized_ref_bytes may say */
    uint64_t sized_own;         /* its own graph's bytes at the last full GC */
    int sized_overlap;
} mhandle;
#define MAX_SIZED 4

#define ROOTARR_LEN 48
#define MAX_FROZEN_SEGS 4

typedef struct program_state {
    tenure_runtime *rt;
    tenure_config cfg;
    const params *P;
    shres *sh;
    long op;
    int oom_mode;
    /* types */
    ttype types[MAX_TYPES];
    int ntypes, nfix, tix_refarr, tix_recarr, tix_recarr_tr, tix_bytes;
    /* objects: 1..nobj-1 */
    mobj *objs;
    uint32_t nobj, capobj;
    /* roots */
    mframe *frames[MAX_FRAMES];
    int nframes;
    marea areas[2];
    void *scan_slots[SCAN_SLOTS];
    uint32_t scan_obj[SCAN_SLOTS];
    tenure_root_scanner *scanner;
    mhandle handles[MAX_HANDLES];
    uint32_t rootarr; /* held by handles[0] */
    void *frozen_mem[MAX_FROZEN_SEGS];
    int nfrozen_segs;
    uint32_t *frozen;
    uint32_t nfrozen, capfrozen;
    /* the strongly reachable objects (for choosing operands) */
    uint32_t *reach;
    uint32_t nreach, capreach;
    int reach_dirty;
    uint32_t reach_epoch;
    uint32_t epoch;
    /* work */
    uint32_t *queue;
    uint32_t capqueue;
    /* GC expectations */
    uint64_t gcs;
    int induced, induced_gen, induced_seen;
    unsigned induced_flags;
    /* finalization: the registry and the ready queue (0: suppressed entry), as the collector's */
    int tix_fin[3];
    uint32_t *reg, nreg, capreg;
    uint32_t *fq, nfq, capfq, fqhead;
    uint32_t *fobjs, nfobjs, capfobjs; /* finalizable objects that have a tracker */
    int in_run, in_fin, final_phase, destroying, wait_gc, pressure_call, pressure_gcs;
    uint64_t ran_in_run, fin_runs_total, queued_total;
    /* memory pressure */
    uint64_t pressure, press_since;
    /* errors */
    tenure_result expect_err;
    int got_err;
    int diffs;
    uint64_t allocs, since_verify, nomem;
    int in_fork; /* die: _exit in a child process, exit with --no-fork */
    /* scratch of the checks: the work queue's fill and scan positions, the marking of the
     * model's live set (mk_c: the condemned generations; mk_count: add the bytes marked to
     * mk_bytes), what the modelled GC queued for finalization, the union of the SizedRef graphs */
    uint32_t qn, qdone;
    int mk_count, mk_c;
    uint64_t mk_bytes;
    uint64_t gc_queued_n, gc_queued_bytes;
    uint64_t sized_union;
    uint32_t *srcq, srcn, srccap;          /* objects reached in the real heap, to scan */
    tenure_handle **trk_dead;              /* trackers of reclaimed objects, freed after the GC */
    uint32_t ntrk_dead, captrk_dead;
    uintptr_t *hkeys;                      /* the full check's address -> object number table */
    uint32_t *hvals;
    size_t hcap;
    int walk_unexpected;                   /* the heap walk's visitor */
    const char *walk_where;
    char desc[4][160];                     /* odesc: four descriptions may be in use at once */
    int desc_turn;
} program_state;

/* ------------------------------------------------------------------------------------------
 * Failure reporting
 * ---------------------------------------------------------------------------------------- */

static void print_config(program_state *s, FILE *f) {
    const tenure_config *c = &s->cfg;
    fprintf(f,
            "  config: GCRegionSize=%" PRIu64 " GCgen0size=%" PRIu64 " GCgen1size=%" PRIu64
            " GCgen0MaxBudget=%" PRIu64 " GCCompactMode=%u GCLOHCompact=%u GCMarkStackSize=%" PRIu64
            " GCRetainRegions=%u GCHeapHardLimit=%" PRIu64 " HeapVerify=%u GCStress=%u\n",
            c->GCRegionSize, c->GCgen0size, c->GCgen1size, c->GCgen0MaxBudget, c->GCCompactMode,
            c->GCLOHCompact, c->GCMarkStackSize, c->GCRetainRegions, c->GCHeapHardLimit, c->HeapVerify,
            c->GCStress);
}

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static void diff(program_state *s, const char *fmt, ...) {
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (s->diffs == 0 && s->sh) {
        snprintf(s->sh->msg, sizeof s->sh->msg, "%s", buf);
        s->sh->failed = 1;
    }
    if (s->diffs < 25)
        fprintf(stderr, "seed %" PRIu64 " op %ld: %s\n", s->P->seed, s->op, buf);
    else if (s->diffs == 25)
        fprintf(stderr, "seed %" PRIu64 " op %ld: (more differences not shown)\n", s->P->seed, s->op);
    s->diffs++;
}

static void die(program_state *s, const char *where) {
    fprintf(stderr, "seed %" PRIu64 " op %ld: FAILED %s (%d differences, %" PRIu64 " GCs)\n", s->P->seed,
            s->op, where, s->diffs, s->gcs);
    print_config(s, stderr);
    fflush(stderr);
    if (s->sh) {
        s->sh->gcs = s->gcs;
        s->sh->failed = 1;
    }
    if (s->in_fork)
        _exit(1);
    exit(1);
}

static void check_end(program_state *s, const char *where) {
    if (s->diffs)
        die(s, where);
}

static void hook(tenure_runtime *rt, tenure_result r, const char *fn, const char *msg, void *ctx) {
    (void)rt;
    program_state *s = ctx;
    if (s->expect_err != TENURE_OK && r == s->expect_err) {
        s->got_err++;
        return;
    }
    diff(s, "unexpected error %d (%s) from %s: %s", (int)r, tenure_strerror(r), fn ? fn : "?", msg ? msg : "?");
}

static void *xcalloc(size_t n, size_t sz) {
    void *p = calloc(n ? n : 1, sz);
    if (!p) {
        fprintf(stderr, "tenure-torture: out of memory (model)\n");
        exit(2);
    }
    return p;
}
static void *xrealloc(void *p, size_t sz) {
    p = realloc(p, sz ? sz : 1);
    if (!p) {
        fprintf(stderr, "tenure-torture: out of memory (model)\n");
        exit(2);
    }
    return p;
}

/* ------------------------------------------------------------------------------------------
 * Object helpers
 * ---------------------------------------------------------------------------------------- */
static const char *odesc(program_state *s, uint32_t j) {
    char *b = s->desc[s->desc_turn++ & 3];
    if (j == 0) {
        snprintf(b, 160, "NULL");
        return b;
    }
    mobj *o = &s->objs[j];
    ttype *t = &s->types[o->tix];
    char d[sizeof s->desc[0]]; /* t->name lies in *s too: format into a buffer of our own */
    snprintf(d, sizeof d, "#%u (%s%s%s%s, %zu bytes, gen %d, born op %ld%s)", j, t->name,
             o->flags & F_LARGE ? " large" : "", o->flags & F_POH ? " pinned-heap" : "",
             o->flags & F_FROZEN ? " frozen" : "", o->size, o->gen, o->born,
             j == s->rootarr ? ", the root array" : "");
    memcpy(b, d, sizeof d);
    return b;
}

static size_t arr_size(int kind, size_t len) {
    switch (kind) {
    case K_REFARR: return 16 + 8 * len;
    case K_RECARR: return 16 + 16 * len;
    case K_BYTES: return (16 + len + 7) & ~(size_t)7;
    }
    return 0;
}

static void **slot_at(program_state *s, uintptr_t base, int tix, unsigned i) {
    ttype *t = &s->types[tix];
    char *p = (char *)base;
    switch (t->kind) {
    case K_FIX: return (void **)(p + t->ref_off + 8 * i);
    case K_REFARR: return (void **)(p + 16 + 8 * (size_t)i);
    default: return (void **)(p + 16 + 16 * (size_t)i + 8);
    }
}

static int gen_class(const mobj *o) {
    if (o->flags & F_FROZEN)
        return 3;
    return o->gen >= 2 ? 2 : o->gen;
}

/* write the number and payload of object j at p */
static void init_payload(program_state *s, uint32_t j, char *p) {
    mobj *o = &s->objs[j];
    ttype *t = &s->types[o->tix];
    switch (t->kind) {
    case K_FIX:
        *(uint64_t *)(p + 8) = IDW(j);
        for (unsigned w = 0; w < t->p; w++) ((uint64_t *)(p + t->pay_off))[w] = pw(j, o->seed, w);
        break;
    case K_RECARR:
        for (size_t i = 0; i < o->length; i++) *(uint64_t *)(p + 16 + 16 * i) = pw(j, o->seed, i);
        break;
    case K_BYTES: {
        unsigned char *d = (unsigned char *)p + 16;
        uint64_t id = IDW(j), base = pw(j, o->seed, 0);
        memcpy(d, &id, 8);
        size_t off = 8;
        for (; off + 8 <= o->length; off += 8) {
            uint64_t w = bw(base, off / 8);
            memcpy(d + off, &w, 8);
        }
        if (off < o->length) {
            uint64_t w = bw(base, off / 8);
            memcpy(d + off, &w, o->length - off);
        }
        break;
    }
    default: break;
    }
}

/* check that p is object j (type, size, length, number, payload). level 2: everything, all of
 * the payload; 1: everything, a sample of large payloads; 0 (an object that did not move since it
 * was last checked): its length, number and a sample of its payload, read without asking the
 * collector. Returns 0 (after a diff) if p cannot be read as object j. */
static int check_obj(program_state *s, uint32_t j, uintptr_t pa, int level, const char *where) {
    mobj *o = &s->objs[j];
    ttype *t = &s->types[o->tix];
    char *p = (char *)pa;
    int full = level >= 2;
    if (level >= 1) {
        if (!tenure_is_object(s->rt, p)) {
            diff(s, "%s: %s at %p is not an object", where, odesc(s, j), (void *)p);
            return 0;
        }
        const tenure_type *ty = tenure_object_type(s->rt, p);
        if (ty != t->t) {
            diff(s, "%s: %s at %p has type %s", where, odesc(s, j), (void *)p, ty ? tenure_type_name(ty) : "?");
            return 0;
        }
        size_t sz = tenure_object_size(s->rt, p);
        if (sz != o->size) {
            diff(s, "%s: %s at %p has size %zu", where, odesc(s, j), (void *)p, sz);
            return 0;
        }
    }
    if (t->kind != K_FIX && tenure_array_length(p) != o->length) {
        diff(s, "%s: %s at %p has length %zu, expected %zu", where, odesc(s, j), (void *)p, tenure_array_length(p),
             o->length);
        return 0;
    }
    int sample = !full && o->size > 4096;
    switch (t->kind) {
    case K_FIX: {
        uint64_t id = *(uint64_t *)(p + 8);
        if (id != IDW(j)) {
            diff(s, "%s: %s at %p holds the number of #%" PRIu64 " (word %#" PRIx64 ")", where, odesc(s, j), (void *)p,
                 (uint64_t)(id & 0xffffffffffffull), id);
            return 0;
        }
        for (unsigned w = 0; w < t->p; w++)
            if (((uint64_t *)(p + t->pay_off))[w] != pw(j, o->seed, w)) {
                diff(s, "%s: %s at %p: payload word %u is %#" PRIx64 ", expected %#" PRIx64, where, odesc(s, j),
                     (void *)p, w, ((uint64_t *)(p + t->pay_off))[w], pw(j, o->seed, w));
                return 1;
            }
        break;
    }
    case K_RECARR:
        for (size_t i = 0; i < o->length; i++) {
            if (sample && i == 16 && o->length > 17)
                i = o->length - 1;
            uint64_t tag = *(uint64_t *)(p + 16 + 16 * i);
            if (tag != pw(j, o->seed, i)) {
                diff(s, "%s: %s at %p: record %zu tag is %#" PRIx64 ", expected %#" PRIx64, where, odesc(s, j), (void *)p,
                     i, tag, pw(j, o->seed, i));
                return i == 0 ? 0 : 1;
            }
        }
        break;
    case K_BYTES: {
        unsigned char *d = (unsigned char *)p + 16;
        uint64_t id;
        memcpy(&id, d, 8);
        if (id != IDW(j)) {
            diff(s, "%s: %s at %p holds the number of #%" PRIu64 " (word %#" PRIx64 ")", where, odesc(s, j), (void *)p,
                 (uint64_t)(id & 0xffffffffffffull), id);
            return 0;
        }
        uint64_t base = pw(j, o->seed, 0);
        for (size_t off = 8; off < o->length; off += 8) {
            if (sample && off == 8 * 16 && o->length > 8 * 18)
                off = ((o->length - 1) / 8) * 8;
            uint64_t w = bw(base, off / 8), got = 0;
            size_t n = o->length - off < 8 ? o->length - off : 8;
            memcpy(&got, d + off, n);
            if (n < 8)
                w &= ((uint64_t)1 << (8 * n)) - 1;
            if (got != w) {
                diff(s, "%s: %s at %p: payload bytes at %zu are %#" PRIx64 ", expected %#" PRIx64, where, odesc(s, j),
                     (void *)p, off, got, w);
                return 1;
            }
        }
        break;
    }
    default: break;
    }
    return 1;
}

/* ------------------------------------------------------------------------------------------
 * Model bookkeeping
 * ---------------------------------------------------------------------------------------- */
static uint32_t model_new(program_state *s, int tix, uint8_t flags, size_t length, size_t size, uintptr_t addr, int gen,
                          uint64_t seed) {
    if (s->nobj == s->capobj) {
        s->capobj = s->capobj ? s->capobj * 2 : 1024;
        s->objs = xrealloc(s->objs, s->capobj * sizeof *s->objs);
    }
    uint32_t j = s->nobj++;
    mobj *o = &s->objs[j];
    memset(o, 0, sizeof *o);
    ttype *t = &s->types[tix];
    o->tix = (uint16_t)tix;
    o->flags = flags;
    o->length = length;
    o->size = size;
    o->addr = addr;
    o->gen = gen;
    o->seed = seed;
    o->born = s->op;
    o->nrefs = t->kind == K_FIX ? t->k : (t->kind == K_REFARR || t->kind == K_RECARR) ? (uint32_t)length : 0;
    o->refs = o->nrefs ? xcalloc(o->nrefs, sizeof(uint32_t)) : NULL;
    return j;
}

static void queue_reserve(program_state *s, uint32_t n) {
    if (n > s->capqueue) {
        s->capqueue = n + n / 2 + 64;
        s->queue = xrealloc(s->queue, s->capqueue * sizeof *s->queue);
    }
}

static int is_fin(program_state *s, uint32_t j) { return j && s->types[s->objs[j].tix].fin; }

/* what a handle behaves as in the next GC (the collector works this out at each GC's start) */
static int h_eff(program_state *s, const mhandle *m) {
    switch (m->kind) {
    case TENURE_HANDLE_VARIABLE: return m->vkind;
    case TENURE_HANDLE_REFCOUNTED:
        return m->obj && s->objs[m->obj].rc ? TENURE_HANDLE_STRONG : TENURE_HANDLE_WEAK_SHORT;
    default: return m->kind;
    }
}
/* keeps its object alive */
static int h_strong(program_state *s, const mhandle *m) {
    int e = h_eff(s, m);
    return e == TENURE_HANDLE_STRONG || e == TENURE_HANDLE_PINNED || e == TENURE_HANDLE_SIZED_REF ||
           e == TENURE_HANDLE_ASYNC_PINNED;
}

static void vec_push(uint32_t **v, uint32_t *n, uint32_t *cap, uint32_t x) {
    if (*n == *cap) {
        *cap = *cap * 2 + 64;
        *v = xrealloc(*v, *cap * sizeof **v);
    }
    (*v)[(*n)++] = x;
}

/* the registry (tn_finalize_register / tenure_reregister_for_finalize append) */
static void model_register(program_state *s, uint32_t j) {
    if (s->objs[j].registered)
        return;
    s->objs[j].registered = 1;
    vec_push(&s->reg, &s->nreg, &s->capreg, j);
}

/* tenure_suppress_finalize, as documented: the finalizer will not run until reregistered (the
 * registration goes, and so does a queued run that has not started) */
static void model_suppress(program_state *s, uint32_t j) {
    if (s->objs[j].registered) {
        for (uint32_t i = 0; i < s->nreg; i++)
            if (s->reg[i] == j) {
                s->reg[i] = s->reg[--s->nreg];
                break;
            }
        s->objs[j].registered = 0;
    }
    for (uint32_t i = s->fqhead; i < s->nfq; i++)
        if (s->fq[i] == j) s->fq[i] = 0;
    s->reach_dirty = 1;
}

/* visit the model's roots: f(object) for every strongly held object */
static void model_roots(program_state *s, void (*f)(program_state *, uint32_t)) {
    for (int i = 0; i < s->nframes; i++)
        for (unsigned k = 0; k < s->frames[i]->n; k++)
            if (s->frames[i]->obj[k]) f(s, s->frames[i]->obj[k]);
    for (int a = 0; a < 2; a++)
        if (s->areas[a].active)
            for (int k = 0; k < AREA_SLOTS; k++)
                if (s->areas[a].obj[k]) f(s, s->areas[a].obj[k]);
    for (int k = 0; k < SCAN_SLOTS; k++)
        if (s->scan_obj[k]) f(s, s->scan_obj[k]);
    for (int h = 0; h < MAX_HANDLES; h++)
        if (s->handles[h].active && s->handles[h].obj && h_strong(s, &s->handles[h]))
            f(s, s->handles[h].obj);
    for (uint32_t i = 0; i < s->nfrozen; i++) f(s, s->frozen[i]);
    /* the ready queue (the entry whose finalizer runs included) */
    for (uint32_t i = s->fqhead; i < s->nfq; i++)
        if (s->fq[i]) f(s, s->fq[i]);
}

static void reach_mark(program_state *s, uint32_t j) {
    mobj *o = &s->objs[j];
    if (o->rmark == s->reach_epoch)
        return;
    o->rmark = s->reach_epoch;
    s->queue[s->qn++] = j;
}

/* the strongly reachable objects, into s->reach */
static void compute_reach(program_state *s) {
    s->reach_epoch++;
    queue_reserve(s, s->nobj + 16);
    s->qn = 0;
    model_roots(s, reach_mark);
    uint32_t q = 0;
    for (;;) {
        for (; q < s->qn; q++) {
            mobj *o = &s->objs[s->queue[q]];
            for (uint32_t i = 0; i < o->nrefs; i++)
                if (o->refs[i]) reach_mark(s, o->refs[i]);
        }
        /* secondaries of reachable primaries */
        for (int h = 0; h < MAX_HANDLES; h++) {
            mhandle *m = &s->handles[h];
            if (m->active && m->kind == TENURE_HANDLE_DEPENDENT && m->obj && m->sec &&
                s->objs[m->obj].rmark == s->reach_epoch)
                reach_mark(s, m->sec);
        }
        if (q == s->qn)
            break;
    }
    if (s->qn > s->capreach) {
        s->capreach = s->qn + s->qn / 2 + 64;
        s->reach = xrealloc(s->reach, s->capreach * sizeof *s->reach);
    }
    memcpy(s->reach, s->queue, s->qn * sizeof *s->reach);
    s->nreach = s->qn;
    s->reach_dirty = 0;
}

static void reach_add(program_state *s, uint32_t j) {
    if (s->reach_dirty)
        return;
    if (s->nreach == s->capreach) {
        s->capreach = s->capreach * 2 + 64;
        s->reach = xrealloc(s->reach, s->capreach * sizeof *s->reach);
    }
    s->reach[s->nreach++] = j;
    s->objs[j].rmark = s->reach_epoch;
}

static int is_reachable(program_state *s, uint32_t j) {
    if (s->reach_dirty)
        compute_reach(s);
    return j && s->objs[j].rmark == s->reach_epoch;
}

static uint32_t pick_reachable(program_state *s, rng *r) {
    if (s->reach_dirty)
        compute_reach(s);
    return s->nreach ? s->reach[rbelow(r, s->nreach)] : 0;
}
/* a reachable object or NULL */
static uint32_t pick_target(program_state *s, rng *r, unsigned null_percent) {
    if (rchance(r, null_percent))
        return 0;
    return pick_reachable(s, r);
}
/* a reachable object with reference slots (the root array if none found) */
static uint32_t pick_source(program_state *s, rng *r) {
    for (int tries = 0; tries < 12; tries++) {
        uint32_t j = pick_reachable(s, r);
        if (j && s->objs[j].nrefs)
            return j;
    }
    return s->rootarr;
}

/* store a reference through the barrier and in the model */
static void set_ref(program_state *s, uint32_t src, unsigned slot, uint32_t dst) {
    mobj *from = &s->objs[src];
    if (slot >= from->nrefs || from->reclaimed) {
        diff(s, "tool bug: set_ref(s, %s, slot %u)", odesc(s, src), slot);
        die(s, "set_ref");
    }
    void *val = dst ? (void *)s->objs[dst].addr : NULL;
    if (s->P->inject == 1)
        *slot_at(s, from->addr, from->tix, slot) = val; /* self-test: a store that misses the barrier */
    else
        tenure_write_ref(s->rt, (void *)from->addr, slot_at(s, from->addr, from->tix, slot), val);
    if (from->refs[slot] && from->refs[slot] != dst)
        s->reach_dirty = 1;
    from->refs[slot] = dst;
}

/* ------------------------------------------------------------------------------------------
 * The check after every GC (from the GC callback)
 * ---------------------------------------------------------------------------------------- */
static void live_mark(program_state *s, uint32_t j) {
    mobj *o = &s->objs[j];
    if (o->mark2 == s->epoch)
        return;
    o->mark2 = s->epoch;
    if (s->mk_count && gen_class(o) <= s->mk_c)
        s->mk_bytes += o->size;
    s->queue[s->qn++] = j;
}
static void live_close(program_state *s) {
    for (; s->qdone < s->qn; s->qdone++) {
        mobj *o = &s->objs[s->queue[s->qdone]];
        for (uint32_t i = 0; i < o->nrefs; i++)
            if (o->refs[i]) live_mark(s, o->refs[i]);
    }
}
/* survives the GC being modelled (condemned generations <= s->mk_c) */
static int m_alive(program_state *s, uint32_t j) {
    mobj *o = &s->objs[j];
    return gen_class(o) > s->mk_c || o->mark2 == s->epoch;
}
/* DependentHandle: secondaries of surviving primaries, to a fixed point */
static void model_dep_fix(program_state *s) {
    for (int changed = 1; changed;) {
        changed = 0;
        for (int h = 0; h < MAX_HANDLES; h++) {
            mhandle *m = &s->handles[h];
            if (m->active && m->kind == TENURE_HANDLE_DEPENDENT && m->obj && m->sec && m_alive(s, m->obj) &&
                !m_alive(s, m->sec)) {
                live_mark(s, m->sec);
                live_close(s);
                changed = 1;
            }
        }
    }
}

/* SizedRef (full GCs): each handle's graph (frozen objects are not in the heap: neither counted
 * nor traced); the union of all graphs; which graphs share objects */
static void model_sized(program_state *s) {
    s->sized_union = 0;
    queue_reserve(s, s->nobj + 16);
    for (int h = 0; h < MAX_HANDLES; h++) {
        mhandle *m = &s->handles[h];
        if (m->active && m->kind == TENURE_HANDLE_SIZED_REF) m->sized_overlap = 0;
    }
    for (int h = 0; h < MAX_HANDLES; h++) {
        mhandle *m = &s->handles[h];
        if (!m->active || m->kind != TENURE_HANDLE_SIZED_REF)
            continue;
        uint64_t own = 0;
        s->epoch++;
        uint32_t n = 0;
        if (m->obj && !(s->objs[m->obj].flags & F_FROZEN)) {
            s->objs[m->obj].mark = s->epoch;
            s->queue[n++] = m->obj;
        }
        for (uint32_t q = 0; q < n; q++) {
            uint32_t j = s->queue[q];
            mobj *o = &s->objs[j];
            own += o->size;
            if (o->sref_stamp != (uint32_t)s->gcs) {
                o->sref_stamp = (uint32_t)s->gcs;
                o->sref_owner = h;
                s->sized_union += o->size;
            } else if (o->sref_owner != h) {
                m->sized_overlap = 1;
                s->handles[o->sref_owner].sized_overlap = 1;
            }
            for (uint32_t i = 0; i < o->nrefs; i++) {
                uint32_t t = o->refs[i];
                if (t && s->objs[t].mark != s->epoch && !(s->objs[t].flags & F_FROZEN)) {
                    s->objs[t].mark = s->epoch;
                    s->queue[n++] = t;
                }
            }
        }
        m->sized_own = own;
    }
    for (int h = 0; h < MAX_HANDLES; h++) {
        mhandle *m = &s->handles[h];
        if (m->active && m->kind == TENURE_HANDLE_SIZED_REF) {
            m->sized_hi = m->sized_own;
            m->sized_lo = m->sized_overlap ? 0 : m->sized_own;
        }
    }
}

static void check_sized(program_state *s, const char *where) {
    for (int h = 0; h < MAX_HANDLES; h++) {
        mhandle *m = &s->handles[h];
        if (!m->active || m->kind != TENURE_HANDLE_SIZED_REF)
            continue;
        uint64_t b = tenure_handle_sized_ref_bytes(s->rt, m->h);
        if (b < m->sized_lo || b > m->sized_hi)
            diff(s, "%s: SizedRef handle %d to %s says %" PRIu64 " bytes, the model expected [%" PRIu64 ", %" PRIu64
                 "] (its graph at the last full GC: %" PRIu64 " bytes%s)",
                 where, h, odesc(s, m->obj), b, m->sized_lo, m->sized_hi, m->sized_own,
                 m->sized_overlap ? ", shared with another SizedRef graph" : "");
    }
}

static const char *hkind_name(int k) {
    static const char *const n[] = {"weak short", "weak long", "strong", "pinned", "variable",
                                    "refcounted", "dependent", "async pinned", "sized ref"};
    return k >= 0 && k <= 8 ? n[k] : "?";
}

static void src_push(program_state *s, uint32_t j) {
    if (s->srcn == s->srccap) {
        s->srccap = s->srccap * 2 + 256;
        s->srcq = xrealloc(s->srcq, s->srccap * sizeof *s->srcq);
    }
    s->srcq[s->srcn++] = j;
}

/* an edge from a real slot holding p that the model says holds object j */
static void edge(program_state *s, const char *what, unsigned idx, uint32_t from, uint32_t j, void *p) {
    if (j == 0) {
        if (p != NULL)
            diff(s, "after GC %" PRIu64 ": %s %u%s%s holds %p, the model says NULL", s->gcs, what, idx,
                 from ? " of " : "", from ? odesc(s, from) : "", p);
        return;
    }
    mobj *o = &s->objs[j];
    if (o->reclaimed) {
        diff(s, "after GC %" PRIu64 ": model inconsistency: %s %u refers to reclaimed %s", s->gcs, what, idx, odesc(s, j));
        return;
    }
    if (o->new_addr) {
        if ((uintptr_t)p != o->new_addr)
            diff(s, "after GC %" PRIu64 ": %s %u%s%s holds %p, expected %s at %#" PRIxPTR, s->gcs, what, idx,
                 from ? " of " : "", from ? odesc(s, from) : "", p, odesc(s, j), o->new_addr);
        return;
    }
    if (p == NULL) {
        diff(s, "after GC %" PRIu64 ": %s %u%s%s is NULL, expected %s (was at %#" PRIxPTR ")", s->gcs, what, idx,
             from ? " of " : "", from ? odesc(s, from) : "", odesc(s, j), o->addr);
        return;
    }
    if (o->mark2 != s->epoch)
        diff(s, "after GC %" PRIu64 ": model inconsistency: %s not live but referenced", s->gcs, odesc(s, j));
    o->new_addr = (uintptr_t)p;
    src_push(s, j);
}


static void gc_check(program_state *s, const tenure_gc_info *info) {
    int c = info->generation;
    if (c == 2)
        model_sized(s);
    /* 1. the model's live set, in the collector's marking order: the roots (the ready queue
     *    and every handle that is strong now included), what existing objects of generations
     *    older than the condemned ones refer to (cards), closed over references; dependent
     *    handles to a fixed point; weak short handles of dead objects are cleared; registered
     *    finalizable objects found dead are queued and marked through; dependent handles again;
     *    weak long handles of dead objects are cleared, dependent handles of dead primaries too */
    s->epoch++;
    queue_reserve(s, s->nobj + 16);
    s->qn = s->qdone = 0;
    s->mk_count = 0;
    s->mk_c = c;
    model_roots(s, live_mark);
    for (uint32_t j = 1; j < s->nobj; j++) {
        mobj *o = &s->objs[j];
        if (o->reclaimed || gen_class(o) <= c)
            continue;
        for (uint32_t i = 0; i < o->nrefs; i++)
            if (o->refs[i]) live_mark(s, o->refs[i]);
    }
    live_close(s);
    model_dep_fix(s);
    for (int h = 0; h < MAX_HANDLES; h++) {
        mhandle *m = &s->handles[h];
        if (m->active && m->obj && h_eff(s, m) == TENURE_HANDLE_WEAK_SHORT && !m_alive(s, m->obj))
            m->obj = 0;
    }
    uint32_t kept = 0, first = s->nfq;
    for (uint32_t i = 0; i < s->nreg; i++) {
        uint32_t j = s->reg[i];
        if (m_alive(s, j)) {
            s->reg[kept++] = j;
            continue;
        }
        s->objs[j].registered = 0;
        vec_push(&s->fq, &s->nfq, &s->capfq, j);
        if (s->P->trace)
            fprintf(stderr, "  GC %" PRIu64 " queues %s\n", s->gcs, odesc(s, j));
    }
    s->nreg = kept;
    s->gc_queued_n = s->nfq - first;
    s->queued_total += s->gc_queued_n;
    s->mk_count = 1;
    s->mk_bytes = 0;
    for (uint32_t i = first; i < s->nfq; i++) live_mark(s, s->fq[i]);
    live_close(s);
    s->mk_count = 0;
    s->gc_queued_bytes = s->mk_bytes;
    if (s->gc_queued_n)
        model_dep_fix(s);
    for (int h = 0; h < MAX_HANDLES; h++) {
        mhandle *m = &s->handles[h];
        if (!m->active)
            continue;
        if (m->kind == TENURE_HANDLE_DEPENDENT) {
            if (m->obj && !m_alive(s, m->obj))
                m->obj = m->sec = 0;
            else if (!m->obj && m->sec && !m_alive(s, m->sec))
                m->sec = 0; /* no primary keeps it: it dies (the handle must not dangle) */
        } else if (m->obj && h_eff(s, m) == TENURE_HANDLE_WEAK_LONG && !m_alive(s, m->obj))
            m->obj = 0;
    }
    /* 2. traverse the real heap from the real roots */
    s->srcn = 0;
    for (uint32_t j = 1; j < s->nobj; j++) {
        mobj *o = &s->objs[j];
        o->new_addr = 0;
        if (!o->reclaimed && gen_class(o) > c) {
            o->new_addr = o->addr; /* not condemned: must not move */
            src_push(s, j);
        }
    }
    for (int i = 0; i < s->nframes; i++)
        for (unsigned k = 0; k < s->frames[i]->n; k++) edge(s, "frame slot", k, 0, s->frames[i]->obj[k], s->frames[i]->vars[k]);
    for (int a = 0; a < 2; a++)
        if (s->areas[a].active)
            for (unsigned k = 0; k < AREA_SLOTS; k++) edge(s, "root area slot", k, 0, s->areas[a].obj[k], s->areas[a].slots[k]);
    for (unsigned k = 0; k < SCAN_SLOTS; k++) edge(s, "scanner slot", k, 0, s->scan_obj[k], s->scan_slots[k]);
    /* every handle (weak ones: cleared exactly when the model says), every secondary */
    char what[96];
    for (unsigned h = 0; h < MAX_HANDLES; h++) {
        mhandle *m = &s->handles[h];
        if (!m->active)
            continue;
        snprintf(what, sizeof what, "%s handle%s", hkind_name(m->kind),
                 m->kind == TENURE_HANDLE_VARIABLE || m->kind == TENURE_HANDLE_REFCOUNTED
                     ? (h_eff(s, m) == TENURE_HANDLE_STRONG ? " (strong now)"
                        : h_eff(s, m) == TENURE_HANDLE_PINNED ? " (pinned now)"
                        : h_eff(s, m) == TENURE_HANDLE_WEAK_LONG ? " (weak long now)" : " (weak short now)")
                     : "");
        edge(s, what, h, 0, m->obj, tenure_handle_get(s->rt, m->h));
        if (m->kind == TENURE_HANDLE_DEPENDENT)
            edge(s, "the secondary of dependent handle", h, 0, m->sec, tenure_handle_get_secondary(s->rt, m->h));
    }
    /* finalizable objects through their weak long trackers: the queued ones are found here */
    for (uint32_t i = 0; i < s->nfobjs; i++) {
        uint32_t j = s->fobjs[i];
        snprintf(what, sizeof what, "the weak long handle that tracks %.60s:", odesc(s, j));
        edge(s, what, j, 0, m_alive(s, j) ? j : 0, tenure_handle_get(s->rt, s->objs[j].trk));
    }
    snprintf(what, sizeof what, "after GC %" PRIu64, s->gcs);
    for (uint32_t q = 0; q < s->srcn; q++) {
        uint32_t j = s->srcq[q];
        mobj *o = &s->objs[j];
        if (!check_obj(s, j, o->new_addr, o->new_addr != o->addr, what))
            continue;
        for (uint32_t i = 0; i < o->nrefs; i++) {
            void *p = *slot_at(s, o->new_addr, o->tix, i);
            edge(s, "slot", i, j, o->refs[i], p);
        }
    }
    /* 3. movement, generations, reclamation */
    int loh_move_ok = (info->compacted & 8) != 0;
    s->epoch++; /* pinned marks in mark: pinned handles (variable ones too), async pinned handles
                  and the elements of their reference arrays */
    for (unsigned h = 0; h < MAX_HANDLES; h++) {
        mhandle *m = &s->handles[h];
        if (!m->active || !m->obj)
            continue;
        int e = h_eff(s, m);
        if (e == TENURE_HANDLE_PINNED || e == TENURE_HANDLE_ASYNC_PINNED)
            s->objs[m->obj].mark = s->epoch;
        if (e == TENURE_HANDLE_ASYNC_PINNED && s->objs[m->obj].tix == s->tix_refarr)
            for (uint32_t i = 0; i < s->objs[m->obj].nrefs; i++)
                if (s->objs[m->obj].refs[i]) s->objs[s->objs[m->obj].refs[i]].mark = s->epoch;
    }
    uint32_t live_epoch = s->epoch - 1;
    for (uint32_t j = 1; j < s->nobj; j++) {
        mobj *o = &s->objs[j];
        if (o->reclaimed)
            continue;
        int live = o->mark2 == live_epoch;
        if (gen_class(o) > c)
            continue; /* checked by the edges (new_addr preset) */
        if (!live) {
            if (!s->reach_dirty && o->rmark == s->reach_epoch)
                diff(s, "tool bug: reclaimed %s is in the list of reachable objects", odesc(s, j));
            if (o->registered)
                diff(s, "model inconsistency: reclaimed %s is registered for finalization", odesc(s, j));
            o->reclaimed = 1;
            free(o->refs);
            o->refs = NULL;
            o->nrefs = 0;
            if (o->trk) {
                if (s->ntrk_dead == s->captrk_dead) {
                    s->captrk_dead = s->captrk_dead * 2 + 64;
                    s->trk_dead = xrealloc(s->trk_dead, s->captrk_dead * sizeof *s->trk_dead);
                }
                s->trk_dead[s->ntrk_dead++] = o->trk;
                o->trk = NULL;
            }
            continue;
        }
        if (!o->new_addr) {
            diff(s, "after GC %" PRIu64 ": live %s was never reached", s->gcs, odesc(s, j));
            continue;
        }
        if (o->new_addr != o->addr) {
            if (o->mark == s->epoch)
                diff(s, "after GC %" PRIu64 ": %s held by a pinned or async pinned handle moved from %#" PRIxPTR
                     " to %#" PRIxPTR, s->gcs, odesc(s, j), o->addr, o->new_addr);
            else if (o->flags & F_POH)
                diff(s, "after GC %" PRIu64 ": pinned-heap %s moved from %#" PRIxPTR " to %#" PRIxPTR, s->gcs, odesc(s, j),
                     o->addr, o->new_addr);
            else if (o->gen == 3 && !loh_move_ok)
                diff(s, "after GC %" PRIu64 ": large %s moved from %#" PRIxPTR " to %#" PRIxPTR
                     " although the LOH was not compacted (mask %#x)",
                     s->gcs, odesc(s, j), o->addr, o->new_addr, (unsigned)info->compacted);
            else if (o->gen <= 2 && !(info->compacted & (1 << o->gen)))
                diff(s, "after GC %" PRIu64 ": %s moved from %#" PRIxPTR " to %#" PRIxPTR
                     " although its generation was swept (compacted mask %#x)",
                     s->gcs, odesc(s, j), o->addr, o->new_addr, (unsigned)info->compacted);
        }
        int g = tenure_object_generation(s->rt, (void *)o->new_addr);
        if (o->gen <= 2 ? (g < o->gen || g > 2) : g != o->gen)
            diff(s, "after GC %" PRIu64 " (gen %d): %s is now in generation %d", s->gcs, c, odesc(s, j), g);
        o->addr = o->new_addr;
        o->gen = g;
    }
    /* the finalizable objects that still exist */
    uint32_t nf = 0;
    for (uint32_t i = 0; i < s->nfobjs; i++)
        if (!s->objs[s->fobjs[i]].reclaimed) s->fobjs[nf++] = s->fobjs[i];
    s->nfobjs = nf;
    /* 4. the collector's own figures: finalization, SizedRef, identity hashes */
    tenure_stats st;
    tenure_get_stats(s->rt, &st);
    if (st.finalization_promoted_count != s->gc_queued_n || st.finalization_promoted_bytes != s->gc_queued_bytes)
        diff(s, "after GC %" PRIu64 " (gen %d): %" PRIu64 " objects (%" PRIu64 " bytes) were kept for finalization, the "
             "model says %" PRIu64 " queued (%" PRIu64 " bytes marked from them)",
             s->gcs, c, st.finalization_promoted_count, st.finalization_promoted_bytes, s->gc_queued_n, s->gc_queued_bytes);
    uint64_t hashed = 0;
    for (uint32_t j = 1; j < s->nobj; j++) hashed += s->objs[j].hash && !s->objs[j].reclaimed;
    if (st.sync_blocks != hashed)
        diff(s, "after GC %" PRIu64 ": the identity hash table has %" PRIu64 " entries, the model has %" PRIu64
             " live hashed objects", s->gcs, st.sync_blocks, hashed);
    if (c == 2) {
        uint64_t sum = 0;
        for (int h = 0; h < MAX_HANDLES; h++)
            if (s->handles[h].active && s->handles[h].kind == TENURE_HANDLE_SIZED_REF)
                sum += tenure_handle_sized_ref_bytes(s->rt, s->handles[h].h);
        if (sum != s->sized_union)
            diff(s, "after GC %" PRIu64 ": the SizedRef handles say %" PRIu64 " bytes in all, the union of their graphs "
                 "has %" PRIu64, s->gcs, sum, s->sized_union);
        snprintf(what, sizeof what, "after GC %" PRIu64, s->gcs);
        check_sized(s, what);
    }
}

static int cmp_addr(const void *a, const void *b, void *ctx) {
    const program_state *s = ctx;
    uintptr_t x = s->objs[*(const uint32_t *)a].addr, y = s->objs[*(const uint32_t *)b].addr;
    return x < y ? -1 : x > y;
}

/* existing objects do not overlap */
static void check_overlap(program_state *s, const char *where) {
    queue_reserve(s, s->nobj + 16);
    uint32_t n = 0;
    for (uint32_t j = 1; j < s->nobj; j++)
        if (!s->objs[j].reclaimed) s->queue[n++] = j;
    qsort_r(s->queue, n, sizeof *s->queue, cmp_addr, s);
    for (uint32_t i = 1; i < n; i++) {
        mobj *a = &s->objs[s->queue[i - 1]], *b = &s->objs[s->queue[i]];
        if (a->addr + a->size > b->addr)
            diff(s, "%s: %s at %#" PRIxPTR " overlaps %s at %#" PRIxPTR, where, odesc(s, s->queue[i - 1]), a->addr,
                 odesc(s, s->queue[i]), b->addr);
    }
}

static void gc_callback(tenure_runtime *rt, const tenure_gc_info *info, void *ctx) {
    (void)rt;
    program_state *s = ctx;
    s->gcs++;
    if (s->sh)
        s->sh->gcs = s->gcs;
    if (s->P->trace)
        fprintf(stderr, "  GC %" PRIu64 ": gen %d reason %u compacted %#x\n", s->gcs, info->generation, info->reason,
                (unsigned)info->compacted);
    if (info->index != s->gcs)
        diff(s, "GC callback: index %" PRIu64 ", expected %" PRIu64, info->index, s->gcs);
    if (info->generation < 0 || info->generation > 2) {
        diff(s, "GC callback: condemned generation %d", info->generation);
        die(s, "in the GC callback");
    }
    if (s->wait_gc) {
        s->wait_gc = 0;
        if (info->generation != 2 || info->reason != 1)
            diff(s, "tenure_wait_for_pending_finalizers: its GC condemned generation %d with reason %u (expected 2, 1)",
                 info->generation, info->reason);
    }
    if (s->pressure_call) {
        s->pressure_gcs++;
        if (s->pressure_gcs > 1 || info->generation != 2 || info->reason != 1 || s->press_since < (8u << 20))
            diff(s, "tenure_add_memory_pressure: GC %d of the call condemned generation %d with reason %u (expected "
                 "one GC of generation 2, reason 1) with %" PRIu64 " bytes of pressure added since the last gen2 GC "
                 "(the budget is at least 8 MiB)",
                 s->pressure_gcs, info->generation, info->reason, s->press_since);
    }
    if (info->generation == 2)
        s->press_since = 0;
    if (s->induced) {
        s->induced_seen++;
        if (s->induced_seen > 1)
            diff(s, "tenure_collect ran %d GCs", s->induced_seen);
        if (info->generation != s->induced_gen)
            diff(s, "tenure_collect(gen %d, flags %#x) condemned generation %d", s->induced_gen, s->induced_flags,
                 info->generation);
        unsigned f = s->induced_flags;
        uint32_t want = (f & TENURE_COLLECT_AGGRESSIVE) ? 17u
                        : (f & TENURE_COLLECT_OPTIMIZED) ? 7u
                        : (f & TENURE_COLLECT_COMPACT) ? 10u : 1u;
        if (info->reason != want)
            diff(s, "tenure_collect(flags %#x): GC reason %u, expected %u", f, info->reason, want);
    }
    int forced = info->reason == 5 || info->reason == 6 || info->reason == 10 || info->reason == 17 ||
                 s->cfg.GCCompactMode == 1 || (s->induced && (s->induced_flags & TENURE_COLLECT_COMPACT));
    /* compacted: bit g for the condemned generations of the small object heap, bit 3 the LOH */
    unsigned allowed = ((1u << (info->generation + 1)) - 1) | (info->generation == 2 ? 8u : 0u);
    unsigned cm = (unsigned)info->compacted;
    if (s->cfg.GCCompactMode == 2 && !forced && (cm & 7u) != 0)
        diff(s, "GC %" PRIu64 ": GCCompactMode=2 but compacted mask %#x (reason %u)", s->gcs, cm, info->reason);
    if (cm & ~allowed)
        diff(s, "GC %" PRIu64 ": compacted mask %#x has generations that were not condemned (gen %d)", s->gcs, cm,
             info->generation);
    int loh_ok = s->cfg.GCLOHCompact ||
                 (s->induced && (s->induced_flags & (TENURE_COLLECT_COMPACT_LOH | TENURE_COLLECT_AGGRESSIVE)));
    if ((cm & 8u) && !loh_ok)
        diff(s, "GC %" PRIu64 " (reason %u): the LOH was compacted although no one asked (compacted mask %#x)", s->gcs,
             info->reason, cm);
    gc_check(s, info);
    char where[64];
    snprintf(where, sizeof where, "after GC %" PRIu64, s->gcs);
    check_overlap(s, where);
    snprintf(where, sizeof where, "in the check after GC %" PRIu64 " (gen %d, reason %u)", s->gcs, info->generation,
             info->reason);
    check_end(s, where);
}

/* ------------------------------------------------------------------------------------------
 * The full check
 * ---------------------------------------------------------------------------------------- */
static size_t hslot(program_state *s, uintptr_t k) { return (size_t)(mix64(k) & (s->hcap - 1)); }
static void hash_build(program_state *s) {
    size_t n = 0;
    for (uint32_t j = 1; j < s->nobj; j++) n += !s->objs[j].reclaimed;
    size_t cap = 64;
    while (cap < 2 * n + 2) cap *= 2;
    if (cap > s->hcap) {
        s->hcap = cap;
        s->hkeys = xrealloc(s->hkeys, s->hcap * sizeof *s->hkeys);
        s->hvals = xrealloc(s->hvals, s->hcap * sizeof *s->hvals);
    }
    memset(s->hkeys, 0, s->hcap * sizeof *s->hkeys);
    for (uint32_t j = 1; j < s->nobj; j++) {
        if (s->objs[j].reclaimed)
            continue;
        size_t at = hslot(s, s->objs[j].addr);
        while (s->hkeys[at] && s->hkeys[at] != s->objs[j].addr) at = (at + 1) & (s->hcap - 1);
        if (s->hkeys[at])
            diff(s, "model: %s and %s share address %#" PRIxPTR, odesc(s, s->hvals[at]), odesc(s, j), s->objs[j].addr);
        s->hkeys[at] = s->objs[j].addr;
        s->hvals[at] = j;
    }
}
static uint32_t hash_get(program_state *s, uintptr_t k) {
    for (size_t at = hslot(s, k); s->hkeys[at]; at = (at + 1) & (s->hcap - 1))
        if (s->hkeys[at] == k) return s->hvals[at];
    return 0;
}

static int walk_visit(void *obj, const tenure_type *type, size_t size, int generation, void *ctx) {
    program_state *s = ctx;
    uint32_t j = hash_get(s, (uintptr_t)obj);
    if (!j) {
        if (s->walk_unexpected++ < 8)
            diff(s, "%s: the heap walk found %p (%s, %zu bytes, gen %d) where the model has no existing object", s->walk_where,
                 obj, type ? tenure_type_name(type) : "?", size, generation);
        return 0;
    }
    mobj *o = &s->objs[j];
    if (o->mark == s->epoch)
        diff(s, "%s: the heap walk visited %s twice", s->walk_where, odesc(s, j));
    o->mark = s->epoch;
    if (type != s->types[o->tix].t || size != o->size)
        diff(s, "%s: the heap walk says %s is a %s of %zu bytes", s->walk_where, odesc(s, j), type ? tenure_type_name(type) : "?",
             size);
    int want = (o->flags & F_FROZEN) ? 2 : o->gen;
    if (generation != want)
        diff(s, "%s: the heap walk says %s is in generation %d", s->walk_where, odesc(s, j), generation);
    return 0;
}

/* free the trackers of reclaimed finalizable objects (not from inside the GC callback) */
static void flush_trk(program_state *s) {
    for (uint32_t i = 0; i < s->ntrk_dead; i++) {
        tenure_result r = tenure_handle_free(s->rt, s->trk_dead[i]);
        if (r != TENURE_OK)
            diff(s, "tenure_handle_free(a tracker): %s", tenure_strerror(r));
    }
    s->ntrk_dead = 0;
}

static void full_check(program_state *s, const char *where) {
    s->since_verify = 0;
    flush_trk(s);
    tenure_result r = tenure_verify_heap(s->rt);
    if (r != TENURE_OK)
        diff(s, "%s: tenure_verify_heap: %s", where, tenure_strerror(r));
    check_end(s, where);
    /* every existing object, and its references */
    for (uint32_t j = 1; j < s->nobj; j++) {
        mobj *o = &s->objs[j];
        if (o->reclaimed)
            continue;
        if (!check_obj(s, j, o->addr, 2, where))
            continue;
        int g = tenure_object_generation(s->rt, (void *)o->addr);
        int want = (o->flags & F_FROZEN) ? 2 : o->gen;
        if (g != want)
            diff(s, "%s: %s: tenure_object_generation says %d", where, odesc(s, j), g);
        for (uint32_t i = 0; i < o->nrefs; i++) {
            void *p = *slot_at(s, o->addr, o->tix, i);
            uint32_t t = o->refs[i];
            if (t && s->objs[t].reclaimed)
                diff(s, "%s: model inconsistency: %s refers to reclaimed %s", where, odesc(s, j), odesc(s, t));
            void *e = t ? (void *)s->objs[t].addr : NULL;
            if (p != e)
                diff(s, "%s: slot %u of %s holds %p, expected %s at %p", where, i, odesc(s, j), p, odesc(s, t), e);
        }
    }
    /* roots */
    for (int i = 0; i < s->nframes; i++)
        for (unsigned k = 0; k < s->frames[i]->n; k++) {
            uint32_t t = s->frames[i]->obj[k];
            void *e = t ? (void *)s->objs[t].addr : NULL;
            if (s->frames[i]->vars[k] != e)
                diff(s, "%s: frame %d slot %u holds %p, expected %s at %p", where, i, k, s->frames[i]->vars[k], odesc(s, t), e);
        }
    for (int a = 0; a < 2; a++)
        if (s->areas[a].active)
            for (unsigned k = 0; k < AREA_SLOTS; k++) {
                uint32_t t = s->areas[a].obj[k];
                void *e = t ? (void *)s->objs[t].addr : NULL;
                if (s->areas[a].slots[k] != e)
                    diff(s, "%s: root area %d slot %u holds %p, expected %s at %p", where, a, k, s->areas[a].slots[k],
                         odesc(s, t), e);
            }
    for (unsigned k = 0; k < SCAN_SLOTS; k++) {
        uint32_t t = s->scan_obj[k];
        void *e = t ? (void *)s->objs[t].addr : NULL;
        if (s->scan_slots[k] != e)
            diff(s, "%s: scanner slot %u holds %p, expected %s at %p", where, k, s->scan_slots[k], odesc(s, t), e);
    }
    size_t nh = 0;
    for (unsigned h = 0; h < MAX_HANDLES; h++) {
        mhandle *m = &s->handles[h];
        if (!m->active)
            continue;
        nh++;
        void *got = tenure_handle_get(s->rt, m->h);
        if (m->obj && s->objs[m->obj].reclaimed)
            diff(s, "%s: model inconsistency: handle %u holds reclaimed %s", where, h, odesc(s, m->obj));
        void *e = m->obj ? (void *)s->objs[m->obj].addr : NULL;
        if (got != e)
            diff(s, "%s: %s handle %u to %s holds %p, expected %p", where, hkind_name(m->kind), h, odesc(s, m->obj), got, e);
        if (m->kind == TENURE_HANDLE_DEPENDENT) {
            got = tenure_handle_get_secondary(s->rt, m->h);
            e = m->sec ? (void *)s->objs[m->sec].addr : NULL;
            if (got != e || (m->sec && s->objs[m->sec].reclaimed))
                diff(s, "%s: the secondary of dependent handle %u (primary %s) is %p, expected %s at %p", where, h,
                     odesc(s, m->obj), got, odesc(s, m->sec), e);
        }
    }
    for (uint32_t i = 0; i < s->nfobjs; i++) {
        uint32_t j = s->fobjs[i];
        void *got = tenure_handle_get(s->rt, s->objs[j].trk);
        if (got != (void *)s->objs[j].addr)
            diff(s, "%s: the weak long handle that tracks %s holds %p", where, odesc(s, j), got);
    }
    nh += s->nfobjs;
    check_sized(s, where);
    if (tenure_pending_finalizers(s->rt) != s->nfq - s->fqhead)
        diff(s, "%s: tenure_pending_finalizers says %zu, the model has %u queued", where, tenure_pending_finalizers(s->rt),
             s->nfq - s->fqhead);
    if (tenure_memory_pressure(s->rt) != s->pressure)
        diff(s, "%s: tenure_memory_pressure says %" PRIu64 ", the model %" PRIu64, where, tenure_memory_pressure(s->rt),
             s->pressure);
    for (uint32_t j = 1; j < s->nobj; j++) {
        mobj *o = &s->objs[j];
        if (o->hash && !o->reclaimed) {
            uint32_t hv = tenure_identity_hash(s->rt, (void *)o->addr);
            if (hv != o->hash)
                diff(s, "%s: the identity hash of %s is %#x, it was %#x", where, odesc(s, j), hv, o->hash);
        }
    }
    if (tenure_handle_count(s->rt) != nh)
        diff(s, "%s: tenure_handle_count says %zu, the model has %zu", where, tenure_handle_count(s->rt), nh);
    /* the heap walk lists exactly the existing objects */
    hash_build(s);
    s->epoch++;
    s->walk_unexpected = 0;
    s->walk_where = where;
    r = tenure_heap_walk(s->rt, walk_visit, s);
    if (r != TENURE_OK)
        diff(s, "%s: tenure_heap_walk: %s", where, tenure_strerror(r));
    if (s->walk_unexpected > 8)
        diff(s, "%s: the heap walk found %d unexpected objects in all", where, s->walk_unexpected);
    int missing = 0;
    for (uint32_t j = 1; j < s->nobj; j++)
        if (!s->objs[j].reclaimed && s->objs[j].mark != s->epoch && missing++ < 8)
            diff(s, "%s: the heap walk did not visit %s at %#" PRIxPTR, where, odesc(s, j), s->objs[j].addr);
    tenure_stats st;
    tenure_get_stats(s->rt, &st);
    if (st.gc_count != s->gcs)
        diff(s, "%s: stats say %" PRIu64 " GCs, the callback saw %" PRIu64, where, st.gc_count, s->gcs);
    if (st.finalizers_run != s->fin_runs_total)
        diff(s, "%s: stats say %" PRIu64 " finalizers ran, the model counted %" PRIu64, where, st.finalizers_run,
             s->fin_runs_total);
    check_overlap(s, where);
    check_end(s, where);
}

/* ------------------------------------------------------------------------------------------
 * Allocation
 * ---------------------------------------------------------------------------------------- */
typedef struct aspec {
    int tix;
    size_t length;
    int pinned;
} aspec;

static size_t spec_size(program_state *s, const aspec *a) {
    ttype *t = &s->types[a->tix];
    return t->kind == K_FIX ? t->size : arr_size(t->kind, a->length);
}

static void after_alloc_check(program_state *s) {
    if (s->P->verify_every > 0 && s->since_verify >= (uint64_t)s->P->verify_every)
        full_check(s, "periodic full check");
}

/* allocate per spec; returns the object number or 0 (NOMEM with a hard limit) */
static uint32_t do_alloc(program_state *s, const aspec *a) {
    ttype *t = &s->types[a->tix];
    s->expect_err = s->P->hard_limit ? TENURE_NOMEM : TENURE_OK;
    s->got_err = 0;
    void *p;
    if (t->kind == K_FIX)
        p = a->pinned ? tenure_alloc_pinned(s->rt, t->t) : tenure_alloc(s->rt, t->t);
    else
        p = a->pinned ? tenure_alloc_array_pinned(s->rt, t->t, a->length) : tenure_alloc_array(s->rt, t->t, a->length);
    s->expect_err = TENURE_OK;
    s->allocs++;
    s->since_verify++;
    if (s->sh)
        s->sh->allocs = s->allocs;
    size_t size = spec_size(s, a);
    if (!p) {
        tenure_result e = tenure_last_error(s->rt);
        if (!s->P->hard_limit || e != TENURE_NOMEM)
            diff(s, "allocating a %s%s of %zu bytes returned NULL: %s", t->name, a->pinned ? " (pinned)" : "", size,
                 tenure_strerror(e));
        else if (!s->got_err)
            diff(s, "allocation failed with NOMEM but the error hook was not called");
        check_end(s, "allocation");
        tenure_clear_error(s->rt);
        s->nomem++;
        if (s->sh)
            s->sh->nomem = s->nomem;
        return 0;
    }
    /* a fresh object: an object of its type, size and generation (asked of the collector for
     * every array, large and pinned object and every 8th small one: the lookups are not free),
     * zeroed */
    int ask = t->kind != K_FIX || a->pinned || (s->allocs & 7) == 0;
    if (ask && (!tenure_is_object(s->rt, p) || tenure_object_type(s->rt, p) != t->t || tenure_object_size(s->rt, p) != size))
        diff(s, "new %s%s (length %zu) at %p: is_object %d, type %s, size %zu (expected %zu)", t->name,
             a->pinned ? " (pinned)" : "", a->length, p, tenure_is_object(s->rt, p),
             tenure_object_type(s->rt, p) ? tenure_type_name(tenure_object_type(s->rt, p)) : "?",
             tenure_object_size(s->rt, p), size);
    check_end(s, "allocation");
    int g = ask ? tenure_object_generation(s->rt, p) : 0;
    int want = a->pinned ? 4 : size >= s->cfg.GCLOHThreshold ? 3 : 0;
    if (g != want)
        diff(s, "new %s of %zu bytes%s is in generation %d, expected %d", t->name, size, a->pinned ? " (pinned)" : "", g,
             want);
    size_t from = t->kind == K_FIX ? 8 : 16;
    if (t->kind != K_FIX && tenure_array_length(p) != a->length)
        diff(s, "new %s has length %zu, expected %zu", t->name, tenure_array_length(p), a->length);
    for (size_t off = from; off < size; off += 8)
        if (*(uint64_t *)((char *)p + off) != 0) {
            diff(s, "new %s of %zu bytes at %p is not zeroed at offset %zu (%#" PRIx64 ")", t->name, size, p, off,
                 *(uint64_t *)((char *)p + off));
            break;
        }
    check_end(s, "allocation");
    uint8_t flags = (uint8_t)((a->pinned ? F_POH : 0) | (size >= s->cfg.GCLOHThreshold && !a->pinned ? F_LARGE : 0));
    uint32_t j = model_new(s, a->tix, flags, a->length, size, (uintptr_t)p, g, rnext(&(rng){s->allocs * 77 + 5}));
    init_payload(s, j, p);
    if (t->fin) {
        model_register(s, j);
        tenure_handle *tk = tenure_handle_new(s->rt, TENURE_HANDLE_WEAK_LONG, p);
        if (!tk)
            diff(s, "tenure_handle_new(WEAK_LONG) for a tracker failed: %s", tenure_strerror(tenure_last_error(s->rt)));
        s->objs[j].trk = tk;
        vec_push(&s->fobjs, &s->nfobjs, &s->capfobjs, j);
    }
    if (s->P->trace)
        fprintf(stderr, "  new %s at %p\n", odesc(s, j), p);
    return j;
}

/* ------------------------------------------------------------------------------------------
 * Destinations for new objects
 * ---------------------------------------------------------------------------------------- */
enum { D_NONE, D_ROOTARR, D_FRAME, D_AREA, D_SCAN, D_FIELD, D_HANDLE };
typedef struct dest {
    int kind;
    int a;
    unsigned slot;
    uint32_t src;
    int hkind;
} dest;

static int free_handle_index(program_state *s) {
    for (int h = 1; h < MAX_HANDLES; h++)
        if (!s->handles[h].active) return h;
    return -1;
}

static const int handle_kinds[4] = {TENURE_HANDLE_STRONG, TENURE_HANDLE_PINNED, TENURE_HANDLE_WEAK_SHORT,
                                    TENURE_HANDLE_WEAK_LONG};

static dest choose_dest(program_state *s, rng *r, int strong_only) {
    dest d;
    memset(&d, 0, sizeof d);
    for (;;) {
        unsigned x = (unsigned)rbelow(r, 100);
        if (x < 18) {
            d.kind = D_ROOTARR;
            d.slot = (unsigned)rbelow(r, ROOTARR_LEN);
        } else if (x < 30) {
            if (!s->nframes) continue;
            d.kind = D_FRAME;
            d.a = (int)rbelow(r, (uint64_t)s->nframes);
            d.slot = (unsigned)rbelow(r, s->frames[d.a]->n);
        } else if (x < 38) {
            d.a = (int)rbelow(r, 2);
            if (!s->areas[d.a].active) continue;
            d.kind = D_AREA;
            d.slot = (unsigned)rbelow(r, AREA_SLOTS);
        } else if (x < 44) {
            d.kind = D_SCAN;
            d.slot = (unsigned)rbelow(r, SCAN_SLOTS);
        } else if (x < 82) {
            d.kind = D_FIELD;
            d.src = pick_source(s, r);
            d.slot = (unsigned)rbelow(r, s->objs[d.src].nrefs);
        } else if (x < 92) {
            d.kind = D_HANDLE;
            d.hkind = handle_kinds[strong_only ? rbelow(r, 2) : rbelow(r, 4)];
            if (free_handle_index(s) < 0) continue;
        } else {
            if (strong_only) continue;
            d.kind = D_NONE;
        }
        return d;
    }
}

static void set_root_slot(program_state *s, void **slot, uint32_t *model, uint32_t j) {
    if (*model && *model != j)
        s->reach_dirty = 1;
    *slot = j ? (void *)s->objs[j].addr : NULL;
    *model = j;
}

static int handle_new(program_state *s, int kind, uint32_t j) {
    int h = free_handle_index(s);
    if (h < 0)
        return -1;
    int real_kind = s->P->inject == 2 && kind == TENURE_HANDLE_WEAK_LONG ? TENURE_HANDLE_STRONG : kind;
    if (s->P->inject == 3 && kind == TENURE_HANDLE_WEAK_SHORT && is_fin(s, j))
        real_kind = TENURE_HANDLE_WEAK_LONG; /* self-test: the model expects it cleared when j is queued */
    tenure_handle *hd = tenure_handle_new(s->rt, (tenure_handle_kind)real_kind, j ? (void *)s->objs[j].addr : NULL);
    if (!hd) {
        diff(s, "tenure_handle_new(kind %d, %s) failed: %s", kind, odesc(s, j), tenure_strerror(tenure_last_error(s->rt)));
        check_end(s, "handle_new");
    }
    s->handles[h] = (mhandle){hd, kind, j, 1, TENURE_HANDLE_STRONG, 0, 0, 0, 0, 0};
    return h;
}

static void handle_free(program_state *s, int h) {
    mhandle *m = &s->handles[h];
    tenure_result r = tenure_handle_free(s->rt, m->h);
    if (r != TENURE_OK)
        diff(s, "tenure_handle_free(handle %d): %s", h, tenure_strerror(r));
    if ((m->obj && h_strong(s, m)) || m->kind == TENURE_HANDLE_DEPENDENT)
        s->reach_dirty = 1;
    memset(m, 0, sizeof *m);
}

static void handle_set(program_state *s, int h, uint32_t j) {
    mhandle *m = &s->handles[h];
    tenure_result r = tenure_handle_set(s->rt, m->h, j ? (void *)s->objs[j].addr : NULL);
    if (r != TENURE_OK)
        diff(s, "tenure_handle_set(handle %d, %s): %s", h, odesc(s, j), tenure_strerror(r));
    if (m->obj && m->obj != j && (h_strong(s, m) || m->kind == TENURE_HANDLE_DEPENDENT))
        s->reach_dirty = 1;
    m->obj = j;
}

static void store_dest(program_state *s, const dest *d, uint32_t j) {
    switch (d->kind) {
    case D_ROOTARR: set_ref(s, s->rootarr, d->slot, j); break;
    case D_FIELD: set_ref(s, d->src, d->slot, j); break;
    case D_FRAME: set_root_slot(s, &s->frames[d->a]->vars[d->slot], &s->frames[d->a]->obj[d->slot], j); break;
    case D_AREA: set_root_slot(s, &s->areas[d->a].slots[d->slot], &s->areas[d->a].obj[d->slot], j); break;
    case D_SCAN: set_root_slot(s, &s->scan_slots[d->slot], &s->scan_obj[d->slot], j); break;
    case D_HANDLE: handle_new(s, d->hkind, j); break;
    default: break;
    }
    int strong = d->kind != D_NONE &&
                 !(d->kind == D_HANDLE && (d->hkind == TENURE_HANDLE_WEAK_SHORT || d->hkind == TENURE_HANDLE_WEAK_LONG));
    if (strong)
        reach_add(s, j);
}

/* ------------------------------------------------------------------------------------------
 * Out of memory: verify, drop data, allocation must work again
 * ---------------------------------------------------------------------------------------- */
static void drop_roots(program_state *s, rng *r, unsigned percent) {
    for (int i = 0; i < s->nframes; i++)
        for (unsigned k = 0; k < s->frames[i]->n; k++)
            if (rchance(r, percent)) set_root_slot(s, &s->frames[i]->vars[k], &s->frames[i]->obj[k], 0);
    for (int a = 0; a < 2; a++)
        if (s->areas[a].active)
            for (unsigned k = 0; k < AREA_SLOTS; k++)
                if (rchance(r, percent)) set_root_slot(s, &s->areas[a].slots[k], &s->areas[a].obj[k], 0);
    for (unsigned k = 0; k < SCAN_SLOTS; k++)
        if (rchance(r, percent)) set_root_slot(s, &s->scan_slots[k], &s->scan_obj[k], 0);
    for (unsigned k = 0; k < ROOTARR_LEN; k++)
        if (rchance(r, percent)) set_ref(s, s->rootarr, k, 0);
    for (int h = 1; h < MAX_HANDLES; h++)
        if (s->handles[h].active && rchance(r, percent)) handle_free(s, h);
    for (uint32_t i = 0; i < s->nfrozen; i++) {
        mobj *o = &s->objs[s->frozen[i]];
        for (uint32_t k = 0; k < o->nrefs; k++)
            if (o->refs[k] && rchance(r, percent)) set_ref(s, s->frozen[i], k, 0);
    }
    s->reach_dirty = 1;
}

static void run_finalizers(program_state *s);
static void induced_collect(program_state *s, int gen, unsigned flags, const char *where);

/* allocate; on NOMEM check the heap, drop data and retry (which must then work for sizes well
 * below the limit) */
static uint32_t alloc_oom(program_state *s, const aspec *a, rng *r) {
    uint32_t j = do_alloc(s, a);
    if (j || !s->P->hard_limit)
        return j;
    full_check(s, "full check after an allocation failed with NOMEM");
    if (rchance(r, 50))
        return 0; /* go on with the full heap for a while */
    size_t size = spec_size(s, a);
    drop_roots(s, r, 50);
    j = do_alloc(s, a);
    if (j)
        return j;
    full_check(s, "full check after NOMEM with half the roots dropped");
    drop_roots(s, r, 100);
    /* what finalization keeps (the queue, and registered garbage the next GC would queue) goes
     * too: run the finalizers, queue the rest with a full GC, run those (they may resurrect:
     * drop again) */
    for (int round = 0; round < 3 && !s->in_fin && (s->nreg || s->nfq - s->fqhead); round++) {
        run_finalizers(s);
        drop_roots(s, r, 100);
        if (s->nreg)
            induced_collect(s, 2, 0, "a full GC to queue finalizable garbage after NOMEM");
    }
    j = do_alloc(s, a);
    if (!j && size <= s->P->hard_limit / 4) {
        tenure_stats st;
        tenure_get_stats(s->rt, &st);
        diff(s, "allocating %zu bytes (%s%s) still fails with NOMEM after dropping every root (limit %" PRIu64
             ", committed %" PRIu64 ", heap %" PRIu64 ", live after the last GC %" PRIu64 ")",
             size, s->types[a->tix].name, a->pinned ? ", pinned" : "", s->P->hard_limit, st.committed_bytes,
             st.heap_bytes, st.live_bytes_after_gc);
        check_end(s, "allocation after dropping all data");
    }
    if (j)
        full_check(s, "full check after recovering from NOMEM");
    return j;
}

/* ------------------------------------------------------------------------------------------
 * Operations
 * ---------------------------------------------------------------------------------------- */
static aspec small_fixed(program_state *s, rng *r) {
    aspec a = {(int)rbelow(r, (uint64_t)s->nfix), 0, 0};
    return a;
}

static aspec small_array(program_state *s, rng *r) {
    aspec a = {0, 0, 0};
    unsigned x = (unsigned)rbelow(r, 100);
    if (x < 35) {
        a.tix = s->tix_refarr;
        a.length = rchance(r, 90) ? rbelow(r, 41) : rrange(r, 41, 2000);
    } else if (x < 60) {
        a.tix = rchance(r, 50) ? s->tix_recarr : s->tix_recarr_tr;
        a.length = rchance(r, 90) ? rrange(r, 1, 20) : rrange(r, 21, 1000);
    } else {
        a.tix = s->tix_bytes;
        unsigned y = (unsigned)rbelow(r, 100);
        a.length = y < 80 ? rrange(r, 8, 400) : y < 95 ? rrange(r, 401, 8000) : rrange(r, 8001, 84000 - 16);
        /* just below, at and just above the LOH threshold */
        if (rchance(r, 3))
            a.length = (size_t)(s->cfg.GCLOHThreshold - 16 - 8 * rbelow(r, 3));
    }
    return a;
}

static aspec large_spec(program_state *s, rng *r) {
    aspec a = {s->tix_bytes, 0, 0};
    size_t th = (size_t)s->cfg.GCLOHThreshold;
    unsigned x = (unsigned)rbelow(r, 100);
    size_t bytes = x < 15 ? th + 8 * rbelow(r, 4) : x < 85 ? rrange(r, th, 2 * th) : x < 97 ? rrange(r, 2 * th, 1 << 20)
                                                                                          : rrange(r, 1 << 20, 3 << 20);
    if (s->oom_mode && rchance(r, 30))
        bytes = rrange(r, 1 << 20, 4 << 20);
    unsigned y = (unsigned)rbelow(r, 100);
    if (y < 70) {
        a.tix = s->tix_bytes;
        a.length = bytes - 16;
    } else if (y < 90) {
        a.tix = s->tix_refarr;
        a.length = (bytes - 16 + 7) / 8;
        if (a.length > 40000) a.length = 40000;
    } else {
        a.tix = rchance(r, 50) ? s->tix_recarr : s->tix_recarr_tr;
        a.length = (bytes - 16 + 15) / 16;
        if (a.length > 20000) a.length = 20000;
    }
    if (arr_size(s->types[a.tix].kind, a.length) < th)
        a.length += (th - arr_size(s->types[a.tix].kind, a.length) + 7) / 8 + 1;
    return a;
}

/* fill a few reference slots of a new object j with reachable objects */
static void prelink(program_state *s, rng *r, uint32_t j) {
    mobj *o = &s->objs[j];
    if (!o->nrefs || rchance(r, 50))
        return;
    unsigned n = (unsigned)rrange(r, 1, o->nrefs < 4 ? o->nrefs : 4);
    for (unsigned k = 0; k < n; k++) {
        unsigned slot = (unsigned)rbelow(r, s->objs[j].nrefs);
        uint32_t t = pick_target(s, r, 10);
        set_ref(s, j, slot, t);
    }
}

static void op_alloc_with(program_state *s, rng *r, aspec a) {
    dest d = choose_dest(s, r, 0);
    uint32_t j = alloc_oom(s, &a, r);
    if (!j)
        return;
    if (d.kind == D_FIELD && !is_reachable(s, d.src))
        d.kind = D_ROOTARR, d.slot %= ROOTARR_LEN; /* the source was dropped by alloc_oom */
    if (d.kind == D_HANDLE && free_handle_index(s) < 0)
        d.kind = D_NONE;
    if (d.kind != D_NONE && d.kind != D_HANDLE)
        prelink(s, r, j);
    store_dest(s, &d, j);
}

static void op_chain(program_state *s, rng *r) {
    unsigned n = (unsigned)rrange(r, 2, rchance(r, 20) ? 400 : 60);
    dest d = choose_dest(s, r, 1);
    aspec a = small_fixed(s, r);
    /* a head with references */
    for (int tries = 0; tries < 20 && s->types[a.tix].k == 0; tries++) a = small_fixed(s, r);
    if (s->types[a.tix].k == 0)
        a = (aspec){s->tix_refarr, 4, 0};
    uint32_t head = alloc_oom(s, &a, r);
    if (!head)
        return;
    if (d.kind == D_FIELD && !is_reachable(s, d.src))
        d.kind = D_ROOTARR, d.slot %= ROOTARR_LEN;
    if (d.kind == D_HANDLE && free_handle_index(s) < 0)
        d.kind = D_ROOTARR, d.slot %= ROOTARR_LEN;
    store_dest(s, &d, head);
    uint32_t *nodes = xcalloc(n, sizeof *nodes);
    unsigned nn = 0;
    nodes[nn++] = head;
    int wide = rchance(r, 30);
    for (unsigned i = 1; i < n; i++) {
        aspec b = rchance(r, 85) ? small_fixed(s, r) : small_array(s, r);
        uint32_t j = alloc_oom(s, &b, r);
        if (!j)
            break;
        /* attach it to a node of the chain that is still reachable and has references: the
         * newest (a list) or any (a tree; overwriting a slot drops a subtree) */
        uint32_t parent = 0;
        for (int tries = 0; tries < 8 && !parent; tries++) {
            uint32_t c = wide ? nodes[rbelow(r, nn)] : nodes[tries < (int)nn ? nn - 1 - (unsigned)tries : 0];
            if (s->objs[c].nrefs && is_reachable(s, c))
                parent = c;
        }
        if (!parent)
            break; /* j stays garbage */
        set_ref(s, parent, (unsigned)rbelow(r, s->objs[parent].nrefs), j);
        reach_add(s, j);
        nodes[nn++] = j;
    }
    free(nodes);
}

/* a burst of garbage: objects that refer to each other (while no GC intervened) and to live
 * objects, and are referenced by nothing that is reachable */
static void op_garbage(program_state *s, rng *r) {
    unsigned n = (unsigned)rrange(r, 5, rchance(r, 20) ? 1000 : 150);
    uint32_t *nodes = xcalloc(n, sizeof *nodes);
    unsigned nn = 0;
    uint64_t gcs = s->gcs;
    for (unsigned i = 0; i < n; i++) {
        aspec a = rchance(r, 80) ? small_fixed(s, r) : small_array(s, r);
        uint32_t j = alloc_oom(s, &a, r);
        if (!j)
            break;
        if (s->gcs != gcs) {
            nn = 0; /* the earlier ones may be gone */
            gcs = s->gcs;
        }
        mobj *o = &s->objs[j];
        for (uint32_t k = 0; k < o->nrefs && k < 4; k++) {
            unsigned x = (unsigned)rbelow(r, 100);
            uint32_t t = x < 50 && nn ? nodes[rbelow(r, nn)] : x < 70 ? pick_reachable(s, r) : 0;
            if (t)
                set_ref(s, j, k, t);
        }
        nodes[nn++] = j;
    }
    free(nodes);
}

static void op_link(program_state *s, rng *r) {
    uint32_t src = pick_source(s, r);
    unsigned slot = (unsigned)rbelow(r, s->objs[src].nrefs);
    uint32_t t = pick_target(s, r, 15);
    set_ref(s, src, slot, t);
}

static void op_unlink(program_state *s, rng *r) {
    uint32_t src = pick_source(s, r);
    mobj *o = &s->objs[src];
    unsigned start = (unsigned)rbelow(r, o->nrefs);
    for (unsigned k = 0; k < o->nrefs && k < 64; k++) {
        unsigned slot = (start + k) % o->nrefs;
        if (o->refs[slot]) {
            set_ref(s, src, slot, 0);
            return;
        }
    }
}

static void op_root(program_state *s, rng *r) {
    unsigned x = (unsigned)rbelow(r, 4);
    uint32_t t = pick_target(s, r, 40);
    if (x == 0 && s->nframes) {
        mframe *f = s->frames[rbelow(r, (uint64_t)s->nframes)];
        unsigned k = (unsigned)rbelow(r, f->n);
        set_root_slot(s, &f->vars[k], &f->obj[k], t);
    } else if (x == 1) {
        int a = (int)rbelow(r, 2);
        if (!s->areas[a].active)
            return;
        unsigned k = (unsigned)rbelow(r, AREA_SLOTS);
        set_root_slot(s, &s->areas[a].slots[k], &s->areas[a].obj[k], t);
    } else if (x == 2) {
        unsigned k = (unsigned)rbelow(r, SCAN_SLOTS);
        set_root_slot(s, &s->scan_slots[k], &s->scan_obj[k], t);
    } else {
        set_ref(s, s->rootarr, (unsigned)rbelow(r, ROOTARR_LEN), t);
    }
}

static int random_handle(program_state *s, rng *r, int kind_filter) {
    int idx[MAX_HANDLES], n = 0;
    for (int h = 1; h < MAX_HANDLES; h++)
        if (s->handles[h].active && (kind_filter < 0 || s->handles[h].kind == kind_filter)) idx[n++] = h;
    return n ? idx[rbelow(r, (uint64_t)n)] : -1;
}

static void op_handle(program_state *s, rng *r) {
    unsigned x = (unsigned)rbelow(r, 100);
    if (x < 45) {
        handle_new(s, handle_kinds[rbelow(r, 4)], pick_target(s, r, 8));
    } else if (x < 75) {
        int h = random_handle(s, r, -1);
        if (h > 0) {
            uint32_t t = pick_target(s, r, 20);
            if (s->handles[h].kind == TENURE_HANDLE_DEPENDENT && !t)
                t = s->handles[h].sec; /* a primary that is its own secondary (NULL only without one) */
            handle_set(s, h, t);
        }
    } else {
        int h = random_handle(s, r, -1);
        if (h > 0) handle_free(s, h);
    }
}

static void op_pin(program_state *s, rng *r) {
    if (rchance(r, 55)) {
        uint32_t t = pick_reachable(s, r);
        /* prefer objects of the small object heap (the ones that could move) */
        for (int tries = 0; tries < 4 && t && (s->objs[t].flags & (F_POH | F_FROZEN | F_LARGE)); tries++)
            t = pick_reachable(s, r);
        handle_new(s, TENURE_HANDLE_PINNED, t);
    } else {
        int h = random_handle(s, r, TENURE_HANDLE_PINNED);
        if (h > 0) handle_free(s, h);
    }
}

static void frame_push(program_state *s, rng *r) {
    mframe *f = xcalloc(1, sizeof *f);
    f->n = (unsigned)rrange(r, 1, FRAME_SLOTS);
    for (unsigned k = 0; k < f->n; k++) {
        f->slots[k] = &f->vars[k];
        uint32_t t = pick_target(s, r, 50);
        f->obj[k] = t;
        f->vars[k] = t ? (void *)s->objs[t].addr : NULL;
    }
    f->f.prev = NULL;
    f->f.count = f->n;
    f->f.slots = (void **const *)f->slots;
    tenure_frame_push(s->rt, &f->f);
    s->frames[s->nframes++] = f;
}

static void frame_pop(program_state *s) {
    mframe *f = s->frames[--s->nframes];
    tenure_frame_pop(s->rt, &f->f);
    for (unsigned k = 0; k < f->n; k++)
        if (f->obj[k]) s->reach_dirty = 1;
    free(f);
}

static void op_frame(program_state *s, rng *r) {
    if (s->nframes < MAX_FRAMES && (s->nframes == 0 || rchance(r, 50)))
        frame_push(s, r);
    else if (s->nframes > 0)
        frame_pop(s);
}

static void area_add(program_state *s, rng *r, int a) {
    marea *m = &s->areas[a];
    for (unsigned k = 0; k < AREA_SLOTS; k++) {
        uint32_t t = r ? pick_target(s, r, 60) : 0;
        m->obj[k] = t;
        m->slots[k] = t ? (void *)s->objs[t].addr : NULL;
    }
    m->ra = tenure_root_area_add(s->rt, m->slots, AREA_SLOTS);
    if (!m->ra)
        diff(s, "tenure_root_area_add failed: %s", tenure_strerror(tenure_last_error(s->rt)));
    m->active = 1;
}

static void area_remove(program_state *s, int a) {
    marea *m = &s->areas[a];
    tenure_result res = tenure_root_area_remove(s->rt, m->ra);
    if (res != TENURE_OK)
        diff(s, "tenure_root_area_remove: %s", tenure_strerror(res));
    for (unsigned k = 0; k < AREA_SLOTS; k++) {
        if (m->obj[k]) s->reach_dirty = 1;
        m->obj[k] = 0;
        m->slots[k] = NULL;
    }
    m->active = 0;
    m->ra = NULL;
}

static void op_area(program_state *s, rng *r) {
    int a = (int)rbelow(r, 2);
    if (s->areas[a].active)
        area_remove(s, a);
    else
        area_add(s, r, a);
}

static void induced_collect(program_state *s, int gen, unsigned flags, const char *where) {
    s->induced = 1;
    s->induced_gen = (gen < 0 || (flags & TENURE_COLLECT_AGGRESSIVE)) ? 2 : gen;
    s->induced_flags = flags;
    s->induced_seen = 0;
    tenure_result res = tenure_collect(s->rt, gen, flags);
    s->induced = 0;
    if (res != TENURE_OK)
        diff(s, "tenure_collect(%d, %#x): %s", gen, flags, tenure_strerror(res));
    if (s->induced_seen == 0 && !(flags & TENURE_COLLECT_OPTIMIZED))
        diff(s, "tenure_collect(%d, %#x) ran no GC", gen, flags);
    check_end(s, where);
}

static void op_collect(program_state *s, rng *r) {
    static const int gens[] = {-1, 0, 0, 1, 1, 2};
    int gen = gens[rbelow(r, 6)];
    unsigned flags = 0;
    if (rchance(r, 30)) flags |= TENURE_COLLECT_COMPACT;
    if (rchance(r, 12)) flags |= TENURE_COLLECT_OPTIMIZED;
    if (rchance(r, 15)) flags |= TENURE_COLLECT_COMPACT_LOH;
    if (rchance(r, 10)) flags |= TENURE_COLLECT_NONBLOCKING;
    if (rchance(r, 6) && !(flags & TENURE_COLLECT_OPTIMIZED)) flags |= TENURE_COLLECT_AGGRESSIVE;
    induced_collect(s, gen, flags, "induced GC");
    full_check(s, "full check after an induced GC");
}

static void op_frozen(program_state *s, rng *r) {
    if (s->nfrozen_segs >= MAX_FROZEN_SEGS)
        return;
    unsigned n = (unsigned)rrange(r, 1, 12);
    aspec specs[12];
    size_t total = 0;
    for (unsigned i = 0; i < n; i++) {
        unsigned x = (unsigned)rbelow(r, 100);
        if (x < 60)
            specs[i] = small_fixed(s, r);
        else if (x < 75)
            specs[i] = (aspec){s->tix_refarr, rbelow(r, 9), 0};
        else if (x < 90)
            specs[i] = (aspec){rchance(r, 50) ? s->tix_recarr : s->tix_recarr_tr, rrange(r, 1, 6), 0};
        else
            specs[i] = (aspec){s->tix_bytes, rrange(r, 8, 100), 0};
        total += spec_size(s, &specs[i]);
    }
    char *mem = aligned_alloc(8, total);
    if (!mem) {
        fprintf(stderr, "tenure-torture: out of memory (frozen segment)\n");
        exit(2);
    }
    memset(mem, 0xcd, total);
    char *at = mem;
    uint32_t first = s->nobj;
    for (unsigned i = 0; i < n; i++) {
        ttype *t = &s->types[specs[i].tix];
        size_t sz = tenure_frozen_object_init(s->rt, at, t->t, specs[i].length);
        if (sz != spec_size(s, &specs[i]))
            diff(s, "tenure_frozen_object_init(%s, length %zu) returned %zu, expected %zu", t->name, specs[i].length, sz,
                 spec_size(s, &specs[i]));
        check_end(s, "frozen segment");
        uint32_t j = model_new(s, specs[i].tix, F_FROZEN, specs[i].length, sz, (uintptr_t)at, 2, rnext(r));
        init_payload(s, j, at);
        /* references to heap objects (plain stores: the block is not registered yet) */
        mobj *o = &s->objs[j];
        for (uint32_t k = 0; k < o->nrefs; k++) {
            if (!rchance(r, 70))
                continue;
            uint32_t tgt = pick_target(s, r, 10);
            *slot_at(s, o->addr, o->tix, k) = tgt ? (void *)s->objs[tgt].addr : NULL;
            o->refs[k] = tgt;
        }
        at += sz;
    }
    tenure_result res = tenure_register_frozen_segment(s->rt, mem, total);
    if (res != TENURE_OK)
        diff(s, "tenure_register_frozen_segment(%zu bytes, %u objects): %s", total, n, tenure_strerror(res));
    check_end(s, "frozen segment");
    s->frozen_mem[s->nfrozen_segs++] = mem;
    for (uint32_t j = first; j < s->nobj; j++) {
        if (s->nfrozen == s->capfrozen) {
            s->capfrozen = s->capfrozen * 2 + 16;
            s->frozen = xrealloc(s->frozen, s->capfrozen * sizeof *s->frozen);
        }
        s->frozen[s->nfrozen++] = j;
    }
    s->reach_dirty = 1;
}

static void op_payload(program_state *s, rng *r) {
    for (int tries = 0; tries < 8; tries++) {
        uint32_t j = pick_reachable(s, r);
        if (!j) return;
        mobj *o = &s->objs[j];
        ttype *t = &s->types[o->tix];
        if ((t->kind == K_FIX && t->p) || t->kind == K_BYTES || t->kind == K_RECARR) {
            o->seed = rnext(r);
            init_payload(s, j, (char *)o->addr);
            return;
        }
    }
}

static void op_misc(program_state *s, rng *r) {
    unsigned x = (unsigned)rbelow(r, 4);
    if (x == 0) {
        /* dependent handles come only from tenure_handle_new_dependent */
        s->expect_err = TENURE_INVALID_ARGUMENT;
        s->got_err = 0;
        tenure_handle *h = tenure_handle_new(s->rt, TENURE_HANDLE_DEPENDENT, NULL);
        s->expect_err = TENURE_OK;
        if (h != NULL || tenure_last_error(s->rt) != TENURE_INVALID_ARGUMENT || !s->got_err)
            diff(s, "tenure_handle_new(DEPENDENT) returned %p, last error %s, hook calls %d (expected NULL, "
                 "INVALID_ARGUMENT)",
                 (void *)h, tenure_strerror(tenure_last_error(s->rt)), s->got_err);
        tenure_clear_error(s->rt);
    } else if (x == 1) {
        /* OPTIMIZED with AGGRESSIVE is refused */
        s->expect_err = TENURE_INVALID_ARGUMENT;
        uint64_t before = s->gcs;
        tenure_result res = tenure_collect(s->rt, 2, TENURE_COLLECT_OPTIMIZED | TENURE_COLLECT_AGGRESSIVE);
        s->expect_err = TENURE_OK;
        if (res != TENURE_INVALID_ARGUMENT || s->gcs != before)
            diff(s, "tenure_collect(OPTIMIZED|AGGRESSIVE) returned %s and ran %" PRIu64 " GCs", tenure_strerror(res),
                 s->gcs - before);
        tenure_clear_error(s->rt);
    } else {
        /* queries on a reachable object */
        uint32_t j = pick_reachable(s, r);
        if (j)
            check_obj(s, j, s->objs[j].addr, 2, "object query");
        tenure_stats st;
        tenure_get_stats(s->rt, &st);
        if (st.gc_count != s->gcs)
            diff(s, "stats say %" PRIu64 " GCs, the callback saw %" PRIu64, st.gc_count, s->gcs);
    }
    check_end(s, "misc");
}

/* ------------------------------------------------------------------------------------------
 * Lifetime services: finalization, dependent / variable / refcounted / async pinned / sized ref
 * handles, memory pressure, identity hashes
 * ---------------------------------------------------------------------------------------- */
static aspec fin_spec(program_state *s, rng *r) {
    aspec a = {s->tix_fin[rbelow(r, 3)], 0, rchance(r, 12)};
    return a;
}

/* a random object that exists (reachable or not: it is an object until the next GC reclaims it) */
static uint32_t pick_existing(program_state *s, rng *r) {
    for (int tries = 0; tries < 8 && s->nobj > 1; tries++) {
        uint32_t j = (uint32_t)rrange(r, 1, s->nobj - 1);
        if (!s->objs[j].reclaimed)
            return j;
    }
    return pick_reachable(s, r);
}

static int random_dependent_secondary(program_state *s, rng *r) {
    int h = random_handle(s, r, TENURE_HANDLE_DEPENDENT);
    return h > 0 ? (int)s->handles[h].sec : 0;
}

/* NULL, a reachable object, the secondary of a dependent handle (chains, cycles) or any object */
static uint32_t pick_any(program_state *s, rng *r, unsigned null_percent) {
    if (rchance(r, null_percent))
        return 0;
    unsigned x = (unsigned)rbelow(r, 100);
    uint32_t j = 0;
    if (x < 45)
        j = pick_reachable(s, r);
    else if (x < 70)
        j = (uint32_t)random_dependent_secondary(s, r);
    else if (x < 80 && s->nfobjs)
        j = s->fobjs[rbelow(r, s->nfobjs)];
    if (!j)
        j = pick_existing(s, r);
    return j;
}

/* the finalize callback of tenure_type_desc has no context pointer: the program that runs
 * (one per process at a time) */
static program_state *finalizing_program;

void finalizers_attach(program_state *s) {
    finalizing_program = s;
}

/* the finalizer of every finalizable type: it must be the head of the model's queue; what it
 * does is decided by the seed, the object number and the object's run count */
static void fin_cb(tenure_runtime *rt, void *obj) {
    (void)rt;
    program_state *s = finalizing_program;
    if (s->destroying)
        return;
    if (!s->in_run)
        diff(s, "a finalizer ran for %p outside tenure_run_pending_finalizers / tenure_wait_for_pending_finalizers", obj);
    if (s->in_fin)
        diff(s, "finalizers nest (%p while #%u runs)", obj, s->fq[s->fqhead]);
    while (s->fqhead < s->nfq && s->fq[s->fqhead] == 0) s->fqhead++;
    if (s->fqhead >= s->nfq) {
        diff(s, "a finalizer ran for %p, the model has nothing queued", obj);
        check_end(s, "finalizer");
    }
    uint32_t j = s->fq[s->fqhead];
    if ((uintptr_t)obj != s->objs[j].addr) {
        uint64_t id = tenure_is_object(s->rt, obj) && is_fin(s, j) ? *(uint64_t *)((char *)obj + 8) : 0;
        diff(s, "a finalizer ran for %p (number word %#" PRIx64 "), the model expected %s at %#" PRIxPTR
             " (queue position %u of %u)",
             obj, id, odesc(s, j), s->objs[j].addr, s->fqhead, s->nfq);
        check_end(s, "finalizer");
    }
    check_obj(s, j, s->objs[j].addr, 2, "finalizer");
    check_end(s, "finalizer");
    s->in_fin = 1;
    s->objs[j].fin_runs++;
    s->ran_in_run++;
    s->fin_runs_total++;
    if (s->P->trace)
        fprintf(stderr, "  finalizer of %s (run %u)\n", odesc(s, j), s->objs[j].fin_runs);
    rng r = {mix64(s->P->seed * 0x2545f4914f6cdd1dull ^ mix64(((uint64_t)j << 16) + s->objs[j].fin_runs))};
    if (!s->final_phase) {
        if (rchance(&r, 35)) { /* allocate (a GC may run: obj stays queued and may move) */
            aspec a = rchance(&r, 20) ? fin_spec(s, &r) : small_fixed(s, &r);
            a.pinned = 0;
            uint32_t n = do_alloc(s, &a);
            if (n && s->objs[j].nrefs)
                set_ref(s, j, (unsigned)rbelow(&r, s->objs[j].nrefs), n);
        }
        if (rchance(&r, 10)) { /* no nesting: a run from a finalizer runs nothing */
            size_t k = tenure_run_pending_finalizers(s->rt);
            if (k != 0)
                diff(s, "tenure_run_pending_finalizers from a finalizer ran %zu", k);
        }
        if (rchance(&r, 20)) { /* resurrection */
            unsigned k = (unsigned)rbelow(&r, SCAN_SLOTS);
            set_root_slot(s, &s->scan_slots[k], &s->scan_obj[k], j);
        }
        if (rchance(&r, 12)) {
            tenure_result res = tenure_reregister_for_finalize(s->rt, (void *)s->objs[j].addr);
            if (res != TENURE_OK)
                diff(s, "tenure_reregister_for_finalize(%s) from its finalizer: %s", odesc(s, j), tenure_strerror(res));
            model_register(s, j);
        }
    }
    s->in_fin = 0;
    s->fqhead++; /* the entry leaves the queue when the finalizer returns */
    s->reach_dirty = 1;
    check_end(s, "finalizer");
}

/* the refcount callback: the model's count of the object of a refcounted handle */
static int rc_cb(void *obj, void *ctx) {
    program_state *s = ctx;
    for (int h = 0; h < MAX_HANDLES; h++) {
        mhandle *m = &s->handles[h];
        if (m->active && m->kind == TENURE_HANDLE_REFCOUNTED && m->obj && s->objs[m->obj].addr == (uintptr_t)obj)
            return s->objs[m->obj].rc;
    }
    diff(s, "the refcount callback was asked about %p, which no refcounted handle holds", obj);
    return 0;
}

static void check_pending(program_state *s, const char *where) {
    size_t p = tenure_pending_finalizers(s->rt);
    if (p != s->nfq - s->fqhead)
        diff(s, "%s: tenure_pending_finalizers says %zu, the model has %u queued", where, p, s->nfq - s->fqhead);
}

static void after_run(program_state *s, const char *what, size_t ran) {
    if (ran != s->ran_in_run)
        diff(s, "%s returned %zu, %" PRIu64 " finalizers ran", what, ran, s->ran_in_run);
    while (s->fqhead < s->nfq && s->fq[s->fqhead] == 0) s->fqhead++;
    if (s->fqhead != s->nfq)
        diff(s, "after %s the model still has %u queued, the first %s", what, s->nfq - s->fqhead, odesc(s, s->fq[s->fqhead]));
    s->nfq = s->fqhead = 0;
    check_pending(s, what);
    s->reach_dirty = 1;
    check_end(s, what);
}

static void run_finalizers(program_state *s) {
    check_pending(s, "before tenure_run_pending_finalizers");
    s->in_run = 1;
    s->ran_in_run = 0;
    size_t n = tenure_run_pending_finalizers(s->rt);
    s->in_run = 0;
    after_run(s, "tenure_run_pending_finalizers", n);
}

static void wait_finalizers(program_state *s) {
    s->in_run = 1;
    s->ran_in_run = 0;
    s->wait_gc = 1;
    uint64_t before = s->gcs;
    tenure_result res = tenure_wait_for_pending_finalizers(s->rt);
    s->in_run = 0;
    if (res != TENURE_OK || s->gcs == before || s->wait_gc)
        diff(s, "tenure_wait_for_pending_finalizers: %s, %" PRIu64 " GCs", tenure_strerror(res), s->gcs - before);
    s->wait_gc = 0;
    after_run(s, "tenure_wait_for_pending_finalizers", s->ran_in_run);
}

static void weak_to(program_state *s, rng *r, uint32_t j) {
    if (free_handle_index(s) > 0)
        handle_new(s, rchance(r, 50) ? TENURE_HANDLE_WEAK_SHORT : TENURE_HANDLE_WEAK_LONG, j);
}

static void op_final(program_state *s, rng *r) {
    if (rchance(r, 65)) {
        aspec a = fin_spec(s, r);
        dest d = rchance(r, 45) ? (dest){.kind = D_NONE} : choose_dest(s, r, 0);
        uint32_t j = alloc_oom(s, &a, r);
        if (!j)
            return;
        if (d.kind == D_FIELD && !is_reachable(s, d.src))
            d.kind = D_ROOTARR, d.slot %= ROOTARR_LEN;
        if (d.kind == D_HANDLE && free_handle_index(s) < 0)
            d.kind = D_NONE;
        if (d.kind != D_HANDLE)
            prelink(s, r, j);
        store_dest(s, &d, j);
        if (rchance(r, 35))
            weak_to(s, r, j);
        return;
    }
    /* a cluster of finalizable garbage that refers to itself and to other objects */
    unsigned n = (unsigned)rrange(r, 2, 8);
    uint32_t nodes[8];
    unsigned nn = 0;
    uint64_t gcs = s->gcs;
    for (unsigned i = 0; i < n; i++) {
        aspec a = rchance(r, 70) ? fin_spec(s, r) : small_fixed(s, r);
        a.pinned = 0;
        uint32_t j = alloc_oom(s, &a, r);
        if (!j)
            break;
        if (s->gcs != gcs) {
            nn = 0;
            gcs = s->gcs;
        }
        mobj *o = &s->objs[j];
        for (uint32_t k = 0; k < o->nrefs; k++) {
            unsigned x = (unsigned)rbelow(r, 100);
            uint32_t t = x < 60 && nn ? nodes[rbelow(r, nn)] : x < 75 ? pick_reachable(s, r) : 0;
            if (t)
                set_ref(s, j, k, t);
        }
        if (rchance(r, 20))
            weak_to(s, r, j);
        nodes[nn++] = j;
    }
}

static void op_finop(program_state *s, rng *r) {
    unsigned x = (unsigned)rbelow(r, 100);
    if (x < 30) {
        run_finalizers(s);
    } else if (x < 36) {
        wait_finalizers(s);
        full_check(s, "full check after tenure_wait_for_pending_finalizers");
    } else if (x < 88) {
        if (!s->nfobjs)
            return;
        uint32_t j = s->fobjs[rbelow(r, s->nfobjs)];
        void *p = (void *)s->objs[j].addr;
        if (x < 62) {
            if (s->P->trace)
                fprintf(stderr, "  suppress %s%s\n", odesc(s, j), s->objs[j].registered ? " (registered)" : "");
            tenure_result res = tenure_suppress_finalize(s->rt, p);
            if (res != TENURE_OK)
                diff(s, "tenure_suppress_finalize(%s): %s", odesc(s, j), tenure_strerror(res));
            model_suppress(s, j);
        } else {
            if (s->P->trace)
                fprintf(stderr, "  reregister %s%s\n", odesc(s, j), s->objs[j].registered ? " (registered)" : "");
            tenure_result res = tenure_reregister_for_finalize(s->rt, p);
            if (res != TENURE_OK)
                diff(s, "tenure_reregister_for_finalize(%s): %s", odesc(s, j), tenure_strerror(res));
            model_register(s, j);
        }
    } else if (x < 94) {
        /* not finalizable: refused */
        uint32_t j = pick_reachable(s, r);
        if (!j || is_fin(s, j))
            return;
        s->expect_err = TENURE_INVALID_TYPE;
        s->got_err = 0;
        tenure_result res = rchance(r, 50) ? tenure_suppress_finalize(s->rt, (void *)s->objs[j].addr)
                                           : tenure_reregister_for_finalize(s->rt, (void *)s->objs[j].addr);
        s->expect_err = TENURE_OK;
        if (res != TENURE_INVALID_TYPE || !s->got_err)
            diff(s, "suppress / reregister of not finalizable %s: %s (hook calls %d)", odesc(s, j), tenure_strerror(res),
                 s->got_err);
        tenure_clear_error(s->rt);
    } else {
        check_pending(s, "pending finalizers");
    }
}

static void op_depend(program_state *s, rng *r) {
    unsigned x = (unsigned)rbelow(r, 100);
    if (x < 40) {
        if (free_handle_index(s) < 0)
            return;
        uint32_t sec = 0;
        if (rchance(r, 50)) { /* a new object held only by the handle */
            aspec a = rchance(r, 80) ? small_fixed(s, r) : small_array(s, r);
            if (rchance(r, 10))
                a = fin_spec(s, r);
            sec = alloc_oom(s, &a, r);
        } else
            sec = pick_any(s, r, 10);
        uint32_t prim = pick_any(s, r, sec ? 0 : 5);
        int h = free_handle_index(s);
        if (h < 0)
            return;
        tenure_handle *hd = tenure_handle_new_dependent(s->rt, prim ? (void *)s->objs[prim].addr : NULL,
                                                        sec ? (void *)s->objs[sec].addr : NULL);
        if (!hd) {
            diff(s, "tenure_handle_new_dependent(%s, %s) failed: %s", odesc(s, prim), odesc(s, sec),
                 tenure_strerror(tenure_last_error(s->rt)));
            return;
        }
        s->handles[h] = (mhandle){hd, TENURE_HANDLE_DEPENDENT, prim, 1, 0, sec, 0, 0, 0, 0};
        return;
    }
    int h = random_handle(s, r, TENURE_HANDLE_DEPENDENT);
    if (h <= 0)
        return;
    mhandle *m = &s->handles[h];
    if (x < 60) {
        uint32_t sec = pick_any(s, r, 10);
        if (!m->obj && sec)
            sec = 0; /* see below: a secondary without a primary */
        tenure_result res = tenure_handle_set_secondary(s->rt, m->h, sec ? (void *)s->objs[sec].addr : NULL);
        if (res != TENURE_OK)
            diff(s, "tenure_handle_set_secondary(handle %d, %s): %s", h, odesc(s, sec), tenure_strerror(res));
        if (m->sec && m->sec != sec)
            s->reach_dirty = 1;
        m->sec = sec;
    } else if (x < 75) {
        handle_set(s, h, pick_any(s, r, m->sec ? 0 : 5));
    } else if (x < 90) {
        void *p = tenure_handle_get(s->rt, m->h), *q = tenure_handle_get_secondary(s->rt, m->h);
        if (p != (m->obj ? (void *)s->objs[m->obj].addr : NULL) || q != (m->sec ? (void *)s->objs[m->sec].addr : NULL))
            diff(s, "dependent handle %d holds %p / %p, expected %s / %s", h, p, q, odesc(s, m->obj), odesc(s, m->sec));
    } else {
        handle_free(s, h);
    }
}

static int count_kind(program_state *s, int kind) {
    int n = 0;
    for (int h = 1; h < MAX_HANDLES; h++) n += s->handles[h].active && s->handles[h].kind == kind;
    return n;
}

static void set_vkind(program_state *s, int h, int k) {
    mhandle *m = &s->handles[h];
    int was_strong = h_strong(s, m);
    tenure_result res = tenure_handle_set_variable_kind(s->rt, m->h, (tenure_handle_kind)k);
    if (res != TENURE_OK)
        diff(s, "tenure_handle_set_variable_kind(handle %d, %d): %s", h, k, tenure_strerror(res));
    m->vkind = k;
    if (was_strong && !h_strong(s, m))
        s->reach_dirty = 1;
}

static void set_rc(program_state *s, uint32_t j, unsigned rc) {
    if (!j)
        return;
    if (s->objs[j].rc && !rc)
        s->reach_dirty = 1;
    s->objs[j].rc = (uint8_t)rc;
}

static void op_xhandle(program_state *s, rng *r) {
    static const int vk[4] = {TENURE_HANDLE_WEAK_SHORT, TENURE_HANDLE_WEAK_LONG, TENURE_HANDLE_STRONG,
                              TENURE_HANDLE_PINNED};
    unsigned x = (unsigned)rbelow(r, 100);
    if (x < 20) {
        int h = handle_new(s, TENURE_HANDLE_VARIABLE, pick_any(s, r, 10));
        if (h > 0 && rchance(r, 60))
            set_vkind(s, h, vk[rbelow(r, 4)]);
    } else if (x < 35) {
        int h = random_handle(s, r, TENURE_HANDLE_VARIABLE);
        if (h > 0)
            set_vkind(s, h, vk[rbelow(r, 4)]);
    } else if (x < 48) {
        uint32_t t = pick_any(s, r, 10);
        if (free_handle_index(s) > 0 && t)
            set_rc(s, t, (unsigned)rbelow(r, 3));
        handle_new(s, TENURE_HANDLE_REFCOUNTED, t);
    } else if (x < 60) {
        int h = random_handle(s, r, TENURE_HANDLE_REFCOUNTED);
        if (h > 0 && s->handles[h].obj) {
            unsigned rc = s->objs[s->handles[h].obj].rc;
            set_rc(s, s->handles[h].obj, rc && (rc == 3 || rchance(r, 50)) ? rc - 1 : rc + 1);
        }
    } else if (x < 72) {
        uint32_t t = 0;
        for (int tries = 0; tries < 6 && !t; tries++) {
            uint32_t c = pick_reachable(s, r);
            if (c && s->objs[c].tix == s->tix_refarr && c != s->rootarr)
                t = c;
        }
        if (!t)
            t = pick_any(s, r, 10);
        handle_new(s, TENURE_HANDLE_ASYNC_PINNED, t);
    } else if (x < 82) {
        if (count_kind(s, TENURE_HANDLE_SIZED_REF) < MAX_SIZED)
            handle_new(s, TENURE_HANDLE_SIZED_REF, rchance(r, 8) ? 0 : pick_reachable(s, r));
    } else if (x < 94) {
        static const int kinds[4] = {TENURE_HANDLE_VARIABLE, TENURE_HANDLE_REFCOUNTED, TENURE_HANDLE_ASYNC_PINNED,
                                     TENURE_HANDLE_SIZED_REF};
        int h = random_handle(s, r, kinds[rbelow(r, 4)]);
        if (h > 0)
            handle_set(s, h, pick_any(s, r, 10));
    } else {
        check_sized(s, "sized ref query");
        /* a dependent-only query on another kind is refused */
        int h = random_handle(s, r, TENURE_HANDLE_VARIABLE);
        if (h > 0) {
            s->expect_err = TENURE_INVALID_HANDLE;
            s->got_err = 0;
            void *q = tenure_handle_get_secondary(s->rt, s->handles[h].h);
            s->expect_err = TENURE_OK;
            if (q || !s->got_err)
                diff(s, "tenure_handle_get_secondary of a variable handle: %p, hook calls %d", q, s->got_err);
            tenure_clear_error(s->rt);
        }
    }
}

static void op_pressure(program_state *s, rng *r) {
    if (s->pressure < (48u << 20) && rchance(r, 60)) {
        uint64_t b = rchance(r, 80) ? rrange(r, 1, 3u << 20) : rrange(r, 3u << 20, 9u << 20);
        uint64_t before = s->gcs;
        s->pressure += b;
        s->press_since += b;
        uint64_t since = s->press_since;
        s->pressure_call = 1;
        s->pressure_gcs = 0;
        tenure_result res = tenure_add_memory_pressure(s->rt, b);
        s->pressure_call = 0;
        if (res != TENURE_OK)
            diff(s, "tenure_add_memory_pressure(%" PRIu64 "): %s", b, tenure_strerror(res));
        if (s->gcs != before && s->pressure_gcs == 0)
            diff(s, "tenure_add_memory_pressure(%" PRIu64 ") ran a GC the callback did not see", b);
        (void)since;
    } else if (rchance(r, 90) || !s->pressure) {
        uint64_t b = rbelow(r, s->pressure + 1);
        tenure_result res = tenure_remove_memory_pressure(s->rt, b);
        if (res != TENURE_OK)
            diff(s, "tenure_remove_memory_pressure(%" PRIu64 " of %" PRIu64 "): %s", b, s->pressure, tenure_strerror(res));
        s->pressure -= b;
    } else {
        s->expect_err = TENURE_INVALID_ARGUMENT;
        s->got_err = 0;
        tenure_result res = tenure_remove_memory_pressure(s->rt, s->pressure + 1);
        s->expect_err = TENURE_OK;
        if (res != TENURE_INVALID_ARGUMENT || !s->got_err)
            diff(s, "removing more pressure than was added: %s, hook calls %d", tenure_strerror(res), s->got_err);
        tenure_clear_error(s->rt);
    }
    if (tenure_memory_pressure(s->rt) != s->pressure)
        diff(s, "tenure_memory_pressure says %" PRIu64 ", the model %" PRIu64, tenure_memory_pressure(s->rt), s->pressure);
}

static void op_hash(program_state *s, rng *r) {
    for (int i = 0, n = (int)rrange(r, 1, 4); i < n; i++) {
        uint32_t j = rchance(r, 70) ? pick_reachable(s, r) : pick_existing(s, r);
        if (!j || (s->objs[j].flags & F_FROZEN))
            continue;
        uint32_t h = tenure_identity_hash(s->rt, (void *)s->objs[j].addr);
        if (!h || (s->objs[j].hash && h != s->objs[j].hash))
            diff(s, "tenure_identity_hash(%s) is %#x, it was %#x", odesc(s, j), h, s->objs[j].hash);
        s->objs[j].hash = h;
    }
}

/* ------------------------------------------------------------------------------------------
 * A program
 * ---------------------------------------------------------------------------------------- */
static void register_types(program_state *s) {
    static const unsigned pays[4] = {0, 1, 3, 7};
    int n = 0;
    tenure_type_desc d;
    /* layout A: header, id, refs[k], payload[p] (offsets) */
    for (unsigned k = 0; k <= 4; k++)
        for (unsigned pi = 0; pi < 4; pi++) {
            ttype *t = &s->types[n++];
            t->kind = K_FIX;
            t->k = k;
            t->p = pays[pi];
            t->ref_off = 16;
            t->pay_off = 16 + 8 * k;
            t->size = 16 + 8 * (size_t)k + 8 * (size_t)t->p;
            snprintf(t->name, sizeof t->name, "fixA_r%u_p%u", k, t->p);
        }
    /* layout B: header, id, payload[p], refs[k]: offsets (p = 1), trace callbacks (p = 2) */
    for (unsigned k = 1; k <= 4; k++)
        for (unsigned p = 1; p <= 2; p++) {
            ttype *t = &s->types[n++];
            t->kind = K_FIX;
            t->k = k;
            t->p = p;
            t->pay_off = 16;
            t->ref_off = 16 + 8 * p;
            t->size = 16 + 8 * (size_t)k + 8 * (size_t)p;
            snprintf(t->name, sizeof t->name, p == 2 ? "fixB_r%u_traced" : "fixB_r%u", k);
        }
    s->nfix = n;
    for (int i = 0; i < n; i++) {
        ttype *t = &s->types[i];
        size_t offs[4];
        for (unsigned k = 0; k < t->k; k++) offs[k] = t->ref_off + 8 * k;
        memset(&d, 0, sizeof d);
        d.name = t->name;
        d.size = t->size;
        if (t->ref_off > 16 && t->p == 2)
            d.trace = trace_fns[t->k];
        else {
            d.ref_offsets = offs;
            d.ref_count = t->k;
        }
        if (t->k == 0)
            d.flags = TENURE_TYPE_NO_REFS;
        t->t = tenure_type_register(s->rt, &d);
    }
    static const size_t rec_off[1] = {8};
    s->tix_refarr = n++;
    s->types[s->tix_refarr] = (ttype){.kind = K_REFARR, .name = "refs"};
    memset(&d, 0, sizeof d);
    d.name = "refs";
    d.size = sizeof(tenure_array_header);
    d.elem_size = sizeof(void *);
    d.flags = TENURE_TYPE_ARRAY | TENURE_TYPE_REF_ARRAY;
    s->types[s->tix_refarr].t = tenure_type_register(s->rt, &d);
    s->tix_recarr = n++;
    s->types[s->tix_recarr] = (ttype){.kind = K_RECARR, .name = "records"};
    memset(&d, 0, sizeof d);
    d.name = "records";
    d.elem_size = 16;
    d.elem_ref_offsets = rec_off;
    d.elem_ref_count = 1;
    d.flags = TENURE_TYPE_ARRAY;
    s->types[s->tix_recarr].t = tenure_type_register(s->rt, &d);
    s->tix_recarr_tr = n++;
    s->types[s->tix_recarr_tr] = (ttype){.kind = K_RECARR, .name = "records_traced"};
    memset(&d, 0, sizeof d);
    d.name = "records_traced";
    d.elem_size = 16;
    d.trace = trace_recs;
    d.flags = TENURE_TYPE_ARRAY;
    s->types[s->tix_recarr_tr].t = tenure_type_register(s->rt, &d);
    s->tix_bytes = n++;
    s->types[s->tix_bytes] = (ttype){.kind = K_BYTES, .name = "bytes"};
    memset(&d, 0, sizeof d);
    d.name = "bytes";
    d.size = sizeof(tenure_array_header);
    d.elem_size = 1;
    d.flags = TENURE_TYPE_ARRAY | TENURE_TYPE_NO_REFS;
    s->types[s->tix_bytes].t = tenure_type_register(s->rt, &d);
    /* finalizable: layout A, 0, 2 or 4 references, one payload word */
    for (unsigned f = 0; f < 3; f++) {
        int ix = s->tix_fin[f] = n++;
        ttype *t = &s->types[ix];
        t->kind = K_FIX;
        t->k = 2 * f;
        t->p = 1;
        t->ref_off = 16;
        t->pay_off = 16 + 8 * t->k;
        t->size = 16 + 8 * (size_t)t->k + 8;
        t->fin = 1;
        snprintf(t->name, sizeof t->name, "fin_r%u", t->k);
        size_t offs[4];
        for (unsigned k = 0; k < t->k; k++) offs[k] = t->ref_off + 8 * k;
        memset(&d, 0, sizeof d);
        d.name = t->name;
        d.size = t->size;
        d.ref_offsets = offs;
        d.ref_count = t->k;
        d.flags = TENURE_TYPE_FINALIZABLE | (t->k ? 0 : TENURE_TYPE_NO_REFS);
        d.finalize = fin_cb;
        t->t = tenure_type_register(s->rt, &d);
    }
    s->ntypes = n;
    for (int i = 0; i < n; i++)
        if (!s->types[i].t) {
            diff(s, "registering type %s failed", s->types[i].name);
            check_end(s, "type registration");
        }
}

static void scan_fn(tenure_runtime *rt, tenure_visitor *v, void *ctx) {
    (void)rt;
    program_state *s = ctx;
    for (int k = 0; k < SCAN_SLOTS; k++) tenure_visit(v, &s->scan_slots[k]);
}

static void random_config(tenure_config *c, uint64_t seed, uint64_t hard_limit) {
    rng r = {mix64(seed ^ 0xc0ffee1234567ull)};
    tenure_config_init(c);
    static const uint64_t regions[] = {256u << 10, 256u << 10, 256u << 10, 256u << 10, 512u << 10, 1u << 20};
    c->GCRegionSize = regions[rbelow(&r, 6)];
    static const uint64_t g0[] = {8u << 10, 16u << 10, 32u << 10, 32u << 10, 64u << 10, 128u << 10, 256u << 10, 1u << 20};
    c->GCgen0size = g0[rbelow(&r, 8)];
    c->GCgen1size = rchance(&r, 50) ? 0 : c->GCgen0size * rrange(&r, 1, 4);
    c->GCgen0MaxBudget = rchance(&r, 70) ? 0 : c->GCgen0size * rrange(&r, 1, 3);
    c->GCCompactMode = (uint32_t)rbelow(&r, 3);
    c->GCLOHCompact = rchance(&r, 10);
    if (rchance(&r, 25))
        c->GCMarkStackSize = rrange(&r, 1, 64);
    c->GCRetainRegions = (uint32_t)rbelow(&r, 4);
    if (tenure_config_from_env(c) != TENURE_OK)
        fprintf(stderr, "tenure-torture: a TENURE_* environment variable does not parse (ignored)\n");
    c->GCConservativeStack = 0; /* precise: reachability is exact */
    c->GCFinalizeMode = 1;      /* finalizers run only in tenure_run_pending_finalizers: deterministic */
    if (hard_limit)
        c->GCHeapHardLimit = hard_limit;
}

static void run_program(const params *P, shres *sh, int in_fork) {
    program_state *s = xcalloc(1, sizeof *s);
    finalizers_attach(s);
    s->in_fork = in_fork;
    s->P = P;
    s->sh = sh;
    s->op = -1;
    s->oom_mode = P->hard_limit != 0;
    if (sh)
        sh->op = -1;
    s->nobj = 1;
    s->capobj = 1024;
    s->objs = xcalloc(s->capobj, sizeof *s->objs);
    random_config(&s->cfg, P->seed, P->hard_limit);
    tenure_result res = TENURE_OK;
    s->rt = tenure_create(&s->cfg, &res);
    if (!s->rt) {
        diff(s, "tenure_create failed: %s", tenure_strerror(res));
        check_end(s, "setup");
    }
    tenure_set_error_hook(s->rt, hook, s);
    tenure_set_gc_callback(s->rt, gc_callback, s);
    tenure_set_refcount_callback(s->rt, rc_cb, s);
    register_types(s);
    /* the root array, held by handle 0 */
    aspec ra = {s->tix_refarr, ROOTARR_LEN, 0};
    s->rootarr = do_alloc(s, &ra);
    if (!s->rootarr) {
        diff(s, "allocating the root array failed");
        check_end(s, "setup");
    }
    tenure_handle *h0 = tenure_handle_new(s->rt, TENURE_HANDLE_STRONG, (void *)s->objs[s->rootarr].addr);
    if (!h0) {
        diff(s, "tenure_handle_new(STRONG) failed");
        check_end(s, "setup");
    }
    s->handles[0] = (mhandle){h0, TENURE_HANDLE_STRONG, s->rootarr, 1, TENURE_HANDLE_STRONG, 0, 0, 0, 0, 0};
    s->scanner = tenure_root_scanner_add(s->rt, scan_fn, s);
    if (!s->scanner)
        diff(s, "tenure_root_scanner_add failed");
    area_add(s, NULL, 0);
    s->reach_dirty = 1;
    rng r0 = {P->seed};
    frame_push(s, &r0);
    check_end(s, "setup");

    int mode = s->oom_mode ? 1 : 0;
    unsigned total = 0;
    for (int k = 0; k < OP_COUNT; k++) total += op_weight[mode][k];
    for (long i = 0; i < P->ops; i++) {
        s->op = i;
        if (sh)
            sh->op = i;
        rng r = {mix64(P->seed * 0x100000001b3ull ^ mix64((uint64_t)i + 0x51ed27u))};
        unsigned x = (unsigned)rbelow(&r, total);
        int kind = 0;
        while (x >= op_weight[mode][kind]) x -= op_weight[mode][kind++];
        if (P->drop_mask & (1u << kind))
            continue;
        flush_trk(s);
        if (P->trace)
            fprintf(stderr, "op %ld: %s (objects %u, GCs %" PRIu64 ")\n", i, op_names[kind], s->nobj - 1, s->gcs);
        switch (kind) {
        case OP_ALLOC: op_alloc_with(s, &r, small_fixed(s, &r)); break;
        case OP_ARRAY: op_alloc_with(s, &r, small_array(s, &r)); break;
        case OP_LARGE: op_alloc_with(s, &r, large_spec(s, &r)); break;
        case OP_PINNED: {
            aspec a = rchance(&r, 60) ? small_fixed(s, &r) : small_array(s, &r);
            if (rchance(&r, 10)) a = large_spec(s, &r);
            a.pinned = 1;
            op_alloc_with(s, &r, a);
            break;
        }
        case OP_CHAIN: op_chain(s, &r); break;
        case OP_GARBAGE: op_garbage(s, &r); break;
        case OP_LINK: op_link(s, &r); break;
        case OP_UNLINK: op_unlink(s, &r); break;
        case OP_ROOT: op_root(s, &r); break;
        case OP_HANDLE: op_handle(s, &r); break;
        case OP_PIN: op_pin(s, &r); break;
        case OP_FRAME: op_frame(s, &r); break;
        case OP_AREA: op_area(s, &r); break;
        case OP_COLLECT: op_collect(s, &r); break;
        case OP_FROZEN: op_frozen(s, &r); break;
        case OP_PAYLOAD: op_payload(s, &r); break;
        case OP_MISC: op_misc(s, &r); break;
        case OP_VERIFY: full_check(s, "full check (verify op)"); break;
        case OP_FINAL: op_final(s, &r); break;
        case OP_FINOP: op_finop(s, &r); break;
        case OP_DEPEND: op_depend(s, &r); break;
        case OP_XHANDLE: op_xhandle(s, &r); break;
        case OP_PRESSURE: op_pressure(s, &r); break;
        case OP_HASH: op_hash(s, &r); break;
        }
        check_end(s, op_names[kind]);
        if (P->paranoid) {
            char w[64];
            snprintf(w, sizeof w, "full check after op %ld (%s)", i, op_names[kind]);
            full_check(s, w);
        }
        after_alloc_check(s);
    }
    /* the end: check, drop every root, collect everything: only what frozen objects reach stays */
    s->op = P->ops;
    if (sh)
        sh->op = P->ops;
    full_check(s, "final full check");
    while (s->nframes) frame_pop(s);
    for (int a = 0; a < 2; a++)
        if (s->areas[a].active) area_remove(s, a);
    for (int k = 0; k < SCAN_SLOTS; k++) set_root_slot(s, &s->scan_slots[k], &s->scan_obj[k], 0);
    for (int h = 0; h < MAX_HANDLES; h++)
        if (s->handles[h].active) handle_free(s, h);
    res = tenure_root_scanner_remove(s->rt, s->scanner);
    if (res != TENURE_OK)
        diff(s, "tenure_root_scanner_remove: %s", tenure_strerror(res));
    check_end(s, "dropping every root");
    induced_collect(s, 2, 0, "the final full GC");
    full_check(s, "full check after dropping every root and a full GC");
    /* the finalizers of what that GC queued (they neither resurrect nor allocate now), then
     * everything but what frozen objects reach goes */
    s->final_phase = 1;
    for (int round = 0; round < 3 && s->nfq; round++) {
        /* (an object reregistered while queued is queued again by the next GC) */
        run_finalizers(s);
        induced_collect(s, 2, 0, "the full GC after the last finalizers");
        full_check(s, "full check after the last finalizers and a full GC");
    }
    if (s->nfq)
        diff(s, "finalizers are still pending at the end (%u)", s->nfq - s->fqhead);
    check_end(s, "the end");
    uint32_t left = 0;
    for (uint32_t j = 1; j < s->nobj; j++) left += !s->objs[j].reclaimed && !(s->objs[j].flags & F_FROZEN);
    if (P->verbose)
        fprintf(stderr, "seed %" PRIu64 ": %" PRIu64 " GCs, %u objects, %" PRIu64 " allocations, %" PRIu64
                        " NOMEM, %u left (reached from frozen segments), %" PRIu64 " queued for finalization, %" PRIu64
                        " finalizers run\n",
                P->seed, s->gcs, s->nobj - 1, s->allocs, s->nomem, left, s->queued_total, s->fin_runs_total);
    s->destroying = 1;
    tenure_destroy(s->rt);
    free(s->reg);
    free(s->fq);
    free(s->fobjs);
    for (int i = 0; i < s->nfrozen_segs; i++) free(s->frozen_mem[i]);
    for (uint32_t j = 1; j < s->nobj; j++) free(s->objs[j].refs);
    free(s->objs);
    free(s->reach);
    free(s->queue);
    free(s->frozen);
    free(s->srcq);
    free(s->trk_dead);
    free(s->hkeys);
    free(s->hvals);
    if (sh) {
        sh->gcs = s->gcs;
        sh->done = 1;
    }
    finalizers_attach(NULL);
    free(s);
}

/* ------------------------------------------------------------------------------------------
 * Driver: child processes, reduction, summary
 * ---------------------------------------------------------------------------------------- */
typedef struct outcome {
    int failed;
    long op;
    uint64_t gcs, nomem;
    int sig;
    char msg[600];
} outcome;

/* how programs run (--timeout, --no-fork), and the result page run_one reuses */
typedef struct driver {
    int timeout;
    int nofork;
    shres *sh;
} driver;

static shres *shres_new(void) {
    void *p = mmap(NULL, sizeof(shres), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
        perror("mmap");
        exit(2);
    }
    return p;
}

static pid_t spawn(const driver *d, const params *P, shres *sh, int quiet) {
    memset((void *)sh, 0, sizeof *sh);
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) {
        perror("fork");
        exit(2);
    }
    if (pid == 0) {
        if (quiet) {
            int fd = open("/dev/null", O_WRONLY);
            if (fd >= 0) dup2(fd, 2);
        }
        alarm((unsigned)d->timeout);
        run_program(P, sh, 1);
        _exit(0);
    }
    return pid;
}

static void collect_outcome(int status, const params *P, shres *sh, outcome *out) {
    memset(out, 0, sizeof *out);
    out->op = sh->op;
    out->gcs = sh->gcs;
    out->nomem = sh->nomem;
    snprintf(out->msg, sizeof out->msg, "%s", sh->msg);
    if (WIFSIGNALED(status)) {
        out->failed = 1;
        out->sig = WTERMSIG(status);
        char m[200];
        snprintf(m, sizeof m, "%.150s", (const char *)sh->msg);
        snprintf(out->msg, sizeof out->msg, "killed by signal %d (%s)%s%s%s", out->sig, strsignal(out->sig),
                 out->sig == SIGALRM ? " after the time limit" : "", m[0] ? ": " : "", m);
    } else if (WEXITSTATUS(status) != 0 || sh->failed || !sh->done) {
        out->failed = 1;
        if (!out->msg[0])
            snprintf(out->msg, sizeof out->msg, "exit status %d", WEXITSTATUS(status));
    }
    if (out->op > P->ops)
        out->op = P->ops;
}

static void run_one(driver *d, const params *P, int quiet, outcome *out) {
    if (!d->sh)
        d->sh = shres_new();
    shres *sh = d->sh;
    if (d->nofork) {
        memset((void *)sh, 0, sizeof *sh);
        run_program(P, sh, 0);
        collect_outcome(0, P, sh, out);
        return;
    }
    pid_t pid = spawn(d, P, sh, quiet);
    int status;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    collect_outcome(status, P, sh, out);
}

static void drop_list(uint32_t mask, char *buf, size_t n) {
    buf[0] = 0;
    for (int k = 0; k < OP_COUNT; k++)
        if (mask & (1u << k)) {
            size_t l = strlen(buf);
            snprintf(buf + l, n - l, "%s%s", l ? "," : "", op_names[k]);
        }
}

static void command_line(const params *P, char *buf, size_t n) {
    char drops[256];
    drop_list(P->drop_mask, drops, sizeof drops);
    int l = snprintf(buf, n, "tenure-torture --seed %" PRIu64 " --ops %ld", P->seed, P->ops);
    if (P->verify_every != 200)
        l += snprintf(buf + l, n - (size_t)l, " --verify-every %ld", P->verify_every);
    if (P->hard_limit)
        l += snprintf(buf + l, n - (size_t)l, " --hard-limit %" PRIu64, P->hard_limit);
    if (P->inject)
        l += snprintf(buf + l, n - (size_t)l, " --inject %d", P->inject);
    if (drops[0])
        snprintf(buf + l, n - (size_t)l, " --drop %s", drops);
}

/* the failure class, to keep reductions on the same bug: the message without numbers and
 * addresses, up to the first object description */
static void failure_class(const char *msg, char *out, size_t n) {
    size_t k = 0;
    for (const char *p = msg; *p && k + 1 < n && k < 48; p++) {
        if (*p == '#' || *p == '(')
            break;
        if (p[0] == '0' && p[1] == 'x') {
            p++;
            while (p[1] && ((p[1] >= '0' && p[1] <= '9') || (p[1] >= 'a' && p[1] <= 'f'))) p++;
            continue;
        }
        if (*p >= '0' && *p <= '9')
            continue;
        out[k++] = *p;
    }
    out[k] = 0;
}

static int same_class(const outcome *a, const outcome *b) {
    if (a->sig || b->sig)
        return a->sig == b->sig;
    char x[64], y[64];
    failure_class(a->msg, x, sizeof x);
    failure_class(b->msg, y, sizeof y);
    return strcmp(x, y) == 0;
}

static void reduce(driver *d, const params *orig, const outcome *first) {
    params P = *orig;
    outcome o, best = *first;
    const char *env_hv = getenv("TENURE_HeapVerify"), *env_gs = getenv("TENURE_GCStress");
    printf("reducing seed %" PRIu64 " (failed at op %ld: %s)\n", P.seed, first->op, first->msg);
    if (first->op >= 0 && first->op < P.ops) {
        P.ops = first->op + 1;
        run_one(d, &P, 1, &o);
        if (!o.failed) {
            P.ops = orig->ops; /* not reproducible with a shorter prefix (or flaky) */
            printf("  (the prefix of %ld ops does not fail)\n", first->op + 1);
        } else
            best = o;
    }
    for (int pass = 0; pass < 2; pass++)
        for (int k = 0; k < OP_COUNT; k++) {
            if (P.drop_mask & (1u << k))
                continue;
            params Q = P;
            Q.drop_mask |= 1u << k;
            run_one(d, &Q, 1, &o);
            if (o.failed && same_class(&o, first)) {
                P = Q;
                best = o;
                if (o.op >= 0 && o.op < P.ops) P.ops = o.op + 1;
            }
        }
    /* shorter still: halve the ops while the failure persists (prefixes differ when ops drop
     * out of the middle, so retry a few lengths) */
    for (long step = P.ops / 2; step >= 1; step /= 2) {
        params Q = P;
        Q.ops = P.ops - step;
        if (Q.ops < 1)
            continue;
        run_one(d, &Q, 1, &o);
        if (o.failed && same_class(&o, first)) {
            P = Q;
            best = o;
        }
    }
    char cmd[512];
    command_line(&P, cmd, sizeof cmd);
    printf("  reduced: %s%s%s%s%s%s%s\n", env_hv ? "TENURE_HeapVerify=" : "", env_hv ? env_hv : "", env_hv ? " " : "",
           env_gs ? "TENURE_GCStress=" : "", env_gs ? env_gs : "", env_gs ? " " : "", cmd);
    printf("  (fails at op %ld of %ld: %s)\n", best.op, P.ops, best.msg);
}

static uint64_t parse_size(const char *s) {
    char *end;
    double v = strtod(s, &end);
    switch (*end) {
    case 'k': case 'K': v *= 1024; break;
    case 'm': case 'M': v *= 1024 * 1024; break;
    case 'g': case 'G': v *= 1024.0 * 1024 * 1024; break;
    default: break;
    }
    return (uint64_t)v;
}

static void usage(FILE *f) {
    fprintf(f,
            "usage: tenure-torture [options]\n"
            "  --seed N          the first program's seed (default: from the clock; always printed)\n"
            "  --ops N           operations per program (default 300)\n"
            "  --programs N      run N programs with consecutive seeds (default 1)\n"
            "  --minutes M       soak: run programs until M minutes have passed\n"
            "  --verify-every N  a full check every N allocations (default 200; 0: only after induced GCs)\n"
            "  --hard-limit B    GCHeapHardLimit (k/m/g suffixes): allocations may fail with NOMEM\n"
            "  --drop LIST       skip these op kinds (comma separated):");
    for (int k = 0; k < OP_COUNT; k++) fprintf(f, " %s", op_names[k]);
    fprintf(f, "\n"
               "  --reduce          on failure, find a short reproduction and print its command line\n"
               "  --jobs N          run N programs at a time (default 1)\n"
               "  --timeout S       seconds one program may take (default 120)\n"
               "  --no-fork         run in this process (for a debugger; stops at the first failure)\n"
               "  --verbose         a line per program\n"
               "  --trace           print every op and GC (with --seed, to study one program)\n"
               "  --paranoid        a full check after every op (slow; finds the op that broke the heap)\n"
               "  --inject N        self-test of the checks: 1 stores without the write barrier, 2 weak long\n"
               "                    handles are made strong, 3 weak short handles to finalizable objects are\n"
               "                    made weak long (the model does not know): each must fail\n"
               "The environment's TENURE_* options apply (e.g. TENURE_HeapVerify=1 TENURE_GCStress=97).\n");
}

int main(int argc, char **argv) {
    params P;
    memset(&P, 0, sizeof P);
    P.ops = 300;
    P.verify_every = 200;
    driver drv = {.timeout = 120};
    long programs = 1;
    double minutes = 0;
    int do_reduce = 0, jobs = 1, have_seed = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
#define NEEDV()                                                                                \
    do {                                                                                       \
        if (!v) {                                                                              \
            fprintf(stderr, "tenure-torture: %s needs a value\n", a);                          \
            return 2;                                                                          \
        }                                                                                      \
        i++;                                                                                   \
    } while (0)
        if (!strcmp(a, "--seed")) {
            NEEDV();
            P.seed = strtoull(v, NULL, 0);
            have_seed = 1;
        } else if (!strcmp(a, "--ops")) {
            NEEDV();
            P.ops = strtol(v, NULL, 0);
        } else if (!strcmp(a, "--programs")) {
            NEEDV();
            programs = strtol(v, NULL, 0);
        } else if (!strcmp(a, "--minutes")) {
            NEEDV();
            minutes = strtod(v, NULL);
        } else if (!strcmp(a, "--verify-every")) {
            NEEDV();
            P.verify_every = strtol(v, NULL, 0);
        } else if (!strcmp(a, "--hard-limit")) {
            NEEDV();
            P.hard_limit = parse_size(v);
        } else if (!strcmp(a, "--drop")) {
            NEEDV();
            char buf[512];
            snprintf(buf, sizeof buf, "%s", v);
            for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
                int k;
                for (k = 0; k < OP_COUNT && strcmp(tok, op_names[k]); k++) {
                }
                if (k == OP_COUNT) {
                    fprintf(stderr, "tenure-torture: unknown op kind '%s'\n", tok);
                    return 2;
                }
                P.drop_mask |= 1u << k;
            }
        } else if (!strcmp(a, "--reduce")) {
            do_reduce = 1;
        } else if (!strcmp(a, "--jobs")) {
            NEEDV();
            jobs = (int)strtol(v, NULL, 0);
            if (jobs < 1) jobs = 1;
            if (jobs > 64) jobs = 64;
        } else if (!strcmp(a, "--timeout")) {
            NEEDV();
            drv.timeout = (int)strtol(v, NULL, 0);
        } else if (!strcmp(a, "--no-fork")) {
            drv.nofork = 1;
        } else if (!strcmp(a, "--inject")) {
            NEEDV();
            P.inject = (int)strtol(v, NULL, 0);
        } else if (!strcmp(a, "--paranoid")) {
            P.paranoid = 1;
        } else if (!strcmp(a, "--trace")) {
            P.trace = 1;
        } else if (!strcmp(a, "--verbose")) {
            P.verbose = 1;
        } else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            return 0;
        } else {
            fprintf(stderr, "tenure-torture: unknown option %s\n", a);
            usage(stderr);
            return 2;
        }
    }
    const char *env_seed = getenv("TENURE_TEST_SEED");
    if (!have_seed && env_seed && env_seed[0]) {
        P.seed = strtoull(env_seed, NULL, 0);
        have_seed = 1;
    }
    if (!have_seed) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        P.seed = mix64((uint64_t)ts.tv_sec * 1000000007ull ^ (uint64_t)ts.tv_nsec ^ ((uint64_t)getpid() << 32)) &
                 0xffffffffffull;
    }
    if (P.ops < 0)
        P.ops = 0;
    if (drv.nofork)
        jobs = 1;
    setvbuf(stdout, NULL, _IOLBF, 0);
    char cmd[512];
    command_line(&P, cmd, sizeof cmd);
    if (minutes > 0)
        printf("tenure-torture: seed %" PRIu64 ", %ld ops per program, for %.1f minutes (replay program i: seed %" PRIu64
               "+i)\n",
               P.seed, P.ops, minutes, P.seed);
    else
        printf("tenure-torture: seed %" PRIu64 ", %ld program%s of %ld ops (replay: %s)\n", P.seed, programs,
               programs == 1 ? "" : "s", P.ops, cmd);

    double t0 = now_s(), deadline = minutes > 0 ? t0 + minutes * 60 : 0;
    long started = 0, finished = 0, failures = 0;
    uint64_t total_gcs = 0, total_nomem = 0;
#define MAX_REPORTED 5
    params failed_params[MAX_REPORTED];
    outcome failed_out[MAX_REPORTED];
    int nfailed_kept = 0;

    typedef struct slot { pid_t pid; params p; shres *sh; } slot;
    slot *slots = xcalloc((size_t)jobs, sizeof *slots);
    int running = 0;
    for (;;) {
        int more = minutes > 0 ? now_s() < deadline : started < programs;
        while (more && running < jobs) {
            int s;
            for (s = 0; s < jobs && slots[s].pid; s++) {
            }
            slots[s].p = P;
            slots[s].p.seed = P.seed + (uint64_t)started;
            started++;
            if (drv.nofork) {
                outcome o;
                run_one(&drv, &slots[s].p, 0, &o);
                finished++;
                total_gcs += o.gcs;
                total_nomem += o.nomem;
                more = minutes > 0 ? now_s() < deadline : started < programs;
                continue;
            }
            if (!slots[s].sh)
                slots[s].sh = shres_new();
            slots[s].pid = spawn(&drv, &slots[s].p, slots[s].sh, 0);
            running++;
            more = minutes > 0 ? now_s() < deadline : started < programs;
        }
        if (running == 0)
            break;
        int status;
        pid_t pid = wait(&status);
        if (pid < 0) {
            if (errno == EINTR) continue;
            break;
        }
        int s;
        for (s = 0; s < jobs && slots[s].pid != pid; s++) {
        }
        if (s == jobs)
            continue;
        running--;
        slots[s].pid = 0;
        outcome o;
        collect_outcome(status, &slots[s].p, slots[s].sh, &o);
        finished++;
        total_gcs += o.gcs;
        total_nomem += o.nomem;
        if (o.failed) {
            failures++;
            char c[512];
            command_line(&slots[s].p, c, sizeof c);
            printf("FAIL seed %" PRIu64 " at op %ld%s: %s\n  replay: %s\n", slots[s].p.seed, o.op,
                   o.op >= slots[s].p.ops ? " (the final phase)" : "", o.msg, c);
            if (nfailed_kept < MAX_REPORTED) {
                failed_params[nfailed_kept] = slots[s].p;
                failed_out[nfailed_kept++] = o;
            }
        }
        if (P.verbose && !o.failed)
            printf("seed %" PRIu64 ": ok, %" PRIu64 " GCs\n", slots[s].p.seed, o.gcs);
    }
    if (do_reduce && !drv.nofork)
        for (int i = 0; i < nfailed_kept; i++) reduce(&drv, &failed_params[i], &failed_out[i]);
    printf("%ld programs, %" PRIu64 " GCs, %ld failures", finished, total_gcs, failures);
    if (P.hard_limit)
        printf(", %" PRIu64 " allocations refused with NOMEM", total_nomem);
    printf(" (%.1f s)\n", now_s() - t0);
    return failures ? 1 : 0;
}
