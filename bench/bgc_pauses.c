/*
 * bgc_pauses.c - the pauses while generation 2 is collected, background GC (gcConcurrent=1)
 * against blocking gen2 GCs, on a large live old heap (issue 16's dedicated benchmark).
 *
 * An old heap of --live MiB: a table (an array in the LOH) of complete binary trees of depth
 * 10 (2047 nodes of 40 bytes each), built and promoted to gen2 first. Then the workload, the
 * same in both modes: short-lived trees of depth 4, and, every --replace-every KiB
 * allocated, one old tree replaced by a new one (the old one becomes gen2 garbage; the new
 * one ages through gen0 and gen1 into gen2) and two old nodes' children swapped between trees
 * (stores into old objects: the background GC's write watch). At a third and two thirds of
 * the allocation (--total, a multiple of --live), tenure_collect(2, NONBLOCKING) asks for a
 * gen2 GC: a background GC with gcConcurrent=1, a blocking one without; the budgets may start
 * others.
 *
 * Every pause is measured from the events, as PerfView measures it: an in-process listener
 * session (GC keyword, level 4) takes each GCSuspendEEBegin_V1 .. GCRestartEEEnd_V1. A pause
 * is "during a gen2 GC" from a gen2 GCStart_V2 to that GC's end: its restart for a blocking
 * one, its GCEnd_V1 for a background one (whose final pause and the foreground GCs inside it
 * count, each pause on its own).
 *
 * Usage: bgc_pauses [--live MiB] [--total X] [--replace-every KiB] [--seed N]
 *   (defaults 1024, 3, 256, 1). The mode comes from TENURE_gcConcurrent.
 * Output:
 *   BGC_PAUSES mode=background|blocking live_mib=.. gen2_gcs=.. background_gcs=..
 *     gen2_pauses=.. gen2_max_ms=.. gen2_p99_ms=.. gen2_median_ms=.. all_max_ms=.. all_p99_ms=..
 *     pauses=.. gcs=.. gen1_gcs=.. run_s=.. gc_pct=.. check=ok|bad
 *   BGC_PAUSE_KINDS mode=.. blocking=N/MAX initial=N/MAX final=N/MAX foreground=N/MAX
 *     (the pauses during gen2 GCs by kind: how many, the longest in ms)
 * The exit status is 1 if the old heap lost a tree or a node (each tree's checksum is
 * verified at the end).
 */
#define _POSIX_C_SOURCE 200809L

#include <inttypes.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tenure.h"
#include "tenure_events.h"
#include "bench_common.h"

typedef struct node {
    tenure_header header;
    struct node *left, *right;
    uint64_t id, spare;
} node;

#define OLD_DEPTH 10
#define TEMP_DEPTH 4

static tenure_runtime *rt;
static const tenure_type *node_t, *table_t;
static void *roots[2]; /* the table; a temporary tree */
static uint64_t rng = 0x9E3779B97F4A7C15ull;

static uint64_t next_rand(void) {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static node **table_slots(void) { return (node **)((char *)roots[0] + sizeof(tenure_array_header)); }

/* A complete tree of depth d whose nodes carry ids from *id on (rooted in roots[1] while it
 * grows: children first, then their parent). */
static node *tree(int d, uint64_t *id) {
    node *n = tenure_alloc(rt, node_t);
    if (!n) {
        fprintf(stderr, "bgc_pauses: out of memory\n");
        exit(1);
    }
    n->id = (*id)++;
    if (d == 0)
        return n;
    void **hold = &roots[1];
    void *saved = *hold;
    *hold = n;
    node *l = tree(d - 1, id);
    n = *hold;
    tenure_write_ref(rt, n, (void **)&n->left, l);
    node *r = tree(d - 1, id);
    n = *hold;
    tenure_write_ref(rt, n, (void **)&n->right, r);
    *hold = saved;
    return n;
}

/* The sum of a tree's ids, and its node count. */
static void tree_sum(const node *n, uint64_t *sum, uint64_t *count) {
    for (; n; n = n->right) {
        *sum += n->id;
        (*count)++;
        tree_sum(n->left, sum, count);
    }
}

/* ---- the pauses, from the events ---- */

typedef struct samples {
    double *v;
    size_t n, cap;
} samples;

/* The kinds of pause during a gen2 GC: a blocking gen2 GC's; a background GC's initial
 * pause, its final pause (suspend reason 6), a foreground gen0 or gen1 GC inside it. */
enum { K_BLOCKING, K_INITIAL, K_FINAL, K_FOREGROUND, K_KINDS };
static const char *const kind_names[K_KINDS] = {"blocking", "initial", "final", "foreground"};

typedef struct pauses {
    uint64_t suspend_ns;
    bool in_pause, gen2_now, bgc_active;
    int kind;
    uint64_t bgc_count, gen2_gcs, background_gcs;
    samples all, gen2;
    double kind_max[K_KINDS];
    unsigned kind_count[K_KINDS];
} pauses;
static pauses P;

static void push(samples *s, double ms) {
    if (s->n == s->cap) {
        s->cap = s->cap ? 2 * s->cap : 1024;
        if (!(s->v = realloc(s->v, s->cap * sizeof(double))))
            exit(1);
    }
    s->v[s->n++] = ms;
}

static uint64_t field(const tenure_event *e, const char *name) {
    uint64_t v = 0;
    tenure_event_read_u64(e, name, &v);
    return v;
}

static void listen(const tenure_event *e, void *ctx) {
    (void)ctx;
    const char *name = e->desc->name;
    if (!strcmp(name, "GCSuspendEEBegin_V1")) {
        P.suspend_ns = e->timestamp_ns;
        P.in_pause = true;
        P.gen2_now = P.bgc_active;
        P.kind = field(e, "Reason") == 6 ? K_FINAL : K_FOREGROUND;
    } else if (!strcmp(name, "GCStart_V2") && field(e, "Depth") == 2) {
        P.gen2_now = true;
        P.gen2_gcs++;
        P.kind = K_BLOCKING;
        if (field(e, "Type") == 1) {
            P.bgc_active = true;
            P.bgc_count = field(e, "Count");
            P.background_gcs++;
            P.kind = K_INITIAL;
        }
    } else if (!strcmp(name, "GCEnd_V1") && P.bgc_active && field(e, "Count") == P.bgc_count) {
        P.bgc_active = false; /* (a background GC ends outside any pause, after its sweep) */
    } else if (!strcmp(name, "GCRestartEEEnd_V1") && P.in_pause) {
        double ms = (double)(e->timestamp_ns - P.suspend_ns) / 1e6;
        push(&P.all, ms);
        if (P.gen2_now) {
            push(&P.gen2, ms);
            P.kind_count[P.kind]++;
            if (ms > P.kind_max[P.kind])
                P.kind_max[P.kind] = ms;
        }
        P.in_pause = false;
    }
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double pct(samples *s, double p) {
    if (!s->n)
        return 0;
    qsort(s->v, s->n, sizeof *s->v, cmp_double);
    size_t i = (size_t)(p * (double)s->n);
    return s->v[i < s->n ? i : s->n - 1];
}

int main(int argc, char **argv) {
    size_t live_mib = 1024, total = 3, replace_kib = 256;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--live"))
            live_mib = strtoull(argv[i + 1], NULL, 10);
        else if (!strcmp(argv[i], "--total"))
            total = strtoull(argv[i + 1], NULL, 10);
        else if (!strcmp(argv[i], "--replace-every"))
            replace_kib = strtoull(argv[i + 1], NULL, 10);
        else if (!strcmp(argv[i], "--seed"))
            rng ^= strtoull(argv[i + 1], NULL, 10) * 0x2545F4914F6CDD1Dull;
        else {
            fprintf(stderr, "usage: bgc_pauses [--live MiB] [--total X] [--replace-every KiB] [--seed N]\n");
            return 2;
        }
    }
    tenure_config cfg;
    tenure_config_init(&cfg);
    tenure_result res;
    if (tenure_config_from_env(&cfg) != TENURE_OK || !(rt = tenure_create(&cfg, &res))) {
        fprintf(stderr, "bgc_pauses: cannot create the instance\n");
        return 1;
    }
    static const size_t node_refs[] = {offsetof(node, left), offsetof(node, right)};
    node_t = tenure_type_register(
        rt, &(tenure_type_desc){.name = "Node", .size = sizeof(node), .ref_offsets = node_refs, .ref_count = 2});
    static const size_t elem[] = {0};
    table_t = tenure_type_register(rt, &(tenure_type_desc){.name = "Node[]",
                                                           .size = sizeof(tenure_array_header),
                                                           .elem_size = sizeof(void *),
                                                           .elem_ref_offsets = elem,
                                                           .elem_ref_count = 1,
                                                           .flags = TENURE_TYPE_ARRAY});
    if (!node_t || !table_t || !tenure_root_area_add(rt, roots, 2))
        return 1;
    size_t tree_bytes = ((size_t)2 << OLD_DEPTH) * sizeof(node);
    size_t ntrees = live_mib * 1048576 / tree_bytes;
    roots[0] = tenure_alloc_array(rt, table_t, ntrees);
    uint64_t id = 1, want_sum = 0, want_count = 0; /* what the table's trees hold */
    if (!roots[0])
        return 1;
    for (size_t i = 0; i < ntrees; i++) {
        node *t = tree(OLD_DEPTH, &id);
        tenure_write_ref(rt, roots[0], (void **)&table_slots()[i], t);
        tree_sum(table_slots()[i], &want_sum, &want_count);
    }
    tenure_collect(rt, 2, 0);
    tenure_collect(rt, 2, 0);

    tenure_session *session = tenure_session_start_listener(rt, 0x1, 4, listen, NULL);
    if (!session)
        return 1;
    tenure_stats s0;
    tenure_get_stats(rt, &s0);
    double t0 = bench_now_seconds();
    uint64_t budget = (uint64_t)total * live_mib * 1048576, done = 0, since_replace = 0;
    size_t temp_bytes = ((size_t)2 << TEMP_DEPTH) * sizeof(node);
    bool asked[2] = {false, false};
    while (done < budget) {
        uint64_t tid = 0;
        roots[1] = tree(TEMP_DEPTH, &tid); /* short-lived */
        roots[1] = NULL;
        done += temp_bytes;
        since_replace += temp_bytes;
        if (since_replace >= replace_kib * 1024) {
            since_replace = 0;
            size_t i = next_rand() % ntrees, j = next_rand() % ntrees;
            uint64_t gone = 0, gone_count = 0, added = 0, added_count = 0;
            tree_sum(table_slots()[i], &gone, &gone_count);
            node *t = tree(OLD_DEPTH, &id);
            tenure_write_ref(rt, roots[0], (void **)&table_slots()[i], t);
            tree_sum(table_slots()[i], &added, &added_count);
            want_sum += added - gone;
            want_count += added_count - gone_count;
            done += tree_bytes;
            node *a = table_slots()[i]->left, *b = table_slots()[j]->left; /* swap two subtrees' halves */
            if (a && b && i != j) {
                node *ar = a->right, *br = b->right;
                tenure_write_ref(rt, a, (void **)&a->right, br);
                tenure_write_ref(rt, b, (void **)&b->right, ar);
            }
        }
        for (int k = 0; k < 2; k++)
            if (!asked[k] && done >= budget * (uint64_t)(k + 1) / 3) {
                asked[k] = true;
                tenure_collect(rt, 2, TENURE_COLLECT_NONBLOCKING);
            }
    }
    for (tenure_stats s;;) { /* a background GC still running ends first */
        tenure_get_stats(rt, &s);
        if (!s.background_gc_in_progress)
            break;
        uint64_t tid = 0;
        roots[1] = tree(TEMP_DEPTH, &tid);
        roots[1] = NULL;
    }
    double run_s = bench_now_seconds() - t0;
    tenure_session_stop(rt, session);
    tenure_stats s1;
    tenure_get_stats(rt, &s1);

    /* every node intact: the table holds the ids it should (swaps move halves between trees) */
    uint64_t sum = 0, count = 0;
    for (size_t i = 0; i < ntrees; i++)
        tree_sum(table_slots()[i], &sum, &count);
    bool ok = sum == want_sum && count == want_count;
    double gc_s = (double)(s1.total_pause_ns - s0.total_pause_ns) / 1e9;
    printf("BGC_PAUSES mode=%s live_mib=%zu gen2_gcs=%" PRIu64 " background_gcs=%" PRIu64
           " gen2_pauses=%zu gen2_max_ms=%.3f gen2_p99_ms=%.3f gen2_median_ms=%.3f",
           cfg.gcConcurrent ? "background" : "blocking", live_mib, P.gen2_gcs, P.background_gcs, P.gen2.n,
           pct(&P.gen2, 1.0), pct(&P.gen2, 0.99), pct(&P.gen2, 0.5));
    printf(" all_max_ms=%.3f all_p99_ms=%.3f pauses=%zu gcs=%" PRIu64 " gen1_gcs=%" PRIu64
           " run_s=%.3f gc_pct=%.1f check=%s\n",
           pct(&P.all, 1.0), pct(&P.all, 0.99), P.all.n, s1.gc_count - s0.gc_count,
           s1.gen[1].collections - s0.gen[1].collections, run_s, 100.0 * gc_s / run_s, ok ? "ok" : "bad");
    printf("BGC_PAUSE_KINDS mode=%s", cfg.gcConcurrent ? "background" : "blocking");
    for (int k = 0; k < K_KINDS; k++)
        printf(" %s=%u/%.3f", kind_names[k], P.kind_count[k], P.kind_max[k]);
    printf(" (count/max ms)\n");
    tenure_destroy(rt);
    return ok ? 0 : 1;
}
