/*
 * cards.h - the state the card scan owns (rt->card, gc/cards.c): the list of old-to-condemned
 * slots an ephemeral GC's card scan found, reserved before the pause (gc/scratch.c), and how
 * full it got. The card table and bundles themselves are side tables of the reserved range
 * (rt->cards, rt->card_bundles, set up by heap/regions.c, written by the barrier). Included
 * by runtime.h, which embeds it in struct tenure_runtime.
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
};

#endif
