/*
 * tenure-torture: the check after every GC (from the GC callback)
 * The model's live set for the condemned generations, compared with a traversal of the
 * real heap from the real roots: addresses, movement, generations, weak handles, reclamation.
 */
#include "torture.h"

static void live_mark(program_state *s, uint32_t j) {
    mobj *o = &s->objs[j];
    if (o->mark2 == s->epoch)
        return;
    o->mark2 = s->epoch;
    if (s->mk_count && gen_class(o) <= s->mk_c)
        s->mk_bytes += o->size;
    s->queue[s->qn++] = j;
}

static void live_close(program_state *s) {
    for (; s->qdone < s->qn; s->qdone++) {
        mobj *o = &s->objs[s->queue[s->qdone]];
        for (uint32_t i = 0; i < o->nrefs; i++)
            if (o->refs[i])
                live_mark(s, o->refs[i]);
    }
}

/* survives the GC being modelled (condemned generations <= s->mk_c) */
static int m_alive(program_state *s, uint32_t j) {
    mobj *o = &s->objs[j];
    return gen_class(o) > s->mk_c || o->mark2 == s->epoch;
}

/* DependentHandle: secondaries of surviving primaries, to a fixed point */
static void model_dep_fix(program_state *s) {
    for (int changed = 1; changed;) {
        changed = 0;
        for (int h = 0; h < MAX_HANDLES; h++) {
            mhandle *m = &s->handles[h];
            if (m->active && m->kind == TENURE_HANDLE_DEPENDENT && m->obj && m->sec && m_alive(s, m->obj) &&
                !m_alive(s, m->sec)) {
                live_mark(s, m->sec);
                live_close(s);
                changed = 1;
            }
        }
    }
}

static void src_push(program_state *s, uint32_t j) {
    if (s->srcn == s->srccap) {
        s->srccap = s->srccap * 2 + 256;
        s->srcq = xrealloc(s->srcq, s->srccap * sizeof *s->srcq);
    }
    s->srcq[s->srcn++] = j;
}

/* an edge from a real slot holding p that the model says holds object j */
static void edge(program_state *s, const char *what, unsigned idx, uint32_t from, uint32_t j, void *p) {
    if (j == 0) {
        if (p != NULL)
            diff(s, "after GC %" PRIu64 ": %s %u%s%s holds %p, the model says NULL", s->gcs, what, idx,
                 from ? " of " : "", from ? odesc(s, from) : "", p);
        return;
    }
    mobj *o = &s->objs[j];
    if (o->reclaimed) {
        diff(s, "after GC %" PRIu64 ": model inconsistency: %s %u refers to reclaimed %s", s->gcs, what, idx,
             odesc(s, j));
        return;
    }
    if (o->new_addr) {
        if ((uintptr_t)p != o->new_addr)
            diff(s, "after GC %" PRIu64 ": %s %u%s%s holds %p, expected %s at %#" PRIxPTR, s->gcs, what, idx,
                 from ? " of " : "", from ? odesc(s, from) : "", p, odesc(s, j), o->new_addr);
        return;
    }
    if (p == NULL) {
        diff(s, "after GC %" PRIu64 ": %s %u%s%s is NULL, expected %s (was at %#" PRIxPTR ")", s->gcs, what, idx,
             from ? " of " : "", from ? odesc(s, from) : "", odesc(s, j), o->addr);
        return;
    }
    if (o->mark2 != s->epoch)
        diff(s, "after GC %" PRIu64 ": model inconsistency: %s not live but referenced", s->gcs, odesc(s, j));
    o->new_addr = (uintptr_t)p;
    src_push(s, j);
}

/* 1. the model's live set, in the collector's marking order: the roots (the ready queue and
 *    every handle that is strong now included), what existing objects of generations older
 *    than the condemned ones refer to (cards), closed over references; dependent handles to a
 *    fixed point; weak short handles of dead objects are cleared; registered finalizable
 *    objects found dead are queued and marked through; dependent handles again; weak long
 *    handles of dead objects are cleared, dependent handles of dead primaries too */
static void mark_strong(program_state *s, int c) {
    s->epoch++;
    queue_reserve(s, s->nobj + 16);
    s->qn = s->qdone = 0;
    s->mk_count = 0;
    s->mk_c = c;
    model_roots(s, live_mark);
    for (uint32_t j = 1; j < s->nobj; j++) {
        mobj *o = &s->objs[j];
        if (o->reclaimed || gen_class(o) <= c)
            continue;
        for (uint32_t i = 0; i < o->nrefs; i++)
            if (o->refs[i])
                live_mark(s, o->refs[i]);
    }
    live_close(s);
    model_dep_fix(s);
}

/* Floating garbage of a background GC (limbo objects, background.c) may still be in the heap
 * and, as long as it is, its references are roots of the GCs that do not condemn it: what
 * they reach (dependent handles included) and the model finds dead may survive. Those objects
 * are maybe_kept: limbo rather than reclaimed, and weak handles to them unsure. */
static int maybe_kept(program_state *s, uint32_t j) { return s->nlimbo && s->objs[j].mark3 == s->maybe_epoch; }

static void maybe_mark(program_state *s, uint32_t j) {
    mobj *o = &s->objs[j];
    if (o->mark3 == s->maybe_epoch || o->mark2 == s->epoch || (o->reclaimed && !o->limbo))
        return;
    o->mark3 = s->maybe_epoch;
    s->queue[s->qn++] = j;
}

void mark_maybe_kept(program_state *s) {
    if (!s->nlimbo)
        return;
    s->maybe_epoch++;
    s->qn = s->qdone = 0;
    for (uint32_t j = 1; j < s->nobj; j++)
        if (s->objs[j].limbo)
            maybe_mark(s, j);
    for (uint32_t before = UINT32_MAX; before != s->qn;) {
        before = s->qn;
        for (; s->qdone < s->qn; s->qdone++) {
            mobj *o = &s->objs[s->queue[s->qdone]];
            for (uint32_t i = 0; i < o->nrefs; i++)
                if (o->refs[i])
                    maybe_mark(s, o->refs[i]);
        }
        for (int h = 0; h < MAX_HANDLES; h++) {
            mhandle *m = &s->handles[h];
            if (m->active && m->kind == TENURE_HANDLE_DEPENDENT && m->obj && m->sec && maybe_kept(s, m->obj))
                maybe_mark(s, m->sec);
        }
    }
    s->qn = s->qdone = 0;
}

/* the model's target(s) of a weak or dependent handle died: cleared, or unsure where floating
 * garbage may keep them (settled at the next sync point, background.c) */
void weak_target_died(program_state *s, mhandle *m) {
    uint32_t a = m->obj, b = m->kind == TENURE_HANDLE_DEPENDENT ? m->sec : 0;
    if (!m->unsure && ((a && maybe_kept(s, a)) || (!a && b && maybe_kept(s, b)))) {
        m->unsure = 1;
        m->unsure_obj = a;
        m->unsure_sec = b;
    }
    m->obj = 0;
    if (m->kind == TENURE_HANDLE_DEPENDENT)
        m->sec = 0;
}

static void clear_weak_short(program_state *s) {
    for (int h = 0; h < MAX_HANDLES; h++) {
        mhandle *m = &s->handles[h];
        if (m->active && m->obj && h_eff(s, m) == TENURE_HANDLE_WEAK_SHORT && !m_alive(s, m->obj))
            weak_target_died(s, m);
    }
}

/* registered objects found dead go to the ready queue (in registry order) and are marked
 * through; what that marks is the stats' FinalizationPromotedCount/Size */
static void queue_finalizable(program_state *s) {
    uint32_t kept = 0, first = s->nfq;
    for (uint32_t i = 0; i < s->nreg; i++) {
        uint32_t j = s->reg[i];
        if (m_alive(s, j)) {
            s->reg[kept++] = j;
            continue;
        }
        s->objs[j].registered = 0;
        vec_push(&s->fq, &s->nfq, &s->capfq, j);
        if (s->P->trace)
            fprintf(stderr, "  GC %" PRIu64 " queues %s\n", s->gcs, odesc(s, j));
    }
    s->nreg = kept;
    s->gc_queued_n = s->nfq - first;
    s->queued_total += s->gc_queued_n;
    s->mk_count = 1;
    s->mk_bytes = 0;
    for (uint32_t i = first; i < s->nfq; i++)
        live_mark(s, s->fq[i]);
    live_close(s);
    s->mk_count = 0;
    s->gc_queued_bytes = s->mk_bytes;
    if (s->gc_queued_n)
        model_dep_fix(s);
}

static void clear_weak_long(program_state *s) {
    for (int h = 0; h < MAX_HANDLES; h++) {
        mhandle *m = &s->handles[h];
        if (!m->active)
            continue;
        if (m->kind == TENURE_HANDLE_DEPENDENT) {
            if (m->obj && !m_alive(s, m->obj))
                weak_target_died(s, m);
            else if (!m->obj && m->sec && !m_alive(s, m->sec))
                weak_target_died(s, m); /* no primary keeps it: it dies (the handle must not dangle) */
        } else if (m->obj && h_eff(s, m) == TENURE_HANDLE_WEAK_LONG && !m_alive(s, m->obj))
            weak_target_died(s, m);
    }
}

static void model_live_set(program_state *s, int c) {
    mark_strong(s, c);
    mark_maybe_kept(s);
    clear_weak_short(s);
    queue_finalizable(s);
    clear_weak_long(s);
}

/* 2. traverse the real heap from the real roots */
static void edges_of_roots(program_state *s) {
    for (int i = 0; i < s->nframes; i++)
        for (unsigned k = 0; k < s->frames[i]->n; k++)
            edge(s, "frame slot", k, 0, s->frames[i]->obj[k], s->frames[i]->vars[k]);
    for (int a = 0; a < 2; a++)
        if (s->areas[a].active)
            for (unsigned k = 0; k < AREA_SLOTS; k++)
                edge(s, "root area slot", k, 0, s->areas[a].obj[k], s->areas[a].slots[k]);
    for (unsigned k = 0; k < SCAN_SLOTS; k++)
        edge(s, "scanner slot", k, 0, s->scan_obj[k], s->scan_slots[k]);
}

static const char *now_behaves_as(program_state *s, const mhandle *m) {
    if (m->kind != TENURE_HANDLE_VARIABLE && m->kind != TENURE_HANDLE_REFCOUNTED)
        return "";
    int e = h_eff(s, m);
    return e == TENURE_HANDLE_STRONG      ? " (strong now)"
           : e == TENURE_HANDLE_PINNED    ? " (pinned now)"
           : e == TENURE_HANDLE_WEAK_LONG ? " (weak long now)"
                                          : " (weak short now)";
}

/* every handle (weak ones: cleared exactly when the model says), every secondary; finalizable
 * objects through their weak long trackers: the queued ones are found here */
static void edges_of_handles(program_state *s) {
    char what[96];
    for (unsigned h = 0; h < MAX_HANDLES; h++) {
        mhandle *m = &s->handles[h];
        if (!m->active || m->unsure) /* (unsure: checked when settled, background.c) */
            continue;
        snprintf(what, sizeof what, "%s handle%s", hkind_name(m->kind), now_behaves_as(s, m));
        edge(s, what, h, 0, m->obj, tenure_handle_get(s->rt, m->h));
        if (m->kind == TENURE_HANDLE_DEPENDENT)
            edge(s, "the secondary of dependent handle", h, 0, m->sec, tenure_handle_get_secondary(s->rt, m->h));
    }
    for (uint32_t i = 0; i < s->nfobjs; i++) {
        uint32_t j = s->fobjs[i];
        snprintf(what, sizeof what, "the weak long handle that tracks %.60s:", odesc(s, j));
        edge(s, what, j, 0, m_alive(s, j) ? j : 0, tenure_handle_get(s->rt, s->objs[j].trk));
    }
}

static void traverse_real_heap(program_state *s, int c) {
    s->srcn = 0;
    for (uint32_t j = 1; j < s->nobj; j++) {
        mobj *o = &s->objs[j];
        o->new_addr = 0;
        /* not condemned: must not move (unless a final pause learned late may have moved it) */
        if (!o->reclaimed && gen_class(o) > c && !o->f_moved) {
            o->new_addr = o->addr;
            src_push(s, j);
        }
    }
    edges_of_roots(s);
    edges_of_handles(s);
    char what[96];
    snprintf(what, sizeof what, "after GC %" PRIu64, s->gcs);
    for (uint32_t q = 0; q < s->srcn; q++) {
        uint32_t j = s->srcq[q];
        mobj *o = &s->objs[j];
        if (!check_obj(s, j, o->new_addr, o->new_addr != o->addr, what))
            continue;
        for (uint32_t i = 0; i < o->nrefs; i++) {
            void *p = *slot_at(s, o->new_addr, o->tix, i);
            edge(s, "slot", i, j, o->refs[i], p);
        }
    }
}

/* 3. movement, generations, reclamation */
/* pinned marks in mark: pinned handles (variable ones too), async pinned handles and the
 * elements of their reference arrays */
static void mark_pinned(program_state *s) {
    s->epoch++;
    for (unsigned h = 0; h < MAX_HANDLES; h++) {
        mhandle *m = &s->handles[h];
        if (!m->active || !m->obj)
            continue;
        int e = h_eff(s, m);
        if (e == TENURE_HANDLE_PINNED || e == TENURE_HANDLE_ASYNC_PINNED)
            s->objs[m->obj].mark = s->epoch;
        if (e == TENURE_HANDLE_ASYNC_PINNED && s->objs[m->obj].tix == s->tix_refarr)
            for (uint32_t i = 0; i < s->objs[m->obj].nrefs; i++)
                if (s->objs[m->obj].refs[i])
                    s->objs[s->objs[m->obj].refs[i]].mark = s->epoch;
    }
}

/* j is gone from the model, but may still be in the heap (floating garbage of a background GC:
 * its references stay, roots of later GCs, mark_maybe_kept) */
void make_limbo(program_state *s, uint32_t j) {
    mobj *o = &s->objs[j];
    if (!s->reach_dirty && o->rmark == s->reach_epoch)
        diff(s, "tool bug: %s, gone, is in the list of reachable objects", odesc(s, j));
    if (o->registered || o->trk)
        diff(s, "tool bug: %s, floating garbage, is registered for finalization", odesc(s, j));
    o->reclaimed = 1;
    o->limbo = 1;
    o->gone_at = (uint32_t)s->collections;
    s->nlimbo++;
    s->nlimbo_hashed += o->hash != 0;
}

void reclaim(program_state *s, uint32_t j) {
    mobj *o = &s->objs[j];
    if (!s->reach_dirty && o->rmark == s->reach_epoch)
        diff(s, "tool bug: reclaimed %s is in the list of reachable objects", odesc(s, j));
    if (o->registered)
        diff(s, "model inconsistency: reclaimed %s is registered for finalization", odesc(s, j));
    o->reclaimed = 1;
    o->gone_at = (uint32_t)s->collections;
    free(o->refs);
    o->refs = NULL;
    o->nrefs = 0;
    if (o->trk) {
        if (s->ntrk_dead == s->captrk_dead) {
            s->captrk_dead = s->captrk_dead * 2 + 64;
            s->trk_dead = xrealloc(s->trk_dead, s->captrk_dead * sizeof *s->trk_dead);
        }
        s->trk_dead[s->ntrk_dead++] = o->trk;
        o->trk = NULL;
    }
}

/* a survivor moved: only where the GC could move it */
static void check_move(program_state *s, uint32_t j, const tenure_gc_info *info) {
    mobj *o = &s->objs[j];
    int loh_move_ok = (info->compacted & 8) != 0;
    if (o->mark == s->epoch)
        diff(s,
             "after GC %" PRIu64 ": %s held by a pinned or async pinned handle moved from %#" PRIxPTR " to %#" PRIxPTR,
             s->gcs, odesc(s, j), o->addr, o->new_addr);
    else if (o->flags & F_POH)
        diff(s, "after GC %" PRIu64 ": pinned-heap %s moved from %#" PRIxPTR " to %#" PRIxPTR, s->gcs, odesc(s, j),
             o->addr, o->new_addr);
    else if (o->gen == 3 && !loh_move_ok)
        diff(s,
             "after GC %" PRIu64 ": large %s moved from %#" PRIxPTR " to %#" PRIxPTR
             " although the LOH was not compacted (mask %#x)",
             s->gcs, odesc(s, j), o->addr, o->new_addr, (unsigned)info->compacted);
    else if (o->gen <= 2 && !(info->compacted & (1 << o->gen)) && !o->f_moved)
        diff(s,
             "after GC %" PRIu64 ": %s moved from %#" PRIxPTR " to %#" PRIxPTR
             " although its generation was swept (compacted mask %#x)",
             s->gcs, odesc(s, j), o->addr, o->new_addr, (unsigned)info->compacted);
}

static void check_survivors(program_state *s, const tenure_gc_info *info) {
    int c = info->generation;
    mark_pinned(s);
    uint32_t live_epoch = s->epoch - 1;
    for (uint32_t j = 1; j < s->nobj; j++) {
        mobj *o = &s->objs[j];
        if (o->reclaimed)
            continue;
        if (gen_class(o) > c && !o->f_moved)
            continue; /* checked by the edges (new_addr preset) */
        if (gen_class(o) <= c && o->mark2 != live_epoch) {
            if (maybe_kept(s, j))
                make_limbo(s, j);
            else
                reclaim(s, j);
            continue;
        }
        if (!o->new_addr) {
            diff(s, "after GC %" PRIu64 ": live %s was never reached", s->gcs, odesc(s, j));
            continue;
        }
        if (o->new_addr != o->addr)
            check_move(s, j, info);
        int g = tenure_object_generation(s->rt, (void *)o->new_addr);
        if (o->gen <= 2 ? (g < o->gen || g > 2) : g != o->gen)
            diff(s, "after GC %" PRIu64 " (gen %d): %s is now in generation %d", s->gcs, c, odesc(s, j), g);
        o->addr = o->new_addr;
        o->gen = g;
        o->f_moved = 0;
    }
    /* the finalizable objects that still exist */
    uint32_t nf = 0;
    for (uint32_t i = 0; i < s->nfobjs; i++)
        if (!s->objs[s->fobjs[i]].reclaimed)
            s->fobjs[nf++] = s->fobjs[i];
    s->nfobjs = nf;
}

/* 4. the collector's own figures: finalization, SizedRef, identity hashes */
void check_figures(program_state *s, int c, int background) {
    tenure_stats st;
    tenure_get_stats(s->rt, &st);
    if (st.finalization_promoted_count != s->gc_queued_n || st.finalization_promoted_bytes != s->gc_queued_bytes)
        diff(s,
             "after GC %" PRIu64 " (gen %d): %" PRIu64 " objects (%" PRIu64 " bytes) were kept for finalization, the "
             "model says %" PRIu64 " queued (%" PRIu64 " bytes marked from them)",
             s->gcs, c, st.finalization_promoted_count, st.finalization_promoted_bytes, s->gc_queued_n,
             s->gc_queued_bytes);
    uint64_t hashed = 0;
    for (uint32_t j = 1; j < s->nobj; j++)
        hashed += s->objs[j].hash && !s->objs[j].reclaimed;
    /* (floating garbage of a background GC keeps its entries until a GC finds it dead) */
    if (st.sync_blocks < hashed || st.sync_blocks > hashed + s->nlimbo_hashed)
        diff(s,
             "after GC %" PRIu64 ": the identity hash table has %" PRIu64 " entries, the model has %" PRIu64
             " live hashed objects (and %u that may be floating garbage)",
             s->gcs, st.sync_blocks, hashed, s->nlimbo_hashed);
    if (c == 2 && !background) /* (a background GC's SizedRef marking stops at its premarks) */
        check_sized_after_full_gc(s);
}

/* the whole model's live set, as a full GC marks it from the roots (a final pause's mark):
 * marked_alive says which objects it holds */
void mark_full(program_state *s) { mark_strong(s, 2); }
int marked_alive(program_state *s, uint32_t j) { return m_alive(s, j); }

/* the real heap against the model after a GC the model has applied (model_live_set or
 * background.c's final pause): the model's live objects of the condemned generations found
 * from the roots, the others where they were; reclamation of the condemned dead, movement,
 * generations */
void check_heap_after(program_state *s, const tenure_gc_info *info) {
    traverse_real_heap(s, info->generation);
    check_survivors(s, info);
}

void gc_check(program_state *s, const tenure_gc_info *info) {
    if (info->background) { /* its end: the final pause was the GC (background.c) */
        bgc_end_check(s, info, 1);
        return;
    }
    if (info->generation == 2)
        model_sized(s);
    model_live_set(s, info->generation);
    check_heap_after(s, info);
    check_figures(s, info->generation, 0);
    if (info->generation == 2)
        bgc_forget_limbo(s); /* a blocking full GC: no floating garbage is left */
}

static int cmp_addr(const void *a, const void *b, void *ctx) {
    const program_state *s = ctx;
    uintptr_t x = s->objs[*(const uint32_t *)a].addr, y = s->objs[*(const uint32_t *)b].addr;
    return x < y ? -1 : x > y;
}

/* existing objects do not overlap */
void check_overlap(program_state *s, const char *where) {
    queue_reserve(s, s->nobj + 16);
    uint32_t n = 0;
    for (uint32_t j = 1; j < s->nobj; j++)
        if (!s->objs[j].reclaimed)
            s->queue[n++] = j;
    qsort_r(s->queue, n, sizeof *s->queue, cmp_addr, s);
    for (uint32_t i = 1; i < n; i++) {
        mobj *a = &s->objs[s->queue[i - 1]], *b = &s->objs[s->queue[i]];
        if (a->addr + a->size > b->addr)
            diff(s, "%s: %s at %#" PRIxPTR " overlaps %s at %#" PRIxPTR, where, odesc(s, s->queue[i - 1]), a->addr,
                 odesc(s, s->queue[i]), b->addr);
    }
}
