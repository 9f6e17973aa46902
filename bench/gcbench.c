/*
 * gcbench.c - Boehm's classic GCBench (John Ellis and Pete Kovac, C version by Hans Boehm),
 * single-threaded, in three memory managers selected on the command line:
 *
 *   tenure   nodes are tenure objects (a tenure_header, two references stored with
 *            tenure_write_ref, and the two ints i, j of the original Node0); locals are rooted
 *            in TENURE_FRAME frames; the array of doubles is a tenure array type without
 *            references (TENURE_TYPE_ARRAY | TENURE_TYPE_NO_REFS)
 *   boehm    GC_MALLOC for nodes, GC_MALLOC_ATOMIC for the array (if built with libgc)
 *   malloc   malloc/free; every temporary tree is freed explicitly after use
 *
 * Usage: gcbench [--impl=tenure|boehm|malloc] [--verify]
 *        gcbench --list                     (the implementations built)
 *
 * The program, as in the original:
 *   - a stretch tree of depth 18 (kStretchTreeDepth) is built bottom-up and dropped;
 *   - a long-lived tree of depth 16 is built top-down (Populate) and kept;
 *   - a long-lived array of 500,000 doubles is allocated and its first half filled with 1/i;
 *   - for depth d = 4, 6, ..., 16: NumIters(d) = 2 * TreeSize(18) / TreeSize(d) trees of depth
 *     d are built top-down (Populate into an existing root node: stores of young nodes into
 *     older ones) and dropped, then as many bottom-up (MakeTree) and dropped;
 *     TreeSize(d) = 2^(d+1) - 1;
 *   - the long-lived tree and array are checked.
 *
 * Checks (not in the original; they make a broken collector visible): the node count of the
 * stretch tree, of the last top-down and last bottom-up tree of each depth (of every tree with
 * --verify, which adds traversal time), of the long-lived tree at the end, and the array
 * contents. The CHECK lines are identical for every implementation; the driver compares them.
 *
 * Output:
 *   CHECK ...                      check lines (identical for all implementations)
 *   PHASE impl=.. depth=.. iters=.. top_down_ms=.. bottom_up_ms=..
 *   RESULT impl=<name> wall_s=<seconds> maxrss_kb=<peak RSS, getrusage>
 *   STATS impl=tenure gcs=.. gen0=.. gen1=.. gen2=.. compacting=.. sweeping=.. total_pause_ms=..
 *         median_pause_ms=.. p95_pause_ms=.. p99_pause_ms=.. max_pause_ms=.. committed_mb=..
 *   STATS impl=boehm gcs=.. full_gc_total_ms=.. total_pause_ms=.. median_pause_ms=..
 *         p95_pause_ms=.. p99_pause_ms=.. max_pause_ms=.. heap_mb=..
 * Wall time covers everything from instance creation (GC_INIT) to the end of the run (before
 * the tenure instance is destroyed), as the original's "Completed in" plus set-up.
 */
#define _POSIX_C_SOURCE 200809L

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tenure.h"

#ifdef TENURE_BENCH_HAVE_BOEHM
#include <gc/gc.h>
#endif

#include "bench_common.h"

#define STRETCH_TREE_DEPTH 18
#define LONG_LIVED_TREE_DEPTH 16
#define ARRAY_SIZE 500000
#define MIN_TREE_DEPTH 4
#define MAX_TREE_DEPTH 16

static int g_verify; /* --verify: count the nodes of every temporary tree */

static void die(const char *what) {
    fprintf(stderr, "gcbench: %s\n", what);
    exit(2);
}

static long tree_size(int depth) { return (1L << (depth + 1)) - 1; }

static long num_iters(int depth) { return 2 * tree_size(STRETCH_TREE_DEPTH) / tree_size(depth); }

/* A failed check is reported on stdout (so that the driver's comparison sees it) and makes
 * the exit status 1. */
static int g_check_failed;
static void check_count(const char *what, int depth, long got) {
    long want = tree_size(depth);
    if (got != want) {
        g_check_failed = 1;
        fprintf(stderr, "gcbench: %s of depth %d has %ld nodes, expected %ld\n", what, depth, got, want);
    }
}

static void print_phase(const char *impl, int depth, long iters, double td_s, double bu_s) {
    printf("PHASE impl=%s depth=%d iters=%ld top_down_ms=%.1f bottom_up_ms=%.1f\n", impl, depth, iters, td_s * 1e3,
           bu_s * 1e3);
}

/* The check lines of one depth: the same text for every implementation (the counts are
 * compared against the formula in check_count, and printed for the driver). */
static void print_depth_check(int depth, long iters, long td_nodes, long bu_nodes) {
    printf("CHECK %ld trees of depth %d: top-down nodes %ld, bottom-up nodes %ld\n", iters, depth, td_nodes, bu_nodes);
}

static void check_array(const double *a, size_t n) {
    int ok = n == ARRAY_SIZE;
    /* The original fills a[i] = 1.0 / i for i < n/2 (a[0] = inf) and tests a[1000]. */
    for (size_t i = 1; ok && i < n / 2; i++)
        ok = a[i] == 1.0 / (double)i;
    for (size_t i = n / 2; ok && i < n; i++)
        ok = a[i] == 0.0;
    if (!ok)
        g_check_failed = 1;
    printf("CHECK array of %zu doubles %s\n", n, ok ? "intact" : "CORRUPT");
}

/* ==========================================================================================
 * tenure
 * ======================================================================================== */
typedef struct tnode {
    tenure_header header;
    struct tnode *left;
    struct tnode *right;
    int i, j;
} tnode;

typedef struct tdarray {
    tenure_array_header header;
    double data[];
} tdarray;

static tenure_runtime *g_rt;
static const tenure_type *g_tnode_type;
static const tenure_type *g_tarray_type;
static pause_rec g_pauses;

static void tenure_hook(tenure_runtime *rt, tenure_result result, const char *function, const char *message,
                        void *context) {
    (void)rt;
    (void)context;
    fprintf(stderr, "gcbench: tenure error in %s: %s (%s)\n", function ? function : "?", message ? message : "",
            tenure_strerror(result));
}

static tnode *t_new(void) {
    tnode *n = tenure_alloc(g_rt, g_tnode_type);
    if (n == NULL) {
        fprintf(stderr, "gcbench: tenure_alloc failed: %s\n", tenure_strerror(tenure_last_error(g_rt)));
        exit(2);
    }
    return n;
}

/* Top-down: give `node` two new children, then populate them. `node` is rooted (it may move
 * when the allocation of a child collects); the children are re-read from it after every
 * allocation. */
static void t_populate(int depth, tnode *node) {
    if (depth <= 0)
        return;
    depth--;
    tnode *child = NULL;
    TENURE_FRAME(g_rt, frame, node, child);
    child = t_new();
    tenure_write_ref(g_rt, node, &node->left, child);
    child = t_new();
    tenure_write_ref(g_rt, node, &node->right, child);
    child = NULL;
    t_populate(depth, node->left);
    t_populate(depth, node->right);
    TENURE_FRAME_POP(g_rt, frame);
}

/* Bottom-up: both subtrees, then their parent (init_Node(result, left, right)). */
static tnode *t_make_tree(int depth) {
    if (depth <= 0)
        return t_new(); /* zeroed: left = right = NULL, i = j = 0 */
    tnode *left = NULL, *right = NULL;
    TENURE_FRAME(g_rt, frame, left, right);
    left = t_make_tree(depth - 1);
    right = t_make_tree(depth - 1);
    tnode *result = t_new(); /* may move left and right: the frame updates them */
    tenure_write_ref(g_rt, result, &result->left, left);
    tenure_write_ref(g_rt, result, &result->right, right);
    TENURE_FRAME_POP(g_rt, frame);
    return result;
}

/* Does not allocate: no collection while it runs. */
static long t_count(const tnode *n) {
    long c = 0;
    while (n != NULL) {
        c++;
        c += t_count(n->left);
        n = n->right;
    }
    return c;
}

static void t_time_construction(int depth) {
    long iters = num_iters(depth);
    tnode *temp = NULL;
    TENURE_FRAME(g_rt, frame, temp);
    long td_nodes = 0, bu_nodes = 0;

    double t0 = bench_now_seconds();
    for (long i = 0; i < iters; i++) {
        temp = t_new();
        t_populate(depth, temp);
        if (g_verify || i == iters - 1) {
            td_nodes = t_count(temp);
            check_count("top-down tree", depth, td_nodes);
        }
        temp = NULL;
    }
    double t1 = bench_now_seconds();
    for (long i = 0; i < iters; i++) {
        temp = t_make_tree(depth);
        if (g_verify || i == iters - 1) {
            bu_nodes = t_count(temp);
            check_count("bottom-up tree", depth, bu_nodes);
        }
        temp = NULL;
    }
    double t2 = bench_now_seconds();
    TENURE_FRAME_POP(g_rt, frame);
    print_phase("tenure", depth, iters, t1 - t0, t2 - t1);
    print_depth_check(depth, iters, td_nodes, bu_nodes);
}

static void run_tenure(void) {
    tenure_result res = TENURE_OK;
    g_rt = tenure_create(NULL, &res); /* defaults plus TENURE_* environment options */
    if (g_rt == NULL) {
        fprintf(stderr, "gcbench: tenure_create failed: %s\n", tenure_strerror(res));
        exit(2);
    }
    tenure_set_error_hook(g_rt, tenure_hook, NULL);
    pause_rec_init(&g_pauses, -1);
    pause_rec_attach_tenure(g_rt, &g_pauses);

    static const size_t refs[] = {offsetof(tnode, left), offsetof(tnode, right)};
    tenure_type_desc desc;
    memset(&desc, 0, sizeof desc);
    desc.name = "gcbench.Node0";
    desc.size = sizeof(tnode);
    desc.ref_offsets = refs;
    desc.ref_count = 2;
    g_tnode_type = tenure_type_register(g_rt, &desc);
    memset(&desc, 0, sizeof desc);
    desc.name = "gcbench.double[]";
    desc.size = sizeof(tenure_array_header);
    desc.elem_size = sizeof(double);
    desc.flags = TENURE_TYPE_ARRAY | TENURE_TYPE_NO_REFS;
    g_tarray_type = tenure_type_register(g_rt, &desc);
    if (g_tnode_type == NULL || g_tarray_type == NULL)
        die("tenure_type_register failed");

    tnode *temp = NULL, *long_lived = NULL;
    tdarray *array = NULL;
    TENURE_FRAME(g_rt, frame, temp, long_lived, array);

    /* Stretch the memory space quickly. */
    temp = t_make_tree(STRETCH_TREE_DEPTH);
    long n = t_count(temp);
    check_count("stretch tree", STRETCH_TREE_DEPTH, n);
    printf("CHECK stretch tree of depth %d: %ld nodes\n", STRETCH_TREE_DEPTH, n);
    temp = NULL;

    /* A long-lived tree, built top-down. */
    long_lived = t_new();
    t_populate(LONG_LIVED_TREE_DEPTH, long_lived);

    /* A long-lived array, half filled. */
    array = tenure_alloc_array(g_rt, g_tarray_type, ARRAY_SIZE);
    if (array == NULL)
        die("tenure_alloc_array failed");
    for (size_t i = 0; i < ARRAY_SIZE / 2; i++)
        array->data[i] = 1.0 / (double)i;

    for (int d = MIN_TREE_DEPTH; d <= MAX_TREE_DEPTH; d += 2)
        t_time_construction(d);

    n = t_count(long_lived);
    check_count("long-lived tree", LONG_LIVED_TREE_DEPTH, n);
    printf("CHECK long-lived tree of depth %d: %ld nodes\n", LONG_LIVED_TREE_DEPTH, n);
    check_array(array->data, tenure_array_length(array));
    TENURE_FRAME_POP(g_rt, frame);
}

static void tenure_report_and_destroy(void) {
    tenure_stats st;
    memset(&st, 0, sizeof st);
    tenure_get_stats(g_rt, &st);
    tenure_destroy(g_rt);
    g_rt = NULL;
    pause_summary ps = pause_rec_summary(&g_pauses);
    pause_rec_write_log(&g_pauses);
    if (ps.count != st.gc_count)
        fprintf(stderr, "gcbench: the GC callback saw %zu GCs, tenure_get_stats says %llu\n", ps.count,
                (unsigned long long)st.gc_count);
    printf("STATS impl=tenure gcs=%llu gen0=%llu gen1=%llu gen2=%llu compacting=%llu sweeping=%llu "
           "total_pause_ms=%.3f",
           (unsigned long long)st.gc_count, (unsigned long long)st.gen[0].collections,
           (unsigned long long)st.gen[1].collections, (unsigned long long)st.gen[2].collections,
           (unsigned long long)st.compacting_gcs, (unsigned long long)st.sweeping_gcs, ps.total_ms);
    pause_summary_print(stdout, "", &ps);
    printf(" stats_total_pause_ms=%.3f stats_max_pause_ms=%.3f committed_mb=%.1f allocated_mb=%.1f\n",
           (double)st.total_pause_ns / 1e6, (double)st.max_pause_ns / 1e6,
           (double)st.committed_bytes / (1024.0 * 1024.0), (double)st.bytes_allocated / (1024.0 * 1024.0));
    pause_rec_free(&g_pauses);
}

/* ==========================================================================================
 * Boehm
 * ======================================================================================== */
#ifdef TENURE_BENCH_HAVE_BOEHM
typedef struct bnode {
    struct bnode *left;
    struct bnode *right;
    int i, j;
} bnode;

static bnode *b_new(void) {
    bnode *n = GC_MALLOC(sizeof *n); /* cleared by libgc */
    if (n == NULL)
        die("GC_MALLOC failed");
    return n;
}

static void b_populate(int depth, bnode *node) {
    if (depth <= 0)
        return;
    depth--;
    node->left = b_new();
    node->right = b_new();
    b_populate(depth, node->left);
    b_populate(depth, node->right);
}

static bnode *b_make_tree(int depth) {
    if (depth <= 0)
        return b_new();
    bnode *left = b_make_tree(depth - 1);
    bnode *right = b_make_tree(depth - 1);
    bnode *result = b_new();
    result->left = left;
    result->right = right;
    return result;
}

static long b_count(const bnode *n) {
    long c = 0;
    while (n != NULL) {
        c++;
        c += b_count(n->left);
        n = n->right;
    }
    return c;
}

static void b_time_construction(int depth) {
    long iters = num_iters(depth);
    bnode *temp;
    long td_nodes = 0, bu_nodes = 0;
    double t0 = bench_now_seconds();
    for (long i = 0; i < iters; i++) {
        temp = b_new();
        b_populate(depth, temp);
        if (g_verify || i == iters - 1) {
            td_nodes = b_count(temp);
            check_count("top-down tree", depth, td_nodes);
        }
        temp = NULL;
    }
    double t1 = bench_now_seconds();
    for (long i = 0; i < iters; i++) {
        temp = b_make_tree(depth);
        if (g_verify || i == iters - 1) {
            bu_nodes = b_count(temp);
            check_count("bottom-up tree", depth, bu_nodes);
        }
        temp = NULL;
    }
    double t2 = bench_now_seconds();
    print_phase("boehm", depth, iters, t1 - t0, t2 - t1);
    print_depth_check(depth, iters, td_nodes, bu_nodes);
}

static void run_boehm(void) {
    GC_INIT();
    GC_start_performance_measurement();
    pause_rec_init(&g_pauses, -1);
    pause_rec_attach_boehm(&g_pauses);

    bnode *temp = b_make_tree(STRETCH_TREE_DEPTH);
    long n = b_count(temp);
    check_count("stretch tree", STRETCH_TREE_DEPTH, n);
    printf("CHECK stretch tree of depth %d: %ld nodes\n", STRETCH_TREE_DEPTH, n);
    temp = NULL;

    bnode *long_lived = b_new();
    b_populate(LONG_LIVED_TREE_DEPTH, long_lived);

    double *array = GC_MALLOC_ATOMIC(sizeof(double) * ARRAY_SIZE);
    if (array == NULL)
        die("GC_MALLOC_ATOMIC failed");
    /* GC_MALLOC_ATOMIC does not clear; the tenure array comes back zeroed, so clear the
     * second half too, to compare the same contents. */
    memset(array, 0, sizeof(double) * ARRAY_SIZE);
    for (size_t i = 0; i < ARRAY_SIZE / 2; i++)
        array[i] = 1.0 / (double)i;

    for (int d = MIN_TREE_DEPTH; d <= MAX_TREE_DEPTH; d += 2)
        b_time_construction(d);

    n = b_count(long_lived);
    check_count("long-lived tree", LONG_LIVED_TREE_DEPTH, n);
    printf("CHECK long-lived tree of depth %d: %ld nodes\n", LONG_LIVED_TREE_DEPTH, n);
    check_array(array, ARRAY_SIZE);
}

static void boehm_report(void) {
    pause_summary ps = pause_rec_summary(&g_pauses);
    pause_rec_write_log(&g_pauses);
    printf("STATS impl=boehm gcs=%lu full_gc_total_ms=%lu total_pause_ms=%.3f", (unsigned long)GC_get_gc_no(),
           (unsigned long)GC_get_full_gc_total_time(), ps.total_ms);
    pause_summary_print(stdout, "", &ps);
    printf(" heap_mb=%.1f\n", (double)GC_get_heap_size() / (1024.0 * 1024.0));
    pause_rec_free(&g_pauses);
}
#endif

/* ==========================================================================================
 * malloc / free
 * ======================================================================================== */
typedef struct mnode {
    struct mnode *left;
    struct mnode *right;
    int i, j;
} mnode;

static mnode *m_new(void) {
    mnode *n = malloc(sizeof *n);
    if (n == NULL)
        die("malloc failed");
    n->left = n->right = NULL;
    n->i = n->j = 0;
    return n;
}

static void m_populate(int depth, mnode *node) {
    if (depth <= 0)
        return;
    depth--;
    node->left = m_new();
    node->right = m_new();
    m_populate(depth, node->left);
    m_populate(depth, node->right);
}

static mnode *m_make_tree(int depth) {
    if (depth <= 0)
        return m_new();
    mnode *left = m_make_tree(depth - 1);
    mnode *right = m_make_tree(depth - 1);
    mnode *result = m_new();
    result->left = left;
    result->right = right;
    return result;
}

static long m_count(const mnode *n) {
    long c = 0;
    while (n != NULL) {
        c++;
        c += m_count(n->left);
        n = n->right;
    }
    return c;
}

static void m_free(mnode *n) {
    while (n != NULL) {
        mnode *right = n->right;
        m_free(n->left);
        free(n);
        n = right;
    }
}

static void m_time_construction(int depth) {
    long iters = num_iters(depth);
    mnode *temp;
    long td_nodes = 0, bu_nodes = 0;
    double t0 = bench_now_seconds();
    for (long i = 0; i < iters; i++) {
        temp = m_new();
        m_populate(depth, temp);
        if (g_verify || i == iters - 1) {
            td_nodes = m_count(temp);
            check_count("top-down tree", depth, td_nodes);
        }
        m_free(temp);
    }
    double t1 = bench_now_seconds();
    for (long i = 0; i < iters; i++) {
        temp = m_make_tree(depth);
        if (g_verify || i == iters - 1) {
            bu_nodes = m_count(temp);
            check_count("bottom-up tree", depth, bu_nodes);
        }
        m_free(temp);
    }
    double t2 = bench_now_seconds();
    print_phase("malloc", depth, iters, t1 - t0, t2 - t1);
    print_depth_check(depth, iters, td_nodes, bu_nodes);
}

static void run_malloc(void) {
    mnode *temp = m_make_tree(STRETCH_TREE_DEPTH);
    long n = m_count(temp);
    check_count("stretch tree", STRETCH_TREE_DEPTH, n);
    printf("CHECK stretch tree of depth %d: %ld nodes\n", STRETCH_TREE_DEPTH, n);
    m_free(temp);

    mnode *long_lived = m_new();
    m_populate(LONG_LIVED_TREE_DEPTH, long_lived);

    double *array = calloc(ARRAY_SIZE, sizeof(double));
    if (array == NULL)
        die("calloc failed");
    for (size_t i = 0; i < ARRAY_SIZE / 2; i++)
        array[i] = 1.0 / (double)i;

    for (int d = MIN_TREE_DEPTH; d <= MAX_TREE_DEPTH; d += 2)
        m_time_construction(d);

    n = m_count(long_lived);
    check_count("long-lived tree", LONG_LIVED_TREE_DEPTH, n);
    printf("CHECK long-lived tree of depth %d: %ld nodes\n", LONG_LIVED_TREE_DEPTH, n);
    check_array(array, ARRAY_SIZE);
    m_free(long_lived);
    free(array);
}

/* ==========================================================================================
 * main
 * ======================================================================================== */
static void usage(FILE *out) {
    fprintf(out, "usage: gcbench [--impl=tenure|boehm|malloc] [--verify]\n"
                 "       gcbench --list\n");
}

int main(int argc, char **argv) {
    const char *impl = "tenure";
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strncmp(a, "--impl=", 7) == 0) {
            impl = a + 7;
        } else if (strcmp(a, "--impl") == 0 && i + 1 < argc) {
            impl = argv[++i];
        } else if (strcmp(a, "--verify") == 0) {
            g_verify = 1;
        } else {
            return bench_other_option(a, 1, usage);
        }
    }

    printf("CHECK GCBench: stretch depth %d, long-lived depth %d, array %d doubles, depths %d..%d\n",
           STRETCH_TREE_DEPTH, LONG_LIVED_TREE_DEPTH, ARRAY_SIZE, MIN_TREE_DEPTH, MAX_TREE_DEPTH);
    double t0 = bench_now_seconds(), wall;
    if (strcmp(impl, "tenure") == 0) {
        run_tenure();
        wall = bench_now_seconds() - t0;
        tenure_report_and_destroy();
    } else if (strcmp(impl, "boehm") == 0) {
#ifdef TENURE_BENCH_HAVE_BOEHM
        run_boehm();
        wall = bench_now_seconds() - t0;
        boehm_report();
#else
        fprintf(stderr, "gcbench: built without the Boehm collector "
                        "(apt-get install libgc-dev pkg-config, then re-run cmake)\n");
        return 77;
#endif
    } else if (strcmp(impl, "malloc") == 0) {
        run_malloc();
        wall = bench_now_seconds() - t0;
    } else {
        usage(stderr);
        return 2;
    }
    printf("RESULT impl=%s wall_s=%.4f maxrss_kb=%ld\n", impl, wall, bench_maxrss_kb());
    if (fflush(stdout) != 0)
        return 1;
    return g_check_failed ? 1 : 0;
}
