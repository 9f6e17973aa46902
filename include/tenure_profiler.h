/*
 * tenure_profiler.h - the profiler API: callbacks that follow every object through every
 * collection (docs/contract/profiler.md is the contract), and queries about the heap.
 *
 * An object's id is its address. A compacting GC moves runs of neighbouring survivors as
 * blocks and reports one record per block: moved_references(old_starts, new_starts, lengths)
 * with newID = new_starts[i] + (id - old_starts[i]) for old_starts[i] <= id < old_starts[i] +
 * lengths[i]. A sweeping GC reports surviving_references(starts, lengths). In a collected
 * generation, an object in no range is dead; objects of generations that were not collected
 * survive and do not move. A generation gets either moved or surviving records in one GC.
 * Records may arrive in several calls per GC (the buffer is bounded): accumulate them.
 *
 * Where callbacks run, and which locks are held (the library's own locks: the instance lock,
 * rt's recursive mutex that serialises every change of the instance; nothing else is ever held
 * across a callback):
 *  - gc_started, moved/surviving_references, root_references(2), dependent_handle_references,
 *    finalizeable_object_queued, gc_finished: on the thread that runs the GC, with the
 *    instance lock held and every other attached thread stopped at a safepoint.
 *  - object_allocated, handle_created(2), handle_destroyed: on the allocating / handle-changing
 *    thread, with the instance lock held (other threads run on, and wait at their next call
 *    that needs the lock).
 *  - object_allocated_sampled: on the allocating thread, with NO lock held, after the
 *    allocation is complete (the object is initialised, zeroed, and reachable only from the
 *    allocating thread, which keeps it alive for the call). The thread counts as running: a
 *    GC on another thread waits for the callback to return, unless the callback itself calls
 *    into tenure (a query) and must wait there: then a GC may run, and the object may move
 *    (reported by moved_references like any other) or, once the callback has returned and the
 *    program dropped it, die.
 *  - shutdown: on the thread in tenure_destroy, without the instance lock (no other thread is
 *    attached any more).
 * Deadlock rule: a profiler must never call into tenure (any function: every call may wait for
 * the instance lock or for a collection) while it holds a lock that its own callbacks take.
 * Callbacks run with the instance locked, or hold up every collection, possibly on another
 * thread: thread A holding the profiler's lock P calls a query and waits for the instance lock
 * (or for a GC to finish), while thread B, inside a callback with the instance locked (or
 * running, so that the GC waits for it), waits for P. Take P only inside callbacks, or release
 * it before calling tenure; callbacks must not wait for a thread that uses the instance.
 * What callbacks may call: queries (generation bounds, object generation/type/size) and
 * tenure_profiler_detach (their own profiler too: it gets no further call and is freed when
 * the callback loop ends); they must not allocate, collect, change or destroy the instance
 * (refused with TENURE_STATE: see "Callbacks" in tenure.h), or block on a mutator thread.
 * shutdown may also walk the heap; it may not destroy the instance (it is being destroyed).
 *
 * Compatibility: the callbacks struct only grows at its end. tenure_profiler_attach copies
 * the first TENURE_PROFILER_CALLBACKS_V1_SIZE bytes (the struct as it was before version 2:
 * a program compiled against the old header keeps working unchanged); tenure_profiler_attach2
 * takes the size the caller was compiled with (sizeof its struct) and copies that much, the
 * fields past it counting as NULL / 0.
 */
#ifndef TENURE_PROFILER_H
#define TENURE_PROFILER_H

#include "tenure.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What a profiler wants (a mask). Object allocation callbacks make every allocation take
 * the slow path: they are costly. Sampled allocations do not: the inline fast path runs on
 * until the thread's sampling countdown crosses zero (its allocation limit is lowered to that
 * point, as .NET does with its allocation context limit for AllocationTick). */
enum {
    TENURE_PROFILE_GC = 1u << 0,
    TENURE_PROFILE_ALLOCATIONS = 1u << 1,
    TENURE_PROFILE_HANDLES = 1u << 2,
    TENURE_PROFILE_ALLOCATIONS_SAMPLED = 1u << 3 /* object_allocated_sampled, every
                                                    sampling_interval bytes per thread */
};
/* The sampling interval when sampling_interval is 0: 100 KiB, as AllocationTick. */
#define TENURE_PROFILER_DEFAULT_SAMPLING_INTERVAL ((size_t)100 * 1024)

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
    TENURE_ROOT_FLAG_REFCOUNTED = 1u << 3 /* a refcounted handle's root (with WEAK while its
                                             count is zero) */
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

    /* ---- version 2 (tenure_profiler_attach2): everything below is optional ---- */

    /* With TENURE_PROFILE_HANDLES, instead of handle_created when set: the handle's kind, its
     * object, and for a dependent handle (kind TENURE_HANDLE_DEPENDENT) its secondary (NULL
     * for the other kinds). */
    void (*handle_created2)(void *context, tenure_handle *handle, tenure_handle_kind kind, void *initial_object,
                            void *secondary);
    /* With TENURE_PROFILE_GC, instead of root_references when set: the same records and, for
     * each, the thread its root belongs to: thread_ids[i] is the OS thread id (gettid(), as in
     * the events' ThreadID) of the attached thread whose shadow frames or conservatively
     * scanned stack / registers hold the root (stack kind), 0 for roots of no thread (root
     * areas, root scanners, handles, finalizer queue, frozen segments). */
    void (*root_references2)(void *context, size_t count, void *const *object_ids, const tenure_root_kind *kinds,
                             const uint32_t *flags, const uintptr_t *root_ids, const uint64_t *thread_ids);
    /* With TENURE_PROFILE_GC, after the roots of every GC: the dependent handles whose primary
     * is alive (ConditionalWeakTable's edges, as .NET's
     * ConditionalWeakTableElementReferences): primaries[i] keeps secondaries[i] alive (NULL
     * when the handle has none), root_ids[i] the handle. Final addresses. */
    void (*dependent_handle_references)(void *context, size_t count, void *const *primaries, void *const *secondaries,
                                        const uintptr_t *root_ids);
    /* With TENURE_PROFILE_ALLOCATIONS_SAMPLED: the allocation that made the calling thread's
     * bytes since its previous sample exceed the interval (small, large and pinned objects
     * alike). bytes_since_last_sample counts every byte this thread allocated since its
     * previous sample, this object included: weigh each sample by it to estimate totals (the
     * sum over samples is exactly what the thread allocated, up to the bytes after its last
     * sample). Runs without any lock (see above). */
    void (*object_allocated_sampled)(void *context, void *object_id, const tenure_type *type, size_t size,
                                     uint64_t bytes_since_last_sample);
    /* Bytes between samples (per thread); 0: TENURE_PROFILER_DEFAULT_SAMPLING_INTERVAL. With
     * several sampling profilers the smallest interval is used and each gets every sample. */
    size_t sampling_interval;
} tenure_profiler_callbacks;

/* The size of the version 1 struct (up to shutdown): what tenure_profiler_attach copies. */
#define TENURE_PROFILER_CALLBACKS_V1_SIZE (offsetof(tenure_profiler_callbacks, shutdown) + sizeof(void (*)(void *)))

typedef struct tenure_profiler tenure_profiler;

/* Attach a profiler (callbacks are copied; any may be NULL). Several may attach.
 * tenure_profiler_attach reads only the version 1 fields (TENURE_PROFILER_CALLBACKS_V1_SIZE
 * bytes); tenure_profiler_attach2 reads callbacks_size bytes (pass sizeof *callbacks; at least
 * the version 1 size, at most what this library knows plus any trailing zero bytes). The mask
 * may only ask for what the struct can carry: TENURE_PROFILE_ALLOCATIONS_SAMPLED needs
 * attach2. Refused (NULL, TENURE_INVALID_ARGUMENT) otherwise. */
TENURE_API tenure_profiler *tenure_profiler_attach(tenure_runtime *rt, const tenure_profiler_callbacks *callbacks,
                                                   unsigned mask, void *context);
TENURE_API tenure_profiler *tenure_profiler_attach2(tenure_runtime *rt, const tenure_profiler_callbacks *callbacks,
                                                    size_t callbacks_size, unsigned mask, void *context);
TENURE_API tenure_result tenure_profiler_detach(tenure_runtime *rt, tenure_profiler *profiler);

/* A range of the heap and its generation (0, 1, 2, 3 = LOH, 4 = POH). */
typedef struct tenure_generation_range {
    uintptr_t start;
    size_t used_length;     /* objects (and free objects) fill [start, start + used_length)
                               exactly, back to back: a region holding a thread's allocation
                               context ends at that thread's allocation pointer (the context's
                               unused tail is no object) */
    size_t reserved_length; /* the region's size */
    int generation;
} tenure_generation_range;

/* The heap's ranges, by address. Writes at most `max` and returns how many there are.
 * Outside a GC, when another thread holds an allocation context, the query stops the world
 * for a moment to read where that thread's objects end (the range is exact at that moment;
 * the thread may allocate past it as soon as the query returns). */
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
