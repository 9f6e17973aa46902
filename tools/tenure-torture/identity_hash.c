/*
 * tenure-torture: identity hashes
 * The same hash at every query of an object, across moves.
 */
#include "torture.h"

void op_hash(program_state *s, rng *r) {
    for (int i = 0, n = (int)rrange(r, 1, 4); i < n; i++) {
        uint32_t j = rchance(r, 70) ? pick_reachable(s, r) : pick_existing(s, r);
        if (!j || (s->objs[j].flags & F_FROZEN))
            continue;
        uint32_t h = tenure_identity_hash(s->rt, (void *)s->objs[j].addr);
        if (!h || (s->objs[j].hash && h != s->objs[j].hash))
            diff(s, "tenure_identity_hash(%s) is %#x, it was %#x", odesc(s, j), h, s->objs[j].hash);
        s->objs[j].hash = h;
    }
}
