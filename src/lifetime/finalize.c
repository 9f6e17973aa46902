/* finalize.c - finalization: registered objects, the ready queue, running finalizers.
 *
 * `finalizable` holds every registered object that has not been found unreachable (weak
 * references: marking does not trace them; relocation updates them). After marking, an entry
 * whose object is unmarked in a condemned region moves to `ready`, which is a root: marking
 * then traces from it, so the object and everything it reaches survive ("resurrection") until
 * its finalizer has run. Finalizers run on the embedder's thread, in queue order, never
 * nested; a GC during a finalizer is fine (the queue is a root and is relocated). */
#include "runtime.h"
#include <stdlib.h>

static void **entries(tn_vec *v) { return (void **)v->data; }

bool tn_finalize_register(tenure_runtime *rt, void *obj) {
    void **slot = tn_vec_push(&rt->finalizable);
    if (!slot)
        return false;
    *slot = obj;
    return true;
}

void tn_finalize_visit_ready(tenure_runtime *rt, tn_slot_fn fn, void *ctx) {
    for (size_t i = rt->ready_head; i < rt->ready.count; i++)
        if (entries(&rt->ready)[i])
            fn(&entries(&rt->ready)[i], ctx);
}

void tn_finalize_visit_registered(tenure_runtime *rt, tn_slot_fn fn, void *ctx) {
    for (size_t i = 0; i < rt->finalizable.count; i++)
        fn(&entries(&rt->finalizable)[i], ctx);
}

/* Two passes, as the .NET collector does: first every unreachable registered object moves to
 * the queue (an object reachable only from another finalizable object is finalizable too),
 * then the queued objects are marked through. */
size_t tn_finalize_scan(tenure_runtime *rt, bool (*dead)(tenure_runtime *, const void *),
                        void (*queued)(tenure_runtime *, void **)) {
    size_t kept = 0, first = rt->ready.count;
    void **reg = entries(&rt->finalizable);
    for (size_t i = 0; i < rt->finalizable.count; i++) {
        void *obj = reg[i];
        void **slot = dead(rt, obj) ? tn_vec_push(&rt->ready) : NULL;
        if (!slot) { /* alive (or no room in the queue: found again next GC) */
            reg[kept++] = obj;
            continue;
        }
        *slot = obj;
    }
    rt->finalizable.count = kept;
    for (size_t i = first; i < rt->ready.count; i++)
        queued(rt, &entries(&rt->ready)[i]);
    return rt->ready.count - first;
}

static size_t run_pending(tenure_runtime *rt) {
    if (rt->finalizing || rt->in_gc || rt->ready_head == rt->ready.count)
        return 0;
    rt->finalizing = true;
    TN_EMIT(rt, GCFinalizersBegin_V1, .ClrInstanceID = 0);
    size_t ran = 0;
    while (rt->ready_head < rt->ready.count) {
        /* the entry stays in the queue (a root) while its finalizer runs */
        size_t i = rt->ready_head;
        void *obj = entries(&rt->ready)[i];
        if (obj) {
            tn_type *t = tn_obj_type(obj);
            t->finalize(rt, obj);
            ran++;
        }
        rt->ready_head = i + 1;
    }
    rt->ready.count = rt->ready_head = 0;
    rt->stats.finalizers_run += ran;
    TN_EMIT(rt, GCFinalizersEnd_V1, .Count = (uint32_t)ran);
    rt->finalizing = false;
    return ran;
}

size_t tenure_run_pending_finalizers(tenure_runtime *rt) {
    if (!rt)
        return 0;
    if (rt->in_gc) {
        tn_api_fail(rt, TENURE_STATE, "tenure_run_pending_finalizers", "called during a collection");
        return 0;
    }
    return run_pending(rt);
}

size_t tenure_pending_finalizers(const tenure_runtime *rt) { return rt ? rt->ready.count - rt->ready_head : 0; }

void tn_finalize_safepoint(tenure_runtime *rt) {
    if (rt->config.GCFinalizeMode == 0 && rt->ready_head != rt->ready.count)
        run_pending(rt);
}

tenure_result tenure_wait_for_pending_finalizers(tenure_runtime *rt) {
    if (!rt)
        return TENURE_INVALID_ARGUMENT;
    if (rt->in_gc || rt->finalizing)
        return tn_api_fail(rt, TENURE_STATE, "tenure_wait_for_pending_finalizers",
                           "called during a collection or from a finalizer");
    tenure_result r = tn_gc_collect(rt, TN_GEN2, TN_REASON_INDUCED, 0);
    run_pending(rt);
    return r;
}

static bool check_finalizable(tenure_runtime *rt, void *obj, const char *fn) {
    if (!tenure_is_object(rt, obj)) {
        tn_api_fail(rt, TENURE_INVALID_OBJECT, fn, "%p is not an object of this instance", obj);
        return false;
    }
    if (!tn_obj_type(obj)->finalize) {
        tn_api_fail(rt, TENURE_INVALID_TYPE, fn, "%s is not a finalizable type", tn_obj_type(obj)->name);
        return false;
    }
    return true;
}

/* obj's index in the registry, or SIZE_MAX */
static size_t find_registered(tenure_runtime *rt, const void *obj) {
    void **reg = entries(&rt->finalizable);
    for (size_t i = 0; i < rt->finalizable.count; i++)
        if (reg[i] == obj)
            return i;
    return SIZE_MAX;
}

tenure_result tenure_suppress_finalize(tenure_runtime *rt, void *obj) {
    static const char fn[] = "tenure_suppress_finalize";
    if (!rt)
        return TENURE_INVALID_ARGUMENT;
    if (!check_finalizable(rt, obj, fn))
        return rt->last_error;
    size_t i = find_registered(rt, obj);
    if (i != SIZE_MAX) {
        entries(&rt->finalizable)[i] = entries(&rt->finalizable)[--rt->finalizable.count];
        return TENURE_OK;
    }
    for (i = rt->ready_head; i < rt->ready.count; i++) /* found dead, not run yet */
        if (entries(&rt->ready)[i] == obj)
            entries(&rt->ready)[i] = NULL;
    return TENURE_OK;
}

tenure_result tenure_reregister_for_finalize(tenure_runtime *rt, void *obj) {
    static const char fn[] = "tenure_reregister_for_finalize";
    if (!rt)
        return TENURE_INVALID_ARGUMENT;
    if (!check_finalizable(rt, obj, fn))
        return rt->last_error;
    if (find_registered(rt, obj) != SIZE_MAX)
        return TENURE_OK;
    return tn_finalize_register(rt, obj) ? TENURE_OK : tn_api_fail(rt, TENURE_NOMEM, fn, "out of memory");
}

void tn_finalize_shutdown(tenure_runtime *rt) {
    if (rt->config.GCFinalizeOnShutdown && !rt->in_gc)
        run_pending(rt);
    tn_vec_free(&rt->finalizable);
    tn_vec_free(&rt->ready);
    rt->ready_head = 0;
}
