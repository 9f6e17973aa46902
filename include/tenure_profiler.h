/*
 * tenure_profiler.h - the profiler API: callbacks that follow every object through every
 * collection (../shared/spec/profiler.md is the contract), and queries about the heap.
 *
 * An object's id is its address. A compacting GC moves runs of neighbouring survivors as
 * blocks and reports one record per block: moved_references(old_starts, new_starts, lengths)
 * with newID = new_starts[i] + (id - old_starts[i]) for old_starts[i] <= id < old_starts[i] +
 * lengths[i]. A sweeping GC reports surviving_references(starts, lengths). In a collected
 * generation, an object in no range is dead; objects of generations that were not collected
 * survive and do not move. A generation gets either moved or surviving records in one GC.
 * Records may arrive in several calls per GC (the buffer is bounded): accumulate them.
 *
 * Where callbacks run: on the thread that runs the GC, with every mutator stopped (GC
 * callbacks), or on the allocating / handle-creating thread (object_allocated, handle_*), with
 * the instance locked. They may call queries (generation bounds, object generation/type/size)
 * and tenure_profiler_detach (their own profiler too: it gets no further call and is freed when
 * the callback loop ends); they must not allocate, collect, change or destroy the instance
 * (refused with TENURE_STATE: see "Callbacks" in tenure.h), or block on a mutator thread.
 * shutdown may also walk the heap; it may not destroy the instance (it is being destroyed).
 */
#ifndef TENURE_PROFILER_H
#define TENURE_PROFILER_H

#include "tenure.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What a profiler wants (a mask). Object allocation callbacks make every allocation take
 * the slow path: they are costly. */
enum {
    TENURE_PROFILE_GC = 1u << 0,
    TENURE_PROFILE_ALLOCATIONS = 1u << 1,
    TENURE_PROFILE_HANDLES = 1u << 2
};

/* gc_started: which generations are collected (index 0, 1, 2, 3 = LOH, 4 = POH) and why. */
typedef enum tenure_gc_reason_kind { TENURE_GC_REASON_OTHER = 0, TENURE_GC_REASON_INDUCED = 1 } tenure_gc_reason_kind;

/* root_references: the kind of each root and its flags */
typedef enum tenure_root_kind {
    TENURE_ROOT_KIND_STACK = 0,     /* shadow frames, root areas and scanners, the C stack */
    TENURE_ROOT_KIND_FINALIZER = 1, /* objects waiting for their finalizer */
    TENURE_ROOT_KIND_HANDLE = 2,    /* GC handles */
    TENURE_ROOT_KIND_OTHER = 3      /* frozen segments */
} tenure_root_kind;
enum {
    TENURE_ROOT_FLAG_PINNING = 1u << 0,
    TENURE_ROOT_FLAG_WEAK = 1u << 1,
    TENURE_ROOT_FLAG_INTERIOR = 1u << 2,
    TENURE_ROOT_FLAG_REFCOUNTED = 1u << 3
};

typedef struct tenure_profiler_callbacks {
    void (*gc_started)(void *context, const int collected[5], tenure_gc_reason_kind reason);
    void (*moved_references)(void *context, size_t count, const uintptr_t *old_starts, const uintptr_t *new_starts,
                             const size_t *lengths);
    void (*surviving_references)(void *context, size_t count, const uintptr_t *starts, const size_t *lengths);
    /* object_ids[i] at its final address; root_ids[i] the handle or slot address (0 for a
     * conservative stack word) */
    void (*root_references)(void *context, size_t count, void *const *object_ids, const tenure_root_kind *kinds,
                            const uint32_t *flags, const uintptr_t *root_ids);
    void (*finalizeable_object_queued)(void *context, uint32_t flags, void *object_id);
    void (*gc_finished)(void *context);
    void (*object_allocated)(void *context, void *object_id, const tenure_type *type);
    void (*handle_created)(void *context, tenure_handle *handle, void *initial_object);
    void (*handle_destroyed)(void *context, tenure_handle *handle);
    /* the instance is being destroyed: the last call a profiler gets */
    void (*shutdown)(void *context);
} tenure_profiler_callbacks;

typedef struct tenure_profiler tenure_profiler;

/* Attach a profiler (callbacks are copied; any may be NULL). Several may attach. */
TENURE_API tenure_profiler *tenure_profiler_attach(tenure_runtime *rt, const tenure_profiler_callbacks *callbacks,
                                                   unsigned mask, void *context);
TENURE_API tenure_result tenure_profiler_detach(tenure_runtime *rt, tenure_profiler *profiler);

/* A range of the heap and its generation (0, 1, 2, 3 = LOH, 4 = POH). */
typedef struct tenure_generation_range {
    uintptr_t start;
    size_t used_length;     /* objects occupy [start, start + used_length) */
    size_t reserved_length; /* the region's size */
    int generation;
} tenure_generation_range;

/* The heap's ranges, by address. Writes at most `max` and returns how many there are. */
TENURE_API size_t tenure_generation_bounds(tenure_runtime *rt, tenure_generation_range *out, size_t max);

/* The references an object holds (.NET's ICorProfilerInfo::GetObjectReferences, or
 * EnumerateObjectReferences): fn is called once for every non-NULL reference slot of obj, in
 * the order the collector visits them (fields in ref_offsets order, array elements by index, a
 * traced type's slots in its trace callback's order), with the referent and where it is held.
 * fn returning nonzero stops the enumeration (the result is still TENURE_OK). A referent may be
 * a frozen object (outside the heap). Returns TENURE_INVALID_OBJECT if obj is not an object of
 * rt, TENURE_STATE from a callback that may not read objects (below).
 *
 * Where: outside a collection (the instance is locked for the call: nothing moves, but a field
 * another thread stores to at that moment may be seen before or after the store), from a heap
 * walk's visitor, and from every profiler callback: in gc_started, moved_references,
 * surviving_references and finalizeable_object_queued objects are at their addresses before
 * the GC (nothing has moved yet), in root_references and gc_finished at their final ones; also
 * from the GC callback, event listeners, the error hook and finalizers. Refused from root
 * scanners, type trace callbacks and the refcount callback (they run while the heap may be
 * half moved). fn runs inside the call: it may do what its caller may do. */
typedef struct tenure_object_reference {
    void *target;   /* the object referred to (never NULL) */
    size_t offset;  /* bytes from obj's start to the slot; SIZE_MAX if a trace callback visited
                       a slot outside the object */
    size_t element; /* arrays: the element's index; TENURE_NO_ELEMENT for other objects */
} tenure_object_reference;
#define TENURE_NO_ELEMENT SIZE_MAX
typedef int (*tenure_object_reference_fn)(void *obj, const tenure_object_reference *ref, void *context);
TENURE_API tenure_result tenure_object_references(tenure_runtime *rt, void *obj, tenure_object_reference_fn fn,
                                                  void *context);

/* Profilers loaded by environment: TENURE_PROFILER=<path of a shared library> makes every
 * tenure_create dlopen it (RTLD_LOCAL, never closed) and call its
 * `int tenure_profiler_main(tenure_runtime *rt)`. The library calls the program's tenure
 * functions: the program must export them (link libtenure.so, or link statically with
 * -rdynamic); otherwise loading fails with "undefined symbol" and the program runs
 * unprofiled. TENURE_PROFILER is never honoured in a secure-execution process (setuid,
 * setgid or file capabilities): the variable is not read there, nothing is loaded, and that
 * it was ignored is said on stderr. */
typedef int (*tenure_profiler_main_fn)(tenure_runtime *rt);

#ifdef __cplusplus
}
#endif
#endif
