/* mark.c - the mark phase: roots kind by kind, old-to-young references through dirty cards,
 * an explicit bounded mark stack whose overflow is recovered by rescanning, and the clearing
 * of weak handles. Invariant M1: after tn_gc_mark every object reachable from the roots in a
 * condemned region has its mark bit set; nothing else in a condemned region does.
 *
 * The mark loop (docs/design/collector.md, "Mark loop"):
 *  - Marking a reference touches only side tables: the unit's generation byte (condemned or
 *    not) and the mark bit. The object itself is first read when it is scanned.
 *  - Objects popped from the stack go through a small FIFO and are prefetched as they enter
 *    it, so that by the time an object is scanned its header and slots are on their way to
 *    the cache (Garner, Blackburn and Frampton, "Effective prefetch for mark-sweep garbage
 *    collection", 2007; Boehm's GC_mark_from prefetches on push for the same reason).
 *  - A reference found in a slot has its mark-bit word prefetched and is tested MARK_EDGES
 *    references later (a delay line): the bitmap is 1/64 of the heap, too big for the
 *    nearest caches, and a test that waits for memory would stall the scan.
 *  - Slots are read from the type's reference offsets in a plain loop: no call per slot
 *    (types with a trace callback are called back, one call per slot).
 *  - A reference array is scanned MARK_CHUNK_SLOTS slots at a time: the rest of it waits on
 *    the stack as a continuation, so the stack holds at most a chunk's children per array
 *    on the path being traced, however long the array.
 *  - Invariant M2: an object's bytes are counted (marked_bytes, its region's live_bytes)
 *    exactly once: when it is popped to be scanned, or when its push overflows the stack.
 *    Rescanning the overflow range counts nothing. */
#include "gc/gc_internal.h"

/* Objects in flight between the stack and their scan: enough to hide a memory access
 * behind the scanning of the others (measured: docs/design/collector.md, "Mark loop"). */
#define MARK_FIFO 32
/* Slots of a reference array scanned before the rest is pushed back as a continuation. */
#define MARK_CHUNK_SLOTS 512
/* References whose mark bit is prefetched before it is tested. */
#define MARK_EDGES 16
/* Bytes of an object prefetched as it enters the FIFO: its header and first five slots, in
 * one or two cache lines (most objects are small; a 48-byte object straddles two lines five
 * times out of eight). */
#define MARK_PREFETCH_SPAN 48

/* A stack entry is an object (8-aligned) or, on top of the array it continues, an array
 * continuation: the index of the next element to scan, shifted left once, low bit set. */
#define CONT_TAG ((uintptr_t)1)

/* In a condemned region: the unit's generation is condemned (every region in use of a
 * condemned generation is condemned: collect.c set_condemned; references lead only to
 * regions in use, H3). NULL and references outside the range (frozen data) are not. */
static inline bool in_condemned(const tenure_runtime *rt, const void *v, int condemned) {
    uintptr_t off = (uintptr_t)v - (uintptr_t)rt->base;
    return off < rt->range && rt->unit_gen[off >> rt->head.unit_shift] <= condemned;
}

/* Set v's mark bit; false if it was set already. */
static inline bool set_mark_bit(tenure_runtime *rt, const void *v) {
    size_t bit = tn_bit_index(rt, v);
    uint64_t *w = &rt->mark_bits[bit >> 6], m = (uint64_t)1 << (bit & 63);
    if (*w & m)
        return false;
    *w |= m;
    return true;
}

/* M2: count obj's bytes, once (see the header comment). */
static inline void count_marked(tenure_runtime *rt, const char *obj, size_t size) {
    tn_region *r = &rt->regions[rt->unit_head[tn_unit_of(rt, obj)]];
    TN_ASSERT_INTERNAL(r->state == TN_RS_IN_USE && r->condemned);
    rt->mark.marked_bytes += size;
    r->live_bytes += size;
}

/* The stack is full: obj stays marked but unscanned; remember the range to rescan. */
static __attribute__((noinline)) void push_overflow(tenure_runtime *rt, char *obj) {
    count_marked(rt, obj, tn_obj_size(obj));
    if (!rt->mark.mark_overflow || obj < rt->mark.overflow_lo)
        rt->mark.overflow_lo = obj;
    if (!rt->mark.mark_overflow || obj > rt->mark.overflow_hi)
        rt->mark.overflow_hi = obj;
    if (!rt->mark.mark_overflow)
        rt->stats.mark_stack_overflows++;
    rt->mark.mark_overflow = true;
}

static inline void push(tenure_runtime *rt, char *obj) {
    tn_vec *s = &rt->mark.mark_stack;
    TN_ASSERT_INTERNAL(tn_in_range(rt, obj) && ((uintptr_t)obj & CONT_TAG) == 0);
    if (__builtin_expect(s->count < s->cap, 1))
        ((char **)s->data)[s->count++] = obj;
    else
        push_overflow(rt, obj);
}

/* Mark the condemned object v refers to and push it, if it was not marked. */
static inline void mark_ref(tenure_runtime *rt, char *v, int condemned) {
    if (in_condemned(rt, v, condemned) && set_mark_bit(rt, v)) {
        TN_ASSERT_INTERNAL(tn_region_of(rt, v) && tn_region_of(rt, v)->condemned);
        push(rt, v);
    }
}

/* The state of one drain: the FIFO of objects between the stack and their scan, and the
 * delay line of references whose mark bit is tested only MARK_EDGES references after it was
 * prefetched (the mark bitmap is 1/64 of the heap: too big for the nearest caches). */
typedef struct marker {
    tenure_runtime *rt;
    int condemned;
    size_t head, tail; /* fifo[head % MARK_FIFO .. tail % MARK_FIFO) */
    size_t edge;       /* next slot of the delay line */
    bool edges_full;   /* every slot of the delay line holds a reference, else [0, edge) */
    char *fifo[MARK_FIFO];
    char *edges[MARK_EDGES];
} marker;

/* Not a memset: a root by root trace starts a drain for each root that pushed something. */
static inline void marker_init(marker *mk, tenure_runtime *rt) {
    mk->rt = rt;
    mk->condemned = rt->collection->condemned;
    mk->head = mk->tail = mk->edge = 0;
    mk->edges_full = false;
}

/* Reference v was found in a slot: prefetch its mark bit, and test the reference found
 * MARK_EDGES references ago. */
static inline void mark_later(marker *mk, char *v) {
    tenure_runtime *rt = mk->rt;
    if (!in_condemned(rt, v, mk->condemned))
        return;
    __builtin_prefetch(&rt->mark_bits[tn_bit_index(rt, v) >> 6]);
    size_t i = mk->edge;
    mk->edge = (i + 1) % MARK_EDGES;
    if (__builtin_expect(!mk->edges_full, 0)) {
        mk->edges[i] = v;
        mk->edges_full = mk->edge == 0;
        return;
    }
    char *old = mk->edges[i];
    mk->edges[i] = v;
    if (set_mark_bit(rt, old))
        push(rt, old);
}

/* The slot visitor for types with a trace callback: one call per slot, as the callback wants. */
static void mark_later_slot(void **slot, void *ctx) { mark_later(ctx, *slot); }

/* Test every reference still in the delay line. */
static void flush_edges(marker *mk) {
    for (size_t i = 0, n = mk->edges_full ? MARK_EDGES : mk->edge; i < n; i++)
        if (set_mark_bit(mk->rt, mk->edges[i]))
            push(mk->rt, mk->edges[i]);
    mk->edge = 0;
    mk->edges_full = false;
}

/* Elements [from, to) of a reference array (or of an array of structs holding references). */
static inline void scan_elements(marker *mk, const tn_type *t, char *data, size_t from, size_t to) {
    if (t->elem_ref_count == 1 && t->elem_size == sizeof(void *) && t->elem_ref_offsets[0] == 0) {
        char **e = (char **)data;
        for (size_t i = from; i < to; i++)
            mark_later(mk, e[i]);
        return;
    }
    const size_t *offs = t->elem_ref_offsets, nref = t->elem_ref_count;
    for (char *e = data + from * t->elem_size, *end = data + to * t->elem_size; e < end; e += t->elem_size)
        for (size_t j = 0; j < nref; j++)
            mark_later(mk, *(char **)(e + offs[j]));
}

/* Scan the elements of array obj from index `from`: one chunk now, the rest pushed back as a
 * continuation. Without room for the continuation the rest is scanned now (its children
 * then overflow one by one, which always makes progress). */
static void scan_array(marker *mk, char *obj, const tn_type *t, size_t from) {
    size_t n = ((tenure_array_header *)obj)->length;
    size_t per_chunk = MARK_CHUNK_SLOTS / t->elem_ref_count + 1;
    size_t to = n - from > per_chunk ? from + per_chunk : n;
    tn_vec *s = &mk->rt->mark.mark_stack;
    if (to < n) {
        if (s->cap - s->count >= 2) {
            ((uintptr_t *)s->data)[s->count++] = (uintptr_t)obj;
            ((uintptr_t *)s->data)[s->count++] = (uintptr_t)to << 1 | CONT_TAG;
        } else {
            to = n;
        }
    }
    scan_elements(mk, t, obj + t->size, from, to);
}

/* Mark through every reference slot of obj (counting nothing: M2). */
static inline void scan_object(marker *mk, char *obj, const tn_type *t) {
    if (__builtin_expect(t->trace != NULL, 0)) {
        tn_obj_visit_traced(obj, mark_later_slot, mk);
        return;
    }
    if (t->kind == TN_TK_FIXED) {
        const size_t *offs = t->ref_offsets;
        for (size_t i = 0, n = t->ref_count; i < n; i++)
            mark_later(mk, *(char **)(obj + offs[i]));
        return;
    }
    TN_ASSERT_INTERNAL(t->kind == TN_TK_ARRAY);
    if (t->elem_ref_count)
        scan_array(mk, obj, t, 0);
}

/* Pop entries until the FIFO is full or the stack empty; continuations are scanned at once
 * (their array was read a moment ago, and its slots lie in a row). */
static inline void refill_fifo(marker *mk) {
    tn_vec *s = &mk->rt->mark.mark_stack;
    uintptr_t *stack = s->data;
    while (mk->tail - mk->head < MARK_FIFO && s->count) {
        uintptr_t e = stack[--s->count];
        if (e & CONT_TAG) {
            char *arr = (char *)stack[--s->count];
            TN_ASSERT_INTERNAL(tn_in_range(mk->rt, arr) && tn_obj_type(arr)->kind == TN_TK_ARRAY &&
                               (e >> 1) < ((tenure_array_header *)arr)->length);
            scan_array(mk, arr, tn_obj_type(arr), (size_t)(e >> 1));
            continue;
        }
        __builtin_prefetch((char *)e);
        __builtin_prefetch((char *)e + MARK_PREFETCH_SPAN - 8);
        mk->fifo[mk->tail++ % MARK_FIFO] = (char *)e;
    }
}

/* Scan until the stack, the FIFO and the delay line are empty (overflowed objects wait for
 * process_overflow). */
static void drain_with(marker *mk) {
    tenure_runtime *rt = mk->rt;
    for (;;) {
        refill_fifo(mk);
        if (mk->head == mk->tail) {
            flush_edges(mk);
            if (!rt->mark.mark_stack.count)
                return;
            continue;
        }
        char *obj = mk->fifo[mk->head++ % MARK_FIFO];
        const tn_type *t = tn_obj_type(obj);
        count_marked(rt, obj, tn_obj_size_t(t, obj));
        scan_object(mk, obj, t);
    }
}

static void drain(tenure_runtime *rt) {
    marker mk;
    marker_init(&mk, rt);
    drain_with(&mk);
}

/* Rescan marked objects in the overflow range until no overflow is left. */
static void process_overflow(tenure_runtime *rt) {
    marker mk;
    marker_init(&mk, rt);
    while (rt->mark.mark_overflow) {
        char *lo = rt->mark.overflow_lo, *hi = rt->mark.overflow_hi;
        rt->mark.mark_overflow = false;
        size_t last = tn_unit_of(rt, hi);
        for (size_t u = rt->unit_head[tn_unit_of(rt, lo)]; u <= last;) {
            tn_region *r = &rt->regions[u];
            u += r->state == TN_RS_IN_USE ? r->units : 1;
            if (r->state != TN_RS_IN_USE || !r->condemned)
                continue;
            size_t from = tn_bit_index(rt, lo > r->start ? lo : r->start);
            size_t end = tn_bit_index(rt, hi) + 1, used_end = tn_bit_index(rt, r->used);
            if (end > used_end)
                end = used_end;
            for (size_t b = tn_bit_next(rt->mark_bits, from, end); b < end;
                 b = tn_bit_next(rt->mark_bits, b + 1, end)) {
                char *obj = rt->base + b * 8;
                scan_object(&mk, obj, tn_obj_type(obj));
                drain_with(&mk);
            }
        }
    }
}

static void drain_all(tenure_runtime *rt) {
    drain(rt);
    if (!rt->mark.mark_overflow)
        return;
    size_t before = rt->mark.marked_bytes;
    process_overflow(rt);
    rt->mark.overflow_marked += rt->mark.marked_bytes - before;
    rt->mark.overflow_seen = true;
}

/* Roots are traced depth first, one at a time, so that millions of roots do not overflow
 * the mark stack. (Pushing roots in batches and draining at half a stack, which lets the
 * FIFO prefetch across roots, was measured slower: the young objects found through cards
 * lie in allocation order, which a trace root by root follows.) Every root kind ends with
 * drain_all. */
static void mark_root_slot(void **slot, void *ctx) {
    tenure_runtime *rt = ctx;
    mark_ref(rt, *slot, rt->collection->condemned);
    if (rt->mark.mark_stack.count)
        drain(rt);
}

/* Pin and mark v; handle_id is the pinning handle (0 for a conservative stack root). */
static void pin_object(tenure_runtime *rt, char *v, uint64_t handle_id) {
    if (!in_condemned(rt, v, rt->collection->condemned))
        return;
    size_t bit = tn_bit_index(rt, v);
    if (!tn_bit_test(rt->pin_bits, bit)) {
        tn_bit_set(rt->pin_bits, bit);
        rt->mark.pinned_objects++;
        TN_EMIT(rt, PinObjectAtGCTime, .HandleID = handle_id, .ObjectID = (uint64_t)(uintptr_t)v,
                .ObjectSize = tn_obj_size(v), .TypeName = tn_obj_type(v)->name);
    }
    mark_ref(rt, v, rt->collection->condemned);
}

/* A pinned handle's slot is the handle itself (the object is its first field). */
static void pin_handle_slot(void **slot, void *ctx) { pin_object(ctx, *slot, (uint64_t)(uintptr_t)slot); }
static void pin_stack_word(void *obj, void *word, void *ctx) {
    (void)word;
    pin_object(ctx, obj, 0);
}

static void clear_weak(void **slot, void *ctx) {
    tenure_runtime *rt = ctx;
    char *v = *slot;
    if (in_condemned(rt, v, rt->collection->condemned) && !tn_bit_test(rt->mark_bits, tn_bit_index(rt, v)))
        *slot = NULL;
}

#define KIND_BIT(k) (1u << (k))

static void mark_sized_ref(tn_handle_slot *h, void *ctx) {
    tenure_runtime *rt = ctx;
    size_t before = rt->mark.marked_bytes;
    if (h->object) {
        mark_root_slot(&h->object, rt);
        drain_all(rt);
    }
    h->sized_bytes = rt->mark.marked_bytes - before;
}

/* AsyncPinned: the object, and each element of a reference array, are pinned. */
static void pin_async(tn_handle_slot *h, void *ctx) {
    tenure_runtime *rt = ctx;
    if (!h->object)
        return;
    pin_object(rt, h->object, (uint64_t)(uintptr_t)h);
    tn_type *t = tn_obj_type(h->object);
    if (t->kind != TN_TK_ARRAY || t->trace || t->elem_ref_count != 1 || t->elem_size != sizeof(void *) ||
        t->elem_ref_offsets[0] != 0)
        return;
    void **e = tenure_array_data(h->object);
    for (size_t i = 0, n = tenure_array_length(h->object); i < n; i++)
        if (e[i])
            pin_object(rt, e[i], (uint64_t)(uintptr_t)h);
}

/* Alive after this GC: NULL is not, an object outside the condemned regions is, a condemned
 * one is if marked. */
static bool survives(tenure_runtime *rt, void *v) {
    if (!v)
        return false;
    return !in_condemned(rt, v, rt->collection->condemned) || tn_bit_test(rt->mark_bits, tn_bit_index(rt, v));
}

typedef struct dep_pass {
    tenure_runtime *rt;
    bool changed;
} dep_pass;

static void mark_dependent(tn_handle_slot *h, void *ctx) {
    dep_pass *p = ctx;
    tenure_runtime *rt = p->rt;
    if (!h->secondary || !survives(rt, h->object) || survives(rt, h->secondary))
        return;
    mark_root_slot(&h->secondary, rt);
    drain_all(rt);
    p->changed = true;
}

/* Ephemerons: a secondary lives if its primary does, which marking it may change for other
 * handles: repeat until nothing changes. */
static void mark_dependents(tenure_runtime *rt) {
    dep_pass p = {rt, true};
    while (p.changed) {
        p.changed = false;
        tn_roots_visit_handle_slots(rt, KIND_BIT(TENURE_HANDLE_DEPENDENT), mark_dependent, &p);
    }
}

static bool is_dead_now(tenure_runtime *rt, const void *v) { return !survives(rt, (void *)v); }

static void queue_for_finalization(tenure_runtime *rt, void **slot) {
    if (TN_PROF_ON(rt, TENURE_PROFILE_GC))
        tn_prof_finalizeable_queued(rt, *slot);
    mark_root_slot(slot, rt);
    drain_all(rt);
}

/* A dependent handle keeps its secondary exactly while its primary is alive: a primary that
 * died, or none at all, leaves neither. */
static void clear_dependent(tn_handle_slot *h, void *ctx) {
    if (!h->object || !survives(ctx, h->object))
        h->object = h->secondary = NULL;
}

/* GCMarkWithType for one root kind: the bytes it marked, overflow processing excluded. */
typedef struct kind_meter {
    size_t marked, overflow;
} kind_meter;

static kind_meter meter_start(const tenure_runtime *rt) {
    return (kind_meter){rt->mark.marked_bytes, rt->mark.overflow_marked};
}

static void meter_end(tenure_runtime *rt, kind_meter m, uint32_t type) {
    size_t bytes = (rt->mark.marked_bytes - m.marked) - (rt->mark.overflow_marked - m.overflow);
    TN_EMIT(rt, GCMarkWithType, .HeapNum = 0, .Type = type, .Bytes = bytes);
}

/* Add the time since *since to the mark step's in the record (GCGlobalHeapHistory_V4's mark
 * times, gc/history.c), and start the next step's clock. */
static void mark_step_done(tn_collection *c, int step, uint64_t *since) {
    uint64_t now = tn_os_now_ns();
    c->record.mark_us[step] += (uint32_t)((now - *since) / 1000);
    *since = now;
}

void tn_gc_mark(tenure_runtime *rt, tn_collection *c) {
    tn_assert_phase(rt, c);
    uint64_t step_from = tn_os_now_ns();
    int condemned = c->condemned;
    rt->mark.marked_bytes = rt->mark.overflow_marked = 0;
    rt->mark.overflow_seen = false;
    rt->mark.pinned_objects = 0;
    rt->mark.mark_overflow = false;
    rt->mark.mark_stack.count = 0; /* reserved before the pause (scratch.c): it never grows */

    tn_handles_prepare(rt);
    /* SizedRef (full GCs): each handle's graph first, one handle after the other */
    kind_meter m;
    if (condemned == TN_GEN2 && rt->roots.handle_count) {
        m = meter_start(rt);
        tn_roots_visit_handle_slots(rt, KIND_BIT(TENURE_HANDLE_SIZED_REF), mark_sized_ref, rt);
        meter_end(rt, m, TN_ROOT_SIZEDREF);
    }
    mark_step_done(c, TN_MARK_SIZEDREF, &step_from);
    /* Stack: shadow frames, root areas, root scanners, frozen segments, and the stack itself
     * conservatively */
    m = meter_start(rt);
    tn_roots_visit_stack(rt, mark_root_slot, rt);
    tn_roots_scan_conservative(rt, true, pin_stack_word, rt);
    drain_all(rt);
    meter_end(rt, m, TN_ROOT_STACK);
    /* Finalizer: objects waiting for their finalizer */
    if (rt->lifetime.ready.count > rt->lifetime.ready_head) {
        m = meter_start(rt);
        tn_finalize_visit_ready(rt, mark_root_slot, rt);
        drain_all(rt);
        meter_end(rt, m, TN_ROOT_FINALIZER);
    }
    /* Handle: pinned handles pin, strong handles keep alive */
    m = meter_start(rt);
    tn_roots_visit_handles(rt, KIND_BIT(TENURE_HANDLE_PINNED), pin_handle_slot, rt);
    tn_roots_visit_handle_slots(rt, KIND_BIT(TENURE_HANDLE_ASYNC_PINNED), pin_async, rt);
    tn_roots_visit_handles(rt, KIND_BIT(TENURE_HANDLE_STRONG) | KIND_BIT(TENURE_HANDLE_SIZED_REF), mark_root_slot, rt);
    drain_all(rt);
    meter_end(rt, m, TN_ROOT_HANDLE);
    /* Older: old-to-young references under dirty cards */
    if (condemned < TN_GEN2) {
        m = meter_start(rt);
        tn_gc_mark_cards(rt, condemned, mark_root_slot, rt); /* cards.c */
        drain_all(rt);
        meter_end(rt, m, TN_ROOT_OLDER);
    }
    /* DependentHandle: secondaries of live primaries, to a fixed point */
    if (rt->roots.handle_count) {
        m = meter_start(rt);
        mark_dependents(rt);
        meter_end(rt, m, TN_ROOT_DEPENDENT_HANDLE);
    }
    /* short weak handles of dead objects are cleared before finalization is scanned, long
     * ones after it (they track resurrection); dependent handles whose primary died lose both
     * objects */
    mark_step_done(c, TN_MARK_ROOTS, &step_from);
    tn_roots_visit_handles(rt, KIND_BIT(TENURE_HANDLE_WEAK_SHORT), clear_weak, rt);
    mark_step_done(c, TN_MARK_SHORT_WEAK, &step_from);
    /* NewFQ: unreachable finalizable objects go to the ready queue and are marked through */
    if (rt->lifetime.finalizable.count) {
        m = meter_start(rt);
        size_t n = tn_finalize_scan(rt, is_dead_now, queue_for_finalization);
        c->record.finalization_promoted_count = n;
        c->record.finalization_promoted_bytes =
            (rt->mark.marked_bytes - m.marked) - (rt->mark.overflow_marked - m.overflow);
        meter_end(rt, m, TN_ROOT_NEW_FQ);
        if (n && rt->roots.handle_count) { /* DependentHandle again: resurrection may revive primaries */
            m = meter_start(rt);
            mark_dependents(rt);
            meter_end(rt, m, TN_ROOT_DEPENDENT_HANDLE);
        }
    }
    mark_step_done(c, TN_MARK_FINALIZATION, &step_from);
    tn_roots_visit_handles(rt, KIND_BIT(TENURE_HANDLE_WEAK_LONG), clear_weak, rt);
    tn_roots_visit_handle_slots(rt, KIND_BIT(TENURE_HANDLE_DEPENDENT), clear_dependent, rt);
    mark_step_done(c, TN_MARK_LONG_WEAK, &step_from);
    if (rt->mark.overflow_seen)
        TN_EMIT(rt, GCMarkWithType, .HeapNum = 0, .Type = TN_ROOT_OVERFLOW, .Bytes = rt->mark.overflow_marked);
}

/* ---- consistency check (api/assert.h) ---- */

/* The mark stack holds pointers into the heap's range and array continuations (an index,
 * tagged, on top of the array it continues, which is no further than its length), no more
 * than it has room for (it is reserved before the pause and never grows inside it). */
void tn_mark_stack_check(const tenure_runtime *rt) {
    const tn_vec *s = &rt->mark.mark_stack;
    TN_ASSERT_INTERNAL(s->count <= s->cap && (s->cap == 0 || s->data != NULL));
    TN_ASSERT_INTERNAL(s->count == 0 || s->elem == sizeof(void *));
    const uintptr_t *e = s->data;
    for (size_t i = 0; i < s->count; i++) {
        if (!(e[i] & CONT_TAG)) {
            TN_ASSERT_EXPENSIVE(tn_in_range(rt, (const void *)e[i]));
            continue;
        }
        TN_ASSERT_INTERNAL(i > 0 && !(e[i - 1] & CONT_TAG) && tn_in_range(rt, (const void *)e[i - 1]));
        TN_ASSERT_EXPENSIVE(tn_obj_type((const void *)e[i - 1])->kind == TN_TK_ARRAY &&
                            (e[i] >> 1) < ((const tenure_array_header *)e[i - 1])->length);
    }
}
