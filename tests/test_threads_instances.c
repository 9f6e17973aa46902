/* test_threads_instances.c - threads attached to several instances (threads.md T4: a thread that
 * waits inside one instance is parked, SAFE, in the others). Each case runs in a child process
 * bounded by alarm(), so a deadlock is a failure that names the case, not a hung suite.
 *
 *  A. a finalizer of A (on A's finalizer thread) attaches to B, allocates and collects B while
 *     the program, attached to both, waits in tenure_wait_for_pending_finalizers(A) and then in
 *     tenure_destroy(A): B's stop of the world used to wait forever for the waiting program;
 *  B. two threads attached to both instances collect one each at the same moment, many times:
 *     each stop of the world used to be able to wait for the other collector;
 *  C. two threads each allocate in both instances (GCs of both, triggered by either) and keep
 *     their objects in frames of both: every object stays valid (the parked thread's frames and
 *     stack are scanned by the other instance's GCs).
 * Found by the red-team pass after issue 12 (docs/design/security.md). */
#include "test_util.h"
#include <pthread.h>
#include <sys/wait.h>
#include <unistd.h>

static tenure_runtime *A, *B;
static const tenure_type *b_node;

/* ---- A ---- */

static void finalize_into_b(tenure_runtime *rt, void *obj) {
    (void)rt, (void)obj;
    TT_CHECK(tenure_thread_attach(B) == TENURE_OK);
    TT_CHECK(tenure_alloc(B, b_node) != NULL);
    TT_CHECK(tenure_collect(B, 0, 0) == TENURE_OK);
    TT_CHECK(tenure_thread_detach(B) == TENURE_OK);
}

static void case_finalizer_uses_other_instance(void) {
    tenure_config cfg;
    tt_config(&cfg);
    cfg.GCFinalizeMode = 0;
    A = tenure_create(&cfg, NULL);
    B = tenure_create(&cfg, NULL);
    TT_CHECK(A && B);
    b_node = tt_register_node(B);
    tenure_type_desc d = {.name = "FinalizesIntoB",
                          .size = sizeof(tt_node),
                          .flags = TENURE_TYPE_FINALIZABLE,
                          .finalize = finalize_into_b};
    const tenure_type *fin = tenure_type_register(A, &d);
    for (int round = 0; round < 20; round++) {
        for (int i = 0; i < 10; i++)
            TT_CHECK(tenure_alloc(A, fin) != NULL);
        TT_CHECK(tenure_collect(A, 2, 0) == TENURE_OK);
        TT_CHECK(tenure_wait_for_pending_finalizers(A) == TENURE_OK);
    }
    for (int i = 0; i < 10; i++)
        TT_CHECK(tenure_alloc(A, fin) != NULL);
    tenure_destroy(A); /* runs the pending finalizers on the finalizer thread, then joins it */
    tenure_destroy(B);
}

/* ---- B and C ---- */

static pthread_barrier_t together;
static int rounds;

static void *collect_one(void *arg) {
    tenure_runtime *mine = arg ? A : B;
    TT_CHECK(tenure_thread_attach(A) == TENURE_OK);
    TT_CHECK(tenure_thread_attach(B) == TENURE_OK);
    for (int i = 0; i < rounds; i++) {
        tenure_blocking_enter(A);
        tenure_blocking_enter(B);
        pthread_barrier_wait(&together); /* both start their collection at the same moment */
        tenure_blocking_leave(B);
        tenure_blocking_leave(A);
        TT_CHECK(tenure_collect(mine, 0, 0) == TENURE_OK);
    }
    TT_CHECK(tenure_thread_detach(B) == TENURE_OK);
    TT_CHECK(tenure_thread_detach(A) == TENURE_OK);
    return NULL;
}

static void run_pair(void *(*fn)(void *)) {
    tenure_blocking_enter(A);
    tenure_blocking_enter(B);
    pthread_t t1, t2;
    TT_CHECK(pthread_create(&t1, NULL, fn, (void *)1) == 0);
    TT_CHECK(pthread_create(&t2, NULL, fn, NULL) == 0);
    pthread_join(t1, NULL);
    pthread_join(t2, NULL);
    tenure_blocking_leave(B);
    tenure_blocking_leave(A);
}

static void case_two_collectors(void) {
    A = tenure_create(NULL, NULL);
    B = tenure_create(NULL, NULL);
    TT_CHECK(A && B);
    rounds = (int)tt_scaled(2000, 200);
    pthread_barrier_init(&together, NULL, 2);
    run_pair(collect_one);
    pthread_barrier_destroy(&together);
    tenure_destroy(B);
    tenure_destroy(A);
}

static const tenure_type *node_of[2];

/* A list of n nodes of rt, built through a frame; checks the ids on the way. */
static void *churn_both(void *arg) {
    (void)arg;
    TT_CHECK(tenure_thread_attach(A) == TENURE_OK);
    TT_CHECK(tenure_thread_attach(B) == TENURE_OK);
    tt_node *la = NULL, *lb = NULL, *n = NULL;
    TENURE_FRAME(A, fa, la);
    TENURE_FRAME(B, fb, lb, n);
    for (int i = 0; i < rounds * 50; i++) {
        tenure_runtime *rt = i & 1 ? A : B;
        tt_node **list = i & 1 ? &la : &lb;
        n = tenure_alloc(rt, node_of[i & 1]);
        TT_CHECK(n != NULL);
        n->id = (uint64_t)i;
        tenure_write_ref(rt, n, &n->a, (i % 200) > 1 ? *list : NULL);
        *list = n;
        n = NULL;
        if (i % 997 == 0)
            TT_CHECK(tenure_collect(rt, i % 3, 0) == TENURE_OK);
    }
    for (tt_node *p = la; p && p->a; p = p->a)
        TT_CHECK(p->a->id + 2 == p->id, "list of A broken: %" PRIu64 " after %" PRIu64, p->a->id, p->id);
    for (tt_node *p = lb; p && p->a; p = p->a)
        TT_CHECK(p->a->id + 2 == p->id, "list of B broken: %" PRIu64 " after %" PRIu64, p->a->id, p->id);
    TENURE_FRAME_POP(B, fb);
    TENURE_FRAME_POP(A, fa);
    TT_CHECK(tenure_thread_detach(B) == TENURE_OK);
    TT_CHECK(tenure_thread_detach(A) == TENURE_OK);
    return NULL;
}

static void case_allocate_in_both(void) {
    A = tenure_create(NULL, NULL);
    B = tenure_create(NULL, NULL);
    TT_CHECK(A && B);
    node_of[1] = tt_register_node(A);
    node_of[0] = tt_register_node(B);
    rounds = (int)tt_scaled(400, 40);
    run_pair(churn_both);
    TT_CHECK(tenure_verify_heap(A) == TENURE_OK && tenure_verify_heap(B) == TENURE_OK);
    tenure_destroy(B);
    tenure_destroy(A);
}

static void run_case(const char *name, void (*fn)(void)) {
    fflush(stdout);
    pid_t pid = fork();
    TT_CHECK(pid >= 0);
    if (pid == 0) {
        alarm(240); /* generous for sanitized builds on a loaded machine; a deadlock is forever */
        fn();
        _exit(0);
    }
    int status = 0;
    TT_CHECK(waitpid(pid, &status, 0) == pid);
    TT_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "%s: %s %d", name,
             WIFSIGNALED(status) ? "killed by signal" : "exit",
             WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
    printf("  %s: ok\n", name);
}

int main(void) {
    tt_rng_init("threads_instances");
    run_case("A: a finalizer of A collects B while the program waits in A", case_finalizer_uses_other_instance);
    run_case("B: two threads collect one instance each at the same moment", case_two_collectors);
    run_case("C: two threads allocate in both instances", case_allocate_in_both);
    printf("threads_instances: ok\n");
    return 0;
}
