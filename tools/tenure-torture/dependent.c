/*
 * tenure-torture: dependent handles (ephemerons)
 * New ones, primaries and secondaries set, queries, frees.
 */
#include "torture.h"

/* a new dependent handle: its secondary a new object held only by the handle, or any object */
static void dependent_new(program_state *s, rng *r) {
    if (free_handle_index(s) < 0)
        return;
    uint32_t sec = 0;
    if (rchance(r, 50)) {
        aspec a = rchance(r, 80) ? small_fixed(s, r) : small_array(s, r);
        if (rchance(r, 10) && !s->bgc) /* (--bgc: no finalizable objects, see run_ops) */
            a = fin_spec(s, r);
        sec = alloc_oom(s, &a, r);
    } else
        sec = pick_any(s, r, 10);
    uint32_t prim = pick_any(s, r, sec ? 0 : 5);
    int h = free_handle_index(s);
    if (h < 0)
        return;
    tenure_handle *hd = tenure_handle_new_dependent(s->rt, obj_ptr(s, prim), obj_ptr(s, sec));
    if (!hd) {
        diff(s, "tenure_handle_new_dependent(%s, %s) failed: %s", odesc(s, prim), odesc(s, sec),
             tenure_strerror(tenure_last_error(s->rt)));
        return;
    }
    s->handles[h] = (mhandle){.h = hd, .kind = TENURE_HANDLE_DEPENDENT, .obj = prim, .active = 1, .sec = sec};
}

static void dependent_set_secondary(program_state *s, rng *r, int h) {
    mhandle *m = &s->handles[h];
    uint32_t sec = pick_any(s, r, 10);
    if (!m->obj && sec)
        sec = 0; /* a secondary without a primary would die at once (see gc_check.c) */
    tenure_result res = tenure_handle_set_secondary(s->rt, m->h, obj_ptr(s, sec));
    if (res != TENURE_OK)
        diff(s, "tenure_handle_set_secondary(handle %d, %s): %s", h, odesc(s, sec), tenure_strerror(res));
    if (m->sec && m->sec != sec)
        s->reach_dirty = 1;
    m->sec = sec;
}

static void dependent_query(program_state *s, int h) {
    mhandle *m = &s->handles[h];
    void *p = tenure_handle_get(s->rt, m->h), *q = tenure_handle_get_secondary(s->rt, m->h);
    if (p != obj_ptr(s, m->obj) || q != obj_ptr(s, m->sec))
        diff(s, "dependent handle %d holds %p / %p, expected %s / %s", h, p, q, odesc(s, m->obj), odesc(s, m->sec));
}

void op_depend(program_state *s, rng *r) {
    unsigned x = (unsigned)rbelow(r, 100);
    if (x < 40) {
        dependent_new(s, r);
        return;
    }
    int h = random_handle(s, r, TENURE_HANDLE_DEPENDENT);
    if (h <= 0)
        return;
    if (x < 60)
        dependent_set_secondary(s, r, h);
    else if (x < 75)
        handle_set(s, h, pick_any(s, r, s->handles[h].sec ? 0 : 5));
    else if (x < 90)
        dependent_query(s, h);
    else
        handle_free(s, h);
}
