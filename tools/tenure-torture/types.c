/*
 * tenure-torture: the types a program registers
 * Fixed objects of two layouts (reference offsets, trace callbacks), reference / record /
 * byte arrays and finalizable types.
 */
#include "torture.h"

/* trace callbacks: layout B (header, id, payload[2], refs[k]) */
#define TRACE_FN(K)                                                                            \
    static void trace_##K(void *obj, tenure_visitor *v) {                                      \
        void **refs = (void **)((char *)obj + 32);                                             \
        for (int i = 0; i < K; i++) tenure_visit(v, &refs[i]);                                 \
    }
TRACE_FN(1)
TRACE_FN(2)
TRACE_FN(3)
TRACE_FN(4)
static const tenure_trace_fn trace_fns[5] = {NULL, trace_1, trace_2, trace_3, trace_4};

/* a record array {tag, ref} traced by a callback */
static void trace_recs(void *obj, tenure_visitor *v) {
    size_t n = tenure_array_length(obj);
    char *d = tenure_array_data(obj);
    for (size_t i = 0; i < n; i++) tenure_visit(v, (void **)(d + 16 * i + 8));
}

void register_types(program_state *s) {
    static const unsigned pays[4] = {0, 1, 3, 7};
    int n = 0;
    tenure_type_desc d;
    /* layout A: header, id, refs[k], payload[p] (offsets) */
    for (unsigned k = 0; k <= 4; k++)
        for (unsigned pi = 0; pi < 4; pi++) {
            ttype *t = &s->types[n++];
            t->kind = K_FIX;
            t->k = k;
            t->p = pays[pi];
            t->ref_off = 16;
            t->pay_off = 16 + 8 * k;
            t->size = 16 + 8 * (size_t)k + 8 * (size_t)t->p;
            snprintf(t->name, sizeof t->name, "fixA_r%u_p%u", k, t->p);
        }
    /* layout B: header, id, payload[p], refs[k]: offsets (p = 1), trace callbacks (p = 2) */
    for (unsigned k = 1; k <= 4; k++)
        for (unsigned p = 1; p <= 2; p++) {
            ttype *t = &s->types[n++];
            t->kind = K_FIX;
            t->k = k;
            t->p = p;
            t->pay_off = 16;
            t->ref_off = 16 + 8 * p;
            t->size = 16 + 8 * (size_t)k + 8 * (size_t)p;
            snprintf(t->name, sizeof t->name, p == 2 ? "fixB_r%u_traced" : "fixB_r%u", k);
        }
    s->nfix = n;
    for (int i = 0; i < n; i++) {
        ttype *t = &s->types[i];
        size_t offs[4];
        for (unsigned k = 0; k < t->k; k++) offs[k] = t->ref_off + 8 * k;
        memset(&d, 0, sizeof d);
        d.name = t->name;
        d.size = t->size;
        if (t->ref_off > 16 && t->p == 2)
            d.trace = trace_fns[t->k];
        else {
            d.ref_offsets = offs;
            d.ref_count = t->k;
        }
        if (t->k == 0)
            d.flags = TENURE_TYPE_NO_REFS;
        t->t = tenure_type_register(s->rt, &d);
    }
    static const size_t rec_off[1] = {8};
    s->tix_refarr = n++;
    s->types[s->tix_refarr] = (ttype){.kind = K_REFARR, .name = "refs"};
    memset(&d, 0, sizeof d);
    d.name = "refs";
    d.size = sizeof(tenure_array_header);
    d.elem_size = sizeof(void *);
    d.flags = TENURE_TYPE_ARRAY | TENURE_TYPE_REF_ARRAY;
    s->types[s->tix_refarr].t = tenure_type_register(s->rt, &d);
    s->tix_recarr = n++;
    s->types[s->tix_recarr] = (ttype){.kind = K_RECARR, .name = "records"};
    memset(&d, 0, sizeof d);
    d.name = "records";
    d.elem_size = 16;
    d.elem_ref_offsets = rec_off;
    d.elem_ref_count = 1;
    d.flags = TENURE_TYPE_ARRAY;
    s->types[s->tix_recarr].t = tenure_type_register(s->rt, &d);
    s->tix_recarr_tr = n++;
    s->types[s->tix_recarr_tr] = (ttype){.kind = K_RECARR, .name = "records_traced"};
    memset(&d, 0, sizeof d);
    d.name = "records_traced";
    d.elem_size = 16;
    d.trace = trace_recs;
    d.flags = TENURE_TYPE_ARRAY;
    s->types[s->tix_recarr_tr].t = tenure_type_register(s->rt, &d);
    s->tix_bytes = n++;
    s->types[s->tix_bytes] = (ttype){.kind = K_BYTES, .name = "bytes"};
    memset(&d, 0, sizeof d);
    d.name = "bytes";
    d.size = sizeof(tenure_array_header);
    d.elem_size = 1;
    d.flags = TENURE_TYPE_ARRAY | TENURE_TYPE_NO_REFS;
    s->types[s->tix_bytes].t = tenure_type_register(s->rt, &d);
    /* finalizable: layout A, 0, 2 or 4 references, one payload word */
    for (unsigned f = 0; f < 3; f++) {
        int ix = s->tix_fin[f] = n++;
        ttype *t = &s->types[ix];
        t->kind = K_FIX;
        t->k = 2 * f;
        t->p = 1;
        t->ref_off = 16;
        t->pay_off = 16 + 8 * t->k;
        t->size = 16 + 8 * (size_t)t->k + 8;
        t->fin = 1;
        snprintf(t->name, sizeof t->name, "fin_r%u", t->k);
        size_t offs[4];
        for (unsigned k = 0; k < t->k; k++) offs[k] = t->ref_off + 8 * k;
        memset(&d, 0, sizeof d);
        d.name = t->name;
        d.size = t->size;
        d.ref_offsets = offs;
        d.ref_count = t->k;
        d.flags = TENURE_TYPE_FINALIZABLE | (t->k ? 0 : TENURE_TYPE_NO_REFS);
        d.finalize = fin_cb;
        t->t = tenure_type_register(s->rt, &d);
    }
    s->ntypes = n;
    for (int i = 0; i < n; i++)
        if (!s->types[i].t) {
            diff(s, "registering type %s failed", s->types[i].name);
            check_end(s, "type registration");
        }
}
