/* fork.c - fork() without exec: the child gets a usable copy of every live instance.
 *
 * fork() copies the memory of every instance but only the forking thread. Without help the
 * child would inherit locks held by threads it does not have, mutators that never reach a
 * safepoint (a GC would wait for them forever) and a finalizer thread that does not exist
 * (tenure_wait_for_pending_finalizers and tenure_destroy would wait for it forever).
 *
 * The pthread_atfork handlers make the fork happen at a quiet moment and repair the child:
 *  - prepare: takes every live instance's lock (as a safepoint: a GC running elsewhere
 *    finishes first) and its world_mx, so no GC and no change of shared state is half done;
 *  - parent: releases them;
 *  - child: gives every instance fresh locks and conditions (held by the forking thread as
 *    before), marks the mutators of the other threads gone (SAFE, no roots; freed at the
 *    first moment no GC runs, their torn allocation contexts cut), starts a new finalizer
 *    thread (GCFinalizeMode 0) and lets tracing repair itself (tn_trace_forked_child).
 *
 * This needs the one process-wide list the library keeps besides the instance-id counter:
 * the handlers have no instance to start from. Its mutex is never held while an instance
 * lock is taken; from prepare to parent the list is frozen (`forking`: registering and
 * unregistering wait). See docs/design/threads.md, "fork".
 *
 * Here in api/, with the entry points, not in threads/: like tenure_create, the child's repair
 * reaches every subsystem (threads/, gc/'s cards, lifetime/, trace/), and it runs them in order. */
#include "runtime.h"

static pthread_mutex_t registry_mx = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t registry_cv = PTHREAD_COND_INITIALIZER; /* a fork finished */
static tenure_runtime *registry;                              /* live instances, linked through fork_next */
static unsigned forking; /* forks between prepare and parent: the list must not change */
static pthread_once_t handlers_once = PTHREAD_ONCE_INIT;

/* The registry's mutex is never held while an instance lock is taken: a fork from inside an
 * instance (the error hook, a GC callback) holds that instance's lock when prepare runs. */
static void prepare(void) {
    pthread_mutex_lock(&registry_mx);
    forking++;
    pthread_mutex_unlock(&registry_mx);
    for (tenure_runtime *rt = registry; rt; rt = rt->fork_next)
        tn_threads_fork_prepare(rt);
}

static void parent(void) {
    for (tenure_runtime *rt = registry; rt; rt = rt->fork_next)
        tn_threads_fork_parent(rt);
    pthread_mutex_lock(&registry_mx);
    forking--;
    pthread_cond_broadcast(&registry_cv);
    pthread_mutex_unlock(&registry_mx);
}

static void child(void) {
    pthread_mutex_init(&registry_mx, NULL);
    pthread_cond_init(&registry_cv, NULL);
    forking = 0;
    for (tenure_runtime *rt = registry; rt; rt = rt->fork_next) {
        if (tn_threads_forked_child(rt))
            tn_gc_dirty_old_cards(rt);
        tn_assert_locked(rt); /* what the next two rely on (a test calls the second without) */
        tn_finalize_forked_child(rt);
        tn_gc_team_forked_child(rt);
        tn_bgc_forked_child(rt);
        tn_trace_forked_child(rt);
        tn_unlock(rt); /* the forking thread's own level stays if it held the lock */
    }
}

static void install_handlers(void) { pthread_atfork(prepare, parent, child); }

/* The list changes only between forks. Called without any instance lock held. */
static void registry_lock(void) {
    pthread_mutex_lock(&registry_mx);
    while (forking)
        pthread_cond_wait(&registry_cv, &registry_mx);
}

void tn_fork_register(tenure_runtime *rt) {
    pthread_once(&handlers_once, install_handlers);
    registry_lock();
    rt->fork_next = registry;
    registry = rt;
    pthread_mutex_unlock(&registry_mx);
}

void tn_fork_unregister(tenure_runtime *rt) {
    registry_lock();
    for (tenure_runtime **p = &registry; *p; p = &(*p)->fork_next)
        if (*p == rt) {
            *p = rt->fork_next;
            break;
        }
    pthread_mutex_unlock(&registry_mx);
}
