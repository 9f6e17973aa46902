/*
 * loh: the large object heap.
 *
 *  A. placement: objects of at least GCLOHThreshold bytes (85,000 by default, or a configured
 *     value) go to the LOH (tenure_object_generation 3), smaller ones to gen0, pinned ones to
 *     the POH (4), including large pinned arrays; objects larger than a region (GCRegionSize
 *     256k) work and keep their contents.
 *  B. reuse: allocating and dropping large objects (byte arrays and reference arrays that point
 *     to young small objects) over and over keeps gen[3].size and heap_bytes bounded; the
 *     live ones keep their contents and references through gen0/gen1/gen2 GCs.
 *  C. freed LOH space is reused: drop a set of large objects, collect, allocate the same set
 *     again: the LOH does not grow past its previous peak.
 */
#include "test_util.h"

static const tenure_type *node_t, *refarr_t, *bytes_t;

static size_t aligned_size(size_t payload) { return (sizeof(tenure_array_header) + payload + 7) & ~(size_t)7; }

static void fill_bytes(void *arr, uint64_t id) {
    size_t len = tenure_array_length(arr);
    unsigned char *d = tenure_array_data(arr);
    for (size_t off = 0; off < len; off += 4096) {
        size_t chunk = len - off < 4096 ? len - off : 4096;
        memset(d + off, (int)((id + off / 4096) & 0xff), chunk);
    }
    if (len >= 16) {
        memcpy(d, &id, 8);
        uint64_t tail = ~id;
        memcpy(d + len - 8, &tail, 8);
    }
}

static void check_bytes(tenure_runtime *rt, void *arr, uint64_t id, size_t len) {
    TT_CHECK(tenure_is_object(rt, arr), "large object %" PRIu64 " is not an object", id);
    TT_CHECK(tenure_object_type(rt, arr) == bytes_t);
    TT_CHECK(tenure_array_length(arr) == len, "large object %" PRIu64 ": length %zu, expected %zu", id,
             tenure_array_length(arr), len);
    unsigned char *d = tenure_array_data(arr);
    uint64_t head, tail;
    memcpy(&head, d, 8);
    memcpy(&tail, d + len - 8, 8);
    TT_CHECK(head == id && tail == ~id, "large object %" PRIu64 ": contents changed", id);
    /* two bytes of every 4 KiB block, outside the head and tail words */
    for (size_t off = 4096; off + 8 < len; off += 4096) {
        unsigned char want = (unsigned char)((id + off / 4096) & 0xff);
        size_t last = off + 4095 < len - 9 ? off + 4095 : len - 9;
        TT_CHECK(d[off] == want && d[last] == want, "large object %" PRIu64 ": bytes at %zu changed", id, off);
    }
}

/* ------------------------------------------------------------------ A. placement */
static void test_placement(void) {
    tt_errlog log = {.fatal = 1};
    tenure_runtime *rt = tt_create(NULL, &log);
    node_t = tt_register_node(rt);
    refarr_t = tt_register_ref_array(rt);
    bytes_t = tt_register_bytes(rt);

    void *a = tenure_alloc_array(rt, bytes_t, 85000 - 16);
    TT_CHECK(a != NULL);
    TT_CHECK(tenure_object_size(rt, a) == 85000, "size %zu", tenure_object_size(rt, a));
    TT_CHECK(tenure_object_generation(rt, a) == 3, "an 85,000-byte object is in generation %d",
             tenure_object_generation(rt, a));
    a = tenure_alloc_array(rt, bytes_t, 85000 - 16 - 8);
    TT_CHECK(a != NULL);
    TT_CHECK(tenure_object_size(rt, a) == 84992);
    TT_CHECK(tenure_object_generation(rt, a) == 0, "an 84,992-byte object is in generation %d",
             tenure_object_generation(rt, a));
    a = tenure_alloc_array(rt, refarr_t, 20000);
    TT_CHECK(a != NULL && tenure_object_generation(rt, a) == 3);
    TT_CHECK(tenure_object_size(rt, a) == aligned_size(20000 * sizeof(void *)));
    a = tenure_alloc(rt, node_t);
    TT_CHECK(a != NULL && tenure_object_generation(rt, a) == 0);
    a = tenure_alloc_pinned(rt, node_t);
    TT_CHECK(a != NULL && tenure_object_generation(rt, a) == 4);
    a = tenure_alloc_array_pinned(rt, bytes_t, 100000);
    TT_CHECK(a != NULL && tenure_object_generation(rt, a) == 4, "a large pinned array is in generation %d",
             tenure_object_generation(rt, a));
    a = tenure_alloc_array_pinned(rt, refarr_t, 10);
    TT_CHECK(a != NULL && tenure_object_generation(rt, a) == 4);
    /* a large object stays in the LOH across GCs (it is never promoted elsewhere) */
    tenure_handle *h = tenure_handle_new(rt, TENURE_HANDLE_STRONG, tenure_alloc_array(rt, bytes_t, 90000));
    TT_CHECK(h != NULL && tenure_handle_get(rt, h) != NULL);
    uintptr_t where = (uintptr_t)tenure_handle_get(rt, h);
    fill_bytes(tenure_handle_get(rt, h), 42);
    tt_collect(rt, 0, 0);
    tt_collect(rt, -1, TENURE_COLLECT_COMPACT);
    tt_collect(rt, -1, 0);
    TT_CHECK(tenure_object_generation(rt, tenure_handle_get(rt, h)) == 3);
    TT_CHECK((uintptr_t)tenure_handle_get(rt, h) == where, "an LOH object moved without TENURE_COLLECT_COMPACT_LOH");
    check_bytes(rt, tenure_handle_get(rt, h), 42, 90000);
    tenure_stats s = tt_stats(rt);
    TT_CHECK(s.gen[3].size >= 90016 && s.gen[3].collections > 0);
    tenure_handle_free(rt, h);
    tenure_destroy(rt);

    /* a configured threshold */
    tenure_config cfg;
    tt_config(&cfg);
    cfg.GCLOHThreshold = 32768;
    rt = tt_create(&cfg, &log);
    bytes_t = tt_register_bytes(rt);
    a = tenure_alloc_array(rt, bytes_t, 40000);
    TT_CHECK(a != NULL && tenure_object_generation(rt, a) == 3, "GCLOHThreshold=32768 ignored");
    a = tenure_alloc_array(rt, bytes_t, 30000);
    TT_CHECK(a != NULL && tenure_object_generation(rt, a) == 0);
    tenure_destroy(rt);

    /* objects larger than a region */
    tt_config(&cfg);
    cfg.GCRegionSize = 256 << 10;
    rt = tt_create(&cfg, &log);
    bytes_t = tt_register_bytes(rt);
    node_t = tt_register_node(rt);
    static void *slots[4];
    memset(slots, 0, sizeof slots);
    tenure_root_area *ra = tenure_root_area_add(rt, slots, 4);
    TT_CHECK(ra != NULL);
    size_t sizes[3] = {1u << 20, 3u << 20, 300000};
    for (int k = 0; k < 3; k++) {
        slots[k] = tenure_alloc_array(rt, bytes_t, sizes[k]);
        TT_CHECK(slots[k] != NULL, "a %zu-byte object with 256 KiB regions", sizes[k]);
        TT_CHECK(tenure_object_generation(rt, slots[k]) == 3);
        fill_bytes(slots[k], 100 + (uint64_t)k);
    }
    for (uint64_t k = 0; k < 20000; k++) {
        tt_node *nn = tt_node_new(rt, node_t, k + 1);
        tenure_write_ref(rt, nn, &nn->a, slots[3]);
        tt_node_seal(nn);
        slots[3] = nn;
    }
    tt_collect(rt, 0, 0);
    tt_collect(rt, -1, TENURE_COLLECT_COMPACT);
    for (int k = 0; k < 3; k++)
        check_bytes(rt, slots[k], 100 + (uint64_t)k, sizes[k]);
    tt_node *p = (tt_node *)slots[3];
    for (uint64_t k = 20000; k >= 1; k--, p = p->a)
        TT_CHECK_NODE(rt, node_t, p, k);
    TT_CHECK(p == NULL);
    TT_CHECK_RESULT(tenure_verify_heap(rt), TENURE_OK);
    tenure_root_area_remove(rt, ra);
    tenure_destroy(rt);
}

/* ------------------------------------------------------------------ B. reuse loop */
#define SLOTS 32
#define REF_EVERY 64

typedef struct slot_info {
    int is_refs;
    size_t len;
    uint64_t id;
    uint64_t *ref_ids; /* is_refs: ids of the nodes (0: NULL) */
} slot_info;

static void check_slot(tenure_runtime *rt, void *obj, const slot_info *si) {
    if (!si->is_refs) {
        check_bytes(rt, obj, si->id, si->len);
        TT_CHECK(tenure_object_generation(rt, obj) == 3);
        return;
    }
    TT_CHECK(tenure_object_type(rt, obj) == refarr_t);
    TT_CHECK(tenure_array_length(obj) == si->len);
    TT_CHECK(tenure_object_generation(rt, obj) == 3);
    void **e = tt_refs(obj);
    for (size_t i = 0; i < si->len; i++) {
        if (si->ref_ids[i] == 0)
            TT_CHECK(e[i] == NULL, "ref array %" PRIu64 "[%zu] not NULL", si->id, i);
        else
            TT_CHECK_NODE(rt, node_t, e[i], si->ref_ids[i]);
    }
}

static void test_reuse(void) {
    double t0 = tt_now();
    tt_errlog log = {.fatal = 1};
    tenure_runtime *rt = tt_create(NULL, &log);
    node_t = tt_register_node(rt);
    refarr_t = tt_register_ref_array(rt);
    bytes_t = tt_register_bytes(rt);
    static void *slots[SLOTS];
    static slot_info info[SLOTS];
    memset(slots, 0, sizeof slots);
    memset(info, 0, sizeof info);
    tenure_root_area *ra = tenure_root_area_add(rt, slots, SLOTS);
    TT_CHECK(ra != NULL);

    size_t iters = tt_scaled(3000, 300);
    uint64_t id = 0, total = 0, max_loh_first = 0, max_loh_second = 0, max_heap = 0;
    tt_node *nn = NULL;
    TENURE_FRAME(rt, f, nn);
    for (size_t it = 0; it < iters; it++) {
        size_t s = (size_t)tt_rand_below(SLOTS);
        slot_info *si = &info[s];
        free(si->ref_ids);
        memset(si, 0, sizeof *si);
        si->id = ++id;
        slots[s] = NULL;
        if (tt_rand_below(4) == 0) {
            si->is_refs = 1;
            si->len = (size_t)tt_rand_range(11000, 40000);
            si->ref_ids = calloc(si->len, sizeof(uint64_t));
            TT_CHECK(si->ref_ids != NULL);
            slots[s] = tenure_alloc_array(rt, refarr_t, si->len);
            TT_CHECK(slots[s] != NULL);
            for (size_t i = 0; i < si->len; i += REF_EVERY) {
                nn = tt_node_new(rt, node_t, ++id);
                tenure_write_ref(rt, slots[s], &tt_refs(slots[s])[i], nn);
                si->ref_ids[i] = nn->id;
            }
            total += tenure_object_size(rt, slots[s]);
        } else {
            si->len = (size_t)tt_rand_range(85000, 400000);
            slots[s] = tenure_alloc_array(rt, bytes_t, si->len);
            TT_CHECK(slots[s] != NULL, "allocating %zu bytes failed", si->len);
            fill_bytes(slots[s], si->id);
            total += tenure_object_size(rt, slots[s]);
        }
        TT_CHECK(tenure_object_generation(rt, slots[s]) == 3);
        if (it % 100 == 99)
            tt_collect(rt, -1, 0);
        else if (it % 10 == 9)
            tt_collect(rt, (int)tt_rand_below(2), 0);
        if (it % 25 == 0 || it + 1 == iters)
            for (size_t k = 0; k < SLOTS; k++)
                if (slots[k] != NULL)
                    check_slot(rt, slots[k], &info[k]);
        tenure_stats st = tt_stats(rt);
        uint64_t *m = it < iters / 2 ? &max_loh_first : &max_loh_second;
        if (st.gen[3].size > *m)
            *m = st.gen[3].size;
        if (st.heap_bytes > max_heap)
            max_heap = st.heap_bytes;
    }
    TENURE_FRAME_POP(rt, f);
    tenure_stats st = tt_stats(rt);
    printf("  reuse: %zu large objects, %" PRIu64 " MiB allocated, %" PRIu64 " GCs (%" PRIu64
           " condemned the LOH); max LOH %" PRIu64 " MiB (first half) / %" PRIu64
           " MiB (second half), max heap %" PRIu64 " MiB, %.2f s\n",
           iters, total >> 20, st.gc_count, st.gen[3].collections, max_loh_first >> 20, max_loh_second >> 20,
           max_heap >> 20, tt_now() - t0);
    /* at most 32 live objects of at most 400 KiB: under 13 MiB live */
    TT_CHECK(max_loh_second <= (160u << 20), "LOH grew to %" PRIu64 " MiB", max_loh_second >> 20);
    TT_CHECK(max_heap <= (256u << 20), "heap grew to %" PRIu64 " MiB", max_heap >> 20);
    TT_CHECK(max_loh_second <= max_loh_first * 3 / 2 + (32u << 20), "LOH keeps growing: %" PRIu64 " -> %" PRIu64 " MiB",
             max_loh_first >> 20, max_loh_second >> 20);
    TT_CHECK(st.gen[3].collections > 0);
    TT_CHECK(st.gen[3].free_bytes <= st.gen[3].size);
    for (size_t k = 0; k < SLOTS; k++)
        free(info[k].ref_ids);
    TT_CHECK_RESULT(tenure_root_area_remove(rt, ra), TENURE_OK);
    tenure_destroy(rt);
}

/* ------------------------------------------------------------------ C. freed space reused */
static void test_free_space_reused(void) {
    tt_errlog log = {.fatal = 1};
    tenure_runtime *rt = tt_create(NULL, &log);
    bytes_t = tt_register_bytes(rt);
    static void *slots[40];
    memset(slots, 0, sizeof slots);
    tenure_root_area *ra = tenure_root_area_add(rt, slots, 40);
    TT_CHECK(ra != NULL);
    uint64_t peak = 0;
    for (int round = 0; round < 6; round++) {
        for (int k = 0; k < 40; k++) {
            slots[k] = tenure_alloc_array(rt, bytes_t, 200000 + (size_t)(k % 5) * 8000);
            TT_CHECK(slots[k] != NULL);
            fill_bytes(slots[k], (uint64_t)(round * 100 + k));
        }
        tt_collect(rt, -1, 0);
        for (int k = 0; k < 40; k++)
            check_bytes(rt, slots[k], (uint64_t)(round * 100 + k), 200000 + (size_t)(k % 5) * 8000);
        tenure_stats s = tt_stats(rt);
        TT_CHECK(s.gen[3].size - s.gen[3].free_bytes >= 40u * 200016u);
        if (round == 0)
            peak = s.gen[3].size;
        else
            TT_CHECK(s.gen[3].size <= peak + (1u << 20),
                     "round %d: LOH %" PRIu64 " KiB after freeing and reallocating the same objects "
                     "(first peak %" PRIu64 " KiB)",
                     round, s.gen[3].size >> 10, peak >> 10);
        memset(slots, 0, sizeof slots);
        tt_collect(rt, -1, 0);
        s = tt_stats(rt);
        TT_CHECK(s.gen[3].size - s.gen[3].free_bytes < (1u << 20),
                 "dead large objects still counted: size %" PRIu64 " free %" PRIu64, s.gen[3].size,
                 s.gen[3].free_bytes);
    }
    TT_CHECK_RESULT(tenure_root_area_remove(rt, ra), TENURE_OK);
    tenure_destroy(rt);
}

int main(void) {
    tt_rng_init("loh");
    double t0 = tt_now();
    test_placement();
    test_reuse();
    test_free_space_reused();
    printf("loh: OK (%.2f s)\n", tt_now() - t0);
    return 0;
}
