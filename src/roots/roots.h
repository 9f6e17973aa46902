/*
 * roots.h - the state roots/ owns (rt->roots): root areas and scanners, handles (their slabs,
 * free list and count; the refcount callback of refcounted handles), and the walks in
 * progress over the embedder's roots. Included by runtime.h, which embeds it in struct
 * tenure_runtime; others call roots/'s functions (below), never these fields
 * (scripts/depgraph.py): the handle count (tn_handle_count: the GC skips handle passes), the
 * frozen segments (frozen.c) through tn_frozen_segments (trace/'s segment events) and
 * tn_visit_all_objects (the heap walk), where the collecting thread's conservative scan
 * starts (tn_roots_set_scan_from). After the state: roots/'s functions (root walks,
 * conservative scan, frozen segments, handle walks and checks).
 */
#ifndef TENURE_ROOTS_ROOTS_H
#define TENURE_ROOTS_ROOTS_H

#include "tenure.h"
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

struct tenure_runtime;

/* Handles */
typedef struct tn_handle_slot {
    void *object;  /* must be first: a slot's address is the handle, and &object the root */
    uint32_t kind; /* tenure_handle_kind, or TN_HANDLE_FREE */
    uint32_t magic;
    struct tn_handle_slot *next_free;
    void *secondary;        /* dependent handles */
    uint32_t variable_kind; /* variable handles */
    uint32_t effective;     /* the kind it behaves as in the current GC (tn_handles_prepare) */
    uint64_t sized_bytes;   /* SizedRef: bytes at the last full GC */
} tn_handle_slot;
#define TN_HANDLE_FREE 0xffffffffu
#define TN_HANDLE_MAGIC 0x4a4d0e11u
#define TN_HANDLE_SLAB_BYTES 8192u /* slabs are aligned to their size: slot -> slab is a mask */
#define TN_HANDLES_PER_SLAB ((TN_HANDLE_SLAB_BYTES - 32u) / sizeof(tn_handle_slot))

typedef struct tn_handle_slab {
    uint32_t magic;
    const struct tenure_runtime *owner;
    struct tn_handle_slab *next;
    tn_handle_slot slots[TN_HANDLES_PER_SLAB];
} tn_handle_slab;

struct tenure_root_area {
    struct tenure_root_area *next;
    void **slots;
    size_t count;
    uint32_t magic;
};
struct tenure_root_scanner {
    struct tenure_root_scanner *next;
    tenure_root_scan_fn scan;
    void *context;
    uint32_t magic;
};
#define TN_ROOT_MAGIC 0x7007a7eau
#define TN_ROOT_REMOVED 0x7007dea0u /* removed while the roots were walked: unlinked at the walk's end */

/* A frozen segment (frozen.c) */
typedef struct tn_frozen {
    char *start, *end;
    uint64_t *starts; /* one bit per 8 bytes: object starts */
} tn_frozen;

struct tn_roots_state {
    struct tenure_root_area *areas;
    struct tenure_root_scanner *scanners;
    tn_handle_slab *handle_slabs;
    struct tn_slab_set *slab_set; /* slab addresses: checks a handle (read without the lock) */
    size_t slab_count;
    tn_handle_slot *handle_free_head, *handle_free_tail;
    size_t handle_count;
    tenure_refcount_fn refcount_fn; /* refcounted handles: is the object referenced? */
    void *refcount_context;
    /* the conservative scan of the collecting thread (conservative.c): its stack's high end,
     * cached for an unattached thread, and where the scan starts (set by gc/collect.c) */
    pthread_t stack_thread;
    char *stack_high;
    char *scan_from;
    struct tn_frozen *frozen; /* frozen segments (frozen.c) */
    size_t frozen_count;
    /* removals asked for while a list is walked wait for its end */
    unsigned root_walks; /* tn_roots_visit_embedder in progress (its callbacks may remove) */
    bool roots_removed;  /* some root area or scanner waits to be unlinked */
};

/* ---- functions ---- */

bool tn_roots_init(tenure_runtime *rt);
void tn_roots_destroy(tenure_runtime *rt);
/* Call fn on every root slot of the embedder (frames, areas, scanners). */
void tn_roots_visit_stack(tenure_runtime *rt, tn_slot_fn fn, void *ctx);
/* Call fn(object, word) for every object that a word of the calling thread's stack or
 * registers points into (GCConservativeStack): of a region of the GC in progress that
 * condemned generation `condemned` (a generation of the regions marked condemned: a quick
 * filter by the unit's generation first), or every object (TN_SCAN_ALL). */
typedef void (*tn_conservative_fn)(void *obj, void *word, void *ctx);
#define TN_SCAN_ALL (-1)
void tn_roots_scan_conservative(tenure_runtime *rt, int condemned, tn_conservative_fn fn, void *ctx);
/* A GC is entered on the calling thread with its registers saved at `from` (gc/collect.c):
 * its conservative scan starts there, and the collector's own deeper frames are not scanned.
 * Returns the previous start, put back when the GC returns (NULL: from where it is called). */
char *tn_roots_set_scan_from(tenure_runtime *rt, char *from);
/* Handles allocated (the GC skips the handle passes when there are none). */
size_t tn_handle_count(const tenure_runtime *rt);
/* The live object of this instance containing p (interior pointers allowed), or NULL. */
char *tn_roots_object_containing(tenure_runtime *rt, const void *p);
/* Frames, root areas and root scanners only (no frozen segments) */
void tn_roots_visit_embedder(tenure_runtime *rt, tn_slot_fn fn, void *ctx);
/* The same in two parts: one thread's shadow frames / root areas and scanners. */
void tn_roots_visit_frames(tenure_runtime *rt, tn_mutator *m, tn_slot_fn fn, void *ctx);
void tn_roots_visit_areas_and_scanners(tenure_runtime *rt, tn_slot_fn fn, void *ctx);
/* tn_roots_scan_conservative, calling thread(m, ctx) before the words of each thread (m NULL:
 * the calling thread, not attached). */
void tn_roots_scan_conservative_threads(tenure_runtime *rt, int condemned, tn_conservative_fn fn,
                                        void (*thread)(tn_mutator *m, void *ctx), void *ctx);
/* Frozen segments (roots/frozen.c). The segments (*count of them), for the subsystems that walk
 * or name them. */
const tn_frozen *tn_frozen_segments(const tenure_runtime *rt, size_t *count);
bool tn_frozen_is_object(const tenure_runtime *rt, const void *p);
/* tenure_is_object for callers that hold rt->threads.lock (or run with the world stopped): a
 * heap object or a frozen one. */
bool tn_is_object(tenure_runtime *rt, const void *obj);
void tn_frozen_visit_slots(tenure_runtime *rt, tn_slot_fn fn, void *ctx);
void tn_frozen_visit_objects(tenure_runtime *rt, void (*fn)(tenure_runtime *rt, char *obj, void *ctx), void *ctx);
/* Every object of rt (tenure_heap_walk, the heap dump): those of the frozen segments (as
 * generation 2), then the heap's (tn_heap_visit_objects, same rules); true if fn stopped it. */
bool tn_visit_all_objects(tenure_runtime *rt, tn_object_fn fn, void *ctx);
void tn_frozen_destroy(tenure_runtime *rt);
/* Work out what each handle behaves as in this GC (variable, refcounted, ...). */
void tn_handles_prepare(tenure_runtime *rt);
/* Call fn(handle slot) for every live handle of one of the kinds (bits of effective kinds). */
void tn_roots_visit_handle_slots(tenure_runtime *rt, uint32_t kind_mask, void (*fn)(tn_handle_slot *h, void *ctx),
                                 void *ctx);
/* Call fn on the secondary slot of every dependent handle that has one. */
void tn_roots_visit_secondaries(tenure_runtime *rt, tn_slot_fn fn, void *ctx);
void tn_handles_destroy_slab_sets(tenure_runtime *rt);
/* Consistency checks: one handle slab (magic, owner, every slot); every slab of rt. */
void tn_handle_slab_check(const tenure_runtime *rt, const tn_handle_slab *s);
void tn_handle_slabs_check(const tenure_runtime *rt);
/* Call fn on the object slot of every handle of one of the kinds in kind_mask (bit = kind). */
void tn_roots_visit_handles(tenure_runtime *rt, uint32_t kind_mask, tn_slot_fn fn, void *ctx);

#endif
