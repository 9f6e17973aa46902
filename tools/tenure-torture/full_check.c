/*
 * tenure-torture: the full check
 * tenure_verify_heap, every existing object, root and handle, the counts the collector
 * reports, and a heap walk that must list exactly the objects the model says exist.
 */
#include "torture.h"

static size_t hslot(program_state *s, uintptr_t k) { return (size_t)(mix64(k) & (s->hcap - 1)); }

static void hash_build(program_state *s) {
    size_t n = 0;
    for (uint32_t j = 1; j < s->nobj; j++)
        n += !s->objs[j].reclaimed;
    size_t cap = 64;
    while (cap < 2 * n + 2)
        cap *= 2;
    if (cap > s->hcap) {
        s->hcap = cap;
        s->hkeys = xrealloc(s->hkeys, s->hcap * sizeof *s->hkeys);
        s->hvals = xrealloc(s->hvals, s->hcap * sizeof *s->hvals);
    }
    memset(s->hkeys, 0, s->hcap * sizeof *s->hkeys);
    for (uint32_t j = 1; j < s->nobj; j++) {
        if (s->objs[j].reclaimed)
            continue;
        size_t at = hslot(s, s->objs[j].addr);
        while (s->hkeys[at] && s->hkeys[at] != s->objs[j].addr)
            at = (at + 1) & (s->hcap - 1);
        if (s->hkeys[at])
            diff(s, "model: %s and %s share address %#" PRIxPTR, odesc(s, s->hvals[at]), odesc(s, j), s->objs[j].addr);
        s->hkeys[at] = s->objs[j].addr;
        s->hvals[at] = j;
    }
}

static uint32_t hash_get(program_state *s, uintptr_t k) {
    for (size_t at = hslot(s, k); s->hkeys[at]; at = (at + 1) & (s->hcap - 1))
        if (s->hkeys[at] == k)
            return s->hvals[at];
    return 0;
}

/* what the model knew of the object at p, by its number (failure messages) */
static const char *known_as(program_state *s, void *p, const tenure_type *type) {
    static char buf[200];
    buf[0] = 0;
    int tix = -1;
    for (int i = 0; i < s->ntypes; i++)
        if (s->types[i].t == type)
            tix = i;
    if (tix < 0 || s->types[tix].kind != K_FIX)
        return buf;
    uint64_t id = *(uint64_t *)((char *)p + 8);
    uint32_t j = (uint32_t)id;
    if (id == IDW(j) && j > 0 && j < s->nobj)
        snprintf(buf, sizeof buf, " (its number says %s, %s%s at model GC %u, last at %#" PRIxPTR ")", odesc(s, j),
                 s->objs[j].reclaimed ? "reclaimed" : "existing", s->objs[j].limbo ? " as limbo" : "",
                 s->objs[j].gone_at, s->objs[j].addr);
    return buf;
}

static int walk_visit(void *obj, const tenure_type *type, size_t size, int generation, void *ctx) {
    program_state *s = ctx;
    uint32_t j = hash_get(s, (uintptr_t)obj);
    if (!j && may_be_limbo(s, obj, type, size))
        return 0; /* floating garbage of a background GC (background.c) */
    if (!j) {
        if (s->walk_unexpected++ < 8)
            diff(s, "%s: the heap walk found %p (%s, %zu bytes, gen %d) where the model has no existing object%s",
                 s->walk_where, obj, type ? tenure_type_name(type) : "?", size, generation, known_as(s, obj, type));
        return 0;
    }
    mobj *o = &s->objs[j];
    if (o->mark == s->epoch)
        diff(s, "%s: the heap walk visited %s twice", s->walk_where, odesc(s, j));
    o->mark = s->epoch;
    if (type != s->types[o->tix].t || size != o->size)
        diff(s, "%s: the heap walk says %s is a %s of %zu bytes", s->walk_where, odesc(s, j),
             type ? tenure_type_name(type) : "?", size);
    int want = (o->flags & F_FROZEN) ? 2 : o->gen;
    if (generation != want)
        diff(s, "%s: the heap walk says %s is in generation %d", s->walk_where, odesc(s, j), generation);
    return 0;
}

/* free the trackers of reclaimed finalizable objects (not from inside the GC callback) */
void flush_trk(program_state *s) {
    for (uint32_t i = 0; i < s->ntrk_dead; i++) {
        tenure_result r = tenure_handle_free(s->rt, s->trk_dead[i]);
        if (r != TENURE_OK)
            diff(s, "tenure_handle_free(a tracker): %s", tenure_strerror(r));
    }
    s->ntrk_dead = 0;
}

/* every existing object, and its references */
static void check_objects(program_state *s, const char *where) {
    for (uint32_t j = 1; j < s->nobj; j++) {
        mobj *o = &s->objs[j];
        if (o->reclaimed)
            continue;
        if (!check_obj(s, j, o->addr, 2, where))
            continue;
        int g = tenure_object_generation(s->rt, (void *)o->addr);
        int want = (o->flags & F_FROZEN) ? 2 : o->gen;
        if (g != want)
            diff(s, "%s: %s: tenure_object_generation says %d", where, odesc(s, j), g);
        for (uint32_t i = 0; i < o->nrefs; i++) {
            void *p = *slot_at(s, o->addr, o->tix, i);
            uint32_t t = o->refs[i];
            if (t && s->objs[t].reclaimed)
                diff(s, "%s: model inconsistency: %s refers to reclaimed %s", where, odesc(s, j), odesc(s, t));
            void *e = obj_ptr(s, t);
            if (p != e)
                diff(s, "%s: slot %u of %s holds %p, expected %s at %p", where, i, odesc(s, j), p, odesc(s, t), e);
        }
    }
}

static void check_roots(program_state *s, const char *where) {
    for (int i = 0; i < s->nframes; i++)
        for (unsigned k = 0; k < s->frames[i]->n; k++) {
            uint32_t t = s->frames[i]->obj[k];
            void *e = obj_ptr(s, t);
            if (s->frames[i]->vars[k] != e)
                diff(s, "%s: frame %d slot %u holds %p, expected %s at %p", where, i, k, s->frames[i]->vars[k],
                     odesc(s, t), e);
        }
    for (int a = 0; a < 2; a++)
        if (s->areas[a].active)
            for (unsigned k = 0; k < AREA_SLOTS; k++) {
                uint32_t t = s->areas[a].obj[k];
                void *e = obj_ptr(s, t);
                if (s->areas[a].slots[k] != e)
                    diff(s, "%s: root area %d slot %u holds %p, expected %s at %p", where, a, k, s->areas[a].slots[k],
                         odesc(s, t), e);
            }
    for (unsigned k = 0; k < SCAN_SLOTS; k++) {
        uint32_t t = s->scan_obj[k];
        void *e = obj_ptr(s, t);
        if (s->scan_slots[k] != e)
            diff(s, "%s: scanner slot %u holds %p, expected %s at %p", where, k, s->scan_slots[k], odesc(s, t), e);
    }
}

/* every handle and tracker; returns how many the model has */
static size_t check_handles(program_state *s, const char *where) {
    size_t nh = 0;
    for (unsigned h = 0; h < MAX_HANDLES; h++) {
        mhandle *m = &s->handles[h];
        if (!m->active)
            continue;
        nh++;
        void *got = tenure_handle_get(s->rt, m->h);
        if (m->obj && s->objs[m->obj].reclaimed)
            diff(s, "%s: model inconsistency: handle %u holds reclaimed %s", where, h, odesc(s, m->obj));
        void *e = obj_ptr(s, m->obj);
        if (got != e)
            diff(s, "%s: %s handle %u to %s holds %p, expected %p", where, hkind_name(m->kind), h, odesc(s, m->obj),
                 got, e);
        if (m->kind == TENURE_HANDLE_DEPENDENT) {
            got = tenure_handle_get_secondary(s->rt, m->h);
            e = obj_ptr(s, m->sec);
            if (got != e || (m->sec && s->objs[m->sec].reclaimed))
                diff(s, "%s: the secondary of dependent handle %u (primary %s) is %p, expected %s at %p", where, h,
                     odesc(s, m->obj), got, odesc(s, m->sec), e);
        }
    }
    for (uint32_t i = 0; i < s->nfobjs; i++) {
        uint32_t j = s->fobjs[i];
        void *got = tenure_handle_get(s->rt, s->objs[j].trk);
        if (got != (void *)s->objs[j].addr)
            diff(s, "%s: the weak long handle that tracks %s holds %p", where, odesc(s, j), got);
    }
    nh += s->nfobjs;
    return nh;
}

/* what the collector says of SizedRef handles, pending finalizers, pressure, identity hashes */
static void check_services(program_state *s, const char *where) {
    check_sized(s, where);
    if (tenure_pending_finalizers(s->rt) != s->nfq - s->fqhead)
        diff(s, "%s: tenure_pending_finalizers says %zu, the model has %u queued", where,
             tenure_pending_finalizers(s->rt), s->nfq - s->fqhead);
    if (tenure_memory_pressure(s->rt) != s->pressure)
        diff(s, "%s: tenure_memory_pressure says %" PRIu64 ", the model %" PRIu64, where, tenure_memory_pressure(s->rt),
             s->pressure);
    for (uint32_t j = 1; j < s->nobj; j++) {
        mobj *o = &s->objs[j];
        if (o->hash && !o->reclaimed) {
            uint32_t hv = tenure_identity_hash(s->rt, (void *)o->addr);
            if (hv != o->hash)
                diff(s, "%s: the identity hash of %s is %#x, it was %#x", where, odesc(s, j), hv, o->hash);
        }
    }
}

/* the heap walk lists exactly the existing objects */
static void check_heap_walk(program_state *s, const char *where) {
    hash_build(s);
    limbo_index(s);
    s->epoch++;
    s->walk_unexpected = 0;
    s->walk_where = where;
    tenure_result r = tenure_heap_walk(s->rt, walk_visit, s);
    if (r != TENURE_OK)
        diff(s, "%s: tenure_heap_walk: %s", where, tenure_strerror(r));
    if (s->walk_unexpected > 8)
        diff(s, "%s: the heap walk found %d unexpected objects in all", where, s->walk_unexpected);
    int missing = 0;
    for (uint32_t j = 1; j < s->nobj; j++)
        if (!s->objs[j].reclaimed && s->objs[j].mark != s->epoch && missing++ < 8)
            diff(s, "%s: the heap walk did not visit %s at %#" PRIxPTR, where, odesc(s, j), s->objs[j].addr);
}

/* the stats' GC count is the callbacks' */
void check_gc_count(program_state *s, const char *where) {
    tenure_stats st;
    tenure_get_stats(s->rt, &st);
    /* a BGC's callback comes at its end (its number counts from its start); handed over by the
     * BGC thread, the model takes it here, whether it came before the stats or after */
    uint64_t gcs = s->gcs;
    bgc_sync(s);
    int bgc_ended = s->gcs != gcs;
    if (st.gc_count != s->gcs + (uint64_t)(st.background_gc_in_progress && !bgc_ended))
        diff(s, "%s: stats say %" PRIu64 " GCs, the callback saw %" PRIu64, where, st.gc_count, s->gcs);
}

static void check_stats(program_state *s, const char *where) {
    check_gc_count(s, where);
    tenure_stats st;
    tenure_get_stats(s->rt, &st);
    if (st.finalizers_run != s->fin_runs_total)
        diff(s, "%s: stats say %" PRIu64 " finalizers ran, the model counted %" PRIu64, where, st.finalizers_run,
             s->fin_runs_total);
}

void full_check(program_state *s, const char *where) {
    bgc_sync(s);
    s->since_verify = 0;
    flush_trk(s);
    tenure_result r = tenure_verify_heap(s->rt);
    if (r != TENURE_OK)
        diff(s, "%s: tenure_verify_heap: %s", where, tenure_strerror(r));
    check_end(s, where);
    check_objects(s, where);
    check_roots(s, where);
    size_t nh = check_handles(s, where);
    check_services(s, where);
    if (tenure_handle_count(s->rt) != nh)
        diff(s, "%s: tenure_handle_count says %zu, the model has %zu", where, tenure_handle_count(s->rt), nh);
    check_heap_walk(s, where);
    check_stats(s, where);
    check_overlap(s, where);
    check_end(s, where);
}
