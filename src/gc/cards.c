/* cards.c - all card code: the card scan of an ephemeral GC (one pass, during mark), the
 * update of the slots that scan found (during relocation), the rebuilding of an old region's
 * cards and crossing entries (the table itself: heap/crossing.h) after a GC gave it a new
 * layout or generation, and what HeapVerify asks of cards.
 *
 * Values (H5, runtime.h): a card is 0 (clean) or one more than the youngest generation its
 * slots may refer to; the barrier writes 1. A card bundle (64 cards, 16 KiB of heap) is 0
 * only if all its cards are clean, else at most the least value among them; the barrier
 * writes 1 there too. Cards only ever hold 0, 1 or 2 (a slot of gen1 or gen2 referring to
 * gen0 or gen1), which the word-at-a-time test below relies on.
 *
 * An ephemeral GC condemning generation g scans, in the regions it does not condemn, the
 * cards of value 1..g+1 once, during mark (docs/design/collector.md, "Cards"):
 *  - bundles of value 0 or above g+1 are skipped with one load; in the others the card bytes
 *    are tested eight at a time and runs of consecutive scanned cards are walked as one
 *    stretch (one crossing-table lookup per run, no per-card restart);
 *  - a slot referring to a condemned object is marked through and recorded in the card slot
 *    list (reserved before the pause: scratch.c); any other slot referring to a younger
 *    generation lowers its card, which the scan zeroed first: the card's value is recomputed
 *    from what its slots refer to, so a card whose young references are gone is cleared;
 *  - relocation updates exactly the recorded slots and lowers their cards for the generation
 *    their objects have after the GC (promoted, or demoted in place).
 * If the list fills, the run being scanned gives its entries back and its cards are set to 1;
 * from there on the scan neither records nor rewrites cards, and relocation first walks every
 * card still of value 1..g+1 (exactly the cards not rewritten) the way the scan would have,
 * then updates the recorded slots. No slot is relocated twice: a rewritten card holds 0 or a
 * value above g+1, so the walk skips every card whose slots were recorded. The next GC
 * reserves twice the slots this one saw.
 */
#include "runtime.h"
#include "gc/collection.h"
#include "heap/crossing.h"

#define BUNDLE_CARDS ((size_t)1 << (TENURE__BUNDLE_SHIFT - TENURE__CARD_SHIFT))
#define MIN_CARD_SLOTS ((size_t)16384) /* 128 KiB, touched only as far as used */
#define NOT_YOUNG 3                    /* a slot's target generation: NULL, outside, or gen2 */

static inline size_t card_of(const tenure_runtime *rt, const void *p) {
    return ((uintptr_t)p - (uintptr_t)rt->base) >> TENURE__CARD_SHIFT;
}

static inline char *card_addr(const tenure_runtime *rt, size_t c) { return rt->base + (c << TENURE__CARD_SHIFT); }

/* Card c (and its bundle) may now refer to generation value - 1: lower them to value. */
static inline void lower_card(tenure_runtime *rt, size_t c, uint8_t value) {
    uint8_t *card = &rt->cards[c], *bundle = &rt->card_bundles[c / BUNDLE_CARDS];
    if (*card == 0 || *card > value)
        *card = value;
    if (*bundle == 0 || *bundle > value)
        *bundle = value;
}


/* ---- rebuilding a region's cards ---- */

typedef struct card_set_ctx {
    tenure_runtime *rt;
    uint8_t slot_gen;
} card_set_ctx;

static void set_card_if_younger(void **slot, void *c) {
    card_set_ctx *cc = c;
    tenure_runtime *rt = cc->rt;
    void *v = *slot;
    if (!tn_in_range(rt, v))
        return;
    uint8_t g = rt->unit_gen[tn_unit_of(rt, v)];
    if (g < cc->slot_gen)
        lower_card(rt, card_of(rt, slot), (uint8_t)(g + 1));
}

/* The card holding `from` keeps its value unless `from` starts it or the region: the objects
 * below `from` did not change and may have set it. */
void tn_gc_clear_cards(tenure_runtime *rt, tn_region *r, char *from) {
    size_t c0 = card_of(rt, from + TN_CARD_SIZE - 1), c1 = card_of(rt, r->end);
    if (from == r->start)
        c0 = card_of(rt, from);
    if (c1 > c0)
        memset(rt->cards + c0, 0, c1 - c0);
}

void tn_gc_lower_card(tenure_runtime *rt, void *slot, uint8_t value) { lower_card(rt, card_of(rt, slot), value); }

void tn_gc_rebuild_range(tenure_runtime *rt, tn_region *r, char *from, bool set_cards) {
    tn_gc_clear_cards(rt, r, from);
    card_set_ctx cc = {rt, rt->unit_gen[r->index]};
    for (char *o = from; o < r->used;) {
        size_t size = tn_obj_size(o);
        tn_crossing_set(rt, o, size);
        if (set_cards && !tn_is_free(o))
            tn_obj_visit_slots(rt, o, set_card_if_younger, &cc);
        o += size;
    }
}

void tn_gc_rebuild_region(tenure_runtime *rt, tn_region *r, bool set_cards) {
    tn_gc_rebuild_range(rt, r, r->start, set_cards);
}

/* Every card of every old region dirty ("may refer to gen0"): the next ephemeral GC scans the
 * whole old heap once. For the child of a fork, where a thread that vanished may have stored
 * a reference without marking its card yet (between the two stores of the barrier). */
void tn_gc_dirty_old_cards(tenure_runtime *rt) {
    for (size_t i = 0; i < rt->units_high; i++) {
        tn_region *r = &rt->regions[i];
        if (r->state != TN_RS_IN_USE || rt->unit_head[i] != i || r->gen == TN_GEN0)
            continue;
        size_t c0 = card_of(rt, r->start), c1 = card_of(rt, r->used + TN_CARD_SIZE - 1);
        memset(rt->cards + c0, 1, c1 - c0); /* (above `used` there are no slots) */
        for (size_t b = c0 / BUNDLE_CARDS; b * BUNDLE_CARDS < c1; b++)
            rt->card_bundles[b] = 1;
    }
}

/* ---- the card scan ---- */

/* What the scan does with the slots it finds. */
typedef struct card_scan {
    tenure_runtime *rt;
    int condemned;
    uint8_t holder_gen; /* barrier generation of the region being scanned */
    char *lo, *hi;      /* the run of cards being walked */
    /* mark pass: fn is called for each slot referring to a condemned object */
    tn_slot_fn mark;
    void *mark_ctx;
    bool recording;                   /* the slot list has had room so far: cards are rewritten */
    size_t run_c0, run_c1, run_first; /* the current run's cards and its first list entry */
    size_t seen;                      /* slots referring to condemned objects, recorded or not */
    void ***slots;                    /* the list this scan records into (server GC: a slice) */
    size_t nslots, slots_cap;
    /* relocation pass after an overflow: update every slot, recompute the cards */
    tn_card_slot_fn update;
    void *update_ctx;
    const uint64_t *marked_only; /* a background GC's final mark: only the objects marked so far */
} card_scan;

/* The list is full: the current run gives its entries back and its cards become 1, so that
 * relocation walks them again (and every later card, which is no longer rewritten). */
static void list_full(card_scan *s) {
    tenure_runtime *rt = s->rt;
    s->recording = false;
    for (size_t i = s->run_first; i < s->nslots; i++) /* not marked yet */
        s->mark(s->slots[i], s->mark_ctx);
    s->nslots = s->run_first;
    memset(rt->cards + s->run_c0, 1, s->run_c1 - s->run_c0);
    lower_card(rt, s->run_c0, 1); /* the bundle (a run lies in one) */
}

/* The generation of the object v refers to; NOT_YOUNG for NULL and frozen data. */
static inline uint8_t target_gen(const tenure_runtime *rt, const void *v) {
    return tn_in_range(rt, v) ? rt->unit_gen[tn_unit_of(rt, v)] : NOT_YOUNG;
}

/* The same without a branch: an address outside the heap reads unit 0 and becomes NOT_YOUNG
 * (cards are aligned to the heap's base, which is aligned to a unit). */
static inline uint8_t target_gen_nobranch(const tenure_runtime *rt, const void *v) {
    uintptr_t off = (uintptr_t)v - (uintptr_t)rt->base;
    bool inside = off < rt->range;
    size_t u = inside ? off >> rt->head.unit_shift : 0;
    return (uint8_t)(rt->unit_gen[u] | (inside ? 0 : NOT_YOUNG));
}

/* A slot referring to generation g, younger than its holder's (rare: out of line). */
static __attribute__((noinline)) void found_young(card_scan *s, void **slot, uint8_t g) {
    tenure_runtime *rt = s->rt;
    if (g > s->condemned) {
        if (s->recording)
            lower_card(rt, card_of(rt, slot), (uint8_t)(g + 1));
        return;
    }
    s->seen++;
    if (s->recording) {
        if (s->nslots < s->slots_cap) {
            s->slots[s->nslots++] = slot; /* marked through after the scan (mark_recorded) */
            return;
        }
        list_full(s);
    }
    s->mark(slot, s->mark_ctx);
}

static __attribute__((noinline)) void update_slot(card_scan *s, void **slot) {
    int g = s->update(slot, s->update_ctx);
    if (g < s->holder_gen)
        lower_card(s->rt, card_of(s->rt, slot), (uint8_t)(g + 1));
}

/* A slot referring to generation g, younger than its holder's: a card still referring to an
 * uncondemned generation is lowered here (cheap, and common: old-to-gen1 slots in a gen0 GC). */
static inline void young_slot(card_scan *s, void **slot, uint8_t g) {
    if (g > s->condemned) {
        uint8_t *card = &s->rt->cards[card_of(s->rt, slot)];
        if (s->recording && (*card == 0 || *card > g + 1))
            lower_card(s->rt, card_of(s->rt, slot), (uint8_t)(g + 1));
        return;
    }
    found_young(s, slot, g);
}

static inline void scan_slot(card_scan *s, void **slot) {
    if (s->update) {
        update_slot(s, slot);
        return;
    }
    uint8_t g = target_gen(s->rt, *slot);
    if (g < s->holder_gen)
        young_slot(s, slot, g);
}

static void scan_traced_slot(void **slot, void *c) {
    card_scan *s = c;
    if ((char *)slot >= s->lo && (char *)slot < s->hi)
        scan_slot(s, slot);
}

/* The slots of a reference array (the loop that counts: tables of references) in [lo, hi),
 * both 8-aligned: elements first..last-1 lie inside. */
static void scan_ref_array(card_scan *s, void **e, size_t n) {
    char *lo = s->lo, *hi = s->hi;
    size_t first = lo > (char *)e ? (size_t)(lo - (char *)e) / sizeof(void *) : 0;
    size_t last = hi > (char *)e ? (size_t)(hi - (char *)e) / sizeof(void *) : 0;
    if (last > n)
        last = n;
    if (s->update) {
        for (size_t i = first; i < last; i++)
            update_slot(s, &e[i]);
        return;
    }
    tenure_runtime *rt = s->rt;
    const size_t per_card = TN_CARD_SIZE / sizeof(void *);
    for (size_t i = first; i < last;) {
        /* card by card: the least generation referred to, without a branch per slot (old-to-
         * gen1 slots are common and unpredictable); only condemned objects branch off */
        size_t end = i + per_card - (size_t)((uintptr_t)&e[i] % TN_CARD_SIZE) / sizeof(void *);
        uint8_t least = NOT_YOUNG;
        for (end = end < last ? end : last; i < end; i++) {
            uint8_t g = target_gen_nobranch(rt, e[i]);
            if (TENURE__UNLIKELY(g <= s->condemned))
                found_young(s, &e[i], g);
            else
                least = g < least ? g : least;
        }
        if (least < s->holder_gen && s->recording)
            lower_card(rt, card_of(rt, &e[i - 1]), (uint8_t)(least + 1));
    }
}

static void scan_array(card_scan *s, char *o, const tn_type *t) {
    char *data = o + t->size, *lo = s->lo, *hi = s->hi;
    size_t n = ((tenure_array_header *)o)->length;
    if (t->elem_ref_count == 1 && t->elem_size == sizeof(void *) && t->elem_ref_offsets[0] == 0) {
        scan_ref_array(s, (void **)data, n);
        return;
    }
    size_t first = lo > data ? (size_t)(lo - data) / t->elem_size : 0;
    size_t last = hi > data ? ((size_t)(hi - data) + t->elem_size - 1) / t->elem_size : 0;
    if (last > n)
        last = n;
    for (size_t i = first; i < last; i++) {
        char *e = data + i * t->elem_size;
        for (size_t j = 0; j < t->elem_ref_count; j++) {
            char *slot = e + t->elem_ref_offsets[j];
            if (slot >= lo && slot < hi)
                scan_slot(s, (void **)slot);
        }
    }
}

/* The slots of o that lie in [s->lo, s->hi), without an indirect call where the type's
 * layout is known. */
static inline void scan_object(card_scan *s, char *o, const tn_type *t, size_t size) {
    if (t->trace) {
        tn_obj_visit_traced(o, scan_traced_slot, s);
        return;
    }
    /* a fixed object's fields, or an array's fixed fields before its elements */
    bool inside = o >= s->lo && o + size <= s->hi;
    for (size_t i = 0; i < t->ref_count; i++) {
        char *slot = o + t->ref_offsets[i];
        if (inside || (slot >= s->lo && slot < s->hi))
            scan_slot(s, (void **)slot);
    }
    if (t->kind == TN_TK_ARRAY && t->elem_ref_count)
        scan_array(s, o, t);
}

/* Walk the objects under cards [c0, c1) of r, which the scan zeroes first when it rewrites
 * them (their new values come from the slots). */
static void scan_run(card_scan *s, tn_region *r, size_t c0, size_t c1) {
    tenure_runtime *rt = s->rt;
    s->lo = card_addr(rt, c0);
    s->hi = card_addr(rt, c1) < r->used ? card_addr(rt, c1) : r->used;
    if (s->recording) {
        for (size_t c = c0; c < c1; c++) /* (runs are short: no call to memset) */
            rt->cards[c] = 0;
        s->run_c0 = c0;
        s->run_c1 = c1;
        s->run_first = s->nslots;
    }
    for (char *o = tn_crossing_object_start(rt, r, s->lo); o < s->hi;) {
        const tn_type *t = tn_obj_type(o);
        size_t size = tn_obj_size_t(t, o);
        if (t->kind != TN_TK_FREE && !tn_unswept_dead(rt, r, o) &&                         /* (H8) */
            (!s->marked_only || tn_bit_test_relaxed(s->marked_only, tn_bit_index(rt, o)))) /* (helpers mark) */
            scan_object(s, o, t, size);
        o += size;
    }
}

/* Bit 8i set for each byte i of w (card or bundle values, 0..2) in 1..condemned+1. */
static inline uint64_t scanned_bytes(uint64_t w, int condemned) {
    const uint64_t ones = 0x0101010101010101ull;
    uint64_t odd = w & ones, high = (w >> 1) & ones;
    return condemned == 0 ? odd & ~high : odd ^ high; /* 1, or 1 and 2 */
}

/* One bit per card of the 64 at `cards`: set for those the GC scans (value 1..condemned+1;
 * cards hold 0, 1 or 2). Eight cards per word: bit 0 of each byte says "odd", bit 1 "2 or 3". */
static uint64_t scanned_cards_map(const uint8_t *cards, int condemned) {
    const uint64_t ones = 0x0101010101010101ull;
    uint64_t map = 0;
    for (size_t k = 0; k < BUNDLE_CARDS / 8; k++) {
        uint64_t w;
        memcpy(&w, cards + 8 * k, 8);
        if (!w)
            continue;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
        w = __builtin_bswap64(w);
#endif
        TN_ASSERT_INTERNAL((w & ~(ones * 3)) == 0);
        map |= ((scanned_bytes(w, condemned) * 0x0102040810204080ull) >> 56) << (8 * k); /* bit 8i -> bit i */
    }
    return map;
}

/* A bundle's value: the least value of its cards (0: all clean). */
static uint8_t bundle_value(const uint8_t *cards) {
    uint8_t least = 0;
    for (size_t k = 0; k < BUNDLE_CARDS; k += 8) {
        uint64_t w;
        memcpy(&w, cards + k, 8);
        for (size_t i = 0; w && i < 8; i++)
            if (cards[k + i] && (!least || cards[k + i] < least))
                least = cards[k + i];
    }
    return least;
}

/* Runs are queued RUN_LAG deep: when a run is queued its crossing entry and first card lines
 * are prefetched, half way through the queue the object covering its start, so that the walk
 * of a run rarely waits for memory (dirty cards lie far apart). */
#define RUN_LAG 8

typedef struct run_queue {
    struct {
        size_t c0, c1;
    } q[RUN_LAG];
    size_t queued, done;
} run_queue;

/* (always_inline: GCC deletes a call to a function that only prefetches, as if it were const) */
static inline __attribute__((always_inline)) void run_enqueued(const tenure_runtime *rt, size_t c0, size_t c1) {
    __builtin_prefetch(&rt->crossing[(c0 << TENURE__CARD_SHIFT) >> TN_CROSSING_SHIFT]);
    char *end = card_addr(rt, c1 - c0 > 2 ? c0 + 2 : c1); /* the hardware follows after that */
    char *start = rt->base + ((c0 << TENURE__CARD_SHIFT) & ~(TN_CROSSING_GRANULE - 1)); /* the walk starts there */
    for (char *line = start; line < end; line += 64)
        __builtin_prefetch(line);
}

static void run_next(card_scan *s, tn_region *r, run_queue *rq) {
    tenure_runtime *rt = s->rt;
    size_t ahead = rq->done + RUN_LAG / 2;
    if (ahead < rq->queued) {
        __builtin_prefetch(tn_crossing_object(rt, card_addr(rt, rq->q[ahead % RUN_LAG].c0)));
    }
    size_t i = rq->done++ % RUN_LAG;
    scan_run(s, r, rq->q[i].c0, rq->q[i].c1);
}

static void queue_run(card_scan *s, tn_region *r, run_queue *rq, size_t c0, size_t c1) {
    run_enqueued(s->rt, c0, c1);
    rq->q[rq->queued % RUN_LAG].c0 = c0;
    rq->q[rq->queued % RUN_LAG].c1 = c1;
    if (++rq->queued - rq->done == RUN_LAG)
        run_next(s, r, rq);
}

/* Queue the runs of consecutive cards to scan in bundle b (cards before c_end). */
static void queue_bundle(card_scan *s, tn_region *r, run_queue *rq, size_t b, size_t c_end) {
    size_t c0 = b * BUNDLE_CARDS, n = c_end - c0 < BUNDLE_CARDS ? c_end - c0 : BUNDLE_CARDS;
    uint64_t map = scanned_cards_map(s->rt->cards + c0, s->condemned);
    if (n < 64)
        map &= ((uint64_t)1 << n) - 1;
    while (map) {
        unsigned i = (unsigned)__builtin_ctzll(map);
        uint64_t after = ~(map >> i); /* the run ends at the first card not scanned */
        unsigned len = after ? (unsigned)__builtin_ctzll(after) : 64 - i;
        queue_run(s, r, rq, c0 + i, c0 + i + len);
        map = i + len >= 64 ? 0 : map & (~(uint64_t)0 << (i + len));
    }
}

static inline bool bundle_scanned(uint8_t v, int condemned) { return v != 0 && v <= condemned + 1; }

/* The first bundle from b on (before b1) that the scan visits; b1 if none. Eight bundles (128
 * KiB of heap) are tested at a time: a gen0 GC over a large old generation reads its bundle
 * bytes, not its cards. */
static size_t next_bundle(const tenure_runtime *rt, size_t b, size_t b1, int condemned) {
    for (; b < b1; b++) {
        if (b % 8 == 0) {
            while (b + 8 <= b1) {
                uint64_t w;
                memcpy(&w, rt->card_bundles + b, 8);
                if (w && scanned_bytes(w, condemned))
                    break;
                b += 8;
            }
            if (b >= b1)
                return b1;
        }
        if (bundle_scanned(rt->card_bundles[b], condemned))
            return b;
    }
    return b1;
}

/* The bundles of r the scan covers: [*b0, *b1). */
static void region_bundles(const tenure_runtime *rt, const tn_region *r, size_t *b0, size_t *b1) {
    size_t c0 = card_of(rt, r->start), c1 = card_of(rt, r->used + TN_CARD_SIZE - 1);
    TN_ASSERT_INTERNAL(c0 % BUNDLE_CARDS == 0);
    *b0 = c0 / BUNDLE_CARDS;
    *b1 = (c1 + BUNDLE_CARDS - 1) / BUNDLE_CARDS;
}

/* Scan r's cards under bundles [b0, b1) (a run of cards lies in one bundle). */
static void scan_bundles(card_scan *s, tn_region *r, size_t b0, size_t b1) {
    tenure_runtime *rt = s->rt;
    s->holder_gen = rt->unit_gen[r->index];
    size_t c1 = card_of(rt, r->used + TN_CARD_SIZE - 1);
    run_queue rq = {.queued = 0, .done = 0};
    for (size_t b = next_bundle(rt, b0, b1, s->condemned); b < b1; b = next_bundle(rt, b + 1, b1, s->condemned))
        queue_bundle(s, r, &rq, b, c1);
    while (rq.done < rq.queued)
        run_next(s, r, &rq);
    if (!s->recording)
        return; /* (the bundles of the cards left are still low enough for the relocation walk) */
    /* the bundles scanned (their values only went down): their new values */
    for (size_t b = next_bundle(rt, b0, b1, s->condemned); b < b1; b = next_bundle(rt, b + 1, b1, s->condemned))
        rt->card_bundles[b] = bundle_value(rt->cards + b * BUNDLE_CARDS);
}

static void scan_region(card_scan *s, tn_region *r) {
    size_t b0, b1;
    region_bundles(s->rt, r, &b0, &b1);
    scan_bundles(s, r, b0, b1);
}

static void scan_regions(card_scan *s) {
    tenure_runtime *rt = s->rt;
    for (int g = s->condemned + 1; g < TN_NGEN; g++)
        for (tn_region *r = tn_heap_regions(rt, g); r; r = r->next)
            if (!r->condemned)
                scan_region(s, r);
}

/* Mark through the recorded slots, the object of a slot a few entries ahead prefetched. */
static void mark_recorded(const card_scan *s) {
    for (size_t i = 0, n = s->nslots; i < n; i++) {
        if (i + 8 < n)
            __builtin_prefetch(*s->slots[i + 8]);
        s->mark(s->slots[i], s->mark_ctx);
    }
}

/* What the scan of this GC found: how many slots, whether the list filled. */
static void scan_found(tenure_runtime *rt, size_t seen, bool overflowed) {
    rt->card.card_slots_seen = seen;
    if (seen > rt->card.card_slots_needed)
        rt->card.card_slots_needed = seen;
    rt->card.card_slots_short = overflowed;
    if (overflowed)
        rt->collection->scratch_short = true;
}

void tn_gc_mark_cards(tenure_runtime *rt, int condemned, tn_slot_fn mark, void *ctx) {
    TN_ASSERT_INTERNAL(condemned < TN_GEN2);
    card_scan s = {.rt = rt,
                   .condemned = condemned,
                   .mark = mark,
                   .mark_ctx = ctx,
                   .recording = true,
                   .slots = rt->card.card_slots.data,
                   .slots_cap = rt->card.card_slots.cap};
    scan_regions(&s);
    mark_recorded(&s);
    rt->card.card_slots.count = s.nslots;
    scan_found(rt, s.seen, !s.recording);
}

/* ---- the card scan on several GC threads (server GC) ----
 *
 * Each GC thread takes the old regions' cards a piece at a time, PART_BUNDLES bundles (1 MiB
 * of heap) per piece, so that one large array's cards are shared too (rt->card.next_piece,
 * atomic: every thread walks the pieces in the same order and scans those whose number it
 * took), and records into its own slice of the reserved list: thread i of n into entries
 * [i cap / n, (i + 1) cap / n). A piece's cards and bundles are written only by the thread
 * that took it (a run of cards lies in one bundle, a piece is whole bundles, and a bundle never
 * straddles two regions: parts.c check_region_grain). A thread whose
 * slice fills stops recording as list_full says, alone: relocation's rescan walks every card
 * still of value 1..condemned+1, which is exactly the cards such a thread did not rewrite.
 * At the end thread 0 moves the slices together into one list. */

#define PART_BUNDLES ((size_t)64)

void tn_gc_mark_cards_start(tenure_runtime *rt) {
    __atomic_store_n(&rt->card.next_piece, 0, __ATOMIC_RELAXED);
    memset(rt->card.parts, 0, sizeof rt->card.parts);
}

static size_t slice_start(const tenure_runtime *rt, unsigned thread, unsigned threads) {
    return rt->card.card_slots.cap / threads * thread;
}

void tn_gc_mark_cards_part(tenure_runtime *rt, int condemned, unsigned thread, unsigned threads, tn_slot_fn mark,
                           void *ctx) {
    TN_ASSERT_INTERNAL(condemned < TN_GEN2 && thread < threads && threads <= TN_MAX_HEAPS);
    card_scan s = {.rt = rt,
                   .condemned = condemned,
                   .mark = mark,
                   .mark_ctx = ctx,
                   .recording = true,
                   .slots = (void ***)rt->card.card_slots.data + slice_start(rt, thread, threads),
                   .slots_cap = rt->card.card_slots.cap / threads};
    size_t next = __atomic_fetch_add(&rt->card.next_piece, 1, __ATOMIC_RELAXED), k = 0;
    for (int g = condemned + 1; g < TN_NGEN; g++)
        for (tn_region *r = tn_heap_regions(rt, g); r; r = r->next) {
            if (r->condemned)
                continue;
            size_t b0, b1;
            region_bundles(rt, r, &b0, &b1);
            for (size_t b = b0; b < b1; b += PART_BUNDLES, k++) {
                if (k != next)
                    continue;
                scan_bundles(&s, r, b, b1 - b > PART_BUNDLES ? b + PART_BUNDLES : b1);
                next = __atomic_fetch_add(&rt->card.next_piece, 1, __ATOMIC_RELAXED);
            }
        }
    mark_recorded(&s);
    rt->card.parts[thread] = (struct tn_card_part){.count = s.nslots, .seen = s.seen, .overflowed = !s.recording};
}

void tn_gc_mark_cards_end(tenure_runtime *rt, unsigned threads) {
    void ***slots = rt->card.card_slots.data;
    size_t count = 0, seen = 0;
    bool overflowed = false;
    for (unsigned i = 0; i < threads; i++) {
        const struct tn_card_part *p = &rt->card.parts[i];
        if (p->count)
            memmove(slots + count, slots + slice_start(rt, i, threads), p->count * sizeof *slots);
        count += p->count;
        seen += p->seen;
        overflowed |= p->overflowed;
    }
    rt->card.card_slots.count = count;
    scan_found(rt, seen, overflowed);
}

void tn_gc_mark_old_card_roots(tenure_runtime *rt, tn_slot_fn mark, void *ctx) {
    card_scan s = {.rt = rt,
                   .condemned = TN_GEN1,
                   .mark = mark,
                   .mark_ctx = ctx,
                   .recording = false,
                   .marked_only = rt->mark_bits};
    for (int g = TN_GEN2; g < TN_NGEN; g++)
        for (tn_region *r = tn_heap_regions(rt, g); r; r = r->next)
            scan_region(&s, r);
}

void tn_gc_rescan_card_slots(tenure_runtime *rt, int condemned, tn_card_slot_fn fn, void *ctx) {
    TN_ASSERT_INTERNAL(rt->card.card_slots_short);
    card_scan s = {.rt = rt, .condemned = condemned, .recording = true, .update = fn, .update_ctx = ctx};
    scan_regions(&s);
}

/* Card c (and its bundle) lowered to value where other GC threads may lower them too: a
 * compare-and-swap loop per byte (cards.c's values only go down during a GC). */
static void lower_byte_shared(uint8_t *p, uint8_t value) {
    uint8_t old = __atomic_load_n(p, __ATOMIC_RELAXED);
    while ((old == 0 || old > value) &&
           !__atomic_compare_exchange_n(p, &old, value, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
        ;
}

void tn_gc_lower_card_shared(tenure_runtime *rt, void *slot, uint8_t value) {
    size_t c = card_of(rt, slot);
    lower_byte_shared(&rt->cards[c], value);
    lower_byte_shared(&rt->card_bundles[c / BUNDLE_CARDS], value);
}

void tn_gc_update_card_slot_range(tenure_runtime *rt, size_t from, size_t to, tn_card_slot_fn fn, void *ctx,
                                  bool shared) {
    void ***slots = rt->card.card_slots.data;
    for (size_t i = from; i < to; i++) {
        void **slot = slots[i];
        int g = fn(slot, ctx);
        if (g >= rt->unit_gen[tn_unit_of(rt, slot)])
            continue;
        if (shared)
            tn_gc_lower_card_shared(rt, slot, (uint8_t)(g + 1));
        else
            lower_card(rt, card_of(rt, slot), (uint8_t)(g + 1));
    }
}

void tn_gc_reserve_card_slots(tenure_runtime *rt) {
    size_t want = 2 * rt->card.card_slots_needed;
    tn_vec_reserve(&rt->card.card_slots, want > MIN_CARD_SLOTS ? want : MIN_CARD_SLOTS); /* or what there is */
}

/* ---- checks (HeapVerify) ---- */

typedef struct card_value_ctx {
    tenure_runtime *rt;
    char *lo, *hi;
    uint8_t holder_gen, least;
} card_value_ctx;

static void least_young(void **slot, void *c) {
    card_value_ctx *cv = c;
    if ((char *)slot < cv->lo || (char *)slot >= cv->hi || !tn_in_range(cv->rt, *slot))
        return;
    uint8_t g = cv->rt->unit_gen[tn_unit_of(cv->rt, *slot)];
    if (g < cv->holder_gen && (!cv->least || g + 1 < cv->least))
        cv->least = (uint8_t)(g + 1);
}

/* The value card c of r should have from what its slots refer to now (H7). */
static uint8_t exact_value(tenure_runtime *rt, tn_region *r, size_t c) {
    card_value_ctx cv = {rt, card_addr(rt, c), card_addr(rt, c + 1), rt->unit_gen[r->index], 0};
    if (cv.hi > r->used)
        cv.hi = r->used;
    for (char *o = tn_crossing_object_start(rt, r, cv.lo); o < cv.hi; o += tn_obj_size(o))
        if (!tn_is_free(o) && !tn_unswept_dead(rt, r, o))
            tn_obj_visit_slots(rt, o, least_young, &cv);
    return cv.least;
}

char *tn_gc_next_stale_card(tenure_runtime *rt, tn_region *r, char *from, int upto, uint8_t *value) {
    for (size_t c = card_of(rt, from), c1 = card_of(rt, r->used + TN_CARD_SIZE - 1); c < c1; c++) {
        uint8_t card = rt->cards[c];
        if (card && card <= upto && exact_value(rt, r, c) != card) {
            *value = card;
            return card_addr(rt, c);
        }
    }
    return NULL;
}

uint8_t tn_gc_card_value(const tenure_runtime *rt, const void *slot) { return rt->cards[card_of(rt, slot)]; }

uint8_t tn_gc_bundle_value(const tenure_runtime *rt, const void *slot) {
    return rt->card_bundles[card_of(rt, slot) / BUNDLE_CARDS];
}
