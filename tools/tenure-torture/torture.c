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

typedef struct state {
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
} state;
static state S;

/* ------------------------------------------------------------------------------------------
 * Failure reporting
 * ---------------------------------------------------------------------------------------- */
static int in_fork = 1;

static void print_config(FILE *f) {
    const tenure_config *c = &S.cfg;
    fprintf(f,
            "  config: GCRegionSize=%" PRIu64 " GCgen0size=%" PRIu64 " GCgen1size=%" PRIu64
            " GCgen0MaxBudget=%" PRIu64 " GCCompactMode=%u GCLOHCompact=%u GCMarkStackSize=%" PRIu64
            " GCRetainRegions=%u GCHeapHardLimit=%" PRIu64 " HeapVerify=%u GCStress=%u\n",
            c->GCRegionSize, c->GCgen0size, c->GCgen1size, c->GCgen0MaxBudget, c->GCCompactMode,
            c->GCLOHCompact, c->GCMarkStackSize, c->GCRetainRegions, c->GCHeapHardLimit, c->HeapVerify,
            c->GCStress);
}

#if defined(__GNUC__)
__attribute__((format(printf, 1, 2)))
#endif
static void diff(const char *fmt, ...) {
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (S.diffs == 0 && S.sh) {
        snprintf(S.sh->msg, sizeof S.sh->msg, "%s", buf);
        S.sh->failed = 1;
    }
    if (S.diffs < 25)
        fprintf(stderr, "seed %" PRIu64 " op %ld: %s\n", S.P->seed, S.op, buf);
    else if (S.diffs == 25)
        fprintf(stderr, "seed %" PRIu64 " op %ld: (more differences not shown)\n", S.P->seed, S.op);
    S.diffs++;
}

static void die(const char *where) {
    fprintf(stderr, "seed %" PRIu64 " op %ld: FAILED %s (%d differences, %" PRIu64 " GCs)\n", S.P->seed,
            S.op, where, S.diffs, S.gcs);
    print_config(stderr);
    fflush(stderr);
    if (S.sh) {
        S.sh->gcs = S.gcs;
        S.sh->failed = 1;
    }
    if (in_fork)
        _exit(1);
    exit(1);
}

static void check_end(const char *where) {
    if (S.diffs)
        die(where);
}

static void hook(tenure_runtime *rt, tenure_result r, const char *fn, const char *msg, void *ctx) {
    (void)rt;
    (void)ctx;
    if (S.expect_err != TENURE_OK && r == S.expect_err) {
        S.got_err++;
        return;
    }
    diff("unexpected error %d (%s) from %s: %s", (int)r, tenure_strerror(r), fn ? fn : "?", msg ? msg : "?");
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
static const char *odesc(uint32_t j) {
    static char buf[4][160];
    static int turn;
    char *b = buf[turn++ & 3];
    if (j == 0) {
        snprintf(b, 160, "NULL");
        return b;
    }
    mobj *o = &S.objs[j];
    ttype *t = &S.types[o->tix];
    snprintf(b, 160, "#%u (%s%s%s%s, %zu bytes, gen %d, born op %ld%s)", j, t->name,
             o->flags & F_LARGE ? " large" : "", o->flags & F_POH ? " pinned-heap" : "",
             o->flags & F_FROZEN ? " frozen" : "", o->size, o->gen, o->born,
             j == S.rootarr ? ", the root array" : "");
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

static void **slot_at(uintptr_t base, int tix, unsigned i) {
    ttype *t = &S.types[tix];
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
static void init_payload(uint32_t j, char *p) {
    mobj *o = &S.objs[j];
    ttype *t = &S.types[o->tix];
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
static int check_obj(uint32_t j, uintptr_t pa, int level, const char *where) {
    mobj *o = &S.objs[j];
    ttype *t = &S.types[o->tix];
    char *p = (char *)pa;
    int full = level >= 2;
    if (level >= 1) {
        if (!tenure_is_object(S.rt, p)) {
            diff("%s: %s at %p is not an object", where, odesc(j), (void *)p);
            return 0;
        }
        const tenure_type *ty = tenure_object_type(S.rt, p);
        if (ty != t->t) {
            diff("%s: %s at %p has type %s", where, odesc(j), (void *)p, ty ? tenure_type_name(ty) : "?");
            return 0;
        }
        size_t sz = tenure_object_size(S.rt, p);
        if (sz != o->size) {
            diff("%s: %s at %p has size %zu", where, odesc(j), (void *)p, sz);
            return 0;
        }
    }
    if (t->kind != K_FIX && tenure_array_length(p) != o->length) {
        diff("%s: %s at %p has length %zu, expected %zu", where, odesc(j), (void *)p, tenure_array_length(p),
             o->length);
        return 0;
    }
    int sample = !full && o->size > 4096;
    switch (t->kind) {
    case K_FIX: {
        uint64_t id = *(uint64_t *)(p + 8);
        if (id != IDW(j)) {
            diff("%s: %s at %p holds the number of #%" PRIu64 " (word %#" PRIx64 ")", where, odesc(j), (void *)p,
                 (uint64_t)(id & 0xffffffffffffull), id);
            return 0;
        }
        for (unsigned w = 0; w < t->p; w++)
            if (((uint64_t *)(p + t->pay_off))[w] != pw(j, o->seed, w)) {
                diff("%s: %s at %p: payload word %u is %#" PRIx64 ", expected %#" PRIx64, where, odesc(j),
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
                diff("%s: %s at %p: record %zu tag is %#" PRIx64 ", expected %#" PRIx64, where, odesc(j), (void *)p,
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
            diff("%s: %s at %p holds the number of #%" PRIu64 " (word %#" PRIx64 ")", where, odesc(j), (void *)p,
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
                diff("%s: %s at %p: payload bytes at %zu are %#" PRIx64 ", expected %#" PRIx64, where, odesc(j),
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
static uint32_t model_new(int tix, uint8_t flags, size_t length, size_t size, uintptr_t addr, int gen,
                          uint64_t seed) {
    if (S.nobj == S.capobj) {
        S.capobj = S.capobj ? S.capobj * 2 : 1024;
        S.objs = xrealloc(S.objs, S.capobj * sizeof *S.objs);
    }
    uint32_t j = S.nobj++;
    mobj *o = &S.objs[j];
    memset(o, 0, sizeof *o);
    ttype *t = &S.types[tix];
    o->tix = (uint16_t)tix;
    o->flags = flags;
    o->length = length;
    o->size = size;
    o->addr = addr;
    o->gen = gen;
    o->seed = seed;
    o->born = S.op;
    o->nrefs = t->kind == K_FIX ? t->k : (t->kind == K_REFARR || t->kind == K_RECARR) ? (uint32_t)length : 0;
    o->refs = o->nrefs ? xcalloc(o->nrefs, sizeof(uint32_t)) : NULL;
    return j;
}

static void queue_reserve(uint32_t n) {
    if (n > S.capqueue) {
        S.capqueue = n + n / 2 + 64;
        S.queue = xrealloc(S.queue, S.capqueue * sizeof *S.queue);
    }
}

static int is_fin(uint32_t j) { return j && S.types[S.objs[j].tix].fin; }

/* what a handle behaves as in the next GC (the collector works this out at each GC's start) */
static int h_eff(const mhandle *m) {
    switch (m->kind) {
    case TENURE_HANDLE_VARIABLE: return m->vkind;
    case TENURE_HANDLE_REFCOUNTED:
        return m->obj && S.objs[m->obj].rc ? TENURE_HANDLE_STRONG : TENURE_HANDLE_WEAK_SHORT;
    default: return m->kind;
    }
}
/* keeps its object alive */
static int h_strong(const mhandle *m) {
    int e = h_eff(m);
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
static void model_register(uint32_t j) {
    if (S.objs[j].registered)
        return;
    S.objs[j].registered = 1;
    vec_push(&S.reg, &S.nreg, &S.capreg, j);
}

/* tenure_suppress_finalize, as documented: the finalizer will not run until reregistered (the
 * registration goes, and so does a queued run that has not started) */
static void model_suppress(uint32_t j) {
    if (S.objs[j].registered) {
        for (uint32_t i = 0; i < S.nreg; i++)
            if (S.reg[i] == j) {
                S.reg[i] = S.reg[--S.nreg];
                break;
            }
        S.objs[j].registered = 0;
    }
    for (uint32_t i = S.fqhead; i < S.nfq; i++)
        if (S.fq[i] == j) S.fq[i] = 0;
    S.reach_dirty = 1;
}

/* visit the model's roots: f(object) for every strongly held object */
static void model_roots(void (*f)(uint32_t)) {
    for (int i = 0; i < S.nframes; i++)
        for (unsigned k = 0; k < S.frames[i]->n; k++)
            if (S.frames[i]->obj[k]) f(S.frames[i]->obj[k]);
    for (int a = 0; a < 2; a++)
        if (S.areas[a].active)
            for (int k = 0; k < AREA_SLOTS; k++)
                if (S.areas[a].obj[k]) f(S.areas[a].obj[k]);
    for (int k = 0; k < SCAN_SLOTS; k++)
        if (S.scan_obj[k]) f(S.scan_obj[k]);
    for (int h = 0; h < MAX_HANDLES; h++)
        if (S.handles[h].active && S.handles[h].obj && h_strong(&S.handles[h]))
            f(S.handles[h].obj);
    for (uint32_t i = 0; i < S.nfrozen; i++) f(S.frozen[i]);
    /* the ready queue (the entry whose finalizer runs included) */
    for (uint32_t i = S.fqhead; i < S.nfq; i++)
        if (S.fq[i]) f(S.fq[i]);
}

static uint32_t qn;
static void reach_mark(uint32_t j) {
    mobj *o = &S.objs[j];
    if (o->rmark == S.reach_epoch)
        return;
    o->rmark = S.reach_epoch;
    S.queue[qn++] = j;
}

/* the strongly reachable objects, into S.reach */
static void compute_reach(void) {
    S.reach_epoch++;
    queue_reserve(S.nobj + 16);
    qn = 0;
    model_roots(reach_mark);
    uint32_t q = 0;
    for (;;) {
        for (; q < qn; q++) {
            mobj *o = &S.objs[S.queue[q]];
            for (uint32_t i = 0; i < o->nrefs; i++)
                if (o->refs[i]) reach_mark(o->refs[i]);
        }
        /* secondaries of reachable primaries */
        for (int h = 0; h < MAX_HANDLES; h++) {
            mhandle *m = &S.handles[h];
            if (m->active && m->kind == TENURE_HANDLE_DEPENDENT && m->obj && m->sec &&
                S.objs[m->obj].rmark == S.reach_epoch)
                reach_mark(m->sec);
        }
        if (q == qn)
            break;
    }
    if (qn > S.capreach) {
        S.capreach = qn + qn / 2 + 64;
        S.reach = xrealloc(S.reach, S.capreach * sizeof *S.reach);
    }
    memcpy(S.reach, S.queue, qn * sizeof *S.reach);
    S.nreach = qn;
    S.reach_dirty = 0;
}

static void reach_add(uint32_t j) {
    if (S.reach_dirty)
        return;
    if (S.nreach == S.capreach) {
        S.capreach = S.capreach * 2 + 64;
        S.reach = xrealloc(S.reach, S.capreach * sizeof *S.reach);
    }
    S.reach[S.nreach++] = j;
    S.objs[j].rmark = S.reach_epoch;
}

static int is_reachable(uint32_t j) {
    if (S.reach_dirty)
        compute_reach();
    return j && S.objs[j].rmark == S.reach_epoch;
}

static uint32_t pick_reachable(rng *r) {
    if (S.reach_dirty)
        compute_reach();
    return S.nreach ? S.reach[rbelow(r, S.nreach)] : 0;
}
/* a reachable object or NULL */
static uint32_t pick_target(rng *r, unsigned null_percent) {
    if (rchance(r, null_percent))
        return 0;
    return pick_reachable(r);
}
/* a reachable object with reference slots (the root array if none found) */
static uint32_t pick_source(rng *r) {
    for (int tries = 0; tries < 12; tries++) {
        uint32_t j = pick_reachable(r);
        if (j && S.objs[j].nrefs)
            return j;
    }
    return S.rootarr;
}

/* store a reference through the barrier and in the model */
static void set_ref(uint32_t src, unsigned slot, uint32_t dst) {
    mobj *s = &S.objs[src];
    if (slot >= s->nrefs || s->reclaimed) {
        diff("tool bug: set_ref(%s, slot %u)", odesc(src), slot);
        die("set_ref");
    }
    void *val = dst ? (void *)S.objs[dst].addr : NULL;
    if (S.P->inject == 1)
        *slot_at(s->addr, s->tix, slot) = val; /* self-test: a store that misses the barrier */
    else
        tenure_write_ref(S.rt, (void *)s->addr, slot_at(s->addr, s->tix, slot), val);
    if (s->refs[slot] && s->refs[slot] != dst)
        S.reach_dirty = 1;
    s->refs[slot] = dst;
}

/* ------------------------------------------------------------------------------------------
 * The check after every GC (from the GC callback)
 * ---------------------------------------------------------------------------------------- */
static uint32_t qdone;
static int mk_count, mk_c;
static uint64_t mk_bytes;
static void live_mark(uint32_t j) {
    mobj *o = &S.objs[j];
    if (o->mark2 == S.epoch)
        return;
    o->mark2 = S.epoch;
    if (mk_count && gen_class(o) <= mk_c)
        mk_bytes += o->size;
    S.queue[qn++] = j;
}
static void live_close(void) {
    for (; qdone < qn; qdone++) {
        mobj *o = &S.objs[S.queue[qdone]];
        for (uint32_t i = 0; i < o->nrefs; i++)
            if (o->refs[i]) live_mark(o->refs[i]);
    }
}
/* survives the GC being modelled (condemned generations <= mk_c) */
static int m_alive(uint32_t j) {
    mobj *o = &S.objs[j];
    return gen_class(o) > mk_c || o->mark2 == S.epoch;
}
/* DependentHandle: secondaries of surviving primaries, to a fixed point */
static void model_dep_fix(void) {
    for (int changed = 1; changed;) {
        changed = 0;
        for (int h = 0; h < MAX_HANDLES; h++) {
            mhandle *m = &S.handles[h];
            if (m->active && m->kind == TENURE_HANDLE_DEPENDENT && m->obj && m->sec && m_alive(m->obj) &&
                !m_alive(m->sec)) {
                live_mark(m->sec);
                live_close();
                changed = 1;
            }
        }
    }
}

/* SizedRef (full GCs): each handle's graph (frozen objects are not in the heap: neither counted
 * nor traced); the union of all graphs; which graphs share objects */
static uint64_t sized_union;
static void model_sized(void) {
    sized_union = 0;
    queue_reserve(S.nobj + 16);
    for (int h = 0; h < MAX_HANDLES; h++) {
        mhandle *m = &S.handles[h];
        if (m->active && m->kind == TENURE_HANDLE_SIZED_REF) m->sized_overlap = 0;
    }
    for (int h = 0; h < MAX_HANDLES; h++) {
        mhandle *m = &S.handles[h];
        if (!m->active || m->kind != TENURE_HANDLE_SIZED_REF)
            continue;
        uint64_t own = 0;
        S.epoch++;
        uint32_t n = 0;
        if (m->obj && !(S.objs[m->obj].flags & F_FROZEN)) {
            S.objs[m->obj].mark = S.epoch;
            S.queue[n++] = m->obj;
        }
        for (uint32_t q = 0; q < n; q++) {
            uint32_t j = S.queue[q];
            mobj *o = &S.objs[j];
            own += o->size;
            if (o->sref_stamp != (uint32_t)S.gcs) {
                o->sref_stamp = (uint32_t)S.gcs;
                o->sref_owner = h;
                sized_union += o->size;
            } else if (o->sref_owner != h) {
                m->sized_overlap = 1;
                S.handles[o->sref_owner].sized_overlap = 1;
            }
            for (uint32_t i = 0; i < o->nrefs; i++) {
                uint32_t t = o->refs[i];
                if (t && S.objs[t].mark != S.epoch && !(S.objs[t].flags & F_FROZEN)) {
                    S.objs[t].mark = S.epoch;
                    S.queue[n++] = t;
                }
            }
        }
        m->sized_own = own;
    }
    for (int h = 0; h < MAX_HANDLES; h++) {
        mhandle *m = &S.handles[h];
        if (m->active && m->kind == TENURE_HANDLE_SIZED_REF) {
            m->sized_hi = m->sized_own;
            m->sized_lo = m->sized_overlap ? 0 : m->sized_own;
        }
    }
}

static void check_sized(const char *where) {
    for (int h = 0; h < MAX_HANDLES; h++) {
        mhandle *m = &S.handles[h];
        if (!m->active || m->kind != TENURE_HANDLE_SIZED_REF)
            continue;
        uint64_t b = tenure_handle_sized_ref_bytes(S.rt, m->h);
        if (b < m->sized_lo || b > m->sized_hi)
            diff("%s: SizedRef handle %d to %s says %" PRIu64 " bytes, the model expected [%" PRIu64 ", %" PRIu64
                 "] (its graph at the last full GC: %" PRIu64 " bytes%s)",
                 where, h, odesc(m->obj), b, m->sized_lo, m->sized_hi, m->sized_own,
                 m->sized_overlap ? ", shared with another SizedRef graph" : "");
    }
}

static const char *hkind_name(int k) {
    static const char *const n[] = {"weak short", "weak long", "strong", "pinned", "variable",
                                    "refcounted", "dependent", "async pinned", "sized ref"};
    return k >= 0 && k <= 8 ? n[k] : "?";
}

static uint32_t *srcq;
static uint32_t srcn, srccap;
static void src_push(uint32_t j) {
    if (srcn == srccap) {
        srccap = srccap * 2 + 256;
        srcq = xrealloc(srcq, srccap * sizeof *srcq);
    }
    srcq[srcn++] = j;
}

/* an edge from a real slot holding p that the model says holds object j */
static void edge(const char *what, unsigned idx, uint32_t from, uint32_t j, void *p) {
    if (j == 0) {
        if (p != NULL)
            diff("after GC %" PRIu64 ": %s %u%s%s holds %p, the model says NULL", S.gcs, what, idx,
                 from ? " of " : "", from ? odesc(from) : "", p);
        return;
    }
    mobj *o = &S.objs[j];
    if (o->reclaimed) {
        diff("after GC %" PRIu64 ": model inconsistency: %s %u refers to reclaimed %s", S.gcs, what, idx, odesc(j));
        return;
    }
    if (o->new_addr) {
        if ((uintptr_t)p != o->new_addr)
            diff("after GC %" PRIu64 ": %s %u%s%s holds %p, expected %s at %#" PRIxPTR, S.gcs, what, idx,
                 from ? " of " : "", from ? odesc(from) : "", p, odesc(j), o->new_addr);
        return;
    }
    if (p == NULL) {
        diff("after GC %" PRIu64 ": %s %u%s%s is NULL, expected %s (was at %#" PRIxPTR ")", S.gcs, what, idx,
             from ? " of " : "", from ? odesc(from) : "", odesc(j), o->addr);
        return;
    }
    if (o->mark2 != S.epoch)
        diff("after GC %" PRIu64 ": model inconsistency: %s not live but referenced", S.gcs, odesc(j));
    o->new_addr = (uintptr_t)p;
    src_push(j);
}

static tenure_handle **trk_dead;
static uint32_t ntrk_dead, captrk_dead;
static uint64_t gc_queued_n, gc_queued_bytes;

static void gc_check(const tenure_gc_info *info) {
    int c = info->generation;
    if (c == 2)
        model_sized();
    /* 1. the model's live set, in the collector's marking order: the roots (the ready queue
     *    and every handle that is strong now included), what existing objects of generations
     *    older than the condemned ones refer to (cards), closed over references; dependent
     *    handles to a fixed point; weak short handles of dead objects are cleared; registered
     *    finalizable objects found dead are queued and marked through; dependent handles again;
     *    weak long handles of dead objects are cleared, dependent handles of dead primaries too */
    S.epoch++;
    queue_reserve(S.nobj + 16);
    qn = qdone = 0;
    mk_count = 0;
    mk_c = c;
    model_roots(live_mark);
    for (uint32_t j = 1; j < S.nobj; j++) {
        mobj *o = &S.objs[j];
        if (o->reclaimed || gen_class(o) <= c)
            continue;
        for (uint32_t i = 0; i < o->nrefs; i++)
            if (o->refs[i]) live_mark(o->refs[i]);
    }
    live_close();
    model_dep_fix();
    for (int h = 0; h < MAX_HANDLES; h++) {
        mhandle *m = &S.handles[h];
        if (m->active && m->obj && h_eff(m) == TENURE_HANDLE_WEAK_SHORT && !m_alive(m->obj))
            m->obj = 0;
    }
    uint32_t kept = 0, first = S.nfq;
    for (uint32_t i = 0; i < S.nreg; i++) {
        uint32_t j = S.reg[i];
        if (m_alive(j)) {
            S.reg[kept++] = j;
            continue;
        }
        S.objs[j].registered = 0;
        vec_push(&S.fq, &S.nfq, &S.capfq, j);
        if (S.P->trace)
            fprintf(stderr, "  GC %" PRIu64 " queues %s\n", S.gcs, odesc(j));
    }
    S.nreg = kept;
    gc_queued_n = S.nfq - first;
    S.queued_total += gc_queued_n;
    mk_count = 1;
    mk_bytes = 0;
    for (uint32_t i = first; i < S.nfq; i++) live_mark(S.fq[i]);
    live_close();
    mk_count = 0;
    gc_queued_bytes = mk_bytes;
    if (gc_queued_n)
        model_dep_fix();
    for (int h = 0; h < MAX_HANDLES; h++) {
        mhandle *m = &S.handles[h];
        if (!m->active)
            continue;
        if (m->kind == TENURE_HANDLE_DEPENDENT) {
            if (m->obj && !m_alive(m->obj))
                m->obj = m->sec = 0;
            else if (!m->obj && m->sec && !m_alive(m->sec))
                m->sec = 0; /* no primary keeps it: it dies (the handle must not dangle) */
        } else if (m->obj && h_eff(m) == TENURE_HANDLE_WEAK_LONG && !m_alive(m->obj))
            m->obj = 0;
    }
    /* 2. traverse the real heap from the real roots */
    srcn = 0;
    for (uint32_t j = 1; j < S.nobj; j++) {
        mobj *o = &S.objs[j];
        o->new_addr = 0;
        if (!o->reclaimed && gen_class(o) > c) {
            o->new_addr = o->addr; /* not condemned: must not move */
            src_push(j);
        }
    }
    for (int i = 0; i < S.nframes; i++)
        for (unsigned k = 0; k < S.frames[i]->n; k++) edge("frame slot", k, 0, S.frames[i]->obj[k], S.frames[i]->vars[k]);
    for (int a = 0; a < 2; a++)
        if (S.areas[a].active)
            for (unsigned k = 0; k < AREA_SLOTS; k++) edge("root area slot", k, 0, S.areas[a].obj[k], S.areas[a].slots[k]);
    for (unsigned k = 0; k < SCAN_SLOTS; k++) edge("scanner slot", k, 0, S.scan_obj[k], S.scan_slots[k]);
    /* every handle (weak ones: cleared exactly when the model says), every secondary */
    char what[96];
    for (unsigned h = 0; h < MAX_HANDLES; h++) {
        mhandle *m = &S.handles[h];
        if (!m->active)
            continue;
        snprintf(what, sizeof what, "%s handle%s", hkind_name(m->kind),
                 m->kind == TENURE_HANDLE_VARIABLE || m->kind == TENURE_HANDLE_REFCOUNTED
                     ? (h_eff(m) == TENURE_HANDLE_STRONG ? " (strong now)"
                        : h_eff(m) == TENURE_HANDLE_PINNED ? " (pinned now)"
                        : h_eff(m) == TENURE_HANDLE_WEAK_LONG ? " (weak long now)" : " (weak short now)")
                     : "");
        edge(what, h, 0, m->obj, tenure_handle_get(S.rt, m->h));
        if (m->kind == TENURE_HANDLE_DEPENDENT)
            edge("the secondary of dependent handle", h, 0, m->sec, tenure_handle_get_secondary(S.rt, m->h));
    }
    /* finalizable objects through their weak long trackers: the queued ones are found here */
    for (uint32_t i = 0; i < S.nfobjs; i++) {
        uint32_t j = S.fobjs[i];
        snprintf(what, sizeof what, "the weak long handle that tracks %.60s:", odesc(j));
        edge(what, j, 0, m_alive(j) ? j : 0, tenure_handle_get(S.rt, S.objs[j].trk));
    }
    snprintf(what, sizeof what, "after GC %" PRIu64, S.gcs);
    for (uint32_t q = 0; q < srcn; q++) {
        uint32_t j = srcq[q];
        mobj *o = &S.objs[j];
        if (!check_obj(j, o->new_addr, o->new_addr != o->addr, what))
            continue;
        for (uint32_t i = 0; i < o->nrefs; i++) {
            void *p = *slot_at(o->new_addr, o->tix, i);
            edge("slot", i, j, o->refs[i], p);
        }
    }
    /* 3. movement, generations, reclamation */
    int loh_move_ok = (info->compacted & 8) != 0;
    S.epoch++; /* pinned marks in mark: pinned handles (variable ones too), async pinned handles
                  and the elements of their reference arrays */
    for (unsigned h = 0; h < MAX_HANDLES; h++) {
        mhandle *m = &S.handles[h];
        if (!m->active || !m->obj)
            continue;
        int e = h_eff(m);
        if (e == TENURE_HANDLE_PINNED || e == TENURE_HANDLE_ASYNC_PINNED)
            S.objs[m->obj].mark = S.epoch;
        if (e == TENURE_HANDLE_ASYNC_PINNED && S.objs[m->obj].tix == S.tix_refarr)
            for (uint32_t i = 0; i < S.objs[m->obj].nrefs; i++)
                if (S.objs[m->obj].refs[i]) S.objs[S.objs[m->obj].refs[i]].mark = S.epoch;
    }
    uint32_t live_epoch = S.epoch - 1;
    for (uint32_t j = 1; j < S.nobj; j++) {
        mobj *o = &S.objs[j];
        if (o->reclaimed)
            continue;
        int live = o->mark2 == live_epoch;
        if (gen_class(o) > c)
            continue; /* checked by the edges (new_addr preset) */
        if (!live) {
            if (!S.reach_dirty && o->rmark == S.reach_epoch)
                diff("tool bug: reclaimed %s is in the list of reachable objects", odesc(j));
            if (o->registered)
                diff("model inconsistency: reclaimed %s is registered for finalization", odesc(j));
            o->reclaimed = 1;
            free(o->refs);
            o->refs = NULL;
            o->nrefs = 0;
            if (o->trk) {
                if (ntrk_dead == captrk_dead) {
                    captrk_dead = captrk_dead * 2 + 64;
                    trk_dead = xrealloc(trk_dead, captrk_dead * sizeof *trk_dead);
                }
                trk_dead[ntrk_dead++] = o->trk;
                o->trk = NULL;
            }
            continue;
        }
        if (!o->new_addr) {
            diff("after GC %" PRIu64 ": live %s was never reached", S.gcs, odesc(j));
            continue;
        }
        if (o->new_addr != o->addr) {
            if (o->mark == S.epoch)
                diff("after GC %" PRIu64 ": %s held by a pinned or async pinned handle moved from %#" PRIxPTR
                     " to %#" PRIxPTR, S.gcs, odesc(j), o->addr, o->new_addr);
            else if (o->flags & F_POH)
                diff("after GC %" PRIu64 ": pinned-heap %s moved from %#" PRIxPTR " to %#" PRIxPTR, S.gcs, odesc(j),
                     o->addr, o->new_addr);
            else if (o->gen == 3 && !loh_move_ok)
                diff("after GC %" PRIu64 ": large %s moved from %#" PRIxPTR " to %#" PRIxPTR
                     " although the LOH was not compacted (mask %#x)",
                     S.gcs, odesc(j), o->addr, o->new_addr, (unsigned)info->compacted);
            else if (o->gen <= 2 && !(info->compacted & (1 << o->gen)))
                diff("after GC %" PRIu64 ": %s moved from %#" PRIxPTR " to %#" PRIxPTR
                     " although its generation was swept (compacted mask %#x)",
                     S.gcs, odesc(j), o->addr, o->new_addr, (unsigned)info->compacted);
        }
        int g = tenure_object_generation(S.rt, (void *)o->new_addr);
        if (o->gen <= 2 ? (g < o->gen || g > 2) : g != o->gen)
            diff("after GC %" PRIu64 " (gen %d): %s is now in generation %d", S.gcs, c, odesc(j), g);
        o->addr = o->new_addr;
        o->gen = g;
    }
    /* the finalizable objects that still exist */
    uint32_t nf = 0;
    for (uint32_t i = 0; i < S.nfobjs; i++)
        if (!S.objs[S.fobjs[i]].reclaimed) S.fobjs[nf++] = S.fobjs[i];
    S.nfobjs = nf;
    /* 4. the collector's own figures: finalization, SizedRef, identity hashes */
    tenure_stats st;
    tenure_get_stats(S.rt, &st);
    if (st.finalization_promoted_count != gc_queued_n || st.finalization_promoted_bytes != gc_queued_bytes)
        diff("after GC %" PRIu64 " (gen %d): %" PRIu64 " objects (%" PRIu64 " bytes) were kept for finalization, the "
             "model says %" PRIu64 " queued (%" PRIu64 " bytes marked from them)",
             S.gcs, c, st.finalization_promoted_count, st.finalization_promoted_bytes, gc_queued_n, gc_queued_bytes);
    uint64_t hashed = 0;
    for (uint32_t j = 1; j < S.nobj; j++) hashed += S.objs[j].hash && !S.objs[j].reclaimed;
    if (st.sync_blocks != hashed)
        diff("after GC %" PRIu64 ": the identity hash table has %" PRIu64 " entries, the model has %" PRIu64
             " live hashed objects", S.gcs, st.sync_blocks, hashed);
    if (c == 2) {
        uint64_t sum = 0;
        for (int h = 0; h < MAX_HANDLES; h++)
            if (S.handles[h].active && S.handles[h].kind == TENURE_HANDLE_SIZED_REF)
                sum += tenure_handle_sized_ref_bytes(S.rt, S.handles[h].h);
        if (sum != sized_union)
            diff("after GC %" PRIu64 ": the SizedRef handles say %" PRIu64 " bytes in all, the union of their graphs "
                 "has %" PRIu64, S.gcs, sum, sized_union);
        snprintf(what, sizeof what, "after GC %" PRIu64, S.gcs);
        check_sized(what);
    }
}

static int cmp_addr(const void *a, const void *b) {
    uintptr_t x = S.objs[*(const uint32_t *)a].addr, y = S.objs[*(const uint32_t *)b].addr;
    return x < y ? -1 : x > y;
}

/* existing objects do not overlap */
static void check_overlap(const char *where) {
    queue_reserve(S.nobj + 16);
    uint32_t n = 0;
    for (uint32_t j = 1; j < S.nobj; j++)
        if (!S.objs[j].reclaimed) S.queue[n++] = j;
    qsort(S.queue, n, sizeof *S.queue, cmp_addr);
    for (uint32_t i = 1; i < n; i++) {
        mobj *a = &S.objs[S.queue[i - 1]], *b = &S.objs[S.queue[i]];
        if (a->addr + a->size > b->addr)
            diff("%s: %s at %#" PRIxPTR " overlaps %s at %#" PRIxPTR, where, odesc(S.queue[i - 1]), a->addr,
                 odesc(S.queue[i]), b->addr);
    }
}

static void gc_callback(tenure_runtime *rt, const tenure_gc_info *info, void *ctx) {
    (void)rt;
    (void)ctx;
    S.gcs++;
    if (S.sh)
        S.sh->gcs = S.gcs;
    if (S.P->trace)
        fprintf(stderr, "  GC %" PRIu64 ": gen %d reason %u compacted %#x\n", S.gcs, info->generation, info->reason,
                (unsigned)info->compacted);
    if (info->index != S.gcs)
        diff("GC callback: index %" PRIu64 ", expected %" PRIu64, info->index, S.gcs);
    if (info->generation < 0 || info->generation > 2) {
        diff("GC callback: condemned generation %d", info->generation);
        die("in the GC callback");
    }
    if (S.wait_gc) {
        S.wait_gc = 0;
        if (info->generation != 2 || info->reason != 1)
            diff("tenure_wait_for_pending_finalizers: its GC condemned generation %d with reason %u (expected 2, 1)",
                 info->generation, info->reason);
    }
    if (S.pressure_call) {
        S.pressure_gcs++;
        if (S.pressure_gcs > 1 || info->generation != 2 || info->reason != 1 || S.press_since < (8u << 20))
            diff("tenure_add_memory_pressure: GC %d of the call condemned generation %d with reason %u (expected "
                 "one GC of generation 2, reason 1) with %" PRIu64 " bytes of pressure added since the last gen2 GC "
                 "(the budget is at least 8 MiB)",
                 S.pressure_gcs, info->generation, info->reason, S.press_since);
    }
    if (info->generation == 2)
        S.press_since = 0;
    if (S.induced) {
        S.induced_seen++;
        if (S.induced_seen > 1)
            diff("tenure_collect ran %d GCs", S.induced_seen);
        if (info->generation != S.induced_gen)
            diff("tenure_collect(gen %d, flags %#x) condemned generation %d", S.induced_gen, S.induced_flags,
                 info->generation);
        unsigned f = S.induced_flags;
        uint32_t want = (f & TENURE_COLLECT_AGGRESSIVE) ? 17u
                        : (f & TENURE_COLLECT_OPTIMIZED) ? 7u
                        : (f & TENURE_COLLECT_COMPACT) ? 10u : 1u;
        if (info->reason != want)
            diff("tenure_collect(flags %#x): GC reason %u, expected %u", f, info->reason, want);
    }
    int forced = info->reason == 5 || info->reason == 6 || info->reason == 10 || info->reason == 17 ||
                 S.cfg.GCCompactMode == 1 || (S.induced && (S.induced_flags & TENURE_COLLECT_COMPACT));
    /* compacted: bit g for the condemned generations of the small object heap, bit 3 the LOH */
    unsigned allowed = ((1u << (info->generation + 1)) - 1) | (info->generation == 2 ? 8u : 0u);
    unsigned cm = (unsigned)info->compacted;
    if (S.cfg.GCCompactMode == 2 && !forced && (cm & 7u) != 0)
        diff("GC %" PRIu64 ": GCCompactMode=2 but compacted mask %#x (reason %u)", S.gcs, cm, info->reason);
    if (cm & ~allowed)
        diff("GC %" PRIu64 ": compacted mask %#x has generations that were not condemned (gen %d)", S.gcs, cm,
             info->generation);
    int loh_ok = S.cfg.GCLOHCompact ||
                 (S.induced && (S.induced_flags & (TENURE_COLLECT_COMPACT_LOH | TENURE_COLLECT_AGGRESSIVE)));
    if ((cm & 8u) && !loh_ok)
        diff("GC %" PRIu64 " (reason %u): the LOH was compacted although no one asked (compacted mask %#x)", S.gcs,
             info->reason, cm);
    gc_check(info);
    char where[64];
    snprintf(where, sizeof where, "after GC %" PRIu64, S.gcs);
    check_overlap(where);
    snprintf(where, sizeof where, "in the check after GC %" PRIu64 " (gen %d, reason %u)", S.gcs, info->generation,
             info->reason);
    check_end(where);
}

/* ------------------------------------------------------------------------------------------
 * The full check
 * ---------------------------------------------------------------------------------------- */
static uintptr_t *hkeys;
static uint32_t *hvals;
static size_t hcap;
static size_t hslot(uintptr_t k) { return (size_t)(mix64(k) & (hcap - 1)); }
static void hash_build(void) {
    size_t n = 0;
    for (uint32_t j = 1; j < S.nobj; j++) n += !S.objs[j].reclaimed;
    size_t cap = 64;
    while (cap < 2 * n + 2) cap *= 2;
    if (cap > hcap) {
        hcap = cap;
        hkeys = xrealloc(hkeys, hcap * sizeof *hkeys);
        hvals = xrealloc(hvals, hcap * sizeof *hvals);
    }
    memset(hkeys, 0, hcap * sizeof *hkeys);
    for (uint32_t j = 1; j < S.nobj; j++) {
        if (S.objs[j].reclaimed)
            continue;
        size_t s = hslot(S.objs[j].addr);
        while (hkeys[s] && hkeys[s] != S.objs[j].addr) s = (s + 1) & (hcap - 1);
        if (hkeys[s])
            diff("model: %s and %s share address %#" PRIxPTR, odesc(hvals[s]), odesc(j), S.objs[j].addr);
        hkeys[s] = S.objs[j].addr;
        hvals[s] = j;
    }
}
static uint32_t hash_get(uintptr_t k) {
    for (size_t s = hslot(k); hkeys[s]; s = (s + 1) & (hcap - 1))
        if (hkeys[s] == k) return hvals[s];
    return 0;
}

static int walk_unexpected;
static const char *walk_where;
static int walk_visit(void *obj, const tenure_type *type, size_t size, int generation, void *ctx) {
    (void)ctx;
    uint32_t j = hash_get((uintptr_t)obj);
    if (!j) {
        if (walk_unexpected++ < 8)
            diff("%s: the heap walk found %p (%s, %zu bytes, gen %d) where the model has no existing object", walk_where,
                 obj, type ? tenure_type_name(type) : "?", size, generation);
        return 0;
    }
    mobj *o = &S.objs[j];
    if (o->mark == S.epoch)
        diff("%s: the heap walk visited %s twice", walk_where, odesc(j));
    o->mark = S.epoch;
    if (type != S.types[o->tix].t || size != o->size)
        diff("%s: the heap walk says %s is a %s of %zu bytes", walk_where, odesc(j), type ? tenure_type_name(type) : "?",
             size);
    int want = (o->flags & F_FROZEN) ? 2 : o->gen;
    if (generation != want)
        diff("%s: the heap walk says %s is in generation %d", walk_where, odesc(j), generation);
    return 0;
}

/* free the trackers of reclaimed finalizable objects (not from inside the GC callback) */
static void flush_trk(void) {
    for (uint32_t i = 0; i < ntrk_dead; i++) {
        tenure_result r = tenure_handle_free(S.rt, trk_dead[i]);
        if (r != TENURE_OK)
            diff("tenure_handle_free(a tracker): %s", tenure_strerror(r));
    }
    ntrk_dead = 0;
}

static void full_check(const char *where) {
    S.since_verify = 0;
    flush_trk();
    tenure_result r = tenure_verify_heap(S.rt);
    if (r != TENURE_OK)
        diff("%s: tenure_verify_heap: %s", where, tenure_strerror(r));
    check_end(where);
    /* every existing object, and its references */
    for (uint32_t j = 1; j < S.nobj; j++) {
        mobj *o = &S.objs[j];
        if (o->reclaimed)
            continue;
        if (!check_obj(j, o->addr, 2, where))
            continue;
        int g = tenure_object_generation(S.rt, (void *)o->addr);
        int want = (o->flags & F_FROZEN) ? 2 : o->gen;
        if (g != want)
            diff("%s: %s: tenure_object_generation says %d", where, odesc(j), g);
        for (uint32_t i = 0; i < o->nrefs; i++) {
            void *p = *slot_at(o->addr, o->tix, i);
            uint32_t t = o->refs[i];
            if (t && S.objs[t].reclaimed)
                diff("%s: model inconsistency: %s refers to reclaimed %s", where, odesc(j), odesc(t));
            void *e = t ? (void *)S.objs[t].addr : NULL;
            if (p != e)
                diff("%s: slot %u of %s holds %p, expected %s at %p", where, i, odesc(j), p, odesc(t), e);
        }
    }
    /* roots */
    for (int i = 0; i < S.nframes; i++)
        for (unsigned k = 0; k < S.frames[i]->n; k++) {
            uint32_t t = S.frames[i]->obj[k];
            void *e = t ? (void *)S.objs[t].addr : NULL;
            if (S.frames[i]->vars[k] != e)
                diff("%s: frame %d slot %u holds %p, expected %s at %p", where, i, k, S.frames[i]->vars[k], odesc(t), e);
        }
    for (int a = 0; a < 2; a++)
        if (S.areas[a].active)
            for (unsigned k = 0; k < AREA_SLOTS; k++) {
                uint32_t t = S.areas[a].obj[k];
                void *e = t ? (void *)S.objs[t].addr : NULL;
                if (S.areas[a].slots[k] != e)
                    diff("%s: root area %d slot %u holds %p, expected %s at %p", where, a, k, S.areas[a].slots[k],
                         odesc(t), e);
            }
    for (unsigned k = 0; k < SCAN_SLOTS; k++) {
        uint32_t t = S.scan_obj[k];
        void *e = t ? (void *)S.objs[t].addr : NULL;
        if (S.scan_slots[k] != e)
            diff("%s: scanner slot %u holds %p, expected %s at %p", where, k, S.scan_slots[k], odesc(t), e);
    }
    size_t nh = 0;
    for (unsigned h = 0; h < MAX_HANDLES; h++) {
        mhandle *m = &S.handles[h];
        if (!m->active)
            continue;
        nh++;
        void *got = tenure_handle_get(S.rt, m->h);
        if (m->obj && S.objs[m->obj].reclaimed)
            diff("%s: model inconsistency: handle %u holds reclaimed %s", where, h, odesc(m->obj));
        void *e = m->obj ? (void *)S.objs[m->obj].addr : NULL;
        if (got != e)
            diff("%s: %s handle %u to %s holds %p, expected %p", where, hkind_name(m->kind), h, odesc(m->obj), got, e);
        if (m->kind == TENURE_HANDLE_DEPENDENT) {
            got = tenure_handle_get_secondary(S.rt, m->h);
            e = m->sec ? (void *)S.objs[m->sec].addr : NULL;
            if (got != e || (m->sec && S.objs[m->sec].reclaimed))
                diff("%s: the secondary of dependent handle %u (primary %s) is %p, expected %s at %p", where, h,
                     odesc(m->obj), got, odesc(m->sec), e);
        }
    }
    for (uint32_t i = 0; i < S.nfobjs; i++) {
        uint32_t j = S.fobjs[i];
        void *got = tenure_handle_get(S.rt, S.objs[j].trk);
        if (got != (void *)S.objs[j].addr)
            diff("%s: the weak long handle that tracks %s holds %p", where, odesc(j), got);
    }
    nh += S.nfobjs;
    check_sized(where);
    if (tenure_pending_finalizers(S.rt) != S.nfq - S.fqhead)
        diff("%s: tenure_pending_finalizers says %zu, the model has %u queued", where, tenure_pending_finalizers(S.rt),
             S.nfq - S.fqhead);
    if (tenure_memory_pressure(S.rt) != S.pressure)
        diff("%s: tenure_memory_pressure says %" PRIu64 ", the model %" PRIu64, where, tenure_memory_pressure(S.rt),
             S.pressure);
    for (uint32_t j = 1; j < S.nobj; j++) {
        mobj *o = &S.objs[j];
        if (o->hash && !o->reclaimed) {
            uint32_t hv = tenure_identity_hash(S.rt, (void *)o->addr);
            if (hv != o->hash)
                diff("%s: the identity hash of %s is %#x, it was %#x", where, odesc(j), hv, o->hash);
        }
    }
    if (tenure_handle_count(S.rt) != nh)
        diff("%s: tenure_handle_count says %zu, the model has %zu", where, tenure_handle_count(S.rt), nh);
    /* the heap walk lists exactly the existing objects */
    hash_build();
    S.epoch++;
    walk_unexpected = 0;
    walk_where = where;
    r = tenure_heap_walk(S.rt, walk_visit, NULL);
    if (r != TENURE_OK)
        diff("%s: tenure_heap_walk: %s", where, tenure_strerror(r));
    if (walk_unexpected > 8)
        diff("%s: the heap walk found %d unexpected objects in all", where, walk_unexpected);
    int missing = 0;
    for (uint32_t j = 1; j < S.nobj; j++)
        if (!S.objs[j].reclaimed && S.objs[j].mark != S.epoch && missing++ < 8)
            diff("%s: the heap walk did not visit %s at %#" PRIxPTR, where, odesc(j), S.objs[j].addr);
    tenure_stats st;
    tenure_get_stats(S.rt, &st);
    if (st.gc_count != S.gcs)
        diff("%s: stats say %" PRIu64 " GCs, the callback saw %" PRIu64, where, st.gc_count, S.gcs);
    if (st.finalizers_run != S.fin_runs_total)
        diff("%s: stats say %" PRIu64 " finalizers ran, the model counted %" PRIu64, where, st.finalizers_run,
             S.fin_runs_total);
    check_overlap(where);
    check_end(where);
}

/* ------------------------------------------------------------------------------------------
 * Allocation
 * ---------------------------------------------------------------------------------------- */
typedef struct aspec {
    int tix;
    size_t length;
    int pinned;
} aspec;

static size_t spec_size(const aspec *a) {
    ttype *t = &S.types[a->tix];
    return t->kind == K_FIX ? t->size : arr_size(t->kind, a->length);
}

static void after_alloc_check(void) {
    if (S.P->verify_every > 0 && S.since_verify >= (uint64_t)S.P->verify_every)
        full_check("periodic full check");
}

/* allocate per spec; returns the object number or 0 (NOMEM with a hard limit) */
static uint32_t do_alloc(const aspec *a) {
    ttype *t = &S.types[a->tix];
    S.expect_err = S.P->hard_limit ? TENURE_NOMEM : TENURE_OK;
    S.got_err = 0;
    void *p;
    if (t->kind == K_FIX)
        p = a->pinned ? tenure_alloc_pinned(S.rt, t->t) : tenure_alloc(S.rt, t->t);
    else
        p = a->pinned ? tenure_alloc_array_pinned(S.rt, t->t, a->length) : tenure_alloc_array(S.rt, t->t, a->length);
    S.expect_err = TENURE_OK;
    S.allocs++;
    S.since_verify++;
    if (S.sh)
        S.sh->allocs = S.allocs;
    size_t size = spec_size(a);
    if (!p) {
        tenure_result e = tenure_last_error(S.rt);
        if (!S.P->hard_limit || e != TENURE_NOMEM)
            diff("allocating a %s%s of %zu bytes returned NULL: %s", t->name, a->pinned ? " (pinned)" : "", size,
                 tenure_strerror(e));
        else if (!S.got_err)
            diff("allocation failed with NOMEM but the error hook was not called");
        check_end("allocation");
        tenure_clear_error(S.rt);
        S.nomem++;
        if (S.sh)
            S.sh->nomem = S.nomem;
        return 0;
    }
    /* a fresh object: an object of its type, size and generation (asked of the collector for
     * every array, large and pinned object and every 8th small one: the lookups are not free),
     * zeroed */
    int ask = t->kind != K_FIX || a->pinned || (S.allocs & 7) == 0;
    if (ask && (!tenure_is_object(S.rt, p) || tenure_object_type(S.rt, p) != t->t || tenure_object_size(S.rt, p) != size))
        diff("new %s%s (length %zu) at %p: is_object %d, type %s, size %zu (expected %zu)", t->name,
             a->pinned ? " (pinned)" : "", a->length, p, tenure_is_object(S.rt, p),
             tenure_object_type(S.rt, p) ? tenure_type_name(tenure_object_type(S.rt, p)) : "?",
             tenure_object_size(S.rt, p), size);
    check_end("allocation");
    int g = ask ? tenure_object_generation(S.rt, p) : 0;
    int want = a->pinned ? 4 : size >= S.cfg.GCLOHThreshold ? 3 : 0;
    if (g != want)
        diff("new %s of %zu bytes%s is in generation %d, expected %d", t->name, size, a->pinned ? " (pinned)" : "", g,
             want);
    size_t from = t->kind == K_FIX ? 8 : 16;
    if (t->kind != K_FIX && tenure_array_length(p) != a->length)
        diff("new %s has length %zu, expected %zu", t->name, tenure_array_length(p), a->length);
    for (size_t off = from; off < size; off += 8)
        if (*(uint64_t *)((char *)p + off) != 0) {
            diff("new %s of %zu bytes at %p is not zeroed at offset %zu (%#" PRIx64 ")", t->name, size, p, off,
                 *(uint64_t *)((char *)p + off));
            break;
        }
    check_end("allocation");
    uint8_t flags = (uint8_t)((a->pinned ? F_POH : 0) | (size >= S.cfg.GCLOHThreshold && !a->pinned ? F_LARGE : 0));
    uint32_t j = model_new(a->tix, flags, a->length, size, (uintptr_t)p, g, rnext(&(rng){S.allocs * 77 + 5}));
    init_payload(j, p);
    if (t->fin) {
        model_register(j);
        tenure_handle *tk = tenure_handle_new(S.rt, TENURE_HANDLE_WEAK_LONG, p);
        if (!tk)
            diff("tenure_handle_new(WEAK_LONG) for a tracker failed: %s", tenure_strerror(tenure_last_error(S.rt)));
        S.objs[j].trk = tk;
        vec_push(&S.fobjs, &S.nfobjs, &S.capfobjs, j);
    }
    if (S.P->trace)
        fprintf(stderr, "  new %s at %p\n", odesc(j), p);
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

static int free_handle_index(void) {
    for (int h = 1; h < MAX_HANDLES; h++)
        if (!S.handles[h].active) return h;
    return -1;
}

static const int handle_kinds[4] = {TENURE_HANDLE_STRONG, TENURE_HANDLE_PINNED, TENURE_HANDLE_WEAK_SHORT,
                                    TENURE_HANDLE_WEAK_LONG};

static dest choose_dest(rng *r, int strong_only) {
    dest d;
    memset(&d, 0, sizeof d);
    for (;;) {
        unsigned x = (unsigned)rbelow(r, 100);
        if (x < 18) {
            d.kind = D_ROOTARR;
            d.slot = (unsigned)rbelow(r, ROOTARR_LEN);
        } else if (x < 30) {
            if (!S.nframes) continue;
            d.kind = D_FRAME;
            d.a = (int)rbelow(r, (uint64_t)S.nframes);
            d.slot = (unsigned)rbelow(r, S.frames[d.a]->n);
        } else if (x < 38) {
            d.a = (int)rbelow(r, 2);
            if (!S.areas[d.a].active) continue;
            d.kind = D_AREA;
            d.slot = (unsigned)rbelow(r, AREA_SLOTS);
        } else if (x < 44) {
            d.kind = D_SCAN;
            d.slot = (unsigned)rbelow(r, SCAN_SLOTS);
        } else if (x < 82) {
            d.kind = D_FIELD;
            d.src = pick_source(r);
            d.slot = (unsigned)rbelow(r, S.objs[d.src].nrefs);
        } else if (x < 92) {
            d.kind = D_HANDLE;
            d.hkind = handle_kinds[strong_only ? rbelow(r, 2) : rbelow(r, 4)];
            if (free_handle_index() < 0) continue;
        } else {
            if (strong_only) continue;
            d.kind = D_NONE;
        }
        return d;
    }
}

static void set_root_slot(void **slot, uint32_t *model, uint32_t j) {
    if (*model && *model != j)
        S.reach_dirty = 1;
    *slot = j ? (void *)S.objs[j].addr : NULL;
    *model = j;
}

static int handle_new(int kind, uint32_t j) {
    int h = free_handle_index();
    if (h < 0)
        return -1;
    int real_kind = S.P->inject == 2 && kind == TENURE_HANDLE_WEAK_LONG ? TENURE_HANDLE_STRONG : kind;
    if (S.P->inject == 3 && kind == TENURE_HANDLE_WEAK_SHORT && is_fin(j))
        real_kind = TENURE_HANDLE_WEAK_LONG; /* self-test: the model expects it cleared when j is queued */
    tenure_handle *hd = tenure_handle_new(S.rt, (tenure_handle_kind)real_kind, j ? (void *)S.objs[j].addr : NULL);
    if (!hd) {
        diff("tenure_handle_new(kind %d, %s) failed: %s", kind, odesc(j), tenure_strerror(tenure_last_error(S.rt)));
        check_end("handle_new");
    }
    S.handles[h] = (mhandle){hd, kind, j, 1, TENURE_HANDLE_STRONG, 0, 0, 0, 0, 0};
    return h;
}

static void handle_free(int h) {
    mhandle *m = &S.handles[h];
    tenure_result r = tenure_handle_free(S.rt, m->h);
    if (r != TENURE_OK)
        diff("tenure_handle_free(handle %d): %s", h, tenure_strerror(r));
    if ((m->obj && h_strong(m)) || m->kind == TENURE_HANDLE_DEPENDENT)
        S.reach_dirty = 1;
    memset(m, 0, sizeof *m);
}

static void handle_set(int h, uint32_t j) {
    mhandle *m = &S.handles[h];
    tenure_result r = tenure_handle_set(S.rt, m->h, j ? (void *)S.objs[j].addr : NULL);
    if (r != TENURE_OK)
        diff("tenure_handle_set(handle %d, %s): %s", h, odesc(j), tenure_strerror(r));
    if (m->obj && m->obj != j && (h_strong(m) || m->kind == TENURE_HANDLE_DEPENDENT))
        S.reach_dirty = 1;
    m->obj = j;
}

static void store_dest(const dest *d, uint32_t j) {
    switch (d->kind) {
    case D_ROOTARR: set_ref(S.rootarr, d->slot, j); break;
    case D_FIELD: set_ref(d->src, d->slot, j); break;
    case D_FRAME: set_root_slot(&S.frames[d->a]->vars[d->slot], &S.frames[d->a]->obj[d->slot], j); break;
    case D_AREA: set_root_slot(&S.areas[d->a].slots[d->slot], &S.areas[d->a].obj[d->slot], j); break;
    case D_SCAN: set_root_slot(&S.scan_slots[d->slot], &S.scan_obj[d->slot], j); break;
    case D_HANDLE: handle_new(d->hkind, j); break;
    default: break;
    }
    int strong = d->kind != D_NONE &&
                 !(d->kind == D_HANDLE && (d->hkind == TENURE_HANDLE_WEAK_SHORT || d->hkind == TENURE_HANDLE_WEAK_LONG));
    if (strong)
        reach_add(j);
}

/* ------------------------------------------------------------------------------------------
 * Out of memory: verify, drop data, allocation must work again
 * ---------------------------------------------------------------------------------------- */
static void drop_roots(rng *r, unsigned percent) {
    for (int i = 0; i < S.nframes; i++)
        for (unsigned k = 0; k < S.frames[i]->n; k++)
            if (rchance(r, percent)) set_root_slot(&S.frames[i]->vars[k], &S.frames[i]->obj[k], 0);
    for (int a = 0; a < 2; a++)
        if (S.areas[a].active)
            for (unsigned k = 0; k < AREA_SLOTS; k++)
                if (rchance(r, percent)) set_root_slot(&S.areas[a].slots[k], &S.areas[a].obj[k], 0);
    for (unsigned k = 0; k < SCAN_SLOTS; k++)
        if (rchance(r, percent)) set_root_slot(&S.scan_slots[k], &S.scan_obj[k], 0);
    for (unsigned k = 0; k < ROOTARR_LEN; k++)
        if (rchance(r, percent)) set_ref(S.rootarr, k, 0);
    for (int h = 1; h < MAX_HANDLES; h++)
        if (S.handles[h].active && rchance(r, percent)) handle_free(h);
    for (uint32_t i = 0; i < S.nfrozen; i++) {
        mobj *o = &S.objs[S.frozen[i]];
        for (uint32_t k = 0; k < o->nrefs; k++)
            if (o->refs[k] && rchance(r, percent)) set_ref(S.frozen[i], k, 0);
    }
    S.reach_dirty = 1;
}

static void run_finalizers(void);
static void induced_collect(int gen, unsigned flags, const char *where);

/* allocate; on NOMEM check the heap, drop data and retry (which must then work for sizes well
 * below the limit) */
static uint32_t alloc_oom(const aspec *a, rng *r) {
    uint32_t j = do_alloc(a);
    if (j || !S.P->hard_limit)
        return j;
    full_check("full check after an allocation failed with NOMEM");
    if (rchance(r, 50))
        return 0; /* go on with the full heap for a while */
    size_t size = spec_size(a);
    drop_roots(r, 50);
    j = do_alloc(a);
    if (j)
        return j;
    full_check("full check after NOMEM with half the roots dropped");
    drop_roots(r, 100);
    /* what finalization keeps (the queue, and registered garbage the next GC would queue) goes
     * too: run the finalizers, queue the rest with a full GC, run those (they may resurrect:
     * drop again) */
    for (int round = 0; round < 3 && !S.in_fin && (S.nreg || S.nfq - S.fqhead); round++) {
        run_finalizers();
        drop_roots(r, 100);
        if (S.nreg)
            induced_collect(2, 0, "a full GC to queue finalizable garbage after NOMEM");
    }
    j = do_alloc(a);
    if (!j && size <= S.P->hard_limit / 4) {
        tenure_stats st;
        tenure_get_stats(S.rt, &st);
        diff("allocating %zu bytes (%s%s) still fails with NOMEM after dropping every root (limit %" PRIu64
             ", committed %" PRIu64 ", heap %" PRIu64 ", live after the last GC %" PRIu64 ")",
             size, S.types[a->tix].name, a->pinned ? ", pinned" : "", S.P->hard_limit, st.committed_bytes,
             st.heap_bytes, st.live_bytes_after_gc);
        check_end("allocation after dropping all data");
    }
    if (j)
        full_check("full check after recovering from NOMEM");
    return j;
}

/* ------------------------------------------------------------------------------------------
 * Operations
 * ---------------------------------------------------------------------------------------- */
static aspec small_fixed(rng *r) {
    aspec a = {(int)rbelow(r, (uint64_t)S.nfix), 0, 0};
    return a;
}

static aspec small_array(rng *r) {
    aspec a = {0, 0, 0};
    unsigned x = (unsigned)rbelow(r, 100);
    if (x < 35) {
        a.tix = S.tix_refarr;
        a.length = rchance(r, 90) ? rbelow(r, 41) : rrange(r, 41, 2000);
    } else if (x < 60) {
        a.tix = rchance(r, 50) ? S.tix_recarr : S.tix_recarr_tr;
        a.length = rchance(r, 90) ? rrange(r, 1, 20) : rrange(r, 21, 1000);
    } else {
        a.tix = S.tix_bytes;
        unsigned y = (unsigned)rbelow(r, 100);
        a.length = y < 80 ? rrange(r, 8, 400) : y < 95 ? rrange(r, 401, 8000) : rrange(r, 8001, 84000 - 16);
        /* just below, at and just above the LOH threshold */
        if (rchance(r, 3))
            a.length = (size_t)(S.cfg.GCLOHThreshold - 16 - 8 * rbelow(r, 3));
    }
    return a;
}

static aspec large_spec(rng *r) {
    aspec a = {S.tix_bytes, 0, 0};
    size_t th = (size_t)S.cfg.GCLOHThreshold;
    unsigned x = (unsigned)rbelow(r, 100);
    size_t bytes = x < 15 ? th + 8 * rbelow(r, 4) : x < 85 ? rrange(r, th, 2 * th) : x < 97 ? rrange(r, 2 * th, 1 << 20)
                                                                                          : rrange(r, 1 << 20, 3 << 20);
    if (S.oom_mode && rchance(r, 30))
        bytes = rrange(r, 1 << 20, 4 << 20);
    unsigned y = (unsigned)rbelow(r, 100);
    if (y < 70) {
        a.tix = S.tix_bytes;
        a.length = bytes - 16;
    } else if (y < 90) {
        a.tix = S.tix_refarr;
        a.length = (bytes - 16 + 7) / 8;
        if (a.length > 40000) a.length = 40000;
    } else {
        a.tix = rchance(r, 50) ? S.tix_recarr : S.tix_recarr_tr;
        a.length = (bytes - 16 + 15) / 16;
        if (a.length > 20000) a.length = 20000;
    }
    if (arr_size(S.types[a.tix].kind, a.length) < th)
        a.length += (th - arr_size(S.types[a.tix].kind, a.length) + 7) / 8 + 1;
    return a;
}

/* fill a few reference slots of a new object j with reachable objects */
static void prelink(rng *r, uint32_t j) {
    mobj *o = &S.objs[j];
    if (!o->nrefs || rchance(r, 50))
        return;
    unsigned n = (unsigned)rrange(r, 1, o->nrefs < 4 ? o->nrefs : 4);
    for (unsigned k = 0; k < n; k++) {
        unsigned slot = (unsigned)rbelow(r, S.objs[j].nrefs);
        uint32_t t = pick_target(r, 10);
        set_ref(j, slot, t);
    }
}

static void op_alloc_with(rng *r, aspec a) {
    dest d = choose_dest(r, 0);
    uint32_t j = alloc_oom(&a, r);
    if (!j)
        return;
    if (d.kind == D_FIELD && !is_reachable(d.src))
        d.kind = D_ROOTARR, d.slot %= ROOTARR_LEN; /* the source was dropped by alloc_oom */
    if (d.kind == D_HANDLE && free_handle_index() < 0)
        d.kind = D_NONE;
    if (d.kind != D_NONE && d.kind != D_HANDLE)
        prelink(r, j);
    store_dest(&d, j);
}

static void op_chain(rng *r) {
    unsigned n = (unsigned)rrange(r, 2, rchance(r, 20) ? 400 : 60);
    dest d = choose_dest(r, 1);
    aspec a = small_fixed(r);
    /* a head with references */
    for (int tries = 0; tries < 20 && S.types[a.tix].k == 0; tries++) a = small_fixed(r);
    if (S.types[a.tix].k == 0)
        a = (aspec){S.tix_refarr, 4, 0};
    uint32_t head = alloc_oom(&a, r);
    if (!head)
        return;
    if (d.kind == D_FIELD && !is_reachable(d.src))
        d.kind = D_ROOTARR, d.slot %= ROOTARR_LEN;
    if (d.kind == D_HANDLE && free_handle_index() < 0)
        d.kind = D_ROOTARR, d.slot %= ROOTARR_LEN;
    store_dest(&d, head);
    uint32_t *nodes = xcalloc(n, sizeof *nodes);
    unsigned nn = 0;
    nodes[nn++] = head;
    int wide = rchance(r, 30);
    for (unsigned i = 1; i < n; i++) {
        aspec b = rchance(r, 85) ? small_fixed(r) : small_array(r);
        uint32_t j = alloc_oom(&b, r);
        if (!j)
            break;
        /* attach it to a node of the chain that is still reachable and has references: the
         * newest (a list) or any (a tree; overwriting a slot drops a subtree) */
        uint32_t parent = 0;
        for (int tries = 0; tries < 8 && !parent; tries++) {
            uint32_t c = wide ? nodes[rbelow(r, nn)] : nodes[tries < (int)nn ? nn - 1 - (unsigned)tries : 0];
            if (S.objs[c].nrefs && is_reachable(c))
                parent = c;
        }
        if (!parent)
            break; /* j stays garbage */
        set_ref(parent, (unsigned)rbelow(r, S.objs[parent].nrefs), j);
        reach_add(j);
        nodes[nn++] = j;
    }
    free(nodes);
}

/* a burst of garbage: objects that refer to each other (while no GC intervened) and to live
 * objects, and are referenced by nothing that is reachable */
static void op_garbage(rng *r) {
    unsigned n = (unsigned)rrange(r, 5, rchance(r, 20) ? 1000 : 150);
    uint32_t *nodes = xcalloc(n, sizeof *nodes);
    unsigned nn = 0;
    uint64_t gcs = S.gcs;
    for (unsigned i = 0; i < n; i++) {
        aspec a = rchance(r, 80) ? small_fixed(r) : small_array(r);
        uint32_t j = alloc_oom(&a, r);
        if (!j)
            break;
        if (S.gcs != gcs) {
            nn = 0; /* the earlier ones may be gone */
            gcs = S.gcs;
        }
        mobj *o = &S.objs[j];
        for (uint32_t k = 0; k < o->nrefs && k < 4; k++) {
            unsigned x = (unsigned)rbelow(r, 100);
            uint32_t t = x < 50 && nn ? nodes[rbelow(r, nn)] : x < 70 ? pick_reachable(r) : 0;
            if (t)
                set_ref(j, k, t);
        }
        nodes[nn++] = j;
    }
    free(nodes);
}

static void op_link(rng *r) {
    uint32_t s = pick_source(r);
    unsigned slot = (unsigned)rbelow(r, S.objs[s].nrefs);
    uint32_t t = pick_target(r, 15);
    set_ref(s, slot, t);
}

static void op_unlink(rng *r) {
    uint32_t s = pick_source(r);
    mobj *o = &S.objs[s];
    unsigned start = (unsigned)rbelow(r, o->nrefs);
    for (unsigned k = 0; k < o->nrefs && k < 64; k++) {
        unsigned slot = (start + k) % o->nrefs;
        if (o->refs[slot]) {
            set_ref(s, slot, 0);
            return;
        }
    }
}

static void op_root(rng *r) {
    unsigned x = (unsigned)rbelow(r, 4);
    uint32_t t = pick_target(r, 40);
    if (x == 0 && S.nframes) {
        mframe *f = S.frames[rbelow(r, (uint64_t)S.nframes)];
        unsigned k = (unsigned)rbelow(r, f->n);
        set_root_slot(&f->vars[k], &f->obj[k], t);
    } else if (x == 1) {
        int a = (int)rbelow(r, 2);
        if (!S.areas[a].active)
            return;
        unsigned k = (unsigned)rbelow(r, AREA_SLOTS);
        set_root_slot(&S.areas[a].slots[k], &S.areas[a].obj[k], t);
    } else if (x == 2) {
        unsigned k = (unsigned)rbelow(r, SCAN_SLOTS);
        set_root_slot(&S.scan_slots[k], &S.scan_obj[k], t);
    } else {
        set_ref(S.rootarr, (unsigned)rbelow(r, ROOTARR_LEN), t);
    }
}

static int random_handle(rng *r, int kind_filter) {
    int idx[MAX_HANDLES], n = 0;
    for (int h = 1; h < MAX_HANDLES; h++)
        if (S.handles[h].active && (kind_filter < 0 || S.handles[h].kind == kind_filter)) idx[n++] = h;
    return n ? idx[rbelow(r, (uint64_t)n)] : -1;
}

static void op_handle(rng *r) {
    unsigned x = (unsigned)rbelow(r, 100);
    if (x < 45) {
        handle_new(handle_kinds[rbelow(r, 4)], pick_target(r, 8));
    } else if (x < 75) {
        int h = random_handle(r, -1);
        if (h > 0) {
            uint32_t t = pick_target(r, 20);
            if (S.handles[h].kind == TENURE_HANDLE_DEPENDENT && !t)
                t = S.handles[h].sec; /* a primary that is its own secondary (NULL only without one) */
            handle_set(h, t);
        }
    } else {
        int h = random_handle(r, -1);
        if (h > 0) handle_free(h);
    }
}

static void op_pin(rng *r) {
    if (rchance(r, 55)) {
        uint32_t t = pick_reachable(r);
        /* prefer objects of the small object heap (the ones that could move) */
        for (int tries = 0; tries < 4 && t && (S.objs[t].flags & (F_POH | F_FROZEN | F_LARGE)); tries++)
            t = pick_reachable(r);
        handle_new(TENURE_HANDLE_PINNED, t);
    } else {
        int h = random_handle(r, TENURE_HANDLE_PINNED);
        if (h > 0) handle_free(h);
    }
}

static void frame_push(rng *r) {
    mframe *f = xcalloc(1, sizeof *f);
    f->n = (unsigned)rrange(r, 1, FRAME_SLOTS);
    for (unsigned k = 0; k < f->n; k++) {
        f->slots[k] = &f->vars[k];
        uint32_t t = pick_target(r, 50);
        f->obj[k] = t;
        f->vars[k] = t ? (void *)S.objs[t].addr : NULL;
    }
    f->f.prev = NULL;
    f->f.count = f->n;
    f->f.slots = (void **const *)f->slots;
    tenure_frame_push(S.rt, &f->f);
    S.frames[S.nframes++] = f;
}

static void frame_pop(void) {
    mframe *f = S.frames[--S.nframes];
    tenure_frame_pop(S.rt, &f->f);
    for (unsigned k = 0; k < f->n; k++)
        if (f->obj[k]) S.reach_dirty = 1;
    free(f);
}

static void op_frame(rng *r) {
    if (S.nframes < MAX_FRAMES && (S.nframes == 0 || rchance(r, 50)))
        frame_push(r);
    else if (S.nframes > 0)
        frame_pop();
}

static void area_add(rng *r, int a) {
    marea *m = &S.areas[a];
    for (unsigned k = 0; k < AREA_SLOTS; k++) {
        uint32_t t = r ? pick_target(r, 60) : 0;
        m->obj[k] = t;
        m->slots[k] = t ? (void *)S.objs[t].addr : NULL;
    }
    m->ra = tenure_root_area_add(S.rt, m->slots, AREA_SLOTS);
    if (!m->ra)
        diff("tenure_root_area_add failed: %s", tenure_strerror(tenure_last_error(S.rt)));
    m->active = 1;
}

static void area_remove(int a) {
    marea *m = &S.areas[a];
    tenure_result res = tenure_root_area_remove(S.rt, m->ra);
    if (res != TENURE_OK)
        diff("tenure_root_area_remove: %s", tenure_strerror(res));
    for (unsigned k = 0; k < AREA_SLOTS; k++) {
        if (m->obj[k]) S.reach_dirty = 1;
        m->obj[k] = 0;
        m->slots[k] = NULL;
    }
    m->active = 0;
    m->ra = NULL;
}

static void op_area(rng *r) {
    int a = (int)rbelow(r, 2);
    if (S.areas[a].active)
        area_remove(a);
    else
        area_add(r, a);
}

static void induced_collect(int gen, unsigned flags, const char *where) {
    S.induced = 1;
    S.induced_gen = (gen < 0 || (flags & TENURE_COLLECT_AGGRESSIVE)) ? 2 : gen;
    S.induced_flags = flags;
    S.induced_seen = 0;
    tenure_result res = tenure_collect(S.rt, gen, flags);
    S.induced = 0;
    if (res != TENURE_OK)
        diff("tenure_collect(%d, %#x): %s", gen, flags, tenure_strerror(res));
    if (S.induced_seen == 0 && !(flags & TENURE_COLLECT_OPTIMIZED))
        diff("tenure_collect(%d, %#x) ran no GC", gen, flags);
    check_end(where);
}

static void op_collect(rng *r) {
    static const int gens[] = {-1, 0, 0, 1, 1, 2};
    int gen = gens[rbelow(r, 6)];
    unsigned flags = 0;
    if (rchance(r, 30)) flags |= TENURE_COLLECT_COMPACT;
    if (rchance(r, 12)) flags |= TENURE_COLLECT_OPTIMIZED;
    if (rchance(r, 15)) flags |= TENURE_COLLECT_COMPACT_LOH;
    if (rchance(r, 10)) flags |= TENURE_COLLECT_NONBLOCKING;
    if (rchance(r, 6) && !(flags & TENURE_COLLECT_OPTIMIZED)) flags |= TENURE_COLLECT_AGGRESSIVE;
    induced_collect(gen, flags, "induced GC");
    full_check("full check after an induced GC");
}

static void op_frozen(rng *r) {
    if (S.nfrozen_segs >= MAX_FROZEN_SEGS)
        return;
    unsigned n = (unsigned)rrange(r, 1, 12);
    aspec specs[12];
    size_t total = 0;
    for (unsigned i = 0; i < n; i++) {
        unsigned x = (unsigned)rbelow(r, 100);
        if (x < 60)
            specs[i] = small_fixed(r);
        else if (x < 75)
            specs[i] = (aspec){S.tix_refarr, rbelow(r, 9), 0};
        else if (x < 90)
            specs[i] = (aspec){rchance(r, 50) ? S.tix_recarr : S.tix_recarr_tr, rrange(r, 1, 6), 0};
        else
            specs[i] = (aspec){S.tix_bytes, rrange(r, 8, 100), 0};
        total += spec_size(&specs[i]);
    }
    char *mem = aligned_alloc(8, total);
    if (!mem) {
        fprintf(stderr, "tenure-torture: out of memory (frozen segment)\n");
        exit(2);
    }
    memset(mem, 0xcd, total);
    char *at = mem;
    uint32_t first = S.nobj;
    for (unsigned i = 0; i < n; i++) {
        ttype *t = &S.types[specs[i].tix];
        size_t sz = tenure_frozen_object_init(S.rt, at, t->t, specs[i].length);
        if (sz != spec_size(&specs[i]))
            diff("tenure_frozen_object_init(%s, length %zu) returned %zu, expected %zu", t->name, specs[i].length, sz,
                 spec_size(&specs[i]));
        check_end("frozen segment");
        uint32_t j = model_new(specs[i].tix, F_FROZEN, specs[i].length, sz, (uintptr_t)at, 2, rnext(r));
        init_payload(j, at);
        /* references to heap objects (plain stores: the block is not registered yet) */
        mobj *o = &S.objs[j];
        for (uint32_t k = 0; k < o->nrefs; k++) {
            if (!rchance(r, 70))
                continue;
            uint32_t tgt = pick_target(r, 10);
            *slot_at(o->addr, o->tix, k) = tgt ? (void *)S.objs[tgt].addr : NULL;
            o->refs[k] = tgt;
        }
        at += sz;
    }
    tenure_result res = tenure_register_frozen_segment(S.rt, mem, total);
    if (res != TENURE_OK)
        diff("tenure_register_frozen_segment(%zu bytes, %u objects): %s", total, n, tenure_strerror(res));
    check_end("frozen segment");
    S.frozen_mem[S.nfrozen_segs++] = mem;
    for (uint32_t j = first; j < S.nobj; j++) {
        if (S.nfrozen == S.capfrozen) {
            S.capfrozen = S.capfrozen * 2 + 16;
            S.frozen = xrealloc(S.frozen, S.capfrozen * sizeof *S.frozen);
        }
        S.frozen[S.nfrozen++] = j;
    }
    S.reach_dirty = 1;
}

static void op_payload(rng *r) {
    for (int tries = 0; tries < 8; tries++) {
        uint32_t j = pick_reachable(r);
        if (!j) return;
        mobj *o = &S.objs[j];
        ttype *t = &S.types[o->tix];
        if ((t->kind == K_FIX && t->p) || t->kind == K_BYTES || t->kind == K_RECARR) {
            o->seed = rnext(r);
            init_payload(j, (char *)o->addr);
            return;
        }
    }
}

static void op_misc(rng *r) {
    unsigned x = (unsigned)rbelow(r, 4);
    if (x == 0) {
        /* dependent handles come only from tenure_handle_new_dependent */
        S.expect_err = TENURE_INVALID_ARGUMENT;
        S.got_err = 0;
        tenure_handle *h = tenure_handle_new(S.rt, TENURE_HANDLE_DEPENDENT, NULL);
        S.expect_err = TENURE_OK;
        if (h != NULL || tenure_last_error(S.rt) != TENURE_INVALID_ARGUMENT || !S.got_err)
            diff("tenure_handle_new(DEPENDENT) returned %p, last error %s, hook calls %d (expected NULL, "
                 "INVALID_ARGUMENT)",
                 (void *)h, tenure_strerror(tenure_last_error(S.rt)), S.got_err);
        tenure_clear_error(S.rt);
    } else if (x == 1) {
        /* OPTIMIZED with AGGRESSIVE is refused */
        S.expect_err = TENURE_INVALID_ARGUMENT;
        uint64_t before = S.gcs;
        tenure_result res = tenure_collect(S.rt, 2, TENURE_COLLECT_OPTIMIZED | TENURE_COLLECT_AGGRESSIVE);
        S.expect_err = TENURE_OK;
        if (res != TENURE_INVALID_ARGUMENT || S.gcs != before)
            diff("tenure_collect(OPTIMIZED|AGGRESSIVE) returned %s and ran %" PRIu64 " GCs", tenure_strerror(res),
                 S.gcs - before);
        tenure_clear_error(S.rt);
    } else {
        /* queries on a reachable object */
        uint32_t j = pick_reachable(r);
        if (j)
            check_obj(j, S.objs[j].addr, 2, "object query");
        tenure_stats st;
        tenure_get_stats(S.rt, &st);
        if (st.gc_count != S.gcs)
            diff("stats say %" PRIu64 " GCs, the callback saw %" PRIu64, st.gc_count, S.gcs);
    }
    check_end("misc");
}

/* ------------------------------------------------------------------------------------------
 * Lifetime services: finalization, dependent / variable / refcounted / async pinned / sized ref
 * handles, memory pressure, identity hashes
 * ---------------------------------------------------------------------------------------- */
static aspec fin_spec(rng *r) {
    aspec a = {S.tix_fin[rbelow(r, 3)], 0, rchance(r, 12)};
    return a;
}

/* a random object that exists (reachable or not: it is an object until the next GC reclaims it) */
static uint32_t pick_existing(rng *r) {
    for (int tries = 0; tries < 8 && S.nobj > 1; tries++) {
        uint32_t j = (uint32_t)rrange(r, 1, S.nobj - 1);
        if (!S.objs[j].reclaimed)
            return j;
    }
    return pick_reachable(r);
}

static int random_dependent_secondary(rng *r) {
    int h = random_handle(r, TENURE_HANDLE_DEPENDENT);
    return h > 0 ? (int)S.handles[h].sec : 0;
}

/* NULL, a reachable object, the secondary of a dependent handle (chains, cycles) or any object */
static uint32_t pick_any(rng *r, unsigned null_percent) {
    if (rchance(r, null_percent))
        return 0;
    unsigned x = (unsigned)rbelow(r, 100);
    uint32_t j = 0;
    if (x < 45)
        j = pick_reachable(r);
    else if (x < 70)
        j = (uint32_t)random_dependent_secondary(r);
    else if (x < 80 && S.nfobjs)
        j = S.fobjs[rbelow(r, S.nfobjs)];
    if (!j)
        j = pick_existing(r);
    return j;
}

/* the finalizer of every finalizable type: it must be the head of the model's queue; what it
 * does is decided by the seed, the object number and the object's run count */
static void fin_cb(tenure_runtime *rt, void *obj) {
    (void)rt;
    if (S.destroying)
        return;
    if (!S.in_run)
        diff("a finalizer ran for %p outside tenure_run_pending_finalizers / tenure_wait_for_pending_finalizers", obj);
    if (S.in_fin)
        diff("finalizers nest (%p while #%u runs)", obj, S.fq[S.fqhead]);
    while (S.fqhead < S.nfq && S.fq[S.fqhead] == 0) S.fqhead++;
    if (S.fqhead >= S.nfq) {
        diff("a finalizer ran for %p, the model has nothing queued", obj);
        check_end("finalizer");
    }
    uint32_t j = S.fq[S.fqhead];
    if ((uintptr_t)obj != S.objs[j].addr) {
        uint64_t id = tenure_is_object(S.rt, obj) && is_fin(j) ? *(uint64_t *)((char *)obj + 8) : 0;
        diff("a finalizer ran for %p (number word %#" PRIx64 "), the model expected %s at %#" PRIxPTR
             " (queue position %u of %u)",
             obj, id, odesc(j), S.objs[j].addr, S.fqhead, S.nfq);
        check_end("finalizer");
    }
    check_obj(j, S.objs[j].addr, 2, "finalizer");
    check_end("finalizer");
    S.in_fin = 1;
    S.objs[j].fin_runs++;
    S.ran_in_run++;
    S.fin_runs_total++;
    if (S.P->trace)
        fprintf(stderr, "  finalizer of %s (run %u)\n", odesc(j), S.objs[j].fin_runs);
    rng r = {mix64(S.P->seed * 0x2545f4914f6cdd1dull ^ mix64(((uint64_t)j << 16) + S.objs[j].fin_runs))};
    if (!S.final_phase) {
        if (rchance(&r, 35)) { /* allocate (a GC may run: obj stays queued and may move) */
            aspec a = rchance(&r, 20) ? fin_spec(&r) : small_fixed(&r);
            a.pinned = 0;
            uint32_t n = do_alloc(&a);
            if (n && S.objs[j].nrefs)
                set_ref(j, (unsigned)rbelow(&r, S.objs[j].nrefs), n);
        }
        if (rchance(&r, 10)) { /* no nesting: a run from a finalizer runs nothing */
            size_t k = tenure_run_pending_finalizers(S.rt);
            if (k != 0)
                diff("tenure_run_pending_finalizers from a finalizer ran %zu", k);
        }
        if (rchance(&r, 20)) { /* resurrection */
            unsigned k = (unsigned)rbelow(&r, SCAN_SLOTS);
            set_root_slot(&S.scan_slots[k], &S.scan_obj[k], j);
        }
        if (rchance(&r, 12)) {
            tenure_result res = tenure_reregister_for_finalize(S.rt, (void *)S.objs[j].addr);
            if (res != TENURE_OK)
                diff("tenure_reregister_for_finalize(%s) from its finalizer: %s", odesc(j), tenure_strerror(res));
            model_register(j);
        }
    }
    S.in_fin = 0;
    S.fqhead++; /* the entry leaves the queue when the finalizer returns */
    S.reach_dirty = 1;
    check_end("finalizer");
}

/* the refcount callback: the model's count of the object of a refcounted handle */
static int rc_cb(void *obj, void *ctx) {
    (void)ctx;
    for (int h = 0; h < MAX_HANDLES; h++) {
        mhandle *m = &S.handles[h];
        if (m->active && m->kind == TENURE_HANDLE_REFCOUNTED && m->obj && S.objs[m->obj].addr == (uintptr_t)obj)
            return S.objs[m->obj].rc;
    }
    diff("the refcount callback was asked about %p, which no refcounted handle holds", obj);
    return 0;
}

static void check_pending(const char *where) {
    size_t p = tenure_pending_finalizers(S.rt);
    if (p != S.nfq - S.fqhead)
        diff("%s: tenure_pending_finalizers says %zu, the model has %u queued", where, p, S.nfq - S.fqhead);
}

static void after_run(const char *what, size_t ran) {
    if (ran != S.ran_in_run)
        diff("%s returned %zu, %" PRIu64 " finalizers ran", what, ran, S.ran_in_run);
    while (S.fqhead < S.nfq && S.fq[S.fqhead] == 0) S.fqhead++;
    if (S.fqhead != S.nfq)
        diff("after %s the model still has %u queued, the first %s", what, S.nfq - S.fqhead, odesc(S.fq[S.fqhead]));
    S.nfq = S.fqhead = 0;
    check_pending(what);
    S.reach_dirty = 1;
    check_end(what);
}

static void run_finalizers(void) {
    check_pending("before tenure_run_pending_finalizers");
    S.in_run = 1;
    S.ran_in_run = 0;
    size_t n = tenure_run_pending_finalizers(S.rt);
    S.in_run = 0;
    after_run("tenure_run_pending_finalizers", n);
}

static void wait_finalizers(void) {
    S.in_run = 1;
    S.ran_in_run = 0;
    S.wait_gc = 1;
    uint64_t before = S.gcs;
    tenure_result res = tenure_wait_for_pending_finalizers(S.rt);
    S.in_run = 0;
    if (res != TENURE_OK || S.gcs == before || S.wait_gc)
        diff("tenure_wait_for_pending_finalizers: %s, %" PRIu64 " GCs", tenure_strerror(res), S.gcs - before);
    S.wait_gc = 0;
    after_run("tenure_wait_for_pending_finalizers", S.ran_in_run);
}

static void weak_to(rng *r, uint32_t j) {
    if (free_handle_index() > 0)
        handle_new(rchance(r, 50) ? TENURE_HANDLE_WEAK_SHORT : TENURE_HANDLE_WEAK_LONG, j);
}

static void op_final(rng *r) {
    if (rchance(r, 65)) {
        aspec a = fin_spec(r);
        dest d = rchance(r, 45) ? (dest){.kind = D_NONE} : choose_dest(r, 0);
        uint32_t j = alloc_oom(&a, r);
        if (!j)
            return;
        if (d.kind == D_FIELD && !is_reachable(d.src))
            d.kind = D_ROOTARR, d.slot %= ROOTARR_LEN;
        if (d.kind == D_HANDLE && free_handle_index() < 0)
            d.kind = D_NONE;
        if (d.kind != D_HANDLE)
            prelink(r, j);
        store_dest(&d, j);
        if (rchance(r, 35))
            weak_to(r, j);
        return;
    }
    /* a cluster of finalizable garbage that refers to itself and to other objects */
    unsigned n = (unsigned)rrange(r, 2, 8);
    uint32_t nodes[8];
    unsigned nn = 0;
    uint64_t gcs = S.gcs;
    for (unsigned i = 0; i < n; i++) {
        aspec a = rchance(r, 70) ? fin_spec(r) : small_fixed(r);
        a.pinned = 0;
        uint32_t j = alloc_oom(&a, r);
        if (!j)
            break;
        if (S.gcs != gcs) {
            nn = 0;
            gcs = S.gcs;
        }
        mobj *o = &S.objs[j];
        for (uint32_t k = 0; k < o->nrefs; k++) {
            unsigned x = (unsigned)rbelow(r, 100);
            uint32_t t = x < 60 && nn ? nodes[rbelow(r, nn)] : x < 75 ? pick_reachable(r) : 0;
            if (t)
                set_ref(j, k, t);
        }
        if (rchance(r, 20))
            weak_to(r, j);
        nodes[nn++] = j;
    }
}

static void op_finop(rng *r) {
    unsigned x = (unsigned)rbelow(r, 100);
    if (x < 30) {
        run_finalizers();
    } else if (x < 36) {
        wait_finalizers();
        full_check("full check after tenure_wait_for_pending_finalizers");
    } else if (x < 88) {
        if (!S.nfobjs)
            return;
        uint32_t j = S.fobjs[rbelow(r, S.nfobjs)];
        void *p = (void *)S.objs[j].addr;
        if (x < 62) {
            if (S.P->trace)
                fprintf(stderr, "  suppress %s%s\n", odesc(j), S.objs[j].registered ? " (registered)" : "");
            tenure_result res = tenure_suppress_finalize(S.rt, p);
            if (res != TENURE_OK)
                diff("tenure_suppress_finalize(%s): %s", odesc(j), tenure_strerror(res));
            model_suppress(j);
        } else {
            if (S.P->trace)
                fprintf(stderr, "  reregister %s%s\n", odesc(j), S.objs[j].registered ? " (registered)" : "");
            tenure_result res = tenure_reregister_for_finalize(S.rt, p);
            if (res != TENURE_OK)
                diff("tenure_reregister_for_finalize(%s): %s", odesc(j), tenure_strerror(res));
            model_register(j);
        }
    } else if (x < 94) {
        /* not finalizable: refused */
        uint32_t j = pick_reachable(r);
        if (!j || is_fin(j))
            return;
        S.expect_err = TENURE_INVALID_TYPE;
        S.got_err = 0;
        tenure_result res = rchance(r, 50) ? tenure_suppress_finalize(S.rt, (void *)S.objs[j].addr)
                                           : tenure_reregister_for_finalize(S.rt, (void *)S.objs[j].addr);
        S.expect_err = TENURE_OK;
        if (res != TENURE_INVALID_TYPE || !S.got_err)
            diff("suppress / reregister of not finalizable %s: %s (hook calls %d)", odesc(j), tenure_strerror(res),
                 S.got_err);
        tenure_clear_error(S.rt);
    } else {
        check_pending("pending finalizers");
    }
}

static void op_depend(rng *r) {
    unsigned x = (unsigned)rbelow(r, 100);
    if (x < 40) {
        if (free_handle_index() < 0)
            return;
        uint32_t sec = 0;
        if (rchance(r, 50)) { /* a new object held only by the handle */
            aspec a = rchance(r, 80) ? small_fixed(r) : small_array(r);
            if (rchance(r, 10))
                a = fin_spec(r);
            sec = alloc_oom(&a, r);
        } else
            sec = pick_any(r, 10);
        uint32_t prim = pick_any(r, sec ? 0 : 5);
        int h = free_handle_index();
        if (h < 0)
            return;
        tenure_handle *hd = tenure_handle_new_dependent(S.rt, prim ? (void *)S.objs[prim].addr : NULL,
                                                        sec ? (void *)S.objs[sec].addr : NULL);
        if (!hd) {
            diff("tenure_handle_new_dependent(%s, %s) failed: %s", odesc(prim), odesc(sec),
                 tenure_strerror(tenure_last_error(S.rt)));
            return;
        }
        S.handles[h] = (mhandle){hd, TENURE_HANDLE_DEPENDENT, prim, 1, 0, sec, 0, 0, 0, 0};
        return;
    }
    int h = random_handle(r, TENURE_HANDLE_DEPENDENT);
    if (h <= 0)
        return;
    mhandle *m = &S.handles[h];
    if (x < 60) {
        uint32_t sec = pick_any(r, 10);
        if (!m->obj && sec)
            sec = 0; /* see below: a secondary without a primary */
        tenure_result res = tenure_handle_set_secondary(S.rt, m->h, sec ? (void *)S.objs[sec].addr : NULL);
        if (res != TENURE_OK)
            diff("tenure_handle_set_secondary(handle %d, %s): %s", h, odesc(sec), tenure_strerror(res));
        if (m->sec && m->sec != sec)
            S.reach_dirty = 1;
        m->sec = sec;
    } else if (x < 75) {
        handle_set(h, pick_any(r, m->sec ? 0 : 5));
    } else if (x < 90) {
        void *p = tenure_handle_get(S.rt, m->h), *q = tenure_handle_get_secondary(S.rt, m->h);
        if (p != (m->obj ? (void *)S.objs[m->obj].addr : NULL) || q != (m->sec ? (void *)S.objs[m->sec].addr : NULL))
            diff("dependent handle %d holds %p / %p, expected %s / %s", h, p, q, odesc(m->obj), odesc(m->sec));
    } else {
        handle_free(h);
    }
}

static int count_kind(int kind) {
    int n = 0;
    for (int h = 1; h < MAX_HANDLES; h++) n += S.handles[h].active && S.handles[h].kind == kind;
    return n;
}

static void set_vkind(int h, int k) {
    mhandle *m = &S.handles[h];
    int was_strong = h_strong(m);
    tenure_result res = tenure_handle_set_variable_kind(S.rt, m->h, (tenure_handle_kind)k);
    if (res != TENURE_OK)
        diff("tenure_handle_set_variable_kind(handle %d, %d): %s", h, k, tenure_strerror(res));
    m->vkind = k;
    if (was_strong && !h_strong(m))
        S.reach_dirty = 1;
}

static void set_rc(uint32_t j, unsigned rc) {
    if (!j)
        return;
    if (S.objs[j].rc && !rc)
        S.reach_dirty = 1;
    S.objs[j].rc = (uint8_t)rc;
}

static void op_xhandle(rng *r) {
    static const int vk[4] = {TENURE_HANDLE_WEAK_SHORT, TENURE_HANDLE_WEAK_LONG, TENURE_HANDLE_STRONG,
                              TENURE_HANDLE_PINNED};
    unsigned x = (unsigned)rbelow(r, 100);
    if (x < 20) {
        int h = handle_new(TENURE_HANDLE_VARIABLE, pick_any(r, 10));
        if (h > 0 && rchance(r, 60))
            set_vkind(h, vk[rbelow(r, 4)]);
    } else if (x < 35) {
        int h = random_handle(r, TENURE_HANDLE_VARIABLE);
        if (h > 0)
            set_vkind(h, vk[rbelow(r, 4)]);
    } else if (x < 48) {
        uint32_t t = pick_any(r, 10);
        if (free_handle_index() > 0 && t)
            set_rc(t, (unsigned)rbelow(r, 3));
        handle_new(TENURE_HANDLE_REFCOUNTED, t);
    } else if (x < 60) {
        int h = random_handle(r, TENURE_HANDLE_REFCOUNTED);
        if (h > 0 && S.handles[h].obj) {
            unsigned rc = S.objs[S.handles[h].obj].rc;
            set_rc(S.handles[h].obj, rc && (rc == 3 || rchance(r, 50)) ? rc - 1 : rc + 1);
        }
    } else if (x < 72) {
        uint32_t t = 0;
        for (int tries = 0; tries < 6 && !t; tries++) {
            uint32_t c = pick_reachable(r);
            if (c && S.objs[c].tix == S.tix_refarr && c != S.rootarr)
                t = c;
        }
        if (!t)
            t = pick_any(r, 10);
        handle_new(TENURE_HANDLE_ASYNC_PINNED, t);
    } else if (x < 82) {
        if (count_kind(TENURE_HANDLE_SIZED_REF) < MAX_SIZED)
            handle_new(TENURE_HANDLE_SIZED_REF, rchance(r, 8) ? 0 : pick_reachable(r));
    } else if (x < 94) {
        static const int kinds[4] = {TENURE_HANDLE_VARIABLE, TENURE_HANDLE_REFCOUNTED, TENURE_HANDLE_ASYNC_PINNED,
                                     TENURE_HANDLE_SIZED_REF};
        int h = random_handle(r, kinds[rbelow(r, 4)]);
        if (h > 0)
            handle_set(h, pick_any(r, 10));
    } else {
        check_sized("sized ref query");
        /* a dependent-only query on another kind is refused */
        int h = random_handle(r, TENURE_HANDLE_VARIABLE);
        if (h > 0) {
            S.expect_err = TENURE_INVALID_HANDLE;
            S.got_err = 0;
            void *q = tenure_handle_get_secondary(S.rt, S.handles[h].h);
            S.expect_err = TENURE_OK;
            if (q || !S.got_err)
                diff("tenure_handle_get_secondary of a variable handle: %p, hook calls %d", q, S.got_err);
            tenure_clear_error(S.rt);
        }
    }
}

static void op_pressure(rng *r) {
    if (S.pressure < (48u << 20) && rchance(r, 60)) {
        uint64_t b = rchance(r, 80) ? rrange(r, 1, 3u << 20) : rrange(r, 3u << 20, 9u << 20);
        uint64_t before = S.gcs;
        S.pressure += b;
        S.press_since += b;
        uint64_t since = S.press_since;
        S.pressure_call = 1;
        S.pressure_gcs = 0;
        tenure_result res = tenure_add_memory_pressure(S.rt, b);
        S.pressure_call = 0;
        if (res != TENURE_OK)
            diff("tenure_add_memory_pressure(%" PRIu64 "): %s", b, tenure_strerror(res));
        if (S.gcs != before && S.pressure_gcs == 0)
            diff("tenure_add_memory_pressure(%" PRIu64 ") ran a GC the callback did not see", b);
        (void)since;
    } else if (rchance(r, 90) || !S.pressure) {
        uint64_t b = rbelow(r, S.pressure + 1);
        tenure_result res = tenure_remove_memory_pressure(S.rt, b);
        if (res != TENURE_OK)
            diff("tenure_remove_memory_pressure(%" PRIu64 " of %" PRIu64 "): %s", b, S.pressure, tenure_strerror(res));
        S.pressure -= b;
    } else {
        S.expect_err = TENURE_INVALID_ARGUMENT;
        S.got_err = 0;
        tenure_result res = tenure_remove_memory_pressure(S.rt, S.pressure + 1);
        S.expect_err = TENURE_OK;
        if (res != TENURE_INVALID_ARGUMENT || !S.got_err)
            diff("removing more pressure than was added: %s, hook calls %d", tenure_strerror(res), S.got_err);
        tenure_clear_error(S.rt);
    }
    if (tenure_memory_pressure(S.rt) != S.pressure)
        diff("tenure_memory_pressure says %" PRIu64 ", the model %" PRIu64, tenure_memory_pressure(S.rt), S.pressure);
}

static void op_hash(rng *r) {
    for (int i = 0, n = (int)rrange(r, 1, 4); i < n; i++) {
        uint32_t j = rchance(r, 70) ? pick_reachable(r) : pick_existing(r);
        if (!j || (S.objs[j].flags & F_FROZEN))
            continue;
        uint32_t h = tenure_identity_hash(S.rt, (void *)S.objs[j].addr);
        if (!h || (S.objs[j].hash && h != S.objs[j].hash))
            diff("tenure_identity_hash(%s) is %#x, it was %#x", odesc(j), h, S.objs[j].hash);
        S.objs[j].hash = h;
    }
}

/* ------------------------------------------------------------------------------------------
 * A program
 * ---------------------------------------------------------------------------------------- */
static void register_types(void) {
    static const unsigned pays[4] = {0, 1, 3, 7};
    int n = 0;
    tenure_type_desc d;
    /* layout A: header, id, refs[k], payload[p] (offsets) */
    for (unsigned k = 0; k <= 4; k++)
        for (unsigned pi = 0; pi < 4; pi++) {
            ttype *t = &S.types[n++];
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
            ttype *t = &S.types[n++];
            t->kind = K_FIX;
            t->k = k;
            t->p = p;
            t->pay_off = 16;
            t->ref_off = 16 + 8 * p;
            t->size = 16 + 8 * (size_t)k + 8 * (size_t)p;
            snprintf(t->name, sizeof t->name, p == 2 ? "fixB_r%u_traced" : "fixB_r%u", k);
        }
    S.nfix = n;
    for (int i = 0; i < n; i++) {
        ttype *t = &S.types[i];
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
        t->t = tenure_type_register(S.rt, &d);
    }
    static const size_t rec_off[1] = {8};
    S.tix_refarr = n++;
    S.types[S.tix_refarr] = (ttype){.kind = K_REFARR, .name = "refs"};
    memset(&d, 0, sizeof d);
    d.name = "refs";
    d.size = sizeof(tenure_array_header);
    d.elem_size = sizeof(void *);
    d.flags = TENURE_TYPE_ARRAY | TENURE_TYPE_REF_ARRAY;
    S.types[S.tix_refarr].t = tenure_type_register(S.rt, &d);
    S.tix_recarr = n++;
    S.types[S.tix_recarr] = (ttype){.kind = K_RECARR, .name = "records"};
    memset(&d, 0, sizeof d);
    d.name = "records";
    d.elem_size = 16;
    d.elem_ref_offsets = rec_off;
    d.elem_ref_count = 1;
    d.flags = TENURE_TYPE_ARRAY;
    S.types[S.tix_recarr].t = tenure_type_register(S.rt, &d);
    S.tix_recarr_tr = n++;
    S.types[S.tix_recarr_tr] = (ttype){.kind = K_RECARR, .name = "records_traced"};
    memset(&d, 0, sizeof d);
    d.name = "records_traced";
    d.elem_size = 16;
    d.trace = trace_recs;
    d.flags = TENURE_TYPE_ARRAY;
    S.types[S.tix_recarr_tr].t = tenure_type_register(S.rt, &d);
    S.tix_bytes = n++;
    S.types[S.tix_bytes] = (ttype){.kind = K_BYTES, .name = "bytes"};
    memset(&d, 0, sizeof d);
    d.name = "bytes";
    d.size = sizeof(tenure_array_header);
    d.elem_size = 1;
    d.flags = TENURE_TYPE_ARRAY | TENURE_TYPE_NO_REFS;
    S.types[S.tix_bytes].t = tenure_type_register(S.rt, &d);
    /* finalizable: layout A, 0, 2 or 4 references, one payload word */
    for (unsigned f = 0; f < 3; f++) {
        int ix = S.tix_fin[f] = n++;
        ttype *t = &S.types[ix];
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
        t->t = tenure_type_register(S.rt, &d);
    }
    S.ntypes = n;
    for (int i = 0; i < n; i++)
        if (!S.types[i].t) {
            diff("registering type %s failed", S.types[i].name);
            check_end("type registration");
        }
}

static void scan_fn(tenure_runtime *rt, tenure_visitor *v, void *ctx) {
    (void)rt;
    (void)ctx;
    for (int k = 0; k < SCAN_SLOTS; k++) tenure_visit(v, &S.scan_slots[k]);
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

static void run_program(const params *P, shres *sh) {
    memset(&S, 0, sizeof S);
    ntrk_dead = 0;
    S.P = P;
    S.sh = sh;
    S.op = -1;
    S.oom_mode = P->hard_limit != 0;
    if (sh)
        sh->op = -1;
    S.nobj = 1;
    S.capobj = 1024;
    S.objs = xcalloc(S.capobj, sizeof *S.objs);
    random_config(&S.cfg, P->seed, P->hard_limit);
    tenure_result res = TENURE_OK;
    S.rt = tenure_create(&S.cfg, &res);
    if (!S.rt) {
        diff("tenure_create failed: %s", tenure_strerror(res));
        check_end("setup");
    }
    tenure_set_error_hook(S.rt, hook, NULL);
    tenure_set_gc_callback(S.rt, gc_callback, NULL);
    tenure_set_refcount_callback(S.rt, rc_cb, NULL);
    register_types();
    /* the root array, held by handle 0 */
    aspec ra = {S.tix_refarr, ROOTARR_LEN, 0};
    S.rootarr = do_alloc(&ra);
    if (!S.rootarr) {
        diff("allocating the root array failed");
        check_end("setup");
    }
    tenure_handle *h0 = tenure_handle_new(S.rt, TENURE_HANDLE_STRONG, (void *)S.objs[S.rootarr].addr);
    if (!h0) {
        diff("tenure_handle_new(STRONG) failed");
        check_end("setup");
    }
    S.handles[0] = (mhandle){h0, TENURE_HANDLE_STRONG, S.rootarr, 1, TENURE_HANDLE_STRONG, 0, 0, 0, 0, 0};
    S.scanner = tenure_root_scanner_add(S.rt, scan_fn, NULL);
    if (!S.scanner)
        diff("tenure_root_scanner_add failed");
    area_add(NULL, 0);
    S.reach_dirty = 1;
    rng r0 = {P->seed};
    frame_push(&r0);
    check_end("setup");

    int mode = S.oom_mode ? 1 : 0;
    unsigned total = 0;
    for (int k = 0; k < OP_COUNT; k++) total += op_weight[mode][k];
    for (long i = 0; i < P->ops; i++) {
        S.op = i;
        if (sh)
            sh->op = i;
        rng r = {mix64(P->seed * 0x100000001b3ull ^ mix64((uint64_t)i + 0x51ed27u))};
        unsigned x = (unsigned)rbelow(&r, total);
        int kind = 0;
        while (x >= op_weight[mode][kind]) x -= op_weight[mode][kind++];
        if (P->drop_mask & (1u << kind))
            continue;
        flush_trk();
        if (P->trace)
            fprintf(stderr, "op %ld: %s (objects %u, GCs %" PRIu64 ")\n", i, op_names[kind], S.nobj - 1, S.gcs);
        switch (kind) {
        case OP_ALLOC: op_alloc_with(&r, small_fixed(&r)); break;
        case OP_ARRAY: op_alloc_with(&r, small_array(&r)); break;
        case OP_LARGE: op_alloc_with(&r, large_spec(&r)); break;
        case OP_PINNED: {
            aspec a = rchance(&r, 60) ? small_fixed(&r) : small_array(&r);
            if (rchance(&r, 10)) a = large_spec(&r);
            a.pinned = 1;
            op_alloc_with(&r, a);
            break;
        }
        case OP_CHAIN: op_chain(&r); break;
        case OP_GARBAGE: op_garbage(&r); break;
        case OP_LINK: op_link(&r); break;
        case OP_UNLINK: op_unlink(&r); break;
        case OP_ROOT: op_root(&r); break;
        case OP_HANDLE: op_handle(&r); break;
        case OP_PIN: op_pin(&r); break;
        case OP_FRAME: op_frame(&r); break;
        case OP_AREA: op_area(&r); break;
        case OP_COLLECT: op_collect(&r); break;
        case OP_FROZEN: op_frozen(&r); break;
        case OP_PAYLOAD: op_payload(&r); break;
        case OP_MISC: op_misc(&r); break;
        case OP_VERIFY: full_check("full check (verify op)"); break;
        case OP_FINAL: op_final(&r); break;
        case OP_FINOP: op_finop(&r); break;
        case OP_DEPEND: op_depend(&r); break;
        case OP_XHANDLE: op_xhandle(&r); break;
        case OP_PRESSURE: op_pressure(&r); break;
        case OP_HASH: op_hash(&r); break;
        }
        check_end(op_names[kind]);
        if (P->paranoid) {
            char w[64];
            snprintf(w, sizeof w, "full check after op %ld (%s)", i, op_names[kind]);
            full_check(w);
        }
        after_alloc_check();
    }
    /* the end: check, drop every root, collect everything: only what frozen objects reach stays */
    S.op = P->ops;
    if (sh)
        sh->op = P->ops;
    full_check("final full check");
    while (S.nframes) frame_pop();
    for (int a = 0; a < 2; a++)
        if (S.areas[a].active) area_remove(a);
    for (int k = 0; k < SCAN_SLOTS; k++) set_root_slot(&S.scan_slots[k], &S.scan_obj[k], 0);
    for (int h = 0; h < MAX_HANDLES; h++)
        if (S.handles[h].active) handle_free(h);
    res = tenure_root_scanner_remove(S.rt, S.scanner);
    if (res != TENURE_OK)
        diff("tenure_root_scanner_remove: %s", tenure_strerror(res));
    check_end("dropping every root");
    induced_collect(2, 0, "the final full GC");
    full_check("full check after dropping every root and a full GC");
    /* the finalizers of what that GC queued (they neither resurrect nor allocate now), then
     * everything but what frozen objects reach goes */
    S.final_phase = 1;
    for (int round = 0; round < 3 && S.nfq; round++) {
        /* (an object reregistered while queued is queued again by the next GC) */
        run_finalizers();
        induced_collect(2, 0, "the full GC after the last finalizers");
        full_check("full check after the last finalizers and a full GC");
    }
    if (S.nfq)
        diff("finalizers are still pending at the end (%u)", S.nfq - S.fqhead);
    check_end("the end");
    uint32_t left = 0;
    for (uint32_t j = 1; j < S.nobj; j++) left += !S.objs[j].reclaimed && !(S.objs[j].flags & F_FROZEN);
    if (P->verbose)
        fprintf(stderr, "seed %" PRIu64 ": %" PRIu64 " GCs, %u objects, %" PRIu64 " allocations, %" PRIu64
                        " NOMEM, %u left (reached from frozen segments), %" PRIu64 " queued for finalization, %" PRIu64
                        " finalizers run\n",
                P->seed, S.gcs, S.nobj - 1, S.allocs, S.nomem, left, S.queued_total, S.fin_runs_total);
    S.destroying = 1;
    tenure_destroy(S.rt);
    free(S.reg);
    free(S.fq);
    free(S.fobjs);
    for (int i = 0; i < S.nfrozen_segs; i++) free(S.frozen_mem[i]);
    for (uint32_t j = 1; j < S.nobj; j++) free(S.objs[j].refs);
    free(S.objs);
    free(S.reach);
    free(S.queue);
    free(S.frozen);
    if (sh) {
        sh->gcs = S.gcs;
        sh->done = 1;
    }
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

static int opt_timeout = 120;
static int opt_nofork;

static shres *shres_new(void) {
    void *p = mmap(NULL, sizeof(shres), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
        perror("mmap");
        exit(2);
    }
    return p;
}

static pid_t spawn(const params *P, shres *sh, int quiet) {
    memset((void *)sh, 0, sizeof *sh);
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) {
        perror("fork");
        exit(2);
    }
    if (pid == 0) {
        in_fork = 1;
        if (quiet) {
            int fd = open("/dev/null", O_WRONLY);
            if (fd >= 0) dup2(fd, 2);
        }
        alarm((unsigned)opt_timeout);
        run_program(P, sh);
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

static void run_one(const params *P, int quiet, outcome *out) {
    static shres *sh;
    if (!sh)
        sh = shres_new();
    if (opt_nofork) {
        in_fork = 0;
        memset((void *)sh, 0, sizeof *sh);
        run_program(P, sh);
        collect_outcome(0, P, sh, out);
        return;
    }
    pid_t pid = spawn(P, sh, quiet);
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

static void reduce(const params *orig, const outcome *first) {
    params P = *orig;
    outcome o, best = *first;
    const char *env_hv = getenv("TENURE_HeapVerify"), *env_gs = getenv("TENURE_GCStress");
    printf("reducing seed %" PRIu64 " (failed at op %ld: %s)\n", P.seed, first->op, first->msg);
    if (first->op >= 0 && first->op < P.ops) {
        P.ops = first->op + 1;
        run_one(&P, 1, &o);
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
            run_one(&Q, 1, &o);
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
        run_one(&Q, 1, &o);
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
            opt_timeout = (int)strtol(v, NULL, 0);
        } else if (!strcmp(a, "--no-fork")) {
            opt_nofork = 1;
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
    if (opt_nofork)
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
            if (opt_nofork) {
                outcome o;
                run_one(&slots[s].p, 0, &o);
                finished++;
                total_gcs += o.gcs;
                total_nomem += o.nomem;
                more = minutes > 0 ? now_s() < deadline : started < programs;
                continue;
            }
            if (!slots[s].sh)
                slots[s].sh = shres_new();
            slots[s].pid = spawn(&slots[s].p, slots[s].sh, 0);
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
    if (do_reduce && !opt_nofork)
        for (int i = 0; i < nfailed_kept; i++) reduce(&failed_params[i], &failed_out[i]);
    printf("%ld programs, %" PRIu64 " GCs, %ld failures", finished, total_gcs, failures);
    if (P.hard_limit)
        printf(", %" PRIu64 " allocations refused with NOMEM", total_nomem);
    printf(" (%.1f s)\n", now_s() - t0);
    return failures ? 1 : 0;
}
