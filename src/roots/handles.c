/* handles.c - GC handles: slots in 8 KiB slabs (TN_HANDLES_PER_SLAB), a FIFO free list (so a
 * freed slot is reused as late as possible and a double free is caught), kinds numbered as in .NET. */
#include "runtime.h"
#include <stdlib.h>

/* What a handle of this kind behaves as when nothing changes it (see tn_handles_prepare). */
static uint32_t default_effective(uint32_t kind) {
    return kind == TENURE_HANDLE_VARIABLE ? TENURE_HANDLE_STRONG : kind;
}

/* The set of slab addresses, open addressing, at most half full. Readers (checking a handle
 * in tenure_handle_get) do not take the instance lock: a set is only ever added to, a full one
 * is replaced by a copy twice its size published with a release store, and replaced sets are
 * kept (chained) until the instance goes, so a reader never sees freed memory. */
typedef struct tn_slab_set {
    struct tn_slab_set *replaced; /* the set this one replaced */
    size_t cap;
    uintptr_t addr[];
} tn_slab_set;

static size_t slab_hash(uintptr_t a, size_t cap) {
    return (size_t)((a / TN_HANDLE_SLAB_BYTES) * 0x9E3779B97F4A7C15ull) & (cap - 1);
}

static void slab_set_put(tn_slab_set *set, uintptr_t a) {
    size_t i = slab_hash(a, set->cap);
    while (set->addr[i])
        i = (i + 1) & (set->cap - 1);
    __atomic_store_n(&set->addr[i], a, __ATOMIC_RELEASE);
}

#ifdef TENURE_CHECKED /* reads for owns_slot */
static bool slab_set_has(const tenure_runtime *rt, uintptr_t a) {
    const tn_slab_set *set = __atomic_load_n(&rt->roots.slab_set, __ATOMIC_ACQUIRE);
    if (!set || a == 0)
        return false; /* 0 is the empty marker: a pointer below the slab size is no handle */
    for (size_t i = slab_hash(a, set->cap);; i = (i + 1) & (set->cap - 1)) {
        uintptr_t e = __atomic_load_n(&set->addr[i], __ATOMIC_ACQUIRE);
        if (e == a)
            return true;
        if (!e)
            return false;
    }
}
#endif

/* Record a new slab in the set (with the instance lock held). */
static bool slab_set_add(tenure_runtime *rt, uintptr_t a) {
    tn_assert_locked(rt);
    tn_slab_set *set = rt->roots.slab_set;
    if (!set || 2 * (rt->roots.slab_count + 1) > set->cap) {
        size_t cap = set ? 2 * set->cap : 64;
        tn_slab_set *bigger = tn_calloc(1, sizeof *bigger + cap * sizeof bigger->addr[0]);
        if (!bigger)
            return false;
        bigger->cap = cap;
        bigger->replaced = set;
        for (size_t i = 0; set && i < set->cap; i++)
            if (set->addr[i])
                slab_set_put(bigger, set->addr[i]);
        __atomic_store_n(&rt->roots.slab_set, bigger, __ATOMIC_RELEASE);
        set = bigger;
    }
    slab_set_put(set, a);
    rt->roots.slab_count++;
    return true;
}

void tn_handles_destroy_slab_sets(tenure_runtime *rt) {
    for (tn_slab_set *set = rt->roots.slab_set, *next; set; set = next) {
        next = set->replaced;
        free(set);
    }
    rt->roots.slab_set = NULL;
    rt->roots.slab_count = 0;
}

/* The slot becomes free and goes to the tail of the FIFO free list. */
static void release_slot(tenure_runtime *rt, tn_handle_slot *h) {
    h->kind = h->effective = TN_HANDLE_FREE;
    h->object = h->secondary = NULL;
    h->next_free = NULL;
    if (rt->roots.handle_free_tail)
        rt->roots.handle_free_tail->next_free = h;
    else
        rt->roots.handle_free_head = h;
    rt->roots.handle_free_tail = h;
}

static bool grow(tenure_runtime *rt) {
    tn_handle_slab *s = tn_aligned_alloc(TN_HANDLE_SLAB_BYTES, TN_HANDLE_SLAB_BYTES);
    if (!s)
        return false;
    if (!slab_set_add(rt, (uintptr_t)s)) {
        free(s);
        return false;
    }
    memset(s, 0, sizeof *s);
    s->magic = TN_HANDLE_MAGIC;
    s->owner = rt;
    s->next = rt->roots.handle_slabs;
    rt->roots.handle_slabs = s;
    for (size_t i = 0; i < TN_HANDLES_PER_SLAB; i++) {
        s->slots[i].magic = TN_HANDLE_MAGIC;
        release_slot(rt, &s->slots[i]);
    }
    return true;
}

#ifdef TENURE_CHECKED /* only the checked build looks a handle up */
/* true if h is a slot of one of rt's slabs (free or not); reads no memory it is not sure of */
static bool owns_slot(const tenure_runtime *rt, const tn_handle_slot *h) {
    uintptr_t base = (uintptr_t)h & ~(uintptr_t)(TN_HANDLE_SLAB_BYTES - 1);
    if (!slab_set_has(rt, base))
        return false;
    const tn_handle_slab *s = (const tn_handle_slab *)base;
    uintptr_t off = (uintptr_t)h - (uintptr_t)s->slots;
    return s->magic == TN_HANDLE_MAGIC && s->owner == rt && off < sizeof s->slots && off % sizeof(tn_handle_slot) == 0;
}
#endif

static tn_handle_slot *live_slot(tenure_runtime *rt, const tenure_handle *handle, const char *fn) {
    tn_handle_slot *h = (tn_handle_slot *)handle;
    if (!rt || rt->magic != TN_RUNTIME_MAGIC)
        return NULL; /* no instance to report to */
#ifdef TENURE_CHECKED
    if (!h || !owns_slot(rt, h) || h->magic != TN_HANDLE_MAGIC || h->kind == TN_HANDLE_FREE) {
        tn_api_fail(rt, TENURE_INVALID_HANDLE, fn, "%p is not a live handle of this instance", (const void *)handle);
        return NULL;
    }
#else
    if (!h) {
        tn_api_fail(rt, TENURE_INVALID_HANDLE, fn, "NULL handle");
        return NULL;
    }
#endif
    return h;
}

static void emit_set(tenure_runtime *rt, const tn_handle_slot *h) {
    if (TN_EV_ON(rt, SetGCHandle)) {
        int gen = h->object ? tn_object_gen(rt, h->object) : 0; /* an object: valid_target */
        TN_EMIT(rt, SetGCHandle, .HandleID = (uint64_t)(uintptr_t)h, .ObjectID = (uint64_t)(uintptr_t)h->object,
                .Kind = h->kind, .Generation = (uint32_t)gen, .AppDomainID = 0);
    }
}

static bool valid_target(tenure_runtime *rt, void *obj, const char *fn) {
    if (!obj || tn_is_object(rt, obj))
        return true;
    tn_api_fail(rt, TENURE_INVALID_OBJECT, fn, "%p is not an object of this instance", obj);
    return false;
}

/* A new handle, complete (kind, object, secondary) before anyone hears of it: the
 * SetGCHandle event and the profilers' handle_created see what it really is. */
static tenure_handle *new_handle(tenure_runtime *rt, uint32_t kind, void *obj, void *secondary, const char *fn) {
    if (!rt->roots.handle_free_head && !grow(rt)) {
        tn_api_fail(rt, TENURE_NOMEM, fn, "out of memory for handles");
        return NULL;
    }
    tn_handle_slot *h = rt->roots.handle_free_head;
    rt->roots.handle_free_head = h->next_free;
    if (!rt->roots.handle_free_head)
        rt->roots.handle_free_tail = NULL;
    h->next_free = NULL;
    h->kind = kind;
    h->object = obj;
    h->secondary = secondary;
    h->variable_kind = TENURE_HANDLE_STRONG;
    h->effective = default_effective(h->kind);
    h->sized_bytes = 0;
    rt->roots.handle_count++;
    emit_set(rt, h);
    if (TN_PROF_ON(rt, TENURE_PROFILE_HANDLES))
        tn_prof_handle_created(rt, (tenure_handle *)h, kind, obj, secondary);
    return (tenure_handle *)h;
}

/* A thread the GC does not stop holds raw object pointers that a GC may move at any time: it
 * may not make a handle of one (issue 38; tn_cb_refuse_unattached reports it). */
static bool handle_from_unattached(tenure_runtime *rt, const char *fn) {
    return rt && TENURE__UNLIKELY(tenure__current->rt != rt) && tn_cb_refuse_unattached(rt, fn);
}

tenure_handle *tenure_handle_new(tenure_runtime *rt, tenure_handle_kind kind, void *obj) {
    static const char fn[] = "tenure_handle_new";
    if (tn_cb_refused(rt, TN_OP_CHANGE, fn) || handle_from_unattached(rt, fn))
        return NULL;
    TN_LOCKED_HOLDING(rt, obj, NULL);
    if (!rt)
        return NULL;
    if ((unsigned)kind > TENURE_HANDLE_SIZED_REF) {
        tn_api_fail(rt, TENURE_INVALID_ARGUMENT, fn, "handle kind %d does not exist", (int)kind);
        return NULL;
    }
    if (kind == TENURE_HANDLE_DEPENDENT) {
        tn_api_fail(rt, TENURE_INVALID_ARGUMENT, fn, "dependent handles are made by tenure_handle_new_dependent");
        return NULL;
    }
    if (!valid_target(rt, obj, fn))
        return NULL;
    return new_handle(rt, (uint32_t)kind, obj, NULL, fn);
}

/* Without the instance lock: a running thread sees no GC, slots are never freed before the
 * instance, and the slab set is safe to read (see above). Only a failure takes the lock. */
void *tenure_handle_get(tenure_runtime *rt, const tenure_handle *handle) {
    tn_handle_slot *h = live_slot(rt, handle, "tenure_handle_get");
    return h ? h->object : NULL;
}

tenure_result tenure_handle_set(tenure_runtime *rt, tenure_handle *handle, void *obj) {
    static const char fn[] = "tenure_handle_set";
    if (tn_cb_refused(rt, TN_OP_CHANGE, fn))
        return TENURE_STATE;
    TN_LOCKED_HOLDING(rt, obj, NULL);
    if (!rt)
        return TENURE_INVALID_ARGUMENT;
    tn_handle_slot *h = live_slot(rt, handle, fn);
    if (!h)
        return TENURE_INVALID_HANDLE;
    if (!valid_target(rt, obj, fn))
        return TENURE_INVALID_OBJECT;
    h->object = obj;
    emit_set(rt, h);
    return TENURE_OK;
}

tenure_result tenure_handle_free(tenure_runtime *rt, tenure_handle *handle) {
    if (tn_cb_refused(rt, TN_OP_CHANGE, "tenure_handle_free"))
        return TENURE_STATE;
    TN_LOCKED(rt);
    if (!rt)
        return TENURE_INVALID_ARGUMENT;
    tn_handle_slot *h = live_slot(rt, handle, "tenure_handle_free");
    if (!h)
        return TENURE_INVALID_HANDLE;
    TN_EMIT(rt, DestroyGCHandle, .HandleID = (uint64_t)(uintptr_t)h);
    if (TN_PROF_ON(rt, TENURE_PROFILE_HANDLES))
        tn_prof_handle_destroyed(rt, (tenure_handle *)h);
    release_slot(rt, h);
    rt->roots.handle_count--;
    return TENURE_OK;
}

size_t tn_handle_count(const tenure_runtime *rt) { return rt->roots.handle_count; }

size_t tenure_handle_count(const tenure_runtime *crt) {
    tenure_runtime *rt = (tenure_runtime *)crt;
    TN_LOCKED(rt);
    return rt ? rt->roots.handle_count : 0;
}

void tn_roots_visit_handle_slots(tenure_runtime *rt, uint32_t kind_mask, void (*fn)(tn_handle_slot *h, void *ctx),
                                 void *ctx) {
    for (tn_handle_slab *s = rt->roots.handle_slabs; s; s = s->next)
        for (size_t i = 0; i < TN_HANDLES_PER_SLAB; i++) {
            tn_handle_slot *h = &s->slots[i];
            if (h->kind != TN_HANDLE_FREE && (kind_mask >> h->effective) & 1)
                fn(h, ctx);
        }
}

typedef struct slot_visit {
    tn_slot_fn fn;
    void *ctx;
} slot_visit;

static void visit_object(tn_handle_slot *h, void *c) {
    slot_visit *v = c;
    if (h->object)
        v->fn(&h->object, v->ctx);
}

static void visit_secondary(tn_handle_slot *h, void *c) {
    slot_visit *v = c;
    if (h->secondary)
        v->fn(&h->secondary, v->ctx);
}

void tn_roots_visit_handles(tenure_runtime *rt, uint32_t kind_mask, tn_slot_fn fn, void *ctx) {
    slot_visit v = {fn, ctx};
    tn_roots_visit_handle_slots(rt, kind_mask, visit_object, &v);
}

void tn_roots_visit_secondaries(tenure_runtime *rt, tn_slot_fn fn, void *ctx) {
    slot_visit v = {fn, ctx};
    tn_roots_visit_handle_slots(rt, 1u << TENURE_HANDLE_DEPENDENT, visit_secondary, &v);
}

static void prepare_one(tn_handle_slot *h, void *c) {
    tenure_runtime *rt = c;
    if (h->kind == TENURE_HANDLE_VARIABLE)
        h->effective = h->variable_kind;
    else if (h->kind == TENURE_HANDLE_REFCOUNTED)
        h->effective =
            h->object && rt->roots.refcount_fn && rt->roots.refcount_fn(h->object, rt->roots.refcount_context)
                ? TENURE_HANDLE_STRONG
                : TENURE_HANDLE_WEAK_SHORT;
}

void tn_handles_prepare(tenure_runtime *rt) {
    tn_cb_frame frame;
    tn_cb_enter(&frame, rt, TN_CB_REFCOUNT);
    for (tn_handle_slab *s = rt->roots.handle_slabs; s; s = s->next)
        for (size_t i = 0; i < TN_HANDLES_PER_SLAB; i++)
            if (s->slots[i].kind != TN_HANDLE_FREE)
                prepare_one(&s->slots[i], rt);
    tn_cb_leave(&frame);
}

/* ---- the kinds with more to them ---- */

tenure_handle *tenure_handle_new_dependent(tenure_runtime *rt, void *primary, void *secondary) {
    static const char fn[] = "tenure_handle_new_dependent";
    if (tn_cb_refused(rt, TN_OP_CHANGE, fn) || handle_from_unattached(rt, fn))
        return NULL;
    TN_LOCKED_HOLDING(rt, primary, secondary);
    if (!rt)
        return NULL;
    if (!valid_target(rt, primary, fn) || !valid_target(rt, secondary, fn))
        return NULL;
    return new_handle(rt, TENURE_HANDLE_DEPENDENT, primary, secondary, fn);
}

void *tenure_handle_get_secondary(tenure_runtime *rt, const tenure_handle *handle) {
    tn_handle_slot *h = live_slot(rt, handle, "tenure_handle_get_secondary");
    if (h && h->kind != TENURE_HANDLE_DEPENDENT) {
        tn_api_fail(rt, TENURE_INVALID_HANDLE, "tenure_handle_get_secondary", "not a dependent handle");
        return NULL;
    }
    return h ? h->secondary : NULL;
}

tenure_result tenure_handle_set_secondary(tenure_runtime *rt, tenure_handle *handle, void *secondary) {
    static const char fn[] = "tenure_handle_set_secondary";
    if (tn_cb_refused(rt, TN_OP_CHANGE, fn))
        return TENURE_STATE;
    TN_LOCKED_HOLDING(rt, secondary, NULL);
    if (!rt)
        return TENURE_INVALID_ARGUMENT;
    tn_handle_slot *h = live_slot(rt, handle, fn);
    if (!h)
        return TENURE_INVALID_HANDLE;
    if (h->kind != TENURE_HANDLE_DEPENDENT)
        return tn_api_fail(rt, TENURE_INVALID_HANDLE, fn, "not a dependent handle");
    if (!valid_target(rt, secondary, fn))
        return TENURE_INVALID_OBJECT;
    h->secondary = secondary;
    return TENURE_OK;
}

tenure_result tenure_handle_set_variable_kind(tenure_runtime *rt, tenure_handle *handle, tenure_handle_kind kind) {
    static const char fn[] = "tenure_handle_set_variable_kind";
    if (tn_cb_refused(rt, TN_OP_CHANGE, fn))
        return TENURE_STATE;
    TN_LOCKED(rt);
    if (!rt)
        return TENURE_INVALID_ARGUMENT;
    tn_handle_slot *h = live_slot(rt, handle, fn);
    if (!h)
        return TENURE_INVALID_HANDLE;
    if (h->kind != TENURE_HANDLE_VARIABLE)
        return tn_api_fail(rt, TENURE_INVALID_HANDLE, fn, "not a variable handle");
    if (kind != TENURE_HANDLE_WEAK_SHORT && kind != TENURE_HANDLE_WEAK_LONG && kind != TENURE_HANDLE_STRONG &&
        kind != TENURE_HANDLE_PINNED)
        return tn_api_fail(rt, TENURE_INVALID_ARGUMENT, fn,
                           "a variable handle is weak short, weak long, strong or pinned");
    h->variable_kind = h->effective = (uint32_t)kind;
    return TENURE_OK;
}

void tenure_set_refcount_callback(tenure_runtime *rt, tenure_refcount_fn fn, void *context) {
    TN_LOCKED(rt);
    if (!rt)
        return;
    rt->roots.refcount_fn = fn;
    rt->roots.refcount_context = context;
}

uint64_t tenure_handle_sized_ref_bytes(tenure_runtime *rt, const tenure_handle *handle) {
    TN_LOCKED(rt);
    tn_handle_slot *h = live_slot(rt, handle, "tenure_handle_sized_ref_bytes");
    return h && h->kind == TENURE_HANDLE_SIZED_REF ? h->sized_bytes : 0;
}

/* ---- consistency check (base/assert.h) ---- */

/* A slab of rt's: its magic and owner, every slot's magic, and kinds a slot can have. */
void tn_handle_slab_check(const tenure_runtime *rt, const tn_handle_slab *s) {
    TN_ASSERT_INTERNAL(s->magic == TN_HANDLE_MAGIC && s->owner == rt);
    TN_ASSERT_INTERNAL(((uintptr_t)s & (TN_HANDLE_SLAB_BYTES - 1)) == 0);
    for (size_t i = 0; i < TN_HANDLES_PER_SLAB; i++) {
        const tn_handle_slot *h = &s->slots[i];
        TN_ASSERT_EXPENSIVE(h->magic == TN_HANDLE_MAGIC);
        TN_ASSERT_EXPENSIVE(h->kind == TN_HANDLE_FREE || h->kind <= TENURE_HANDLE_SIZED_REF);
        TN_ASSERT_EXPENSIVE(h->kind == TN_HANDLE_FREE || h->effective <= TENURE_HANDLE_SIZED_REF);
    }
}

void tn_handle_slabs_check(const tenure_runtime *rt) {
    size_t slabs = 0;
    for (const tn_handle_slab *s = rt->roots.handle_slabs; s; s = s->next, slabs++)
        tn_handle_slab_check(rt, s);
    TN_ASSERT_EXPENSIVE(slabs == rt->roots.slab_count);
}
