/*
 * alloc_micro.c - nanoseconds per small-object allocation:
 *
 *   tenure   tenure_alloc (the inline bump-pointer fast path; its slow path and the gen0 GCs
 *            that the garbage causes are included, and reported separately)
 *   boehm    GC_MALLOC (collections included, reported separately)
 *   malloc   malloc + free: objects are allocated in batches of --batch and then freed, so
 *            the figure is the cost of one malloc plus one free
 *
 * Every object is garbage right after it is allocated (no survivors); one word of it is
 * written so that the allocation is used. Sizes are whole object sizes in bytes (for tenure the
 * header word is part of them; Boehm and malloc get the same number of bytes).
 *
 * Usage: alloc_micro [--impl=tenure|boehm|malloc] [--sizes 16,32,48,64] [--count N] [--batch N]
 *                    [--profile=none|sampled[:BYTES]|all] [--array]
 *        alloc_micro --list
 *   --array   tenure allocates arrays of 8-byte words of the same sizes (tenure_alloc_array,
 *             its inline path) instead of fixed-size objects; reported as impl=tenure-array
 *   --count   allocations per size (default 25000000), after a warm-up of count/10
 *   --profile tenure with a profiler attached: sampled allocations every BYTES (default
 *             102400), or every allocation (object_allocated); the callbacks only count
 *
 * Output, per size:
 *   ALLOC impl=.. size=.. count=.. ns_per_alloc=.. gcs=.. gc_pause_ms=.. ns_per_alloc_excl_gc=..
 * then RESULT impl=.. wall_s=.. maxrss_kb=..
 * (for malloc, gcs and gc_pause_ms are 0; for Boehm the pause is GC_EVENT_START..END).
 */
#define _POSIX_C_SOURCE 200809L

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tenure_profiler.h"

#include "tenure.h"

#ifdef TENURE_BENCH_HAVE_BOEHM
#include <gc/gc.h>
#endif

#include "bench_common.h"

#define MAX_SIZES 16

static size_t g_sizes[MAX_SIZES];
static int g_nsizes;
static long g_count = 25000000;
static long g_batch = 64;
static volatile uintptr_t g_sink;

static void die(const char *what) {
    fprintf(stderr, "alloc_micro: %s\n", what);
    exit(2);
}

typedef struct obj {
    tenure_header header;
    uintptr_t data[];
} obj;

static void report(const char *impl, size_t size, long count, uint64_t ns, const pause_rec *rec, size_t first_pause) {
    uint64_t pause_ns = 0;
    size_t gcs = 0;
    if (rec != NULL) {
        for (size_t i = first_pause; i < rec->n; i++)
            pause_ns += rec->ns[i];
        gcs = rec->n - first_pause;
    }
    printf("ALLOC impl=%s size=%zu count=%ld ns_per_alloc=%.3f gcs=%zu gc_pause_ms=%.3f "
           "ns_per_alloc_excl_gc=%.3f\n",
           impl, size, count, (double)ns / (double)count, gcs, (double)pause_ns / 1e6,
           (double)(ns - (pause_ns < ns ? pause_ns : ns)) / (double)count);
    fflush(stdout);
}

/* ---------------------------------------------------------------------------------------- */
static tenure_runtime *g_rt;
static int g_array; /* --array */

static __attribute__((noinline)) void t_loop(const tenure_type *t, long count) {
    tenure_runtime *rt = g_rt;
    uintptr_t acc = 0;
    for (long i = 0; i < count; i++) {
        obj *o = tenure_alloc(rt, t);
        if (TENURE__UNLIKELY(o == NULL))
            die("tenure_alloc failed");
        o->data[0] = (uintptr_t)i;
        acc += (uintptr_t)o;
    }
    g_sink = acc;
}

static __attribute__((noinline)) void t_array_loop(const tenure_type *t, size_t length, long count) {
    tenure_runtime *rt = g_rt;
    uintptr_t acc = 0;
    for (long i = 0; i < count; i++) {
        obj *o = tenure_alloc_array(rt, t, length);
        if (TENURE__UNLIKELY(o == NULL))
            die("tenure_alloc_array failed");
        o->data[0] = (uintptr_t)i;
        acc += (uintptr_t)o;
    }
    g_sink = acc;
}

/* --profile: what the profiler's callbacks saw */
static const char *g_profile = "none";
static uint64_t g_prof_calls, g_prof_bytes;

static void on_sampled(void *c, void *o, const tenure_type *t, size_t size, uint64_t since) {
    (void)c, (void)o, (void)t, (void)size;
    g_prof_calls++;
    g_prof_bytes += since;
}

static void on_allocated(void *c, void *o, const tenure_type *t) {
    (void)c, (void)o, (void)t;
    g_prof_calls++;
}

static void attach_profiler(tenure_runtime *rt) {
    tenure_profiler_callbacks cb;
    memset(&cb, 0, sizeof cb);
    unsigned mask;
    if (strncmp(g_profile, "sampled", 7) == 0) {
        cb.object_allocated_sampled = on_sampled;
        cb.sampling_interval = g_profile[7] == ':' ? (size_t)strtoull(g_profile + 8, NULL, 10) : 0;
        mask = TENURE_PROFILE_ALLOCATIONS_SAMPLED;
    } else if (strcmp(g_profile, "all") == 0) {
        cb.object_allocated = on_allocated;
        mask = TENURE_PROFILE_ALLOCATIONS;
    } else if (strcmp(g_profile, "none") == 0) {
        return;
    } else {
        fprintf(stderr, "alloc_micro: --profile is none, sampled[:BYTES] or all\n");
        exit(2);
    }
    if (!tenure_profiler_attach2(rt, &cb, sizeof cb, mask, NULL))
        die("tenure_profiler_attach2 failed");
}

static void run_tenure(void) {
    tenure_result res = TENURE_OK;
    g_rt = tenure_create(NULL, &res);
    if (g_rt == NULL) {
        fprintf(stderr, "alloc_micro: tenure_create failed: %s\n", tenure_strerror(res));
        exit(2);
    }
    attach_profiler(g_rt);
    pause_rec rec;
    pause_rec_init(&rec, -1);
    pause_rec_attach_tenure(g_rt, &rec);
    for (int k = 0; k < g_nsizes; k++) {
        char name[32];
        snprintf(name, sizeof name, "alloc_micro.%zu", g_sizes[k]);
        tenure_type_desc desc;
        memset(&desc, 0, sizeof desc);
        desc.name = name;
        desc.size = g_array ? 0 : g_sizes[k];
        desc.elem_size = g_array ? 8 : 0;
        desc.flags = TENURE_TYPE_NO_REFS | (g_array ? TENURE_TYPE_ARRAY : 0);
        const tenure_type *t = tenure_type_register(g_rt, &desc);
        if (t == NULL)
            die("tenure_type_register failed");
        size_t length = (g_sizes[k] - sizeof(tenure_array_header)) / 8; /* the whole array is the size */
        if (g_array)
            t_array_loop(t, length, g_count / 10);
        else
            t_loop(t, g_count / 10);
        size_t first = rec.n;
        uint64_t t0 = bench_now_ns();
        if (g_array)
            t_array_loop(t, length, g_count);
        else
            t_loop(t, g_count);
        uint64_t ns = bench_now_ns() - t0;
        report(g_array ? "tenure-array" : "tenure", g_sizes[k], g_count, ns, &rec, first);
    }
    if (strcmp(g_profile, "none") != 0)
        printf("PROFILE mode=%s calls=%llu sampled_bytes=%llu\n", g_profile, (unsigned long long)g_prof_calls,
               (unsigned long long)g_prof_bytes);
    tenure_set_gc_callback(g_rt, NULL, NULL);
    tenure_destroy(g_rt);
    pause_rec_free(&rec);
}

/* ---------------------------------------------------------------------------------------- */
#ifdef TENURE_BENCH_HAVE_BOEHM
static __attribute__((noinline)) void b_loop(size_t size, long count) {
    uintptr_t acc = 0;
    for (long i = 0; i < count; i++) {
        uintptr_t *o = GC_MALLOC(size);
        if (o == NULL)
            die("GC_MALLOC failed");
        o[1] = (uintptr_t)i;
        acc += (uintptr_t)o;
    }
    g_sink = acc;
}

static void run_boehm(void) {
    GC_INIT();
    pause_rec rec;
    pause_rec_init(&rec, -1);
    pause_rec_attach_boehm(&rec);
    for (int k = 0; k < g_nsizes; k++) {
        b_loop(g_sizes[k], g_count / 10);
        size_t first = rec.n;
        uint64_t t0 = bench_now_ns();
        b_loop(g_sizes[k], g_count);
        uint64_t ns = bench_now_ns() - t0;
        report("boehm", g_sizes[k], g_count, ns, &rec, first);
    }
    pause_rec_free(&rec);
}
#endif

/* ---------------------------------------------------------------------------------------- */
static __attribute__((noinline)) void m_loop(size_t size, long count, void **batch) {
    uintptr_t acc = 0;
    long i = 0;
    while (i < count) {
        long n = count - i < g_batch ? count - i : g_batch;
        for (long j = 0; j < n; j++) {
            uintptr_t *o = malloc(size);
            if (o == NULL)
                die("malloc failed");
            o[1] = (uintptr_t)(i + j);
            acc += (uintptr_t)o;
            batch[j] = o;
        }
        for (long j = 0; j < n; j++)
            free(batch[j]);
        i += n;
    }
    g_sink = acc;
}

static void run_malloc(void) {
    void **batch = malloc((size_t)g_batch * sizeof(void *));
    if (batch == NULL)
        die("malloc failed");
    for (int k = 0; k < g_nsizes; k++) {
        m_loop(g_sizes[k], g_count / 10, batch);
        uint64_t t0 = bench_now_ns();
        m_loop(g_sizes[k], g_count, batch);
        uint64_t ns = bench_now_ns() - t0;
        report("malloc", g_sizes[k], g_count, ns, NULL, 0);
    }
    free(batch);
}

/* ---------------------------------------------------------------------------------------- */
static void usage(FILE *out) {
    fprintf(out, "usage: alloc_micro [--impl=tenure|boehm|malloc] [--sizes 16,32,48,64] [--count N] [--batch N]\n"
                 "                   [--profile=none|sampled[:BYTES]|all] [--array]\n"
                 "       alloc_micro --list\n");
}

static long parse_long(const char *s, long min) {
    char *end;
    long v = strtol(s, &end, 10);
    if (*s == '\0' || *end != '\0' || v < min) {
        fprintf(stderr, "alloc_micro: bad number '%s' (at least %ld)\n", s, min);
        exit(2);
    }
    return v;
}

int main(int argc, char **argv) {
    const char *impl = "tenure";
    const char *sizes = "16,32,48,64";
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strncmp(a, "--impl=", 7) == 0)
            impl = a + 7;
        else if (strcmp(a, "--impl") == 0 && i + 1 < argc)
            impl = argv[++i];
        else if (strncmp(a, "--sizes=", 8) == 0)
            sizes = a + 8;
        else if (strcmp(a, "--sizes") == 0 && i + 1 < argc)
            sizes = argv[++i];
        else if (strncmp(a, "--count=", 8) == 0)
            g_count = parse_long(a + 8, 1);
        else if (strcmp(a, "--count") == 0 && i + 1 < argc)
            g_count = parse_long(argv[++i], 1);
        else if (strncmp(a, "--batch=", 8) == 0)
            g_batch = parse_long(a + 8, 1);
        else if (strcmp(a, "--batch") == 0 && i + 1 < argc)
            g_batch = parse_long(argv[++i], 1);
        else if (strcmp(a, "--array") == 0)
            g_array = 1;
        else if (strncmp(a, "--profile=", 10) == 0)
            g_profile = a + 10;
        else
            return bench_other_option(a, 1, usage);
    }
    char buf[256];
    snprintf(buf, sizeof buf, "%s", sizes);
    for (char *tok = strtok(buf, ","); tok != NULL; tok = strtok(NULL, ",")) {
        long v = parse_long(tok, 16);
        if (g_nsizes == MAX_SIZES || v % 8 != 0 || v > 4096) {
            fprintf(stderr, "alloc_micro: sizes must be multiples of 8 in 16..4096 (got '%s')\n", tok);
            return 2;
        }
        g_sizes[g_nsizes++] = (size_t)v;
    }

    double t0 = bench_now_seconds();
    if (strcmp(impl, "tenure") == 0) {
        run_tenure();
    } else if (strcmp(impl, "boehm") == 0) {
#ifdef TENURE_BENCH_HAVE_BOEHM
        run_boehm();
#else
        fprintf(stderr, "alloc_micro: built without the Boehm collector\n");
        return 77;
#endif
    } else if (strcmp(impl, "malloc") == 0) {
        run_malloc();
    } else {
        usage(stderr);
        return 2;
    }
    if (g_array && strcmp(impl, "tenure") == 0)
        impl = "tenure-array";
    printf("RESULT impl=%s wall_s=%.3f maxrss_kb=%ld\n", impl, bench_now_seconds() - t0, bench_maxrss_kb());
    return fflush(stdout) == 0 ? 0 : 1;
}
