#define _POSIX_C_SOURCE 200809L
/* tenure-sim - a workload simulator in the spirit of .NET's GCPerfSim.
 *
 * Each of --threads mutator threads (attached to one instance) allocates objects of random
 * sizes, keeps its share of the live data in its own table of survivors (every Nth object
 * replaces a random older survivor, which then dies), optionally links survivors to each
 * other through the write barrier, pins some, and puts a share of the allocations on the
 * large and pinned object heaps. At the end every thread checks its survivors' contents and
 * the main thread prints a GC report from the collector's own statistics. */
#include <tenure.h>
#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef struct sim_opts {
    const char *preset;
    double seconds;  /* run time (0: until total_mb; both set: the first reached) */
    double total_mb; /* bytes to allocate (0: until seconds) */
    double live_mb;  /* live data kept in the survivor table */
    size_t small_min, small_max, large_min, large_max;
    double large_share, pinned_share; /* fractions of allocations */
    unsigned survive_every;           /* every Nth allocation survives */
    unsigned pin_every;               /* every Nth survivor is held by a pinned handle */
    unsigned finalize_every;          /* every Nth allocation is finalizable */
    int refs;                         /* survivors reference other survivors */
    unsigned threads;
    unsigned long seed;
} sim_opts;

static const sim_opts defaults = {"steady", 12, 0, 64, 40, 512, 100000, 400000, 0.00002, 0.0, 30, 0, 0, 1, 1, 1};

typedef struct preset {
    const char *name, *what;
    void (*apply)(sim_opts *);
} preset;

static void p_steady(sim_opts *o) { (void)o; }
static void p_high_survival(sim_opts *o) {
    o->survive_every = 3;
    o->live_mb = 256;
}
static void p_loh_churn(sim_opts *o) {
    o->large_share = 0.02;
    o->survive_every = 50;
}
static void p_pinning(sim_opts *o) {
    o->pin_every = 4;
    o->pinned_share = 0.01;
}
static void p_graph(sim_opts *o) {
    o->refs = 1;
    o->survive_every = 10;
}
static void p_finalizer(sim_opts *o) { o->finalize_every = 10; }

static const preset presets[] = {
    {"steady", "steady state, low survival (1 in 30), 64 MB live", p_steady},
    {"high-survival", "1 in 3 objects survive, 256 MB live", p_high_survival},
    {"loh-churn", "2% of allocations are large objects", p_loh_churn},
    {"pinning", "every 4th survivor pinned by a handle, 1% on the pinned heap", p_pinning},
    {"graph", "survivors reference each other densely (old-to-young cards)", p_graph},
    {"finalizer-heavy", "every 10th object is finalizable", p_finalizer},
};
#define NPRESETS (sizeof presets / sizeof presets[0])

/* xorshift64* (one state per thread) */
static unsigned long long rnd(unsigned long long *state) {
    unsigned long long x = *state;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *state = x;
    return x * 2685821657736338717ull;
}
static size_t rnd_range(unsigned long long *state, size_t lo, size_t hi) {
    return lo + (size_t)(rnd(state) % (hi - lo + 1));
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* An object: a reference array whose first two slots are references and the rest payload
 * words (the payload is written as id-derived words and checked at the end). */
typedef struct obj {
    tenure_array_header h;
    struct obj *ref[2];
    uint64_t id;
    uint64_t payload[];
} obj;

/* Only the first two elements are references. */
static void trace_obj(void *p, tenure_visitor *v) {
    obj *o = p;
    tenure_visit(v, (void **)&o->ref[0]);
    tenure_visit(v, (void **)&o->ref[1]);
}

static size_t payload_words(const obj *o) { return tenure_array_length(o) - 3; }
static uint64_t word_for(uint64_t id, size_t i) { return id * 0x9E3779B97F4A7C15ull + i; }

/* What the threads share: the instance, its types, the GC pauses (written by the GC callback,
 * which runs with the world stopped). */
typedef struct sim {
    sim_opts o;
    tenure_runtime *rt;
    const tenure_type *node, *fnode;
    const tenure_type *table_type;
    double *pauses;
    unsigned char *pause_gens; /* the generation each GC condemned, beside pauses */
    size_t npauses, cap_pauses;
    uint64_t seen_gcs; /* atomic: read by the progress line */
} sim;

/* One mutator thread: its survivor table (a reference array on the pinned heap held by a
 * strong handle), its pins and its counters. */
typedef struct worker {
    sim *s;
    unsigned index;
    pthread_t thread;
    unsigned long long rng;
    void *table_obj;
    obj **table; /* its elements */
    tenure_handle *table_root;
    tenure_handle **pins;
    size_t table_len;
    uint64_t next_id, allocs;
    uint64_t bytes; /* atomic: read by the progress line */
    int ok, done;   /* done: atomic */
    double end;     /* when it finished (now_s), written before done */
    /* checksum of the survivors at the end (the ports in bench/peers print the same) */
    uint64_t survivors, idsum, refsum;
} worker;

/* Finalizers check the object they get and count; they run on the finalizer thread (the
 * callback has no context: a tool's statics are fine here). */
static uint64_t g_finalized, g_finalized_bad;
static void finalize_obj(tenure_runtime *rt, void *p) {
    obj *o = p;
    (void)rt;
    __atomic_fetch_add(&g_finalized, 1, __ATOMIC_RELAXED);
    for (size_t i = 0; i < payload_words(o) && i < 8; i++)
        if (o->payload[i] != word_for(o->id, i))
            __atomic_fetch_add(&g_finalized_bad, 1, __ATOMIC_RELAXED);
}

/* Object ids are unique across threads: thread i numbers i, i + T, i + 2T, ... */
static uint64_t next_id(worker *w) {
    w->next_id += w->s->o.threads;
    return w->next_id;
}

static obj *make(worker *w, size_t bytes, int where) {
    sim *s = w->s;
    size_t words = bytes / 8 < 5 ? 5 : bytes / 8;
    size_t len = words - 2; /* header + length are 2 words */
    const tenure_type *t = s->o.finalize_every && w->allocs % s->o.finalize_every == 0 ? s->fnode : s->node;
    obj *o = where == 2 ? tenure_alloc_array_pinned(s->rt, t, len) : tenure_alloc_array(s->rt, t, len);
    if (!o) {
        fprintf(stderr, "tenure-sim: allocation failed: %s\n", tenure_strerror(tenure_last_error(s->rt)));
        exit(1);
    }
    o->id = next_id(w);
    for (size_t i = 0; i < payload_words(o) && i < 8; i++)
        o->payload[i] = word_for(o->id, i);
    w->allocs++;
    __atomic_store_n(&w->bytes, w->bytes + 16 + len * 8, __ATOMIC_RELAXED); /* header, length, elements */
    return o;
}

/* Called by the collector at the end of every GC: one exact pause per GC. */
static void on_gc(tenure_runtime *rt, const tenure_gc_info *info, void *context) {
    sim *s = context;
    (void)rt;
    if (s->npauses == s->cap_pauses) {
        size_t cap = s->cap_pauses ? 2 * s->cap_pauses : 1024;
        double *p = realloc(s->pauses, cap * sizeof *p);
        if (!p)
            return;
        s->pauses = p;
        unsigned char *g = realloc(s->pause_gens, cap * sizeof *g);
        if (!g)
            return;
        s->pause_gens = g;
        s->cap_pauses = cap;
    }
    s->pause_gens[s->npauses] = (unsigned char)info->generation;
    s->pauses[s->npauses++] = info->pause_ns / 1e6;
    __atomic_store_n(&s->seen_gcs, info->index, __ATOMIC_RELAXED);
}

static void step(worker *w) {
    sim *s = w->s;
    double r = (double)(rnd(&w->rng) % 1000000) / 1e6;
    int where = r < s->o.large_share ? 1 : r < s->o.large_share + s->o.pinned_share ? 2 : 0;
    size_t size = where == 1 ? rnd_range(&w->rng, s->o.large_min, s->o.large_max)
                             : rnd_range(&w->rng, s->o.small_min, s->o.small_max);
    obj *o = make(w, size, where);
    if (w->allocs % s->o.survive_every)
        return; /* garbage */
    size_t slot = (size_t)(rnd(&w->rng) % w->table_len);
    if (s->o.refs) {
        obj *a = w->table[rnd(&w->rng) % w->table_len], *b = w->table[rnd(&w->rng) % w->table_len];
        tenure_write_ref(s->rt, o, &o->ref[0], a);
        tenure_write_ref(s->rt, o, &o->ref[1], b);
        obj *old = w->table[rnd(&w->rng) % w->table_len];
        if (old)
            tenure_write_ref(s->rt, old, &old->ref[1], o); /* old-to-young */
    }
    tenure_write_ref(s->rt, w->table_obj, &w->table[slot], o);
    if (w->pins) {
        if (w->pins[slot]) {
            tenure_handle_free(s->rt, w->pins[slot]);
            w->pins[slot] = NULL;
        }
        if (s->o.pin_every && (w->allocs / s->o.survive_every) % s->o.pin_every == 0)
            w->pins[slot] = tenure_handle_new(s->rt, TENURE_HANDLE_PINNED, o);
    }
}

static int check(worker *w) {
    tenure_runtime *rt = w->s->rt;
    size_t bad = 0;
    for (size_t i = 0; i < w->table_len; i++) {
        obj *o = w->table[i];
        if (!o)
            continue;
        if (!tenure_is_object(rt, o)) {
            bad++;
            continue;
        }
        w->survivors++;
        w->idsum += o->id;
        w->refsum += (o->ref[0] ? o->ref[0]->id : 0) + (o->ref[1] ? o->ref[1]->id : 0);
        for (size_t k = 0; k < payload_words(o) && k < 8; k++)
            bad += o->payload[k] != word_for(o->id, k);
        for (int k = 0; k < 2; k++)
            bad += o->ref[k] && !tenure_is_object(rt, o->ref[k]);
    }
    return bad == 0;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double pct(double *v, size_t n, double p) { return n ? v[(size_t)((n - 1) * p + 0.5)] : 0; }

static uint64_t bytes_allocated(const worker *ws, unsigned n) {
    uint64_t b = 0;
    for (unsigned i = 0; i < n; i++)
        b += __atomic_load_n(&ws[i].bytes, __ATOMIC_RELAXED);
    return b;
}

static void progress(const sim *s, uint64_t bytes, double elapsed, int final) {
    double frac = s->o.seconds > 0 ? elapsed / s->o.seconds : bytes / (s->o.total_mb * 1048576.0);
    unsigned long long gcs = __atomic_load_n(&s->seen_gcs, __ATOMIC_RELAXED);
    if (frac > 1)
        frac = 1;
    if (isatty(STDERR_FILENO)) {
        int w = 30, f = (int)(frac * w);
        fprintf(stderr, "\r[%.*s%*s] %3.0f%% %8.0f MB allocated, %llu GCs", f, "##############################", w - f,
                "", frac * 100, bytes / 1048576.0, gcs);
        if (final)
            fputc('\n', stderr);
    } else {
        fprintf(stderr, "progress: %3.0f%% %.0f MB allocated, %llu GCs\n", frac * 100, bytes / 1048576.0, gcs);
    }
}

/* A worker's survivor table: its share of the live data. */
static void worker_setup(worker *w, sim *s, unsigned index) {
    const sim_opts *o = &s->o;
    w->s = s;
    w->index = index;
    w->rng = (o->seed * 0x2545F4914F6CDD1Dull + 1) ^ (index * 0x9E3779B97F4A7C15ull);
    w->next_id = index; /* ids index + T, index + 2T, ... */
    double avg = (o->small_min + o->small_max) / 2.0;
    w->table_len = (size_t)(o->live_mb / o->threads * 1048576.0 / avg);
    if (w->table_len < 16)
        w->table_len = 16;
    w->table_obj = tenure_alloc_array_pinned(s->rt, s->table_type, w->table_len);
    w->table_root = tenure_handle_new(s->rt, TENURE_HANDLE_STRONG, w->table_obj);
    w->table = tenure_array_data(w->table_obj);
    if (o->pin_every)
        w->pins = calloc(w->table_len, sizeof *w->pins);
}

static void *worker_main(void *arg) {
    worker *w = arg;
    const sim_opts *o = &w->s->o;
    tenure_runtime *rt = w->s->rt;
    tenure_thread_attach(rt);
    worker_setup(w, w->s, w->index);
    double t0 = now_s(), total = o->total_mb * 1048576.0 / o->threads;
    for (;;) {
        for (int i = 0; i < 256; i++)
            step(w);
        if ((o->seconds > 0 && now_s() - t0 >= o->seconds) || (o->total_mb > 0 && w->bytes >= total))
            break;
    }
    w->ok = check(w);
    tenure_thread_detach(rt);
    w->end = now_s();
    __atomic_store_n(&w->done, 1, __ATOMIC_RELEASE);
    return NULL;
}

/* The main thread is not a mutator while the workers run: it detaches and prints progress
 * once a second until they are done. */
static double run_workers(sim *s, worker *ws) {
    unsigned n = s->o.threads;
    double t0 = now_s(), next_progress = t0 + 1;
    tenure_thread_detach(s->rt);
    for (unsigned i = 0; i < n; i++)
        if (pthread_create(&ws[i].thread, NULL, worker_main, &ws[i]) != 0) {
            fprintf(stderr, "tenure-sim: cannot start thread %u\n", i);
            exit(1);
        }
    for (;;) {
        struct timespec ts = {0, 100 * 1000 * 1000};
        nanosleep(&ts, NULL);
        unsigned done = 0;
        for (unsigned i = 0; i < n; i++)
            done += (unsigned)__atomic_load_n(&ws[i].done, __ATOMIC_ACQUIRE);
        if (done == n)
            break;
        if (now_s() >= next_progress) {
            progress(s, bytes_allocated(ws, n), now_s() - t0, 0);
            next_progress += 1;
        }
    }
    /* the run ends when the last worker ends, not at the next look of this 100 ms loop */
    double end = t0;
    for (unsigned i = 0; i < n; i++) {
        pthread_join(ws[i].thread, NULL);
        if (ws[i].end > end)
            end = ws[i].end;
    }
    double elapsed = end - t0;
    tenure_thread_attach(s->rt);
    progress(s, bytes_allocated(ws, n), elapsed, 1);
    return elapsed;
}

static void report(const sim *s, const worker *ws, double elapsed) {
    tenure_stats st;
    tenure_get_stats(s->rt, &st);
    uint64_t bytes = bytes_allocated(ws, s->o.threads), allocs = 0;
    for (unsigned i = 0; i < s->o.threads; i++)
        allocs += ws[i].allocs;
    printf("\n== GC report (%s) ==\n", s->o.preset);
    printf("run time %.2f s, %u thread(s) allocated %.1f MB in %llu objects (%.0f MB/s, %.1f ns per object)\n", elapsed,
           s->o.threads, bytes / 1048576.0, (unsigned long long)allocs, bytes / 1048576.0 / elapsed,
           elapsed * 1e9 / allocs);
    printf("GCs: %llu (gen0 %llu, gen1 %llu, gen2 %llu), compacting %llu, sweeping %llu\n",
           (unsigned long long)st.gc_count, (unsigned long long)(st.gen[0].collections - st.gen[1].collections),
           (unsigned long long)(st.gen[1].collections - st.gen[2].collections),
           (unsigned long long)st.gen[2].collections, (unsigned long long)st.compacting_gcs,
           (unsigned long long)st.sweeping_gcs);
    printf("pause ms: total %.1f (%.1f%% of run time), median %.3f, p95 %.3f, p99 %.3f, max %.3f\n",
           st.total_pause_ns / 1e6, st.total_pause_ns / 1e7 / elapsed, pct(s->pauses, s->npauses, 0.5),
           pct(s->pauses, s->npauses, 0.95), pct(s->pauses, s->npauses, 0.99), st.max_pause_ns / 1e6);
    printf("heap after last GC: %.1f MB (gen0 %.1f, gen1 %.1f, gen2 %.1f, LOH %.1f, POH %.1f), fragmentation %.1f MB, "
           "committed %.1f MB\n",
           st.heap_bytes / 1048576.0, st.gen[0].size / 1048576.0, st.gen[1].size / 1048576.0,
           st.gen[2].size / 1048576.0, st.gen[3].size / 1048576.0, st.gen[4].size / 1048576.0,
           (st.gen[0].free_bytes + st.gen[1].free_bytes + st.gen[2].free_bytes + st.gen[3].free_bytes +
            st.gen[4].free_bytes) /
               1048576.0,
           st.committed_bytes / 1048576.0);
    printf("mark stack overflows %llu, pinned objects in last GC %llu, moved by compaction %.1f MB (%.1f%% of what was "
           "allocated)\n",
           (unsigned long long)st.mark_stack_overflows, (unsigned long long)st.pinned_objects,
           st.moved_bytes / 1048576.0, bytes > 0 ? 100.0 * (double)st.moved_bytes / (double)bytes : 0.0);
    if (s->o.finalize_every)
        printf("finalizers run %llu (%llu pending), finalization-promoted in the last GC %llu objects\n",
               (unsigned long long)st.finalizers_run, (unsigned long long)tenure_pending_finalizers(s->rt),
               (unsigned long long)st.finalization_promoted_count);
}

/* TENURE_BENCH_PAUSE_LOG=FILE: every GC's pause, "gen<N> <ms>" per line in GC order, for
 * bench/run_all.sh (as the benchmarks in bench/ write it). */
static void write_pause_log(const sim *s) {
    const char *path = getenv("TENURE_BENCH_PAUSE_LOG");
    if (!path || !*path)
        return;
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "tenure-sim: cannot write %s\n", path);
        return;
    }
    for (size_t i = 0; i < s->npauses; i++)
        fprintf(f, "gen%u %.4f\n", (unsigned)s->pause_gens[i], s->pauses[i]);
    fclose(f);
}

/* What the survivors hold at the end: with one thread and --total-mb, the same numbers as the
 * ports of the steady preset in bench/peers (they show the peers did the same work). */
static void print_checksum(const worker *ws, unsigned n) {
    uint64_t allocs = 0, bytes = 0, survivors = 0, idsum = 0, refsum = 0;
    for (unsigned i = 0; i < n; i++) {
        allocs += ws[i].allocs;
        bytes += ws[i].bytes;
        survivors += ws[i].survivors;
        idsum += ws[i].idsum;
        refsum += ws[i].refsum;
    }
    printf("checksum: allocs=%llu bytes=%llu survivors=%llu idsum=%llu refsum=%llu\n", (unsigned long long)allocs,
           (unsigned long long)bytes, (unsigned long long)survivors, (unsigned long long)idsum,
           (unsigned long long)refsum);
}

static int run(sim_opts o) {
    sim s;
    memset(&s, 0, sizeof s);
    s.o = o;
    s.rt = tenure_create(NULL, NULL);
    if (!s.rt) {
        fprintf(stderr, "tenure-sim: tenure_create failed\n");
        return 1;
    }
    tenure_set_gc_callback(s.rt, on_gc, &s);
    /* trace_obj reads only the two reference slots: it may run beside the mutators */
    s.node = tenure_type_register(s.rt, &(tenure_type_desc){.name = "SimObject",
                                                            .flags = TENURE_TYPE_ARRAY | TENURE_TYPE_CONCURRENT_TRACE,
                                                            .elem_size = 8,
                                                            .trace = trace_obj});
    s.fnode = tenure_type_register(
        s.rt, &(tenure_type_desc){.name = "SimFinalizable",
                                  .flags = TENURE_TYPE_ARRAY | TENURE_TYPE_FINALIZABLE | TENURE_TYPE_CONCURRENT_TRACE,
                                  .elem_size = 8,
                                  .trace = trace_obj,
                                  .finalize = finalize_obj});
    s.table_type =
        tenure_type_register(s.rt, &(tenure_type_desc){.name = "SurvivorTable", .flags = TENURE_TYPE_REF_ARRAY});
    worker *ws = calloc(o.threads, sizeof *ws);
    if (!ws)
        return 1;
    for (unsigned i = 0; i < o.threads; i++) {
        ws[i].s = &s;
        ws[i].index = i;
    }
    double avg = (o.small_min + o.small_max) / 2.0;
    printf("tenure-sim: preset %s, seed %lu, %.0f MB live (%zu survivors), survive 1/%u, large %.2f%%, pinned %.2f%%, "
           "refs %s, threads %u\n",
           o.preset, o.seed, o.live_mb, (size_t)(o.live_mb * 1048576.0 / avg), o.survive_every, o.large_share * 100,
           o.pinned_share * 100, o.refs ? "on" : "off", o.threads);
    double elapsed = run_workers(&s, ws);
    int ok = 1;
    for (unsigned i = 0; i < o.threads; i++)
        ok &= ws[i].ok;
    write_pause_log(&s);
    qsort(s.pauses, s.npauses, sizeof *s.pauses, cmp_double);
    report(&s, ws, elapsed);
    print_checksum(ws, o.threads);
    for (unsigned i = 0; i < o.threads; i++)
        tenure_handle_free(s.rt, ws[i].table_root);
    tenure_destroy(s.rt); /* runs the pending finalizers */
    ok &= __atomic_load_n(&g_finalized_bad, __ATOMIC_RELAXED) == 0;
    printf("check: %s\n", ok ? "ok" : "FAILED: survivors or finalized objects were corrupted");
    for (unsigned i = 0; i < o.threads; i++)
        free(ws[i].pins);
    free(ws);
    free(s.pauses);
    free(s.pause_gens);
    return ok ? 0 : 2;
}

static void usage(void) {
    printf("usage: tenure-sim [--preset NAME|all] [--seconds S] [--total-mb MB] [--live-mb MB]\n"
           "                  (--seconds and --total-mb together: it stops at whichever comes first)\n"
           "                  [--small MIN-MAX] [--large MIN-MAX] [--large-share F] [--pinned-share F]\n"
           "                  [--survive-every N] [--pin-every N] [--finalize-every N] [--refs 0|1] [--threads N]\n"
           "                  [--seed N]\n"
           "presets:\n");
    for (size_t i = 0; i < NPRESETS; i++)
        printf("  %-14s %s\n", presets[i].name, presets[i].what);
    printf("Collector options come from TENURE_* environment variables (see the README).\n");
}

static const preset *find_preset(const char *name) {
    for (size_t i = 0; i < NPRESETS; i++)
        if (!strcmp(presets[i].name, name))
            return &presets[i];
    return NULL;
}

int main(int argc, char **argv) {
    sim_opts o = defaults, over;
    memset(&over, 0, sizeof over);
    const char *preset_name = "steady";
    /* two passes: the preset first, then explicit options on top */
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--preset") && i + 1 < argc)
            preset_name = argv[++i];
    int all = !strcmp(preset_name, "all");
    int status = 0;
    for (size_t pi = 0; pi < (all ? NPRESETS : 1); pi++) {
        const preset *p = all ? &presets[pi] : find_preset(preset_name);
        if (!p) {
            fprintf(stderr, "tenure-sim: unknown preset %s\n", preset_name);
            usage();
            return 64;
        }
        o = defaults;
        o.preset = p->name;
        p->apply(&o);
        bool gave_seconds = false, gave_total = false; /* both given: whichever comes first */
        for (int i = 1; i < argc; i++) {
            const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
            if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
                usage();
                return 0;
            }
            if (!v) {
                fprintf(stderr, "tenure-sim: %s needs a value\n", a);
                return 64;
            }
            i++;
            if (!strcmp(a, "--preset"))
                continue;
            else if (!strcmp(a, "--seconds")) {
                o.seconds = atof(v);
                o.total_mb = gave_total ? o.total_mb : 0;
                gave_seconds = true;
            } else if (!strcmp(a, "--total-mb")) {
                o.total_mb = atof(v);
                o.seconds = gave_seconds ? o.seconds : 0;
                gave_total = true;
            } else if (!strcmp(a, "--live-mb"))
                o.live_mb = atof(v);
            else if (!strcmp(a, "--small"))
                sscanf(v, "%zu-%zu", &o.small_min, &o.small_max);
            else if (!strcmp(a, "--large"))
                sscanf(v, "%zu-%zu", &o.large_min, &o.large_max);
            else if (!strcmp(a, "--large-share"))
                o.large_share = atof(v);
            else if (!strcmp(a, "--pinned-share"))
                o.pinned_share = atof(v);
            else if (!strcmp(a, "--survive-every"))
                o.survive_every = (unsigned)atoi(v);
            else if (!strcmp(a, "--pin-every"))
                o.pin_every = (unsigned)atoi(v);
            else if (!strcmp(a, "--finalize-every"))
                o.finalize_every = (unsigned)atoi(v);
            else if (!strcmp(a, "--refs"))
                o.refs = atoi(v);
            else if (!strcmp(a, "--threads"))
                o.threads = (unsigned)atoi(v);
            else if (!strcmp(a, "--seed"))
                o.seed = strtoul(v, NULL, 0);
            else {
                fprintf(stderr, "tenure-sim: unknown option %s\n", a);
                usage();
                return 64;
            }
        }
        if (o.threads < 1 || o.threads > 64 || o.survive_every < 1 || o.small_min < 40 || o.small_max < o.small_min ||
            o.large_max < o.large_min || (o.seconds <= 0 && o.total_mb <= 0) || o.live_mb <= 0) {
            fprintf(stderr, "tenure-sim: inconsistent options (small sizes >= 40, survive-every >= 1, 1..64 threads, a "
                            "run length)\n");
            return 64;
        }
        status |= run(o);
    }
    return status;
}
