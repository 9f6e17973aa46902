/*
 * profiler_reports: what the profiler API reports, checked as a profiler author would
 * (issue 19, include/tenure_profiler.h).
 *
 *  A. handle_created of a dependent handle reports the primary (it said NULL), and
 *     handle_created2 gives every handle's kind, and a dependent handle's secondary.
 *  B. the roots of refcounted handles carry TENURE_ROOT_FLAG_REFCOUNTED (never set before),
 *     with WEAK while the count is zero; dependent_handle_references reports the live pairs
 *     at their final addresses, not the pair whose primary died.
 *  C. ABI: tenure_profiler_attach reads only the version 1 struct (a version 2 field is not
 *     called); attach2 checks the size, accepts trailing zero bytes, refuses others; the
 *     sampled mask needs attach2.
 *  D. two attached threads: root_references2 names the thread of each stack root (shadow
 *     frames and conservative stack words: the thread's OS id; root areas and handles: 0);
 *     tenure_generation_bounds' used_length ends exactly at the last object of each thread's
 *     allocation context (it covered the other thread's unused context tail), also while the
 *     other thread keeps allocating.
 *  E. sampled allocations, two allocating threads and a third that collects: per thread, the
 *     bytes_since_last_sample of the samples add up to what the thread allocated, up to one
 *     interval (the bytes after its last sample), so the count is within [(T-N)/(N+max), T/N]
 *     for T bytes, interval N and largest object max; every sample is a valid object of the
 *     reported type and size; the inline fast path stays open between samples. A profiler
 *     that detaches itself from its sampled callback gets no further call.
 */
#define _GNU_SOURCE
#include "test_util.h"
#include "tenure_profiler.h"

#include <pthread.h>
#include <sys/syscall.h>

static uint64_t my_tid(void) { return (uint64_t)syscall(SYS_gettid); }

/* ------------------------------------------------------------------ A: handle_created */

typedef struct handle_log {
    size_t n, n2;
    void *initial[16];
    tenure_handle *handle[16];
    tenure_handle_kind kind[16];
    void *secondary[16];
} handle_log;

static void on_handle_created(void *c, tenure_handle *h, void *initial) {
    handle_log *l = c;
    if (l->n < 16) {
        l->handle[l->n] = h;
        l->initial[l->n] = initial;
    }
    l->n++;
}

static void on_handle_created2(void *c, tenure_handle *h, tenure_handle_kind kind, void *initial, void *secondary) {
    handle_log *l = c;
    if (l->n2 < 16) {
        l->handle[l->n2] = h;
        l->initial[l->n2] = initial;
        l->kind[l->n2] = kind;
        l->secondary[l->n2] = secondary;
    }
    l->n2++;
}

static void handle_reports(void) {
    tt_errlog log = {.fatal = 1};
    tenure_runtime *rt = tt_create(NULL, &log);
    const tenure_type *node_t = tt_register_node(rt);
    tt_node *primary = NULL, *secondary = NULL;
    TENURE_FRAME(rt, f, primary, secondary);
    primary = tt_node_new(rt, node_t, 1);
    secondary = tt_node_new(rt, node_t, 2);

    /* version 1 callback: the dependent handle's initial object is its primary */
    handle_log l1 = {0};
    tenure_profiler_callbacks cb1 = {.handle_created = on_handle_created};
    tenure_profiler *p1 = tenure_profiler_attach(rt, &cb1, TENURE_PROFILE_HANDLES, &l1);
    TT_CHECK(p1 != NULL);
    tenure_handle *dep = tenure_handle_new_dependent(rt, primary, secondary);
    TT_CHECK(dep != NULL);
    TT_CHECK(l1.n == 1, "handle_created called %zu times for one dependent handle", l1.n);
    TT_CHECK(l1.handle[0] == dep && l1.initial[0] == primary,
             "handle_created of a dependent handle reported %p, its primary is %p", l1.initial[0], (void *)primary);
    TT_CHECK(tenure_handle_free(rt, dep) == TENURE_OK);
    TT_CHECK(tenure_profiler_detach(rt, p1) == TENURE_OK);

    /* version 2: kinds and secondaries */
    handle_log l2 = {0};
    tenure_profiler_callbacks cb2 = {.handle_created = on_handle_created, .handle_created2 = on_handle_created2};
    tenure_profiler *p2 = tenure_profiler_attach2(rt, &cb2, sizeof cb2, TENURE_PROFILE_HANDLES, &l2);
    TT_CHECK(p2 != NULL);
    static const tenure_handle_kind kinds[] = {
        TENURE_HANDLE_WEAK_SHORT, TENURE_HANDLE_WEAK_LONG,  TENURE_HANDLE_STRONG,       TENURE_HANDLE_PINNED,
        TENURE_HANDLE_VARIABLE,   TENURE_HANDLE_REFCOUNTED, TENURE_HANDLE_ASYNC_PINNED, TENURE_HANDLE_SIZED_REF};
    enum { NK = sizeof kinds / sizeof kinds[0] };
    tenure_handle *hs[NK + 1];
    for (size_t i = 0; i < NK; i++)
        TT_CHECK((hs[i] = tenure_handle_new(rt, kinds[i], primary)) != NULL);
    TT_CHECK((hs[NK] = tenure_handle_new_dependent(rt, primary, secondary)) != NULL);
    TT_CHECK(l2.n == 0, "handle_created called although handle_created2 is set");
    TT_CHECK(l2.n2 == NK + 1, "handle_created2 called %zu times for %d handles", l2.n2, (int)NK + 1);
    for (size_t i = 0; i <= NK; i++) {
        tenure_handle_kind want = i < NK ? kinds[i] : TENURE_HANDLE_DEPENDENT;
        TT_CHECK(l2.handle[i] == hs[i] && l2.kind[i] == want && l2.initial[i] == primary,
                 "handle %zu: kind %d (want %d), object %p", i, (int)l2.kind[i], (int)want, l2.initial[i]);
        TT_CHECK(l2.secondary[i] == (i < NK ? NULL : (void *)secondary), "handle %zu: secondary %p", i,
                 l2.secondary[i]);
    }
    for (size_t i = 0; i <= NK; i++)
        TT_CHECK(tenure_handle_free(rt, hs[i]) == TENURE_OK);
    TT_CHECK(tenure_profiler_detach(rt, p2) == TENURE_OK);
    TENURE_FRAME_POP(rt, f);
    tenure_destroy(rt);
    printf("  A handle_created: ok\n");
}

/* ------------------------------------------------------------------ B: root flags, pairs */

typedef struct root_log {
    tenure_handle *watch[4];
    uint32_t flags[4];
    int seen[4];
    size_t pairs;
    void *primary[8], *secondary[8];
    uintptr_t pair_handle[8];
} root_log;

static void on_roots(void *c, size_t n, void *const *ids, const tenure_root_kind *kinds, const uint32_t *flags,
                     const uintptr_t *root_ids) {
    root_log *l = c;
    (void)ids;
    for (size_t i = 0; i < n; i++)
        for (int w = 0; w < 4; w++)
            if (kinds[i] == TENURE_ROOT_KIND_HANDLE && root_ids[i] == (uintptr_t)l->watch[w]) {
                l->flags[w] = flags[i];
                l->seen[w]++;
            }
}

static void on_pairs(void *c, size_t n, void *const *primaries, void *const *secondaries, const uintptr_t *root_ids) {
    root_log *l = c;
    for (size_t i = 0; i < n; i++, l->pairs++)
        if (l->pairs < 8) {
            l->primary[l->pairs] = primaries[i];
            l->secondary[l->pairs] = secondaries[i];
            l->pair_handle[l->pairs] = root_ids[i];
        }
}

static int refcount_of(void *obj, void *context) {
    return ((tt_node *)obj)->id == *(uint64_t *)context; /* only this node has references */
}

static void root_reports(void) {
    tt_errlog log = {.fatal = 1};
    tenure_runtime *rt = tt_create(NULL, &log);
    const tenure_type *node_t = tt_register_node(rt);
    uint64_t counted_id = 10;
    tenure_set_refcount_callback(rt, refcount_of, &counted_id);
    root_log l;
    memset(&l, 0, sizeof l);
    tenure_profiler_callbacks cb = {.root_references = on_roots, .dependent_handle_references = on_pairs};
    tenure_profiler *p = tenure_profiler_attach2(rt, &cb, sizeof cb, TENURE_PROFILE_GC, &l);
    TT_CHECK(p != NULL);
    /* refcounted: node 10 has a count, node 11 none (kept alive by a strong handle) */
    tenure_handle *keep11 = tenure_handle_new(rt, TENURE_HANDLE_STRONG, tt_node_new(rt, node_t, 11));
    l.watch[0] = tenure_handle_new(rt, TENURE_HANDLE_REFCOUNTED, tt_node_new(rt, node_t, 10));
    l.watch[1] = tenure_handle_new(rt, TENURE_HANDLE_REFCOUNTED, tenure_handle_get(rt, keep11));
    l.watch[2] = keep11;
    /* dependent pairs: one whose primary lives (a strong handle), one whose primary dies */
    tenure_handle *keep20 = tenure_handle_new(rt, TENURE_HANDLE_STRONG, tt_node_new(rt, node_t, 20));
    tenure_handle *live_pair =
        tenure_handle_new_dependent(rt, tenure_handle_get(rt, keep20), tt_node_new(rt, node_t, 21));
    tenure_handle *dead_pair =
        tenure_handle_new_dependent(rt, tt_node_new(rt, node_t, 30), tt_node_new(rt, node_t, 31));
    l.watch[3] = live_pair;
    TT_CHECK(tenure_collect(rt, 2, TENURE_COLLECT_COMPACT) == TENURE_OK);
    TT_CHECK(l.seen[0] == 1 && l.seen[1] == 1 && l.seen[2] == 1 && l.seen[3] == 1, "handle roots seen %d %d %d %d",
             l.seen[0], l.seen[1], l.seen[2], l.seen[3]);
    TT_CHECK(l.flags[0] == TENURE_ROOT_FLAG_REFCOUNTED,
             "refcounted handle with a count: flags %#x, want REFCOUNTED (%#x)", l.flags[0],
             TENURE_ROOT_FLAG_REFCOUNTED);
    TT_CHECK(l.flags[1] == (TENURE_ROOT_FLAG_REFCOUNTED | TENURE_ROOT_FLAG_WEAK),
             "refcounted handle without a count: flags %#x, want REFCOUNTED|WEAK", l.flags[1]);
    TT_CHECK(l.flags[2] == 0, "strong handle: flags %#x", l.flags[2]);
    TT_CHECK(l.flags[3] == TENURE_ROOT_FLAG_WEAK, "dependent handle: flags %#x", l.flags[3]);
    TT_CHECK(tenure_handle_get(rt, dead_pair) == NULL, "the dead primary's handle was not cleared");
    TT_CHECK(l.pairs == 1, "%zu dependent pairs reported, 1 has a live primary", l.pairs);
    TT_CHECK(l.pair_handle[0] == (uintptr_t)live_pair && l.primary[0] == tenure_handle_get(rt, live_pair) &&
                 l.secondary[0] == tenure_handle_get_secondary(rt, live_pair),
             "the pair is not reported at its final addresses");
    TT_CHECK(((tt_node *)l.secondary[0])->id == 21 && ((tt_node *)l.primary[0])->id == 20);
    tenure_handle *all[] = {keep11, l.watch[0], l.watch[1], keep20, live_pair, dead_pair};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        tenure_handle_free(rt, all[i]);
    TT_CHECK(tenure_profiler_detach(rt, p) == TENURE_OK);
    tenure_destroy(rt);
    printf("  B root flags and dependent pairs: ok\n");
}

/* ------------------------------------------------------------------ C: ABI */

static int v2_called;
static void must_not_be_called(void *c, tenure_handle *h, tenure_handle_kind k, void *o, void *s) {
    (void)c, (void)h, (void)k, (void)o, (void)s;
    v2_called++;
}

static void abi(void) {
    tt_errlog log = {.fatal = 0};
    tenure_runtime *rt = tt_create(NULL, &log);
    const tenure_type *node_t = tt_register_node(rt);
    handle_log l = {0};
    /* a version 1 caller's struct followed by bytes it does not own: they must not be read */
    tenure_profiler_callbacks cb = {.handle_created = on_handle_created, .handle_created2 = must_not_be_called};
    tenure_profiler *p = tenure_profiler_attach(rt, &cb, TENURE_PROFILE_HANDLES, &l);
    TT_CHECK(p != NULL);
    tenure_handle *h = tenure_handle_new(rt, TENURE_HANDLE_STRONG, tt_node_new(rt, node_t, 1));
    TT_CHECK(l.n == 1 && v2_called == 0, "attach (version 1) read a version 2 field");
    tenure_handle_free(rt, h);
    TT_CHECK(tenure_profiler_detach(rt, p) == TENURE_OK);
    TT_CHECK(TENURE_PROFILER_CALLBACKS_V1_SIZE == 10 * sizeof(void (*)(void)), "the version 1 struct changed");

    /* a newer caller: trailing zero bytes are fine, anything else is refused */
    struct {
        tenure_profiler_callbacks cb;
        uintptr_t newer[2];
    } big = {{.gc_finished = NULL}, {0, 0}};
    p = tenure_profiler_attach2(rt, &big.cb, sizeof big, TENURE_PROFILE_GC, NULL);
    TT_CHECK(p != NULL && tenure_profiler_detach(rt, p) == TENURE_OK);
    big.newer[1] = 1;
    TT_CHECK(tenure_profiler_attach2(rt, &big.cb, sizeof big, TENURE_PROFILE_GC, NULL) == NULL &&
             log.last == TENURE_INVALID_ARGUMENT);
    TT_CHECK(tenure_profiler_attach2(rt, &cb, TENURE_PROFILER_CALLBACKS_V1_SIZE - 1, TENURE_PROFILE_GC, NULL) == NULL);
    TT_CHECK(tenure_profiler_attach(rt, &cb, TENURE_PROFILE_ALLOCATIONS_SAMPLED, NULL) == NULL,
             "the sampled mask with a version 1 struct");
    TT_CHECK(tenure_profiler_attach2(rt, &cb, sizeof cb, 1u << 9, NULL) == NULL, "an unknown mask bit");
    tenure_destroy(rt);
    printf("  C ABI: ok\n");
}

/* ------------------------------------------------------------------ D: two threads */

typedef struct worker {
    tenure_runtime *rt;
    const tenure_type *node_t;
    pthread_mutex_t mx;
    pthread_cond_t cv;
    int stage; /* 1: allocated and waiting (blocking section); 2: go on; 3: done */
    uint64_t tid;
    uintptr_t frame_slot; /* address of its frame's slot */
    void *stack_only;     /* an object only its C stack holds */
    uintptr_t last;       /* its last object, and the end of it */
    uintptr_t last_end;
    int keep_allocating; /* D2: allocate until told to stop */
    int stop;
} worker;

static void set_stage(worker *w, int stage) {
    pthread_mutex_lock(&w->mx);
    w->stage = stage;
    pthread_cond_broadcast(&w->cv);
    pthread_mutex_unlock(&w->mx);
}

static void wait_stage(worker *w, int stage) {
    pthread_mutex_lock(&w->mx);
    while (w->stage < stage)
        pthread_cond_wait(&w->cv, &w->mx);
    pthread_mutex_unlock(&w->mx);
}

static void *worker_main(void *arg) {
    worker *w = arg;
    tenure_runtime *rt = w->rt;
    TT_CHECK(tenure_thread_attach(rt) == TENURE_OK);
    w->tid = my_tid();
    tt_node *framed = NULL;
    TENURE_FRAME(rt, f, framed);
    framed = tt_node_new(rt, w->node_t, 1);
    w->frame_slot = (uintptr_t)&framed;
    void *volatile stack_only = tt_node_new(rt, w->node_t, 2);
    w->stack_only = stack_only;
    tt_node *last = NULL;
    for (int i = 0; i < 5; i++)
        last = tt_node_new(rt, w->node_t, 3 + (uint64_t)i);
    w->last = (uintptr_t)last;
    w->last_end = (uintptr_t)last + tenure_object_size(rt, last);
    tenure_blocking_enter(rt);
    set_stage(w, 1);
    wait_stage(w, 2);
    tenure_blocking_leave(rt);
    while (__atomic_load_n(&w->keep_allocating, __ATOMIC_ACQUIRE) && !__atomic_load_n(&w->stop, __ATOMIC_ACQUIRE))
        for (int i = 0; i < 100; i++)
            tt_node_new(rt, w->node_t, 100);
    TT_CHECK(framed->id == 1, "framed id %lu", (unsigned long)framed->id);
    TT_CHECK(((tt_node *)stack_only)->id == 2, "stack-only id %lu", (unsigned long)((tt_node *)stack_only)->id);
    TENURE_FRAME_POP(rt, f);
    TT_CHECK(tenure_thread_detach(rt) == TENURE_OK);
    return NULL;
}

typedef struct thread_roots {
    worker *w;
    void *area_slot[1];
    uintptr_t main_slot;
    uint64_t main_tid;
    int worker_frame, main_frame, area, worker_word, handle;
    int wrong;
    tenure_handle *handle_id;
} thread_roots;

static void on_roots2(void *c, size_t n, void *const *ids, const tenure_root_kind *kinds, const uint32_t *flags,
                      const uintptr_t *root_ids, const uint64_t *threads) {
    thread_roots *t = c;
    (void)flags;
    for (size_t i = 0; i < n; i++) {
        if (root_ids[i] == t->w->frame_slot)
            t->worker_frame += kinds[i] == TENURE_ROOT_KIND_STACK && threads[i] == t->w->tid;
        else if (root_ids[i] == t->main_slot)
            t->main_frame += kinds[i] == TENURE_ROOT_KIND_STACK && threads[i] == t->main_tid;
        else if (root_ids[i] == (uintptr_t)&t->area_slot[0])
            t->area += threads[i] == 0;
        else if (root_ids[i] == (uintptr_t)t->handle_id)
            t->handle += threads[i] == 0;
        if (root_ids[i] == 0 && ids[i] == t->w->stack_only && threads[i] == t->w->tid)
            t->worker_word++;
        if (kinds[i] != TENURE_ROOT_KIND_STACK && threads[i] != 0)
            t->wrong++;
    }
}

/* tenure_heap_walk: is some object in [lo, hi)? */
typedef struct objects_between {
    uintptr_t lo, hi;
    int found;
} objects_between;

static int find_between(void *obj, const tenure_type *type, size_t size, int generation, void *c) {
    objects_between *b = c;
    (void)type, (void)size, (void)generation;
    b->found |= (uintptr_t)obj >= b->lo && (uintptr_t)obj < b->hi;
    return b->found;
}

/* The range holding [obj, end) ends exactly at end, unless the context sat in a gap between
 * pinned objects (allocation reuses those gaps): then objects follow it up to the range's end. */
static void check_range_end(tenure_runtime *rt, uintptr_t obj, uintptr_t end, const char *whose) {
    tenure_generation_range ranges[1024];
    size_t n = tenure_generation_bounds(rt, ranges, 1024);
    TT_CHECK(n <= 1024);
    for (size_t i = 0; i < n; i++)
        if (obj >= ranges[i].start && obj < ranges[i].start + ranges[i].reserved_length) {
            uintptr_t used_end = ranges[i].start + ranges[i].used_length;
            objects_between b = {end, used_end, 0};
            if (used_end > end)
                TT_CHECK_RESULT(tenure_heap_walk(rt, find_between, &b), TENURE_OK);
            TT_CHECK(used_end == end || b.found,
                     "%s last object ends at %#lx, its range's used_length ends at %#lx (%+ld bytes that are no "
                     "object)",
                     whose, (unsigned long)end, (unsigned long)used_end, (long)(used_end - end));
            return;
        }
    TT_CHECK(0, "%s last object lies in no range", whose);
}

static void two_threads(void) {
    tt_errlog log = {.fatal = 1};
    tenure_config cfg;
    tt_config(&cfg);
    cfg.GCConservativeStack = 1; /* the other thread keeps an object in a C local only */
    tenure_runtime *rt = tt_create(&cfg, &log);
    const tenure_type *node_t = tt_register_node(rt);
    worker *w = calloc(1, sizeof *w);
    TT_CHECK(w != NULL);
    w->rt = rt;
    w->node_t = node_t;
    pthread_mutex_init(&w->mx, NULL);
    pthread_cond_init(&w->cv, NULL);
    pthread_t th;
    TT_CHECK(pthread_create(&th, NULL, worker_main, w) == 0);
    tenure_blocking_enter(rt);
    wait_stage(w, 1);
    tenure_blocking_leave(rt);

    /* used_length: the worker's context is open (its objects end at w->last_end), so is ours */
    tt_node *mine = NULL;
    TENURE_FRAME(rt, f, mine);
    mine = tt_node_new(rt, node_t, 50);
    check_range_end(rt, (uintptr_t)mine, (uintptr_t)mine + tenure_object_size(rt, mine), "this thread's");
    check_range_end(rt, w->last, w->last_end, "the other thread's");

    /* the thread of each root */
    thread_roots t = {.w = w, .main_tid = my_tid(), .main_slot = (uintptr_t)&mine};
    tenure_root_area *area = tenure_root_area_add(rt, t.area_slot, 1);
    t.area_slot[0] = tt_node_new(rt, node_t, 51);
    t.handle_id = tenure_handle_new(rt, TENURE_HANDLE_STRONG, tt_node_new(rt, node_t, 52));
    tenure_profiler_callbacks cb = {.root_references2 = on_roots2};
    tenure_profiler *p = tenure_profiler_attach2(rt, &cb, sizeof cb, TENURE_PROFILE_GC, &t);
    TT_CHECK(p != NULL);
    TT_CHECK(tenure_collect(rt, 0, TENURE_COLLECT_COMPACT) == TENURE_OK);
    TT_CHECK(t.worker_frame == 1, "the other thread's frame slot: %d records with its thread id", t.worker_frame);
    TT_CHECK(t.main_frame == 1, "this thread's frame slot: %d records with its thread id", t.main_frame);
    TT_CHECK(t.area == 1 && t.handle == 1, "a root area / handle root with a thread id");
    TT_CHECK(t.wrong == 0, "%d roots of no thread carry a thread id", t.wrong);
    TT_CHECK(t.worker_word >= 1, "the object only the other thread's stack holds: no root of that thread");
    TT_CHECK(tenure_profiler_detach(rt, p) == TENURE_OK);

    /* D2: bounds while the other thread allocates: stops it for a moment, never deadlocks */
    __atomic_store_n(&w->keep_allocating, 1, __ATOMIC_RELEASE);
    set_stage(w, 2);
    size_t rounds = tt_scaled(200, 20);
    for (size_t r = 0; r < rounds; r++) {
        tenure_generation_range ranges[1024];
        size_t n = tenure_generation_bounds(rt, ranges, 1024);
        for (size_t i = 0; i < n && i < 1024; i++)
            TT_CHECK(ranges[i].used_length <= ranges[i].reserved_length);
        mine = tt_node_new(rt, node_t, 53);
        check_range_end(rt, (uintptr_t)mine, (uintptr_t)mine + tenure_object_size(rt, mine), "this thread's");
    }
    __atomic_store_n(&w->stop, 1, __ATOMIC_RELEASE);
    tenure_blocking_enter(rt);
    pthread_join(th, NULL);
    tenure_blocking_leave(rt);
    tenure_handle_free(rt, t.handle_id);
    tenure_root_area_remove(rt, area);
    TENURE_FRAME_POP(rt, f);
    pthread_mutex_destroy(&w->mx);
    pthread_cond_destroy(&w->cv);
    free(w);
    tenure_destroy(rt);
    printf("  D thread of stack roots, used_length with two threads: ok\n");
}

/* ------------------------------------------------------------------ E: sampled allocations */

enum { SAMPLE_INTERVAL = 100 * 1024 };

typedef struct sampler_thread {
    tenure_runtime *rt;
    const tenure_type *node_t, *bytes_t;
    uint64_t seed;
    size_t target;       /* bytes to allocate */
    uint64_t allocated;  /* bytes it allocated */
    uint64_t sample_sum; /* sum of bytes_since_last_sample */
    size_t samples, max_size, fast_open, nodes, allocations;
    int bad;
} sampler_thread;

static __thread sampler_thread *current_sampler;
static int stray_samples; /* on a thread that is no sampler */

static void on_sampled(void *c, void *obj, const tenure_type *type, size_t size, uint64_t since) {
    tenure_runtime *rt = c;
    sampler_thread *s = current_sampler;
    if (!s) {
        __atomic_add_fetch(&stray_samples, 1, __ATOMIC_RELAXED);
        return;
    }
    s->samples++;
    s->sample_sum += since;
    /* a query may wait for the lock while another thread collects: obj is held (pinned) by the
     * call, but that GC may promote it, so a small object may be found in any generation */
    int gen = tenure_object_generation(rt, obj);
    int large = size >= 85000; /* GCLOHThreshold's default */
    if (tenure_object_type(rt, obj) != type || tenure_object_size(rt, obj) != size || since < size ||
        (large ? gen != 3 : gen < 0 || gen > 2))
        s->bad++;
}

static void *sampler_main(void *arg) {
    sampler_thread *s = arg;
    tenure_runtime *rt = s->rt;
    TT_CHECK(tenure_thread_attach(rt) == TENURE_OK);
    current_sampler = s;
    uint64_t r = s->seed;
    size_t node_size = sizeof(tt_node);
    while (s->allocated < s->target) {
        r = tt_mix64(r + 0x9e3779b97f4a7c15ull);
        void *obj;
        size_t size, length = 0;
        unsigned pick = (unsigned)(r % 1000);
        if (pick < 200) {
            length = pick < 2 ? 90000 + (size_t)(r >> 20) % 30000 /* a large object now and then (LOH) */
                              : (size_t)(r >> 20) % 600;
            obj = tenure_alloc_array(rt, s->bytes_t, length);
            size = (sizeof(tenure_array_header) + length + 7) & ~(size_t)7;
        } else {
            tenure__mutator *m = tenure__current;
            s->fast_open += m->alloc_limit - m->alloc_ptr >= node_size;
            s->nodes++;
            obj = tenure_alloc(rt, s->node_t);
            size = node_size;
        }
        TT_CHECK(obj != NULL);
        if (s->allocations < 1000) /* (a query: the object is valid, a sample or not) */
            TT_CHECK(tenure_object_size(rt, obj) == size, "size %zu, computed %zu", tenure_object_size(rt, obj), size);
        s->allocated += size;
        s->allocations++;
        if (size > s->max_size)
            s->max_size = size;
    }
    current_sampler = NULL;
    TT_CHECK(tenure_thread_detach(rt) == TENURE_OK);
    return NULL;
}

typedef struct collector {
    tenure_runtime *rt;
    int stop;
} collector;

static void *collector_main(void *arg) {
    collector *c = arg;
    TT_CHECK(tenure_thread_attach(c->rt) == TENURE_OK);
    for (unsigned i = 0; !__atomic_load_n(&c->stop, __ATOMIC_ACQUIRE); i++) {
        TT_CHECK(tenure_collect(c->rt, i % 5 == 4 ? 1 : 0, i % 2 ? TENURE_COLLECT_COMPACT : 0) == TENURE_OK);
        struct timespec ts = {0, 200000};
        tenure_blocking_enter(c->rt);
        nanosleep(&ts, NULL);
        tenure_blocking_leave(c->rt);
    }
    TT_CHECK(tenure_thread_detach(c->rt) == TENURE_OK);
    return NULL;
}

static const tenure_type *register_bytes(tenure_runtime *rt) { return tt_register_plain_array(rt, "bytes", 1); }

static void sampled_allocations(void) {
    tt_errlog log = {.fatal = 1};
    tenure_runtime *rt = tt_create(NULL, &log);
    const tenure_type *node_t = tt_register_node(rt);
    const tenure_type *bytes_t = register_bytes(rt);
    tenure_profiler_callbacks cb = {.object_allocated_sampled = on_sampled, .sampling_interval = SAMPLE_INTERVAL};
    tenure_profiler *p = tenure_profiler_attach2(rt, &cb, sizeof cb, TENURE_PROFILE_ALLOCATIONS_SAMPLED, rt);
    TT_CHECK(p != NULL);
    enum { NT = 2 };
    sampler_thread s[NT];
    pthread_t th[NT], ct;
    collector col = {rt, 0};
    for (int i = 0; i < NT; i++)
        s[i] = (sampler_thread){.rt = rt,
                                .node_t = node_t,
                                .bytes_t = bytes_t,
                                .seed = tt_rand(),
                                .target = tt_scaled(24u << 20, 2u << 20)};
    TT_CHECK(pthread_create(&ct, NULL, collector_main, &col) == 0);
    for (int i = 0; i < NT; i++)
        TT_CHECK(pthread_create(&th[i], NULL, sampler_main, &s[i]) == 0);
    tenure_blocking_enter(rt);
    for (int i = 0; i < NT; i++)
        pthread_join(th[i], NULL);
    __atomic_store_n(&col.stop, 1, __ATOMIC_RELEASE);
    pthread_join(ct, NULL);
    tenure_blocking_leave(rt);
    for (int i = 0; i < NT; i++) {
        uint64_t t = s[i].allocated, n = SAMPLE_INTERVAL, max = s[i].max_size;
        printf("  E thread %d: %" PRIu64 " bytes in %zu allocations, %zu samples (interval %" PRIu64
               "), sum of bytes since %" PRIu64 ", inline path open %zu times\n",
               i, t, s[i].allocations, s[i].samples, n, s[i].sample_sum, s[i].fast_open);
        TT_CHECK(s[i].bad == 0, "%d samples were not valid objects of their reported type and size", s[i].bad);
        /* every byte is in exactly one sample's count except the ones after the last sample,
         * fewer than the interval (the allocation that passes it is sampled) */
        TT_CHECK(s[i].sample_sum <= t && t - s[i].sample_sum <= n,
                 "the samples account for %" PRIu64 " of %" PRIu64 " bytes", s[i].sample_sum, t);
        /* each sample's count is in (N, N + max]: the count is bounded by both */
        TT_CHECK(s[i].samples <= t / n && s[i].samples >= (t - n) / (n + max), "%zu samples for %" PRIu64 " bytes",
                 s[i].samples, t);
        /* the context closes for a sample once per interval, and for a refill once per 8 KiB
         * quantum: the inline path is open for nearly every small node (not under GCStress,
         * where every allocation takes the slow path) */
        if (!tt_stress_mode())
            TT_CHECK(s[i].fast_open >= s[i].nodes * 9 / 10, "the inline allocation path was closed %zu of %zu times",
                     s[i].nodes - s[i].fast_open, s[i].nodes);
    }
    TT_CHECK(stray_samples == 0, "%d samples on a thread that allocated nothing", stray_samples);
    TT_CHECK(tenure_profiler_detach(rt, p) == TENURE_OK);
    tenure_destroy(rt);
}

/* A profiler that detaches itself from its sampled callback gets no further call. */
typedef struct self_detach {
    tenure_runtime *rt;
    tenure_profiler *p;
    int calls;
} self_detach;

static void on_sampled_detach(void *c, void *obj, const tenure_type *type, size_t size, uint64_t since) {
    self_detach *d = c;
    (void)obj, (void)type, (void)size, (void)since;
    if (++d->calls == 3)
        TT_CHECK(tenure_profiler_detach(d->rt, d->p) == TENURE_OK);
}

static void sampled_self_detach(void) {
    tt_errlog log = {.fatal = 1};
    tenure_runtime *rt = tt_create(NULL, &log);
    const tenure_type *node_t = tt_register_node(rt);
    self_detach d = {rt, NULL, 0};
    tenure_profiler_callbacks cb = {.object_allocated_sampled = on_sampled_detach, .sampling_interval = 4096};
    d.p = tenure_profiler_attach2(rt, &cb, sizeof cb, TENURE_PROFILE_ALLOCATIONS_SAMPLED, &d);
    TT_CHECK(d.p != NULL);
    for (int i = 0; i < 10000; i++)
        tt_node_new(rt, node_t, 1);
    TT_CHECK(d.calls == 3, "%d sampled calls; the profiler detached itself at the third", d.calls);
    tenure_destroy(rt);
    printf("  E sampled allocations (two threads, a collector), self-detach: ok\n");
}

int main(void) {
    double t0 = tt_now();
    tt_rng_init("profiler_reports");
    handle_reports();
    root_reports();
    abi();
    two_threads();
    sampled_allocations();
    sampled_self_detach();
    return tt_finish("profiler_reports", t0);
}
