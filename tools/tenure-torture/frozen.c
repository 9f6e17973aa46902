/*
 * tenure-torture: frozen segments
 * Blocks of objects outside the heap (tenure_frozen_object_init, then
 * tenure_register_frozen_segment) whose references to heap objects are roots.
 */
#include "torture.h"

/* the objects of a new segment: small fixed objects and short arrays; returns the bytes */
static size_t frozen_specs(program_state *s, rng *r, aspec *specs, unsigned n) {
    size_t total = 0;
    for (unsigned i = 0; i < n; i++) {
        unsigned x = (unsigned)rbelow(r, 100);
        if (x < 60)
            specs[i] = small_fixed(s, r);
        else if (x < 75)
            specs[i] = (aspec){s->tix_refarr, rbelow(r, 9), 0};
        else if (x < 90)
            specs[i] = (aspec){rchance(r, 50) ? s->tix_recarr : s->tix_recarr_tr, rrange(r, 1, 6), 0};
        else
            specs[i] = (aspec){s->tix_bytes, rrange(r, 8, 100), 0};
        total += spec_size(s, &specs[i]);
    }
    return total;
}

/* one object at `at`, its number, payload and references to heap objects (plain stores: the
 * block is not registered yet); returns its size */
static size_t frozen_object(program_state *s, rng *r, const aspec *spec, char *at) {
    ttype *t = &s->types[spec->tix];
    size_t sz = tenure_frozen_object_init(s->rt, at, t->t, spec->length);
    if (sz != spec_size(s, spec))
        diff(s, "tenure_frozen_object_init(%s, length %zu) returned %zu, expected %zu", t->name, spec->length, sz,
             spec_size(s, spec));
    check_end(s, "frozen segment");
    uint32_t j = model_new(s, spec->tix, F_FROZEN, spec->length, sz, (uintptr_t)at, 2, rnext(r));
    init_payload(s, j, at);
    mobj *o = &s->objs[j];
    for (uint32_t k = 0; k < o->nrefs; k++) {
        if (!rchance(r, 70))
            continue;
        uint32_t tgt = pick_target(s, r, 10);
        *slot_at(s, o->addr, o->tix, k) = obj_ptr(s, tgt);
        o->refs[k] = tgt;
    }
    return sz;
}

void op_frozen(program_state *s, rng *r) {
    if (s->nfrozen_segs >= MAX_FROZEN_SEGS)
        return;
    unsigned n = (unsigned)rrange(r, 1, 12);
    aspec specs[12];
    size_t total = frozen_specs(s, r, specs, n);
    char *mem = aligned_alloc(8, total);
    if (!mem) {
        fprintf(stderr, "tenure-torture: out of memory (frozen segment)\n");
        exit(2);
    }
    memset(mem, 0xcd, total);
    char *at = mem;
    uint32_t first = s->nobj;
    for (unsigned i = 0; i < n; i++)
        at += frozen_object(s, r, &specs[i], at);
    tenure_result res = tenure_register_frozen_segment(s->rt, mem, total);
    if (res != TENURE_OK)
        diff(s, "tenure_register_frozen_segment(%zu bytes, %u objects): %s", total, n, tenure_strerror(res));
    check_end(s, "frozen segment");
    s->frozen_mem[s->nfrozen_segs++] = mem;
    for (uint32_t j = first; j < s->nobj; j++)
        vec_push(&s->frozen, &s->nfrozen, &s->capfrozen, j);
    s->reach_dirty = 1;
}
