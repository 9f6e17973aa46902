/*
 * objtrack_bench.c - how fast the object tracker (tenure_objtrack.h) follows a compacting GC.
 *
 * Rate = tracked objects / the tracker's time for one GC (gc_started + every moved /
 * surviving call + gc_finished: the re-keying, the deaths, the sort back to id order), best of
 * R. Synthetic cases measure a warm tracker (its arrays touched by an earlier GC, as in every GC
 * of a running profiler but the first: rekey_mps) and the first GC of a fresh one
 * (first_gc_rekey_mps, which pays the page faults of the second entry array).
 * Target: >= 50 M objects per second for 10 million tracked objects.
 *
 * Synthetic GCs (no collector; ids are numbers, nothing is read at them), N objects of 32 bytes
 * back to back, one generation-0 bound covering them, ranges sent in calls of 1024:
 *   third     every third object dead; survivors slide down (ranges of 2 objects)
 *   plugs     live runs of 1..16 objects, dead runs of 1..4; plugs slide down
 *   regions   the heap cut into 4 MiB regions; every region's survivors are compacted into the
 *             regions in a shuffled order (destination runs interleave: the merge sort path)
 *   sweep     the same deaths as plugs, reported as surviving ranges (nothing moves)
 * The real collector (unless --no-real): N live small objects (plus N/2 dead ones between them)
 * tracked from allocation, a full compacting GC to settle, then every fifth one dropped and
 * the measured tenure_collect(rt, 2, TENURE_COLLECT_COMPACT); the tracker's time is measured
 * inside the profiler callbacks (rate = N / that time).
 *
 * Usage: objtrack_bench [--objects N] [--reps R] [--no-real]   (default 10000000, 3)
 * Output: one line per case (best of R), then
 *   RESULT objects=.. third_mps=.. plugs_mps=.. regions_mps=.. sweep_mps=.. real_mps=..
 *          min_mps=.. target_mps=50 ok=yes|no maxrss_kb=..
 */
#define _POSIX_C_SOURCE 200809L

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_common.h"
#include "tenure.h"
#include "tenure_objtrack.h"
#include "tenure_profiler.h"

#define OBJ 32u
#define BASE ((uintptr_t)1 << 40)
#define REGION ((uintptr_t)4 << 20)
#define CALL 1024

static uint64_t rng = 0x1234567;
static uint64_t rnd(void) {
    rng += 0x9e3779b97f4a7c15ull;
    uint64_t z = rng;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static uint64_t deaths;
static void count_death(void *ctx, uintptr_t id, void *payload, int gen) {
    (void)ctx;
    (void)id;
    (void)payload;
    (void)gen;
    deaths++;
}

typedef struct plan {
    uintptr_t *old, *new_;
    size_t *len;
    size_t n;
    size_t live;
} plan;

/* alive[i] for object i; make the ranges of one compaction (mode 0: slide down in one piece;
 * 1: per 4 MiB region into shuffled destination regions; 2: sweep) */
static plan make_plan(const unsigned char *alive, size_t n, int mode) {
    plan p = {malloc(n * sizeof(uintptr_t)), malloc(n * sizeof(uintptr_t)), malloc(n * sizeof(size_t)), 0, 0};
    if (!p.old || !p.new_ || !p.len) {
        fprintf(stderr, "out of memory\n");
        exit(1);
    }
    size_t per_region = REGION / OBJ, nreg = (n + per_region - 1) / per_region;
    size_t *dest = malloc(nreg * sizeof *dest);
    for (size_t i = 0; i < nreg; i++)
        dest[i] = i;
    for (size_t i = nreg; i > 1; i--) {
        size_t j = (size_t)(rnd() % i), x = dest[i - 1];
        dest[i - 1] = dest[j];
        dest[j] = x;
    }
    uintptr_t to = BASE;
    size_t di = 0;
    uintptr_t dfill = 0;
    for (size_t i = 0; i < n;) {
        if (!alive[i]) {
            i++;
            continue;
        }
        size_t j = i;
        while (j < n && alive[j] && (mode != 1 || j / per_region == i / per_region))
            j++;
        uintptr_t old = BASE + (uintptr_t)i * OBJ, len = (uintptr_t)(j - i) * OBJ, nw;
        if (mode == 0) {
            nw = to;
            to += len;
        } else if (mode == 2) {
            nw = old;
        } else {
            /* into destination regions in shuffled order (a plug may be split) */
            while (len) {
                uintptr_t room = REGION - dfill, take = len < room ? len : room;
                p.old[p.n] = old;
                p.new_[p.n] = BASE + (uintptr_t)dest[di] * REGION + dfill;
                p.len[p.n++] = take;
                old += take;
                len -= take;
                dfill += take;
                if (dfill == REGION)
                    di++, dfill = 0;
            }
            p.live += j - i;
            i = j;
            continue;
        }
        p.old[p.n] = old;
        p.new_[p.n] = nw;
        p.len[p.n++] = len;
        p.live += j - i;
        i = j;
    }
    free(dest);
    return p;
}

static void plan_free(plan *p) {
    free(p->old);
    free(p->new_);
    free(p->len);
}

/* One synthetic GC over n tracked objects; returns the tracker's seconds (best of reps). */
static double synthetic(const char *name, const unsigned char *alive, size_t n, int mode, int reps, double *mps) {
    plan p = make_plan(alive, n, mode);
    double best = 1e30, cold = 1e30, add_s = 0;
    for (int r = 0; r < 2 * reps; r++) {
        tenure_objtrack *t = tenure_objtrack_create(sizeof(uint64_t), count_death, NULL);
        double a0 = bench_now_seconds();
        for (size_t i = 0; i < n; i++) {
            uint64_t *pl = tenure_objtrack_add(t, BASE + (uintptr_t)i * OBJ);
            if (!pl) {
                fprintf(stderr, "add failed\n");
                exit(1);
            }
            *pl = i;
        }
        add_s = bench_now_seconds() - a0;
        deaths = 0;
        int collected[5] = {1, 1, 1, 1, 1};
        tenure_generation_range b = {BASE, (size_t)n * OBJ, (size_t)n * OBJ, 0};
        if (r % 2 == 1) {
            /* warm: a GC that collects nothing first (the tracker's arrays are touched once,
             * as in every GC of a running profiler but the first) */
            int none[5] = {0, 0, 0, 0, 0};
            tenure_objtrack_gc_started(t, none, &b, 1);
            for (size_t i = 0; i < p.n; i += CALL)
                tenure_objtrack_surviving(t, p.n - i < CALL ? p.n - i : CALL, p.old + i, p.len + i);
            tenure_objtrack_gc_finished(t);
        }
        double t0 = bench_now_seconds();
        tenure_objtrack_gc_started(t, collected, &b, 1);
        for (size_t i = 0; i < p.n; i += CALL) {
            size_t k = p.n - i < CALL ? p.n - i : CALL;
            if (mode == 2)
                tenure_objtrack_surviving(t, k, p.old + i, p.len + i);
            else
                tenure_objtrack_moved(t, k, p.old + i, p.new_ + i, p.len + i);
        }
        if (tenure_objtrack_gc_finished(t) != 0) {
            fprintf(stderr, "gc_finished failed\n");
            exit(1);
        }
        double s = bench_now_seconds() - t0;
        if (r % 2 == 1 && s < best)
            best = s;
        if (r % 2 == 0 && s < cold)
            cold = s;
        /* check a sample */
        if (tenure_objtrack_count(t) != p.live || deaths != n - p.live) {
            fprintf(stderr, "%s: %zu tracked, %zu live, %llu deaths\n", name, tenure_objtrack_count(t), p.live,
                    (unsigned long long)deaths);
            exit(1);
        }
        for (size_t i = 0; i < p.n; i += 997) {
            uint64_t *pl = tenure_objtrack_find(t, p.new_[i]);
            if (!pl || *pl != (p.old[i] - BASE) / OBJ) {
                fprintf(stderr, "%s: range %zu not re-keyed\n", name, i);
                exit(1);
            }
        }
        tenure_objtrack_destroy(t);
    }
    *mps = (double)n / best / 1e6;
    printf("SYNTH case=%s objects=%zu ranges=%zu live=%zu gc_ms=%.1f rekey_mps=%.1f first_gc_ms=%.1f "
           "first_gc_rekey_mps=%.1f add_mps=%.1f\n",
           name, n, p.n, p.live, best * 1e3, *mps, cold * 1e3, (double)n / cold / 1e6, (double)n / add_s / 1e6);
    plan_free(&p);
    return best;
}

/* ---- the real collector ---- */

typedef struct rnode {
    tenure_header header;
    struct rnode *next;
    uint64_t num;
} rnode;

static struct {
    tenure_runtime *rt;
    tenure_objtrack *t;
    tenure_generation_range *bounds;
    size_t cap;
    double spent;
    size_t ranges;
} real;

static void r_started(void *ctx, const int collected[5], tenure_gc_reason_kind reason) {
    (void)ctx;
    (void)reason;
    double t0 = bench_now_seconds();
    size_t n = tenure_generation_bounds(real.rt, NULL, 0);
    if (n > real.cap) {
        real.cap = 2 * n;
        real.bounds = realloc(real.bounds, real.cap * sizeof *real.bounds);
    }
    n = tenure_generation_bounds(real.rt, real.bounds, real.cap);
    tenure_objtrack_gc_started(real.t, collected, real.bounds, n);
    real.spent += bench_now_seconds() - t0;
}
static void r_moved(void *ctx, size_t count, const uintptr_t *o, const uintptr_t *nw, const size_t *l) {
    (void)ctx;
    double t0 = bench_now_seconds();
    tenure_objtrack_moved(real.t, count, o, nw, l);
    real.ranges += count;
    real.spent += bench_now_seconds() - t0;
}
static void r_surviving(void *ctx, size_t count, const uintptr_t *s, const size_t *l) {
    (void)ctx;
    double t0 = bench_now_seconds();
    tenure_objtrack_surviving(real.t, count, s, l);
    real.ranges += count;
    real.spent += bench_now_seconds() - t0;
}
static void r_finished(void *ctx) {
    (void)ctx;
    double t0 = bench_now_seconds();
    if (tenure_objtrack_gc_finished(real.t) != 0) {
        fprintf(stderr, "gc_finished failed\n");
        exit(1);
    }
    real.spent += bench_now_seconds() - t0;
}

static double real_gc(size_t n, int reps, double *mps) {
    double best = 1e30;
    for (int r = 0; r < reps; r++) {
        tenure_config cfg;
        tenure_config_init(&cfg);
        tenure_config_from_env(&cfg);
        cfg.GCConservativeStack = 0;
        tenure_result res;
        real.rt = tenure_create(&cfg, &res);
        if (!real.rt) {
            fprintf(stderr, "tenure_create: %s\n", tenure_strerror(res));
            exit(1);
        }
        static const size_t offs[] = {offsetof(rnode, next)};
        tenure_type_desc d;
        memset(&d, 0, sizeof d);
        d.name = "rnode";
        d.size = sizeof(rnode);
        d.ref_offsets = offs;
        d.ref_count = 1;
        const tenure_type *ty = tenure_type_register(real.rt, &d);
        real.t = tenure_objtrack_create(sizeof(uint64_t), count_death, NULL);
        tenure_profiler_callbacks cb;
        memset(&cb, 0, sizeof cb);
        cb.gc_started = r_started;
        cb.moved_references = r_moved;
        cb.surviving_references = r_surviving;
        cb.gc_finished = r_finished;
        tenure_profiler *prof = tenure_profiler_attach(real.rt, &cb, TENURE_PROFILE_GC, NULL);
        if (!prof) {
            fprintf(stderr, "tenure_profiler_attach failed\n");
            exit(1);
        }
        /* a chain of n live nodes, one dead node after every second live one */
        void *head = NULL, *tail = NULL;
        tenure_root_area *ra = tenure_root_area_add(real.rt, &head, 1);
        tenure_root_area *rb = tenure_root_area_add(real.rt, &tail, 1);
        (void)ra;
        (void)rb;
        size_t total = n + n / 2;
        for (size_t i = 0; i < total; i++) {
            rnode *x = tenure_alloc(real.rt, ty);
            if (!x) {
                fprintf(stderr, "allocation failed\n");
                exit(1);
            }
            x->num = i;
            uint64_t *pl = tenure_objtrack_add(real.t, (uintptr_t)x);
            if (!pl) {
                fprintf(stderr, "add failed\n");
                exit(1);
            }
            *pl = i;
            if (i % 3 == 2)
                continue; /* garbage */
            if (tail)
                tenure_write_ref(real.rt, tail, &((rnode *)tail)->next, x);
            else
                head = x;
            tail = x;
        }
        /* settle (the garbage dies, everything is compacted), then drop every fifth live node
         * so that the measured full compacting GC slides the survivors */
        tenure_collect(real.rt, 2, TENURE_COLLECT_COMPACT);
        size_t tracked = tenure_objtrack_count(real.t), k = 0;
        for (rnode *x = head; x && x->next; x = x->next)
            if (++k % 5 == 0)
                tenure_write_ref(real.rt, x, &x->next, x->next->next);
        real.spent = 0;
        real.ranges = 0;
        deaths = 0;
        double g0 = bench_now_seconds();
        tenure_collect(real.rt, 2, TENURE_COLLECT_COMPACT);
        double gc_s = bench_now_seconds() - g0;
        if (real.spent < best)
            best = real.spent;
        size_t live = 0;
        for (rnode *x = head; x; x = x->next, live++) {
            uint64_t *pl = tenure_objtrack_find(real.t, (uintptr_t)x);
            if (!pl || *pl != x->num) {
                fprintf(stderr, "real: object %llu not tracked at its address\n", (unsigned long long)x->num);
                exit(1);
            }
        }
        if (live != tenure_objtrack_count(real.t) || tracked != live + deaths) {
            fprintf(stderr, "real: %zu live, %zu tracked (%zu before)\n", live, tenure_objtrack_count(real.t), tracked);
            exit(1);
        }
        printf("REAL objects=%zu ranges=%zu gc_ms=%.1f tracker_ms=%.1f rekey_mps=%.1f\n", tracked, real.ranges,
               gc_s * 1e3, real.spent * 1e3, (double)tracked / real.spent / 1e6);
        *mps = (double)tracked / best / 1e6;
        tenure_profiler_detach(real.rt, prof);
        tenure_destroy(real.rt);
        tenure_objtrack_destroy(real.t);
    }
    free(real.bounds);
    real.bounds = NULL;
    real.cap = 0;
    return best;
}

int main(int argc, char **argv) {
    size_t n = 10000000;
    int reps = 3, do_real = 1;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--objects") && i + 1 < argc)
            n = (size_t)strtoull(argv[++i], NULL, 0);
        else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
            reps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--no-real"))
            do_real = 0;
        else {
            fprintf(stderr, "usage: objtrack_bench [--objects N] [--reps R] [--no-real]\n");
            return 2;
        }
    }
    if (reps < 1)
        reps = 1;
    unsigned char *third = malloc(n), *plugs = malloc(n);
    if (!third || !plugs)
        return 1;
    for (size_t i = 0; i < n; i++)
        third[i] = i % 3 != 2;
    for (size_t i = 0; i < n;) {
        size_t live = 1 + (size_t)(rnd() % 16), dead = 1 + (size_t)(rnd() % 4);
        for (; live && i < n; live--)
            plugs[i++] = 1;
        for (; dead && i < n; dead--)
            plugs[i++] = 0;
    }
    double m_third, m_plugs, m_regions, m_sweep, m_real = -1;
    synthetic("third", third, n, 0, reps, &m_third);
    synthetic("plugs", plugs, n, 0, reps, &m_plugs);
    synthetic("regions", plugs, n, 1, reps, &m_regions);
    synthetic("sweep", plugs, n, 2, reps, &m_sweep);
    free(third);
    free(plugs);
    if (do_real)
        real_gc(n, reps, &m_real);
    double min = m_third;
    if (m_plugs < min)
        min = m_plugs;
    if (m_regions < min)
        min = m_regions;
    if (m_sweep < min)
        min = m_sweep;
    if (m_real >= 0 && m_real < min)
        min = m_real;
    printf("RESULT objects=%zu third_mps=%.1f plugs_mps=%.1f regions_mps=%.1f sweep_mps=%.1f real_mps=%.1f "
           "min_mps=%.1f target_mps=50 ok=%s maxrss_kb=%ld\n",
           n, m_third, m_plugs, m_regions, m_sweep, m_real, min, min >= 50 ? "yes" : "no", bench_maxrss_kb());
    return 0;
}
