/*
 * heapprof.h - tenure-heapprof, the sample heap profiler of tenure: object lifetimes by type
 * and allocation site, built on the profiler API (tenure_profiler.h) and the object tracker
 * (tenure_objtrack.h).
 *
 * Two ways to use it:
 *
 *   - by environment, without touching the program: run it with
 *       TENURE_PROFILER=/path/to/libtenure-heapprof.so
 *     and every tenure_create attaches the profiler (tenure_profiler_main below). The program
 *     must export its tenure_* functions to the library (link libtenure shared, or link
 *     libtenure static with -rdynamic / ENABLE_EXPORTS).
 *   - by linking libtenure-heapprof.so and calling tenure_heapprof_attach(rt, out_json).
 *
 * Report: when the instance is destroyed (or at exit for an instance that never is), a table
 * sorted by bytes allocated goes to stderr, or to the file TENURE_HEAPPROF_OUT (".txt" is
 * appended unless the name ends with it; an existing file that is not a regular one, such as
 * /dev/null, is written as named); JSON goes to TENURE_HEAPPROF_JSON if set, else to
 * out_json (if not NULL). A second instance of the same process that reports writes
 * "<name>.<instance id>" instead of overwriting the first report.
 *
 * Allocation sites: the object_allocated callback cannot see its caller (and a return-address
 * chain through the inline allocation path is not reliable), so the site of an object is the
 * id the embedder set with tenure_heapprof_set_site on the allocating thread at the moment of
 * the allocation: 0 when none was set.
 */
#ifndef TENURE_HEAPPROF_H
#define TENURE_HEAPPROF_H

#include <stdint.h>

#include "tenure_profiler.h"

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define TENURE_HEAPPROF_API __attribute__((visibility("default")))
#else
#define TENURE_HEAPPROF_API
#endif

/* Attach the heap profiler to rt (once: a second call for the same instance only sets
 * out_json). Returns 0, or -1 on failure (out of memory, attach refused). */
TENURE_HEAPPROF_API int tenure_heapprof_attach(tenure_runtime *rt, const char *out_json);

/* The allocation site of the calling thread's next allocations (thread-local; 0 = none). */
TENURE_HEAPPROF_API void tenure_heapprof_set_site(uint32_t site);
TENURE_HEAPPROF_API uint32_t tenure_heapprof_get_site(void);

/* Write the report of rt now (the table and, if a JSON path is known, the JSON), as at
 * destruction. Returns 0, or -1 if rt has no heap profiler. Must not be called from a
 * profiler callback. */
TENURE_HEAPPROF_API int tenure_heapprof_report(tenure_runtime *rt);

/* Retained sizes (what each object and each type keeps alive), from a heap dump: a full GC
 * (tenure_heap_dump) whose graph a listener session reads, then the dominator tree of that
 * graph from a virtual root over the strong roots (Lengauer-Tarjan). Writes, per type, the
 * objects, shallow bytes and retained bytes (each object dominated by some object of the type
 * counted once), and the top retainers: the table to text_path (NULL: stderr), JSON to
 * json_path (NULL: none). Works with or without tenure_heapprof_attach. Returns 0, or -1 (out
 * of memory, a file that cannot be written, the dump refused). Not from a callback. Also done
 * by tenure_heapprof_report when TENURE_HEAPPROF_RETAINED names a JSON file. */
TENURE_HEAPPROF_API int tenure_heapprof_retained(tenure_runtime *rt, const char *json_path, const char *text_path);

/* The entry point TENURE_PROFILER loading calls: tenure_heapprof_attach(rt, NULL). */
TENURE_HEAPPROF_API int tenure_profiler_main(tenure_runtime *rt);

#ifdef __cplusplus
}
#endif

/* For programs that do not link the profiler but may run with TENURE_PROFILER set: set the
 * site if the profiler is loaded, do nothing otherwise. The library makes its symbols global
 * when it is loaded, so the main program's handle finds them. Include <dlfcn.h> and link
 * ${CMAKE_DL_LIBS} to use it. */
#define TENURE_HEAPPROF_SET_SITE_IF_LOADED(site)                              \
    do {                                                                      \
        static void (*tenure_heapprof_set_site_fn_)(uint32_t);                \
        static int tenure_heapprof_looked_up_;                                \
        if (!tenure_heapprof_looked_up_) {                                    \
            void *tenure_heapprof_self_ = dlopen(NULL, RTLD_LAZY);            \
            if (tenure_heapprof_self_)                                        \
                *(void **)(void *)&tenure_heapprof_set_site_fn_ =             \
                    dlsym(tenure_heapprof_self_, "tenure_heapprof_set_site"); \
            tenure_heapprof_looked_up_ = 1;                                   \
        }                                                                     \
        if (tenure_heapprof_set_site_fn_)                                     \
            tenure_heapprof_set_site_fn_(site);                               \
    } while (0)

#endif
