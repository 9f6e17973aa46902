/*
 * tenure-torture: the model's bookkeeping
 * New objects, the finalization registry, the model's roots, the strongly reachable set
 * (operands are chosen from it) and reference stores through the barrier.
 */
#include "torture.h"

uint32_t model_new(program_state *s, int tix, uint8_t flags, size_t length, size_t size, uintptr_t addr, int gen,
                   uint64_t seed) {
    if (s->nobj == s->capobj) {
        s->capobj = s->capobj ? s->capobj * 2 : 1024;
        s->objs = xrealloc(s->objs, s->capobj * sizeof *s->objs);
    }
    uint32_t j = s->nobj++;
    mobj *o = &s->objs[j];
    memset(o, 0, sizeof *o);
    ttype *t = &s->types[tix];
    o->tix = (uint16_t)tix;
    o->flags = flags;
    o->length = length;
    o->size = size;
    o->addr = addr;
    o->gen = gen;
    o->seed = seed;
    o->born = s->op;
    o->nrefs = t->kind == K_FIX                               ? t->k
               : (t->kind == K_REFARR || t->kind == K_RECARR) ? (uint32_t)length
               : t->kind == K_FLDARR                          ? (uint32_t)length + 1
                                                              : 0;
    o->refs = o->nrefs ? xcalloc(o->nrefs, sizeof(uint32_t)) : NULL;
    return j;
}

void queue_reserve(program_state *s, uint32_t n) {
    if (n > s->capqueue) {
        s->capqueue = n + n / 2 + 64;
        s->queue = xrealloc(s->queue, s->capqueue * sizeof *s->queue);
    }
}

int is_fin(program_state *s, uint32_t j) { return j && s->types[s->objs[j].tix].fin; }

/* what a handle behaves as in the next GC (the collector works this out at each GC's start) */
int h_eff(program_state *s, const mhandle *m) {
    switch (m->kind) {
    case TENURE_HANDLE_VARIABLE: return m->vkind;
    case TENURE_HANDLE_REFCOUNTED:
        return m->obj && s->objs[m->obj].rc ? TENURE_HANDLE_STRONG : TENURE_HANDLE_WEAK_SHORT;
    default: return m->kind;
    }
}

/* keeps its object alive */
int h_strong(program_state *s, const mhandle *m) {
    int e = h_eff(s, m);
    return e == TENURE_HANDLE_STRONG || e == TENURE_HANDLE_PINNED || e == TENURE_HANDLE_SIZED_REF ||
           e == TENURE_HANDLE_ASYNC_PINNED;
}

void vec_push(uint32_t **v, uint32_t *n, uint32_t *cap, uint32_t x) {
    if (*n == *cap) {
        *cap = *cap * 2 + 64;
        *v = xrealloc(*v, *cap * sizeof **v);
    }
    (*v)[(*n)++] = x;
}

/* the registry (tn_finalize_register / tenure_reregister_for_finalize append) */
void model_register(program_state *s, uint32_t j) {
    if (s->objs[j].registered)
        return;
    s->objs[j].registered = 1;
    vec_push(&s->reg, &s->nreg, &s->capreg, j);
}

/* tenure_suppress_finalize, as documented: the finalizer will not run until reregistered (the
 * registration goes, and so does a queued run that has not started) */
void model_suppress(program_state *s, uint32_t j) {
    if (s->objs[j].registered) {
        for (uint32_t i = 0; i < s->nreg; i++)
            if (s->reg[i] == j) {
                s->reg[i] = s->reg[--s->nreg];
                break;
            }
        s->objs[j].registered = 0;
    }
    for (uint32_t i = s->fqhead; i < s->nfq; i++)
        if (s->fq[i] == j)
            s->fq[i] = 0;
    s->reach_dirty = 1;
}

/* visit the model's roots: f(object) for every strongly held object */
void model_roots(program_state *s, void (*f)(program_state *, uint32_t)) {
    for (int i = 0; i < s->nframes; i++)
        for (unsigned k = 0; k < s->frames[i]->n; k++)
            if (s->frames[i]->obj[k])
                f(s, s->frames[i]->obj[k]);
    for (int a = 0; a < 2; a++)
        if (s->areas[a].active)
            for (int k = 0; k < AREA_SLOTS; k++)
                if (s->areas[a].obj[k])
                    f(s, s->areas[a].obj[k]);
    for (int k = 0; k < SCAN_SLOTS; k++)
        if (s->scan_obj[k])
            f(s, s->scan_obj[k]);
    for (int h = 0; h < MAX_HANDLES; h++)
        if (s->handles[h].active && s->handles[h].obj && h_strong(s, &s->handles[h]))
            f(s, s->handles[h].obj);
    for (uint32_t i = 0; i < s->nfrozen; i++)
        f(s, s->frozen[i]);
    /* the ready queue (the entry whose finalizer runs included) */
    for (uint32_t i = s->fqhead; i < s->nfq; i++)
        if (s->fq[i])
            f(s, s->fq[i]);
}

static void reach_mark(program_state *s, uint32_t j) {
    mobj *o = &s->objs[j];
    if (o->rmark == s->reach_epoch)
        return;
    o->rmark = s->reach_epoch;
    s->queue[s->qn++] = j;
}

/* the strongly reachable objects, into s->reach */
static void compute_reach(program_state *s) {
    s->reach_epoch++;
    queue_reserve(s, s->nobj + 16);
    s->qn = 0;
    model_roots(s, reach_mark);
    uint32_t q = 0;
    for (;;) {
        for (; q < s->qn; q++) {
            mobj *o = &s->objs[s->queue[q]];
            for (uint32_t i = 0; i < o->nrefs; i++)
                if (o->refs[i])
                    reach_mark(s, o->refs[i]);
        }
        /* secondaries of reachable primaries */
        for (int h = 0; h < MAX_HANDLES; h++) {
            mhandle *m = &s->handles[h];
            if (m->active && m->kind == TENURE_HANDLE_DEPENDENT && m->obj && m->sec &&
                s->objs[m->obj].rmark == s->reach_epoch)
                reach_mark(s, m->sec);
        }
        if (q == s->qn)
            break;
    }
    if (s->qn > s->capreach) {
        s->capreach = s->qn + s->qn / 2 + 64;
        s->reach = xrealloc(s->reach, s->capreach * sizeof *s->reach);
    }
    memcpy(s->reach, s->queue, s->qn * sizeof *s->reach);
    s->nreach = s->qn;
    s->reach_dirty = 0;
}

void reach_add(program_state *s, uint32_t j) {
    if (s->reach_dirty)
        return;
    if (s->nreach == s->capreach) {
        s->capreach = s->capreach * 2 + 64;
        s->reach = xrealloc(s->reach, s->capreach * sizeof *s->reach);
    }
    s->reach[s->nreach++] = j;
    s->objs[j].rmark = s->reach_epoch;
}

int is_reachable(program_state *s, uint32_t j) {
    if (s->reach_dirty)
        compute_reach(s);
    return j && s->objs[j].rmark == s->reach_epoch;
}

uint32_t pick_reachable(program_state *s, rng *r) {
    if (s->reach_dirty)
        compute_reach(s);
    return s->nreach ? s->reach[rbelow(r, s->nreach)] : 0;
}

/* a reachable object or NULL */
uint32_t pick_target(program_state *s, rng *r, unsigned null_percent) {
    if (rchance(r, null_percent))
        return 0;
    return pick_reachable(s, r);
}

/* a reachable object with reference slots (the root array if none found) */
uint32_t pick_source(program_state *s, rng *r) {
    for (int tries = 0; tries < 12; tries++) {
        uint32_t j = pick_reachable(s, r);
        if (j && s->objs[j].nrefs)
            return j;
    }
    return s->rootarr;
}

/* a random object that exists (reachable or not: it is an object until the next GC reclaims it) */
uint32_t pick_existing(program_state *s, rng *r) {
    for (int tries = 0; tries < 8 && s->nobj > 1; tries++) {
        uint32_t j = (uint32_t)rrange(r, 1, s->nobj - 1);
        if (!s->objs[j].reclaimed)
            return j;
    }
    return pick_reachable(s, r);
}

static int random_dependent_secondary(program_state *s, rng *r) {
    int h = random_handle(s, r, TENURE_HANDLE_DEPENDENT);
    return h > 0 ? (int)s->handles[h].sec : 0;
}

/* NULL, a reachable object, the secondary of a dependent handle (chains, cycles) or any object */
uint32_t pick_any(program_state *s, rng *r, unsigned null_percent) {
    if (rchance(r, null_percent))
        return 0;
    unsigned x = (unsigned)rbelow(r, 100);
    uint32_t j = 0;
    if (x < 45)
        j = pick_reachable(s, r);
    else if (x < 70)
        j = (uint32_t)random_dependent_secondary(s, r);
    else if (x < 80 && s->nfobjs)
        j = s->fobjs[rbelow(r, s->nfobjs)];
    if (!j)
        j = pick_existing(s, r);
    return j;
}

/* store a reference through the barrier and in the model */
void set_ref(program_state *s, uint32_t src, unsigned slot, uint32_t dst) {
    mobj *from = &s->objs[src];
    if (slot >= from->nrefs || from->reclaimed) {
        diff(s, "tool bug: set_ref(s, %s, slot %u)", odesc(s, src), slot);
        die(s, "set_ref");
    }
    void *val = obj_ptr(s, dst);
    if (s->P->inject == 1)
        *slot_at(s, from->addr, from->tix, slot) = val; /* self-test: a store that misses the barrier */
    else
        tenure_write_ref(s->rt, (void *)from->addr, slot_at(s, from->addr, from->tix, slot), val);
    if (from->refs[slot] && from->refs[slot] != dst)
        s->reach_dirty = 1;
    from->refs[slot] = dst;
}
