/*
 * test_callbacks.c - the callback rules ("Callbacks" in tenure.h): what each kind of callback
 * may call, enforced.
 *
 *   forbid_<site>_<op>   every call a kind of callback may not make is refused (TENURE_STATE,
 *                        the instance stays usable): the error hook, listeners (outside and
 *                        inside a GC), profiler callbacks (allocation, handles, GC, shutdown),
 *                        root scanners, type trace callbacks, the refcount callback, the GC
 *                        callback, heap-walk visitors and finalizers (on the program's thread
 *                        and on the finalizer thread)
 *   allow_<site>_<op>    every other pair: the call works (a finalizer allocates, collects,
 *                        takes handles; a listener, a hook or a visitor walks the heap)
 *   bug_*                the re-entrancy bugs of issue 12 (finding 6)
 *   ok_*                 what callbacks may do keeps working (finalizers allocate and collect,
 *                        listeners and profilers query, removals from callbacks are deferred)
 *
 * Each case runs in its own child process, bounded by alarm(): a deadlock or a crash fails that
 * case only, and its output is shown. `tenure_test_callbacks <case>` runs one case in-process.
 */
#include "test_util.h"
#include "tenure_events.h"
#include "tenure_profiler.h"

#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/wait.h>

/* ------------------------------------------------------------------ the instance of a case */

typedef struct traced {
    tenure_header header;
    void *ref;
} traced;

static struct {
    tenure_runtime *rt;
    const tenure_type *node_t, *arr_t, *fin_t, *traced_t;
    void *slots[8]; /* a root area: [0] a node, [1] a traced object */
    tenure_root_area *area;
    tenure_handle *spare; /* a handle an operation may free */
    tt_errlog log;
    int op;    /* what the callback under test does */
    int at;    /* which callback that is (AT_*) */
    int armed; /* the callback does it once (atomic) */
    int ran, refused;
    tenure_result last_error; /* after the operation */
    int calls;
    void (*fin_action)(tenure_runtime *rt, void *obj);
} T;

/* Where the armed operation runs: only in the callback under test (a GC calls several). */
enum {
    AT_HOOK,
    AT_LISTENER,
    AT_PROF_ALLOC,
    AT_PROF_HANDLE,
    AT_PROF_GC,
    AT_PROF_SHUTDOWN,
    AT_SCANNER,
    AT_TRACE,
    AT_REFCOUNT,
    AT_GC_CALLBACK,
    AT_VISITOR,
    AT_FINALIZER
};
static void run_armed(int at);

static void fin_fn(tenure_runtime *rt, void *obj) {
    if (T.fin_action)
        T.fin_action(rt, obj);
    else
        run_armed(AT_FINALIZER);
}

static void trace_fn(void *obj, tenure_visitor *v) {
    tenure_visit(v, &((traced *)obj)->ref);
    run_armed(AT_TRACE);
}

static void setup(unsigned finalize_mode) {
    tenure_config cfg;
    tt_config(&cfg);
    cfg.GCFinalizeMode = finalize_mode;
    memset(&T, 0, sizeof T);
    T.rt = tt_create(&cfg, &T.log);
    T.node_t = tt_register_node(T.rt);
    tenure_type_desc a = {.name = "bytes",
                          .size = sizeof(tenure_array_header),
                          .elem_size = 1,
                          .flags = TENURE_TYPE_ARRAY | TENURE_TYPE_NO_REFS};
    tenure_type_desc f = {.name = "finalizable",
                          .size = 16,
                          .flags = TENURE_TYPE_FINALIZABLE | TENURE_TYPE_NO_REFS,
                          .finalize = fin_fn};
    tenure_type_desc t = {.name = "traced", .size = sizeof(traced), .trace = trace_fn};
    T.arr_t = tenure_type_register(T.rt, &a);
    T.fin_t = tenure_type_register(T.rt, &f);
    T.traced_t = tenure_type_register(T.rt, &t);
    TT_CHECK(T.arr_t && T.fin_t && T.traced_t);
    T.area = tenure_root_area_add(T.rt, T.slots, 8);
    TT_CHECK(T.area != NULL);
    T.slots[0] = tt_node_new(T.rt, T.node_t, 1);
    T.slots[1] = tenure_alloc(T.rt, T.traced_t);
    TT_CHECK(T.slots[1] != NULL);
    T.spare = tenure_handle_new(T.rt, TENURE_HANDLE_STRONG, T.slots[0]);
    TT_CHECK(T.spare != NULL);
}

/* The instance still works: it allocates (the inline path too), collects, and goes. */
static void check_usable_and_destroy(void) {
    for (int i = 0; i < 100; i++)
        TT_CHECK(tenure_alloc(T.rt, T.node_t) != NULL, "allocation after the case failed");
    TT_CHECK(tenure_alloc_array(T.rt, T.arr_t, 100) != NULL);
    TT_CHECK_RESULT(tenure_collect(T.rt, -1, 0), TENURE_OK);
    TT_CHECK_NODE(T.rt, T.node_t, T.slots[0], 1);
    tenure_destroy(T.rt);
    T.rt = NULL;
}

/* ------------------------------------------------------------------ the operations */

enum {
    OP_ALLOC, /* the inline allocator: must be refused too */
    OP_ALLOC_ARRAY,
    OP_COLLECT,
    OP_WAIT_FIN,
    OP_RUN_FIN,
    OP_PRESSURE,
    OP_HANDLE_NEW,
    OP_HANDLE_FREE,
    OP_AREA_ADD,
    OP_SCANNER_ADD,
    OP_TYPE_REGISTER,
    OP_SESSION_START,
    OP_PROFILER_ATTACH,
    OP_IDENTITY_HASH,
    OP_THREAD_DETACH,
    OP_DESTROY,
    OP_HEAP_WALK, /* refused only in callbacks of a collection */
    OP_VERIFY,
    OP_COUNT
};
static const char *const op_names[OP_COUNT] = {
    "alloc",           "alloc_array",   "collect",         "wait_for_finalizers", "run_finalizers",
    "memory_pressure", "handle_new",    "handle_free",     "root_area_add",       "root_scanner_add",
    "type_register",   "session_start", "profiler_attach", "identity_hash",       "thread_detach",
    "destroy",         "heap_walk",     "verify_heap"};

static void noop_scan(tenure_runtime *rt, tenure_visitor *v, void *c) { (void)rt, (void)v, (void)c; }
static void noop_listener(const tenure_event *e, void *c) { (void)e, (void)c; }
static int count_visit(void *o, const tenure_type *t, size_t s, int g, void *c) {
    (void)o, (void)t, (void)s, (void)g;
    if (c)
        (*(size_t *)c)++;
    return 0;
}

/* Do `op` from inside a callback; true if it was refused (TENURE_STATE) and did nothing. */
static bool do_op(int op) {
    tenure_runtime *rt = T.rt;
    tenure_clear_error(rt);
    tenure_result r = TENURE_STATE;
    const void *made = NULL;
    static const tenure_profiler_callbacks no_callbacks;
    tenure_type_desc d = {.name = "late", .size = 16, .flags = TENURE_TYPE_NO_REFS};
    switch (op) {
    case OP_ALLOC: made = tenure_alloc(rt, T.node_t); break;
    case OP_ALLOC_ARRAY: made = tenure_alloc_array(rt, T.arr_t, 8); break;
    case OP_COLLECT: r = tenure_collect(rt, 0, 0); break;
    case OP_WAIT_FIN: r = tenure_wait_for_pending_finalizers(rt); break;
    case OP_RUN_FIN: tenure_run_pending_finalizers(rt); break;
    case OP_PRESSURE: r = tenure_add_memory_pressure(rt, 1u << 20); break;
    case OP_HANDLE_NEW: made = tenure_handle_new(rt, TENURE_HANDLE_STRONG, NULL); break;
    case OP_HANDLE_FREE: r = tenure_handle_free(rt, T.spare); break;
    case OP_AREA_ADD: made = tenure_root_area_add(rt, T.slots + 4, 2); break;
    case OP_SCANNER_ADD: made = tenure_root_scanner_add(rt, noop_scan, NULL); break;
    case OP_TYPE_REGISTER: made = tenure_type_register(rt, &d); break;
    case OP_SESSION_START: made = tenure_session_start_listener(rt, TENURE_KW_GC, 4, noop_listener, NULL); break;
    case OP_PROFILER_ATTACH: made = tenure_profiler_attach(rt, &no_callbacks, TENURE_PROFILE_GC, NULL); break;
    case OP_IDENTITY_HASH: made = tenure_identity_hash(rt, T.slots[0]) ? "hashed" : NULL; break;
    case OP_THREAD_DETACH: r = tenure_thread_detach(rt); break;
    case OP_DESTROY: tenure_destroy(rt); break;
    case OP_HEAP_WALK: r = tenure_heap_walk(rt, count_visit, NULL); break;
    case OP_VERIFY: r = tenure_verify_heap(rt); break;
    }
    if (op == OP_DESTROY && tenure_last_error(rt) != TENURE_STATE) {
        T.rt = NULL; /* destroyed, as allowed */
        T.last_error = TENURE_OK;
        return false;
    }
    T.last_error = tenure_last_error(rt);
    return r == TENURE_STATE && made == NULL && T.last_error == TENURE_STATE;
}

static void run_armed(int at) {
    if (at != T.at || !__atomic_exchange_n(&T.armed, 0, __ATOMIC_ACQ_REL))
        return;
    bool refused = do_op(T.op);
    __atomic_store_n(&T.refused, refused, __ATOMIC_RELEASE);
    __atomic_store_n(&T.ran, 1, __ATOMIC_RELEASE);
}

static void arm(int op, int at) {
    T.op = op;
    T.at = at;
    T.ran = T.refused = 0;
    __atomic_store_n(&T.armed, 1, __ATOMIC_RELEASE);
}

/* ------------------------------------------------------------------ the sites */

static void op_hook(tenure_runtime *rt, tenure_result r, const char *fn, const char *msg, void *c) {
    (void)rt, (void)r, (void)fn, (void)msg, (void)c;
    run_armed(AT_HOOK);
}
static void trigger_hook(void) {
    tenure_set_error_hook(T.rt, op_hook, NULL);
    TT_CHECK(tenure_object_size(T.rt, (void *)T.slots) == 0, "not an object, yet a size");
    tenure_set_error_hook(T.rt, tt_hook, &T.log);
}

static void op_listener(const tenure_event *e, void *c) {
    if (!strcmp(e->desc->name, (const char *)c))
        run_armed(AT_LISTENER);
}
static void trigger_listener(void) {
    tenure_session *s = tenure_session_start_listener(T.rt, TENURE_KW_GC_HANDLE, 4, op_listener, "SetGCHandle");
    TT_CHECK(s != NULL);
    tenure_handle *h = tenure_handle_new(T.rt, TENURE_HANDLE_WEAK_SHORT, NULL); /* emits SetGCHandle */
    TT_CHECK(h != NULL);
    TT_CHECK_RESULT(tenure_session_stop(T.rt, s), TENURE_OK);
    TT_CHECK_RESULT(tenure_handle_free(T.rt, h), TENURE_OK);
}
static void trigger_listener_gc(void) {
    tenure_session *s = tenure_session_start_listener(T.rt, TENURE_KW_GC, 4, op_listener, "GCStart_V2");
    TT_CHECK(s != NULL);
    tt_collect(T.rt, -1, 0);
    TT_CHECK_RESULT(tenure_session_stop(T.rt, s), TENURE_OK);
}

static void op_allocated(void *c, void *obj, const tenure_type *t) {
    (void)c, (void)obj, (void)t, run_armed(AT_PROF_ALLOC);
}
static void op_handle_created(void *c, tenure_handle *h, void *obj) {
    (void)c, (void)h, (void)obj, run_armed(AT_PROF_HANDLE);
}
static void op_gc_started(void *c, const int g[5], tenure_gc_reason_kind k) {
    (void)c, (void)g, (void)k, run_armed(AT_PROF_GC);
}
static void op_shutdown(void *c) { (void)c, run_armed(AT_PROF_SHUTDOWN); }

static void trigger_profiler(unsigned mask, void (*trigger)(void)) {
    tenure_profiler_callbacks cb = {.object_allocated = op_allocated,
                                    .handle_created = op_handle_created,
                                    .gc_started = op_gc_started};
    tenure_profiler *p = tenure_profiler_attach(T.rt, &cb, mask, NULL);
    TT_CHECK(p != NULL);
    trigger();
    TT_CHECK_RESULT(tenure_profiler_detach(T.rt, p), TENURE_OK);
}
static void alloc_one(void) { TT_CHECK(tenure_alloc(T.rt, T.node_t) != NULL); }
static void handle_one(void) {
    tenure_handle *h = tenure_handle_new(T.rt, TENURE_HANDLE_STRONG, NULL);
    TT_CHECK(h != NULL);
    TT_CHECK_RESULT(tenure_handle_free(T.rt, h), TENURE_OK);
}
static void collect_all(void) { tt_collect(T.rt, -1, 0); }
static void trigger_prof_alloc(void) { trigger_profiler(TENURE_PROFILE_ALLOCATIONS, alloc_one); }
static void trigger_prof_handle(void) { trigger_profiler(TENURE_PROFILE_HANDLES, handle_one); }
static void trigger_prof_gc(void) { trigger_profiler(TENURE_PROFILE_GC, collect_all); }
static void trigger_prof_shutdown(void) {
    tenure_profiler_callbacks cb = {.shutdown = op_shutdown};
    TT_CHECK(tenure_profiler_attach(T.rt, &cb, TENURE_PROFILE_GC, NULL) != NULL);
    tenure_destroy(T.rt);
    T.rt = NULL;
}

static void op_scan(tenure_runtime *rt, tenure_visitor *v, void *c) {
    (void)rt, (void)v, (void)c, run_armed(AT_SCANNER);
}
static void trigger_scanner(void) {
    tenure_root_scanner *s = tenure_root_scanner_add(T.rt, op_scan, NULL);
    TT_CHECK(s != NULL);
    collect_all();
    TT_CHECK_RESULT(tenure_root_scanner_remove(T.rt, s), TENURE_OK);
}
static void trigger_trace(void) { collect_all(); }
static int op_refcount(void *obj, void *c) {
    (void)obj, (void)c, run_armed(AT_REFCOUNT);
    return 1;
}
static void trigger_refcount(void) {
    tenure_set_refcount_callback(T.rt, op_refcount, NULL);
    tenure_handle *h = tenure_handle_new(T.rt, TENURE_HANDLE_REFCOUNTED, T.slots[0]);
    TT_CHECK(h != NULL);
    collect_all();
    TT_CHECK_RESULT(tenure_handle_free(T.rt, h), TENURE_OK);
    tenure_set_refcount_callback(T.rt, NULL, NULL);
}
static void op_gc_callback(tenure_runtime *rt, const tenure_gc_info *i, void *c) {
    (void)rt, (void)i, (void)c, run_armed(AT_GC_CALLBACK);
}
static void trigger_gc_callback(void) {
    tenure_set_gc_callback(T.rt, op_gc_callback, NULL);
    collect_all();
    tenure_set_gc_callback(T.rt, NULL, NULL);
}
static int op_visit(void *o, const tenure_type *t, size_t s, int g, void *c) {
    (void)o, (void)t, (void)s, (void)g, (void)c;
    run_armed(AT_VISITOR);
    return 0;
}
static void trigger_visitor(void) { TT_CHECK_RESULT(tenure_heap_walk(T.rt, op_visit, NULL), TENURE_OK); }
static void trigger_finalizer(void) {
    TT_CHECK(tenure_alloc(T.rt, T.fin_t) != NULL); /* unrooted: found dead by the next full GC */
    if (tenure_run_pending_finalizers(T.rt) == 0 && !__atomic_load_n(&T.ran, __ATOMIC_ACQUIRE)) {
        collect_all();
        tenure_run_pending_finalizers(T.rt);
    }
}
static void trigger_finalizer_thread(void) {
    TT_CHECK(tenure_alloc(T.rt, T.fin_t) != NULL);
    TT_CHECK_RESULT(tenure_wait_for_pending_finalizers(T.rt), TENURE_OK);
}

enum { RULE_READ_ONLY, RULE_GC_TIME, RULE_FINALIZER };
typedef struct site {
    const char *name;
    int at;
    int rule;
    unsigned finalize_mode;
    void (*trigger)(void);
} site;
static const site sites[] = {
    {"error_hook", AT_HOOK, RULE_READ_ONLY, 1, trigger_hook},
    {"listener", AT_LISTENER, RULE_READ_ONLY, 1, trigger_listener},
    {"listener_in_gc", AT_LISTENER, RULE_GC_TIME, 1, trigger_listener_gc},
    {"profiler_object_allocated", AT_PROF_ALLOC, RULE_READ_ONLY, 1, trigger_prof_alloc},
    {"profiler_handle_created", AT_PROF_HANDLE, RULE_READ_ONLY, 1, trigger_prof_handle},
    {"profiler_gc_started", AT_PROF_GC, RULE_GC_TIME, 1, trigger_prof_gc},
    {"profiler_shutdown", AT_PROF_SHUTDOWN, RULE_READ_ONLY, 1, trigger_prof_shutdown},
    {"root_scanner", AT_SCANNER, RULE_GC_TIME, 1, trigger_scanner},
    {"type_trace", AT_TRACE, RULE_GC_TIME, 1, trigger_trace},
    {"refcount", AT_REFCOUNT, RULE_GC_TIME, 1, trigger_refcount},
    {"gc_callback", AT_GC_CALLBACK, RULE_GC_TIME, 1, trigger_gc_callback},
    {"heap_visitor", AT_VISITOR, RULE_READ_ONLY, 1, trigger_visitor},
    {"finalizer", AT_FINALIZER, RULE_FINALIZER, 1, trigger_finalizer},
    {"finalizer_thread", AT_FINALIZER, RULE_FINALIZER, 0, trigger_finalizer_thread},
};
#define NSITES (sizeof sites / sizeof sites[0])

static bool forbidden(int rule, int op) {
    if (rule == RULE_FINALIZER)
        return op == OP_WAIT_FIN || op == OP_THREAD_DETACH || op == OP_DESTROY;
    if (rule == RULE_READ_ONLY)
        return op != OP_HEAP_WALK && op != OP_VERIFY;
    return true;
}

static void forbid_case(const site *s, int op) {
    setup(s->finalize_mode);
    arm(op, s->at);
    s->trigger();
    TT_CHECK(__atomic_load_n(&T.ran, __ATOMIC_ACQUIRE), "the %s callback did not run", s->name);
    TT_CHECK(__atomic_load_n(&T.refused, __ATOMIC_ACQUIRE), "%s from the %s callback was not refused (TENURE_STATE)",
             op_names[op], s->name);
    if (T.rt)
        check_usable_and_destroy();
}

/* The calls a callback may make keep working (the pairs the rules allow: a finalizer's
 * allocations, collections, handles...; a listener's or a hook's heap walk). */
static void allow_case(const site *s, int op) {
    setup(s->finalize_mode);
    arm(op, s->at);
    s->trigger();
    TT_CHECK(__atomic_load_n(&T.ran, __ATOMIC_ACQUIRE), "the %s callback did not run", s->name);
    TT_CHECK(!__atomic_load_n(&T.refused, __ATOMIC_ACQUIRE) && T.last_error == TENURE_OK,
             "%s from the %s callback failed: %s", op_names[op], s->name, tenure_strerror(T.last_error));
    if (T.rt)
        check_usable_and_destroy();
}

/* ------------------------------------------------------------------ the bugs of finding 6 */

static void destroy_now(void) { tenure_destroy(T.rt); }
static void destroying_hook(tenure_runtime *rt, tenure_result r, const char *fn, const char *msg, void *c) {
    (void)r, (void)fn, (void)msg, (void)c;
    T.calls++;
    tenure_destroy(rt);
}

/* tenure_destroy from the error hook: deadlocked (mode 0) or freed the instance under the
 * failing call (modes 1, 2). */
static void bug_destroy_from_hook(unsigned mode) {
    setup(mode);
    tenure_set_error_hook(T.rt, destroying_hook, NULL);
    TT_CHECK(tenure_object_size(T.rt, (void *)T.slots) == 0);
    TT_CHECK(T.calls == 1, "the hook ran %d times", T.calls);
    TT_CHECK(tenure_last_error(T.rt) == TENURE_STATE, "the destroy was not refused");
    tenure_set_error_hook(T.rt, tt_hook, &T.log);
    check_usable_and_destroy();
}
static void bug_destroy_from_hook_mode0(void) { bug_destroy_from_hook(0); }
static void bug_destroy_from_hook_mode1(void) { bug_destroy_from_hook(1); }
static void bug_destroy_from_hook_mode2(void) { bug_destroy_from_hook(2); }

static void destroying_listener(const tenure_event *e, void *c) {
    (void)e, (void)c;
    T.calls++;
    destroy_now();
}
static void bug_destroy_from_listener(unsigned mode) {
    setup(mode);
    tenure_session *s = tenure_session_start_listener(T.rt, TENURE_KW_GC_HANDLE, 4, destroying_listener, NULL);
    TT_CHECK(s != NULL);
    tenure_handle *h = tenure_handle_new(T.rt, TENURE_HANDLE_STRONG, NULL);
    TT_CHECK(h != NULL && T.calls == 1);
    TT_CHECK(T.log.last == TENURE_STATE && !strcmp(T.log.function, "tenure_destroy"), "not refused: %s %s",
             T.log.function, T.log.message);
    TT_CHECK_RESULT(tenure_session_stop(T.rt, s), TENURE_OK);
    check_usable_and_destroy();
}
static void bug_destroy_from_listener_mode0(void) { bug_destroy_from_listener(0); }
static void bug_destroy_from_listener_mode1(void) { bug_destroy_from_listener(1); }
static void bug_destroy_from_listener_mode2(void) { bug_destroy_from_listener(2); }

static tenure_profiler *self_profiler;
static void detaching_allocated(void *c, void *obj, const tenure_type *t) {
    (void)c, (void)obj, (void)t;
    T.calls++;
    TT_CHECK_RESULT(tenure_profiler_detach(T.rt, self_profiler), TENURE_OK);
}
/* Detaching a profiler from its own object_allocated: the dispatch loop read the freed one. */
static void bug_detach_profiler_in_object_allocated(void) {
    setup(1);
    tenure_profiler_callbacks cb = {.object_allocated = detaching_allocated};
    tenure_profiler_callbacks quiet = {0};
    TT_CHECK(tenure_profiler_attach(T.rt, &quiet, TENURE_PROFILE_ALLOCATIONS, NULL) != NULL); /* after it in the list */
    self_profiler = tenure_profiler_attach(T.rt, &cb, TENURE_PROFILE_ALLOCATIONS, NULL);
    TT_CHECK(self_profiler != NULL);
    for (int i = 0; i < 10; i++)
        alloc_one();
    TT_CHECK(T.calls == 1, "object_allocated ran %d times after its profiler detached", T.calls);
    TT_CHECK(tenure_profiler_detach(T.rt, self_profiler) == TENURE_INVALID_ARGUMENT, "detached twice");
    check_usable_and_destroy();
}

static tenure_session *self_session;
static void stopping_listener(const tenure_event *e, void *c) {
    (void)e, (void)c;
    if (!self_session)
        return; /* the rundown, inside tenure_session_start_listener */
    T.calls++;
    TT_CHECK_RESULT(tenure_session_stop(T.rt, self_session), TENURE_OK);
}
/* Stopping a session from its own listener: the dispatch loop read the freed session. */
static void bug_stop_session_in_own_listener(void) {
    setup(1);
    self_session = tenure_session_start_listener(T.rt, TENURE_KW_GC, 4, stopping_listener, NULL);
    TT_CHECK(self_session != NULL);
    collect_all();
    collect_all();
    TT_CHECK(T.calls == 1, "the listener ran %d times after its session stopped", T.calls);
    TT_CHECK(tenure_session_stop(T.rt, self_session) == TENURE_INVALID_ARGUMENT, "stopped twice");
    check_usable_and_destroy();
}

static tenure_root_scanner *scanner_a, *scanner_b;
static int b_calls;
static void removing_scan(tenure_runtime *rt, tenure_visitor *v, void *c) {
    (void)v, (void)c;
    T.calls++;
    TT_CHECK_RESULT(tenure_root_scanner_remove(rt, scanner_a), TENURE_OK); /* itself */
    TT_CHECK_RESULT(tenure_root_scanner_remove(rt, scanner_b), TENURE_OK); /* the next one */
}
static void counting_scan(tenure_runtime *rt, tenure_visitor *v, void *c) { (void)rt, (void)v, (void)c, b_calls++; }
/* Removing root scanners (itself, the next one) during a GC: the scan loop used freed ones. */
static void bug_remove_scanner_during_gc(void) {
    setup(1);
    scanner_b = tenure_root_scanner_add(T.rt, counting_scan, NULL);
    scanner_a = tenure_root_scanner_add(T.rt, removing_scan, NULL); /* scanned first */
    TT_CHECK(scanner_a && scanner_b);
    collect_all();
    TT_CHECK(T.calls == 1 && b_calls == 0, "scanner calls %d, %d", T.calls, b_calls);
    collect_all();
    TT_CHECK(T.calls == 1 && b_calls == 0, "removed scanners still called: %d, %d", T.calls, b_calls);
    TT_CHECK(tenure_root_scanner_remove(T.rt, scanner_a) == TENURE_INVALID_ARGUMENT, "removed twice");
    check_usable_and_destroy();
}

/* Removing a root area from the profiler's root_references (called while the area's slots are
 * walked, every 1024 roots): the walk went on through the freed area. */
static void **big_slots;
static void removing_roots(void *c, size_t n, void *const *ids, const tenure_root_kind *k, const uint32_t *f,
                           const uintptr_t *r) {
    (void)c, (void)n, (void)ids, (void)k, (void)f, (void)r;
    if (T.calls++ == 0)
        TT_CHECK_RESULT(tenure_root_area_remove(T.rt, (tenure_root_area *)T.spare), TENURE_OK);
}
static void bug_remove_area_in_root_references(void) {
    setup(1);
    big_slots = calloc(4096, sizeof *big_slots);
    for (int i = 0; i < 4096; i++)
        big_slots[i] = T.slots[0];
    tenure_root_area *big = tenure_root_area_add(T.rt, big_slots, 4096);
    TT_CHECK(big != NULL);
    T.spare = (tenure_handle *)big; /* the area the callback removes */
    tenure_profiler_callbacks cb = {.root_references = removing_roots};
    tenure_profiler *p = tenure_profiler_attach(T.rt, &cb, TENURE_PROFILE_GC, NULL);
    TT_CHECK(p != NULL);
    collect_all();
    TT_CHECK(T.calls >= 1);
    TT_CHECK(tenure_root_area_remove(T.rt, big) == TENURE_INVALID_ARGUMENT, "removed twice");
    TT_CHECK_RESULT(tenure_profiler_detach(T.rt, p), TENURE_OK);
    check_usable_and_destroy();
    free(big_slots);
}

static void destroying_shutdown(void *c) {
    (void)c;
    T.calls++;
    destroy_now();
}
/* tenure_destroy from the profiler's shutdown callback: destroyed twice. */
static void bug_destroy_in_profiler_shutdown(void) {
    setup(1);
    tenure_profiler_callbacks cb = {.shutdown = destroying_shutdown};
    TT_CHECK(tenure_profiler_attach(T.rt, &cb, TENURE_PROFILE_GC, NULL) != NULL);
    tenure_set_error_hook(T.rt, tt_hook, &T.log);
    tenure_destroy(T.rt);
    TT_CHECK(T.calls == 1 && T.log.last == TENURE_STATE, "the nested destroy was not refused");
    T.rt = NULL;
}

static void allocating_allocated(void *c, void *obj, const tenure_type *t) {
    (void)c, (void)obj, (void)t;
    T.calls++;
    TT_CHECK(tenure_alloc(T.rt, T.node_t) == NULL, "allocation from object_allocated");
}
/* Allocating from object_allocated: every allocation called it again, until the stack overflowed. */
static void bug_alloc_in_object_allocated(void) {
    setup(1);
    tenure_profiler_callbacks cb = {.object_allocated = allocating_allocated};
    tenure_profiler *p = tenure_profiler_attach(T.rt, &cb, TENURE_PROFILE_ALLOCATIONS, NULL);
    TT_CHECK(p != NULL);
    for (int i = 0; i < 5; i++)
        alloc_one();
    TT_CHECK(T.calls == 5, "object_allocated ran %d times for 5 allocations", T.calls);
    TT_CHECK(T.log.last == TENURE_STATE && !strcmp(T.log.function, "tenure_alloc"));
    TT_CHECK_RESULT(tenure_profiler_detach(T.rt, p), TENURE_OK);
    check_usable_and_destroy();
}

static int saved_stderr = -1;
static void failing_hook(tenure_runtime *rt, tenure_result r, const char *fn, const char *msg, void *c) {
    (void)r, (void)fn, (void)msg, (void)c;
    if (++T.calls > 100) { /* the old behaviour: say so before the stack runs out */
        dprintf(saved_stderr, "the error hook recursed (%d calls deep)\n", T.calls);
        _exit(1);
    }
    TT_CHECK(tenure_object_size(rt, (void *)T.slots) == 0); /* fails again, inside the hook */
}
/* A hook whose own calls fail: it was called again for each, until the stack overflowed. Now a
 * failure inside the hook goes to stderr, once. */
static void bug_fail_again_in_hook(void) {
    setup(1);
    fflush(stderr);
    FILE *captured = tmpfile();
    TT_CHECK(captured != NULL);
    int saved = saved_stderr = dup(2);
    dup2(fileno(captured), 2);
    tenure_set_error_hook(T.rt, failing_hook, NULL);
    TT_CHECK(tenure_object_size(T.rt, (void *)T.slots) == 0);
    TT_CHECK(tenure_object_size(T.rt, (void *)T.slots) == 0);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    TT_CHECK(T.calls == 2, "the hook ran %d times for 2 failures", T.calls);
    char text[4096] = "";
    rewind(captured);
    size_t n = fread(text, 1, sizeof text - 1, captured);
    text[n] = 0;
    fclose(captured);
    const char *first = strstr(text, "failed inside the error hook");
    TT_CHECK(first != NULL, "nothing on stderr: \"%s\"", text);
    TT_CHECK(strstr(first + 1, "failed inside the error hook") == NULL, "printed more than once: \"%s\"", text);
    TT_CHECK(tenure_last_error(T.rt) == TENURE_INVALID_OBJECT);
    tenure_set_error_hook(T.rt, tt_hook, &T.log);
    check_usable_and_destroy();
}

static uint64_t walk_gc_count;
static int collecting_visit(void *o, const tenure_type *t, size_t s, int g, void *c) {
    (void)t, (void)s, (void)g, (void)c;
    T.calls++;
    if (T.calls == 1)
        TT_EXPECT(tenure_collect(T.rt, -1, TENURE_COLLECT_COMPACT) == TENURE_STATE, "collect from a heap-walk visitor");
    TT_CHECK(tt_stats(T.rt).gc_count == walk_gc_count, "the heap moved under the walk (visiting %p)", o);
    TT_CHECK(tenure_is_object(T.rt, o), "the walk visited %p, not an object", o);
    return 0;
}
/* A heap-walk visitor that collects: the walk went on over the moved heap. */
static void bug_heap_walk_visitor_collects(void) {
    setup(1);
    for (int i = 0; i < 2000; i++) /* garbage, so that the GC moves things */
        alloc_one();
    walk_gc_count = tt_stats(T.rt).gc_count;
    TT_CHECK_RESULT(tenure_heap_walk(T.rt, collecting_visit, NULL), TENURE_OK);
    TT_CHECK(T.calls > 2);
    check_usable_and_destroy();
}

static int allocating_visit(void *o, const tenure_type *t, size_t s, int g, void *c) {
    (void)o, (void)t, (void)s, (void)g, (void)c;
    if (T.calls++ < 3)
        TT_CHECK(tenure_alloc(T.rt, T.node_t) == NULL && tenure_alloc_array(T.rt, T.arr_t, 1000) == NULL,
                 "allocation from a heap-walk visitor");
    return 0;
}
static void bug_heap_walk_visitor_allocates(void) {
    setup(1);
    TT_CHECK_RESULT(tenure_heap_walk(T.rt, allocating_visit, NULL), TENURE_OK);
    TT_CHECK(T.log.last == TENURE_STATE);
    check_usable_and_destroy();
}

/* ------------------------------------------------------------------ what stays allowed */

static void allocating_finalizer(tenure_runtime *rt, void *obj) {
    (void)obj;
    void *keep = NULL;
    TENURE_FRAME(rt, f, keep);
    for (int i = 0; i < 200; i++) {
        keep = tenure_alloc(rt, T.node_t);
        TT_CHECK(keep != NULL, "allocation from a finalizer");
    }
    tenure_handle *h = tenure_handle_new(rt, TENURE_HANDLE_STRONG, keep);
    TT_CHECK(h != NULL);
    TT_CHECK_RESULT(tenure_collect(rt, 0, 0), TENURE_OK);
    TT_CHECK(tenure_handle_get(rt, h) == keep);
    TT_CHECK_RESULT(tenure_handle_free(rt, h), TENURE_OK);
    TENURE_FRAME_POP(rt, f);
    __atomic_fetch_add(&T.calls, 1, __ATOMIC_ACQ_REL);
}
static void ok_finalizer_allocates(unsigned mode) {
    setup(mode);
    T.log.fatal = 1;
    T.fin_action = allocating_finalizer;
    for (int i = 0; i < 3; i++)
        TT_CHECK(tenure_alloc(T.rt, T.fin_t) != NULL);
    TT_CHECK_RESULT(tenure_wait_for_pending_finalizers(T.rt), TENURE_OK);
    TT_CHECK(__atomic_load_n(&T.calls, __ATOMIC_ACQUIRE) == 3, "%d finalizers ran", T.calls);
    check_usable_and_destroy();
}
static void ok_finalizer_allocates_mode0(void) { ok_finalizer_allocates(0); }
static void ok_finalizer_allocates_mode1(void) { ok_finalizer_allocates(1); }
static void ok_finalizer_allocates_mode2(void) { ok_finalizer_allocates(2); }

static void reading_listener(const tenure_event *e, void *c) {
    (void)c;
    if (strcmp(e->desc->name, "GCStart_V2"))
        return;
    uint64_t count = 0, depth = 9;
    TT_CHECK_RESULT(tenure_event_read_u64(e, "Count", &count), TENURE_OK);
    TT_CHECK_RESULT(tenure_event_read_u64(e, "Depth", &depth), TENURE_OK);
    TT_CHECK(count == tt_stats(T.rt).gc_count && depth == 2, "GCStart %" PRIu64 " depth %" PRIu64, count, depth);
    TT_CHECK(tenure_object_size(T.rt, T.slots[0]) == sizeof(tt_node));
    TT_CHECK(tenure_handle_get(T.rt, T.spare) == T.slots[0]);
    T.calls++;
}
static void ok_listener_reads(void) {
    setup(1);
    T.log.fatal = 1;
    tenure_session *s = tenure_session_start_listener(T.rt, TENURE_KW_GC, 5, reading_listener, NULL);
    TT_CHECK(s != NULL);
    collect_all();
    collect_all();
    TT_CHECK(T.calls == 2);
    TT_CHECK_RESULT(tenure_session_stop(T.rt, s), TENURE_OK);
    check_usable_and_destroy();
}

static void querying_gc_started(void *c, const int g[5], tenure_gc_reason_kind k) {
    (void)c, (void)g, (void)k;
    TT_CHECK(tenure_generation_bounds(T.rt, NULL, 0) > 0);
    TT_CHECK(tenure_object_generation(T.rt, T.slots[0]) >= 0);
    T.calls++;
}
static void querying_gc_finished(void *c) {
    (void)c;
    TT_CHECK(tenure_object_size(T.rt, T.slots[0]) == sizeof(tt_node)); /* the root is updated */
    TT_CHECK(tenure_object_type(T.rt, T.slots[1]) == T.traced_t);
    T.calls++;
}
static void querying_allocated(void *c, void *obj, const tenure_type *t) {
    (void)c;
    TT_CHECK(tenure_object_type(T.rt, obj) == t && tenure_object_size(T.rt, obj) == sizeof(tt_node));
    T.calls += 10;
}
static void ok_profiler_queries(void) {
    setup(1);
    T.log.fatal = 1;
    tenure_profiler_callbacks cb = {.gc_started = querying_gc_started,
                                    .gc_finished = querying_gc_finished,
                                    .object_allocated = querying_allocated};
    tenure_profiler *p = tenure_profiler_attach(T.rt, &cb, TENURE_PROFILE_GC | TENURE_PROFILE_ALLOCATIONS, NULL);
    TT_CHECK(p != NULL);
    collect_all();
    alloc_one();
    TT_CHECK(T.calls == 12, "calls %d", T.calls);
    TT_CHECK_RESULT(tenure_profiler_detach(T.rt, p), TENURE_OK);
    check_usable_and_destroy();
}

static void querying_hook(tenure_runtime *rt, tenure_result r, const char *fn, const char *msg, void *c) {
    (void)fn, (void)msg, (void)c;
    TT_CHECK(tenure_last_error(rt) == r && tenure_strerror(r) != NULL);
    TT_CHECK(tenure_object_size(rt, T.slots[0]) == sizeof(tt_node));
    tenure_set_error_hook(rt, tt_hook, &T.log); /* replaces itself */
    T.calls++;
}
static void ok_hook_queries(void) {
    setup(1);
    tenure_set_error_hook(T.rt, querying_hook, NULL);
    TT_CHECK(tenure_object_size(T.rt, (void *)T.slots) == 0);
    TT_CHECK(tenure_object_size(T.rt, (void *)T.slots) == 0);
    TT_CHECK(T.calls == 1 && T.log.count == 1, "hook calls %d, then %d", T.calls, T.log.count);
    check_usable_and_destroy();
}

static size_t nested_count;
static int querying_visit(void *o, const tenure_type *t, size_t s, int g, void *c) {
    (void)c;
    TT_CHECK(tenure_object_type(T.rt, o) == t && tenure_object_size(T.rt, o) == s &&
             tenure_object_generation(T.rt, o) == g);
    if (T.calls++ == 0)
        TT_CHECK_RESULT(tenure_heap_walk(T.rt, count_visit, &nested_count), TENURE_OK); /* nested: read-only */
    return 0;
}
static void ok_heap_visitor_queries(void) {
    setup(1);
    T.log.fatal = 1;
    TT_CHECK_RESULT(tenure_heap_walk(T.rt, querying_visit, NULL), TENURE_OK);
    TT_CHECK(T.calls >= 2 && nested_count == (size_t)T.calls, "walked %d, nested %zu", T.calls, nested_count);
    check_usable_and_destroy();
}

static tenure_profiler *gc_self;
static void detaching_gc_started(void *c, const int g[5], tenure_gc_reason_kind k) {
    (void)c, (void)g, (void)k;
    T.calls++;
    TT_CHECK_RESULT(tenure_profiler_detach(T.rt, gc_self), TENURE_OK);
}
static void counting_gc_finished(void *c) { (void)c, T.calls += 100; }
static void ok_profiler_detaches_itself_in_gc(void) {
    setup(1);
    T.log.fatal = 1;
    tenure_profiler_callbacks cb = {.gc_started = detaching_gc_started, .gc_finished = counting_gc_finished};
    gc_self = tenure_profiler_attach(T.rt, &cb, TENURE_PROFILE_GC, NULL);
    TT_CHECK(gc_self != NULL);
    collect_all();
    collect_all();
    TT_CHECK(T.calls == 1, "calls after the detach: %d", T.calls);
    check_usable_and_destroy();
}

static tenure_session *other_session;
static int other_calls, stop_armed;
static void stopping_other(const tenure_event *e, void *c) {
    (void)e, (void)c;
    if (!stop_armed)
        return; /* the rundown, inside tenure_session_start_listener */
    if (T.calls++ == 0)
        TT_CHECK_RESULT(tenure_session_stop(T.rt, other_session), TENURE_OK);
}
static void counting_listener(const tenure_event *e, void *c) { (void)e, (void)c, other_calls++; }
static void ok_listener_stops_other_session(void) {
    setup(1);
    T.log.fatal = 1;
    other_session = tenure_session_start_listener(T.rt, TENURE_KW_GC, 4, counting_listener, NULL);
    tenure_session *s = tenure_session_start_listener(T.rt, TENURE_KW_GC, 4, stopping_other, NULL); /* first */
    TT_CHECK(s && other_session);
    other_calls = 0;
    stop_armed = 1;
    collect_all();
    TT_CHECK(other_calls == 0, "the stopped session got %d events", other_calls);
    TT_CHECK_RESULT(tenure_session_stop(T.rt, s), TENURE_OK);
    check_usable_and_destroy();
}

static void walking_shutdown(void *c) {
    (void)c;
    size_t n = 0;
    TT_CHECK_RESULT(tenure_heap_walk(T.rt, count_visit, &n), TENURE_OK); /* as tenure-heapprof does */
    TT_CHECK(n >= 2 && tenure_object_size(T.rt, T.slots[0]) == sizeof(tt_node));
    T.calls++;
}
static void ok_shutdown_walks_heap(void) {
    setup(1);
    T.log.fatal = 1;
    tenure_profiler_callbacks cb = {.shutdown = walking_shutdown};
    TT_CHECK(tenure_profiler_attach(T.rt, &cb, TENURE_PROFILE_GC, NULL) != NULL);
    tenure_destroy(T.rt);
    TT_CHECK(T.calls == 1);
}

static void querying_gc_callback(tenure_runtime *rt, const tenure_gc_info *info, void *c) {
    (void)c;
    tenure_gc_info again;
    tenure_get_last_gc_info(rt, &again);
    TT_CHECK(again.index == info->index && tt_stats(rt).gc_count == info->index);
    TT_CHECK(tenure_object_generation(rt, T.slots[0]) >= 0);
    T.calls++;
}
static int querying_refcount(void *obj, void *c) {
    (void)c;
    TT_CHECK(tenure_object_type(T.rt, obj) == T.node_t);
    T.calls += 10;
    return 1;
}
static void ok_gc_callbacks_query(void) {
    setup(1);
    T.log.fatal = 1;
    tenure_set_gc_callback(T.rt, querying_gc_callback, NULL);
    tenure_set_refcount_callback(T.rt, querying_refcount, NULL);
    tenure_handle *h = tenure_handle_new(T.rt, TENURE_HANDLE_REFCOUNTED, T.slots[0]);
    TT_CHECK(h != NULL);
    collect_all();
    TT_CHECK(T.calls == 11, "calls %d", T.calls);
    TT_CHECK_RESULT(tenure_handle_free(T.rt, h), TENURE_OK);
    check_usable_and_destroy();
}

/* Frames are per thread: while a finalizer runs on the finalizer thread, the program's thread
 * allocates, collects and changes handles freely. */
static pthread_mutex_t pt_mx = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t pt_cv = PTHREAD_COND_INITIALIZER;
static int pt_started, pt_release;
static void blocking_finalizer(tenure_runtime *rt, void *obj) {
    (void)obj;
    tenure_blocking_enter(rt);
    pthread_mutex_lock(&pt_mx);
    pt_started = 1;
    pthread_cond_broadcast(&pt_cv);
    while (!pt_release)
        pthread_cond_wait(&pt_cv, &pt_mx);
    pthread_mutex_unlock(&pt_mx);
    tenure_blocking_leave(rt);
}
static void ok_frames_are_per_thread(void) {
    setup(0);
    T.log.fatal = 1;
    T.fin_action = blocking_finalizer;
    TT_CHECK(tenure_alloc(T.rt, T.fin_t) != NULL);
    collect_all();
    pthread_mutex_lock(&pt_mx);
    while (!pt_started)
        pthread_cond_wait(&pt_cv, &pt_mx);
    pthread_mutex_unlock(&pt_mx);
    for (int i = 0; i < 1000; i++)
        alloc_one();
    handle_one();
    TT_CHECK_RESULT(tenure_collect(T.rt, 0, 0), TENURE_OK);
    pthread_mutex_lock(&pt_mx);
    pt_release = 1;
    pthread_cond_broadcast(&pt_cv);
    pthread_mutex_unlock(&pt_mx);
    TT_CHECK_RESULT(tenure_wait_for_pending_finalizers(T.rt), TENURE_OK);
    check_usable_and_destroy();
}

/* ------------------------------------------------------------------ running the cases */

typedef struct named_case {
    const char *name;
    void (*fn)(void);
} named_case;
static const named_case named[] = {
    {"bug_destroy_from_hook_mode0", bug_destroy_from_hook_mode0},
    {"bug_destroy_from_hook_mode1", bug_destroy_from_hook_mode1},
    {"bug_destroy_from_hook_mode2", bug_destroy_from_hook_mode2},
    {"bug_destroy_from_listener_mode0", bug_destroy_from_listener_mode0},
    {"bug_destroy_from_listener_mode1", bug_destroy_from_listener_mode1},
    {"bug_destroy_from_listener_mode2", bug_destroy_from_listener_mode2},
    {"bug_detach_profiler_in_object_allocated", bug_detach_profiler_in_object_allocated},
    {"bug_stop_session_in_own_listener", bug_stop_session_in_own_listener},
    {"bug_remove_scanner_during_gc", bug_remove_scanner_during_gc},
    {"bug_remove_area_in_root_references", bug_remove_area_in_root_references},
    {"bug_destroy_in_profiler_shutdown", bug_destroy_in_profiler_shutdown},
    {"bug_alloc_in_object_allocated", bug_alloc_in_object_allocated},
    {"bug_fail_again_in_hook", bug_fail_again_in_hook},
    {"bug_heap_walk_visitor_collects", bug_heap_walk_visitor_collects},
    {"bug_heap_walk_visitor_allocates", bug_heap_walk_visitor_allocates},
    {"ok_finalizer_allocates_mode0", ok_finalizer_allocates_mode0},
    {"ok_finalizer_allocates_mode1", ok_finalizer_allocates_mode1},
    {"ok_finalizer_allocates_mode2", ok_finalizer_allocates_mode2},
    {"ok_listener_reads", ok_listener_reads},
    {"ok_profiler_queries", ok_profiler_queries},
    {"ok_hook_queries", ok_hook_queries},
    {"ok_heap_visitor_queries", ok_heap_visitor_queries},
    {"ok_profiler_detaches_itself_in_gc", ok_profiler_detaches_itself_in_gc},
    {"ok_listener_stops_other_session", ok_listener_stops_other_session},
    {"ok_shutdown_walks_heap", ok_shutdown_walks_heap},
    {"ok_gc_callbacks_query", ok_gc_callbacks_query},
    {"ok_frames_are_per_thread", ok_frames_are_per_thread},
};
#define NNAMED (sizeof named / sizeof named[0])

/* Case i: the named ones, then forbid_<site>_<op> for every forbidden pair, then
 * allow_<site>_<op> for every other pair (but the finalizer's destroy: allowed from the
 * finalizer of another instance only). */
static bool allowed_pair(const site *s, int op) { return !forbidden(s->rule, op) && op != OP_DESTROY; }

static bool case_at(size_t i, char *name, size_t cap, const site **s, int *op, void (**fn)(void)) {
    if (i < NNAMED) {
        snprintf(name, cap, "%s", named[i].name);
        *fn = named[i].fn;
        return true;
    }
    i -= NNAMED;
    *fn = NULL;
    for (size_t k = 0; k < NSITES; k++)
        for (int o = 0; o < OP_COUNT; o++)
            if (forbidden(sites[k].rule, o) && i-- == 0) {
                snprintf(name, cap, "forbid_%s_%s", sites[k].name, op_names[o]);
                *s = &sites[k];
                *op = o;
                return true;
            }
    for (size_t k = 0; k < NSITES; k++)
        for (int o = 0; o < OP_COUNT; o++)
            if (allowed_pair(&sites[k], o) && i-- == 0) {
                snprintf(name, cap, "allow_%s_%s", sites[k].name, op_names[o]);
                *s = &sites[k];
                *op = o;
                *fn = NULL;
                return true;
            }
    return false;
}

static void run_in_process(const site *s, int op, void (*fn)(void)) {
    if (fn)
        fn();
    else if (forbidden(s->rule, op))
        forbid_case(s, op);
    else
        allow_case(s, op);
}

typedef struct forked_case {
    const site *s;
    int op;
    void (*fn)(void);
} forked_case;

static void run_case_arg(void *arg) {
    const forked_case *c = arg;
    run_in_process(c->s, c->op, c->fn);
}

int main(int argc, char **argv) {
    double t0 = tt_now();
    setvbuf(stdout, NULL, _IOLBF, 0);
    char name[128];
    const site *s = NULL;
    int op = 0;
    void (*fn)(void) = NULL;
    if (argc > 1) { /* one case, in this process */
        for (size_t i = 0; case_at(i, name, sizeof name, &s, &op, &fn); i++)
            if (!strcmp(name, argv[1])) {
                run_in_process(s, op, fn);
                return tt_finish(name, t0);
            }
        fprintf(stderr, "no case %s\n", argv[1]);
        return 2;
    }
    const char *t = getenv("TENURE_TEST_CASE_TIMEOUT");
    unsigned timeout = t && atoi(t) > 0 ? (unsigned)atoi(t) : 60;
    size_t cases = 0, failed = 0;
    for (size_t i = 0; case_at(i, name, sizeof name, &s, &op, &fn); i++, cases++)
        if (!tt_run_case(name, run_case_arg, &(forked_case){s, op, fn}, timeout, false))
            failed++;
    printf("test_callbacks: %zu cases, %zu failed\n", cases, failed);
    if (failed)
        tt_failures++;
    return tt_finish("test_callbacks", t0);
}
