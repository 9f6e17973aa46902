/*
 * tenure-torture: out of memory
 * On NOMEM (--hard-limit): verify, drop data, and allocation must work again.
 */
#include "torture.h"

static void drop_roots(program_state *s, rng *r, unsigned percent) {
    for (int i = 0; i < s->nframes; i++)
        for (unsigned k = 0; k < s->frames[i]->n; k++)
            if (rchance(r, percent))
                set_root_slot(s, &s->frames[i]->vars[k], &s->frames[i]->obj[k], 0);
    for (int a = 0; a < 2; a++)
        if (s->areas[a].active)
            for (unsigned k = 0; k < AREA_SLOTS; k++)
                if (rchance(r, percent))
                    set_root_slot(s, &s->areas[a].slots[k], &s->areas[a].obj[k], 0);
    for (unsigned k = 0; k < SCAN_SLOTS; k++)
        if (rchance(r, percent))
            set_root_slot(s, &s->scan_slots[k], &s->scan_obj[k], 0);
    for (unsigned k = 0; k < ROOTARR_LEN; k++)
        if (rchance(r, percent))
            set_ref(s, s->rootarr, k, 0);
    for (int h = 1; h < MAX_HANDLES; h++)
        if (s->handles[h].active && rchance(r, percent))
            handle_free(s, h);
    for (uint32_t i = 0; i < s->nfrozen; i++) {
        mobj *o = &s->objs[s->frozen[i]];
        for (uint32_t k = 0; k < o->nrefs; k++)
            if (o->refs[k] && rchance(r, percent))
                set_ref(s, s->frozen[i], k, 0);
    }
    s->reach_dirty = 1;
}

/* allocate; on NOMEM check the heap, drop data and retry (which must then work for sizes well
 * below the limit) */
uint32_t alloc_oom(program_state *s, const aspec *a, rng *r) {
    uint32_t j = do_alloc(s, a);
    if (j || !s->P->hard_limit)
        return j;
    full_check(s, "full check after an allocation failed with NOMEM");
    if (rchance(r, 50))
        return 0; /* go on with the full heap for a while */
    size_t size = spec_size(s, a);
    drop_roots(s, r, 50);
    j = do_alloc(s, a);
    if (j)
        return j;
    full_check(s, "full check after NOMEM with half the roots dropped");
    drop_roots(s, r, 100);
    /* what finalization keeps (the queue, and registered garbage the next GC would queue) goes
     * too: run the finalizers, queue the rest with a full GC, run those (they may resurrect:
     * drop again) */
    for (int round = 0; round < 3 && !s->in_fin && (s->nreg || s->nfq - s->fqhead); round++) {
        run_finalizers(s);
        drop_roots(s, r, 100);
        if (s->nreg)
            induced_collect(s, 2, 0, "a full GC to queue finalizable garbage after NOMEM");
    }
    j = do_alloc(s, a);
    if (!j && size <= s->P->hard_limit / 4) {
        tenure_stats st;
        tenure_get_stats(s->rt, &st);
        diff(s,
             "allocating %zu bytes (%s%s) still fails with NOMEM after dropping every root (limit %" PRIu64
             ", committed %" PRIu64 ", heap %" PRIu64 ", live after the last GC %" PRIu64 ")",
             size, s->types[a->tix].name, a->pinned ? ", pinned" : "", s->P->hard_limit, st.committed_bytes,
             st.heap_bytes, st.live_bytes_after_gc);
        check_end(s, "allocation after dropping all data");
    }
    if (j)
        full_check(s, "full check after recovering from NOMEM");
    return j;
}
