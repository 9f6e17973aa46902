/*
 * cards.h - the state the card scan owns (rt->card, gc/cards.c): the list of old-to-condemned
 * slots an ephemeral GC's card scan found, reserved before the pause (gc/scratch.c), and how
 * full it got. The card table and bundles themselves are side tables of the reserved range
 * (rt->cards, rt->card_bundles, set up by heap/regions.c, written by the barrier). Included
 * by runtime.h, which embeds it in struct tenure_runtime. After the state: every card
 * function gc/cards.c offers (rebuild, clear, lower, the card scan, HeapVerify's card checks).
 */
#ifndef TENURE_GC_CARDS_H
#define TENURE_GC_CARDS_H

#include <stdbool.h>
#include <stddef.h>

struct tn_card_state {
    tn_vec card_slots;        /* void **: old-to-condemned slots the card scan found (gc/cards.c),
                            reserved before the pause for twice card_slots_needed */
    bool card_slots_short;    /* this GC's card scan filled the list (relocation rescans) */
    size_t card_slots_seen;   /* slots the card scan of this GC found, recorded or not */
    size_t card_slots_needed; /* the most any GC found */
    /* server GC: the scan split among the GC threads (tn_gc_mark_cards_part): the next piece
     * of the old regions' cards to take (atomic), and each thread's slice of card_slots and
     * what it found */
    size_t next_piece;
    struct tn_card_part {
        size_t count, seen;
        bool overflowed;
    } parts[TN_MAX_HEAPS];
};

/* ---- functions (cards.c) ---- */

/* Clear r's cards and rebuild its crossing table; with set_cards, set each card again from
 * the slots under it. */
void tn_gc_rebuild_region(tenure_runtime *rt, tn_region *r, bool set_cards);
/* The same for the objects of r from `from` (an object start) to its end. */
void tn_gc_rebuild_range(tenure_runtime *rt, tn_region *r, char *from, bool set_cards);
/* The pieces of a rebuild that relocation does as it goes (relocate.c, collector.md "Cards"):
 * zero r's cards from `from` (an object start; r->start: the whole region), lower the card of
 * `slot` for a reference to generation value - 1 (its bundle too). */
void tn_gc_clear_cards(tenure_runtime *rt, tn_region *r, char *from);
void tn_gc_lower_card(tenure_runtime *rt, void *slot, uint8_t value);
/* tn_gc_lower_card where other GC threads may lower the same card or bundle (atomic). */
void tn_gc_lower_card_shared(tenure_runtime *rt, void *slot, uint8_t value);
/* Every card of every old region dirty (after fork(), in the child: cards.c). */
void tn_gc_dirty_old_cards(tenure_runtime *rt);
/* The card scan of an ephemeral GC (cards.c, docs/design/collector.md "Cards"). During mark:
 * scan once every card of value 1..condemned+1 of the regions not condemned, call `mark` for
 * each slot that refers to a condemned object and record it in rt->card.card_slots, and rewrite
 * every other scanned card from what its slots refer to. During relocation: if the list filled
 * (card_slots_short), first walk every card the scan left (rescan), then `fn` updates each
 * recorded slot (update_card_slot_range: slots [from, to) of the list; split among GC threads,
 * with `shared`, when the list did not fill) and returns the generation its object has after
 * the GC (3: none younger than gen2), from which the slot's card is lowered. The relocation
 * empties the list afterwards. Before the pause: reserve the list (scratch.c). */
typedef int (*tn_card_slot_fn)(void **slot, void *ctx);
void tn_gc_mark_cards(tenure_runtime *rt, int condemned, tn_slot_fn mark, void *ctx);
/* The same card scan on `threads` GC threads (server GC): tn_gc_mark_cards_start before any
 * thread's part, then on GC thread `thread` (0 .. threads-1) the part, which takes pieces of
 * the old regions' cards (1 MiB of heap each) until none is left and records into its own
 * slice of card_slots (the list split evenly), then tn_gc_mark_cards_end on thread 0 once
 * every part is done: the slices become one list for relocation. */
void tn_gc_mark_cards_start(tenure_runtime *rt);
void tn_gc_mark_cards_part(tenure_runtime *rt, int condemned, unsigned thread, unsigned threads, tn_slot_fn mark,
                           void *ctx);
void tn_gc_mark_cards_end(tenure_runtime *rt, unsigned threads);
/* A background GC's final mark: `mark` each slot of a gen2, LOH or POH object under a dirty
 * card that refers to gen0 or gen1, skipping the objects not marked yet (they are traced if
 * reachable, or dead). Nothing recorded, no card changed. */
void tn_gc_mark_old_card_roots(tenure_runtime *rt, tn_slot_fn mark, void *ctx);
void tn_gc_rescan_card_slots(tenure_runtime *rt, int condemned, tn_card_slot_fn fn, void *ctx);
void tn_gc_update_card_slot_range(tenure_runtime *rt, size_t from, size_t to, tn_card_slot_fn fn, void *ctx,
                                  bool shared);
void tn_gc_reserve_card_slots(tenure_runtime *rt);
/* HeapVerify (H5, H7): the first card of r from `from` on whose value, in 1..upto, is not the
 * one its slots give now (NULL if none; *value: the card's value); the card and bundle values
 * of a slot's card. */
char *tn_gc_next_stale_card(tenure_runtime *rt, tn_region *r, char *from, int upto, uint8_t *value);
uint8_t tn_gc_card_value(const tenure_runtime *rt, const void *slot);
uint8_t tn_gc_bundle_value(const tenure_runtime *rt, const void *slot);

#endif
