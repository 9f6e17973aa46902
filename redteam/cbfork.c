#define _GNU_SOURCE
#include <tenure.h>
#include <tenure_events.h>
#include <tenure_profiler.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stddef.h>
#include <unistd.h>
#include <sys/wait.h>
#include <pthread.h>
typedef struct node { tenure_header h; struct node *next; long v; } node;
static tenure_runtime *rt, *rt2;
static const tenure_type *nt, *nt2, *fint;
static int mode;
static void child_work(void) {
    /* in the child: use both instances after the callback returns: done by the caller */
}
static pid_t kid;
static void do_fork(void) {
    if (kid) return;
    kid = fork();
    if (kid == 0) { child_work(); }
}
static void gc_cb(tenure_runtime *r, const tenure_gc_info *i, void *c) { (void)r;(void)i;(void)c; if (mode == 1) do_fork(); }
static void listener(const tenure_event *e, void *c) { (void)e;(void)c; if (mode == 2) do_fork(); }
static void scan(tenure_runtime *r, tenure_visitor *v, void *c) { (void)r;(void)v;(void)c; if (mode == 3) do_fork(); }
static void fin(tenure_runtime *r, void *o) { (void)r;(void)o;
  if (mode == 4) { tenure_destroy(rt2); rt2 = NULL; }
  if (mode == 5) { tenure_collect(rt2, 2, 0); tenure_alloc(rt2, nt2); }
  if (mode == 6) { tenure_thread_attach(rt2); node *n = tenure_alloc(rt2, nt2); (void)n; tenure_collect(rt2, 0, 0); tenure_thread_detach(rt2); }
}
static void hook2(tenure_runtime *r, tenure_result res, const char *fn, const char *msg, void *c) { (void)r;(void)c; fprintf(stderr, "  hook: %s %s: %s\n", tenure_strerror(res), fn, msg); }
int main(int argc, char **argv) {
    mode = atoi(argv[1]);
    alarm(20);
    rt = tenure_create(NULL, NULL);
    rt2 = tenure_create(NULL, NULL);
    tenure_set_error_hook(rt, hook2, NULL); tenure_set_error_hook(rt2, hook2, NULL);
    size_t refs[] = {offsetof(node, next)};
    tenure_type_desc d = {.name = "node", .size = sizeof(node), .ref_offsets = refs, .ref_count = 1};
    nt = tenure_type_register(rt, &d); nt2 = tenure_type_register(rt2, &d);
    tenure_type_desc f = {.name = "fin", .size = sizeof(node), .flags = TENURE_TYPE_FINALIZABLE, .finalize = fin};
    fint = tenure_type_register(rt, &f);
    tenure_set_gc_callback(rt, gc_cb, NULL);
    tenure_session_start_listener(rt, 1, 5, listener, NULL);
    tenure_root_scanner_add(rt, scan, NULL);
    if (mode >= 4) { for (int i = 0; i < 10; i++) tenure_alloc(rt, fint); tenure_collect(rt, 2, 0); tenure_wait_for_pending_finalizers(rt); }
    node *x = NULL; TENURE_FRAME(rt, fr, x);
    for (int i = 0; i < 100000; i++) { x = tenure_alloc(rt, nt); }
    tenure_collect(rt, 2, 0);
    tenure_wait_for_pending_finalizers(rt);
    TENURE_FRAME_POP(rt, fr);
    if (rt2) tenure_collect(rt2, 2, 0);
    if (rt2) tenure_destroy(rt2);
    tenure_destroy(rt);
    if (kid == 0 && mode <= 3) { printf("child done\n"); fflush(stdout); _exit(0); }
    if (kid > 0) { int st; waitpid(kid, &st, 0); printf("parent: child status %d\n", st); }
    printf("mode %d ok\n", mode);
    return 0;
}
