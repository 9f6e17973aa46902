/*
 * mark_rate.c - the mark rate of a full GC over a large live graph: tenure versus Boehm.
 *
 * A live graph of about --live-mb MiB (default 512) of small objects is built, reachable from
 * one root: node i is 32, 40 or 48 bytes (chosen by a hash of i; 40 on average) and holds
 *   - ref[0], ref[1]: the tree links to nodes 2i+1 and 2i+2 (a complete binary tree in
 *     breadth-first order, so every node is reachable from node 0);
 *   - ref[2] (40- and 48-byte nodes only, two thirds of them): a cross link to a random node;
 *   - an id word (i) and, in 48-byte nodes, one more payload word.
 * Then full GCs are timed, --gcs of them per mode (default 5):
 *
 *   tenure  nodes are tenure objects (the header word is the first of the 32/40/48 bytes).
 *           The nodes are allocated into a malloc'd table registered as a root area, linked
 *           through tenure_write_ref, the table is unregistered (the only root left is a
 *           strong handle to node 0) and the graph is promoted to gen2 with
 *           tenure_collect(rt, 2, 0) twice. Timed: tenure_collect(rt, 2, 0) (mode "default":
 *           the collector chooses compact or sweep) and tenure_collect(rt, 2,
 *           TENURE_COLLECT_COMPACT) (mode "compact"); the pause is the collector's own
 *           pause_ns (tenure_get_last_gc_info). Collector options: defaults plus TENURE_*
 *           environment variables (GCConservativeStack is printed).
 *   boehm   the same graph (same node sizes, a tag word in place of the header) built with
 *           GC_MALLOC, the table GC_MALLOC_UNCOLLECTABLE (freed after linking), the root a
 *           static variable. Timed: GC_gcollect() (wall time of the call; libgc's own
 *           GC_EVENT_START..END pause is printed as well).
 *
 * MB/s = live MiB (the bytes of the graph's nodes, the same for both) / GC pause in seconds.
 * After the timed GCs the graph is checked (every node's id and cross link, through the tree).
 *
 * Usage: mark_rate [--impl=tenure|boehm] [--live-mb N] [--gcs N] [--seed N]
 *        mark_rate --list
 * Output:
 *   CONFIG impl=.. live_mb=.. nodes=.. conservative_stack=.. (tenure) / gc_version=.. (boehm)
 *   BUILD impl=.. build_s=.. promote_s=..
 *   GC impl=.. mode=.. n=.. pause_ms=.. wall_ms=.. [compacted=.. mark_ms=..]
 *   RESULT impl=.. mode=.. live_mb=.. gcs=.. median_gc_ms=.. min_gc_ms=.. max_gc_ms=.. mbps=..
 *          heap_live_mb=.. maxrss_kb=..
 *   MARK impl=tenure mode=.. median_mark_ms=.. mark_mbps=..   (the mark phase alone: phase_us[0])
 *   CHECK impl=.. nodes=.. ok|FAILED
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

#define MAX_GCS 100

static size_t g_nodes; /* number of nodes */
static uint64_t g_seed = 1;
static int g_gcs = 5;
static double g_live_mib; /* the bytes of all nodes, in MiB */

static void die(const char *what) {
    fprintf(stderr, "mark_rate: %s\n", what);
    exit(2);
}

static uint64_t mix(uint64_t x) { /* splitmix64 finalizer */
    x += 0x9e3779b97f4a7c15ull + g_seed * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}
static int kind_of(size_t i) { return (int)(mix(i) % 3); } /* 0: 32 bytes, 1: 40, 2: 48 */
static size_t cross_of(size_t i) { return (size_t)(mix(i ^ 0x5555555555555555ull) % g_nodes); }
static const size_t kind_size[3] = {32, 40, 48};

/* Node layouts (the same for both collectors; word 0 is tenure's header or Boehm's tag). */
typedef struct node32 {
    uintptr_t w0;
    void *ref[2];
    uint64_t id;
} node32;
typedef struct node40 {
    uintptr_t w0;
    void *ref[3];
    uint64_t id;
} node40;
typedef struct node48 {
    uintptr_t w0;
    void *ref[3];
    uint64_t id;
    uint64_t pad;
} node48;
_Static_assert(sizeof(node32) == 32 && sizeof(node40) == 40 && sizeof(node48) == 48, "node sizes");

static uint64_t node_id(const void *n, int kind) {
    switch (kind) {
    case 0: return ((const node32 *)n)->id;
    case 1: return ((const node40 *)n)->id;
    default: return ((const node48 *)n)->id;
    }
}
static void **node_refs(void *n) { return (void **)((char *)n + sizeof(uintptr_t)); }

/* Count the nodes, decide g_nodes from the target size. */
static void plan(double live_mb) {
    uint64_t target = (uint64_t)(live_mb * 1048576.0), bytes = 0;
    size_t i = 0;
    while (bytes < target)
        bytes += kind_size[kind_of(i++)];
    g_nodes = i;
    g_live_mib = (double)bytes / 1048576.0;
}

/* Check through the tree links: ids and cross links. Does not allocate. */
static size_t g_bad;
static void check_tree(void *n, size_t i, size_t *count) {
    while (n != NULL) {
        int k = kind_of(i);
        (*count)++;
        if (node_id(n, k) != i) {
            g_bad++;
            return;
        }
        void **r = node_refs(n);
        if (k != 0) {
            void *c = r[2];
            size_t ci = cross_of(i);
            if (c == NULL || node_id(c, kind_of(ci)) != ci)
                g_bad++;
        }
        check_tree(r[0], 2 * i + 1, count);
        n = r[1];
        i = 2 * i + 2;
    }
}

static void print_check(const char *impl, void *root) {
    size_t count = 0;
    g_bad = 0;
    check_tree(root, 0, &count);
    int ok = count == g_nodes && g_bad == 0;
    printf("CHECK impl=%s nodes=%zu reached=%zu bad=%zu %s\n", impl, g_nodes, count, g_bad, ok ? "ok" : "FAILED");
    if (!ok)
        exit(1);
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Sorts ms. */
static double median_of(double *ms, int n) {
    qsort(ms, (size_t)n, sizeof *ms, cmp_double);
    return (n % 2) ? ms[n / 2] : (ms[n / 2 - 1] + ms[n / 2]) / 2.0;
}

static void print_result(const char *impl, const char *mode, double *ms, int n, double heap_live_mib) {
    double med = median_of(ms, n);
    printf("RESULT impl=%s mode=%s live_mb=%.1f gcs=%d median_gc_ms=%.2f min_gc_ms=%.2f max_gc_ms=%.2f "
           "mbps=%.1f heap_live_mb=%.1f maxrss_kb=%ld\n",
           impl, mode, g_live_mib, n, med, ms[0], ms[n - 1], med > 0 ? g_live_mib / (med / 1e3) : 0.0, heap_live_mib,
           bench_maxrss_kb());
    fflush(stdout);
}

/* ==========================================================================================
 * tenure
 * ======================================================================================== */
static void tenure_hook(tenure_runtime *rt, tenure_result result, const char *function, const char *message,
                        void *context) {
    (void)rt;
    (void)context;
    fprintf(stderr, "mark_rate: tenure error in %s: %s (%s)\n", function ? function : "?", message ? message : "",
            tenure_strerror(result));
}

static void run_tenure(void) {
    tenure_config cfg;
    tenure_config_init(&cfg);
    if (tenure_config_from_env(&cfg) != TENURE_OK)
        die("a TENURE_* environment variable does not parse");
    tenure_result res = TENURE_OK;
    tenure_runtime *rt = tenure_create(&cfg, &res);
    if (rt == NULL) {
        fprintf(stderr, "mark_rate: tenure_create failed: %s\n", tenure_strerror(res));
        exit(2);
    }
    tenure_set_error_hook(rt, tenure_hook, NULL);
    printf("CONFIG impl=tenure live_mb=%.1f nodes=%zu conservative_stack=%u compact_mode=%u\n", g_live_mib, g_nodes,
           (unsigned)cfg.GCConservativeStack, (unsigned)cfg.GCCompactMode);

    static const size_t refs2[] = {offsetof(node32, ref[0]), offsetof(node32, ref[1])};
    static const size_t refs3a[] = {offsetof(node40, ref[0]), offsetof(node40, ref[1]), offsetof(node40, ref[2])};
    static const size_t refs3b[] = {offsetof(node48, ref[0]), offsetof(node48, ref[1]), offsetof(node48, ref[2])};
    const tenure_type *types[3];
    const char *names[3] = {"mark_rate.node32", "mark_rate.node40", "mark_rate.node48"};
    const size_t *offs[3] = {refs2, refs3a, refs3b};
    for (int k = 0; k < 3; k++) {
        tenure_type_desc d;
        memset(&d, 0, sizeof d);
        d.name = names[k];
        d.size = kind_size[k];
        d.ref_offsets = offs[k];
        d.ref_count = k == 0 ? 2 : 3;
        types[k] = tenure_type_register(rt, &d);
        if (types[k] == NULL)
            die("tenure_type_register failed");
    }

    double t0 = bench_now_seconds();
    void **table = calloc(g_nodes, sizeof *table);
    if (table == NULL)
        die("out of memory for the node table");
    tenure_root_area *area = tenure_root_area_add(rt, table, g_nodes);
    if (area == NULL)
        die("tenure_root_area_add failed");
    for (size_t i = 0; i < g_nodes; i++) {
        void *n = tenure_alloc(rt, types[kind_of(i)]);
        if (n == NULL)
            die("tenure_alloc failed");
        switch (kind_of(i)) {
        case 0: ((node32 *)n)->id = i; break;
        case 1: ((node40 *)n)->id = i; break;
        default:
            ((node48 *)n)->id = i;
            ((node48 *)n)->pad = ~(uint64_t)i;
            break;
        }
        table[i] = n;
    }
    /* Link (no allocation from here on: the table entries stay valid). */
    for (size_t i = 0; i < g_nodes; i++) {
        void *n = table[i];
        void **r = node_refs(n);
        if (2 * i + 1 < g_nodes)
            tenure_write_ref(rt, n, &r[0], table[2 * i + 1]);
        if (2 * i + 2 < g_nodes)
            tenure_write_ref(rt, n, &r[1], table[2 * i + 2]);
        if (kind_of(i) != 0)
            tenure_write_ref(rt, n, &r[2], table[cross_of(i)]);
    }
    tenure_handle *root = tenure_handle_new(rt, TENURE_HANDLE_STRONG, table[0]);
    if (root == NULL)
        die("tenure_handle_new failed");
    tenure_root_area_remove(rt, area);
    free(table);
    table = NULL;
    double t1 = bench_now_seconds();
    /* Promote to gen2 (gen0 -> gen1 -> gen2). */
    tenure_collect(rt, 2, 0);
    tenure_collect(rt, 2, 0);
    double t2 = bench_now_seconds();
    printf("BUILD impl=tenure build_s=%.2f promote_s=%.2f\n", t1 - t0, t2 - t1);

    static const struct {
        const char *name;
        unsigned flags;
    } modes[] = {{"default", 0}, {"compact", TENURE_COLLECT_COMPACT}};
    for (size_t m = 0; m < 2; m++) {
        double ms[MAX_GCS], mark_ms[MAX_GCS];
        for (int g = 0; g < g_gcs; g++) {
            uint64_t w0 = bench_now_ns();
            if (tenure_collect(rt, 2, modes[m].flags) != TENURE_OK)
                die("tenure_collect failed");
            uint64_t w1 = bench_now_ns();
            tenure_gc_info info;
            tenure_get_last_gc_info(rt, &info);
            ms[g] = (double)info.pause_ns / 1e6;
            mark_ms[g] = info.phase_us[0] / 1e3;
            printf("GC impl=tenure mode=%s n=%d generation=%d pause_ms=%.2f wall_ms=%.2f compacted=%d mark_ms=%.2f\n",
                   modes[m].name, g + 1, info.generation, ms[g], (double)(w1 - w0) / 1e6, info.compacted, mark_ms[g]);
        }
        tenure_stats st;
        tenure_get_stats(rt, &st);
        print_result("tenure", modes[m].name, ms, g_gcs, (double)st.live_bytes_after_gc / 1048576.0);
        double mark_median = median_of(mark_ms, g_gcs);
        printf("MARK impl=tenure mode=%s median_mark_ms=%.2f mark_mbps=%.1f\n", modes[m].name, mark_median,
               g_live_mib / (mark_median / 1e3));
    }
    print_check("tenure", tenure_handle_get(rt, root));
    tenure_handle_free(rt, root);
    tenure_destroy(rt);
}

/* ==========================================================================================
 * Boehm
 * ======================================================================================== */
#ifdef TENURE_BENCH_HAVE_BOEHM
static void *volatile g_broot;

static void run_boehm(void) {
    GC_INIT();
    pause_rec rec;
    pause_rec_init(&rec, -1);
    pause_rec_attach_boehm(&rec);
    printf("CONFIG impl=boehm live_mb=%.1f nodes=%zu gc_version=%u.%u\n", g_live_mib, g_nodes,
           (unsigned)(GC_get_version() >> 16), (unsigned)((GC_get_version() >> 8) & 0xff));

    double t0 = bench_now_seconds();
    void **table = GC_MALLOC_UNCOLLECTABLE(g_nodes * sizeof *table);
    if (table == NULL)
        die("GC_MALLOC_UNCOLLECTABLE failed");
    for (size_t i = 0; i < g_nodes; i++) {
        int k = kind_of(i);
        void *n = GC_MALLOC(kind_size[k]); /* cleared by libgc */
        if (n == NULL)
            die("GC_MALLOC failed");
        ((node32 *)n)->w0 = (uintptr_t)k + 1; /* a tag, not a pointer */
        switch (k) {
        case 0: ((node32 *)n)->id = i; break;
        case 1: ((node40 *)n)->id = i; break;
        default:
            ((node48 *)n)->id = i;
            ((node48 *)n)->pad = ~(uint64_t)i;
            break;
        }
        table[i] = n;
    }
    for (size_t i = 0; i < g_nodes; i++) {
        void **r = node_refs(table[i]);
        if (2 * i + 1 < g_nodes)
            r[0] = table[2 * i + 1];
        if (2 * i + 2 < g_nodes)
            r[1] = table[2 * i + 2];
        if (kind_of(i) != 0)
            r[2] = table[cross_of(i)];
    }
    g_broot = table[0];
    GC_FREE(table);
    table = NULL;
    double t1 = bench_now_seconds();
    GC_gcollect(); /* the table's memory is free now; settle */
    double t2 = bench_now_seconds();
    printf("BUILD impl=boehm build_s=%.2f promote_s=%.2f\n", t1 - t0, t2 - t1);

    double ms[MAX_GCS];
    for (int g = 0; g < g_gcs; g++) {
        pause_rec_reset(&rec);
        uint64_t w0 = bench_now_ns();
        GC_gcollect();
        uint64_t w1 = bench_now_ns();
        ms[g] = (double)(w1 - w0) / 1e6;
        pause_summary ps = pause_rec_summary(&rec);
        printf("GC impl=boehm mode=full n=%d pause_ms=%.2f wall_ms=%.2f event_pause_ms=%.2f\n", g + 1, ms[g], ms[g],
               ps.total_ms);
    }
    double heap_live = (double)(GC_get_heap_size() - GC_get_free_bytes()) / 1048576.0;
    print_result("boehm", "full", ms, g_gcs, heap_live);
    print_check("boehm", g_broot);
    pause_rec_free(&rec);
}
#endif

/* ==========================================================================================
 * main
 * ======================================================================================== */
static void usage(FILE *out) {
    fprintf(out, "usage: mark_rate [--impl=tenure|boehm] [--live-mb N] [--gcs N] [--seed N]\n"
                 "       mark_rate --list\n");
}

int main(int argc, char **argv) {
    const char *impl = "tenure";
    double live_mb = 512;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = NULL;
        if (strcmp(a, "--list") == 0 || strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0)
            return bench_other_option(a, 0, usage);
        const char *eq = strchr(a, '=');
        char key[32];
        size_t kl = eq ? (size_t)(eq - a) : strlen(a);
        if (kl >= sizeof key) {
            usage(stderr);
            return 2;
        }
        memcpy(key, a, kl);
        key[kl] = 0;
        if (eq)
            v = eq + 1;
        else if (i + 1 < argc)
            v = argv[++i];
        if (v == NULL) {
            usage(stderr);
            return 2;
        }
        if (strcmp(key, "--impl") == 0)
            impl = v;
        else if (strcmp(key, "--live-mb") == 0)
            live_mb = atof(v);
        else if (strcmp(key, "--gcs") == 0)
            g_gcs = atoi(v);
        else if (strcmp(key, "--seed") == 0)
            g_seed = strtoull(v, NULL, 10);
        else {
            usage(stderr);
            return 2;
        }
    }
    if (live_mb < 1 || g_gcs < 1 || g_gcs > MAX_GCS) {
        usage(stderr);
        return 2;
    }
    plan(live_mb);
    if (strcmp(impl, "tenure") == 0) {
        run_tenure();
    } else if (strcmp(impl, "boehm") == 0) {
#ifdef TENURE_BENCH_HAVE_BOEHM
        run_boehm();
#else
        fprintf(stderr, "mark_rate: built without the Boehm collector "
                        "(apt-get install libgc-dev pkg-config, then re-run cmake)\n");
        return 77;
#endif
    } else {
        usage(stderr);
        return 2;
    }
    return fflush(stdout) != 0;
}
