/*
 * heap_dump_bench: the cost of a heap dump (tenure_heap_dump: GCBulkNode / GCBulkEdge /
 * GCBulkRootEdge / BulkType events) on a heap of N objects (default 1,000,000: Pairs with two
 * random references, held by reference arrays of 1000 under one handle). Prints the time of a
 * plain full GC, of a dump to a listener that only counts records, and of a dump to a CTF trace
 * (in a fresh directory under /tmp), as objects per second of the dump's extra time.
 *
 *     heap_dump_bench [objects]
 */
#define _POSIX_C_SOURCE 200809L
#include "tenure.h"
#include "tenure_events.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef struct pair {
    tenure_header h;
    void *a, *b;
    long v;
} pair;

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static size_t records;
static void count(const tenure_event *e, void *ctx) {
    uint64_t n = 0;
    (void)ctx;
    if (tenure_event_read_u64(e, "Count", &n) == TENURE_OK)
        records += n;
}

int main(int argc, char **argv) {
    size_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : 1000000;
    tenure_config cfg;
    tenure_config_init(&cfg);
    cfg.GCConservativeStack = 0;
    tenure_runtime *rt = tenure_create(&cfg, NULL);
    static const size_t offs[] = {offsetof(pair, a), offsetof(pair, b)};
    tenure_type_desc d = {.name = "Pair", .size = sizeof(pair), .ref_offsets = offs, .ref_count = 2};
    const tenure_type *pair_t = tenure_type_register(rt, &d);
    d = (tenure_type_desc){.name = "Object[]",
                           .elem_size = sizeof(void *),
                           .flags = TENURE_TYPE_ARRAY | TENURE_TYPE_REF_ARRAY};
    const tenure_type *arr_t = tenure_type_register(rt, &d);
    size_t chunks = (n + 999) / 1000;
    tenure_handle *top = tenure_handle_new(rt, TENURE_HANDLE_STRONG, tenure_alloc_array(rt, arr_t, chunks));
    uint64_t rng = 42;
    for (size_t c = 0; c < chunks; c++) {
        void *chunk = tenure_alloc_array(rt, arr_t, 1000);
        void *t = tenure_handle_get(rt, top);
        tenure_write_ref(rt, t, (void **)tenure_array_data(t) + c, chunk);
        for (size_t i = 0; i < 1000 && c * 1000 + i < n; i++) {
            pair *p = tenure_alloc(rt, pair_t);
            t = tenure_handle_get(rt, top);
            void **ch = tenure_array_data(((void **)tenure_array_data(t))[c]);
            tenure_write_ref(rt, ((void **)tenure_array_data(t))[c], &ch[i], p);
            rng = rng * 6364136223846793005ull + 1442695040888963407ull;
            size_t j = (size_t)(rng >> 33) % (c * 1000 + i + 1);
            void **cj = tenure_array_data(((void **)tenure_array_data(t))[j / 1000]);
            tenure_write_ref(rt, p, &p->a, cj[j % 1000]);
        }
    }
    /* each the best of 5 (the machine may be shared) */
    double gc = 1e9, listener = 1e9, ctf = 1e9, t0;
    for (int r = 0; r < 5; r++) {
        t0 = now();
        tenure_collect(rt, 2, 0);
        gc = now() - t0 < gc ? now() - t0 : gc;
    }
    tenure_session *s = tenure_session_start_listener(rt, TENURE_KW_GC_HEAP_DUMP | TENURE_KW_TYPE, 4, count, NULL);
    for (int r = 0; r < 5; r++) {
        t0 = now();
        tenure_heap_dump(rt);
        listener = now() - t0 < listener ? now() - t0 : listener;
    }
    tenure_session_stop(rt, s);
    records /= 5;

    char dir[64];
    snprintf(dir, sizeof dir, "/tmp/tenure-dump-bench-%ld", (long)getpid());
    s = tenure_session_start_ctf(rt, TENURE_KW_GC_HEAP_DUMP | TENURE_KW_TYPE, 4, dir);
    for (int r = 0; r < 5; r++) {
        t0 = now();
        tenure_heap_dump(rt);
        tenure_session_flush(rt, s);
        ctf = now() - t0 < ctf ? now() - t0 : ctf;
    }
    t0 = now();
    tenure_session_stop(rt, s);
    double total = ctf + (now() - t0);

    size_t objects = n + chunks + 1;
    printf("heap_dump_bench: %zu objects, %zu records to the listener\n", objects, records);
    printf("  full GC                  %8.1f ms\n", gc * 1e3);
    printf("  dump, counting listener  %8.1f ms  (dump alone %.1f ms: %.1f M objects/s)\n", listener * 1e3,
           (listener - gc) * 1e3, objects / (listener - gc) / 1e6);
    printf("  dump, CTF trace          %8.1f ms  (dump alone %.1f ms: %.1f M objects/s; %.1f ms with the close (5 "
           "dumps in the trace))\n",
           ctf * 1e3, (ctf - gc) * 1e3, objects / (ctf - gc) / 1e6, total * 1e3);
    printf("  trace directory: %s (remove it)\n", dir);
    tenure_destroy(rt);
    return 0;
}
