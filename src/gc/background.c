/* background.c - background GC: the BGC's bitmap, stack and write watch, its thread and its
 * slices of concurrent marking, and the hand-over to the final pause (gc/background.h,
 * docs/design/collector.md "Background GC"). The pauses themselves are collect.c's.
 */
#include "gc/gc_internal.h"
#include "heap/crossing.h"

#include <sched.h>

/* A slice of concurrent marking holds the instance lock this long at most: an allocation slow
 * path that waits for the lock waits no longer. */
#define TN_BGC_SLICE_NS ((uint64_t)1000000)
/* While a BGC runs, gen1 collects at this budget at most: its final pause marks every live
 * young object, and a foreground gen1 GC copies what gen1 holds; a smaller gen1 keeps both
 * short (the default gen1 budget grows to half the old generation, up to 128 MiB). */
#define TN_BGC_GEN1_LIMIT ((size_t)16 << 20)
/* Stack entries reserved before the initial pause: roots beyond it are left to the final pause. */
#define TN_BGC_ROOT_RESERVE ((size_t)1 << 16)

static size_t bits_bytes(const tenure_runtime *rt) { return rt->range / 64; }
static size_t watch_bytes(const tenure_runtime *rt) { return rt->range / TN_CARD_SIZE; }

bool tn_bgc_marking(const tenure_runtime *rt) { return rt->bgc.state == TN_BGC_MARKING; }
bool tn_bgc_in_progress(const tenure_runtime *rt) { return rt->bgc.state != TN_BGC_IDLE; }

/* An old object (gen2, LOH, POH) of the heap: the only ones the BGC premarks (B1). */
static inline bool in_old_region(const tenure_runtime *rt, const void *v) {
    uintptr_t off = (uintptr_t)v - (uintptr_t)rt->base;
    return off < rt->range && rt->unit_gen[off >> rt->head.unit_shift] >= TN_GEN2;
}

static inline tn_region *region_of_object(const tenure_runtime *rt, const void *v) {
    return &rt->regions[rt->unit_head[tn_unit_of(rt, v)]];
}

/* No room to remember a premarked object (out of memory): it is unmarked again, and the final
 * pause marks it if it is reachable (B1 holds either way). */
static void unpremark(tenure_runtime *rt, void *v) {
    size_t bit = tn_bit_index(rt, v), size = tn_obj_size(v);
    rt->bgc.bits[bit >> 6] &= ~((uint64_t)1 << (bit & 63));
    region_of_object(rt, v)->bgc_live -= size;
    rt->bgc.premarked -= size;
}

/* Set v's premark and count its bytes if it is an old object not premarked yet; true if so
 * (unpremark undoes it). */
static bool premark_bit(tenure_runtime *rt, void *v) {
    if (!in_old_region(rt, v))
        return false;
    size_t bit = tn_bit_index(rt, v);
    if (tn_bit_test(rt->bgc.bits, bit))
        return false;
    tn_bit_set(rt->bgc.bits, bit);
    size_t size = tn_obj_size(v);
    region_of_object(rt, v)->bgc_live += size;
    rt->bgc.premarked += size;
    return true;
}

/* Premark v if it is an old object not premarked yet: its bit, its bytes, the stack. */
static void premark(tenure_runtime *rt, void *v) {
    if (!premark_bit(rt, v))
        return;
    /* in the initial pause, only what was reserved before it (nothing is allocated in a pause) */
    void **top = tn_gc_in_progress(rt) ? tn_vec_push_reserved(&rt->bgc.stack) : tn_vec_push(&rt->bgc.stack);
    if (top)
        *top = v;
    else
        unpremark(rt, v);
}

static void premark_slot(void **slot, void *ctx) { premark(ctx, *slot); }
static void premark_word(void *obj, void *word, void *ctx) {
    (void)word;
    premark(ctx, obj);
}

/* A premarked object the final pause scans again (B1): out of memory to remember it, it is
 * unmarked instead. */
static void defer(tenure_runtime *rt, char *o) {
    void **e = tn_vec_push(&rt->bgc.deferred);
    if (e)
        *e = o;
    else
        unpremark(rt, o);
}

/* A slot read beside the mutators, atomically (the barrier stores atomically too): its old
 * target premarked. A young target is not: the BGC does not mark young objects; the final
 * pause finds the slot under its dirty card (H5) and marks through it (B1). */
static inline void premark_read(tenure_runtime *rt, void **slot) {
    void *v = __atomic_load_n(slot, __ATOMIC_RELAXED);
    if (in_old_region(rt, v))
        premark(rt, v);
}

/* A slot a trace callback passed beside the mutators (TENURE_TYPE_CONCURRENT_TRACE): the
 * callback may have chosen it from a field being written (a tag), so the value is premarked
 * only if it is the start of an old object; a young one is left to the final pause's card
 * scan (as premark_read's), anything else in the heap's range (doubtful) has the holder
 * scanned again in the final pause. */
typedef struct concurrent_trace {
    tenure_runtime *rt;
    bool again;
} concurrent_trace;

static void visit_concurrent(void **slot, void *ctx) {
    concurrent_trace *ct = ctx;
    tenure_runtime *rt = ct->rt;
    char *v = __atomic_load_n(slot, __ATOMIC_RELAXED);
    if ((uintptr_t)v - (uintptr_t)rt->base >= rt->range)
        return; /* NULL, a frozen object, or not a reference at all */
    tn_region *r = region_of_object(rt, v);
    bool object = in_old_region(rt, v) && ((uintptr_t)v & 7) == 0 && v < tn_region_walk_end(rt, r) &&
                  tn_crossing_object_start(rt, r, v) == v && !tn_is_free(v);
    if (object)
        premark(rt, v);
    else if (in_old_region(rt, v))
        ct->again = true;
}

/* Scan a premarked object while the mutators run: each reference slot read once (B1). A type
 * with a trace callback is deferred to the final pause (the callback may read fields the
 * mutators are writing, a tag and its value, and is not written for that) unless its type
 * says the callback may run beside the mutators. */
static void scan_concurrent(tenure_runtime *rt, char *o) {
    const tn_type *t = tn_obj_type(o);
    if (t->trace) {
        concurrent_trace ct = {rt, false};
        if (t->flags & TENURE_TYPE_CONCURRENT_TRACE)
            tn_obj_visit_traced(o, visit_concurrent, &ct);
        if (!(t->flags & TENURE_TYPE_CONCURRENT_TRACE) || ct.again)
            defer(rt, o);
        return;
    }
    for (size_t i = 0; i < t->ref_count; i++)
        premark_read(rt, (void **)(o + t->ref_offsets[i]));
    if (t->kind == TN_TK_ARRAY && t->elem_ref_count) {
        size_t n = ((const tenure_array_header *)o)->length;
        char *e = o + t->size;
        for (size_t i = 0; i < n; i++, e += t->elem_size)
            for (size_t j = 0; j < t->elem_ref_count; j++)
                premark_read(rt, (void **)(e + t->elem_ref_offsets[j]));
    }
}

/* ---- the write watch (the barrier's slow path while a BGC marks) ---- */

void tn_bgc_watch(tenure_runtime *rt, void *slot) {
    if (!in_old_region(rt, slot))
        return;
    size_t card = ((uintptr_t)slot - (uintptr_t)rt->base) >> TENURE__CARD_SHIFT;
    /* release: a revisit that takes this byte (an exchange, acquire) reads the slot's new value */
    __atomic_store_n(&rt->bgc.watch[card], 1, __ATOMIC_RELEASE);
}

/* ---- the thread ---- */

/* ---- objects promoted while it marks (allocated black) ---- */

void tn_bgc_reserve(tenure_runtime *rt) {
    if (rt->bgc.state != TN_BGC_MARKING)
        return;
    size_t regions = tn_heap_count(rt) + 1; /* a tail per heap, and a spare */
    for (tn_region *r = tn_heap_regions(rt, TN_GEN1); r; r = r->next)
        regions++;
    tn_vec_reserve(&rt->bgc.grey, rt->bgc.grey.count + regions);
}

void tn_bgc_promoted(tenure_runtime *rt, char *from, char *to) {
    tn_assert_world_stopped(rt);
    TN_ASSERT(rt->bgc.state == TN_BGC_MARKING);
    if (from >= to)
        return;
    tn_bgc_range *g = tn_vec_push_reserved(&rt->bgc.grey);
    if (!g) {
        rt->bgc.grey_lost = true;
        return;
    }
    g->from = from;
    g->to = to;
}

/* A new large object is black without a scan: its slots are all NULL now, and every store
 * into them goes through the barrier, whose write watch covers its units (gen2's), so the
 * revisits or the final pause read what gets stored. (Pushing it to be scanned instead let a
 * program that allocates large arrays fast keep the BGC's stack from ever emptying.) A type
 * with a trace callback may read fields that no barrier sees: deferred to the final pause, as
 * the BGC thread defers such objects. */
void tn_bgc_allocated_large(tenure_runtime *rt, void *obj) {
    tn_assert_locked(rt);
    if (rt->bgc.state != TN_BGC_MARKING || tn_gc_in_progress(rt))
        return;
    bool premarked = premark_bit(rt, obj);
    TN_ASSERT_INTERNAL(premarked); /* (a new large object: old, not premarked yet) */
    if (premarked && tn_obj_type(obj)->trace)
        defer(rt, obj); /* (out of memory: left white, the final pause traces it) */
}

/* Premark the objects of the last grey range, up to `budget` of them; false when none is left. */
static bool premark_grey(tenure_runtime *rt, size_t budget) {
    tn_vec *gl = &rt->bgc.grey;
    if (!gl->count)
        return false;
    tn_bgc_range *g = tn_vec_at(gl, gl->count - 1);
    char *o = g->from;
    for (; o < g->to && budget; o += tn_obj_size(o), budget--)
        if (!tn_is_free(o))
            premark(rt, o);
    g->from = o;
    if (o >= g->to)
        gl->count--;
    return true;
}

static void mark_slice(tenure_runtime *rt) {
    uint64_t until = tn_os_now_ns() + TN_BGC_SLICE_NS;
    tn_vec *s = &rt->bgc.stack;
    for (size_t n = 1; s->count || premark_grey(rt, 256); n++) {
        if (s->count)
            scan_concurrent(rt, ((char **)s->data)[--s->count]);
        if (n % 256 == 0 && tn_os_now_ns() >= until)
            break;
    }
    rt->bgc.slices++;
}

/* The thread marks while there is something to mark; the final pause is not its: it comes
 * at the next GC a mutator triggers (tn_bgc_marked), so that a program sees its objects move
 * or die only where tenure.h says a GC may happen (an allocation, a safepoint, a wait for the
 * instance lock in a program with several attached threads), as without background GC. */
static bool sweep_slice(tenure_runtime *rt);
static void end_bgc(tenure_runtime *rt);
static bool revisits_done(const tenure_runtime *rt);
static void revisit_slice(tenure_runtime *rt);

static bool has_work(const tenure_runtime *rt) {
    return (rt->bgc.state == TN_BGC_MARKING && (rt->bgc.stack.count || rt->bgc.grey.count || !revisits_done(rt))) ||
           (rt->bgc.state == TN_BGC_SWEEPING && !rt->bgc.finish_pending);
}

static void *bgc_main(void *arg) {
    tenure_runtime *rt = arg;
    tn_lock(rt);
    while (!rt->bgc.stop) {
        if (!has_work(rt)) {
            tn_wait_safe(rt, &rt->bgc.cv);
            continue;
        }
        if (rt->bgc.state == TN_BGC_MARKING && (rt->bgc.stack.count || rt->bgc.grey.count))
            mark_slice(rt);
        else if (rt->bgc.state == TN_BGC_MARKING)
            revisit_slice(rt);
        else if (sweep_slice(rt))
            end_bgc(rt);
        tn_unlock(rt); /* the mutators' slow paths and foreground GCs take it meanwhile */
        sched_yield();
        tn_lock(rt);
    }
    tn_unlock(rt);
    return NULL;
}

bool tn_bgc_marked(const tenure_runtime *rt) {
    return rt->bgc.state == TN_BGC_MARKING &&
           ((rt->bgc.stack.count == 0 && rt->bgc.grey.count == 0 && revisits_done(rt)) || rt->bgc.finish_pending);
}

static bool start_thread(tenure_runtime *rt) {
    if (rt->bgc.thread_started)
        return true;
    if (rt->bgc.forked_no_thread)
        return false;
    if (!rt->bgc.cv_ready) {
        pthread_cond_init(&rt->bgc.cv, NULL);
        rt->bgc.cv_ready = true;
    }
    if (pthread_create(&rt->bgc.thread, NULL, bgc_main, rt) != 0)
        return false;
    rt->bgc.thread_started = true;
    rt->bgc.announce_thread = true;
    return true;
}

/* ---- a BGC's life ---- */

bool tn_bgc_prepare(tenure_runtime *rt) {
    tn_assert_locked(rt);
    if (rt->bgc.state != TN_BGC_IDLE)
        return false;
    if (!rt->bgc.bits) {
        rt->bgc.bits = tn_os_reserve_lazy(bits_bytes(rt));
        rt->bgc.watch = tn_os_reserve_lazy(watch_bytes(rt));
        tn_vec_init(&rt->bgc.stack, sizeof(void *));
        tn_vec_init(&rt->bgc.deferred, sizeof(void *));
        tn_vec_init(&rt->bgc.grey, sizeof(tn_bgc_range));
        if (!rt->bgc.bits || !rt->bgc.watch)
            return false;
    }
    if (!tn_vec_reserve(&rt->bgc.stack, TN_BGC_ROOT_RESERVE))
        return false;
    return start_thread(rt);
}

/* Young objects: their old targets are premarked (right after the gen1 GC that precedes the
 * initial pause, the young generations hold little). */
static void premark_from_young(tenure_runtime *rt) {
    for (int g = TN_GEN0; g <= TN_GEN1; g++)
        for (tn_region *r = tn_heap_regions(rt, g); r; r = r->next) {
            char *end = tn_region_walk_end(rt, r);
            for (char *o = r->start; o < end; o += tn_obj_size(o))
                if (!tn_is_free(o))
                    tn_obj_visit_slots(rt, o, premark_slot, rt);
        }
}

#define KIND_BIT(k) (1u << (k))

void tn_bgc_begin(tenure_runtime *rt, uint64_t index, uint32_t reason) {
    tn_assert_world_stopped(rt);
    TN_ASSERT(rt->bgc.state == TN_BGC_IDLE && rt->bgc.stack.count == 0 && rt->bgc.deferred.count == 0 &&
              rt->bgc.grey.count == 0);
    if (rt->bgc.announce_thread) {
        TN_EMIT(rt, GCCreateConcurrentThread_V1, .ClrInstanceID = 0);
        rt->bgc.announce_thread = false;
    }
    rt->bgc.index = index;
    rt->bgc.reason = reason;
    rt->bgc.premarked = 0;
    rt->bgc.revisit_passes = 0;
    rt->bgc.revisit_cursor = 0;
    rt->bgc.revisit_found = 0;
    tn_roots_visit_stack(rt, premark_slot, rt);
    tn_roots_scan_conservative(rt, TN_SCAN_ALL, premark_word, rt);
    tn_finalize_visit_ready(rt, premark_slot, rt);
    tn_roots_visit_handles(rt,
                           KIND_BIT(TENURE_HANDLE_STRONG) | KIND_BIT(TENURE_HANDLE_PINNED) |
                               KIND_BIT(TENURE_HANDLE_ASYNC_PINNED) | KIND_BIT(TENURE_HANDLE_SIZED_REF),
                           premark_slot, rt);
    premark_from_young(rt);
    rt->bgc.state = TN_BGC_MARKING;
    rt->head.barrier_slow |= TN_BARRIER_BGC;
    tn_heap_limit_gen1(rt, TN_BGC_GEN1_LIMIT);
    if (rt->bgc.thread_started)
        pthread_cond_signal(&rt->bgc.cv);
}

static void swap_bitmaps(tenure_runtime *rt) {
    uint64_t *t = rt->mark_bits;
    rt->mark_bits = rt->bgc.bits;
    rt->bgc.bits = t;
}

/* The final pause's first step (mark.c): the premarks become marks. mark_bits is zero (H4)
 * and the BGC's bits are set only in old regions (B1): swapping the two bitmaps is the merge,
 * whatever the heap's size. Each old region's premarked bytes become live bytes. Returns the
 * bytes premarked. */
size_t tn_bgc_take_premarks(tenure_runtime *rt) {
    tn_assert_world_stopped(rt);
    TN_ASSERT(rt->bgc.state == TN_BGC_MARKING);
    swap_bitmaps(rt);
    size_t merged = 0;
    for (int g = TN_GEN2; g < TN_NGEN; g++)
        for (tn_region *r = tn_heap_regions(rt, g); r; r = r->next) {
            r->live_bytes += r->bgc_live;
            merged += r->bgc_live;
            r->bgc_live = 0;
        }
    TN_ASSERT_INTERNAL(merged == rt->bgc.premarked);
    return merged;
}

/* ---- watched cards ---- */

static inline char *card_start(const tenure_runtime *rt, size_t c) { return rt->base + (c << TENURE__CARD_SHIFT); }

/* fn on each slot of o that lies in [lo, hi) (a watched card's part of o: a write under the
 * card wrote there). A type with a trace callback: every slot it passes in the range. */
typedef struct within {
    char *lo, *hi;
    tn_slot_fn fn;
    void *ctx;
} within;

static void slot_if_within(void **slot, void *c) {
    within *w = c;
    if ((char *)slot >= w->lo && (char *)slot < w->hi)
        w->fn(slot, w->ctx);
}

static void visit_slots_within(tenure_runtime *rt, char *o, char *lo, char *hi, tn_slot_fn fn, void *ctx) {
    const tn_type *t = tn_obj_type(o);
    within w = {lo, hi, fn, ctx};
    if (t->trace || t->kind != TN_TK_ARRAY || !t->elem_ref_count) {
        tn_obj_visit_slots(rt, o, slot_if_within, &w);
        return;
    }
    for (size_t i = 0; i < t->ref_count; i++) /* an array's fixed fields, then its elements in range */
        slot_if_within((void **)(o + t->ref_offsets[i]), &w);
    char *data = o + t->size;
    size_t n = ((const tenure_array_header *)o)->length;
    size_t first = lo > data ? (size_t)(lo - data) / t->elem_size : 0;
    size_t last = hi > data ? ((size_t)(hi - data) + t->elem_size - 1) / t->elem_size : 0;
    for (size_t i = first; i < last && i < n; i++)
        for (size_t j = 0; j < t->elem_ref_count; j++)
            slot_if_within((void **)(data + i * t->elem_size + t->elem_ref_offsets[j]), &w);
}

/* The objects under card c of r that are set in marks (the premarked ones): fn on each of
 * their slots under the card (or `traced` on the whole object, when given, for a type with a
 * trace callback). */
static void visit_watched_card(tenure_runtime *rt, const uint64_t *marks, tn_region *r, size_t c, tn_slot_fn fn,
                               void *ctx, void (*traced)(tenure_runtime *, char *)) {
    char *end = tn_region_walk_end(rt, r), *lo = card_start(rt, c), *hi = lo + TN_CARD_SIZE;
    if (lo >= end)
        return;
    for (char *o = tn_crossing_object_start(rt, r, lo); o < hi && o < end; o += tn_obj_size(o)) {
        if (tn_is_free(o) || !tn_bit_test_relaxed(marks, tn_bit_index(rt, o))) /* (server GC's helpers mark) */
            continue;
        if (traced && tn_obj_type(o)->trace)
            traced(rt, o);
        else
            visit_slots_within(rt, o, lo, hi, fn, ctx);
    }
}

/* The cards of old region r, [c0, c1). */
static void region_cards(const tenure_runtime *rt, const tn_region *r, size_t *c0, size_t *c1) {
    *c0 = ((uintptr_t)r->start - (uintptr_t)rt->base) >> TENURE__CARD_SHIFT;
    *c1 = ((uintptr_t)r->end - (uintptr_t)rt->base) >> TENURE__CARD_SHIFT;
}

/* ---- revisiting watched cards beside the mutators (before the final pause) ----
 *
 * Once the stack is empty, the BGC thread takes the watched cards itself, as the .NET
 * collector revisits written pages concurrently, so that the final pause finds few: each
 * watched card is cleared (an exchange: a write after it sets the card again, B1), then the
 * premarked objects' slots under it are read once and their old targets premarked (the trace
 * types are deferred). A pass over the heap's cards; another if the pass found many. */
#define TN_BGC_REVISIT_PASSES 3
#define TN_BGC_REVISIT_FEW 64 /* cards: a pass that found no more ends the revisits */

static void premark_slot_read(void **slot, void *ctx) { premark_read(ctx, slot); }
static void defer_traced(tenure_runtime *rt, char *o) { defer(rt, o); }

static bool revisits_done(const tenure_runtime *rt) { return rt->bgc.revisit_passes >= TN_BGC_REVISIT_PASSES; }

/* One slice of the revisits: cards from the cursor on, until TN_BGC_SLICE_NS passed. */
static void revisit_slice(tenure_runtime *rt) {
    uint64_t until = tn_os_now_ns() + TN_BGC_SLICE_NS;
    size_t cards = ((size_t)rt->units_high << rt->head.unit_shift) >> TENURE__CARD_SHIFT;
    size_t c = rt->bgc.revisit_cursor, n = 0;
    while (c < cards) {
        if (c % 8 == 0 && c + 8 <= cards) { /* eight clean cards at a time (the mutators set bytes) */
            uint64_t w = __atomic_load_n((const uint64_t *)(const void *)(rt->bgc.watch + c), __ATOMIC_RELAXED);
            if (!w) {
                c += 8;
                continue;
            }
        }
        if (__atomic_load_n(&rt->bgc.watch[c], __ATOMIC_RELAXED) &&
            __atomic_exchange_n(&rt->bgc.watch[c], 0, __ATOMIC_ACQ_REL)) {
            tn_region *r = region_of_object(rt, card_start(rt, c));
            visit_watched_card(rt, rt->bgc.bits, r, c, premark_slot_read, rt, defer_traced);
            rt->bgc.revisit_found++;
        }
        c++;
        if (++n % 1024 == 0 && tn_os_now_ns() >= until)
            break;
    }
    rt->bgc.revisit_cursor = c;
    if (c < cards)
        return;
    rt->bgc.revisit_passes++; /* a pass done */
    if (rt->bgc.revisit_found <= TN_BGC_REVISIT_FEW)
        rt->bgc.revisit_passes = TN_BGC_REVISIT_PASSES;
    rt->bgc.revisit_cursor = 0;
    rt->bgc.revisit_found = 0;
}

/* ---- the final pause's rescans ---- */

/* Every premarked object's slots (the grey list overflowed: objects promoted meanwhile may
 * be referenced only from premarked objects already scanned, behind clean cards). */
static void rescan_all_premarked(tenure_runtime *rt, tn_slot_fn fn, void *ctx) {
    for (int g = TN_GEN2; g < TN_NGEN; g++)
        for (tn_region *r = tn_heap_regions(rt, g); r; r = r->next)
            for (char *o = r->start, *end = tn_region_walk_end(rt, r); o < end; o += tn_obj_size(o))
                if (!tn_is_free(o) && tn_bit_test_relaxed(rt->mark_bits, tn_bit_index(rt, o)))
                    tn_obj_visit_slots(rt, o, fn, ctx);
}

void tn_bgc_visit_rescans(tenure_runtime *rt, tn_slot_fn fn, void *ctx) {
    tn_assert_world_stopped(rt);
    if (rt->bgc.grey_lost) {
        rt->bgc.grey_lost = false;
        rescan_all_premarked(rt, fn, ctx);
    }
    tn_vec *lists[2] = {&rt->bgc.stack, &rt->bgc.deferred};
    for (int l = 0; l < 2; l++) {
        for (size_t i = 0; i < lists[l]->count; i++)
            tn_obj_visit_slots(rt, ((char **)lists[l]->data)[i], fn, ctx);
        lists[l]->count = 0;
    }
    for (int g = TN_GEN2; g < TN_NGEN; g++)
        for (tn_region *r = tn_heap_regions(rt, g); r; r = r->next) {
            size_t c0, c1;
            region_cards(rt, r, &c0, &c1);
            for (size_t c = c0; c < c1; c++) {
                if (!rt->bgc.watch[c])
                    continue;
                rt->bgc.watch[c] = 0;
                rt->bgc.rescanned_cards++;
                visit_watched_card(rt, rt->mark_bits, r, c, fn, ctx, NULL); /* (premarks swapped in) */
            }
        }
}

/* ---- the final pause's hand-over to the sweep ---- */

/* B4: no card is watched once the final mark's rescans are done (they clear every watched
 * card of every old region, and only old regions' cards are ever watched). */
static void watch_check_clear(const tenure_runtime *rt) {
    if (!TN_DEBUG_ASSERTS)
        return;
    for (int g = TN_GEN2; g < TN_NGEN; g++)
        for (const tn_region *r = tn_heap_regions(rt, g); r; r = r->next) {
            size_t c0, c1;
            region_cards(rt, r, &c0, &c1);
            for (size_t c = c0; c < c1; c++)
                TN_ASSERT_INTERNAL(rt->bgc.watch[c] == 0);
        }
}

/* Marking done: every region of gen1 and older is unswept up to its used end (H8), its marks
 * in mark_bits until the pause ends; the rest of the pause is a gen0 GC's (collect.c): a gen1
 * GC would cost what gen1 holds, and gen1's dead objects are as safe unswept as gen2's. */
void tn_bgc_final_marked(tenure_runtime *rt, tn_collection *c) {
    tn_assert_phase(rt, c);
    TN_ASSERT(c->bgc_final && c->condemned == TN_GEN2);
    c->condemned = TN_GEN0;
    rt->unswept_marks = rt->mark_bits; /* H8 from now on (not while marking: an unmarked object
                                          was not dead yet, and the conservative scan skips H8's) */
    for (int g = TN_GEN1; g < TN_NGEN; g++) {
        size_t live = 0;
        for (tn_region *r = tn_heap_regions(rt, g); r; r = r->next) {
            r->condemned = false;
            TN_ASSERT_INTERNAL(!r->unswept_end);
            r->unswept_end = r->used;
            live += r->live_bytes;
            c->record.heaps[r->heap].promoted[g] += r->live_bytes;
        }
        c->record.promoted[g] = live;
    }
}

/* A GC condemns r, unswept (H8): its own marking decides now, and its objects may move; r's
 * final-mark bits go, the BGC's sweep does not visit it (promote.c, before r is promoted). */
void tn_bgc_forget_unswept(tenure_runtime *rt, tn_region *r) {
    if (!r->unswept_end)
        return;
    char *top = r->start + tn_align_up((size_t)(r->unswept_end - r->start), 64 * 8);
    tn_bits_clear(rt->bgc.bits, tn_bit_index(rt, r->start), tn_bit_index(rt, top < r->end ? top : r->end));
    r->unswept_end = NULL;
}

/* Gen0 collected, before the pause's report: the other regions' marks go back to the BGC's
 * bitmap (mark_bits is zero again: gen0's bits were cleared by promotion), the write watch
 * goes off, the large heaps' free lists are emptied (B5: the sweep refills them region by
 * region). */
void tn_bgc_final_swept_young(tenure_runtime *rt, tn_collection *c) {
    tn_assert_phase(rt, c);
    swap_bitmaps(rt);
    rt->unswept_marks = rt->bgc.bits;
    rt->head.barrier_slow &= ~(uint32_t)TN_BARRIER_BGC;
    watch_check_clear(rt);
    tn_free_list_clear(tn_heap_free_list(rt, TN_LOH));
    tn_free_list_clear(tn_heap_free_list(rt, TN_POH));
    rt->bgc.state = TN_BGC_SWEEPING;
    rt->stats.background_final_pauses++;
    rt->bgc.record = c->record;
    rt->bgc.record.background = true;
}

void tn_bgc_sweep_start(tenure_runtime *rt, uint64_t final_pause_ns) {
    tn_assert_locked(rt);
    rt->bgc.final_pause_ns = final_pause_ns;
    if (rt->bgc.thread_started)
        pthread_cond_signal(&rt->bgc.cv);
}

/* ---- the sweep ---- */

/* The next region not swept yet: the large heaps first (their free lists wait for it), then
 * gen2, then gen1 (unless a gen1 GC collected it meanwhile: tn_bgc_forget_unswept). */
static tn_region *next_unswept(tenure_runtime *rt) {
    static const int order[] = {TN_LOH, TN_POH, TN_GEN2, TN_GEN1};
    for (int k = 0; k < 4; k++)
        for (tn_region *r = tn_heap_regions(rt, order[k]); r; r = r->next)
            if (r->unswept_end)
                return r;
    return NULL;
}

/* Sweep r (H8): each run of unmarked objects below its unswept_end becomes a free object (on
 * the free list of a large heap), a region with nothing left is released. Objects at or above
 * unswept_end came after the final mark and stay. Then its bits are cleared (B4). */
static void sweep_region(tenure_runtime *rt, tn_region *r) {
    char *end = r->unswept_end;
    size_t from = tn_bit_index(rt, r->start), to = tn_bit_index(rt, end);
    if (r->live_bytes == 0 && r->used == end) {
        tn_bgc_forget_unswept(rt, r);
        tn_region_release(rt, r);
        return;
    }
    tn_free_list *fl = tn_heap_free_list(rt, r->gen);
    size_t free_bytes = 0;
    char *p = r->start;
    for (size_t b = tn_bit_next(rt->bgc.bits, from, to); b < to;
         b = tn_bit_next(rt->bgc.bits, tn_bit_index(rt, p), to)) {
        char *s = tn_bit_addr(rt, b);
        free_bytes += tn_gc_free_run(rt, p, s, fl);
        p = s + tn_obj_size(s);
    }
    if (p < end && r->used == end && !fl) { /* dead objects at the end of a gen2 region: its used end falls */
        if (r->zero_from < r->used)
            r->zero_from = r->used;
        tn_heap_poison(rt, p, (size_t)(end - p));
        r->used = p;
    } else {
        free_bytes += tn_gc_free_run(rt, p, end, fl);
    }
    r->free_bytes = free_bytes;   /* (above unswept_end: survivors packed there, no free object) */
    tn_bgc_forget_unswept(rt, r); /* its bits cleared (B4), swept */
}

/* Regions swept for at most TN_BGC_SLICE_NS (at least one); true when none is left. */
static bool sweep_slice(tenure_runtime *rt) {
    tn_assert_locked(rt);
    uint64_t until = tn_os_now_ns() + TN_BGC_SLICE_NS;
    rt->bgc.slices++;
    for (tn_region *r; (r = next_unswept(rt)) != NULL;) {
        sweep_region(rt, r);
        if (tn_os_now_ns() >= until)
            return next_unswept(rt) == NULL;
    }
    return true;
}

/* The sweep is done: the BGC ends, its report written by the thread that swept last. */
static void end_bgc(tenure_runtime *rt) {
    TN_ASSERT(rt->bgc.state == TN_BGC_SWEEPING && next_unswept(rt) == NULL);
    rt->bgc.state = TN_BGC_IDLE;
    rt->bgc.finish_pending = false;
    rt->unswept_marks = NULL;
    tn_heap_limit_gen1(rt, SIZE_MAX);
    rt->stats.background_gcs++;
    tn_gc_report_background_end(rt, &rt->bgc.record, rt->bgc.initial_pause_ns + rt->bgc.final_pause_ns);
}

/* ---- consistency check (base/assert.h: TENURE_DEBUG_ASSERTS, world stopped) ---- */

static void check_regions(const tenure_runtime *rt) {
    bool sweeping = rt->bgc.state == TN_BGC_SWEEPING;
    for (int g = 0; g < TN_NGEN; g++)
        for (const tn_region *r = tn_heap_regions(rt, g); r; r = r->next) {
            /* H8, B4: only a sweep leaves regions unswept, gen1 and older, below their used end */
            TN_ASSERT_INTERNAL(!r->unswept_end || (sweeping && g >= TN_GEN1 && r->unswept_end <= r->used));
            if (!r->unswept_end && g >= TN_GEN2 && rt->bgc.state == TN_BGC_IDLE && rt->bgc.bits)
                TN_ASSERT_EXPENSIVE(tn_bit_next(rt->bgc.bits, tn_bit_index(rt, r->start), tn_bit_index(rt, r->used)) ==
                                    tn_bit_index(rt, r->used));
        }
}

void tn_bgc_check(const tenure_runtime *rt) {
    const struct tn_bgc_state *b = &rt->bgc;
    bool watching = (rt->head.barrier_slow & TN_BARRIER_BGC) != 0;
    TN_ASSERT_INTERNAL(watching == (b->state == TN_BGC_MARKING)); /* B4 */
    TN_ASSERT_INTERNAL((rt->unswept_marks != NULL) == (b->state == TN_BGC_SWEEPING));
    TN_ASSERT_INTERNAL(!rt->unswept_marks || rt->unswept_marks == b->bits);
    if (b->state != TN_BGC_MARKING)
        TN_ASSERT_INTERNAL(b->stack.count == 0 && b->deferred.count == 0 && b->grey.count == 0);
    for (size_t i = 0; i < b->stack.count; i++) { /* B1: premarked old objects */
        const char *o = ((char *const *)b->stack.data)[i];
        TN_ASSERT_EXPENSIVE(in_old_region(rt, o) && tn_bit_test(b->bits, tn_bit_index(rt, o)));
    }
    for (size_t i = 0; i < b->grey.count; i++) {
        const tn_bgc_range *g = tn_vec_at((tn_vec *)&b->grey, i);
        TN_ASSERT_INTERNAL(g->from <= g->to && (g->from == g->to || in_old_region(rt, g->from)));
    }
    check_regions(rt);
}

/* ---- the instance's end, fork ---- */

/* A BGC in progress ends before the instance does, on the destroying thread (attached): its
 * marking, final pause and sweep, as for a blocking gen2 GC asked for meanwhile. Its GCEnd_V1,
 * HeapStats and GC callback come as always, so a trace or a listener never sees a GC that
 * started and did not end; the cost is the marking it had left (a pause of up to a blocking
 * gen2 GC's, once, at the end). */
void tn_bgc_destroy(tenure_runtime *rt) {
    if (rt->bgc.state != TN_BGC_IDLE) {
        tn_lock(rt);
        tn_bgc_finish(rt);
        tn_unlock(rt);
    }
    if (rt->bgc.thread_started) {
        tn_lock(rt);
        rt->bgc.stop = true;
        pthread_cond_signal(&rt->bgc.cv);
        TN_EMIT(rt, GCTerminateConcurrentThread_V1, .ClrInstanceID = 0);
        tn_unlock(rt);
        pthread_join(rt->bgc.thread, NULL);
        rt->bgc.thread_started = false;
    }
    if (rt->bgc.bits) {
        tn_os_release(rt->bgc.bits, bits_bytes(rt));
        tn_os_release(rt->bgc.watch, watch_bytes(rt));
        rt->bgc.bits = NULL;
        rt->bgc.watch = NULL;
    }
    tn_vec_free(&rt->bgc.stack);
    tn_vec_free(&rt->bgc.deferred);
    tn_vec_free(&rt->bgc.grey);
    if (rt->bgc.cv_ready)
        pthread_cond_destroy(&rt->bgc.cv);
    rt->bgc.cv_ready = false;
}

/* The child of a fork has no BGC thread: a BGC in progress ends at the child's next GC, and a
 * new thread starts with the next BGC (under ThreadSanitizer, which cannot start a thread in a
 * forked child, BGCs are off there: gen2 GCs block). */
void tn_bgc_forked_child(tenure_runtime *rt) {
    if (!rt->bgc.thread_started && !TN_UNDER_TSAN)
        return;
    rt->bgc.thread_started = false;
    rt->bgc.forked_no_thread = TN_UNDER_TSAN;
    rt->bgc.cv_ready = false;
    if (rt->bgc.state != TN_BGC_IDLE)
        rt->bgc.finish_pending = true;
}

/* The BGC's marking ends now, on the calling thread (which holds the lock): what is left on
 * its stack, then its final pause; the BGC thread sweeps after it. */
void tn_bgc_final_pause(tenure_runtime *rt) {
    tn_assert_locked(rt);
    if (rt->bgc.state != TN_BGC_MARKING)
        return;
    while (rt->bgc.stack.count || rt->bgc.grey.count)
        mark_slice(rt);
    tn_gc_collect_bgc_final(rt);
}

/* A BGC ends now, on the calling thread: its marking, its final pause, its sweep. For a
 * blocking gen2 GC asked for while it runs, and for a forked child. */
void tn_bgc_finish(tenure_runtime *rt) {
    tn_bgc_final_pause(rt);
    if (rt->bgc.state != TN_BGC_SWEEPING)
        return;
    while (!sweep_slice(rt))
        ;
    end_bgc(rt);
}
