/* Two threads, each attached to both instances A and B; at the same moment thread 1 collects A
 * and thread 2 collects B. Thread 1's stop of A waits for thread 2 to be SAFE in A, but thread 2
 * is inside its own stop of B (RUNNING for A), waiting for thread 1 to be SAFE in B. */
#define _GNU_SOURCE
#include <tenure.h>
#include <pthread.h>
#include <stdio.h>
#include <stddef.h>
#include <stdlib.h>
#include <unistd.h>
static tenure_runtime *A, *B;
static pthread_barrier_t bar;
static void *thr(void *arg) {
    int one = arg != NULL;
    tenure_thread_attach(A);
    tenure_thread_attach(B);
    for (int i = 0; i < 2000; i++) {
        tenure_blocking_enter(A);
        tenure_blocking_enter(B);
        pthread_barrier_wait(&bar); /* blocking: SAFE in both */
        tenure_blocking_leave(B);
        tenure_blocking_leave(A);
        tenure_collect(one ? A : B, 0, 0);
    }
    tenure_thread_detach(B);
    tenure_thread_detach(A);
    return NULL;
}
int main(void) {
    A = tenure_create(NULL, NULL);
    B = tenure_create(NULL, NULL);
    tenure_blocking_enter(A);
    tenure_blocking_enter(B);
    pthread_barrier_init(&bar, NULL, 2);
    alarm(30);
    pthread_t t1, t2;
    pthread_create(&t1, NULL, thr, (void *)1);
    pthread_create(&t2, NULL, thr, NULL);
    pthread_join(t1, NULL);
    pthread_join(t2, NULL);
    tenure_blocking_leave(B);
    tenure_blocking_leave(A);
    printf("no deadlock\n");
    tenure_destroy(B);
    tenure_destroy(A);
    return 0;
}
