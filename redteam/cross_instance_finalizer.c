/* Deadlock (open): the main thread created instances A and B (attached to both). A finalizer of
 * A (on A's finalizer thread) attaches to B, allocates and collects B: B's stop of the world
 * waits for the main thread, which is RUNNING in B while it waits SAFE in A for A's finalizers
 * (tenure_wait_for_pending_finalizers, or tenure_destroy(A)). Both wait forever.
 * A thread's SAFE state is per instance: waiting inside one instance does not make it safe in
 * the others it is attached to. Expected: "ok"; actual: hangs (alarm after 20 s). */
#define _GNU_SOURCE
#include <tenure.h>
#include <stdio.h>
#include <stddef.h>
#include <unistd.h>
typedef struct node { tenure_header h; struct node *next; long v; } node;
static tenure_runtime *A, *B;
static const tenure_type *tb;
static void fin(tenure_runtime *rt, void *obj) {
    (void)rt; (void)obj;
    tenure_thread_attach(B);          /* allowed: a finalizer may use another instance */
    tenure_alloc(B, tb);
    tenure_collect(B, 0, 0);
    tenure_thread_detach(B);
}
int main(void) {
    alarm(20);
    A = tenure_create(NULL, NULL);
    B = tenure_create(NULL, NULL);
    tenure_type_desc f = {.name = "fin", .size = sizeof(node), .flags = TENURE_TYPE_FINALIZABLE, .finalize = fin};
    const tenure_type *ta = tenure_type_register(A, &f);
    tenure_type_desc d = {.name = "node", .size = sizeof(node)};
    tb = tenure_type_register(B, &d);
    for (int i = 0; i < 10; i++) tenure_alloc(A, ta);
    tenure_collect(A, 2, 0);
    tenure_wait_for_pending_finalizers(A);
    printf("ok\n");
    tenure_destroy(B);
    tenure_destroy(A);
    return 0;
}
