/* runtime.c - creating and destroying an instance, and the queries about objects. */
#include "runtime.h"
#include <stdatomic.h>
#include <stdlib.h>

static atomic_uint next_instance_id; /* the one piece of process-wide state: an id counter */

static uint64_t default_gen0_budget(void) {
    uint64_t l3 = tn_os_l3_cache_size();
    uint64_t b = l3 ? l3 * 5 / 8 : (uint64_t)4 << 20;
    if (b < (256u << 10))
        b = 256u << 10;
    if (b > (6u << 20))
        b = 6u << 20;
    return b;
}

static const char *check_config(const tenure_config *c) {
    uint64_t rs = c->GCRegionSize;
    if (rs < (256u << 10) || (rs & (rs - 1)) || rs > ((uint64_t)1 << 30))
        return "GCRegionSize must be a power of two between 256 KiB and 1 GiB";
    if (c->GCRegionRange < 4 * rs || c->GCRegionRange > ((uint64_t)1 << 46))
        return "GCRegionRange must hold at least 4 regions and at most 64 TiB";
    if (c->GCMarkStackSize < 1)
        return "GCMarkStackSize must be at least 1";
    if (c->GCCompactMode > 2)
        return "GCCompactMode must be 0, 1 or 2";
    if (c->GCStressGeneration < -1 || c->GCStressGeneration > 2)
        return "GCStressGeneration must be -1, 0, 1 or 2";
    if (c->GCLOHThreshold < 1024)
        return "GCLOHThreshold must be at least 1024";
    if (c->GCFinalizeMode > 2)
        return "GCFinalizeMode must be 0, 1 or 2";
    return NULL;
}

static void init_budgets(tenure_runtime *rt) {
    rt->gen0_min_budget = rt->config.GCgen0size ? (size_t)rt->config.GCgen0size : (size_t)default_gen0_budget();
    rt->gen0_max_budget = rt->config.GCgen0MaxBudget ? (size_t)rt->config.GCgen0MaxBudget : 6 * rt->gen0_min_budget;
    if (rt->gen0_max_budget < rt->gen0_min_budget)
        rt->gen0_max_budget = rt->gen0_min_budget;
    rt->gen0_budget = rt->gen0_min_budget;
    rt->gen1_budget = rt->config.GCgen1size ? (size_t)rt->config.GCgen1size : 2 * rt->gen0_min_budget;
    rt->gen2_budget = 4 * rt->gen0_min_budget;
    rt->loh_budget = (size_t)8 << 20;
}

tenure_runtime *tenure_create(const tenure_config *config, tenure_result *result) {
    tenure_config c;
    tenure_result r = TENURE_OK;
    if (config) {
        c = *config;
    } else {
        tenure_config_init(&c);
        r = tenure_config_from_env(&c); /* invalid values are reported and ignored */
        r = TENURE_OK;
    }
    const char *why = check_config(&c);
    if (why) {
        if (result)
            *result = TENURE_INVALID_ARGUMENT;
        return NULL;
    }
    tenure_runtime *rt = calloc(1, sizeof *rt);
    if (!rt) {
        if (result)
            *result = TENURE_NOMEM;
        return NULL;
    }
    rt->magic = TN_RUNTIME_MAGIC;
    rt->config = c;
    rt->instance_id = (uint16_t)(atomic_fetch_add(&next_instance_id, 1) + 1);
    tn_vec_init(&rt->mark_stack, sizeof(void *));
    tn_vec_init(&rt->pins, sizeof(tn_pin));
    tn_vec_init(&rt->gaps, sizeof(tn_gap));
    tn_vec_init(&rt->finalizable, sizeof(void *));
    tn_vec_init(&rt->ready, sizeof(void *));
    if (!tn_threads_init(rt)) { /* the creating thread is attached */
        tenure_destroy(rt);
        if (result)
            *result = TENURE_NOMEM;
        return NULL;
    }
    rt->head.barrier_slow = c.HeapVerify ? 1 : 0;
    rt->stress_countdown = (uint32_t)c.GCStress;
    init_budgets(rt);
    bool ok = tn_heap_init(rt) && tn_type_init_builtin(rt);
    for (int g = 0; ok && g < TN_NGEN; g++)
        ok = (rt->plan_regions[g] = calloc(rt->max_units + 1, sizeof(tn_region *))) != NULL;
    if (!ok) {
        tenure_destroy(rt);
        if (result)
            *result = TENURE_NOMEM;
        return NULL;
    }
    if (c.GCFinalizeMode == 0 && !tn_finalize_start_thread(rt)) {
        tenure_destroy(rt);
        if (result)
            *result = TENURE_OS;
        return NULL;
    }
    tn_trace_init_from_env(rt);
    tn_prof_load_from_env(rt);
    if (result)
        *result = r;
    return rt;
}

void tenure_destroy(tenure_runtime *rt) {
    if (!rt || rt->magic != TN_RUNTIME_MAGIC)
        return;
    if (tn_cb_refused(rt, TN_OP_DESTROY, "tenure_destroy"))
        return; /* from a callback: the instance is in use below it */
    if (!tn_threads_may_destroy(rt))
        return;
    if (rt->locks_ready && !tn_self(rt))
        tn_mutator_attach(rt, false); /* pending finalizers may allocate on this thread */
    tn_finalize_stop_thread(rt);
    tn_finalize_shutdown(rt);
    tn_prof_shutdown(rt);
    tn_trace_destroy(rt);
    tn_lifetime_destroy(rt);
    tn_threads_destroy(rt); /* the caller's context ends: before the heap goes */
    tn_roots_destroy(rt);
    tn_type_free_all(rt);
    tn_heap_destroy(rt);
    tn_vec_free(&rt->mark_stack);
    tn_vec_free(&rt->pins);
    tn_vec_free(&rt->gaps);
    for (int g = 0; g < TN_NGEN; g++)
        free(rt->plan_regions[g]);
    rt->magic = 0;
    free(rt);
}

uint16_t tenure_instance_id(const tenure_runtime *rt) { return rt ? rt->instance_id : 0; }

/* ---- objects ---- */

/* End of the walkable part of r (the allocation context's unused tail is not). */
char *tn_region_walk_end(const tenure_runtime *rt, const tn_region *r) {
    /* A thread's context region: up to its bump pointer for that thread; for the others, up
     * to the context's end (the zeroed tail holds no object: a header of zero is no type). A
     * GC ends every context first. */
    tn_mutator *owner = r->alloc_owner;
    if (owner && owner == tn_self((tenure_runtime *)rt))
        return (char *)owner->pub.alloc_ptr;
    return r->used;
}

int tenure_is_object(tenure_runtime *rt, const void *obj) {
    TN_LOCKED_HOLDING(rt, obj, NULL);
    return rt && tn_is_object(rt, obj);
}

bool tn_is_object(tenure_runtime *rt, const void *obj) {
    if (!obj || ((uintptr_t)obj & 7))
        return 0;
    if (!tn_in_range(rt, obj))
        return tn_frozen_is_object(rt, obj);
    tn_region *r = tn_region_of(rt, obj);
    if (!r || (char *)obj >= tn_region_walk_end(rt, r) || (size_t)(tn_region_walk_end(rt, r) - (char *)obj) < 8)
        return 0;
    uintptr_t word = *(const uintptr_t *)obj;
    const tn_type *t = (const tn_type *)(word & ~(uintptr_t)7);
    if (!tn_type_valid(rt, t) || t->kind == TN_TK_FREE)
        return 0;
    return tn_gc_find_object_start(rt, r, (char *)obj) == obj;
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
    return tn_in_range(rt, obj) ? tn_region_of(rt, obj)->gen : TN_GEN2; /* frozen: as old as it gets */
}

/* The visitor cannot collect (refused: the heap must not move under the walk); should a GC
 * happen anyway, the walk stops rather than read a moved heap. */
static void walk_all(tenure_runtime *rt, tenure_heap_visit_fn visit, void *context) {
    uint64_t gc_count = rt->stats.gc_count;
    for (size_t f = 0; f < rt->frozen_count; f++)
        for (char *o = rt->frozen[f].start; o < rt->frozen[f].end; o += tn_obj_size(o))
            if (visit(o, &tn_obj_type(o)->pub, tn_obj_size(o), TN_GEN2, context))
                return;
    for (size_t i = 0; i < rt->units_high; i++) {
        tn_region *r = &rt->regions[i];
        if (r->state != TN_RS_IN_USE || rt->unit_head[i] != i)
            continue;
        char *end = tn_region_walk_end(rt, r);
        for (char *o = r->start; o < end;) {
            tn_type *t = tn_obj_type(o);
            size_t size = tn_obj_size_t(t, o);
            if (t->kind != TN_TK_FREE && visit(o, &t->pub, size, r->gen, context))
                return;
            if (rt->stats.gc_count != gc_count)
                return;
            o += size;
        }
    }
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
    if (rt->in_gc)
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
