/*
 * threads.h - the state threads/ owns (rt->threads): the instance lock, the attached threads
 * (mutators) and the condition they stop and restart on, and their repair after fork().
 * Included by runtime.h (tn_mutator comes from there), which embeds it in struct
 * tenure_runtime. Others take the lock through tn_lock/TN_LOCKED and walk the attached threads
 * (tn_mutators) with the world stopped; the world-stop nesting is read through
 * tn_world_stopped (trace/). After the state: threads/'s functions (the lock and its guards,
 * the lock and world-stop assertions, world stop and restart, attach and detach, the fork
 * handlers' parts: api/fork.c runs them, and the other subsystems' repairs, in order).
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
    uintptr_t lock_owner; /* the holder's thread-local byte's address (threads.c me()), 0 if none (atomic) */
    unsigned lock_depth;  /* the holder's nesting */
    pthread_mutex_t world_mx;
    pthread_cond_t world_cv; /* a thread became SAFE / the world restarted */
    tn_mutator *mutators;
    size_t mutator_count;
    unsigned world_stops; /* the nesting of tn_world_stop (only the lock holder touches it) */
    bool locks_ready;
    unsigned lock_spins; /* tries of a contended lock before sleeping (0 on one CPU; tn_lock) */
    /* in the child of a fork (api/fork.c): mutators of threads gone with the fork wait to be
     * forgotten (at the outermost unlock) */
    bool fork_purge;
    /* Server GC's threads borrow the instance lock ("The GC team borrows the lock", threads.c):
     * while team_running, the lock taken by a GC thread of the instance (a helper inside its
     * part of a GC, or thread 0, the holder) is team_lock, so that what callbacks call on GC
     * threads is serialised among them and never waits for the lock thread 0 holds. */
    pthread_mutex_t team_lock;
    bool team_running; /* set by thread 0 from the helpers' wake to their park (atomic) */
};

/* ---- functions ---- */

/* threads.c */
bool tn_threads_init(tenure_runtime *rt);
/* tenure_destroy may go on: no thread other than the caller and the finalizer thread is
 * attached (else reported, false). */
bool tn_threads_may_destroy(tenure_runtime *rt);
/* Detach the caller, free what is left and the locks. */
void tn_threads_destroy(tenure_runtime *rt);
/* In the child of fork() (the forking thread holds rt->threads.lock and world_mx from the prepare
 * handler): fresh locks and conditions, rt->threads.lock held as before; every mutator of another
 * thread is gone (forgotten at the outermost unlock, when no GC runs). True if one of them
 * vanished while RUNNING, maybe between the two stores of the barrier: the caller (api/fork.c)
 * then dirties every old card. */
bool tn_threads_forked_child(tenure_runtime *rt);
/* The atfork prepare handler's part for rt: its lock (a safepoint: a GC elsewhere finishes
 * first) and world_mx, so that nothing is half done; the parent's part releases them. */
void tn_threads_fork_prepare(tenure_runtime *rt);
void tn_threads_fork_parent(tenure_runtime *rt);
tn_mutator *tn_mutator_attach(tenure_runtime *rt, bool finalizer);
void tn_mutator_detach(tenure_runtime *rt, tn_mutator *m);
/* The calling thread's mutator for rt, or NULL if it is not attached. */
tn_mutator *tn_self(tenure_runtime *rt);
/* The attached threads, a list through m->next; walk it with rt->threads.lock held (the list
 * changes only under it) and, to read a thread's allocation context or stack, the world
 * stopped. */
tn_mutator *tn_mutators(const tenure_runtime *rt);
size_t tn_mutator_count(const tenure_runtime *rt);
/* The instance lock and the threads' conditions exist (from tn_threads_init to
 * tn_threads_destroy): before and after, the instance has one thread and takes no lock. A
 * macro (read each time a callback closes the thread's allocation context, tn_cb_enter). */
#define tn_threads_ready(rt) ((rt)->threads.locks_ready)
/* Server GC (gc/team.c): thread 0, holding the lock, from the wake of its helpers to their
 * park / a helper around its part of a GC. In between, tn_lock and friends on those threads
 * take rt->threads.team_lock instead of the instance lock (threads.c). */
void tn_threads_team_begin(tenure_runtime *rt);
void tn_threads_team_end(tenure_runtime *rt);
void tn_threads_helper_begin(tenure_runtime *rt);
void tn_threads_helper_end(void);
/* The instance lock (recursive for its holder). Waiting for it is a safepoint. On a GC
 * thread while the team runs: the team's lock (above), never a safepoint. */
void tn_lock(tenure_runtime *rt);
void tn_unlock(tenure_runtime *rt);
/* The lock if it is free (or held by the caller): never a safepoint. */
bool tn_trylock(tenure_runtime *rt);
bool tn_lock_held(const tenure_runtime *rt);
/* The claims "with rt->threads.lock held" and "with the world stopped", checked (TN_ASSERT). Before
 * the locks exist and after they are destroyed (rt->threads.locks_ready false: creation, destruction)
 * the instance has one thread and both hold trivially. Macros, so a failure names the caller;
 * world_stops is read only by the lock holder (a data race otherwise). */
#define tn_assert_locked(rt) TN_ASSERT(!(rt)->threads.locks_ready || tn_lock_held(rt))
#define tn_assert_world_stopped(rt) TN_ASSERT(!(rt)->threads.locks_ready || (tn_lock_held(rt) && tn_world_stopped(rt)))
/* The world is stopped (by the caller, who holds rt->threads.lock: only it may ask). A macro:
 * struct tenure_runtime is not complete here. */
#define tn_world_stopped(rt) ((rt)->threads.world_stops > 0)
/* Run wait(rt, arg) (a join, a wait for something outside the instance) as a safepoint:
 * a GC may run meanwhile. Without rt->threads.lock held. */
void tn_while_safe(tenure_runtime *rt, void (*wait)(tenure_runtime *, void *), void *arg);
/* Wait on cond (with rt->threads.lock held once) as a safepoint. */
void tn_wait_safe(tenure_runtime *rt, pthread_cond_t *cond);
/* With rt->threads.lock held: wait until every other attached thread is SAFE / let them go.
 * Nested stops are counted: the world restarts at the outermost restart. */
void tn_world_stop(tenure_runtime *rt);
void tn_world_restart(tenure_runtime *rt);
/* Cleanup-attribute guard: `TN_LOCKED(rt);` holds rt->threads.lock to the end of the scope. */
static inline void tn_unlock_guard(tenure_runtime **rt) {
    if (*rt)
        tn_unlock(*rt);
}
static inline tenure_runtime *tn_lock_guard(tenure_runtime *rt) {
    if (rt)
        tn_lock(rt);
    return rt;
}
#define TN_LOCKED(rt) tenure_runtime *tn_guard_ __attribute__((cleanup(tn_unlock_guard))) = tn_lock_guard(rt)
/* The same for a function given objects a and b (or NULL): if the caller must wait for the
 * lock, a GC may run meanwhile; it pins a and b (words treated as conservative roots) so that
 * the function's arguments stay valid. */
void tn_lock_holding(tenure_runtime *rt, const void *a, const void *b);
static inline tenure_runtime *tn_lock_holding_guard(tenure_runtime *rt, const void *a, const void *b) {
    if (rt)
        tn_lock_holding(rt, a, b);
    return rt;
}
#define TN_LOCKED_HOLDING(rt, a, b) \
    tenure_runtime *tn_guard_ __attribute__((cleanup(tn_unlock_guard))) = tn_lock_holding_guard(rt, a, b)


#endif
