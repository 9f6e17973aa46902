/*
 * gen0_pause.c - the pause of a gen0 GC versus the size of the old generation.
 *
 * With cards, a gen0 GC should cost what survives gen0 (plus the cards that old-to-young
 * stores dirtied), not what the old heap holds. This benchmark measures that: for each old
 * size it creates a tenure instance, builds an old live graph of that many bytes, promotes it
 * to gen2 (tenure_collect(rt, 2, 0) twice), then runs the same gen0 workload until a fixed
 * number of gen0 GCs have happened, recording each gen0 GC's pause (pause_ns from
 * tenure_set_gc_callback; GCs of generation 1 or 2 are counted but not recorded).
 *
 * Old graph: small objects of 32 bytes (a tenure_header and three references): a chain through
 * `next` keeps them all alive from one rooted head; `a` and `b` point to random recently built
 * objects (a rooted window of the last 1024), so the graph has a few references per object
 * and some locality, like a typical heap.
 *
 * Workload (identical for every old size, deterministic): allocate objects of the same type;
 * each links to the previous one in short chains of 4; every --survive-every-th object is
 * stored in a rooted ring of --ring slots (it survives until overwritten); every
 * --store-every-th object is stored through the write barrier into the `b` field of one of
 * --old-set fixed old (gen2) objects, in turn (old-to-young references found through cards).
 *
 * Usage: gen0_pause [--sizes 10m,1g] [--gcs N] [--warmup N] [--survive-every N] [--ring N]
 *                   [--store-every N] [--old-set N] [--seed N]
 *   --sizes        old-generation sizes, comma separated, suffixes k, m, g (default 10m,1g)
 *   --gcs          gen0 GCs recorded per size (default 300)
 *   --warmup       gen0 GCs run before recording starts (default 20)
 * TENURE_* environment options reach every instance (e.g. TENURE_GCgen0size=8m).
 *
 * Output: one line per size
 *   GEN0 old_mib=.. old_objects=.. gen2_mib=.. build_s=.. gcs=.. gen1_gcs=.. gen2_gcs=..
 *        median_pause_ms=.. p95_pause_ms=.. p99_pause_ms=.. max_pause_ms=.. mean_pause_ms=..
 *        mean_promoted_kb=.. workload_s=.. allocated_mb=..
 * then, with at least two sizes, the ratio of the medians of the largest and smallest:
 *   RATIO big_mib=.. small_mib=.. median_ratio=.. p95_ratio=.. target=1.5 ok=yes|no
 *   RESULT wall_s=.. maxrss_kb=..
 * The exit status is 1 if a check fails (the old graph lost or gained objects, or the old set
 * is not in gen2 after the promotion), not if the ratio misses the target.
 */
#define _POSIX_C_SOURCE 200809L

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tenure.h"
#include "bench_common.h"

typedef struct onode {
    tenure_header header;
    struct onode *next;
    struct onode *a;
    struct onode *b;
} onode;

#define WINDOW 1024
#define MAX_SIZES 16

static struct {
    uint64_t sizes[MAX_SIZES];
    int nsizes;
    long gcs;
    long warmup;
    long survive_every;
    long ring;
    long store_every;
    long old_set;
    uint64_t seed;
} opt = {{0}, 0, 300, 20, 100, 4096, 64, 256, 12345};

static int g_failed;

static void die(const char *what) {
    fprintf(stderr, "gen0_pause: %s\n", what);
    exit(2);
}

static void hook(tenure_runtime *rt, tenure_result result, const char *function, const char *message, void *context) {
    (void)rt;
    (void)context;
    fprintf(stderr, "gen0_pause: tenure error in %s: %s (%s)\n", function ? function : "?", message ? message : "",
            tenure_strerror(result));
}

static uint64_t rng_state;
static inline uint64_t rng(void) { /* xorshift64* */
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 2685821657736338717ull;
}

static onode *new_node(tenure_runtime *rt, const tenure_type *t) {
    onode *n = tenure_alloc(rt, t);
    if (n == NULL) {
        fprintf(stderr, "gen0_pause: tenure_alloc failed: %s\n", tenure_strerror(tenure_last_error(rt)));
        exit(2);
    }
    return n;
}

typedef struct size_result {
    double median, p95, max;
} size_result;

static size_result run_size(uint64_t old_bytes) {
    size_result out = {0, 0, 0};
    double t_start = bench_now_seconds();
    tenure_result res = TENURE_OK;
    tenure_runtime *rt = tenure_create(NULL, &res);
    if (rt == NULL) {
        fprintf(stderr, "gen0_pause: tenure_create failed: %s\n", tenure_strerror(res));
        exit(2);
    }
    tenure_set_error_hook(rt, hook, NULL);
    static const size_t refs[] = {offsetof(onode, next), offsetof(onode, a), offsetof(onode, b)};
    tenure_type_desc desc;
    memset(&desc, 0, sizeof desc);
    desc.name = "gen0_pause.node";
    desc.size = sizeof(onode);
    desc.ref_offsets = refs;
    desc.ref_count = 3;
    const tenure_type *type = tenure_type_register(rt, &desc);
    if (type == NULL)
        die("tenure_type_register failed");

    uint64_t count = old_bytes / sizeof(onode);
    if (count < (uint64_t)opt.old_set)
        count = (uint64_t)opt.old_set;

    /* Roots: the window of recent old nodes, the fixed old set, the survivor ring. */
    void **window = calloc(WINDOW, sizeof(void *));
    void **old_set = calloc((size_t)opt.old_set, sizeof(void *));
    void **ring = calloc((size_t)opt.ring, sizeof(void *));
    if (window == NULL || old_set == NULL || ring == NULL)
        die("out of memory (roots)");
    tenure_root_area *ra_window = tenure_root_area_add(rt, window, WINDOW);
    tenure_root_area *ra_old = tenure_root_area_add(rt, old_set, (size_t)opt.old_set);
    tenure_root_area *ra_ring = tenure_root_area_add(rt, ring, (size_t)opt.ring);
    if (ra_window == NULL || ra_old == NULL || ra_ring == NULL)
        die("tenure_root_area_add failed");

    onode *head = NULL, *n = NULL, *prev = NULL;
    TENURE_FRAME(rt, frame, head, n, prev);

    /* 1. The old graph. */
    rng_state = opt.seed;
    for (uint64_t i = 0; i < count; i++) {
        n = new_node(rt, type);
        tenure_write_ref(rt, n, &n->next, head);
        if (i >= WINDOW) {
            tenure_write_ref(rt, n, &n->a, window[rng() % WINDOW]);
            tenure_write_ref(rt, n, &n->b, window[rng() % WINDOW]);
        }
        window[i % WINDOW] = n;
        head = n;
    }
    n = NULL;
    memset(window, 0, WINDOW * sizeof(void *));
    /* The fixed old set: spread along the chain. */
    {
        uint64_t stride = count / (uint64_t)opt.old_set, i = 0;
        long k = 0;
        for (onode *p = head; p != NULL && k < opt.old_set; p = p->next, i++)
            if (i % stride == 0)
                old_set[k++] = p;
    }
    tenure_collect(rt, 2, 0);
    tenure_collect(rt, 2, 0);
    double t_built = bench_now_seconds();

    /* Checks: the chain still has every object; the old set is in gen2. */
    uint64_t seen = 0;
    for (onode *p = head; p != NULL; p = p->next)
        seen++;
    if (seen != count) {
        fprintf(stderr, "gen0_pause: the old graph has %llu objects after promotion, expected %llu\n",
                (unsigned long long)seen, (unsigned long long)count);
        g_failed = 1;
    }
    for (long k = 0; k < opt.old_set; k++) {
        int g = tenure_object_generation(rt, old_set[k]);
        if (g != 2) {
            fprintf(stderr, "gen0_pause: old-set object %ld is in generation %d after two gen2 GCs\n", k, g);
            g_failed = 1;
            break;
        }
    }
    tenure_stats st;
    tenure_get_stats(rt, &st);
    double gen2_mib = (double)st.gen[2].size / (1024.0 * 1024.0);
    uint64_t allocated_before = st.bytes_allocated;

    /* 2. The gen0 workload. */
    pause_rec rec;
    pause_rec_init(&rec, 0);
    pause_rec_attach_tenure(rt, &rec);
    rng_state = opt.seed ^ 0x9e3779b97f4a7c15ull;
    uint64_t i = 0;
    long ring_pos = 0, old_pos = 0;
    int recording = 0;
    double t_work = bench_now_seconds();
    for (;;) {
        if (!recording && (long)rec.n >= opt.warmup) {
            pause_rec_reset(&rec);
            recording = 1;
            tenure_get_stats(rt, &st);
            allocated_before = st.bytes_allocated;
            t_work = bench_now_seconds();
        }
        if (recording && (long)rec.n >= opt.gcs)
            break;
        n = new_node(rt, type);
        if (i % 4 != 0)
            tenure_write_ref(rt, n, &n->next, prev);
        if (i % (uint64_t)opt.survive_every == 0) {
            ring[ring_pos] = n;
            ring_pos = (ring_pos + 1) % opt.ring;
        }
        if (i % (uint64_t)opt.store_every == 0) {
            onode *o = old_set[old_pos];
            tenure_write_ref(rt, o, &o->b, n);
            old_pos = (old_pos + 1) % opt.old_set;
        }
        prev = n;
        i++;
    }
    double t_end = bench_now_seconds();
    tenure_set_gc_callback(rt, NULL, NULL);
    tenure_get_stats(rt, &st);

    /* The old graph must have survived the workload intact (its `b` fields of the old set now
     * point to young objects, but the chain is untouched). */
    seen = 0;
    for (onode *p = head; p != NULL; p = p->next)
        seen++;
    if (seen != count) {
        fprintf(stderr, "gen0_pause: the old graph has %llu objects after the workload, expected %llu\n",
                (unsigned long long)seen, (unsigned long long)count);
        g_failed = 1;
    }

    pause_summary ps = pause_rec_summary(&rec);
    printf("GEN0 old_mib=%.1f old_objects=%llu gen2_mib=%.1f build_s=%.2f gcs=%zu gen1_gcs=%llu "
           "gen2_gcs=%llu",
           (double)old_bytes / (1024.0 * 1024.0), (unsigned long long)count, gen2_mib, t_built - t_start, ps.count,
           (unsigned long long)rec.by_gen[1], (unsigned long long)rec.by_gen[2]);
    pause_summary_print(stdout, "", &ps);
    printf(" mean_pause_ms=%.4f mean_promoted_kb=%.1f workload_s=%.2f allocated_mb=%.1f\n",
           ps.count ? ps.total_ms / (double)ps.count : 0.0,
           ps.count ? (double)rec.promoted_gen0 / 1024.0 / (double)ps.count : 0.0, t_end - t_work,
           (double)(st.bytes_allocated - allocated_before) / (1024.0 * 1024.0));
    fflush(stdout);
    out.median = ps.median_ms;
    out.p95 = ps.p95_ms;
    out.max = ps.max_ms;

    TENURE_FRAME_POP(rt, frame);
    pause_rec_free(&rec);
    tenure_destroy(rt);
    free(window);
    free(old_set);
    free(ring);
    return out;
}

static int parse_size(const char *s, uint64_t *out) {
    char *end;
    double v = strtod(s, &end);
    if (end == s || v <= 0)
        return -1;
    double mul = 1;
    switch (*end) {
    case 'k':
    case 'K':
        mul = 1024.0;
        end++;
        break;
    case 'm':
    case 'M':
        mul = 1024.0 * 1024.0;
        end++;
        break;
    case 'g':
    case 'G':
        mul = 1024.0 * 1024.0 * 1024.0;
        end++;
        break;
    default: break;
    }
    if (*end == 'i' || *end == 'b' || *end == 'B')
        end++;
    if (*end == 'B')
        end++;
    if (*end != '\0')
        return -1;
    *out = (uint64_t)(v * mul);
    return 0;
}

static long parse_long(const char *s, long min) {
    char *end;
    long v = strtol(s, &end, 10);
    if (*s == '\0' || *end != '\0' || v < min) {
        fprintf(stderr, "gen0_pause: bad number '%s' (at least %ld)\n", s, min);
        exit(2);
    }
    return v;
}

static void usage(FILE *out) {
    fprintf(out, "usage: gen0_pause [--sizes 10m,1g] [--gcs N] [--warmup N] [--survive-every N] [--ring N]\n"
                 "                  [--store-every N] [--old-set N] [--seed N]\n");
}

int main(int argc, char **argv) {
    const char *sizes = "10m,1g";
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = NULL;
        const char *eq = strchr(a, '=');
        char name[64];
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            usage(stdout);
            return 0;
        }
        if (strncmp(a, "--", 2) != 0) {
            usage(stderr);
            return 2;
        }
        if (eq != NULL) {
            size_t len = (size_t)(eq - a);
            if (len >= sizeof name)
                len = sizeof name - 1;
            memcpy(name, a, len);
            name[len] = '\0';
            v = eq + 1;
        } else {
            snprintf(name, sizeof name, "%s", a);
            if (i + 1 >= argc) {
                usage(stderr);
                return 2;
            }
            v = argv[++i];
        }
        if (strcmp(name, "--sizes") == 0)
            sizes = v;
        else if (strcmp(name, "--gcs") == 0)
            opt.gcs = parse_long(v, 1);
        else if (strcmp(name, "--warmup") == 0)
            opt.warmup = parse_long(v, 0);
        else if (strcmp(name, "--survive-every") == 0)
            opt.survive_every = parse_long(v, 1);
        else if (strcmp(name, "--ring") == 0)
            opt.ring = parse_long(v, 1);
        else if (strcmp(name, "--store-every") == 0)
            opt.store_every = parse_long(v, 1);
        else if (strcmp(name, "--old-set") == 0)
            opt.old_set = parse_long(v, 1);
        else if (strcmp(name, "--seed") == 0)
            opt.seed = (uint64_t)parse_long(v, 1);
        else {
            usage(stderr);
            return 2;
        }
    }
    char buf[512];
    snprintf(buf, sizeof buf, "%s", sizes);
    for (char *tok = strtok(buf, ","); tok != NULL; tok = strtok(NULL, ",")) {
        if (opt.nsizes == MAX_SIZES || parse_size(tok, &opt.sizes[opt.nsizes]) != 0) {
            fprintf(stderr, "gen0_pause: bad size '%s' in --sizes\n", tok);
            return 2;
        }
        opt.nsizes++;
    }
    if (opt.nsizes == 0) {
        usage(stderr);
        return 2;
    }

    double t0 = bench_now_seconds();
    size_result r[MAX_SIZES];
    for (int k = 0; k < opt.nsizes; k++)
        r[k] = run_size(opt.sizes[k]);
    if (opt.nsizes >= 2) {
        int small = 0, big = 0;
        for (int k = 1; k < opt.nsizes; k++) {
            if (opt.sizes[k] < opt.sizes[small])
                small = k;
            if (opt.sizes[k] > opt.sizes[big])
                big = k;
        }
        double ratio = r[small].median > 0 ? r[big].median / r[small].median : 0;
        double p95_ratio = r[small].p95 > 0 ? r[big].p95 / r[small].p95 : 0;
        printf("RATIO big_mib=%.1f small_mib=%.1f median_ratio=%.3f p95_ratio=%.3f target=1.5 ok=%s\n",
               (double)opt.sizes[big] / (1024.0 * 1024.0), (double)opt.sizes[small] / (1024.0 * 1024.0), ratio,
               p95_ratio, ratio < 1.5 ? "yes" : "no");
    }
    printf("RESULT wall_s=%.3f maxrss_kb=%ld\n", bench_now_seconds() - t0, bench_maxrss_kb());
    if (fflush(stdout) != 0)
        return 1;
    return g_failed ? 1 : 0;
}
