/*
 * finalize: finalizers run exactly once per registration, never for suppressed objects, and
 * again after re-registration; a finalizer may allocate and may resurrect its object; a
 * WeakShort handle is NULL when the finalizer runs, a WeakLong handle is not; what the
 * finalizer reaches survives; FinalizationPromotedCount; shutdown runs pending finalizers.
 */
#include "test_util.h"

typedef struct fobj {
    tenure_header h;
    struct fobj *child;
    uint64_t id;
} fobj;

static tenure_runtime *rt;
static const tenure_type *fobj_t, *node_t;
static tt_errlog log_ = {.fatal = 1};
static int runs[64];
static tenure_handle *short_h, *long_h;
static int short_was_null = -1, long_was_null = -1;
static void *resurrected; /* a finalizer stores its object here (a root area) */
static tenure_root_area *res_area;
static int child_ok = -1;

static void finalize(tenure_runtime *r, void *obj) {
    fobj *o = obj;
    TT_CHECK(r == rt && o->id < 64);
    runs[o->id]++;
    if (o->id == 1) {
        short_was_null = tenure_handle_get(rt, short_h) == NULL;
        long_was_null = tenure_handle_get(rt, long_h) == NULL;
    }
    if (o->id == 2) { /* allocates (may collect: root the object first) */
        TENURE_FRAME(rt, f, o);
        for (int i = 0; i < 20000; i++)
            TT_CHECK(tt_node_new(rt, node_t, 7) != NULL);
        TENURE_FRAME_POP(rt, f);
        child_ok = o->child && ((fobj *)o->child)->id == 33;
    }
    if (o->id == 3)
        resurrected = o; /* back from the dead */
}

static fobj *new_fobj(uint64_t id) {
    fobj *o = tenure_alloc(rt, fobj_t);
    TT_CHECK(o != NULL);
    o->id = id;
    return o;
}

int main(void) {
    double t0 = tt_now();
    tt_rng_init("finalize");
    tenure_config cfg;
    tt_config(&cfg);
    cfg.GCFinalizeMode = 1; /* finalizers run when the test says */
    rt = tt_create(&cfg, &log_);
    static const size_t offs[] = {offsetof(fobj, child)};
    tenure_type_desc d = {.name = "fobj",
                          .size = sizeof(fobj),
                          .ref_offsets = offs,
                          .ref_count = 1,
                          .flags = TENURE_TYPE_FINALIZABLE,
                          .finalize = finalize};
    fobj_t = tenure_type_register(rt, &d);
    node_t = tt_register_node(rt);
    TT_CHECK(fobj_t != NULL);
    res_area = tenure_root_area_add(rt, &resurrected, 1);

    /* 1: weak short is NULL when the finalizer runs, weak long is not */
    fobj *o = new_fobj(1);
    short_h = tenure_handle_new(rt, TENURE_HANDLE_WEAK_SHORT, o);
    long_h = tenure_handle_new(rt, TENURE_HANDLE_WEAK_LONG, o);
    /* 2: allocates in its finalizer; its child (another finalizable, id 33) is reached */
    o = new_fobj(2);
    fobj *child = NULL;
    TENURE_FRAME(rt, f, o, child);
    child = new_fobj(33);
    tenure_write_ref(rt, o, &o->child, child);
    o = child = NULL;
    TENURE_FRAME_POP(rt, f);
    /* 3: resurrects itself */
    new_fobj(3);
    /* 4: suppressed */
    fobj *s = new_fobj(4);
    TT_CHECK(tenure_suppress_finalize(rt, s) == TENURE_OK);
    s = NULL;

    TT_CHECK(tenure_collect(rt, 2, TENURE_COLLECT_COMPACT) == TENURE_OK);
    tenure_stats st;
    tenure_get_stats(rt, &st);
    TT_CHECK(st.finalization_promoted_count >= 4, "FinalizationPromotedCount %llu for 4 dead finalizable objects",
             (unsigned long long)st.finalization_promoted_count);
    TT_CHECK(st.finalization_promoted_bytes >= 4 * sizeof(fobj));
    TT_CHECK(tenure_pending_finalizers(rt) >= 4);
    TT_CHECK(tenure_handle_get(rt, short_h) == NULL, "weak short survived the object's death");
    TT_CHECK(tenure_handle_get(rt, long_h) != NULL, "weak long did not track the resurrected object");
    TT_CHECK(runs[1] == 0, "a finalizer ran inside the GC");
    size_t ran = tenure_run_pending_finalizers(rt);
    TT_CHECK(ran == 4, "%zu finalizers ran, expected 4 (1, 2, 33, 3)", ran);
    TT_CHECK(runs[1] == 1 && runs[2] == 1 && runs[33] == 1 && runs[3] == 1 && runs[4] == 0, "runs %d %d %d %d %d",
             runs[1], runs[2], runs[33], runs[3], runs[4]);
    TT_CHECK(short_was_null == 1 && long_was_null == 0, "in the finalizer: short %d long %d", short_was_null,
             long_was_null);
    TT_CHECK(child_ok == 1, "the finalizer of 2 could not reach its child");

    /* after the finalizers: 1 is gone (weak long clears now), 3 lives in the root area */
    TT_CHECK(tenure_collect(rt, 2, 0) == TENURE_OK);
    TT_CHECK(tenure_handle_get(rt, long_h) == NULL, "weak long kept a finalized, unreachable object");
    TT_CHECK(resurrected && ((fobj *)resurrected)->id == 3, "the resurrected object is broken");
    TT_CHECK(tenure_run_pending_finalizers(rt) == 0, "a finalizer ran twice");
    /* 3 again: re-registered, dropped, finalized a second time */
    TT_CHECK(tenure_reregister_for_finalize(rt, resurrected) == TENURE_OK);
    resurrected = NULL;
    TT_CHECK(tenure_wait_for_pending_finalizers(rt) == TENURE_OK);
    TT_CHECK(runs[3] == 2, "a re-registered object was finalized %d times", runs[3]);
    TT_CHECK(resurrected != NULL); /* it resurrected itself again */
    resurrected = NULL;
    TT_CHECK(tenure_wait_for_pending_finalizers(rt) == TENURE_OK);
    TT_CHECK(runs[3] == 2, "finalized without registration");

    /* queued, registered again, then suppressed: the queued run is cancelled too */
    tenure_handle *six = tenure_handle_new(rt, TENURE_HANDLE_WEAK_LONG, new_fobj(6));
    TT_CHECK(tenure_collect(rt, 2, 0) == TENURE_OK); /* unreachable: queued */
    TT_CHECK(tenure_pending_finalizers(rt) == 1, "%zu pending", tenure_pending_finalizers(rt));
    void *queued = tenure_handle_get(rt, six); /* weak long: it is still there */
    TT_CHECK(queued != NULL);
    TT_CHECK(tenure_reregister_for_finalize(rt, queued) == TENURE_OK);
    TT_CHECK(tenure_suppress_finalize(rt, queued) == TENURE_OK);
    queued = NULL;
    TT_CHECK(tenure_run_pending_finalizers(rt) == 0 && runs[6] == 0, "suppressed after re-registration, it ran");
    TT_CHECK(tenure_collect(rt, 2, 0) == TENURE_OK);
    TT_CHECK(tenure_handle_get(rt, six) == NULL, "a suppressed object outlived its cancelled queue entry");
    TT_CHECK(tenure_handle_free(rt, six) == TENURE_OK);

    /* many objects, many GCs: each finalizer exactly once */
    for (int round = 0; round < 20; round++) {
        for (int i = 0; i < 500; i++)
            new_fobj(10 + (uint64_t)(i % 20));
        TT_CHECK(tenure_collect(rt, round % 3, 0) == TENURE_OK);
        tenure_run_pending_finalizers(rt);
    }
    TT_CHECK(tenure_wait_for_pending_finalizers(rt) == TENURE_OK);
    int total = 0;
    for (int i = 10; i < 30; i++)
        total += runs[i];
    TT_CHECK(total == 20 * 500, "%d finalizers for %d objects", total, 20 * 500);
    TT_CHECK(tenure_verify_heap(rt) == TENURE_OK);

    /* shutdown runs what is pending */
    new_fobj(5);
    TT_CHECK(tenure_collect(rt, 0, 0) == TENURE_OK);
    TT_CHECK(tenure_pending_finalizers(rt) == 1);
    tenure_handle_free(rt, short_h);
    tenure_handle_free(rt, long_h);
    tenure_root_area_remove(rt, res_area);
    tenure_destroy(rt);
    TT_CHECK(runs[5] == 1, "tenure_destroy did not run the pending finalizer");
    printf("  finalization: orderings, resurrection, suppression, re-registration, %d finalizers in GC rounds\n",
           total);
    return tt_finish("finalize", t0);
}
