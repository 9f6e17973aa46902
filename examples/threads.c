/* threads.c - mutator threads sharing one instance: producers build messages (small object
 * graphs) and hand them to consumers through a queue of strong handles.
 *
 * What it shows:
 *  - every thread that touches objects is attached (tenure_thread_attach / detach); the
 *    creating thread detaches while the workers run and attaches again to clean up;
 *  - a thread that waits for something outside the instance (the queue's mutex and condition
 *    variable) does so inside a blocking section, so that collections started by the other
 *    threads never wait for it;
 *  - objects cross threads as handles (a handle is a root that any attached thread may read);
 *  - finalizers run on the instance's finalizer thread (GCFinalizeMode 0, the default). */
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <tenure.h>

enum { PRODUCERS = 2, CONSUMERS = 2, MESSAGES = 50000, PARTS = 32, QUEUE = 64 };

typedef struct part {
    tenure_header h;
    struct part *next;
    long value;
} part;
typedef struct message {
    tenure_header h;
    struct part *parts;
    long id;
} message;

static tenure_runtime *rt;
static const tenure_type *part_t, *message_t;

/* A bounded queue of handles, guarded by a plain mutex. */
static struct {
    pthread_mutex_t mx;
    pthread_cond_t changed;
    tenure_handle *slots[QUEUE];
    int head, count, producers_left;
} q = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, {0}, 0, 0, PRODUCERS};

static long finalized; /* messages whose finalizer ran (on the finalizer thread) */
static void message_finalized(tenure_runtime *r, void *obj) {
    (void)r;
    (void)obj;
    __atomic_fetch_add(&finalized, 1, __ATOMIC_RELAXED);
}

/* Take the queue's lock as an attached thread must: blocked while it waits. */
static void queue_lock(void) {
    tenure_blocking_enter(rt);
    pthread_mutex_lock(&q.mx);
    tenure_blocking_leave(rt);
}

/* Wait for the condition the same way (the mutex is held, the thread touches no object). */
static void queue_wait(void) {
    tenure_blocking_enter(rt);
    pthread_cond_wait(&q.changed, &q.mx);
    tenure_blocking_leave(rt);
}

static message *build(long id) {
    message *m = NULL;
    part *p = NULL;
    TENURE_FRAME(rt, f, m, p);
    m = tenure_alloc(rt, message_t);
    m->id = id;
    for (long i = 0; i < PARTS; i++) {
        p = tenure_alloc(rt, part_t);
        p->value = id * PARTS + i;
        tenure_write_ref(rt, p, &p->next, m->parts);
        tenure_write_ref(rt, m, &m->parts, p);
    }
    TENURE_FRAME_POP(rt, f);
    return m;
}

static void *producer(void *arg) {
    long first = (long)(size_t)arg;
    tenure_thread_attach(rt);
    for (long id = first; id < MESSAGES; id += PRODUCERS) {
        tenure_handle *h = tenure_handle_new(rt, TENURE_HANDLE_STRONG, build(id));
        queue_lock();
        while (q.count == QUEUE)
            queue_wait();
        q.slots[(q.head + q.count++) % QUEUE] = h;
        pthread_cond_broadcast(&q.changed);
        pthread_mutex_unlock(&q.mx);
    }
    queue_lock();
    q.producers_left--;
    pthread_cond_broadcast(&q.changed);
    pthread_mutex_unlock(&q.mx);
    tenure_thread_detach(rt);
    return NULL;
}

typedef struct tally {
    long messages, sum, bad;
} tally;

static void *consumer(void *arg) {
    tally *t = arg;
    tenure_thread_attach(rt);
    for (;;) {
        queue_lock();
        while (q.count == 0 && q.producers_left > 0)
            queue_wait();
        if (q.count == 0) {
            pthread_mutex_unlock(&q.mx);
            break;
        }
        tenure_handle *h = q.slots[q.head];
        q.head = (q.head + 1) % QUEUE;
        q.count--;
        pthread_cond_broadcast(&q.changed);
        pthread_mutex_unlock(&q.mx);
        message *m = tenure_handle_get(rt, h);
        long n = 0;
        for (part *p = m->parts; p; p = p->next, n++)
            t->sum += p->value;
        t->bad += n != PARTS;
        t->messages++;
        tenure_handle_free(rt, h); /* the message is garbage now */
        tenure_alloc(rt, part_t);  /* some allocation of its own (and a safepoint) */
    }
    tenure_thread_detach(rt);
    return NULL;
}

int main(void) {
    rt = tenure_create(NULL, NULL);
    part_t = tenure_type_register(rt, &(tenure_type_desc){.name = "part",
                                                          .size = sizeof(part),
                                                          .ref_offsets = (size_t[]){offsetof(part, next)},
                                                          .ref_count = 1});
    message_t = tenure_type_register(rt, &(tenure_type_desc){.name = "message",
                                                             .size = sizeof(message),
                                                             .ref_offsets = (size_t[]){offsetof(message, parts)},
                                                             .ref_count = 1,
                                                             .flags = TENURE_TYPE_FINALIZABLE,
                                                             .finalize = message_finalized});
    tenure_thread_detach(rt); /* the main thread only waits from here on */
    pthread_t th[PRODUCERS + CONSUMERS];
    tally tallies[CONSUMERS] = {{0}};
    for (long i = 0; i < PRODUCERS; i++)
        pthread_create(&th[i], NULL, producer, (void *)(size_t)i);
    for (int i = 0; i < CONSUMERS; i++)
        pthread_create(&th[PRODUCERS + i], NULL, consumer, &tallies[i]);
    for (int i = 0; i < PRODUCERS + CONSUMERS; i++)
        pthread_join(th[i], NULL);
    tenure_thread_attach(rt);
    tenure_wait_for_pending_finalizers(rt);
    long messages = 0, sum = 0, bad = 0;
    for (int i = 0; i < CONSUMERS; i++) {
        messages += tallies[i].messages;
        sum += tallies[i].sum;
        bad += tallies[i].bad;
    }
    long n = (long)MESSAGES * PARTS;
    tenure_stats s;
    tenure_get_stats(rt, &s);
    printf("%ld messages consumed, %ld broken, part sum %s, %ld finalized, %llu GCs\n", messages, bad,
           sum == n * (n - 1) / 2 ? "ok" : "WRONG", __atomic_load_n(&finalized, __ATOMIC_RELAXED),
           (unsigned long long)s.gc_count);
    tenure_destroy(rt);
    return messages == MESSAGES && bad == 0 && sum == n * (n - 1) / 2 ? 0 : 1;
}
