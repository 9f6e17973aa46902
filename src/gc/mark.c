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
#include <stdlib.h>

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

/* The state of one GC thread's marking: its worker (stack, counts), the pool it shares work
 * through (NULL when it marks alone), the FIFO of objects between the stack and their scan,
 * and the delay line of references whose mark bit is tested only MARK_EDGES references after
 * it was prefetched (the mark bitmap is 1/64 of the heap: too big for the nearest caches).
 * Thread 0 keeps one marker for the whole mark phase (the root callbacks get it as their
 * context); a drain leaves its FIFO and delay line empty. */
typedef struct tn_marker {
    tenure_runtime *rt;
    tn_mark_worker *w;
    tn_mark_pool *pool;
    int condemned;
    int pin_upto;      /* objects of generations up to it are pinned, older ones only marked */
    size_t head, tail; /* fifo[head % MARK_FIFO .. tail % MARK_FIFO) */
    size_t edge;       /* next slot of the delay line */
    bool edges_full;   /* every slot of the delay line holds a reference, else [0, edge) */
    char *fifo[MARK_FIFO];
    char *edges[MARK_EDGES];
} marker;

static void marker_init(marker *mk, tenure_runtime *rt, tn_mark_worker *w) {
    mk->rt = rt;
    mk->w = w;
    mk->pool = NULL;
    mk->condemned = rt->collection->condemned;
    /* a background GC's final pause moves nothing older than gen0: it collects gen0 */
    mk->pin_upto = rt->collection->bgc_final ? TN_GEN0 : mk->condemned;
    mk->head = mk->tail = mk->edge = 0;
    mk->edges_full = false;
}

/* Set v's mark bit; false if it was set already. With other GC threads marking (mk->pool) the
 * bit is set atomically: of two threads that find the same object, one pushes it. */
static inline __attribute__((always_inline)) bool set_mark_bit(const marker *mk, const void *v, bool par) {
    tenure_runtime *rt = mk->rt;
    size_t bit = tn_bit_index(rt, v);
    uint64_t *w = &rt->mark_bits[bit >> 6], m = (uint64_t)1 << (bit & 63);
    if (__atomic_load_n(w, __ATOMIC_RELAXED) & m)
        return false;
    if (par)
        return !(__atomic_fetch_or(w, m, __ATOMIC_RELAXED) & m);
    *w |= m;
    return true;
}

/* Add the bytes the worker counted per region (server GC's table, count_marked) to the
 * regions' live_bytes, atomically: other threads add theirs too. Workstation GC counts into
 * the regions directly and leaves the table empty. */
static void flush_live(const marker *mk) {
    tn_mark_worker *w = mk->w;
    for (unsigned i = 0; i < TN_LIVE_SLOTS; i++)
        if (w->live_r[i]) {
            __atomic_fetch_add(&w->live_r[i]->live_bytes, w->live_pending[i], __ATOMIC_RELAXED);
            w->live_r[i] = NULL;
        }
}

/* M2: count obj's bytes, once (see the header comment). With other GC threads marking, each
 * thread counts into its own table of regions (tn_mark_worker.live_r) and adds a region's
 * bytes to its live_bytes only when another region takes the slot, and at the end
 * (flush_live): an atomic add per object, on counters every thread shares, made a parallel
 * mark of a random graph slower than a serial one (docs/design/collector.md, "Live bytes
 * counted per thread"). */
static inline __attribute__((always_inline)) void count_marked(const marker *mk, const char *obj, size_t size,
                                                               bool par) {
    tenure_runtime *rt = mk->rt;
    tn_region *r = &rt->regions[rt->unit_head[tn_unit_of(rt, obj)]];
    TN_ASSERT_INTERNAL(r->state == TN_RS_IN_USE && r->condemned);
    tn_mark_worker *w = mk->w;
    w->marked_bytes += size;
    if (!par) {
        r->live_bytes += size;
        return;
    }
    unsigned slot = (unsigned)(r - rt->regions) % TN_LIVE_SLOTS;
    if (__builtin_expect(r != w->live_r[slot], 0)) {
        if (w->live_r[slot])
            __atomic_fetch_add(&w->live_r[slot]->live_bytes, w->live_pending[slot], __ATOMIC_RELAXED);
        w->live_r[slot] = r;
        w->live_pending[slot] = 0;
    }
    w->live_pending[slot] += size;
}

/* The stack is full: obj stays marked but unscanned; remember the range to rescan. */
static __attribute__((noinline)) void push_overflow(const marker *mk, char *obj) {
    tn_mark_worker *w = mk->w;
    count_marked(mk, obj, tn_obj_size(obj), mk->pool != NULL);
    if (!w->overflow || obj < w->overflow_lo)
        w->overflow_lo = obj;
    if (!w->overflow || obj > w->overflow_hi)
        w->overflow_hi = obj;
    if (!w->overflow)
        w->overflows++;
    w->overflow = true;
}

static inline __attribute__((always_inline)) void push(const marker *mk, char *obj) {
    tn_vec *s = &mk->w->stack;
    TN_ASSERT_INTERNAL(tn_in_range(mk->rt, obj) && ((uintptr_t)obj & CONT_TAG) == 0);
    if (__builtin_expect(s->count < s->cap, 1))
        ((char **)s->data)[s->count++] = obj;
    else
        push_overflow(mk, obj);
}

/* Mark the condemned object v refers to and push it, if it was not marked. */
static inline void mark_ref(const marker *mk, char *v) {
    if (in_condemned(mk->rt, v, mk->condemned) && set_mark_bit(mk, v, mk->pool != NULL)) {
        TN_ASSERT_INTERNAL(tn_region_of(mk->rt, v) && tn_region_of(mk->rt, v)->condemned);
        push(mk, v);
    }
}

/* Reference v was found in a slot: prefetch its mark bit, and test the reference found
 * MARK_EDGES references ago. (always_inline, as the other helpers of the loop: GCC would
 * otherwise call it per slot, 15% more instructions in the mark loop.) */
static inline __attribute__((always_inline)) void mark_later(marker *mk, char *v, bool par) {
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
    if (set_mark_bit(mk, old, par))
        push(mk, old);
}

/* The slot visitor for types with a trace callback: one call per slot, as the callback wants. */
static void mark_later_slot(void **slot, void *ctx) {
    marker *mk = ctx;
    mark_later(mk, *slot, mk->pool != NULL);
}

/* Test every reference still in the delay line. */
static inline __attribute__((always_inline)) void flush_edges(marker *mk, bool par) {
    for (size_t i = 0, n = mk->edges_full ? MARK_EDGES : mk->edge; i < n; i++)
        if (set_mark_bit(mk, mk->edges[i], par))
            push(mk, mk->edges[i]);
    mk->edge = 0;
    mk->edges_full = false;
}

/* Elements [from, to) of a reference array (or of an array of structs holding references). */
static inline __attribute__((always_inline)) void scan_elements(marker *mk, const tn_type *t, char *data, size_t from,
                                                                size_t to, bool par) {
    if (t->elem_ref_count == 1 && t->elem_size == sizeof(void *) && t->elem_ref_offsets[0] == 0) {
        char **e = (char **)data;
        for (size_t i = from; i < to; i++)
            mark_later(mk, e[i], par);
        return;
    }
    const size_t *offs = t->elem_ref_offsets, nref = t->elem_ref_count;
    for (char *e = data + from * t->elem_size, *end = data + to * t->elem_size; e < end; e += t->elem_size)
        for (size_t j = 0; j < nref; j++)
            mark_later(mk, *(char **)(e + offs[j]), par);
}

/* Scan the elements of array obj from index `from`: one chunk now, the rest pushed back as a
 * continuation. Without room for the continuation the rest is scanned now (its children
 * then overflow one by one, which always makes progress). */
static inline __attribute__((always_inline)) void scan_array(marker *mk, char *obj, const tn_type *t, size_t from,
                                                             bool par) {
    size_t n = ((tenure_array_header *)obj)->length;
    size_t per_chunk = MARK_CHUNK_SLOTS / t->elem_ref_count + 1;
    size_t to = n - from > per_chunk ? from + per_chunk : n;
    tn_vec *s = &mk->w->stack;
    if (to < n) {
        if (s->cap - s->count >= 2) {
            ((uintptr_t *)s->data)[s->count++] = (uintptr_t)obj;
            ((uintptr_t *)s->data)[s->count++] = (uintptr_t)to << 1 | CONT_TAG;
        } else {
            to = n;
        }
    }
    scan_elements(mk, t, obj + t->size, from, to, par);
}

/* Mark through every reference slot of obj (counting nothing: M2). */
static inline __attribute__((always_inline)) void scan_object(marker *mk, char *obj, const tn_type *t, bool par) {
    if (__builtin_expect(t->trace != NULL, 0)) {
        tn_obj_visit_traced(obj, mark_later_slot, mk);
        return;
    }
    /* a fixed object's fields, or an array's fixed fields before its elements */
    const size_t *offs = t->ref_offsets;
    for (size_t i = 0, n = t->ref_count; i < n; i++)
        mark_later(mk, *(char **)(obj + offs[i]), par);
    if (t->kind == TN_TK_FIXED)
        return;
    TN_ASSERT_INTERNAL(t->kind == TN_TK_ARRAY);
    if (t->elem_ref_count)
        scan_array(mk, obj, t, 0, par);
}

/* Pop entries until the FIFO is full or the stack empty; continuations are scanned at once
 * (their array was read a moment ago, and its slots lie in a row). */
static inline __attribute__((always_inline)) void refill_fifo(marker *mk, bool par) {
    tn_vec *s = &mk->w->stack;
    uintptr_t *stack = s->data;
    while (mk->tail - mk->head < MARK_FIFO && s->count) {
        uintptr_t e = stack[--s->count];
        if (e & CONT_TAG) {
            char *arr = (char *)stack[--s->count];
            TN_ASSERT_INTERNAL(tn_in_range(mk->rt, arr) && tn_obj_type(arr)->kind == TN_TK_ARRAY &&
                               (e >> 1) < ((tenure_array_header *)arr)->length);
            scan_array(mk, arr, tn_obj_type(arr), (size_t)(e >> 1), par);
            continue;
        }
        __builtin_prefetch((char *)e);
        __builtin_prefetch((char *)e + MARK_PREFETCH_SPAN - 8);
        mk->fifo[mk->tail++ % MARK_FIFO] = (char *)e;
    }
}

/* ---- parallel marking (server GC): sharing work through the pool ----
 *
 * Each GC thread marks from its own stack. A thread that runs out of work waits in the pool
 * (steal_until_done) and says so (pool->hungry); a thread with at least two entries on its
 * stack, seeing that, gives the oldest half of them (the bottom: the roots of the largest
 * subgraphs left; at most a packet) to the pool (donate), where a waiting thread takes them.
 * Marking is over when every thread waits at once with no packet full: no thread holds work
 * and none is in the pool. The pool's lock is taken once per packet, never per object; a
 * thread that marks while nobody waits pays one load of `hungry` per object. */
static __attribute__((noinline)) void donate(marker *mk) {
    tn_mark_pool *p = mk->pool;
    tn_vec *s = &mk->w->stack;
    uintptr_t *e = s->data;
    pthread_mutex_lock(&p->mx);
    size_t n = s->count / 2 < p->packet_max ? s->count / 2 : p->packet_max;
    if (e[n] & CONT_TAG) /* an array stays with its continuation */
        n = n > 1 ? n - 1 : n + 1;
    if (p->nfree && p->idle > p->nfull && n < s->count) {
        uint32_t id = p->free_ids[--p->nfree];
        memcpy(p->entries + (size_t)id * TN_MARK_PACKET, e, n * sizeof *e);
        memmove(e, e + n, (s->count - n) * sizeof *e);
        s->count -= n;
        p->lens[id] = (uint32_t)n;
        p->full_ids[p->nfull] = id;
        __atomic_store_n(&p->nfull, p->nfull + 1, __ATOMIC_RELEASE);
        if (p->sleepers)
            pthread_cond_signal(&p->cv);
    }
    __atomic_store_n(&p->hungry, p->idle > p->nfull, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&p->mx);
}

static inline __attribute__((always_inline)) void maybe_donate(marker *mk, bool par) {
    if (par && mk->w->stack.count >= 2 && __atomic_load_n(&mk->pool->hungry, __ATOMIC_RELAXED))
        donate(mk);
}

/* Scan until the stack, the FIFO and the delay line are empty (overflowed objects wait for
 * process_overflow). `par` (other GC threads mark too) is a constant in each of drain_with's
 * two copies of this loop: marking alone pays nothing for the atomics and the sharing. */
static inline __attribute__((always_inline)) void drain_loop(marker *mk, bool par) {
    tn_mark_worker *w = mk->w;
    for (;;) {
        maybe_donate(mk, par);
        refill_fifo(mk, par);
        if (mk->head == mk->tail) {
            flush_edges(mk, par);
            if (!w->stack.count)
                return;
            continue;
        }
        char *obj = mk->fifo[mk->head++ % MARK_FIFO];
        const tn_type *t = tn_obj_type(obj);
        count_marked(mk, obj, tn_obj_size_t(t, obj), par);
        scan_object(mk, obj, t, par);
    }
}

static void drain_with(marker *mk) {
    if (mk->pool)
        drain_loop(mk, true);
    else
        drain_loop(mk, false);
}

/* A packet is full or marking is over (read without the pool's lock while spinning). */
static bool pool_has_news(const void *arg) {
    const tn_mark_pool *p = arg;
    return __atomic_load_n(&p->nfull, __ATOMIC_ACQUIRE) || __atomic_load_n(&p->done, __ATOMIC_ACQUIRE);
}

/* With p->mx held, counted idle: wait until a packet is full or marking is over. Spin
 * without the lock first (gc/team.h, "waiting inside a pause"), then sleep on p->cv. */
static void wait_for_packet(tenure_runtime *rt, tn_mark_pool *p) {
    if (rt->team.spin) {
        pthread_mutex_unlock(&p->mx);
        bool news = tn_gc_spin_until(pool_has_news, p);
        pthread_mutex_lock(&p->mx);
        if (news)
            return;
    }
    p->sleepers++;
    while (!p->nfull && !p->done)
        pthread_cond_wait(&p->cv, &p->mx);
    p->sleepers--;
}

/* Take packets from the pool and mark from them until marking is over (see above). */
static void steal_until_done(marker *mk) {
    tn_mark_pool *p = mk->pool;
    tn_vec *s = &mk->w->stack;
    pthread_mutex_lock(&p->mx);
    for (;;) {
        if (p->nfull) {
            __atomic_store_n(&p->nfull, p->nfull - 1, __ATOMIC_RELAXED);
            uint32_t id = p->full_ids[p->nfull];
            TN_ASSERT_INTERNAL(s->count == 0 && p->lens[id] <= s->cap);
            memcpy(s->data, p->entries + (size_t)id * TN_MARK_PACKET, p->lens[id] * sizeof(uintptr_t));
            s->count = p->lens[id];
            p->free_ids[p->nfree++] = id;
            __atomic_store_n(&p->hungry, p->idle > p->nfull, __ATOMIC_RELAXED);
            pthread_mutex_unlock(&p->mx);
            size_t before = mk->w->marked_bytes;
            drain_with(mk);
            mk->w->stolen_bytes += mk->w->marked_bytes - before;
            pthread_mutex_lock(&p->mx);
            continue;
        }
        if (p->done)
            break;
        if (p->idle + 1 == p->threads) {
            __atomic_store_n(&p->done, true, __ATOMIC_RELEASE);
            if (p->sleepers)
                pthread_cond_broadcast(&p->cv);
            break;
        }
        p->idle++;
        __atomic_store_n(&p->hungry, 1, __ATOMIC_RELAXED);
        wait_for_packet(mk->rt, p);
        p->idle--;
    }
    pthread_mutex_unlock(&p->mx);
}

/* Rescan marked objects in w's overflow range until no overflow is left (one thread). */
static void process_overflow(marker *mk) {
    tenure_runtime *rt = mk->rt;
    tn_mark_worker *w = mk->w;
    while (w->overflow) {
        char *lo = w->overflow_lo, *hi = w->overflow_hi;
        w->overflow = false;
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
                scan_object(mk, obj, tn_obj_type(obj), false);
                drain_with(mk);
            }
        }
    }
}

/* Drain thread 0's stack; alone, also recover from overflow (while other threads mark, the
 * overflow waits for the end of the parallel part: their bits change under a rescan). */
static void drain_all(marker *mk) {
    drain_with(mk);
    if (!mk->w->overflow || mk->pool)
        return;
    size_t before = mk->w->marked_bytes;
    process_overflow(mk);
    mk->rt->mark.overflow_marked += mk->w->marked_bytes - before;
    mk->rt->mark.overflow_seen = true;
}

/* Roots are traced depth first, one at a time, so that millions of roots do not overflow
 * the mark stack. (Pushing roots in batches and draining at half a stack, which lets the
 * FIFO prefetch across roots, was measured slower: the young objects found through cards
 * lie in allocation order, which a trace root by root follows.) Every root kind ends with
 * drain_all. The roots are visited on thread 0 (ctx: its marker). */
static void mark_root_slot(void **slot, void *ctx) {
    marker *mk = ctx;
    mark_ref(mk, *slot);
    if (mk->w->stack.count)
        drain_with(mk);
}

/* Pin and mark v; handle_id is the pinning handle (0 for a conservative stack root). */
static void pin_object(marker *mk, char *v, uint64_t handle_id) {
    tenure_runtime *rt = mk->rt;
    if (!in_condemned(rt, v, mk->condemned))
        return;
    size_t bit = tn_bit_index(rt, v);
    if (!in_condemned(rt, v, mk->pin_upto)) {
        mark_ref(mk, v);
        return;
    }
    if (!tn_bit_test(rt->pin_bits, bit)) {
        tn_bit_set(rt->pin_bits, bit);
        rt->mark.pinned_objects++;
        TN_EMIT(rt, PinObjectAtGCTime, .HandleID = handle_id, .ObjectID = (uint64_t)(uintptr_t)v,
                .ObjectSize = tn_obj_size(v), .TypeName = tn_obj_type(v)->name);
    }
    mark_ref(mk, v);
}

/* A pinned handle's slot is the handle itself (the object is its first field). */
static void pin_handle_slot(void **slot, void *ctx) { pin_object(ctx, *slot, (uint64_t)(uintptr_t)slot); }
static void pin_stack_word(void *obj, void *word, void *ctx) {
    (void)word;
    pin_object(ctx, obj, 0);
}

/* Alive after this GC: NULL is not, an object outside the condemned regions is, a condemned
 * one is if marked. Only once marking is done or on one thread (the bits do not change). */
static bool survives(tenure_runtime *rt, void *v) {
    if (!v)
        return false;
    return !in_condemned(rt, v, rt->collection->condemned) || tn_bit_test(rt->mark_bits, tn_bit_index(rt, v));
}

static void clear_weak(void **slot, void *ctx) {
    marker *mk = ctx;
    if (*slot && !survives(mk->rt, *slot))
        *slot = NULL;
}

#define KIND_BIT(k) (1u << (k))

static void mark_sized_ref(tn_handle_slot *h, void *ctx) {
    marker *mk = ctx;
    size_t before = mk->w->marked_bytes;
    if (h->object) {
        mark_root_slot(&h->object, mk);
        drain_all(mk);
    }
    h->sized_bytes = mk->w->marked_bytes - before;
}

/* AsyncPinned: the object, and each element of a reference array, are pinned. */
static void pin_async(tn_handle_slot *h, void *ctx) {
    marker *mk = ctx;
    if (!h->object)
        return;
    pin_object(mk, h->object, (uint64_t)(uintptr_t)h);
    tn_type *t = tn_obj_type(h->object);
    if (t->kind != TN_TK_ARRAY || t->trace || t->elem_ref_count != 1 || t->elem_size != sizeof(void *) ||
        t->elem_ref_offsets[0] != 0)
        return;
    void **e = (void **)((char *)h->object + t->size);
    for (size_t i = 0, n = tenure_array_length(h->object); i < n; i++)
        if (e[i])
            pin_object(mk, e[i], (uint64_t)(uintptr_t)h);
}

typedef struct dep_pass {
    marker *mk;
    bool changed;
} dep_pass;

static void mark_dependent(tn_handle_slot *h, void *ctx) {
    dep_pass *p = ctx;
    tenure_runtime *rt = p->mk->rt;
    if (!h->secondary || !survives(rt, h->object) || survives(rt, h->secondary))
        return;
    mark_root_slot(&h->secondary, p->mk);
    drain_all(p->mk);
    p->changed = true;
}

/* Ephemerons: a secondary lives if its primary does, which marking it may change for other
 * handles: repeat until nothing changes. */
static void mark_dependents(marker *mk) {
    dep_pass p = {mk, true};
    while (p.changed) {
        p.changed = false;
        tn_roots_visit_handle_slots(mk->rt, KIND_BIT(TENURE_HANDLE_DEPENDENT), mark_dependent, &p);
    }
}

static bool is_dead_now(tenure_runtime *rt, const void *v) { return !survives(rt, (void *)v); }

static void queue_for_finalization(tenure_runtime *rt, void **slot) {
    if (TN_PROF_ON(rt, TENURE_PROFILE_GC))
        tn_prof_finalizeable_queued(rt, *slot);
    mark_root_slot(slot, rt->mark.lead);
    drain_all(rt->mark.lead);
}

/* A dependent handle keeps its secondary exactly while its primary is alive: a primary that
 * died, or none at all, leaves neither. */
static void clear_dependent(tn_handle_slot *h, void *ctx) {
    marker *mk = ctx;
    if (!h->object || !survives(mk->rt, h->object))
        h->object = h->secondary = NULL;
}

/* GCMarkWithType for one root kind: the bytes thread 0 marked, overflow processing excluded
 * (other GC threads' bytes are their Steal). */
typedef struct kind_meter {
    size_t marked, overflow;
} kind_meter;

static kind_meter meter_start(const marker *mk) {
    return (kind_meter){mk->w->marked_bytes, mk->rt->mark.overflow_marked};
}

static size_t meter_bytes(const marker *mk, kind_meter m) {
    return (mk->w->marked_bytes - m.marked) - (mk->rt->mark.overflow_marked - m.overflow);
}

static void meter_end(const marker *mk, kind_meter m, uint32_t type) {
    TN_EMIT(mk->rt, GCMarkWithType, .HeapNum = 0, .Type = type, .Bytes = meter_bytes(mk, m));
}

/* Add the time since *since to the mark step's in the record (GCGlobalHeapHistory_V4's mark
 * times, gc/history.c), and start the next step's clock. */
static void mark_step_done(tn_collection *c, int step, uint64_t *since) {
    uint64_t now = tn_os_now_ns();
    c->record.mark_us[step] += (uint32_t)((now - *since) / 1000);
    *since = now;
}

static void reset_workers(tenure_runtime *rt, unsigned threads) {
    for (unsigned i = 0; i < threads; i++) {
        tn_mark_worker *w = &rt->mark.w[i];
        w->stack.count = 0; /* reserved before the pause (scratch.c): it never grows */
        w->overflow = false;
        w->marked_bytes = w->stolen_bytes = w->older_bytes = w->overflows = 0;
        memset(w->live_r, 0, sizeof w->live_r);
    }
    rt->mark.overflow_marked = 0;
    rt->mark.overflow_seen = false;
    rt->mark.pinned_objects = 0;
}

static void pool_start(tn_mark_pool *p, unsigned threads) {
    p->nfull = p->idle = 0;
    p->nfree = p->packets;
    for (unsigned i = 0; i < p->packets; i++)
        p->free_ids[i] = i;
    p->threads = threads;
    p->hungry = 0;
    p->sleepers = 0;
    p->done = false;
}

/* What a helper (GC thread 1..n-1) does first in a GC (gc/parts.c tn_gc_helper): wait for
 * the mark phase, take work from the pool until marking is over, then wait at the join after
 * marking (thread 0 releases it for the parts of the later phases, or at the GC's end). */
void tn_gc_mark_helper(tenure_runtime *rt, unsigned heap) {
    tn_gc_join(rt, heap, TN_JOIN_BEGIN_MARK_PHASE);
    marker mk;
    marker_init(&mk, rt, &rt->mark.w[heap]);
    mk.pool = &rt->mark.pool;
    if (mk.condemned < TN_GEN2) { /* its part of the card scan first (thread 0 scans the other roots) */
        tn_gc_mark_cards_part(rt, mk.condemned, heap, mk.pool->threads, mark_root_slot, &mk);
        drain_with(&mk);
        mk.w->older_bytes = mk.w->marked_bytes;
    }
    steal_until_done(&mk);
    flush_live(&mk);
    tn_gc_join(rt, heap, TN_JOIN_SCAN_DEPENDENT_HANDLES);
}

/* The parallel part begins: the helpers leave their first join with the pool ready. */
static void parallel_begin(marker *mk, unsigned threads) {
    pool_start(&mk->rt->mark.pool, threads);
    if (mk->condemned < TN_GEN2)
        tn_gc_mark_cards_start(mk->rt);
    tn_gc_join(mk->rt, 0, TN_JOIN_BEGIN_MARK_PHASE);
    tn_gc_restart(mk->rt);
    mk->pool = &mk->rt->mark.pool;
}

/* The parallel part ends: thread 0 joins the stealing until no thread has work, the helpers
 * have counted their bytes (the join), their overflow ranges become thread 0's, and each
 * GC thread's Steal bytes are written. */
static void parallel_end(marker *mk, unsigned threads) {
    tenure_runtime *rt = mk->rt;
    steal_until_done(mk);
    flush_live(mk);
    tn_gc_join(rt, 0, TN_JOIN_SCAN_DEPENDENT_HANDLES);
    mk->pool = NULL;
    if (mk->condemned < TN_GEN2)
        tn_gc_mark_cards_end(rt, threads);
    tn_mark_worker *w0 = mk->w;
    size_t stolen0 = w0->stolen_bytes;
    for (unsigned i = 1; i < threads; i++) {
        tn_mark_worker *w = &rt->mark.w[i];
        w0->marked_bytes += w->marked_bytes;
        w0->overflows += w->overflows;
        if (w->overflow) {
            if (!w0->overflow || w->overflow_lo < w0->overflow_lo)
                w0->overflow_lo = w->overflow_lo;
            if (!w0->overflow || w->overflow_hi > w0->overflow_hi)
                w0->overflow_hi = w->overflow_hi;
            w0->overflow = true;
        }
    }
    for (unsigned i = 1; i < threads && mk->condemned < TN_GEN2; i++) /* the helpers' card roots */
        TN_EMIT(rt, GCMarkWithType, .HeapNum = i, .Type = TN_ROOT_OLDER, .Bytes = rt->mark.w[i].older_bytes);
    for (unsigned i = 0; i < threads; i++)
        TN_EMIT(rt, GCMarkWithType, .HeapNum = i, .Type = TN_ROOT_STEAL,
                .Bytes = i ? rt->mark.w[i].marked_bytes - rt->mark.w[i].older_bytes : stolen0);
    drain_all(mk); /* the overflow of every thread, on this one */
}

/* BGC (a background GC's final pause, gc/background.h B1): the premarked bytes; the objects
 * the background marking left unscanned or deferred, and the premarked objects' slots under
 * the cards the mutators wrote since (watched), rescanned; the premarked objects' references
 * to gen0 and gen1, found under the dirty cards (H5). */
static void mark_bgc_rescans(marker *mk, tn_collection *c) {
    kind_meter m = meter_start(mk);
    mk->w->marked_bytes += c->bgc_premarked;
    tn_bgc_visit_rescans(mk->rt, mark_root_slot, mk);
    drain_all(mk);
    tn_gc_mark_old_card_roots(mk->rt, mark_root_slot, mk);
    drain_all(mk);
    meter_end(mk, m, TN_ROOT_BGC);
}

/* The roots that every GC thread's marking may share: stack, finalizer, handles, cards. */
static void mark_shared_roots(marker *mk, tn_collection *c) {
    tenure_runtime *rt = mk->rt;
    /* Stack: shadow frames, root areas, root scanners, frozen segments, and the stack itself
     * conservatively */
    kind_meter m = meter_start(mk);
    tn_roots_visit_stack(rt, mark_root_slot, mk);
    tn_roots_scan_conservative(rt, c->condemned, pin_stack_word, mk);
    drain_all(mk);
    meter_end(mk, m, TN_ROOT_STACK);
    if (c->bgc_final)
        mark_bgc_rescans(mk, c);
    /* Finalizer: objects waiting for their finalizer */
    if (tn_finalize_ready_count(rt)) {
        m = meter_start(mk);
        tn_finalize_visit_ready(rt, mark_root_slot, mk);
        drain_all(mk);
        meter_end(mk, m, TN_ROOT_FINALIZER);
    }
    /* Handle: pinned handles pin, strong handles keep alive */
    m = meter_start(mk);
    tn_roots_visit_handles(rt, KIND_BIT(TENURE_HANDLE_PINNED), pin_handle_slot, mk);
    tn_roots_visit_handle_slots(rt, KIND_BIT(TENURE_HANDLE_ASYNC_PINNED), pin_async, mk);
    tn_roots_visit_handles(rt, KIND_BIT(TENURE_HANDLE_STRONG) | KIND_BIT(TENURE_HANDLE_SIZED_REF), mark_root_slot, mk);
    drain_all(mk);
    meter_end(mk, m, TN_ROOT_HANDLE);
    /* Older: old-to-young references under dirty cards */
    if (c->condemned < TN_GEN2) {
        m = meter_start(mk);
        if (mk->pool) /* server GC: this thread's part; the helpers take theirs */
            tn_gc_mark_cards_part(rt, c->condemned, 0, mk->pool->threads, mark_root_slot, mk);
        else
            tn_gc_mark_cards(rt, c->condemned, mark_root_slot, mk); /* cards.c */
        drain_all(mk);
        meter_end(mk, m, TN_ROOT_OLDER);
    }
}

/* Finalization (NewFQ): unreachable finalizable objects go to the ready queue and are marked
 * through; resurrection may revive dependent handles' primaries. */
static void mark_finalizable(marker *mk, tn_collection *c) {
    tenure_runtime *rt = mk->rt;
    kind_meter m = meter_start(mk);
    size_t n = tn_finalize_scan(rt, is_dead_now, queue_for_finalization);
    c->record.finalization_promoted_count = n;
    c->record.finalization_promoted_bytes = meter_bytes(mk, m);
    meter_end(mk, m, TN_ROOT_NEW_FQ);
    if (n && tn_handle_count(rt)) { /* DependentHandle again */
        m = meter_start(mk);
        mark_dependents(mk);
        meter_end(mk, m, TN_ROOT_DEPENDENT_HANDLE);
    }
}

void tn_gc_mark(tenure_runtime *rt, tn_collection *c) {
    tn_assert_phase(rt, c);
    uint64_t step_from = tn_os_now_ns();
    unsigned threads = c->gc_threads;
    reset_workers(rt, threads);
    marker mk;
    marker_init(&mk, rt, &rt->mark.w[0]);
    rt->mark.lead = &mk;

    tn_handles_prepare(rt);
    if (c->bgc_final) /* the premarks become marks before anything is marked (counted once: M2) */
        c->bgc_premarked = tn_bgc_take_premarks(rt);
    /* SizedRef (full GCs): each handle's graph first, one handle after the other (on thread
     * 0 alone: each handle's bytes are what its graph adds) */
    kind_meter m;
    if (c->condemned == TN_GEN2 && tn_handle_count(rt)) {
        m = meter_start(&mk);
        tn_roots_visit_handle_slots(rt, KIND_BIT(TENURE_HANDLE_SIZED_REF), mark_sized_ref, &mk);
        meter_end(&mk, m, TN_ROOT_SIZEDREF);
    }
    mark_step_done(c, TN_MARK_SIZEDREF, &step_from);
    if (threads > 1)
        parallel_begin(&mk, threads);
    mark_shared_roots(&mk, c);
    if (threads > 1)
        parallel_end(&mk, threads);
    /* DependentHandle: secondaries of live primaries, to a fixed point */
    if (tn_handle_count(rt)) {
        m = meter_start(&mk);
        mark_dependents(&mk);
        meter_end(&mk, m, TN_ROOT_DEPENDENT_HANDLE);
    }
    /* short weak handles of dead objects are cleared before finalization is scanned, long
     * ones after it (they track resurrection); dependent handles whose primary died lose both
     * objects */
    mark_step_done(c, TN_MARK_ROOTS, &step_from);
    tn_roots_visit_handles(rt, KIND_BIT(TENURE_HANDLE_WEAK_SHORT), clear_weak, &mk);
    mark_step_done(c, TN_MARK_SHORT_WEAK, &step_from);
    if (tn_finalize_registered_count(rt))
        mark_finalizable(&mk, c);
    mark_step_done(c, TN_MARK_FINALIZATION, &step_from);
    tn_roots_visit_handles(rt, KIND_BIT(TENURE_HANDLE_WEAK_LONG), clear_weak, &mk);
    tn_roots_visit_handle_slots(rt, KIND_BIT(TENURE_HANDLE_DEPENDENT), clear_dependent, &mk);
    mark_step_done(c, TN_MARK_LONG_WEAK, &step_from);
    flush_live(&mk);
    rt->stats.mark_stack_overflows += mk.w->overflows;
    rt->mark.lead = NULL;
    if (rt->mark.overflow_seen)
        TN_EMIT(rt, GCMarkWithType, .HeapNum = 0, .Type = TN_ROOT_OVERFLOW, .Bytes = rt->mark.overflow_marked);
}

/* A background GC's final pause, once it counts as a gen0 GC (tn_bgc_final_marked): the card
 * scan of a gen0 GC's marking, for relocation's card slots and the cards' new values (H7).
 * It marks nothing: every gen0 object that a live older one refers to was marked (from the
 * roots, the rescans and the card roots, B1), and the scan skips the objects found dead (H8).
 * No GCMarkWithType (root kind Older is an ephemeral GC's, and its place in the order is gone). */
void tn_gc_mark_older_cards(tenure_runtime *rt, tn_collection *c) {
    tn_assert_phase(rt, c);
    TN_ASSERT_INTERNAL(c->bgc_final && c->condemned == TN_GEN0);
    marker mk;
    marker_init(&mk, rt, &rt->mark.w[0]);
    size_t before = mk.w->marked_bytes;
    tn_gc_mark_cards(rt, c->condemned, mark_root_slot, &mk);
    drain_all(&mk);
    TN_ASSERT_INTERNAL(mk.w->marked_bytes == before);
}

/* ---- consistency check (base/assert.h) ---- */

/* The mark stack holds pointers into the heap's range and array continuations (an index,
 * tagged, on top of the array it continues, which is no further than its length), no more
 * than it has room for (it is reserved before the pause and never grows inside it). */
static void stack_check(const tenure_runtime *rt, const tn_vec *s) {
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

void tn_mark_stack_check(const tenure_runtime *rt) {
    for (unsigned i = 0; i < TN_MAX_GC_THREADS; i++)
        stack_check(rt, &rt->mark.w[i].stack);
}

/* ---- the pool's memory (scratch.c, before the pause) ---- */

bool tn_mark_pool_reserve(tenure_runtime *rt, unsigned threads) {
    tn_mark_pool *p = &rt->mark.pool;
    unsigned want = 4 * threads;
    if (!p->ready) {
        pthread_mutex_init(&p->mx, NULL);
        pthread_cond_init(&p->cv, NULL);
        p->ready = true;
    }
    if (p->packets < want) {
        uintptr_t *entries = tn_malloc((size_t)want * TN_MARK_PACKET * sizeof *entries);
        uint32_t *ids = tn_malloc((size_t)want * 3 * sizeof *ids);
        if (!entries || !ids) {
            free(entries);
            free(ids);
            return false;
        }
        free(p->entries);
        free(p->lens);
        p->entries = entries;
        p->lens = ids;
        p->free_ids = ids + want;
        p->full_ids = ids + 2 * want;
        p->packets = want;
    }
    size_t least = TN_MARK_PACKET;
    for (unsigned i = 0; i < threads; i++)
        if (rt->mark.w[i].stack.cap < least)
            least = rt->mark.w[i].stack.cap;
    p->packet_max = least;
    return least >= 2;
}

void tn_mark_pool_destroy(tenure_runtime *rt) {
    tn_mark_pool *p = &rt->mark.pool;
    free(p->entries);
    free(p->lens);
    if (p->ready) {
        pthread_mutex_destroy(&p->mx);
        pthread_cond_destroy(&p->cv);
    }
    memset(p, 0, sizeof *p);
}
