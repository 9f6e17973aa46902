/* runtime.c - creating and destroying an instance, and the queries about objects. */
#include "runtime.h"
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static atomic_uint next_instance_id; /* process-wide: an id counter (the other is fork.c's list) */

static bool gc_in_progress(const tenure_runtime *rt) { return tn_gc_in_progress(rt); }
static bool thread_attached(tenure_runtime *rt) { return tn_self(rt) != NULL; }

/* What base/ (below every subsystem) calls above it, by pointer (base/base.h). */
static const tn_base_calls base_calls = {
    .lock = tn_lock,
    .unlock = tn_unlock,
    .close_context = tn_alloc_close_for_callback,
    .reopen_context = tn_alloc_reopen_after_callback,
    .collecting = gc_in_progress,
    .attached = thread_attached,
};

/* A size for a message: "32 GiB" when it is a whole number of GiB, MiB or KiB. */
static const char *size_text(uint64_t bytes, char *buf, size_t len) {
    static const char *units[] = {"GiB", "MiB", "KiB"};
    for (int u = 0; u < 3; u++) {
        unsigned shift = 30 - 10 * u;
        if (bytes && bytes % ((uint64_t)1 << shift) == 0) {
            snprintf(buf, len, "%" PRIu64 " %s", bytes >> shift, units[u]);
            return buf;
        }
    }
    snprintf(buf, len, "%" PRIu64 " bytes", bytes);
    return buf;
}

/* "; the process's address-space limit (RLIMIT_AS, ulimit -v) is 8 GiB" when there is one. */
static const char *limit_note(char *buf, size_t len) {
    uint64_t limit = tn_os_address_space_limit();
    char l[32];
    if (!limit)
        return "";
    snprintf(buf, len, "; the process's address-space limit (RLIMIT_AS, ulimit -v) is %s",
             size_text(limit, l, sizeof l));
    return buf;
}

/* The reserved range, its side tables and the collector's per-region tables. */
static bool try_heap(tenure_runtime *rt) { return tn_heap_init(rt) && tn_gc_region_tables_init(rt); }

static void undo_heap(tenure_runtime *rt) {
    tn_gc_region_tables_destroy(rt);
    tn_heap_destroy(rt);
}

/* Reserve the heap. GCRegionRange left at its default is what the OS grants: at most half the
 * process's address-space limit (ulimit -v) if it has one, halved on each refusal down to
 * tn_config_min_range; rt->config's
 * GCRegionRange then says what was reserved. A range set explicitly is reserved as asked or
 * not at all. */
static bool reserve_heap(tenure_runtime *rt, char *why, size_t len) {
    bool automatic = tn_config_range_is_automatic(&rt->config);
    uint64_t asked = rt->config.GCRegionRange, floor = tn_config_min_range(&rt->config);
    uint64_t limit = tn_os_address_space_limit();
    while (automatic && limit && rt->config.GCRegionRange > limit / 2 && rt->config.GCRegionRange / 2 >= floor)
        rt->config.GCRegionRange /= 2; /* leave the program half of its address space */
    for (;;) {
        if (try_heap(rt))
            return true;
        const char *os_error = tn_os_last_error();
        char a[32], b[32], note[128];
        undo_heap(rt);
        if (automatic && rt->config.GCRegionRange / 2 >= floor) {
            rt->config.GCRegionRange /= 2;
            continue;
        }
        snprintf(why, len, "GCRegionRange=%s: reserving the heap's address space failed (%s)%s%s%s%s",
                 size_text(asked, a, sizeof a), os_error, automatic ? "; retried down to " : "",
                 automatic ? size_text(rt->config.GCRegionRange, b, sizeof b) : "", limit_note(note, sizeof note),
                 "; raise the limit or lower GCRegionRange");
        return false;
    }
}

/* The instance's parts, in order; on failure the reason is in why. */
static tenure_result build(tenure_runtime *rt, char *why, size_t len) {
    char note[128];
    if (!tn_threads_init(rt)) { /* the creating thread is attached */
        snprintf(why, len, "out of memory (the instance's locks and its first thread)%s",
                 limit_note(note, sizeof note));
        return TENURE_NOMEM;
    }
    rt->head.barrier_slow = rt->config.HeapVerify ? TN_BARRIER_CHECKED : 0;
    tn_budgets_init(rt);
    if (!reserve_heap(rt, why, len))
        return TENURE_NOMEM;
    if (!tn_type_init_builtin(rt)) {
        snprintf(why, len, "out of memory (the built-in types)%s", limit_note(note, sizeof note));
        return TENURE_NOMEM;
    }
    int err = rt->config.GCFinalizeMode == 0 ? tn_finalize_start_thread(rt) : 0;
    if (err) {
        snprintf(why, len,
                 "GCFinalizeMode=0: the finalizer thread could not be started (%s%s); GCFinalizeMode 1 "
                 "or 2 runs finalizers on the program's own threads",
                 strerror(err), limit_note(note, sizeof note));
        return TENURE_OS;
    }
    tn_fork_register(rt);
    return TENURE_OK;
}

static tenure_runtime *create_failed(tenure_result r, tenure_result *result, const char *reason, char *why,
                                     size_t why_len) {
    if (result)
        *result = r;
    if (why && why_len)
        snprintf(why, why_len, "%s", reason);
    else if (!why)
        fprintf(stderr, "tenure: tenure_create failed: %s\n", reason);
    return NULL;
}

tenure_runtime *tenure_create_ex(const tenure_config *config, tenure_result *result, char *why, size_t why_len) {
    tenure_config c;
    char reason[512] = "";
    tenure_result r = TENURE_OK;
    tn_config_check_env(config);
    if (config) {
        c = *config;
    } else {
        tenure_config_init(&c);
        r = tn_config_from_env(&c, reason, sizeof reason);
    }
    if (r == TENURE_OK)
        r = tn_config_check(&c, config == NULL, reason, sizeof reason);
    if (r != TENURE_OK)
        return create_failed(r, result, reason, why, why_len);
    tenure_runtime *rt = tn_calloc(1, sizeof *rt);
    if (!rt)
        return create_failed(TENURE_NOMEM, result, "out of memory (the instance)", why, why_len);
    rt->magic = TN_RUNTIME_MAGIC;
    rt->services.calls = &base_calls; /* first: from here on anything may fail through tn_api_fail */
    rt->config = c;
    rt->instance_id = (uint16_t)(atomic_fetch_add(&next_instance_id, 1) + 1);
    tn_gc_scratch_init(rt);
    tn_lifetime_init(rt);
    r = build(rt, reason, sizeof reason);
    if (r != TENURE_OK) {
        tenure_destroy(rt);
        return create_failed(r, result, reason, why, why_len);
    }
    tn_mutator *creator = tn_self(rt);
    if (creator) { /* where it was attached, for a stop that waits for it too long */
        creator->attached_by = "tenure_create";
        creator->attached_from = __builtin_return_address(0);
    }
    tn_trace_init_from_env(rt);
    tn_prof_load_from_env(rt);
    tn_debug_watch(rt); /* GCPoisonFreed: a fault in freed space is explained (api/debug.c) */
    if (result)
        *result = TENURE_OK;
    return rt;
}

tenure_runtime *tenure_create(const tenure_config *config, tenure_result *result) {
    return tenure_create_ex(config, result, NULL, 0);
}

void tenure_destroy(tenure_runtime *rt) {
    if (!rt)
        return;
    if (rt->magic != TN_RUNTIME_MAGIC) { /* no instance, so no hook: say it here */
        fprintf(stderr, "tenure: tenure_destroy: %p is not a live instance (destroyed twice?): nothing done\n",
                (void *)rt);
        return;
    }
    if (tn_cb_refused(rt, TN_OP_DESTROY, "tenure_destroy"))
        return; /* from a callback: the instance is in use below it */
    if (!tn_threads_may_destroy(rt))
        return;
    tn_fork_unregister(rt); /* before its locks go; a fork from now on leaves it behind */
    tn_debug_unwatch(rt);   /* before its heap goes */
    if (tn_threads_ready(rt) && !tn_self(rt))
        tn_mutator_attach(rt, false); /* pending finalizers may allocate on this thread */
    tn_bgc_destroy(rt);               /* a background GC in progress ends first (its events, its callback) */
    tn_finalize_stop_thread(rt);
    tn_finalize_shutdown(rt);
    tn_prof_shutdown(rt);
    tn_trace_destroy(rt);
    tn_lifetime_destroy(rt);
    tn_threads_destroy(rt); /* the caller's context ends: before the heap goes */
    tn_roots_destroy(rt);
    tn_type_free_all(rt);
    tn_heap_destroy(rt);
    tn_gc_scratch_destroy(rt);
    tn_gc_region_tables_destroy(rt);
    rt->magic = 0;
    free(rt);
}

uint16_t tenure_instance_id(const tenure_runtime *rt) { return rt ? rt->instance_id : 0; }

/* ---- objects ---- */

int tenure_is_object(tenure_runtime *rt, const void *obj) {
    TN_LOCKED_HOLDING(rt, obj, NULL);
    return rt && tn_is_object(rt, obj);
}

static bool check_object(tenure_runtime *rt, const void *obj, const char *fn) {
    if (rt && tn_is_object(rt, obj))
        return true;
    if (rt)
        tn_api_fail(rt, TENURE_INVALID_OBJECT, fn, "%p is not an object of this instance", obj);
    return false;
}

const tenure_type *tenure_object_type(tenure_runtime *rt, const void *obj) {
    TN_LOCKED_HOLDING(rt, obj, NULL);
    return check_object(rt, obj, "tenure_object_type") ? &tn_obj_type(obj)->pub : NULL;
}

size_t tenure_object_size(tenure_runtime *rt, const void *obj) {
    TN_LOCKED_HOLDING(rt, obj, NULL);
    return check_object(rt, obj, "tenure_object_size") ? tn_obj_size(obj) : 0;
}

int tenure_object_generation(tenure_runtime *rt, const void *obj) {
    TN_LOCKED_HOLDING(rt, obj, NULL);
    if (!check_object(rt, obj, "tenure_object_generation"))
        return -1;
    return tn_object_gen(rt, obj);
}

typedef struct heap_walk {
    tenure_runtime *rt;
    tenure_heap_visit_fn visit;
    void *context;
    uint64_t gc_count;
} heap_walk;

/* The visitor cannot collect (refused: the heap must not move under the walk); should a GC
 * happen anyway, the walk stops rather than read a moved heap. */
static bool walk_one(char *obj, tn_type *t, size_t size, int gen, void *ctx) {
    heap_walk *w = ctx;
    return w->visit(obj, &t->pub, size, gen, w->context) || w->rt->stats.gc_count != w->gc_count;
}

static void walk_all(tenure_runtime *rt, tenure_heap_visit_fn visit, void *context) {
    heap_walk w = {rt, visit, context, rt->stats.gc_count};
    tn_visit_all_objects(rt, walk_one, &w);
}

/* The walk runs with every other thread stopped and every allocation context ended. */
tenure_result tenure_heap_walk(tenure_runtime *rt, tenure_heap_visit_fn visit, void *context) {
    TN_LOCKED(rt);
    if (!rt)
        return TENURE_INVALID_ARGUMENT;
    if (!visit)
        return tn_api_fail(rt, TENURE_INVALID_ARGUMENT, "tenure_heap_walk", "NULL visit callback");
    if (tn_cb_refused(rt, TN_OP_WALK, "tenure_heap_walk"))
        return TENURE_STATE;
    if (tn_gc_in_progress(rt))
        return tn_api_fail(rt, TENURE_STATE, "tenure_heap_walk", "called during a collection");
    tn_world_stop(rt);
    tn_alloc_end_contexts(rt);
    tn_cb_frame frame;
    tn_cb_enter(&frame, rt, TN_CB_HEAP_VISITOR);
    walk_all(rt, visit, context);
    tn_cb_leave(&frame);
    tn_world_restart(rt);
    return TENURE_OK;
}
