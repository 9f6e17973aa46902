/* threads.c - attached threads, the instance lock, and cooperative stop-the-world.
 *
 * Every thread that uses an instance is attached: it has a tn_mutator (its allocation context,
 * its shadow stack, its stack bounds) in rt->threads.mutators and in a thread-local list of its own
 * attachments; tenure__current points at the one it used last, so the inline fast paths find
 * it with one thread-local load and one compare.
 *
 * The instance lock (rt->threads.lock) serialises every change of shared state. A collection holds it
 * from the stop of the world to the restart, so a thread that holds the lock knows that no GC
 * is running and none can start. Stopping the world is cooperative: the collecting thread sets
 * head.stop_requested and waits until every other attached thread is SAFE. A thread is SAFE
 * while it waits for the instance lock, stops at a safepoint (tenure_safepoint, the allocation
 * slow path), waits inside the instance (tenure_wait_for_pending_finalizers, the finalizer
 * thread's wait for work) or is in a blocking section. Before it becomes SAFE it saves its
 * registers and the stack pointer of a frame that stays live while it is SAFE: the GC scans
 * from there up (GCConservativeStack), and reads its shadow frames.
 *
 * Invariants:
 *  T1 head.stop_requested is set only by the holder of rt->threads.lock, and cleared before the lock
 *     is released: a thread that acquires the lock never finds the world stopping.
 *  T2 A mutator's state changes under rt->threads.world_mx; while a GC runs, every attached thread
 *     other than the collecting one is SAFE and touches no object, context or frame.
 *  T3 A thread waits for rt->threads.lock only while SAFE (if attached): no GC waits for a thread
 *     that waits for the GC's lock.
 *  T4 A thread attached to several instances that waits inside one of them (for its lock, its
 *     finalizers, the finalizer thread, a world stop, or while it collects it) is SAFE in the
 *     others too ("parked"), except in those whose lock it holds; it becomes RUNNING in them
 *     again all at once, when none of them is stopping its world. So a GC of one instance never
 *     waits for a thread that waits for another instance. A GC never waits for another
 *     instance (GC-time callbacks do not call into other instances), which keeps these waits
 *     free of cycles.
 */
#include "runtime.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* tenure__current itself is base/current.c's (the assertions read it too); when the thread
 * has not used any instance it points at tn_no_attachment, whose rt matches none. */
#define TN_TLS __thread __attribute__((tls_model("initial-exec")))
/* This thread's attachments (to any instance). */
static TN_TLS tn_mutator *my_attachments;
/* A frame pushed by a thread that is not attached goes here (reported, never scanned). */
static TN_TLS tenure__mutator unattached;

/* tenure_thread_attach's caller, while it attaches (for warn_slow_stop's message). */
static TN_TLS const void *attaching_from;

static pthread_key_t exit_key;
static pthread_once_t exit_key_once = PTHREAD_ONCE_INIT;

/* A token unique to the calling thread: the address of a thread-local byte. */
static TN_TLS char my_token;
static uintptr_t me(void) { return (uintptr_t)&my_token; }

/* ---- the GC team borrows the lock ----
 *
 * During a server GC, thread 0 holds the instance lock and waits for its helpers at joins.
 * A callback running on a helper (a type's trace callback, the error hook of a call it makes
 * that fails) calls functions that take the instance lock: waiting for it there would wait
 * for thread 0, which waits for the helper (issue 33). So while the team runs, the GC threads
 * of the instance take rt->threads.team_lock instead, with a depth of their own: their calls
 * are serialised among them (and with thread 0's, which takes the same lock), the rest of the
 * program stays out (it waits for the instance lock, thread 0's). A helper inside its
 * borrowed section counts as a holder (tn_lock_held), so the callees' assertions hold. */

/* The helper's instance, set around its part of a GC (NULL on every other thread). */
static TN_TLS const tenure_runtime *helper_of;
/* The instance whose team_lock this thread holds, and its nesting (0: none). */
static TN_TLS const tenure_runtime *borrowed;
static TN_TLS unsigned borrow_depth;

void tn_threads_helper_begin(tenure_runtime *rt) { helper_of = rt; }
void tn_threads_helper_end(void) { helper_of = NULL; }

void tn_threads_team_begin(tenure_runtime *rt) {
    tn_assert_locked(rt);
    __atomic_store_n(&rt->threads.team_running, true, __ATOMIC_RELEASE);
}

void tn_threads_team_end(tenure_runtime *rt) {
    TN_ASSERT(borrow_depth == 0); /* no borrowed section spans the end of the team */
    __atomic_store_n(&rt->threads.team_running, false, __ATOMIC_RELEASE);
}

/* The calling thread is a GC thread of rt's running team: a helper, or thread 0 (the owner). */
static bool borrows(const tenure_runtime *rt) {
    if (helper_of == rt)
        return true;
    return __atomic_load_n(&rt->threads.team_running, __ATOMIC_ACQUIRE) &&
           __atomic_load_n(&rt->threads.lock_owner, __ATOMIC_RELAXED) == me();
}

static void borrow(tenure_runtime *rt) {
    if (borrow_depth++ == 0) {
        pthread_mutex_lock(&rt->threads.team_lock);
        borrowed = rt;
    }
}

/* true if the caller's unlock was of a borrowed section */
static bool give_back(tenure_runtime *rt) {
    if (borrowed != rt || !borrow_depth)
        return false;
    if (--borrow_depth == 0) {
        borrowed = NULL;
        pthread_mutex_unlock(&rt->threads.team_lock);
    }
    return true;
}

/* ---- the instance lock ---- */

bool tn_lock_held(const tenure_runtime *rt) {
    return __atomic_load_n(&rt->threads.lock_owner, __ATOMIC_RELAXED) == me() || (borrowed == rt && borrow_depth);
}

/* The thread is about to stop touching objects: record its registers and the stack pointer
 * of a live frame (the GC scans from there up), then tell a waiting collector. */
static void become_safe(tenure_runtime *rt, tn_mutator *m, char *sp) {
    getcontext(&m->safe_regs);
    m->safe_sp = sp;
    pthread_mutex_lock(&rt->threads.world_mx);
    m->state = TN_MUT_SAFE;
    pthread_cond_broadcast(&rt->threads.world_cv);
    pthread_mutex_unlock(&rt->threads.world_mx);
}

/* Back to RUNNING once no stop is in progress (the lock holder never waits: T1). */
static void become_running(tenure_runtime *rt, tn_mutator *m) {
    pthread_mutex_lock(&rt->threads.world_mx);
    while (__atomic_load_n(&rt->head.stop_requested, __ATOMIC_ACQUIRE) && !tn_lock_held(rt))
        pthread_cond_wait(&rt->threads.world_cv, &rt->threads.world_mx);
    m->state = TN_MUT_RUNNING;
    pthread_mutex_unlock(&rt->threads.world_mx);
}

static void park_others(tenure_runtime *rt, char *sp);
static void unpark_others(tenure_runtime *rt, bool release_lock);

/* SAFE for the duration of wait(rt, arg), and parked in the thread's other instances (T4);
 * holds_lock: wait returns with rt->threads.lock taken (it is let go while the thread waits for
 * another instance's restart). Not inlined, so that this frame (with the callee-saved
 * registers pushed into it) outlives the wait. */
__attribute__((noinline)) static void while_safe(tenure_runtime *rt, tn_mutator *m,
                                                 void (*wait)(tenure_runtime *, void *), void *arg, bool holds_lock) {
    volatile char here = 0;
    __builtin_unwind_init();
    become_safe(rt, m, (char *)&here);
    park_others(rt, (char *)&here);
    wait(rt, arg);
    unpark_others(rt, holds_lock);
    become_running(rt, m);
    (void)here;
}

/* ---- parking: SAFE in the thread's other instances while it waits in one (T4) ---- */

static void wait_for_restart(tenure_runtime *rt, void *arg);

/* Park the thread's attachments other than rt's that are RUNNING and whose lock it does not
 * hold; sp: a live frame of the caller (their GCs scan from there up). */
static void park_others(tenure_runtime *rt, char *sp) {
    for (tn_mutator *o = my_attachments; o; o = o->next_of_thread)
        if (o->rt != rt && o->state == TN_MUT_RUNNING && !o->parked && !o->gone && !tn_lock_held(o->rt)) {
            o->parked = true;
            become_safe(o->rt, o, sp);
        }
}

#define TN_MAX_PARKED 64 /* instances one thread is attached to, unparked at once */

/* The parked attachments, by instance address (the order their world_mx are taken in). */
static size_t parked_in_order(tn_mutator **out) {
    size_t n = 0;
    for (tn_mutator *o = my_attachments; o && n < TN_MAX_PARKED; o = o->next_of_thread) {
        if (!o->parked)
            continue;
        size_t i = n++;
        while (i > 0 && (uintptr_t)out[i - 1]->rt > (uintptr_t)o->rt) {
            out[i] = out[i - 1];
            i--;
        }
        out[i] = o;
    }
    return n;
}

/* RUNNING again in every parked attachment at once, at a moment when none of their instances
 * is stopping its world (all their world_mx held); while one is, wait for its restart, with
 * rt's lock let go meanwhile if the caller holds it and may (release_lock). */
static void unpark_others(tenure_runtime *rt, bool release_lock) {
    tn_mutator *parked[TN_MAX_PARKED];
    for (;;) {
        size_t n = parked_in_order(parked);
        if (!n)
            return;
        for (size_t i = 0; i < n; i++)
            pthread_mutex_lock(&parked[i]->rt->threads.world_mx);
        tenure_runtime *stopping = NULL;
        for (size_t i = 0; i < n && !stopping; i++)
            if (__atomic_load_n(&parked[i]->rt->head.stop_requested, __ATOMIC_ACQUIRE))
                stopping = parked[i]->rt;
        for (size_t i = 0; i < n && !stopping; i++) {
            parked[i]->state = TN_MUT_RUNNING;
            parked[i]->parked = false;
        }
        for (size_t i = n; i-- > 0;)
            pthread_mutex_unlock(&parked[i]->rt->threads.world_mx);
        if (!stopping)
            return;
        uintptr_t owner = __atomic_load_n(&rt->threads.lock_owner, __ATOMIC_RELAXED);
        if (release_lock) {
            __atomic_store_n(&rt->threads.lock_owner, 0, __ATOMIC_RELAXED);
            pthread_mutex_unlock(&rt->threads.lock);
        }
        wait_for_restart(stopping, NULL);
        if (release_lock) {
            pthread_mutex_lock(&rt->threads.lock);
            __atomic_store_n(&rt->threads.lock_owner, owner, __ATOMIC_RELAXED);
        }
    }
}

static void wait_for_lock(tenure_runtime *rt, void *arg) {
    (void)arg;
    pthread_mutex_lock(&rt->threads.lock);
}

/* The lock is taken: by a thread that had to wait (m: its mutator, or NULL), SAFE meanwhile. */
static void lock_contended(tenure_runtime *rt, tn_mutator *m) {
    if (m && m->state == TN_MUT_RUNNING)
        while_safe(rt, m, wait_for_lock, NULL, true);
    else
        pthread_mutex_lock(&rt->threads.lock);
}

static void became_owner(tenure_runtime *rt) {
    __atomic_store_n(&rt->threads.lock_owner, me(), __ATOMIC_RELAXED);
    rt->threads.lock_depth = 1;
}

void tn_lock(tenure_runtime *rt) { tn_lock_holding(rt, NULL, NULL); }

bool tn_trylock(tenure_runtime *rt) {
    if (!rt->threads.locks_ready)
        return true;
    if (borrows(rt)) {
        borrow(rt);
        return true;
    }
    if (tn_lock_held(rt)) {
        rt->threads.lock_depth++;
        return true;
    }
    if (pthread_mutex_trylock(&rt->threads.lock) != 0)
        return false;
    became_owner(rt);
    return true;
}

/* A contended lock is tried again for a while before the thread sleeps on it: another
 * thread's allocation slow path holds it for about a microsecond, and sleeping costs a futex
 * wake and often a preemption of the thread that let it go (measured: bench/threads_alloc,
 * docs/design/threads.md "The instance lock"). A collection holds it for its whole pause and
 * says so first (stop_requested): no spinning then, the thread goes to its safepoint. */
#define TN_LOCK_SPINS 1024u

static bool lock_after_spinning(tenure_runtime *rt) {
    for (unsigned i = 1; i <= rt->threads.lock_spins; i++) {
        if (__atomic_load_n(&rt->head.stop_requested, __ATOMIC_ACQUIRE))
            return false;
        tn_cpu_relax();
        if (i % 16 == 0 && pthread_mutex_trylock(&rt->threads.lock) == 0)
            return true;
    }
    return false;
}

void tn_lock_holding(tenure_runtime *rt, const void *a, const void *b) {
    if (!rt->threads.locks_ready)
        return;
    if (borrows(rt)) {
        borrow(rt);
        return;
    }
    if (tn_lock_held(rt)) {
        rt->threads.lock_depth++;
        return;
    }
    if (pthread_mutex_trylock(&rt->threads.lock) != 0 && !lock_after_spinning(rt)) {
        tn_mutator *m = tn_self(rt);
        if (m) {
            m->held[0] = a;
            m->held[1] = b;
        }
        lock_contended(rt, m);
        if (m)
            m->held[0] = m->held[1] = NULL;
    }
    became_owner(rt);
}

static void forget_gone_mutators(tenure_runtime *rt);

void tn_unlock(tenure_runtime *rt) {
    if (!rt->threads.locks_ready || give_back(rt))
        return;
    if (rt->threads.lock_depth == 1 && TENURE__UNLIKELY(rt->threads.fork_purge))
        forget_gone_mutators(rt); /* the child of a fork, outside any GC */
    if (--rt->threads.lock_depth)
        return;
    __atomic_store_n(&rt->threads.lock_owner, 0, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&rt->threads.lock);
}

static void wait_on_cond(tenure_runtime *rt, void *cond) {
    __atomic_store_n(&rt->threads.lock_owner, 0, __ATOMIC_RELAXED);
    pthread_cond_wait((pthread_cond_t *)cond, &rt->threads.lock);
    __atomic_store_n(&rt->threads.lock_owner, me(), __ATOMIC_RELAXED);
}

void tn_while_safe(tenure_runtime *rt, void (*wait)(tenure_runtime *, void *), void *arg) {
    tn_mutator *m = tn_self(rt);
    if (m && m->state == TN_MUT_RUNNING && !tn_lock_held(rt))
        while_safe(rt, m, wait, arg, false);
    else
        wait(rt, arg);
}

void tn_wait_safe(tenure_runtime *rt, pthread_cond_t *cond) {
    tn_assert_locked(rt);
    unsigned depth = rt->threads.lock_depth;
    tn_mutator *m = tn_self(rt);
    if (m && m->state == TN_MUT_RUNNING)
        while_safe(rt, m, wait_on_cond, cond, true);
    else
        wait_on_cond(rt, cond);
    rt->threads.lock_depth = depth;
}

/* ---- stopping the world ---- */

static bool others_safe(tenure_runtime *rt, const tn_mutator *self) {
    for (tn_mutator *m = rt->threads.mutators; m; m = m->next)
        if (m != self && m->state != TN_MUT_SAFE)
            return false;
    return true;
}

/* The collector is parked in its other instances from its stop of rt's world to the restart
 * (T4: it touches no object of theirs meanwhile, and two threads collecting one instance each
 * must not wait for each other). Its registers are saved here; its callers' frames stay live
 * during the GC, so the other instances' GCs scan from this frame up. */
__attribute__((noinline)) static void park_collector(tenure_runtime *rt) {
    volatile char here = 0;
    __builtin_unwind_init();
    park_others(rt, (char *)&here);
    (void)here;
}

/* A stop that has waited GCStopWarnMs says, once, which threads it waits for (issue 38: a
 * thread that blocks outside a blocking section hangs every GC, silently before). With
 * world_mx held: the states do not change meanwhile. The stop keeps waiting: the thread may be
 * slow, not stuck. */
static void warn_slow_stop(tenure_runtime *rt, const tn_mutator *self, uint32_t waited_ms) {
    for (tn_mutator *m = rt->threads.mutators; m; m = m->next) {
        if (m == self || m->state == TN_MUT_SAFE)
            continue;
        char name[32], where[256] = "";
        tn_os_thread_name_of(m->os_tid, name, sizeof name);
        if (m->attached_from)
            tn_os_describe_code(m->attached_from, where, sizeof where);
        fprintf(stderr,
                "tenure: a collection of instance %u has waited %u ms for thread %llu (\"%s\") to reach a "
                "safepoint; it was attached by %s%s%s. A thread that waits (a mutex, a condition, a join, "
                "I/O, a sleep) must wait inside tenure_blocking_enter/tenure_blocking_leave, and one that computes "
                "for long must call tenure_safepoint. The collection keeps waiting (GCStopWarnMs=%u; 0: no "
                "warning)\n",
                (unsigned)rt->instance_id, waited_ms, (unsigned long long)m->os_tid, name,
                m->attached_by ? m->attached_by : "tenure_thread_attach", where[0] ? " called from " : "", where,
                (unsigned)rt->config.GCStopWarnMs);
    }
}

void tn_world_stop(tenure_runtime *rt) {
    tn_assert_locked(rt);
    if (rt->threads.world_stops++)
        return;
    tn_mutator *self = tn_self(rt);
    park_collector(rt);
    pthread_mutex_lock(&rt->threads.world_mx);
    __atomic_store_n(&rt->head.stop_requested, 1, __ATOMIC_RELEASE);
    uint32_t warn_ms = rt->config.GCStopWarnMs;
    uint64_t deadline = warn_ms ? tn_os_realtime_ns() + (uint64_t)warn_ms * 1000000u : 0;
    while (!others_safe(rt, self)) {
        if (!deadline) {
            pthread_cond_wait(&rt->threads.world_cv, &rt->threads.world_mx);
            continue;
        }
        struct timespec ts = {(time_t)(deadline / 1000000000u), (long)(deadline % 1000000000u)};
        if (pthread_cond_timedwait(&rt->threads.world_cv, &rt->threads.world_mx, &ts) == ETIMEDOUT &&
            !others_safe(rt, self)) {
            warn_slow_stop(rt, self, warn_ms);
            deadline = 0; /* once per stop */
        }
    }
    pthread_mutex_unlock(&rt->threads.world_mx);
}

void tn_world_restart(tenure_runtime *rt) {
    tn_assert_world_stopped(rt);
    if (--rt->threads.world_stops)
        return;
    pthread_mutex_lock(&rt->threads.world_mx);
    __atomic_store_n(&rt->head.stop_requested, 0, __ATOMIC_RELEASE);
    pthread_cond_broadcast(&rt->threads.world_cv);
    pthread_mutex_unlock(&rt->threads.world_mx);
    unpark_others(rt, false); /* rt's lock stays held: the collection is not over */
}

static void wait_for_restart(tenure_runtime *rt, void *arg) {
    (void)arg;
    pthread_mutex_lock(&rt->threads.world_mx);
    while (__atomic_load_n(&rt->head.stop_requested, __ATOMIC_ACQUIRE))
        pthread_cond_wait(&rt->threads.world_cv, &rt->threads.world_mx);
    pthread_mutex_unlock(&rt->threads.world_mx);
}

void tenure__safepoint_slow(tenure_runtime *rt) {
    tn_mutator *m = rt ? tn_self(rt) : NULL;
    if (m && m->state == TN_MUT_RUNNING && !tn_lock_held(rt))
        while_safe(rt, m, wait_for_restart, NULL, false);
}

/* A blocking section: the thread stays SAFE until it leaves. */
void tenure_blocking_enter(tenure_runtime *rt) {
    tn_mutator *m = rt ? tn_self(rt) : NULL;
    if (!m) {
        if (rt)
            tn_api_fail(rt, TENURE_STATE, "tenure_blocking_enter",
                        "the calling thread is not attached (tenure_thread_attach)");
        return;
    }
    if (m->state != TN_MUT_RUNNING || tn_lock_held(rt)) {
        tn_api_fail(rt, TENURE_STATE, "tenure_blocking_enter",
                    m->state != TN_MUT_RUNNING ? "already in a blocking section" : "called from inside the instance");
        return;
    }
    /* the caller's frames above this one hold what the thread keeps across the section; its
     * registers are saved in m->safe_regs. Its context closes (before a GC may end it) so that
     * an allocation inside the section takes the slow path, which refuses it; the first
     * allocation after the section (a slow one, under the lock) opens it again. */
    m->pub.alloc_limit = m->pub.alloc_ptr;
    volatile char here = 0;
    become_safe(rt, m, (char *)&here);
}

void tenure_blocking_leave(tenure_runtime *rt) {
    tn_mutator *m = rt ? tn_self(rt) : NULL;
    if (!m || m->state != TN_MUT_SAFE) {
        if (rt)
            tn_api_fail(rt, TENURE_STATE, "tenure_blocking_leave", "not in a blocking section");
        return;
    }
    become_running(rt, m);
}

/* ---- attaching ---- */

tn_mutator *tn_self(tenure_runtime *rt) {
    tn_mutator *m = (tn_mutator *)tenure__current;
    if (m->pub.rt == rt)
        return m;
    for (m = my_attachments; m; m = m->next_of_thread)
        if (m->rt == rt) {
            tenure__current = &m->pub;
            return m;
        }
    return NULL;
}

tn_mutator *tn_mutators(const tenure_runtime *rt) { return rt->threads.mutators; }

size_t tn_mutator_count(const tenure_runtime *rt) { return rt->threads.mutator_count; }

tenure__mutator *tenure__mutator_of(tenure_runtime *rt) {
    tn_mutator *m = rt ? tn_self(rt) : NULL;
    if (m)
        return &m->pub;
    if (rt)
        tn_api_fail(rt, TENURE_STATE, "TENURE_FRAME", "the calling thread is not attached (tenure_thread_attach)");
    unattached.frames = NULL;
    return &unattached;
}

/* A thread that exits while attached is detached (its attachments are freed with it). Its
 * shadow frames lived on the stack that is being unwound (pthread_exit, or a return without
 * TENURE_FRAME_POP): they are forgotten before the detach can wait for the lock (SAFE), or a
 * GC on another thread would visit them. Forgetting them needs the thread RUNNING (T2): one
 * that exits inside a blocking section leaves it first. */
static void detach_at_exit(void *unused) {
    (void)unused;
    while (my_attachments) {
        tn_mutator *m = my_attachments;
        if (m->state != TN_MUT_RUNNING)
            become_running(m->rt, m);
        m->pub.frames = NULL;
        m->attach_count = 1;
        tn_mutator_detach(m->rt, m);
    }
}

static void make_exit_key(void) { pthread_key_create(&exit_key, detach_at_exit); }

tn_mutator *tn_mutator_attach(tenure_runtime *rt, bool finalizer) {
    tn_mutator *m = tn_self(rt);
    if (m) {
        m->attach_count++;
        return m;
    }
    pthread_once(&exit_key_once, make_exit_key);
    m = tn_calloc(1, sizeof *m);
    if (!m)
        return NULL;
    m->rt = rt;
    m->pub.rt = rt;
    m->attach_count = 1;
    m->finalizer = finalizer;
    if (finalizer)
        m->attached_by = "the instance, as its finalizer thread (a finalizer that waits must do it in a blocking "
                         "section)";
    else if (attaching_from) { /* set before the GC can see it (warn_slow_stop reads it) */
        m->attached_by = "tenure_thread_attach";
        m->attached_from = attaching_from;
    }
    m->stack_high = tn_os_stack_base();
    m->os_tid = tn_os_thread_id();
    m->state = TN_MUT_RUNNING;
    tn_lock(rt); /* not SAFE yet: the GC does not know this thread until it is in the list */
    m->next = rt->threads.mutators;
    rt->threads.mutators = m;
    rt->threads.mutator_count++;
    tn_unlock(rt);
    m->next_of_thread = my_attachments;
    my_attachments = m;
    pthread_setspecific(exit_key, (void *)1);
    tenure__current = &m->pub;
    return m;
}

void tn_mutator_detach(tenure_runtime *rt, tn_mutator *m) {
    if (--m->attach_count)
        return;
    tn_lock(rt);
    tn_alloc_reset_context(rt, m);
    for (tn_mutator **p = &rt->threads.mutators; *p; p = &(*p)->next)
        if (*p == m) {
            *p = m->next;
            break;
        }
    rt->threads.mutator_count--;
    tn_unlock(rt);
    for (tn_mutator **p = &my_attachments; *p; p = &(*p)->next_of_thread)
        if (*p == m) {
            *p = m->next_of_thread;
            break;
        }
    if (tenure__current == &m->pub)
        tenure__current = &tn_no_attachment;
    free(m);
}

tenure_result tenure_thread_attach(tenure_runtime *rt) {
    if (!rt)
        return TENURE_INVALID_ARGUMENT;
    if (tn_cb_refused(rt, TN_OP_CHANGE, "tenure_thread_attach"))
        return TENURE_STATE;
    attaching_from = __builtin_return_address(0);
    tn_mutator *m = tn_mutator_attach(rt, false);
    attaching_from = NULL;
    return m ? TENURE_OK : tn_api_fail(rt, TENURE_NOMEM, "tenure_thread_attach", "out of memory");
}

tenure_result tenure_thread_detach(tenure_runtime *rt) {
    if (!rt)
        return TENURE_INVALID_ARGUMENT;
    if (tn_cb_refused(rt, TN_OP_DETACH, "tenure_thread_detach"))
        return TENURE_STATE;
    tn_mutator *m = tn_self(rt);
    if (!m)
        return tn_api_fail(rt, TENURE_STATE, "tenure_thread_detach",
                           "the calling thread is not attached (tenure_thread_attach)");
    if (m->state != TN_MUT_RUNNING || tn_lock_held(rt))
        return tn_api_fail(rt, TENURE_STATE, "tenure_thread_detach",
                           "called from a blocking section or from inside the instance");
    if (m->finalizer)
        return tn_api_fail(rt, TENURE_STATE, "tenure_thread_detach", "the finalizer thread belongs to the instance");
    if (m->attach_count == 1 && m->pub.frames)
        return tn_api_fail(rt, TENURE_STATE, "tenure_thread_detach",
                           "frames are still pushed (pop them first: their objects would lose their roots)");
    tn_mutator_detach(rt, m);
    return TENURE_OK;
}

size_t tenure_thread_count(tenure_runtime *rt) {
    if (!rt)
        return 0;
    TN_LOCKED(rt);
    return rt->threads.mutator_count;
}

/* ---- fork ---- */

/* The context of a thread that vanished at an arbitrary instruction: its last object may be
 * half made (the bump pointer moved, the header not yet written). Cut the context at the
 * first object that is not whole, and zero the rest (a context's tail is zeroed memory). */
static void cut_torn_context(tn_mutator *m) {
    char *o = (char *)m->ctx_start, *end = (char *)m->pub.alloc_ptr;
    if (!m->alloc_region || o > end)
        return;
    while (o < end) {
        size_t size = *(uintptr_t *)o ? tn_obj_size(o) : 0;
        if (size < TN_ALIGN || size > (size_t)(end - o))
            break;
        o += size;
    }
    /* and the header words just past the bump pointer: the fast path may have stored one
     * before it moved the pointer */
    char *tail = end + 2 * sizeof(uintptr_t) <= (char *)m->ctx_end ? end + 2 * sizeof(uintptr_t) : (char *)m->ctx_end;
    memset(o, 0, (size_t)(tail - o));
    m->pub.alloc_ptr = (uintptr_t)o;
}

static void forget_gone_mutators(tenure_runtime *rt) {
    rt->threads.fork_purge = false;
    for (tn_mutator **p = &rt->threads.mutators; *p;) {
        tn_mutator *m = *p;
        if (!m->gone) {
            p = &m->next;
            continue;
        }
        tn_finalize_forget_runner(rt, m);
        cut_torn_context(m);
        tn_alloc_reset_context(rt, m);
        *p = m->next;
        rt->threads.mutator_count--;
        free(m);
    }
}

static bool is_mine(const tn_mutator *m) {
    for (tn_mutator *a = my_attachments; a; a = a->next_of_thread)
        if (a == m)
            return true;
    return false;
}

bool tn_threads_forked_child(tenure_runtime *rt) {
    unsigned depth = rt->threads.lock_depth; /* the prepare handler's level included */
    pthread_mutex_init(&rt->threads.lock, NULL);
    pthread_mutex_init(&rt->threads.world_mx, NULL);
    pthread_mutex_init(&rt->threads.team_lock, NULL); /* (no team runs across a fork) */
    pthread_cond_init(&rt->threads.world_cv, NULL);
    pthread_mutex_lock(&rt->threads.lock);
    became_owner(rt);
    rt->threads.lock_depth = depth;
    bool torn = false; /* a thread vanished while RUNNING: maybe inside a barrier */
    for (tn_mutator *m = rt->threads.mutators; m; m = m->next) {
        if (is_mine(m)) {
            tn_os_thread_id_forget(); /* the child is another thread */
            m->os_tid = tn_os_thread_id();
            continue;
        }
        torn |= m->state == TN_MUT_RUNNING;
        /* SAFE and without roots: no stop of the world waits for it, no scan reads its stack */
        m->gone = true;
        m->state = TN_MUT_SAFE;
        m->safe_sp = NULL;
        m->pub.frames = NULL;
        m->held[0] = m->held[1] = NULL;
        rt->threads.fork_purge = true;
    }
    return torn; /* (never during a GC: all other threads were SAFE then) */
}

void tn_threads_fork_prepare(tenure_runtime *rt) {
    tn_lock(rt);
    pthread_mutex_lock(&rt->threads.world_mx);
}

void tn_threads_fork_parent(tenure_runtime *rt) {
    pthread_mutex_unlock(&rt->threads.world_mx);
    tn_unlock(rt);
}

bool tn_threads_init(tenure_runtime *rt) {
    if (pthread_mutex_init(&rt->threads.lock, NULL))
        return false;
    if (pthread_mutex_init(&rt->threads.world_mx, NULL)) {
        pthread_mutex_destroy(&rt->threads.lock);
        return false;
    }
    if (pthread_mutex_init(&rt->threads.team_lock, NULL)) {
        pthread_mutex_destroy(&rt->threads.world_mx);
        pthread_mutex_destroy(&rt->threads.lock);
        return false;
    }
    pthread_cond_init(&rt->threads.world_cv, NULL);
    rt->threads.lock_spins = tn_os_cpus_allowed(NULL) > 1 ? TN_LOCK_SPINS : 0;
    rt->threads.locks_ready = true;
    return tn_mutator_attach(rt, false) != NULL;
}

bool tn_threads_may_destroy(tenure_runtime *rt) {
    if (!rt->threads.locks_ready)
        return true;
    tn_mutator *self = tn_self(rt);
    if ((self && tn_finalize_runs_on(rt, self)) || tn_gc_in_progress(rt)) {
        tn_api_fail(rt, TENURE_STATE, "tenure_destroy", "called from a finalizer or during a collection");
        return false;
    }
    size_t others = 0;
    {
        TN_LOCKED(rt);
        for (tn_mutator *m = rt->threads.mutators; m; m = m->next)
            others += m != self && !m->finalizer;
    }
    if (others)
        tn_api_fail(rt, TENURE_STATE, "tenure_destroy",
                    "%zu other thread(s) still attached: the instance is left alive (detach them first)", others);
    return others == 0;
}

void tn_threads_destroy(tenure_runtime *rt) {
    if (!rt->threads.locks_ready)
        return;
    tn_mutator *self = tn_self(rt);
    if (self) {
        self->attach_count = 1;
        tn_mutator_detach(rt, self);
    }
    while (rt->threads.mutators) { /* threads that are gone (the finalizer thread is joined) */
        tn_mutator *m = rt->threads.mutators;
        rt->threads.mutators = m->next;
        free(m);
    }
    pthread_cond_destroy(&rt->threads.world_cv);
    pthread_mutex_destroy(&rt->threads.team_lock);
    pthread_mutex_destroy(&rt->threads.world_mx);
    pthread_mutex_destroy(&rt->threads.lock);
    rt->threads.locks_ready = false;
}
