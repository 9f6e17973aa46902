/*
 * tenure-torture: finalization
 * The finalizer callback against the model's ready queue, runs and waits, suppress and
 * reregister, finalizable garbage and weakly held finalizable objects.
 */
#include "torture.h"

/* the finalize callback of tenure_type_desc has no context pointer: the program that runs
 * (one per process at a time) */
static program_state *finalizing_program;

void finalizers_attach(program_state *s) { finalizing_program = s; }

/* the finalizer of every finalizable type: it must be the head of the model's queue; what it
 * does is decided by the seed, the object number and the object's run count */
/* the finalizer must run for the head of the model's queue (suppressed entries skipped), inside
 * a run, not nested; returns the object's number */
static uint32_t finalizer_head(program_state *s, void *obj) {
    if (!s->in_run)
        diff(s, "a finalizer ran for %p outside tenure_run_pending_finalizers / tenure_wait_for_pending_finalizers",
             obj);
    if (s->in_fin)
        diff(s, "finalizers nest (%p while #%u runs)", obj, s->fq[s->fqhead]);
    while (s->fqhead < s->nfq && s->fq[s->fqhead] == 0)
        s->fqhead++;
    if (s->fqhead >= s->nfq) {
        diff(s, "a finalizer ran for %p, the model has nothing queued", obj);
        check_end(s, "finalizer");
    }
    uint32_t j = s->fq[s->fqhead];
    if ((uintptr_t)obj != s->objs[j].addr) {
        uint64_t id = tenure_is_object(s->rt, obj) && is_fin(s, j) ? *(uint64_t *)((char *)obj + 8) : 0;
        diff(s,
             "a finalizer ran for %p (number word %#" PRIx64 "), the model expected %s at %#" PRIxPTR
             " (queue position %u of %u)",
             obj, id, odesc(s, j), s->objs[j].addr, s->fqhead, s->nfq);
        check_end(s, "finalizer");
    }
    check_obj(s, j, s->objs[j].addr, 2, "finalizer");
    check_end(s, "finalizer");
    return j;
}

/* what a finalizer does, decided by the seed, the object number and its run count: allocate
 * (a GC may run: the object stays queued and may move) and store the new object into its
 * object, try a nested run, resurrect its object into a scanner slot, reregister it */
static void finalizer_acts(program_state *s, uint32_t j) {
    rng r = {mix64(s->P->seed * 0x2545f4914f6cdd1dull ^ mix64(((uint64_t)j << 16) + s->objs[j].fin_runs))};
    if (rchance(&r, 35)) {
        aspec a = rchance(&r, 20) ? fin_spec(s, &r) : small_fixed(s, &r);
        a.pinned = 0;
        uint32_t n = do_alloc(s, &a);
        if (n && s->objs[j].nrefs)
            set_ref(s, j, (unsigned)rbelow(&r, s->objs[j].nrefs), n);
    }
    if (rchance(&r, 10)) { /* no nesting: a run from a finalizer runs nothing */
        size_t k = tenure_run_pending_finalizers(s->rt);
        if (k != 0)
            diff(s, "tenure_run_pending_finalizers from a finalizer ran %zu", k);
    }
    if (rchance(&r, 20)) {
        unsigned k = (unsigned)rbelow(&r, SCAN_SLOTS);
        set_root_slot(s, &s->scan_slots[k], &s->scan_obj[k], j);
    }
    if (rchance(&r, 12)) {
        tenure_result res = tenure_reregister_for_finalize(s->rt, (void *)s->objs[j].addr);
        if (res != TENURE_OK)
            diff(s, "tenure_reregister_for_finalize(%s) from its finalizer: %s", odesc(s, j), tenure_strerror(res));
        model_register(s, j);
    }
}

void fin_cb(tenure_runtime *rt, void *obj) {
    (void)rt;
    program_state *s = finalizing_program;
    if (s->destroying)
        return;
    uint32_t j = finalizer_head(s, obj);
    s->in_fin = 1;
    s->objs[j].fin_runs++;
    s->ran_in_run++;
    s->fin_runs_total++;
    if (s->P->trace)
        fprintf(stderr, "  finalizer of %s (run %u)\n", odesc(s, j), s->objs[j].fin_runs);
    if (!s->final_phase)
        finalizer_acts(s, j);
    s->in_fin = 0;
    s->fqhead++; /* the entry leaves the queue when the finalizer returns */
    s->reach_dirty = 1;
    check_end(s, "finalizer");
}

static void check_pending(program_state *s, const char *where) {
    size_t p = tenure_pending_finalizers(s->rt);
    if (p != s->nfq - s->fqhead)
        diff(s, "%s: tenure_pending_finalizers says %zu, the model has %u queued", where, p, s->nfq - s->fqhead);
}

static void after_run(program_state *s, const char *what, size_t ran) {
    if (ran != s->ran_in_run)
        diff(s, "%s returned %zu, %" PRIu64 " finalizers ran", what, ran, s->ran_in_run);
    while (s->fqhead < s->nfq && s->fq[s->fqhead] == 0)
        s->fqhead++;
    if (s->fqhead != s->nfq)
        diff(s, "after %s the model still has %u queued, the first %s", what, s->nfq - s->fqhead,
             odesc(s, s->fq[s->fqhead]));
    s->nfq = s->fqhead = 0;
    check_pending(s, what);
    s->reach_dirty = 1;
    check_end(s, what);
}

void run_finalizers(program_state *s) {
    check_pending(s, "before tenure_run_pending_finalizers");
    s->in_run = 1;
    s->ran_in_run = 0;
    size_t n = tenure_run_pending_finalizers(s->rt);
    s->in_run = 0;
    after_run(s, "tenure_run_pending_finalizers", n);
}

static void wait_finalizers(program_state *s) {
    s->in_run = 1;
    s->ran_in_run = 0;
    s->wait_gc = 1;
    uint64_t before = s->gcs;
    tenure_result res = tenure_wait_for_pending_finalizers(s->rt);
    s->in_run = 0;
    if (res != TENURE_OK || s->gcs == before || s->wait_gc)
        diff(s, "tenure_wait_for_pending_finalizers: %s, %" PRIu64 " GCs", tenure_strerror(res), s->gcs - before);
    s->wait_gc = 0;
    after_run(s, "tenure_wait_for_pending_finalizers", s->ran_in_run);
}

static void weak_to(program_state *s, rng *r, uint32_t j) {
    if (free_handle_index(s) > 0)
        handle_new(s, rchance(r, 50) ? TENURE_HANDLE_WEAK_SHORT : TENURE_HANDLE_WEAK_LONG, j);
}

void op_final(program_state *s, rng *r) {
    if (rchance(r, 65)) {
        aspec a = fin_spec(s, r);
        dest d = rchance(r, 45) ? (dest){.kind = D_NONE} : choose_dest(s, r, 0);
        uint32_t j = alloc_oom(s, &a, r);
        if (!j)
            return;
        dest_recheck(s, &d, D_NONE);
        if (d.kind != D_HANDLE)
            prelink(s, r, j);
        store_dest(s, &d, j);
        if (rchance(r, 35))
            weak_to(s, r, j);
        return;
    }
    /* a cluster of finalizable garbage that refers to itself and to other objects */
    static const cluster_links links = {UINT32_MAX, 60, 75};
    unsigned n = (unsigned)rrange(r, 2, 8);
    uint32_t nodes[8];
    cluster c = {nodes, 0, s->collections};
    for (unsigned i = 0; i < n; i++) {
        aspec a = rchance(r, 70) ? fin_spec(s, r) : small_fixed(s, r);
        a.pinned = 0;
        uint32_t j = alloc_oom(s, &a, r);
        if (!j)
            break;
        cluster_add(s, r, &c, j, &links);
        if (rchance(r, 20))
            weak_to(s, r, j);
    }
}

/* tenure_suppress_finalize or tenure_reregister_for_finalize of j, and the same in the model */
static void suppress_or_reregister(program_state *s, uint32_t j, int suppress) {
    void *p = (void *)s->objs[j].addr;
    if (s->P->trace)
        fprintf(stderr, "  %s %s%s\n", suppress ? "suppress" : "reregister", odesc(s, j),
                s->objs[j].registered ? " (registered)" : "");
    tenure_result res = suppress ? tenure_suppress_finalize(s->rt, p) : tenure_reregister_for_finalize(s->rt, p);
    if (res != TENURE_OK)
        diff(s, "%s(%s): %s", suppress ? "tenure_suppress_finalize" : "tenure_reregister_for_finalize", odesc(s, j),
             tenure_strerror(res));
    if (suppress)
        model_suppress(s, j);
    else
        model_register(s, j);
}

void op_finop(program_state *s, rng *r) {
    unsigned x = (unsigned)rbelow(r, 100);
    if (x < 30) {
        run_finalizers(s);
    } else if (x < 36) {
        wait_finalizers(s);
        full_check(s, "full check after tenure_wait_for_pending_finalizers");
    } else if (x < 88) {
        if (!s->nfobjs)
            return;
        suppress_or_reregister(s, s->fobjs[rbelow(r, s->nfobjs)], x < 62);
    } else if (x < 94) {
        /* not finalizable: refused */
        uint32_t j = pick_reachable(s, r);
        if (!j || is_fin(s, j))
            return;
        expect_error(s, TENURE_INVALID_TYPE);
        tenure_result res = rchance(r, 50) ? tenure_suppress_finalize(s->rt, (void *)s->objs[j].addr)
                                           : tenure_reregister_for_finalize(s->rt, (void *)s->objs[j].addr);
        expect_done(s);
        if (res != TENURE_INVALID_TYPE || !s->got_err)
            diff(s, "suppress / reregister of not finalizable %s: %s (hook calls %d)", odesc(s, j),
                 tenure_strerror(res), s->got_err);
        tenure_clear_error(s->rt);
    } else {
        check_pending(s, "pending finalizers");
    }
}
