/*
 * tenure-torture: induced GCs
 * tenure_collect of a random generation and flags, what the callback must see of it.
 */
#include "torture.h"

void induced_collect(program_state *s, int gen, unsigned flags, const char *where) {
    s->induced = 1;
    s->induced_gen = (gen < 0 || (flags & TENURE_COLLECT_AGGRESSIVE)) ? 2 : gen;
    s->induced_flags = flags;
    s->induced_seen = 0;
    s->induced_bg_seen = 0;
    tenure_result res = tenure_collect(s->rt, gen, flags);
    s->induced = 0;
    int final_pause = bgc_sync(s);
    if (res != TENURE_OK)
        diff(s, "tenure_collect(%d, %#x): %s", gen, flags, tenure_strerror(res));
    /* with background GC: the final pause of the background GC in progress may run instead
     * (a gen0 GC without a callback), and a NONBLOCKING gen2 GC runs none while one marks */
    int bgc_none_ok = s->bgc && (s->induced_bg_seen || final_pause ||
                                 ((gen == 2 || gen < 0) && (flags & TENURE_COLLECT_NONBLOCKING)));
    if (s->induced_seen == 0 && !(flags & TENURE_COLLECT_OPTIMIZED) && !bgc_none_ok)
        diff(s, "tenure_collect(%d, %#x) ran no GC", gen, flags);
    check_end(s, where);
}

void op_collect(program_state *s, rng *r) {
    static const int gens[] = {-1, 0, 0, 1, 1, 2};
    int gen = gens[rbelow(r, 6)];
    unsigned flags = 0;
    if (rchance(r, 30))
        flags |= TENURE_COLLECT_COMPACT;
    if (rchance(r, 12))
        flags |= TENURE_COLLECT_OPTIMIZED;
    if (rchance(r, 15))
        flags |= TENURE_COLLECT_COMPACT_LOH;
    if (rchance(r, s->bgc ? 40 : 10)) /* (--bgc: background GCs more often) */
        flags |= TENURE_COLLECT_NONBLOCKING;
    if (rchance(r, 6) && !(flags & TENURE_COLLECT_OPTIMIZED))
        flags |= TENURE_COLLECT_AGGRESSIVE;
    induced_collect(s, gen, flags, "induced GC");
    full_check(s, "full check after an induced GC");
}
