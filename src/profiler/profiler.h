/*
 * profiler.h - the state profiler/ owns (rt->prof): the attached profilers and what they ask
 * for (prof_mask: TN_PROF_ON; every allocation, sampling), their callback loops in progress,
 * and the heap dump the running GC must write. Included by runtime.h, which embeds it in
 * struct tenure_runtime. Others read it only through the functions and macros below
 * (scripts/depgraph.py): TN_PROF_ON, tn_prof_wants_every_allocation and
 * tn_prof_sample_interval (the allocator's slow path, heap/alloc.c), tn_heap_dump_sequence
 * (GCStart). After the state: profiler/'s functions (the callbacks the GC and the allocator
 * call, the heap dump's).
 */
#ifndef TENURE_PROFILER_PROFILER_H
#define TENURE_PROFILER_PROFILER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct tenure_profiler;

struct tn_prof_state {
    struct tenure_profiler *profilers;
    unsigned prof_mask;
    bool alloc_slow_always;          /* a profiler wants every allocation: no inline fast path */
    size_t sample_interval;          /* a profiler samples allocations every this many bytes (0: none) */
    unsigned prof_sample_dispatches; /* sampled-allocation dispatches in progress (atomic: they
                                        run without the lock) */
    /* removals asked for while the list is walked wait for its end */
    unsigned prof_dispatches; /* profiler callback loops in progress */
    bool profilers_detached;  /* some profiler waits to be freed */
    /* heap dumps (references.c): the GC running now writes the heap's graph */
    bool heap_dump_pending;
    uint64_t heap_dumps; /* dumps asked for so far (GCStart's ClientSequenceNumber) */
};

/* ---- functions ---- */

/* The GC that starts condemns generation `condemned` (a background GC's final pause: gen0,
 * its older generations are swept later, unreported) for `reason` (TN_REASON_*). */
void tn_prof_gc_started(tenure_runtime *rt, int condemned, uint32_t reason);
void tn_prof_moved(tenure_runtime *rt, size_t n, const uintptr_t *old, const uintptr_t *new_starts, const size_t *len);
void tn_prof_surviving(tenure_runtime *rt, size_t n, const uintptr_t *starts, const size_t *len);
void tn_prof_root_references(tenure_runtime *rt);
/* Every root as root_references reports it (object at its final address, kind, flags, root
 * id, OS thread id of a stack root or 0): the one enumeration behind root_references and the
 * heap dump's root edges. */
typedef void (*tn_prof_root_fn)(void *obj, tenure_root_kind kind, uint32_t flags, uintptr_t root_id, uint64_t thread,
                                void *ctx);
void tn_prof_visit_roots(tenure_runtime *rt, tn_prof_root_fn fn, void *ctx);
void tn_prof_gc_finished(tenure_runtime *rt);
void tn_prof_allocated(tenure_runtime *rt, void *obj, const tn_type *t);
void tn_prof_handle_created(tenure_runtime *rt, tenure_handle *h, uint32_t kind, void *obj, void *secondary);
void tn_prof_handle_destroyed(tenure_runtime *rt, tenure_handle *h);
/* object_allocated_sampled, without rt->threads.lock, on m's thread; returns obj (moved if a GC ran
 * while a callback waited in a query: obj is rooted by m for the call). */
void *tn_prof_sampled(tenure_runtime *rt, tn_mutator *m, void *obj, const tn_type *t, uint64_t since);
void tn_prof_finalizeable_queued(tenure_runtime *rt, void *obj);
void tn_prof_shutdown(tenure_runtime *rt);
void tn_prof_load_from_env(tenure_runtime *rt);
/* references.c: the heap dump's events, at the end of a GC asked for by tenure_heap_dump */
void tn_heap_dump_emit(tenure_runtime *rt);
/* Bytes of pause scratch the GC about to start needs for its heap dump / the profilers'
 * root batch (0 if none is asked for). */
size_t tn_heap_dump_scratch_bytes(const tenure_runtime *rt);
size_t tn_prof_roots_scratch_bytes(const tenure_runtime *rt);
/* The number of the heap dump the GC about to start writes (GCStart's ClientSequenceNumber),
 * 0 if none. */
uint64_t tn_heap_dump_sequence(const tenure_runtime *rt);
/* Macros (struct tenure_runtime is not complete here), read on the allocation slow path: some
 * profiler wants the events of bit / every allocation (no inline fast path) / a sample every
 * this many bytes allocated (0: none). */
#define TN_PROF_ON(rt, bit) ((rt)->prof.prof_mask & (bit))
#define tn_prof_wants_every_allocation(rt) ((rt)->prof.alloc_slow_always)
#define tn_prof_sample_interval(rt) ((rt)->prof.sample_interval)

#endif
