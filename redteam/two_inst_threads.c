/* Two threads, each attached to both instances A and B, allocating on both. A GC of A run by
 * thread 1 waits for thread 2 to be SAFE in A; thread 2, inside a GC of B at the same time,
 * waits for thread 1 to be SAFE in B. Each is RUNNING for the instance it is not collecting. */
#define _GNU_SOURCE
#include <tenure.h>
#include <pthread.h>
#include <stdio.h>
#include <stddef.h>
#include <stdlib.h>
#include <unistd.h>
typedef struct node { tenure_header h; struct node *next; long v; } node;
static tenure_runtime *A, *B;
static const tenure_type *ta, *tb;
static long iters = 2000000;
static void *thr(void *arg) {
    int first_a = arg != NULL;
    tenure_thread_attach(A);
    tenure_thread_attach(B);
    for (long i = 0; i < iters; i++) {
        if ((i & 1) == first_a) tenure_alloc(A, ta); else tenure_alloc(B, tb);
    }
    tenure_thread_detach(B);
    tenure_thread_detach(A);
    return NULL;
}
int main(int argc, char **argv) {
    if (argc > 1) iters = atol(argv[1]);
    tenure_config c;
    tenure_config_init(&c);
    c.GCgen0size = 256 << 10;
    A = tenure_create(&c, NULL);
    B = tenure_create(&c, NULL);
    size_t refs[] = {offsetof(node, next)};
    tenure_type_desc d = {.name = "node", .size = sizeof(node), .ref_offsets = refs, .ref_count = 1};
    ta = tenure_type_register(A, &d);
    tb = tenure_type_register(B, &d);
    tenure_blocking_enter(A); /* the main thread is attached to both: out of the way */
    tenure_blocking_enter(B);
    alarm(60);
    pthread_t t1, t2;
    pthread_create(&t1, NULL, thr, (void *)1);
    pthread_create(&t2, NULL, thr, NULL);
    pthread_join(t1, NULL);
    pthread_join(t2, NULL);
    tenure_blocking_leave(B);
    tenure_blocking_leave(A);
    tenure_stats sa, sb;
    tenure_get_stats(A, &sa);
    tenure_get_stats(B, &sb);
    printf("done: %llu GCs of A, %llu of B\n", (unsigned long long)sa.gc_count, (unsigned long long)sb.gc_count);
    tenure_destroy(B);
    tenure_destroy(A);
    return 0;
}
