/*
 * fork: the child of fork() without exec gets a usable copy of the instance.
 *
 * An instance with its finalizer thread (GCFinalizeMode 0) and a second attached thread that
 * allocates without pause is forked again and again, from the main thread:
 *  A. in every child (only the forking thread exists there): allocate, collect, verify the
 *     heap, wait for pending finalizers and see the finalizers run, destroy the instance;
 *     the same in the parent afterwards, with its threads still there;
 *  B. a fork from inside the error hook (the instance's lock is held then): the child's
 *     instance works once the call returns;
 *  C. a fork while the finalizer thread is inside a finalizer that blocks: the child neither
 *     hangs nor runs that finalizer again; the parent's finalizer completes.
 * Every child runs under alarm(): a hang (the old behaviour: the child waited forever for a
 * finalizer thread that does not exist, tenure_destroy joined it) fails the test.
 */
#include "test_util.h"

#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>

#define CHILD_SECONDS 30

typedef struct fin_obj {
    tenure_header header;
    long id;
} fin_obj;

static int finalized;            /* finalizers run in this process */
static int block_id = -1;        /* the finalizer of this id blocks until released */
static int blocking_pipe[2];     /* written to release it */
static volatile int in_blocking; /* the blocking finalizer has started */

static void fin_finalize(tenure_runtime *rt, void *obj) {
    fin_obj *f = obj;
    if (f->id == __atomic_load_n(&block_id, __ATOMIC_ACQUIRE)) {
        char c;
        tenure_blocking_enter(rt); /* GCs go on meanwhile */
        __atomic_store_n(&in_blocking, 1, __ATOMIC_RELEASE);
        TT_CHECK(read(blocking_pipe[0], &c, 1) == 1);
        tenure_blocking_leave(rt);
    }
    __atomic_fetch_add(&finalized, 1, __ATOMIC_RELAXED);
}

static const tenure_type *fin_type(tenure_runtime *rt) {
    return tt_register_finalizable(rt, "fork_fin", sizeof(fin_obj), fin_finalize);
}

/* ---- the second attached thread: allocates until told to stop ---- */

typedef struct worker {
    tenure_runtime *rt;
    const tenure_type *node;
    pthread_t thread;
    int stop;
    long allocated;
} worker;

static void *worker_main(void *arg) {
    worker *w = arg;
    TT_CHECK_RESULT(tenure_thread_attach(w->rt), TENURE_OK);
    tt_node *head = NULL;
    TENURE_FRAME(w->rt, f, head);
    for (uint64_t i = 1; !__atomic_load_n(&w->stop, __ATOMIC_ACQUIRE); i++) {
        tt_node *n = tt_node_new(w->rt, w->node, i);
        TT_CHECK(n != NULL);
        tenure_write_ref(w->rt, n, &n->a, i % 64 ? head : NULL);
        tt_node_seal(n);
        head = n;
        __atomic_fetch_add(&w->allocated, 1, __ATOMIC_RELAXED);
    }
    TENURE_FRAME_POP(w->rt, f);
    TT_CHECK_RESULT(tenure_thread_detach(w->rt), TENURE_OK);
    return NULL;
}

/* ---- what both sides of a fork must be able to do ---- */

static void exercise(tenure_runtime *rt, const tenure_type *node, const tenure_type *fin, const char *who) {
    tt_node *head = NULL;
    TENURE_FRAME(rt, f, head);
    size_t n = tt_scaled(20000, 500);
    for (uint64_t i = 1; i <= n; i++) {
        tt_node *x = tt_node_new(rt, node, i);
        TT_CHECK(x != NULL, "%s: allocation %" PRIu64 " failed", who, i);
        tenure_write_ref(rt, x, &x->a, i % 100 ? head : NULL);
        tt_node_seal(x);
        head = x;
    }
    int before = __atomic_load_n(&finalized, __ATOMIC_RELAXED);
    for (long i = 0; i < 50; i++) {
        fin_obj *o = tenure_alloc(rt, fin);
        TT_CHECK(o != NULL, "%s: finalizable allocation failed", who);
        o->id = 1000 + i;
    }
    TT_CHECK_RESULT(tenure_collect(rt, -1, 0), TENURE_OK);
    TT_CHECK_RESULT(tenure_wait_for_pending_finalizers(rt), TENURE_OK);
    int ran = __atomic_load_n(&finalized, __ATOMIC_RELAXED) - before;
    TT_CHECK(ran >= 50, "%s: %d of 50 finalizers ran", who, ran);
    TT_CHECK_RESULT(tenure_verify_heap(rt), TENURE_OK);
    size_t len = 0;
    for (tt_node *p = head; p != NULL; p = p->a) {
        TT_CHECK_NODE(rt, node, p, p->id);
        len++;
    }
    TT_CHECK(len >= 1 && len <= 100, "%s: list of %zu", who, len);
    TENURE_FRAME_POP(rt, f);
}

/* Wait for a child; it must have exited 0. */
static void reap(pid_t pid, const char *what) {
    int status = 0;
    TT_CHECK(waitpid(pid, &status, 0) == pid);
    if (WIFSIGNALED(status))
        TT_CHECK(0, "%s: the child died of signal %d%s", what, WTERMSIG(status),
                 WTERMSIG(status) == SIGALRM ? " (it hung: alarm)" : "");
    TT_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "%s: the child exited %d", what, WEXITSTATUS(status));
}

/* In a child: use the instance, destroy it, leave without running the parent's atexit work. */
static void child_work(tenure_runtime *rt, const tenure_type *node, const tenure_type *fin, const char *who) {
    alarm(CHILD_SECONDS);
    exercise(rt, node, fin, who);
    TT_CHECK(tenure_thread_count(rt) <= 2, "%s: %zu threads attached", who, tenure_thread_count(rt));
    tenure_destroy(rt);
    fflush(stdout);
    _exit(0);
}

/* ---- B: fork from inside the error hook ---- */

static pid_t hook_pid = -1;
static int fork_in_hook;

static void forking_hook(tenure_runtime *rt, tenure_result result, const char *function, const char *message,
                         void *context) {
    (void)rt, (void)result, (void)function, (void)message, (void)context;
    if (fork_in_hook) {
        fork_in_hook = 0;
        fflush(stdout);
        hook_pid = fork();
        TT_CHECK(hook_pid >= 0);
    }
}

int main(void) {
    tt_rng_init("fork");
    double t0 = tt_now();
    tenure_config cfg;
    tt_config(&cfg);
    cfg.GCFinalizeMode = 0;
    cfg.GCConservativeStack = 0; /* exact: every unreachable finalizable object is finalized */
    tt_errlog log = {.fatal = 1};
    tenure_runtime *rt = tt_create(&cfg, &log);
    const tenure_type *node = tt_register_node(rt);
    const tenure_type *fin = fin_type(rt);
    TT_CHECK(pipe(blocking_pipe) == 0);

    worker w = {.rt = rt, .node = node};
    TT_CHECK(pthread_create(&w.thread, NULL, worker_main, &w) == 0);
    while (__atomic_load_n(&w.allocated, __ATOMIC_RELAXED) < 1000)
        tenure_safepoint(rt);

    /* A */
    int rounds = (int)tt_scaled(12, 3);
    for (int round = 0; round < rounds; round++) {
        fflush(stdout);
        pid_t pid = fork();
        TT_CHECK(pid >= 0);
        if (pid == 0)
            child_work(rt, node, fin, "child");
        reap(pid, "A");
        exercise(rt, node, fin, "parent");
    }
    printf("  A: %d forks with a finalizer thread and an allocating thread: children collected, finalized, "
           "destroyed\n",
           rounds);

    /* B */
    tenure_set_error_hook(rt, forking_hook, NULL);
    fork_in_hook = 1;
    TT_CHECK(tenure_object_type(rt, (void *)(uintptr_t)8) == NULL); /* reported: the hook forks */
    TT_CHECK(hook_pid >= 0);
    if (hook_pid == 0) {
        tenure_set_error_hook(rt, tt_hook, &log);
        child_work(rt, node, fin, "child of the error hook");
    }
    reap(hook_pid, "B");
    tenure_set_error_hook(rt, tt_hook, &log);
    printf("  B: fork from inside the error hook: the child's instance works\n");

    /* C */
    __atomic_store_n(&block_id, 7, __ATOMIC_RELEASE);
    {
        fin_obj *o = tenure_alloc(rt, fin);
        TT_CHECK(o != NULL);
        o->id = 7;
        o = NULL;
    }
    TT_CHECK_RESULT(tenure_collect(rt, -1, 0), TENURE_OK);
    alarm(CHILD_SECONDS);
    while (!__atomic_load_n(&in_blocking, __ATOMIC_ACQUIRE))
        tenure_safepoint(rt);
    alarm(0);
    int before = __atomic_load_n(&finalized, __ATOMIC_RELAXED);
    fflush(stdout);
    pid_t pid = fork();
    TT_CHECK(pid >= 0);
    if (pid == 0) {
        alarm(CHILD_SECONDS);
        exercise(rt, node, fin, "child of a fork during a finalizer");
        TT_CHECK(__atomic_load_n(&finalized, __ATOMIC_RELAXED) - before == 50,
                 "the finalizer that was running at the fork ran again in the child");
        tenure_destroy(rt);
        _exit(0);
    }
    reap(pid, "C");
    TT_CHECK(write(blocking_pipe[1], "x", 1) == 1); /* the parent's finalizer completes */
    alarm(CHILD_SECONDS);
    exercise(rt, node, fin, "parent after C");
    TT_CHECK(__atomic_load_n(&finalized, __ATOMIC_RELAXED) - before >= 51);
    alarm(0);
    printf("  C: fork while a finalizer blocked: no hang, not run again in the child\n");

    __atomic_store_n(&w.stop, 1, __ATOMIC_RELEASE);
    tenure_blocking_enter(rt);
    TT_CHECK(pthread_join(w.thread, NULL) == 0);
    tenure_blocking_leave(rt);
    tenure_destroy(rt);
    return tt_finish("fork", t0);
}
