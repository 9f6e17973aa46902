/*
 * bench_common.h - small helpers shared by the benchmarks (header only, static functions):
 * clocks, peak RSS, and pause recorders that collect the pause of every GC so that the
 * benchmarks can print medians and percentiles.
 *
 *   tenure: pause_rec_attach_tenure(rt, &rec) installs a tenure_set_gc_callback that appends
 *           info->pause_ns (the collector's own measurement) of every GC, or only of the GCs of
 *           one generation (rec.only_generation >= 0).
 *   Boehm:  pause_rec_attach_boehm(&rec) installs a GC_set_on_collection_event handler and
 *           measures GC_EVENT_START .. GC_EVENT_END of every collection with CLOCK_MONOTONIC
 *           (the stop-the-world part; libgc sweeps lazily during later allocations, which is
 *           not counted, as in GC_get_full_gc_total_time).
 *
 * Percentiles are nearest-rank (p95 of n values: the ceil(0.95 n)-th smallest); the median of
 * an even number of values is the mean of the two middle ones.
 */
#ifndef TENURE_BENCH_COMMON_H
#define TENURE_BENCH_COMMON_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "tenure.h"

#ifdef TENURE_BENCH_HAVE_BOEHM
#include <gc/gc.h>
#endif

static inline uint64_t bench_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static inline double bench_now_seconds(void) { return (double)bench_now_ns() * 1e-9; }

/* Peak resident set size of the process in KiB (getrusage ru_maxrss). */
static inline long bench_maxrss_kb(void) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (long)ru.ru_maxrss;
}

/* ------------------------------------------------------------------------------------------
 * Pause recorder
 * ---------------------------------------------------------------------------------------- */
typedef struct pause_rec {
    uint64_t *ns; /* the recorded pauses, in GC order */
    uint8_t *gen; /* the generation each condemned (PAUSE_REC_FULL: Boehm's full GCs) */
    size_t n, cap;
    int only_generation;    /* >= 0: record only the GCs that condemned this generation */
    uint64_t by_gen[3];     /* GCs seen per condemned generation (all, recorded or not) */
    uint64_t promoted_gen0; /* sum of info->promoted[0] over the recorded GCs */
    uint64_t boehm_start;   /* Boehm: start time of the collection in progress (0: none) */
    int failed;             /* realloc failed: some pauses are missing */
} pause_rec;

static inline void pause_rec_init(pause_rec *r, int only_generation) {
    memset(r, 0, sizeof *r);
    r->only_generation = only_generation;
    r->cap = 4096;
    r->ns = malloc(r->cap * sizeof *r->ns);
    r->gen = malloc(r->cap * sizeof *r->gen);
    if (r->ns == NULL || r->gen == NULL) {
        free(r->ns);
        free(r->gen);
        r->ns = NULL;
        r->gen = NULL;
        r->cap = 0;
    }
}

static inline void pause_rec_free(pause_rec *r) {
    free(r->ns);
    free(r->gen);
    r->ns = NULL;
    r->gen = NULL;
    r->n = r->cap = 0;
}

static inline void pause_rec_reset(pause_rec *r) {
    r->n = 0;
    memset(r->by_gen, 0, sizeof r->by_gen);
    r->promoted_gen0 = 0;
}

#define PAUSE_REC_FULL 3 /* a collector without generations (Boehm): every GC is a full one */

static inline void pause_rec_push_gen(pause_rec *r, uint64_t ns, int gen) {
    if (r->n == r->cap) {
        size_t cap = r->cap ? r->cap * 2 : 4096;
        uint64_t *p = realloc(r->ns, cap * sizeof *p);
        if (p != NULL)
            r->ns = p;
        uint8_t *g = p != NULL ? realloc(r->gen, cap * sizeof *g) : NULL;
        if (g == NULL) {
            r->failed = 1;
            return;
        }
        r->gen = g;
        r->cap = cap;
    }
    r->gen[r->n] = (uint8_t)gen;
    r->ns[r->n++] = ns;
}

static inline void pause_rec_push(pause_rec *r, uint64_t ns) { pause_rec_push_gen(r, ns, PAUSE_REC_FULL); }

/* TENURE_BENCH_PAUSE_LOG=FILE: every recorded pause, one line per GC in GC order,
 * "gen0|gen1|gen2|full <milliseconds>", for bench/run_all.sh (which reads the other runtimes'
 * own GC logs into the same form). Written once, after the run, so it costs no pause time. */
static inline void pause_rec_write_log(const pause_rec *r) {
    const char *path = getenv("TENURE_BENCH_PAUSE_LOG");
    if (path == NULL || *path == '\0')
        return;
    FILE *f = fopen(path, "w");
    if (f == NULL) {
        fprintf(stderr, "bench: cannot write %s\n", path);
        return;
    }
    static const char *const kind[] = {"gen0", "gen1", "gen2", "full"};
    for (size_t i = 0; i < r->n; i++)
        fprintf(f, "%s %.4f\n", kind[r->gen[i] <= PAUSE_REC_FULL ? r->gen[i] : PAUSE_REC_FULL], (double)r->ns[i] / 1e6);
    fclose(f);
}

static int pause_rec_cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

typedef struct pause_summary {
    size_t count;
    double total_ms, median_ms, p95_ms, p99_ms, max_ms, min_ms;
} pause_summary;

/* Summarise the recorded pauses (sorts a copy; all zero when none were recorded). */
static inline pause_summary pause_rec_summary(const pause_rec *r) {
    pause_summary s;
    memset(&s, 0, sizeof s);
    s.count = r->n;
    if (r->n == 0)
        return s;
    uint64_t *v = malloc(r->n * sizeof *v);
    if (v == NULL)
        return s;
    memcpy(v, r->ns, r->n * sizeof *v);
    qsort(v, r->n, sizeof *v, pause_rec_cmp_u64);
    uint64_t total = 0;
    for (size_t i = 0; i < r->n; i++)
        total += v[i];
    size_t n = r->n;
    double median = (n % 2) ? (double)v[n / 2] : ((double)v[n / 2 - 1] + (double)v[n / 2]) / 2.0;
    size_t i95 = (95 * n + 99) / 100, i99 = (99 * n + 99) / 100; /* ceil(0.95 n), ceil(0.99 n) */
    if (i95 < 1)
        i95 = 1;
    if (i99 < 1)
        i99 = 1;
    s.total_ms = (double)total / 1e6;
    s.median_ms = median / 1e6;
    s.p95_ms = (double)v[i95 - 1] / 1e6;
    s.p99_ms = (double)v[i99 - 1] / 1e6;
    s.max_ms = (double)v[n - 1] / 1e6;
    s.min_ms = (double)v[0] / 1e6;
    free(v);
    return s;
}

/* " pauses=N total_pause_ms=.. median_pause_ms=.. p95_pause_ms=.. p99_pause_ms=.. max_pause_ms=.."
 * style fields, with a prefix for the key names ("" or e.g. "gen0_"). */
static inline void pause_summary_print(FILE *out, const char *prefix, const pause_summary *s) {
    fprintf(out, " %smedian_pause_ms=%.4f %sp95_pause_ms=%.4f %sp99_pause_ms=%.4f %smax_pause_ms=%.4f", prefix,
            s->median_ms, prefix, s->p95_ms, prefix, s->p99_ms, prefix, s->max_ms);
}

static void pause_rec_tenure_cb(tenure_runtime *rt, const tenure_gc_info *info, void *context) {
    (void)rt;
    pause_rec *r = context;
    if (info->generation >= 0 && info->generation <= 2)
        r->by_gen[info->generation]++;
    if (r->only_generation >= 0 && info->generation != r->only_generation)
        return;
    r->promoted_gen0 += info->promoted[0];
    pause_rec_push_gen(r, info->pause_ns, info->generation >= 0 && info->generation <= 2 ? info->generation : 2);
}

static inline void pause_rec_attach_tenure(tenure_runtime *rt, pause_rec *r) {
    tenure_set_gc_callback(rt, pause_rec_tenure_cb, r);
}

#ifdef TENURE_BENCH_HAVE_BOEHM
static pause_rec *pause_rec_boehm_target;

static void pause_rec_boehm_event(GC_EventType ev) {
    pause_rec *r = pause_rec_boehm_target;
    if (r == NULL)
        return;
    if (ev == GC_EVENT_START) {
        r->boehm_start = bench_now_ns();
    } else if (ev == GC_EVENT_END && r->boehm_start != 0) {
        pause_rec_push(r, bench_now_ns() - r->boehm_start);
        r->boehm_start = 0;
    }
}

/* Call after GC_INIT(). */
static inline void pause_rec_attach_boehm(pause_rec *r) {
    pause_rec_boehm_target = r;
    GC_set_on_collection_event(pause_rec_boehm_event);
}
#endif

/* ------------------------------------------------------------------------------------------
 * What every benchmark's main shares.
 * ---------------------------------------------------------------------------------------- */

/* --list: the implementations this binary was built with (malloc: whether it has that one). */
static inline void bench_list_impls(int with_malloc) {
#ifdef TENURE_BENCH_HAVE_BOEHM
    puts(with_malloc ? "tenure boehm malloc" : "tenure boehm");
#else
    puts(with_malloc ? "tenure malloc" : "tenure");
#endif
}

/* The options every benchmark takes after its own: --list, -h and --help. Returns the status
 * main exits with: 0 after --list or help, 2 (usage to stderr) for anything else. */
static inline int bench_other_option(const char *a, int with_malloc, void (*usage)(FILE *)) {
    if (strcmp(a, "--list") == 0) {
        bench_list_impls(with_malloc);
        return 0;
    }
    if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
        usage(stdout);
        return 0;
    }
    usage(stderr);
    return 2;
}

/* The end of a tenure run: the collector's statistics, the instance destroyed, the recorded
 * pauses summarised (and logged, TENURE_BENCH_PAUSE_LOG) and checked against the GC count.
 * The caller prints its STATS line from *st and the summary, then frees the recorder. */
static inline pause_summary bench_tenure_finish(const char *bench, tenure_runtime **rt, pause_rec *pauses,
                                                tenure_stats *st) {
    memset(st, 0, sizeof *st);
    tenure_get_stats(*rt, st);
    tenure_destroy(*rt);
    *rt = NULL;
    pause_summary ps = pause_rec_summary(pauses);
    pause_rec_write_log(pauses);
    if (ps.count != st->gc_count)
        fprintf(stderr, "%s: the GC callback saw %zu GCs, tenure_get_stats says %llu\n", bench, ps.count,
                (unsigned long long)st->gc_count);
    return ps;
}

#endif /* TENURE_BENCH_COMMON_H */
