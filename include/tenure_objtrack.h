/*
 * tenure_objtrack.h - the profiler-side object tracker (its own small library,
 * libtenure_objtrack): a table from object id (address) to a fixed-size payload, kept right
 * across collections from the profiler callbacks of tenure_profiler.h.
 *
 * Feed it: tenure_objtrack_gc_started (which generations are collected, and the heap's
 * generation bounds at that moment), the moved / surviving ranges as they arrive, then
 * tenure_objtrack_gc_finished, which applies them: entries of objects in collected
 * generations that lie in a range are re-keyed to their new address; those in no range are
 * dead: on_death is called for each, then the entry is dropped; entries in generations that
 * were not collected stay. Cost per GC: O(n log r) or better for n entries and r ranges.
 *
 * Not thread-safe: call it from the profiler callbacks (which run one at a time) or hold a
 * lock of your own.
 */
#ifndef TENURE_OBJTRACK_H
#define TENURE_OBJTRACK_H

#include "tenure_profiler.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tenure_objtrack tenure_objtrack;

/* Called for each tracked object found dead: its last id, its payload (valid during the
 * call), and the generation it was in (0..4). */
typedef void (*tenure_objtrack_death_fn)(void *context, uintptr_t id, void *payload, int generation);

TENURE_API tenure_objtrack *tenure_objtrack_create(size_t payload_size, tenure_objtrack_death_fn on_death,
                                                   void *context);
TENURE_API void tenure_objtrack_destroy(tenure_objtrack *t);

/* Start tracking id; returns its zeroed payload (NULL if out of memory or already tracked). */
TENURE_API void *tenure_objtrack_add(tenure_objtrack *t, uintptr_t id);
/* The payload of id, or NULL. */
TENURE_API void *tenure_objtrack_find(tenure_objtrack *t, uintptr_t id);
/* Stop tracking id (no death callback). */
TENURE_API int tenure_objtrack_remove(tenure_objtrack *t, uintptr_t id);
TENURE_API size_t tenure_objtrack_count(const tenure_objtrack *t);
/* Call fn for every tracked object (by id order). */
TENURE_API void tenure_objtrack_foreach(tenure_objtrack *t, void (*fn)(void *context, uintptr_t id, void *payload),
                                        void *context);

/* One GC: started, ranges (any number of calls), finished. */
TENURE_API void tenure_objtrack_gc_started(tenure_objtrack *t, const int collected[5],
                                           const tenure_generation_range *bounds, size_t bound_count);
TENURE_API void tenure_objtrack_moved(tenure_objtrack *t, size_t count, const uintptr_t *old_starts,
                                      const uintptr_t *new_starts, const size_t *lengths);
TENURE_API void tenure_objtrack_surviving(tenure_objtrack *t, size_t count, const uintptr_t *starts,
                                          const size_t *lengths);
/* Apply the GC. Returns 0, or -1 if it ran out of memory (the table is then unchanged). */
TENURE_API int tenure_objtrack_gc_finished(tenure_objtrack *t);

#ifdef __cplusplus
}
#endif
#endif
