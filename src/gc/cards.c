/* cards.c - the crossing table (which object covers each card of an old region) and the
 * rebuilding of an old region's cards after a GC gave it a new layout or a new generation. */
#include "runtime.h"

static inline size_t card_of(const tenure_runtime *rt, const void *p) {
    return ((uintptr_t)p - (uintptr_t)rt->base) >> TENURE__CARD_SHIFT;
}

char *tn_gc_find_object_start(tenure_runtime *rt, tn_region *r, char *p) {
    size_t c = card_of(rt, p);
    char *o = rt->base + (c << TENURE__CARD_SHIFT) - (size_t)rt->crossing[c] * 8;
    if (o < r->start)
        o = r->start;
    while (o + tn_obj_size(o) <= p)
        o += tn_obj_size(o);
    return o;
}

/* Record that obj [o, o + size) covers the start of every card that begins inside it. */
static inline void set_crossing(tenure_runtime *rt, char *o, size_t size) {
    uintptr_t off = (uintptr_t)o - (uintptr_t)rt->base;
    uintptr_t cs = (off + TN_CARD_SIZE - 1) & ~(uintptr_t)(TN_CARD_SIZE - 1);
    for (; cs < off + size; cs += TN_CARD_SIZE)
        rt->crossing[cs >> TENURE__CARD_SHIFT] = (uint32_t)((cs - off) / 8);
}

void tn_gc_note_object(tenure_runtime *rt, char *o, size_t size) { set_crossing(rt, o, size); }

typedef struct card_set_ctx {
    tenure_runtime *rt;
    uint8_t slot_gen;
} card_set_ctx;

static void set_card_if_younger(void **slot, void *c) {
    card_set_ctx *cc = c;
    tenure_runtime *rt = cc->rt;
    void *v = *slot;
    if (!v || !tn_in_range(rt, v))
        return;
    uint8_t g = rt->unit_gen[tn_unit_of(rt, v)];
    uint8_t *card = &rt->cards[card_of(rt, slot)];
    if (g < cc->slot_gen && (*card == 0 || *card > g + 1)) {
        *card = (uint8_t)(g + 1);
        rt->card_bundles[((uintptr_t)slot - (uintptr_t)rt->base) >> TENURE__BUNDLE_SHIFT] = 1;
    }
}

void tn_gc_rebuild_range(tenure_runtime *rt, tn_region *r, char *from, bool set_cards) {
    size_t c0 = card_of(rt, from + TN_CARD_SIZE - 1), c1 = card_of(rt, r->end);
    if (from == r->start)
        c0 = card_of(rt, from);
    if (c1 > c0)
        memset(rt->cards + c0, 0, c1 - c0);
    card_set_ctx cc = {rt, rt->unit_gen[r->index]};
    for (char *o = from; o < r->used;) {
        size_t size = tn_obj_size(o);
        set_crossing(rt, o, size);
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
        size_t c0 = card_of(rt, r->start), c1 = card_of(rt, r->end);
        memset(rt->cards + c0, 1, c1 - c0);
        for (size_t b = c0 >> (TENURE__BUNDLE_SHIFT - TENURE__CARD_SHIFT); b << (TENURE__BUNDLE_SHIFT - TENURE__CARD_SHIFT) < c1; b++)
            rt->card_bundles[b] = 1;
    }
}
