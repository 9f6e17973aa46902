/*
 * threads: attached mutator threads and the finalizer thread (include/tenure.h, "Threads" and
 * "Finalization").
 *
 *  A. four attached threads mutate their own graphs (lists relinked through the barrier, byte
 *     arrays, pinned nodes that point into the movable heap) while GCs run from budgets and from
 *     tenure_collect calls of random threads; each checks its whole graph at the end. They also
 *     append to a shared array held by a strong handle, under a test mutex that they wait for
 *     inside blocking sections.
 *  B. a thread in a long blocking section (a condition wait, a sleep) does not hold up the GCs
 *     of another thread; what its frames hold is kept (and moved) correctly; an object it holds
 *     only in a local (conservative stack scan) is pinned and intact afterwards.
 *  C. a compute-only thread that calls tenure_safepoint lets another thread's GCs run, and finds
 *     its (moved) objects intact after each safepoint.
 *  D. attach nesting, tenure_thread_count, a thread that exits attached is detached, using the
 *     instance from an unattached thread is reported (TENURE_STATE, allocation NULL),
 *     tenure_destroy refuses while another thread is attached.
 *  E. GCFinalizeMode 0: finalizers run on the instance's own thread (not the caller's), exactly
 *     once, by themselves and within tenure_wait_for_pending_finalizers, and may allocate;
 *     tenure_destroy leaves no thread behind. Modes 1 and 2 run them on the calling thread.
 *     GCFinalizeOnShutdown 1 runs pending finalizers at tenure_destroy (mode 0: on the finalizer
 *     thread), 0 discards them.
 *  F. the write barrier is never a safepoint, with HeapVerify's checked barrier too: a thread
 *     that reverses a list in place with raw local pointers and only barrier stores keeps a
 *     correct list while another thread collects and compacts (precise stacks only).
 *
 * While other threads may collect, every call into the instance may be a safepoint where
 * objects move (but not the barrier: F): pointers kept across such calls are in
 * frames, and checks made then read ids and checksums only (no tenure_is_object on a raw
 * pointer). Full checks run when no other thread can collect.
 * A watchdog aborts with the name of a phase that does not finish (a hang).
 */
#include "test_util.h"

#include <dirent.h>
#include <pthread.h>

/* ------------------------------------------------------------------ helpers */

/* A per-thread PRNG (tt_rand is not thread-safe), seeded from the test's seed. */
typedef struct trng {
    uint64_t s;
} trng;
static uint64_t trng_next(trng *r) {
    r->s += 0x9e3779b97f4a7c15ull;
    return tt_mix64(r->s);
}
static uint64_t trng_below(trng *r, uint64_t n) { return trng_next(r) % n; }

static int load_flag(const int *p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }
static void store_flag(int *p, int v) { __atomic_store_n(p, v, __ATOMIC_RELEASE); }

static void sleep_ms(long ms) {
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* The watchdog: a phase that runs longer than this is taken for a hang. */
enum { WATCHDOG_SECS = 100 };
static struct {
    pthread_mutex_t mx;
    const char *phase;
    double deadline;
    int stop;
    pthread_t thread;
} wd = {.mx = PTHREAD_MUTEX_INITIALIZER};

static void phase(const char *name) {
    pthread_mutex_lock(&wd.mx);
    wd.phase = name;
    wd.deadline = tt_now() + WATCHDOG_SECS;
    pthread_mutex_unlock(&wd.mx);
    printf("  %s\n", name);
}

static void *watchdog_main(void *arg) {
    (void)arg;
    for (;;) {
        pthread_mutex_lock(&wd.mx);
        int stop = wd.stop, late = wd.phase != NULL && tt_now() > wd.deadline;
        const char *name = wd.phase;
        pthread_mutex_unlock(&wd.mx);
        if (stop)
            return NULL;
        if (late) {
            fflush(stdout);
            fprintf(stderr, "threads: phase \"%s\" did not finish in %d s (a hang?): aborting\n", name, WATCHDOG_SECS);
            abort();
        }
        sleep_ms(50);
    }
}

/* Threads of this process (/proc/self/task). */
static int task_count(void) {
    DIR *d = opendir("/proc/self/task");
    TT_CHECK(d != NULL, "cannot open /proc/self/task");
    int n = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;)
        n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

/* Wait (up to 10 s: a joined thread may stay listed a moment) until there are n threads. */
static int tasks_become(int n) {
    double end = tt_now() + 10;
    int now;
    while ((now = task_count()) != n && tt_now() < end)
        sleep_ms(1);
    return now;
}

/* The threads of the process when no instance exists: main and the watchdog (and whatever the
 * runtime started before). Every phase leaves the process so. */
static int base_tasks;
static int settled_tasks(void) {
    int now = tasks_become(base_tasks);
    TT_CHECK(now == base_tasks, "%d threads at the start of a phase, %d at the start of the test", now, base_tasks);
    return now;
}

/* Sleep 1 ms as an attached thread must: in a blocking section. */
static void nap(tenure_runtime *rt) {
    tenure_blocking_enter(rt);
    sleep_ms(1);
    tenure_blocking_leave(rt);
}

/* Wait until *flag == value (up to `secs`), napping; 0 on timeout. */
static int wait_flag(tenure_runtime *rt, const int *flag, int value, double secs) {
    double end = tt_now() + secs;
    while (load_flag(flag) != value) {
        if (tt_now() > end)
            return 0;
        nap(rt);
    }
    return 1;
}

/* Take a test mutex / join a thread from an attached thread: blocked while waiting. */
static void lock_blocking(tenure_runtime *rt, pthread_mutex_t *mx) {
    tenure_blocking_enter(rt);
    pthread_mutex_lock(mx);
    tenure_blocking_leave(rt);
}
static void join_blocking(tenure_runtime *rt, pthread_t th) {
    tenure_blocking_enter(rt);
    TT_CHECK(pthread_join(th, NULL) == 0);
    tenure_blocking_leave(rt);
}

/* One instance and the test's types. */
typedef struct world {
    tenure_runtime *rt;
    const tenure_type *node_t, *refs_t, *bytes_t;
    tt_errlog log;
} world;

static void world_open(world *w, const tenure_config *cfg, int fatal) {
    memset(w, 0, sizeof *w);
    w->log.fatal = fatal;
    w->rt = tt_create(cfg, &w->log);
    w->node_t = tt_register_node(w->rt);
    w->refs_t = tt_register_ref_array(w->rt);
    w->bytes_t = tt_register_bytes(w->rt);
}

static void base_config(tenure_config *cfg) {
    tt_config(cfg);
    if (getenv("TENURE_GCgen0size") == NULL)
        cfg->GCgen0size = 256u << 10;
}

static void garbage(world *w, size_t bytes) {
    TT_CHECK(tenure_alloc_array(w->rt, w->bytes_t, bytes) != NULL, "garbage: %s",
             tenure_strerror(tenure_last_error(w->rt)));
}

/* A node check that makes no call into the instance (safe while other threads collect). */
static void check_node_light(const tt_node *n, uint64_t id, const char *what) {
    TT_CHECK(n != NULL, "%s: node %" PRIu64 " is missing", what, id);
    TT_CHECK(n->id == id, "%s: node id %" PRIu64 ", expected %" PRIu64, what, n->id, id);
    TT_CHECK(n->check == tt_node_sum(n), "%s: node %" PRIu64 ": bad checksum", what, id);
}

/* A list of len nodes, ids base.. (head first), with garbage between them. Not rooted. */
static tt_node *build_list(world *w, uint64_t base, size_t len, size_t garbage_bytes) {
    tenure_runtime *rt = w->rt;
    tt_node *head = NULL, *n = NULL;
    TENURE_FRAME(rt, f, head, n);
    for (size_t k = len; k-- > 0;) {
        n = tt_node_new(rt, w->node_t, base + k);
        tenure_write_ref(rt, n, &n->a, head);
        tt_node_seal(n);
        head = n;
        if (garbage_bytes)
            garbage(w, garbage_bytes);
    }
    TENURE_FRAME_POP(rt, f);
    return head;
}

/* Full check (tenure_is_object...): only when no other thread can collect. */
static void check_list(world *w, const tt_node *p, uint64_t base, size_t len) {
    for (size_t k = 0; k < len; k++, p = p->a)
        TT_CHECK_NODE(w->rt, w->node_t, p, base + k);
    TT_CHECK(p == NULL, "list %" PRIu64 " is longer than %zu", base, len);
}

static void check_list_light(const tt_node *p, uint64_t base, size_t len, const char *what) {
    for (size_t k = 0; k < len; k++, p = p->a)
        check_node_light(p, base + k, what);
    TT_CHECK(p == NULL, "%s: list %" PRIu64 " is longer than %zu", what, base, len);
}

/* ------------------------------------------------------------------ A. mutators */
enum { NLISTS = 32, NBLOBS = 16, NPINS = 8, NEWLEN = 120, MAXLEN = 400, NWORKERS = 4 };
#define SHARED_BIT (1ull << 39)

typedef struct list_model {
    uint64_t ids[MAXLEN];
    size_t len;
} list_model;

typedef struct shared_box {
    pthread_mutex_t mx;
    tenure_handle *handle; /* strong, to a ref array whose first `count` entries are used */
    size_t count;
} shared_box;

typedef struct worker {
    world *w;
    shared_box *shared;
    pthread_barrier_t *done;
    int index;
    pthread_t thread;
    trng rng;
    size_t ops;
    uint64_t next_id, shared_seq;
    list_model lists[NLISTS];
    uint64_t blob_tag[NBLOBS];
    size_t blob_len[NBLOBS];
    void *pin_addr[NPINS];
    uint64_t pin_id[NPINS];
    size_t collects;
} worker;

/* A worker's roots, named in a frame of worker_main: lists[NLISTS], blobs[NBLOBS], pins[NPINS]. */
typedef struct wroots {
    void *lists, *blobs, *pins;
} wroots;

static uint64_t shared_id(int index, uint64_t seq) { return ((uint64_t)(index + 1) << 40) | SHARED_BIT | seq; }

/* b links: each node's b is itself or a node up to 4 further down. */
static void link_b(worker *wk, tt_node *head) {
    tenure_runtime *rt = wk->w->rt;
    tt_node *p = head, *q = NULL;
    TENURE_FRAME(rt, f, p, q);
    for (; p != NULL; p = p->a) {
        q = p;
        for (uint64_t k = trng_below(&wk->rng, 5); k > 0 && q != NULL; k--)
            q = q->a;
        tenure_write_ref(rt, p, &p->b, q);
        tt_node_seal(p);
    }
    TENURE_FRAME_POP(rt, f);
}

static void op_new_list(worker *wk, wroots *r) {
    world *w = wk->w;
    tenure_runtime *rt = w->rt;
    size_t s = trng_below(&wk->rng, NLISTS), len = 1 + trng_below(&wk->rng, NEWLEN);
    uint64_t base = wk->next_id;
    wk->next_id += len;
    tt_node *head = NULL, *n = NULL;
    TENURE_FRAME(rt, f, head, n);
    for (size_t k = len; k-- > 0;) {
        n = tt_node_new(rt, w->node_t, base + k);
        tenure_write_ref(rt, n, &n->a, head);
        head = n;
        if (trng_below(&wk->rng, 2))
            garbage(w, trng_below(&wk->rng, 256));
    }
    link_b(wk, head);
    tenure_write_ref(rt, r->lists, &tt_refs(r->lists)[s], head);
    TENURE_FRAME_POP(rt, f);
    for (size_t k = 0; k < len; k++)
        wk->lists[s].ids[k] = base + k;
    wk->lists[s].len = len;
}

static void op_reverse(worker *wk, wroots *r) {
    tenure_runtime *rt = wk->w->rt;
    size_t s = trng_below(&wk->rng, NLISTS);
    tt_node *prev = NULL, *cur = tt_refs(r->lists)[s], *next = NULL;
    TENURE_FRAME(rt, f, prev, cur, next);
    while (cur != NULL) {
        next = cur->a;
        tenure_write_ref(rt, cur, &cur->a, prev);
        tt_node_seal(cur);
        prev = cur;
        cur = next;
    }
    tenure_write_ref(rt, r->lists, &tt_refs(r->lists)[s], prev);
    TENURE_FRAME_POP(rt, f);
    list_model *m = &wk->lists[s];
    for (size_t i = 0, j = m->len; i + 1 < j; i++, j--) {
        uint64_t t = m->ids[i];
        m->ids[i] = m->ids[j - 1];
        m->ids[j - 1] = t;
    }
}

static void op_concat(worker *wk, wroots *r) {
    tenure_runtime *rt = wk->w->rt;
    size_t s = trng_below(&wk->rng, NLISTS), t = trng_below(&wk->rng, NLISTS);
    list_model *ms = &wk->lists[s], *mt = &wk->lists[t];
    if (s == t || ms->len == 0 || ms->len + mt->len > MAXLEN)
        return;
    tt_node *tail = tt_refs(r->lists)[s];
    TENURE_FRAME(rt, f, tail);
    while (tail->a != NULL)
        tail = tail->a;
    tenure_write_ref(rt, tail, &tail->a, tt_refs(r->lists)[t]);
    tt_node_seal(tail);
    tenure_write_ref(rt, r->lists, &tt_refs(r->lists)[t], NULL);
    TENURE_FRAME_POP(rt, f);
    memcpy(ms->ids + ms->len, mt->ids, mt->len * sizeof mt->ids[0]);
    ms->len += mt->len;
    mt->len = 0;
}

static void op_truncate(worker *wk, wroots *r) {
    tenure_runtime *rt = wk->w->rt;
    size_t s = trng_below(&wk->rng, NLISTS);
    list_model *m = &wk->lists[s];
    if (m->len < 2)
        return;
    size_t keep = 1 + (size_t)trng_below(&wk->rng, m->len - 1);
    tt_node *p = tt_refs(r->lists)[s];
    TENURE_FRAME(rt, f, p);
    for (size_t k = 1; k < keep; k++)
        p = p->a;
    tenure_write_ref(rt, p, &p->a, NULL);
    tt_node_seal(p);
    TENURE_FRAME_POP(rt, f);
    m->len = keep;
}

static void op_drop(worker *wk, wroots *r) {
    size_t s = trng_below(&wk->rng, NLISTS);
    tenure_write_ref(wk->w->rt, r->lists, &tt_refs(r->lists)[s], NULL);
    wk->lists[s].len = 0;
}

static uint8_t blob_byte(uint64_t tag, size_t i) { return (uint8_t)(tag + i * 7 + (i >> 8) * 13); }

static void op_blob(worker *wk, wroots *r) {
    world *w = wk->w;
    size_t s = trng_below(&wk->rng, NBLOBS);
    size_t len = trng_below(&wk->rng, 256) == 0 ? 90000 + trng_below(&wk->rng, 30000) : 1 + trng_below(&wk->rng, 2000);
    uint64_t tag = trng_next(&wk->rng);
    void *b = tenure_alloc_array(w->rt, w->bytes_t, len);
    TT_CHECK(b != NULL, "blob of %zu bytes: %s", len, tenure_strerror(tenure_last_error(w->rt)));
    uint8_t *data = tenure_array_data(b);
    for (size_t i = 0; i < len; i++)
        data[i] = blob_byte(tag, i);
    tenure_write_ref(w->rt, r->blobs, &tt_refs(r->blobs)[s], b);
    wk->blob_tag[s] = tag;
    wk->blob_len[s] = len;
}

/* A pinned node whose `a` is the head of one of the lists (an old-to-young reference). */
static void op_pin(worker *wk, wroots *r) {
    world *w = wk->w;
    tenure_runtime *rt = w->rt;
    size_t s = trng_below(&wk->rng, NPINS), k = trng_below(&wk->rng, NLISTS);
    tt_node *p = tenure_alloc_pinned(rt, w->node_t);
    TT_CHECK(p != NULL, "tenure_alloc_pinned: %s", tenure_strerror(tenure_last_error(rt)));
    tt_node *target = tt_refs(r->lists)[k]; /* read after the allocation: it may have moved */
    p->id = wk->next_id++;
    tenure_write_ref(rt, p, &p->a, target);
    tt_node_seal(p);
    tenure_write_ref(rt, r->pins, &tt_refs(r->pins)[s], p);
    wk->pin_addr[s] = p;
    wk->pin_id[s] = p->id;
}

/* Append a node to the shared array (grown by copying when full) under the test mutex. */
static void op_shared(worker *wk) {
    world *w = wk->w;
    tenure_runtime *rt = w->rt;
    shared_box *sh = wk->shared;
    tt_node *n = NULL;
    void *arr = NULL, *bigger = NULL;
    TENURE_FRAME(rt, f, n, arr, bigger);
    lock_blocking(rt, &sh->mx);
    n = tt_node_new(rt, w->node_t, shared_id(wk->index, wk->shared_seq++));
    arr = tenure_handle_get(rt, sh->handle);
    TT_CHECK(arr != NULL);
    if (sh->count == tenure_array_length(arr)) {
        bigger = tenure_alloc_array(rt, w->refs_t, 2 * sh->count);
        TT_CHECK(bigger != NULL);
        for (size_t i = 0; i < sh->count; i++)
            tenure_write_ref(rt, bigger, &tt_refs(bigger)[i], tt_refs(arr)[i]);
        TT_CHECK_RESULT(tenure_handle_set(rt, sh->handle, bigger), TENURE_OK);
        arr = bigger;
    }
    if (sh->count > 0)
        tenure_write_ref(rt, n, &n->a, tt_refs(arr)[sh->count - 1]);
    tt_node_seal(n);
    tenure_write_ref(rt, arr, &tt_refs(arr)[sh->count], n);
    sh->count++;
    pthread_mutex_unlock(&sh->mx);
    TENURE_FRAME_POP(rt, f);
}

static void op_collect(worker *wk) {
    static const unsigned flags[] = {0, 0, TENURE_COLLECT_COMPACT, TENURE_COLLECT_COMPACT | TENURE_COLLECT_COMPACT_LOH};
    int gen = (int)trng_below(&wk->rng, 4) - 1;
    tt_collect(wk->w->rt, gen, flags[trng_below(&wk->rng, 4)]);
    wk->collects++;
}

/* Everything the worker holds; `full` adds tenure_is_object/type checks (other threads must
 * not be able to collect then). */
static void worker_check(worker *wk, wroots *r, int full) {
    world *w = wk->w;
    void **lists = tt_refs(r->lists), **blobs = tt_refs(r->blobs), **pins = tt_refs(r->pins);
    for (size_t s = 0; s < NLISTS; s++) {
        const tt_node *p = lists[s];
        for (size_t k = 0; k < wk->lists[s].len; k++, p = p->a) {
            if (full)
                TT_CHECK_NODE(w->rt, w->node_t, p, wk->lists[s].ids[k]);
            check_node_light(p, wk->lists[s].ids[k], "worker list");
            if (full && p->b != NULL)
                TT_CHECK(tenure_is_object(w->rt, p->b), "a b link is not an object");
        }
        TT_CHECK(p == NULL, "worker %d list %zu is longer than %zu", wk->index, s, wk->lists[s].len);
    }
    for (size_t s = 0; s < NBLOBS; s++) {
        const uint8_t *data = blobs[s] ? tenure_array_data(blobs[s]) : NULL;
        TT_CHECK((data == NULL) == (wk->blob_len[s] == 0), "worker %d blob %zu lost", wk->index, s);
        if (data == NULL)
            continue;
        TT_CHECK(tenure_array_length(blobs[s]) == wk->blob_len[s], "worker %d blob %zu: length %zu, expected %zu",
                 wk->index, s, tenure_array_length(blobs[s]), wk->blob_len[s]);
        for (size_t i = 0; i < wk->blob_len[s]; i++)
            TT_CHECK(data[i] == blob_byte(wk->blob_tag[s], i), "worker %d blob %zu: byte %zu corrupt", wk->index, s, i);
    }
    for (size_t s = 0; s < NPINS; s++) {
        TT_CHECK(pins[s] == wk->pin_addr[s], "worker %d: pinned node %zu moved from %p to %p", wk->index, s,
                 wk->pin_addr[s], pins[s]);
        if (pins[s] == NULL)
            continue;
        check_node_light(pins[s], wk->pin_id[s], "pinned node");
        if (full)
            TT_CHECK(tenure_object_generation(w->rt, pins[s]) == 4, "a pinned node is not in the POH");
    }
}

static void worker_step(worker *wk, wroots *r) {
    uint64_t op = trng_below(&wk->rng, 1000);
    if (op < 220)
        op_new_list(wk, r);
    else if (op < 370)
        op_reverse(wk, r);
    else if (op < 470)
        op_concat(wk, r);
    else if (op < 540)
        op_truncate(wk, r);
    else if (op < 580)
        op_drop(wk, r);
    else if (op < 760)
        op_blob(wk, r);
    else if (op < 820)
        op_pin(wk, r);
    else if (op < 940)
        op_shared(wk);
    else if (op < 950)
        op_collect(wk);
    else if (op < 990)
        tenure_safepoint(wk->w->rt);
    else
        worker_check(wk, r, 0);
}

static void barrier_blocking(tenure_runtime *rt, pthread_barrier_t *b) {
    tenure_blocking_enter(rt);
    pthread_barrier_wait(b);
    tenure_blocking_leave(rt);
}

static void *worker_main(void *arg) {
    worker *wk = arg;
    world *w = wk->w;
    tenure_runtime *rt = w->rt;
    TT_CHECK_RESULT(tenure_thread_attach(rt), TENURE_OK);
    wroots r = {NULL, NULL, NULL};
    TENURE_FRAME(rt, f, r.lists, r.blobs, r.pins);
    r.lists = tenure_alloc_array(rt, w->refs_t, NLISTS);
    r.blobs = tenure_alloc_array(rt, w->refs_t, NBLOBS);
    r.pins = tenure_alloc_array(rt, w->refs_t, NPINS);
    TT_CHECK(r.lists && r.blobs && r.pins);
    for (size_t i = 0; i < wk->ops; i++)
        worker_step(wk, &r);
    worker_check(wk, &r, 0);
    /* Nobody allocates or collects from here to the second barrier: full checks are safe. */
    barrier_blocking(rt, wk->done);
    worker_check(wk, &r, 1);
    TT_CHECK_RESULT(tenure_verify_heap(rt), TENURE_OK);
    barrier_blocking(rt, wk->done);
    TENURE_FRAME_POP(rt, f);
    TT_CHECK_RESULT(tenure_thread_detach(rt), TENURE_OK);
    return NULL;
}

/* Every worker's appends are there, in order, each linked to the one before. */
static void check_shared(world *w, shared_box *sh, worker *wks) {
    tenure_runtime *rt = w->rt;
    void *arr = tenure_handle_get(rt, sh->handle);
    uint64_t next[NWORKERS] = {0}, total = 0;
    for (int i = 0; i < NWORKERS; i++)
        total += wks[i].shared_seq;
    TT_CHECK(sh->count == total, "%zu shared entries for %" PRIu64 " appends", sh->count, total);
    for (size_t k = 0; k < sh->count; k++) {
        tt_node *n = tt_refs(arr)[k];
        TT_CHECK(n != NULL, "shared entry %zu is NULL", k);
        uint64_t id = n->id, t = (id >> 40) - 1, seq = id & (SHARED_BIT - 1);
        TT_CHECK((id & SHARED_BIT) && t < NWORKERS, "shared entry %zu: bad id %#" PRIx64, k, id);
        TT_CHECK_NODE(rt, w->node_t, n, shared_id((int)t, next[t]));
        TT_CHECK(seq == next[t]++, "worker %d's appends out of order", (int)t);
        TT_CHECK(n->a == (k ? tt_refs(arr)[k - 1] : NULL), "shared entry %zu: wrong link", k);
    }
}

static void test_mutators(void) {
    phase("A: 4 mutator threads, shared array under a test mutex");
    tenure_config cfg;
    base_config(&cfg);
    world w;
    world_open(&w, &cfg, 1);
    tenure_runtime *rt = w.rt;
    size_t threads_before = tenure_thread_count(rt);
    shared_box sh = {.mx = PTHREAD_MUTEX_INITIALIZER};
    void *arr = tenure_alloc_array(rt, w.refs_t, 16);
    TT_CHECK(arr != NULL);
    sh.handle = tenure_handle_new(rt, TENURE_HANDLE_STRONG, arr);
    TT_CHECK(sh.handle != NULL);
    pthread_barrier_t done;
    TT_CHECK(pthread_barrier_init(&done, NULL, NWORKERS) == 0);
    worker *wks = calloc(NWORKERS, sizeof *wks);
    TT_CHECK(wks != NULL);
    for (int i = 0; i < NWORKERS; i++) {
        wks[i] = (worker){.w = &w,
                          .shared = &sh,
                          .done = &done,
                          .index = i,
                          .rng = {tt_rand()},
                          .ops = tt_scaled(8000, 400),
                          .next_id = (uint64_t)(i + 1) << 40};
        TT_CHECK(pthread_create(&wks[i].thread, NULL, worker_main, &wks[i]) == 0);
    }
    tenure_blocking_enter(rt);
    for (int i = 0; i < NWORKERS; i++)
        TT_CHECK(pthread_join(wks[i].thread, NULL) == 0);
    tenure_blocking_leave(rt);
    TT_CHECK(tenure_thread_count(rt) == threads_before, "%zu threads attached after the workers left, %zu before",
             tenure_thread_count(rt), threads_before);
    check_shared(&w, &sh, wks);
    tt_collect(rt, 2, TENURE_COLLECT_COMPACT);
    check_shared(&w, &sh, wks);
    size_t collects = 0;
    for (int i = 0; i < NWORKERS; i++)
        collects += wks[i].collects;
    tenure_stats st = tt_stats(rt);
    TT_CHECK(st.gc_count > collects, "%" PRIu64 " GCs: no allocation-triggered GC", st.gc_count);
    printf("    %zu ops per thread, %zu shared appends, %" PRIu64 " GCs (%zu induced by the threads)\n", wks[0].ops,
           sh.count, st.gc_count, collects);
    TT_CHECK_RESULT(tenure_handle_free(rt, sh.handle), TENURE_OK);
    pthread_barrier_destroy(&done);
    free(wks);
    tenure_destroy(rt);
}

/* ------------------------------------------------------------------ B. blocking sections */
enum { BLOCKER_LEN = 200 };
#define BLOCKER_BASE 0x100000ull
#define RAW_ID 0xabc0000ull

typedef struct blocker {
    world *w;
    int conservative; /* also hold an object in a plain local; block by sleeping */
    pthread_t thread;
    pthread_mutex_t mx;
    pthread_cond_t cv;
    int ready, release;
    size_t moved;
} blocker;

/* An object behind a lot of garbage (a compaction would slide it) with a child; returned
 * unrooted: the caller holds it in a local only. */
__attribute__((noinline)) static tt_node *make_raw(world *w) {
    tt_node *child = NULL;
    TENURE_FRAME(w->rt, f, child);
    for (int i = 0; i < 500; i++)
        garbage(w, 100);
    child = tt_node_new(w->rt, w->node_t, RAW_ID + 1);
    tt_node *raw = tt_node_new(w->rt, w->node_t, RAW_ID);
    tenure_write_ref(w->rt, raw, &raw->a, child);
    tt_node_seal(raw);
    TENURE_FRAME_POP(w->rt, f);
    return raw;
}

static void blocker_wait(blocker *b) {
    tenure_runtime *rt = b->w->rt;
    tenure_blocking_enter(rt);
    if (b->conservative) {
        while (!load_flag(&b->release))
            sleep_ms(1);
    } else {
        pthread_mutex_lock(&b->mx);
        while (!b->release)
            pthread_cond_wait(&b->cv, &b->mx);
        pthread_mutex_unlock(&b->mx);
    }
    tenure_blocking_leave(rt);
}

static void *blocker_main(void *arg) {
    blocker *b = arg;
    world *w = b->w;
    tenure_runtime *rt = w->rt;
    TT_CHECK_RESULT(tenure_thread_attach(rt), TENURE_OK);
    tt_node *head = NULL;
    void *arr = NULL;
    TENURE_FRAME(rt, f, head, arr);
    head = build_list(w, BLOCKER_BASE, BLOCKER_LEN, 48);
    arr = tenure_alloc_array(rt, w->refs_t, BLOCKER_LEN);
    TT_CHECK(arr != NULL);
    uintptr_t *before = malloc(BLOCKER_LEN * sizeof *before); /* malloc memory is not scanned */
    TT_CHECK(before != NULL);
    tt_node *p = head;
    for (size_t k = 0; k < BLOCKER_LEN; k++, p = p->a) {
        tenure_write_ref(rt, arr, &tt_refs(arr)[k], p);
        before[k] = (uintptr_t)p;
    }
    tt_node *raw = b->conservative ? make_raw(w) : NULL; /* only in this local */
    store_flag(&b->ready, 1);
    blocker_wait(b);
    /* the other thread joins us now (blocked): full checks are safe */
    check_list(w, head, BLOCKER_BASE, BLOCKER_LEN);
    p = head;
    for (size_t k = 0; k < BLOCKER_LEN; k++, p = p->a) {
        TT_CHECK(tt_refs(arr)[k] == p, "blocked thread: array entry %zu does not match the list", k);
        b->moved += before[k] != (uintptr_t)p;
    }
    if (raw != NULL) {
        TT_CHECK_NODE(rt, w->node_t, raw, RAW_ID);
        TT_CHECK_NODE(rt, w->node_t, raw->a, RAW_ID + 1);
    }
    head = build_list(w, BLOCKER_BASE, BLOCKER_LEN, 48); /* its allocation context still works */
    check_list(w, head, BLOCKER_BASE, BLOCKER_LEN);
    free(before);
    TENURE_FRAME_POP(rt, f);
    TT_CHECK_RESULT(tenure_thread_detach(rt), TENURE_OK);
    return NULL;
}

static void test_blocking(int conservative) {
    phase(conservative ? "B: a sleeping blocked thread; an object held only in a local is pinned"
                       : "B: a thread blocked on a condition variable; its frames are kept");
    tenure_config cfg;
    base_config(&cfg);
    cfg.GCConservativeStack = (uint32_t)conservative;
    cfg.GCCompactMode = 1; /* every GC compacts: whatever is not pinned moves */
    world w;
    world_open(&w, &cfg, 1);
    tenure_runtime *rt = w.rt;
    blocker b = {.w = &w,
                 .conservative = conservative,
                 .mx = PTHREAD_MUTEX_INITIALIZER,
                 .cv = PTHREAD_COND_INITIALIZER};
    TT_CHECK(pthread_create(&b.thread, NULL, blocker_main, &b) == 0);
    TT_CHECK(wait_flag(rt, &b.ready, 1, 30), "the blocking thread did not get ready in 30 s");
    uint64_t gc0 = tt_stats(rt).gc_count;
    size_t rounds = 12;
    tt_node *mine = NULL;
    TENURE_FRAME(rt, f, mine);
    for (size_t i = 0; i < rounds; i++) { /* GCs while the other thread is blocked */
        mine = build_list(&w, 7000 + i * 1000, 100, 32);
        tt_collect(rt, (int)(i % 3), TENURE_COLLECT_COMPACT);
        check_list(&w, mine, 7000 + i * 1000, 100);
    }
    TENURE_FRAME_POP(rt, f);
    uint64_t gcs = tt_stats(rt).gc_count - gc0;
    TT_CHECK(gcs >= rounds, "%" PRIu64 " GCs while a thread was blocked, expected >= %zu", gcs, rounds);
    lock_blocking(rt, &b.mx);
    store_flag(&b.release, 1);
    pthread_cond_broadcast(&b.cv);
    pthread_mutex_unlock(&b.mx);
    join_blocking(rt, b.thread);
    printf("    %" PRIu64 " GCs while blocked; %zu of %d framed objects moved\n", gcs, b.moved, BLOCKER_LEN);
    tenure_destroy(rt);
}

/* ------------------------------------------------------------------ C. safepoints */
typedef struct computer {
    world *w;
    pthread_t thread;
    int in_loop, stop;
    size_t iterations, moves;
} computer;

static void *computer_main(void *arg) {
    computer *c = arg;
    world *w = c->w;
    tenure_runtime *rt = w->rt;
    TT_CHECK_RESULT(tenure_thread_attach(rt), TENURE_OK);
    tt_node *head = NULL;
    TENURE_FRAME(rt, f, head);
    head = build_list(w, 900000, 300, 40);
    uintptr_t last = (uintptr_t)head;
    while (!load_flag(&c->stop)) { /* touches objects, never allocates */
        check_list_light(head, 900000, 300, "compute-only thread");
        c->iterations++;
        store_flag(&c->in_loop, 1);
        tenure_safepoint(rt);
        c->moves += (uintptr_t)head != last;
        last = (uintptr_t)head;
    }
    check_list_light(head, 900000, 300, "compute-only thread");
    TENURE_FRAME_POP(rt, f);
    TT_CHECK_RESULT(tenure_thread_detach(rt), TENURE_OK);
    return NULL;
}

static void test_safepoint(void) {
    phase("C: a compute-only thread polling tenure_safepoint");
    tenure_config cfg;
    base_config(&cfg);
    cfg.GCCompactMode = 1;
    world w;
    world_open(&w, &cfg, 1);
    tenure_runtime *rt = w.rt;
    computer c = {.w = &w};
    TT_CHECK(pthread_create(&c.thread, NULL, computer_main, &c) == 0);
    TT_CHECK(wait_flag(rt, &c.in_loop, 1, 30), "the compute thread did not start in 30 s");
    uint64_t gc0 = tt_stats(rt).gc_count;
    size_t rounds = 20;
    for (size_t i = 0; i < rounds; i++) {
        for (int k = 0; k < 200; k++)
            garbage(&w, 64);
        tt_collect(rt, (int)(i % 3), TENURE_COLLECT_COMPACT);
    }
    uint64_t gcs = tt_stats(rt).gc_count - gc0;
    TT_CHECK(gcs >= rounds, "%" PRIu64 " GCs, expected >= %zu", gcs, rounds);
    store_flag(&c.stop, 1);
    join_blocking(rt, c.thread);
    printf("    %" PRIu64 " GCs during %zu compute iterations (its list moved %zu times)\n", gcs, c.iterations,
           c.moves);
    tenure_destroy(rt);
}

/* ------------------------------------------------------------------ D. attaching */
static void expect_state(world *w, int count_before, const char *what) {
    TT_CHECK(w->log.count == count_before + 1, "%s: the hook was called %d times, expected once", what,
             w->log.count - count_before);
    TT_CHECK(w->log.last == TENURE_STATE, "%s: the hook got %d (%s), expected TENURE_STATE", what, (int)w->log.last,
             tenure_strerror(w->log.last));
}

/* From a thread that is not attached: allocation fails and is reported. */
static void expect_unattached(world *w, const char *who) {
    tenure_runtime *rt = w->rt;
    int c = w->log.count;
    TT_CHECK(tenure_alloc(rt, w->node_t) == NULL, "%s allocated an object", who);
    expect_state(w, c, "tenure_alloc from an unattached thread");
    c = w->log.count;
    TT_CHECK(tenure_alloc_array(rt, w->refs_t, 4) == NULL, "%s allocated an array", who);
    expect_state(w, c, "tenure_alloc_array from an unattached thread");
    c = w->log.count;
    TT_CHECK(tenure_alloc_pinned(rt, w->node_t) == NULL, "%s allocated a pinned object", who);
    expect_state(w, c, "tenure_alloc_pinned from an unattached thread");
    c = w->log.count;
    TT_CHECK_RESULT(tenure_thread_detach(rt), TENURE_STATE);
    expect_state(w, c, "tenure_thread_detach from an unattached thread");
}

static void *nesting_main(void *arg) {
    world *w = arg;
    tenure_runtime *rt = w->rt;
    TT_CHECK_RESULT(tenure_thread_attach(rt), TENURE_OK);
    TT_CHECK(tenure_thread_count(rt) == 2, "thread count %zu after attaching", tenure_thread_count(rt));
    TT_CHECK_RESULT(tenure_thread_attach(rt), TENURE_OK);
    TT_CHECK(tenure_thread_count(rt) == 2, "attaching twice counted %zu threads", tenure_thread_count(rt));
    TT_CHECK_RESULT(tenure_thread_detach(rt), TENURE_OK);
    TT_CHECK(tenure_thread_count(rt) == 2, "one detach of two attaches left %zu threads", tenure_thread_count(rt));
    tt_node *n = tt_node_new(rt, w->node_t, 42); /* still attached once */
    TT_CHECK_NODE(rt, w->node_t, n, 42);
    TT_CHECK_RESULT(tenure_thread_detach(rt), TENURE_OK);
    expect_unattached(w, "a detached thread");
    return NULL;
}

static void *never_attached_main(void *arg) {
    expect_unattached(arg, "a thread that never attached");
    return NULL;
}

typedef struct exiter {
    world *w;
    tenure_handle *handle;
} exiter;

static void *exit_attached_main(void *arg) {
    exiter *e = arg;
    tenure_runtime *rt = e->w->rt;
    TT_CHECK_RESULT(tenure_thread_attach(rt), TENURE_OK);
    TT_CHECK_RESULT(tenure_thread_attach(rt), TENURE_OK);
    tt_node *head = NULL;
    TENURE_FRAME(rt, f, head);
    head = build_list(e->w, 5000, 100, 64);
    TT_CHECK_RESULT(tenure_handle_set(rt, e->handle, head), TENURE_OK);
    TENURE_FRAME_POP(rt, f);
    return NULL; /* exits attached (twice) */
}

static void test_attach(void) {
    phase("D: attach nesting, thread counts, unattached use, exit while attached");
    tenure_config cfg;
    base_config(&cfg);
    cfg.GCFinalizeMode = 1; /* no finalizer thread: the counts are the test's threads */
    world w;
    world_open(&w, &cfg, 0);
    tenure_runtime *rt = w.rt;
    TT_CHECK(tenure_thread_count(rt) == 1, "%zu threads attached after create (mode 1)", tenure_thread_count(rt));
    TT_CHECK_RESULT(tenure_thread_attach(rt), TENURE_OK); /* the creator nests too */
    TT_CHECK(tenure_thread_count(rt) == 1);
    TT_CHECK_RESULT(tenure_thread_detach(rt), TENURE_OK);
    TT_CHECK(tenure_thread_count(rt) == 1);
    TT_CHECK(tenure_alloc(rt, w.node_t) != NULL, "the creator was detached by one detach of two attaches");
    pthread_t th;
    TT_CHECK(pthread_create(&th, NULL, nesting_main, &w) == 0);
    join_blocking(rt, th);
    TT_CHECK(tenure_thread_count(rt) == 1, "%zu threads after a thread detached", tenure_thread_count(rt));
    TT_CHECK(pthread_create(&th, NULL, never_attached_main, &w) == 0);
    join_blocking(rt, th);
    TT_CHECK(tenure_last_error(rt) == TENURE_STATE, "last error %d after unattached use", (int)tenure_last_error(rt));
    tenure_clear_error(rt);
    int errors = w.log.count;

    exiter e = {&w, tenure_handle_new(rt, TENURE_HANDLE_STRONG, NULL)};
    TT_CHECK(e.handle != NULL);
    TT_CHECK(pthread_create(&th, NULL, exit_attached_main, &e) == 0);
    join_blocking(rt, th);
    TT_CHECK(tenure_thread_count(rt) == 1, "a thread that exited attached is still counted (%zu threads)",
             tenure_thread_count(rt));
    tt_collect(rt, 2, TENURE_COLLECT_COMPACT);
    check_list(&w, tenure_handle_get(rt, e.handle), 5000, 100);
    tt_node *again = NULL;
    TENURE_FRAME(rt, f, again);
    again = build_list(&w, 6000, 100, 64);
    tt_collect(rt, 0, 0);
    check_list(&w, again, 6000, 100);
    check_list(&w, tenure_handle_get(rt, e.handle), 5000, 100);
    TENURE_FRAME_POP(rt, f);
    TT_CHECK_RESULT(tenure_handle_free(rt, e.handle), TENURE_OK);
    TT_CHECK(w.log.count == errors, "unexpected error: %s: %s", w.log.function, w.log.message);
    tenure_destroy(rt);
}

typedef struct holder {
    world *w;
    pthread_t thread;
    int attached, go;
} holder;

static void *holder_main(void *arg) {
    holder *h = arg;
    tenure_runtime *rt = h->w->rt;
    TT_CHECK_RESULT(tenure_thread_attach(rt), TENURE_OK);
    store_flag(&h->attached, 1);
    TT_CHECK(wait_flag(rt, &h->go, 1, 60), "never told to go");
    tt_node *n = tt_node_new(rt, h->w->node_t, 77); /* the instance is still alive */
    TT_CHECK_NODE(rt, h->w->node_t, n, 77);
    TT_CHECK_RESULT(tenure_thread_detach(rt), TENURE_OK);
    return NULL;
}

static void test_destroy_refused(void) {
    phase("D: tenure_destroy refused while another thread is attached");
    int tasks = settled_tasks();
    tenure_config cfg;
    base_config(&cfg);
    cfg.GCFinalizeMode = 0; /* the finalizer thread does not count against destroy */
    world w;
    world_open(&w, &cfg, 0);
    tenure_runtime *rt = w.rt;
    TT_CHECK(tenure_thread_count(rt) == 2, "%zu threads after create (mode 0)", tenure_thread_count(rt));
    holder h = {.w = &w};
    TT_CHECK(pthread_create(&h.thread, NULL, holder_main, &h) == 0);
    TT_CHECK(wait_flag(rt, &h.attached, 1, 30), "the holder did not attach in 30 s");
    TT_CHECK(tenure_thread_count(rt) == 3, "%zu threads with the holder attached", tenure_thread_count(rt));
    int c = w.log.count;
    tenure_destroy(rt);
    expect_state(&w, c, "tenure_destroy with another thread attached");
    TT_CHECK(strstr(w.log.function, "tenure_destroy") != NULL, "reported by %s", w.log.function);
    tenure_clear_error(rt);
    TT_CHECK(tenure_thread_count(rt) == 3, "the refused destroy changed the thread count to %zu",
             tenure_thread_count(rt));
    tt_node *head = NULL; /* still alive and working */
    TENURE_FRAME(rt, f, head);
    head = build_list(&w, 100, 200, 32);
    tt_collect(rt, 2, TENURE_COLLECT_COMPACT);
    store_flag(&h.go, 1);
    join_blocking(rt, h.thread);
    check_list(&w, head, 100, 200);
    TENURE_FRAME_POP(rt, f);
    TT_CHECK(tenure_thread_count(rt) == 2, "%zu threads after the holder detached", tenure_thread_count(rt));
    c = w.log.count;
    tenure_destroy(rt);
    TT_CHECK(w.log.count == c, "tenure_destroy failed again: %s", w.log.message);
    int left = tasks_become(tasks);
    TT_CHECK(left == tasks, "%d threads after destroy, %d before create", left, tasks);
}

/* ------------------------------------------------------------------ E. finalizers */
enum { FMAX = 1 << 16 };
#define CHILD_ID(id) ((id) + (1ull << 20))
#define FIN_NODE_ID 0xf1f1f1ull

typedef struct fobj {
    tenure_header h;
    tt_node *child;
    uint64_t id;
} fobj;

static struct fin_state {
    tenure_runtime *rt;
    const tenure_type *node_t, *fobj_t;
    uint64_t next; /* next fobj id */
    int runs[FMAX];
    pthread_t who[FMAX];
    int allocating; /* finalizers of ids % 8 == 0 allocate */
    int allocated;  /* how many of them did */
    int gate;       /* finalizers wait at the gate until it opens */
    int gate_entered, gate_open;
    pthread_mutex_t mx;
    pthread_cond_t cv;
} fs = {.mx = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};

/* A finalizer allocates a list (its object rooted) and checks it. Others may collect
 * meanwhile (mode 0): light checks only. */
static void fin_allocate(tenure_runtime *rt, fobj *o) {
    tt_node *head = NULL, *n = NULL;
    TENURE_FRAME(rt, f, o, head, n);
    for (uint64_t k = 20; k-- > 0;) {
        n = tt_node_new(rt, fs.node_t, FIN_NODE_ID + k);
        tenure_write_ref(rt, n, &n->a, head);
        tt_node_seal(n);
        head = n;
    }
    check_list_light(head, FIN_NODE_ID, 20, "list allocated by a finalizer");
    check_node_light(o->child, CHILD_ID(o->id), "child of a finalized object after allocating");
    TENURE_FRAME_POP(rt, f);
    __atomic_fetch_add(&fs.allocated, 1, __ATOMIC_SEQ_CST);
}

static void gate_pass(tenure_runtime *rt) {
    tenure_blocking_enter(rt);
    pthread_mutex_lock(&fs.mx);
    store_flag(&fs.gate_entered, 1);
    while (!fs.gate_open)
        pthread_cond_wait(&fs.cv, &fs.mx);
    pthread_mutex_unlock(&fs.mx);
    tenure_blocking_leave(rt);
}

static void finalize_fobj(tenure_runtime *rt, void *obj) {
    fobj *o = obj;
    TT_CHECK(rt == fs.rt, "a finalizer got the wrong instance");
    TT_CHECK(o->id < FMAX, "finalized object has id %" PRIu64, o->id);
    fs.who[o->id] = pthread_self();
    check_node_light(o->child, CHILD_ID(o->id), "child of a finalized object");
    __atomic_fetch_add(&fs.runs[o->id], 1, __ATOMIC_SEQ_CST);
    if (fs.allocating && o->id % 8 == 0)
        fin_allocate(rt, o);
    if (fs.gate)
        gate_pass(rt);
}

static void fin_reset(tenure_runtime *rt) {
    memset(fs.runs, 0, sizeof fs.runs);
    memset(fs.who, 0, sizeof fs.who);
    fs.rt = rt;
    fs.next = 0;
    fs.allocating = 1;
    fs.allocated = 0;
    fs.gate = fs.gate_entered = fs.gate_open = 0;
    static const size_t offs[] = {offsetof(fobj, child)};
    tenure_type_desc d = {.name = "fobj",
                          .size = sizeof(fobj),
                          .ref_offsets = offs,
                          .ref_count = 1,
                          .flags = TENURE_TYPE_FINALIZABLE,
                          .finalize = finalize_fobj};
    fs.fobj_t = tenure_type_register(rt, &d);
    fs.node_t = tt_register_node(rt);
    TT_CHECK(fs.fobj_t != NULL && fs.node_t != NULL);
}

/* n finalizable objects (each with a child node), dropped at once. */
static void make_fobjs(world *w, size_t n) {
    tenure_runtime *rt = w->rt;
    fobj *o = NULL;
    tt_node *c = NULL;
    TENURE_FRAME(rt, f, o, c);
    for (size_t i = 0; i < n; i++) {
        uint64_t id = fs.next++;
        TT_CHECK(id < FMAX, "too many finalizable objects");
        c = tt_node_new(rt, fs.node_t, CHILD_ID(id));
        o = tenure_alloc(rt, fs.fobj_t);
        TT_CHECK(o != NULL, "tenure_alloc(fobj): %s", tenure_strerror(tenure_last_error(rt)));
        o->id = id;
        tenure_write_ref(rt, o, &o->child, c);
        garbage(w, 64);
    }
    TENURE_FRAME_POP(rt, f);
}

static int runs_of(uint64_t id) { return __atomic_load_n(&fs.runs[id], __ATOMIC_SEQ_CST); }

static size_t runs_total(uint64_t from, uint64_t to) {
    size_t total = 0;
    for (uint64_t id = from; id < to; id++)
        total += (size_t)runs_of(id);
    return total;
}

/* Every object in [from, to) was finalized exactly once; on `thread` if same, else not on it. */
static void check_runs(uint64_t from, uint64_t to, pthread_t thread, int same, const char *what) {
    for (uint64_t id = from; id < to; id++) {
        TT_CHECK(runs_of(id) == 1, "%s: object %" PRIu64 " finalized %d times", what, id, runs_of(id));
        TT_CHECK(!pthread_equal(fs.who[id], thread) == !same, "%s: object %" PRIu64 " finalized on the %s thread", what,
                 id, same ? "wrong" : "calling");
    }
}

static void test_finalizer_thread(void) {
    phase("E: mode 0, the finalizer thread");
    int tasks = settled_tasks();
    tenure_config cfg;
    base_config(&cfg);
    cfg.GCFinalizeMode = 0;
    world w;
    world_open(&w, &cfg, 1);
    tenure_runtime *rt = w.rt;
    TT_CHECK(tenure_thread_count(rt) == 2, "%zu threads after create (mode 0): no finalizer thread?",
             tenure_thread_count(rt));
    int now = tasks_become(tasks + 1);
    TT_CHECK(now == tasks + 1, "%d threads after create, %d before", now, tasks);
    fin_reset(rt);
    pthread_t self = pthread_self();

    /* by themselves, after a GC */
    size_t n1 = tt_scaled(300, 40);
    make_fobjs(&w, n1);
    tt_collect(rt, 2, 0);
    double end = tt_now() + 10;
    while (runs_total(0, n1) < n1 && tt_now() < end)
        nap(rt);
    TT_CHECK(runs_total(0, n1) == n1, "%zu of %zu finalizers ran within 10 s of a full GC", runs_total(0, n1), n1);

    /* within tenure_wait_for_pending_finalizers */
    uint64_t from = fs.next;
    make_fobjs(&w, tt_scaled(300, 40));
    TT_CHECK_RESULT(tenure_wait_for_pending_finalizers(rt), TENURE_OK);
    check_runs(from, fs.next, self, 0, "after tenure_wait_for_pending_finalizers");
    TT_CHECK(tenure_pending_finalizers(rt) == 0, "%zu finalizers still pending", tenure_pending_finalizers(rt));

    /* while this thread allocates and collects too */
    tt_node *mine = NULL;
    TENURE_FRAME(rt, f, mine);
    for (uint64_t round = 0; round < 10; round++) {
        mine = build_list(&w, 300000 + round * 1000, 100, 16);
        make_fobjs(&w, tt_scaled(100, 10));
        if (round % 3 == 0)
            tt_collect(rt, (int)(round % 2), TENURE_COLLECT_COMPACT);
        check_list_light(mine, 300000 + round * 1000, 100, "main thread's list");
    }
    TENURE_FRAME_POP(rt, f);
    TT_CHECK_RESULT(tenure_wait_for_pending_finalizers(rt), TENURE_OK);
    check_runs(0, fs.next, self, 0, "mode 0");
    for (uint64_t id = 1; id < fs.next; id++)
        TT_CHECK(pthread_equal(fs.who[id], fs.who[0]), "finalizers ran on more than one thread");
    size_t allocating = (size_t)((fs.next + 7) / 8);
    TT_CHECK((size_t)load_flag(&fs.allocated) == allocating, "%d of %zu allocating finalizers completed",
             load_flag(&fs.allocated), allocating);
    TT_CHECK_RESULT(tenure_wait_for_pending_finalizers(rt), TENURE_OK);
    check_runs(0, fs.next, self, 0, "mode 0, after another wait");
    tenure_stats st = tt_stats(rt);
    TT_CHECK(st.finalizers_run == fs.next, "finalizers_run %" PRIu64 ", %" PRIu64 " ran", st.finalizers_run, fs.next);
    TT_CHECK(tenure_thread_count(rt) == 2, "%zu threads before destroy", tenure_thread_count(rt));
    printf("    %" PRIu64 " finalizers on the finalizer thread, %d of them allocating\n", fs.next,
           load_flag(&fs.allocated));
    tenure_destroy(rt);
    now = tasks_become(tasks);
    TT_CHECK(now == tasks, "%d threads after destroy, %d before create: the finalizer thread is left", now, tasks);
}

typedef struct fin_job {
    world *w;
    pthread_t thread, self;
    size_t ran;          /* mode 1: what tenure_run_pending_finalizers returned */
    uint64_t gcs, early; /* mode 2: GCs of the allocation loop and finalizers run in it */
} fin_job;

static void *mode1_main(void *arg) {
    fin_job *j = arg;
    tenure_runtime *rt = j->w->rt;
    TT_CHECK_RESULT(tenure_thread_attach(rt), TENURE_OK);
    j->self = pthread_self();
    j->ran = tenure_run_pending_finalizers(rt);
    TT_CHECK_RESULT(tenure_thread_detach(rt), TENURE_OK);
    return NULL;
}

static void *mode2_main(void *arg) {
    fin_job *j = arg;
    world *w = j->w;
    tenure_runtime *rt = w->rt;
    TT_CHECK_RESULT(tenure_thread_attach(rt), TENURE_OK);
    uint64_t from = fs.next, gc0 = tt_stats(rt).gc_count;
    for (size_t i = 0, n = tt_scaled(600, 150); i < n; i++) {
        make_fobjs(w, 1);
        for (int k = 0; k < 20; k++)
            garbage(w, 200);
    }
    j->gcs = tt_stats(rt).gc_count - gc0;
    j->early = runs_total(from, fs.next);
    tt_collect(rt, 2, 0); /* runs what is pending, here */
    check_runs(from, fs.next, pthread_self(), 1, "mode 2, after tenure_collect");
    TT_CHECK_RESULT(tenure_thread_detach(rt), TENURE_OK);
    return NULL;
}

static void test_finalize_modes(void) {
    phase("E: modes 1 and 2 run finalizers on the calling thread");
    tenure_config cfg;
    base_config(&cfg);
    cfg.GCFinalizeMode = 1;
    world w;
    world_open(&w, &cfg, 1);
    tenure_runtime *rt = w.rt;
    TT_CHECK(tenure_thread_count(rt) == 1, "%zu threads after create (mode 1)", tenure_thread_count(rt));
    fin_reset(rt);
    size_t n = tt_scaled(200, 30);
    make_fobjs(&w, n);
    tt_collect(rt, 2, 0);
    tt_collect(rt, 0, 0);
    TT_CHECK(runs_total(0, fs.next) == 0, "mode 1: a finalizer ran without tenure_run_pending_finalizers");
    TT_CHECK(tenure_pending_finalizers(rt) == n, "%zu pending, expected %zu", tenure_pending_finalizers(rt), n);
    fin_job j = {.w = &w};
    TT_CHECK(pthread_create(&j.thread, NULL, mode1_main, &j) == 0);
    join_blocking(rt, j.thread);
    TT_CHECK(j.ran == n, "tenure_run_pending_finalizers ran %zu of %zu", j.ran, n);
    check_runs(0, n, j.self, 1, "mode 1, run by another attached thread");
    make_fobjs(&w, n);
    TT_CHECK_RESULT(tenure_wait_for_pending_finalizers(rt), TENURE_OK);
    check_runs(n, fs.next, pthread_self(), 1, "mode 1, tenure_wait_for_pending_finalizers");
    tenure_destroy(rt);

    cfg.GCFinalizeMode = 2;
    world_open(&w, &cfg, 1);
    rt = w.rt;
    TT_CHECK(tenure_thread_count(rt) == 1, "%zu threads after create (mode 2)", tenure_thread_count(rt));
    fin_reset(rt);
    j = (fin_job){.w = &w};
    TT_CHECK(pthread_create(&j.thread, NULL, mode2_main, &j) == 0);
    join_blocking(rt, j.thread);
    if (j.gcs >= 3) /* GC 2 found some dead, the slow path before GC 3 ran them */
        TT_CHECK(j.early > 0, "mode 2: no finalizer ran at the allocation slow paths of %" PRIu64 " GCs", j.gcs);
    printf("    mode 2: %" PRIu64 " finalizers ran at slow paths during %" PRIu64 " GCs\n", j.early, j.gcs);
    tenure_destroy(rt);
}

static void *gate_opener(void *arg) {
    (void)arg;
    sleep_ms(100);
    pthread_mutex_lock(&fs.mx);
    fs.gate_open = 1;
    pthread_cond_broadcast(&fs.cv);
    pthread_mutex_unlock(&fs.mx);
    return NULL;
}

/* Pending finalizers at tenure_destroy. In mode 0 the first finalizer holds the finalizer
 * thread at a gate (in a blocking section) that opens only after destroy began (probably). */
static void test_shutdown(uint32_t mode, uint32_t on_shutdown) {
    phase(mode == 0 ? (on_shutdown ? "E: shutdown, mode 0, pending finalizers run" : "E: shutdown, mode 0, discarded")
                    : (on_shutdown ? "E: shutdown, mode 1, pending finalizers run" : "E: shutdown, mode 1, discarded"));
    int tasks = settled_tasks();
    tenure_config cfg;
    base_config(&cfg);
    cfg.GCFinalizeMode = mode;
    cfg.GCFinalizeOnShutdown = on_shutdown;
    world w;
    world_open(&w, &cfg, 1);
    tenure_runtime *rt = w.rt;
    fin_reset(rt);
    fs.allocating = 0;
    fs.gate = mode == 0;
    size_t n = 20;
    make_fobjs(&w, n);
    tt_collect(rt, 2, 0);
    pthread_t opener;
    if (mode == 0) {
        TT_CHECK(wait_flag(rt, &fs.gate_entered, 1, 10), "no finalizer ran within 10 s");
        TT_CHECK(pthread_create(&opener, NULL, gate_opener, NULL) == 0);
    } else {
        TT_CHECK(tenure_pending_finalizers(rt) == n, "%zu pending, expected %zu", tenure_pending_finalizers(rt), n);
    }
    pthread_t self = pthread_self();
    tenure_destroy(rt);
    if (mode == 0)
        TT_CHECK(pthread_join(opener, NULL) == 0);
    size_t ran = runs_total(0, n);
    if (on_shutdown) {
        check_runs(0, n, self, mode == 1, "finalizers run by tenure_destroy");
    } else if (mode == 1) {
        TT_CHECK(ran == 0, "GCFinalizeOnShutdown=0: %zu finalizers ran at destroy", ran);
    } else {
        for (uint64_t id = 0; id < n; id++)
            TT_CHECK(runs_of(id) <= 1, "object %" PRIu64 " finalized twice", id);
        TT_CHECK(ran >= 1, "the finalizer at the gate was not counted");
    }
    if (mode == 0)
        printf("    %zu of %zu finalizers ran, %zu discarded\n", ran, n, n - ran);
    int now = tasks_become(tasks);
    TT_CHECK(now == tasks, "%d threads after destroy, %d before create", now, tasks);
}

/* ------------------------------------------------------------------ F. the barrier */
typedef struct bnode {
    tenure_header h;
    struct bnode *next;
    long id;
} bnode;

typedef struct barrier_job {
    tenure_runtime *rt;
    const tenure_type *t;
    int rounds, done;
} barrier_job;

/* Build a list with garbage between its nodes (so that a GC moves it), then reverse it in
 * place holding the nodes only in plain locals: no call into the instance but the barrier. */
static void *reverser_main(void *arg) {
    barrier_job *j = arg;
    tenure_runtime *rt = j->rt;
    TT_CHECK_RESULT(tenure_thread_attach(rt), TENURE_OK);
    enum { LEN = 500 };
    bnode *head = NULL, *n = NULL;
    TENURE_FRAME(rt, f, head, n);
    for (int round = 0; round < j->rounds; round++) {
        head = NULL;
        for (long k = 0; k < LEN; k++) {
            n = tenure_alloc(rt, j->t);
            TT_CHECK(n != NULL);
            n->id = k;
            tenure_write_ref(rt, n, &n->next, head);
            head = n;
            TT_CHECK(tenure_alloc(rt, j->t) != NULL);
        }
        bnode *prev = NULL, *cur = head;
        while (cur) {
            bnode *next = cur->next;
            tenure_write_ref(rt, cur, &cur->next, prev);
            prev = cur;
            cur = next;
        }
        head = prev;
        long k = 0;
        for (bnode *p = head; p; p = p->next, k++)
            TT_CHECK(p->id == k && k < LEN, "round %d: node %ld has id %ld", round, k, p->id);
        TT_CHECK(k == LEN, "round %d: the reversed list has %ld nodes of %d", round, k, LEN);
        tenure_safepoint(rt);
    }
    TENURE_FRAME_POP(rt, f);
    TT_CHECK_RESULT(tenure_thread_detach(rt), TENURE_OK);
    store_flag(&j->done, 1);
    return NULL;
}

static void test_barrier_no_safepoint(void) {
    phase("F: the checked barrier is no safepoint (HeapVerify, precise stacks)");
    tenure_config cfg;
    tt_config(&cfg);
    cfg.HeapVerify = 1;
    cfg.GCConservativeStack = 0; /* nothing pins the reverser's locals */
    cfg.GCCompactMode = 1;
    cfg.GCFinalizeMode = 1;
    tt_errlog log = {.fatal = 1};
    tenure_runtime *rt = tt_create(&cfg, &log);
    tenure_type_desc d = {.name = "bnode",
                          .size = sizeof(bnode),
                          .ref_offsets = (size_t[]){offsetof(bnode, next)},
                          .ref_count = 1};
    barrier_job j = {.rt = rt, .t = tenure_type_register(rt, &d), .rounds = (int)tt_scaled(100, 20)};
    TT_CHECK(j.t != NULL);
    pthread_t th;
    TT_CHECK(pthread_create(&th, NULL, reverser_main, &j) == 0);
    uint64_t gcs = 0;
    while (!load_flag(&j.done)) {
        for (int i = 0; i < 50; i++)
            TT_CHECK(tenure_alloc(rt, j.t) != NULL);
        TT_CHECK_RESULT(tenure_collect(rt, 2, TENURE_COLLECT_COMPACT), TENURE_OK);
        gcs++;
    }
    tenure_blocking_enter(rt);
    TT_CHECK(pthread_join(th, NULL) == 0);
    tenure_blocking_leave(rt);
    printf("    %d reversals, %" PRIu64 " compacting GCs meanwhile\n", j.rounds, gcs);
    tenure_destroy(rt);
}

int main(void) {
    double t0 = tt_now();
    tt_rng_init("threads");
    TT_CHECK(pthread_create(&wd.thread, NULL, watchdog_main, NULL) == 0);
    base_tasks = task_count();
    test_mutators();
    test_blocking(0);
    test_blocking(1);
    test_safepoint();
    test_attach();
    test_destroy_refused();
    test_finalizer_thread();
    test_finalize_modes();
    test_shutdown(0, 1);
    test_shutdown(0, 0);
    test_shutdown(1, 1);
    test_shutdown(1, 0);
    test_barrier_no_safepoint();
    pthread_mutex_lock(&wd.mx);
    wd.stop = 1;
    pthread_mutex_unlock(&wd.mx);
    TT_CHECK(pthread_join(wd.thread, NULL) == 0);
    return tt_finish("threads", t0);
}
