/*
 * tenure-torture: handles
 * Strong, pinned, weak short and weak long handles, pins, and the variable, refcounted,
 * async pinned and SizedRef kinds.
 */
#include "torture.h"

int free_handle_index(program_state *s) {
    for (int h = 1; h < MAX_HANDLES; h++)
        if (!s->handles[h].active)
            return h;
    return -1;
}

const int handle_kinds[4] = {TENURE_HANDLE_STRONG, TENURE_HANDLE_PINNED, TENURE_HANDLE_WEAK_SHORT,
                             TENURE_HANDLE_WEAK_LONG};

int handle_new(program_state *s, int kind, uint32_t j) {
    int h = free_handle_index(s);
    if (h < 0)
        return -1;
    int real_kind = s->P->inject == 2 && kind == TENURE_HANDLE_WEAK_LONG ? TENURE_HANDLE_STRONG : kind;
    if (s->P->inject == 3 && kind == TENURE_HANDLE_WEAK_SHORT && is_fin(s, j))
        real_kind = TENURE_HANDLE_WEAK_LONG; /* self-test: the model expects it cleared when j is queued */
    tenure_handle *hd = tenure_handle_new(s->rt, (tenure_handle_kind)real_kind, obj_ptr(s, j));
    if (!hd) {
        diff(s, "tenure_handle_new(kind %d, %s) failed: %s", kind, odesc(s, j),
             tenure_strerror(tenure_last_error(s->rt)));
        check_end(s, "handle_new");
    }
    s->handles[h] = (mhandle){.h = hd, .kind = kind, .obj = j, .active = 1, .vkind = TENURE_HANDLE_STRONG};
    return h;
}

void handle_free(program_state *s, int h) {
    mhandle *m = &s->handles[h];
    tenure_result r = tenure_handle_free(s->rt, m->h);
    if (r != TENURE_OK)
        diff(s, "tenure_handle_free(handle %d): %s", h, tenure_strerror(r));
    if ((m->obj && h_strong(s, m)) || m->kind == TENURE_HANDLE_DEPENDENT)
        s->reach_dirty = 1;
    memset(m, 0, sizeof *m);
}

void handle_set(program_state *s, int h, uint32_t j) {
    mhandle *m = &s->handles[h];
    tenure_result r = tenure_handle_set(s->rt, m->h, obj_ptr(s, j));
    if (r != TENURE_OK)
        diff(s, "tenure_handle_set(handle %d, %s): %s", h, odesc(s, j), tenure_strerror(r));
    if (m->obj && m->obj != j && (h_strong(s, m) || m->kind == TENURE_HANDLE_DEPENDENT))
        s->reach_dirty = 1;
    m->obj = j;
}

int random_handle(program_state *s, rng *r, int kind_filter) {
    int idx[MAX_HANDLES], n = 0;
    for (int h = 1; h < MAX_HANDLES; h++)
        if (s->handles[h].active && (kind_filter < 0 || s->handles[h].kind == kind_filter))
            idx[n++] = h;
    return n ? idx[rbelow(r, (uint64_t)n)] : -1;
}

void op_handle(program_state *s, rng *r) {
    unsigned x = (unsigned)rbelow(r, 100);
    if (x < 45) {
        handle_new(s, handle_kinds[rbelow(r, 4)], pick_target(s, r, 8));
    } else if (x < 75) {
        int h = random_handle(s, r, -1);
        if (h > 0) {
            uint32_t t = pick_target(s, r, 20);
            if (s->handles[h].kind == TENURE_HANDLE_DEPENDENT && !t)
                t = s->handles[h].sec; /* a primary that is its own secondary (NULL only without one) */
            handle_set(s, h, t);
        }
    } else {
        int h = random_handle(s, r, -1);
        if (h > 0)
            handle_free(s, h);
    }
}

void op_pin(program_state *s, rng *r) {
    if (rchance(r, 55)) {
        uint32_t t = pick_reachable(s, r);
        /* prefer objects of the small object heap (the ones that could move) */
        for (int tries = 0; tries < 4 && t && (s->objs[t].flags & (F_POH | F_FROZEN | F_LARGE)); tries++)
            t = pick_reachable(s, r);
        handle_new(s, TENURE_HANDLE_PINNED, t);
    } else {
        int h = random_handle(s, r, TENURE_HANDLE_PINNED);
        if (h > 0)
            handle_free(s, h);
    }
}

static int count_kind(program_state *s, int kind) {
    int n = 0;
    for (int h = 1; h < MAX_HANDLES; h++)
        n += s->handles[h].active && s->handles[h].kind == kind;
    return n;
}

static void set_vkind(program_state *s, int h, int k) {
    mhandle *m = &s->handles[h];
    int was_strong = h_strong(s, m);
    tenure_result res = tenure_handle_set_variable_kind(s->rt, m->h, (tenure_handle_kind)k);
    if (res != TENURE_OK)
        diff(s, "tenure_handle_set_variable_kind(handle %d, %d): %s", h, k, tenure_strerror(res));
    m->vkind = k;
    if (was_strong && !h_strong(s, m))
        s->reach_dirty = 1;
}

static void set_rc(program_state *s, uint32_t j, unsigned rc) {
    if (!j)
        return;
    if (s->objs[j].rc && !rc)
        s->reach_dirty = 1;
    s->objs[j].rc = (uint8_t)rc;
}

/* the refcount callback: the model's count of the object of a refcounted handle */
int rc_cb(void *obj, void *ctx) {
    program_state *s = ctx;
    for (int h = 0; h < MAX_HANDLES; h++) {
        mhandle *m = &s->handles[h];
        if (m->active && m->kind == TENURE_HANDLE_REFCOUNTED && m->obj && s->objs[m->obj].addr == (uintptr_t)obj)
            return s->objs[m->obj].rc;
    }
    int rc;
    if (rc_lookup_moved(s, obj, &rc))
        return rc;
    diff(s, "the refcount callback was asked about %p, which no refcounted handle holds", obj);
    return 0;
}

/* a variable handle that behaves as weak short, weak long, strong or pinned (new or changed) */
static void xhandle_variable(program_state *s, rng *r, int new_one) {
    static const int vk[4] = {TENURE_HANDLE_WEAK_SHORT, TENURE_HANDLE_WEAK_LONG, TENURE_HANDLE_STRONG,
                              TENURE_HANDLE_PINNED};
    if (new_one) {
        int h = handle_new(s, TENURE_HANDLE_VARIABLE, pick_any(s, r, 10));
        if (h > 0 && rchance(r, 60))
            set_vkind(s, h, vk[rbelow(r, 4)]);
    } else {
        int h = random_handle(s, r, TENURE_HANDLE_VARIABLE);
        if (h > 0)
            set_vkind(s, h, vk[rbelow(r, 4)]);
    }
}

/* a refcounted handle (strong while the model's count of its object is not 0), or a count
 * changed */
static void xhandle_refcounted(program_state *s, rng *r, int new_one) {
    if (new_one) {
        uint32_t t = pick_any(s, r, 10);
        if (free_handle_index(s) > 0 && t)
            set_rc(s, t, (unsigned)rbelow(r, 3));
        handle_new(s, TENURE_HANDLE_REFCOUNTED, t);
        return;
    }
    int h = random_handle(s, r, TENURE_HANDLE_REFCOUNTED);
    if (h > 0 && s->handles[h].obj) {
        unsigned rc = s->objs[s->handles[h].obj].rc;
        set_rc(s, s->handles[h].obj, rc && (rc == 3 || rchance(r, 50)) ? rc - 1 : rc + 1);
    }
}

/* an async pinned handle, preferably to a reference array (its elements are pinned too) */
static void xhandle_async_pinned(program_state *s, rng *r) {
    uint32_t t = 0;
    for (int tries = 0; tries < 6 && !t; tries++) {
        uint32_t c = pick_reachable(s, r);
        if (c && s->objs[c].tix == s->tix_refarr && c != s->rootarr)
            t = c;
    }
    if (!t)
        t = pick_any(s, r, 10);
    handle_new(s, TENURE_HANDLE_ASYNC_PINNED, t);
}

/* SizedRef bytes, and a dependent-only query on another kind, which is refused */
static void xhandle_queries(program_state *s, rng *r) {
    check_sized(s, "sized ref query");
    int h = random_handle(s, r, TENURE_HANDLE_VARIABLE);
    if (h > 0) {
        expect_error(s, TENURE_INVALID_HANDLE);
        void *q = tenure_handle_get_secondary(s->rt, s->handles[h].h);
        expect_done(s);
        if (q || !s->got_err)
            diff(s, "tenure_handle_get_secondary of a variable handle: %p, hook calls %d", q, s->got_err);
        tenure_clear_error(s->rt);
    }
}

void op_xhandle(program_state *s, rng *r) {
    static const int kinds[4] = {TENURE_HANDLE_VARIABLE, TENURE_HANDLE_REFCOUNTED, TENURE_HANDLE_ASYNC_PINNED,
                                 TENURE_HANDLE_SIZED_REF};
    unsigned x = (unsigned)rbelow(r, 100);
    if (x < 35) {
        xhandle_variable(s, r, x < 20);
    } else if (x < 60) {
        xhandle_refcounted(s, r, x < 48);
    } else if (x < 72) {
        xhandle_async_pinned(s, r);
    } else if (x < 82) {
        if (count_kind(s, TENURE_HANDLE_SIZED_REF) < MAX_SIZED)
            handle_new(s, TENURE_HANDLE_SIZED_REF, rchance(r, 8) ? 0 : pick_reachable(s, r));
    } else if (x < 94) {
        int h = random_handle(s, r, kinds[rbelow(r, 4)]);
        if (h > 0)
            handle_set(s, h, pick_any(s, r, 10));
    } else {
        xhandle_queries(s, r);
    }
}
