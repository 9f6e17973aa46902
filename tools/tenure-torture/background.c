/*
 * tenure-torture: the model of background GCs (--bgc; docs/design/collector.md "Background GC")
 *
 * A background GC (BGC) shows itself to a single-threaded program in three steps:
 *  - its final pause, on the program's thread inside a call that may collect (an allocation,
 *    tenure_collect, tenure_add_memory_pressure): a full mark from the roots and the BGC's
 *    premarks, then a gen0 GC (gen0's survivors promoted, moved or not; gen0's dead
 *    reclaimed; weak and dependent handles as a full GC clears them), with no callback. The
 *    model learns it from the stats' background_final_pauses, right after that call or, when
 *    a GC follows it in the same call, at the start of that GC's callback;
 *  - its sweep, on the BGC thread: what the final mark found dead in gen1, gen2 and the
 *    large heaps becomes free space; nothing moves;
 *  - its end: the callback (info->background) on the BGC thread, after the foreground GCs
 *    that ran meanwhile, or on the program's thread when a call ends the BGC (a blocking gen2
 *    GC asked for, the pressure GC). The BGC thread only hands it over (bgc_end_info); the
 *    program's thread takes it at its next sync point or callback.
 *
 * The final pause's mark keeps what the model's roots reach (the live set L) and may keep more:
 * floating garbage, objects premarked while the BGC marked that died since, and what they
 * reach. So at a final pause the model reclaims everything outside L (all of it unreachable,
 * none of it reachable again: the program never picks a reclaimed object) and calls it limbo:
 * it may still be in the heap until the next blocking gen2 GC, so the heap walk may find it,
 * the identity hash table may count it, a weak or dependent handle to it may still hold it
 * (the handle is unsure until settled: set to NULL at the next sync point, after checking it
 * held NULL or an object of its old target's type). L's gen0 objects are then found again
 * from the roots (a gen0 GC's check), or, when learned inside the next GC's callback, marked
 * f_moved: that GC's check finds them from the roots, wherever they went. L's older objects
 * must not move, now or at the BGC's end.
 *
 * At the BGC's end the model checks what it knows: every live object where it was and intact,
 * figures within what floating garbage allows (sync blocks), none expected of SizedRef.
 */
#include "torture.h"

/* ---- the final pause ---- */

/* weak (short or long) and dependent handles to objects outside L: cleared, or unsure where
 * floating garbage may keep them */
static void weak_handles(program_state *s) {
    for (int h = 0; h < MAX_HANDLES; h++) {
        mhandle *m = &s->handles[h];
        if (!m->active)
            continue;
        if (m->kind == TENURE_HANDLE_DEPENDENT) {
            if ((m->obj && !marked_alive(s, m->obj)) || (!m->obj && m->sec && !marked_alive(s, m->sec)))
                weak_target_died(s, m);
        } else if (m->obj && !h_strong(s, m) && !marked_alive(s, m->obj)) {
            weak_target_died(s, m);
        }
    }
}

/* Outside L: what may be floating garbage is limbo, the rest reclaimed. The BGC premarks only
 * objects of gen2 and the large heaps (B1): those outside L may be floating garbage, and so
 * may what they reach (the final mark goes on from them) and what earlier limbo objects reach
 * (mark_maybe_kept); a gen0 or gen1 object reached from none of them was not marked. */
static void outside_live_set(program_state *s) {
    for (uint32_t j = 1; j < s->nobj; j++) {
        mobj *o = &s->objs[j];
        if (!o->reclaimed && !marked_alive(s, j) && o->gen >= 2)
            make_limbo(s, j);
    }
    mark_maybe_kept(s);
    weak_handles(s);
    for (uint32_t j = 1; j < s->nobj; j++) {
        mobj *o = &s->objs[j];
        if (o->reclaimed || marked_alive(s, j))
            continue;
        if (o->mark3 == s->maybe_epoch && s->nlimbo)
            make_limbo(s, j);
        else
            reclaim(s, j);
    }
}

/* a final pause happened: the model applies it (in_callback: inside the next GC's callback,
 * which checks the heap; else the heap is checked here, as after a gen0 GC) */
static void final_pause(program_state *s, int in_callback) {
    uint32_t limbo_before = s->nlimbo;
    if (s->nreg || s->nfq != s->fqhead)
        diff(s, "tool bug: finalizable objects with --bgc (their queue order beside floating garbage is unknown)");
    s->collections++;
    mark_full(s);
    outside_live_set(s);
    for (int h = 0; h < MAX_HANDLES; h++) { /* its SizedRef marking stops at the premarked objects */
        s->handles[h].sized_lo = 0;
        s->handles[h].sized_hi = UINT64_MAX;
    }
    if (!s->pressure_call) /* (a pressure call's GC was decided before it) */
        s->press_since = 0;
    s->gc_queued_n = s->gc_queued_bytes = 0;
    s->reach_dirty = 1;
    if (s->P->trace) {
        int unsure = 0;
        for (int h = 0; h < MAX_HANDLES; h++)
            unsure += s->handles[h].active && s->handles[h].unsure;
        fprintf(stderr, "  final pause of a background GC (learned %s): %u objects gone (limbo), %d handles unsure\n",
                in_callback ? "in the next callback" : "after the call", s->nlimbo - limbo_before, unsure);
    }
    if (in_callback) {
        for (uint32_t j = 1; j < s->nobj; j++)
            if (!s->objs[j].reclaimed && gen_class(&s->objs[j]) == 0)
                s->objs[j].f_moved = 1;
        return;
    }
    /* a gen0 GC that may have compacted gen0, nothing else */
    tenure_gc_info young = {.index = s->bgc_pending, .generation = 0, .compacted = 1};
    check_heap_after(s, &young); /* (no figures: the stats are the last callback's GC's) */
    check_overlap(s, "after a background GC's final pause");
    check_end(s, "in the check after a background GC's final pause");
}

/* the final pauses since the model last looked: 1 if one was applied */
static int final_pause_seen(program_state *s, int in_callback) {
    tenure_stats st;
    tenure_get_stats(s->rt, &st);
    if (st.background_final_pauses == s->final_pauses)
        return 0;
    if (st.background_final_pauses != s->final_pauses + 1)
        diff(s, "%" PRIu64 " background GC final pauses, the model has seen %" PRIu64 " (one at most between calls)",
             st.background_final_pauses, s->final_pauses);
    s->final_pauses = st.background_final_pauses;
    final_pause(s, in_callback);
    return 1;
}

/* ---- unsure handles ---- */

/* p is NULL or an object of object j's type (j: the handle's target before the final pause) */
static void check_unsure_target(program_state *s, int h, const char *what, uint32_t j, void *p) {
    if (!p || !j)
        return;
    if (!tenure_is_object(s->rt, p) || tenure_object_type(s->rt, p) != s->types[s->objs[j].tix].t)
        diff(s,
             "%s of %s handle %d holds %p, which is not NULL nor %s (reclaimed by the model at a background GC's "
             "final pause, maybe kept as floating garbage)",
             what, hkind_name(s->handles[h].kind), h, p, odesc(s, j));
}

/* unsure handles are set to NULL, as the model holds them */
static void settle_unsure_handles(program_state *s) {
    for (int h = 0; h < MAX_HANDLES; h++) {
        mhandle *m = &s->handles[h];
        if (!m->active || !m->unsure)
            continue;
        check_unsure_target(s, h, "the object", m->unsure_obj, tenure_handle_get(s->rt, m->h));
        tenure_result r = tenure_handle_set(s->rt, m->h, NULL);
        if (r == TENURE_OK && m->kind == TENURE_HANDLE_DEPENDENT) {
            check_unsure_target(s, h, "the secondary", m->unsure_sec, tenure_handle_get_secondary(s->rt, m->h));
            r = tenure_handle_set_secondary(s->rt, m->h, NULL);
        }
        if (r != TENURE_OK)
            diff(s, "settling handle %d (to NULL): %s", h, tenure_strerror(r));
        m->unsure = 0;
    }
}

/* ---- the end ---- */

/* the callback of a BGC's end on the BGC thread: handed over to the program's thread (1) */
int bgc_hand_over(program_state *s, const tenure_gc_info *info) {
    if (!info->background || pthread_equal(pthread_self(), s->thread))
        return 0;
    if (__atomic_load_n(&s->bgc_end_ready, __ATOMIC_ACQUIRE)) {
        fprintf(stderr, "seed %" PRIu64 ": two background GC ends before the program saw the first\n", s->P->seed);
        abort(); /* (not diff: the model belongs to the program's thread) */
    }
    s->bgc_end_info = *info;
    __atomic_store_n(&s->bgc_end_ready, 1, __ATOMIC_RELEASE);
    return 1;
}

/* every BGC ends once, after its final pause */
static void count_end(program_state *s, const tenure_gc_info *info) {
    if (info->generation != 2)
        diff(s, "background GC %" PRIu64 ": generation %d", info->index, info->generation);
    if (++s->bgc_ends > s->final_pauses)
        diff(s, "background GC %" PRIu64 " ended before its final pause (%" PRIu64 " final pauses, %" PRIu64 " ends)",
             info->index, s->final_pauses, s->bgc_ends);
}

/* the end of a BGC: what the model knows must hold (no model change: the final pause did it);
 * figures: the stats are this BGC's (in its callback on the program's thread) */
void bgc_end_check(program_state *s, const tenure_gc_info *info, int figures) {
    count_end(s, info);
    s->gc_queued_n = s->gc_queued_bytes = 0;
    tenure_gc_info none = *info;
    none.generation = -1; /* nothing condemned: every object where it was (f_moved ones found) */
    none.compacted = 0;
    check_heap_after(s, &none);
    if (figures)
        check_figures(s, 2, 1);
}

/* a BGC end handed over: counted in order; checked unless a GC has run since (check) */
static void take_handed_over_end(program_state *s, int check) {
    if (!__atomic_load_n(&s->bgc_end_ready, __ATOMIC_ACQUIRE))
        return;
    tenure_gc_info info = s->bgc_end_info;
    __atomic_store_n(&s->bgc_end_ready, 0, __ATOMIC_RELEASE);
    if (s->P->trace)
        fprintf(stderr, "  background GC %" PRIu64 " ended on the BGC thread (taken %s)\n", info.index,
                check ? "at a sync point" : "in the next callback");
    gc_account(s, &info);
    if (!info.background)
        diff(s, "tool bug: a GC handed over that is not a background GC");
    if (check) {
        bgc_end_check(s, &info, 0); /* (the program may have hashed objects since) */
        check_overlap(s, "after a background GC's end");
    } else {
        count_end(s, &info);
    }
    check_end(s, "in the check after a background GC's end");
}

/* ---- the sync points ---- */

/* outside any callback, after every call that may collect and every op: the final pause
 * applied (1 if one was), unsure handles settled, a BGC's end taken */
int bgc_sync(program_state *s) {
    if (!s->bgc)
        return 0;
    int fp = final_pause_seen(s, 0);
    settle_unsure_handles(s);
    take_handed_over_end(s, 1);
    return fp;
}

/* at the start of every callback on the program's thread: a final pause that came before
 * this GC in the same call, and a BGC's end handed over before it (not checked: this GC has
 * changed the heap since; its own check follows) */
void bgc_before_callback(program_state *s) {
    final_pause_seen(s, 1);
    take_handed_over_end(s, 0);
}

/* a blocking full GC: no floating garbage is left */
void bgc_forget_limbo(program_state *s) {
    if (!s->nlimbo)
        return;
    for (uint32_t j = 1; j < s->nobj; j++) {
        mobj *o = &s->objs[j];
        if (!o->limbo)
            continue;
        o->limbo = 0;
        free(o->refs);
        o->refs = NULL;
        o->nrefs = 0;
    }
    s->nlimbo = s->nlimbo_hashed = 0;
}

/* ---- floating garbage in the heap walk ---- */

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static uint64_t limbo_key(int tix, size_t size) { return (uint64_t)tix << 48 | (uint64_t)size; }

/* before a heap walk: the (type, size) of every limbo object, sorted */
void limbo_index(program_state *s) {
    s->nlimbo_keys = 0;
    if (!s->nlimbo)
        return;
    s->limbo_keys = xrealloc(s->limbo_keys, s->nlimbo * sizeof *s->limbo_keys);
    for (uint32_t j = 1; j < s->nobj; j++)
        if (s->objs[j].limbo && s->nlimbo_keys < s->nlimbo)
            s->limbo_keys[s->nlimbo_keys++] = limbo_key(s->objs[j].tix, s->objs[j].size);
    qsort(s->limbo_keys, s->nlimbo_keys, sizeof *s->limbo_keys, cmp_u64);
}

/* an object the walk found where the model has none: may it be a limbo object? Its number
 * says which, where its type has one; else a limbo object of its type and size */
int may_be_limbo(program_state *s, void *obj, const tenure_type *type, size_t size) {
    if (!s->nlimbo_keys)
        return 0;
    int tix = -1;
    for (int i = 0; i < s->ntypes; i++)
        if (s->types[i].t == type)
            tix = i;
    if (tix < 0)
        return 0;
    int kind = s->types[tix].kind;
    char *p = obj;
    size_t at = kind == K_FIX ? 8 : kind == K_FLDARR ? 24 : kind == K_BYTES && size >= 24 ? 16 : 0;
    if (at && (kind != K_BYTES || tenure_array_length(obj) >= 8)) {
        uint64_t id = *(uint64_t *)(p + at);
        uint32_t j = (uint32_t)id;
        return id == IDW(j) && j > 0 && j < s->nobj && s->objs[j].limbo && s->objs[j].tix == tix &&
               s->objs[j].size == size;
    }
    uint64_t key = limbo_key(tix, size);
    return bsearch(&key, s->limbo_keys, s->nlimbo_keys, sizeof key, cmp_u64) != NULL;
}

/* ---- the refcount callback after a final pause learned late ---- */

/* the refcount callback asks about obj, which no refcounted handle's object is at: an unsure
 * handle's object (floating garbage, not settled yet), or, after a final pause the model has
 * not learned yet (a GC that follows it in the same call asks first), a gen0 object may have
 * moved. Found by its type, length and number (objects whose
 * type has no number field: when the candidates agree on the count). 1 if found. */
int rc_lookup_moved(program_state *s, void *obj, int *rc) {
    if (!s->bgc)
        return 0;
    const tenure_type *type = tenure_object_type_inline(obj);
    int found = 0;
    for (int h = 0; h < MAX_HANDLES; h++) {
        mhandle *m = &s->handles[h];
        if (!m->active || m->kind != TENURE_HANDLE_REFCOUNTED)
            continue;
        uint32_t j = m->obj ? m->obj : m->unsure ? m->unsure_obj : 0;
        int count = m->obj ? s->objs[j].rc : 0; /* (unsure: weak at the final pause) */
        if (!j)
            continue;
        mobj *o = &s->objs[j];
        ttype *t = &s->types[o->tix];
        if (o->addr != (uintptr_t)obj) { /* moved: a gen0 object of its type, length and number */
            if (o->gen != 0 || t->t != type || (t->kind != K_FIX && tenure_array_length(obj) != o->length))
                continue;
            int kind = t->kind;
            if (kind == K_FIX || kind == K_FLDARR || (kind == K_BYTES && o->length >= 8)) {
                size_t at = kind == K_FIX ? 8 : kind == K_FLDARR ? 24 : 16;
                if (*(uint64_t *)((char *)obj + at) != IDW(j))
                    continue;
            }
        }
        if (found && *rc != count)
            return 0; /* ambiguous */
        *rc = count;
        found = 1;
    }
    return found;
}
