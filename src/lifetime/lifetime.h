/*
 * lifetime.h - the state lifetime/ owns (rt->lifetime): memory pressure, identity hashes and
 * finalization (the registered and ready queues, the finalizer thread). Included by
 * runtime.h (tn_vec and tn_mutator come from there), which embeds it in struct
 * tenure_runtime; other subsystems call lifetime/'s functions (runtime.h "lifetime/") and
 * read these fields only where noted.
 */
#ifndef TENURE_LIFETIME_LIFETIME_H
#define TENURE_LIFETIME_LIFETIME_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* An identity hash */
typedef struct tn_sync_entry {
    uintptr_t key; /* the object's address; 0: empty */
    uint32_t hash;
} tn_sync_entry;

struct tn_lifetime_state {
    /* memory pressure and identity hashes (lifetime.c; sync_count: tenure_stats) */
    uint64_t pressure, pressure_since_gen2;
    tn_sync_entry *sync;
    size_t sync_cap, sync_count;
    uint64_t hash_state;
    /* finalization (finalize.c; the GC marks from ready and updates both queues) */
    tn_vec finalizable; /* void *: registered finalizable objects (weak) */
    tn_vec ready;       /* void *: found unreachable, waiting for their finalizer (strong) */
    size_t ready_head;  /* next to run */
    /* the finalizer thread (finalize.c); its conditions use rt->threads.lock; fin_queued: read by the GC */
    pthread_t fin_thread;
    bool fin_started, fin_stop;
    pthread_cond_t fin_work;       /* finalizers are pending, or the thread must stop */
    pthread_cond_t fin_idle;       /* finalizers ran (fin_done grew) */
    uint64_t fin_queued, fin_done; /* entries ever queued / ever taken off the queue */
    struct tn_mutator *fin_runner; /* the thread running finalizers now, NULL if none */
};

#endif
