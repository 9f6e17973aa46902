/*
 * tenure-torture: the types a program registers
 * Fixed objects of two layouts (reference offsets, trace callbacks), reference / record /
 * byte arrays, reference arrays with fixed fields, and finalizable types.
 */
#include "torture.h"

/* trace callbacks: layout B (header, id, payload[2], refs[k]) */
#define TRACE_FN(K)                                       \
    static void trace_##K(void *obj, tenure_visitor *v) { \
        void **refs = (void **)((char *)obj + 32);        \
        for (int i = 0; i < K; i++)                       \
            tenure_visit(v, &refs[i]);                    \
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
    for (size_t i = 0; i < n; i++)
        tenure_visit(v, (void **)(d + 16 * i + 8));
}

/* layout A (refs_first): header, id, refs[k], payload[p]; layout B: header, id, payload[p], refs[k] */
static void fixed_layout(ttype *t, unsigned k, unsigned p, int refs_first) {
    t->kind = K_FIX;
    t->k = k;
    t->p = p;
    t->ref_off = refs_first ? 16 : 16 + 8 * p;
    t->pay_off = refs_first ? 16 + 8 * k : 16;
    t->size = 16 + 8 * (size_t)k + 8 * (size_t)p;
}

/* a fixed type: its references by offsets, or (layout B, two payload words) by a trace callback */
static const tenure_type *register_fixed(program_state *s, const ttype *t) {
    size_t offs[4];
    for (unsigned k = 0; k < t->k; k++)
        offs[k] = t->ref_off + 8 * k;
    tenure_type_desc d;
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
    if (t->fin) {
        d.flags |= TENURE_TYPE_FINALIZABLE;
        d.finalize = fin_cb;
    }
    return tenure_type_register(s->rt, &d);
}

/* the small fixed types (small_fixed picks among them): layout A with 0..4 references and 0, 1,
 * 3 or 7 payload words; layout B with 1..4 references, offsets (p = 1) or a trace callback (p = 2) */
static int register_fixed_types(program_state *s) {
    static const unsigned pays[4] = {0, 1, 3, 7};
    int n = 0;
    for (unsigned k = 0; k <= 4; k++)
        for (unsigned pi = 0; pi < 4; pi++) {
            ttype *t = &s->types[n++];
            fixed_layout(t, k, pays[pi], 1);
            snprintf(t->name, sizeof t->name, "fixA_r%u_p%u", k, t->p);
        }
    for (unsigned k = 1; k <= 4; k++)
        for (unsigned p = 1; p <= 2; p++) {
            ttype *t = &s->types[n++];
            fixed_layout(t, k, p, 0);
            snprintf(t->name, sizeof t->name, p == 2 ? "fixB_r%u_traced" : "fixB_r%u", k);
        }
    for (int i = 0; i < n; i++)
        s->types[i].t = register_fixed(s, &s->types[i]);
    return n;
}

static int register_array(program_state *s, int *n, int kind, const tenure_type_desc *d) {
    int ix = (*n)++;
    s->types[ix] = (ttype){.kind = kind};
    snprintf(s->types[ix].name, sizeof s->types[ix].name, "%s", d->name);
    s->types[ix].t = tenure_type_register(s->rt, d);
    return ix;
}

/* reference arrays, record arrays {tag, ref} (offsets or a trace callback), reference arrays
 * with fixed fields, byte arrays */
static void register_array_types(program_state *s, int *n) {
    static const size_t rec_off[1] = {8};
    s->tix_refarr = register_array(s, n, K_REFARR,
                                   &(tenure_type_desc){.name = "refs",
                                                       .size = sizeof(tenure_array_header),
                                                       .elem_size = sizeof(void *),
                                                       .flags = TENURE_TYPE_ARRAY | TENURE_TYPE_REF_ARRAY});
    s->tix_recarr = register_array(s, n, K_RECARR,
                                   &(tenure_type_desc){.name = "records",
                                                       .elem_size = 16,
                                                       .elem_ref_offsets = rec_off,
                                                       .elem_ref_count = 1,
                                                       .flags = TENURE_TYPE_ARRAY});
    s->tix_recarr_tr = register_array(s, n, K_RECARR,
                                      &(tenure_type_desc){.name = "records_traced",
                                                          .elem_size = 16,
                                                          .trace = trace_recs,
                                                          .flags = TENURE_TYPE_ARRAY});
    static const size_t fld_off[1] = {16};
    s->tix_fldarr = register_array(s, n, K_FLDARR,
                                   &(tenure_type_desc){.name = "fielded",
                                                       .size = 40,
                                                       .ref_offsets = fld_off,
                                                       .ref_count = 1,
                                                       .flags = TENURE_TYPE_REF_ARRAY});
    s->tix_bytes = register_array(s, n, K_BYTES,
                                  &(tenure_type_desc){.name = "bytes",
                                                      .size = sizeof(tenure_array_header),
                                                      .elem_size = 1,
                                                      .flags = TENURE_TYPE_ARRAY | TENURE_TYPE_NO_REFS});
}

/* finalizable: layout A, 0, 2 or 4 references, one payload word */
static void register_finalizable_types(program_state *s, int *n) {
    for (unsigned f = 0; f < 3; f++) {
        int ix = s->tix_fin[f] = (*n)++;
        ttype *t = &s->types[ix];
        fixed_layout(t, 2 * f, 1, 1);
        t->fin = 1;
        snprintf(t->name, sizeof t->name, "fin_r%u", t->k);
        t->t = register_fixed(s, t);
    }
}

void register_types(program_state *s) {
    int n = register_fixed_types(s);
    s->nfix = n;
    register_array_types(s, &n);
    register_finalizable_types(s, &n);
    s->ntypes = n;
    for (int i = 0; i < n; i++)
        if (!s->types[i].t) {
            diff(s, "registering type %s failed", s->types[i].name);
            check_end(s, "type registration");
        }
}
