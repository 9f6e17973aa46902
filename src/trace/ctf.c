/* ctf.c - the CTF 1.8 sink: a trace directory with a metadata file and one stream file per
 * emitting thread, written in whole packets that babeltrace2 reads.
 *
 * Each thread fills its own packets in a ring of RING buffers (single producer); a writer
 * thread per session writes completed packets out (one consumer at a time). The emitting
 * thread never waits for the writer: when its ring is full it writes the ring out itself if
 * the writer is idle (a trylock), and otherwise drops the event and counts it; the count goes
 * into the next packet's events_discarded. A packet is completed when full, at every GC end
 * (tn_ctf_flush, which also writes the completed packets itself, after the writer's write in
 * progress if there is one: the world is stopped anyway, and a process killed after a GC then
 * leaves a trace that holds that GC), and when its first event is older than 100 ms.
 *
 * Every packet is exactly one page (4 KiB, padded: content_size < packet_size) and is written
 * at a page-aligned offset with its own write(). A process killed in the middle of a write
 * can only leave whole pages behind, so the stream file always ends on a packet boundary and
 * the trace stays readable up to its last written packet. */
#include "runtime.h"
#include "trace/trace.h"
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define PKT_CAP 4096u /* one page: see above */
#define RING 256u
#define FLUSH_RESERVE 16u /* a GC-end flush leaves this many packets free for bursts of events */
#define HEADER_SIZE 24u  /* magic, uuid, stream_id */
#define CONTEXT_SIZE 56u /* timestamp_begin/end, content_size, packet_size, seq, discarded, tid */
#define EVENT_HEADER 10u /* id u16, timestamp u64 */
#define FLUSH_AGE_NS 100000000ull
#define CTF_MAGIC 0xC1FC1FC1u

typedef struct packet {
    uint8_t data[PKT_CAP];
    size_t size;
    uint64_t ts_begin, ts_end;
} packet;

typedef struct stream {
    uint64_t tid;
    int fd;
    packet *ring;
    atomic_uint_fast64_t head; /* packets completed by the producer */
    atomic_uint_fast64_t tail; /* packets written by the writer */
    bool open;                 /* ring[head % RING] is being filled */
    uint64_t seq;
    uint64_t discarded;
} stream;

struct tn_ctf {
    uint64_t serial;
    char dir[4096];
    uint8_t uuid[16];
    pthread_mutex_t lock; /* guards `streams` growth */
    stream **streams;
    atomic_size_t nstreams;
    size_t cap;
    pthread_t writer;
    pthread_mutex_t drain_lock; /* one consumer at a time: the writer or a GC-end flush */
    pthread_mutex_t wlock;
    pthread_cond_t wake;
    bool stop, signalled;
    atomic_uint_fast64_t discarded;
};

static atomic_uint_fast64_t next_serial; /* identifies sinks in the per-thread cache */
static _Thread_local struct {
    uint64_t serial;
    stream *s;
    uint64_t tid;
} tls_cache;

/* ---- metadata ---- */

static const char *ctf_type(tenure_field_type t) {
    switch (t) {
    case TENURE_FIELD_U16: return "uint16_t";
    case TENURE_FIELD_U32: return "uint32_t";
    case TENURE_FIELD_I32: return "int32_t";
    case TENURE_FIELD_U64: return "uint64_t";
    case TENURE_FIELD_PTR: return "ptr_t";
    default: return NULL;
    }
}

static void uuid_text(const uint8_t *u, char *out) {
    sprintf(out, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0], u[1], u[2], u[3], u[4],
            u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
}

static void write_event_class(FILE *f, const tenure_event_desc *d) {
    fprintf(f, "event {\n\tname = \"DotNETRuntime:%s\";\n\tid = %u;\n\tstream_id = 0;\n\tfields := struct {\n", d->name,
            (unsigned)d->id);
    for (size_t i = 0; i < d->field_count; i++) {
        const tenure_event_field *fl = &d->fields[i];
        if (ctf_type(fl->type)) {
            fprintf(f, "\t\t%s %s;\n", ctf_type(fl->type), fl->name);
        } else if (fl->type == TENURE_FIELD_STRING) {
            fprintf(f, "\t\tstring %s;\n", fl->name);
        } else if (fl->type == TENURE_FIELD_U32_ARRAY) {
            fprintf(f, "\t\tuint32_t %s[Count];\n", fl->name);
        } else {
            fprintf(f, "\t\tstruct {\n");
            for (size_t k = 0; k < fl->record_field_count; k++)
                fprintf(f, "\t\t\tuint64_t %s;\n", fl->record_fields[k]);
            fprintf(f, "\t\t} %s[Count];\n", fl->name);
        }
    }
    fprintf(f, "\t};\n};\n\n");
}

static bool write_metadata(tn_ctf *c) {
    char path[4200], uuid[40];
    snprintf(path, sizeof path, "%s/metadata", c->dir);
    FILE *f = fopen(path, "w");
    if (!f)
        return false;
    uuid_text(c->uuid, uuid);
    struct timespec rt, mono;
    clock_gettime(CLOCK_REALTIME, &rt);
    clock_gettime(CLOCK_MONOTONIC, &mono);
    int64_t off = ((int64_t)rt.tv_sec - mono.tv_sec) * 1000000000 + (rt.tv_nsec - mono.tv_nsec);
    char host[256] = "unknown";
    gethostname(host, sizeof host - 1);
    fprintf(f,
            "/* CTF 1.8 */\n\n"
            "typealias integer { size = 8; align = 8; signed = false; } := uint8_t;\n"
            "typealias integer { size = 16; align = 8; signed = false; } := uint16_t;\n"
            "typealias integer { size = 32; align = 8; signed = false; } := uint32_t;\n"
            "typealias integer { size = 32; align = 8; signed = true; } := int32_t;\n"
            "typealias integer { size = 64; align = 8; signed = false; } := uint64_t;\n"
            "typealias integer { size = 64; align = 8; signed = false; base = 16; } := ptr_t;\n\n"
            "trace {\n\tmajor = 1;\n\tminor = 8;\n\tuuid = \"%s\";\n\tbyte_order = le;\n"
            "\tpacket.header := struct {\n\t\tuint32_t magic;\n\t\tuint8_t uuid[16];\n\t\tuint32_t stream_id;\n\t};\n};\n\n"
            "env {\n\ttracer_name = \"tenure\";\n\ttracer_major = 0;\n\ttracer_minor = 1;\n\thostname = \"%s\";\n"
            "\tprovider = \"DotNETRuntime\";\n\tvpid = %ld;\n};\n\n"
            "clock {\n\tname = \"monotonic\";\n\tuuid = \"%s\";\n\tdescription = \"CLOCK_MONOTONIC\";\n"
            "\tfreq = 1000000000;\n\tprecision = 1;\n\toffset_s = %lld;\n\toffset = %lld;\n\tabsolute = TRUE;\n};\n\n"
            "typealias integer { size = 64; align = 8; signed = false; map = clock.monotonic.value; } := "
            "uint64_clock_monotonic_t;\n\n"
            "stream {\n\tid = 0;\n\tpacket.context := struct {\n\t\tuint64_clock_monotonic_t timestamp_begin;\n"
            "\t\tuint64_clock_monotonic_t timestamp_end;\n\t\tuint64_t content_size;\n\t\tuint64_t packet_size;\n"
            "\t\tuint64_t packet_seq_num;\n\t\tuint64_t events_discarded;\n\t\tuint64_t tid;\n\t};\n"
            "\tevent.header := struct {\n\t\tuint16_t id;\n\t\tuint64_clock_monotonic_t timestamp;\n\t};\n};\n\n",
            uuid, host, (long)getpid(), uuid, (long long)(off / 1000000000), (long long)(off % 1000000000));
    for (size_t i = 0; i < tenure_event_count(); i++)
        write_event_class(f, tenure_event_get(i));
    bool ok = !ferror(f);
    return fclose(f) == 0 && ok;
}

static void drain_locked(tn_ctf *c);

/* ---- packets ---- */

static void put_at(uint8_t *p, const void *v, size_t n) { memcpy(p, v, n); }

static void begin_packet(tn_ctf *c, stream *s, uint64_t ts) {
    packet *p = &s->ring[atomic_load_explicit(&s->head, memory_order_relaxed) % RING];
    uint32_t magic = CTF_MAGIC, stream_id = 0;
    put_at(p->data, &magic, 4);
    put_at(p->data + 4, c->uuid, 16);
    put_at(p->data + 20, &stream_id, 4);
    p->size = HEADER_SIZE + CONTEXT_SIZE;
    p->ts_begin = p->ts_end = ts;
    s->open = true;
}

static void wake_writer(tn_ctf *c) {
    pthread_mutex_lock(&c->wlock);
    c->signalled = true;
    pthread_cond_signal(&c->wake);
    pthread_mutex_unlock(&c->wlock);
}

/* Fill in the packet context and hand the packet to the writer. */
static void complete_packet(tn_ctf *c, stream *s) {
    uint64_t head = atomic_load_explicit(&s->head, memory_order_relaxed);
    packet *p = &s->ring[head % RING];
    uint64_t ctx[7] = {p->ts_begin, p->ts_end, (uint64_t)p->size * 8, (uint64_t)PKT_CAP * 8, s->seq++, s->discarded,
                       s->tid};
    memset(p->data + p->size, 0, PKT_CAP - p->size); /* padding */
    put_at(p->data + HEADER_SIZE, ctx, sizeof ctx);
    s->open = false;
    atomic_store_explicit(&s->head, head + 1, memory_order_release);
    (void)c;
}

static stream *new_stream(tn_ctf *c, uint64_t tid) {
    stream *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->ring = malloc(RING * sizeof *s->ring);
    char path[4200];
    snprintf(path, sizeof path, "%s/stream_%llu", c->dir, (unsigned long long)tid);
    s->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (!s->ring || s->fd < 0) {
        if (s->fd >= 0)
            close(s->fd);
        free(s->ring);
        free(s);
        return NULL;
    }
    s->tid = tid;
    pthread_mutex_lock(&c->lock);
    if (atomic_load(&c->nstreams) == c->cap) {
        size_t cap = c->cap ? 2 * c->cap : 8;
        stream **n = realloc(c->streams, cap * sizeof *n);
        if (!n) {
            pthread_mutex_unlock(&c->lock);
            close(s->fd);
            free(s->ring);
            free(s);
            return NULL;
        }
        c->streams = n;
        c->cap = cap;
    }
    c->streams[atomic_load(&c->nstreams)] = s;
    atomic_fetch_add(&c->nstreams, 1);
    pthread_mutex_unlock(&c->lock);
    return s;
}

/* The calling thread's stream in c (created on its first event). */
static stream *my_stream(tn_ctf *c) {
    if (tls_cache.serial == c->serial && tls_cache.s)
        return tls_cache.s;
    if (!tls_cache.tid)
        tls_cache.tid = tn_trace_tid();
    stream *s = NULL;
    pthread_mutex_lock(&c->lock);
    for (size_t i = 0; i < atomic_load(&c->nstreams); i++)
        if (c->streams[i]->tid == tls_cache.tid)
            s = c->streams[i];
    pthread_mutex_unlock(&c->lock);
    if (!s)
        s = new_stream(c, tls_cache.tid);
    if (s) {
        tls_cache.serial = c->serial;
        tls_cache.s = s;
    }
    return s;
}

static bool ring_full(stream *s) {
    return atomic_load_explicit(&s->head, memory_order_relaxed) -
               atomic_load_explicit(&s->tail, memory_order_acquire) >= RING;
}

void tn_ctf_write(tn_ctf *c, uint64_t ts, uint16_t id, const void *payload, size_t size) {
    stream *s = my_stream(c);
    size_t need = EVENT_HEADER + size;
    if (!s || need > PKT_CAP - HEADER_SIZE - CONTEXT_SIZE) {
        atomic_fetch_add(&c->discarded, 1);
        if (s)
            s->discarded++;
        return;
    }
    packet *p = s->open ? &s->ring[atomic_load_explicit(&s->head, memory_order_relaxed) % RING] : NULL;
    if (p && (p->size + need > PKT_CAP || ts - p->ts_begin > FLUSH_AGE_NS)) {
        complete_packet(c, s);
        wake_writer(c);
        p = NULL;
    }
    if (!p) {
        if (ring_full(s) && pthread_mutex_trylock(&c->drain_lock) == 0) {
            drain_locked(c); /* the writer is idle: write the ring out here rather than drop */
            pthread_mutex_unlock(&c->drain_lock);
        }
        if (ring_full(s)) {
            s->discarded++;
            atomic_fetch_add(&c->discarded, 1);
            return;
        }
        begin_packet(c, s, ts);
        p = &s->ring[atomic_load_explicit(&s->head, memory_order_relaxed) % RING];
    }
    put_at(p->data + p->size, &id, 2);
    put_at(p->data + p->size + 2, &ts, 8);
    memcpy(p->data + p->size + EVENT_HEADER, payload, size);
    p->size += need;
    p->ts_end = ts;
}

void tn_ctf_flush(tn_ctf *c) {
    stream *s = my_stream(c);
    /* in a burst of GCs the writer may lag: keep filling the open packet rather than use up
     * the ring with tiny packets and then drop events */
    if (s && s->open && atomic_load_explicit(&s->head, memory_order_relaxed) -
                                atomic_load_explicit(&s->tail, memory_order_acquire) < RING - FLUSH_RESERVE)
        complete_packet(c, s);
    /* write what is complete now (waiting, at most, for the writer's write in progress): a
     * process killed after this GC leaves a trace that holds it */
    pthread_mutex_lock(&c->drain_lock);
    drain_locked(c);
    pthread_mutex_unlock(&c->drain_lock);
}

uint64_t tn_ctf_discarded(const tn_ctf *c) { return atomic_load(&((tn_ctf *)c)->discarded); }

/* ---- the writer thread ---- */

static void write_all(int fd, const uint8_t *p, size_t n) {
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return; /* disk full or the like: the packet is lost; later ones still try */
        p += w;
        n -= (size_t)w;
    }
}

static void drain_locked(tn_ctf *c) {
    size_t n = atomic_load(&c->nstreams);
    for (size_t i = 0; i < n; i++) {
        pthread_mutex_lock(&c->lock);
        stream *s = c->streams[i];
        pthread_mutex_unlock(&c->lock);
        uint64_t head = atomic_load_explicit(&s->head, memory_order_acquire);
        for (uint64_t t = atomic_load_explicit(&s->tail, memory_order_relaxed); t < head; t++) {
            packet *p = &s->ring[t % RING];
            write_all(s->fd, p->data, PKT_CAP);
            atomic_store_explicit(&s->tail, t + 1, memory_order_release);
        }
    }
}

static void drain(tn_ctf *c) {
    pthread_mutex_lock(&c->drain_lock);
    drain_locked(c);
    pthread_mutex_unlock(&c->drain_lock);
}

static void *writer_main(void *arg) {
    tn_ctf *c = arg;
    pthread_mutex_lock(&c->wlock);
    while (!c->stop) {
        if (!c->signalled) {
            struct timespec until;
            clock_gettime(CLOCK_REALTIME, &until);
            until.tv_nsec += 100000000;
            if (until.tv_nsec >= 1000000000) {
                until.tv_sec++;
                until.tv_nsec -= 1000000000;
            }
            pthread_cond_timedwait(&c->wake, &c->wlock, &until);
        }
        c->signalled = false;
        pthread_mutex_unlock(&c->wlock);
        drain(c);
        pthread_mutex_lock(&c->wlock);
    }
    pthread_mutex_unlock(&c->wlock);
    drain(c);
    return NULL;
}

static bool make_dir(const char *dir) {
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s", dir);
    for (char *p = tmp + 1; *p; p++)
        if (*p == '/') {
            *p = 0;
            mkdir(tmp, 0777);
            *p = '/';
        }
    return mkdir(tmp, 0777) == 0 || errno == EEXIST;
}

static void random_uuid(uint8_t *u) {
    int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    ssize_t got = fd >= 0 ? read(fd, u, 16) : -1;
    if (fd >= 0)
        close(fd);
    if (got != 16) {
        uint64_t t = tn_trace_now_ns() ^ ((uint64_t)getpid() << 32);
        memcpy(u, &t, 8);
        memcpy(u + 8, &t, 8);
    }
    u[6] = (uint8_t)((u[6] & 0x0f) | 0x40);
    u[8] = (uint8_t)((u[8] & 0x3f) | 0x80);
}

tn_ctf *tn_ctf_open(const char *dir, char *err, size_t errlen) {
    char probe[4200];
    if (strlen(dir) >= 4000) {
        snprintf(err, errlen, "path too long");
        return NULL;
    }
    snprintf(probe, sizeof probe, "%s/metadata", dir);
    if (access(probe, F_OK) == 0) {
        snprintf(err, errlen, "%s already holds a trace", dir);
        return NULL;
    }
    if (!make_dir(dir)) {
        snprintf(err, errlen, "mkdir: %s", strerror(errno));
        return NULL;
    }
    tn_ctf *c = calloc(1, sizeof *c);
    if (!c) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    c->serial = atomic_fetch_add(&next_serial, 1) + 1;
    snprintf(c->dir, sizeof c->dir, "%s", dir);
    random_uuid(c->uuid);
    pthread_mutex_init(&c->lock, NULL);
    pthread_mutex_init(&c->drain_lock, NULL);
    pthread_mutex_init(&c->wlock, NULL);
    pthread_cond_init(&c->wake, NULL);
    if (!write_metadata(c)) {
        snprintf(err, errlen, "cannot write %s/metadata: %s", dir, strerror(errno));
        free(c);
        return NULL;
    }
    if (pthread_create(&c->writer, NULL, writer_main, c) != 0) {
        snprintf(err, errlen, "cannot start the writer thread");
        free(c);
        return NULL;
    }
    return c;
}

void tn_ctf_close(tn_ctf *c) {
    size_t n = atomic_load(&c->nstreams);
    for (size_t i = 0; i < n; i++)
        if (c->streams[i]->open)
            complete_packet(c, c->streams[i]);
    pthread_mutex_lock(&c->wlock);
    c->stop = true;
    pthread_cond_signal(&c->wake);
    pthread_mutex_unlock(&c->wlock);
    pthread_join(c->writer, NULL);
    for (size_t i = 0; i < n; i++) {
        close(c->streams[i]->fd);
        free(c->streams[i]->ring);
        free(c->streams[i]);
    }
    if (tls_cache.serial == c->serial)
        tls_cache.s = NULL;
    free(c->streams);
    pthread_mutex_destroy(&c->lock);
    pthread_mutex_destroy(&c->drain_lock);
    pthread_mutex_destroy(&c->wlock);
    pthread_cond_destroy(&c->wake);
    free(c);
}
