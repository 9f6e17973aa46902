/*
 * lifetime.h - the state lifetime/ owns (rt->lifetime): memory pressure, identity hashes and
 * finalization (the registered and ready queues, the finalizer thread). Included by
 * runtime.h (tn_vec and tn_mutator come from there), which embeds it in struct
 * tenure_runtime; other subsystems call lifetime/'s functions (after the state, below),
 * never these fields (scripts/depgraph.py).
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
    /* the finalizer thread (finalize.c); its conditions use rt->threads.lock */
    pthread_t fin_thread;
    bool fin_started, fin_stop;
    pthread_cond_t fin_work;       /* finalizers are pending, or the thread must stop */
    pthread_cond_t fin_idle;       /* finalizers ran (fin_done grew) */
    bool conds_ready;              /* fin_work and fin_idle exist (tn_lifetime_init to tn_lifetime_destroy) */
    uint64_t fin_queued, fin_done; /* entries ever queued / ever taken off the queue */
    struct tn_mutator *fin_runner; /* the thread running finalizers now, NULL if none */
};

/* ---- functions ---- */

/* lifetime.c */
void tn_lifetime_gen2_done(tenure_runtime *rt);
void tn_lifetime_update_sync(tenure_runtime *rt, char *(*forward)(tenure_runtime *, char *),
                             bool (*dead)(tenure_runtime *, const void *));
void tn_lifetime_init(tenure_runtime *rt);
void tn_lifetime_destroy(tenure_runtime *rt);
/* Identity hashes held (tenure_stats.sync_blocks, the events' SinkBlockCount). */
size_t tn_lifetime_sync_count(const tenure_runtime *rt);
/* finalize.c */
bool tn_finalize_register(tenure_runtime *rt, void *obj);
void tn_finalize_visit_ready(tenure_runtime *rt, tn_slot_fn fn, void *ctx);
void tn_finalize_visit_registered(tenure_runtime *rt, tn_slot_fn fn, void *ctx);
/* During marking: move unreachable finalizable objects to the ready queue (dead: a
 * predicate), calling queued(obj) for each; returns how many. */
size_t tn_finalize_scan(tenure_runtime *rt, bool (*dead)(tenure_runtime *, const void *),
                        void (*queued)(tenure_runtime *, void **));
/* The GC's questions: entries ever queued for finalization (a GC that queued some wakes the
 * finalizer thread), entries waiting for their finalizer (the ready queue: roots), objects
 * registered for finalization. */
uint64_t tn_finalize_queued_total(const tenure_runtime *rt);
size_t tn_finalize_ready_count(const tenure_runtime *rt);
size_t tn_finalize_registered_count(const tenure_runtime *rt);
/* m runs finalizers: it is the finalizer thread, or runs pending finalizers now (threads/:
 * tenure_destroy is refused there). */
bool tn_finalize_runs_on(const tenure_runtime *rt, const tn_mutator *m);
/* GCFinalizeMode 2: run pending finalizers on this thread (call without rt->threads.lock held). */
void tn_finalize_safepoint(tenure_runtime *rt);
/* After a GC that queued finalizers (rt->threads.lock held): wake the finalizer thread. */
void tn_finalize_notify(tenure_runtime *rt);
/* GCFinalizeMode 0: start the instance's finalizer thread / drain or discard its queue
 * (GCFinalizeOnShutdown) and join it. */
int tn_finalize_start_thread(tenure_runtime *rt); /* 0 or the error of pthread_create */
/* In the child of fork(): start a new finalizer thread (without waiting for it); forget the
 * running finalizer of a thread gone with the fork. */
void tn_finalize_forked_child(tenure_runtime *rt);
void tn_finalize_forget_runner(tenure_runtime *rt, const tn_mutator *gone);
void tn_finalize_stop_thread(tenure_runtime *rt);
void tn_finalize_shutdown(tenure_runtime *rt);

#endif
