/*
 * threads.h - the state threads/ owns (rt->threads): the instance lock, the attached threads
 * (mutators) and the condition they stop and restart on, and the fork registry. Included by
 * runtime.h (tn_mutator comes from there), which embeds it in struct tenure_runtime. Others
 * take the lock through tn_lock/TN_LOCKED and walk rt->threads.mutators with the world
 * stopped. The world-stop nesting (rt->world_stops) is still in struct tenure_runtime: trace/
 * reads it.
 */
#ifndef TENURE_THREADS_THREADS_H
#define TENURE_THREADS_THREADS_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct tenure_runtime;

struct tn_threads_state {
    /* the instance lock serialises every change of shared state; a collection holds it from
     * the stop of the world to the restart */
    pthread_mutex_t lock;
    uintptr_t lock_owner; /* (uintptr_t)pthread_self() of the holder, 0 if none (atomic) */
    unsigned lock_depth;  /* the holder's nesting */
    pthread_mutex_t world_mx;
    pthread_cond_t world_cv; /* a thread became SAFE / the world restarted */
    tn_mutator *mutators;
    size_t mutator_count;
    bool locks_ready;
    /* fork (fork.c): the process-wide list of live instances, and, in a child, that mutators
     * of threads gone with the fork wait to be forgotten (at the outermost unlock) */
    struct tenure_runtime *fork_next;
    bool fork_purge;
};

#endif
