/*
 * tenure-torture: SizedRef handles
 * The bytes of each handle's graph at full GCs, what tenure_handle_sized_ref_bytes may say.
 */
#include "torture.h"

/* SizedRef (full GCs): each handle's graph (frozen objects are not in the heap: neither counted
 * nor traced); the union of all graphs; which graphs share objects */
/* the graph of SizedRef handle h (frozen objects neither counted nor traced): its bytes; the
 * objects it is the first to reach count in the union, the ones another graph reached first
 * mark both handles as overlapping */
static uint64_t sized_graph(program_state *s, int h) {
    mhandle *m = &s->handles[h];
    uint64_t own = 0;
    s->epoch++;
    uint32_t n = 0;
    if (m->obj && !(s->objs[m->obj].flags & F_FROZEN)) {
        s->objs[m->obj].mark = s->epoch;
        s->queue[n++] = m->obj;
    }
    for (uint32_t q = 0; q < n; q++) {
        uint32_t j = s->queue[q];
        mobj *o = &s->objs[j];
        own += o->size;
        if (o->sref_stamp != (uint32_t)s->gcs) {
            o->sref_stamp = (uint32_t)s->gcs;
            o->sref_owner = h;
            s->sized_union += o->size;
        } else if (o->sref_owner != h) {
            m->sized_overlap = 1;
            s->handles[o->sref_owner].sized_overlap = 1;
        }
        for (uint32_t i = 0; i < o->nrefs; i++) {
            uint32_t t = o->refs[i];
            if (t && s->objs[t].mark != s->epoch && !(s->objs[t].flags & F_FROZEN)) {
                s->objs[t].mark = s->epoch;
                s->queue[n++] = t;
            }
        }
    }
    return own;
}

static int is_sized_ref(const mhandle *m) { return m->active && m->kind == TENURE_HANDLE_SIZED_REF; }

void model_sized(program_state *s) {
    s->sized_union = 0;
    queue_reserve(s, s->nobj + 16);
    for (int h = 0; h < MAX_HANDLES; h++)
        if (is_sized_ref(&s->handles[h]))
            s->handles[h].sized_overlap = 0;
    for (int h = 0; h < MAX_HANDLES; h++)
        if (is_sized_ref(&s->handles[h]))
            s->handles[h].sized_own = sized_graph(s, h);
    for (int h = 0; h < MAX_HANDLES; h++) {
        mhandle *m = &s->handles[h];
        if (is_sized_ref(m)) {
            m->sized_hi = m->sized_own;
            m->sized_lo = m->sized_overlap ? 0 : m->sized_own;
        }
    }
}

void check_sized(program_state *s, const char *where) {
    for (int h = 0; h < MAX_HANDLES; h++) {
        mhandle *m = &s->handles[h];
        if (!m->active || m->kind != TENURE_HANDLE_SIZED_REF)
            continue;
        uint64_t b = tenure_handle_sized_ref_bytes(s->rt, m->h);
        if (b < m->sized_lo || b > m->sized_hi)
            diff(s,
                 "%s: SizedRef handle %d to %s says %" PRIu64 " bytes, the model expected [%" PRIu64 ", %" PRIu64
                 "] (its graph at the last full GC: %" PRIu64 " bytes%s)",
                 where, h, odesc(s, m->obj), b, m->sized_lo, m->sized_hi, m->sized_own,
                 m->sized_overlap ? ", shared with another SizedRef graph" : "");
    }
}

/* after a full GC: the handles' bytes add up to the union of their graphs, and each is in the
 * range the model expects */
void check_sized_after_full_gc(program_state *s) {
    uint64_t sum = 0;
    for (int h = 0; h < MAX_HANDLES; h++)
        if (s->handles[h].active && s->handles[h].kind == TENURE_HANDLE_SIZED_REF)
            sum += tenure_handle_sized_ref_bytes(s->rt, s->handles[h].h);
    if (sum != s->sized_union)
        diff(s,
             "after GC %" PRIu64 ": the SizedRef handles say %" PRIu64 " bytes in all, the union of their graphs "
             "has %" PRIu64,
             s->gcs, sum, s->sized_union);
    char what[96];
    snprintf(what, sizeof what, "after GC %" PRIu64, s->gcs);
    check_sized(s, what);
}
