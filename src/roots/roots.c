/* roots.c - precise embedder roots: shadow-stack frames, registered root areas and root
 * scanner callbacks. All three are visited as the "Stack" root kind. */
#include "runtime.h"
#include <stdlib.h>

/* ---- the checks of the frame chain (tenure.h, "Shadow-stack frames") ----
 *
 * A missed TENURE_FRAME_POP leaves a frame on the chain after its function returned; when the
 * same frame is pushed again it would point at itself, and every later GC would walk that
 * cycle forever (issue 38). The inline push sends every frame that does not lie below the
 * innermost one here; the pop sends every frame that is not the innermost one. */

/* The cycle that starts somewhere at or below top and has length len is cut: the link that
 * closes it is set to NULL. */
static void cut_cycle(tenure_frame *top, size_t len) {
    tenure_frame *a = top, *b = top;
    for (size_t i = 0; i < len; i++)
        b = b->prev;
    while (a != b) { /* a: the first frame on the cycle */
        a = a->prev;
        b = b->prev;
    }
    tenure_frame *last = a;
    while (last->prev != a)
        last = last->prev;
    last->prev = NULL;
}

/* Walk the chain from top for `find` (Brent's cycle detection: a chain that is already a
 * cycle is cut, not walked forever). 1: found, *depth frames above it; 0: not on the chain;
 * -1: the chain was a cycle (now cut). */
static int chain_find(tenure_frame *top, const tenure_frame *find, size_t *depth) {
    const tenure_frame *mark = NULL;
    size_t power = 1, len = 0, n = 0;
    for (tenure_frame *f = top; f; f = f->prev, n++) {
        if (f == find) {
            *depth = n;
            return 1;
        }
        if (f == mark) {
            cut_cycle(top, len);
            return -1;
        }
        if (len == power) {
            mark = f;
            power <<= 1;
            len = 0;
        }
        len++;
    }
    return 0;
}

/* f lies on the same stack as `live` (a frame of a function that runs now), below it: f was
 * pushed by a function that has returned (its memory is reused: never read it), or by the same
 * function (two frames of one function). Same stack: less than 64 MiB apart. */
#define TN_SAME_STACK_REACH ((uintptr_t)64 << 20)
static bool below_on_stack(const tenure_frame *f, const tenure_frame *live) {
    return f && (uintptr_t)f < (uintptr_t)live && (uintptr_t)live - (uintptr_t)f < TN_SAME_STACK_REACH;
}

void tenure__frame_push_slow(tenure_runtime *rt, tenure__mutator *m, tenure_frame *frame, size_t count,
                             void **const *slots) {
    size_t above = 0;
    int found;
    if (m->frames == frame)
        found = 1; /* pushed again: its memory still holds its old link (TENURE_FRAME writes no field first) */
    else if (below_on_stack(m->frames, frame))
        found = 0; /* a frame of the same function (or one left by a returned callee: not read) */
    else
        found = chain_find(m->frames, frame, &above);
    if (found == 1)
        m->frames = frame->prev; /* its old link: the frames above it are stale */
    frame->prev = m->frames;
    frame->count = count;
    frame->slots = slots;
    m->frames = frame;
    if (found == 1 && rt)
        tn_api_fail(rt, TENURE_STATE, "TENURE_FRAME",
                    "frame %p was pushed while already on the calling thread's chain of frames: a "
                    "TENURE_FRAME_POP was missed (a return, break or goto out of the frame's scope, or a loop "
                    "around TENURE_FRAME); the frame and the %zu pushed after it were dropped, then it was pushed "
                    "again",
                    (void *)frame, above);
    else if (found < 0 && rt)
        tn_api_fail(rt, TENURE_STATE, "TENURE_FRAME",
                    "the calling thread's chain of frames was a cycle (a frame pushed twice by hand?): cut");
}

void tenure__frame_pop_mismatch(tenure_runtime *rt, tenure_frame *frame) {
    tn_mutator *m = rt ? tn_self(rt) : NULL;
    if (!m)
        return; /* not attached: reported by tenure__mutator_of */
    size_t above = 0;
    if (below_on_stack(m->pub.frames, frame)) {
        /* the innermost frame lies deeper in the stack than this live one: pushed by functions it
         * called, which returned without popping (their memory is reused now: not read) */
        m->pub.frames = frame->prev;
        tn_api_fail(rt, TENURE_STATE, "tenure_frame_pop",
                    "frame %p is not the innermost frame: frames pushed after it, by functions that have returned, "
                    "were never popped (a TENURE_FRAME_POP missed on an early return?); they are popped with it",
                    (void *)frame);
    } else if (chain_find(m->pub.frames, frame, &above) == 1) {
        m->pub.frames = frame->prev;
        tn_api_fail(rt, TENURE_STATE, "tenure_frame_pop",
                    "frame %p is not the innermost frame: the %zu frame(s) pushed after it were never popped "
                    "(a TENURE_FRAME_POP missed on an early return?); they are popped with it",
                    (void *)frame, above);
    } else {
        tn_api_fail(rt, TENURE_STATE, "tenure_frame_pop",
                    "frame %p is not on the calling thread's chain of frames (popped twice, never pushed, or "
                    "pushed by another thread): nothing popped",
                    (void *)frame);
    }
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
    size_t unused;
    if (TENURE__UNLIKELY(chain_find(m->pub.frames, NULL, &unused) < 0)) /* a collection never spins */
        tn_api_fail(rt, TENURE_STATE, "TENURE_FRAME",
                    "the shadow frames of thread %llu formed a cycle (a frame pushed twice): the cycle was cut",
                    (unsigned long long)m->os_tid);
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
