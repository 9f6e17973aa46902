/* shapes.c - tenure's side of the event order conformance test (run.sh order): the same shapes
 * of work as shapes/Program.cs makes on the .NET runtime, traced by tenure (TENURE_TRACE=<file>.nettrace,
 * level 5). The GC mode comes from the environment (run.sh sets TENURE_gcServer,
 * TENURE_gcConcurrent, TENURE_GCHeapCount).
 *
 *   shapes blocking     gen0 GCs triggered by allocation, an induced blocking gen0 GC, an induced
 *                       compacting gen2 GC (workstation non-concurrent, or server: joins)
 *   shapes background   a background GC (tenure_collect NONBLOCKING) over a large live graph
 *                       while the program allocates: foreground GCs inside it
 *
 * Prints what it did; exit 1 when the shape was not made. */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <tenure.h>

typedef struct node {
    tenure_header header;
    struct node *next, *other;
    long value;
} node;

enum { RING = 4096, LIVE = RING, TMP = RING + 1, SLOTS = RING + 2 };
static void *slots[SLOTS]; /* a root area: the ring of survivors, the live list, a temporary */

static node *alloc_node(tenure_runtime *rt, const tenure_type *t, long value) {
    node *n = tenure_alloc(rt, t);
    if (n)
        n->value = value;
    return n;
}

static int build_live(tenure_runtime *rt, const tenure_type *t, long count) {
    for (long i = 0; i < count; i++) {
        node *n = alloc_node(rt, t, i);
        if (!n)
            return -1;
        node *head = slots[LIVE];
        tenure_write_ref(rt, n, &n->next, head);
        if ((i & 7) == 0 && head)
            tenure_write_ref(rt, n, &n->other, head->next);
        slots[LIVE] = n;
    }
    return 0;
}

/* short-lived nodes, one in 64 kept in the ring (survivors promoted by the gen0 GCs) */
static int churn(tenure_runtime *rt, const tenure_type *t, long count) {
    for (long i = 0; i < count; i++) {
        node *n = alloc_node(rt, t, i);
        if (!n)
            return -1;
        if ((i & 63) == 0)
            slots[(i >> 6) & (RING - 1)] = n;
    }
    return 0;
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv) {
    const char *shape = argc > 1 ? argv[1] : "blocking";
    if (strcmp(shape, "blocking") != 0 && strcmp(shape, "background") != 0) {
        fprintf(stderr, "usage: shapes blocking|background\n");
        return 2;
    }
    tenure_runtime *rt = tenure_create(NULL, NULL);
    if (!rt)
        return 2;
    size_t refs[] = {offsetof(node, next), offsetof(node, other)};
    tenure_type_desc desc = {.name = "Node", .size = sizeof(node), .ref_offsets = refs, .ref_count = 2};
    const tenure_type *t = tenure_type_register(rt, &desc);
    tenure_root_area *area = tenure_root_area_add(rt, slots, SLOTS);
    if (!t || !area)
        return 2;
    int rc = 0;
    tenure_stats s0, s;
    tenure_get_stats(rt, &s0);
    if (strcmp(shape, "blocking") == 0) {
        if (build_live(rt, t, 200000) || churn(rt, t, 2000000))
            return 2;
        tenure_collect(rt, 0, TENURE_COLLECT_FORCED); /* induced blocking gen0 */
        if (churn(rt, t, 200000))
            return 2;
        tenure_collect(rt, 2, TENURE_COLLECT_COMPACT); /* compacting gen2 */
    } else {
        if (build_live(rt, t, 3000000))
            return 2;
        tenure_collect(rt, 1, TENURE_COLLECT_FORCED); /* the live graph to gen2 */
        tenure_collect(rt, 1, TENURE_COLLECT_FORCED);
        tenure_get_stats(rt, &s);
        uint64_t bgcs = s.background_gcs, gcs = s.gc_count;
        tenure_collect(rt, 2, TENURE_COLLECT_NONBLOCKING); /* a background GC */
        double start = now_s();
        do {
            if (churn(rt, t, 20000)) /* foreground GCs */
                return 2;
            tenure_get_stats(rt, &s);
        } while (s.background_gcs == bgcs && now_s() - start < 20);
        printf("background GC over after %.0f ms, GCs meanwhile %llu\n", (now_s() - start) * 1e3,
               (unsigned long long)(s.gc_count - gcs - 1));
        if (s.background_gcs == bgcs) {
            printf("FAIL: the background GC did not end in 20 s\n");
            rc = 1;
        }
    }
    long sum = 0;
    for (node *n = slots[LIVE]; n; n = n->next)
        sum += n->value;
    tenure_get_stats(rt, &s);
    printf("%s: GCs %llu, background %llu, sum %ld\n", shape, (unsigned long long)(s.gc_count - s0.gc_count),
           (unsigned long long)s.background_gcs, sum);
    tenure_root_area_remove(rt, area);
    tenure_destroy(rt);
    return rc;
}
