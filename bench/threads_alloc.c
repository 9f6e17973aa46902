/*
 * threads_alloc.c - multi-threaded allocation: T mutator threads, each building and dropping
 * binary trees (as binary-trees does), in three memory managers selected on the command line:
 *
 *   tenure   every worker attaches (tenure_thread_attach) and detaches at the end; nodes are
 *            tenure objects (a tenure_header, then two references stored with
 *            tenure_write_ref); locals are rooted in TENURE_FRAME frames; each worker's
 *            long-lived trees hang from a reference array rooted in its frame. The main thread
 *            creates the instance and waits for the workers (pthread_join) inside a blocking
 *            section (tenure_blocking_enter/leave), so that no GC waits for it.
 *   boehm    the Boehm-Demers-Weiser collector with threads (GC_THREADS; GC_INIT and
 *            GC_allow_register_threads in main, GC_register_my_thread /
 *            GC_unregister_my_thread in each worker), GC_MALLOC (if built with libgc)
 *   malloc   malloc, and each thread frees its own trees (recursive free)
 *
 * Usage: threads_alloc [--impl=tenure|boehm|malloc] [--threads T] [--work K] [--depth D]
 *                      [--rounds R] [--no-events]
 *        threads_alloc --list                      (the implementations built)
 *
 * Work of one thread with --work K (default 1): K long-lived trees of depth D are built and
 * kept until the thread ends; then K * R times: for d = 4, 6, ..., D, 2^(D - d + 4) trees of
 * depth d are built bottom-up, checked and dropped; finally the long-lived trees are checked.
 * Every tree's node count is verified (a tree of depth d has 2^(d+1) - 1 nodes); a wrong
 * count is reported on stderr and makes the exit status 1. "--threads 1 --work T" is the work
 * of "--threads T --work 1" done by one thread (the same trees, the same live long-lived
 * trees): the driver's scaling figure is wall(1 thread, work x T) / wall(T threads).
 *
 * Output:
 *   CHECK threads=.. work=.. depth=.. rounds=.. trees=.. nodes=.. long_lived_nodes=.. ok|FAILED
 *         (identical for every implementation with the same arguments)
 *   THREAD impl=.. id=.. wall_s=..   (one line per worker: its own time, attach to detach)
 *   RESULT impl=<name> threads=T work=K depth=D wall_s=<seconds> cpu_s=<user+sys>
 *          maxrss_kb=<peak RSS, getrusage>
 *   STATS impl=tenure gcs=.. gen0=.. gen1=.. gen2=.. compacting=.. sweeping=.. total_pause_ms=..
 *         median_pause_ms=.. p95_pause_ms=.. p99_pause_ms=.. max_pause_ms=..
 *         suspend_total_ms=.. suspend_median_ms=.. suspend_p95_ms=.. suspend_max_ms=..
 *         stats_total_pause_ms=.. committed_mb=.. allocated_mb=.. promoted_mb=.. pinned_per_gc=..
 *     (pauses: every GC's pause_ns from tenure_set_gc_callback; it includes the stop of the
 *     world. suspend_*: GCSuspendEEBegin .. GCSuspendEEEnd of every GC, from a listener
 *     session (keyword GC, level 4), i.e. how long the collecting thread waited for the other
 *     threads to reach a safepoint; -1 with --no-events; promoted_mb: the bytes that survived,
 *     summed over the GCs; pinned_per_gc: objects the GCs found pinned, per GC)
 *   STATS impl=boehm gcs=.. full_gc_total_ms=.. total_pause_ms=.. median_pause_ms=..
 *         p95_pause_ms=.. p99_pause_ms=.. max_pause_ms=.. suspend_total_ms=.. suspend_median_ms=..
 *         suspend_p95_ms=.. suspend_max_ms=.. heap_mb=.. parallel_markers=..
 *     (pauses: GC_EVENT_START .. GC_EVENT_END; suspend_*: GC_EVENT_PRE_STOP_WORLD ..
 *     GC_EVENT_POST_STOP_WORLD, libgc's signal-based stop of the registered threads)
 * Wall time: from instance creation (tenure_create, GC_INIT; for malloc the first
 * pthread_create) to the end of the last worker's join, before the instance is destroyed.
 */
#define _POSIX_C_SOURCE 200809L

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "tenure.h"
#include "tenure_events.h"

#ifdef TENURE_BENCH_HAVE_BOEHM
/* libgc with threads: registration is explicit (GC_register_my_thread), so the tenure and
 * malloc runs create their threads with the plain pthread_create and never start libgc. */
#define GC_THREADS 1
#define GC_NO_THREAD_REDIRECTS 1
#include <gc/gc.h>
#endif

#include "bench_common.h"

#define MIN_DEPTH 4
#define MAX_THREADS 64

static void die(const char *what) {
    fprintf(stderr, "threads_alloc: %s\n", what);
    exit(2);
}

#include "bench_trees.h" /* tnode/t_build/t_check, mnode/m_build/m_check/m_free, bnode/b_build/b_check */

/* The workload's parameters, the same for every thread. */
static int g_depth = 16, g_rounds = 1, g_work = 1, g_threads = 1;

/* One worker: its index, what it counted, whether a check failed, its own time. */
typedef struct worker {
    pthread_t thread;
    int id;
    long trees;            /* short-lived trees built and checked */
    long nodes;            /* their nodes */
    long long_lived_nodes; /* nodes of its long-lived trees, checked at the end */
    int failed;
    double wall_s;
} worker;

static worker g_workers[MAX_THREADS];

static long tree_nodes(int depth) { return (1L << (depth + 1)) - 1; }

static void check_tree(worker *w, const char *what, int depth, long count) {
    if (count != tree_nodes(depth)) {
        fprintf(stderr, "threads_alloc: thread %d: %s of depth %d has %ld nodes, expected %ld\n", w->id, what, depth,
                count, tree_nodes(depth));
        w->failed = 1;
    }
}

static double cpu_seconds(void) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 + (double)ru.ru_stime.tv_sec +
           (double)ru.ru_stime.tv_usec * 1e-6;
}

/* Start every worker with `fn` and join them all. */
static void run_workers(void *(*fn)(void *)) {
    for (int i = 0; i < g_threads; i++) {
        memset(&g_workers[i], 0, sizeof g_workers[i]);
        g_workers[i].id = i;
        if (pthread_create(&g_workers[i].thread, NULL, fn, &g_workers[i]) != 0)
            die("pthread_create failed");
    }
    for (int i = 0; i < g_threads; i++)
        if (pthread_join(g_workers[i].thread, NULL) != 0)
            die("pthread_join failed");
}

/* ==========================================================================================
 * tenure
 * ======================================================================================== */

static tenure_runtime *g_rt;
static const tenure_type *g_tnode_type, *g_holder_type;
static pause_rec g_pauses; /* every GC's pause (tenure or Boehm); written under the GC's lock */

/* Time the collecting thread waited for the others (stop of the world), every GC's in
 * g_stops: the GC's lock serialises the updates. */
static uint64_t g_suspend_begin, g_suspend_total_ns, g_suspend_max_ns, g_suspends;
static pause_rec g_stops;

static void record_stop(uint64_t ns) {
    g_suspend_total_ns += ns;
    if (ns > g_suspend_max_ns)
        g_suspend_max_ns = ns;
    g_suspends++;
    pause_rec_push(&g_stops, ns);
}

/* " suspend_total_ms=.. suspend_median_ms=.. suspend_p95_ms=.. suspend_max_ms=.." (-1 when not
 * measured) */
static void print_stops(int measured) {
    pause_summary s = pause_rec_summary(&g_stops);
    if (!measured)
        s.total_ms = s.median_ms = s.p95_ms = -1.0;
    printf(" suspend_total_ms=%.3f suspend_median_ms=%.4f suspend_p95_ms=%.4f suspend_max_ms=%.3f", s.total_ms,
           s.median_ms, s.p95_ms, measured ? (double)g_suspend_max_ns / 1e6 : -1.0);
    pause_rec_free(&g_stops);
}

static void tenure_hook(tenure_runtime *rt, tenure_result result, const char *function, const char *message,
                        void *context) {
    (void)rt;
    (void)context;
    fprintf(stderr, "threads_alloc: tenure error in %s: %s (%s)\n", function ? function : "?", message ? message : "",
            tenure_strerror(result));
}

/* Every GC: its pause (g_pauses), what survived it and how many objects it found pinned (the
 * conservative scans of the threads' stacks pin what they point to). */
static uint64_t g_promoted_bytes, g_pinned_objects;
static void tenure_gc_cb(tenure_runtime *rt, const tenure_gc_info *info, void *context) {
    pause_rec_tenure_cb(rt, info, context);
    for (int g = 0; g < 5; g++)
        g_promoted_bytes += info->promoted[g];
    g_pinned_objects += info->pinned_objects;
}

static void suspend_listener(const tenure_event *ev, void *context) {
    (void)context;
    const char *name = ev->desc->name;
    if (strcmp(name, "GCSuspendEEBegin_V1") == 0) {
        g_suspend_begin = ev->timestamp_ns;
    } else if (strcmp(name, "GCSuspendEEEnd_V1") == 0 && g_suspend_begin != 0) {
        record_stop(ev->timestamp_ns - g_suspend_begin);
        g_suspend_begin = 0;
    }
}

static void *t_worker(void *arg) {
    worker *w = arg;
    if (tenure_thread_attach(g_rt) != TENURE_OK) {
        w->failed = 1;
        return NULL;
    }
    double t0 = bench_now_seconds();
    void *holder = NULL;
    tnode *tree = NULL;
    TENURE_FRAME(g_rt, frame, holder, tree);
    holder = tenure_alloc_array(g_rt, g_holder_type, (size_t)g_work);
    if (holder == NULL)
        die("tenure_alloc_array failed");
    for (int k = 0; k < g_work; k++) {
        tree = t_build(g_rt, g_tnode_type, g_depth);
        void **slots = tenure_array_data(holder);
        tenure_write_ref(g_rt, holder, &slots[k], tree);
        tree = NULL;
    }
    for (int r = 0; r < g_work * g_rounds; r++) {
        for (int d = MIN_DEPTH; d <= g_depth; d += 2) {
            long iterations = 1L << (g_depth - d + MIN_DEPTH);
            for (long i = 0; i < iterations; i++) {
                tree = t_build(g_rt, g_tnode_type, d);
                long c = t_check(tree);
                check_tree(w, "short-lived tree", d, c);
                w->trees++;
                w->nodes += c;
                tree = NULL;
            }
        }
    }
    for (int k = 0; k < g_work; k++) {
        long c = t_check(((tnode **)tenure_array_data(holder))[k]);
        check_tree(w, "long-lived tree", g_depth, c);
        w->long_lived_nodes += c;
    }
    TENURE_FRAME_POP(g_rt, frame);
    w->wall_s = bench_now_seconds() - t0;
    if (tenure_thread_detach(g_rt) != TENURE_OK)
        w->failed = 1;
    return NULL;
}

static void run_tenure(int events) {
    tenure_result res = TENURE_OK;
    g_rt = tenure_create(NULL, &res); /* defaults plus TENURE_* environment options */
    if (g_rt == NULL) {
        fprintf(stderr, "threads_alloc: tenure_create failed: %s\n", tenure_strerror(res));
        exit(2);
    }
    tenure_set_error_hook(g_rt, tenure_hook, NULL);
    pause_rec_init(&g_pauses, -1);
    pause_rec_init(&g_stops, -1);
    tenure_set_gc_callback(g_rt, tenure_gc_cb, &g_pauses);
    if (events &&
        tenure_session_start_listener(g_rt, TENURE_KW_GC, TENURE_LEVEL_INFORMATIONAL, suspend_listener, NULL) == NULL)
        die("tenure_session_start_listener failed");

    static const size_t refs[] = {offsetof(tnode, left), offsetof(tnode, right)};
    tenure_type_desc desc;
    memset(&desc, 0, sizeof desc);
    desc.name = "threads_alloc.node";
    desc.size = sizeof(tnode);
    desc.ref_offsets = refs;
    desc.ref_count = 2;
    g_tnode_type = tenure_type_register(g_rt, &desc);
    memset(&desc, 0, sizeof desc);
    desc.name = "threads_alloc.holder";
    desc.size = sizeof(tenure_array_header);
    desc.elem_size = sizeof(void *);
    desc.flags = TENURE_TYPE_ARRAY | TENURE_TYPE_REF_ARRAY;
    g_holder_type = tenure_type_register(g_rt, &desc);
    if (g_tnode_type == NULL || g_holder_type == NULL)
        die("tenure_type_register failed");

    /* The main thread stays attached (it created the instance) but touches no object while
     * the workers run: a blocking section lets their GCs go on without it. */
    tenure_blocking_enter(g_rt);
    run_workers(t_worker);
    tenure_blocking_leave(g_rt);
}

static void tenure_report_and_destroy(int events) {
    tenure_stats st;
    memset(&st, 0, sizeof st);
    tenure_get_stats(g_rt, &st);
    tenure_destroy(g_rt); /* stops the listener session */
    g_rt = NULL;
    pause_summary ps = pause_rec_summary(&g_pauses);
    if (ps.count != st.gc_count)
        fprintf(stderr, "threads_alloc: the GC callback saw %zu GCs, tenure_get_stats says %llu\n", ps.count,
                (unsigned long long)st.gc_count);
    if (events && g_suspends != st.gc_count)
        fprintf(stderr, "threads_alloc: %llu suspensions seen for %llu GCs\n", (unsigned long long)g_suspends,
                (unsigned long long)st.gc_count);
    printf("STATS impl=tenure gcs=%llu gen0=%llu gen1=%llu gen2=%llu compacting=%llu sweeping=%llu "
           "total_pause_ms=%.3f",
           (unsigned long long)st.gc_count, (unsigned long long)st.gen[0].collections,
           (unsigned long long)st.gen[1].collections, (unsigned long long)st.gen[2].collections,
           (unsigned long long)st.compacting_gcs, (unsigned long long)st.sweeping_gcs, ps.total_ms);
    pause_summary_print(stdout, "", &ps);
    print_stops(events);
    printf(" stats_total_pause_ms=%.3f committed_mb=%.1f allocated_mb=%.1f promoted_mb=%.1f pinned_per_gc=%.1f\n",
           (double)st.total_pause_ns / 1e6, (double)st.committed_bytes / (1024.0 * 1024.0),
           (double)st.bytes_allocated / (1024.0 * 1024.0), (double)g_promoted_bytes / (1024.0 * 1024.0),
           st.gc_count ? (double)g_pinned_objects / (double)st.gc_count : 0.0);
    pause_rec_free(&g_pauses);
}

/* ==========================================================================================
 * Boehm
 * ======================================================================================== */
#ifdef TENURE_BENCH_HAVE_BOEHM

static void *b_worker(void *arg) {
    worker *w = arg;
    struct GC_stack_base sb;
    if (GC_get_stack_base(&sb) != GC_SUCCESS || GC_register_my_thread(&sb) != GC_SUCCESS) {
        w->failed = 1;
        return NULL;
    }
    double t0 = bench_now_seconds();
    bnode **holder = GC_MALLOC(sizeof *holder * (size_t)g_work);
    if (holder == NULL)
        die("GC_MALLOC failed");
    for (int k = 0; k < g_work; k++)
        holder[k] = b_build(g_depth);
    for (int r = 0; r < g_work * g_rounds; r++) {
        for (int d = MIN_DEPTH; d <= g_depth; d += 2) {
            long iterations = 1L << (g_depth - d + MIN_DEPTH);
            for (long i = 0; i < iterations; i++) {
                bnode *tree = b_build(d);
                long c = b_check(tree);
                check_tree(w, "short-lived tree", d, c);
                w->trees++;
                w->nodes += c;
            }
        }
    }
    for (int k = 0; k < g_work; k++) {
        long c = b_check(holder[k]);
        check_tree(w, "long-lived tree", g_depth, c);
        w->long_lived_nodes += c;
    }
    w->wall_s = bench_now_seconds() - t0;
    GC_unregister_my_thread();
    return NULL;
}

/* libgc's stop of the world inside each collection (under the GC lock). */
static uint64_t g_stop_begin;
static void boehm_event(GC_EventType ev) {
    pause_rec_boehm_event(ev);
    if (ev == GC_EVENT_PRE_STOP_WORLD) {
        g_stop_begin = bench_now_ns();
    } else if (ev == GC_EVENT_POST_STOP_WORLD && g_stop_begin != 0) {
        record_stop(bench_now_ns() - g_stop_begin);
        g_stop_begin = 0;
    }
}

static void run_boehm(void) {
    GC_INIT();
    GC_allow_register_threads();
    GC_start_performance_measurement();
    pause_rec_init(&g_pauses, -1);
    pause_rec_init(&g_stops, -1);
    pause_rec_attach_boehm(&g_pauses);
    GC_set_on_collection_event(boehm_event);
    run_workers(b_worker); /* the main thread is registered; libgc stops it with a signal */
}

static void boehm_report(void) {
    pause_summary ps = pause_rec_summary(&g_pauses);
    printf("STATS impl=boehm gcs=%lu full_gc_total_ms=%lu total_pause_ms=%.3f", (unsigned long)GC_get_gc_no(),
           (unsigned long)GC_get_full_gc_total_time(), ps.total_ms);
    pause_summary_print(stdout, "", &ps);
    print_stops(1);
    printf(" heap_mb=%.1f parallel_markers=%d\n", (double)GC_get_heap_size() / (1024.0 * 1024.0), GC_get_parallel());
    pause_rec_free(&g_pauses);
}
#endif

/* ==========================================================================================
 * malloc / free
 * ======================================================================================== */

static void *m_worker(void *arg) {
    worker *w = arg;
    double t0 = bench_now_seconds();
    mnode **holder = malloc(sizeof *holder * (size_t)g_work);
    if (holder == NULL)
        die("malloc failed");
    for (int k = 0; k < g_work; k++)
        holder[k] = m_build(g_depth);
    for (int r = 0; r < g_work * g_rounds; r++) {
        for (int d = MIN_DEPTH; d <= g_depth; d += 2) {
            long iterations = 1L << (g_depth - d + MIN_DEPTH);
            for (long i = 0; i < iterations; i++) {
                mnode *tree = m_build(d);
                long c = m_check(tree);
                check_tree(w, "short-lived tree", d, c);
                w->trees++;
                w->nodes += c;
                m_free(tree);
            }
        }
    }
    for (int k = 0; k < g_work; k++) {
        long c = m_check(holder[k]);
        check_tree(w, "long-lived tree", g_depth, c);
        w->long_lived_nodes += c;
        m_free(holder[k]);
    }
    free(holder);
    w->wall_s = bench_now_seconds() - t0;
    return NULL;
}

/* ==========================================================================================
 * main
 * ======================================================================================== */
static void usage(FILE *out) {
    fprintf(out, "usage: threads_alloc [--impl=tenure|boehm|malloc] [--threads T] [--work K] [--depth D]\n"
                 "                     [--rounds R] [--no-events]\n"
                 "       threads_alloc --list\n");
}

static int parse_int(const char *s, int lo, int hi, const char *what) {
    char *end;
    long v = strtol(s, &end, 10);
    if (*s == '\0' || *end != '\0' || v < lo || v > hi) {
        fprintf(stderr, "threads_alloc: %s must be an integer in %d..%d\n", what, lo, hi);
        exit(2);
    }
    return (int)v;
}

int main(int argc, char **argv) {
    const char *impl = "tenure";
    int events = 1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = NULL;
#define OPT(name)                                                           \
    ((strncmp(a, name "=", sizeof(name)) == 0 && (v = a + sizeof(name))) || \
     (strcmp(a, name) == 0 && i + 1 < argc && (v = argv[++i])))
        if (OPT("--impl")) {
            impl = v;
        } else if (OPT("--threads")) {
            g_threads = parse_int(v, 1, MAX_THREADS, "--threads");
        } else if (OPT("--work")) {
            g_work = parse_int(v, 1, 1024, "--work");
        } else if (OPT("--depth")) {
            g_depth = parse_int(v, MIN_DEPTH, 24, "--depth");
        } else if (OPT("--rounds")) {
            g_rounds = parse_int(v, 1, 1000000, "--rounds");
        } else if (strcmp(a, "--no-events") == 0) {
            events = 0;
        } else {
            return bench_other_option(a, 1, usage);
        }
#undef OPT
    }

    double t0 = bench_now_seconds(), wall;
    if (strcmp(impl, "tenure") == 0) {
        run_tenure(events);
        wall = bench_now_seconds() - t0;
        tenure_report_and_destroy(events);
    } else if (strcmp(impl, "boehm") == 0) {
#ifdef TENURE_BENCH_HAVE_BOEHM
        run_boehm();
        wall = bench_now_seconds() - t0;
        boehm_report();
#else
        fprintf(stderr, "threads_alloc: built without the Boehm collector "
                        "(apt-get install libgc-dev pkg-config, then re-run cmake)\n");
        return 77;
#endif
    } else if (strcmp(impl, "malloc") == 0) {
        run_workers(m_worker);
        wall = bench_now_seconds() - t0;
    } else {
        usage(stderr);
        return 2;
    }

    long trees = 0, nodes = 0, long_lived = 0;
    int failed = 0;
    for (int i = 0; i < g_threads; i++) {
        const worker *w = &g_workers[i];
        trees += w->trees;
        nodes += w->nodes;
        long_lived += w->long_lived_nodes;
        failed |= w->failed;
        printf("THREAD impl=%s id=%d wall_s=%.4f\n", impl, w->id, w->wall_s);
    }
    /* the expected totals, computed independently of the workers' counts */
    long want_trees = 0, want_nodes = 0;
    for (int d = MIN_DEPTH; d <= g_depth; d += 2) {
        long iterations = (1L << (g_depth - d + MIN_DEPTH)) * g_rounds * g_work * g_threads;
        want_trees += iterations;
        want_nodes += iterations * tree_nodes(d);
    }
    long want_long_lived = tree_nodes(g_depth) * g_work * g_threads;
    if (trees != want_trees || nodes != want_nodes || long_lived != want_long_lived) {
        fprintf(stderr, "threads_alloc: counted %ld trees, %ld nodes, %ld long-lived nodes; expected %ld, %ld, %ld\n",
                trees, nodes, long_lived, want_trees, want_nodes, want_long_lived);
        failed = 1;
    }
    printf("CHECK threads=%d work=%d depth=%d rounds=%d trees=%ld nodes=%ld long_lived_nodes=%ld %s\n", g_threads,
           g_work, g_depth, g_rounds, trees, nodes, long_lived, failed ? "FAILED" : "ok");
    printf("RESULT impl=%s threads=%d work=%d depth=%d wall_s=%.4f cpu_s=%.3f maxrss_kb=%ld\n", impl, g_threads, g_work,
           g_depth, wall, cpu_seconds(), bench_maxrss_kb());
    if (fflush(stdout) != 0)
        return 1;
    return failed ? 1 : 0;
}
