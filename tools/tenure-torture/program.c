/*
 * tenure-torture: one program
 * A random configuration, the setup (types, root array, scanner, area, frame), the ops
 * drawn from the seed, and the end: every root dropped, everything collected and finalized.
 */
#include "torture.h"

const char *const op_names[OP_COUNT] = {
#define OP_NAME(name, text, w, woom) text,
    OPS(OP_NAME)
#undef OP_NAME
};
const unsigned op_weight[2][OP_COUNT] = {
#define OP_W(name, text, w, woom) w,
    {OPS(OP_W)},
#undef OP_W
#define OP_WO(name, text, w, woom) woom,
    {OPS(OP_WO)},
#undef OP_WO
};

static void random_config(tenure_config *c, uint64_t seed, uint64_t hard_limit, int bgc) {
    rng r = {mix64(seed ^ 0xc0ffee1234567ull)};
    tenure_config_init(c);
    static const uint64_t regions[] = {256u << 10, 256u << 10, 256u << 10, 256u << 10, 512u << 10, 1u << 20};
    c->GCRegionSize = regions[rbelow(&r, 6)];
    static const uint64_t g0[] = {8u << 10,  16u << 10,  32u << 10,  32u << 10,
                                  64u << 10, 128u << 10, 256u << 10, 1u << 20};
    c->GCgen0size = g0[rbelow(&r, 8)];
    c->GCgen1size = rchance(&r, 50) ? 0 : c->GCgen0size * rrange(&r, 1, 4);
    c->GCgen0MaxBudget = rchance(&r, 70) ? 0 : c->GCgen0size * rrange(&r, 1, 3);
    c->GCCompactMode = (uint32_t)rbelow(&r, 3);
    c->GCLOHCompact = rchance(&r, 10);
    if (rchance(&r, 25))
        c->GCMarkStackSize = rrange(&r, 1, 64);
    c->GCRetainRegions = (uint32_t)rbelow(&r, 4);
    if (tenure_config_from_env(c) != TENURE_OK)
        fprintf(stderr, "tenure-torture: a TENURE_* environment variable does not parse (ignored)\n");
    c->GCConservativeStack = 0; /* precise: reachability is exact */
    c->GCFinalizeMode = 1;      /* finalizers run only in tenure_run_pending_finalizers: deterministic */
    if (hard_limit)
        c->GCHeapHardLimit = hard_limit;
    if (bgc)
        c->gcConcurrent = 1;
}

/* the instance, its callbacks and types, and the roots every program starts with */
static void program_setup(program_state *s, const params *P) {
    random_config(&s->cfg, P->seed, P->hard_limit, P->bgc);
    s->bgc = s->cfg.gcConcurrent != 0 && s->cfg.GCCompactMode != 1; /* (compact mode 1: no BGC) */
    tenure_result res = TENURE_OK;
    s->rt = tenure_create(&s->cfg, &res);
    if (!s->rt) {
        diff(s, "tenure_create failed: %s", tenure_strerror(res));
        check_end(s, "setup");
    }
    tenure_set_error_hook(s->rt, hook, s);
    tenure_set_gc_callback(s->rt, gc_callback, s);
    tenure_set_refcount_callback(s->rt, rc_cb, s);
    register_types(s);
    /* the root array, held by handle 0 */
    aspec ra = {s->tix_refarr, ROOTARR_LEN, 0};
    s->rootarr = do_alloc(s, &ra);
    if (!s->rootarr) {
        diff(s, "allocating the root array failed");
        check_end(s, "setup");
    }
    tenure_handle *h0 = tenure_handle_new(s->rt, TENURE_HANDLE_STRONG, (void *)s->objs[s->rootarr].addr);
    if (!h0) {
        diff(s, "tenure_handle_new(STRONG) failed");
        check_end(s, "setup");
    }
    s->handles[0] =
        (mhandle){.h = h0, .kind = TENURE_HANDLE_STRONG, .obj = s->rootarr, .active = 1, .vkind = TENURE_HANDLE_STRONG};
    s->scanner = tenure_root_scanner_add(s->rt, scan_fn, s);
    if (!s->scanner)
        diff(s, "tenure_root_scanner_add failed");
    area_add(s, NULL, 0);
    s->reach_dirty = 1;
    rng r0 = {P->seed};
    frame_push(s, &r0);
    check_end(s, "setup");
}

static void run_op(program_state *s, int kind, rng *r) {
    switch (kind) {
    case OP_ALLOC: op_alloc_with(s, r, small_fixed(s, r)); break;
    case OP_ARRAY: op_alloc_with(s, r, small_array(s, r)); break;
    case OP_LARGE: op_alloc_with(s, r, large_spec(s, r)); break;
    case OP_PINNED: {
        aspec a = rchance(r, 60) ? small_fixed(s, r) : small_array(s, r);
        if (rchance(r, 10))
            a = large_spec(s, r);
        a.pinned = 1;
        op_alloc_with(s, r, a);
        break;
    }
    case OP_CHAIN: op_chain(s, r); break;
    case OP_GARBAGE: op_garbage(s, r); break;
    case OP_LINK: op_link(s, r); break;
    case OP_UNLINK: op_unlink(s, r); break;
    case OP_ROOT: op_root(s, r); break;
    case OP_HANDLE: op_handle(s, r); break;
    case OP_PIN: op_pin(s, r); break;
    case OP_FRAME: op_frame(s, r); break;
    case OP_AREA: op_area(s, r); break;
    case OP_COLLECT: op_collect(s, r); break;
    case OP_FROZEN: op_frozen(s, r); break;
    case OP_PAYLOAD: op_payload(s, r); break;
    case OP_MISC: op_misc(s, r); break;
    case OP_VERIFY: full_check(s, "full check (verify op)"); break;
    case OP_FINAL: op_final(s, r); break;
    case OP_FINOP: op_finop(s, r); break;
    case OP_DEPEND: op_depend(s, r); break;
    case OP_XHANDLE: op_xhandle(s, r); break;
    case OP_PRESSURE: op_pressure(s, r); break;
    case OP_HASH: op_hash(s, r); break;
    }
}

/* the ops, drawn from the seed (the weights: normal or --hard-limit) */
static void run_ops(program_state *s, const params *P, shres *sh) {
    int mode = s->oom_mode ? 1 : 0;
    /* background GCs: no finalizable objects (which the model must queue in the collector's
     * order, and a background GC keeps some unreachable ones alive as floating garbage) */
    uint32_t drop = P->drop_mask | (s->bgc ? (1u << OP_FINAL) | (1u << OP_FINOP) : 0u);
    unsigned total = 0;
    for (int k = 0; k < OP_COUNT; k++)
        total += op_weight[mode][k];
    for (long i = 0; i < P->ops; i++) {
        s->op = i;
        if (sh)
            sh->op = i;
        rng r = {mix64(P->seed * 0x100000001b3ull ^ mix64((uint64_t)i + 0x51ed27u))};
        unsigned x = (unsigned)rbelow(&r, total);
        int kind = 0;
        while (x >= op_weight[mode][kind])
            x -= op_weight[mode][kind++];
        if (drop & (1u << kind))
            continue;
        flush_trk(s);
        if (P->trace)
            fprintf(stderr, "op %ld: %s (objects %u, GCs %" PRIu64 ")\n", i, op_names[kind], s->nobj - 1, s->gcs);
        run_op(s, kind, &r);
        bgc_sync(s);
        check_end(s, op_names[kind]);
        if (P->paranoid) {
            char w[64];
            snprintf(w, sizeof w, "full check after op %ld (%s)", i, op_names[kind]);
            full_check(s, w);
        }
        after_alloc_check(s);
    }
}

static void drop_every_root(program_state *s) {
    while (s->nframes)
        frame_pop(s);
    for (int a = 0; a < 2; a++)
        if (s->areas[a].active)
            area_remove(s, a);
    for (int k = 0; k < SCAN_SLOTS; k++)
        set_root_slot(s, &s->scan_slots[k], &s->scan_obj[k], 0);
    for (int h = 0; h < MAX_HANDLES; h++)
        if (s->handles[h].active)
            handle_free(s, h);
    tenure_result res = tenure_root_scanner_remove(s->rt, s->scanner);
    if (res != TENURE_OK)
        diff(s, "tenure_root_scanner_remove: %s", tenure_strerror(res));
    check_end(s, "dropping every root");
}

/* the end: check, drop every root, collect everything: only what frozen objects reach stays */
static void program_end(program_state *s, const params *P, shres *sh) {
    s->op = P->ops;
    if (sh)
        sh->op = P->ops;
    full_check(s, "final full check");
    drop_every_root(s);
    induced_collect(s, 2, 0, "the final full GC");
    full_check(s, "full check after dropping every root and a full GC");
    /* the finalizers of what that GC queued (they neither resurrect nor allocate now), then
     * everything but what frozen objects reach goes */
    s->final_phase = 1;
    for (int round = 0; round < 3 && s->nfq; round++) {
        /* (an object reregistered while queued is queued again by the next GC) */
        run_finalizers(s);
        induced_collect(s, 2, 0, "the full GC after the last finalizers");
        full_check(s, "full check after the last finalizers and a full GC");
    }
    if (s->nfq)
        diff(s, "finalizers are still pending at the end (%u)", s->nfq - s->fqhead);
    check_end(s, "the end");
    uint32_t left = 0;
    for (uint32_t j = 1; j < s->nobj; j++)
        left += !s->objs[j].reclaimed && !(s->objs[j].flags & F_FROZEN);
    if (P->verbose)
        fprintf(stderr,
                "seed %" PRIu64 ": %" PRIu64 " GCs, %u objects, %" PRIu64 " allocations, %" PRIu64
                " NOMEM, %u left (reached from frozen segments), %" PRIu64 " queued for finalization, %" PRIu64
                " finalizers run\n",
                P->seed, s->gcs, s->nobj - 1, s->allocs, s->nomem, left, s->queued_total, s->fin_runs_total);
}

static void program_free(program_state *s, shres *sh) {
    s->destroying = 1;
    tenure_destroy(s->rt);
    free(s->reg);
    free(s->fq);
    free(s->fobjs);
    for (int i = 0; i < s->nfrozen_segs; i++)
        free(s->frozen_mem[i]);
    for (uint32_t j = 1; j < s->nobj; j++)
        free(s->objs[j].refs);
    free(s->objs);
    free(s->reach);
    free(s->queue);
    free(s->frozen);
    free(s->srcq);
    free(s->trk_dead);
    free(s->hkeys);
    free(s->hvals);
    free(s->limbo_keys);
    if (sh) {
        sh->gcs = s->gcs;
        sh->done = 1;
    }
    finalizers_attach(NULL);
    free(s);
}

void run_program(const params *P, shres *sh, int in_fork) {
    program_state *s = xcalloc(1, sizeof *s);
    finalizers_attach(s);
    s->in_fork = in_fork;
    s->P = P;
    s->sh = sh;
    s->op = -1;
    s->thread = pthread_self();
    s->oom_mode = P->hard_limit != 0;
    if (sh)
        sh->op = -1;
    s->nobj = 1;
    s->capobj = 1024;
    s->objs = xcalloc(s->capobj, sizeof *s->objs);
    program_setup(s, P);
    run_ops(s, P, sh);
    program_end(s, P, sh);
    program_free(s, sh);
}
