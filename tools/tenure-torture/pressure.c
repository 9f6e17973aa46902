/*
 * tenure-torture: memory pressure
 * Adds and removes, and the GC an add may induce.
 */
#include "torture.h"

void op_pressure(program_state *s, rng *r) {
    if (s->pressure < (48u << 20) && rchance(r, 60)) {
        uint64_t b = rchance(r, 80) ? rrange(r, 1, 3u << 20) : rrange(r, 3u << 20, 9u << 20);
        uint64_t before = s->gcs;
        s->pressure += b;
        s->press_since += b;
        uint64_t since = s->press_since;
        s->pressure_call = 1;
        s->pressure_gcs = 0;
        tenure_result res = tenure_add_memory_pressure(s->rt, b);
        s->pressure_call = 0;
        if (res != TENURE_OK)
            diff(s, "tenure_add_memory_pressure(%" PRIu64 "): %s", b, tenure_strerror(res));
        if (s->gcs != before && s->pressure_gcs == 0)
            diff(s, "tenure_add_memory_pressure(%" PRIu64 ") ran a GC the callback did not see", b);
        bgc_sync(s);
        (void)since;
    } else if (rchance(r, 90) || !s->pressure) {
        uint64_t b = rbelow(r, s->pressure + 1);
        tenure_result res = tenure_remove_memory_pressure(s->rt, b);
        if (res != TENURE_OK)
            diff(s, "tenure_remove_memory_pressure(%" PRIu64 " of %" PRIu64 "): %s", b, s->pressure,
                 tenure_strerror(res));
        s->pressure -= b;
    } else {
        expect_error(s, TENURE_INVALID_ARGUMENT);
        tenure_result res = tenure_remove_memory_pressure(s->rt, s->pressure + 1);
        expect_done(s);
        if (res != TENURE_INVALID_ARGUMENT || !s->got_err)
            diff(s, "removing more pressure than was added: %s, hook calls %d", tenure_strerror(res), s->got_err);
        tenure_clear_error(s->rt);
    }
    if (tenure_memory_pressure(s->rt) != s->pressure)
        diff(s, "tenure_memory_pressure says %" PRIu64 ", the model %" PRIu64, tenure_memory_pressure(s->rt),
             s->pressure);
}
