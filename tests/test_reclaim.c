/*
 * reclaim: unreachable objects are reclaimed.
 *
 *  A. drop a big structure: live_bytes_after_gc and heap_bytes fall by about its size after a
 *     full compacting GC; weak handles follow the objects while they live and are cleared
 *     when they die (WEAK_SHORT and WEAK_LONG).
 *  B. every root kind stops keeping its object alive once it is removed: handle freed / set to
 *     NULL, frame popped, root area removed or its slot cleared, root scanner removed.
 *  C. a loop that allocates and drops (short-lived garbage, and objects that live long enough
 *     to reach gen2 and die there) keeps heap_bytes bounded, in the default mode and in
 *     always-sweep mode.
 */
#include "test_util.h"

static const tenure_type *node_t, *refarr_t, *bytes_t;

/* ------------------------------------------------------------------ A. drop a big structure */
static void test_drop_structure(void) {
    tt_errlog log = {.fatal = 1};
    tenure_runtime *rt = tt_create(NULL, &log);
    node_t = tt_register_node(rt);
    refarr_t = tt_register_ref_array(rt);
    bytes_t = tt_register_bytes(rt);

    size_t n = tt_scaled(200000, 20000), nblobs = tt_scaled(2000, 200);
    tenure_handle *root = tenure_handle_new(rt, TENURE_HANDLE_STRONG, NULL);
    TT_CHECK(root != NULL);
    TT_CHECK(tenure_handle_get(rt, root) == NULL);
    void *arr = NULL;
    tt_node *head = NULL, *nn = NULL;
    void *blob = NULL;
    TENURE_FRAME(rt, f, arr, head, nn, blob);
    arr = tenure_alloc_array(rt, refarr_t, nblobs + 1);
    TT_CHECK(arr != NULL);
    TT_CHECK_RESULT(tenure_handle_set(rt, root, arr), TENURE_OK);
    uint64_t bytes = tenure_object_size(rt, arr);
    for (size_t i = n; i-- > 0;) {
        nn = tt_node_new(rt, node_t, i + 1);
        tenure_write_ref(rt, nn, &nn->a, head);
        tt_node_seal(nn);
        head = nn;
        bytes += tenure_object_size(rt, nn);
    }
    tenure_write_ref(rt, arr, &tt_refs(arr)[0], head);
    for (size_t i = 1; i <= nblobs; i++) {
        blob = tenure_alloc_array(rt, bytes_t, 1000);
        TT_CHECK(blob != NULL);
        memset(tenure_array_data(blob), (int)i, 1000);
        tenure_write_ref(rt, arr, &tt_refs(arr)[i], blob);
        bytes += tenure_object_size(rt, blob);
    }
    TT_CHECK(bytes >= n * sizeof(tt_node) + nblobs * 1016);
    tenure_handle *weak_s = tenure_handle_new(rt, TENURE_HANDLE_WEAK_SHORT, head);
    tenure_handle *weak_l = tenure_handle_new(rt, TENURE_HANDLE_WEAK_LONG, tt_refs(arr)[nblobs]);
    TT_CHECK(weak_s != NULL && weak_l != NULL);
    TT_CHECK(tenure_handle_count(rt) == 3);
    arr = head = nn = blob = NULL;
    TENURE_FRAME_POP(rt, f);

    tenure_stats s0 = tt_stats(rt);
    TT_CHECK(s0.bytes_allocated >= bytes, "bytes_allocated %" PRIu64 " < %" PRIu64, s0.bytes_allocated, bytes);
    tt_collect(rt, -1, TENURE_COLLECT_COMPACT);
    tt_collect(rt, -1, TENURE_COLLECT_COMPACT);
    tenure_stats s1 = tt_stats(rt);
    printf("  structure of %" PRIu64 " KiB: live %" PRIu64 " KiB, heap %" PRIu64 " KiB\n", bytes >> 10,
           s1.live_bytes_after_gc >> 10, s1.heap_bytes >> 10);
    TT_CHECK(s1.live_bytes_after_gc >= bytes, "live_bytes_after_gc %" PRIu64 " < %" PRIu64, s1.live_bytes_after_gc,
             bytes);
    TT_CHECK(s1.heap_bytes >= s1.live_bytes_after_gc);
    TT_CHECK(s1.committed_bytes >= s1.live_bytes_after_gc);

    /* the weak handles follow the (moved) objects */
    arr = tenure_handle_get(rt, root);
    TT_CHECK(tenure_handle_get(rt, weak_s) == tt_refs(arr)[0], "weak short handle lost its object");
    TT_CHECK(tenure_handle_get(rt, weak_l) == tt_refs(arr)[nblobs], "weak long handle lost its object");
    head = (tt_node *)tt_refs(arr)[0];
    for (size_t i = 0; i < n; i++) {
        TT_CHECK_NODE(rt, node_t, head, i + 1);
        head = head->a;
    }
    TT_CHECK(head == NULL);
    for (size_t i = 1; i <= nblobs; i++) {
        unsigned char *d = tenure_array_data(tt_refs(arr)[i]);
        TT_CHECK(d[0] == (unsigned char)i && d[999] == (unsigned char)i);
    }
    arr = NULL;

    /* drop it */
    TT_CHECK_RESULT(tenure_handle_set(rt, root, NULL), TENURE_OK);
    tt_collect(rt, -1, TENURE_COLLECT_COMPACT);
    tt_collect(rt, -1, TENURE_COLLECT_COMPACT);
    tenure_stats s2 = tt_stats(rt);
    printf("  after the drop: live %" PRIu64 " KiB, heap %" PRIu64 " KiB, committed %" PRIu64 " KiB\n",
           s2.live_bytes_after_gc >> 10, s2.heap_bytes >> 10, s2.committed_bytes >> 10);
    TT_CHECK(tenure_handle_get(rt, weak_s) == NULL, "weak short handle not cleared");
    TT_CHECK(tenure_handle_get(rt, weak_l) == NULL, "weak long handle not cleared");
    TT_CHECK(s2.live_bytes_after_gc + bytes * 9 / 10 <= s1.live_bytes_after_gc,
             "live bytes did not drop: %" PRIu64 " -> %" PRIu64, s1.live_bytes_after_gc, s2.live_bytes_after_gc);
    TT_CHECK(s2.heap_bytes + bytes / 2 <= s1.heap_bytes, "heap bytes did not drop: %" PRIu64 " -> %" PRIu64,
             s1.heap_bytes, s2.heap_bytes);
    TT_CHECK(s2.gc_count == s1.gc_count + 2);
    TT_CHECK_RESULT(tenure_handle_free(rt, root), TENURE_OK);
    TT_CHECK_RESULT(tenure_handle_free(rt, weak_s), TENURE_OK);
    TT_CHECK_RESULT(tenure_handle_free(rt, weak_l), TENURE_OK);
    TT_CHECK(tenure_handle_count(rt) == 0);
    tenure_destroy(rt);
}

/* ------------------------------------------------------------------ B. each root kind */
static void *scan_slot;
static void scan_fn(tenure_runtime *rt, tenure_visitor *v, void *ctx) {
    (void)rt;
    void **slot = (void **)ctx;
    if (*slot != NULL)
        tenure_visit(v, slot);
}

static tt_node *new_rooted(tenure_runtime *rt, uint64_t id) { return tt_node_new(rt, node_t, id); }

/* Collect twice; the weak handle must (alive) or must not (dead) still have its node. */
static void expect(tenure_runtime *rt, tenure_handle *weak, int alive, uint64_t id, const char *what) {
    tt_collect(rt, 0, 0);
    tt_collect(rt, -1, TENURE_COLLECT_COMPACT);
    tt_node *n = (tt_node *)tenure_handle_get(rt, weak);
    if (alive) {
        TT_CHECK(n != NULL, "%s: object collected while rooted", what);
        TT_CHECK_NODE(rt, node_t, n, id);
    } else {
        TT_CHECK(n == NULL, "%s: object still alive after its root was removed", what);
    }
}

static tenure_handle *frame_part(tenure_runtime *rt) {
    tt_node *local = NULL;
    TENURE_FRAME(rt, f, local);
    local = new_rooted(rt, 3);
    tenure_handle *weak = tenure_handle_new(rt, TENURE_HANDLE_WEAK_SHORT, local);
    TT_CHECK(weak != NULL);
    expect(rt, weak, 1, 3, "frame");
    TT_CHECK(local == tenure_handle_get(rt, weak), "frame slot not updated");
    TENURE_FRAME_POP(rt, f);
    return weak;
}

static void test_root_kinds(void) {
    tt_errlog log = {.fatal = 1};
    tenure_runtime *rt = tt_create(NULL, &log);
    node_t = tt_register_node(rt);

    /* strong handle: freed, and set to NULL */
    tenure_handle *strong = tenure_handle_new(rt, TENURE_HANDLE_STRONG, new_rooted(rt, 1));
    TT_CHECK(strong != NULL);
    tenure_handle *weak = tenure_handle_new(rt, TENURE_HANDLE_WEAK_SHORT, tenure_handle_get(rt, strong));
    expect(rt, weak, 1, 1, "strong handle");
    TT_CHECK_RESULT(tenure_handle_free(rt, strong), TENURE_OK);
    expect(rt, weak, 0, 1, "freed strong handle");
    TT_CHECK_RESULT(tenure_handle_free(rt, weak), TENURE_OK);

    strong = tenure_handle_new(rt, TENURE_HANDLE_STRONG, new_rooted(rt, 2));
    weak = tenure_handle_new(rt, TENURE_HANDLE_WEAK_LONG, tenure_handle_get(rt, strong));
    expect(rt, weak, 1, 2, "strong handle (2)");
    TT_CHECK_RESULT(tenure_handle_set(rt, strong, NULL), TENURE_OK);
    expect(rt, weak, 0, 2, "strong handle set to NULL");
    TT_CHECK_RESULT(tenure_handle_free(rt, weak), TENURE_OK);
    TT_CHECK_RESULT(tenure_handle_free(rt, strong), TENURE_OK);

    /* frame */
    weak = frame_part(rt);
    expect(rt, weak, 0, 3, "popped frame");
    TT_CHECK_RESULT(tenure_handle_free(rt, weak), TENURE_OK);

    /* root area: slot cleared, then the area removed */
    static void *area[4];
    tenure_root_area *ra = tenure_root_area_add(rt, area, 4);
    TT_CHECK(ra != NULL);
    area[2] = new_rooted(rt, 4);
    weak = tenure_handle_new(rt, TENURE_HANDLE_WEAK_SHORT, area[2]);
    expect(rt, weak, 1, 4, "root area");
    TT_CHECK(area[2] == tenure_handle_get(rt, weak), "root area slot not updated");
    area[2] = NULL;
    expect(rt, weak, 0, 4, "cleared root area slot");
    TT_CHECK_RESULT(tenure_handle_free(rt, weak), TENURE_OK);
    area[3] = new_rooted(rt, 5);
    weak = tenure_handle_new(rt, TENURE_HANDLE_WEAK_SHORT, area[3]);
    expect(rt, weak, 1, 5, "root area (2)");
    TT_CHECK_RESULT(tenure_root_area_remove(rt, ra), TENURE_OK);
    expect(rt, weak, 0, 5, "removed root area");
    area[3] = NULL;
    TT_CHECK_RESULT(tenure_handle_free(rt, weak), TENURE_OK);

    /* root scanner */
    tenure_root_scanner *sc = tenure_root_scanner_add(rt, scan_fn, &scan_slot);
    TT_CHECK(sc != NULL);
    scan_slot = new_rooted(rt, 6);
    weak = tenure_handle_new(rt, TENURE_HANDLE_WEAK_SHORT, scan_slot);
    expect(rt, weak, 1, 6, "root scanner");
    TT_CHECK(scan_slot == tenure_handle_get(rt, weak), "root scanner slot not updated");
    TT_CHECK_RESULT(tenure_root_scanner_remove(rt, sc), TENURE_OK);
    expect(rt, weak, 0, 6, "removed root scanner");
    scan_slot = NULL;
    TT_CHECK_RESULT(tenure_handle_free(rt, weak), TENURE_OK);

    /* objects reachable only through a dead object die with it (no false retention by the
     * weak handle's target either) */
    tt_node *a = NULL, *b = NULL;
    TENURE_FRAME(rt, f, a, b);
    a = new_rooted(rt, 7);
    b = new_rooted(rt, 8);
    tenure_write_ref(rt, a, &a->a, b);
    tt_node_seal(a);
    tenure_handle *wa = tenure_handle_new(rt, TENURE_HANDLE_WEAK_SHORT, a);
    tenure_handle *wb = tenure_handle_new(rt, TENURE_HANDLE_WEAK_SHORT, b);
    b = NULL;
    expect(rt, wb, 1, 8, "object reachable through another");
    a = NULL;
    expect(rt, wb, 0, 8, "object reachable only through a dead object");
    TT_CHECK(tenure_handle_get(rt, wa) == NULL);
    TENURE_FRAME_POP(rt, f);
    tenure_handle_free(rt, wa);
    tenure_handle_free(rt, wb);
    TT_CHECK(tenure_handle_count(rt) == 0);
    tenure_destroy(rt);
}

/* ------------------------------------------------------------------ C. bounded heap */
#define RING 256
#define RING_LIST 2000 /* nodes per medium-lived list: 80 KB */
#define HEAP_BOUND ((uint64_t)160 << 20)

/* Short-lived garbage goes on dying in gen0; medium-lived lists are dropped as soon as they
 * have reached gen2, so hundreds of MiB pass through gen2 and die there, while the live set
 * stays at RING lists (20 MiB). */
static void bounded_loop(int mode) {
    double t0 = tt_now();
    tt_errlog log = {.fatal = 1};
    tenure_config cfg;
    tt_config(&cfg);
    cfg.GCCompactMode = (uint32_t)mode;
    if (getenv("TENURE_GCgen0size") == NULL)
        cfg.GCgen0size = (4u << 20) / tt_heaps(&cfg); /* 4 MiB in all (per heap under server GC) */
    /* a small fixed gen1 budget: gen1 GCs often enough that the lists reach gen2 within the
     * loop (the default budget, half of what lives in the older generations, lets one seed in
     * twenty bring less than HEAP_BOUND through gen2) */
    if (getenv("TENURE_GCgen1size") == NULL)
        cfg.GCgen1size = (8u << 20) / tt_heaps(&cfg); /* 8 MiB in all (per heap under server GC) */
    tenure_runtime *rt = tt_create(&cfg, &log);
    node_t = tt_register_node(rt);
    bytes_t = tt_register_bytes(rt);

    static void *ring[RING];
    static uint64_t ring_base[RING];
    memset(ring, 0, sizeof ring);
    tenure_root_area *ra = tenure_root_area_add(rt, ring, RING);
    TT_CHECK(ra != NULL);
    size_t iters = tt_scaled(300, 40), temp_len = tt_scaled(50000, 5000);
    size_t ring_list = tt_scale() < 0.5 ? RING_LIST / 10 : RING_LIST;
    uint64_t id = 0, max_first = 0, max_second = 0, total = 0, gen2_dropped = 0;
    tt_node *head = NULL, *n = NULL;
    void *blob = NULL;
    TENURE_FRAME(rt, f, head, n, blob);
    for (size_t it = 0; it < iters; it++) {
        /* short-lived: a temporary list and some byte arrays, dropped right away */
        head = NULL;
        for (size_t k = 0; k < temp_len; k++) {
            n = tt_node_new(rt, node_t, ++id);
            tenure_write_ref(rt, n, &n->a, head);
            head = n;
            if (k % 1000 == 0) {
                blob = tenure_alloc_array(rt, bytes_t, 4000);
                TT_CHECK(blob != NULL);
            }
        }
        total += temp_len * sizeof(tt_node);
        head = n = NULL;
        blob = NULL;
        /* medium-lived: replace (up to 32) lists that have reached gen2, and fill empty slots */
        size_t replaced = 0;
        for (size_t slot = (size_t)tt_rand_below(RING), k = 0; k < RING && replaced < 32;
             k++, slot = (slot + 1) % RING) {
            if (ring[slot] != NULL && tenure_object_generation(rt, ring[slot]) != 2)
                continue;
            if (ring[slot] != NULL)
                gen2_dropped += ring_list * sizeof(tt_node);
            ring[slot] = NULL;
            uint64_t base = id + 1;
            head = NULL;
            for (size_t j = ring_list; j-- > 0;) {
                n = tt_node_new(rt, node_t, base + j);
                tenure_write_ref(rt, n, &n->a, head);
                tt_node_seal(n);
                head = n;
            }
            id += ring_list;
            ring[slot] = head;
            ring_base[slot] = base;
            total += ring_list * sizeof(tt_node);
            replaced++;
        }
        head = n = NULL;
        tenure_stats s = tt_stats(rt);
        if (it < iters / 2) {
            if (s.heap_bytes > max_first)
                max_first = s.heap_bytes;
        } else if (s.heap_bytes > max_second) {
            max_second = s.heap_bytes;
        }
        TT_CHECK(s.heap_bytes <= HEAP_BOUND,
                 "mode %d, iteration %zu: heap_bytes %" PRIu64 " MiB with %zu MiB live; %" PRIu64
                 " MiB of gen2 objects dropped so far, %" PRIu64 " gen2 GCs",
                 mode, it, s.heap_bytes >> 20, (size_t)(RING * ring_list * sizeof(tt_node)) >> 20, gen2_dropped >> 20,
                 s.gen[2].collections);
        if (it % 20 == 0) {
            for (size_t slot = 0; slot < RING; slot++) {
                tt_node *p = (tt_node *)ring[slot];
                if (p == NULL)
                    continue; /* not filled yet */
                for (uint64_t k = 0; k < ring_list; k++, p = p->a)
                    TT_CHECK_NODE(rt, node_t, p, ring_base[slot] + k);
                TT_CHECK(p == NULL);
            }
        }
    }
    TENURE_FRAME_POP(rt, f);
    tenure_stats s = tt_stats(rt);
    printf("  bounded loop mode %d: %" PRIu64 " MiB allocated, %" PRIu64 " MiB dropped from gen2, %" PRIu64
           " GCs (gen1 %" PRIu64 ", gen2 %" PRIu64 "), heap max %" PRIu64 " MiB (first half) / %" PRIu64
           " MiB (second half), %.2f s\n",
           mode, total >> 20, gen2_dropped >> 20, s.gc_count, s.gen[1].collections, s.gen[2].collections,
           max_first >> 20, max_second >> 20, tt_now() - t0);
    TT_CHECK(s.bytes_allocated >= total);
    TT_CHECK(s.gc_count >= 10, "only %" PRIu64 " GCs for %" PRIu64 " MiB allocated with a 4 MiB gen0", s.gc_count,
             total >> 20);
    TT_CHECK(max_second <= 2 * max_first + (32u << 20),
             "heap keeps growing: %" PRIu64 " MiB in the first half, %" PRIu64 " MiB in the second", max_first >> 20,
             max_second >> 20);
    /* the loop is only meaningful if objects did pass through gen2: more than the bound */
    if (tt_scale() >= 1.0)
        TT_CHECK(gen2_dropped > HEAP_BOUND, "only %" PRIu64 " MiB reached gen2 and died (gen1 GCs: %" PRIu64 ")",
                 gen2_dropped >> 20, s.gen[1].collections);
    TT_CHECK_RESULT(tenure_root_area_remove(rt, ra), TENURE_OK);
    tenure_destroy(rt);
}

/* Almost everything dies young (1% lives a little longer): the heap stays small in every mode,
 * even when so little survives that no gen1 GC is ever needed. */
static void garbage_loop(int mode) {
    double t0 = tt_now();
    tt_errlog log = {.fatal = 1};
    tenure_config cfg;
    tt_config(&cfg);
    cfg.GCCompactMode = (uint32_t)mode;
    if (getenv("TENURE_GCgen0size") == NULL)
        cfg.GCgen0size = (4u << 20) / tt_heaps(&cfg); /* 4 MiB in all (per heap under server GC) */
    tenure_runtime *rt = tt_create(&cfg, &log);
    node_t = tt_register_node(rt);
    static void *ring[64];
    memset(ring, 0, sizeof ring);
    tenure_root_area *ra = tenure_root_area_add(rt, ring, 64);
    TT_CHECK(ra != NULL);
    size_t iters = tt_scaled(400, 40);
    uint64_t max_heap = 0;
    for (size_t it = 0; it < iters; it++) {
        for (size_t k = 0; k < 20000; k++) {
            tt_node *n = tt_node_new(rt, node_t, k + 1);
            if (k % 100 == 0)
                ring[(it * 200 + k / 100) % 64] = n;
        }
        tenure_stats s = tt_stats(rt);
        if (s.heap_bytes > max_heap)
            max_heap = s.heap_bytes;
        TT_CHECK(s.heap_bytes <= ((uint64_t)64 << 20),
                 "mode %d, iteration %zu: heap_bytes %" PRIu64 " MiB for a few KiB live (gen1 %" PRIu64
                 " MiB of which %" PRIu64 " MiB free; %" PRIu64 " GCs, %" PRIu64 " of gen1)",
                 mode, it, s.heap_bytes >> 20, s.gen[1].size >> 20, s.gen[1].free_bytes >> 20, s.gc_count,
                 s.gen[1].collections);
    }
    for (size_t i = 0; i < 64; i++)
        TT_CHECK(ring[i] == NULL || tenure_is_object(rt, ring[i]));
    printf("  garbage loop mode %d: %zu MiB allocated, max heap %" PRIu64 " KiB, %.2f s\n", mode,
           iters * 20000 * sizeof(tt_node) >> 20, max_heap >> 10, tt_now() - t0);
    TT_CHECK_RESULT(tenure_root_area_remove(rt, ra), TENURE_OK);
    tenure_destroy(rt);
}

int main(void) {
    tt_rng_init("reclaim");
    double t0 = tt_now();
    test_drop_structure();
    test_root_kinds();
    bounded_loop(0);
    bounded_loop(2);
    garbage_loop(0);
    garbage_loop(2);
    printf("reclaim: OK (%.2f s)\n", tt_now() - t0);
    return 0;
}
