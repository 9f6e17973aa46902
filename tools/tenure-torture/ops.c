/*
 * tenure-torture: the mutator's operations on the object graph
 * Allocations to random places, chains and trees, garbage bursts, stores, payload
 * rewrites and the queries and refused calls of op misc.
 */
#include "torture.h"

/* fill a few reference slots of a new object j with reachable objects */
void prelink(program_state *s, rng *r, uint32_t j) {
    mobj *o = &s->objs[j];
    if (!o->nrefs || rchance(r, 50))
        return;
    unsigned n = (unsigned)rrange(r, 1, o->nrefs < 4 ? o->nrefs : 4);
    for (unsigned k = 0; k < n; k++) {
        unsigned slot = (unsigned)rbelow(r, s->objs[j].nrefs);
        uint32_t t = pick_target(s, r, 10);
        set_ref(s, j, slot, t);
    }
}

void op_alloc_with(program_state *s, rng *r, aspec a) {
    dest d = choose_dest(s, r, 0);
    uint32_t j = alloc_oom(s, &a, r);
    if (!j)
        return;
    dest_recheck(s, &d, D_NONE);
    if (d.kind != D_NONE && d.kind != D_HANDLE)
        prelink(s, r, j);
    store_dest(s, &d, j);
}

void op_chain(program_state *s, rng *r) {
    unsigned n = (unsigned)rrange(r, 2, rchance(r, 20) ? 400 : 60);
    dest d = choose_dest(s, r, 1);
    aspec a = small_fixed(s, r);
    /* a head with references */
    for (int tries = 0; tries < 20 && s->types[a.tix].k == 0; tries++)
        a = small_fixed(s, r);
    if (s->types[a.tix].k == 0)
        a = (aspec){s->tix_refarr, 4, 0};
    uint32_t head = alloc_oom(s, &a, r);
    if (!head)
        return;
    dest_recheck(s, &d, D_ROOTARR);
    store_dest(s, &d, head);
    uint32_t *nodes = xcalloc(n, sizeof *nodes);
    unsigned nn = 0;
    nodes[nn++] = head;
    int wide = rchance(r, 30);
    for (unsigned i = 1; i < n; i++) {
        aspec b = rchance(r, 85) ? small_fixed(s, r) : small_array(s, r);
        uint32_t j = alloc_oom(s, &b, r);
        if (!j)
            break;
        /* attach it to a node of the chain that is still reachable and has references: the
         * newest (a list) or any (a tree; overwriting a slot drops a subtree) */
        uint32_t parent = 0;
        for (int tries = 0; tries < 8 && !parent; tries++) {
            uint32_t c = wide ? nodes[rbelow(r, nn)] : nodes[tries < (int)nn ? nn - 1 - (unsigned)tries : 0];
            if (s->objs[c].nrefs && is_reachable(s, c))
                parent = c;
        }
        if (!parent)
            break; /* j stays garbage */
        set_ref(s, parent, (unsigned)rbelow(r, s->objs[parent].nrefs), j);
        reach_add(s, j);
        nodes[nn++] = j;
    }
    free(nodes);
}

/* a burst of garbage: objects that refer to each other (while no GC intervened) and to live
 * objects, and are referenced by nothing that is reachable */
/* new object j joins the cluster (which starts again after a GC: the earlier members may be
 * gone); its first max_refs slots refer to a member (x < member_percent), a reachable object
 * (x < reachable_percent) or nothing */
void cluster_add(program_state *s, rng *r, cluster *c, uint32_t j, const cluster_links *l) {
    if (s->collections != c->gcs) {
        c->n = 0;
        c->gcs = s->collections;
    }
    mobj *o = &s->objs[j];
    for (uint32_t k = 0; k < o->nrefs && k < l->max_refs; k++) {
        unsigned x = (unsigned)rbelow(r, 100);
        uint32_t t = x < l->member_percent && c->n ? c->nodes[rbelow(r, c->n)]
                     : x < l->reachable_percent    ? pick_reachable(s, r)
                                                   : 0;
        if (t)
            set_ref(s, j, k, t);
    }
    c->nodes[c->n++] = j;
}

void op_garbage(program_state *s, rng *r) {
    static const cluster_links links = {4, 50, 70};
    unsigned n = (unsigned)rrange(r, 5, rchance(r, 20) ? 1000 : 150);
    cluster c = {xcalloc(n, sizeof *c.nodes), 0, s->collections};
    for (unsigned i = 0; i < n; i++) {
        aspec a = rchance(r, 80) ? small_fixed(s, r) : small_array(s, r);
        uint32_t j = alloc_oom(s, &a, r);
        if (!j)
            break;
        cluster_add(s, r, &c, j, &links);
    }
    free(c.nodes);
}

void op_link(program_state *s, rng *r) {
    uint32_t src = pick_source(s, r);
    unsigned slot = (unsigned)rbelow(r, s->objs[src].nrefs);
    uint32_t t = pick_target(s, r, 15);
    set_ref(s, src, slot, t);
}

void op_unlink(program_state *s, rng *r) {
    uint32_t src = pick_source(s, r);
    mobj *o = &s->objs[src];
    unsigned start = (unsigned)rbelow(r, o->nrefs);
    for (unsigned k = 0; k < o->nrefs && k < 64; k++) {
        unsigned slot = (start + k) % o->nrefs;
        if (o->refs[slot]) {
            set_ref(s, src, slot, 0);
            return;
        }
    }
}

void op_payload(program_state *s, rng *r) {
    for (int tries = 0; tries < 8; tries++) {
        uint32_t j = pick_reachable(s, r);
        if (!j)
            return;
        mobj *o = &s->objs[j];
        ttype *t = &s->types[o->tix];
        if ((t->kind == K_FIX && t->p) || t->kind == K_BYTES || t->kind == K_RECARR || t->kind == K_FLDARR) {
            o->seed = rnext(r);
            init_payload(s, j, (char *)o->addr);
            return;
        }
    }
}

void op_misc(program_state *s, rng *r) {
    unsigned x = (unsigned)rbelow(r, 4);
    if (x == 0) {
        /* dependent handles come only from tenure_handle_new_dependent */
        expect_error(s, TENURE_INVALID_ARGUMENT);
        tenure_handle *h = tenure_handle_new(s->rt, TENURE_HANDLE_DEPENDENT, NULL);
        expect_done(s);
        if (h != NULL || tenure_last_error(s->rt) != TENURE_INVALID_ARGUMENT || !s->got_err)
            diff(s,
                 "tenure_handle_new(DEPENDENT) returned %p, last error %s, hook calls %d (expected NULL, "
                 "INVALID_ARGUMENT)",
                 (void *)h, tenure_strerror(tenure_last_error(s->rt)), s->got_err);
        tenure_clear_error(s->rt);
    } else if (x == 1) {
        /* OPTIMIZED with AGGRESSIVE is refused */
        expect_error(s, TENURE_INVALID_ARGUMENT);
        uint64_t before = s->gcs;
        tenure_result res = tenure_collect(s->rt, 2, TENURE_COLLECT_OPTIMIZED | TENURE_COLLECT_AGGRESSIVE);
        expect_done(s);
        if (res != TENURE_INVALID_ARGUMENT || s->gcs != before)
            diff(s, "tenure_collect(OPTIMIZED|AGGRESSIVE) returned %s and ran %" PRIu64 " GCs", tenure_strerror(res),
                 s->gcs - before);
        tenure_clear_error(s->rt);
    } else {
        /* queries on a reachable object */
        uint32_t j = pick_reachable(s, r);
        if (j)
            check_obj(s, j, s->objs[j].addr, 2, "object query");
        check_gc_count(s, "misc");
    }
    check_end(s, "misc");
}
