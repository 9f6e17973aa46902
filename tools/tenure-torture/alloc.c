/*
 * tenure-torture: allocation
 * The sizes and kinds of new objects, and the checks of a fresh object.
 */
#include "torture.h"

size_t spec_size(program_state *s, const aspec *a) {
    ttype *t = &s->types[a->tix];
    return t->kind == K_FIX ? t->size : arr_size(t->kind, a->length);
}

void after_alloc_check(program_state *s) {
    if (s->P->verify_every > 0 && s->since_verify >= (uint64_t)s->P->verify_every)
        full_check(s, "periodic full check");
}

/* allocate per spec; returns the object number or 0 (NOMEM with a hard limit) */
static void *alloc_call(program_state *s, const aspec *a) {
    ttype *t = &s->types[a->tix];
    if (t->kind == K_FIX)
        return a->pinned ? tenure_alloc_pinned(s->rt, t->t) : tenure_alloc(s->rt, t->t);
    return a->pinned ? tenure_alloc_array_pinned(s->rt, t->t, a->length) : tenure_alloc_array(s->rt, t->t, a->length);
}

/* NULL: only NOMEM under a hard limit, reported to the hook */
static void alloc_failed(program_state *s, const aspec *a, size_t size) {
    ttype *t = &s->types[a->tix];
    tenure_result e = tenure_last_error(s->rt);
    if (!s->P->hard_limit || e != TENURE_NOMEM)
        diff(s, "allocating a %s%s of %zu bytes returned NULL: %s", t->name, a->pinned ? " (pinned)" : "", size,
             tenure_strerror(e));
    else if (!s->got_err)
        diff(s, "allocation failed with NOMEM but the error hook was not called");
    check_end(s, "allocation");
    tenure_clear_error(s->rt);
    s->nomem++;
    if (s->sh)
        s->sh->nomem = s->nomem;
}

/* a fresh object: an object of its type, size and generation (asked of the collector for every
 * array, large and pinned object and every 8th small one: the lookups are not free), zeroed;
 * returns its generation (0 when not asked) */
static int check_fresh(program_state *s, const aspec *a, void *p, size_t size) {
    ttype *t = &s->types[a->tix];
    int ask = t->kind != K_FIX || a->pinned || (s->allocs & 7) == 0;
    if (ask &&
        (!tenure_is_object(s->rt, p) || tenure_object_type(s->rt, p) != t->t || tenure_object_size(s->rt, p) != size))
        diff(s, "new %s%s (length %zu) at %p: is_object %d, type %s, size %zu (expected %zu)", t->name,
             a->pinned ? " (pinned)" : "", a->length, p, tenure_is_object(s->rt, p),
             tenure_object_type(s->rt, p) ? tenure_type_name(tenure_object_type(s->rt, p)) : "?",
             tenure_object_size(s->rt, p), size);
    check_end(s, "allocation");
    int g = ask ? tenure_object_generation(s->rt, p) : 0;
    int want = a->pinned ? 4 : size >= s->cfg.GCLOHThreshold ? 3 : 0;
    if (g != want)
        diff(s, "new %s of %zu bytes%s is in generation %d, expected %d", t->name, size, a->pinned ? " (pinned)" : "",
             g, want);
    size_t from = t->kind == K_FIX ? 8 : 16;
    if (t->kind != K_FIX && tenure_array_length(p) != a->length)
        diff(s, "new %s has length %zu, expected %zu", t->name, tenure_array_length(p), a->length);
    for (size_t off = from; off < size; off += 8)
        if (*(uint64_t *)((char *)p + off) != 0) {
            diff(s, "new %s of %zu bytes at %p is not zeroed at offset %zu (%#" PRIx64 ")", t->name, size, p, off,
                 *(uint64_t *)((char *)p + off));
            break;
        }
    check_end(s, "allocation");
    return g;
}

/* a finalizable object is registered, and tracked by a weak long handle of the model's own */
static void track_finalizable(program_state *s, uint32_t j, void *p) {
    model_register(s, j);
    tenure_handle *tk = tenure_handle_new(s->rt, TENURE_HANDLE_WEAK_LONG, p);
    if (!tk)
        diff(s, "tenure_handle_new(WEAK_LONG) for a tracker failed: %s", tenure_strerror(tenure_last_error(s->rt)));
    s->objs[j].trk = tk;
    vec_push(&s->fobjs, &s->nfobjs, &s->capfobjs, j);
}

uint32_t do_alloc(program_state *s, const aspec *a) {
    expect_error(s, s->P->hard_limit ? TENURE_NOMEM : TENURE_OK);
    void *p = alloc_call(s, a);
    expect_done(s);
    bgc_sync(s); /* (a background GC's final pause may have run in it) */
    s->allocs++;
    s->since_verify++;
    if (s->sh)
        s->sh->allocs = s->allocs;
    size_t size = spec_size(s, a);
    if (!p) {
        alloc_failed(s, a, size);
        return 0;
    }
    int g = check_fresh(s, a, p, size);
    uint8_t flags = (uint8_t)((a->pinned ? F_POH : 0) | (size >= s->cfg.GCLOHThreshold && !a->pinned ? F_LARGE : 0));
    uint32_t j = model_new(s, a->tix, flags, a->length, size, (uintptr_t)p, g, rnext(&(rng){s->allocs * 77 + 5}));
    init_payload(s, j, p);
    if (s->types[a->tix].fin)
        track_finalizable(s, j, p);
    if (s->P->trace)
        fprintf(stderr, "  new %s at %p\n", odesc(s, j), p);
    return j;
}

aspec small_fixed(program_state *s, rng *r) {
    aspec a = {(int)rbelow(r, (uint64_t)s->nfix), 0, 0};
    return a;
}

aspec small_array(program_state *s, rng *r) {
    aspec a = {0, 0, 0};
    unsigned x = (unsigned)rbelow(r, 100);
    if (x < 35) {
        a.tix = s->tix_refarr;
        a.length = rchance(r, 90) ? rbelow(r, 41) : rrange(r, 41, 2000);
    } else if (x < 52) {
        a.tix = rchance(r, 50) ? s->tix_recarr : s->tix_recarr_tr;
        a.length = rchance(r, 90) ? rrange(r, 1, 20) : rrange(r, 21, 1000);
    } else if (x < 60) {
        a.tix = s->tix_fldarr;
        a.length = rchance(r, 90) ? rbelow(r, 17) : rrange(r, 17, 1000);
    } else {
        a.tix = s->tix_bytes;
        unsigned y = (unsigned)rbelow(r, 100);
        a.length = y < 80 ? rrange(r, 8, 400) : y < 95 ? rrange(r, 401, 8000) : rrange(r, 8001, 84000 - 16);
        /* just below, at and just above the LOH threshold */
        if (rchance(r, 3))
            a.length = (size_t)(s->cfg.GCLOHThreshold - 16 - 8 * rbelow(r, 3));
    }
    return a;
}

aspec large_spec(program_state *s, rng *r) {
    aspec a = {s->tix_bytes, 0, 0};
    size_t th = (size_t)s->cfg.GCLOHThreshold;
    unsigned x = (unsigned)rbelow(r, 100);
    size_t bytes = x < 15   ? th + 8 * rbelow(r, 4)
                   : x < 85 ? rrange(r, th, 2 * th)
                   : x < 97 ? rrange(r, 2 * th, 1 << 20)
                            : rrange(r, 1 << 20, 3 << 20);
    if (s->oom_mode && rchance(r, 30))
        bytes = rrange(r, 1 << 20, 4 << 20);
    unsigned y = (unsigned)rbelow(r, 100);
    if (y < 70) {
        a.tix = s->tix_bytes;
        a.length = bytes - 16;
    } else if (y < 90) {
        a.tix = rchance(r, 75) ? s->tix_refarr : s->tix_fldarr;
        a.length = (bytes - 16 + 7) / 8;
        if (a.length > 40000)
            a.length = 40000;
    } else {
        a.tix = rchance(r, 50) ? s->tix_recarr : s->tix_recarr_tr;
        a.length = (bytes - 16 + 15) / 16;
        if (a.length > 20000)
            a.length = 20000;
    }
    if (arr_size(s->types[a.tix].kind, a.length) < th)
        a.length += (th - arr_size(s->types[a.tix].kind, a.length) + 7) / 8 + 1;
    return a;
}

aspec fin_spec(program_state *s, rng *r) {
    aspec a = {s->tix_fin[rbelow(r, 3)], 0, rchance(r, 12)};
    return a;
}
