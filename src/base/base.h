/*
 * base.h - the services below every subsystem (src/base/, docs/design/base.md): errors and
 * the error hook (errors.c), the callback frames and what each kind of callback may call
 * (callbacks.c), the library's own allocations (mem.c), a growable array (vec.c), assertions
 * (assert.h, assert.c) and the calling thread's current attachment (current.c). Included
 * first by runtime.h.
 *
 * base/ calls no function of the subsystems above it by name, so that they all depend on it
 * and it on none of them (the graph in docs/design/README.md). Three of its services need
 * something only those subsystems have: the error hook runs with the instance lock held
 * (threads/), a callback that may not allocate closes the calling thread's allocation context
 * (heap/), and a refusal says whether a collection runs (gc/). The instance's creator
 * (api/runtime.c) gives base/ those operations as function pointers (tn_base_calls), once,
 * before anything can fail; they are called only on failure paths and around callbacks,
 * never on a fast path.
 */
#ifndef TENURE_BASE_BASE_H
#define TENURE_BASE_BASE_H

#include "tenure.h"
#include "base/assert.h"
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct tn_mutator;

/* What base/ calls in the subsystems above it: set by api/runtime.c when it creates the
 * instance (every pointer non-NULL from then on). */
typedef struct tn_base_calls {
    void (*lock)(tenure_runtime *rt);   /* the instance lock, recursive (threads/: tn_lock) */
    void (*unlock)(tenure_runtime *rt); /* (threads/: tn_unlock) */
    /* Close the calling thread's allocation context of rt for a callback that may not
     * allocate: its mutator (reopened by reopen_context), or NULL if it has none (heap/). */
    struct tn_mutator *(*close_context)(tenure_runtime *rt);
    void (*reopen_context)(struct tn_mutator *m);
    bool (*collecting)(const tenure_runtime *rt); /* a GC of rt is in progress (gc/) */
    bool (*attached)(tenure_runtime *rt);         /* the calling thread is attached to rt (threads/) */
} tn_base_calls;

/* The state base/ owns (rt->services). */
struct tn_base_state {
    const tn_base_calls *calls; /* NULL only while tenure_create allocates the instance */
    /* errors (errors.c) */
    tenure_error_hook error_hook;
    void *error_context;
    tenure_result last_error;
    bool hook_failure_printed; /* a failure inside the error hook went to stderr (once) */
    /* the last failure's text, "<function>: <message>" (tenure_last_error_message; "" if none) */
    char last_message[600];
    /* Without a hook a failure is printed on stderr once per call site: per distinct
     * (function name, result), the first TN_PRINTED_SITES of them (names copied, compared
     * only on a failure without a hook); past them one line says the rest are not printed. */
#define TN_PRINTED_SITES 64
    char printed_fn[TN_PRINTED_SITES][48];
    tenure_result printed_r[TN_PRINTED_SITES];
    unsigned printed_count;
    bool printed_full;
};

typedef struct tn_vec {
    void *data;
    size_t count, cap, elem;
} tn_vec;

/* ---- current.c: tenure__current (include/tenure.h), the calling thread's current attachment,
 * kept by threads/. While the thread uses no instance it points at tn_no_attachment, whose rt
 * (address 1) is no instance's. ---- */
extern tenure__mutator tn_no_attachment;

/* ---- errors.c: the one place failures are reported ----
 * Record r as rt's last error and pass the message to the error hook, inside a callback frame
 * of kind TN_CB_ERROR_HOOK, with the instance lock held (taken through rt->services.calls).
 * Returns r. rt may be NULL (then only r is returned). */
tenure_result tn_api_fail(tenure_runtime *rt, tenure_result r, const char *function, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

/* ---- callbacks.c: which callback is running, and what it may call ----
 *
 * Every call out of the library into the embedder's code is bracketed by a callback frame: a
 * record on the calling thread's own stack of frames (thread-local, no allocation) naming the
 * instance and the kind of callback. Every public function that some callback must not call
 * checks the frames at entry (tn_cb_refused: one thread-local load and a branch when no
 * callback runs on the thread) and refuses with TENURE_STATE through the error hook. The rules
 * (one row per kind, the table in callbacks.c and "Callbacks" in tenure.h):
 *
 *   kind                          may not (besides what the kind itself says)
 *   finalizer                     destroy, wait for finalizers, detach its thread
 *   error hook, event listener,   allocate, collect or run finalizers, change the instance
 *   profiler object_allocated(_   (handles, roots added, types, frozen segments, sessions or
 *   sampled), handle_*, shutdown, profilers started, identity hashes, finalization, threads),
 *   heap-walk visitor             detach, destroy
 *   root scanner, type trace,     the same, and walk or verify the heap (the first three also
 *   refcount, GC callback,        tenure_object_references: TN_OP_READ_REFS)
 *   profiler GC callbacks
 *   tenure_object_references fn   as a heap-walk visitor
 *
 * Queries (object type/size/generation, stats, handles read, generation bounds, errors) and
 * removals (tenure_root_area_remove, tenure_root_scanner_remove, tenure_profiler_detach,
 * tenure_session_stop) are allowed from every callback: a removal asked for while the list
 * it removes from is being walked marks the entry (it gets no further call) and the entry is
 * unlinked and freed when the walk ends. The inline allocator needs no check: tn_cb_enter
 * closes the calling thread's allocation context (the kinds that may not allocate and may run
 * outside a collection), so allocation takes the slow path, which checks.
 *
 * A callback must return normally (a longjmp out of it leaves a dangling frame). */
typedef enum tn_cb_kind {
    TN_CB_ERROR_HOOK,
    TN_CB_LISTENER,
    TN_CB_PROF_ALLOC,  /* object_allocated */
    TN_CB_PROF_HANDLE, /* handle_created, handle_destroyed */
    TN_CB_PROF_GC,     /* gc_started, moved/surviving/root references, finalizeable queued, gc_finished */
    TN_CB_PROF_SHUTDOWN,
    TN_CB_ROOT_SCANNER,
    TN_CB_TRACE, /* a type's trace callback */
    TN_CB_REFCOUNT,
    TN_CB_GC_CALLBACK,
    TN_CB_HEAP_VISITOR,
    TN_CB_FINALIZER,
    TN_CB_REFERENCE_FN, /* tenure_object_references' callback */
    TN_CB_PROF_SAMPLE,  /* object_allocated_sampled (runs without the instance lock) */
    TN_CB_KINDS
} tn_cb_kind;

/* What a public function does, for the check at its entry (a mask). */
enum {
    TN_OP_ALLOC = 1u << 0,
    TN_OP_COLLECT = 1u << 1,  /* collect, run finalizers, add memory pressure */
    TN_OP_WAIT_FIN = 1u << 2, /* tenure_wait_for_pending_finalizers */
    TN_OP_CHANGE = 1u << 3,   /* handles, roots added, types, frozen segments, sessions and profilers
                                 started, identity hashes, finalization registration, thread attach */
    TN_OP_WALK = 1u << 4,     /* tenure_heap_walk, tenure_verify_heap */
    TN_OP_DETACH = 1u << 5,   /* tenure_thread_detach */
    TN_OP_DESTROY = 1u << 6,
    TN_OP_READ_REFS = 1u << 7, /* tenure_object_references: not while the heap may be half moved */
    TN_OP_REMOVE = 1u << 8     /* the removals: not from a type's trace callback, which may run on
                                  a GC helper while thread 0 walks the lists removed from */
};

typedef struct tn_cb_frame {
    struct tn_cb_frame *prev; /* the thread's enclosing frame */
    const struct tenure_runtime *rt;
    tn_cb_kind kind;
    struct tn_mutator *closed; /* the thread's mutator whose context it closed, or NULL */
} tn_cb_frame;

extern __thread tn_cb_frame *tn_cb_top __attribute__((tls_model("initial-exec")));

/* Push / pop a frame only (callbacks that run with every context ended: type trace). */
static inline void tn_cb_push(tn_cb_frame *f, const struct tenure_runtime *rt, tn_cb_kind kind) {
    f->prev = tn_cb_top;
    f->rt = rt;
    f->kind = kind;
    f->closed = NULL;
    tn_cb_top = f;
}
static inline void tn_cb_pop(tn_cb_frame *f) { tn_cb_top = f->prev; }
/* tn_cb_enter, tn_cb_leave: inline after struct tenure_runtime (runtime.h), whose
 * rt->services they read. */
/* True if a callback of `kind` for rt runs on the calling thread (in any enclosing frame). */
bool tn_cb_inside(const tenure_runtime *rt, tn_cb_kind kind);
/* The check at the entry of a public function doing `op`: true if some callback of rt running
 * on this thread may not do it (then reported: TENURE_STATE, through the hook). */
bool tn_cb_refuse(tenure_runtime *rt, unsigned op, const char *function);
/* A call that collects (TN_OP_COLLECT, but waiting for the finalizers) from a thread not
 * attached to rt: reported (TENURE_STATE, "not attached") and true. One compare when the
 * thread's current attachment is rt's. */
bool tn_cb_refuse_unattached(tenure_runtime *rt, const char *function);
static inline bool tn_cb_refused(tenure_runtime *rt, unsigned op, const char *function) {
    if ((op & TN_OP_COLLECT) && !(op & TN_OP_WAIT_FIN) && TENURE__UNLIKELY(tenure__current->rt != rt) &&
        tn_cb_refuse_unattached(rt, function))
        return true;
    return TENURE__UNLIKELY(tn_cb_top != NULL) && tn_cb_refuse(rt, op, function);
}

/* ---- mem.c: the library's own allocations (never malloc, calloc, realloc, strdup,
 * aligned_alloc directly: these check that no allocation happens inside a GC pause, in checked builds, and
 * let tests inject faults) ---- */
#define TN_HERE_STR_(x) #x
#define TN_HERE_STR(x) TN_HERE_STR_(x)
#define TN_HERE __FILE__ ":" TN_HERE_STR(__LINE__)
void *tn_malloc_at(size_t size, const char *where);
void *tn_calloc_at(size_t count, size_t size, const char *where);
void *tn_realloc_at(void *p, size_t size, const char *where);
void *tn_aligned_alloc_at(size_t alignment, size_t size, const char *where);
char *tn_strdup_at(const char *s, const char *where);
#define tn_malloc(size) tn_malloc_at((size), TN_HERE)
#define tn_calloc(count, size) tn_calloc_at((count), (size), TN_HERE)
#define tn_realloc(p, size) tn_realloc_at((p), (size), TN_HERE)
#define tn_strdup(s) tn_strdup_at((s), TN_HERE)
#define tn_aligned_alloc(alignment, size) tn_aligned_alloc_at((alignment), (size), TN_HERE)
/* The GC pause of rt runs on the calling thread from begin to end (gc/collect.c): internal
 * allocations there are a bug (checked builds abort), except inside callbacks it calls. */
void tn_mem_pause_begin(const tenure_runtime *rt);
void tn_mem_pause_end(void);
bool tn_mem_in_pause(void);
/* Tests only: the nth internal allocation of the calling thread from now fails (1: the next
 * one), and with and_after every one after it too; tn_mem_fault(0, false) turns it off. */
void tn_mem_fault(uint64_t nth, bool and_after);

/* ---- vec.c: a growable array ---- */
void tn_vec_init(tn_vec *v, size_t elem);
bool tn_vec_reserve(tn_vec *v, size_t cap);
void *tn_vec_push(tn_vec *v);          /* NULL if out of memory */
void *tn_vec_push_reserved(tn_vec *v); /* NULL if full: never allocates (inside a GC pause) */
void tn_vec_free(tn_vec *v);
static inline void *tn_vec_at(const tn_vec *v, size_t i) { return (char *)v->data + i * v->elem; }

/* One turn of a spin-wait: tells the CPU that this thread waits for another (x86 `pause`,
 * Arm `yield`), so that a sibling hyperthread gets the core and the loop does not flood the
 * memory system (threads/threads.c lock_after_spinning, gc/team.c tn_gc_spin_until). */
static inline void tn_cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ volatile("yield");
#endif
}

/* 1 under ThreadSanitizer, which cannot start a thread in the child of a multi-threaded fork
 * (its registry still holds the threads that are gone): the finalizer thread and server GC's
 * helpers are then not restarted there. */
#if defined(__SANITIZE_THREAD__)
#define TN_UNDER_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define TN_UNDER_TSAN 1
#endif
#endif
#ifndef TN_UNDER_TSAN
#define TN_UNDER_TSAN 0
#endif

#endif
