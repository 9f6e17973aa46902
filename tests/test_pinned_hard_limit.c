/*
 * pinned_hard_limit (issue 19): under GCHeapHardLimit=48m, pinned objects scattered over the
 * heap's life must not exhaust it. Long-lived pinned handles (a ring, replaced one at a time)
 * and short-lived ones hold objects in many regions of every generation while the program
 * keeps a few MB live and allocates hundreds of MB; the free space around pinned plugs is
 * given back (its pages decommitted and not counted against the limit), so no allocation is
 * refused while live data is far below the limit. Seeded; prints the committed peak.
 */
#include "test_util.h"

enum { PINS = 24, LIVE = 4096 };

int main(void) {
    uint64_t seed = tt_rng_init("pinned_hard_limit");
    (void)seed;
    double t0 = tt_now();
    tt_errlog log = {.fatal = 0};
    tenure_config cfg;
    tt_config(&cfg);
    cfg.GCHeapHardLimit = 48u << 20;
    tenure_runtime *rt = tt_create(&cfg, &log);
    const tenure_type *node_t = tt_register_node(rt);
    const tenure_type *bytes_t = tt_register_bytes(rt);

    void **live = calloc(LIVE, sizeof *live); /* about 1.5 MB live: nodes and arrays */
    TT_CHECK(live != NULL);
    tenure_root_area *ra = tenure_root_area_add(rt, live, LIVE);
    TT_CHECK(ra != NULL);
    tenure_handle *ring[PINS] = {0};
    uint64_t committed_peak = 0, refused = 0;
    size_t total = tt_scaled((size_t)600 << 20, (size_t)60 << 20), done = 0;
    for (uint64_t k = 0; done < total; k++) {
        void *p;
        if (tt_rand_below(4) == 0) {
            size_t len = (size_t)tt_rand_range(16, 1024);
            p = tenure_alloc_array(rt, bytes_t, len);
            done += len + 16;
        } else {
            p = tenure_alloc(rt, node_t);
            done += sizeof(tt_node);
        }
        if (p == NULL) {
            refused++;
            break;
        }
        if (tt_rand_below(8) == 0)
            live[tt_rand_below(LIVE)] = p;
        if (k % 20000 == 0) { /* a long-lived pin, replacing the oldest */
            size_t i = (size_t)(k / 20000) % PINS;
            if (ring[i])
                TT_CHECK_RESULT(tenure_handle_free(rt, ring[i]), TENURE_OK);
            ring[i] = tenure_handle_new(rt, TENURE_HANDLE_PINNED, p);
            TT_CHECK(ring[i] != NULL);
        }
        if (k % 100000 == 0) {
            uint64_t c = tt_stats(rt).committed_bytes;
            if (c > committed_peak)
                committed_peak = c;
        }
    }
    tenure_stats s = tt_stats(rt);
    printf("  %zu MB allocated, %" PRIu64 " GCs, live after the last GC %.1f MB, committed peak %.1f MB"
           " (limit 48), refused %" PRIu64 "\n",
           done >> 20, s.gc_count, s.live_bytes_after_gc / 1048576.0, committed_peak / 1048576.0, refused);
    printf("  at the end: committed %.1f MB, regions in use span %.1f MB\n", s.committed_bytes / 1048576.0,
           s.heap_bytes / 1048576.0);
    TT_CHECK(refused == 0, "an allocation was refused with %.1f MB live under a 48 MB limit: %s",
             s.live_bytes_after_gc / 1048576.0, tenure_strerror(tenure_last_error(rt)));
    TT_CHECK_RESULT(tenure_verify_heap(rt), TENURE_OK);
    for (size_t i = 0; i < PINS; i++)
        if (ring[i])
            TT_CHECK_RESULT(tenure_handle_free(rt, ring[i]), TENURE_OK);
    TT_CHECK_RESULT(tenure_root_area_remove(rt, ra), TENURE_OK);
    tenure_destroy(rt);
    free(live);
    return tt_finish("pinned_hard_limit", t0);
}
