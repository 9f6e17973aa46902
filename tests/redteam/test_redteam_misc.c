/*
 * redteam_misc: findings of the red-team pass after issue 12.
 *
 * 1. A thread that exits attached with a TENURE_FRAME still pushed (pthread_exit from a
 *    function that pushed it): its frames point into the stack the exit path reuses, and the
 *    detach at exit waits for the instance lock SAFE, so a GC on another thread visited them
 *    (SIGSEGV in mark_root_slot). (The same exit from inside a blocking section stays racy:
 *    the thread is SAFE while its exit path overwrites the frames, before any destructor runs.)
 * 2. tenure_root_area_add accepted a count that wraps the address space (the next GC walked off
 *    the stack), misaligned slots, and slots inside the heap (objects move: the GC would update
 *    slots of whatever object took their place). Now TENURE_SIZE / TENURE_INVALID_ARGUMENT.
 */
#include "test_util.h"

#include <pthread.h>

typedef struct node {
    tenure_header header;
    struct node *next;
    long value;
} node;

static tenure_runtime *rt;
static const tenure_type *node_t;
static tt_errlog log_;

static __attribute__((noinline)) void push_and_exit(int blocking) {
    node *a = NULL, *b = NULL;
    TENURE_FRAME(rt, frame, a, b);
    a = tenure_alloc(rt, node_t);
    b = tenure_alloc(rt, node_t);
    if (blocking)
        tenure_blocking_enter(rt);
    pthread_exit(NULL); /* the frame is still pushed */
}

static void *exiting_thread(void *arg) {
    TT_CHECK(tenure_thread_attach(rt) == TENURE_OK, "attach");
    push_and_exit(arg != NULL);
    return NULL;
}

static __attribute__((noinline)) void scribble(void) {
    volatile char junk[16384];
    memset((char *)junk, 0x5a, sizeof junk);
}

static void exit_with_frames(int blocking) {
    size_t rounds = tt_scaled(600, 60), before = tenure_thread_count(rt);
    for (size_t i = 0; i < rounds; i++) {
        pthread_t t[4];
        for (int k = 0; k < 4; k++)
            TT_CHECK(pthread_create(&t[k], NULL, exiting_thread, blocking ? (void *)1 : NULL) == 0, "pthread_create");
        for (int k = 0; k < 10; k++)
            tt_collect(rt, 0, 0);
        tenure_blocking_enter(rt); /* a thread's last allocation may collect (GCStress): not waiting for us */
        for (int k = 0; k < 4; k++)
            pthread_join(t[k], NULL);
        tenure_blocking_leave(rt);
    }
    TT_CHECK(tenure_thread_count(rt) == before, "threads left attached: %zu", tenure_thread_count(rt) - before);
    printf("exit with frames pushed%s: %zu rounds of 4 threads, GCs meanwhile: ok\n",
           blocking ? " (inside a blocking section)" : "", rounds);
}

static void root_areas(void) {
    void *slots[4] = {0};
    log_.fatal = 0;
    tt_errlog_reset(&log_);
    TT_CHECK(tenure_root_area_add(rt, slots, SIZE_MAX) == NULL, "a root area of SIZE_MAX slots was accepted");
    TT_CHECK(log_.last == TENURE_SIZE, "wrapping root area: got %d", (int)log_.last);
    TT_CHECK(tenure_root_area_add(rt, slots, SIZE_MAX / sizeof(void *)) == NULL, "a wrapping root area was accepted");
    TT_CHECK(tenure_root_area_add(rt, (void **)((char *)slots + 1), 2) == NULL, "misaligned slots were accepted");
    TT_CHECK(log_.last == TENURE_INVALID_ARGUMENT, "misaligned root area: got %d", (int)log_.last);
    node *n = NULL;
    TENURE_FRAME(rt, frame, n);
    n = tenure_alloc(rt, node_t);
    TT_CHECK(tenure_root_area_add(rt, (void **)&n->next, 1) == NULL, "slots inside a heap object were accepted");
    TT_CHECK(log_.last == TENURE_INVALID_ARGUMENT, "root area in the heap: got %d", (int)log_.last);
    TENURE_FRAME_POP(rt, frame);
    tenure_root_area *ok = tenure_root_area_add(rt, slots, 4);
    TT_CHECK(ok != NULL, "a valid root area was refused: %s", log_.message);
    tt_collect(rt, 2, 0);
    TT_CHECK(tenure_root_area_remove(rt, ok) == TENURE_OK, "remove");
    log_.fatal = 1;
    printf("root areas that wrap, are misaligned or lie in the heap: refused\n");
}

int main(void) {
    double t0 = tt_now();
    tt_rng_init("redteam_misc");
    log_.fatal = 1;
    rt = tt_create(NULL, &log_);
    size_t refs[] = {offsetof(node, next)};
    tenure_type_desc d = {.name = "rt_node", .size = sizeof(node), .ref_offsets = refs, .ref_count = 1};
    node_t = tenure_type_register(rt, &d);
    TT_CHECK(node_t != NULL, "type");
    scribble();
    exit_with_frames(0);
    root_areas();
    tenure_destroy(rt);
    return tt_finish("redteam_misc", t0);
}
