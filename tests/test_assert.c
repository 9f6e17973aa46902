/*
 * assert: the library's assertions (src/base/assert.h) fire where they should and say why.
 *
 *  - a failed assertion prints file:line, the condition and the GC index of the calling
 *    thread's instance on stderr and aborts (SIGABRT, no error hook);
 *  - checked builds (TENURE_CHECKED): a function whose comment says "with rt->threads.lock held",
 *    called without it, aborts (tn_heap_visit_objects, tn_is_object);
 *  - debug-assertions builds (TENURE_DEBUG_ASSERTS): the handle slab check at GC start catches
 *    a slot whose magic was overwritten.
 * Each case runs in a child process (fork), whose stderr the parent reads.
 */
#define _GNU_SOURCE
#include "runtime.h"
#include "test_util.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

typedef void (*child_fn)(void);

/* Run fn in a child; its stderr (up to size bytes) goes to out. True if it died of SIGABRT. */
static bool aborts(child_fn fn, char *out, size_t size) {
    int fds[2];
    TT_CHECK(pipe(fds) == 0);
    fflush(stdout);
    pid_t pid = fork();
    TT_CHECK(pid >= 0);
    if (pid == 0) {
        dup2(fds[1], 2);
        close(fds[0]);
        alarm(30);
        fn();
        _exit(0); /* no assertion fired */
    }
    close(fds[1]);
    size_t n = 0;
    ssize_t r;
    while (n + 1 < size && (r = read(fds[0], out + n, size - 1 - n)) > 0)
        n += (size_t)r;
    out[n] = 0;
    close(fds[0]);
    int status;
    TT_CHECK(waitpid(pid, &status, 0) == pid);
    return WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT;
}

static tenure_runtime *new_instance(void) {
    tenure_config cfg;
    tenure_config_init(&cfg);
    cfg.GCFinalizeMode = 1; /* no finalizer thread in the forked children */
    tenure_runtime *rt = tenure_create(&cfg, NULL);
    TT_CHECK(rt != NULL);
    return rt;
}

static void fail_plain(void) { tn_assert_fail("somewhere.c", 7, "x > 1"); }

static void fail_after_two_gcs(void) {
    tenure_runtime *rt = new_instance();
    tenure_collect(rt, 0, 0);
    tenure_collect(rt, 0, 0);
    tn_assert_fail("somewhere.c", 8, "y");
}

static bool count_object(char *obj, tn_type *t, size_t size, int gen, void *ctx) {
    (void)obj, (void)t, (void)size, (void)gen, (void)ctx;
    return false;
}

static void visit_without_lock(void) {
    tenure_runtime *rt = new_instance();
    tn_heap_visit_objects(rt, count_object, NULL); /* "with rt->threads.lock held" */
}

static void is_object_without_lock(void) {
    tenure_runtime *rt = new_instance();
    int local;
    tn_is_object(rt, &local);
}

static void corrupt_handle_slot(void) {
    tenure_runtime *rt = new_instance();
    tenure_handle *h = tenure_handle_new(rt, TENURE_HANDLE_STRONG, NULL);
    TT_CHECK(h != NULL);
    tn_handle_slot *slot = (tn_handle_slot *)h;
    slot[1].magic ^= 1; /* a free slot of the same slab */
    tenure_collect(rt, 0, 0);
}

static void expect_abort(const char *what, child_fn fn, const char *needle) {
    char out[4096];
    bool died = aborts(fn, out, sizeof out);
    TT_CHECK(died, " %s: the child did not abort (stderr: %s)", what, out);
    TT_CHECK(strstr(out, needle) != NULL, " %s: stderr lacks \"%s\": %s", what, needle, out);
    TT_CHECK(strstr(out, "assertion failed") != NULL, " %s: %s", what, out);
}

int main(void) {
    double t0 = tt_now();
    expect_abort("plain", fail_plain, "somewhere.c:7: assertion failed: x > 1");
    expect_abort("GC index", fail_after_two_gcs, "somewhere.c:8: assertion failed: y (GC index 2)");
#ifdef TENURE_CHECKED
    expect_abort("tn_heap_visit_objects unlocked", visit_without_lock, "tn_lock_held(rt)");
    expect_abort("tn_is_object unlocked", is_object_without_lock, "tn_lock_held(rt)");
#else
    (void)visit_without_lock, (void)is_object_without_lock;
    printf("unchecked build: the lock claims are not asserted\n");
#endif
#ifdef TENURE_DEBUG_ASSERTS
    expect_abort("handle slab check", corrupt_handle_slot, "h->magic == TN_HANDLE_MAGIC");
#else
    (void)corrupt_handle_slot;
    printf("no debug assertions: the handle slab check is not run\n");
#endif
    return tt_finish("assert", t0);
}
