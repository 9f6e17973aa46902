/*
 * test_alloc_array_fast.c - the inline allocation paths of tenure.h (issue 13, perf-alloc):
 * tenure_alloc_array bumps the thread's context like tenure_alloc, and everything else stays
 * in the slow path.
 *
 *   A  lengths at the boundaries: 0, small, and around the largest length the inline path
 *      takes and the first that goes to the large object heap, for odd and even element
 *      sizes: the object's length, type, size (as the heap computes it), generation, zeroed
 *      elements, no overlap with its neighbour; the heap verifies
 *   B  huge lengths (SIZE_MAX, lengths whose size wraps around a size_t, more than the heap)
 *      refused with TENURE_SIZE, and the next allocation works
 *   C  inside a callback that may not allocate (the error hook) both inline paths are refused
 *      and allocate again after it; inside a blocking section too (TENURE_STATE)
 *   D  a thread that is not attached, a type of another instance, a fixed type for an array
 *      and an array type for a fixed object: refused
 *   E  a profiler's object_allocated sees every array; GCStress counts every array;
 *      finalizable arrays are registered (their finalizer runs)
 */
#include "test_util.h"

#include "tenure_profiler.h"

#include <pthread.h>

static tt_errlog g_log;

/* The size tn_array_size gives: 16 bytes of header and length, the elements, rounded up to 8. */
static size_t array_size(size_t elem, size_t length) {
    size_t n = (sizeof(tenure_array_header) + elem * length + 7) & ~(size_t)7;
    return n < 16 ? 16 : n;
}

static int all_zero(const void *array, size_t bytes) {
    const unsigned char *p = tenure_array_data((void *)array);
    for (size_t i = 0; i < bytes; i++)
        if (p[i])
            return 0;
    return 1;
}

static uint64_t gc_count(tenure_runtime *rt) { return tt_stats(rt).gc_count; }

/* ------------------------------------------------------------------ A: boundaries */

typedef struct prev_obj {
    char *at;
    size_t size;
    uint64_t gc;
} prev_obj;

static void check_array(tenure_runtime *rt, const tenure_type *t, size_t elem, size_t length, prev_obj *prev,
                        size_t *adjacent) {
    size_t loh = 85000; /* GCLOHThreshold's default (tt_config does not change it) */
    char *a = tenure_alloc_array(rt, t, length);
    TT_CHECK(a != NULL, "elem %zu length %zu: %s", elem, length, tenure_strerror(tenure_last_error(rt)));
    size_t size = array_size(elem, length);
    TT_CHECK(tenure_array_length(a) == length, "elem %zu: length %zu read back as %zu", elem, length,
             tenure_array_length(a));
    TT_CHECK(tenure_object_type(rt, a) == t, "elem %zu length %zu: wrong type", elem, length);
    TT_CHECK(tenure_object_size(rt, a) == size, "elem %zu length %zu: size %zu, expected %zu", elem, length,
             tenure_object_size(rt, a), size);
    int gen = tenure_object_generation(rt, a);
    TT_CHECK(size >= loh ? gen == 3 : gen == 0, "elem %zu length %zu (%zu bytes) in generation %d", elem, length, size,
             gen);
    TT_CHECK(all_zero(a, elem * length), "elem %zu length %zu: elements not zeroed", elem, length);
    memset(tenure_array_data(a), 0x5a, elem * length); /* a wrong size would spill into the next object */
    uint64_t gc = gc_count(rt);
    if (prev->at && prev->gc == gc && gen == 0) {
        TT_CHECK(a >= prev->at + prev->size || a + size <= prev->at, "elem %zu length %zu overlaps its neighbour", elem,
                 length);
        *adjacent += a == prev->at + prev->size;
    }
    *prev = (prev_obj){gen == 0 ? a : NULL, size, gc};
}

static void boundaries(void) {
    tenure_runtime *rt = tt_create(NULL, &g_log);
    static const size_t elems[] = {1, 2, 3, 5, 7, 8, 12, 16, 24, 40, 1000, 4096};
    size_t checked = 0, adjacent = 0;
    for (size_t e = 0; e < sizeof elems / sizeof elems[0]; e++) {
        size_t elem = elems[e];
        char name[32];
        snprintf(name, sizeof name, "bytes%zu", elem);
        const tenure_type *t = tt_register_plain_array(rt, name, elem);
        prev_obj prev = {0};
        for (size_t length = 0; length < 40; length++, checked++)
            check_array(rt, t, elem, length, &prev, &adjacent);
        /* the first length whose size reaches the LOH threshold, and its neighbours */
        size_t first_large = (85000 - 16 + elem - 1) / elem;
        while (first_large > 0 && array_size(elem, first_large - 1) >= 85000)
            first_large--;
        while (array_size(elem, first_large) < 85000)
            first_large++;
        for (size_t length = first_large > 3 ? first_large - 3 : 0; length <= first_large + 2; length++, checked++)
            check_array(rt, t, elem, length, &prev, &adjacent);
        /* random lengths below the threshold */
        for (int i = 0; i < 200; i++, checked++)
            check_array(rt, t, elem, (size_t)tt_rand_below(first_large), &prev, &adjacent);
        TT_CHECK_RESULT(tenure_verify_heap(rt), TENURE_OK);
    }
    tt_collect(rt, 2, TENURE_COLLECT_COMPACT);
    TT_CHECK_RESULT(tenure_verify_heap(rt), TENURE_OK);
    /* consecutive small arrays with no GC between are adjacent unless a context ran out */
    TT_CHECK(adjacent > checked / 4, "only %zu of %zu arrays right after their neighbour", adjacent, checked);
    TT_CHECK(g_log.count == 0, "%d errors reported", g_log.count);
    printf("  A %zu arrays at and around the boundaries (%zu adjacent): ok\n", checked, adjacent);
    tenure_destroy(rt);
}

/* ------------------------------------------------------------------ B: huge lengths */

static void expect_size_refused(tenure_runtime *rt, const tenure_type *t, size_t elem, size_t length) {
    tt_errlog_reset(&g_log);
    void *a = tenure_alloc_array(rt, t, length);
    TT_CHECK(a == NULL, "elem %zu: an array of %zu elements was allocated", elem, length);
    TT_CHECK(tenure_last_error(rt) == TENURE_SIZE && g_log.last == TENURE_SIZE && g_log.count == 1,
             "elem %zu length %zu: result %d, %d errors reported", elem, length, (int)tenure_last_error(rt),
             g_log.count);
}

static void huge_lengths(void) {
    tenure_runtime *rt = tt_create(NULL, &g_log);
    static const size_t elems[] = {1, 3, 8, 16, 24, 4096};
    for (size_t e = 0; e < sizeof elems / sizeof elems[0]; e++) {
        size_t elem = elems[e];
        char name[32];
        snprintf(name, sizeof name, "huge%zu", elem);
        const tenure_type *t = tt_register_plain_array(rt, name, elem);
        size_t wrap = SIZE_MAX / elem + 1; /* elem * wrap wraps around to a small number */
        size_t lengths[] = {SIZE_MAX, SIZE_MAX - 1, SIZE_MAX / 2,          wrap,
                            wrap + 1, wrap + 2,     ((size_t)1 << 61) + 1, (size_t)1 << 40};
        for (size_t i = 0; i < sizeof lengths / sizeof lengths[0]; i++)
            if (lengths[i] != 0 && elem * lengths[i] / elem != lengths[i]) /* overflows */
                expect_size_refused(rt, t, elem, lengths[i]);
        expect_size_refused(rt, t, elem, ((size_t)1 << 40) / elem); /* more than the whole heap */
        tt_errlog_reset(&g_log);
        void *ok = tenure_alloc_array(rt, t, 5);
        TT_CHECK(ok != NULL && tenure_array_length(ok) == 5 && g_log.count == 0, "elem %zu: no array after", elem);
    }
    TT_CHECK_RESULT(tenure_verify_heap(rt), TENURE_OK);
    printf("  B huge lengths refused with TENURE_SIZE: ok\n");
    tenure_destroy(rt);
}

/* ------------------------------------------------------------------ C: callbacks, blocking */

typedef struct in_hook {
    tenure_runtime *rt;
    const tenure_type *array_t, *node_t;
    int depth, calls, array_allocated, node_allocated;
} in_hook;

static in_hook g_hook;

static void allocating_hook(tenure_runtime *rt, tenure_result result, const char *function, const char *message,
                            void *context) {
    (void)result, (void)function, (void)message, (void)context;
    if (g_hook.depth++ == 0) { /* (the refusals below report through this hook again) */
        g_hook.calls++;
        g_hook.array_allocated += tenure_alloc_array(rt, g_hook.array_t, 3) != NULL;
        g_hook.node_allocated += tenure_alloc(rt, g_hook.node_t) != NULL;
    }
    g_hook.depth--;
}

static void refused_inside(void) {
    tenure_runtime *rt = tt_create(NULL, NULL);
    g_hook = (in_hook){.rt = rt, .array_t = tt_register_plain_array(rt, "words", 8), .node_t = tt_register_node(rt)};
    tenure_set_error_hook(rt, allocating_hook, NULL);
    /* the context is open and roomy: without the closed limit, the inline paths would allocate */
    TT_CHECK(tenure_alloc_array(rt, g_hook.array_t, 1) != NULL && tenure_alloc(rt, g_hook.node_t) != NULL);
    for (int i = 0; i < 50; i++)
        TT_CHECK(tenure_alloc_array(rt, g_hook.array_t, SIZE_MAX) == NULL); /* reports TENURE_SIZE */
    TT_CHECK(g_hook.calls == 50, "the hook ran %d times", g_hook.calls);
    TT_CHECK(g_hook.array_allocated == 0 && g_hook.node_allocated == 0,
             "allocated from the error hook: %d arrays, %d nodes", g_hook.array_allocated, g_hook.node_allocated);
    TT_CHECK(tenure_alloc_array(rt, g_hook.array_t, 3) != NULL && tenure_alloc(rt, g_hook.node_t) != NULL,
             "no allocation after the hook returned");

    tenure_set_error_hook(rt, tt_hook, &g_log);
    tt_errlog_reset(&g_log);
    tenure_blocking_enter(rt);
    void *array = tenure_alloc_array(rt, g_hook.array_t, 3);
    void *node = tenure_alloc(rt, g_hook.node_t);
    tenure_blocking_leave(rt);
    TT_CHECK(array == NULL && node == NULL, "allocated inside a blocking section: array %p node %p", array, node);
    TT_CHECK(g_log.count == 2 && g_log.last == TENURE_STATE, "%d errors, last %d", g_log.count, (int)g_log.last);
    tt_errlog_reset(&g_log);
    TT_CHECK(tenure_alloc_array(rt, g_hook.array_t, 3) != NULL && tenure_alloc(rt, g_hook.node_t) != NULL,
             "no allocation after the blocking section");
    printf("  C refused in the error hook and in a blocking section: ok\n");
    tenure_destroy(rt);
}

/* ------------------------------------------------------------------ D: wrong thread, wrong type */

typedef struct unattached_try {
    tenure_runtime *rt;
    const tenure_type *t;
    void *got;
} unattached_try;

static void *unattached_main(void *arg) {
    unattached_try *u = arg;
    u->got = tenure_alloc_array(u->rt, u->t, 2);
    return NULL;
}

static void refused_misuse(void) {
    tenure_runtime *rt = tt_create(NULL, &g_log);
    tenure_runtime *other = tt_create(NULL, &g_log);
    const tenure_type *mine = tt_register_plain_array(rt, "mine", 8);
    const tenure_type *theirs = tt_register_plain_array(other, "theirs", 8);
    const tenure_type *node_t = tt_register_node(rt);

    tt_errlog_reset(&g_log);
    TT_CHECK(tenure_alloc_array(rt, theirs, 2) == NULL && g_log.last == TENURE_INVALID_TYPE,
             "a type of another instance: %d", (int)g_log.last);
    tt_errlog_reset(&g_log);
    TT_CHECK(tenure_alloc_array(rt, node_t, 2) == NULL && g_log.last == TENURE_INVALID_ARGUMENT,
             "a fixed type for an array: %d", (int)g_log.last);
    tt_errlog_reset(&g_log);
    TT_CHECK(tenure_alloc(rt, mine) == NULL && g_log.last == TENURE_INVALID_ARGUMENT,
             "an array type for a fixed object: %d", (int)g_log.last);
    tt_errlog_reset(&g_log);
    TT_CHECK(tenure_alloc_array(rt, NULL, 2) == NULL && g_log.last == TENURE_INVALID_TYPE, "NULL type: %d",
             (int)g_log.last);

    unattached_try u = {rt, mine, (void *)1};
    pthread_t th;
    tt_errlog_reset(&g_log);
    TT_CHECK(pthread_create(&th, NULL, unattached_main, &u) == 0);
    tenure_blocking_enter(rt);
    pthread_join(th, NULL);
    tenure_blocking_leave(rt);
    TT_CHECK(u.got == NULL && g_log.last == TENURE_STATE, "an unattached thread: %p, %d", u.got, (int)g_log.last);
    tt_errlog_reset(&g_log);
    TT_CHECK(tenure_alloc_array(rt, mine, 2) != NULL && g_log.count == 0);
    printf("  D wrong thread, instance and kind refused: ok\n");
    tenure_destroy(other);
    tenure_destroy(rt);
}

/* ------------------------------------------------------------------ E: slow-path services */

static size_t g_allocated_calls, g_finalized;

static void on_allocated(void *c, void *obj, const tenure_type *type) {
    (void)c, (void)obj, (void)type;
    g_allocated_calls++;
}

static void finalize_array(tenure_runtime *rt, void *obj) {
    (void)rt, (void)obj;
    g_finalized++;
}

static void slow_path_services(void) {
    enum { N = 3000 };
    /* a profiler's object_allocated: every array, inline-sized or not */
    tenure_runtime *rt = tt_create(NULL, &g_log);
    const tenure_type *t = tt_register_plain_array(rt, "profiled", 4);
    tenure_profiler_callbacks cb = {.object_allocated = on_allocated};
    tenure_profiler *p = tenure_profiler_attach2(rt, &cb, sizeof cb, TENURE_PROFILE_ALLOCATIONS, NULL);
    TT_CHECK(p != NULL);
    for (size_t i = 0; i < N; i++)
        TT_CHECK(tenure_alloc_array(rt, t, i % 50) != NULL);
    TT_CHECK(g_allocated_calls == N, "object_allocated ran %zu times for %d arrays", g_allocated_calls, N);
    TT_CHECK(tenure_profiler_detach(rt, p) == TENURE_OK);
    for (size_t i = 0; i < N; i++)
        TT_CHECK(tenure_alloc_array(rt, t, i % 50) != NULL);
    TT_CHECK(g_allocated_calls == N, "object_allocated ran after its profiler detached");
    tenure_destroy(rt);

    /* GCStress: a GC every 10 allocations, arrays included */
    tenure_config cfg;
    tt_config(&cfg);
    cfg.GCStress = 10;
    cfg.GCStressGeneration = 0;
    rt = tt_create(&cfg, &g_log);
    t = tt_register_plain_array(rt, "stressed", 8);
    uint64_t before = gc_count(rt);
    for (size_t i = 0; i < N; i++)
        TT_CHECK(tenure_alloc_array(rt, t, i % 50) != NULL);
    uint64_t gcs = gc_count(rt) - before;
    TT_CHECK(gcs + 1 >= N / 10 && gcs <= N / 10 + 1, "%" PRIu64 " GCs for %d arrays under GCStress=10", gcs, N);
    tenure_destroy(rt);

    /* finalizable arrays are registered for finalization */
    tt_config(&cfg);
    cfg.GCFinalizeMode = 1;
    rt = tt_create(&cfg, &g_log);
    tenure_type_desc d;
    memset(&d, 0, sizeof d);
    d.name = "finalizable array";
    d.elem_size = 8;
    d.flags = TENURE_TYPE_ARRAY | TENURE_TYPE_NO_REFS | TENURE_TYPE_FINALIZABLE;
    d.finalize = finalize_array;
    t = tenure_type_register(rt, &d);
    TT_CHECK(t != NULL);
    g_finalized = 0;
    for (size_t i = 0; i < 100; i++)
        TT_CHECK(tenure_alloc_array(rt, t, i % 7) != NULL);
    tt_collect(rt, 2, TENURE_COLLECT_COMPACT);
    tenure_run_pending_finalizers(rt);
    TT_CHECK(g_finalized == 100, "%zu of 100 unreachable finalizable arrays finalized", g_finalized);
    tenure_destroy(rt);
    TT_CHECK(g_log.count == 0, "%d errors reported", g_log.count);
    printf("  E object_allocated, GCStress, finalizable arrays: ok\n");
}

int main(void) {
    double t0 = tt_now();
    tt_rng_init("alloc_array_fast");
    g_log.fatal = 0;
    boundaries();
    huge_lengths();
    refused_inside();
    refused_misuse();
    slow_path_services();
    return tt_finish("alloc_array_fast", t0);
}
