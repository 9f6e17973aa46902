/* finalize.c - finalization: registered objects, the ready queue, running finalizers.
 *
 * `finalizable` holds every registered object that has not been found unreachable (weak
 * references: marking does not trace them; relocation updates them). After marking, an entry
 * whose object is unmarked in a condemned region moves to `ready`, which is a root: marking
 * then traces from it, so the object and everything it reaches survive ("resurrection") until
 * its finalizer has run.
 *
 * Who runs finalizers (GCFinalizeMode): 0, the instance's finalizer thread, an attached
 * thread that sleeps SAFE on fin_work until a GC queues something; 1, whoever calls
 * tenure_run_pending_finalizers; 2, the allocating thread at its slow path and after
 * tenure_collect. Invariants:
 *  F1 One thread at a time runs finalizers (rt->lifetime.fin_runner), in queue order, never nested.
 *  F2 Only the runner advances ready_head, and only with rt->threads.lock held; finalizers themselves
 *     run without the lock (they allocate, block, take the program's locks).
 *  F3 An entry stays in the queue (a root, relocated by GCs) until its finalizer returned.
 *  F4 fin_done counts entries taken off the queue (run, suppressed or discarded); a waiter for
 *     the finalizers pending at some moment waits until fin_done reaches fin_queued then.
 *  F5 ready.cap >= ready.count + finalizable.count: registration reserves the queue's room, so
 *     that a GC moves every registered object found dead to the queue without allocating
 *     (nothing is allocated inside a pause: docs/design/collector.md). A GC only moves entries
 *     from one list to the other; the queue's count drops to 0 when it empties. */
#include "runtime.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void **entries(tn_vec *v) { return (void **)v->data; }

bool tn_finalize_register(tenure_runtime *rt, void *obj) {
    if (!tn_vec_reserve(&rt->lifetime.ready, rt->lifetime.ready.count + rt->lifetime.finalizable.count + 1)) /* F5 */
        return false;
    void **slot = tn_vec_push(&rt->lifetime.finalizable);
    if (!slot)
        return false;
    *slot = obj;
    return true;
}

void tn_finalize_visit_ready(tenure_runtime *rt, tn_slot_fn fn, void *ctx) {
    for (size_t i = rt->lifetime.ready_head; i < rt->lifetime.ready.count; i++)
        if (entries(&rt->lifetime.ready)[i])
            fn(&entries(&rt->lifetime.ready)[i], ctx);
}

void tn_finalize_visit_registered(tenure_runtime *rt, tn_slot_fn fn, void *ctx) {
    for (size_t i = 0; i < rt->lifetime.finalizable.count; i++)
        fn(&entries(&rt->lifetime.finalizable)[i], ctx);
}

/* Two passes, as the .NET collector does: first every unreachable registered object moves to
 * the queue (an object reachable only from another finalizable object is finalizable too),
 * then the queued objects are marked through. */
size_t tn_finalize_scan(tenure_runtime *rt, bool (*dead)(tenure_runtime *, const void *),
                        void (*queued)(tenure_runtime *, void **)) {
    tn_assert_world_stopped(rt);
    size_t kept = 0, first = rt->lifetime.ready.count;
    void **reg = entries(&rt->lifetime.finalizable);
    for (size_t i = 0; i < rt->lifetime.finalizable.count; i++) {
        void *obj = reg[i];
        void **slot = dead(rt, obj) ? tn_vec_push_reserved(&rt->lifetime.ready) : NULL;
        if (!slot) { /* alive (the queue has room for every dead one: F5) */
            reg[kept++] = obj;
            continue;
        }
        *slot = obj;
    }
    rt->lifetime.finalizable.count = kept;
    for (size_t i = first; i < rt->lifetime.ready.count; i++)
        queued(rt, &entries(&rt->lifetime.ready)[i]);
    rt->lifetime.fin_queued += rt->lifetime.ready.count - first;
    return rt->lifetime.ready.count - first;
}

static bool queue_empty(const tenure_runtime *rt) { return rt->lifetime.ready_head == rt->lifetime.ready.count; }

/* An entry is off the queue (F4). */
static void entry_done(tenure_runtime *rt) {
    tn_assert_locked(rt); /* F2 */
    rt->lifetime.ready_head++;
    rt->lifetime.fin_done++;
    if (queue_empty(rt))
        rt->lifetime.ready.count = rt->lifetime.ready_head = 0;
    if (rt->lifetime.conds_ready)
        pthread_cond_broadcast(&rt->lifetime.fin_idle);
}

/* Run every pending finalizer on the calling thread, unless another thread is running them
 * (F1). Called without rt->threads.lock held. */
static size_t run_pending(tenure_runtime *rt) {
    tn_mutator *self = tn_self(rt);
    if (!self)
        return 0;
    TN_LOCKED(rt);
    if (rt->lifetime.fin_runner || tn_gc_in_progress(rt) || queue_empty(rt))
        return 0;
    rt->lifetime.fin_runner = self;
    TN_EMIT(rt, GCFinalizersBegin_V1, .ClrInstanceID = 0);
    size_t ran = 0;
    while (!queue_empty(rt)) {
        void *obj = entries(&rt->lifetime.ready)[rt->lifetime.ready_head];
        if (obj) {
            void (*finalize)(tenure_runtime *, void *) = tn_obj_type(obj)->finalize;
            tn_unlock(rt); /* F2; obj stays queued meanwhile (F3) */
            tn_cb_frame frame;
            tn_cb_push(&frame, rt, TN_CB_FINALIZER);
            finalize(rt, obj);
            tn_cb_pop(&frame);
            tn_lock(rt);
            ran++;
        }
        entry_done(rt);
    }
    rt->stats.finalizers_run += ran;
    TN_EMIT(rt, GCFinalizersEnd_V1, .Count = (uint32_t)ran);
    rt->lifetime.fin_runner = NULL;
    return ran;
}

size_t tenure_run_pending_finalizers(tenure_runtime *rt) {
    static const char fn[] = "tenure_run_pending_finalizers";
    if (!rt || tn_cb_refused(rt, TN_OP_COLLECT, fn))
        return 0;
    if (rt->config.GCFinalizeMode == 0)
        return 0; /* the finalizer thread runs them */
    if (!tn_self(rt)) {
        tn_api_fail(rt, TENURE_STATE, fn, "the calling thread is not attached");
        return 0;
    }
    {
        TN_LOCKED(rt);
        if (tn_gc_in_progress(rt)) {
            tn_api_fail(rt, TENURE_STATE, fn, "called during a collection");
            return 0;
        }
    }
    return run_pending(rt);
}

size_t tenure_pending_finalizers(const tenure_runtime *crt) {
    tenure_runtime *rt = (tenure_runtime *)crt;
    TN_LOCKED(rt);
    return rt ? rt->lifetime.ready.count - rt->lifetime.ready_head : 0;
}

void tn_finalize_safepoint(tenure_runtime *rt) {
    if (rt->config.GCFinalizeMode == 2)
        run_pending(rt);
}

uint64_t tn_finalize_queued_total(const tenure_runtime *rt) { return rt->lifetime.fin_queued; }

size_t tn_finalize_ready_count(const tenure_runtime *rt) { return rt->lifetime.ready.count - rt->lifetime.ready_head; }

size_t tn_finalize_registered_count(const tenure_runtime *rt) { return rt->lifetime.finalizable.count; }

bool tn_finalize_runs_on(const tenure_runtime *rt, const tn_mutator *m) {
    return m->finalizer || m == rt->lifetime.fin_runner;
}

void tn_finalize_notify(tenure_runtime *rt) {
    tn_assert_locked(rt);
    if (rt->lifetime.fin_started)
        pthread_cond_signal(&rt->lifetime.fin_work);
}

/* The finalizer thread: attached for its whole life, SAFE while it waits for work. It drains
 * the queue before it stops (tn_finalize_stop_thread empties it first if finalizers are to
 * be discarded). */
static void *finalizer_main(void *arg) {
    tenure_runtime *rt = arg;
    tn_mutator *self = tn_self(rt); /* attached by the starter, on this thread (below) */
    tn_lock(rt);
    for (;;) {
        if (!queue_empty(rt)) {
            tn_unlock(rt);
            run_pending(rt);
            tn_lock(rt);
            continue;
        }
        if (rt->lifetime.fin_stop)
            break;
        tn_wait_safe(rt, &rt->lifetime.fin_work);
    }
    tn_unlock(rt);
    self->attach_count = 1;
    tn_mutator_detach(rt, self);
    return NULL;
}

typedef struct fin_start {
    tenure_runtime *rt;
    pthread_mutex_t mx;
    pthread_cond_t cv;
    int state; /* 0 starting, 1 attached, -1 failed */
} fin_start;

static void *finalizer_entry(void *arg) {
    fin_start *st = arg;
    tenure_runtime *rt = st->rt;
    tn_mutator *m = tn_mutator_attach(rt, true);
    pthread_mutex_lock(&st->mx);
    st->state = m ? 1 : -1;
    pthread_cond_signal(&st->cv);
    pthread_mutex_unlock(&st->mx);
    return m ? finalizer_main(rt) : NULL;
}

/* After fork(), in the child: nobody waits for the thread to attach (the forking thread holds
 * rt->threads.lock, which attaching takes). */
static void *finalizer_entry_detached_start(void *arg) {
    tenure_runtime *rt = arg;
    tn_mutator *m = tn_mutator_attach(rt, true);
    if (!m) {
        TN_LOCKED(rt);
        if (rt->lifetime.fin_stop)
            return NULL;                  /* tenure_destroy is about to join it */
        rt->lifetime.fin_started = false; /* finalizers run on the threads that wait for them */
        pthread_detach(pthread_self());   /* and nobody joins this one */
        pthread_cond_broadcast(&rt->lifetime.fin_idle);
        return NULL;
    }
    return finalizer_main(rt);
}

/* Called by tenure_create on the creating thread, before anything else can use rt. The
 * thread is attached before this returns, so tenure_thread_count counts it at once.
 * Returns 0, or the error of pthread_create (ENOMEM when the thread could not attach). */
int tn_finalize_start_thread(tenure_runtime *rt) {
    fin_start st = {.rt = rt, .state = 0};
    pthread_mutex_init(&st.mx, NULL);
    pthread_cond_init(&st.cv, NULL);
    int err = pthread_create(&rt->lifetime.fin_thread, NULL, finalizer_entry, &st);
    if (!err) {
        pthread_mutex_lock(&st.mx);
        while (st.state == 0)
            pthread_cond_wait(&st.cv, &st.mx);
        pthread_mutex_unlock(&st.mx);
        if (st.state < 0) {
            pthread_join(rt->lifetime.fin_thread, NULL);
            err = ENOMEM;
        }
    }
    pthread_cond_destroy(&st.cv);
    pthread_mutex_destroy(&st.mx);
    rt->lifetime.fin_started = err == 0;
    return err;
}

/* ThreadSanitizer cannot start a thread in a forked child (base/base.h): there the child
 * runs finalizers as below. */
#define TN_FORK_RESTARTS_FINALIZER (!TN_UNDER_TSAN)

/* In the child of fork() (rt->threads.lock held, the other threads gone): a new finalizer thread for
 * the child's copy of the instance. If none can be started, the finalizers run on the thread
 * that waits for them (tenure_wait_for_pending_finalizers, tenure_destroy), as in mode 1. */
void tn_finalize_forked_child(tenure_runtime *rt) {
    tn_assert_locked(rt);
    pthread_cond_init(&rt->lifetime.fin_work, NULL); /* a thread gone with the fork may have waited */
    pthread_cond_init(&rt->lifetime.fin_idle, NULL);
    tn_mutator *self = tn_self(rt);
    if (!rt->lifetime.fin_started || (self && self->finalizer))
        return; /* no thread, or the finalizer thread itself forked: it goes on in the child */
    rt->lifetime.fin_started = false;
    if (rt->lifetime.fin_stop || !TN_FORK_RESTARTS_FINALIZER)
        return; /* forked while another thread destroyed the instance, or under TSan */
    int err = pthread_create(&rt->lifetime.fin_thread, NULL, finalizer_entry_detached_start, rt);
    if (err)
        fprintf(stderr,
                "tenure: after fork(): the finalizer thread could not be restarted (%s); finalizers "
                "run in tenure_wait_for_pending_finalizers and tenure_destroy\n",
                strerror(err));
    rt->lifetime.fin_started = err == 0;
}

/* In the child of fork(), at the first moment no GC runs: the finalizer that a thread gone
 * with the fork was running is not run again here (it completes in the parent). */
void tn_finalize_forget_runner(tenure_runtime *rt, const tn_mutator *gone) {
    if (!rt->lifetime.fin_runner || rt->lifetime.fin_runner != gone)
        return;
    rt->lifetime.fin_runner = NULL;
    entry_done(rt);
}

static void join_finalizer(tenure_runtime *rt, void *unused) {
    (void)unused;
    pthread_join(rt->lifetime.fin_thread, NULL);
}

void tn_finalize_stop_thread(tenure_runtime *rt) {
    {
        TN_LOCKED(rt);
        if (!rt->lifetime.fin_started)
            return;
        if (!rt->config.GCFinalizeOnShutdown) /* discarded; a running one stays queued (F3) */
            for (size_t i = rt->lifetime.ready_head + (rt->lifetime.fin_runner ? 1 : 0); i < rt->lifetime.ready.count;
                 i++)
                entries(&rt->lifetime.ready)[i] = NULL;
        rt->lifetime.fin_stop = true;
        pthread_cond_signal(&rt->lifetime.fin_work);
    }
    tn_while_safe(rt, join_finalizer, NULL); /* its last finalizers may collect meanwhile */
    rt->lifetime.fin_started = false;
}

static bool finalizer_thread_running(tenure_runtime *rt) {
    TN_LOCKED(rt);
    return rt->lifetime.fin_started;
}

/* Collect fully; the finalizers pending then are those up to fin_queued (F4). */
static tenure_result collect_for_wait(tenure_runtime *rt, uint64_t *target) {
    TN_LOCKED(rt);
    tn_mutator *self = tn_self(rt);
    if (tn_gc_in_progress(rt) || (self && (self == rt->lifetime.fin_runner || self->finalizer)))
        return tn_api_fail(rt, TENURE_STATE, "tenure_wait_for_pending_finalizers",
                           "called during a collection or from a finalizer");
    tenure_result r = tn_gc_collect(rt, TN_GEN2, TN_REASON_INDUCED, 0);
    *target = rt->lifetime.fin_queued;
    return r;
}

tenure_result tenure_wait_for_pending_finalizers(tenure_runtime *rt) {
    if (!rt)
        return TENURE_INVALID_ARGUMENT;
    if (tn_cb_refused(rt, TN_OP_WAIT_FIN | TN_OP_COLLECT, "tenure_wait_for_pending_finalizers"))
        return TENURE_STATE;
    uint64_t target = 0;
    tenure_result r = collect_for_wait(rt, &target);
    if (r != TENURE_OK)
        return r;
    if (rt->config.GCFinalizeMode != 0 || !finalizer_thread_running(rt))
        run_pending(rt); /* mode 0 without its thread (it could not be restarted after fork) */
    TN_LOCKED(rt);
    while (rt->lifetime.fin_done < target &&
           (rt->lifetime.fin_runner || finalizer_thread_running(rt))) /* another thread runs them */
        tn_wait_safe(rt, &rt->lifetime.fin_idle);
    return r;
}

static bool check_finalizable(tenure_runtime *rt, void *obj, const char *fn) {
    if (!tn_is_object(rt, obj)) {
        tn_api_fail(rt, TENURE_INVALID_OBJECT, fn, "%p is not an object of this instance", obj);
        return false;
    }
    if (!tn_obj_type(obj)->finalize) {
        tn_api_fail(rt, TENURE_INVALID_TYPE, fn, "%s is not a finalizable type", tn_obj_type(obj)->name);
        return false;
    }
    return true;
}

/* obj's index in the registry, or SIZE_MAX */
static size_t find_registered(tenure_runtime *rt, const void *obj) {
    void **reg = entries(&rt->lifetime.finalizable);
    for (size_t i = 0; i < rt->lifetime.finalizable.count; i++)
        if (reg[i] == obj)
            return i;
    return SIZE_MAX;
}

tenure_result tenure_suppress_finalize(tenure_runtime *rt, void *obj) {
    static const char fn[] = "tenure_suppress_finalize";
    if (!rt)
        return TENURE_INVALID_ARGUMENT;
    if (tn_cb_refused(rt, TN_OP_CHANGE, fn))
        return TENURE_STATE;
    TN_LOCKED_HOLDING(rt, obj, NULL);
    if (!check_finalizable(rt, obj, fn))
        return rt->services.last_error;
    size_t i = find_registered(rt, obj);
    if (i != SIZE_MAX)
        entries(&rt->lifetime.finalizable)[i] = entries(&rt->lifetime.finalizable)[--rt->lifetime.finalizable.count];
    /* found dead and not run yet (also when registered again since): cancelled too */
    for (i = rt->lifetime.ready_head; i < rt->lifetime.ready.count; i++)
        if (entries(&rt->lifetime.ready)[i] == obj && !(rt->lifetime.fin_runner && i == rt->lifetime.ready_head))
            entries(&rt->lifetime.ready)[i] = NULL;
    return TENURE_OK;
}

tenure_result tenure_reregister_for_finalize(tenure_runtime *rt, void *obj) {
    static const char fn[] = "tenure_reregister_for_finalize";
    if (!rt)
        return TENURE_INVALID_ARGUMENT;
    if (tn_cb_refused(rt, TN_OP_CHANGE, fn))
        return TENURE_STATE;
    TN_LOCKED_HOLDING(rt, obj, NULL);
    if (!check_finalizable(rt, obj, fn))
        return rt->services.last_error;
    if (find_registered(rt, obj) != SIZE_MAX)
        return TENURE_OK;
    return tn_finalize_register(rt, obj) ? TENURE_OK : tn_api_fail(rt, TENURE_NOMEM, fn, "out of memory");
}

/* Modes 1 and 2 (and mode 0 once its thread is gone): the pending finalizers run on the
 * destroying thread, or are discarded. */
void tn_finalize_shutdown(tenure_runtime *rt) {
    if (rt->config.GCFinalizeOnShutdown && !tn_gc_in_progress(rt))
        run_pending(rt);
    tn_vec_free(&rt->lifetime.finalizable);
    tn_vec_free(&rt->lifetime.ready);
    rt->lifetime.ready_head = 0;
}
