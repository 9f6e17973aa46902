/*
 * test_callback_threads.c - callbacks on server GC's threads (issue 33; "Callbacks" in tenure.h).
 *
 *   <kind>_h<heaps>[_bgc]   a callback of that kind calls the queries it may (tenure_object_size,
 *                           tenure_is_object, tenure_object_type, tenure_object_generation) on
 *                           objects, and once a call it may not (tenure_collect: refused with
 *                           TENURE_STATE), while 1, 2 or 4 heaps collect (gcServer), with and
 *                           without gcConcurrent. Kinds: trace (a type's trace callback, on any
 *                           GC thread), scanner (a root scanner), refcount, gc_callback,
 *                           profiler (gc_started, gc_finished), hook (the error hook, reached
 *                           from a failing query inside a trace callback). Under server GC the
 *                           trace callback's queries hung for ever (the helpers waited for the
 *                           instance lock the collecting thread held while it waited for them).
 *   serial_trace_h4         TENURE_TYPE_SERIAL_TRACE: no two calls of the type's trace callback
 *                           overlap (a counter inside the callback never passes 1) on 4 heaps.
 *   concurrent_trace_h4     without the flag, on 4 heaps: the trace callback runs on more than
 *                           one thread (asserted), and how many calls overlapped at most is
 *                           printed (4 on a 2-CPU machine: GC threads do run it concurrently).
 *
 * Each case runs in its own child process, bounded by alarm(): a hang fails that case with a
 * message. `tenure_test_callbacks_threads <case>` runs one case in-process;
 * `tenure_test_callbacks_threads --bench` prints the GC time with and without
 * TENURE_TYPE_SERIAL_TRACE on 4 heaps.
 */
#include "test_util.h"
#include "tenure_profiler.h"

#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/wait.h>

typedef struct node {
    tenure_header header;
    struct node *next;
    uint64_t value;
} node;

enum { K_TRACE, K_SCANNER, K_REFCOUNT, K_GC_CALLBACK, K_PROFILER, K_HOOK, K_SERIAL, K_CONCURRENT, K_COUNT };
static const char *const kind_names[K_COUNT] = {"trace",    "scanner", "refcount",     "gc_callback",
                                                "profiler", "hook",    "serial_trace", "concurrent_trace"};

#define KEEP 16384 /* live nodes (a root area): enough that every GC marks on its whole team */
#define MAX_THREADS 16

static struct {
    tenure_runtime *rt;
    const tenure_type *node_t;
    int kind;
    void *keep[KEEP];
    void *scanned;      /* the root scanner's slot (a kept node) */
    int armed;          /* the forbidden call is made once (atomic) */
    int refused;        /* it was refused with TENURE_STATE (atomic) */
    uint64_t queried;   /* callbacks whose queries answered right (atomic) */
    uint64_t wrong;     /* ... and wrong (atomic) */
    uint64_t hook_runs; /* the error hook ran (atomic) */
    uint64_t traces;    /* calls of the trace callback (atomic) */
    int inside, most_inside;
    uintptr_t threads[MAX_THREADS]; /* the threads that ran the trace callback (atomic) */
    uint64_t calls[MAX_THREADS];
} T;

/* The queries every kind may call, on an object of ours; true if they answered right. */
static void query(void *obj) {
    tenure_runtime *rt = T.rt;
    bool ok = tenure_is_object(rt, obj) && tenure_object_type(rt, obj) == T.node_t &&
              tenure_object_size(rt, obj) == sizeof(node) && tenure_object_generation(rt, obj) >= 0;
    __atomic_add_fetch(ok ? &T.queried : &T.wrong, 1, __ATOMIC_RELAXED);
}

/* The call no GC-time callback may make: refused (TENURE_STATE), never a hang. Once. */
static void forbidden_once(void) {
    if (!__atomic_exchange_n(&T.armed, 0, __ATOMIC_ACQ_REL))
        return;
    if (tenure_collect(T.rt, 0, 0) == TENURE_STATE)
        __atomic_store_n(&T.refused, 1, __ATOMIC_RELEASE);
}

static void note_thread(void) {
    uintptr_t me = (uintptr_t)pthread_self();
    for (int i = 0; i < MAX_THREADS; i++) {
        uintptr_t seen = __atomic_load_n(&T.threads[i], __ATOMIC_ACQUIRE);
        if (!seen &&
            !__atomic_compare_exchange_n(&T.threads[i], &seen, me, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE) &&
            seen != me)
            continue;
        if (!seen || seen == me) {
            __atomic_add_fetch(&T.calls[i], 1, __ATOMIC_RELAXED);
            return;
        }
    }
}

static void trace_fn(void *obj, tenure_visitor *v) {
    int inside = __atomic_add_fetch(&T.inside, 1, __ATOMIC_ACQ_REL);
    int most = __atomic_load_n(&T.most_inside, __ATOMIC_RELAXED);
    while (inside > most &&
           !__atomic_compare_exchange_n(&T.most_inside, &most, inside, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
        ;
    tenure_visit(v, (void **)&((node *)obj)->next);
    if (__atomic_add_fetch(&T.traces, 1, __ATOMIC_RELAXED) % 16) {
        __atomic_sub_fetch(&T.inside, 1, __ATOMIC_ACQ_REL);
        return; /* the queries cost: one call in 16 makes them */
    }
    switch (T.kind) {
    case K_TRACE: query(obj), forbidden_once(); break;
    case K_HOOK: /* a failing query: the hook runs (on this GC thread) */
        if (__atomic_load_n(&T.hook_runs, __ATOMIC_RELAXED) < 64)
            (void)tenure_object_size(T.rt, &T);
        break;
    case K_SERIAL:
    case K_CONCURRENT: query(obj), note_thread(); break;
    }
    __atomic_sub_fetch(&T.inside, 1, __ATOMIC_ACQ_REL);
}

static void hook(tenure_runtime *rt, tenure_result r, const char *fn, const char *msg, void *c) {
    (void)rt, (void)r, (void)fn, (void)msg, (void)c;
    if (T.kind != K_HOOK) {
        if (r != TENURE_STATE || strcmp(fn, "tenure_collect")) {
            fprintf(stderr, "unexpected error: %s: %s\n", fn, msg);
            __atomic_add_fetch(&T.wrong, 1, __ATOMIC_RELAXED);
        }
        return;
    }
    __atomic_add_fetch(&T.hook_runs, 1, __ATOMIC_RELAXED);
    query(T.keep[0]);
    forbidden_once(); /* refused; inside the hook it is printed, not passed to the hook again */
}

static void scan(tenure_runtime *rt, tenure_visitor *v, void *c) {
    (void)rt, (void)c;
    tenure_visit(v, &T.scanned);
    query(T.scanned);
    forbidden_once();
}
static int refcount(void *obj, void *c) {
    (void)c;
    query(obj);
    forbidden_once();
    return 1;
}
static void gc_callback(tenure_runtime *rt, const tenure_gc_info *i, void *c) {
    (void)rt, (void)i, (void)c;
    query(T.keep[0]);
    forbidden_once();
}
static void prof_started(void *c, const int g[5], tenure_gc_reason_kind k) {
    (void)c, (void)g, (void)k;
    query(T.keep[0]);
    forbidden_once();
}
static void prof_finished(void *c) {
    (void)c;
    query(T.keep[0]);
}

static tenure_runtime *create(unsigned heaps, bool bgc, bool serial) {
    tenure_config cfg;
    tt_config(&cfg);
    cfg.gcServer = heaps > 1;
    cfg.GCHeapCount = heaps > 1 ? heaps : 0;
    cfg.gcConcurrent = bgc;
    T.rt = tt_create(&cfg, NULL);
    tenure_set_error_hook(T.rt, hook, NULL);
    tenure_type_desc d = {.name = "node", .size = sizeof(node), .trace = trace_fn};
    if (serial)
        d.flags = TENURE_TYPE_SERIAL_TRACE;
    T.node_t = tenure_type_register(T.rt, &d);
    TT_CHECK(T.node_t != NULL);
    TT_CHECK(tenure_root_area_add(T.rt, T.keep, KEEP) != NULL);
    return T.rt;
}

/* Allocate n nodes, keeping KEEP of them alive (each points at a kept one), with full GCs
 * now and then (every GC of more than gen0 runs on the whole team). */
static void churn(size_t n) {
    tenure_runtime *rt = T.rt;
    for (size_t i = 0; i < n; i++) {
        node *o = tenure_alloc(rt, T.node_t);
        TT_CHECK(o != NULL);
        o->value = i;
        tenure_write_ref(rt, o, &o->next, T.keep[(i * 7919) % KEEP]);
        T.keep[i % KEEP] = o;
        if (i % (n / 4 + 1) == n / 8)
            tt_collect(rt, 2, 0);
    }
    tt_collect(rt, 2, 0);
}

static void run_case(int kind, unsigned heaps, bool bgc) {
    T.kind = kind;
    T.armed = kind <= K_HOOK;
    tenure_runtime *rt = create(heaps, bgc, kind == K_SERIAL);
    tenure_profiler *p = NULL;
    tenure_handle *h = NULL;
    tenure_root_scanner *s = NULL;
    churn(KEEP); /* the kept nodes exist before the callbacks look at them */
    T.scanned = T.keep[1];
    if (kind == K_SCANNER)
        TT_CHECK((s = tenure_root_scanner_add(rt, scan, NULL)) != NULL);
    if (kind == K_REFCOUNT) {
        tenure_set_refcount_callback(rt, refcount, NULL);
        TT_CHECK((h = tenure_handle_new(rt, TENURE_HANDLE_REFCOUNTED, T.keep[2])) != NULL);
    }
    if (kind == K_GC_CALLBACK)
        tenure_set_gc_callback(rt, gc_callback, NULL);
    if (kind == K_PROFILER) {
        tenure_profiler_callbacks cb = {.gc_started = prof_started, .gc_finished = prof_finished};
        TT_CHECK((p = tenure_profiler_attach(rt, &cb, TENURE_PROFILE_GC, NULL)) != NULL);
    }
    churn(tt_scaled(200000, 20000));
    TT_CHECK(__atomic_load_n(&T.wrong, __ATOMIC_ACQUIRE) == 0, "%" PRIu64 " queries answered wrong", T.wrong);
    TT_CHECK(kind == K_HOOK ? T.hook_runs > 0 : T.queried > 0, "the %s callback did not run", kind_names[kind]);
    if (kind <= K_HOOK)
        TT_CHECK(__atomic_load_n(&T.refused, __ATOMIC_ACQUIRE), "tenure_collect from the %s callback was not refused",
                 kind_names[kind]);
    if (kind == K_SERIAL)
        TT_CHECK(T.most_inside == 1, "%d calls of a TENURE_TYPE_SERIAL_TRACE callback overlapped", T.most_inside);
    if (kind == K_CONCURRENT || kind == K_SERIAL) {
        int n = 0;
        for (int i = 0; i < MAX_THREADS && T.threads[i]; i++)
            n++;
        printf("%s: the trace callback ran on %d threads, at most %d at once (sampled calls per thread:",
               kind_names[kind], n, T.most_inside);
        for (int i = 0; i < n; i++)
            printf(" %" PRIu64, T.calls[i]);
        printf(")\n");
        /* every full GC marks 16384 nodes on 4 threads: the helpers steal some of them */
        TT_CHECK(kind == K_SERIAL || n > 1, "the trace callback ran on one thread only, on 4 heaps");
    }
    if (s)
        TT_CHECK_RESULT(tenure_root_scanner_remove(rt, s), TENURE_OK);
    if (h)
        TT_CHECK_RESULT(tenure_handle_free(rt, h), TENURE_OK);
    if (p)
        TT_CHECK_RESULT(tenure_profiler_detach(rt, p), TENURE_OK);
    tenure_destroy(rt);
}

/* ------------------------------------------------------------------ the cases */

typedef struct test_case {
    char name[64];
    int kind;
    unsigned heaps;
    bool bgc;
} test_case;

static size_t all_cases(test_case *out, size_t cap) {
    static const unsigned heaps[] = {1, 2, 4};
    size_t n = 0;
    for (int k = 0; k <= K_HOOK; k++)
        for (size_t h = 0; h < 3; h++)
            for (int bgc = 0; bgc < 2 && n < cap; bgc++, n++) {
                out[n] = (test_case){"", k, heaps[h], bgc};
                snprintf(out[n].name, sizeof out[n].name, "%s_h%u%s", kind_names[k], heaps[h], bgc ? "_bgc" : "");
            }
    for (int k = K_SERIAL; k <= K_CONCURRENT && n < cap; k++, n++) {
        out[n] = (test_case){"", k, 4, false};
        snprintf(out[n].name, sizeof out[n].name, "%s_h4", kind_names[k]);
    }
    return n;
}

static void run_case_arg(void *arg) {
    const test_case *c = arg;
    run_case(c->kind, c->heaps, c->bgc);
}

/* GC time with and without TENURE_TYPE_SERIAL_TRACE, 4 heaps: full GCs of 1M live nodes (KEEP
 * chains of 64) whose trace callback only visits the slot. */
static void plain_trace(void *obj, tenure_visitor *v) { tenure_visit(v, (void **)&((node *)obj)->next); }

static void bench(void) {
    for (int round = 0; round < 3; round++)
        for (int serial = 0; serial < 2; serial++) {
            memset(&T, 0, sizeof T);
            tenure_config cfg;
            tt_config(&cfg);
            cfg.gcServer = 1;
            cfg.GCHeapCount = 4;
            tenure_runtime *rt = T.rt = tt_create(&cfg, NULL);
            tenure_type_desc d = {.name = "node", .size = sizeof(node), .trace = plain_trace};
            d.flags = serial ? TENURE_TYPE_SERIAL_TRACE : 0;
            T.node_t = tenure_type_register(rt, &d);
            TT_CHECK(T.node_t && tenure_root_area_add(rt, T.keep, KEEP));
            for (size_t i = 0; i < (size_t)KEEP * 64; i++) {
                node *o = tenure_alloc(rt, T.node_t);
                TT_CHECK(o != NULL);
                tenure_write_ref(rt, o, &o->next, T.keep[i % KEEP]);
                T.keep[i % KEEP] = o;
            }
            tt_collect(rt, 2, 0);
            tenure_stats before = tt_stats(rt);
            for (int i = 0; i < 10; i++)
                tt_collect(rt, 2, 0);
            tenure_stats after = tt_stats(rt);
            printf("%-13s full GC of %d live nodes: %6.2f ms a pause\n", serial ? "serial_trace" : "concurrent",
                   KEEP * 64, (after.total_pause_ns - before.total_pause_ns) / 10 / 1e6);
            tenure_destroy(rt);
        }
}

int main(int argc, char **argv) {
    double t0 = tt_now();
    setvbuf(stdout, NULL, _IOLBF, 0);
    test_case cases[64];
    size_t n = all_cases(cases, 64);
    if (argc > 1 && !strcmp(argv[1], "--bench")) {
        bench();
        return 0;
    }
    if (argc > 1) { /* one case, in this process */
        for (size_t i = 0; i < n; i++)
            if (!strcmp(cases[i].name, argv[1])) {
                run_case(cases[i].kind, cases[i].heaps, cases[i].bgc);
                return tt_finish(cases[i].name, t0);
            }
        fprintf(stderr, "no case %s\n", argv[1]);
        return 2;
    }
    /* a case takes well under a second; sanitizers and GCStress are many times slower */
    unsigned timeout = 30;
    if (getenv("TENURE_GCStress") || tt_scale() < 1)
        timeout = 120;
    int failed = 0;
    for (size_t i = 0; i < n; i++)
        if (!tt_run_case(cases[i].name, run_case_arg, &cases[i], timeout, true)) /* the reports too */
            failed++;
    printf("%d of %zu cases failed\n", failed, n);
    if (failed)
        tt_failures += failed;
    return tt_finish("callbacks_threads", t0);
}
