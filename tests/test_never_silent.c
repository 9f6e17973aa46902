/*
 * never_silent: mistakes an embedder makes are reported, never silent and never a silent hang
 * (issue 38, findings 2 and 3). Every case runs in a forked child with no error hook, its
 * stderr captured through a pipe and an alarm() that ends it if it hangs; the parent checks
 * what the child printed.
 *
 *  2  without an error hook a refused call prints its message (a bad ref offset in the quick
 *     start's type, a refused tenure_destroy, calls from a thread that is not attached: a
 *     blocking section, tenure_collect), once per call site, and tenure_last_error_message
 *     gives the last failure's full text;
 *     tenure_strerror(TENURE_STATE) names the unattached thread among its causes.
 *  3  a TENURE_FRAME_POP missed on an early return: the frame pushed again is reported and the
 *     chain stays sound (the next collection does not spin); a pop out of order pops the
 *     frames missed above it. A thread that waits outside a blocking section: the collection
 *     that waits for it prints (GCStopWarnMs) which thread and where it was attached, once,
 *     and keeps waiting (a slow thread is waited for; a stuck one is killed by the alarm here).
 */
#include "test_util.h"
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

typedef struct node {
    tenure_header header;
    struct node *next;
    long value;
} node;

static tenure_runtime *create(uint32_t stop_warn_ms) {
    tenure_config cfg;
    tenure_config_init(&cfg);
    cfg.GCConservativeStack = 0;
    cfg.GCFinalizeMode = 1;
    cfg.GCStopWarnMs = stop_warn_ms;
    tenure_result r = TENURE_NOMEM;
    tenure_runtime *rt = tenure_create(&cfg, &r);
    if (!rt) {
        fprintf(stderr, "CHILD: tenure_create: %s\n", tenure_strerror(r));
        _exit(3);
    }
    return rt;
}

static const tenure_type *node_type(tenure_runtime *rt) {
    size_t refs[] = {offsetof(node, next)};
    tenure_type_desc d = {.name = "node", .size = sizeof(node), .ref_offsets = refs, .ref_count = 1};
    const tenure_type *t = tenure_type_register(rt, &d);
    if (!t)
        _exit(4);
    return t;
}


static char err[16384];

static void sleep_ms(long ms) {
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0)
        ;
}

/* Run a case; it must exit 0 (or die of SIGALRM if hang_expected) and print each of `want`. */
static void expect(const char *name, void (*fn)(void), unsigned secs, int hang_expected, const char *const *want) {
    int status = tt_run_child(fn, secs, err, sizeof err);
    int ok_status = hang_expected ? (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM)
                                  : (WIFEXITED(status) && WEXITSTATUS(status) == 0);
    TT_EXPECT(ok_status, "%s: the child %s %d; stderr:\n%s", name, WIFSIGNALED(status) ? "died of signal" : "exited",
              WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status), err);
    for (; *want; want++)
        TT_EXPECT(strstr(err, *want) != NULL, "%s: stderr lacks \"%s\":\n%s", name, *want, err);
    printf("  %s: ok\n", name);
}

/* ---- finding 2: never silent ---- */

/* The quick start with a ref offset that is not a field of the struct. */
static void bad_ref_offset(void) {
    tenure_runtime *rt = create(0);
    size_t refs[] = {offsetof(node, next) + 4};
    tenure_type_desc d = {.name = "node", .size = sizeof(node), .ref_offsets = refs, .ref_count = 1};
    const tenure_type *t = tenure_type_register(rt, &d);
    if (t != NULL)
        _exit(5);
    const char *m = tenure_last_error_message(rt);
    if (!strstr(m, "tenure_type_register: ") || tenure_last_error(rt) == TENURE_OK)
        _exit(6);
    fprintf(stderr, "CHILD last message: %s\n", m);
    tenure_clear_error(rt);
    if (tenure_last_error_message(rt)[0] != '\0')
        _exit(7);
    tenure_destroy(rt);
}

static pthread_mutex_t gate_mx = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t gate_cv = PTHREAD_COND_INITIALIZER;
static int gate_state; /* 1: attached, 2: may detach and exit */

static void *attached_waiter(void *arg) {
    tenure_runtime *rt = arg;
    tenure_thread_attach(rt);
    pthread_mutex_lock(&gate_mx);
    gate_state = 1;
    pthread_cond_broadcast(&gate_cv);
    pthread_mutex_unlock(&gate_mx);
    tenure_blocking_enter(rt);
    pthread_mutex_lock(&gate_mx);
    while (gate_state != 2)
        pthread_cond_wait(&gate_cv, &gate_mx);
    pthread_mutex_unlock(&gate_mx);
    tenure_blocking_leave(rt);
    tenure_thread_detach(rt);
    return NULL;
}

static void refused_destroy(void) {
    tenure_runtime *rt = create(0);
    pthread_t t;
    pthread_create(&t, NULL, attached_waiter, rt);
    pthread_mutex_lock(&gate_mx);
    while (gate_state != 1)
        pthread_cond_wait(&gate_cv, &gate_mx);
    pthread_mutex_unlock(&gate_mx);
    tenure_destroy(rt); /* refused: the other thread is attached */
    if (tenure_last_error(rt) != TENURE_STATE)
        _exit(5);
    pthread_mutex_lock(&gate_mx);
    gate_state = 2;
    pthread_cond_broadcast(&gate_cv);
    pthread_mutex_unlock(&gate_mx);
    pthread_join(t, NULL);
    tenure_destroy(rt);
}

static tenure_result unattached_collect;
static tenure_handle *unattached_handle = (tenure_handle *)1;

static void *unattached_calls(void *arg) {
    tenure_runtime *rt = arg;
    tenure_thread_detach(rt);
    tenure_blocking_enter(rt);
    unattached_collect = tenure_collect(rt, 0, 0);                         /* a GC from a thread the GC does not stop */
    unattached_handle = tenure_handle_new(rt, TENURE_HANDLE_STRONG, NULL); /* its pointers may move */
    return NULL;
}

static void not_attached(void) {
    tenure_runtime *rt = create(0);
    pthread_t t;
    pthread_create(&t, NULL, unattached_calls, rt);
    pthread_join(t, NULL);
    const char *m = tenure_last_error_message(rt);
    if (!strstr(m, "tenure_handle_new: the calling thread is not attached (tenure_thread_attach)"))
        _exit(5);
    if (unattached_handle != NULL)
        _exit(8);
    tenure_stats st;
    tenure_get_stats(rt, &st);
    if (unattached_collect != TENURE_STATE || st.gc_count != 0)
        _exit(7);
    if (!strstr(tenure_strerror(TENURE_STATE), "not attached"))
        _exit(6);
    tenure_destroy(rt);
}

/* The same mistake a hundred times: one line. */
static void once_per_site(void) {
    tenure_runtime *rt = create(0);
    for (int i = 0; i < 100; i++)
        tenure_remove_memory_pressure(rt, 1000);
    tenure_destroy(rt);
}

/* ---- finding 3: no silent hangs ---- */

static const tenure_type *cycle_type;

/* Forgets its pop on the early return. */
static __attribute__((noinline)) node *make_node(tenure_runtime *rt, long value, int early) {
    node *n = NULL;
    TENURE_FRAME(rt, frame, n);
    n = tenure_alloc(rt, cycle_type);
    n->value = value;
    if (early)
        return n; /* the mistake */
    TENURE_FRAME_POP(rt, frame);
    return n;
}

static void frame_pushed_twice(void) {
    tenure_runtime *rt = create(0);
    cycle_type = node_type(rt);
    node *keep = NULL;
    TENURE_FRAME(rt, mine, keep);
    keep = tenure_alloc(rt, cycle_type);
    keep->value = 42;
    for (int i = 0; i < 3; i++)
        (void)make_node(rt, i, 1); /* the same frame pushed again with no pop */
    if (tenure_last_error(rt) != TENURE_STATE)
        _exit(5);
    /* the stale frame above ours goes with it (reported): a collection with it still on the
     * chain would read make_node's dead stack frame */
    TENURE_FRAME_POP(rt, mine);
    tenure_clear_error(rt);
    TENURE_FRAME(rt, again, keep);
    for (int g = 0; g <= 2; g++) /* spun forever before: the chain was a cycle */
        tenure_collect(rt, g, TENURE_COLLECT_COMPACT);
    if (keep->value != 42 || tenure_object_type(rt, keep) != cycle_type)
        _exit(6);
    (void)make_node(rt, 7, 0);
    tenure_collect(rt, 2, 0);
    TENURE_FRAME_POP(rt, again);
    if (tenure_last_error(rt) != TENURE_OK)
        _exit(7);
    tenure_destroy(rt);
}

static __attribute__((noinline)) void push_and_forget(tenure_runtime *rt) {
    node *n = NULL;
    TENURE_FRAME(rt, lost, n);
    n = tenure_alloc(rt, cycle_type);
}

static void pop_out_of_order(void) {
    tenure_runtime *rt = create(0);
    cycle_type = node_type(rt);
    node *keep = NULL;
    TENURE_FRAME(rt, mine, keep);
    push_and_forget(rt);
    TENURE_FRAME_POP(rt, mine); /* the forgotten frame is popped with it */
    if (tenure_last_error(rt) != TENURE_STATE)
        _exit(5);
    tenure_collect(rt, 2, TENURE_COLLECT_COMPACT);
    tenure_clear_error(rt);
    TENURE_FRAME(rt, again, keep); /* the chain is empty and sound */
    keep = tenure_alloc(rt, cycle_type);
    tenure_collect(rt, 2, TENURE_COLLECT_COMPACT);
    TENURE_FRAME_POP(rt, again);
    if (tenure_last_error(rt) != TENURE_OK)
        _exit(6);
    tenure_destroy(rt);
}

static pthread_mutex_t app_lock = PTHREAD_MUTEX_INITIALIZER;
static int worker_ready; /* atomic */

/* Attached, then waits for app_lock without a blocking section (the mistake). */
static void *locker(void *arg) {
    tenure_runtime *rt = arg;
    tenure_thread_attach(rt);
    __atomic_store_n(&worker_ready, 1, __ATOMIC_RELEASE);
    pthread_mutex_lock(&app_lock);
    pthread_mutex_unlock(&app_lock);
    tenure_thread_detach(rt);
    return NULL;
}

static void stuck_thread(void) {
    tenure_runtime *rt = create(300);
    pthread_mutex_lock(&app_lock);
    pthread_t t;
    pthread_create(&t, NULL, locker, rt);
    while (!__atomic_load_n(&worker_ready, __ATOMIC_ACQUIRE))
        sleep_ms(1);
    sleep_ms(50);
    tenure_collect(rt, 0, 0); /* waits for the locker, which waits for us: forever */
    pthread_mutex_unlock(&app_lock);
    pthread_join(t, NULL);
    tenure_destroy(rt);
}

/* Attached, then computes (sleeps) for 1.5 s without a safepoint: slow, not stuck. */
static void *sleeper(void *arg) {
    tenure_runtime *rt = arg;
    tenure_thread_attach(rt);
    __atomic_store_n(&worker_ready, 1, __ATOMIC_RELEASE);
    sleep_ms(1500);
    tenure_safepoint(rt);
    tenure_thread_detach(rt);
    return NULL;
}

static void slow_thread(void) {
    tenure_runtime *rt = create(300);
    pthread_t t;
    pthread_create(&t, NULL, sleeper, rt);
    while (!__atomic_load_n(&worker_ready, __ATOMIC_ACQUIRE))
        sleep_ms(1);
    sleep_ms(50);
    tenure_collect(rt, 0, 0); /* warns after 300 ms, then waits until the sleeper's safepoint */
    fprintf(stderr, "CHILD: the collection finished\n");
    pthread_join(t, NULL);
    tenure_destroy(rt);
}

int main(void) {
    double t0 = tt_now();
    setvbuf(stdout, NULL, _IOLBF, 0);
    printf("finding 2: never silent without an error hook\n");
    expect("a bad ref offset in the quick start", bad_ref_offset, 20, 0,
           (const char *const[]){"tenure: tenure_type_register: ", "CHILD last message: tenure_type_register: ", NULL});
    expect("a refused tenure_destroy", refused_destroy, 20, 0,
           (const char *const[]){"tenure: tenure_destroy: 1 other thread(s) still attached", NULL});
    expect("calls from a thread that is not attached", not_attached, 20, 0,
           (const char *const[]){
               "tenure: tenure_thread_detach: the calling thread is not attached (tenure_thread_attach)",
               "tenure: tenure_blocking_enter: the calling thread is not attached",
               "tenure: tenure_collect: the calling thread is not attached (tenure_thread_attach)",
               "tenure: tenure_handle_new: the calling thread is not attached (tenure_thread_attach)", NULL});
    expect("one line per call site", once_per_site, 20, 0,
           (const char *const[]){"tenure: tenure_remove_memory_pressure: ", NULL});
    TT_EXPECT(tt_count_of(err, "tenure_remove_memory_pressure") == 1, "100 failures at one site printed %zu times:\n%s",
              tt_count_of(err, "tenure_remove_memory_pressure"), err);

    printf("finding 3: no silent hangs\n");
    expect("a TENURE_FRAME_POP missed on an early return (the frame pushed again)", frame_pushed_twice, 20, 0,
           (const char *const[]){"tenure: TENURE_FRAME: frame ",
                                 "was pushed while already on the calling thread's chain",
                                 "tenure: tenure_frame_pop: ", NULL});
    expect("a pop out of order pops the forgotten frames above", pop_out_of_order, 20, 0,
           (const char *const[]){"tenure: tenure_frame_pop: frame ", "were never popped", NULL});
    expect("a thread that computes long without a safepoint", slow_thread, 20, 0,
           (const char *const[]){"has waited 300 ms for thread ", "to reach a safepoint",
                                 "attached by tenure_thread_attach called from ", "CHILD: the collection finished",
                                 NULL});
    TT_EXPECT(tt_count_of(err, "has waited") == 1, "the slow stop warned %zu times:\n%s",
              tt_count_of(err, "has waited"), err);
    TT_EXPECT(strstr(err, "has waited") < strstr(err, "CHILD: the collection finished"),
              "the warning came after the collection:\n%s", err);
    expect("a thread that waits for a lock outside a blocking section", stuck_thread, 3, 1,
           (const char *const[]){"has waited 300 ms for thread ", "tenure_blocking_enter", NULL});
    return tt_finish("never_silent", t0);
}
