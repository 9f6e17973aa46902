/* A thread that exits attached with a TENURE_FRAME still pushed (pthread_exit from inside a
 * function that pushed it, or a return without TENURE_FRAME_POP): its frames point into a stack
 * the exit path is reusing. The detach at exit waits for the instance lock while SAFE, so a GC
 * on another thread visits those dead frames precisely. */
#define _GNU_SOURCE
#include <tenure.h>
#include <pthread.h>
#include <stdio.h>
#include <stddef.h>
#include <string.h>
#include <stdlib.h>
typedef struct node { tenure_header h; struct node *next; long v; } node;
static tenure_runtime *rt;
static const tenure_type *nt;
static __attribute__((noinline)) void work(void) {
    node *a = NULL, *b = NULL;
    TENURE_FRAME(rt, f, a, b);
    a = tenure_alloc(rt, nt);
    b = tenure_alloc(rt, nt);
    pthread_exit(NULL); /* frame still pushed */
}
static __attribute__((noinline)) void scribble(void) { volatile char junk[8192]; memset((char *)junk, 0x5a, sizeof junk); }
static void *thr(void *arg) {
    (void)arg;
    tenure_thread_attach(rt);
    work();
    return NULL;
}
int main(int argc, char **argv) {
    int rounds = argc > 1 ? atoi(argv[1]) : 2000;
    rt = tenure_create(NULL, NULL);
    size_t refs[] = {offsetof(node, next)};
    tenure_type_desc d = {.name = "node", .size = sizeof(node), .ref_offsets = refs, .ref_count = 1};
    nt = tenure_type_register(rt, &d);
    scribble();
    for (int i = 0; i < rounds; i++) {
        pthread_t t[4];
        for (int k = 0; k < 4; k++) pthread_create(&t[k], NULL, thr, NULL);
        for (int k = 0; k < 20; k++) tenure_collect(rt, 0, 0);
        for (int k = 0; k < 4; k++) pthread_join(t[k], NULL);
    }
    printf("survived %d rounds\n", rounds);
    tenure_destroy(rt);
    return 0;
}
