/* roots.c - precise embedder roots: shadow-stack frames, registered root areas and root
 * scanner callbacks. All three are visited as the "Stack" root kind. */
#include "runtime.h"
#include <stdlib.h>

void tenure__frame_pop_mismatch(tenure_runtime *rt, tenure_frame *frame) {
    if (rt)
        tn_api_fail(rt, TENURE_STATE, "tenure_frame_pop",
                    "frame %p is not the innermost frame (frames must be popped in reverse order)", (void *)frame);
}

tenure_root_area *tenure_root_area_add(tenure_runtime *rt, void **slots, size_t count) {
    static const char fn[] = "tenure_root_area_add";
    if (tn_cb_refused(rt, TN_OP_CHANGE, fn))
        return NULL;
    TN_LOCKED(rt);
    if (!rt)
        return NULL;
    if (!slots && count) {
        tn_api_fail(rt, TENURE_INVALID_ARGUMENT, fn, "NULL slots");
        return NULL;
    }
    /* count slots must fit the address space; they must be aligned; and they may not lie in
     * the heap, whose memory moves (the GC would update slots of whatever object came there) */
    uintptr_t lo = (uintptr_t)slots, base = (uintptr_t)rt->base;
    if (count > (UINTPTR_MAX - lo) / sizeof(void *)) {
        tn_api_fail(rt, TENURE_SIZE, fn, "%zu slots from %p wrap around the address space", count, (void *)slots);
        return NULL;
    }
    uintptr_t hi = lo + count * sizeof(void *);
    if (lo & (sizeof(void *) - 1)) {
        tn_api_fail(rt, TENURE_INVALID_ARGUMENT, fn, "slots %p are not aligned to a pointer", (void *)slots);
        return NULL;
    }
    if (count && lo < base + rt->range && hi > base) {
        tn_api_fail(rt, TENURE_INVALID_ARGUMENT, fn,
                    "slots %p..%p lie in the heap, whose objects move (use a handle or a frame)", (void *)lo,
                    (void *)hi);
        return NULL;
    }
    tenure_root_area *a = tn_malloc(sizeof *a);
    if (!a) {
        tn_api_fail(rt, TENURE_NOMEM, fn, "out of memory");
        return NULL;
    }
    a->slots = slots;
    a->count = count;
    a->magic = TN_ROOT_MAGIC;
    a->next = rt->roots.areas;
    rt->roots.areas = a;
    return a;
}

/* While tn_roots_visit_embedder runs (a callback it made asks for the removal: its own
 * scanner, say), an area or scanner is only marked: the walk skips it, and unlinks and frees
 * it at its end. */
static bool defer_removal(tenure_runtime *rt, uint32_t *magic) {
    if (!rt->roots.root_walks)
        return false;
    *magic = TN_ROOT_REMOVED;
    rt->roots.roots_removed = true;
    return true;
}

static void unlink_removed(tenure_runtime *rt) {
    for (tenure_root_area **p = &rt->roots.areas; *p;)
        if ((*p)->magic == TN_ROOT_REMOVED) {
            tenure_root_area *a = *p;
            *p = a->next;
            free(a);
        } else {
            p = &(*p)->next;
        }
    for (tenure_root_scanner **p = &rt->roots.scanners; *p;)
        if ((*p)->magic == TN_ROOT_REMOVED) {
            tenure_root_scanner *sc = *p;
            *p = sc->next;
            free(sc);
        } else {
            p = &(*p)->next;
        }
    rt->roots.roots_removed = false;
}

tenure_result tenure_root_area_remove(tenure_runtime *rt, tenure_root_area *area) {
    if (rt && tn_cb_refused(rt, TN_OP_REMOVE, "tenure_root_area_remove"))
        return TENURE_STATE;
    TN_LOCKED(rt);
    if (!rt)
        return TENURE_INVALID_ARGUMENT;
    for (tenure_root_area **p = &rt->roots.areas; *p; p = &(*p)->next)
        if (*p == area && area->magic == TN_ROOT_MAGIC) {
            if (!defer_removal(rt, &area->magic)) {
                *p = area->next;
                area->magic = 0;
                free(area);
            }
            return TENURE_OK;
        }
    return tn_api_fail(rt, TENURE_INVALID_ARGUMENT, "tenure_root_area_remove", "%p is not a root area of this instance",
                       (void *)area);
}

tenure_root_scanner *tenure_root_scanner_add(tenure_runtime *rt, tenure_root_scan_fn scan, void *context) {
    static const char fn[] = "tenure_root_scanner_add";
    if (tn_cb_refused(rt, TN_OP_CHANGE, fn))
        return NULL;
    TN_LOCKED(rt);
    if (!rt)
        return NULL;
    if (!scan) {
        tn_api_fail(rt, TENURE_INVALID_ARGUMENT, fn, "NULL scan callback");
        return NULL;
    }
    tenure_root_scanner *s = tn_malloc(sizeof *s);
    if (!s) {
        tn_api_fail(rt, TENURE_NOMEM, fn, "out of memory");
        return NULL;
    }
    s->scan = scan;
    s->context = context;
    s->magic = TN_ROOT_MAGIC;
    s->next = rt->roots.scanners;
    rt->roots.scanners = s;
    return s;
}

tenure_result tenure_root_scanner_remove(tenure_runtime *rt, tenure_root_scanner *scanner) {
    if (rt && tn_cb_refused(rt, TN_OP_REMOVE, "tenure_root_scanner_remove"))
        return TENURE_STATE;
    TN_LOCKED(rt);
    if (!rt)
        return TENURE_INVALID_ARGUMENT;
    for (tenure_root_scanner **p = &rt->roots.scanners; *p; p = &(*p)->next)
        if (*p == scanner && scanner->magic == TN_ROOT_MAGIC) {
            if (!defer_removal(rt, &scanner->magic)) {
                *p = scanner->next;
                scanner->magic = 0;
                free(scanner);
            }
            return TENURE_OK;
        }
    return tn_api_fail(rt, TENURE_INVALID_ARGUMENT, "tenure_root_scanner_remove",
                       "%p is not a root scanner of this instance", (void *)scanner);
}

void tn_roots_visit_stack(tenure_runtime *rt, tn_slot_fn fn, void *ctx) {
    tn_roots_visit_embedder(rt, fn, ctx);
    tn_frozen_visit_slots(rt, fn, ctx);
}

void tn_roots_visit_embedder(tenure_runtime *rt, tn_slot_fn fn, void *ctx) {
    for (tn_mutator *m = tn_mutators(rt); m; m = m->next)
        tn_roots_visit_frames(rt, m, fn, ctx);
    tn_roots_visit_areas_and_scanners(rt, fn, ctx);
}

void tn_roots_visit_frames(tenure_runtime *rt, tn_mutator *m, tn_slot_fn fn, void *ctx) {
    (void)rt;
    for (tenure_frame *f = m->pub.frames; f; f = f->prev)
        for (size_t i = 0; i < f->count; i++)
            fn(f->slots[i], ctx);
}

void tn_roots_visit_areas_and_scanners(tenure_runtime *rt, tn_slot_fn fn, void *ctx) {
    /* fn may call a profiler (root references), which may remove an area: checked per slot */
    rt->roots.root_walks++;
    for (tenure_root_area *a = rt->roots.areas; a; a = a->next)
        for (size_t i = 0; i < a->count && a->magic == TN_ROOT_MAGIC; i++)
            fn(&a->slots[i], ctx);
    if (rt->roots.scanners) {
        struct tenure_visitor v = {fn, ctx};
        tn_cb_frame frame;
        tn_cb_enter(&frame, rt, TN_CB_ROOT_SCANNER);
        for (tenure_root_scanner *s = rt->roots.scanners; s; s = s->next)
            if (s->magic == TN_ROOT_MAGIC)
                s->scan(rt, &v, s->context);
        tn_cb_leave(&frame);
    }
    if (--rt->roots.root_walks == 0 && rt->roots.roots_removed)
        unlink_removed(rt);
}

void tn_roots_destroy(tenure_runtime *rt) {
    tn_frozen_destroy(rt);
    while (rt->roots.areas) {
        tenure_root_area *a = rt->roots.areas;
        rt->roots.areas = a->next;
        free(a);
    }
    while (rt->roots.scanners) {
        tenure_root_scanner *s = rt->roots.scanners;
        rt->roots.scanners = s->next;
        free(s);
    }
    tn_handles_destroy_slab_sets(rt);
    while (rt->roots.handle_slabs) {
        tn_handle_slab *h = rt->roots.handle_slabs;
        rt->roots.handle_slabs = h->next;
        free(h);
    }
}
