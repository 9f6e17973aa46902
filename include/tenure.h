/*
 * tenure.h - the embedder's API of the tenure garbage collector.
 *
 * If it is not in this file (or in tenure_events.h / tenure_profiler.h), it is not a
 * published API. Every identifier here begins with `tenure_` or `TENURE_`; identifiers that
 * begin with `tenure__` are internal, visible only because the allocation fast path and the
 * write barrier are inline.
 *
 * Model (see docs/design/): one tenure_runtime is one independent collector instance with
 * its own heap, types, roots, handles and options. Objects are allocated from registered
 * types, are precise (the type says where the references are) and may move when a
 * collection compacts; every reference store into a heap object goes through
 * tenure_write_ref(). An object's address is its identity until the next collection.
 *
 * Threads: the thread that creates an instance is attached to it; any other thread that
 * allocates, uses shadow frames or touches objects calls tenure_thread_attach first and
 * tenure_thread_detach when done (see "Threads" below). Every function may be called from any
 * attached thread; stopping the world is cooperative (safepoints, blocking sections).
 */
#ifndef TENURE_H
#define TENURE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define TENURE_API __attribute__((visibility("default")))
#else
#define TENURE_API
#endif

#if defined(__GNUC__)
#define TENURE__LIKELY(x) __builtin_expect(!!(x), 1)
#define TENURE__UNLIKELY(x) __builtin_expect(!!(x), 0)
#else
#define TENURE__LIKELY(x) (x)
#define TENURE__UNLIKELY(x) (x)
#endif

/* ------------------------------------------------------------------------------------------
 * Result codes: one table. tenure_strerror() gives the text.
 * ---------------------------------------------------------------------------------------- */
#define TENURE_RESULTS(X)                                                                                      \
    X(OK, 0, "success")                                                                                        \
    X(NOMEM, 1, "out of memory: the heap limit was reached or the OS refused memory")                          \
    X(INVALID_ARGUMENT, 2, "invalid argument")                                                                 \
    X(INVALID_TYPE, 3, "not a type registered with this instance")                                             \
    X(INVALID_OBJECT, 4, "not an object of this instance")                                                     \
    X(INVALID_HANDLE, 5, "not a live handle of this instance (freed, foreign or corrupt)")                     \
    X(SIZE, 6, "impossible size or length")                                                                    \
    X(STATE, 7,                                                                                                \
      "not allowed now: from a thread not attached (tenure_thread_attach), inside a collection or a blocking " \
      "section, from a callback that may not call it, frames out of order, or threads still attached "         \
      "(tenure_last_error_message says which)")                                                                \
    X(UNSUPPORTED, 8, "not supported by this version")                                                         \
    X(OS, 9, "an operating system call failed")                                                                \
    X(HEAP_CORRUPT, 10, "the heap verifier found an inconsistency")

typedef enum tenure_result {
#define TENURE__RESULT_ENUM(name, value, text) TENURE_##name = value,
    TENURE_RESULTS(TENURE__RESULT_ENUM)
#undef TENURE__RESULT_ENUM
} tenure_result;

/* The text of a result code ("unknown result" for values outside the table). */
TENURE_API const char *tenure_strerror(tenure_result result);

/* ------------------------------------------------------------------------------------------
 * Options: one table. Columns: name (also the environment variable TENURE_<name>), C type,
 * default, description. tenure_config has one field per row, named as the option.
 * Sizes accept suffixes in the environment, powers of 1024 of any case, after optional spaces:
 * k/kb/kib, m/mb/mib, g/gb/gib, t/tb/tib (e.g. TENURE_GCgen0size=8m, "8 MiB"); spaces around a
 * value are trimmed; anything else is refused. Size options whose default is 0 are chosen by
 * the collector.
 * ---------------------------------------------------------------------------------------- */
#define TENURE_OPTIONS(X)                                                                                             \
    X(GCgen0size, uint64_t, 0,                                                                                        \
      "least gen0 allocation budget in bytes, per heap under server GC (0: derived from the L3 cache size, and less " \
      "while the heap is small)")                                                                                     \
    X(GCgen1size, uint64_t, 0,                                                                                        \
      "gen1 budget in bytes, per heap under server GC (0: half of what lives in the heap's older generations, "       \
      "within 2 x GCgen0size..128 MiB)")                                                                              \
    X(GCRegionSize, uint64_t, 4u << 20, "size of one heap region in bytes (a power of two, >= 256 KiB)")              \
    X(GCRegionRange, uint64_t, (uint64_t)32 << 30, "virtual address space reserved for the heap")                     \
    X(GCHeapHardLimit, uint64_t, 0, "most bytes the heap may commit (0: no limit but the range)")                     \
    X(GCLOHThreshold, uint64_t, 85000, "objects of at least this many bytes go to the large object heap")             \
    X(GCPauseGoalMs, uint32_t, 50,                                                                                    \
      "pause goal of gen0 and gen1 GCs in ms: their budgets are held to what such a GC was measured to "              \
      "collect in that time (0: no goal). GCgen0size stays the least gen0 budget and a GCgen1size that is set "       \
      "is kept; gen2 GCs are not held to it (gcConcurrent=1 keeps their pauses short)")                               \
    X(GCgen0MaxBudget, uint64_t, 0,                                                                                   \
      "upper bound of the gen0 budget, per heap under server GC (0: half of what lives in the older generations, "    \
      "within 256 KiB..64 MiB, and at most 6 x GCgen0size when that is set)")                                         \
    X(GCConservativeStack, uint32_t, 1,                                                                               \
      "1: scan the attached threads' stacks and registers conservatively (found objects are pinned)")                 \
    X(GCCompactMode, uint32_t, 0, "0: the collector chooses compact or sweep; 1: always compact; 2: always sweep")    \
    X(GCLOHCompact, uint32_t, 0, "1: compact the large object heap in every full GC (else only on request)")          \
    X(GCMarkStackSize, uint64_t, 1u << 16, "initial mark stack capacity in entries (grows after an overflow)")        \
    X(GCRetainRegions, uint32_t, 2, "GCs a free region stays committed before it is decommitted")                     \
    X(HeapVerify, uint32_t, 0,                                                                                        \
      "1: verify the whole heap before and after every GC (a problem goes to the error hook, or without one to "      \
      "stderr, and then aborts)")                                                                                     \
    X(GCStress, uint32_t, 0, "N > 0: a GC every N allocations")                                                       \
    X(GCStressGeneration, int32_t, -1, "generation of the GCs that GCStress forces (-1: the collector chooses)")      \
    X(GCFinalizeMode, uint32_t, 0,                                                                                    \
      "0: finalizers run on the instance's finalizer thread; 1: only in tenure_run_pending_finalizers; 2: on the "    \
      "allocating thread, at allocation slow paths and after tenure_collect")                                         \
    X(GCFinalizeOnShutdown, uint32_t, 1, "1: tenure_destroy runs pending finalizers; 0: it discards them")            \
    X(GCFaultCommit, uint64_t, 0,                                                                                     \
      "fault injection: N > 0 makes the Nth request to commit memory (and every Nth after it) fail")                  \
    X(gcServer, uint32_t, 0,                                                                                          \
      "1: server GC: GCHeapCount GC threads mark each collection in parallel, meeting at joins (GCJoin_V2)")          \
    X(GCHeapCount, uint32_t, 0,                                                                                       \
      "GC threads (heaps) with gcServer=1, 1..64 (0: the CPUs the process may run on, at most 64)")                   \
    X(GCNoAffinitize, uint32_t, 0,                                                                                    \
      "1: server GC's helper threads get no CPU affinity (0: each GC keeps them off the collecting thread's CPU, "    \
      "or binds them by GCHeapAffinitizeMask)")                                                                       \
    X(gcConcurrent, uint32_t, 0,                                                                                      \
      "1: background GC: the gen2 GCs the collector chooses mark and sweep on a thread of their own while the "       \
      "program runs, with two short pauses (not with GCCompactMode=1: gen2 GCs then block and compact)")              \
    X(GCHeapAffinitizeMask, uint64_t, 0,                                                                              \
      "CPUs (bit i: CPU i) server GC's helper threads are bound to, one each in order (0: not bound)")                \
    X(GCPoisonFreed, uint32_t, 0,                                                                                     \
      "debug: 1: after every GC, fill the space objects moved out of and dead objects' space with 0xcc and make "     \
      "regions left empty inaccessible (PROT_NONE), so that a stale pointer crashes at its first use; a SIGSEGV "     \
      "handler says so when the fault is in that space, then passes the fault on")                                    \
    X(GCStopWarnMs, uint32_t, 2000,                                                                                   \
      "a collection that has waited this many ms for the other attached threads to stop prints, once, which "         \
      "thread has not reached a safepoint and where it was attached, and keeps waiting (0: never)")

typedef struct tenure_config {
#define TENURE__OPTION_FIELD(name, ctype, def, desc) ctype name;
    TENURE_OPTIONS(TENURE__OPTION_FIELD)
#undef TENURE__OPTION_FIELD
} tenure_config;

/* Fill *config with the defaults of the options table. */
TENURE_API void tenure_config_init(tenure_config *config);
/* Override *config with every TENURE_<name> environment variable that is set, after
 * TENURE_DEBUG=1's settings (GCConservativeStack=0 GCStress=1 GCCompactMode=1 HeapVerify=1
 * GCPoisonFreed=1; TENURE_DEBUG must be 0 or 1). A value that
 * does not parse or does not fit the option's type is refused: the option keeps its value,
 * the others are still applied, the result is TENURE_INVALID_ARGUMENT and each refusal is
 * printed on stderr ("tenure: TENURE_GCgen0size=8x: not a valid uint64_t ...").
 *
 * The environment rule: the library reads TENURE_* variables (the options, TENURE_PROFILER,
 * TENURE_TRACE...) through secure_getenv and nothing else. In a secure-execution process
 * (setuid, setgid or file capabilities: AT_SECURE) none of them is read: the options keep the
 * values the program chose, no trace starts, and no profiler library is ever loaded (a
 * variable that is set there is reported on stderr as ignored). */
TENURE_API tenure_result tenure_config_from_env(tenure_config *config);
/* Check a configuration as tenure_create does, without creating anything: TENURE_OK, or
 * TENURE_INVALID_ARGUMENT with the reason, which names the option, its value and the rule
 * ("GCCompactMode=3: must be 0, 1 or 2"), written into why (why_len bytes, NUL-terminated,
 * truncated; why may be NULL). tenure_create refuses exactly the configurations this refuses.
 * Among the rules: GCRegionSize a power of two in 256 KiB..1 GiB; GCRegionRange at least 4
 * regions, at most 2^20 regions (GCRegionRange / GCRegionSize) and at most 64 TiB; GCgen0size,
 * GCgen1size and GCgen0MaxBudget at most GCRegionRange; GCHeapHardLimit 0 or at least 3 regions (3 x GCRegionSize: with
 * fewer, every allocation fails or collects; each thread that allocates holds a gen0 region
 * of its own, so give a limit room for those); GCCompactMode, GCFinalizeMode 0..2;
 * GCStressGeneration -1..2; GCLOHThreshold 1024..GCRegionSize; GCMarkStackSize 1..2^30;
 * GCHeapCount 0..64. */
TENURE_API tenure_result tenure_config_check(const tenure_config *config, char *why, size_t why_len);

/* One row of the options table, for tools and docs. */
typedef struct tenure_option_info {
    const char *name;
    const char *type;
    const char *default_text;
    const char *description;
} tenure_option_info;
/* The number of options; info about option i (NULL past the end). */
TENURE_API size_t tenure_option_count(void);
TENURE_API const tenure_option_info *tenure_option_get(size_t i);

/* ------------------------------------------------------------------------------------------
 * The instance.
 * ---------------------------------------------------------------------------------------- */
typedef struct tenure_runtime tenure_runtime;

/* Create an instance. config NULL: defaults plus TENURE_* environment options. A non-NULL
 * config is used as given (call tenure_config_from_env yourself to add the environment).
 * Returns NULL on failure and sets *result (if result is not NULL).
 *
 * The environment, one rule: the variables that are options, TENURE_<option> and TENURE_DEBUG
 * (which sets GCConservativeStack=0 GCStress=1 GCCompactMode=1 HeapVerify=1 GCPoisonFreed=1,
 * the settings that find a missing root, before the TENURE_<option> variables apply), decide
 * what the collector does, and so does a config: they configure tenure_create(NULL) and
 * tenure_config_from_env, never a config given here; the first tenure_create of a process names
 * on stderr each such variable it does not apply ("tenure: TENURE_GCStress=100 is not applied:
 * tenure_create was given a config ..."). The variables that watch the collector and change
 * nothing it decides, TENURE_TRACE (with TENURE_TRACE_KEYWORDS, TENURE_TRACE_LEVEL,
 * TENURE_TRACE_FORMAT), TENURE_LTTNG and TENURE_PROFILER, apply to every instance, config or
 * not. An embedder that wants the environment's options on top of its own passes its config
 * through tenure_config_from_env first (the tests, tools and the Lox VM do).
 *
 * Every failure says why, on stderr (there is no instance, so no error hook yet):
 * "tenure: tenure_create failed: <reason>". The reason names the option, its value and the
 * rule or the OS error: an invalid configuration (tenure_config_check; with config NULL an
 * environment value that does not parse or is out of range refuses the creation too, and the
 * reason names the variable, TENURE_GCCompactMode=3), an address-space reservation the OS
 * refuses (GCRegionRange, with the process's RLIMIT_AS), a finalizer thread that cannot start
 * (GCFinalizeMode=0, with the pthread_create error). Results: TENURE_INVALID_ARGUMENT for a
 * configuration, TENURE_NOMEM for memory and address space, TENURE_OS for a thread.
 *
 * GCRegionRange left at its default (32 GiB) is what the OS grants: when the reservation is
 * refused (ulimit -v) it is halved, down to 256 MiB or 4 regions, before creation fails; a
 * GCRegionRange set to anything else is reserved as asked or not at all. */
TENURE_API tenure_runtime *tenure_create(const tenure_config *config, tenure_result *result);
/* tenure_create, with the reason of a failure written into why (why_len bytes, NUL-terminated,
 * truncated) instead of printed on stderr; why NULL: printed, as tenure_create does. */
TENURE_API tenure_runtime *tenure_create_ex(const tenure_config *config, tenure_result *result, char *why,
                                            size_t why_len);
/* Destroy an instance and give all its memory back. Handles, types and objects of the
 * instance are invalid afterwards. A background GC in progress (gcConcurrent) ends first, on
 * the calling thread: its marking, final pause and sweep, its events and its GC callback. */
TENURE_API void tenure_destroy(tenure_runtime *rt);
/* The instance's small integer id (ClrInstanceID in events), unique in the process. */
TENURE_API uint16_t tenure_instance_id(const tenure_runtime *rt);

/* The error hook, called for every misuse and failure that is detected, before the function
 * returns its error. `function` is the public function that failed. The hook runs on the
 * calling thread, with the instance locked, in the middle of the failing call: it may query
 * (see "Callbacks" below), not allocate, collect, change or destroy the instance. A call the
 * hook makes that fails does not call the hook again: it is printed to stderr (once per
 * instance) and recorded in tenure_last_error.
 *
 * Without a hook no failure is silent: each is printed on stderr ("tenure: <function>:
 * <message>"), once per call site, that is per distinct (function, result) pair of the
 * instance, for the first 64 such pairs (then one line says that further ones are not
 * printed); every failure is recorded (tenure_last_error, tenure_last_error_message). */
typedef void (*tenure_error_hook)(tenure_runtime *rt, tenure_result result, const char *function, const char *message,
                                  void *context);
TENURE_API void tenure_set_error_hook(tenure_runtime *rt, tenure_error_hook hook, void *context);
/* The result of the last call on this instance that failed (TENURE_OK if none), and a way to
 * clear it. Functions that return pointers report failures this way. */
TENURE_API tenure_result tenure_last_error(const tenure_runtime *rt);
/* The full message of that failure, "<function>: <message>" as the hook got it ("" if none):
 * it says which cause of the result code it was. Kept in the instance, like tenure_last_error
 * (the last failure on any thread): the text stays valid until the next failure on the
 * instance or tenure_clear_error. */
TENURE_API const char *tenure_last_error_message(const tenure_runtime *rt);
/* Clears both. */
TENURE_API void tenure_clear_error(tenure_runtime *rt);

/* ------------------------------------------------------------------------------------------
 * Callbacks: what each may call. Enforced: a call a callback may not make is refused with
 * TENURE_STATE through the error hook ("called from <the callback>, which may not ..."), and
 * does nothing. The rules are per thread and per instance: a finalizer running on the
 * finalizer thread does not restrict the program's threads, and a callback of one instance
 * may use another instance freely, except a callback that runs inside a collection (the
 * GC-time kinds below): it must not call into another instance (a GC never waits for another
 * instance: that keeps threads attached to several instances free of deadlocks, see
 * docs/design/threads.md T4; not checked).
 *
 *   callback                       may call                      may not
 *   finalizer (tenure_type_desc)   anything else                 tenure_destroy,
 *                                                                tenure_wait_for_pending_finalizers,
 *                                                                tenure_thread_detach
 *   error hook, event listener,    queries, removals (below),    allocate, collect, run or wait
 *   profiler object_allocated,     tenure_heap_walk and          for finalizers, add memory
 *   object_allocated_sampled,      tenure_verify_heap (outside   pressure, create/set/free handles,
 *   handle_created/destroyed and   a collection)                 add root areas/scanners, register
 *   shutdown, heap-walk visitor
 *                                                                types or frozen segments, start
 *                                                                sessions, attach profilers, identity
 *                                                                hashes, (re)register for finalization,
 *                                                                attach/detach threads, tenure_destroy
 *   root scanner, type trace,      queries, removals             the same, and walk or verify the heap
 *   refcount callback, GC
 *   callback, profiler GC
 *   callbacks (gc_started ..
 *   gc_finished), anything above
 *   while it runs inside a GC
 *   root scanner, type trace,                                    also tenure_object_references (they
 *   refcount callback                                            may run while objects are half moved)
 *
 *   type trace (the error hook     also removals (a trace callback may run on a GC helper
 *   of a call it makes included)   thread while the collecting thread walks those lists)
 *
 * Threads (server GC: gcServer=1 with more than one heap; "thread 0" is the thread that
 * collects, the helpers are the instance's other GC threads):
 *
 *   callback                       runs on                       concurrently with
 *   type trace                     any GC thread; a background   itself, on the other GC threads
 *                                  GC's thread (gcConcurrent)    (not with TENURE_TYPE_SERIAL_TRACE),
 *                                  for TENURE_TYPE_CONCURRENT_   and with root scanners; a
 *                                  TRACE types                   background GC's: with the program
 *   error hook                     the thread of the failing     the callback that failed there:
 *                                  call: a GC helper when a      another helper's trace calls, and
 *                                  trace callback's call fails   thread 0's callbacks
 *   root scanner, event listener   thread 0                      trace callbacks on the helpers
 *   (of a GC's events)
 *   refcount callback, GC          thread 0, in the serial parts nothing (the helpers wait)
 *   callback, profiler GC          of a collection
 *   callbacks
 *   all others                     the calling thread            nothing of the instance
 *
 * The calls the table above allows work from every one of these threads: on a GC thread they
 * are serialised among the GC threads (they take the team's lock instead of the instance lock,
 * which thread 0 holds), so they never wait for the collection; a forbidden call is refused
 * with TENURE_STATE from there too. What a callback's own code shares between calls (a counter,
 * a cache) must be thread-safe under server GC, or its type must say TENURE_TYPE_SERIAL_TRACE.
 *
 * Queries: tenure_object_type/size/generation, tenure_is_object, tenure_object_references (with
 * the exception above; its callback may call what a heap-walk visitor may), tenure_handle_get(_secondary),
 * tenure_handle_count, tenure_get_stats, tenure_get_last_gc_info, tenure_generation_bounds,
 * tenure_last_error, tenure_clear_error, tenure_strerror, the event readers, the setters of
 * callbacks (tenure_set_error_hook, tenure_set_gc_callback, tenure_set_refcount_callback).
 * Removals: tenure_session_stop, tenure_profiler_detach, tenure_root_scanner_remove and
 * tenure_root_area_remove are allowed from every callback but a type's trace callback, the
 * callback's own session, profiler or scanner included: what is removed gets no further call
 * from that moment, and is freed once the loop that called it ends (a session stopped during a GC is closed, its trace
 * flushed, when the GC ends).
 * Why: every callback but a finalizer (and a profiler's object_allocated_sampled, which runs
 * unlocked right after the allocation: see tenure_profiler.h) runs with the instance locked in
 * the middle of one of its operations (an allocation, a handle change, a failing call, a heap
 * walk, a collection): allocating there recursed or walked a moved heap, tenure_destroy there
 * deadlocked or freed the instance under its caller. Callbacks must return normally (no
 * longjmp out of them). */

/* ------------------------------------------------------------------------------------------
 * Objects and types.
 *
 * Every object begins with one header word: declare it as the first member of your struct.
 *
 *     typedef struct node { tenure_header header; struct node *left, *right; long value; } node;
 *
 * An array object has a header word and a length word (tenure_array_header), then its
 * elements. Objects are 8-byte aligned and at least 16 bytes; they come back zeroed.
 *
 * An array type may also have fixed fields between the length word and the elements (a
 * string's hash before its characters, a closure's function before its upvalues): declare them
 * after the tenure_array_header and end the struct with a flexible array member,
 *
 *     typedef struct str { tenure_array_header h; uint32_t hash; char chars[]; } str;
 *
 * and register it with size = offsetof(str, chars) (the elements start there, so use the
 * struct's member rather than tenure_array_data) and ref_offsets for the fixed fields that hold
 * references. One object instead of two, and one allocation.
 * ---------------------------------------------------------------------------------------- */
typedef struct tenure_header {
    uintptr_t tenure__word;
} tenure_header;
typedef struct tenure_array_header {
    uintptr_t tenure__word;
    size_t length;
} tenure_array_header;

typedef struct tenure_type tenure_type;

/* A visitor passed to trace callbacks and root scanners: call tenure_visit for every slot
 * that holds a reference (the slot may be updated when the referent moves). */
typedef struct tenure_visitor tenure_visitor;
TENURE_API void tenure_visit(tenure_visitor *visitor, void **slot);

/* A type's trace callback: visit every reference slot of obj. Runs during collections with the
 * world stopped: it may only call tenure_visit and queries (see "Callbacks"), and must not
 * store through the barrier. Under server GC it runs on every GC thread, concurrently with
 * itself (see "Callbacks", threads), unless the type says TENURE_TYPE_SERIAL_TRACE. */
typedef void (*tenure_trace_fn)(void *obj, tenure_visitor *visitor);

enum {
    TENURE_TYPE_ARRAY = 1u << 0,       /* array: elements follow a tenure_array_header */
    TENURE_TYPE_REF_ARRAY = 1u << 1,   /* array whose elements are all references (void *); implies ARRAY */
    TENURE_TYPE_FINALIZABLE = 1u << 2, /* objects get `finalize` called once when found unreachable */
    TENURE_TYPE_NO_REFS = 1u << 3,     /* says explicitly that the type holds no references */
    /* the trace callback may run beside the mutators, during a background GC's marking
     * (gcConcurrent): it reads only the object's reference slots and fields that never change,
     * and passes every slot it reads to tenure_visit; a value it passes need not be current
     * (the GC checks it). Without this flag such objects are traced in the final pause. */
    TENURE_TYPE_CONCURRENT_TRACE = 1u << 4,
    /* no two calls of the trace callback run at once: under server GC (gcServer, more than
     * one heap) the GC threads otherwise call it concurrently (see "Callbacks"); with this
     * flag they take turns (for a callback that is not thread-safe; it costs the parallel
     * marking of these objects). */
    TENURE_TYPE_SERIAL_TRACE = 1u << 5
};

typedef struct tenure_type_desc {
    const char *name;          /* copied */
    size_t size;               /* fixed objects: sizeof your struct (header included);
                                  arrays: the offset of the first element: 0 or
                                  sizeof(tenure_array_header) when there are no fixed fields,
                                  else offsetof(your struct, elements) (a multiple of 8 when the
                                  elements hold references) */
    size_t elem_size;          /* arrays: bytes per element (>= 1) */
    const size_t *ref_offsets; /* byte offsets of the reference fields (copied): of a fixed
                                  object, or of an array's fixed fields (below `size`); each
                                  holds NULL, a heap or a frozen object (see tenure_write_ref) */
    size_t ref_count;
    const size_t *elem_ref_offsets; /* arrays: offsets of references inside one element */
    size_t elem_ref_count;
    tenure_trace_fn trace; /* instead of offsets: a callback that visits the slots */
    uint32_t flags;        /* TENURE_TYPE_* */
    /* TENURE_TYPE_FINALIZABLE: called for an object found unreachable (it is then kept alive,
     * with everything it reaches, until the finalizer has run: "resurrection"). It runs on the
     * finalizer thread or the embedder's (GCFinalizeMode, see tenure_run_pending_finalizers),
     * may allocate, collect and use handles, and may store obj somewhere reachable again; obj
     * must be rooted (a frame) across an allocation unless GCConservativeStack is on. It may not
     * destroy the instance, wait for the finalizers or detach its thread (see "Callbacks"). */
    void (*finalize)(tenure_runtime *rt, void *obj);
} tenure_type_desc;

/* Register a type. Returns NULL (and reports through the hook) on an invalid descriptor. The
 * type lives as long as the instance. */
TENURE_API const tenure_type *tenure_type_register(tenure_runtime *rt, const tenure_type_desc *desc);
TENURE_API const char *tenure_type_name(const tenure_type *type);

/* The type, size in bytes (header included) and generation (0, 1, 2, 3 = large object heap,
 * 4 = pinned object heap) of an object; NULL / 0 / -1 and an error for a non-object. */
TENURE_API const tenure_type *tenure_object_type(tenure_runtime *rt, const void *obj);
TENURE_API size_t tenure_object_size(tenure_runtime *rt, const void *obj);
TENURE_API int tenure_object_generation(tenure_runtime *rt, const void *obj);
/* True if obj is the start of a live object of this instance (no hook call when false). */
TENURE_API int tenure_is_object(tenure_runtime *rt, const void *obj);
/* The type of an object, read inline from its header: for an interpreter's dispatch on an
 * object's kind (compare with the pointers tenure_type_register returned) without a call or a
 * tag field of its own. Unchecked: obj must be a live object of the instance that the calling
 * thread holds as a mutator (reached from its roots, frames or other objects, not from inside a
 * GC callback); tenure_object_type is the checked form. */
static inline const tenure_type *tenure_object_type_inline(const void *obj) {
    return (const tenure_type *)(((const tenure_header *)obj)->tenure__word & ~(uintptr_t)7);
}

static inline size_t tenure_array_length(const void *array) { return ((const tenure_array_header *)array)->length; }
/* The elements of an array whose type has no fixed fields (size 0 or 16); with fixed fields,
 * use your struct's flexible array member. */
static inline void *tenure_array_data(void *array) { return (char *)array + sizeof(tenure_array_header); }

/* ------------------------------------------------------------------------------------------
 * Internal view used by the inline fast paths. Do not use these fields.
 * ---------------------------------------------------------------------------------------- */
typedef struct tenure__head {
    uintptr_t heap_base; /* the reserved range */
    uintptr_t heap_size;
    const uint8_t *unit_gen; /* generation of each region unit */
    uint8_t *cards;          /* one byte per card */
    uint8_t *card_bundles;   /* one byte per 64 cards: some card there may be dirty */
    uint32_t unit_shift;
    uint32_t barrier_slow;   /* nonzero: the barrier takes the out-of-line path (HeapVerify, background GC) */
    uint32_t stop_requested; /* nonzero: a collection waits for the threads to reach a safepoint */
} tenure__head;

/* One attached thread's state for one instance: its allocation context and shadow stack.
 * tenure__current is the calling thread's most recently used one. */
typedef struct tenure__mutator {
    uintptr_t alloc_ptr;         /* the allocation context: bump pointer ... */
    uintptr_t alloc_limit;       /* ... and its end */
    struct tenure_frame *frames; /* innermost shadow-stack frame */
    const struct tenure_runtime *rt;
} tenure__mutator;
/* initial-exec: one %fs-relative load even in position-independent code */
extern TENURE_API __thread tenure__mutator *tenure__current __attribute__((tls_model("initial-exec")));
TENURE_API tenure__mutator *tenure__mutator_of(tenure_runtime *rt);

struct tenure_type {
    size_t tenure__fast_size; /* nonzero: tenure_alloc may take the inline path */
    const tenure_runtime *tenure__owner;
    /* array types: lengths below tenure__fast_max_length (0: none) may take the inline path of
     * tenure_alloc_array; the bound keeps the size small, far from overflowing a size_t */
    size_t tenure__fast_elem_size;
    size_t tenure__fast_max_length;
    size_t tenure__fast_base; /* array types: bytes before the first element */
};

#define TENURE__CARD_SHIFT 8 /* 256-byte cards (docs/design/collector.md, "Cards") */
/* barrier_slow's bits: the checked barrier (HeapVerify); a background GC's write watch, which
 * wants only the stores into old objects (units of generation 2) */
#define TENURE__BARRIER_CHECKED 1u
#define TENURE__BARRIER_WATCH 2u
#define TENURE__BUNDLE_SHIFT 14 /* 64 cards per bundle */

TENURE_API void *tenure__alloc_slow(tenure_runtime *rt, const tenure_type *type);
TENURE_API void *tenure__alloc_array_slow(tenure_runtime *rt, const tenure_type *type, size_t length);
TENURE_API void tenure__write_ref_slow(tenure_runtime *rt, void *obj, void *slot, void *value);
TENURE_API void tenure__write_watch(tenure_runtime *rt, void *slot);

/* ------------------------------------------------------------------------------------------
 * Allocation. Objects come back zeroed. Allocation may collect. On failure (out of memory,
 * invalid type) they return NULL and report through the hook; tenure_last_error says why.
 * ---------------------------------------------------------------------------------------- */

/* The inline paths bump the calling thread's allocation context and write the header only.
 * Everything else (type checks, budgets, GCStress, sampling, profilers' allocation callbacks,
 * finalization, refusing an allocation inside a callback or a blocking section) is done by
 * the slow paths: the library makes those cases fail the inline test by publishing an
 * alloc_limit equal to alloc_ptr, or by leaving the type's fast fields zero. */

/* A fixed-size object of `type` (an array type needs tenure_alloc_array). */
static inline void *tenure_alloc(tenure_runtime *rt, const tenure_type *type) {
    tenure__mutator *m = tenure__current;
    if (TENURE__LIKELY(m->rt == rt && type != NULL && type->tenure__owner == rt)) {
        size_t size = type->tenure__fast_size;
        uintptr_t p = m->alloc_ptr;
        if (TENURE__LIKELY(size != 0 && size <= m->alloc_limit - p)) {
            m->alloc_ptr = p + size;
            ((tenure_header *)p)->tenure__word = (uintptr_t)type;
            return (void *)p;
        }
    }
    return tenure__alloc_slow(rt, type);
}

/* An array of `length` elements of an array type. */
static inline void *tenure_alloc_array(tenure_runtime *rt, const tenure_type *type, size_t length) {
    tenure__mutator *m = tenure__current;
    if (TENURE__LIKELY(m->rt == rt && type != NULL && type->tenure__owner == rt &&
                       length < type->tenure__fast_max_length)) {
        /* header and length words, fixed fields, the elements, rounded up to 8 bytes (at
         * least 16: no minimum to apply); below the LOH threshold by the bound on length */
        size_t size = (type->tenure__fast_base + length * type->tenure__fast_elem_size + 7) & ~(size_t)7;
        uintptr_t p = m->alloc_ptr;
        if (TENURE__LIKELY(size <= m->alloc_limit - p)) {
            m->alloc_ptr = p + size;
            ((tenure_array_header *)p)->tenure__word = (uintptr_t)type;
            ((tenure_array_header *)p)->length = length;
            return (void *)p;
        }
    }
    return tenure__alloc_array_slow(rt, type, length);
}
/* The same on the pinned object heap: the object never moves. */
TENURE_API void *tenure_alloc_pinned(tenure_runtime *rt, const tenure_type *type);
TENURE_API void *tenure_alloc_array_pinned(tenure_runtime *rt, const tenure_type *type, size_t length);

/* ------------------------------------------------------------------------------------------
 * The write barrier. Every store of a reference into a heap object goes through it:
 * `slot` is the address of the field inside `obj`, `value` the reference (or NULL). Plain
 * reads need no barrier. Stores into roots (locals, handles, root areas) need none either.
 *
 * What a reference may hold (in an object's reference field, and in every root): NULL, the
 * start of an object of this instance's heap, or the start of an object inside a frozen
 * segment registered with this instance (see tenure_register_frozen_segment), as in .NET,
 * where references point to the GC heap or to frozen segments. Anything else is misuse, even
 * with a header that names a registered type: a static C struct, a malloc'd block, an object
 * of another instance, an interior pointer. The collector neither follows nor updates such a
 * word, so it would keep nothing alive; for a static object, build it in a frozen segment.
 * With HeapVerify on, the barrier is checked: such a value is reported through the error
 * hook (TENURE_INVALID_OBJECT, "store refused: object <obj> of type <T>, field at offset
 * <N>: ...") and not stored (the field keeps its previous value, so the heap stays sound),
 * and the verifier reports one stored without the barrier in the same words. Without
 * HeapVerify nothing is checked (the inline barrier is a store and a card mark).
 * ---------------------------------------------------------------------------------------- */
/* The store and the card marking of the barrier (the checked barrier ends with it too). */
static inline void tenure__store_ref(tenure__head *h, void *slot, void *value) {
    /* A background GC may read the slot meanwhile, atomically: an aligned pointer store is
     * seen whole (old or new value). Under ThreadSanitizer the store is a relaxed atomic so
     * that it says so; elsewhere a plain store, which the compiler may schedule freely (the
     * atomic one cost 1% more instructions in binary-trees). */
#if defined(__SANITIZE_THREAD__)
    __atomic_store_n((void **)slot, value, __ATOMIC_RELAXED);
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
    __atomic_store_n((void **)slot, value, __ATOMIC_RELAXED);
#else
    *(void **)slot = value;
#endif
#else
    *(void **)slot = value;
#endif
    uintptr_t v = (uintptr_t)value - h->heap_base;
    uintptr_t s = (uintptr_t)slot - h->heap_base;
    if (v < h->heap_size && s < h->heap_size && h->unit_gen[v >> h->unit_shift] < h->unit_gen[s >> h->unit_shift]) {
        /* relaxed atomic byte stores: plain moves, but threads may dirty one card together */
        __atomic_store_n(&h->cards[s >> TENURE__CARD_SHIFT], 1, __ATOMIC_RELAXED);
        __atomic_store_n(&h->card_bundles[s >> TENURE__BUNDLE_SHIFT], 1, __ATOMIC_RELAXED);
    }
}

static inline void tenure_write_ref(tenure_runtime *rt, void *obj, void *slot, void *value) {
    tenure__head *h = (tenure__head *)rt;
    uint32_t slow = h->barrier_slow;
    if (TENURE__UNLIKELY(slow)) {
        if (slow != TENURE__BARRIER_WATCH) {
            tenure__write_ref_slow(rt, obj, slot, value);
            return;
        }
        tenure__store_ref(h, slot, value); /* the watch alone: a call only for a store into an old object */
        uintptr_t s = (uintptr_t)slot - h->heap_base;
        if (s < h->heap_size && h->unit_gen[s >> h->unit_shift] >= 2)
            tenure__write_watch(rt, slot);
        return;
    }
    tenure__store_ref(h, slot, value);
}

/* ------------------------------------------------------------------------------------------
 * Roots.
 * ---------------------------------------------------------------------------------------- */

/* Shadow-stack frames: precise, movable roots for local variables. A frame names local
 * pointer variables (up to 12 per frame: with more, the compiler says that
 * TENURE_FRAME_names_at_most_12_variables__use_a_second_frame is undeclared); the collector
 * reads and updates them.
 *
 *     node *a = NULL, *b = NULL;
 *     TENURE_FRAME(rt, frame, a, b);
 *     a = tenure_alloc(rt, node_type);
 *     ...
 *     TENURE_FRAME_POP(rt, frame);
 *
 * Frames nest and must be popped in reverse order. Checked, because a mistake would otherwise
 * hang or crash a later collection: a pop of a frame that is not the innermost is reported
 * (TENURE_STATE) and, if the frame is deeper in the chain, pops the frames pushed after it
 * too (their TENURE_FRAME_POP was missed: an early return); a push of a frame that is already
 * on the thread's chain (the same frame pushed again: a pop missed on a return or in a loop)
 * is reported and the frames from the chain's top down to its old place are dropped before it
 * is pushed again, so the chain never becomes a cycle. The push costs one compare: a new
 * frame lies below (deeper than) the innermost one; only one that does not (two frames of one
 * function, frames outside the stack) is looked for in the chain, out of line. */
typedef struct tenure_frame {
    struct tenure_frame *prev;
    size_t count;
    void **const *slots;
} tenure_frame;

TENURE_API void tenure__frame_pop_mismatch(tenure_runtime *rt, tenure_frame *frame);
TENURE_API void tenure__frame_push_slow(tenure_runtime *rt, tenure__mutator *m, tenure_frame *frame, size_t count,
                                        void **const *slots);

static inline tenure__mutator *tenure__self(tenure_runtime *rt) {
    tenure__mutator *m = tenure__current;
    return TENURE__LIKELY(m->rt == rt) ? m : tenure__mutator_of(rt);
}

/* Push frame with count slots: a frame at or above the innermost one (m->frames - 1 wraps when
 * there is none) goes to the checked path. The frame's fields are written only here, so that
 * the check still reads the old link of a frame pushed again (TENURE_FRAME). */
static inline void tenure__frame_push(tenure_runtime *rt, tenure_frame *frame, size_t count, void **const *slots) {
    tenure__mutator *m = tenure__self(rt);
    if (TENURE__UNLIKELY((uintptr_t)frame >= (uintptr_t)m->frames - 1)) {
        tenure__frame_push_slow(rt, m, frame, count, slots);
        return;
    }
    frame->prev = m->frames;
    frame->count = count;
    frame->slots = slots;
    m->frames = frame;
}

/* Push a frame whose count and slots are set. */
static inline void tenure_frame_push(tenure_runtime *rt, tenure_frame *frame) {
    tenure__frame_push(rt, frame, frame->count, frame->slots);
}

static inline void tenure_frame_pop(tenure_runtime *rt, tenure_frame *frame) {
    tenure__mutator *m = tenure__self(rt);
    if (TENURE__LIKELY(m->frames == frame))
        m->frames = frame->prev;
    else
        tenure__frame_pop_mismatch(rt, frame);
}

#define TENURE__SLOT(x) (void **)(void *)&(x)
#define TENURE__MAP1(f, a) f(a)
#define TENURE__MAP2(f, a, ...) f(a), TENURE__MAP1(f, __VA_ARGS__)
#define TENURE__MAP3(f, a, ...) f(a), TENURE__MAP2(f, __VA_ARGS__)
#define TENURE__MAP4(f, a, ...) f(a), TENURE__MAP3(f, __VA_ARGS__)
#define TENURE__MAP5(f, a, ...) f(a), TENURE__MAP4(f, __VA_ARGS__)
#define TENURE__MAP6(f, a, ...) f(a), TENURE__MAP5(f, __VA_ARGS__)
#define TENURE__MAP7(f, a, ...) f(a), TENURE__MAP6(f, __VA_ARGS__)
#define TENURE__MAP8(f, a, ...) f(a), TENURE__MAP7(f, __VA_ARGS__)
#define TENURE__MAP9(f, a, ...) f(a), TENURE__MAP8(f, __VA_ARGS__)
#define TENURE__MAP10(f, a, ...) f(a), TENURE__MAP9(f, __VA_ARGS__)
#define TENURE__MAP11(f, a, ...) f(a), TENURE__MAP10(f, __VA_ARGS__)
#define TENURE__MAP12(f, a, ...) f(a), TENURE__MAP11(f, __VA_ARGS__)
/* 13 to 24 variables: the compiler names this identifier as undeclared */
#define TENURE__MAP_TOO_MANY(f, ...) TENURE_FRAME_names_at_most_12_variables__use_a_second_frame
#define TENURE__PICK(_1, _2, _3, _4, _5, _6, _7, _8, _9, _10, _11, _12, _13, _14, _15, _16, _17, _18, _19, _20, _21, \
                     _22, _23, _24, name, ...)                                                                       \
    name
#define TENURE__MAP(f, ...)                                                                                           \
    TENURE__PICK(__VA_ARGS__, TENURE__MAP_TOO_MANY, TENURE__MAP_TOO_MANY, TENURE__MAP_TOO_MANY, TENURE__MAP_TOO_MANY, \
                 TENURE__MAP_TOO_MANY, TENURE__MAP_TOO_MANY, TENURE__MAP_TOO_MANY, TENURE__MAP_TOO_MANY,              \
                 TENURE__MAP_TOO_MANY, TENURE__MAP_TOO_MANY, TENURE__MAP_TOO_MANY, TENURE__MAP_TOO_MANY,              \
                 TENURE__MAP12, TENURE__MAP11, TENURE__MAP10, TENURE__MAP9, TENURE__MAP8, TENURE__MAP7, TENURE__MAP6, \
                 TENURE__MAP5, TENURE__MAP4, TENURE__MAP3, TENURE__MAP2, TENURE__MAP1, unused)                        \
    (f, __VA_ARGS__)

#define TENURE_FRAME(rt, name, ...)                                          \
    void **const name##_slots_[] = {TENURE__MAP(TENURE__SLOT, __VA_ARGS__)}; \
    tenure_frame name;                                                       \
    tenure__frame_push((rt), &name, sizeof(name##_slots_) / sizeof(name##_slots_[0]), name##_slots_)
#define TENURE_FRAME_POP(rt, name) tenure_frame_pop((rt), &name)

/* A frame that pops itself when its scope ends, by any `return`, `break`, `goto` or the closing
 * brace (GCC and Clang: the cleanup attribute; not longjmp, which skips it: pop frames by hand
 * across a longjmp). Declare it after the variables it names, in the scope they live in:
 *
 *     node *n = NULL;
 *     TENURE_SCOPED_FRAME(rt, frame, n);
 *     n = tenure_alloc(rt, node_type);
 *     if (!n) return NULL;                      the frame is popped here
 *     ...
 *     return n;                                 and here (the value is read before the pop)
 *
 * Scoped frames nest with each other and with TENURE_FRAME in reverse order of declaration. */
#if defined(__GNUC__) || defined(__clang__)
typedef struct tenure_scoped_frame {
    tenure_runtime *rt;
    tenure_frame frame;
} tenure_scoped_frame;

static inline void tenure__scoped_frame_pop(tenure_scoped_frame *scoped) {
    tenure_frame_pop(scoped->rt, &scoped->frame);
}

#define TENURE__POPS_ITSELF __attribute__((cleanup(tenure__scoped_frame_pop)))
#define TENURE_SCOPED_FRAME(rt, name, ...)                                        \
    void **const name##_slots_[] = {TENURE__MAP(TENURE__SLOT, __VA_ARGS__)};      \
    tenure_scoped_frame name TENURE__POPS_ITSELF = {                              \
        (rt),                                                                     \
        {NULL, sizeof(name##_slots_) / sizeof(name##_slots_[0]), name##_slots_}}; \
    tenure_frame_push(name.rt, &name.frame)
#endif

/* Frozen segments: a block of objects built ahead of time (literals, an image) that is never
 * collected or moved. Build each object with tenure_frozen_object_init (it writes the header
 * and, for arrays, the length; the rest is zeroed), back to back from `start`, then register
 * the block. The references frozen objects hold are roots; the memory must stay writable
 * because the collector updates those references when their targets move. Heap objects may
 * refer to frozen objects: they are the only objects outside the heap a reference may hold
 * (see tenure_write_ref). Segments stay registered for the instance's lifetime. */
TENURE_API size_t tenure_frozen_object_init(tenure_runtime *rt, void *at, const tenure_type *type, size_t length);
TENURE_API tenure_result tenure_register_frozen_segment(tenure_runtime *rt, void *start, size_t size);

/* Registered root areas: `count` consecutive reference slots (for example a global array). */
typedef struct tenure_root_area tenure_root_area;
TENURE_API tenure_root_area *tenure_root_area_add(tenure_runtime *rt, void **slots, size_t count);
TENURE_API tenure_result tenure_root_area_remove(tenure_runtime *rt, tenure_root_area *area);

/* Root scanners: a callback that visits the embedder's own slots during every collection
 * (world stopped; tenure_visit, queries and removals only: see "Callbacks"). A scanner may
 * remove itself: it is not called again, and freed when the scan ends. */
typedef void (*tenure_root_scan_fn)(tenure_runtime *rt, tenure_visitor *visitor, void *context);
typedef struct tenure_root_scanner tenure_root_scanner;
TENURE_API tenure_root_scanner *tenure_root_scanner_add(tenure_runtime *rt, tenure_root_scan_fn scan, void *context);
TENURE_API tenure_result tenure_root_scanner_remove(tenure_runtime *rt, tenure_root_scanner *scanner);

/* ------------------------------------------------------------------------------------------
 * GC handles. Kind numbers are those of the .NET runtime (and of the events).
 * ---------------------------------------------------------------------------------------- */
typedef enum tenure_handle_kind {
    TENURE_HANDLE_WEAK_SHORT = 0,   /* does not keep its object alive; cleared when it dies */
    TENURE_HANDLE_WEAK_LONG = 1,    /* as weak short (finalization-aware later) */
    TENURE_HANDLE_STRONG = 2,       /* keeps its object alive */
    TENURE_HANDLE_PINNED = 3,       /* keeps its object alive and in place */
    TENURE_HANDLE_VARIABLE = 4,     /* behaves as its variable kind (weak short, weak long, strong
                                      or pinned: tenure_handle_set_variable_kind); starts strong */
    TENURE_HANDLE_REFCOUNTED = 5,   /* strong while the refcount callback says the object's count is
                                      nonzero, weak (short) otherwise */
    TENURE_HANDLE_DEPENDENT = 6,    /* a primary (weak) and a secondary kept alive exactly as long as
                                      the primary is: tenure_handle_new_dependent */
    TENURE_HANDLE_ASYNC_PINNED = 7, /* pins its object and, for a reference array, each element */
    TENURE_HANDLE_SIZED_REF = 8     /* strong; after each full GC, tenure_handle_sized_ref_bytes says
                                      how many bytes it keeps alive */
} tenure_handle_kind;

typedef struct tenure_handle tenure_handle;

/* Create a handle of `kind` to obj (NULL allowed). Returns NULL on error. */
TENURE_API tenure_handle *tenure_handle_new(tenure_runtime *rt, tenure_handle_kind kind, void *obj);
/* The handle's object (NULL when cleared or on error). */
TENURE_API void *tenure_handle_get(tenure_runtime *rt, const tenure_handle *handle);
TENURE_API tenure_result tenure_handle_set(tenure_runtime *rt, tenure_handle *handle, void *obj);
TENURE_API tenure_result tenure_handle_free(tenure_runtime *rt, tenure_handle *handle);
/* The number of live handles. */
TENURE_API size_t tenure_handle_count(const tenure_runtime *rt);

/* Dependent handles: the secondary is kept alive exactly as long as the primary is alive;
 * chains and cycles of dependent handles are computed to a fixed point (ephemerons: what a
 * weak-keyed table needs). When the primary dies both are cleared. tenure_handle_get gives
 * the primary. */
TENURE_API tenure_handle *tenure_handle_new_dependent(tenure_runtime *rt, void *primary, void *secondary);
TENURE_API void *tenure_handle_get_secondary(tenure_runtime *rt, const tenure_handle *handle);
TENURE_API tenure_result tenure_handle_set_secondary(tenure_runtime *rt, tenure_handle *handle, void *secondary);
/* A variable handle's kind: TENURE_HANDLE_WEAK_SHORT, WEAK_LONG, STRONG or PINNED. */
TENURE_API tenure_result tenure_handle_set_variable_kind(tenure_runtime *rt, tenure_handle *handle,
                                                         tenure_handle_kind kind);
/* RefCounted handles ask this at every GC (world stopped; queries only: see "Callbacks"). */
typedef int (*tenure_refcount_fn)(void *obj, void *context);
TENURE_API void tenure_set_refcount_callback(tenure_runtime *rt, tenure_refcount_fn fn, void *context);
/* SizedRef: the bytes of the objects reachable from the handle that no SizedRef handle marked
 * before it, measured at the last full GC (SizedRef handles are marked first, one after the
 * other in handle-table order, as the .NET collector does). */
TENURE_API uint64_t tenure_handle_sized_ref_bytes(tenure_runtime *rt, const tenure_handle *handle);

/* ------------------------------------------------------------------------------------------
 * Lifetime services.
 * ---------------------------------------------------------------------------------------- */

/* Native memory that managed objects keep alive. When the pressure added since the last gen2
 * GC passes a budget that grows with the heap (the gen2 budget, 0.4 to 1.6 times what lives in
 * gen1 and gen2 after the last full GC: at least four gen0 budgets and 8 MiB), a gen2 GC is
 * induced (reason Induced), as .NET's GC.AddMemoryPressure does.
 * Removing more than was added is an error. */
TENURE_API tenure_result tenure_add_memory_pressure(tenure_runtime *rt, uint64_t bytes);
TENURE_API tenure_result tenure_remove_memory_pressure(tenure_runtime *rt, uint64_t bytes);
TENURE_API uint64_t tenure_memory_pressure(const tenure_runtime *rt);

/* Finalization. Finalizable objects are recorded at allocation. A GC that finds one
 * unreachable moves it to the ready queue (short weak handles to it are cleared before, long
 * ones after: long weak handles track resurrection). Where pending finalizers run depends on
 * GCFinalizeMode:
 *   0 (the default): on the instance's own finalizer thread, an attached thread started by
 *     tenure_create and joined by tenure_destroy. Finalizers then run concurrently with the
 *     program's threads, as in .NET: what they touch must be safe to touch from another thread.
 *   1: only when the embedder calls tenure_run_pending_finalizers, on its thread.
 *   2: on the allocating thread, at the start of the allocation slow path and after
 *     tenure_collect (for single-threaded embedders that want no second thread).
 * Finalizers never nest and run one at a time, in queue order. */
TENURE_API size_t tenure_run_pending_finalizers(tenure_runtime *rt); /* returns how many ran */
TENURE_API size_t tenure_pending_finalizers(const tenure_runtime *rt);
/* Collect fully, then wait until every finalizer found pending has run (the .NET idiom
 * GC.Collect(); GC.WaitForPendingFinalizers()). With modes 1 and 2 they run on the calling
 * thread; with mode 0 the caller waits (as in a blocking section) for the finalizer thread. */
TENURE_API tenure_result tenure_wait_for_pending_finalizers(tenure_runtime *rt);
/* obj's finalizer will not run (until reregistered) / will run again when obj is next found
 * unreachable. */
TENURE_API tenure_result tenure_suppress_finalize(tenure_runtime *rt, void *obj);
TENURE_API tenure_result tenure_reregister_for_finalize(tenure_runtime *rt, void *obj);

/* A hash code for obj that stays the same when the object moves, for its whole life (kept in
 * a side table that follows objects through compaction and forgets dead ones; its size is
 * GCHeapStats' SinkBlockCount and tenure_stats.sync_blocks). 0 on error. */
TENURE_API uint32_t tenure_identity_hash(tenure_runtime *rt, const void *obj);

/* ------------------------------------------------------------------------------------------
 * Threads. A thread that uses an instance is attached to it: the creating thread is, others
 * call tenure_thread_attach (attaching twice is counted; detach as often). Each attached
 * thread has its own allocation context and shadow stack. A collection runs on the thread
 * that triggers it, once every other attached thread has stopped at a safepoint: the
 * allocation slow path, any call into the instance that must wait, tenure_safepoint, or a
 * blocking section. A thread that runs long without allocating calls tenure_safepoint now
 * and then; a thread about to block (I/O, a lock, a sleep) brackets that with
 * tenure_blocking_enter/leave and touches no object in between. A thread that exits while
 * attached is detached. Using an instance from a thread that is not attached is reported
 * (TENURE_STATE) and the allocation fails. No signals are used (but GCPoisonFreed's SIGSEGV
 * handler, a debugging aid, which only explains a fault and passes it on).
 *
 * Every call into the instance may be a safepoint (it may wait for a collection another
 * thread runs), so, as across an allocation, a pointer held only in a C local may be stale
 * after it unless GCConservativeStack (the default) pins what the thread's stack and registers
 * point to; the objects passed as arguments to the call itself are always kept in place. The
 * error hook, the GC callback, profiler callbacks, root scanners and the refcount callback run
 * with the instance locked: they must not wait for another thread that uses the instance.
 * tenure_destroy refuses (TENURE_STATE, the instance stays) while a thread other than the
 * caller and the finalizer thread is attached. Threads that allocate share nothing on the
 * fast paths: each has its own region to bump through.
 *
 * fork() without exec: the child gets a usable copy of every instance. The library's
 * pthread_atfork handlers make the fork wait until no GC runs and no thread is changing an
 * instance; in the child the instance has fresh locks, the threads that do not exist there are
 * forgotten (with their shadow frames: objects only they kept alive are garbage in the child),
 * a new finalizer thread is started (GCFinalizeMode 0; if none can start, finalizers run on
 * the thread that waits for them), and trace sessions are repaired. The forking thread stays
 * attached and may allocate, collect, wait for finalizers and tenure_destroy the instance. A
 * finalizer that another thread was running at the fork is not run again in the child. A fork
 * from a finalizer leaves a child that should only exec or _exit.
 * ---------------------------------------------------------------------------------------- */
TENURE_API tenure_result tenure_thread_attach(tenure_runtime *rt);
TENURE_API tenure_result tenure_thread_detach(tenure_runtime *rt);
TENURE_API void tenure__safepoint_slow(tenure_runtime *rt);
static inline void tenure_safepoint(tenure_runtime *rt) {
    if (TENURE__UNLIKELY(__atomic_load_n(&((tenure__head *)rt)->stop_requested, __ATOMIC_ACQUIRE)))
        tenure__safepoint_slow(rt);
}
TENURE_API void tenure_blocking_enter(tenure_runtime *rt);
TENURE_API void tenure_blocking_leave(tenure_runtime *rt);
/* How many threads are attached (the finalizer thread included). */
TENURE_API size_t tenure_thread_count(tenure_runtime *rt);

/* ------------------------------------------------------------------------------------------
 * Collection.
 * ---------------------------------------------------------------------------------------- */
enum {
    TENURE_COLLECT_FORCED = 0,            /* collect now (GCCollectionMode.Forced); the default */
    TENURE_COLLECT_OPTIMIZED = 1u << 0,   /* the collector may decline if it would gain little */
    TENURE_COLLECT_COMPACT = 1u << 1,     /* compact the condemned generations (no sweep) */
    TENURE_COLLECT_NONBLOCKING = 1u << 2, /* gen2 with gcConcurrent: a background GC (returns once it started) */
    TENURE_COLLECT_COMPACT_LOH = 1u << 3, /* also compact the large object heap (generation 2 GCs) */
    TENURE_COLLECT_AGGRESSIVE = 1u << 4   /* compact everything and give all free memory back now */
};
/* Collect generation 0, 1 or 2 (and everything younger); -1 or 2 collects everything. */
TENURE_API tenure_result tenure_collect(tenure_runtime *rt, int generation, unsigned flags);

/* Heap statistics from the collector's own accounting. */
typedef struct tenure_gen_stats {
    uint64_t size;        /* bytes the generation spans after the last GC (objects + free) */
    uint64_t free_bytes;  /* free objects inside it (fragmentation) */
    uint64_t collections; /* GCs that condemned this generation */
} tenure_gen_stats;

typedef struct tenure_stats {
    uint64_t gc_count;            /* GCs so far (the index of the last GC) */
    uint64_t compacting_gcs;      /* of which compacted the small object heap */
    uint64_t sweeping_gcs;        /* of which swept it */
    uint64_t bytes_allocated;     /* bytes handed out since the instance was created */
    uint64_t live_bytes_after_gc; /* bytes of live objects after the last GC */
    uint64_t heap_bytes;          /* bytes in regions in use (all generations) */
    uint64_t committed_bytes;     /* bytes committed from the OS (side tables excluded) */
    uint64_t promoted_bytes;      /* bytes that survived the last GC */
    uint64_t pinned_objects;      /* pinned objects seen by the last GC */
    uint64_t total_pause_ns;
    uint64_t max_pause_ns;
    uint64_t last_pause_ns;
    uint64_t mark_stack_overflows; /* times the mark stack overflowed (all GCs) */
    uint64_t sync_blocks;          /* identity hash table entries after the last GC */
    uint64_t finalizers_run;       /* finalizers that have run */
    uint64_t finalization_promoted_bytes, finalization_promoted_count; /* last GC: kept only for finalization */
    tenure_gen_stats gen[5];                                           /* 0, 1, 2, 3 = LOH, 4 = POH */
    uint64_t gc_scratch_shortfalls; /* GCs whose scratch, reserved before the pause, was short: a
                                     generation swept instead of compacted (more pinned plugs than
                                     the pin list held) or survivor ranges / heap dump / profiler
                                     roots not reported (no memory); see docs/design/collector.md */
    uint64_t background_gcs;        /* background GCs done (gcConcurrent; each also counts in gc_count) */
    int background_gc_in_progress;  /* 1 while a background GC marks */
    /* background GCs' final pauses so far: each marks, then collects gen0 as a gen0 GC would
     * (its survivors promoted, moved or not), with no GC callback of its own (the BGC's comes
     * at its sweep's end) */
    uint64_t background_final_pauses;
    uint64_t moved_bytes; /* bytes of objects compaction moved, all GCs (what copying survivors cost) */
} tenure_stats;

TENURE_API void tenure_get_stats(const tenure_runtime *rt, tenure_stats *stats);

/* What one GC did (like .NET's GCMemoryInfo). Reasons are the GC reasons of the events
 * (0 AllocSmall, 1 Induced, 4 AllocLarge, 5 OutOfSpaceSOH, 6 OutOfSpaceLOH, 7 InducedNoForce,
 * 8 Stress, 10 InducedCompacting). */
typedef struct tenure_gc_info {
    uint64_t index; /* 1 for the instance's first GC */
    int generation; /* condemned generation: 0, 1 or 2 */
    uint32_t reason;
    int compacted;           /* which condemned generations were compacted: bit g (3 LOH) */
    uint64_t pause_ns;       /* from the start of the GC to its end */
    uint64_t size_before[5]; /* bytes per generation (0, 1, 2, LOH, POH) before ... */
    uint64_t size_after[5];  /* ... and after the GC */
    uint64_t promoted[5];    /* bytes of each condemned generation that survived */
    uint64_t pinned_objects;
    /* tenure's own phase times in microseconds, in the driver's order: mark, plan, relocate,
     * compact or sweep, promote (the GCGlobalHeapHistory_V4 event carries the .NET runtime's
     * phases instead: docs/events.md) */
    uint32_t phase_us[5];
    int background; /* 1: a background GC (pause_ns: its initial and final pauses, summed) */
} tenure_gc_info;

/* The last GC (index 0 if none yet). */
TENURE_API void tenure_get_last_gc_info(const tenure_runtime *rt, tenure_gc_info *info);
/* Called at the end of every GC, on the thread that ran it, before the mutator continues.
 * Queries and removals only (see "Callbacks"). NULL removes it. GCs end in the order they
 * started, except a background GC (gcConcurrent), which ends after the foreground GCs that
 * ran while it marked and swept: its index is then below theirs, and its callback runs on
 * the collector's background thread (not attached to the instance) when its sweep ends. */
typedef void (*tenure_gc_callback)(tenure_runtime *rt, const tenure_gc_info *info, void *context);
TENURE_API void tenure_set_gc_callback(tenure_runtime *rt, tenure_gc_callback callback, void *context);

/* Walk the heap outside a collection: calls visit for every live or not-yet-collected object
 * (free space is skipped). Stops early if visit returns nonzero. The visitor may query (and walk
 * again), not allocate or collect (refused: the heap never moves under a walk); see "Callbacks". */
typedef int (*tenure_heap_visit_fn)(void *obj, const tenure_type *type, size_t size, int generation, void *context);
TENURE_API tenure_result tenure_heap_walk(tenure_runtime *rt, tenure_heap_visit_fn visit, void *context);

/* Verify the heap now (what HeapVerify does around every GC). Returns TENURE_HEAP_CORRUPT and
 * reports each problem (the address, the holder's type and field or element, the GC) through
 * the hook, or on stderr when no hook is set. Around a GC (HeapVerify), a problem found with
 * no hook set aborts the process; with a hook, the hook decides. */
TENURE_API tenure_result tenure_verify_heap(tenure_runtime *rt);

#ifdef __cplusplus
}
#endif
#endif /* TENURE_H */
