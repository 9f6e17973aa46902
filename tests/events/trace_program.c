/*
 * trace_program: a workload for the CTF trace tests (run with TENURE_TRACE=<dir>, see
 * ctf_test.py). It uses only the public API; the trace session comes from the environment.
 *
 *   trace_program run       two instances used in turn (two traces, one per instance):
 *                           allocation-triggered GCs, induced GCs of every generation and
 *                           flag, large and pinned-heap objects, pinned handles. For each
 *                           instance it prints what the trace must say:
 *                             INSTANCE id=<ClrInstanceID> pid=<pid>
 *                             GCS id=<..> count=<gc_count> gen0=<> gen1=<> gen2=<> handles=<>
 *                             LASTGC id=<..> index=<> gen=<> reason=<> size0..4=<> prom0..4=<>
 *                                    pinned=<>
 *                           (from tenure_get_stats, tenure_get_last_gc_info and the GC callback)
 *   trace_program kill      one instance; after each GC prints "COMPLETED <n>", then, after
 *                           a few GCs, raise(SIGKILL) in the middle of an allocation loop
 *   trace_program kill-now  the same, but raise(SIGKILL) right after the GC that printed the
 *                           last COMPLETED line returns
 *   trace_program kill-in-gc  raise(SIGKILL) inside the GC callback of a GC (the GC is never
 *                           finished; the earlier ones were flushed)
 */
#define _POSIX_C_SOURCE 200809L
#include "tenure.h"
#include "tenure_events.h"

#include <inttypes.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct node {
    tenure_header header;
    struct node *a, *b;
    uint64_t id;
} node;

typedef struct inst {
    tenure_runtime *rt;
    const tenure_type *node_t, *bytes_t;
    void *roots[4096];
    tenure_root_area *area;
    tenure_handle *pins[8];
    uint64_t by_gen[3];
    int kill_in_gc_at; /* kill-in-gc: the GC index whose callback kills */
} inst;

static void die(const char *what) {
    fprintf(stderr, "trace_program: %s\n", what);
    exit(2);
}

static void on_gc(tenure_runtime *rt, const tenure_gc_info *info, void *ctx) {
    (void)rt;
    inst *in = ctx;
    if (info->generation >= 0 && info->generation <= 2)
        in->by_gen[info->generation]++;
    if (in->kill_in_gc_at && (int)info->index == in->kill_in_gc_at) {
        printf("KILLING in-gc index=%" PRIu64 "\n", info->index);
        fflush(stdout);
        raise(SIGKILL);
    }
}

static void inst_init(inst *in, tenure_config *cfg) {
    memset(in, 0, sizeof *in);
    tenure_result r;
    in->rt = tenure_create(cfg, &r);
    if (!in->rt)
        die(tenure_strerror(r));
    static const size_t offs[] = {offsetof(node, a), offsetof(node, b)};
    tenure_type_desc d = {.name = "trace_node", .size = sizeof(node), .ref_offsets = offs, .ref_count = 2};
    in->node_t = tenure_type_register(in->rt, &d);
    tenure_type_desc bd = {.name = "trace_bytes",
                           .size = sizeof(tenure_array_header),
                           .elem_size = 1,
                           .flags = TENURE_TYPE_ARRAY | TENURE_TYPE_NO_REFS};
    in->bytes_t = tenure_type_register(in->rt, &bd);
    if (!in->node_t || !in->bytes_t)
        die("type registration failed");
    in->area = tenure_root_area_add(in->rt, in->roots, 4096);
    tenure_set_gc_callback(in->rt, on_gc, in);
}

static uint64_t rng = 88172645463325252ull;
static uint64_t next_rand(void) {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* n allocations of mixed kinds */
static void work(inst *in, size_t n, size_t step0) {
    for (size_t i = step0; i < step0 + n; i++) {
        uint64_t r = next_rand();
        node *x = tenure_alloc(in->rt, in->node_t);
        if (!x)
            die("allocation failed");
        x->id = i;
        if (r % 3 == 0) {
            void **slot = &in->roots[(r >> 8) % 4096];
            if (*slot && tenure_object_type(in->rt, *slot) == in->node_t)
                tenure_write_ref(in->rt, x, &x->a, *slot);
            *slot = x;
        }
        if (i % 4000 == 17)
            in->roots[(r >> 20) % 4096] = tenure_alloc_array(in->rt, in->bytes_t, 90000 + (r >> 40) % 200000);
        if (i % 5000 == 23)
            in->roots[(r >> 24) % 4096] = tenure_alloc_array_pinned(in->rt, in->bytes_t, 100 + (r >> 40) % 20000);
        if (i % 3000 == 29) {
            size_t k = (r >> 30) % 8;
            if (in->pins[k])
                tenure_handle_free(in->rt, in->pins[k]);
            in->pins[k] = tenure_handle_new(in->rt, TENURE_HANDLE_PINNED, x);
        }
    }
}

static void report(inst *in) {
    tenure_stats s;
    tenure_get_stats(in->rt, &s);
    tenure_gc_info g;
    tenure_get_last_gc_info(in->rt, &g);
    unsigned id = tenure_instance_id(in->rt);
    printf("INSTANCE id=%u pid=%ld\n", id, (long)getpid());
    printf("GCS id=%u count=%" PRIu64 " gen0=%" PRIu64 " gen1=%" PRIu64 " gen2=%" PRIu64 " handles=%zu\n", id,
           s.gc_count, in->by_gen[0], in->by_gen[1], in->by_gen[2], tenure_handle_count(in->rt));
    printf("LASTGC id=%u index=%" PRIu64 " gen=%d reason=%u", id, g.index, g.generation, g.reason);
    for (int k = 0; k < 5; k++)
        printf(" size%d=%" PRIu64, k, g.size_after[k]);
    for (int k = 0; k < 5; k++) /* promoted as the events report it: condemned generations only */
        printf(" prom%d=%" PRIu64, k, (k < 3 ? k <= g.generation : g.generation == 2) ? g.promoted[k] : 0);
    printf(" pinned=%" PRIu64 "\n", g.pinned_objects);
}

static int run_two(void) {
    static inst a, b;
    tenure_config cfg;
    tenure_config_init(&cfg);
    if (tenure_config_from_env(&cfg) != TENURE_OK)
        die("bad TENURE_* environment");
    cfg.GCgen0size = 512 * 1024;
    inst_init(&a, &cfg);
    inst_init(&b, &cfg);
    static const unsigned flags[] = {0, TENURE_COLLECT_COMPACT, TENURE_COLLECT_AGGRESSIVE, TENURE_COLLECT_OPTIMIZED,
                                     TENURE_COLLECT_COMPACT | TENURE_COLLECT_COMPACT_LOH};
    for (int round = 0; round < 12; round++) {
        work(&a, 40000, (size_t)round * 40000);
        work(&b, 20000, (size_t)round * 20000);
        tenure_collect(a.rt, round % 3, flags[round % 5]);
        tenure_collect(b.rt, (round + 1) % 3, flags[(round + 2) % 5]);
    }
    report(&a);
    report(&b);
    for (int k = 0; k < 8; k++) {
        if (a.pins[k])
            tenure_handle_free(a.rt, a.pins[k]);
        if (b.pins[k])
            tenure_handle_free(b.rt, b.pins[k]);
    }
    tenure_destroy(a.rt);
    tenure_destroy(b.rt);
    return 0;
}

static int run_kill(int mode) { /* 0: mid-allocation, 1: right after a GC, 2: inside a GC */
    static inst a;
    tenure_config cfg;
    tenure_config_init(&cfg);
    if (tenure_config_from_env(&cfg) != TENURE_OK)
        die("bad TENURE_* environment");
    cfg.GCgen0size = 256 * 1024;
    inst_init(&a, &cfg);
    setvbuf(stdout, NULL, _IOLBF, 0);
    const char *s = getenv("TRACE_PROGRAM_GCS");
    uint64_t target = s ? strtoull(s, NULL, 0) : 25;
    if (mode == 2)
        a.kill_in_gc_at = (int)target + 1;
    uint64_t seen = 0;
    for (size_t i = 0;; i++) {
        node *x = tenure_alloc(a.rt, a.node_t);
        if (!x)
            die("allocation failed");
        x->id = i;
        if (i % 5 == 0)
            a.roots[i % 4096] = x;
        if (i % 50000 == 49999)
            tenure_collect(a.rt, (int)(i / 50000) % 3, 0);
        tenure_stats st;
        tenure_get_stats(a.rt, &st);
        if (st.gc_count != seen) {
            seen = st.gc_count;
            printf("COMPLETED %" PRIu64 "\n", seen);
            if (mode == 1 && seen >= target) {
                printf("KILLING after-gc\n");
                raise(SIGKILL);
            }
        }
        if (mode == 0 && seen >= target && i % 7919 == 0) {
            printf("KILLING mid-allocation\n");
            raise(SIGKILL);
        }
    }
    return 1; /* not reached */
}

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "run";
    if (!getenv("TENURE_TRACE"))
        fprintf(stderr, "trace_program: TENURE_TRACE is not set: no trace is written\n");
    if (!strcmp(mode, "run"))
        return run_two();
    if (!strcmp(mode, "kill"))
        return run_kill(0);
    if (!strcmp(mode, "kill-now"))
        return run_kill(1);
    if (!strcmp(mode, "kill-in-gc"))
        return run_kill(2);
    fprintf(stderr, "usage: trace_program run|kill|kill-now|kill-in-gc\n");
    return 2;
}
