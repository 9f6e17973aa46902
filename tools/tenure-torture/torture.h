/*
 * tenure-torture (internal header): a model-based random tester of the tenure collector (public API only).
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
 * Background GC (--bgc, or TENURE_gcConcurrent=1; issue 16; background.c): gen2 GCs the
 * collector chooses (and tenure_collect(2, NONBLOCKING)) mark in the background, foreground GCs
 * run meanwhile. The callback's GC numbers skip the background GC's, whose callback comes after
 * theirs, at its sweep's end, on the BGC thread (handed over to the program's thread). Its
 * final pause (a full mark, then a gen0 GC, no callback) runs inside a call that may collect:
 * the model learns it from the stats' background_final_pauses right after that call (or in the
 * callback of a GC that follows it in the same call), finds gen0's survivors again from the
 * roots, and reclaims everything the roots do not reach as limbo: floating garbage may keep it
 * in the heap until the next blocking gen2 GC (the heap walk, the identity hash count and weak
 * handles to it allow for that; such handles are set to NULL at the next sync point). At the
 * BGC's end every live object must be where it was, intact. Without finalizable objects (their
 * queue order beside floating garbage is not predictable) and without a SizedRef figure for a
 * background GC.
 *
 * Every program is run in a child process (a crash or a hang is a failure with the seed and
 * the op index). See usage() (main.c) for the options.
 *
 * The files, one concern each: main.c (the command line), driver.c (child processes,
 * reduction), program.c (one program: configuration, setup, the ops, the end), types.c,
 * object.c (layouts, numbers, payloads), model.c (the model's bookkeeping and reachability);
 * the operations and the services they model: alloc.c, oom.c, roots.c, handles.c, dependent.c,
 * finalize.c, ops.c, frozen.c, collect.c, pressure.c, identity_hash.c; the checks:
 * gc_callback.c and gc_check.c (after every GC), background.c (background GCs: final pauses,
 * floating garbage, their ends), sized_ref.c, full_check.c; report.c
 * (differences and failure). Every function that touches a program's state takes it as
 * `program_state *s`; the one file-scope variable is finalize.c's (the finalizer callback has
 * no context pointer).
 */
#ifndef TENURE_TORTURE_H
#define TENURE_TORTURE_H

#define _GNU_SOURCE
#include "tenure.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

/* ------------------------------------------------------------------------------------------
 * Random numbers (splitmix64)
 * ---------------------------------------------------------------------------------------- */
static inline uint64_t mix64(uint64_t z) {
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}
typedef struct rng {
    uint64_t s;
} rng;
static inline uint64_t rnext(rng *r) {
    r->s += 0x9e3779b97f4a7c15ull;
    return mix64(r->s);
}
static inline uint64_t rbelow(rng *r, uint64_t n) { return n ? rnext(r) % n : 0; }
static inline uint64_t rrange(rng *r, uint64_t lo, uint64_t hi) { return lo + rbelow(r, hi - lo + 1); }
static inline int rchance(rng *r, unsigned percent) { return rbelow(r, 100) < percent; }

/* ------------------------------------------------------------------------------------------
 * Operation kinds (--drop names them)
 * ---------------------------------------------------------------------------------------- */
#define OPS(X)                                                                                       \
    X(ALLOC, "alloc", 200, 120)   /* a small fixed object to a random place */                       \
    X(ARRAY, "array", 80, 60)     /* a small reference / record / byte array */                      \
    X(LARGE, "large", 15, 140)    /* a large object (>= the LOH threshold) */                        \
    X(PINNED, "pinned", 20, 30)   /* an object on the pinned object heap */                          \
    X(CHAIN, "chain", 30, 30)     /* a chain / tree of new objects */                                \
    X(GARBAGE, "garbage", 60, 20) /* a burst of short-lived objects linked to each other */          \
    X(LINK, "link", 150, 100)     /* store a reference (or NULL) into a reachable object */          \
    X(UNLINK, "unlink", 50, 60)   /* clear a reference */                                            \
    X(ROOT, "root", 80, 90)       /* set or drop a frame / area / scanner / root-array slot */       \
    X(HANDLE, "handle", 80, 60)   /* new / set / free handles of every supported kind */             \
    X(PIN, "pin", 30, 25)         /* pin (new pinned handle) or unpin (free one) */                  \
    X(FRAME, "frame", 25, 20)     /* push or pop a shadow frame */                                   \
    X(AREA, "area", 10, 10)       /* remove or add a root area */                                    \
    X(COLLECT, "collect", 30, 30) /* an induced GC of a random generation and flags */               \
    X(FROZEN, "frozen", 3, 3)     /* register a frozen segment */                                    \
    X(PAYLOAD, "payload", 30, 15) /* rewrite an object's payload */                                  \
    X(MISC, "misc", 10, 10)       /* queries, unsupported handle kinds, bad flags */                 \
    X(VERIFY, "verify", 10, 10)   /* a full check now */                                             \
    X(FINAL, "final", 30, 15)     /* finalizable objects (some garbage at once, some weakly held) */ \
    X(FINOP, "finop", 25, 15)     /* run / wait for finalizers, suppress, reregister */              \
    X(DEPEND, "depend", 25, 15)   /* dependent handles: new, set primary / secondary, free */        \
    X(XHANDLE, "xhandle", 25, 15) /* variable, refcounted, async pinned, sized ref handles */        \
    X(PRESSURE, "pressure", 6, 6) /* add / remove memory pressure */                                 \
    X(HASH, "hash", 10, 6)        /* identity hashes */

enum {
#define OP_ENUM(name, text, w, woom) OP_##name,
    OPS(OP_ENUM)
#undef OP_ENUM
        OP_COUNT
};
extern const char *const op_names[OP_COUNT];
extern const unsigned op_weight[2][OP_COUNT]; /* [0]: normal, [1]: --hard-limit */

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
    int bgc;      /* gcConcurrent=1 (background GCs; also when TENURE_gcConcurrent=1 says so) */
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
/* K_FLDARR: a reference array with fixed fields before its elements (tenure.h): a reference
 * at 16, the number at 24, a payload word at 32, then the elements from 40; its model
 * references are the fixed one (0) and the elements (1..length) */
enum { K_FIX, K_REFARR, K_RECARR, K_BYTES, K_FLDARR };
typedef struct ttype {
    const tenure_type *t;
    int kind;
    unsigned k, p;             /* K_FIX: references, payload words */
    unsigned ref_off, pay_off; /* K_FIX: byte offsets of the first reference / payload word */
    size_t size;               /* K_FIX: bytes */
    int fin;                   /* TENURE_TYPE_FINALIZABLE */
    char name[24];
} ttype;
#define MAX_TYPES 40

#define IDW(j) (((uint64_t)0x7e57u << 48) | (uint64_t)(j))

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
    uint32_t mark3;       /* maybe_epoch: floating garbage may keep it (gc_check.c) */
    uint32_t rmark;       /* reach_epoch: strongly reachable (operand choice) */
    long born;            /* op index */
    uint32_t hash;        /* identity hash (0: never asked) */
    uint32_t sref_stamp;  /* SizedRef graphs (full GCs) */
    int sref_owner;
    uint16_t fin_runs;  /* finalizer runs of this object */
    uint8_t rc;         /* refcount (refcounted handles ask it) */
    uint8_t registered; /* in the model's finalization registry */
    uint8_t limbo;      /* reclaimed by the model at a background GC's final pause, which may have kept it
                           as floating garbage: it may still be in the heap until the next blocking gen2 GC */
    uint8_t f_moved;
    uint32_t gone_at;
    /* reclaimed: s->collections then (failure messages) */ /* a gen0 survivor of a final pause learned inside the next GC's callback: it may
                           have moved (been promoted) before that GC, whatever that GC compacted */
    tenure_handle *trk; /* finalizable objects: a weak long handle (the model's own) */
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
    int vkind;                   /* TENURE_HANDLE_VARIABLE: its variable kind */
    uint32_t sec;                /* TENURE_HANDLE_DEPENDENT: the secondary */
    uint64_t sized_lo, sized_hi; /* TENURE_HANDLE_SIZED_REF: what tenure_handle_sized_ref_bytes may say */
    uint64_t sized_own;          /* its own graph's bytes at the last full GC */
    int sized_overlap;
    /* a weak or dependent handle whose object(s) the model reclaimed at a final pause that may
     * have kept them as floating garbage: the handle holds NULL or them, until settled (set to
     * NULL) at the next point outside a callback (background.c) */
    int unsure;
    uint32_t unsure_obj, unsure_sec;
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
    int ntypes, nfix, tix_refarr, tix_recarr, tix_recarr_tr, tix_bytes, tix_fldarr;
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
    uint64_t collections; /* GCs the model has applied (callbacks, final pauses): a cluster restarts */
    /* background GC (gcConcurrent): it takes its GC number at its initial pause and ends (its
     * callback) after the foreground GCs that ran meanwhile, whose numbers skip it */
    int bgc;
    uint64_t last_index, bgc_pending; /* the last number the callback saw, the one skipped */
    int induced_bg_seen;              /* background GCs that ended inside an induced collect */
    /* its final pause (a full mark, then a gen0 GC, no callback) is learned from the stats'
     * background_final_pauses after the call that ran it or at the next callback; its end's
     * callback, when it comes on the BGC thread, is handed over (bgc_end_ready: 1 while
     * bgc_end_info waits) to the program's thread (background.c) */
    pthread_t thread;
    uint64_t final_pauses, bgc_ends;
    uint32_t nlimbo, nlimbo_hashed, maybe_epoch;
    uint64_t *limbo_keys; /* the heap walk's: limbo objects' (type, size), sorted */
    uint32_t nlimbo_keys;
    int bgc_end_ready;
    tenure_gc_info bgc_end_info;
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
    uint32_t *srcq, srcn, srccap; /* objects reached in the real heap, to scan */
    tenure_handle **trk_dead;     /* trackers of reclaimed objects, freed after the GC */
    uint32_t ntrk_dead, captrk_dead;
    uintptr_t *hkeys; /* the full check's address -> object number table */
    uint32_t *hvals;
    size_t hcap;
    int walk_unexpected; /* the heap walk's visitor */
    const char *walk_where;
    char desc[4][160]; /* odesc: four descriptions may be in use at once */
    int desc_turn;
} program_state;

/* ------------------------------------------------------------------------------------------
 * Allocation
 * ---------------------------------------------------------------------------------------- */
typedef struct aspec {
    int tix;
    size_t length;
    int pinned;
} aspec;

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

/* a burst of new objects that refer to each other (ops.c: cluster_add) */
typedef struct cluster {
    uint32_t *nodes; /* the members since the last GC */
    unsigned n;
    uint64_t gcs; /* s->collections when the members were made */
} cluster;
typedef struct cluster_links {
    uint32_t max_refs;          /* slots of a new member that may be linked */
    unsigned member_percent;    /* x < this: a member */
    unsigned reachable_percent; /* else x < this: a reachable object; else nothing */
} cluster_links;

/* where object j is now (NULL for 0) */
static inline void *obj_ptr(const program_state *s, uint32_t j) { return j ? (void *)s->objs[j].addr : NULL; }

/* the kinds of handle a destination or op handle picks from (strong ones first) */
extern const int handle_kinds[4];

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


/* report.c */
#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
void diff(program_state *s, const char *fmt, ...);
void die(program_state *s, const char *where);
void check_end(program_state *s, const char *where);
void expect_error(program_state *s, tenure_result err);
void expect_done(program_state *s);
void hook(tenure_runtime *rt, tenure_result r, const char *fn, const char *msg, void *ctx);
void *xcalloc(size_t n, size_t sz);
void *xrealloc(void *p, size_t sz);

/* object.c */
const char *odesc(program_state *s, uint32_t j);
size_t arr_size(int kind, size_t len);
void **slot_at(program_state *s, uintptr_t base, int tix, unsigned i);
int gen_class(const mobj *o);
void init_payload(program_state *s, uint32_t j, char *p);
int check_obj(program_state *s, uint32_t j, uintptr_t pa, int level, const char *where);
const char *hkind_name(int k);

/* types.c */
void register_types(program_state *s);

/* model.c */
uint32_t model_new(program_state *s, int tix, uint8_t flags, size_t length, size_t size, uintptr_t addr, int gen,
                   uint64_t seed);
void queue_reserve(program_state *s, uint32_t n);
int is_fin(program_state *s, uint32_t j);
int h_eff(program_state *s, const mhandle *m);
int h_strong(program_state *s, const mhandle *m);
void vec_push(uint32_t **v, uint32_t *n, uint32_t *cap, uint32_t x);
void model_register(program_state *s, uint32_t j);
void model_suppress(program_state *s, uint32_t j);
void model_roots(program_state *s, void (*f)(program_state *, uint32_t));
void reach_add(program_state *s, uint32_t j);
int is_reachable(program_state *s, uint32_t j);
uint32_t pick_reachable(program_state *s, rng *r);
uint32_t pick_target(program_state *s, rng *r, unsigned null_percent);
uint32_t pick_source(program_state *s, rng *r);
uint32_t pick_existing(program_state *s, rng *r);
uint32_t pick_any(program_state *s, rng *r, unsigned null_percent);
void set_ref(program_state *s, uint32_t src, unsigned slot, uint32_t dst);

/* gc_check.c */
void gc_check(program_state *s, const tenure_gc_info *info);
void check_overlap(program_state *s, const char *where);
void mark_full(program_state *s);
int marked_alive(program_state *s, uint32_t j);
void reclaim(program_state *s, uint32_t j);
void make_limbo(program_state *s, uint32_t j);
void mark_maybe_kept(program_state *s);
void weak_target_died(program_state *s, mhandle *m);
void check_heap_after(program_state *s, const tenure_gc_info *info);
void check_figures(program_state *s, int c, int background);

/* gc_callback.c */
void gc_callback(tenure_runtime *rt, const tenure_gc_info *info, void *ctx);
void gc_account(program_state *s, const tenure_gc_info *info);

/* background.c */
int bgc_sync(program_state *s);
void bgc_before_callback(program_state *s);
int bgc_hand_over(program_state *s, const tenure_gc_info *info);
void bgc_end_check(program_state *s, const tenure_gc_info *info, int figures);
void bgc_forget_limbo(program_state *s);
int rc_lookup_moved(program_state *s, void *obj, int *rc);
void limbo_index(program_state *s);
int may_be_limbo(program_state *s, void *obj, const tenure_type *type, size_t size);

/* sized_ref.c */
void model_sized(program_state *s);
void check_sized(program_state *s, const char *where);
void check_sized_after_full_gc(program_state *s);

/* full_check.c */
void flush_trk(program_state *s);
void full_check(program_state *s, const char *where);
void check_gc_count(program_state *s, const char *where);

/* alloc.c */
size_t spec_size(program_state *s, const aspec *a);
void after_alloc_check(program_state *s);
uint32_t do_alloc(program_state *s, const aspec *a);
aspec small_fixed(program_state *s, rng *r);
aspec small_array(program_state *s, rng *r);
aspec large_spec(program_state *s, rng *r);
aspec fin_spec(program_state *s, rng *r);

/* oom.c */
uint32_t alloc_oom(program_state *s, const aspec *a, rng *r);

/* roots.c */
dest choose_dest(program_state *s, rng *r, int strong_only);
void set_root_slot(program_state *s, void **slot, uint32_t *model, uint32_t j);
void dest_recheck(program_state *s, dest *d, int no_handle);
void store_dest(program_state *s, const dest *d, uint32_t j);
void op_root(program_state *s, rng *r);
void frame_push(program_state *s, rng *r);
void frame_pop(program_state *s);
void op_frame(program_state *s, rng *r);
void area_add(program_state *s, rng *r, int a);
void area_remove(program_state *s, int a);
void op_area(program_state *s, rng *r);
void scan_fn(tenure_runtime *rt, tenure_visitor *v, void *ctx);

/* handles.c */
int free_handle_index(program_state *s);
int handle_new(program_state *s, int kind, uint32_t j);
void handle_free(program_state *s, int h);
void handle_set(program_state *s, int h, uint32_t j);
int random_handle(program_state *s, rng *r, int kind_filter);
void op_handle(program_state *s, rng *r);
void op_pin(program_state *s, rng *r);
int rc_cb(void *obj, void *ctx);
void op_xhandle(program_state *s, rng *r);

/* dependent.c */
void op_depend(program_state *s, rng *r);

/* finalize.c */
void finalizers_attach(program_state *s);
void fin_cb(tenure_runtime *rt, void *obj);
void run_finalizers(program_state *s);
void op_final(program_state *s, rng *r);
void op_finop(program_state *s, rng *r);

/* ops.c */
void prelink(program_state *s, rng *r, uint32_t j);
void op_alloc_with(program_state *s, rng *r, aspec a);
void op_chain(program_state *s, rng *r);
void cluster_add(program_state *s, rng *r, cluster *c, uint32_t j, const cluster_links *l);
void op_garbage(program_state *s, rng *r);
void op_link(program_state *s, rng *r);
void op_unlink(program_state *s, rng *r);
void op_payload(program_state *s, rng *r);
void op_misc(program_state *s, rng *r);

/* frozen.c */
void op_frozen(program_state *s, rng *r);

/* collect.c */
void induced_collect(program_state *s, int gen, unsigned flags, const char *where);
void op_collect(program_state *s, rng *r);

/* pressure.c */
void op_pressure(program_state *s, rng *r);

/* identity_hash.c */
void op_hash(program_state *s, rng *r);

/* program.c */
void run_program(const params *P, shres *sh, int in_fork);

/* driver.c */
shres *shres_new(void);
pid_t spawn(const driver *d, const params *P, shres *sh, int quiet);
void collect_outcome(int status, const params *P, shres *sh, outcome *out);
void run_one(driver *d, const params *P, int quiet, outcome *out);
void command_line(const params *P, char *buf, size_t n);
void reduce(driver *d, const params *orig, const outcome *first);

#endif
