/*
 * tenure-torture: roots
 * Where new objects go (a destination), shadow frames, root areas, the root scanner and
 * the root array.
 */
#include "torture.h"

dest choose_dest(program_state *s, rng *r, int strong_only) {
    dest d;
    memset(&d, 0, sizeof d);
    for (;;) {
        unsigned x = (unsigned)rbelow(r, 100);
        if (x < 18) {
            d.kind = D_ROOTARR;
            d.slot = (unsigned)rbelow(r, ROOTARR_LEN);
        } else if (x < 30) {
            if (!s->nframes)
                continue;
            d.kind = D_FRAME;
            d.a = (int)rbelow(r, (uint64_t)s->nframes);
            d.slot = (unsigned)rbelow(r, s->frames[d.a]->n);
        } else if (x < 38) {
            d.a = (int)rbelow(r, 2);
            if (!s->areas[d.a].active)
                continue;
            d.kind = D_AREA;
            d.slot = (unsigned)rbelow(r, AREA_SLOTS);
        } else if (x < 44) {
            d.kind = D_SCAN;
            d.slot = (unsigned)rbelow(r, SCAN_SLOTS);
        } else if (x < 82) {
            d.kind = D_FIELD;
            d.src = pick_source(s, r);
            d.slot = (unsigned)rbelow(r, s->objs[d.src].nrefs);
        } else if (x < 92) {
            d.kind = D_HANDLE;
            d.hkind = handle_kinds[strong_only ? rbelow(r, 2) : rbelow(r, 4)];
            if (free_handle_index(s) < 0)
                continue;
        } else {
            if (strong_only)
                continue;
            d.kind = D_NONE;
        }
        return d;
    }
}

void set_root_slot(program_state *s, void **slot, uint32_t *model, uint32_t j) {
    if (*model && *model != j)
        s->reach_dirty = 1;
    *slot = obj_ptr(s, j);
    *model = j;
}

/* after the allocation of what goes there: a field whose source alloc_oom dropped becomes a
 * root array slot; a handle when none is free any more becomes no_handle (D_NONE or D_ROOTARR) */
void dest_recheck(program_state *s, dest *d, int no_handle) {
    if (d->kind == D_FIELD && !is_reachable(s, d->src))
        d->kind = D_ROOTARR, d->slot %= ROOTARR_LEN;
    if (d->kind == D_HANDLE && free_handle_index(s) < 0)
        d->kind = no_handle, d->slot %= ROOTARR_LEN;
}

void store_dest(program_state *s, const dest *d, uint32_t j) {
    switch (d->kind) {
    case D_ROOTARR: set_ref(s, s->rootarr, d->slot, j); break;
    case D_FIELD: set_ref(s, d->src, d->slot, j); break;
    case D_FRAME: set_root_slot(s, &s->frames[d->a]->vars[d->slot], &s->frames[d->a]->obj[d->slot], j); break;
    case D_AREA: set_root_slot(s, &s->areas[d->a].slots[d->slot], &s->areas[d->a].obj[d->slot], j); break;
    case D_SCAN: set_root_slot(s, &s->scan_slots[d->slot], &s->scan_obj[d->slot], j); break;
    case D_HANDLE: handle_new(s, d->hkind, j); break;
    default: break;
    }
    int strong = d->kind != D_NONE && !(d->kind == D_HANDLE &&
                                        (d->hkind == TENURE_HANDLE_WEAK_SHORT || d->hkind == TENURE_HANDLE_WEAK_LONG));
    if (strong)
        reach_add(s, j);
}

void op_root(program_state *s, rng *r) {
    unsigned x = (unsigned)rbelow(r, 4);
    uint32_t t = pick_target(s, r, 40);
    if (x == 0 && s->nframes) {
        mframe *f = s->frames[rbelow(r, (uint64_t)s->nframes)];
        unsigned k = (unsigned)rbelow(r, f->n);
        set_root_slot(s, &f->vars[k], &f->obj[k], t);
    } else if (x == 1) {
        int a = (int)rbelow(r, 2);
        if (!s->areas[a].active)
            return;
        unsigned k = (unsigned)rbelow(r, AREA_SLOTS);
        set_root_slot(s, &s->areas[a].slots[k], &s->areas[a].obj[k], t);
    } else if (x == 2) {
        unsigned k = (unsigned)rbelow(r, SCAN_SLOTS);
        set_root_slot(s, &s->scan_slots[k], &s->scan_obj[k], t);
    } else {
        set_ref(s, s->rootarr, (unsigned)rbelow(r, ROOTARR_LEN), t);
    }
}

void frame_push(program_state *s, rng *r) {
    mframe *f = xcalloc(1, sizeof *f);
    f->n = (unsigned)rrange(r, 1, FRAME_SLOTS);
    for (unsigned k = 0; k < f->n; k++) {
        f->slots[k] = &f->vars[k];
        uint32_t t = pick_target(s, r, 50);
        f->obj[k] = t;
        f->vars[k] = obj_ptr(s, t);
    }
    f->f.prev = NULL;
    f->f.count = f->n;
    f->f.slots = (void **const *)f->slots;
    tenure_frame_push(s->rt, &f->f);
    s->frames[s->nframes++] = f;
}

void frame_pop(program_state *s) {
    mframe *f = s->frames[--s->nframes];
    tenure_frame_pop(s->rt, &f->f);
    for (unsigned k = 0; k < f->n; k++)
        if (f->obj[k])
            s->reach_dirty = 1;
    free(f);
}

void op_frame(program_state *s, rng *r) {
    if (s->nframes < MAX_FRAMES && (s->nframes == 0 || rchance(r, 50)))
        frame_push(s, r);
    else if (s->nframes > 0)
        frame_pop(s);
}

void area_add(program_state *s, rng *r, int a) {
    marea *m = &s->areas[a];
    for (unsigned k = 0; k < AREA_SLOTS; k++) {
        uint32_t t = r ? pick_target(s, r, 60) : 0;
        m->obj[k] = t;
        m->slots[k] = obj_ptr(s, t);
    }
    m->ra = tenure_root_area_add(s->rt, m->slots, AREA_SLOTS);
    if (!m->ra)
        diff(s, "tenure_root_area_add failed: %s", tenure_strerror(tenure_last_error(s->rt)));
    m->active = 1;
}

void area_remove(program_state *s, int a) {
    marea *m = &s->areas[a];
    tenure_result res = tenure_root_area_remove(s->rt, m->ra);
    if (res != TENURE_OK)
        diff(s, "tenure_root_area_remove: %s", tenure_strerror(res));
    for (unsigned k = 0; k < AREA_SLOTS; k++) {
        if (m->obj[k])
            s->reach_dirty = 1;
        m->obj[k] = 0;
        m->slots[k] = NULL;
    }
    m->active = 0;
    m->ra = NULL;
}

void op_area(program_state *s, rng *r) {
    int a = (int)rbelow(r, 2);
    if (s->areas[a].active)
        area_remove(s, a);
    else
        area_add(s, r, a);
}

void scan_fn(tenure_runtime *rt, tenure_visitor *v, void *ctx) {
    (void)rt;
    program_state *s = ctx;
    for (int k = 0; k < SCAN_SLOTS; k++)
        tenure_visit(v, &s->scan_slots[k]);
}
