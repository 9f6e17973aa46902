/*
 * alloc_workload MODE: a known amount of allocation for tenure-report's allocation figures (issue
 * 38, finding 5: "Total allocated 1.057 MB" for 10.5 MB when objects are pinned). Run with
 * TENURE_TRACE set (check_report.py alloc); allocates ALLOC_MB of small arrays, one in 64 kept a
 * while in a ring, and pins objects the MODE's way:
 *
 *   plain    nothing pinned
 *   stack    one object in 16, the last STACK_PINS of them, referenced from this thread's stack
 *            (the conservative scan pins them, as an interpreter's C stack does): the GCs keep the
 *            gen0 regions that hold them and the program allocates into the gaps between them
 *   handles  one object in 32 held by a pinned handle for the next 4096 allocations
 *   poh      one object in 8 allocated on the pinned object heap (tenure_alloc_array_pinned)
 *   loh      one object in 256 a large one (90,000 bytes: the large object heap)
 *
 * and prints one line from tenure_get_stats: what was allocated in all, and up to the last GC
 * (the callback's tenure_get_stats):
 *
 *   WORKLOAD {"allocated_bytes": N, "allocated_at_last_gc": N, "gc_count": N}
 */
#define _POSIX_C_SOURCE 200809L
#include "tenure.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ALLOC_MB 16
#define RING 4096
#define STACK_PINS 16384
#define HANDLE_PINS 128

typedef struct at_gc {
    uint64_t gcs, allocated;
} at_gc;

static void on_gc(tenure_runtime *rt, const tenure_gc_info *info, void *ctx) {
    (void)info;
    tenure_stats st;
    tenure_get_stats(rt, &st);
    at_gc *a = ctx;
    a->gcs++;
    a->allocated = st.bytes_allocated;
}

static void fail(const char *what, tenure_runtime *rt) {
    fprintf(stderr, "alloc_workload: %s: %s\n", what, rt ? tenure_strerror(tenure_last_error(rt)) : "");
    exit(1);
}

static const tenure_type *array_type(tenure_runtime *rt, const char *name, size_t elem, unsigned flags) {
    tenure_type_desc d;
    memset(&d, 0, sizeof d);
    d.name = name;
    d.size = sizeof(tenure_array_header);
    d.elem_size = elem;
    d.flags = TENURE_TYPE_ARRAY | flags;
    const tenure_type *t = tenure_type_register(rt, &d);
    if (!t)
        fail("type registration failed", rt);
    return t;
}

typedef struct workload {
    tenure_runtime *rt;
    const tenure_type *bytes_t;
    tenure_handle *ring_h;
    const char *mode;
    tenure_handle *pins[HANDLE_PINS];
} workload;

static void *allocate(workload *w, uint64_t i) {
    size_t len = strcmp(w->mode, "loh") == 0 && i % 256 == 0 ? 90000 : 16 + (size_t)(i * 37 % 600);
    int poh = strcmp(w->mode, "poh") == 0 && i % 8 == 0;
    void *o = poh ? tenure_alloc_array_pinned(w->rt, w->bytes_t, len) : tenure_alloc_array(w->rt, w->bytes_t, len);
    if (!o)
        fail("allocation failed", w->rt);
    if (i % 64 == 0) {
        void *ring = tenure_handle_get(w->rt, w->ring_h);
        tenure_write_ref(w->rt, ring, &((void **)tenure_array_data(ring))[(i / 64) % RING], o);
    }
    if (strcmp(w->mode, "handles") == 0 && i % 32 == 0) {
        tenure_handle **h = &w->pins[(i / 32) % HANDLE_PINS];
        if (*h)
            tenure_handle_free(w->rt, *h);
        if (!(*h = tenure_handle_new(w->rt, TENURE_HANDLE_PINNED, o)))
            fail("handle failed", w->rt);
    }
    return o;
}

/* Allocation until ALLOC_MB; in mode stack the latest objects stay referenced from this frame
 * (volatile: in memory, where the conservative scan finds them). */
static void run(workload *w) {
    volatile uintptr_t recent[STACK_PINS];
    memset((void *)recent, 0, sizeof recent);
    int stack = strcmp(w->mode, "stack") == 0;
    tenure_stats st;
    tenure_get_stats(w->rt, &st);
    uint64_t start = st.bytes_allocated;
    for (uint64_t i = 0; st.bytes_allocated - start < (uint64_t)ALLOC_MB << 20; i++) {
        void *o = allocate(w, i);
        if (stack && i % 16 == 0) /* spread over every region, which the GCs keep for them */
            recent[(i / 16) % STACK_PINS] = (uintptr_t)o;
        if ((i & 255) == 0)
            tenure_get_stats(w->rt, &st);
    }
    memset((void *)recent, 0, sizeof recent);
}

int main(int argc, char **argv) {
    workload w = {.mode = argc > 1 ? argv[1] : "plain"};
    if (strcmp(w.mode, "plain") && strcmp(w.mode, "stack") && strcmp(w.mode, "handles") && strcmp(w.mode, "poh") &&
        strcmp(w.mode, "loh")) {
        fprintf(stderr, "usage: alloc_workload plain|stack|handles|poh|loh\n");
        return 2;
    }
    tenure_result res;
    if (!(w.rt = tenure_create(NULL, &res))) {
        fprintf(stderr, "alloc_workload: tenure_create: %s\n", tenure_strerror(res));
        return 1;
    }
    at_gc a = {0, 0};
    tenure_set_gc_callback(w.rt, on_gc, &a);
    w.bytes_t = array_type(w.rt, "alloc_bytes", 1, TENURE_TYPE_NO_REFS);
    void *ring = tenure_alloc_array(w.rt, array_type(w.rt, "alloc_ring", sizeof(void *), TENURE_TYPE_REF_ARRAY), RING);
    if (!ring || !(w.ring_h = tenure_handle_new(w.rt, TENURE_HANDLE_STRONG, ring)))
        fail("ring", w.rt);
    run(&w);
    tenure_stats st;
    tenure_get_stats(w.rt, &st);
    tenure_set_gc_callback(w.rt, NULL, NULL);
    for (int k = 0; k < HANDLE_PINS; k++)
        if (w.pins[k])
            tenure_handle_free(w.rt, w.pins[k]);
    tenure_handle_free(w.rt, w.ring_h);
    tenure_destroy(w.rt); /* the trace is complete */
    printf("WORKLOAD {\"allocated_bytes\": %llu, \"allocated_at_last_gc\": %llu, \"gc_count\": %llu}\n",
           (unsigned long long)st.bytes_allocated, (unsigned long long)a.allocated, (unsigned long long)a.gcs);
    return 0;
}
