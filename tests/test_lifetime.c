/*
 * lifetime: identity hashes survive hundreds of compactions unchanged and their table
 * shrinks when objects die; memory pressure induces gen2 GCs once it passes its budget and
 * writes the Increase/DecreaseMemoryPressure events.
 */
#include "test_util.h"
#include "tenure_events.h"

static tenure_runtime *rt;
static const tenure_type *node_t, *refarr_t;
static tt_errlog log_ = {.fatal = 1};

static void test_identity_hash(void) {
    enum { N = 10000 };
    void *arr = tenure_alloc_array(rt, refarr_t, N);
    tenure_handle *root = tenure_handle_new(rt, TENURE_HANDLE_STRONG, arr);
    static uint32_t hashes[N];
    static uintptr_t born_at[N];
    for (int i = 0; i < N; i++) {
        for (int k = 0; k < 3; k++)
            tt_node_new(rt, node_t, 999); /* garbage: compaction moves the survivors */
        tt_node *n = tt_node_new(rt, node_t, (uint64_t)i);
        arr = tenure_handle_get(rt, root);
        tenure_write_ref(rt, arr, &((void **)tenure_array_data(arr))[i], n);
        hashes[i] = tenure_identity_hash(rt, n);
        born_at[i] = (uintptr_t)n;
        TT_CHECK(hashes[i] != 0);
        TT_CHECK(tenure_identity_hash(rt, n) == hashes[i], "asking twice gave two hashes");
    }
    size_t moved = 0;
    for (int gc = 0; gc < 200; gc++) {
        arr = tenure_handle_get(rt, root);
        void **e = tenure_array_data(arr);
        void *before = e[gc % N];
        if (gc == 100) /* half of them die */
            for (int i = 0; i < N; i += 2)
                tenure_write_ref(rt, arr, &e[i], NULL);
        for (int k = 0; k < 500; k++)
            tt_node_new(rt, node_t, 999);
        TT_CHECK(tenure_collect(rt, gc % 3, TENURE_COLLECT_COMPACT) == TENURE_OK);
        arr = tenure_handle_get(rt, root);
        e = tenure_array_data(arr);
        (void)before;
        if (gc % 20 == 0 || gc > 195)
            for (int i = 0; i < N; i++)
                if (e[i])
                    TT_CHECK(tenure_identity_hash(rt, e[i]) == hashes[i], "object %d's hash changed after GC %d", i,
                             gc);
    }
    arr = tenure_handle_get(rt, root);
    for (int i = 0; i < N; i++)
        moved += ((void **)tenure_array_data(arr))[i] && (uintptr_t)((void **)tenure_array_data(arr))[i] != born_at[i];
    tenure_stats s;
    tenure_get_stats(rt, &s);
    TT_CHECK(s.sync_blocks == N / 2, "the hash table holds %llu entries for %d live objects",
             (unsigned long long)s.sync_blocks, N / 2);
    TT_CHECK(moved > 0, "nothing moved: the test would not see a broken table");
    log_.fatal = 0;
    log_.count = 0;
    TT_CHECK(tenure_identity_hash(rt, (char *)arr + 8) == 0 && log_.last == TENURE_INVALID_OBJECT);
    log_.fatal = 1;
    tenure_handle_free(rt, root);
    TT_CHECK(tenure_collect(rt, 2, 0) == TENURE_OK);
    tenure_get_stats(rt, &s);
    TT_CHECK(s.sync_blocks == 0, "the table keeps %llu entries of dead objects", (unsigned long long)s.sync_blocks);
    printf("  identity hash: %d objects through 200 compacting GCs (%zu of the survivors moved), table emptied\n", N,
           moved);
}

typedef struct pressure_events {
    uint64_t increased, decreased;
} pressure_events;

static void on_event(const tenure_event *ev, void *ctx) {
    pressure_events *p = ctx;
    uint64_t v = 0;
    if (!strcmp(ev->desc->name, "IncreaseMemoryPressure") && tenure_event_read_u64(ev, "BytesAllocated", &v) == 0)
        p->increased += v;
    if (!strcmp(ev->desc->name, "DecreaseMemoryPressure") && tenure_event_read_u64(ev, "BytesFreed", &v) == 0)
        p->decreased += v;
}

typedef struct gc_counts {
    int gen2, induced_gen2;
} gc_counts;

static void on_gc(tenure_runtime *r, const tenure_gc_info *info, void *ctx) {
    gc_counts *c = ctx;
    (void)r;
    if (info->generation == 2) {
        c->gen2++;
        c->induced_gen2 += info->reason == 1;
    }
}

static void test_pressure(void) {
    pressure_events pe = {0, 0};
    gc_counts gc = {0, 0};
    tenure_session *s = tenure_session_start_listener(rt, TENURE_KW_GC, TENURE_LEVEL_VERBOSE, on_event, &pe);
    TT_CHECK(s != NULL);
    tenure_set_gc_callback(rt, on_gc, &gc);
    for (int i = 0; i < 64; i++)
        TT_CHECK(tenure_add_memory_pressure(rt, 1u << 20) == TENURE_OK);
    TT_CHECK(tenure_memory_pressure(rt) == 64u << 20);
    TT_CHECK(gc.induced_gen2 >= 1, "64 MiB of pressure on a small heap induced no gen2 GC");
    TT_CHECK(gc.induced_gen2 <= 8, "64 MiB of pressure induced %d gen2 GCs: the budget does not grow", gc.induced_gen2);
    TT_CHECK(tenure_remove_memory_pressure(rt, 64u << 20) == TENURE_OK);
    TT_CHECK(tenure_memory_pressure(rt) == 0);
    log_.fatal = 0;
    TT_CHECK(tenure_remove_memory_pressure(rt, 1) == TENURE_INVALID_ARGUMENT);
    log_.fatal = 1;
    TT_CHECK(pe.increased == 64u << 20 && pe.decreased == 64u << 20, "pressure events: +%llu -%llu",
             (unsigned long long)pe.increased, (unsigned long long)pe.decreased);
    tenure_set_gc_callback(rt, NULL, NULL);
    TT_CHECK(tenure_session_stop(rt, s) == TENURE_OK);
    printf("  memory pressure: 64 MiB induced %d gen2 GCs; events +%llu -%llu bytes\n", gc.induced_gen2,
           (unsigned long long)pe.increased, (unsigned long long)pe.decreased);
}

/* Server GC: pressure belongs to no heap, so its budget is the instance's gen2 budget as one
 * heap's (least 4 x GCgen0size = 16 MiB here), not the sum of 8 heaps' least (128 MiB). */
static void test_pressure_server(void) {
    tenure_config cfg;
    tt_config(&cfg);
    cfg.gcServer = 1;
    cfg.GCHeapCount = 8;
    cfg.GCgen0size = 4u << 20;
    cfg.gcConcurrent = 0;
    tenure_runtime *srt = tt_create(&cfg, &log_);
    gc_counts gc = {0, 0};
    tenure_set_gc_callback(srt, on_gc, &gc);
    for (int i = 0; i < 40; i++)
        TT_CHECK(tenure_add_memory_pressure(srt, 1u << 20) == TENURE_OK);
    TT_CHECK(gc.induced_gen2 >= 1, "40 MiB of pressure on 8 empty server GC heaps induced no gen2 GC");
    TT_CHECK(gc.induced_gen2 <= 3, "40 MiB of pressure induced %d gen2 GCs", gc.induced_gen2);
    TT_CHECK(tenure_remove_memory_pressure(srt, 40u << 20) == TENURE_OK);
    tenure_set_gc_callback(srt, NULL, NULL);
    tenure_destroy(srt);
    printf("  memory pressure, server GC with 8 heaps: 40 MiB induced %d gen2 GCs\n", gc.induced_gen2);
}

int main(void) {
    double t0 = tt_now();
    tt_rng_init("lifetime");
    rt = tt_create(NULL, &log_);
    node_t = tt_register_node(rt);
    refarr_t = tt_register_ref_array(rt);
    test_identity_hash();
    test_pressure();
    test_pressure_server();
    TT_CHECK(tenure_verify_heap(rt) == TENURE_OK);
    tenure_destroy(rt);
    return tt_finish("lifetime", t0);
}
