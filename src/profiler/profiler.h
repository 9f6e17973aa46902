/*
 * profiler.h - the state profiler/ owns (rt->prof): the attached profilers and what they ask
 * for (prof_mask: TN_PROF_ON; every allocation, sampling), their callback loops in progress,
 * and the heap dump the running GC must write. Included by runtime.h, which embeds it in
 * struct tenure_runtime. Read elsewhere: prof_mask (TN_PROF_ON), alloc_slow_always and
 * sample_interval by the allocator (heap/alloc.c), heap_dump_pending and heap_dumps by the
 * GC's start and end (gc/collect.c, gc/report.c).
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

#endif
