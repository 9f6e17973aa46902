/*
 * report_workload: a known sequence of GCs for the tenure-report tests. Run with TENURE_TRACE
 * set (by tests/report/check_report.py); prints its own counts as one JSON line
 *
 *   WORKLOAD {"gc_count": N, "by_gen": [g0, g1, g2], "induced_by_gen": [..], "reasons": {"0": n, ..}}
 *
 * from tenure_get_stats (gc_count, gen[i].collections: a generation-g GC condemns gens 0..g) and
 * from the GC callback (reason and generation of every GC).
 *
 * Sequence: allocation until ALLOC_GCS allocation-triggered GCs happened (some objects kept
 * alive, so that there is something to promote), INDUCED1 x tenure_collect(rt, 1, 0) (reason
 * 1 Induced), INDUCED2 x tenure_collect(rt, 2, TENURE_COLLECT_COMPACT) (reason 10
 * InducedCompacting), one tenure_collect(rt, 0, 0), then allocation for ALLOC_GCS more GCs.
 */
#define _POSIX_C_SOURCE 200809L
#include "tenure.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ALLOC_GCS 12
#define INDUCED1 3
#define INDUCED2 2
#define MAX_REASON 32

typedef struct counts {
    uint64_t gcs;
    uint64_t by_gen[3], induced_by_gen[3];
    uint64_t reasons[MAX_REASON];
    uint64_t last_index;
    int bad_index;
} counts;

static int induced_reason(uint32_t r) { return r == 1 || r == 7 || r == 9 || r == 10 || r == 17; }

static void on_gc(tenure_runtime *rt, const tenure_gc_info *info, void *ctx) {
    (void)rt;
    counts *c = ctx;
    c->gcs++;
    if (info->index != c->last_index + 1)
        c->bad_index = 1;
    c->last_index = info->index;
    int g = info->generation >= 0 && info->generation <= 2 ? info->generation : 2;
    c->by_gen[g]++;
    if (induced_reason(info->reason))
        c->induced_by_gen[g]++;
    c->reasons[info->reason < MAX_REASON ? info->reason : MAX_REASON - 1]++;
}

static void fail(const char *what, tenure_runtime *rt) {
    fprintf(stderr, "report_workload: %s: %s\n", what, rt ? tenure_strerror(tenure_last_error(rt)) : "");
    exit(1);
}

/* allocate until `n` more GCs happened; keep one object in 64 alive in a ring held by a handle */
static void allocate_for(tenure_runtime *rt, const tenure_type *bytes_t, const tenure_type *ring_t,
                         tenure_handle *ring_h, uint64_t n) {
    tenure_stats st;
    tenure_get_stats(rt, &st);
    uint64_t target = st.gc_count + n;
    uint64_t i = 0;
    while (st.gc_count < target) {
        void *o = tenure_alloc_array(rt, bytes_t, 16 + (size_t)(i * 37 % 600));
        if (!o)
            fail("allocation failed", rt);
        if (i % 64 == 0) {
            void *ring = tenure_handle_get(rt, ring_h);
            size_t len = tenure_array_length(ring);
            tenure_write_ref(rt, ring, &((void **)tenure_array_data(ring))[(i / 64) % len], o);
        }
        i++;
        if ((i & 255) == 0)
            tenure_get_stats(rt, &st);
        if (i > 400000000ull)
            fail("no GC happened", NULL);
    }
    (void)ring_t;
}

int main(void) {
    if (!getenv("TENURE_TRACE"))
        fprintf(stderr, "report_workload: TENURE_TRACE is not set (no trace)\n");
    tenure_result res;
    tenure_runtime *rt = tenure_create(NULL, &res);
    if (!rt) {
        fprintf(stderr, "report_workload: tenure_create: %s\n", tenure_strerror(res));
        return 1;
    }
    counts c;
    memset(&c, 0, sizeof c);
    tenure_set_gc_callback(rt, on_gc, &c);

    tenure_type_desc d;
    memset(&d, 0, sizeof d);
    d.name = "report_bytes";
    d.size = sizeof(tenure_array_header);
    d.elem_size = 1;
    d.flags = TENURE_TYPE_ARRAY | TENURE_TYPE_NO_REFS;
    const tenure_type *bytes_t = tenure_type_register(rt, &d);
    memset(&d, 0, sizeof d);
    d.name = "report_ring";
    d.size = sizeof(tenure_array_header);
    d.elem_size = sizeof(void *);
    d.flags = TENURE_TYPE_ARRAY | TENURE_TYPE_REF_ARRAY;
    const tenure_type *ring_t = tenure_type_register(rt, &d);
    if (!bytes_t || !ring_t)
        fail("type registration failed", rt);
    void *ring = tenure_alloc_array(rt, ring_t, 4096);
    if (!ring)
        fail("allocation failed", rt);
    tenure_handle *ring_h = tenure_handle_new(rt, TENURE_HANDLE_STRONG, ring);
    if (!ring_h)
        fail("handle failed", rt);

    allocate_for(rt, bytes_t, ring_t, ring_h, ALLOC_GCS);
    for (int i = 0; i < INDUCED1; i++)
        if (tenure_collect(rt, 1, 0) != TENURE_OK)
            fail("tenure_collect(1)", rt);
    for (int i = 0; i < INDUCED2; i++)
        if (tenure_collect(rt, 2, TENURE_COLLECT_COMPACT) != TENURE_OK)
            fail("tenure_collect(2, COMPACT)", rt);
    if (tenure_collect(rt, 0, 0) != TENURE_OK)
        fail("tenure_collect(0)", rt);
    allocate_for(rt, bytes_t, ring_t, ring_h, ALLOC_GCS);

    tenure_stats st;
    tenure_get_stats(rt, &st);
    tenure_set_gc_callback(rt, NULL, NULL);
    tenure_handle_free(rt, ring_h);
    tenure_destroy(rt); /* stops the trace session: the trace is complete */

    /* the program's own counters must agree with each other */
    uint64_t by_gen_stats[3] = {st.gen[0].collections - st.gen[1].collections,
                                st.gen[1].collections - st.gen[2].collections, st.gen[2].collections};
    int ok = !c.bad_index && c.gcs == st.gc_count;
    for (int g = 0; g < 3; g++)
        ok = ok && by_gen_stats[g] == c.by_gen[g];
    if (!ok) {
        fprintf(stderr,
                "report_workload: callback and tenure_get_stats disagree: gcs %llu/%llu, gen %llu/%llu "
                "%llu/%llu %llu/%llu\n",
                (unsigned long long)c.gcs, (unsigned long long)st.gc_count, (unsigned long long)c.by_gen[0],
                (unsigned long long)by_gen_stats[0], (unsigned long long)c.by_gen[1],
                (unsigned long long)by_gen_stats[1], (unsigned long long)c.by_gen[2],
                (unsigned long long)by_gen_stats[2]);
        return 1;
    }
    printf("WORKLOAD {\"gc_count\": %llu, \"by_gen\": [%llu, %llu, %llu], \"induced_by_gen\": [%llu, %llu, %llu], "
           "\"reasons\": {",
           (unsigned long long)st.gc_count, (unsigned long long)by_gen_stats[0], (unsigned long long)by_gen_stats[1],
           (unsigned long long)by_gen_stats[2], (unsigned long long)c.induced_by_gen[0],
           (unsigned long long)c.induced_by_gen[1], (unsigned long long)c.induced_by_gen[2]);
    int first = 1;
    for (int r = 0; r < MAX_REASON; r++)
        if (c.reasons[r]) {
            printf("%s\"%d\": %llu", first ? "" : ", ", r, (unsigned long long)c.reasons[r]);
            first = 0;
        }
    printf("}}\n");
    return 0;
}
