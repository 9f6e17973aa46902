/*
 * roots.h - the state roots/ owns (rt->roots): root areas and scanners, handles (their slabs,
 * free list and count; the refcount callback of refcounted handles), and the walks in
 * progress over the embedder's roots. Included by runtime.h, which embeds it in struct
 * tenure_runtime; others call roots/'s functions (runtime.h "roots/"); handle_count is read
 * by the GC (to skip handle passes) and the stats. The frozen segments (roots/frozen.c) are
 * still rt->frozen: trace/ reads them.
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
    /* removals asked for while a list is walked wait for its end */
    unsigned root_walks; /* tn_roots_visit_embedder in progress (its callbacks may remove) */
    bool roots_removed;  /* some root area or scanner waits to be unlinked */
};

#endif
