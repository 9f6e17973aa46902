/*
 * runtime.h - the one structure every subsystem hangs off (no globals), the object model
 * (tn_type, tn_region, tn_mutator, object sizes and slots: heap/types.c) and api/'s options.
 * The services below every subsystem (errors, callbacks, internal allocation, tn_vec,
 * assertions) are base/'s: base/base.h, included first. Module prefixes: tn_os_ (os/),
 * tn_type_ and tn_heap_ (heap/), tn_gc_ (gc/), tn_roots_ (roots/), tn_api_ (base/ errors).
 *
 * struct tenure_runtime holds the per-instance configuration, the reserved range and its side
 * tables, statistics, and embeds the state each subsystem owns, declared in the subsystem's
 * own header: rt->services (base/base.h: errors, the error hook), rt->heap (heap/heap.h), rt->roots
 * (roots/roots.h), rt->lifetime (lifetime/lifetime.h), rt->threads (threads/threads.h),
 * rt->mark (gc/mark.h), rt->plan (gc/plan.h), rt->card (gc/cards.h), rt->prof
 * (profiler/profiler.h). One GC's own state is a tn_collection (gc/collection.h) on the
 * driver's stack, rt->collection while it runs; rt->last is the record of the previous GC.
 * The table: docs/design/README.md "Who owns which state". Outside its owner's folder that
 * state is reached only through the owner's functions (scripts/depgraph.py checks it); the
 * configuration, services, statistics and the reserved range with its side tables are the
 * instance's, read by all.
 *
 * The functions each subsystem offers the others are declared in the same header as its state,
 * after it: heap/heap.h, threads/threads.h, roots/roots.h, lifetime/lifetime.h,
 * profiler/profiler.h, gc/mark.h and gc/cards.h; the rest of gc/ in gc/gc.h. This header
 * includes them all (a .c file includes only runtime.h): the state headers before struct
 * tenure_runtime, then the heap's inline address helpers that read the struct, and gc/gc.h.
 *
 * Heap invariants (checked by gc/verify.c, explained in docs/design/heap.md):
 *  H1 Every region is walkable: from its start to `used`, objects and free objects lie back
 *     to back; each begins with a header word naming a registered type (or the free type).
 *  H2 Objects are 8-byte aligned; real objects are >= 16 bytes; free objects are >= 8.
 *  H3 Every reference in a heap object or root is NULL, the start of a live (non-free) object
 *     in a region in use, or (outside the reserved range) the start of an object of a frozen
 *     segment registered with this instance; nothing else (static or malloc'd memory, another
 *     instance's objects). The checked barrier refuses a store that breaks it (gc/verify.c).
 *  H4 Outside a GC, the mark, pin and plug bitmaps are all zero.
 *  H5 Every slot of a gen1/gen2/LOH/POH object that refers to an object of a younger
 *     generation g lies under a card whose value is in 1..g+1 (the card's value is one more
 *     than the youngest generation it may refer to; the barrier writes 1; 0 is clean). A card
 *     bundle (64 cards) is 0 only if all its cards are, else at most its least card value.
 *  H6 Outside a GC, the crossing table of every gen1/gen2/LOH/POH region gives, for each
 *     512-byte granule, the object that covers its first byte (or the first object after it).
 *  H7 Right after a GC that condemned generation g, every card of value v in 1..g+1 (every
 *     card after a full GC) is exact: some slot under it refers to an object of generation
 *     v-1, none to a younger one. The GC recomputed each card it scanned, so a card whose
 *     young references are gone was cleared (cards of value above g+1 may be stale).
 *     A background GC's final pause counts as a GC that condemned generation 0 (after its
 *     final mark it collects gen0; gen1, gen2 and the large heaps are swept after it).
 *  H8 While a background GC sweeps (after its final pause), an object of a gen2, LOH or POH
 *     region below the region's unswept_end whose bit is clear in rt->unswept_marks is dead:
 *     no live object, root or handle refers to it, and its own slots may refer to freed
 *     memory. Every walk over a region skips it (tn_unswept_dead); the sweep turns it into
 *     free space and clears the region's unswept_end. Nothing is ever allocated below an
 *     unswept_end: the large heaps' free lists hold only swept space.
 */
#ifndef TENURE_RUNTIME_H
#define TENURE_RUNTIME_H

#include "tenure.h"
#include "tenure_profiler.h"
#include "os/os.h"
#include "base/base.h"
#include <pthread.h>
#include <ucontext.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define TN_ALIGN 8u
#define TN_MIN_OBJECT 16u
#define TN_CARD_SIZE ((size_t)1 << TENURE__CARD_SHIFT)
#define TN_PLUG_BRICK_SHIFT 9   /* plug lookup bricks: 512 bytes, one word of plug_bits */
#define TN_QUANTUM (8u * 1024u) /* allocation context quantum */
#define TN_GAP_MIN 1024u        /* the smallest gap between pinned plugs reused by allocation */
#define TN_LARGE_REGION_UNITS 1 /* LOH/POH regions span at least this many units */

static inline size_t tn_align_up(size_t n, size_t a) { return (n + a - 1) & ~(a - 1); }

/* Generations. LOH and POH are logically generation 2. */
enum { TN_GEN0 = 0, TN_GEN1 = 1, TN_GEN2 = 2, TN_LOH = 3, TN_POH = 4, TN_NGEN = 5 };

/* Type kinds */
enum { TN_TK_FREE = 0, TN_TK_FIXED = 1, TN_TK_ARRAY = 2 };

typedef struct tn_type {
    struct tenure_type pub; /* fast size and owner: read by the inline allocator */
    uint32_t magic;
    uint32_t index;
    uint8_t kind;
    uint32_t flags;
    size_t size;      /* fixed objects: rounded size; arrays: offset of the first element (16, or more
                       * with fixed fields, whose references are ref_offsets) */
    size_t elem_size; /* arrays */
    size_t ref_count, elem_ref_count;
    size_t *ref_offsets, *elem_ref_offsets;
    tenure_trace_fn trace;
    void (*finalize)(tenure_runtime *rt, void *obj);
    char *name;
} tn_type;
#define TN_TYPE_MAGIC 0x7e9e7e9eu

/* Region states */
enum { TN_RS_UNUSED = 0, TN_RS_FREE = 1, TN_RS_IN_USE = 2 };

typedef struct tn_region {
    char *start, *end;      /* end = start + units * unit size */
    char *used;             /* objects occupy [start, used) */
    char *zero_from;        /* [zero_from, end) is known to be zero */
    struct tn_region *next; /* in its generation's list or the free list */
    uint32_t index, units;
    uint8_t gen;   /* 0..4 */
    uint8_t state; /* TN_RS_* */
    uint8_t heap;  /* the server GC heap that owns it (heap/balance.c); 0 under
                      workstation GC. A compacted region's survivors stay on its heap (gc/plan.c) */
    bool committed;
    /* collection state */
    bool condemned, compacting;
    bool demote;          /* holds only pinned plugs after this GC: stays in its generation */
    bool kept;            /* in a compacted generation, survives mostly: swept in place, promoted
                             whole, no destination (gc/plan.c "kept regions") */
    uint64_t freed_at_gc; /* free regions: the GC count when freed */
    size_t live_bytes;    /* marked bytes found by plan */
    size_t free_bytes;    /* bytes in free objects (after the last GC) */
    intptr_t first_plug_delta;
    char *plan_used;
    uint32_t pin_first, pin_count;  /* pinned plugs of this region in gc->pins */
    size_t discarded;               /* bytes of free space around pinned plugs given back to the OS
                               (not counted in rt->heap.committed until a GC condemns the region) */
    struct tn_mutator *alloc_owner; /* a gen0 region holding this thread's allocation context */
    size_t bgc_live;                /* bytes the background GC in progress premarked here (gc/background.h) */
    char *unswept_end;              /* not swept yet by the background GC (H8): an object below it is dead
                                       unless its bit is set in rt->unswept_marks; NULL: nothing to sweep */
} tn_region;

/* An attached thread (threads/threads.c). Its allocation context sits at the tail of its own
 * alloc_region: [pub.alloc_ptr, ctx_end) is zeroed memory not yet handed out. While the thread
 * is SAFE (stopped at a safepoint, blocked, or waiting for the instance), its stack from
 * safe_sp up and its saved registers are what a GC scans conservatively. */
enum { TN_MUT_RUNNING = 0, TN_MUT_SAFE = 1 };
typedef struct tn_mutator {
    tenure__mutator pub; /* must be first: tenure__current points at it */
    struct tenure_runtime *rt;
    struct tn_mutator *next;           /* rt->threads.mutators */
    struct tn_mutator *next_of_thread; /* this thread's attachments (thread-local list) */
    unsigned attach_count;
    bool finalizer;   /* the instance's finalizer thread */
    char *stack_high; /* the stack's base (high end) */
    /* allocation context */
    struct tn_region *alloc_region;
    uintptr_t ctx_start;   /* bytes from here to pub.alloc_ptr are not yet counted */
    uintptr_t ctx_end;     /* real end of the context (pub.alloc_limit may be lower) */
    unsigned alloc_heap;   /* the allocation heap whose budget this thread spends (heap/alloc.c) */
    bool alloc_heap_dealt; /* alloc_heap was dealt (at the thread's first refill) */
    bool ctx_in_gap;       /* the context lies in a gap between pinned plugs of its region
                                  (below r->used), not at its tail: ending it leaves
                                  [alloc_ptr, ctx_end) as a free object (heap/alloc.c) */
    /* suspension: state changes under rt->threads.world_mx */
    int state;
    char *safe_sp;             /* the stack below this is not scanned while SAFE */
    ucontext_t safe_regs;      /* the registers when it became SAFE (scanned conservatively) */
    const void *held[2];       /* objects passed to the call waiting for rt->threads.lock: pinned */
    bool gone;                 /* after fork(), in the child: its thread does not exist here */
    bool parked;               /* SAFE because its thread waits in another instance (threads.c) */
    unsigned callbacks_closed; /* callbacks that may not allocate running on this thread: while
                                  nonzero its context stays closed (tn_alloc_close_for_callback) */
    uint64_t os_tid;           /* the thread's OS id (gettid): profilers' thread of stack roots */
    /* where it was attached, for the message of a stop that waits too long (GCStopWarnMs):
     * the public function and the address it was called from (NULL if unknown) */
    const char *attached_by;
    const void *attached_from;
    /* sampled allocations (profiler): bytes this thread allocated, counted (contexts are
     * counted when they end or refill, large objects at once), and that count at its
     * previous sample. Bytes since the sample: allocated + (alloc_ptr - ctx_start) - sampled_at */
    uint64_t allocated, sampled_at;
} tn_mutator;

struct tenure_visitor {
    void (*fn)(void **slot, void *ctx); /* a tn_slot_fn */
    void *ctx;
};

/* What the visits call for each reference slot (tn_obj_visit_slots, the root walks). */
typedef void (*tn_slot_fn)(void **slot, void *ctx);

/* Free lists of the LOH and POH: size-segregated, first fit. */
#define TN_FREE_BUCKETS 40
typedef struct tn_free_list {
    void *buckets[TN_FREE_BUCKETS]; /* free objects linked through their third word */
} tn_free_list;


/* Pinned plugs found by plan */
typedef struct tn_pin {
    char *start, *end;
    intptr_t after_delta; /* move distance of a plug that begins at `end` (no gap to hold it) */
} tn_pin;

/* Gaps that become free objects after compaction */
typedef struct tn_gap {
    char *start;
    size_t size;
} tn_gap;

/* One server GC heap's part of a collection's record: what its regions held before and after
 * the GC, what survived there (GCPerHeapHistory_V3 per heap; gc/history.c). */
typedef struct tn_heap_tally {
    size_t size_before[TN_NGEN], free_before[TN_NGEN], size_after[TN_NGEN], free_after[TN_NGEN];
    size_t promoted[TN_NGEN], pinned_bytes[TN_NGEN];
} tn_heap_tally;

/* What one collection decided and did: built by the collection (gc/collection.h), then kept
 * as rt->last, the record of the previous GC (the events' history records, budgets, stats). */
typedef struct tn_gc_record {
    uint64_t index;
    int condemned;           /* 0, 1 or 2 */
    uint32_t reason;         /* GC reason of the events spec */
    bool compacted[TN_NGEN]; /* per generation condemned: compacted (true) or swept */
    size_t size_before[TN_NGEN], size_after[TN_NGEN];
    size_t promoted[TN_NGEN];
    size_t pinned_objects;
    size_t finalization_promoted_bytes, finalization_promoted_count; /* kept only to be finalized */
    size_t pinned_bytes[TN_NGEN];                                    /* bytes in pinned plugs, per generation */
    size_t free_before[TN_NGEN], free_after[TN_NGEN];
    uint32_t condemn_reasons_gen, condemn_reasons_condition; /* as the .NET collector packs them */
    int compact_reason;                                      /* -1: nothing compacted */
    bool demoted;         /* regions holding only pinned plugs stayed in their generation */
    uint32_t phase_us[5]; /* mark, plan, relocate, compact or sweep, promote (gc/collection.h) */
    uint32_t mark_us[5];  /* the mark phase's steps: sizedref, roots, short weak, finalization, long weak */
    uint64_t pause_ns;
    bool background; /* a background GC (its final pause's record: pause_ns sums both pauses) */
    /* per heap (rt->heap.nheaps entries; their sums are the figures above): rt->tallies[0] for
     * a blocking GC, rt->tallies[1] for a background GC, which outlives the GCs during its sweep */
    tn_heap_tally *heaps;
} tn_gc_record;

/* One heap's figures in record g, for an instance of nheaps heaps: the record's own under
 * workstation GC (one heap: no tally is kept), else heap h's tally (gc/history.c's per-heap
 * histories, heap/alloc.c's per-heap budgets). */
typedef struct tn_heap_figures {
    const size_t *size_before, *free_before, *size_after, *free_after, *promoted, *pinned_bytes;
} tn_heap_figures;

static inline tn_heap_figures tn_record_heap(const tn_gc_record *g, unsigned nheaps, unsigned h) {
    if (nheaps == 1)
        return (tn_heap_figures){g->size_before, g->free_before, g->size_after,
                                 g->free_after,  g->promoted,    g->pinned_bytes};
    const tn_heap_tally *t = &g->heaps[h];
    return (tn_heap_figures){t->size_before, t->free_before, t->size_after,
                             t->free_after,  t->promoted,    t->pinned_bytes};
}

/* The state each subsystem owns, embedded below (each in its subsystem's own header). */
#include "heap/heap.h"
#include "lifetime/lifetime.h"
#include "roots/roots.h"
#include "gc/mark.h"
#include "gc/cards.h"
#include "gc/plan.h"
#include "gc/background.h"
#include "profiler/profiler.h"
#include "threads/threads.h"

/* Automatic gen0 budget bounds (heap/alloc.c "budgets and triggers"): the smallest (a tiny
 * heap) and the largest (GCgen0MaxBudget 0). */
#define TN_GEN0_FLOOR ((size_t)256 << 10)
#define TN_GEN0_CAP ((size_t)64 << 20)
#define TN_GEN0_SET_GROWTH 6 /* with GCgen0size set: the cap is at most this many times it */

struct tenure_runtime {
    tenure__head head; /* must be first: the inline fast paths read it */
    uint32_t magic;
    uint16_t instance_id;
    struct tenure_runtime *fork_next; /* the fork handlers' list of live instances (api/fork.c) */
    tenure_config config;

    struct tn_base_state services; /* base/base.h: errors and the error hook, what base/ calls above it */

    /* reserved range and side tables */
    char *base;
    size_t range, unit_size, max_units;
    tn_region *regions;  /* one per unit; meaningful at a region's first unit */
    uint32_t *unit_head; /* unit -> index of its region's first unit */
    uint8_t *unit_gen;   /* barrier generation per unit (0, 1, 2) */
    uint8_t *cards, *card_bundles;
    uint64_t *mark_bits, *pin_bits; /* one bit per 8 bytes of the range */
    uint64_t *plug_bits;            /* during plan: two bits per plug, at its first and its last word */
    const uint64_t *unswept_marks;  /* the background GC's marks of the regions it has not swept yet (H8) */
    int32_t *plug_bricks;           /* per 512 bytes (one plug_bits word): words from the region start
                               to the plug covering the brick's first byte (compacting regions) */
    uint32_t *crossing;             /* per card: words back from the card start to the covering object */
    uint32_t units_high;            /* units below this index have been used at some time */

    /* the state each subsystem owns (docs/design/README.md "Who owns which state") */
    struct tn_heap_state heap;         /* heap/heap.h */
    struct tn_roots_state roots;       /* roots/roots.h */
    struct tn_lifetime_state lifetime; /* lifetime/lifetime.h */
    struct tn_threads_state threads;   /* threads/threads.h */
    struct tn_mark_state mark;         /* gc/mark.h */
    struct tn_gc_team team;            /* gc/team.h: server GC's threads */
    struct tn_bgc_state bgc;           /* gc/background.h: the background GC */
    struct tn_plan_state plan;         /* gc/plan.h */
    struct tn_card_state card;         /* gc/cards.h */
    struct tn_prof_state prof;         /* profiler/profiler.h */

    /* collection */
    struct tn_collection *collection;       /* the GC in progress (gc/collection.h), NULL outside one: set by
                                         gc/collect.c; others ask tn_gc_in_progress (gc/gc.h) */
    tn_gc_record last;                      /* the record of the previous GC (set at its end) */
    tn_heap_tally tallies[2][TN_MAX_HEAPS]; /* the records' per-heap parts (tn_gc_record.heaps) */
    /* events: ev_mask[l] = keywords wanted at level l by some session (trace/) */
    uint64_t ev_mask[6];
    struct tn_session *sessions;
    /* the GC callback (gc/report.c) */
    tenure_gc_callback gc_callback;
    void *gc_callback_context;
    /* trace/: removals asked for while a list is walked wait for its end */
    unsigned ev_dispatches; /* listener dispatches (tn_trace_emit) in progress */
    bool sessions_stopped;  /* some session waits to be closed */
    tenure_stats stats;
};
#define TN_RUNTIME_MAGIC 0x7e7e0001u

/* Where an address lies in the heap: inline helpers that read struct tenure_runtime (the
 * heap's own functions are in heap/heap.h) */
static inline bool tn_in_range(const tenure_runtime *rt, const void *p) {
    return (uintptr_t)p - (uintptr_t)rt->base < rt->range;
}
static inline size_t tn_unit_of(const tenure_runtime *rt, const void *p) {
    return ((uintptr_t)p - (uintptr_t)rt->base) >> rt->head.unit_shift;
}
/* The region holding p (p must be in range); NULL if the unit is not in use. */
static inline tn_region *tn_region_of(const tenure_runtime *rt, const void *p) {
    tn_region *r = &rt->regions[rt->unit_head[tn_unit_of(rt, p)]];
    return r->state == TN_RS_IN_USE ? r : NULL;
}
/* The generation of obj, an object of rt (frozen objects count as gen2): what
 * tenure_object_generation answers, without its checks. */
static inline int tn_object_gen(const tenure_runtime *rt, const void *obj) {
    return tn_in_range(rt, obj) ? tn_region_of(rt, obj)->gen : TN_GEN2;
}
/* End of the walkable part of r (the allocation context's unused tail is not): heap/'s, inline
 * for tn_is_object and the conservative scan. */
static inline char *tn_region_walk_end(const tenure_runtime *rt, const tn_region *r) {
    /* A thread's context region: up to its bump pointer for that thread; for the others, up
     * to the context's end (the zeroed tail holds no object: a header of zero is no type). A
     * context in a gap between pinned plugs (heap/alloc.c) lies below r->used: the whole
     * region, its zeroed tail holds no object either. A GC ends every context first. */
    tn_mutator *owner = r->alloc_owner;
    if (owner && owner == tn_self((tenure_runtime *)rt) && !owner->ctx_in_gap)
        return (char *)owner->pub.alloc_ptr;
    return r->used;
}

/* H8: obj (an object of r, below r->used) is dead and not swept yet: the background GC's
 * final mark found it unreachable, and its sweep (gc/background.c) has not reached r. Its
 * slots may hold what no longer exists: every walk over a region skips it. */
static inline bool tn_unswept_dead(const tenure_runtime *rt, const tn_region *r, const void *obj) {
    if ((const char *)obj >= r->unswept_end)
        return false; /* (always, when unswept_end is NULL) */
    size_t bit = ((uintptr_t)obj - (uintptr_t)rt->base) >> 3;
    return !((rt->unswept_marks[bit >> 6] >> (bit & 63)) & 1);
}

/* base/'s callback frames that read rt->services (base/base.h "callbacks.c"), inline: an
 * event listener's or a profiler's per-allocation call pays no extra call for the cut. Push a
 * frame and, for a kind that may not allocate and may run while the thread's context is open
 * (all but finalizers, and type trace, which runs with every context ended), close the calling
 * thread's context for the call (heap/, through rt->services.calls); tn_cb_leave reopens it. */
static inline void tn_cb_enter(tn_cb_frame *f, tenure_runtime *rt, tn_cb_kind kind) {
    tn_cb_push(f, rt, kind);
    if (kind != TN_CB_FINALIZER && kind != TN_CB_TRACE) /* (calls: set before any callback can run) */
        f->closed = rt->services.calls->close_context(rt);
}
static inline void tn_cb_leave(tn_cb_frame *f) {
    tn_cb_pop(f);
    if (f->closed)
        f->rt->services.calls->reopen_context(f->closed);
}

#include "gc/gc.h"

/* ---- api/fork.c: the registry of live instances for the fork handlers ---- */
void tn_fork_register(tenure_runtime *rt);
void tn_fork_unregister(tenure_runtime *rt);

/* ---- api/options.c ---- */
/* Apply the TENURE_<name> variables (read through tn_os_getenv); the first refusal's reason
 * goes to why (or every refusal to stderr when why is NULL). */
tenure_result tn_config_from_env(tenure_config *config, char *why, size_t len);
/* tenure_config_check; from_env: name the TENURE_ variable a value came from. */
tenure_result tn_config_check(const tenure_config *c, bool from_env, char *why, size_t len);
/* Once per process: name on stderr the TENURE_ variables nothing reads (with the nearest known
 * name) and, when tenure_create was given a config, the option variables it does not apply;
 * say what TENURE_DEBUG=1 set when it is in effect. */
void tn_config_check_env(const tenure_config *given);
/* ---- api/debug.c: a fault in freed GC space explained (GCPoisonFreed) ---- */
/* Watch rt (when its GCPoisonFreed is on) for the SIGSEGV handler; unwatch before it goes. */
void tn_debug_watch(tenure_runtime *rt);
void tn_debug_unwatch(tenure_runtime *rt);
/* GCRegionRange was left at its default: a smaller reservation may be tried, down to
 * tn_config_min_range. */
bool tn_config_range_is_automatic(const tenure_config *c);
uint64_t tn_config_min_range(const tenure_config *c);

/* ---- heap/types.c ---- */
bool tn_type_init_builtin(tenure_runtime *rt);
void tn_type_free_all(tenure_runtime *rt);
/* true if t is a registered type of rt (any kind) */
bool tn_type_valid(const tenure_runtime *rt, const void *t);
/* Registered types, the built-in ones included (indexes below it: tn_type.index). */
size_t tn_type_count(const tenure_runtime *rt);

static inline tn_type *tn_obj_type(const void *obj) { return (tn_type *)(*(const uintptr_t *)obj & ~(uintptr_t)7); }
static inline size_t tn_obj_size_t(const tn_type *t, const void *obj) {
    if (t->kind == TN_TK_FIXED)
        return t->size;
    if (t->kind == TN_TK_ARRAY)
        return tn_align_up(t->size + t->elem_size * ((const tenure_array_header *)obj)->length, TN_ALIGN);
    return t->size == 8 ? 8 : ((const size_t *)obj)[1]; /* free object */
}
static inline size_t tn_obj_size(const void *obj) { return tn_obj_size_t(tn_obj_type(obj), obj); }
static inline bool tn_is_free(const void *obj) { return tn_obj_type(obj)->kind == TN_TK_FREE; }
/* Size of an array of `length` elements; 0 if impossible. */
size_t tn_array_size(const tn_type *t, size_t length);

/* Visit every reference slot of obj. Inline, so that a call with a constant fn (the marker,
 * the relocator) becomes a plain loop with fn inlined. */
void tn_obj_visit_traced(void *obj, tn_slot_fn fn, void *ctx); /* types with a trace callback */
static inline void tn_obj_visit_slots(tenure_runtime *rt, void *obj, tn_slot_fn fn, void *ctx) {
    tn_type *t = tn_obj_type(obj);
    char *o = (char *)obj;
    (void)rt;
    if (t->trace) {
        tn_obj_visit_traced(obj, fn, ctx);
        return;
    }
    if (t->kind == TN_TK_FIXED) {
        for (size_t i = 0; i < t->ref_count; i++)
            fn((void **)(o + t->ref_offsets[i]), ctx);
        return;
    }
    if (t->kind != TN_TK_ARRAY)
        return;
    for (size_t i = 0; i < t->ref_count; i++) /* fixed fields before the elements */
        fn((void **)(o + t->ref_offsets[i]), ctx);
    if (t->elem_ref_count == 0)
        return;
    size_t n = ((tenure_array_header *)obj)->length;
    char *e = o + t->size;
    if (t->elem_ref_count == 1 && t->elem_size == sizeof(void *) && t->elem_ref_offsets[0] == 0) {
        void **slots = (void **)e;
        for (size_t i = 0; i < n; i++)
            fn(&slots[i], ctx);
        return;
    }
    for (size_t i = 0; i < n; i++, e += t->elem_size)
        for (size_t j = 0; j < t->elem_ref_count; j++)
            fn((void **)(e + t->elem_ref_offsets[j]), ctx);
}

#include "trace/trace.h"

#endif
