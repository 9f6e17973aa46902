/*
 * binary_trees.c - the Benchmarks Game "binary-trees" benchmark (single-threaded), in three
 * memory managers selected on the command line:
 *
 *   tenure   nodes are tenure objects (a tenure_header, then two child references), children
 *            are stored through tenure_write_ref, locals are rooted in TENURE_FRAME frames
 *   boehm    the Boehm-Demers-Weiser collector (GC_INIT, GC_MALLOC), if built with libgc
 *   malloc   malloc, and an explicit recursive free of every tree
 *
 * Usage: binary_trees [--impl=tenure|boehm|malloc] [max_depth]     (default tenure, 10)
 *        binary_trees --list                                       (the implementations built)
 *
 * Algorithm (as in the Benchmarks Game): max_depth = max(min_depth + 2, n) with min_depth 4;
 * a stretch tree of depth max_depth + 1 is built, checked and dropped; a long-lived tree of
 * depth max_depth is built and kept; then for d = 4, 6, ..., max_depth, 2^(max_depth - d + 4)
 * trees of depth d are built, checked and dropped; finally the long-lived tree is checked.
 * A tree of depth d has 2^(d+1) - 1 nodes; check() counts the nodes.
 *
 * Output: the usual check lines (identical for all implementations), then machine-readable
 * lines for the driver script:
 *   RESULT impl=<name> depth=<n> wall_s=<seconds> maxrss_kb=<peak RSS, getrusage>
 *   STATS impl=tenure gcs=.. compacting=.. sweeping=.. gen0=.. gen1=.. gen2=..
 *         total_pause_ms=.. max_pause_ms=.. committed_mb=.. allocated_mb=..
 *         median_pause_ms=.. p95_pause_ms=.. p99_pause_ms=..
 *         (the percentiles are over every GC's pause_ns, from tenure_set_gc_callback)
 *   STATS impl=boehm gcs=.. total_pause_ms=.. (full-collection time as measured by libgc)
 *         heap_mb=.. median_pause_ms=.. p95_pause_ms=.. p99_pause_ms=.. max_pause_ms=..
 *         event_total_pause_ms=.. (GC_EVENT_START..GC_EVENT_END of every collection)
 * Wall time covers everything from instance creation to destruction (not process start-up).
 */
#define _POSIX_C_SOURCE 200809L

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "tenure.h"
#include "tenure_profiler.h"

#ifdef TENURE_BENCH_HAVE_BOEHM
#include <gc/gc.h>
#endif

#include "bench_common.h"

#define MIN_DEPTH 4

static void die(const char *what) {
    fprintf(stderr, "binary_trees: %s\n", what);
    exit(2);
}

#include "bench_trees.h" /* tnode/t_build/t_check, mnode/m_build/m_check/m_free, bnode/b_build/b_check */

static double now_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* The check lines, shared by every implementation so that their outputs can be compared. */
static void print_stretch(int depth, long check) { printf("stretch tree of depth %d\t check: %ld\n", depth, check); }
static void print_iterations(long iterations, int depth, long check) {
    printf("%ld\t trees of depth %d\t check: %ld\n", iterations, depth, check);
}
static void print_long_lived(int depth, long check) {
    printf("long lived tree of depth %d\t check: %ld\n", depth, check);
}

/* ==========================================================================================
 * tenure
 * ======================================================================================== */

static tenure_runtime *g_rt;
static const tenure_type *g_tnode_type;
static pause_rec g_pauses; /* every GC's pause (tenure or Boehm) */

static void tenure_hook(tenure_runtime *rt, tenure_result result, const char *function, const char *message,
                        void *context) {
    (void)rt;
    (void)context;
    fprintf(stderr, "binary_trees: tenure error in %s: %s (%s)\n", function ? function : "?", message ? message : "",
            tenure_strerror(result));
}

/* TENURE_BENCH_PROFILER=1: a profiler with GC callbacks only (what a profiler following
 * every object needs), which counts what it is told: for the profiler-overhead figure. */
static size_t g_prof_ranges, g_prof_roots, g_prof_gcs;
static void prof_moved(void *c, size_t n, const uintptr_t *o, const uintptr_t *nw, const size_t *l) {
    (void)c, (void)o, (void)nw, (void)l;
    g_prof_ranges += n;
}
static void prof_surviving(void *c, size_t n, const uintptr_t *s, const size_t *l) {
    (void)c, (void)s, (void)l;
    g_prof_ranges += n;
}
static void prof_roots(void *c, size_t n, void *const *ids, const tenure_root_kind *k, const uint32_t *f,
                       const uintptr_t *r) {
    (void)c, (void)ids, (void)k, (void)f, (void)r;
    g_prof_roots += n;
}
static void prof_finished(void *c) {
    (void)c;
    g_prof_gcs++;
}

static void attach_bench_profiler(tenure_runtime *rt) {
    const char *e = getenv("TENURE_BENCH_PROFILER");
    if (!e || strcmp(e, "1") != 0)
        return;
    static const tenure_profiler_callbacks cb = {.moved_references = prof_moved,
                                                 .surviving_references = prof_surviving,
                                                 .root_references = prof_roots,
                                                 .gc_finished = prof_finished};
    if (!tenure_profiler_attach(rt, &cb, TENURE_PROFILE_GC, NULL)) {
        fprintf(stderr, "binary_trees: tenure_profiler_attach failed\n");
        exit(2);
    }
}

static void run_tenure(int max_depth) {
    tenure_result res = TENURE_OK;
    g_rt = tenure_create(NULL, &res); /* defaults plus TENURE_* environment options */
    if (g_rt == NULL) {
        fprintf(stderr, "binary_trees: tenure_create failed: %s\n", tenure_strerror(res));
        exit(2);
    }
    tenure_set_error_hook(g_rt, tenure_hook, NULL);
    pause_rec_init(&g_pauses, -1);
    pause_rec_attach_tenure(g_rt, &g_pauses);
    attach_bench_profiler(g_rt);
    static const size_t refs[] = {offsetof(tnode, left), offsetof(tnode, right)};
    tenure_type_desc desc;
    memset(&desc, 0, sizeof desc);
    desc.name = "binary_trees.node";
    desc.size = sizeof(tnode);
    desc.ref_offsets = refs;
    desc.ref_count = 2;
    g_tnode_type = tenure_type_register(g_rt, &desc);
    if (g_tnode_type == NULL)
        die("tenure_type_register failed");

    tnode *long_lived = NULL, *tree = NULL;
    TENURE_FRAME(g_rt, frame, long_lived, tree);

    int stretch = max_depth + 1;
    tree = t_build(g_rt, g_tnode_type, stretch);
    print_stretch(stretch, t_check(tree));
    tree = NULL;

    long_lived = t_build(g_rt, g_tnode_type, max_depth);

    for (int d = MIN_DEPTH; d <= max_depth; d += 2) {
        long iterations = 1L << (max_depth - d + MIN_DEPTH);
        long check = 0;
        for (long i = 0; i < iterations; i++) {
            tree = t_build(g_rt, g_tnode_type, d);
            check += t_check(tree);
            tree = NULL;
        }
        print_iterations(iterations, d, check);
    }
    print_long_lived(max_depth, t_check(long_lived));

    TENURE_FRAME_POP(g_rt, frame);
}

static void tenure_report_and_destroy(void) {
    /* The pause distribution comes from the GC callback (every GC's pause_ns); total_pause_ms
     * and max_pause_ms stay the collector's own totals (tenure_get_stats). */
    tenure_stats st;
    pause_summary ps = bench_tenure_finish("binary_trees", &g_rt, &g_pauses, &st);
    printf("STATS impl=tenure gcs=%llu compacting=%llu sweeping=%llu gen0=%llu gen1=%llu gen2=%llu "
           "total_pause_ms=%.3f max_pause_ms=%.3f committed_mb=%.1f allocated_mb=%.1f "
           "median_pause_ms=%.4f p95_pause_ms=%.4f p99_pause_ms=%.4f\n",
           (unsigned long long)st.gc_count, (unsigned long long)st.compacting_gcs, (unsigned long long)st.sweeping_gcs,
           (unsigned long long)st.gen[0].collections, (unsigned long long)st.gen[1].collections,
           (unsigned long long)st.gen[2].collections, (double)st.total_pause_ns / 1e6, (double)st.max_pause_ns / 1e6,
           (double)st.committed_bytes / (1024.0 * 1024.0), (double)st.bytes_allocated / (1024.0 * 1024.0), ps.median_ms,
           ps.p95_ms, ps.p99_ms);
    pause_rec_free(&g_pauses);
    if (g_prof_gcs)
        printf("PROFILER gcs=%zu ranges=%zu roots=%zu\n", g_prof_gcs, g_prof_ranges, g_prof_roots);
}

/* ==========================================================================================
 * Boehm
 * ======================================================================================== */
#ifdef TENURE_BENCH_HAVE_BOEHM

static void run_boehm(int max_depth) {
    GC_INIT();
    GC_start_performance_measurement();
    pause_rec_init(&g_pauses, -1);
    pause_rec_attach_boehm(&g_pauses);

    int stretch = max_depth + 1;
    bnode *tree = b_build(stretch);
    print_stretch(stretch, b_check(tree));
    tree = NULL;

    bnode *long_lived = b_build(max_depth);

    for (int d = MIN_DEPTH; d <= max_depth; d += 2) {
        long iterations = 1L << (max_depth - d + MIN_DEPTH);
        long check = 0;
        for (long i = 0; i < iterations; i++) {
            tree = b_build(d);
            check += b_check(tree);
            tree = NULL;
        }
        print_iterations(iterations, d, check);
    }
    print_long_lived(max_depth, b_check(long_lived));
}

static void boehm_report(void) {
    pause_summary ps = pause_rec_summary(&g_pauses);
    pause_rec_write_log(&g_pauses);
    printf("STATS impl=boehm gcs=%lu total_pause_ms=%lu heap_mb=%.1f median_pause_ms=%.4f "
           "p95_pause_ms=%.4f p99_pause_ms=%.4f max_pause_ms=%.4f event_total_pause_ms=%.3f\n",
           (unsigned long)GC_get_gc_no(), (unsigned long)GC_get_full_gc_total_time(),
           (double)GC_get_heap_size() / (1024.0 * 1024.0), ps.median_ms, ps.p95_ms, ps.p99_ms, ps.max_ms, ps.total_ms);
}
#endif

/* ==========================================================================================
 * malloc / free
 * ======================================================================================== */

static void run_malloc(int max_depth) {
    int stretch = max_depth + 1;
    mnode *tree = m_build(stretch);
    print_stretch(stretch, m_check(tree));
    m_free(tree);

    mnode *long_lived = m_build(max_depth);

    for (int d = MIN_DEPTH; d <= max_depth; d += 2) {
        long iterations = 1L << (max_depth - d + MIN_DEPTH);
        long check = 0;
        for (long i = 0; i < iterations; i++) {
            tree = m_build(d);
            check += m_check(tree);
            m_free(tree);
        }
        print_iterations(iterations, d, check);
    }
    print_long_lived(max_depth, m_check(long_lived));
    m_free(long_lived);
}

/* ==========================================================================================
 * main
 * ======================================================================================== */
static void usage(FILE *out) {
    fprintf(out, "usage: binary_trees [--impl=tenure|boehm|malloc] [max_depth]\n"
                 "       binary_trees --list\n");
}

int main(int argc, char **argv) {
    const char *impl = "tenure";
    int depth = 10;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strncmp(a, "--impl=", 7) == 0) {
            impl = a + 7;
        } else if (strcmp(a, "--impl") == 0 && i + 1 < argc) {
            impl = argv[++i];
        } else if (a[0] == '-') {
            return bench_other_option(a, 1, usage);
        } else {
            char *end;
            long v = strtol(a, &end, 10);
            if (*a == '\0' || *end != '\0' || v < 0 || v > 30) {
                usage(stderr);
                return 2;
            }
            depth = (int)v;
        }
    }
    int max_depth = depth < MIN_DEPTH + 2 ? MIN_DEPTH + 2 : depth;

    double t0 = now_seconds();
    if (strcmp(impl, "tenure") == 0) {
        run_tenure(max_depth);
        tenure_report_and_destroy();
    } else if (strcmp(impl, "boehm") == 0) {
#ifdef TENURE_BENCH_HAVE_BOEHM
        run_boehm(max_depth);
        boehm_report();
#else
        fprintf(stderr, "binary_trees: built without the Boehm collector "
                        "(apt-get install libgc-dev pkg-config, then re-run cmake)\n");
        return 77;
#endif
    } else if (strcmp(impl, "malloc") == 0) {
        run_malloc(max_depth);
    } else {
        usage(stderr);
        return 2;
    }
    double wall = now_seconds() - t0;

    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    printf("RESULT impl=%s depth=%d wall_s=%.4f maxrss_kb=%ld\n", impl, max_depth, wall, (long)ru.ru_maxrss);
    return fflush(stdout) == 0 ? 0 : 1;
}
