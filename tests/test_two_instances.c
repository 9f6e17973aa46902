/*
 * two_instances: instances in one process do not interfere.
 *
 *  A. two instances, interleaved allocation and GCs on one thread: each keeps its own graph
 *     intact, its own statistics, its own error hook and last error; their ids differ.
 *  B. an object, type, handle, root area or root scanner of one instance passed to the other
 *     is rejected (TENURE_INVALID_OBJECT / TENURE_INVALID_TYPE / TENURE_INVALID_HANDLE /
 *     an error) through the other instance's hook, and the owner is unaffected.
 *  C. four instances driven by four threads at the same time (no shared global state); each
 *     instance is created on the main thread, which detaches from it, and is used by a
 *     worker thread that attaches to it (and detaches when done).
 */
#include "test_util.h"

#include <pthread.h>

typedef struct inst {
    tenure_runtime *rt;
    tt_errlog log;
    const tenure_type *node_t, *refarr_t, *bytes_t;
    void *slots[64];
    uint64_t base[64], len[64];
    tenure_root_area *area;
    uint64_t next_id;
    uint64_t induced;
} inst;

static void inst_init(inst *in, int fatal) {
    memset(in, 0, sizeof *in);
    in->log.fatal = fatal;
    in->rt = tt_create(NULL, &in->log);
    in->node_t = tt_register_node(in->rt);
    in->refarr_t = tt_register_ref_array(in->rt);
    in->bytes_t = tt_register_bytes(in->rt);
    in->area = tenure_root_area_add(in->rt, in->slots, 64);
    TT_CHECK(in->area != NULL);
    in->next_id = (uint64_t)tenure_instance_id(in->rt) << 40;
}

/* Replace one slot with a new list (ids base..base+len-1) and make some garbage. */
static void inst_step(inst *in, uint64_t r) {
    tenure_runtime *rt = in->rt;
    size_t s = (size_t)(r % 64), len = 1 + (size_t)((r >> 8) % 300);
    uint64_t base = in->next_id + 1;
    in->next_id += len;
    tt_node *head = NULL, *n = NULL;
    TENURE_FRAME(rt, f, head, n);
    for (size_t k = len; k-- > 0;) {
        n = tt_node_new(rt, in->node_t, base + k);
        tenure_write_ref(rt, n, &n->a, head);
        tt_node_seal(n);
        head = n;
        void *g = tenure_alloc_array(rt, in->bytes_t, (size_t)((r >> 20) % 200));
        TT_CHECK(g != NULL);
    }
    in->slots[s] = head;
    in->base[s] = base;
    in->len[s] = len;
    TENURE_FRAME_POP(rt, f);
}

static void inst_check(inst *in) {
    for (size_t s = 0; s < 64; s++) {
        tt_node *p = (tt_node *)in->slots[s];
        for (uint64_t k = 0; k < in->len[s]; k++, p = p->a)
            TT_CHECK_NODE(in->rt, in->node_t, p, in->base[s] + k);
        TT_CHECK(p == NULL);
    }
}

static void inst_done(inst *in) {
    TT_CHECK_RESULT(tenure_root_area_remove(in->rt, in->area), TENURE_OK);
    tenure_destroy(in->rt);
}

/* ------------------------------------------------------------------ A + B */
static void expect_error(inst *in, tenure_result expected, const char *what) {
    TT_CHECK(in->log.count == 1, "%s: the hook of the receiving instance was called %d times", what, in->log.count);
    TT_CHECK(in->log.last == expected, "%s: hook got %d (%s), expected %d (%s)", what, (int)in->log.last,
             tenure_strerror(in->log.last), (int)expected, tenure_strerror(expected));
    TT_CHECK(in->log.last_rt == in->rt, "%s: the hook got the wrong instance", what);
    TT_CHECK(tenure_last_error(in->rt) == expected, "%s: tenure_last_error %d", what, (int)tenure_last_error(in->rt));
    tenure_clear_error(in->rt);
    TT_CHECK(tenure_last_error(in->rt) == TENURE_OK);
    tt_errlog_reset(&in->log);
}

static void scan_nothing(tenure_runtime *rt, tenure_visitor *v, void *ctx) {
    (void)rt;
    (void)v;
    (void)ctx;
}

static void test_same_thread(void) {
    inst *x = malloc(sizeof *x), *y = malloc(sizeof *y);
    TT_CHECK(x && y);
    inst_init(x, 0);
    inst_init(y, 0);
    TT_CHECK(x->rt != y->rt);
    TT_CHECK(tenure_instance_id(x->rt) != tenure_instance_id(y->rt), "instance ids are both %u",
             (unsigned)tenure_instance_id(x->rt));
    /* same-named types are distinct per instance */
    TT_CHECK(x->node_t != y->node_t);

    size_t steps = tt_scaled(4000, 400);
    for (size_t i = 0; i < steps; i++) {
        inst *in = (tt_rand() & 1) ? x : y;
        inst_step(in, tt_rand());
        if (i % 97 == 0) {
            tenure_stats other_before = tt_stats(in == x ? y->rt : x->rt);
            tt_collect(in->rt, (int)tt_rand_below(3) - (int)(i % 2), (i % 3 == 0) ? TENURE_COLLECT_COMPACT : 0);
            in->induced++;
            tenure_stats other_after = tt_stats(in == x ? y->rt : x->rt);
            TT_CHECK(other_before.gc_count == other_after.gc_count, "a GC of one instance counted in the other");
            inst_check(x);
            inst_check(y);
        }
    }
    inst_check(x);
    inst_check(y);
    TT_CHECK(x->log.count == 0 && y->log.count == 0, "unexpected errors: %s / %s", x->log.function, y->log.function);
    TT_CHECK(tt_stats(x->rt).gc_count >= x->induced && tt_stats(y->rt).gc_count >= y->induced);

    /* B: cross-instance misuse, reported by the receiving instance only */
    void *xobj = x->slots[0] != NULL ? x->slots[0] : NULL;
    if (xobj == NULL) {
        inst_step(x, 0);
        xobj = x->slots[0];
    }
    TT_CHECK(tenure_is_object(x->rt, xobj));
    TT_CHECK(tenure_is_object(y->rt, xobj) == 0, "y accepts an object of x");
    TT_CHECK(y->log.count == 0, "tenure_is_object called the hook");

    TT_CHECK(tenure_object_size(y->rt, xobj) == 0);
    expect_error(y, TENURE_INVALID_OBJECT, "tenure_object_size(foreign object)");
    TT_CHECK(tenure_object_type(y->rt, xobj) == NULL);
    expect_error(y, TENURE_INVALID_OBJECT, "tenure_object_type(foreign object)");
    TT_CHECK(tenure_object_generation(y->rt, xobj) == -1);
    expect_error(y, TENURE_INVALID_OBJECT, "tenure_object_generation(foreign object)");
    TT_CHECK(tenure_handle_new(y->rt, TENURE_HANDLE_STRONG, xobj) == NULL);
    expect_error(y, TENURE_INVALID_OBJECT, "tenure_handle_new(foreign object)");

    TT_CHECK(tenure_alloc(y->rt, x->node_t) == NULL, "y allocated with a type of x");
    expect_error(y, TENURE_INVALID_TYPE, "tenure_alloc(foreign type)");
    TT_CHECK(tenure_alloc_array(y->rt, x->refarr_t, 4) == NULL);
    expect_error(y, TENURE_INVALID_TYPE, "tenure_alloc_array(foreign type)");
    TT_CHECK(tenure_alloc_pinned(y->rt, x->node_t) == NULL);
    expect_error(y, TENURE_INVALID_TYPE, "tenure_alloc_pinned(foreign type)");
    TT_CHECK(tenure_alloc_array_pinned(y->rt, x->bytes_t, 4) == NULL);
    expect_error(y, TENURE_INVALID_TYPE, "tenure_alloc_array_pinned(foreign type)");

    tenure_handle *hx = tenure_handle_new(x->rt, TENURE_HANDLE_STRONG, xobj);
    TT_CHECK(hx != NULL);
    size_t hcount_x = tenure_handle_count(x->rt), hcount_y = tenure_handle_count(y->rt);
    TT_CHECK(tenure_handle_get(y->rt, hx) == NULL);
    expect_error(y, TENURE_INVALID_HANDLE, "tenure_handle_get(foreign handle)");
    TT_CHECK_RESULT(tenure_handle_set(y->rt, hx, NULL), TENURE_INVALID_HANDLE);
    expect_error(y, TENURE_INVALID_HANDLE, "tenure_handle_set(foreign handle)");
    TT_CHECK_RESULT(tenure_handle_free(y->rt, hx), TENURE_INVALID_HANDLE);
    expect_error(y, TENURE_INVALID_HANDLE, "tenure_handle_free(foreign handle)");
    TT_CHECK(tenure_handle_count(x->rt) == hcount_x && tenure_handle_count(y->rt) == hcount_y);
    TT_CHECK(tenure_handle_get(x->rt, hx) == xobj, "x's handle damaged by y");

    /* y's handle set to an object of x */
    tenure_handle *hy = tenure_handle_new(y->rt, TENURE_HANDLE_STRONG, NULL);
    TT_CHECK(hy != NULL);
    TT_CHECK(tenure_handle_set(y->rt, hy, xobj) != TENURE_OK);
    expect_error(y, TENURE_INVALID_OBJECT, "tenure_handle_set(own handle, foreign object)");
    TT_CHECK(tenure_handle_get(y->rt, hy) == NULL);

    /* root areas and scanners of x cannot be removed through y */
    static void *xs[2];
    tenure_root_area *xa = tenure_root_area_add(x->rt, xs, 2);
    TT_CHECK(xa != NULL);
    TT_CHECK(tenure_root_area_remove(y->rt, xa) != TENURE_OK, "y removed a root area of x");
    TT_CHECK(y->log.count == 1);
    tenure_clear_error(y->rt);
    tt_errlog_reset(&y->log);
    tenure_root_scanner *xsc = tenure_root_scanner_add(x->rt, scan_nothing, NULL);
    TT_CHECK(xsc != NULL);
    TT_CHECK(tenure_root_scanner_remove(y->rt, xsc) != TENURE_OK, "y removed a root scanner of x");
    TT_CHECK(y->log.count == 1);
    tenure_clear_error(y->rt);
    tt_errlog_reset(&y->log);
    /* still usable in x: the area keeps its object alive */
    xs[1] = xobj;
    TT_CHECK_RESULT(tenure_handle_free(x->rt, hx), TENURE_OK);
    tt_collect(x->rt, -1, TENURE_COLLECT_COMPACT);
    TT_CHECK(tenure_is_object(x->rt, xs[1]));
    TT_CHECK_RESULT(tenure_root_area_remove(x->rt, xa), TENURE_OK);
    TT_CHECK_RESULT(tenure_root_scanner_remove(x->rt, xsc), TENURE_OK);

    /* x's hook and last error were never involved */
    TT_CHECK(x->log.count == 0, "x's hook was called for y's misuse (%s)", x->log.function);
    TT_CHECK(tenure_last_error(x->rt) == TENURE_OK);
    tt_collect(y->rt, -1, 0);
    inst_check(x);
    inst_check(y);
    TT_CHECK_RESULT(tenure_handle_free(y->rt, hy), TENURE_OK);
    inst_done(x);
    /* y still works after x is gone */
    for (int i = 0; i < 50; i++)
        inst_step(y, tt_rand());
    tt_collect(y->rt, -1, TENURE_COLLECT_COMPACT);
    inst_check(y);
    inst_done(y);
    free(x);
    free(y);
}

/* ------------------------------------------------------------------ C. threads */
typedef struct thread_job {
    inst *in;
    uint64_t seed;
    size_t steps;
} thread_job;

static void *thread_main(void *arg) {
    thread_job *j = (thread_job *)arg;
    inst *in = j->in;
    uint64_t r = j->seed;
    TT_CHECK_RESULT(tenure_thread_attach(in->rt), TENURE_OK);
    for (size_t i = 0; i < j->steps; i++) {
        r = tt_mix64(r + i);
        inst_step(in, r);
        if (i % 64 == 0) {
            tt_collect(in->rt, (int)(r % 3), (r & 8) ? TENURE_COLLECT_COMPACT : 0);
            inst_check(in);
        }
    }
    inst_check(in);
    TT_CHECK_RESULT(tenure_verify_heap(in->rt), TENURE_OK);
    TT_CHECK_RESULT(tenure_thread_detach(in->rt), TENURE_OK);
    return NULL;
}

static void test_threads(void) {
    enum { N = 4 };
    pthread_t th[N];
    thread_job jobs[N];
    for (int i = 0; i < N; i++) {
        jobs[i].in = malloc(sizeof(inst));
        TT_CHECK(jobs[i].in != NULL);
        inst_init(jobs[i].in, 1);
        jobs[i].seed = tt_rand();
        jobs[i].steps = tt_scaled(3000, 300);
    }
    for (int i = 0; i < N; i++)
        for (int k = i + 1; k < N; k++)
            TT_CHECK(tenure_instance_id(jobs[i].in->rt) != tenure_instance_id(jobs[k].in->rt),
                     "live instances %d and %d share id %u", i, k, (unsigned)tenure_instance_id(jobs[i].in->rt));
    /* the main thread lets go of the instances while the workers own them (an attached
     * thread that does not reach safepoints would hold up their collections) */
    for (int i = 0; i < N; i++)
        TT_CHECK_RESULT(tenure_thread_detach(jobs[i].in->rt), TENURE_OK);
    for (int i = 0; i < N; i++)
        TT_CHECK(pthread_create(&th[i], NULL, thread_main, &jobs[i]) == 0);
    for (int i = 0; i < N; i++)
        TT_CHECK(pthread_join(th[i], NULL) == 0);
    for (int i = 0; i < N; i++) {
        TT_CHECK_RESULT(tenure_thread_attach(jobs[i].in->rt), TENURE_OK);
        inst_done(jobs[i].in);
        free(jobs[i].in);
    }
}

int main(void) {
    tt_rng_init("two_instances");
    double t0 = tt_now();
    test_same_thread();
    test_threads();
    printf("two_instances: OK (%.2f s)\n", tt_now() - t0);
    return 0;
}
